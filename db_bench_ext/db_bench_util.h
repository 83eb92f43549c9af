// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Helpers shared by the DB-level benchmarks (churn_bench, scale_bench):
// timing, medians, comma lists, the key and value generators, and waiting
// for a DB's background jobs (tests/open_db.h opens a plain DB across
// RocksDB versions). Header-only; benchmarks only.
#ifndef ROCKSDB_CUCKOO_DB_BENCH_EXT_DB_BENCH_UTIL_H_
#define ROCKSDB_CUCKOO_DB_BENCH_EXT_DB_BENCH_UTIL_H_

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "open_db.h"  // tests/: cuckoo_test::OpenDB across RocksDB versions
#include "rocksdb/db.h"
#include "util/bit_util.h"

namespace cuckoo_bench {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Median of the values (0 for none).
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// "a,b,,c" -> {"a", "b", "c"}.
inline std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// Key of index i: 16 hex digits of a bijection of i (SplitMix64 finalizer),
// so consecutive indexes arrive in random key order.
inline std::string MakeKey(uint64_t i, uint64_t seed) {
  char buf[24];
  snprintf(buf, sizeof(buf), "%016" PRIx64,
           cuckoo::internal::Mix64(i ^ (seed * 0x9e3779b97f4a7c15ULL)));
  return std::string(buf, 16);
}

// Value of key i: `size` bytes (at most 512 KiB) of 1 MiB of random,
// incompressible data, at an offset picked by i.
inline ROCKSDB_NAMESPACE::Slice ValueOf(uint64_t i, uint64_t size) {
  static const std::string data = [] {
    std::mt19937_64 rng(12345);
    std::string d(1 << 20, '\0');
    for (auto& c : d) c = static_cast<char>(rng());
    return d;
  }();
  size = std::min<uint64_t>(size, data.size() / 2);
  return ROCKSDB_NAMESPACE::Slice(
      data.data() + cuckoo::internal::Mix64(i) % (data.size() - size), size);
}

// Waits (up to `max_seconds`) until no flush or compaction runs or is
// pending.
inline void WaitForBackgroundJobs(ROCKSDB_NAMESPACE::DB* db,
                                  int max_seconds = 120) {
  for (int i = 0; i < max_seconds * 10; ++i) {
    uint64_t pending = 0, running = 0, flushes = 0;
    db->GetIntProperty("rocksdb.compaction-pending", &pending);
    db->GetIntProperty("rocksdb.num-running-compactions", &running);
    db->GetIntProperty("rocksdb.num-running-flushes", &flushes);
    if (pending == 0 && running == 0 && flushes == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace cuckoo_bench

#endif  // ROCKSDB_CUCKOO_DB_BENCH_EXT_DB_BENCH_UTIL_H_
