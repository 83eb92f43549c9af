// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Probe cost of a live-key filter against the memory system's limit, for
// benchmarks (live_bench; a DB-level scale benchmark can call it on a
// FilteredDB's filter). Header-only; links cuckoo_core_internal.
//
// The limit is what any filter that reads two random 8-byte words per key
// must pay: two independent random loads from an array of the same number
// of bytes as the filter's table (same allocator, so the same page size),
// indexes derived from the same random 64-bit hashes. Four loops per side,
// each over the same queries:
//   single     one MayContain per key; iterations are independent, so the
//              CPU overlaps the cache misses of consecutive keys
//              (throughput) -- compared with `loads`;
//   serial     the same with LFENCE after each key (x86-64): one key's
//              latency, as a point read sees it -- compared with
//              `serial_loads`;
//   batch      MayContainBatch over 1024 keys (prefetching 16 ahead);
//   loads / serial_loads  the two random loads, independent / LFENCE'd.
// Every repetition runs all loops back to back (interleaved, so that drift
// on a shared machine hits all of them alike); results are medians. No
// writes to the filter during the measurement: the loops must agree.
#ifndef CUCKOO_DB_BENCH_EXT_PROBE_LIMIT_H_
#define CUCKOO_DB_BENCH_EXT_PROBE_LIMIT_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "cuckoo/live_key_filter.h"
#include "db_bench_util.h"
#include "util/table_memory.h"

namespace cuckoo_bench {

struct ProbeLimitOptions {
  size_t queries = size_t{1} << 20;  // random (mostly absent) keys per loop
  int repetitions = 5;
  uint64_t seed = 1;
};

// Nanoseconds per key (medians over the repetitions).
struct ProbeLimitResult {
  uint64_t table_bytes = 0;
  double single_ns = 0;
  double serial_ns = 0;
  double batch_ns = 0;
  double loads_ns = 0;         // two independent random loads
  double serial_loads_ns = 0;  // the same, LFENCE after each pair
  uint64_t positives = 0;      // single-loop "may contain" answers (checksum)
  bool serialized = false;     // LFENCE available (x86-64)

  double single_vs_loads() const { return single_ns / loads_ns; }
  double serial_vs_loads() const { return serial_ns / serial_loads_ns; }
  double batch_vs_single() const { return batch_ns / single_ns; }
};

namespace probe_limit_detail {

template <typename Fn>
double NsPerKey(size_t keys, Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(end - start).count() /
         double(keys);
}

// An array of `bytes` random bytes (pages really backed: a never-written
// anonymous page reads as the shared zero page, which is always cached).
class RandomArray {
 public:
  explicit RandomArray(uint64_t bytes, uint64_t seed)
      : n_(std::max<uint64_t>(bytes / 8, 2)), words_(n_) {
    std::mt19937_64 rng(seed);
    for (size_t i = 0; i < n_; ++i) words_[i] = rng();
  }
  uint64_t size() const { return n_; }
  const uint64_t* data() const { return words_.get(); }

 private:
  const uint64_t n_;
  cuckoo::internal::ZeroedArray<uint64_t> words_;
};

// Two random loads per query: indexes from the low and high halves of the
// hash (a multiply and a shift each, like the filter's bucket indexes).
template <bool kSerial>
uint64_t RandomLoads(const RandomArray& a, const cuckoo::KeyHash* q, size_t n) {
  const uint64_t* w = a.data();
  const uint64_t m = a.size();
  uint64_t sum = 0;
  for (size_t k = 0; k < n; ++k) {
    const uint64_t h = q[k].value;
    const uint64_t i1 = (uint64_t{static_cast<uint32_t>(h)} * m) >> 32;
    const uint64_t i2 = ((h >> 32) * m) >> 32;
    sum += w[i1] ^ w[i2];
    if (kSerial) SerializeLookup();
  }
  return sum;
}

template <bool kSerial>
uint64_t Probes(const cuckoo::LiveKeyFilter& f, const cuckoo::KeyHash* q,
                size_t n) {
  uint64_t hits = 0;
  for (size_t k = 0; k < n; ++k) {
    hits += f.MayContain(q[k]);
    if (kSerial) SerializeLookup();
  }
  return hits;
}

inline uint64_t BatchProbes(const cuckoo::LiveKeyFilter& f,
                            const cuckoo::KeyHash* q, size_t n, bool* out) {
  constexpr size_t kBatch = 1024;
  uint64_t hits = 0;
  for (size_t k = 0; k < n; k += kBatch) {
    const size_t len = std::min(kBatch, n - k);
    f.MayContainBatch(q + k, len, out);
    for (size_t j = 0; j < len; ++j) hits += out[j];
  }
  return hits;
}

}  // namespace probe_limit_detail

// Measures the filter (readers only; writers may run meanwhile, at the cost
// of noise) against the random-load limit on an array of its table's size.
// Exits the process if the loops disagree (a broken benchmark).
inline ProbeLimitResult MeasureProbeLimit(const cuckoo::LiveKeyFilter& filter,
                                          const ProbeLimitOptions& options) {
  namespace d = probe_limit_detail;
  ProbeLimitResult r;
  r.serialized = kCanSerialize;
  r.table_bytes = filter.GetStats().table_bytes;
  d::RandomArray array(r.table_bytes, options.seed * 7 + 1);
  std::vector<cuckoo::KeyHash> q(options.queries);
  std::mt19937_64 rng(options.seed);
  for (auto& h : q) h = cuckoo::KeyHash(rng());
  std::unique_ptr<bool[]> out(new bool[1024]);
  const size_t n = q.size();
  volatile uint64_t sink = 0;
  // Warm-up: page tables and TLB for both sides.
  sink = sink + d::RandomLoads<false>(array, q.data(), n);
  r.positives = d::Probes<false>(filter, q.data(), n);
  std::vector<double> single, serial, batch, loads, serial_loads;
  for (int rep = 0; rep < options.repetitions; ++rep) {
    uint64_t hits = 0, serial_hits = 0, batch_hits = 0;
    loads.push_back(d::NsPerKey(
        n, [&] { sink = sink + d::RandomLoads<false>(array, q.data(), n); }));
    single.push_back(
        d::NsPerKey(n, [&] { hits = d::Probes<false>(filter, q.data(), n); }));
    batch.push_back(d::NsPerKey(n, [&] {
      batch_hits = d::BatchProbes(filter, q.data(), n, out.get());
    }));
    serial_loads.push_back(d::NsPerKey(
        n, [&] { sink = sink + d::RandomLoads<true>(array, q.data(), n); }));
    serial.push_back(d::NsPerKey(
        n, [&] { serial_hits = d::Probes<true>(filter, q.data(), n); }));
    if (hits != batch_hits || hits != serial_hits) {
      std::fprintf(stderr,
                   "probe_limit: single, batched and serialized probes "
                   "disagree (%llu, %llu, %llu)\n",
                   static_cast<unsigned long long>(hits),
                   static_cast<unsigned long long>(batch_hits),
                   static_cast<unsigned long long>(serial_hits));
      std::exit(2);
    }
  }
  r.single_ns = Median(single);
  r.serial_ns = Median(serial);
  r.batch_ns = Median(batch);
  r.loads_ns = Median(loads);
  r.serial_loads_ns = Median(serial_loads);
  return r;
}

}  // namespace cuckoo_bench

#endif  // CUCKOO_DB_BENCH_EXT_PROBE_LIMIT_H_
