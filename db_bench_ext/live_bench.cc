// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// live_bench: the live-key filter (cuckoo::LiveKeyFilter) without a
// database. Modes (--bench, comma-separated):
//   probe   probe cost against the memory limit (probe_limit.h) at
//           --sizes keys: single, LFENCE-serialized and batched
//           MayContain against two random loads on an array of the table's
//           size; bits per key right after the build
//   fill    load of the first failed insert of fresh tables per bucket size
//           (the basis of the default load factors)
//   growth  --growth_from -> --growth_to keys by splits (background thread):
//           splits, insert waits, time, insert latency percentiles during
//           and outside splits, split durations, bits per key over the
//           growth, FPR at each level just before its split
//   fpr     FPR per fingerprint width and level at equal load, measured vs
//           expected
// Prints markdown tables. Timing runs should hold the machine alone, e.g.
//   /work/tools/cpu bench build/release/db_bench_ext/live_bench --bench=probe
#include <gflags/gflags.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cuckoo/live_key_filter.h"
#include "db_bench_util.h"
#include "live/live_table.h"
#include "probe_limit.h"

DEFINE_string(bench, "probe,fill,growth,fpr", "modes, comma-separated");
DEFINE_string(sizes, "1048576,4194304,16777216", "keys per filter (probe)");
DEFINE_int32(reps, 5, "repetitions (probe: medians)");
DEFINE_uint64(queries, uint64_t{1} << 20, "random queries per loop (probe)");
DEFINE_int32(fingerprint_bits, 12, "f for probe and growth");
DEFINE_uint64(growth_from, 65536, "initial capacity (growth)");
DEFINE_uint64(growth_to, 8388608, "keys inserted (growth)");
DEFINE_uint64(fpr_queries, 2000000, "queries per FPR measurement");
DEFINE_uint64(seed, 1, "random seed");

namespace {

using cuckoo::KeyHash;
using cuckoo::LiveKeyFilter;
using cuckoo::LiveKeyFilterOptions;
using cuckoo::LiveKeyFilterStats;
using cuckoo_bench::Clock;
using cuckoo_bench::Seconds;
using cuckoo_bench::SplitList;

// Fraction of about `queries` fresh random hashes the filter may contain.
double MeasureFpr(const LiveKeyFilter& f, uint64_t queries, uint64_t seed) {
  std::mt19937_64 rng(seed);
  constexpr size_t kBatch = 1024;
  std::vector<KeyHash> q(kBatch);
  std::unique_ptr<bool[]> out(new bool[kBatch]);
  uint64_t hits = 0;
  for (uint64_t done = 0; done < queries; done += kBatch) {
    for (auto& h : q) h = KeyHash(rng());
    f.MayContainBatch(q.data(), kBatch, out.get());
    for (size_t k = 0; k < kBatch; ++k) hits += out[k];
  }
  const uint64_t asked = (queries + kBatch - 1) / kBatch * kBatch;
  return double(hits) / double(asked);
}

// ------------------------------------------------------------------ probe

void RunProbe() {
  std::vector<uint64_t> sizes;
  if (!cuckoo_bench::ParseList(FLAGS_sizes, &sizes)) {
    fprintf(stderr, "--sizes: not a list of key counts: %s\n",
            FLAGS_sizes.c_str());
    exit(1);
  }
  printf("\n## probe vs memory limit (f = %d, medians of %d, %" PRIu64
         " queries per loop, ns per key)\n\n",
         FLAGS_fingerprint_bits, FLAGS_reps, FLAGS_queries);
  printf(
      "| keys | table MiB | bits/key | single | serial | batch | 2 loads | "
      "2 loads serial | single/loads | serial/serial loads | batch/single "
      "|\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (uint64_t n : sizes) {
    LiveKeyFilterOptions o;
    o.fingerprint_bits = FLAGS_fingerprint_bits;
    LiveKeyFilter f(o, n);
    std::mt19937_64 rng(FLAGS_seed + n);
    for (uint64_t i = 0; i < n; ++i) {
      if (!f.Insert(KeyHash(rng()))) {
        fprintf(stderr, "insert failed at %" PRIu64 "\n", i);
        exit(1);
      }
    }
    f.WaitForSplit();
    const LiveKeyFilterStats s = f.GetStats();
    cuckoo_bench::ProbeLimitOptions po;
    po.queries = FLAGS_queries;
    po.repetitions = FLAGS_reps;
    po.seed = FLAGS_seed;
    const cuckoo_bench::ProbeLimitResult r =
        cuckoo_bench::MeasureProbeLimit(f, po);
    printf("| %" PRIu64
           " | %.1f | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f | "
           "%.2f | %.2f | %.2f |\n",
           n, double(s.table_bytes) / (1 << 20), s.bits_per_key, r.single_ns,
           r.serial_ns, r.batch_ns, r.loads_ns, r.serial_loads_ns,
           r.single_vs_loads(), r.serial_vs_loads(), r.batch_vs_single());
    fflush(stdout);
  }
}

// ------------------------------------------------------------------ fill

void RunFill() {
  printf("\n## first failed insert of a fresh table (load), 8 seeds\n\n");
  printf(
      "| f | b | buckets | min | median | default target | default max | "
      "max limit |\n|---|---|---|---|---|---|---|---|\n");
  for (int f : {8, 9, 10, 11, 12, 13, 16}) {
    const int b = cuckoo::internal::LiveSlotsPerBucket(f);
    for (uint64_t c : {uint64_t{1} << 14, uint64_t{1} << 20}) {
      std::vector<double> loads;
      for (uint32_t seed = 0; seed < 8; ++seed) {
        cuckoo::internal::LiveTable t(
            cuckoo::internal::LiveLayout(f, c, 0, seed));
        std::mt19937_64 rng(FLAGS_seed * 1000 + seed);
        while (t.Insert(rng())) {
        }
        loads.push_back(t.load_factor());
      }
      std::sort(loads.begin(), loads.end());
      printf("| %d | %d | %" PRIu64 " | %.4f | %.4f | %.2f | %.2f | %.3f |\n",
             f, b, c, loads.front(), loads[loads.size() / 2],
             cuckoo::DefaultLiveTargetLoad(b), cuckoo::DefaultLiveMaxLoad(b),
             cuckoo::LiveMaxLoadLimit(b));
      fflush(stdout);
    }
  }
}

// ------------------------------------------------------------------ growth

double Percentile(std::vector<double>* v, double p) {
  if (v->empty()) return 0;
  const size_t k = std::min(v->size() - 1, size_t(p * double(v->size())));
  std::nth_element(v->begin(), v->begin() + k, v->end());
  return (*v)[k];
}

void RunGrowth() {
  LiveKeyFilterOptions o;
  o.fingerprint_bits = FLAGS_fingerprint_bits;
  o.initial_capacity = FLAGS_growth_from;
  o.rescan_below_bits = 0;  // measure the splits alone
  LiveKeyFilter f(o, FLAGS_growth_from);
  std::mt19937_64 rng(FLAGS_seed);
  std::vector<double> during, outside;  // insert latency, ns
  struct Level {
    int level;
    uint64_t keys;
    double load, bits, fpr, expected;
  };
  std::vector<Level> levels;
  std::vector<double> split_ms;  // the filter's own timing of each split
  // bits/key every 1024 inserts, and the insert counts at which splits
  // started and ended (the average is taken over complete doublings).
  std::vector<double> bits;
  uint64_t first_split_end = 0, last_split_start = 0;
  bool was_splitting = false;
  double insert_seconds = 0;
  const auto start = Clock::now();
  for (uint64_t i = 0; i < FLAGS_growth_to; ++i) {
    const KeyHash h(rng());
    const bool splitting = f.splitting();
    const auto t0 = Clock::now();
    if (!f.Insert(h)) {
      fprintf(stderr, "insert failed at %" PRIu64 "\n", i);
      exit(1);
    }
    const auto t1 = Clock::now();
    const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    insert_seconds += ns * 1e-9;
    (splitting ? during : outside).push_back(ns);
    const bool now_splitting = f.splitting();
    if (now_splitting && !was_splitting) {
      last_split_start = i;
      // The level that is about to split, at its fullest: its FPR (the
      // inserter pauses; the split runs on meanwhile).
      const LiveKeyFilterStats s = f.GetStats();
      if (s.level == int(levels.size())) {
        levels.push_back(
            Level{s.level, s.num_keys, s.load_factor, s.bits_per_key,
                  MeasureFpr(f, FLAGS_fpr_queries, i), s.expected_fpr});
      }
    }
    if (!now_splitting && was_splitting) {
      split_ms.push_back(double(f.GetStats().last_split_micros) / 1e3);
      if (first_split_end == 0) first_split_end = i;
    }
    was_splitting = now_splitting;
    if ((i & 1023) == 0) bits.push_back(f.GetStats().bits_per_key);
  }
  f.WaitForSplit();
  if (was_splitting) {
    split_ms.push_back(double(f.GetStats().last_split_micros) / 1e3);
  }
  double bits_sum = 0;
  uint64_t bits_samples = 0;
  for (uint64_t k = first_split_end / 1024 + 1;
       k <= last_split_start / 1024 && k < bits.size(); ++k) {
    bits_sum += bits[k];
    ++bits_samples;
  }
  const double total = Seconds(start, Clock::now());
  const LiveKeyFilterStats s = f.GetStats();
  printf("\n## growth %" PRIu64 " -> %" PRIu64
         " keys by splits (f = %d, background thread)\n\n",
         FLAGS_growth_from, FLAGS_growth_to, FLAGS_fingerprint_bits);
  printf("splits %" PRIu64 ", insert waits %" PRIu64
         ", insert failures %" PRIu64
         ", keys scanned 0 (no keys at this "
         "layer), wall %.2f s, inserts %.2f Mkeys/s (timed part)\n",
         s.splits, s.insert_waits, s.insert_failures, total,
         double(FLAGS_growth_to) / insert_seconds / 1e6);
  printf(
      "final: level %d, width %d, load %.3f, %.2f bits/key; bits/key "
      "averaged over the inserts of the complete doublings (keys %" PRIu64
      " to %" PRIu64 "): %.2f (64 * 2 ln 2 / (b * max_load) = %.2f)\n",
      s.level, s.width, s.load_factor, s.bits_per_key, first_split_end,
      last_split_start, bits_samples ? bits_sum / double(bits_samples) : 0,
      128 * std::log(2.0) /
          (cuckoo::internal::LiveSlotsPerBucket(FLAGS_fingerprint_bits) *
           f.options().max_load));
  printf(
      "split durations (ms, freeze to publication, stats.last_split_micros):");
  for (double ms : split_ms) printf(" %.1f", ms);
  printf(
      "\n\n| inserts | count | p50 ns | p99 ns | p99.9 ns | max ns |\n"
      "|---|---|---|---|---|---|\n");
  for (auto* v : {&outside, &during}) {
    const size_t n = v->size();
    const double p50 = Percentile(v, 0.5), p99 = Percentile(v, 0.99),
                 p999 = Percentile(v, 0.999);
    const double mx = v->empty() ? 0 : *std::max_element(v->begin(), v->end());
    printf("| %s | %zu | %.0f | %.0f | %.0f | %.0f |\n",
           v == &outside ? "outside splits" : "during splits", n, p50, p99,
           p999, mx);
  }
  printf(
      "\n| level | width | keys | load | bits/key | FPR measured | FPR "
      "expected |\n|---|---|---|---|---|---|---|\n");
  for (const Level& l : levels) {
    printf("| %d | %d | %" PRIu64 " | %.3f | %.2f | %.4f%% | %.4f%% |\n",
           l.level, FLAGS_fingerprint_bits - l.level, l.keys, l.load, l.bits,
           100 * l.fpr, 100 * l.expected);
  }
  fflush(stdout);
}

// ------------------------------------------------------------------ fpr

void RunFpr() {
  using cuckoo::internal::LiveLayout;
  using cuckoo::internal::LiveTable;
  const double load = 0.93;
  printf("\n## FPR per width and level at load %.2f (%" PRIu64
         " queries; 2^20 buckets at every level)\n\n| f | b | level | width "
         "| bits/key | measured | expected |\n|---|---|---|---|---|---|---|\n",
         load, FLAGS_fpr_queries);
  for (int f = 8; f <= 16; ++f) {
    const int b = cuckoo::internal::LiveSlotsPerBucket(f);
    for (int d = 0; d <= std::min(4, cuckoo::internal::LiveMaxLevel(f)); ++d) {
      // Built with 2^d times fewer buckets, filled to the load and split at
      // every level: level d at that load, as growth by splits leaves it.
      auto table = std::make_unique<LiveTable>(
          LiveLayout(f, (uint64_t{1} << 20) >> d, 0, uint32_t(FLAGS_seed)));
      std::mt19937_64 rng(FLAGS_seed + f * 100 + d);
      for (int level = 0; level <= d; ++level) {
        if (level > 0) table = table->SplitCopy();
        while (table->load_factor() < load) table->Insert(rng());
      }
      const double values = std::ldexp(1.0, f - d) - (d == 0 ? 1 : 0);
      const double expected =
          1.0 - std::pow(1.0 - 1.0 / values, 2.0 * b * table->load_factor());
      uint64_t hits = 0, retries = 0;
      for (uint64_t q = 0; q < FLAGS_fpr_queries; ++q)
        hits += table->Contains(rng(), &retries);
      printf("| %d | %d | %d | %d | %.2f | %.4f%% | %.4f%% |\n", f, b, d, f - d,
             double(table->table_bytes()) * 8 / double(table->size()),
             100.0 * double(hits) / double(FLAGS_fpr_queries), 100 * expected);
      fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  cuckoo_bench::ParseFlags(
      &argc, &argv, "live-key filter benchmarks (no database)", __FILE__);
  for (const std::string& mode : SplitList(FLAGS_bench)) {
    if (mode == "probe") {
      RunProbe();
    } else if (mode == "fill") {
      RunFill();
    } else if (mode == "growth") {
      RunGrowth();
    } else if (mode == "fpr") {
      RunFpr();
    } else {
      fprintf(stderr, "unknown --bench mode %s\n", mode.c_str());
      return 1;
    }
  }
  return 0;
}
