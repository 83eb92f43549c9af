// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Four threads run transactions of 1-10 operations against one
// FilteredTransactionDB (or FilteredOptimisticTransactionDB): Put, Delete,
// Merge, GetForUpdate, savepoints, rollbacks, two-phase commits and
// non-transactional writes, on keys of their own and on 8 shared hot keys
// (lock timeouts, deadlocks detected, optimistic conflicts), while the
// filter grows, is rebuilt and persisted. Each thread knows the exact state
// of its own keys and checks every read of them, inside its transactions
// (its own writes) and outside; every thread checks that the "pinned" keys
// of all threads, live from the start and only ever overwritten, are always
// found. At the end every key is read through the filter and at a snapshot
// (which bypasses it), and the filter must hold one fingerprint per live
// key. Runs under TSan (named filtered_db_txn_stress_test for the TSan
// stage). TXN_STRESS_MS=<ms> per mode (default 1500).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "filtered_txn_test_util.h"
#include "rocksdb/utilities/transaction.h"

namespace rocksdb_cuckoo {
namespace {

using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::OptimisticTransactionOptions;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::Transaction;
using ROCKSDB_NAMESPACE::TransactionDBOptions;
using ROCKSDB_NAMESPACE::TransactionOptions;
using ROCKSDB_NAMESPACE::WriteBatch;
using ROCKSDB_NAMESPACE::WriteOptions;
using test::TempDir;

constexpr int kThreads = 4;
constexpr int kOwn = 1500;    // keys per thread
constexpr int kPinned = 100;  // of them, live from the start, never deleted
constexpr int kShared = 8;

std::string OwnKey(int thread, int i) {
  return "t" + std::to_string(thread) + "_" + std::to_string(i);
}
std::string SharedKey(int i) { return "shared" + std::to_string(i); }

struct Counters {
  std::atomic<uint64_t> commits{0}, failed_commits{0}, lock_failures{0},
      deadlocks{0}, rollbacks{0}, prepared{0}, reads{0}, errors{0};
};

class TxnStress : public ::testing::TestWithParam<bool> {
 protected:
  bool optimistic() const { return GetParam(); }

  void SetUp() override {
    FilteredDBOptions fopts = test::SmallFilterOptions(256);
    fopts.snapshot_dir = dir_.Sub("snap");
    if (optimistic()) {
      ASSERT_TRUE(test::OpenOccDB(dir_.Sub("db"), fopts, &occ_).ok());
      db_ = occ_.get();
    } else {
      TransactionDBOptions o;
      o.transaction_lock_timeout = 20;
      o.default_lock_timeout = 20;
      ASSERT_TRUE(test::OpenTxnDB(dir_.Sub("db"), fopts, &pes_, o).ok());
      db_ = pes_.get();
    }
  }

  Transaction* Begin(std::mt19937& rng) {
    if (optimistic()) {
      OptimisticTransactionOptions o;
      o.set_snapshot = rng() % 4 == 0;
      return occ_->BeginTransaction(WriteOptions(), o);
    }
    TransactionOptions o;
    o.set_snapshot = rng() % 4 == 0;
    o.deadlock_detect = rng() % 2 == 0;
    o.lock_timeout = 20;
    return pes_->BeginTransaction(WriteOptions(), o);
  }

  void Fail(const std::string& what) {
    counters_.errors++;
    std::lock_guard<std::mutex> lock(fail_mu_);
    if (failures_.size() < 20) failures_.push_back(what);
  }

  // A read of a pinned key (any thread's): must be found.
  void CheckPinned(std::mt19937& rng, Transaction* txn) {
    const int t = static_cast<int>(rng() % kThreads);
    const std::string key = OwnKey(t, static_cast<int>(rng() % kPinned));
    std::string value;
    Status s = txn != nullptr ? txn->Get(ReadOptions(), key, &value)
                              : db_->Get(ReadOptions(), key, &value);
    counters_.reads++;
    if (!s.ok()) Fail("pinned " + key + ": " + s.ToString());
  }

  void Worker(int thread) {
    std::mt19937 rng(1000 + thread);
    // The committed state of this thread's keys (only this thread writes
    // them). Values are unique per write.
    std::map<std::string, std::string> mine;
    for (int i = 0; i < kPinned; ++i) mine[OwnKey(thread, i)] = "pin";
    uint64_t serial = 0;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(run_ms_);
    while (std::chrono::steady_clock::now() < deadline) {
      if (thread == 0 && rng() % 200 == 0) {
        // FilteredDB machinery under the commits.
        if (rng() % 2 == 0) {
          Status s = optimistic() ? occ_->PersistFilterSnapshots()
                                  : pes_->PersistFilterSnapshots();
          // IOError: the DB state digest fails when a flush deletes a WAL
          // file meanwhile (FilteredDB, not transactions).
          if (!s.ok() && !s.IsBusy() && !s.IsIOError()) {
            Fail("persist " + s.ToString());
          }
        } else {
          Status s = optimistic() ? occ_->RebuildFilter(nullptr)
                                  : pes_->RebuildFilter(nullptr);
          if (!s.ok()) Fail("rebuild " + s.ToString());
        }
      }
      if (rng() % 10 == 0) {
        // Non-transactional write of an own key, or a batch.
        const std::string key = OwnKey(
            thread, kPinned + static_cast<int>(rng() % (kOwn - kPinned)));
        const std::string value = "w" + std::to_string(++serial);
        Status s;
        const bool del = rng() % 2 == 0;
        if (rng() % 2 == 0) {
          s = del ? db_->Delete(WriteOptions(), key)
                  : db_->Put(WriteOptions(), key, value);
        } else {
          WriteBatch b;
          if (del) {
            b.Delete(key);
          } else {
            b.Put(key, value);
          }
          b.Put(SharedKey(static_cast<int>(rng() % kShared)), value);
          s = db_->Write(WriteOptions(), &b);
        }
        if (s.ok()) {
          if (del) {
            mine.erase(key);
          } else {
            mine[key] = value;
          }
        } else if (!s.IsTimedOut() && !s.IsBusy()) {
          Fail("write " + s.ToString());
        }
        continue;
      }
      std::unique_ptr<Transaction> txn(Begin(rng));
      std::map<std::string, std::string> pending = mine;  // with own writes
      const bool two_phase = !optimistic() && rng() % 8 == 0;
      if (two_phase) {
        txn->SetName("x" + std::to_string(thread) + "_" +
                     std::to_string(++serial));
      }
      const int ops = 1 + static_cast<int>(rng() % 10);
      bool ok = true;
      bool savepoint = false;
      std::map<std::string, std::string> at_savepoint;
      for (int op = 0; op < ops && ok; ++op) {
        const uint32_t r = rng() % 100;
        const bool pinned_key = rng() % 8 == 0;
        const std::string key =
            pinned_key
                ? OwnKey(thread, static_cast<int>(rng() % kPinned))
                : OwnKey(thread,
                         kPinned + static_cast<int>(rng() % (kOwn - kPinned)));
        const std::string value = "v" + std::to_string(++serial);
        Status s;
        if (r < 35) {
          s = txn->Put(key, value);
          if (s.ok()) pending[key] = value;
        } else if (r < 55) {
          if (pinned_key) continue;
          s = txn->Delete(key);
          if (s.ok()) pending.erase(key);
        } else if (r < 62) {
          s = txn->Merge(key, "+");
          if (s.ok()) pending[key] += "+";
        } else if (r < 75) {
          // Read of an own key: exact, with the transaction's own writes.
          std::string got;
          s = rng() % 2 == 0 ? txn->Get(ReadOptions(), key, &got)
                             : txn->GetForUpdate(ReadOptions(), key, &got);
          counters_.reads++;
          auto it = pending.find(key);
          if (s.ok() || s.IsNotFound()) {
            if (s.ok() != (it != pending.end()) ||
                (s.ok() && got != it->second)) {
              Fail("own read " + key + ": " + s.ToString() + " '" + got +
                   "' expected " +
                   (it == pending.end() ? "absent" : it->second));
            }
            s = Status::OK();
          }
        } else if (r < 90) {
          // Shared hot key: conflicts.
          const std::string shared =
              SharedKey(static_cast<int>(rng() % kShared));
          std::string got;
          s = txn->GetForUpdate(ReadOptions(), shared, &got);
          if (s.IsNotFound()) s = Status::OK();
          if (s.ok()) {
            s = rng() % 3 == 0 ? txn->Delete(shared) : txn->Put(shared, value);
          }
        } else if (r < 95) {
          CheckPinned(rng, txn.get());
        } else if (!savepoint) {
          txn->SetSavePoint();
          savepoint = true;
          at_savepoint = pending;
        } else {
          s = txn->RollbackToSavePoint();
          if (s.ok()) pending = at_savepoint;
          savepoint = false;
        }
        if (!s.ok()) {
          if (!s.IsTimedOut() && !s.IsBusy() && !s.IsTryAgain()) {
            Fail("op " + s.ToString());
          }
          counters_.lock_failures++;
          if (s.IsDeadlock()) counters_.deadlocks++;
          ok = false;
        }
      }
      Status s;
      if (!ok || rng() % 10 == 0) {
        s = txn->Rollback();
        counters_.rollbacks++;
        if (!s.ok()) Fail("rollback " + s.ToString());
        continue;
      }
      if (two_phase) {
        s = txn->Prepare();
        if (!s.ok()) {
          Fail("prepare " + s.ToString());
          continue;
        }
        counters_.prepared++;
        if (rng() % 4 == 0) {
          s = txn->Rollback();
          if (!s.ok()) Fail("prepared rollback " + s.ToString());
          continue;
        }
      }
      s = txn->Commit();
      if (s.ok()) {
        counters_.commits++;
        mine = std::move(pending);
      } else if (s.IsBusy() || s.IsTryAgain()) {
        counters_.failed_commits++;  // optimistic conflict
      } else {
        Fail("commit " + s.ToString());
      }
      // Outside a transaction: own keys exact, others' pinned keys found.
      for (int i = 0; i < 3; ++i) {
        const std::string key = OwnKey(thread, static_cast<int>(rng() % kOwn));
        std::string got;
        Status rs = db_->Get(ReadOptions(), key, &got);
        counters_.reads++;
        auto it = mine.find(key);
        if (rs.ok() != (it != mine.end()) || (rs.ok() && got != it->second)) {
          Fail("read " + key + ": " + rs.ToString());
        }
        CheckPinned(rng, nullptr);
      }
    }
    std::lock_guard<std::mutex> lock(fail_mu_);
    final_[thread] = std::move(mine);
  }

  TempDir dir_;
  std::unique_ptr<FilteredTransactionDB> pes_;
  std::unique_ptr<FilteredOptimisticTransactionDB> occ_;
  DB* db_ = nullptr;
  int run_ms_ = 1500;
  Counters counters_;
  std::mutex fail_mu_;
  std::vector<std::string> failures_;
  std::map<std::string, std::string> final_[kThreads];
};

TEST_P(TxnStress, FourThreads) {
  if (const char* env = std::getenv("TXN_STRESS_MS")) run_ms_ = std::atoi(env);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPinned; ++i) {
      ASSERT_TRUE(db_->Put(WriteOptions(), OwnKey(t, i), "pin").ok());
    }
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] { Worker(t); });
  }
  for (auto& t : threads) t.join();
  for (const std::string& f : failures_) ADD_FAILURE() << f;
  EXPECT_EQ(counters_.errors.load(), 0u);
  std::printf(
      "commits %llu, failed commits %llu, lock failures %llu (deadlocks "
      "%llu), rollbacks %llu, prepared %llu, reads %llu\n",
      static_cast<unsigned long long>(counters_.commits.load()),
      static_cast<unsigned long long>(counters_.failed_commits.load()),
      static_cast<unsigned long long>(counters_.lock_failures.load()),
      static_cast<unsigned long long>(counters_.deadlocks.load()),
      static_cast<unsigned long long>(counters_.rollbacks.load()),
      static_cast<unsigned long long>(counters_.prepared.load()),
      static_cast<unsigned long long>(counters_.reads.load()));
  EXPECT_GT(counters_.commits.load(), 0u);

  // Every key: through the filter, at a snapshot, and against the threads'
  // own records; the filter exact.
  const cuckoo::LiveKeyFilter* filter = optimistic()
                                            ? occ_->GetLiveKeyFilter(nullptr)
                                            : pes_->GetLiveKeyFilter(nullptr);
  optimistic() ? occ_->WaitForFilterRebuilds() : pes_->WaitForFilterRebuilds();
  uint64_t live = 0;
  auto check = [&](const std::string& key, const std::string* expected) {
    std::string a, b;
    Status sa = db_->Get(ReadOptions(), key, &a);
    Status sb = optimistic() ? test::TruthGet(occ_.get(), key, &b)
                             : test::TruthGet(pes_.get(), key, &b);
    ASSERT_EQ(sa.ok(), sb.ok()) << key;
    if (sb.ok()) {
      ++live;
      ASSERT_EQ(a, b) << key;
      ASSERT_TRUE(filter->MayContain(key)) << key;
    }
    if (expected != nullptr) {
      ASSERT_TRUE(sa.ok()) << key;
      ASSERT_EQ(a, *expected) << key;
    }
  };
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kOwn; ++i) {
      const std::string key = OwnKey(t, i);
      auto it = final_[t].find(key);
      if (it == final_[t].end()) {
        std::string v;
        ASSERT_TRUE(db_->Get(ReadOptions(), key, &v).IsNotFound()) << key;
      }
      ASSERT_NO_FATAL_FAILURE(
          check(key, it == final_[t].end() ? nullptr : &it->second));
    }
  }
  for (int i = 0; i < kShared; ++i) {
    ASSERT_NO_FATAL_FAILURE(check(SharedKey(i), nullptr));
  }
  const uint64_t fingerprints = optimistic() ? test::FilterKeys(occ_.get())
                                             : test::FilterKeys(pes_.get());
  EXPECT_EQ(fingerprints, live);
}

INSTANTIATE_TEST_SUITE_P(Modes, TxnStress, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "Optimistic" : "Pessimistic";
                         });

}  // namespace
}  // namespace rocksdb_cuckoo
