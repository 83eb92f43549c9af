// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// filter_bench: space, accuracy and speed of the core cuckoo filter
// (include/cuckoo/cuckoo_filter.h), per configuration.
//
//   filter_bench [--num=10000000] [--seed=0]
//   [--configs=f12b4,ss13b4,f8b4,f16b4]
//                [--queries=10000000] [--repeats=3] [--batch_sizes=32,1024]
//                [--found=0,0.25,0.5,0.75,1] [--dependent_queries=1000000]
//                [--occupancy_queries=1000000] [--sweep=true] [--clock=cpu]
//                [--csv=results.csv]
//
// Configuration tokens: f<bits>[b<entries>] (plain; b defaults to 4) and
// ss<bits> (semi-sorted, b = 4), e.g. f12, f16b8, ss13.
//
// For each configuration it builds a filter for --num items with
// CuckooFilter::Create (the default target load: 95% for b = 4) and reports
//   1. space and accuracy: load, bits/item, FPR measured on absent queries
//      against the filter's estimate and the paper's 2b*load/2^f;
//   2. construction: Mkeys/s inserting --num pre-generated hashes into an
//      empty filter (median of --repeats fresh filters), with one
//      InsertUnordered call (--construction=unordered, the default), one
//      InsertMany call (many) or a loop of Insert (loop);
//   3. lookups: ns/op and Mops/s of single Contains calls (independent,
//      so the CPU overlaps several), of the same loop through
//      cuckoo::VisitLookup (typed), of dependent single calls (latency;
//      first --dependent_queries queries) and of ContainsBatch in chunks of
//      each --batch_sizes, for query mixes with each --found fraction of
//      positive (inserted) keys (median of --repeats), and the speedup over
//      the independent single calls;
//   4. the fill sweep: a fresh filter of the same size filled until the
//      first failed insert, with the insert throughput of each 10%
//      occupancy band (the paper's "insert speed drops as the filter
//      fills") and, at the end of each band, single and batched lookup
//      throughput for all-negative and all-positive queries (one run).
//
// Items are random 64-bit hashes (the filter's input; the XXH3 key hashing
// step is not timed). Inserted and absent hashes come from one bijective
// stream at disjoint indexes, so an absent query can never be an inserted
// item and every positive answer to one is a false positive. All keys,
// query mixes and output buffers are allocated before the timed loops, and
// each filter is created (its table allocated and zero-filled) before its
// timer starts: nothing in a timed loop allocates.
//
// Progress goes to stderr, tables to stdout. --csv=<file> writes the same
// numbers as one "tidy" CSV table with these stable columns (new metrics
// may add rows, never columns):
//
//   filter      always "cuckoo" (room for other filters in the same file)
//   config      configuration token, e.g. f12b4, ss13b4
//   f, b        fingerprint bits, entries per bucket
//   semi_sort   0 or 1
//   num         --num (items the filter was sized for)
//   table       summary | lookup | insert_band | lookup_occupancy
//   x           lookup: fraction of positive queries (0..1);
//               insert_band: occupancy at the end of the band (fraction of
//               capacity; the last band ends at the first failure);
//               lookup_occupancy: occupancy when measured;
//               summary: empty
//   mode        lookup: "single" (independent Contains calls, which the
//               CPU overlaps), "single_typed" (the same loop through
//               cuckoo::VisitLookup, layout dispatched once), "single_dep"
//               (each query depends on the
//               previous answer: one lookup's latency) or "batch<N>"
//               (ContainsBatch with N keys per call); lookup_occupancy:
//               "single/neg", "single/pos", "batch<N>/neg", "batch<N>/pos"
//               (all-absent or all-inserted queries); otherwise empty
//   metric      summary: load_factor, bits_per_item, table_bytes,
//               fpr_measured, fpr_expected, fpr_paper, construct_mkeys_per_s
//               (+ _min, _max), construct_failures, construct_bulk
//               (2: InsertUnordered, 1: InsertMany, 0: Insert loop),
//               clock_is_wall,
//               wall_over_cpu, max_load, max_load_bits_per_item,
//               max_load_fpr_measured, max_load_fpr_expected;
//               lookup: ns_per_op (+ _min, _max), mops, speedup_vs_single,
//               positives;
//               insert_band: mops, inserts;
//               lookup_occupancy: ns_per_op, mops
//   value       the number (medians where repeated)
//
// Timings use this thread's CPU time by default (--clock=cpu), which
// excludes the time other processes hold the core; --clock=wall uses the
// wall clock. The wall/cpu ratio of the timed regions is reported per
// configuration: well above 1 means the machine was busy (CPU time still
// includes cache and memory-bandwidth interference). Measurements on a
// shared machine are noisy: compare ratios from one run and prefer medians
// over several repeats.
#include <gflags/gflags.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cuckoo/cuckoo_filter.h"
#include "cuckoo/typed_lookup.h"
#include "db_bench_util.h"
#include "util/bit_util.h"

DEFINE_uint64(num, 10000000, "Items the filter is sized for and filled with");
DEFINE_uint32(seed, 0, "Seed of the key streams and of the filters");
DEFINE_string(configs, "f12b4,ss13b4,f8b4,f16b4",
              "Comma-separated configurations: f<bits>[b<bucket size>] for a "
              "plain filter (b defaults to 4), ss<bits> for semi-sorted b=4");
DEFINE_double(load, 0, "Sizing load factor (0: the library default per b)");
DEFINE_uint64(queries, 10000000, "Queries per lookup measurement");
DEFINE_int32(repeats, 3, "Repetitions of each timed measurement (median)");
DEFINE_string(batch_sizes, "32,1024",
              "Keys per ContainsBatch call, comma-separated (32 is RocksDB "
              "MultiGet's batch)");
DEFINE_string(found, "0,0.25,0.5,0.75,1",
              "Fractions of positive queries in the lookup mixes");
DEFINE_uint64(dependent_queries, 1000000,
              "Queries of the single_dep mode (each lookup's address depends "
              "on the previous answer: latency, not throughput)");
DEFINE_uint64(occupancy_queries, 1000000,
              "Queries per lookup measurement in the fill sweep");
DEFINE_int32(bands, 10, "Occupancy bands of the fill sweep");
DEFINE_bool(sweep, true, "Run the fill sweep");
DEFINE_string(construction, "unordered",
              "How the filter is filled: unordered (CuckooFilter::"
              "InsertUnordered: grouped by bucket, the fastest), many "
              "(InsertMany: prefetching, same bytes as the loop) or loop (a "
              "loop of Insert calls)");
DEFINE_string(csv, "", "Also write all results to this CSV file");
DEFINE_string(clock, "cpu",
              "Clock of all timings: cpu (this thread's CPU time; robust on a "
              "shared machine) or wall");

namespace {

using cuckoo_bench::Clock;
using cuckoo_bench::Median;
using cuckoo_bench::ParseList;
using cuckoo_bench::ThreadCpuSeconds;

// The --construction values: flag, name in the output, CSV construct_bulk.
struct Construction {
  const char* flag;
  const char* name;
  int csv_code;
};
constexpr Construction kConstructions[] = {
    {"unordered", "InsertUnordered", 2},
    {"many", "InsertMany", 1},
    {"loop", "Insert loop", 0},
};

// The entry of --construction, or null if the flag names none.
const Construction* FindConstruction() {
  for (const Construction& c : kConstructions) {
    if (FLAGS_construction == c.flag) return &c;
  }
  return nullptr;
}

// Wall-clock and thread-CPU seconds spent in timed regions (for the
// wall/cpu contention indicator).
double g_timed_wall = 0;
double g_timed_cpu = 0;

// Times one region on both clocks; Seconds() returns the one --clock
// selects. Thread CPU time ignores the time this thread is descheduled,
// which on a shared machine is most of the noise.
class Stopwatch {
 public:
  Stopwatch() : cpu0_(ThreadCpuSeconds()), wall0_(Clock::now()) {}
  double Stop() {
    const auto wall1 = Clock::now();
    const double cpu = ThreadCpuSeconds() - cpu0_;
    const double wall = std::chrono::duration<double>(wall1 - wall0_).count();
    g_timed_wall += wall;
    g_timed_cpu += cpu;
    return FLAGS_clock == "wall" ? wall : cpu;
  }

 private:
  double cpu0_;
  Clock::time_point wall0_;
};

template <typename T>
inline void DoNotOptimize(const T& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}

using cuckoo::internal::Mix64;  // bijective: distinct indexes, distinct hashes

class KeyStream {
 public:
  explicit KeyStream(uint64_t seed) : base_(Mix64(seed ^ 0xf11e7be4c4ULL)) {}
  cuckoo::KeyHash Inserted(uint64_t i) const { return Key(i); }
  cuckoo::KeyHash Absent(uint64_t i) const {
    return Key((uint64_t{1} << 62) + i);
  }

 private:
  cuckoo::KeyHash Key(uint64_t i) const {
    return cuckoo::KeyHash(Mix64(base_ + i * 0x9e3779b97f4a7c15ULL));
  }
  uint64_t base_;
};

// A small fast generator for building query mixes (outside timed loops).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() { return Mix64(state_ += 0x9e3779b97f4a7c15ULL); }
  double Uniform() { return double(Next() >> 11) * 0x1.0p-53; }
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >>
                                 64);
  }

 private:
  uint64_t state_;
};

struct Stat {
  double median, min, max;
};
Stat Summarize(const std::vector<double>& v) {
  return {Median(v), *std::min_element(v.begin(), v.end()),
          *std::max_element(v.begin(), v.end())};
}

// ------------------------------------------------------------------ CSV

class Csv {
 public:
  bool Open(const std::string& path) {
    if (path.empty()) return true;
    file_ = std::fopen(path.c_str(), "w");
    if (file_ == nullptr) return false;
    std::fprintf(file_,
                 "filter,config,f,b,semi_sort,num,table,x,mode,metric,value\n");
    return true;
  }
  ~Csv() {
    if (file_ != nullptr) std::fclose(file_);
  }
  void SetConfig(const std::string& token, const cuckoo::FilterConfig& c) {
    std::ostringstream prefix;
    prefix << "cuckoo," << token << "," << c.fingerprint_bits << ","
           << c.bucket_size << "," << (c.semi_sort ? 1 : 0) << "," << FLAGS_num;
    prefix_ = prefix.str();
  }
  void Row(const char* table, const std::string& x, const std::string& mode,
           const char* metric, double value) {
    if (file_ == nullptr) return;
    std::fprintf(file_, "%s,%s,%s,%s,%s,%.10g\n", prefix_.c_str(), table,
                 x.c_str(), mode.c_str(), metric, value);
  }

 private:
  std::FILE* file_ = nullptr;
  std::string prefix_;
};

std::string Num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", x);
  return buf;
}

// --------------------------------------------------------------- configs

struct BenchConfig {
  std::string token;
  cuckoo::FilterConfig config;
};

bool ParseConfigs(const std::string& spec, std::vector<BenchConfig>* out,
                  std::string* error) {
  std::stringstream in(spec);
  std::string token;
  while (std::getline(in, token, ',')) {
    if (token.empty()) continue;
    cuckoo::FilterConfig c;
    c.seed = FLAGS_seed;
    c.target_load = FLAGS_load;
    size_t pos = 0;
    if (token.compare(0, 2, "ss") == 0) {
      c.semi_sort = true;
      pos = 2;
    } else if (token[0] == 'f') {
      pos = 1;
    } else {
      *error = "config '" + token + "' must start with f or ss";
      return false;
    }
    char* end = nullptr;
    c.fingerprint_bits =
        static_cast<int>(std::strtol(token.c_str() + pos, &end, 10));
    c.bucket_size = 4;
    if (*end == 'b')
      c.bucket_size = static_cast<int>(std::strtol(end + 1, &end, 10));
    if (*end != '\0' || end == token.c_str() + pos) {
      *error = "cannot parse config '" + token + "'";
      return false;
    }
    const std::string invalid = cuckoo::ValidateConfig(c);
    if (!invalid.empty()) {
      *error = token + ": " + invalid;
      return false;
    }
    std::string canonical = (c.semi_sort ? "ss" : "f") +
                            std::to_string(c.fingerprint_bits) + "b" +
                            std::to_string(c.bucket_size);
    out->push_back({canonical, c});
  }
  if (out->empty()) *error = "no configurations";
  return !out->empty();
}

std::string Describe(const cuckoo::FilterConfig& c) {
  return "f=" + std::to_string(c.fingerprint_bits) +
         " b=" + std::to_string(c.bucket_size) +
         (c.semi_sort ? " semi-sorted" : "");
}

// ------------------------------------------------------------- lookups

// Fills `queries` with a mix: each query is, with probability `found`, a
// random one of the first `stored` inserted keys, otherwise a fresh absent
// key (absent indexes continue from *next_absent).
void MakeQueries(const KeyStream& keys,
                 const std::vector<cuckoo::KeyHash>& inserted, uint64_t stored,
                 double found, Rng* rng, uint64_t* next_absent,
                 std::vector<cuckoo::KeyHash>* queries) {
  for (cuckoo::KeyHash& q : *queries) {
    if (stored > 0 && rng->Uniform() < found) {
      q = inserted[rng->Below(stored)];
    } else {
      q = keys.Absent((*next_absent)++);
    }
  }
}

// ns per query of single Contains calls over `queries`; *positives counts
// true answers.
double TimeSingle(const cuckoo::CuckooFilter& filter,
                  const std::vector<cuckoo::KeyHash>& queries,
                  uint64_t* positives) {
  uint64_t count = 0;
  Stopwatch timer;
  for (cuckoo::KeyHash q : queries) count += filter.Contains(q);
  const double seconds = timer.Stop();
  DoNotOptimize(count);
  *positives = count;
  return seconds * 1e9 / double(queries.size());
}

// ns per query of single lookups through cuckoo::VisitLookup: the same
// loop, with the layout dispatched once (cuckoo/typed_lookup.h).
double TimeSingleTyped(const cuckoo::CuckooFilter& filter,
                       const std::vector<cuckoo::KeyHash>& queries,
                       uint64_t* positives) {
  Stopwatch timer;
  const uint64_t count = cuckoo::VisitLookup(filter, [&](auto lookup) {
    uint64_t n = 0;
    for (cuckoo::KeyHash q : queries) n += lookup.Contains(q);
    return n;
  });
  const double seconds = timer.Stop();
  DoNotOptimize(count);
  *positives = count;
  return seconds * 1e9 / double(queries.size());
}

// ns per query of single Contains calls where each query's address depends
// on the previous answer, so lookups cannot overlap: the latency of one
// lookup. (The dependency adds 0, but the compiler cannot know that.)
double TimeSingleDependent(const cuckoo::CuckooFilter& filter,
                           const std::vector<cuckoo::KeyHash>& queries,
                           uint64_t n, uint64_t* positives) {
  uint64_t count = 0;
  Stopwatch timer;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t dep = count;
    asm volatile("" : "+r"(dep));
    count += filter.Contains(cuckoo::KeyHash(queries[i].value + (dep >> 63)));
  }
  const double seconds = timer.Stop();
  DoNotOptimize(count);
  *positives = count;
  return seconds * 1e9 / double(n);
}

// ns per query of ContainsBatch in chunks of `batch` keys.
double TimeBatch(const cuckoo::CuckooFilter& filter,
                 const std::vector<cuckoo::KeyHash>& queries, size_t batch,
                 bool* out, uint64_t* positives) {
  const size_t n = queries.size();
  Stopwatch timer;
  for (size_t i = 0; i < n; i += batch) {
    filter.ContainsBatch(queries.data() + i, std::min(batch, n - i), out + i);
  }
  const double seconds = timer.Stop();
  uint64_t count = 0;
  for (size_t i = 0; i < n; ++i) count += out[i];
  *positives = count;
  return seconds * 1e9 / double(n);
}

// ------------------------------------------------------------- results

struct LookupRow {
  double found;
  std::string mode;
  Stat ns;
  double speedup;
  uint64_t positives;
};

struct BandRow {
  double occupancy_end;
  uint64_t inserts;
  double mops;
  // ns/op at the end of the band: [single neg, single pos, batch neg, batch
  // pos]
  double lookup_ns[4];
};

struct Summary {
  std::string token;
  cuckoo::FilterConfig config;
  cuckoo::FilterStats stats;
  double fpr_measured = 0;
  double fpr_paper = 0;
  Stat construct{0, 0, 0};
  uint64_t construct_failures = 0;
  double neg_single_ns = 0;
  double neg_batch_ns = 0;  // the largest batch size
  size_t neg_batch_size = 0;
  double max_load = 0;  // fill sweep: load at the first failed insert
  double max_load_bits_per_item = 0;
  double max_load_fpr = 0;
  double max_load_fpr_expected = 0;
  double wall_over_cpu = 0;  // of all timed regions; > ~1.05: busy machine
};

void PrintTargets(const std::vector<Summary>& all) {
  std::printf("\n=== Summary (num=%" PRIu64 ", queries=%" PRIu64
              ", repeats=%d) ===\n",
              FLAGS_num, FLAGS_queries, FLAGS_repeats);
  std::printf(
      "%-7s | %6s %9s %9s %9s | %9s | %8s %8s %7s | %6s %9s %9s | %5s\n",
      "config", "load", "bits/item", "FPR %", "expect %", "construct", "neg 1x",
      "neg bat", "speedup", "max", "bits/item", "FPR %", "wall/");
  std::printf(
      "%-7s | %6s %9s %9s %9s | %9s | %8s %8s %7s | %6s %9s %9s | %5s\n", "",
      "", "", "measured", "", "Mkeys/s", "ns/op", "ns/op", "", "load", "at max",
      "at max", "cpu");
  for (const Summary& s : all) {
    char at_max[64] = "     -         -         -";
    if (s.max_load > 0) {
      std::snprintf(at_max, sizeof(at_max), "%6.4f %9.3f %9.5f", s.max_load,
                    s.max_load_bits_per_item, 100 * s.max_load_fpr);
    }
    std::printf(
        "%-7s | %6.4f %9.3f %9.5f %9.5f | %9.2f | %8.2f %8.2f %6.2fx | %s | "
        "%5.2f\n",
        s.token.c_str(), s.stats.load_factor, s.stats.bits_per_item,
        100 * s.fpr_measured, 100 * s.stats.expected_fpr, s.construct.median,
        s.neg_single_ns, s.neg_batch_ns, s.neg_single_ns / s.neg_batch_ns,
        at_max, s.wall_over_cpu);
  }
  std::printf("(timings on the %s clock)\n", FLAGS_clock.c_str());
  std::printf(
      "(\"max\": the fill sweep's filter of the same size at its first failed "
      "insert; \"neg bat\": batches of %zu)\n",
      all.empty() ? size_t{0} : all[0].neg_batch_size);

  std::printf(
      "\nTargets (stated for 10^7 items; the paper's configurations are "
      "f12b4 and ss13b4):\n");
  auto verdict = [](bool ok) { return ok ? "met" : "MISSED"; };
  for (const Summary& s : all) {
    const auto& c = s.config;
    const char* name = s.token.c_str();
    const bool paper_plain =
        c.bucket_size == 4 && !c.semi_sort && c.fingerprint_bits == 12;
    const bool paper_semi =
        c.bucket_size == 4 && c.semi_sort && c.fingerprint_bits == 13;
    if (paper_plain || paper_semi) {
      const double max_fpr = paper_plain ? 0.002 : 0.001;
      std::printf(
          "  %-7s space, sized by Create: load %.5f, %.3f bits/item <= 12.7, "
          "FPR %.4f%% <= %.1f%%: %s\n",
          name, s.stats.load_factor, s.stats.bits_per_item,
          100 * s.fpr_measured, 100 * max_fpr,
          verdict(s.stats.bits_per_item <= 12.7 && s.fpr_measured <= max_fpr));
      if (s.max_load > 0) {
        std::printf(
            "  %-7s space, filled to the first failure: load %.4f >= 0.95, "
            "%.3f bits/item <= 12.7, FPR %.4f%% <= %.1f%%: %s\n",
            name, s.max_load, s.max_load_bits_per_item, 100 * s.max_load_fpr,
            100 * max_fpr,
            verdict(s.max_load >= 0.95 && s.max_load_bits_per_item <= 12.7 &&
                    s.max_load_fpr <= max_fpr));
      }
    }
    const double need = c.semi_sort ? 3.0 : 5.0;
    std::printf("  %-7s construction %.2f Mkeys/s >= %.0f: %s%s%s\n", name,
                s.construct.median, need, verdict(s.construct.median >= need),
                paper_plain || paper_semi ? "" : " (not a paper configuration)",
                s.construct_failures ? " (INSERT FAILURES)" : "");
    std::printf(
        "  %-7s batched (%zu) negative lookups %.2fx single >= 2x: %s\n", name,
        s.neg_batch_size, s.neg_single_ns / s.neg_batch_ns,
        verdict(s.neg_single_ns / s.neg_batch_ns >= 2));
  }
}

// ------------------------------------------------------------- benchmark

// One configuration's benchmark, in named steps that RunConfig calls in
// order: Construct, MeasureLookups, RunFillSweep, Print, WriteCsv. The
// steps share the filter and the query buffers (allocated before the timed
// loops) and fill in `summary`, `rows` and `bands`.
class ConfigRun {
 public:
  ConfigRun(const BenchConfig& bc, const std::vector<cuckoo::KeyHash>& inserted,
            const KeyStream& keys, const std::vector<size_t>& batch_sizes)
      : bc_(bc),
        config_(bc.config),
        n_(FLAGS_num),
        inserted_(inserted),
        keys_(keys),
        batch_sizes_(batch_sizes),
        rng_(uint64_t{FLAGS_seed} * 0x51ed27 + 17) {
    summary.token = bc.token;
    summary.config = config_;
  }

  Summary summary;
  std::vector<LookupRow> rows;
  std::vector<BandRow> bands;

  // Construction: --repeats fresh filters of --num items (median rate); the
  // last one (refilled by InsertMany if InsertUnordered failed) is the
  // filter of the lookups.
  void Construct() {
    std::vector<double> rates;
    for (int r = 0; r < FLAGS_repeats; ++r) {
      std::string error;
      filter_ = cuckoo::CuckooFilter::Create(config_, n_, &error);
      if (filter_ == nullptr) {
        std::fprintf(stderr, "cannot create %s: %s\n", bc_.token.c_str(),
                     error.c_str());
        std::exit(1);
      }
      Stopwatch timer;
      const uint64_t first_failure = FillFilter();
      rates.push_back(double(n_) / timer.Stop() / 1e6);
      if (first_failure < n_) {
        ++summary.construct_failures;
        // kInsertedFull at first_failure stored that item; later ones: kFull.
        stored_ = std::min(stored_, first_failure + 1);
      }
      std::fprintf(
          stderr, "[filter_bench] %s: construction %d/%d: %.2f Mkeys/s%s\n",
          bc_.token.c_str(), r + 1, FLAGS_repeats, rates.back(),
          first_failure < n_ ? " (insert failed before all items fit)" : "");
    }
    summary.construct = Summarize(rates);
    if (FLAGS_construction == "unordered" && summary.construct_failures > 0) {
      std::string error;
      filter_ = cuckoo::CuckooFilter::Create(config_, n_, &error);
      const uint64_t stored_now = filter_->InsertMany(inserted_.data(), n_);
      stored_ = filter_->full() ? stored_now : n_;
    }
    summary.stats = filter_->stats();
    summary.fpr_paper = 2.0 * config_.bucket_size * summary.stats.load_factor /
                        std::ldexp(1.0, config_.fingerprint_bits);
  }

  // Lookups: for each --found mix, the single, typed, dependent and batched
  // loops (median of --repeats), checked to give the same positives.
  void MeasureLookups(const std::vector<double>& found_fractions) {
    queries_.resize(FLAGS_queries);
    out_.reset(new bool[queries_.size()]);
    for (double found : found_fractions) MeasureMix(found);
    if (summary.neg_single_ns == 0) {  // no all-negative mix was asked for
      summary.fpr_measured = std::nan("");
    }
  }

  // Fill sweep: a fresh filter filled band by band up to the first failed
  // insert (insert throughput per band, lookups at the end of each band),
  // then its load, bits/item and FPR at that maximum load.
  void RunFillSweep() {
    filter_.reset();
    filter_ = cuckoo::CuckooFilter::Create(config_, n_);
    const uint64_t capacity = filter_->stats().capacity;
    std::vector<cuckoo::KeyHash> fill(inserted_.begin(), inserted_.end());
    // more keys than fit: the sweep ends at the first failure
    for (uint64_t i = fill.size(); i < capacity + 1; ++i)
      fill.push_back(keys_.Inserted(i));
    std::vector<cuckoo::KeyHash> occ_queries(FLAGS_occupancy_queries);
    uint64_t count = 0;
    bool failed = false;
    for (int band = 1; band <= FLAGS_bands && !failed; ++band) {
      const uint64_t target =
          band == FLAGS_bands ? capacity + 1 : capacity * band / FLAGS_bands;
      bands.push_back(
          SweepBand(fill, target, capacity, &count, &failed, &occ_queries));
      std::fprintf(
          stderr,
          "[filter_bench] %s: sweep band %d: occupancy %.4f, %.2f Minserts/s\n",
          bc_.token.c_str(), band, bands.back().occupancy_end,
          bands.back().mops);
    }
    summary.max_load = filter_->stats().load_factor;
    summary.max_load_bits_per_item = filter_->stats().bits_per_item;
    summary.max_load_fpr_expected = filter_->stats().expected_fpr;
    // FPR at the maximum load, on --queries fresh absent keys.
    MakeQueries(keys_, fill, count, 0.0, &rng_, &next_absent_, &queries_);
    uint64_t positives = 0;
    TimeSingle(*filter_, queries_, &positives);
    summary.max_load_fpr = double(positives) / double(queries_.size());
  }

  // The configuration's tables on stdout.
  void Print() const {
    const cuckoo::FilterStats& st = summary.stats;
    std::printf("\n=== %s (%s): %" PRIu64 " items, %" PRIu64
                " buckets, %.2f MB table ===\n",
                bc_.token.c_str(), Describe(config_).c_str(), n_,
                st.num_buckets, st.table_bytes / 1048576.0);
    std::printf(
        "timing:       %s clock; wall/cpu time of the timed regions %.2f%s\n",
        FLAGS_clock.c_str(), summary.wall_over_cpu,
        summary.wall_over_cpu > 1.05 ? " (busy machine: other processes ran)"
                                     : "");
    std::printf("space:        load %.4f, %.3f bits/item\n", st.load_factor,
                st.bits_per_item);
    std::printf("FPR:          measured %.5f%% on %" PRIu64
                " absent queries; expected %.5f%%; 2b*load/2^f %.5f%%\n",
                100 * summary.fpr_measured, FLAGS_queries,
                100 * st.expected_fpr, 100 * summary.fpr_paper);
    std::printf(
        "construction: %.2f Mkeys/s (%s, median of %d; min %.2f, max %.2f)%s\n",
        summary.construct.median, FindConstruction()->name, FLAGS_repeats,
        summary.construct.min, summary.construct.max,
        summary.construct_failures ? "  INSERT FAILED BEFORE ALL ITEMS FIT"
                                   : "");
    std::printf("\nlookups (%" PRIu64 " queries, median of %d):\n",
                FLAGS_queries, FLAGS_repeats);
    std::printf("  %-6s %-10s %9s %9s %9s %8s %8s\n", "found", "mode", "ns/op",
                "min", "max", "Mops/s", "speedup");
    for (const LookupRow& r : rows) {
      std::printf("  %-6.2f %-10s %9.2f %9.2f %9.2f %8.2f %7.2fx\n", r.found,
                  r.mode.c_str(), r.ns.median, r.ns.min, r.ns.max,
                  1e3 / r.ns.median, r.speedup);
    }
    if (!bands.empty()) {
      std::printf("\nfill sweep (one run; lookups with %" PRIu64
                  " queries, batch %zu):\n",
                  FLAGS_occupancy_queries, batch_sizes_.back());
      std::printf("  %-9s %10s %9s | %10s %10s %10s %10s\n", "occupancy",
                  "inserts", "Mins/s", "neg 1x ns", "pos 1x ns", "neg bat ns",
                  "pos bat ns");
      for (const BandRow& b : bands) {
        std::printf("  %-9.4f %10" PRIu64
                    " %9.2f | %10.2f %10.2f %10.2f %10.2f\n",
                    b.occupancy_end, b.inserts, b.mops, b.lookup_ns[0],
                    b.lookup_ns[1], b.lookup_ns[2], b.lookup_ns[3]);
      }
      std::printf(
          "  first failure at load %.4f: %.3f bits/item, FPR measured %.5f%% "
          "(expected %.5f%%)\n",
          summary.max_load, summary.max_load_bits_per_item,
          100 * summary.max_load_fpr, 100 * summary.max_load_fpr_expected);
    }
    std::fflush(stdout);
  }

  // The configuration's rows of the --csv file.
  void WriteCsv(Csv* csv) const {
    const cuckoo::FilterStats& st = summary.stats;
    auto metric = [csv](const char* name, double value) {
      csv->Row("summary", "", "", name, value);
    };
    metric("load_factor", st.load_factor);
    metric("bits_per_item", st.bits_per_item);
    metric("table_bytes", double(st.table_bytes));
    metric("fpr_measured", summary.fpr_measured);
    metric("fpr_expected", st.expected_fpr);
    metric("fpr_paper", summary.fpr_paper);
    metric("construct_mkeys_per_s", summary.construct.median);
    metric("construct_mkeys_per_s_min", summary.construct.min);
    metric("construct_mkeys_per_s_max", summary.construct.max);
    metric("construct_failures", double(summary.construct_failures));
    metric("clock_is_wall", FLAGS_clock == "wall" ? 1 : 0);
    metric("construct_bulk", FindConstruction()->csv_code);
    metric("wall_over_cpu", summary.wall_over_cpu);
    if (!bands.empty()) {
      metric("max_load", summary.max_load);
      metric("max_load_bits_per_item", summary.max_load_bits_per_item);
      metric("max_load_fpr_measured", summary.max_load_fpr);
      metric("max_load_fpr_expected", summary.max_load_fpr_expected);
    }
    for (const LookupRow& r : rows) {
      const std::string x = Num(r.found);
      csv->Row("lookup", x, r.mode, "ns_per_op", r.ns.median);
      csv->Row("lookup", x, r.mode, "ns_per_op_min", r.ns.min);
      csv->Row("lookup", x, r.mode, "ns_per_op_max", r.ns.max);
      csv->Row("lookup", x, r.mode, "mops", 1e3 / r.ns.median);
      csv->Row("lookup", x, r.mode, "speedup_vs_single", r.speedup);
      csv->Row("lookup", x, r.mode, "positives", double(r.positives));
    }
    const std::string batch_mode =
        "batch" + std::to_string(batch_sizes_.back());
    const std::string modes[4] = {"single/neg", "single/pos",
                                  batch_mode + "/neg", batch_mode + "/pos"};
    for (const BandRow& b : bands) {
      const std::string x = Num(b.occupancy_end);
      csv->Row("insert_band", x, "", "mops", b.mops);
      csv->Row("insert_band", x, "", "inserts", double(b.inserts));
      for (int k = 0; k < 4; ++k) {
        csv->Row("lookup_occupancy", x, modes[k], "ns_per_op", b.lookup_ns[k]);
        csv->Row("lookup_occupancy", x, modes[k], "mops", 1e3 / b.lookup_ns[k]);
      }
    }
  }

 private:
  // Inserts the --num items into the empty filter_ as --construction says;
  // returns the index of the first failed insert, or n_ if all fit
  // (InsertUnordered: 0 on a failure, since which items are missing is
  // unspecified: the lookups then use a filter filled by InsertMany).
  uint64_t FillFilter() {
    if (FLAGS_construction == "unordered") {
      return filter_->InsertUnordered(inserted_.data(), n_) < n_ ? 0 : n_;
    }
    if (FLAGS_construction == "many") {
      // After the first failure (kInsertedFull, stored) every insert is kFull.
      const uint64_t stored_now = filter_->InsertMany(inserted_.data(), n_);
      return filter_->full() ? stored_now - 1 : n_;
    }
    uint64_t first_failure = n_;
    for (uint64_t i = 0; i < n_; ++i) {
      if (filter_->Insert(inserted_[i]) != cuckoo::InsertResult::kInserted &&
          first_failure == n_) {
        first_failure = i;
      }
    }
    return first_failure;
  }

  // The lookup loops for one mix with a `found` fraction of positives.
  void MeasureMix(double found) {
    MakeQueries(keys_, inserted_, stored_, found, &rng_, &next_absent_,
                &queries_);
    std::fprintf(stderr, "[filter_bench] %s: lookups, %.0f%% positive\n",
                 bc_.token.c_str(), 100 * found);
    std::vector<double> single_ns, typed_ns, dep_ns;
    std::vector<std::vector<double>> batch_ns(batch_sizes_.size());
    uint64_t single_pos = 0, typed_pos = 0, dep_pos = 0;
    std::vector<uint64_t> batch_pos(batch_sizes_.size());
    const uint64_t dep_n =
        std::min<uint64_t>(FLAGS_dependent_queries, queries_.size());
    for (int r = 0; r < FLAGS_repeats; ++r) {
      single_ns.push_back(TimeSingle(*filter_, queries_, &single_pos));
      typed_ns.push_back(TimeSingleTyped(*filter_, queries_, &typed_pos));
      CheckSamePositives("typed lookups", typed_pos, single_pos);
      if (dep_n > 0) {
        dep_ns.push_back(
            TimeSingleDependent(*filter_, queries_, dep_n, &dep_pos));
      }
      for (size_t k = 0; k < batch_sizes_.size(); ++k) {
        batch_ns[k].push_back(TimeBatch(*filter_, queries_, batch_sizes_[k],
                                        out_.get(), &batch_pos[k]));
        CheckSamePositives(
            ("batch of " + std::to_string(batch_sizes_[k])).c_str(),
            batch_pos[k], single_pos);
      }
    }
    const Stat single = Summarize(single_ns);
    rows.push_back({found, "single", single, 1.0, single_pos});
    const Stat typed = Summarize(typed_ns);
    rows.push_back({found, "single_typed", typed, single.median / typed.median,
                    typed_pos});
    if (dep_n > 0) {
      const Stat dep = Summarize(dep_ns);
      rows.push_back(
          {found, "single_dep", dep, single.median / dep.median, dep_pos});
    }
    for (size_t k = 0; k < batch_sizes_.size(); ++k) {
      const Stat b = Summarize(batch_ns[k]);
      rows.push_back({found, "batch" + std::to_string(batch_sizes_[k]), b,
                      single.median / b.median, batch_pos[k]});
    }
    if (found == 0) {
      summary.fpr_measured = double(single_pos) / double(queries_.size());
      summary.neg_single_ns = single.median;
      summary.neg_batch_ns = Summarize(batch_ns.back()).median;
      summary.neg_batch_size = batch_sizes_.back();
    }
  }

  // Exits if a lookup loop's positives differ from the single loop's.
  static void CheckSamePositives(const char* what, uint64_t positives,
                                 uint64_t single_positives) {
    if (positives == single_positives) return;
    std::fprintf(stderr,
                 "ERROR: %s found %" PRIu64 " positives, single %" PRIu64 "\n",
                 what, positives, single_positives);
    std::exit(2);
  }

  // One band of the fill sweep: inserts fill[*count..target) (stopping at
  // the first failure, which sets *failed), then times single and batched
  // lookups, all negative and all positive, at the band's end.
  BandRow SweepBand(const std::vector<cuckoo::KeyHash>& fill, uint64_t target,
                    uint64_t capacity, uint64_t* count, bool* failed,
                    std::vector<cuckoo::KeyHash>* occ_queries) {
    const uint64_t begin = *count;
    Stopwatch timer;
    while (*count < target) {
      const cuckoo::InsertResult r = filter_->Insert(fill[*count]);
      ++*count;  // kInsertedFull stores the item too
      if (r != cuckoo::InsertResult::kInserted) {
        *failed = true;
        break;
      }
    }
    const double seconds = timer.Stop();
    BandRow row;
    row.inserts = *count - begin;
    row.mops = double(row.inserts) / seconds / 1e6;
    row.occupancy_end = double(*count) / double(capacity);
    // lookups at this occupancy: [single neg, single pos, batch neg, batch
    // pos]
    uint64_t pos = 0;
    for (int kind = 0; kind < 2; ++kind) {
      MakeQueries(keys_, fill, *count, kind == 0 ? 0.0 : 1.0, &rng_,
                  &next_absent_, occ_queries);
      row.lookup_ns[kind] = TimeSingle(*filter_, *occ_queries, &pos);
      row.lookup_ns[2 + kind] = TimeBatch(
          *filter_, *occ_queries, batch_sizes_.back(), out_.get(), &pos);
    }
    return row;
  }

  const BenchConfig& bc_;
  const cuckoo::FilterConfig& config_;
  const uint64_t n_;
  const std::vector<cuckoo::KeyHash>& inserted_;
  const KeyStream& keys_;
  const std::vector<size_t>& batch_sizes_;
  std::unique_ptr<cuckoo::CuckooFilter> filter_;
  uint64_t stored_ = n_;  // inserted items the lookups' filter holds
  std::vector<cuckoo::KeyHash> queries_;  // --queries, reused by every mix
  std::unique_ptr<bool[]> out_;           // ContainsBatch answers
  Rng rng_;
  uint64_t next_absent_ = 0;
};

// The benchmark of one configuration: its steps in order; prints its tables
// and writes its CSV rows.
Summary RunConfig(const BenchConfig& bc,
                  const std::vector<cuckoo::KeyHash>& inserted,
                  const KeyStream& keys, const std::vector<size_t>& batch_sizes,
                  const std::vector<double>& found_fractions, Csv* csv) {
  csv->SetConfig(bc.token, bc.config);
  std::fprintf(stderr, "[filter_bench] %s: %s, %" PRIu64 " items\n",
               bc.token.c_str(), Describe(bc.config).c_str(), FLAGS_num);
  const double wall_before = g_timed_wall, cpu_before = g_timed_cpu;
  ConfigRun run(bc, inserted, keys, batch_sizes);
  run.Construct();
  run.MeasureLookups(found_fractions);
  if (FLAGS_sweep) run.RunFillSweep();
  run.summary.wall_over_cpu =
      (g_timed_wall - wall_before) / (g_timed_cpu - cpu_before);
  run.Print();
  run.WriteCsv(csv);
  return run.summary;
}

}  // namespace

int main(int argc, char** argv) {
  cuckoo_bench::ParseFlags(
      &argc, &argv,
      "filter_bench: space, FPR, construction and lookup throughput of the "
      "cuckoo filter core. See the header of db_bench_ext/filter_bench.cc for "
      "the CSV columns.",
      __FILE__);

  std::vector<BenchConfig> configs;
  std::string error;
  if (!ParseConfigs(FLAGS_configs, &configs, &error)) {
    std::fprintf(stderr, "--configs: %s\n", error.c_str());
    return 1;
  }
  std::vector<size_t> batch_sizes;
  if (!ParseList(FLAGS_batch_sizes, &batch_sizes) ||
      std::count(batch_sizes.begin(), batch_sizes.end(), size_t{0}) > 0) {
    std::fprintf(stderr, "--batch_sizes: expected positive integers\n");
    return 1;
  }
  std::vector<double> found;
  if (!ParseList(FLAGS_found, &found)) {
    std::fprintf(stderr, "--found: expected fractions in [0, 1]\n");
    return 1;
  }
  if (FLAGS_clock != "cpu" && FLAGS_clock != "wall") {
    std::fprintf(stderr, "--clock: cpu or wall\n");
    return 1;
  }
  if (FindConstruction() == nullptr) {
    std::fprintf(stderr, "--construction: unordered, many or loop\n");
    return 1;
  }
  if (FLAGS_num == 0 || FLAGS_queries == 0 || FLAGS_repeats < 1 ||
      FLAGS_bands < 1 || FLAGS_occupancy_queries == 0) {
    std::fprintf(stderr,
                 "--num, --queries, --repeats, --bands and "
                 "--occupancy_queries must be positive\n");
    return 1;
  }
  Csv csv;
  if (!csv.Open(FLAGS_csv)) {
    std::fprintf(stderr, "cannot write %s\n", FLAGS_csv.c_str());
    return 1;
  }

  std::fprintf(stderr, "[filter_bench] generating %" PRIu64 " keys\n",
               FLAGS_num);
  const KeyStream keys(FLAGS_seed);
  std::vector<cuckoo::KeyHash> inserted(FLAGS_num);
  for (uint64_t i = 0; i < FLAGS_num; ++i) inserted[i] = keys.Inserted(i);

  std::printf("filter_bench: num=%" PRIu64 " queries=%" PRIu64
              " repeats=%d seed=%u "
              "batch_sizes=%s found=%s clock=%s\n",
              FLAGS_num, FLAGS_queries, FLAGS_repeats, FLAGS_seed,
              FLAGS_batch_sizes.c_str(), FLAGS_found.c_str(),
              FLAGS_clock.c_str());
  std::vector<Summary> summaries;
  for (const BenchConfig& bc : configs) {
    summaries.push_back(
        RunConfig(bc, inserted, keys, batch_sizes, found, &csv));
  }
  PrintTargets(summaries);
  return 0;
}
