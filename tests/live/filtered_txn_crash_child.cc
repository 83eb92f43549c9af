// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Test helper process for the kill test (filtered_txn_kill_test.cc): opens
// a FilteredTransactionDB and runs random transactions until it is killed.
//
//   live_txn_crash_child <db> <snapshot_dir> <seed>
//
// Prints "ready" once open. Transactions of 1-10 operations (Put, Delete,
// Merge) on keys Key(0..4999) from 2 threads: most commit, some roll back,
// some are prepared (named) and then committed, rolled back, or left
// prepared (kept open, up to 20 at a time, so that a kill finds prepared
// transactions); non-transactional writes and batches; now and then a
// filter snapshot (PersistFilterSnapshots) or a flush. Never closes: the
// parent SIGKILLs it.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "filtered_txn_test_util.h"
#include "rocksdb/utilities/transaction.h"

#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_options() {
  return "report_thread_leaks=0";
}
#endif

namespace {

using rocksdb_cuckoo::test::Key;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::Transaction;
using ROCKSDB_NAMESPACE::TransactionOptions;
using ROCKSDB_NAMESPACE::WriteBatch;
using ROCKSDB_NAMESPACE::WriteOptions;

constexpr int kKeys = 5000;

void Die(const char* what, const Status& s) {
  fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  _exit(1);
}

void Run(rocksdb_cuckoo::FilteredTransactionDB* db, uint32_t seed, int thread) {
  std::mt19937 rng(seed * 7 + thread);
  std::vector<std::unique_ptr<Transaction>> left_prepared;
  uint64_t serial = 0;
  for (;;) {
    const uint32_t r = rng() % 100;
    const std::string value = "s" + std::to_string(seed) + "t" +
                              std::to_string(thread) + "_" +
                              std::to_string(++serial);
    if (r < 10) {
      WriteBatch b;
      for (int i = 0; i < 1 + static_cast<int>(rng() % 5); ++i) {
        const std::string key = Key(static_cast<int>(rng() % kKeys));
        if (rng() % 2 == 0) {
          b.Put(key, value);
        } else {
          b.Delete(key);
        }
      }
      Status s = db->Write(WriteOptions(), &b);
      if (!s.ok() && !s.IsTimedOut() && !s.IsBusy()) Die("write", s);
      continue;
    }
    if (r < 12 && thread == 0) {
      // IOError: the DB state digest can fail while a flush deletes a WAL
      // file (a FilteredDB limitation, reported; not a transaction matter).
      Status s = db->PersistFilterSnapshots();
      if (!s.ok() && !s.IsBusy() && !s.IsIOError()) Die("persist", s);
      continue;
    }
    if (r < 13 && thread == 1) {
      Status s = db->Flush(ROCKSDB_NAMESPACE::FlushOptions());
      if (!s.ok()) Die("flush", s);
      continue;
    }
    TransactionOptions o;
    o.lock_timeout = 50;
    std::unique_ptr<Transaction> txn(db->BeginTransaction(WriteOptions(), o));
    const bool two_phase = rng() % 4 == 0;
    if (two_phase) {
      Status s =
          txn->SetName("s" + std::to_string(seed) + "t" +
                       std::to_string(thread) + "x" + std::to_string(serial));
      if (!s.ok()) Die("name", s);
    }
    bool ok = true;
    const int ops = 1 + static_cast<int>(rng() % 10);
    for (int i = 0; i < ops && ok; ++i) {
      const std::string key = Key(static_cast<int>(rng() % kKeys));
      const uint32_t op = rng() % 10;
      Status s = op < 5   ? txn->Put(key, value)
                 : op < 9 ? txn->Delete(key)
                          : txn->Merge(key, "+");
      if (!s.ok()) {
        if (!s.IsTimedOut() && !s.IsBusy()) Die("op", s);
        ok = false;
      }
    }
    if (!ok || rng() % 10 == 0) {
      txn->Rollback().PermitUncheckedError();
      continue;
    }
    if (two_phase) {
      Status s = txn->Prepare();
      if (!s.ok()) Die("prepare", s);
      const uint32_t what = rng() % 4;
      if (what == 0 && left_prepared.size() < 10) {
        // Left prepared (it keeps its locks): resolved after the kill by
        // the parent, or here later.
        left_prepared.push_back(std::move(txn));
        continue;
      }
      if (what == 1) {
        s = txn->Rollback();
        if (!s.ok()) Die("prepared rollback", s);
        continue;
      }
    }
    Status s = txn->Commit();
    if (!s.ok()) Die("commit", s);
    if (!left_prepared.empty() && rng() % 20 == 0) {
      // Resolve an old prepared one.
      s = rng() % 2 == 0 ? left_prepared.back()->Commit()
                         : left_prepared.back()->Rollback();
      if (!s.ok()) Die("resolve", s);
      left_prepared.pop_back();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s db snapshot_dir seed\n", argv[0]);
    return 1;
  }
  rocksdb_cuckoo::FilteredDBOptions fopts =
      rocksdb_cuckoo::test::SmallFilterOptions(1024);
  fopts.snapshot_dir = argv[2];
  const uint32_t seed = static_cast<uint32_t>(atoi(argv[3]));
  fopts.background_open = seed % 2 == 0;
  std::unique_ptr<rocksdb_cuckoo::FilteredTransactionDB> db;
  ROCKSDB_NAMESPACE::TransactionDBOptions txn_options;
  txn_options.default_lock_timeout = 50;
  Status s = rocksdb_cuckoo::test::OpenTxnDB(argv[1], fopts, &db, txn_options);
  if (!s.ok()) Die("open", s);
  printf("ready\n");
  fflush(stdout);
  std::thread other([&] { Run(db.get(), seed, 1); });
  Run(db.get(), seed, 0);
  other.join();
  return 0;
}
