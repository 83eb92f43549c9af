// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// txn_bench: FilteredTransactionDB (and FilteredOptimisticTransactionDB)
// against plain RocksDB TransactionDB (OptimisticTransactionDB), side by side
// in one process.
//
// --bench=commits (default): commit throughput. For each T in --threads, one
//   fresh DB per mode of --modes (plain: TransactionDB, cuckoo:
//   FilteredTransactionDB; occ_plain, occ_cuckoo: the optimistic pair;
//   batch_plain, batch_cuckoo: the same operations as one WriteBatch per
//   "transaction" through DB::Write and FilteredDB::Write, what the
//   transaction layer adds) is filled with --num keys; then --reps repetitions,
//   each running
//   --rep_txns transactions per mode with T threads, the modes one after the
//   other in an order that rotates per repetition. A transaction has
//   --min_ops..--max_ops operations (uniform), each a Put of a new key or a
//   Delete of a live key (the oldest of the thread's own sliding window),
//   50% each, then Commit; thread t owns the key indexes j * T + t, so
//   transactions never conflict. Transaction objects are reused
//   (BeginTransaction's old_txn), as applications that care do. Reported:
//   transactions/s per repetition and mode, the ratio to the first mode
//   (plain or occ_plain) of each repetition, medians and range, and the
//   process CPU time per transaction (every thread: writers, the deferred
//   delete checks, flushes; compactions settle between modes, untimed) with
//   its ratio (the first mode's CPU over this mode's: the steadier figure
//   on a shared machine).
//   Every filtered repetition ends with WaitForDeleteChecks, so any deferred
//   work is counted. --recent_keys and --unchecked_delete_ratio set those
//   FilteredDBOptions of the filtered modes. Then a sample of live and deleted
//   keys is checked through every DB (errors must be 0).
//
// --bench=neg: negative Transaction::Get at scale. A base DB of --neg_keys
//   keys (default 16M) is built as scale_bench builds its bases (random Puts
//   in batches of 100 without WAL, 16-hex-digit keys, --value_size bytes,
//   flush, compactions settle: a multi-level LSM), kept in --db_dir and
//   reused by later runs with the same parameters (its filter snapshot is
//   rewritten when this build does not load it). Two clones (SST files
//   hard-linked) are opened: a plain TransactionDB and a
//   FilteredTransactionDB (its filter built from the DB, or loaded from the
//   base's snapshot), both with a --block_cache_mb (8 MiB) block cache and a
//   --sst_bloom_bits Bloom filter. Then --neg_reps repetitions of
//   --neg_gets Gets of never-written keys inside transactions (txn->Get, one
//   transaction per 100 Gets), in chunks of 10000 alternating which DB goes
//   first, and the same through DB::Get for reference: Gets/s and the
//   speedup, from wall time and from the thread's CPU time, medians over
//   the repetitions.
//
// Note: Debian's librocksdb is built with assertions; compare the ratios of
// one run, not absolute figures.
#include <gflags/gflags.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "db_bench_util.h"
#include "open_db.h"  // tests/
#include "rocksdb/cache.h"
#include "rocksdb/db.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/optimistic_transaction_db.h"
#include "rocksdb/utilities/transaction.h"
#include "rocksdb/utilities/transaction_db.h"
#include "rocksdb/write_batch.h"
#include "rocksdb_cuckoo/filtered_transaction_db.h"

DEFINE_string(bench, "commits", "commits or neg (see the file comment)");
DEFINE_string(db, "/tmp/cuckoo_txn_bench", "directory of the commits DBs");
DEFINE_string(modes, "plain,cuckoo",
              "commits bench: plain, cuckoo, occ_plain, occ_cuckoo, "
              "batch_plain, batch_cuckoo (the first is the reference of the "
              "ratios)");
DEFINE_string(threads, "1,4", "commits bench: writer thread counts");
DEFINE_uint64(num, 200000, "commits bench: live keys");
DEFINE_uint64(rep_txns, 40000,
              "commits bench: transactions per repetition and mode");
DEFINE_uint64(reps, 7, "commits bench: repetitions (medians reported)");
DEFINE_uint64(min_ops, 1, "commits bench: operations per transaction, min");
DEFINE_uint64(max_ops, 10, "commits bench: operations per transaction, max");
DEFINE_uint64(value_size, 64, "value bytes");
DEFINE_uint64(block_cache_mb, 8, "block cache (LRU) MiB per DB");
DEFINE_int32(sst_bloom_bits, 10, "SST Bloom bits per key (0: none)");
DEFINE_uint64(write_buffer_mb, 16, "memtable MiB (commits bench)");
DEFINE_uint64(seed, 42, "key seed");
DEFINE_int64(recent_keys, -1,
             "commits bench: FilteredDBOptions::recent_keys of the filtered "
             "modes (-1: the default)");
DEFINE_double(unchecked_delete_ratio, 0,
              "commits bench: FilteredDBOptions::unchecked_delete_ratio of "
              "the filtered modes");
DEFINE_uint64(neg_keys, 16000000, "neg bench: keys of the base DB");
DEFINE_string(db_dir, "/tmp/cuckoo_txn_bench_base",
              "neg bench: where the base DB is kept (and reused)");
DEFINE_uint64(neg_gets, 200000,
              "neg bench: Gets of absent keys per DB and repetition");
DEFINE_uint64(neg_reps, 5, "neg bench: repetitions (medians reported)");

namespace {

namespace fs = std::filesystem;
using cuckoo_bench::Clock;
using cuckoo_bench::Median;
using cuckoo_bench::Seconds;
using cuckoo_bench::SplitList;
using rocksdb_cuckoo::FilteredDB;
using rocksdb_cuckoo::FilteredDBOptions;
using rocksdb_cuckoo::FilteredOptimisticTransactionDB;
using rocksdb_cuckoo::FilteredTransactionDB;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::OptimisticTransactionDB;
using ROCKSDB_NAMESPACE::OptimisticTransactionOptions;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::Transaction;
using ROCKSDB_NAMESPACE::TransactionDB;
using ROCKSDB_NAMESPACE::TransactionDBOptions;
using ROCKSDB_NAMESPACE::TransactionOptions;
using ROCKSDB_NAMESPACE::WriteOptions;

// Indexes of keys never written (absent in every DB).
constexpr uint64_t kAbsentBase = uint64_t{1} << 62;

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

void Check(const Status& s, const std::string& what) {
  if (!s.ok()) {
    fprintf(stderr, "%s: %s\n", what.c_str(), s.ToString().c_str());
    exit(1);
  }
}

std::string MakeKey(uint64_t i) { return cuckoo_bench::MakeKey(i, FLAGS_seed); }
Slice ValueOf(uint64_t i) {
  const std::string_view v = cuckoo_bench::ValueOf(i, FLAGS_value_size);
  return Slice(v.data(), v.size());
}

Options BaseOptions(uint64_t write_buffer) {
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = write_buffer;
  o.max_background_jobs = 2;
  ROCKSDB_NAMESPACE::BlockBasedTableOptions t;
  t.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(FLAGS_block_cache_mb << 20);
  if (FLAGS_sst_bloom_bits > 0) {
    t.filter_policy.reset(
        ROCKSDB_NAMESPACE::NewBloomFilterPolicy(FLAGS_sst_bloom_bits));
  }
  o.table_factory.reset(ROCKSDB_NAMESPACE::NewBlockBasedTableFactory(t));
  return o;
}

// ---------------------------------------------------------------- commits

// One DB of the commits bench.
class TxnDb {
 public:
  TxnDb(const std::string& mode, uint64_t threads)
      : mode_(mode),
        threads_(threads),
        next_(threads, 0),
        oldest_(threads, 0),
        txns_(threads, nullptr),
        batches_(threads) {
    path_ = FLAGS_db + "/" + mode + "_" + std::to_string(threads);
    fs::remove_all(path_);
    fs::create_directories(FLAGS_db);
    const Options options = BaseOptions(FLAGS_write_buffer_mb << 20);
    FilteredDBOptions fopts;
    fopts.filter.initial_capacity = FLAGS_num;
    fopts.persist_on_close = false;
    if (FLAGS_recent_keys >= 0) fopts.recent_keys = FLAGS_recent_keys;
    fopts.unchecked_delete_ratio = FLAGS_unchecked_delete_ratio;
    if (mode == "plain") {
      TransactionDB* raw = nullptr;
      Check(TransactionDB::Open(options, TransactionDBOptions(), path_, &raw),
            "open " + path_);
      pes_.reset(raw);
      db_ = raw;
    } else if (mode == "cuckoo") {
      Check(FilteredTransactionDB::Open(options, TransactionDBOptions(), path_,
                                        fopts, &fpes_),
            "open " + path_);
      db_ = fpes_.get();
    } else if (mode == "occ_plain") {
      OptimisticTransactionDB* raw = nullptr;
      Check(OptimisticTransactionDB::Open(options, path_, &raw),
            "open " + path_);
      occ_.reset(raw);
      db_ = raw;
    } else if (mode == "occ_cuckoo") {
      Check(FilteredOptimisticTransactionDB::Open(
                options, ROCKSDB_NAMESPACE::OptimisticTransactionDBOptions(),
                path_, fopts, &focc_),
            "open " + path_);
      db_ = focc_.get();
    } else if (mode == "batch_plain") {
      Check(cuckoo_test::OpenDB(options, path_, &plain_db_), "open " + path_);
      db_ = plain_db_.get();
    } else if (mode == "batch_cuckoo") {
      Check(FilteredDB::Open(options, path_, fopts, &fdb_), "open " + path_);
      db_ = fdb_.get();
    } else {
      fprintf(stderr, "unknown mode %s\n", mode.c_str());
      exit(1);
    }
  }
  ~TxnDb() {
    for (Transaction* t : txns_) delete t;
    fpes_.reset();
    pes_.reset();
    focc_.reset();
    occ_.reset();
    fdb_.reset();
    plain_db_.reset();
    fs::remove_all(path_);
  }

  const std::string& mode() const { return mode_; }
  DB* db() const { return db_; }
  uint64_t Index(uint64_t t, uint64_t j) const { return j * threads_ + t; }

  void Fill(uint64_t n) {
    ROCKSDB_NAMESPACE::WriteBatch batch;
    const uint64_t per_thread = n / threads_;
    for (uint64_t j = 0; j < per_thread; ++j) {
      for (uint64_t t = 0; t < threads_; ++t) {
        const uint64_t i = Index(t, next_[t]++);
        Check(batch.Put(MakeKey(i), ValueOf(i)), "fill put");
        if (batch.Count() == 100) {
          Check(db_->Write(WriteOptions(), &batch), "fill write");
          batch.Clear();
        }
      }
    }
    if (batch.Count() > 0) Check(db_->Write(WriteOptions(), &batch), "fill");
    cuckoo_bench::WaitForBackgroundJobs(db_);
  }

  // `txns` transactions split over the threads; returns seconds (and the
  // process CPU seconds in *cpu).
  double Run(uint64_t txns, uint64_t rep, double* cpu) {
    const uint64_t per_thread = txns / threads_;
    const double cpu_start = ProcessCpuSeconds();
    const auto start = Clock::now();
    std::vector<std::thread> workers;
    for (uint64_t t = 0; t < threads_; ++t) {
      workers.emplace_back([this, t, per_thread, rep] {
        std::mt19937_64 rng(FLAGS_seed * 1000003 + rep * 101 + t);
        for (uint64_t x = 0; x < per_thread; ++x) OneTxn(t, &rng);
      });
    }
    for (auto& w : workers) w.join();
    if (fpes_ != nullptr) fpes_->WaitForDeleteChecks();
    if (focc_ != nullptr) focc_->WaitForDeleteChecks();
    if (fdb_ != nullptr) fdb_->WaitForDeleteChecks();
    const double secs = Seconds(start, Clock::now());
    *cpu = ProcessCpuSeconds() - cpu_start;
    // Untimed: the flushes and compactions this run left settle, so that
    // the next mode does not pay for them.
    cuckoo_bench::WaitForBackgroundJobs(db_);
    return secs;
  }

  // The filter's work so far (filtered modes; empty for the plain ones):
  // point reads before writes, deferred delete checks, recent-key hits.
  std::string FilterWork() const {
    rocksdb_cuckoo::FilteredDBStats st;
    if (fpes_ != nullptr) {
      Check(fpes_->GetFilterStats(nullptr, &st), "stats");
    } else if (focc_ != nullptr) {
      Check(focc_->GetFilterStats(nullptr, &st), "stats");
    } else if (fdb_ != nullptr) {
      Check(fdb_->GetFilterStats(nullptr, &st), "stats");
    } else {
      return std::string();
    }
    char line[240];
    snprintf(line, sizeof(line),
             "maybe_checks %" PRIu64 ", deferred_checks %" PRIu64
             ", recent_key_hits %" PRIu64 ", unchecked_deletes %" PRIu64
             ", rescans %" PRIu64 ", keys_scanned %" PRIu64,
             st.maybe_checks, st.deferred_checks, st.recent_key_hits,
             st.unchecked_deletes, st.rescans, st.keys_scanned);
    return line;
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

 private:
  void OneTxn(uint64_t t, std::mt19937_64* rng) {
    const uint64_t ops =
        FLAGS_min_ops + (*rng)() % (FLAGS_max_ops - FLAGS_min_ops + 1);
    if (plain_db_ != nullptr || fdb_ != nullptr) {
      // The same operations as one batch.
      ROCKSDB_NAMESPACE::WriteBatch& batch = batches_[t];
      batch.Clear();
      for (uint64_t o = 0; o < ops; ++o) {
        if ((*rng)() % 2 == 0 || oldest_[t] == next_[t]) {
          const uint64_t i = Index(t, next_[t]++);
          Check(batch.Put(MakeKey(i), ValueOf(i)), "batch put");
        } else {
          Check(batch.Delete(MakeKey(Index(t, oldest_[t]++))), "batch delete");
        }
      }
      Check(db_->Write(WriteOptions(), &batch), "batch write");
      return;
    }
    Transaction*& txn = txns_[t];
    if (pes_ != nullptr) {
      txn = pes_->BeginTransaction(WriteOptions(), TransactionOptions(), txn);
    } else if (fpes_ != nullptr) {
      txn = fpes_->BeginTransaction(WriteOptions(), TransactionOptions(), txn);
    } else if (occ_ != nullptr) {
      txn = occ_->BeginTransaction(WriteOptions(),
                                   OptimisticTransactionOptions(), txn);
    } else {
      txn = focc_->BeginTransaction(WriteOptions(),
                                    OptimisticTransactionOptions(), txn);
    }
    for (uint64_t o = 0; o < ops; ++o) {
      if ((*rng)() % 2 == 0 || oldest_[t] == next_[t]) {
        const uint64_t i = Index(t, next_[t]++);
        Check(txn->Put(MakeKey(i), ValueOf(i)), "txn put");
      } else {
        Check(txn->Delete(MakeKey(Index(t, oldest_[t]++))), "txn delete");
      }
    }
    Check(txn->Commit(), "commit");
  }

  std::string mode_, path_;
  uint64_t threads_;
  std::vector<uint64_t> next_, oldest_;
  std::vector<Transaction*> txns_;
  std::vector<ROCKSDB_NAMESPACE::WriteBatch> batches_;
  std::unique_ptr<TransactionDB> pes_;
  std::unique_ptr<FilteredTransactionDB> fpes_;
  std::unique_ptr<OptimisticTransactionDB> occ_;
  std::unique_ptr<FilteredOptimisticTransactionDB> focc_;
  std::unique_ptr<DB> plain_db_;
  std::unique_ptr<FilteredDB> fdb_;
  DB* db_ = nullptr;
};

int RunCommits() {
  const std::vector<std::string> modes = SplitList(FLAGS_modes);
  if (modes.empty() || FLAGS_min_ops == 0 || FLAGS_max_ops < FLAGS_min_ops) {
    fprintf(stderr, "bad --modes or --min_ops/--max_ops\n");
    return 1;
  }
  printf("txn_bench --bench=commits: N=%" PRIu64 " live keys, %" PRIu64
         " transactions of %" PRIu64 "-%" PRIu64
         " operations (50%% Put of a new key, 50%% Delete of a live key) per "
         "repetition and mode, %" PRIu64 " repetitions, value %" PRIu64
         " B, memtable %" PRIu64 " MiB, block cache %" PRIu64
         " MiB, SST Bloom %d bits/key; filtered modes: recent_keys %s, "
         "unchecked_delete_ratio %g\n",
         FLAGS_num, FLAGS_rep_txns, FLAGS_min_ops, FLAGS_max_ops, FLAGS_reps,
         FLAGS_value_size, FLAGS_write_buffer_mb, FLAGS_block_cache_mb,
         FLAGS_sst_bloom_bits,
         FLAGS_recent_keys < 0 ? "default"
                               : std::to_string(FLAGS_recent_keys).c_str(),
         FLAGS_unchecked_delete_ratio);
  printf("%-8s %-4s %-12s %12s %9s %12s\n", "threads", "rep", "mode", "txns/s",
         "ratio", "cpu_us/txn");
  struct Summary {
    uint64_t threads;
    std::string mode;
    double median_tps, median_ratio, lo, hi, median_cpu, median_cpu_ratio;
    uint64_t errors;
  };
  std::vector<Summary> summary;
  for (const std::string& threads_text : SplitList(FLAGS_threads)) {
    const uint64_t threads = std::stoull(threads_text);
    std::vector<std::unique_ptr<TxnDb>> dbs;
    for (const auto& m : modes)
      dbs.push_back(std::make_unique<TxnDb>(m, threads));
    fprintf(stderr, "[%" PRIu64 " threads] fill\n", threads);
    for (auto& d : dbs) d->Fill(FLAGS_num);
    for (auto& d : dbs) cuckoo_bench::WaitForBackgroundJobs(d->db());
    std::vector<std::vector<double>> tps(modes.size()), ratio(modes.size()),
        cpu_us(modes.size()), cpu_ratio(modes.size());
    for (uint64_t r = 0; r < FLAGS_reps; ++r) {
      std::vector<double> secs(modes.size()), cpu(modes.size());
      for (size_t k = 0; k < modes.size(); ++k) {
        const size_t m = (k + r) % modes.size();  // rotating order
        secs[m] = dbs[m]->Run(FLAGS_rep_txns, r, &cpu[m]);
      }
      for (size_t m = 0; m < modes.size(); ++m) {
        tps[m].push_back(double(FLAGS_rep_txns) / secs[m]);
        ratio[m].push_back(tps[m].back() / tps[0].back());
        cpu_us[m].push_back(cpu[m] * 1e6 / double(FLAGS_rep_txns));
        cpu_ratio[m].push_back(cpu_us[0].back() / cpu_us[m].back());
        printf("%-8" PRIu64 " %-4" PRIu64 " %-12s %12.0f %9.3f %12.1f\n",
               threads, r, modes[m].c_str(), tps[m].back(), ratio[m].back(),
               cpu_us[m].back());
      }
      fflush(stdout);
    }
    for (size_t m = 0; m < modes.size(); ++m) {
      const auto [lo, hi] =
          std::minmax_element(ratio[m].begin(), ratio[m].end());
      summary.push_back({threads, modes[m], Median(tps[m]), Median(ratio[m]),
                         *lo, *hi, Median(cpu_us[m]), Median(cpu_ratio[m]),
                         dbs[m]->CheckSample(20000)});
      const std::string work = dbs[m]->FilterWork();
      if (!work.empty()) {
        printf("%-8" PRIu64
               " %-12s filter work (fill and all repetitions): %s\n",
               threads, modes[m].c_str(), work.c_str());
      }
    }
  }
  printf("\nsummary (medians over repetitions; ratio to %s)\n",
         modes[0].c_str());
  printf("%-8s %-12s %12s %9s %9s %9s %12s %9s %7s\n", "threads", "mode",
         "txns/s", "ratio", "min", "max", "cpu_us/txn", "cpu_ratio", "errors");
  uint64_t errors = 0;
  for (const Summary& s : summary) {
    printf("%-8" PRIu64 " %-12s %12.0f %9.3f %9.3f %9.3f %12.1f %9.3f %7" PRIu64
           "\n",
           s.threads, s.mode.c_str(), s.median_tps, s.median_ratio, s.lo, s.hi,
           s.median_cpu, s.median_cpu_ratio, s.errors);
    errors += s.errors;
  }
  return errors == 0 ? 0 : 1;
}

// ---------------------------------------------------------------- neg

// scale_bench's base layout: memtable about 1/32 of the data (1..8 MiB),
// level sizes from it.
uint64_t BuildWriteBuffer(uint64_t n) {
  const uint64_t data = n * (16 + FLAGS_value_size);
  return std::clamp<uint64_t>(data / 32, uint64_t{1} << 20, uint64_t{8} << 20);
}

Options NegOptions(uint64_t n, uint64_t write_buffer) {
  Options o = BaseOptions(write_buffer);
  o.target_file_size_base = BuildWriteBuffer(n);
  o.max_bytes_for_level_base = 8 * BuildWriteBuffer(n);
  return o;
}

// Copies a closed DB directory: SST files as hard links, the rest as bytes
// (not LOCK or the info logs).
void CloneDir(const fs::path& src, const fs::path& dst) {
  fs::create_directories(dst);
  for (const auto& e : fs::directory_iterator(src)) {
    const std::string name = e.path().filename().string();
    if (name == "LOCK" || name.rfind("LOG", 0) == 0) continue;
    const fs::path to = dst / name;
    if (e.is_directory()) {
      CloneDir(e.path(), to);
    } else if (e.path().extension() == ".sst") {
      fs::create_hard_link(e.path(), to);
    } else {
      fs::copy_file(e.path(), to);
    }
  }
}

// Opens the base DB with a FilteredTransactionDB: if its filter snapshot
// (--db_dir/base/snap) did not load (none, or one this build no longer
// reads), the filter is built from the DB and a snapshot written at Close.
void EnsureSnapshot(const std::string& base, uint64_t n) {
  const auto start = Clock::now();
  FilteredDBOptions fopts;
  fopts.snapshot_dir = base + "/snap";
  fopts.background_open = false;
  fopts.persist_on_close = false;
  std::unique_ptr<FilteredTransactionDB> db;
  Check(FilteredTransactionDB::Open(NegOptions(n, FLAGS_write_buffer_mb << 20),
                                    TransactionDBOptions(), base + "/db", fopts,
                                    &db),
        "snapshot open");
  rocksdb_cuckoo::FilteredDBStats stats;
  Check(db->GetFilterStats(nullptr, &stats), "snapshot stats");
  if (!stats.loaded_from_snapshot) {
    fprintf(stderr, "base snapshot not loaded (%s): rewriting it\n",
            stats.snapshot_status.c_str());
    Check(db->PersistFilterSnapshots(), "snapshot persist");
  }
  Check(db->Close(), "snapshot close");
  if (!stats.loaded_from_snapshot) {
    fprintf(stderr, "snapshot rewritten in %.0f s\n",
            Seconds(start, Clock::now()));
  }
}

// The base DB in --db_dir/base (built unless one with the same parameters
// is there), with a filter snapshot in --db_dir/base/snap (EnsureSnapshot).
std::string EnsureBase(uint64_t n) {
  const std::string base = FLAGS_db_dir + "/base";
  const std::string info = base + "/BUILD_INFO";
  const std::string params = "format=1 keys=" + std::to_string(n) +
                             " value_size=" + std::to_string(FLAGS_value_size) +
                             " seed=" + std::to_string(FLAGS_seed) +
                             " bloom=" + std::to_string(FLAGS_sst_bloom_bits);
  {
    std::ifstream in(info);
    std::string line;
    if (std::getline(in, line) && line == params) {
      fprintf(stderr, "reusing the base DB in %s\n", base.c_str());
      EnsureSnapshot(base, n);
      return base;
    }
  }
  fs::remove_all(base);
  fs::create_directories(base);
  fprintf(stderr, "building %" PRIu64 " keys in %s\n", n, base.c_str());
  const auto start = Clock::now();
  {
    std::unique_ptr<DB> db;
    Check(cuckoo_test::OpenDB(NegOptions(n, BuildWriteBuffer(n)), base + "/db",
                              &db),
          "build open");
    WriteOptions wo;
    wo.disableWAL = true;
    ROCKSDB_NAMESPACE::WriteBatch batch;
    for (uint64_t i = 0; i < n; ++i) {
      Check(batch.Put(MakeKey(i), ValueOf(i)), "batch put");
      if (batch.Count() == 100 || i + 1 == n) {
        Check(db->Write(wo, &batch), "build write");
        batch.Clear();
      }
    }
    Check(db->Flush(ROCKSDB_NAMESPACE::FlushOptions()), "build flush");
    cuckoo_bench::WaitForBackgroundJobs(db.get(), 1200);
    Check(db->Close(), "build close");
  }
  EnsureSnapshot(base, n);  // a filter snapshot bound to the base's files
  std::ofstream(info) << params << "\n";
  fprintf(stderr, "built in %.0f s\n", Seconds(start, Clock::now()));
  return base;
}

int RunNeg() {
  const uint64_t n = FLAGS_neg_keys;
  const std::string base = EnsureBase(n);
  const std::string work = FLAGS_db_dir + "/work";
  fs::remove_all(work);
  CloneDir(base, work + "/plain");
  CloneDir(base, work + "/filtered");
  const Options options = NegOptions(n, FLAGS_write_buffer_mb << 20);
  TransactionDB* raw = nullptr;
  Check(TransactionDB::Open(options, TransactionDBOptions(), work + "/plain/db",
                            &raw),
        "plain open");
  std::unique_ptr<TransactionDB> plain(raw);
  FilteredDBOptions fopts;
  fopts.snapshot_dir = work + "/filtered/snap";
  fopts.background_open = false;
  std::unique_ptr<FilteredTransactionDB> filtered;
  const auto open_start = Clock::now();
  Check(FilteredTransactionDB::Open(options, TransactionDBOptions(),
                                    work + "/filtered/db", fopts, &filtered),
        "filtered open");
  filtered->WaitForFilterRebuilds();
  rocksdb_cuckoo::FilteredDBStats stats;
  Check(filtered->GetFilterStats(nullptr, &stats), "stats");
  fprintf(stderr, "filtered open %.1f s (snapshot: %s), %" PRIu64 " keys\n",
          Seconds(open_start, Clock::now()), stats.snapshot_status.c_str(),
          stats.num_keys);
  cuckoo_bench::WaitForBackgroundJobs(plain.get());
  cuckoo_bench::WaitForBackgroundJobs(filtered.get());
  std::string files;
  for (int level = 0; level < plain->NumberLevels(); ++level) {
    std::string v;
    plain->GetProperty("rocksdb.num-files-at-level" + std::to_string(level),
                       &v);
    files += (level ? "/" : "") + v;
  }
  std::mt19937_64 rng(FLAGS_seed + 5);
  TransactionDB* dbs[2] = {plain.get(), filtered.get()};
  uint64_t errors = 0;
  const size_t chunk = 10000;
  PinnableSlice value;
  // Per repetition: Gets/s of [db][read kind], read kind 0 = Transaction::
  // Get, 1 = TransactionDB::Get.
  // cpu_speedup: the same from this thread's CPU time (leaves out the time
  // the thread is descheduled: the steadier figure on a shared machine).
  std::vector<double> rates[2][2], speedup[2], cpu_speedup[2];
  for (uint64_t rep = 0; rep < FLAGS_neg_reps; ++rep) {
    std::vector<std::string> keys;
    for (uint64_t q = 0; q < FLAGS_neg_gets; ++q) {
      keys.push_back(MakeKey(kAbsentBase + (rng() >> 24)));
    }
    double secs[2][2] = {{0, 0}, {0, 0}}, cpu[2][2] = {{0, 0}, {0, 0}};
    for (size_t begin = 0; begin < keys.size(); begin += chunk) {
      const size_t end = std::min(keys.size(), begin + chunk);
      for (int k = 0; k < 2; ++k) {
        const int d = int((begin / chunk + k) % 2);  // alternating first
        Transaction* txn = nullptr;
        auto start = Clock::now();
        double cpu_start = cuckoo_bench::ThreadCpuSeconds();
        for (size_t q = begin; q < end; ++q) {
          if ((q - begin) % 100 == 0) {
            if (txn != nullptr) Check(txn->Commit(), "commit");
            txn = dbs[d]->BeginTransaction(WriteOptions(), TransactionOptions(),
                                           txn);
          }
          value.Reset();
          errors += !txn->Get(ReadOptions(), dbs[d]->DefaultColumnFamily(),
                              keys[q], &value)
                         .IsNotFound();
        }
        Check(txn->Commit(), "commit");
        delete txn;
        secs[d][0] += Seconds(start, Clock::now());
        cpu[d][0] += cuckoo_bench::ThreadCpuSeconds() - cpu_start;
        start = Clock::now();
        cpu_start = cuckoo_bench::ThreadCpuSeconds();
        for (size_t q = begin; q < end; ++q) {
          value.Reset();
          errors += !dbs[d]
                         ->Get(ReadOptions(), dbs[d]->DefaultColumnFamily(),
                               keys[q], &value)
                         .IsNotFound();
        }
        secs[d][1] += Seconds(start, Clock::now());
        cpu[d][1] += cuckoo_bench::ThreadCpuSeconds() - cpu_start;
      }
    }
    for (int d = 0; d < 2; ++d) {
      for (int r = 0; r < 2; ++r) {
        rates[d][r].push_back(double(keys.size()) / secs[d][r]);
      }
    }
    for (int r = 0; r < 2; ++r) {
      speedup[r].push_back(secs[0][r] / secs[1][r]);
      cpu_speedup[r].push_back(cpu[0][r] / cpu[1][r]);
    }
    fprintf(stderr,
            "rep %" PRIu64
            ": Transaction::Get %.2fx (cpu %.2fx), DB::Get %.2fx (cpu "
            "%.2fx)\n",
            rep, speedup[0].back(), cpu_speedup[0].back(), speedup[1].back(),
            cpu_speedup[1].back());
  }
  // No false negative: a sample of written keys.
  std::string v;
  for (uint64_t q = 0; q < 10000; ++q) {
    errors += !filtered->Get(ReadOptions(), MakeKey(rng() % n), &v).ok();
  }
  printf("txn_bench --bench=neg: %" PRIu64
         " keys (files per level %s), "
         "block cache %" PRIu64 " MiB, SST Bloom %d bits/key, %" PRIu64
         " Gets of absent keys per DB and repetition, %" PRIu64
         " repetitions (medians; speedup: median of the per-repetition "
         "ratios, range)\n",
         n, files.c_str(), FLAGS_block_cache_mb, FLAGS_sst_bloom_bits,
         FLAGS_neg_gets, FLAGS_neg_reps);
  printf("%-20s %14s %14s %9s %15s %9s %15s\n", "read", "plain Gets/s",
         "cuckoo Gets/s", "speedup", "range", "cpu", "cpu range");
  const char* names[2] = {"Transaction::Get", "TransactionDB::Get"};
  for (int r = 0; r < 2; ++r) {
    const auto [lo, hi] =
        std::minmax_element(speedup[r].begin(), speedup[r].end());
    const auto [cpu_lo, cpu_hi] =
        std::minmax_element(cpu_speedup[r].begin(), cpu_speedup[r].end());
    printf("%-20s %14.0f %14.0f %9.2f %7.2f-%-7.2f %9.2f %7.2f-%-7.2f\n",
           names[r], Median(rates[0][r]), Median(rates[1][r]),
           Median(speedup[r]), *lo, *hi, Median(cpu_speedup[r]), *cpu_lo,
           *cpu_hi);
  }
  printf("errors %" PRIu64 "\n", errors);
  Check(filtered->Close(), "close");
  filtered.reset();
  plain.reset();
  fs::remove_all(work);
  return errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  cuckoo_bench::ParseFlags(
      &argc, &argv,
      "FilteredTransactionDB against plain TransactionDB: commit throughput "
      "(--bench=commits) and negative Transaction::Get at scale "
      "(--bench=neg)",
      __FILE__);
  if (FLAGS_bench == "commits") return RunCommits();
  if (FLAGS_bench == "neg") return RunNeg();
  fprintf(stderr, "unknown --bench=%s\n", FLAGS_bench.c_str());
  return 1;
}
