// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// churn_bench: the live-key filter under churn, against plain RocksDB and a
// periodically rebuilt Bloom front filter, in one process.
//
// Workload (the same key sequence for every mode, one fresh DB per mode; all
// modes advance in lockstep, chunk by chunk, so that machine noise and
// background compactions affect them alike; write and Get times are summed
// per mode over its chunks):
//   fill   Put N keys (random order of 16-hex-digit keys, --value_size bytes
//          of incompressible random data)
//   churn  --churn_ops writes: alternately Put a new key and Delete the
//          oldest live key (a sliding window of N live keys; every write is a
//          unique insert or a delete of a live key)
//   checkpoints  --checkpoints times during the churn (and once after the
//          fill): filter-only false positive rate on never-inserted keys
//          (--fpr_probes probes) and on deleted keys, bits per live key, and
//          --queries DB Gets mixing live / deleted / never-inserted keys
//          (latency per class; every answer is checked: "errors" must be 0)
//   final  --neg_gets negative Gets (half deleted, half never-inserted keys),
//          after waiting for compactions: throughput and p50/p99 latency;
//          plus --neg_gets / 4 positive Gets for reference.
// Modes (--modes):
//   plain          RocksDB alone (with the SST Bloom filter of
//   --sst_bloom_bits) bloom          RocksDB + an in-memory Bloom front filter
//   of the live keys,
//                  rebuilt from the DB (key scan) every --bloom_rebuild_every
//                  writes (0 = never); new keys are added to it, deleted keys
//                  cannot be removed. Also tracks the same Bloom never rebuilt
//                  ("bloom_norebuild" rows: FPR only).
//   cuckoo         FilteredDB (exact: maybe-check point reads on writes)
//   cuckoo_unique  FilteredDB with assume_unique_writes (no maybe-check reads)
// Counting Bloom baseline (4-bit counters, saturating, deletable): the same
// fill + churn in memory, at the smallest counters-per-key whose measured FPR
// on the same never-inserted probes is <= the cuckoo's final measured FPR.
//
// --bench=writers instead measures write throughput alone: plain vs
// FilteredDB with 1 and 4 writer threads, side by side, medians over
// repetitions (see RunWriters below). --bench=batch_latency measures the
// latency of batches and other exclusive operations while 4 single-key
// writers run flat out, plain vs FilteredDB (see RunBatchLatency below).
//
// Output: human-readable tables on stdout, progress on stderr. With
// --csv_prefix=P, each table is also written as CSV. Columns (stable):
//
// P_timeline.csv: mode,checkpoint,writes_done,live_keys,fpr_never_inserted,
//   fpr_deleted,bits_per_live_key,filter_bytes,get_live_p50_ns,
//   get_deleted_p50_ns,get_never_p50_ns,get_neg_p99_ns,errors
//   (plain: fpr_* = 1, no filter; bits/bytes = 0. bloom_norebuild: Gets = 0.)
// P_summary.csv: mode,fill_seconds,churn_writes,churn_seconds,writes_per_sec,
//   write_ratio_vs_plain,maybe_checks,maybe_checks_per_write,neg_gets,
//   neg_gets_per_sec,neg_get_p50_ns,neg_get_p99_ns,neg_speedup_vs_plain,
//   pos_get_p50_ns,fpr_after_fill,fpr_after_churn,fpr_change_pct,fpr_max,
//   bits_per_live_key,filter_bytes,rebuilds,rebuild_seconds,sst_bytes,errors
//   (fpr_max: the highest never-inserted FPR seen at any checkpoint or, for
//   bloom, just before any rebuild)
// P_counting_bloom.csv:
// counters_per_key,bits_per_key,hashes,fpr_never_inserted,
//   cuckoo_fpr,cuckoo_bits_per_key,ratio_bits_vs_cuckoo,selected
//
// Note: Debian's librocksdb is built with assertions on; absolute timings are
// pessimistic, compare the ratios of one run.
#include <gflags/gflags.h>
#include <sys/resource.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "db_bench_util.h"
#include "open_db.h"  // tests/
#include "rocksdb/cache.h"
#include "rocksdb/db.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "rocksdb/version.h"
#include "rocksdb/write_batch.h"
#include "rocksdb_cuckoo/filtered_db.h"
#include "util/bit_util.h"

DEFINE_uint64(num, 200000, "live keys N (the churn window)");
DEFINE_uint64(churn_ops, 0,
              "churn writes (0 = 10 * num); half Puts, half Deletes");
DEFINE_uint64(seed, 42, "key and query seed");
DEFINE_string(db, "/tmp/cuckoo_churn_bench",
              "directory for the per-mode DBs (wiped)");
DEFINE_string(modes, "plain,bloom,cuckoo,cuckoo_unique",
              "modes to run, in order");
DEFINE_uint64(value_size, 256, "value bytes");
DEFINE_uint64(block_cache_mb, 8, "block cache (LRU) size in MiB");
DEFINE_uint64(write_buffer_mb, 16,
              "memtable size in MiB (>= 4 with Debian's asserts)");
DEFINE_int32(
    sst_bloom_bits, 10,
    "bits/key of RocksDB's own SST Bloom filter, all modes (0 = none)");
DEFINE_bool(cache_index_and_filter_blocks, false,
            "put SST index/filter blocks in the block cache");
DEFINE_uint64(checkpoints, 10, "measurement points during the churn");
DEFINE_uint64(fpr_probes, 10000000,
              "never-inserted filter probes per checkpoint");
DEFINE_uint64(queries, 6000,
              "DB Gets per checkpoint (1/3 live, 1/3 deleted, 1/3 never)");
DEFINE_uint64(neg_gets, 200000, "negative Gets in the final phase");
DEFINE_uint64(bloom_rebuild_every, 0,
              "Bloom front filter rebuild period in writes (0 = num)");
DEFINE_double(bloom_bits_per_key, 0,
              "Bloom front filter bits/key (0 = the cuckoo's bits/key)");
DEFINE_bool(wait_for_compaction, true,
            "let compactions settle before the final Gets");
DEFINE_string(csv_prefix, "", "write each table as <prefix>_<table>.csv");
DEFINE_string(bench, "churn",
              "churn: the sliding-window report above; writers: write "
              "throughput only (see RunWriters)");
DEFINE_string(writer_threads, "1,4",
              "writers bench: numbers of concurrent writer threads");
DEFINE_string(writer_modes, "plain,cuckoo",
              "writers bench: modes (plain, plain_twin: a second plain DB, "
              "the harness's own spread, plain_touch: a plain DB whose "
              "op_costs Puts also write --touch_lines random cache lines "
              "of a --touch_mib MiB array, cuckoo, cuckoo_sync: delete "
              "checks before the delete on the writer's thread, "
              "cuckoo_unique, cuckoo_unchecked: deletes without a check, "
              "--unchecked_delete_ratio); ratios "
              "are against plain");
DEFINE_uint64(reps, 7, "writers bench: repetitions (medians reported)");
DEFINE_double(unchecked_delete_ratio, 0.25,
              "writers, op_costs and batch_latency benches: "
              "FilteredDBOptions::unchecked_delete_ratio of the "
              "cuckoo_unchecked mode");
DEFINE_int64(recent_keys, -1,
             "writers, op_costs and batch_latency benches: "
             "FilteredDBOptions::recent_keys of the cuckoo modes (-1: the "
             "default)");
DEFINE_uint64(touch_lines, 6,
              "op_costs bench, plain_touch mode: random cache lines written "
              "per Put (about what FilteredDB touches per Put of a new "
              "key: stripe, check mark, recent keys, two buckets, version)");
DEFINE_uint64(touch_mib, 8,
              "op_costs bench, plain_touch mode: size of the touched array "
              "in MiB (about FilteredDB's structures: filter table, recent "
              "keys, check marks)");
DEFINE_uint64(filter_capacity, 0,
              "writers, op_costs and batch_latency benches: "
              "LiveKeyFilterOptions::initial_capacity of the cuckoo modes (0: "
              "--num; the filter grows by splits beyond it)");
DEFINE_bool(disable_wal, false,
            "op_costs bench: writes with WriteOptions::disableWAL (no WAL "
            "record, no write() call per write)");
DEFINE_string(op_kinds, "put_new,delete_live,delete_absent,get_absent,get_live",
              "op_costs bench: the operation kinds to measure");
DEFINE_uint64(op_chunk, 20000,
              "op_costs bench: operations per kind, mode and repetition "
              "(split over the threads)");
DEFINE_uint64(read_chunk, 200000,
              "op_costs bench: the same for the Get kinds (reads change "
              "nothing; a filtered negative Get takes tens of ns, so a short "
              "chunk would time the thread start)");
DEFINE_uint64(rep_ops, 0,
              "writers bench: churn writes per repetition and mode (0 = num)");
DEFINE_string(batch_modes, "plain,cuckoo",
              "batch_latency bench: modes (plain first, as in --writer_modes)");
DEFINE_uint64(batch_writers, 4,
              "batch_latency bench: single-key writer threads flat out");
DEFINE_uint64(batches, 30, "batch_latency bench: batches per repetition");
DEFINE_uint64(batch_ops, 100,
              "batch_latency bench: operations per batch (half Put, half "
              "Delete)");
DEFINE_uint64(batch_interval_us, 5000,
              "batch_latency bench: pause after each exclusive operation");
DEFINE_uint64(exclusive_ops, 5,
              "batch_latency bench: DeleteRange calls (and, FilteredDB, "
              "WaitForDeleteChecks and PersistFilterSnapshots) per "
              "repetition");

namespace {

using cuckoo::LiveKeyFilter;
using cuckoo::internal::Mix64;  // bijective (SplitMix64 finalizer)
using cuckoo_bench::Clock;
using cuckoo_bench::Median;
using cuckoo_bench::Seconds;
using cuckoo_bench::SplitList;
using cuckoo_bench::ThreadContextSwitches;
using cuckoo_bench::ThreadCpuSeconds;
using cuckoo_bench::WaitForBackgroundJobs;
using rocksdb_cuckoo::FilteredDB;
using rocksdb_cuckoo::FilteredDBOptions;
using rocksdb_cuckoo::FilteredDBStats;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WriteOptions;

// Key of index i (random key order). Indexes >= 2^62 are never inserted.
std::string MakeKey(uint64_t i) { return cuckoo_bench::MakeKey(i, FLAGS_seed); }
constexpr uint64_t kNeverBase = uint64_t{1} << 62;

uint64_t KeyHash(const std::string& key) {
  return XXH3_64bits(key.data(), key.size());
}

// Hashes of the --fpr_probes never-inserted keys used for every FPR figure.
const std::vector<uint64_t>& NeverInsertedProbes() {
  static const std::vector<uint64_t> probes = [] {
    std::vector<uint64_t> p(FLAGS_fpr_probes);
    for (uint64_t q = 0; q < p.size(); ++q)
      p[q] = KeyHash(MakeKey(kNeverBase + q));
    return p;
  }();
  return probes;
}

uint64_t FastRange64(uint64_t x, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(x) * n) >> 64);
}

// ---------------------------------------------------------------- Bloom
// filters

// Standard Bloom filter, k probes by double hashing of the 64-bit key hash.
class BloomFilter {
 public:
  BloomFilter(uint64_t keys, double bits_per_key)
      : bits_(std::max<uint64_t>(
            64, static_cast<uint64_t>(double(keys) * bits_per_key))),
        k_(std::max(
            1, static_cast<int>(std::lround(bits_per_key * std::log(2.0))))),
        words_((bits_ + 63) / 64, 0) {}
  void Add(uint64_t h) {
    uint64_t a = h, b = Mix64(h) | 1;
    for (int i = 0; i < k_; ++i, a += b) {
      const uint64_t bit = FastRange64(a, bits_);
      words_[bit >> 6] |= uint64_t{1} << (bit & 63);
    }
  }
  bool MayContain(uint64_t h) const {
    uint64_t a = h, b = Mix64(h) | 1;
    for (int i = 0; i < k_; ++i, a += b) {
      const uint64_t bit = FastRange64(a, bits_);
      if ((words_[bit >> 6] & (uint64_t{1} << (bit & 63))) == 0) return false;
    }
    return true;
  }
  uint64_t bytes() const { return words_.size() * 8; }

 private:
  uint64_t bits_;
  int k_;
  std::vector<uint64_t> words_;
};

// Counting Bloom filter with 4-bit saturating counters (a counter at 15
// stays 15: decrementing it could create false negatives).
class CountingBloomFilter {
 public:
  CountingBloomFilter(uint64_t keys, double counters_per_key, int k)
      : counters_(std::max<uint64_t>(
            64, static_cast<uint64_t>(double(keys) * counters_per_key))),
        k_(k),
        nibbles_((counters_ + 1) / 2, 0) {}
  void Add(uint64_t h) {
    Each(h, [&](uint64_t c) {
      const int v = Get(c);
      if (v < 15) Set(c, v + 1);
    });
  }
  void Remove(uint64_t h) {
    Each(h, [&](uint64_t c) {
      const int v = Get(c);
      if (v > 0 && v < 15) Set(c, v - 1);
    });
  }
  bool MayContain(uint64_t h) const {
    uint64_t a = h, b = Mix64(h) | 1;
    for (int i = 0; i < k_; ++i, a += b) {
      if (Get(FastRange64(a, counters_)) == 0) return false;
    }
    return true;
  }
  uint64_t bytes() const { return nibbles_.size(); }

 private:
  template <typename F>
  void Each(uint64_t h, F f) {
    uint64_t a = h, b = Mix64(h) | 1;
    for (int i = 0; i < k_; ++i, a += b) f(FastRange64(a, counters_));
  }
  int Get(uint64_t c) const { return (nibbles_[c >> 1] >> ((c & 1) * 4)) & 15; }
  void Set(uint64_t c, int v) {
    uint8_t& byte = nibbles_[c >> 1];
    const int shift = static_cast<int>((c & 1) * 4);
    byte = static_cast<uint8_t>((byte & ~(15 << shift)) | (v << shift));
  }
  uint64_t counters_;
  int k_;
  std::vector<uint8_t> nibbles_;
};

// ---------------------------------------------------------------- stats
// helpers

struct Percentiles {
  double p50 = 0, p99 = 0, mean = 0;
};

Percentiles Summarize(std::vector<uint64_t>* ns) {
  Percentiles p;
  if (ns->empty()) return p;
  std::sort(ns->begin(), ns->end());
  p.p50 = double((*ns)[ns->size() / 2]);
  p.p99 = double((*ns)[std::min(ns->size() - 1, ns->size() * 99 / 100)]);
  double sum = 0;
  for (uint64_t v : *ns) sum += double(v);
  p.mean = sum / double(ns->size());
  return p;
}

// A printed table that can also be written as CSV.
class Table {
 public:
  Table(std::string name, std::vector<std::string> columns)
      : name_(std::move(name)), columns_(std::move(columns)) {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void Print() const {
    std::vector<size_t> width(columns_.size());
    for (size_t c = 0; c < columns_.size(); ++c) {
      width[c] = columns_[c].size();
      for (const auto& r : rows_) width[c] = std::max(width[c], r[c].size());
    }
    printf("\n== %s\n", name_.c_str());
    for (size_t c = 0; c < columns_.size(); ++c)
      printf("%*s ", int(width[c]), columns_[c].c_str());
    printf("\n");
    for (const auto& r : rows_) {
      for (size_t c = 0; c < columns_.size(); ++c)
        printf("%*s ", int(width[c]), r[c].c_str());
      printf("\n");
    }
    fflush(stdout);
  }
  void WriteCsv() const {
    if (FLAGS_csv_prefix.empty()) return;
    const std::string path = FLAGS_csv_prefix + "_" + name_ + ".csv";
    FILE* f = fopen(path.c_str(), "w");
    if (f == nullptr) {
      fprintf(stderr, "cannot write %s\n", path.c_str());
      return;
    }
    for (size_t c = 0; c < columns_.size(); ++c)
      fprintf(f, "%s%s", c ? "," : "", columns_[c].c_str());
    fprintf(f, "\n");
    for (const auto& r : rows_) {
      for (size_t c = 0; c < r.size(); ++c)
        fprintf(f, "%s%s", c ? "," : "", r[c].c_str());
      fprintf(f, "\n");
    }
    fclose(f);
    fprintf(stderr, "wrote %s\n", path.c_str());
  }

 private:
  std::string name_;
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// Prints each table and writes it as CSV (with --csv_prefix).
void PrintTables(const std::vector<const Table*>& tables) {
  for (const Table* t : tables) {
    t->Print();
    t->WriteCsv();
  }
}

std::string Fmt(double v, const char* format = "%.4g") {
  char buf[64];
  snprintf(buf, sizeof(buf), format, v);
  return buf;
}
std::string U(uint64_t v) { return std::to_string(v); }

// ---------------------------------------------------------------- one mode

enum class Kind { kPlain, kBloom, kCuckoo };

struct ModeResult {
  std::string name;
  double fill_seconds = 0, churn_seconds = 0;
  uint64_t churn_writes = 0, maybe_checks = 0, neg_gets = 0, errors = 0;
  double neg_per_sec = 0, neg_p50 = 0, neg_p99 = 0, pos_p50 = 0;
  double fpr_fill = 1, fpr_churn = 1, fpr_max = 0, bits_per_key = 0;
  uint64_t filter_bytes = 0, rebuilds = 0, sst_bytes = 0;
  double rebuild_seconds = 0;
};

struct Checkpoint {
  std::string mode;
  uint64_t index, writes, live;
  double fpr_never, fpr_deleted, bits_per_key;
  uint64_t filter_bytes;
  double live_p50, deleted_p50, never_p50, neg_p99;
  uint64_t errors;
};

Options DbOptions() {
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = FLAGS_write_buffer_mb << 20;
  o.max_background_jobs = 2;
  ROCKSDB_NAMESPACE::BlockBasedTableOptions t;
  t.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(FLAGS_block_cache_mb << 20);
  if (FLAGS_sst_bloom_bits > 0) {
    t.filter_policy.reset(
        ROCKSDB_NAMESPACE::NewBloomFilterPolicy(FLAGS_sst_bloom_bits));
  }
  t.cache_index_and_filter_blocks = FLAGS_cache_index_and_filter_blocks;
  o.table_factory.reset(ROCKSDB_NAMESPACE::NewBlockBasedTableFactory(t));
  return o;
}

void Check(const Status& s, const char* what) {
  if (!s.ok()) {
    fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    exit(1);
  }
}

// A plain DB at `path` with DbOptions(), or exit.
std::unique_ptr<DB> OpenPlainDb(const std::string& path) {
  std::unique_ptr<DB> db;
  Check(cuckoo_test::OpenDB(DbOptions(), path, &db), "open");
  return db;
}

// Random (incompressible) value bytes of key i.
ROCKSDB_NAMESPACE::Slice ValueOf(uint64_t i) {
  return cuckoo_bench::ValueOf(i, FLAGS_value_size);
}

uint64_t NanosSince(Clock::time_point t) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t)
          .count());
}

// One mode: its DB and filters. The driver (main) runs all modes in lockstep,
// chunk by chunk, so that machine noise and background work hit them alike.
class ModeRunner {
 public:
  ModeRunner(const std::string& name, Kind kind, bool assume_unique,
             double bloom_bpk, uint64_t n)
      : name_(name), kind_(kind), n_(n), bloom_bpk_(bloom_bpk) {
    result.name = name;
    path_ = FLAGS_db + "/" + name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(FLAGS_db);
    if (kind == Kind::kCuckoo) {
      FilteredDBOptions fopts;
      fopts.filter.initial_capacity = n;
      fopts.assume_unique_writes = assume_unique;
      Check(FilteredDB::Open(DbOptions(), path_, fopts, &fdb_), "open");
      db_ = fdb_.get();
    } else {
      plain_ = OpenPlainDb(path_);
      db_ = plain_.get();
    }
  }
  ~ModeRunner() {
    fdb_.reset();
    plain_.reset();
    std::filesystem::remove_all(path_);
  }

  const std::string& name() const { return name_; }
  ModeResult result;

  // Puts the next `count` keys of the fill.
  void FillChunk(uint64_t count) {
    auto start = Clock::now();
    for (uint64_t i = 0; i < count; ++i) Put(next_++);
    result.fill_seconds += Seconds(start, Clock::now());
  }

  void AfterFill(std::vector<Checkpoint>* timeline) {
    if (kind_ == Kind::kBloom) {
      RebuildBloom();
      norebuild_ = std::make_unique<BloomFilter>(n_, bloom_bpk_);
      for (uint64_t i = 0; i < n_; ++i) norebuild_->Add(KeyHash(MakeKey(i)));
    }
    AddCheckpoint(0, timeline);
    result.fpr_fill = result.fpr_churn;
  }

  // `writes` churn writes (even): Put a new key, Delete the oldest.
  void ChurnChunk(uint64_t writes) {
    const uint64_t rebuild_every =
        FLAGS_bloom_rebuild_every ? FLAGS_bloom_rebuild_every : n_;
    auto start = Clock::now();
    double rebuild_time = 0;
    for (uint64_t w = 0; w < writes; w += 2) {
      Put(next_++);
      Check(db_->Delete(WriteOptions(), MakeKey(oldest_++)), "delete");
      since_rebuild_ += 2;
      if (kind_ == Kind::kBloom && since_rebuild_ >= rebuild_every) {
        // The Bloom's worst moment: just before it is rebuilt.
        auto rb = Clock::now();
        result.fpr_max = std::max(result.fpr_max, FilterFpr());
        RebuildBloom();
        rebuild_time += Seconds(rb, Clock::now());
        since_rebuild_ = 0;
      }
    }
    // Rebuilds are reported separately from the write throughput.
    result.churn_seconds += Seconds(start, Clock::now()) - rebuild_time;
    result.churn_writes += writes;
  }

  void AddCheckpoint(uint64_t cp, std::vector<Checkpoint>* timeline) {
    timeline->push_back(Measure(cp));
    result.fpr_churn = timeline->back().fpr_never;
    result.fpr_max = std::max(result.fpr_max, result.fpr_churn);
    result.errors += timeline->back().errors;
    if (kind_ == Kind::kBloom) timeline->push_back(MeasureNoRebuild(cp));
  }

  void WaitForCompactions() { WaitForBackgroundJobs(db_); }

  // Gets of keys that must all be absent (negative) or all live.
  void Gets(const std::vector<std::string>& keys, bool negative,
            std::vector<uint64_t>* ns, double* seconds) {
    PinnableSlice value;
    auto start = Clock::now();
    for (const auto& key : keys) {
      value.Reset();
      auto t = Clock::now();
      const Status s = Get(key, &value);
      ns->push_back(NanosSince(t));
      result.errors += negative ? !s.IsNotFound() : !s.ok();
    }
    *seconds += Seconds(start, Clock::now());
  }

  uint64_t oldest() const { return oldest_; }
  uint64_t next() const { return next_; }

  void Finish() {
    if (fdb_ != nullptr) {
      FilteredDBStats s;
      Check(fdb_->GetFilterStats(nullptr, &s), "stats");
      result.maybe_checks = s.maybe_checks;
      result.bits_per_key = s.bits_per_key;
      result.filter_bytes = s.table_bytes;
      result.rebuilds = s.rebuilds;
    } else if (bloom_ != nullptr) {
      result.bits_per_key =
          double(bloom_->bytes()) * 8 / double(next_ - oldest_);
      result.filter_bytes = bloom_->bytes();
    }
    uint64_t sst = 0;
    db_->GetIntProperty("rocksdb.total-sst-files-size", &sst);
    result.sst_bytes = sst;
  }

 private:
  void Put(uint64_t i) {
    const std::string key = MakeKey(i);
    Check(db_->Put(WriteOptions(), key, ValueOf(i)), "put");
    if (bloom_ != nullptr) bloom_->Add(KeyHash(key));
    if (norebuild_ != nullptr) norebuild_->Add(KeyHash(key));
  }

  void RebuildBloom() {
    auto start = Clock::now();
    auto fresh = std::make_unique<BloomFilter>(next_ - oldest_, bloom_bpk_);
    ReadOptions ro;
    ro.fill_cache = false;
    std::unique_ptr<ROCKSDB_NAMESPACE::Iterator> it(db_->NewIterator(ro));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      fresh->Add(XXH3_64bits(it->key().data(), it->key().size()));
    }
    Check(it->status(), "rebuild scan");
    bloom_ = std::move(fresh);
    ++result.rebuilds;
    result.rebuild_seconds += Seconds(start, Clock::now());
  }

  bool Contains(uint64_t h) const {
    if (kind_ == Kind::kBloom) return bloom_->MayContain(h);
    if (kind_ == Kind::kCuckoo)
      return fdb_->GetLiveKeyFilter(nullptr)->MayContain(cuckoo::KeyHash(h));
    return true;
  }

  Status Get(const std::string& key, PinnableSlice* value) {
    if (kind_ == Kind::kBloom && !bloom_->MayContain(KeyHash(key)))
      return Status::NotFound();
    return db_->Get(ReadOptions(), db_->DefaultColumnFamily(), key, value);
  }

  // FPR on the same --fpr_probes never-inserted keys, in every mode and at
  // every checkpoint.
  double FilterFpr(const BloomFilter* other = nullptr) const {
    if (kind_ == Kind::kPlain) return 1.0;
    const std::vector<uint64_t>& probes = NeverInsertedProbes();
    uint64_t positives = 0;
    if (kind_ == Kind::kCuckoo && other == nullptr) {
      // Batched lookups (prefetching), as MultiGet does.
      const LiveKeyFilter* f = fdb_->GetLiveKeyFilter(nullptr);
      constexpr size_t kBatch = 1024;
      std::unique_ptr<bool[]> out(new bool[kBatch]);
      std::vector<cuckoo::KeyHash> batch(kBatch);
      for (size_t i = 0; i < probes.size(); i += kBatch) {
        const size_t n = std::min(kBatch, probes.size() - i);
        for (size_t k = 0; k < n; ++k)
          batch[k] = cuckoo::KeyHash(probes[i + k]);
        f->MayContainBatch(batch.data(), n, out.get());
        for (size_t k = 0; k < n; ++k) positives += out[k];
      }
    } else {
      for (uint64_t h : probes)
        positives += other != nullptr ? other->MayContain(h) : Contains(h);
    }
    return double(positives) / double(probes.size());
  }

  double DeletedFpr(uint64_t cp, const BloomFilter* other = nullptr) const {
    if (kind_ == Kind::kPlain) return 1.0;
    if (oldest_ == 0) return 0.0;
    std::mt19937_64 rng(FLAGS_seed + cp);
    const uint64_t probes = std::min<uint64_t>(oldest_, 200000);
    uint64_t positives = 0;
    for (uint64_t q = 0; q < probes; ++q) {
      const uint64_t h = KeyHash(MakeKey(rng() % oldest_));
      positives += other != nullptr ? other->MayContain(h) : Contains(h);
    }
    return double(positives) / double(probes);
  }

  Checkpoint Measure(uint64_t cp) {
    Checkpoint c{};
    c.mode = name_;
    c.index = cp;
    c.writes = next_ - n_ + oldest_;
    c.live = next_ - oldest_;
    c.fpr_never = FilterFpr();
    c.fpr_deleted = DeletedFpr(cp);
    if (fdb_ != nullptr) {
      FilteredDBStats s;
      fdb_->GetFilterStats(nullptr, &s);
      c.bits_per_key = s.bits_per_key;
      c.filter_bytes = s.table_bytes;
    } else if (bloom_ != nullptr) {
      c.filter_bytes = bloom_->bytes();
      c.bits_per_key = double(c.filter_bytes) * 8 / double(c.live);
    }
    std::vector<uint64_t> live_ns, deleted_ns, never_ns, neg_ns;
    std::mt19937_64 rng(FLAGS_seed * 3 + cp);
    PinnableSlice value;
    for (uint64_t q = 0; q < FLAGS_queries; ++q) {
      const int kind = static_cast<int>(q % 3);
      uint64_t index;
      if (kind == 0) {
        index = oldest_ + rng() % (next_ - oldest_);
      } else if (kind == 1) {
        if (oldest_ == 0) continue;
        index = rng() % oldest_;
      } else {
        index = kNeverBase + (uint64_t{1} << 40) + rng() % (uint64_t{1} << 40);
      }
      const std::string key = MakeKey(index);
      value.Reset();
      auto start = Clock::now();
      const Status s = Get(key, &value);
      const uint64_t ns = NanosSince(start);
      if (kind == 0) {
        live_ns.push_back(ns);
        c.errors += !s.ok();
      } else {
        (kind == 1 ? deleted_ns : never_ns).push_back(ns);
        neg_ns.push_back(ns);
        c.errors += !s.IsNotFound();
      }
    }
    c.live_p50 = Summarize(&live_ns).p50;
    c.deleted_p50 = Summarize(&deleted_ns).p50;
    c.never_p50 = Summarize(&never_ns).p50;
    c.neg_p99 = Summarize(&neg_ns).p99;
    return c;
  }

  Checkpoint MeasureNoRebuild(uint64_t cp) {
    Checkpoint c{};
    c.mode = "bloom_norebuild";
    c.index = cp;
    c.writes = next_ - n_ + oldest_;
    c.live = next_ - oldest_;
    c.fpr_never = FilterFpr(norebuild_.get());
    c.fpr_deleted = DeletedFpr(cp, norebuild_.get());
    c.filter_bytes = norebuild_->bytes();
    c.bits_per_key = double(c.filter_bytes) * 8 / double(c.live);
    return c;
  }

  std::string name_;
  Kind kind_;
  uint64_t n_;
  double bloom_bpk_;
  std::string path_;
  std::unique_ptr<DB> plain_;
  std::unique_ptr<FilteredDB> fdb_;
  DB* db_ = nullptr;
  std::unique_ptr<BloomFilter> bloom_, norebuild_;
  uint64_t next_ = 0, oldest_ = 0, since_rebuild_ = 0;
};

// ---------------------------------------------------------------- counting
// Bloom

// The counting Bloom filter through the same fill + churn; returns the FPR
// on the same never-inserted probes as the modes.
double CountingBloomFpr(uint64_t n, uint64_t churn_writes,
                        double counters_per_key, int k) {
  CountingBloomFilter f(n, counters_per_key, k);
  for (uint64_t i = 0; i < n; ++i) f.Add(KeyHash(MakeKey(i)));
  for (uint64_t w = 0; w < churn_writes; w += 2) {
    f.Add(KeyHash(MakeKey(n + w / 2)));
    f.Remove(KeyHash(MakeKey(w / 2)));
  }
  uint64_t positives = 0;
  for (uint64_t h : NeverInsertedProbes()) positives += f.MayContain(h);
  return double(positives) / double(FLAGS_fpr_probes);
}

}  // namespace

// One line on the live filter of a FilteredDB mode after a run (nothing for
// plain).
void PrintFilterLine(const std::string& mode, FilteredDB* fdb) {
  if (fdb == nullptr) return;
  FilteredDBStats st;
  Check(fdb->GetFilterStats(nullptr, &st), "stats");
  fprintf(stderr,
          "[%s] filter: %" PRIu64
          " keys, level %d, width %d, load %.3f, "
          "expected FPR %.3f%%, reads %" PRIu64
          " (%.3f%% passed), unchecked deletes %" PRIu64 ", rescans %" PRIu64
          "\n",
          mode.c_str(), st.num_keys, st.level, st.width, st.load_factor,
          100 * st.expected_fpr, st.reads_checked,
          st.reads_checked == 0
              ? 0.0
              : 100.0 * double(st.reads_checked - st.reads_absent) /
                    double(st.reads_checked),
          st.unchecked_deletes, st.rescans);
}

// ---------------------------------------------------------------- writers
// bench
//
// --bench=writers: for each T in --writer_threads, one fresh DB per mode
// (plain RocksDB, FilteredDB exact mode, ...) is filled with --num keys;
// then --reps repetitions, each running --rep_ops churn writes per mode with
// T threads (each thread alternately Puts a new key and Deletes the oldest
// live key of its own sliding window: 50% Put of new keys, 50% Delete of
// live keys). The modes run one after the other inside a repetition, in an
// order that rotates per repetition, so that machine noise and background
// compactions hit them alike. Reported: writes/s per repetition and mode,
// the ratio to plain of each repetition, and medians. Then --neg_gets
// single-threaded negative Gets (half deleted, half never-inserted keys)
// per mode: the speedup over plain. Every live key of a sample is checked
// to be found (errors must be 0).

namespace {

// CPU seconds (user + system) of the live threads of this process named
// `name` (/proc/self/task/*/comm), from their /proc stat; 0 if none.
double CpuSecondsOfThreads(const std::string& name) {
  static const double ticks = double(sysconf(_SC_CLK_TCK));
  double total = 0;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string comm_name;
    std::getline(comm, comm_name);
    if (comm_name != name) continue;
    std::ifstream stat(task.path() / "stat");
    std::string text;
    std::getline(stat, text);
    // After the parenthesised name: state is field 3; utime and stime are
    // fields 14 and 15.
    const size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 2));
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14) utime = std::stod(field);
      if (i == 15) stime = std::stod(field);
    }
    total += (utime + stime) / ticks;
  }
  return total;
}

// CPU seconds of the whole process (every thread), user + system.
double ProcessCpuSeconds() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// One DB of the writers bench; thread t of T owns the key indexes
// j * T + t (j = 0, 1, ...), a sliding window [oldest[t], next[t]) of them.
class WriterDb {
 public:
  // A DB at `path` (default: per mode and thread count); FilteredDB modes
  // persist snapshots into `snapshot_dir` if given.
  WriterDb(const std::string& mode, uint64_t threads, std::string path = "",
           std::string snapshot_dir = "")
      : mode_(mode),
        path_(std::move(path)),
        snapshot_dir_(std::move(snapshot_dir)),
        threads_(threads),
        next_(threads, 0),
        oldest_(threads, 0) {
    if (path_.empty()) {
      path_ = FLAGS_db + "/writers_" + mode + "_" + std::to_string(threads);
    }
    std::filesystem::remove_all(path_);
    if (!snapshot_dir_.empty()) {
      std::filesystem::remove_all(snapshot_dir_);
      std::filesystem::create_directories(snapshot_dir_);
    }
    std::filesystem::create_directories(FLAGS_db);
    if (mode == "plain" || mode == "plain_twin" || mode == "plain_touch") {
      plain_ = OpenPlainDb(path_);
      db_ = plain_.get();
      if (mode == "plain_touch") {
        touched_.assign(std::max<uint64_t>(FLAGS_touch_mib, 1) << 17, 1);
      }
    } else if (mode == "cuckoo" || mode == "cuckoo_unique" ||
               mode == "cuckoo_sync" || mode == "cuckoo_unchecked") {
      FilteredDBOptions fopts;
      fopts.filter.initial_capacity =
          FLAGS_filter_capacity != 0 ? FLAGS_filter_capacity : FLAGS_num;
      fopts.assume_unique_writes = mode == "cuckoo_unique";
      if (FLAGS_recent_keys >= 0) {
        fopts.recent_keys = static_cast<uint64_t>(FLAGS_recent_keys);
      }
      fopts.defer_delete_checks = mode != "cuckoo_sync";
      if (mode == "cuckoo_unchecked") {
        fopts.unchecked_delete_ratio = FLAGS_unchecked_delete_ratio;
      }
      fopts.snapshot_dir = snapshot_dir_;
      fopts.persist_on_close = false;
      Check(FilteredDB::Open(DbOptions(), path_, fopts, &fdb_), "open");
      db_ = fdb_.get();
    } else {
      fprintf(stderr, "unknown writer mode %s\n", mode.c_str());
      exit(1);
    }
  }
  ~WriterDb() {
    fdb_.reset();
    plain_.reset();
    std::filesystem::remove_all(path_);
    if (!snapshot_dir_.empty()) std::filesystem::remove_all(snapshot_dir_);
  }
  const std::string& mode() const { return mode_; }
  FilteredDB* fdb() const { return fdb_.get(); }

  uint64_t Index(uint64_t t, uint64_t j) const { return j * threads_ + t; }

  void Fill(uint64_t n) {
    const uint64_t per_thread = n / threads_;
    for (uint64_t j = 0; j < per_thread; ++j) {
      for (uint64_t t = 0; t < threads_; ++t) {
        const uint64_t i = Index(t, next_[t]++);
        Check(db_->Put(WriteOptions(), MakeKey(i), ValueOf(i)), "fill put");
      }
    }
  }

  // `writes` churn writes split over the threads; returns seconds.
  double Churn(uint64_t writes) {
    const uint64_t pairs = writes / 2 / threads_;
    const auto start = Clock::now();
    ChurnWhile([pairs](uint64_t p) { return p < pairs; });
    // Deferred delete checks still queued are part of the writes' cost.
    if (fdb_ != nullptr) fdb_->WaitForDeleteChecks();
    return Seconds(start, Clock::now());
  }

  // Churn on every thread (alternately Put a new key and Delete the oldest
  // live key of the thread's window) while keep_going(pairs the thread has
  // done) is true; returns the writes done by all threads.
  template <typename KeepGoing>
  uint64_t ChurnWhile(KeepGoing keep_going) {
    std::vector<std::thread> workers;
    std::vector<uint64_t> pairs(threads_, 0);
    for (uint64_t t = 0; t < threads_; ++t) {
      workers.emplace_back([this, t, &pairs, &keep_going] {
        for (uint64_t p = 0; keep_going(p); ++p) {
          const uint64_t i = Index(t, next_[t]++);
          Check(db_->Put(WriteOptions(), MakeKey(i), ValueOf(i)), "put");
          Check(db_->Delete(WriteOptions(), MakeKey(Index(t, oldest_[t]++))),
                "delete");
          pairs[t] = p + 1;
        }
      });
    }
    for (auto& w : workers) w.join();
    uint64_t writes = 0;
    for (uint64_t p : pairs) writes += 2 * p;
    return writes;
  }

  DB* db() const { return db_; }

  // plain_touch: writes --touch_lines random cache lines of its array
  // (independent stores, as a write's own structures would); the lines
  // depend on (t, j) only.
  void Touch(uint64_t t, uint64_t j) {
    if (touched_.empty()) return;
    const uint64_t lines = touched_.size() / 8;
    for (uint64_t l = 0; l < FLAGS_touch_lines; ++l) {
      const uint64_t line =
          Mix64((t << 40) ^ (j * FLAGS_touch_lines + l)) % lines;
      touched_[line * 8] += 1;
    }
  }

  // One operation kind of the op_costs bench: `ops` operations split over
  // the threads, each thread calling op(t, j) for its j-th operation.
  // Deferred delete checks queued by the operations are waited for (their
  // cost belongs to the operations).
  struct Cost {
    double wall = 0;  // seconds, to the end of the operations and checks
    // CPU seconds of every thread of the process, to the end of the flushes
    // and compactions the window started (the caller starts each window
    // with no background job running in any DB of the process).
    double process = 0;
    // CPU seconds of the threads that did the work: the callers, the delete
    // checker ("cuckoo:check") and the caller of WaitForDeleteChecks; not
    // RocksDB's flushes and compactions, nor other processes. The least
    // noisy of the three on a shared machine.
    double work = 0;
    // Context switches (voluntary and involuntary) of the calling threads:
    // a writer that blocks on a lock or in RocksDB's write group.
    double switches = 0;
  };
  template <typename Op>
  Cost Run(uint64_t ops, Op op) {
    const uint64_t per_thread = ops / threads_;
    Cost c;
    const double process0 = ProcessCpuSeconds();
    const double checker0 = CpuSecondsOfThreads("cuckoo:check");
    std::vector<double> thread_cpu(threads_);
    std::vector<long> thread_switches(threads_);
    const auto start = Clock::now();
    std::vector<std::thread> workers;
    for (uint64_t t = 0; t < threads_; ++t) {
      workers.emplace_back([&, t] {
        const long switches0 = ThreadContextSwitches();
        const double cpu0 = ThreadCpuSeconds();
        for (uint64_t j = 0; j < per_thread; ++j) op(t, j);
        thread_cpu[t] = ThreadCpuSeconds() - cpu0;
        thread_switches[t] = ThreadContextSwitches() - switches0;
      });
    }
    for (auto& w : workers) w.join();
    for (long n : thread_switches) c.switches += double(n);
    const double wait0 = ThreadCpuSeconds();
    if (fdb_ != nullptr) fdb_->WaitForDeleteChecks();
    c.wall = Seconds(start, Clock::now());
    c.work = ThreadCpuSeconds() - wait0 +
             (CpuSecondsOfThreads("cuckoo:check") - checker0);
    WaitForCompactions();
    c.process = ProcessCpuSeconds() - process0;
    for (double t : thread_cpu) c.work += t;
    return c;
  }
  // Index of the next key thread t Puts (then advances), and of the oldest
  // live key of thread t (then advances: the caller deletes it).
  uint64_t NextNew(uint64_t t) { return Index(t, next_[t]++); }
  uint64_t NextOldest(uint64_t t) { return Index(t, oldest_[t]++); }
  // A live key of thread t, picked by r.
  uint64_t LiveIndex(uint64_t t, uint64_t r) const {
    return Index(t, oldest_[t] + r % (next_[t] - oldest_[t]));
  }

  // Negative Gets of the given keys; returns Gets per second. Counts
  // answers other than NotFound as errors.
  double NegativeGets(const std::vector<std::string>& keys, uint64_t* errors) {
    PinnableSlice value;
    const auto start = Clock::now();
    for (const auto& key : keys) {
      value.Reset();
      *errors +=
          !db_->Get(ReadOptions(), db_->DefaultColumnFamily(), key, &value)
               .IsNotFound();
    }
    return double(keys.size()) / Seconds(start, Clock::now());
  }

  // A sample of live and deleted keys answers as expected.
  uint64_t CheckSample(uint64_t samples) const {
    std::string value;
    return cuckoo_bench::CheckWindowSample(
        samples, FLAGS_seed + 11, next_, oldest_, [&](uint64_t i, bool live) {
          const Status s = db_->Get(ReadOptions(), MakeKey(i), &value);
          return live ? s.ok() : s.IsNotFound();
        });
  }

  // Deleted keys (of thread 0's range) for the negative Gets.
  std::string DeletedKey(uint64_t r) const {
    const uint64_t t = r % threads_;
    return MakeKey(
        Index(t, (r / threads_) % std::max<uint64_t>(1, oldest_[t])));
  }

  void WaitForCompactions() { WaitForBackgroundJobs(db_); }

 private:
  std::string mode_, path_, snapshot_dir_;
  uint64_t threads_;
  std::vector<uint64_t> next_, oldest_;
  std::vector<uint64_t> touched_;  // plain_touch: the touched array
  std::unique_ptr<DB> plain_;
  std::unique_ptr<FilteredDB> fdb_;
  DB* db_ = nullptr;
};

int RunWriters() {
  const std::vector<std::string> modes = SplitList(FLAGS_writer_modes);
  if (modes.empty() || modes.front() != "plain") {
    fprintf(stderr, "--writer_modes must start with plain\n");
    return 1;
  }
  const uint64_t rep_ops = FLAGS_rep_ops ? FLAGS_rep_ops : FLAGS_num;
  printf("churn_bench --bench=writers: N=%" PRIu64 " live keys, %" PRIu64
         " writes per repetition and mode (50%% Put new, 50%% Delete live), "
         "%" PRIu64 " repetitions, value %" PRIu64 " B, memtable %" PRIu64
         " MiB, SST bloom %d bits/key\n",
         FLAGS_num, rep_ops, FLAGS_reps, FLAGS_value_size,
         FLAGS_write_buffer_mb, FLAGS_sst_bloom_bits);
  Table reps("writer_reps",
             {"threads", "rep", "mode", "writes_per_sec", "ratio_vs_plain"});
  Table summary(
      "writer_summary",
      {"threads", "mode", "median_writes_per_sec", "median_ratio_vs_plain",
       "min_ratio", "max_ratio", "maybe_checks_per_write", "neg_gets_per_sec",
       "neg_speedup_vs_plain", "errors"});
  for (const std::string& threads_text : SplitList(FLAGS_writer_threads)) {
    const uint64_t threads = std::stoull(threads_text);
    std::vector<std::unique_ptr<WriterDb>> dbs;
    for (const auto& m : modes)
      dbs.push_back(std::make_unique<WriterDb>(m, threads));
    fprintf(stderr, "[%" PRIu64 " writers] fill\n", threads);
    for (auto& d : dbs) d->Fill(FLAGS_num);
    for (auto& d : dbs) d->WaitForCompactions();
    std::vector<std::vector<double>> wps(modes.size()), ratio(modes.size());
    for (uint64_t r = 0; r < FLAGS_reps; ++r) {
      std::vector<double> secs(modes.size());
      for (size_t k = 0; k < modes.size(); ++k) {
        const size_t m = (k + r) % modes.size();  // rotating order
        secs[m] = dbs[m]->Churn(rep_ops);
      }
      for (size_t m = 0; m < modes.size(); ++m) {
        wps[m].push_back(double(rep_ops) / secs[m]);
        ratio[m].push_back(wps[m].back() / wps[0].back());
        reps.Add({U(threads), U(r), modes[m], Fmt(wps[m].back(), "%.0f"),
                  Fmt(ratio[m].back(), "%.3f")});
      }
      fprintf(stderr,
              "[%" PRIu64 " writers] rep %" PRIu64 ": cuckoo/plain %.3f\n",
              threads, r, modes.size() > 1 ? ratio[1].back() : 1.0);
    }
    // Negative Gets: the same keys for every mode, in lockstep chunks.
    std::mt19937_64 rng(FLAGS_seed * 7 + 1);
    std::vector<std::string> neg;
    for (uint64_t q = 0; q < FLAGS_neg_gets; ++q) {
      neg.push_back(q % 2 ? dbs[0]->DeletedKey(rng())
                          : MakeKey(kNeverBase + (uint64_t{2} << 40) +
                                    rng() % (uint64_t{1} << 40)));
    }
    for (auto& d : dbs) d->WaitForCompactions();
    std::vector<double> neg_secs(modes.size());
    std::vector<uint64_t> errors(modes.size());
    const size_t chunk = 10000;
    for (size_t start = 0; start < neg.size(); start += chunk) {
      const std::vector<std::string> part(
          neg.begin() + start,
          neg.begin() + std::min(neg.size(), start + chunk));
      for (size_t m = 0; m < modes.size(); ++m) {
        neg_secs[m] +=
            double(part.size()) / dbs[m]->NegativeGets(part, &errors[m]);
      }
    }
    for (size_t m = 0; m < modes.size(); ++m) {
      PrintFilterLine(modes[m] + " " + std::to_string(threads) + " writers",
                      dbs[m]->fdb());
      errors[m] += dbs[m]->CheckSample(20000);
      const double neg_rate = double(neg.size()) / neg_secs[m];
      const double plain_rate = double(neg.size()) / neg_secs[0];
      std::string checks_per_write = "";
      if (dbs[m]->fdb() != nullptr) {
        FilteredDBStats s;
        Check(dbs[m]->fdb()->GetFilterStats(nullptr, &s), "stats");
        checks_per_write = Fmt(
            double(s.maybe_checks) / double(FLAGS_num + FLAGS_reps * rep_ops),
            "%.3f");
      }
      const auto [lo, hi] =
          std::minmax_element(ratio[m].begin(), ratio[m].end());
      summary.Add({U(threads), modes[m], Fmt(Median(wps[m]), "%.0f"),
                   Fmt(Median(ratio[m]), "%.3f"), Fmt(*lo, "%.3f"),
                   Fmt(*hi, "%.3f"), checks_per_write, Fmt(neg_rate, "%.0f"),
                   Fmt(neg_rate / plain_rate, "%.2f"), U(errors[m])});
    }
  }
  PrintTables({&reps, &summary});
  return 0;
}

// ---------------------------------------------------------------- op
// costs bench
//
// --bench=op_costs: what each kind of operation costs alone, per mode
// (--writer_modes, plain first) and number of threads (--writer_threads).
// One DB per mode filled with --num keys; then --reps repetitions, each
// running --op_chunk operations of every kind per mode (--read_chunk for
// the Get kinds), the modes of one kind back to back in an order that
// rotates per repetition. The timed loop makes only the operation: options,
// handle, keys and values are prepared before the clock starts. Kinds:
//   put_new        Put of a key never written
//   delete_live    Delete of a live key (the oldest of the thread's window)
//   delete_absent  Delete of a key never written
//   get_absent     Get of a key never written
//   get_live       Get of a live key
// Reported per kind and mode: median wall ns per operation, median process
// CPU ns per operation (all threads: the deferred delete checks and
// RocksDB's flushes and compactions included), median CPU ns of the
// threads that did the work, the ratios to plain, and the median context
// switches of the calling threads per 1000 operations.
// Each window starts when no DB of the process has a flush or compaction
// running or pending, and its process CPU runs to the end of the ones it
// started: one DB's background work never counts in another's window.
// Controls: plain_twin (a second plain DB: the harness's own spread) and
// plain_touch (a plain DB whose Puts also write --touch_lines random cache
// lines of a --touch_mib MiB array: what that many cold lines per Put cost,
// with no lock and no filter); --disable_wal (no WAL write per write) and
// --filter_capacity (a filter that never grows during the windows) remove
// one cost from every mode.

int RunOpCosts() {
  const std::vector<std::string> modes = SplitList(FLAGS_writer_modes);
  if (modes.empty() || modes.front() != "plain") {
    fprintf(stderr, "--writer_modes must start with plain\n");
    return 1;
  }
  const std::vector<std::string> kinds = SplitList(FLAGS_op_kinds);
  printf("churn_bench --bench=op_costs: N=%" PRIu64 " live keys, %" PRIu64
         " writes / %" PRIu64 " Gets per kind, mode and repetition, %" PRIu64
         " repetitions, value %" PRIu64 " B, memtable %" PRIu64
         " MiB, SST bloom %d bits/key%s\n",
         FLAGS_num, FLAGS_op_chunk, FLAGS_read_chunk, FLAGS_reps,
         FLAGS_value_size, FLAGS_write_buffer_mb, FLAGS_sst_bloom_bits,
         FLAGS_disable_wal ? ", writes without WAL" : "");
  Table summary("op_costs", {"threads", "kind", "mode", "wall_ns_per_op",
                             "cpu_ns_per_op", "work_cpu_ns_per_op",
                             "wall_ratio_vs_plain", "cpu_ratio_vs_plain",
                             "work_cpu_ratio_vs_plain", "switches_per_kop"});
  for (const std::string& threads_text : SplitList(FLAGS_writer_threads)) {
    const uint64_t threads = std::stoull(threads_text);
    std::vector<std::unique_ptr<WriterDb>> dbs;
    for (const auto& m : modes)
      dbs.push_back(std::make_unique<WriterDb>(m, threads));
    fprintf(stderr, "[%" PRIu64 " threads] fill\n", threads);
    for (auto& d : dbs) d->Fill(FLAGS_num);
    for (auto& d : dbs) d->WaitForCompactions();
    // [kind][mode] -> per repetition
    std::vector<std::vector<std::vector<double>>> wall(
        kinds.size(), std::vector<std::vector<double>>(modes.size()));
    auto cpu = wall;
    auto work = wall;
    auto switches = wall;
    std::atomic<uint64_t> errors{0};
    uint64_t never = 0;  // never-written key indexes, fresh per operation
    for (uint64_t r = 0; r < FLAGS_reps; ++r) {
      for (size_t k = 0; k < kinds.size(); ++k) {
        const uint64_t chunk =
            kinds[k].rfind("get_", 0) == 0 ? FLAGS_read_chunk : FLAGS_op_chunk;
        const uint64_t never_base = never;
        never += chunk;
        for (size_t i = 0; i < modes.size(); ++i) {
          const size_t m = (i + r) % modes.size();
          WriterDb& d = *dbs[m];
          DB* db = d.db();
          // The keys of every thread, made before the clock starts (key
          // formatting would otherwise dominate the cheap operations).
          const uint64_t per_thread = chunk / threads;
          std::vector<std::vector<std::string>> keys(threads);
          std::vector<std::vector<uint64_t>> index(threads);
          for (uint64_t th = 0; th < threads; ++th) {
            for (uint64_t j = 0; j < per_thread; ++j) {
              uint64_t key;
              if (kinds[k] == "put_new") {
                key = d.NextNew(th);
              } else if (kinds[k] == "delete_live") {
                key = d.NextOldest(th);
              } else if (kinds[k] == "get_live") {
                key = d.LiveIndex(th, Mix64(never_base + j));
              } else {  // a key never written
                key = kNeverBase + (uint64_t{3} << 40) + never_base +
                      j * threads + th;
              }
              index[th].push_back(key);
              keys[th].push_back(MakeKey(key));
            }
          }
          // Everything but the operation itself is prepared before the
          // clock starts: the kind, the options, the handle and the values
          // (a ReadOptions built per call costs more than a filtered Get).
          enum class Op { kPut, kDelete, kGetLive, kGetAbsent };
          const std::string& name = kinds[k];
          const Op kind = name == "put_new"      ? Op::kPut
                          : name == "get_live"   ? Op::kGetLive
                          : name == "get_absent" ? Op::kGetAbsent
                                                 : Op::kDelete;
          std::vector<std::vector<ROCKSDB_NAMESPACE::Slice>> values(threads);
          if (kind == Op::kPut) {
            for (uint64_t th = 0; th < threads; ++th) {
              for (uint64_t i : index[th]) values[th].push_back(ValueOf(i));
            }
          }
          WriteOptions wo;
          wo.disableWAL = FLAGS_disable_wal;
          const ReadOptions ro;
          ROCKSDB_NAMESPACE::ColumnFamilyHandle* const cf =
              db->DefaultColumnFamily();
          // No DB's flushes or compactions run into another's window.
          for (auto& other : dbs) other->WaitForCompactions();
          const WriterDb::Cost t = d.Run(chunk, [&](uint64_t th, uint64_t j) {
            const std::string& key = keys[th][j];
            switch (kind) {
              case Op::kPut:
                d.Touch(th, j);
                errors += !db->Put(wo, key, values[th][j]).ok();
                break;
              case Op::kDelete:
                errors += !db->Delete(wo, key).ok();
                break;
              case Op::kGetLive:
              case Op::kGetAbsent: {
                thread_local PinnableSlice value;
                value.Reset();
                const Status st = db->Get(ro, cf, key, &value);
                errors += kind == Op::kGetLive ? !st.ok() : !st.IsNotFound();
                break;
              }
            }
          });
          wall[k][m].push_back(t.wall * 1e9 / double(chunk));
          cpu[k][m].push_back(t.process * 1e9 / double(chunk));
          work[k][m].push_back(t.work * 1e9 / double(chunk));
          switches[k][m].push_back(t.switches * 1e3 / double(chunk));
        }
      }
      fprintf(stderr, "[%" PRIu64 " threads] rep %" PRIu64 " done\n", threads,
              r);
    }
    for (size_t k = 0; k < kinds.size(); ++k) {
      const double plain_wall = Median(wall[k][0]);
      const double plain_cpu = Median(cpu[k][0]);
      const double plain_work = Median(work[k][0]);
      for (size_t m = 0; m < modes.size(); ++m) {
        summary.Add(
            {U(threads), kinds[k], modes[m], Fmt(Median(wall[k][m]), "%.0f"),
             Fmt(Median(cpu[k][m]), "%.0f"), Fmt(Median(work[k][m]), "%.0f"),
             Fmt(Median(wall[k][m]) / plain_wall, "%.3f"),
             Fmt(Median(cpu[k][m]) / plain_cpu, "%.3f"),
             Fmt(Median(work[k][m]) / plain_work, "%.3f"),
             Fmt(Median(switches[k][m]), "%.1f")});
      }
    }
    for (size_t m = 0; m < modes.size(); ++m) {
      PrintFilterLine(modes[m], dbs[m]->fdb());
    }
    if (errors.load() != 0) {
      fprintf(stderr, "op_costs: %" PRIu64 " wrong answers\n", errors.load());
      return 1;
    }
  }
  PrintTables({&summary});
  return 0;
}

// ---------------------------------------------------------------- batch
// latency bench
//
// --bench=batch_latency: one fresh DB per mode (plain RocksDB and FilteredDB,
// --batch_modes) filled with --num keys; then --reps repetitions, each
// running, per mode (order rotating per repetition): --batch_writers
// single-key writer threads flat out (the writers bench's churn: Put a new
// key, Delete the oldest live key of the thread) and meanwhile, on the main
// thread, --batches WriteBatches of --batch_ops operations (half Puts of
// new keys, half Deletes of the keys put two batches before), one every
// --batch_interval_us, then --exclusive_ops DeleteRange calls (over an
// empty key range: only the wait and the plan) and, FilteredDB only, as many
// WaitForDeleteChecks and PersistFilterSnapshots. Every operation's latency
// is measured; reported per repetition and mode: p50 / p99 / max of the
// batches and of each other operation, the writers' throughput meanwhile,
// then the medians over repetitions and the ratio of FilteredDB to plain of
// the batch figures (a batch waits only for the single-key writes in
// flight, whatever the number of writers).

constexpr uint64_t kBatchKeyBase = uint64_t{1} << 61;  // batch keys' indexes

struct OpLatencies {
  std::vector<uint64_t> batch, delete_range, wait_checks, persist;
};

struct Spread {
  double p50 = 0, p99 = 0, max = 0;  // microseconds
};

Spread SpreadOf(std::vector<uint64_t> ns) {
  Spread s;
  if (ns.empty()) return s;
  const Percentiles p = Summarize(&ns);  // sorts
  s.p50 = p.p50 / 1e3;
  s.p99 = p.p99 / 1e3;
  s.max = double(ns.back()) / 1e3;
  return s;
}

// Times one call in nanoseconds; exits on a failed Status.
template <typename Fn>
void Timed(std::vector<uint64_t>* out, const char* what, Fn&& fn) {
  const auto start = Clock::now();
  Check(fn(), what);
  out->push_back(NanosSince(start));
}

// One repetition of one mode; `next_batch` numbers the batches of the DB.
OpLatencies BatchRound(WriterDb* d, uint64_t* next_batch,
                       uint64_t* writer_writes, double* seconds) {
  OpLatencies lat;
  std::atomic<bool> stop{false};
  const auto start = Clock::now();
  std::thread writers([&] {
    *writer_writes = d->ChurnWhile([&stop](uint64_t) { return !stop.load(); });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // warm up
  const uint64_t half = std::max<uint64_t>(1, FLAGS_batch_ops / 2);
  auto batch_key = [half](uint64_t b, uint64_t k) {
    return MakeKey(kBatchKeyBase + b * half + k);
  };
  for (uint64_t n = 0; n < FLAGS_batches; ++n) {
    const uint64_t b = (*next_batch)++;
    ROCKSDB_NAMESPACE::WriteBatch batch;
    for (uint64_t k = 0; k < half; ++k) {
      Check(batch.Put(batch_key(b, k), ValueOf(b * half + k)), "batch put");
      if (b >= 2) Check(batch.Delete(batch_key(b - 2, k)), "batch delete");
    }
    Timed(&lat.batch, "batch",
          [&] { return d->db()->Write(WriteOptions(), &batch); });
    std::this_thread::sleep_for(
        std::chrono::microseconds(FLAGS_batch_interval_us));
  }
  for (uint64_t n = 0; n < FLAGS_exclusive_ops; ++n) {
    // An empty range (no key starts with "zz"): the wait and the plan only.
    Timed(&lat.delete_range, "delete range", [&] {
      return d->db()->DeleteRange(WriteOptions(),
                                  d->db()->DefaultColumnFamily(), "zz0", "zz1");
    });
    if (d->fdb() != nullptr) {
      Timed(&lat.wait_checks, "wait for checks", [&] {
        d->fdb()->WaitForDeleteChecks();
        return Status::OK();
      });
      Timed(&lat.persist, "persist",
            [&] { return d->fdb()->PersistFilterSnapshots(); });
    }
    std::this_thread::sleep_for(
        std::chrono::microseconds(FLAGS_batch_interval_us));
  }
  stop = true;
  writers.join();
  *seconds = Seconds(start, Clock::now());
  return lat;
}

int RunBatchLatency() {
  const std::vector<std::string> modes = SplitList(FLAGS_batch_modes);
  if (modes.empty() || modes.front() != "plain") {
    fprintf(stderr, "--batch_modes must start with plain\n");
    return 1;
  }
  printf("churn_bench --bench=batch_latency: N=%" PRIu64 " live keys, %" PRIu64
         " single-key writers flat out, %" PRIu64 " batches of %" PRIu64
         " ops every %" PRIu64 " us, %" PRIu64
         " of each other exclusive op, %" PRIu64 " repetitions, value %" PRIu64
         " B\n",
         FLAGS_num, FLAGS_batch_writers, FLAGS_batches, FLAGS_batch_ops,
         FLAGS_batch_interval_us, FLAGS_exclusive_ops, FLAGS_reps,
         FLAGS_value_size);
  std::vector<std::unique_ptr<WriterDb>> dbs;
  for (const auto& m : modes) {
    dbs.push_back(std::make_unique<WriterDb>(m, FLAGS_batch_writers,
                                             FLAGS_db + "/batch_" + m,
                                             FLAGS_db + "/batch_snap_" + m));
  }
  fprintf(stderr, "[batch latency] fill\n");
  for (auto& d : dbs) d->Fill(FLAGS_num);
  for (auto& d : dbs) d->WaitForCompactions();
  Table reps("batch_latency_reps",
             {"rep", "mode", "batch_p50_us", "batch_p99_us", "batch_max_us",
              "delete_range_p50_us", "delete_range_max_us",
              "wait_checks_max_us", "persist_max_us", "writer_writes_per_sec"});
  // Per mode: per-repetition figures, and every batch latency pooled.
  std::vector<std::vector<Spread>> batch(modes.size());
  std::vector<std::vector<uint64_t>> pooled(modes.size());
  std::vector<std::vector<double>> range_max(modes.size()),
      wait_max(modes.size()), persist_max(modes.size()), wps(modes.size());
  std::vector<uint64_t> next_batch(modes.size(), 0);
  for (uint64_t r = 0; r < FLAGS_reps; ++r) {
    for (size_t k = 0; k < modes.size(); ++k) {
      const size_t m = (k + r) % modes.size();  // rotating order
      uint64_t writes = 0;
      double secs = 0;
      const OpLatencies lat =
          BatchRound(dbs[m].get(), &next_batch[m], &writes, &secs);
      const Spread b = SpreadOf(lat.batch);
      const Spread dr = SpreadOf(lat.delete_range);
      const Spread wc = SpreadOf(lat.wait_checks);
      const Spread pe = SpreadOf(lat.persist);
      batch[m].push_back(b);
      pooled[m].insert(pooled[m].end(), lat.batch.begin(), lat.batch.end());
      range_max[m].push_back(dr.max);
      wait_max[m].push_back(wc.max);
      persist_max[m].push_back(pe.max);
      wps[m].push_back(double(writes) / secs);
      reps.Add({U(r), modes[m], Fmt(b.p50, "%.0f"), Fmt(b.p99, "%.0f"),
                Fmt(b.max, "%.0f"), Fmt(dr.p50, "%.0f"), Fmt(dr.max, "%.0f"),
                Fmt(wc.max, "%.0f"), Fmt(pe.max, "%.0f"),
                Fmt(wps[m].back(), "%.0f")});
      fprintf(stderr,
              "[batch latency] rep %" PRIu64
              " %s: batches p50 %.0f p99 %.0f max %.0f us\n",
              r, modes[m].c_str(), b.p50, b.p99, b.max);
    }
  }
  Table summary("batch_latency_summary",
                {"mode", "median_batch_p50_us", "median_batch_p99_us",
                 "median_batch_max_us", "pooled_batch_p99_us", "p50_vs_plain",
                 "p99_vs_plain", "max_vs_plain", "median_delete_range_max_us",
                 "median_wait_checks_max_us", "median_persist_max_us",
                 "median_writer_writes_per_sec"});
  auto median_of = [](const std::vector<Spread>& v, double Spread::*field) {
    std::vector<double> x;
    for (const Spread& s : v) x.push_back(s.*field);
    return Median(x);
  };
  const double plain_p50 = median_of(batch[0], &Spread::p50);
  const double plain_p99 = median_of(batch[0], &Spread::p99);
  const double plain_max = median_of(batch[0], &Spread::max);
  for (size_t m = 0; m < modes.size(); ++m) {
    const double p50 = median_of(batch[m], &Spread::p50);
    const double p99 = median_of(batch[m], &Spread::p99);
    const double max = median_of(batch[m], &Spread::max);
    summary.Add(
        {modes[m], Fmt(p50, "%.0f"), Fmt(p99, "%.0f"), Fmt(max, "%.0f"),
         Fmt(SpreadOf(pooled[m]).p99, "%.0f"), Fmt(p50 / plain_p50, "%.2f"),
         Fmt(p99 / plain_p99, "%.2f"), Fmt(max / plain_max, "%.2f"),
         Fmt(Median(range_max[m]), "%.0f"), Fmt(Median(wait_max[m]), "%.0f"),
         Fmt(Median(persist_max[m]), "%.0f"), Fmt(Median(wps[m]), "%.0f")});
  }
  PrintTables({&reps, &summary});
  return 0;
}

// ---------------------------------------------------------------- churn
// bench steps (--bench=churn), in the order main runs them

// The churn bench's settings derived from the flags.
struct ChurnConfig {
  uint64_t n = 0;        // live keys (--num)
  uint64_t churn = 0;    // churn writes (even)
  double bloom_bpk = 0;  // Bloom front filter bits/key
  std::vector<std::string> modes;
};

// Validates the flags and derives the settings; false (with a message on
// stderr) when the flags are out of range.
bool MakeChurnConfig(ChurnConfig* config) {
  config->n = FLAGS_num;
  config->churn =
      (FLAGS_churn_ops ? FLAGS_churn_ops : 10 * config->n) & ~uint64_t{1};
  if (config->n < 100 || FLAGS_checkpoints == 0 ||
      config->churn < 2 * FLAGS_checkpoints) {
    fprintf(stderr,
            "--num must be >= 100, --checkpoints >= 1, --churn_ops >= 2 * "
            "checkpoints\n");
    return false;
  }
  // The cuckoo filter's bits per key for N keys (for a same-memory Bloom).
  double cuckoo_bpk;
  {
    cuckoo::LiveKeyFilterOptions o;
    LiveKeyFilter probe(o, config->n);
    cuckoo_bpk = double(probe.GetStats().table_bytes) * 8 / double(config->n);
  }
  config->bloom_bpk =
      FLAGS_bloom_bits_per_key > 0 ? FLAGS_bloom_bits_per_key : cuckoo_bpk;
  {
    std::stringstream ss(FLAGS_modes);
    std::string m;
    while (std::getline(ss, m, ',')) config->modes.push_back(m);
  }
  return true;
}

void PrintChurnHeader(const ChurnConfig& config) {
  printf("churn_bench: N=%" PRIu64 " live keys, %" PRIu64
         " churn writes, value %" PRIu64 " B, block cache %" PRIu64
         " MiB, memtable %" PRIu64
         " MiB, SST bloom %d bits/key, "
         "cache_index_and_filter_blocks=%d, Bloom front filter %.2f bits/key "
         "rebuilt every %" PRIu64 " writes, seed %" PRIu64 "\n",
         config.n, config.churn, FLAGS_value_size, FLAGS_block_cache_mb,
         FLAGS_write_buffer_mb, FLAGS_sst_bloom_bits,
         int(FLAGS_cache_index_and_filter_blocks), config.bloom_bpk,
         FLAGS_bloom_rebuild_every ? FLAGS_bloom_rebuild_every : config.n,
         FLAGS_seed);
}

// One runner (fresh DB) per mode of --modes; false on an unknown mode.
bool OpenRunners(const ChurnConfig& config,
                 std::vector<std::unique_ptr<ModeRunner>>* runners) {
  for (const std::string& m : config.modes) {
    Kind kind;
    bool unique = false;
    if (m == "plain")
      kind = Kind::kPlain;
    else if (m == "bloom")
      kind = Kind::kBloom;
    else if (m == "cuckoo")
      kind = Kind::kCuckoo;
    else if (m == "cuckoo_unique") {
      kind = Kind::kCuckoo;
      unique = true;
    } else {
      fprintf(stderr, "unknown mode %s\n", m.c_str());
      return false;
    }
    runners->push_back(std::make_unique<ModeRunner>(
        m, kind, unique, config.bloom_bpk, config.n));
  }
  return true;
}

// The fill, then the churn with its checkpoints; all modes advance in
// lockstep, chunk by chunk. Appends every checkpoint to `timeline`.
void RunFillAndChurn(const ChurnConfig& config,
                     const std::vector<std::unique_ptr<ModeRunner>>& runners,
                     std::vector<Checkpoint>* timeline) {
  const uint64_t n = config.n, churn = config.churn;
  const uint64_t chunk = std::max<uint64_t>(1000, n / 20) & ~uint64_t{1};
  for (uint64_t done = 0; done < n; done += chunk) {
    for (auto& r : runners) r->FillChunk(std::min(chunk, n - done));
    fprintf(stderr, "fill %" PRIu64 "/%" PRIu64 "\n", std::min(done + chunk, n),
            n);
  }
  for (auto& r : runners) r->AfterFill(timeline);
  const uint64_t per_checkpoint =
      std::max<uint64_t>(2, churn / FLAGS_checkpoints) & ~uint64_t{1};
  uint64_t writes = 0;
  for (uint64_t cp = 1; cp <= FLAGS_checkpoints; ++cp) {
    const uint64_t target =
        cp == FLAGS_checkpoints ? churn : cp * per_checkpoint;
    while (writes < target) {
      const uint64_t step = std::min(chunk, target - writes);
      for (auto& r : runners) r->ChurnChunk(step);
      writes += step;
    }
    for (auto& r : runners) r->AddCheckpoint(cp, timeline);
    fprintf(stderr, "churn %" PRIu64 "/%" PRIu64 " writes\n", writes, churn);
  }
  if (FLAGS_wait_for_compaction) {
    fprintf(stderr, "waiting for compactions\n");
    for (auto& r : runners) r->WaitForCompactions();
  }
}

// Gets of `keys` in every mode, in lockstep chunks; per mode, the latencies
// go to (*ns)[m] and the summed time to (*seconds)[m].
void LockstepGets(const std::vector<std::string>& keys, bool negative,
                  const std::vector<std::unique_ptr<ModeRunner>>& runners,
                  std::vector<std::vector<uint64_t>>* ns,
                  std::vector<double>* seconds) {
  const size_t get_chunk = 10000;
  for (size_t start = 0; start < keys.size(); start += get_chunk) {
    const std::vector<std::string> part(
        keys.begin() + start,
        keys.begin() + std::min(keys.size(), start + get_chunk));
    for (size_t m = 0; m < runners.size(); ++m)
      runners[m]->Gets(part, negative, &(*ns)[m], &(*seconds)[m]);
  }
}

// The final Gets (the same keys for every mode), then each mode's result.
std::vector<ModeResult> RunFinalGets(
    const std::vector<std::unique_ptr<ModeRunner>>& runners) {
  fprintf(stderr, "%" PRIu64 " negative Gets per mode\n", FLAGS_neg_gets);
  const uint64_t oldest = runners.front()->oldest(),
                 next = runners.front()->next();
  std::mt19937_64 rng(FLAGS_seed * 7 + 1);
  std::vector<std::string> neg_keys, pos_keys;
  for (uint64_t q = 0; q < FLAGS_neg_gets; ++q) {
    neg_keys.push_back(q % 2 == 0 ? MakeKey(rng() % oldest)
                                  : MakeKey(kNeverBase + (uint64_t{2} << 40) +
                                            rng() % (uint64_t{1} << 40)));
  }
  for (uint64_t q = 0; q < FLAGS_neg_gets / 4; ++q) {
    pos_keys.push_back(MakeKey(oldest + rng() % (next - oldest)));
  }
  std::vector<std::vector<uint64_t>> neg_ns(runners.size()),
      pos_ns(runners.size());
  std::vector<double> neg_secs(runners.size()), pos_secs(runners.size());
  LockstepGets(neg_keys, true, runners, &neg_ns, &neg_secs);
  LockstepGets(pos_keys, false, runners, &pos_ns, &pos_secs);
  std::vector<ModeResult> results;
  for (size_t m = 0; m < runners.size(); ++m) {
    ModeRunner& r = *runners[m];
    r.Finish();
    r.result.neg_gets = neg_keys.size();
    r.result.neg_per_sec = double(neg_keys.size()) / neg_secs[m];
    const Percentiles p = Summarize(&neg_ns[m]);
    r.result.neg_p50 = p.p50;
    r.result.neg_p99 = p.p99;
    r.result.pos_p50 = Summarize(&pos_ns[m]).p50;
    results.push_back(r.result);
  }
  return results;
}

void PrintTimeline(const std::vector<Checkpoint>& timeline) {
  Table tl(
      "timeline",
      {"mode", "checkpoint", "writes_done", "live_keys", "fpr_never_inserted",
       "fpr_deleted", "bits_per_live_key", "filter_bytes", "get_live_p50_ns",
       "get_deleted_p50_ns", "get_never_p50_ns", "get_neg_p99_ns", "errors"});
  for (const auto& c : timeline) {
    tl.Add({c.mode, U(c.index), U(c.writes), U(c.live),
            Fmt(c.fpr_never, "%.3e"), Fmt(c.fpr_deleted, "%.3e"),
            Fmt(c.bits_per_key, "%.2f"), U(c.filter_bytes),
            Fmt(c.live_p50, "%.0f"), Fmt(c.deleted_p50, "%.0f"),
            Fmt(c.never_p50, "%.0f"), Fmt(c.neg_p99, "%.0f"), U(c.errors)});
  }
  tl.Print();
  tl.WriteCsv();
}

// The summary table (ratios against the plain mode when it ran).
void PrintSummary(const std::vector<ModeResult>& results, uint64_t n) {
  const ModeResult* plain = nullptr;
  for (const auto& r : results) {
    if (r.name == "plain") plain = &r;
  }
  Table sum("summary", {"mode",
                        "fill_seconds",
                        "churn_writes",
                        "churn_seconds",
                        "writes_per_sec",
                        "write_ratio_vs_plain",
                        "maybe_checks",
                        "maybe_checks_per_write",
                        "neg_gets",
                        "neg_gets_per_sec",
                        "neg_get_p50_ns",
                        "neg_get_p99_ns",
                        "neg_speedup_vs_plain",
                        "pos_get_p50_ns",
                        "fpr_after_fill",
                        "fpr_after_churn",
                        "fpr_change_pct",
                        "fpr_max",
                        "bits_per_live_key",
                        "filter_bytes",
                        "rebuilds",
                        "rebuild_seconds",
                        "sst_bytes",
                        "errors"});
  for (const auto& r : results) {
    const double wps = double(r.churn_writes) / r.churn_seconds;
    const double plain_wps =
        plain ? double(plain->churn_writes) / plain->churn_seconds : 0;
    sum.Add({r.name,
             Fmt(r.fill_seconds, "%.2f"),
             U(r.churn_writes),
             Fmt(r.churn_seconds, "%.2f"),
             Fmt(wps, "%.0f"),
             plain ? Fmt(wps / plain_wps, "%.3f") : "",
             U(r.maybe_checks),
             Fmt(double(r.maybe_checks) / double(r.churn_writes + n), "%.3f"),
             U(r.neg_gets),
             Fmt(r.neg_per_sec, "%.0f"),
             Fmt(r.neg_p50, "%.0f"),
             Fmt(r.neg_p99, "%.0f"),
             plain ? Fmt(r.neg_per_sec / plain->neg_per_sec, "%.2f") : "",
             Fmt(r.pos_p50, "%.0f"),
             Fmt(r.fpr_fill, "%.3e"),
             Fmt(r.fpr_churn, "%.3e"),
             Fmt(100.0 * (r.fpr_churn - r.fpr_fill) / r.fpr_fill, "%.1f"),
             Fmt(r.fpr_max, "%.3e"),
             Fmt(r.bits_per_key, "%.2f"),
             U(r.filter_bytes),
             U(r.rebuilds),
             Fmt(r.rebuild_seconds, "%.2f"),
             U(r.sst_bytes),
             U(r.errors)});
  }
  sum.Print();
  sum.WriteCsv();
}

// Counting Bloom at the cuckoo's final FPR: smallest counters/key (step
// 0.5, optimal k) whose measured FPR after the same churn is <= it.
void PrintCountingBloom(const ChurnConfig& config, const ModeResult& cuckoo) {
  const double target = cuckoo.fpr_churn;
  Table cb("counting_bloom",
           {"counters_per_key", "bits_per_key", "hashes", "fpr_never_inserted",
            "cuckoo_fpr", "cuckoo_bits_per_key", "ratio_bits_vs_cuckoo",
            "selected"});
  const double theory =
      -std::log(std::max(target, 1e-9)) / (std::log(2.0) * std::log(2.0));
  bool found = false;
  for (double c = std::floor(theory) - 1; c <= theory + 12 && !found;
       c += 0.5) {
    const int k = std::max(1, static_cast<int>(std::lround(c * std::log(2.0))));
    fprintf(stderr, "[counting bloom] %.1f counters/key, k=%d\n", c, k);
    const double fpr = CountingBloomFpr(config.n, config.churn, c, k);
    found = fpr <= target;
    cb.Add({Fmt(c, "%.1f"), Fmt(4 * c, "%.1f"), std::to_string(k),
            Fmt(fpr, "%.3e"), Fmt(target, "%.3e"),
            Fmt(cuckoo.bits_per_key, "%.2f"),
            Fmt(4 * c / cuckoo.bits_per_key, "%.2f"), found ? "1" : "0"});
  }
  cb.Print();
  cb.WriteCsv();
  printf(
      "\ncounting Bloom (4-bit counters) at the cuckoo's FPR %.3e: theory "
      "%.1f bits/key "
      "(4 x %.2f counters), cuckoo %.2f bits/key: ratio %.2f (theory)\n",
      target, 4 * theory, theory, cuckoo.bits_per_key,
      4 * theory / cuckoo.bits_per_key);
}

// --bench=churn: the sliding-window report described at the top.
int RunChurn() {
  ChurnConfig config;
  if (!MakeChurnConfig(&config)) return 1;
  PrintChurnHeader(config);
  std::vector<std::unique_ptr<ModeRunner>> runners;
  if (!OpenRunners(config, &runners)) return 1;
  std::vector<Checkpoint> timeline;
  RunFillAndChurn(config, runners, &timeline);
  const std::vector<ModeResult> results = RunFinalGets(runners);
  runners.clear();

  PrintTimeline(timeline);
  PrintSummary(results, config.n);
  for (const auto& r : results) {
    if (r.name.rfind("cuckoo", 0) == 0) {
      PrintCountingBloom(config, r);
      break;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cuckoo_bench::ParseFlags(
      &argc, &argv,
      "churn workload: plain RocksDB vs Bloom front filter vs cuckoo live-key "
      "filter",
      __FILE__);
  if (FLAGS_bench == "writers") return RunWriters();
  if (FLAGS_bench == "batch_latency") return RunBatchLatency();
  if (FLAGS_bench == "op_costs") return RunOpCosts();
  if (FLAGS_bench != "churn") {
    fprintf(stderr,
            "--bench must be churn, writers, batch_latency or op_costs\n");
    return 1;
  }
  return RunChurn();
}
