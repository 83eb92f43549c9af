// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Helpers shared by every benchmark of db_bench_ext (filter_bench,
// live_bench, policy_bench, churn_bench, scale_bench; probe_limit.h):
// command-line flags whose --help lists the program's own flags, timing
// (wall and thread CPU), medians, comma lists, the LFENCE that serializes
// lookups, the key and value generators of the DB benchmarks, and waiting
// for a DB's background jobs. Header-only, benchmarks only. It includes no
// RocksDB header, so the RocksDB-free benchmarks use it too (a DB benchmark
// opens its DB with tests/open_db.h).
#ifndef ROCKSDB_CUCKOO_DB_BENCH_EXT_DB_BENCH_UTIL_H_
#define ROCKSDB_CUCKOO_DB_BENCH_EXT_DB_BENCH_UTIL_H_

#include <gflags/gflags.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "util/bit_util.h"

namespace cuckoo_bench {

// ------------------------------------------------------------------ flags

// Parses the command line as gflags::ParseCommandLineFlags(argc, argv,
// true) does, with `usage` as the usage message, except that --help lists
// only the flags defined in `main_file` (pass __FILE__ from the file that
// defines the program's flags): the libraries linked in (gflags itself,
// Debian's librocksdb with its trace analyzer tools) define flags of their
// own, which --helpfull still lists.
inline void ParseFlags(int* argc, char*** argv, const std::string& usage,
                       const char* main_file) {
  gflags::SetUsageMessage(usage);
  gflags::ParseCommandLineNonHelpFlags(argc, argv, true);
  std::string help;
  if (gflags::GetCommandLineOption("help", &help) && help == "true") {
    printf("%s\n\n", gflags::ProgramUsage());
    std::vector<gflags::CommandLineFlagInfo> flags;
    gflags::GetAllFlags(&flags);  // sorted by file, then name
    printf("Flags:\n");
    for (const gflags::CommandLineFlagInfo& flag : flags) {
      if (flag.filename == main_file) {
        printf("%s", gflags::DescribeOneFlag(flag).c_str());
      }
    }
    printf(
        "\n--helpfull lists the flags of the libraries too; --flagfile=F "
        "reads flags from F.\n");
    exit(0);
  }
  gflags::HandleCommandLineHelpFlags();  // --helpfull, --version, ...
}

// ------------------------------------------------------------------ timing

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// This thread's CPU time, seconds: unlike wall-clock time, it leaves out
// the time the thread is descheduled (most of the noise on a shared
// machine).
inline double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Context switches of the calling thread so far, voluntary (it blocked)
// and involuntary (it was preempted).
inline long ThreadContextSwitches() {
  rusage usage;
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_nvcsw + usage.ru_nivcsw;
}

// Median of the values (0 for none).
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// After a lookup in a serialized loop: LFENCE waits until every earlier
// instruction, the lookup's loads included, has completed, and starts no
// later one before, so the loop measures one lookup's latency rather than
// the throughput of overlapping ones. A no-op where kCanSerialize is false.
#if defined(__x86_64__)
constexpr bool kCanSerialize = true;
inline void SerializeLookup() { _mm_lfence(); }
#else
constexpr bool kCanSerialize = false;
inline void SerializeLookup() {}
#endif

// ------------------------------------------------------------------ lists

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

// "1,2.5,,3" -> {1, 2.5, 3} as T (each item read with >>); false if an item
// does not start with a T or the list is empty.
template <typename T>
bool ParseList(const std::string& list, std::vector<T>* out) {
  for (const std::string& item : SplitList(list)) {
    std::istringstream in(item);
    T x;
    if (!(in >> x)) return false;
    out->push_back(x);
  }
  return !out->empty();
}

// ------------------------------------------------------------------ DB data

// Key of index i: 16 hex digits of a bijection of i (SplitMix64 finalizer),
// so consecutive indexes arrive in random key order.
inline std::string MakeKey(uint64_t i, uint64_t seed) {
  char buf[24];
  snprintf(buf, sizeof(buf), "%016" PRIx64,
           cuckoo::internal::Mix64(i ^ (seed * 0x9e3779b97f4a7c15ULL)));
  return std::string(buf, 16);
}

// Value of key i: `size` bytes (at most 512 KiB) of 1 MiB of random,
// incompressible data, at an offset picked by i (a RocksDB Slice converts
// from it).
inline std::string_view ValueOf(uint64_t i, uint64_t size) {
  static const std::string data = [] {
    std::mt19937_64 rng(12345);
    std::string d(1 << 20, '\0');
    for (auto& c : d) c = static_cast<char>(rng());
    return d;
  }();
  size = std::min<uint64_t>(size, data.size() / 2);
  return std::string_view(
      data.data() + cuckoo::internal::Mix64(i) % (data.size() - size), size);
}

// Waits (up to `max_seconds`) until no flush or compaction runs or is
// pending. DB is ROCKSDB_NAMESPACE::DB (a template, so that this header
// needs no RocksDB include).
template <typename DB>
void WaitForBackgroundJobs(DB* db, int max_seconds = 120) {
  for (int i = 0; i < max_seconds * 10; ++i) {
    uint64_t pending = 0, running = 0, flushes = 0;
    db->GetIntProperty("rocksdb.compaction-pending", &pending);
    db->GetIntProperty("rocksdb.num-running-compactions", &running);
    db->GetIntProperty("rocksdb.num-running-flushes", &flushes);
    if (pending == 0 && running == 0 && flushes == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// The sliding-window benchmarks (churn_bench's writers, txn_bench): writer
// thread t owns the key indices j * threads + t, its live keys are those of
// j in [oldest[t], next[t]), the deleted ones those below oldest[t]. Checks
// `samples` random keys of random threads, a live one and a deleted one each
// (when there are): `answers(index, live)` says whether the DB answered as
// expected; returns the number of wrong answers.
template <typename Answers>
uint64_t CheckWindowSample(uint64_t samples, uint64_t seed,
                           const std::vector<uint64_t>& next,
                           const std::vector<uint64_t>& oldest,
                           Answers&& answers) {
  const uint64_t threads = next.size();
  std::mt19937_64 rng(seed);
  uint64_t errors = 0;
  for (uint64_t q = 0; q < samples; ++q) {
    const uint64_t t = rng() % threads;
    if (next[t] > oldest[t]) {
      const uint64_t j = oldest[t] + rng() % (next[t] - oldest[t]);
      errors += !answers(j * threads + t, true);
    }
    if (oldest[t] > 0) {
      errors += !answers((rng() % oldest[t]) * threads + t, false);
    }
  }
  return errors;
}

}  // namespace cuckoo_bench

#endif  // ROCKSDB_CUCKOO_DB_BENCH_EXT_DB_BENCH_UTIL_H_
