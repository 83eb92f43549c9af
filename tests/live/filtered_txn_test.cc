// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredTransactionDB and FilteredOptimisticTransactionDB: reads answered
// by the filter, commits, rollbacks, savepoints, two-phase commit and
// recovery, failed commits, write policies, lock order.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "filtered_txn_test_util.h"
#include "rocksdb/utilities/transaction.h"
#include "rocksdb/utilities/write_batch_with_index.h"
#include "rocksdb/version.h"

namespace rocksdb_cuckoo {
namespace {

using ROCKSDB_NAMESPACE::ColumnFamilyDescriptor;
using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::OptimisticTransactionOptions;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::Transaction;
using ROCKSDB_NAMESPACE::TransactionDBOptions;
using ROCKSDB_NAMESPACE::TransactionDBWriteOptimizations;
using ROCKSDB_NAMESPACE::TransactionOptions;
using ROCKSDB_NAMESPACE::WriteBatch;
using ROCKSDB_NAMESPACE::WriteOptions;
using test::FilterKeys;
using test::FilterStats;
using test::Key;
using test::TempDir;

class FilteredTxnTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }
  void Reopen() {
    db_.reset();
    ASSERT_TRUE(test::OpenTxnDB(dir_.Sub("db"), test::SmallFilterOptions(),
                                &db_, txn_options_)
                    .ok());
  }
  Transaction* Begin(TransactionOptions o = TransactionOptions()) {
    return db_->BeginTransaction(WriteOptions(), o);
  }
  uint64_t AbsentReads() { return FilterStats(db_.get()).reads_absent; }

  TempDir dir_;
  TransactionDBOptions txn_options_;
  std::unique_ptr<FilteredTransactionDB> db_;
};

TEST_F(FilteredTxnTest, NegativeReadsAreAnsweredByTheFilter) {
  ASSERT_TRUE(db_->Put(WriteOptions(), "present", "v").ok());
  std::unique_ptr<Transaction> txn(Begin());
  std::string value;
  const uint64_t before = AbsentReads();
  EXPECT_TRUE(txn->Get(ReadOptions(), "absent", &value).IsNotFound());
  EXPECT_TRUE(db_->Get(ReadOptions(), "absent", &value).IsNotFound());
  PinnableSlice pinned;
  EXPECT_TRUE(
      txn->Get(ReadOptions(), db_->DefaultColumnFamily(), "absent", &pinned)
          .IsNotFound());
  EXPECT_EQ(AbsentReads(), before + 3);
  ASSERT_TRUE(txn->Get(ReadOptions(), "present", &value).ok());
  EXPECT_EQ(value, "v");
  // A snapshot read bypasses the filter.
  ReadOptions at_snapshot;
  at_snapshot.snapshot = db_->GetSnapshot();
  EXPECT_TRUE(txn->Get(at_snapshot, "absent", &value).IsNotFound());
  db_->ReleaseSnapshot(at_snapshot.snapshot);
  EXPECT_EQ(AbsentReads(), before + 3);
  ASSERT_TRUE(txn->Commit().ok());
}

TEST_F(FilteredTxnTest, ReadsOwnWritesNeverRuledOut) {
  ASSERT_TRUE(db_->Put(WriteOptions(), "live", "old").ok());
  std::unique_ptr<Transaction> txn(Begin());
  ASSERT_TRUE(txn->Put("new", "v1").ok());
  ASSERT_TRUE(txn->Merge("merged", "m").ok());
  ASSERT_TRUE(txn->Delete("live").ok());
  std::string value;
  ASSERT_TRUE(txn->Get(ReadOptions(), "new", &value).ok());
  EXPECT_EQ(value, "v1");
  ASSERT_TRUE(txn->Get(ReadOptions(), "merged", &value).ok());
  EXPECT_EQ(value, "m");
  EXPECT_TRUE(txn->Get(ReadOptions(), "live", &value).IsNotFound());
  ASSERT_TRUE(txn->GetForUpdate(ReadOptions(), "new", &value).ok());
  EXPECT_EQ(value, "v1");
  // MultiGet: own write, absent key, committed key.
  ASSERT_TRUE(db_->Put(WriteOptions(), "other", "o").ok());
  std::vector<std::string> values;
  std::vector<Status> st = txn->MultiGet(
      ReadOptions(), {Slice("new"), Slice("nothing"), Slice("other")}, &values);
  ASSERT_EQ(st.size(), 3u);
  EXPECT_TRUE(st[0].ok());
  EXPECT_EQ(values[0], "v1");
  EXPECT_TRUE(st[1].IsNotFound());
  EXPECT_TRUE(st[2].ok());
  EXPECT_EQ(values[2], "o");
  // Other readers do not see uncommitted writes.
  EXPECT_TRUE(db_->Get(ReadOptions(), "new", &value).IsNotFound());
  ASSERT_TRUE(txn->Commit().ok());
  ASSERT_TRUE(db_->Get(ReadOptions(), "new", &value).ok());
  ASSERT_TRUE(db_->Get(ReadOptions(), "merged", &value).ok());
  EXPECT_TRUE(db_->Get(ReadOptions(), "live", &value).IsNotFound());
  EXPECT_EQ(FilterKeys(db_.get()), 3u);  // new, merged, other
}

TEST_F(FilteredTxnTest, BatchedMultiGetFiltersAndForwards) {
  ASSERT_TRUE(db_->Put(WriteOptions(), Key(1), "one").ok());
  std::unique_ptr<Transaction> txn(Begin());
  ASSERT_TRUE(txn->Put(Key(2), "two").ok());
  const std::vector<std::string> k = {Key(0), Key(1), Key(2), Key(3)};
  std::vector<Slice> keys(k.begin(), k.end());
  std::vector<PinnableSlice> values(4);
  std::vector<Status> statuses(4);
  const uint64_t before = AbsentReads();
  txn->MultiGet(ReadOptions(), db_->DefaultColumnFamily(), 4, keys.data(),
                values.data(), statuses.data());
  EXPECT_TRUE(statuses[0].IsNotFound());
  ASSERT_TRUE(statuses[1].ok());
  EXPECT_EQ(values[1].ToString(), "one");
  ASSERT_TRUE(statuses[2].ok());
  EXPECT_EQ(values[2].ToString(), "two");
  EXPECT_TRUE(statuses[3].IsNotFound());
  EXPECT_EQ(AbsentReads(), before + 2);
}

TEST_F(FilteredTxnTest, RollbackAndSavepointsLeaveTheFilterExact) {
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), "v").ok());
  }
  ASSERT_EQ(FilterKeys(db_.get()), 10u);
  {
    std::unique_ptr<Transaction> txn(Begin());
    for (int i = 10; i < 20; ++i) ASSERT_TRUE(txn->Put(Key(i), "v").ok());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(txn->Delete(Key(i)).ok());
    ASSERT_TRUE(txn->Rollback().ok());
    EXPECT_EQ(FilterKeys(db_.get()), 10u);
  }
  std::unique_ptr<Transaction> txn(Begin());
  ASSERT_TRUE(txn->Put(Key(10), "v").ok());
  ASSERT_TRUE(txn->Delete(Key(0)).ok());
  txn->SetSavePoint();
  ASSERT_TRUE(txn->Put(Key(11), "v").ok());
  ASSERT_TRUE(txn->Delete(Key(1)).ok());
  txn->SetSavePoint();
  ASSERT_TRUE(txn->Put(Key(12), "v").ok());
  ASSERT_TRUE(txn->RollbackToSavePoint().ok());  // drops Key(12)
  ASSERT_TRUE(txn->RollbackToSavePoint().ok());  // drops Key(11), Key(1)
  std::string value;
  EXPECT_TRUE(txn->Get(ReadOptions(), Key(11), &value).IsNotFound());
  ASSERT_TRUE(txn->Get(ReadOptions(), Key(1), &value).ok());
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_EQ(FilterKeys(db_.get()), 10u);  // 1..10
  ASSERT_TRUE(db_->Get(ReadOptions(), Key(10), &value).ok());
  ASSERT_TRUE(db_->Get(ReadOptions(), Key(1), &value).ok());
  EXPECT_TRUE(db_->Get(ReadOptions(), Key(0), &value).IsNotFound());
  EXPECT_TRUE(db_->Get(ReadOptions(), Key(11), &value).IsNotFound());
}

TEST_F(FilteredTxnTest, TwoPhaseCommit) {
  ASSERT_TRUE(db_->Put(WriteOptions(), "gone", "v").ok());
  std::unique_ptr<Transaction> txn(Begin());
  ASSERT_TRUE(txn->SetName("xid1").ok());
  EXPECT_EQ(db_->GetTransactionByName("xid1"), txn.get());
  ASSERT_TRUE(txn->Put("a", "1").ok());
  ASSERT_TRUE(txn->Delete("gone").ok());
  ASSERT_TRUE(txn->Prepare().ok());
  EXPECT_EQ(txn->GetState(), Transaction::PREPARED);
  // Prepared writes are not live: the filter is unchanged.
  EXPECT_EQ(FilterKeys(db_.get()), 1u);
  std::string value;
  EXPECT_TRUE(db_->Get(ReadOptions(), "a", &value).IsNotFound());
  txn->GetCommitTimeWriteBatch()->Put("at_commit", "c");
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_EQ(txn->GetState(), Transaction::COMMITTED);
  EXPECT_EQ(db_->GetTransactionByName("xid1"), nullptr);
  ASSERT_TRUE(db_->Get(ReadOptions(), "a", &value).ok());
  ASSERT_TRUE(db_->Get(ReadOptions(), "at_commit", &value).ok());
  EXPECT_EQ(value, "c");
  EXPECT_TRUE(db_->Get(ReadOptions(), "gone", &value).IsNotFound());
  EXPECT_EQ(FilterKeys(db_.get()), 2u);

  std::unique_ptr<Transaction> rolled(Begin());
  ASSERT_TRUE(rolled->SetName("xid2").ok());
  ASSERT_TRUE(rolled->Put("b", "2").ok());
  ASSERT_TRUE(rolled->Delete("a").ok());
  ASSERT_TRUE(rolled->Prepare().ok());
  ASSERT_TRUE(rolled->Rollback().ok());
  EXPECT_TRUE(db_->Get(ReadOptions(), "b", &value).IsNotFound());
  ASSERT_TRUE(db_->Get(ReadOptions(), "a", &value).ok());
  EXPECT_EQ(FilterKeys(db_.get()), 2u);
}

TEST_F(FilteredTxnTest, PreparedTransactionsRecoveredAfterReopen) {
  ASSERT_TRUE(db_->Put(WriteOptions(), "old1", "v").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "old2", "v").ok());
  for (const char* name : {"commit_me", "roll_me"}) {
    std::unique_ptr<Transaction> txn(Begin());
    ASSERT_TRUE(txn->SetName(name).ok());
    ASSERT_TRUE(txn->Put(std::string(name) + "_key", "v").ok());
    ASSERT_TRUE(txn->Delete(name[0] == 'c' ? "old1" : "old2").ok());
    ASSERT_TRUE(txn->Prepare().ok());
    // Deleting a prepared transaction leaves it prepared (in the WAL).
  }
  Reopen();
  std::vector<Transaction*> prepared;
  db_->GetAllPreparedTransactions(&prepared);
  ASSERT_EQ(prepared.size(), 2u);
  Transaction* commit_me = db_->GetTransactionByName("commit_me");
  Transaction* roll_me = db_->GetTransactionByName("roll_me");
  ASSERT_NE(commit_me, nullptr);
  ASSERT_NE(roll_me, nullptr);
  // One object per recovered transaction.
  EXPECT_TRUE((prepared[0] == commit_me && prepared[1] == roll_me) ||
              (prepared[0] == roll_me && prepared[1] == commit_me));
  EXPECT_EQ(commit_me->GetState(), Transaction::PREPARED);
  EXPECT_EQ(FilterKeys(db_.get()), 2u);
  std::string value;
  EXPECT_TRUE(db_->Get(ReadOptions(), "commit_me_key", &value).IsNotFound());
  ASSERT_TRUE(commit_me->Commit().ok());
  ASSERT_TRUE(roll_me->Rollback().ok());
  delete commit_me;
  delete roll_me;
  ASSERT_TRUE(db_->Get(ReadOptions(), "commit_me_key", &value).ok());
  EXPECT_TRUE(db_->Get(ReadOptions(), "roll_me_key", &value).IsNotFound());
  EXPECT_TRUE(db_->Get(ReadOptions(), "old1", &value).IsNotFound());
  ASSERT_TRUE(db_->Get(ReadOptions(), "old2", &value).ok());
  EXPECT_EQ(FilterKeys(db_.get()), 2u);
  Reopen();
  EXPECT_EQ(FilterKeys(db_.get()), 2u);
  ASSERT_TRUE(db_->Get(ReadOptions(), "commit_me_key", &value).ok());
}

TEST_F(FilteredTxnTest, ExpiredCommitLeavesTheFilterAsItWas) {
  ASSERT_TRUE(db_->Put(WriteOptions(), "live", "v").ok());
  TransactionOptions o;
  o.expiration = 1;  // ms
  std::unique_ptr<Transaction> txn(Begin(o));
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(txn->Put(Key(i), "v").ok());
  ASSERT_TRUE(txn->Delete("live").ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const cuckoo::LiveKeyFilter* filter = db_->GetLiveKeyFilter(nullptr);
  std::vector<bool> before;
  for (int i = 0; i < 50; ++i) before.push_back(filter->MayContain(Key(i)));
  EXPECT_TRUE(txn->Commit().IsExpired());
  EXPECT_EQ(FilterKeys(db_.get()), 1u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(filter->MayContain(Key(i)), before[i]);
  std::string value;
  ASSERT_TRUE(db_->Get(ReadOptions(), "live", &value).ok());
}

TEST_F(FilteredTxnTest, LockConflictsTouchNoFilter) {
  std::unique_ptr<Transaction> holder(Begin());
  ASSERT_TRUE(holder->Put("k", "v").ok());
  TransactionOptions quick;
  quick.lock_timeout = 1;
  std::unique_ptr<Transaction> waiter(Begin(quick));
  std::string value;
  EXPECT_TRUE(waiter->GetForUpdate(ReadOptions(), "k", &value).IsTimedOut());
  EXPECT_TRUE(waiter->Put("k", "w").IsTimedOut());
  ASSERT_TRUE(waiter->Put("other", "w").ok());
  ASSERT_TRUE(waiter->Commit().ok());
  ASSERT_TRUE(holder->Commit().ok());
  ASSERT_TRUE(db_->Get(ReadOptions(), "k", &value).ok());
  EXPECT_EQ(value, "v");
  EXPECT_EQ(FilterKeys(db_.get()), 2u);
}

// GetForUpdate locks the key before it consults the filter: a commit that
// makes the key live while the read waits for the lock is seen (every
// overload).
TEST_F(FilteredTxnTest, GetForUpdateReadsAfterItsLock) {
  // Each reader waits for the writer's key lock while this thread sleeps
  // 100 ms and commits: a lock timeout far above that (the default of 1 s
  // timed the reader out when this process stalled for a second).
  txn_options_.transaction_lock_timeout = 20000;
  Reopen();
  ColumnFamilyHandle* cf = db_->DefaultColumnFamily();
  const std::vector<
      std::function<Status(Transaction*, const std::string&, std::string*)>>
      reads = {
          [](Transaction* t, const std::string& k, std::string* v) {
            return t->GetForUpdate(ReadOptions(), k, v);
          },
          [cf](Transaction* t, const std::string& k, std::string* v) {
            return t->GetForUpdate(ReadOptions(), cf, k, v);
          },
          [cf](Transaction* t, const std::string& k, std::string* v) {
            PinnableSlice p;
            Status s = t->GetForUpdate(ReadOptions(), cf, k, &p);
            if (s.ok()) v->assign(p.data(), p.size());
            return s;
          },
          [cf](Transaction* t, const std::string& k, std::string* v) {
            std::vector<std::string> values;
            std::vector<Status> s =
                t->MultiGetForUpdate(ReadOptions(), {cf}, {k}, &values);
            if (s[0].ok()) *v = values[0];
            return s[0];
          },
          [](Transaction* t, const std::string& k, std::string* v) {
            std::vector<std::string> values;
            std::vector<Status> s =
                t->MultiGetForUpdate(ReadOptions(), {k}, &values);
            if (s[0].ok()) *v = values[0];
            return s[0];
          },
      };
  for (size_t r = 0; r < reads.size(); ++r) {
    const std::string key = "k" + std::to_string(r);
    std::unique_ptr<Transaction> writer(Begin());
    ASSERT_TRUE(writer->Put(key, "committed").ok());
    auto reader = std::async(std::launch::async, [&] {
      std::unique_ptr<Transaction> txn(Begin());
      std::string value;
      Status s = reads[r](txn.get(), key, &value);
      return s.ok() ? value : s.ToString();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(writer->Commit().ok());
    EXPECT_EQ(reader.get(), "committed") << "read overload " << r;
  }
}

// Key locks before filter locks: a non-transactional Put waiting for a key
// lock holds no filter lock, so the lock holder's commit goes through.
TEST_F(FilteredTxnTest,
       NonTransactionalWriteWaitsForTheKeyLockWithoutFilterLocks) {
  txn_options_.default_lock_timeout = 20000;
  txn_options_.transaction_lock_timeout = 20000;
  Reopen();
  std::unique_ptr<Transaction> holder(Begin());
  ASSERT_TRUE(holder->Put("k", "from_txn").ok());
  ASSERT_TRUE(holder->Put("k2", "from_txn").ok());
  std::atomic<bool> put_done{false};
  auto put = std::async(std::launch::async, [&] {
    Status s = db_->Put(WriteOptions(), "k", "from_put");
    put_done = true;
    return s;
  });
  auto batch = std::async(std::launch::async, [&] {
    WriteBatch b;
    b.Put("k2", "from_batch");
    b.Put("k3", "from_batch");
    return db_->Write(WriteOptions(), &b);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(put_done.load());
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(holder->Commit().ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_TRUE(put.get().ok());
  ASSERT_TRUE(batch.get().ok());
  std::string value;
  ASSERT_TRUE(db_->Get(ReadOptions(), "k", &value).ok());
  EXPECT_EQ(value, "from_put");
  ASSERT_TRUE(db_->Get(ReadOptions(), "k2", &value).ok());
  EXPECT_EQ(value, "from_batch");
  EXPECT_EQ(FilterKeys(db_.get()), 3u);
}

TEST_F(FilteredTxnTest, NonTransactionalWritesAndBatches) {
  WriteOptions wo;
  ASSERT_TRUE(db_->Put(wo, "a", "1").ok());
  ASSERT_TRUE(db_->Merge(wo, "b", "x").ok());
  ASSERT_TRUE(db_->Put(wo, "c", "3").ok());
  ASSERT_TRUE(db_->Delete(wo, "a").ok());
  ASSERT_TRUE(db_->SingleDelete(wo, "c").ok());
  EXPECT_EQ(FilterKeys(db_.get()), 1u);
  WriteBatch batch;
  batch.Put("d", "4");
  batch.Delete("b");
  batch.Put("e", "5");
  ASSERT_TRUE(db_->Write(wo, &batch).ok());
  EXPECT_EQ(FilterKeys(db_.get()), 2u);
  // DeleteRange: refused as TransactionDB refuses it; accepted in a batch
  // without concurrency control, and exact.
  EXPECT_TRUE(db_->DeleteRange(wo, db_->DefaultColumnFamily(), "a", "z")
                  .IsNotSupported());
  WriteBatch ranged;
  ranged.DeleteRange("d", "e\xff");
  ranged.Put("f", "6");
  TransactionDBWriteOptimizations skip;
  skip.skip_concurrency_control = true;
  ASSERT_TRUE(db_->Write(wo, skip, &ranged).ok());
  EXPECT_EQ(FilterKeys(db_.get()), 1u);
  std::string value;
  EXPECT_TRUE(db_->Get(ReadOptions(), "d", &value).IsNotFound());
  ASSERT_TRUE(db_->Get(ReadOptions(), "f", &value).ok());
}

TEST_F(FilteredTxnTest, ReusedTransactionObject) {
  Transaction* txn = Begin();
  ASSERT_TRUE(txn->Put("a", "1").ok());
  ASSERT_TRUE(txn->Commit().ok());
  Transaction* again =
      db_->BeginTransaction(WriteOptions(), TransactionOptions(), txn);
  ASSERT_EQ(again, txn);
  EXPECT_EQ(txn->GetState(), Transaction::STARTED);
  ASSERT_TRUE(txn->Put("b", "2").ok());
  ASSERT_TRUE(txn->SetName("reused").ok());
  EXPECT_EQ(db_->GetTransactionByName("reused"), txn);
  ASSERT_TRUE(txn->Commit().ok());
  delete txn;
  EXPECT_EQ(FilterKeys(db_.get()), 2u);
}

// Commit copies the keys of its operations into a buffer the transaction
// object keeps: a reused object whose commits grow and shrink (keys of very
// different lengths, deletes whose checks run after the commit, a prepared
// commit with a commit-time batch) leaves one fingerprint per live key.
TEST_F(FilteredTxnTest, ReusedTransactionObjectCommitsOfEverySize) {
  auto key = [](int i) {
    return std::string(size_t(1) + size_t(i % 7) * 97, char('a' + i % 26)) +
           std::to_string(i);
  };
  std::set<std::string> live;
  Transaction* txn = nullptr;
  int next = 0;
  for (int round = 0; round < 40; ++round) {
    txn = db_->BeginTransaction(WriteOptions(), TransactionOptions(), txn);
    const int puts = 1 + round % 9;
    std::set<std::string> this_round;
    for (int p = 0; p < puts; ++p, ++next) {
      ASSERT_TRUE(txn->Put(key(next), "v").ok());
      this_round.insert(key(next));
    }
    // Deletes of keys committed by earlier rounds (their checks are
    // deferred: they read the keys after this commit returned).
    for (int d = 0; d < round % 5 && !live.empty(); ++d) {
      auto it = live.begin();
      std::advance(it, (round * 7 + d) % live.size());
      ASSERT_TRUE(txn->Delete(*it).ok());
      live.erase(it);
    }
    live.insert(this_round.begin(), this_round.end());
    if (round % 10 == 9) {
      ASSERT_TRUE(txn->SetName("r" + std::to_string(round)).ok());
      ASSERT_TRUE(txn->Prepare().ok());
      const std::string at_commit = key(next++) + "_at_commit";
      ASSERT_TRUE(txn->GetCommitTimeWriteBatch()->Put(at_commit, "c").ok());
      live.insert(at_commit);
    }
    ASSERT_TRUE(txn->Commit().ok());
  }
  delete txn;
  db_->WaitForDeleteChecks();
  EXPECT_EQ(FilterKeys(db_.get()), live.size());
  std::string value;
  for (const std::string& k : live) {
    EXPECT_TRUE(db_->Get(ReadOptions(), k, &value).ok()) << k;
  }
  for (int i = 0; i < next; ++i) {
    if (live.count(key(i)) == 0) {
      EXPECT_TRUE(db_->Get(ReadOptions(), key(i), &value).IsNotFound());
    }
  }
}

TEST_F(FilteredTxnTest, ColumnFamilies) {
  db_.reset();
  ROCKSDB_NAMESPACE::Options options = test::TestOptions();
  options.create_missing_column_families = true;
  const ROCKSDB_NAMESPACE::ColumnFamilyOptions cfo(options);
  std::vector<ColumnFamilyDescriptor> families = {
      {ROCKSDB_NAMESPACE::kDefaultColumnFamilyName, cfo},
      {"filtered", cfo},
      {"plain", cfo}};
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.filtered_column_families = {"filtered"};
  std::vector<ColumnFamilyHandle*> handles;
  ASSERT_TRUE(FilteredTransactionDB::Open(
                  ROCKSDB_NAMESPACE::DBOptions(options), TransactionDBOptions(),
                  dir_.Sub("cf"), families, &handles, fopts, &db_)
                  .ok());
  EXPECT_FALSE(db_->HasFilter(handles[0]));
  EXPECT_TRUE(db_->HasFilter(handles[1]));
  std::unique_ptr<Transaction> txn(Begin());
  ASSERT_TRUE(txn->Put(handles[1], "f", "1").ok());
  ASSERT_TRUE(txn->Put(handles[2], "p", "1").ok());
  ASSERT_TRUE(txn->Commit().ok());
  WriteBatch batch;
  batch.Put(handles[1], "g", "1");
  batch.Put(handles[2], "q", "1");
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  EXPECT_EQ(FilterKeys(db_.get(), handles[1]), 2u);
  std::string value;
  ASSERT_TRUE(db_->Get(ReadOptions(), handles[2], "q", &value).ok());
  ColumnFamilyHandle* created = nullptr;
  ASSERT_TRUE(db_->CreateColumnFamily(cfo, "created", &created).ok());
  WriteBatch to_created;
  to_created.Put(handles[1], "h", "1");
  to_created.Put(created, "x", "1");
  ASSERT_TRUE(db_->Write(WriteOptions(), &to_created).ok());
  EXPECT_EQ(FilterKeys(db_.get(), handles[1]), 3u);
  ASSERT_TRUE(db_->DestroyColumnFamilyHandle(created).ok());
  for (ColumnFamilyHandle* h : handles) {
    ASSERT_TRUE(db_->DestroyColumnFamilyHandle(h).ok());
  }
  ASSERT_TRUE(db_->Close().ok());
}

// A transaction whose batch is near TransactionOptions::max_write_batch_size
// commits: the filter's effect record (8 bytes per inserted key) is left
// out when it does not fit, instead of failing Transaction::PutLogData's
// assertion (hostile review 8, F1: an abort at 73% of the limit).
TEST_F(FilteredTxnTest, CommitNearMaxWriteBatchSizeLeavesOutTheRecord) {
  for (size_t max : {size_t{1000}, size_t{4000}}) {
    SCOPED_TRACE(max);
    TransactionOptions o;
    o.max_write_batch_size = max;
    std::unique_ptr<Transaction> txn(Begin(o));
    std::vector<std::string> keys;
    while (txn->GetWriteBatch()->GetWriteBatch()->GetDataSize() + 40 < max) {
      keys.push_back(Key(keys.size()) + "/" + std::to_string(max));
      ASSERT_TRUE(txn->Put(keys.back(), "0123456789").ok());
    }
    ASSERT_TRUE(txn->Commit().ok());
    std::string value;
    for (const std::string& k : keys) {
      ASSERT_TRUE(db_->Get(ReadOptions(), k, &value).ok()) << k;
    }
  }
  const uint64_t live = FilterKeys(db_.get());
  Reopen();
  EXPECT_EQ(FilterKeys(db_.get()), live);
}

// LogData blobs reserved for the filter's records (first byte 0xC5) are
// refused by commits that have no operation too, and by Prepare, which
// writes the batch to the WAL (hostile review 8, F2: such commits returned
// OK and the blob reached the WAL, where a replay read it as a record).
TEST_F(FilteredTxnTest, ReservedLogDataIsRefusedWithoutOperations) {
  const std::string reserved("\xC5\x02forged", 8);
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v").ok());
  auto refused = [&](const std::function<Status(Transaction*)>& fill) {
    std::unique_ptr<Transaction> txn(Begin());
    Status s = fill(txn.get());
    if (s.ok()) s = txn->Commit();
    const bool invalid = s.IsInvalidArgument();
    EXPECT_TRUE(txn->Rollback().ok());
    return invalid;
  };
  EXPECT_TRUE(refused([&](Transaction* t) {
    t->PutLogData(reserved);
    return Status::OK();
  })) << "LogData only";
  EXPECT_TRUE(refused([&](Transaction* t) {
    std::string value;
    Status s = t->GetForUpdate(ReadOptions(), "k", &value);
    t->PutLogData(reserved);
    return s;
  })) << "GetForUpdate and LogData";
  EXPECT_TRUE(refused([&](Transaction* t) {
    t->PutLogData(reserved);
    t->SetSavePoint();
    Status s = t->Put("p", "v");
    if (s.ok()) s = t->RollbackToSavePoint();
    return s;
  })) << "LogData, then a Put undone by RollbackToSavePoint";
  EXPECT_TRUE(refused([&](Transaction* t) {
    Status s = t->SetName("reserved-prepare");
    if (s.ok()) s = t->Put("q", "v");
    t->PutLogData(reserved);
    if (s.ok()) s = t->Prepare();
    return s;
  })) << "Prepare";
  EXPECT_TRUE(refused([&](Transaction* t) {
    Status s = t->SetName("reserved-commit-time");
    if (s.ok()) s = t->Put("r", "v");
    if (s.ok()) s = t->Prepare();
    if (s.ok()) s = t->GetCommitTimeWriteBatch()->PutLogData(reserved);
    return s;
  })) << "a prepared transaction's commit-time batch";
  // Blobs of the application's own still commit.
  std::unique_ptr<Transaction> txn(Begin());
  txn->PutLogData("mine");
  EXPECT_TRUE(txn->Commit().ok());
  std::string value;
  EXPECT_TRUE(db_->Get(ReadOptions(), "p", &value).IsNotFound());
  EXPECT_TRUE(db_->Get(ReadOptions(), "q", &value).IsNotFound());
  EXPECT_TRUE(db_->Get(ReadOptions(), "r", &value).IsNotFound());
}

TEST(FilteredTxnOpen, RefusesWritePreparedAndUnprepared) {
  TempDir dir;
  std::unique_ptr<FilteredTransactionDB> db;
  TransactionDBOptions o;
  o.write_policy = ROCKSDB_NAMESPACE::WRITE_PREPARED;
  Status s = test::OpenTxnDB(dir.Sub("db"), test::SmallFilterOptions(), &db, o);
  EXPECT_TRUE(s.IsNotSupported());
  EXPECT_NE(s.ToString().find("WRITE_PREPARED"), std::string::npos);
  o.write_policy = ROCKSDB_NAMESPACE::WRITE_UNPREPARED;
  s = test::OpenTxnDB(dir.Sub("db"), test::SmallFilterOptions(), &db, o);
  EXPECT_TRUE(s.IsNotSupported());
  EXPECT_NE(s.ToString().find("WRITE_UNPREPARED"), std::string::npos);
  EXPECT_EQ(db, nullptr);
}

// A family to filter that the Open is not given is refused before the DB
// opens (nothing created), as FilteredDB::Open does.
TEST(FilteredTxnOpen, UnknownFamilyToFilterIsRefusedBeforeTheDbOpens) {
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.filtered_column_families = {"nosuch"};
  std::unique_ptr<FilteredTransactionDB> txn_db;
  Status s = test::OpenTxnDB(dir.Sub("txn"), fopts, &txn_db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(txn_db, nullptr);
  EXPECT_FALSE(std::filesystem::exists(dir.Sub("txn") + "/CURRENT"));
  std::unique_ptr<FilteredOptimisticTransactionDB> occ_db;
  s = test::OpenOccDB(dir.Sub("occ"), fopts, &occ_db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(occ_db, nullptr);
  EXPECT_FALSE(std::filesystem::exists(dir.Sub("occ") + "/CURRENT"));
}

TEST(FilteredTxnOpen, PersistedSnapshotIsUsedAtReopen) {
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.snapshot_dir = dir.Sub("snap");
  {
    std::unique_ptr<FilteredTransactionDB> db;
    ASSERT_TRUE(test::OpenTxnDB(dir.Sub("db"), fopts, &db).ok());
    std::unique_ptr<Transaction> txn(
        db->BeginTransaction(WriteOptions(), TransactionOptions()));
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(txn->Put(Key(i), "v").ok());
    ASSERT_TRUE(txn->Commit().ok());
    ASSERT_TRUE(db->Close().ok());
  }
  std::unique_ptr<FilteredTransactionDB> db;
  ASSERT_TRUE(test::OpenTxnDB(dir.Sub("db"), fopts, &db).ok());
  EXPECT_TRUE(FilterStats(db.get()).loaded_from_snapshot);
  EXPECT_EQ(FilterKeys(db.get()), 100u);
  std::string value;
  ASSERT_TRUE(db->Get(ReadOptions(), Key(7), &value).ok());
  uint64_t keys = 0;
  ASSERT_TRUE(db->GetIntProperty("rocksdb.cuckoo.num-keys", &keys));
  EXPECT_EQ(keys, 100u);
}

// ------------------------------------------------------------ optimistic

class FilteredOccTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        test::OpenOccDB(dir_.Sub("db"), test::SmallFilterOptions(), &db_).ok());
  }
  Transaction* Begin() {
    return db_->BeginTransaction(WriteOptions(),
                                 OptimisticTransactionOptions());
  }
  TempDir dir_;
  std::unique_ptr<FilteredOptimisticTransactionDB> db_;
};

TEST_F(FilteredOccTest, CommitsReadsAndOwnWrites) {
  ASSERT_TRUE(db_->Put(WriteOptions(), "live", "v").ok());
  std::unique_ptr<Transaction> txn(Begin());
  std::string value;
  EXPECT_TRUE(txn->Get(ReadOptions(), "absent", &value).IsNotFound());
  EXPECT_EQ(FilterStats(db_.get()).reads_absent, 1u);
  ASSERT_TRUE(txn->Put("new", "n").ok());
  ASSERT_TRUE(txn->Delete("live").ok());
  ASSERT_TRUE(txn->Get(ReadOptions(), "new", &value).ok());
  EXPECT_TRUE(txn->GetForUpdate(ReadOptions(), "live", &value).IsNotFound());
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_EQ(FilterKeys(db_.get()), 1u);
  ASSERT_TRUE(db_->Get(ReadOptions(), "new", &value).ok());
  EXPECT_TRUE(db_->Get(ReadOptions(), "live", &value).IsNotFound());
}

TEST_F(FilteredOccTest, ConflictLeavesTheFilterAsItWas) {
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v").ok());
  std::unique_ptr<Transaction> loser(Begin());
  std::string value;
  ASSERT_TRUE(loser->GetForUpdate(ReadOptions(), "k", &value).ok());
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(loser->Put(Key(i), "v").ok());
  ASSERT_TRUE(loser->Delete("k").ok());
  std::unique_ptr<Transaction> winner(Begin());
  ASSERT_TRUE(winner->Put("k", "w").ok());
  ASSERT_TRUE(winner->Commit().ok());
  const cuckoo::LiveKeyFilter* filter = db_->GetLiveKeyFilter(nullptr);
  std::vector<bool> before;
  for (int i = 0; i < 50; ++i) before.push_back(filter->MayContain(Key(i)));
  EXPECT_TRUE(loser->Commit().IsBusy());
  EXPECT_EQ(FilterKeys(db_.get()), 1u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(filter->MayContain(Key(i)), before[i]);
  ASSERT_TRUE(db_->Get(ReadOptions(), "k", &value).ok());
  EXPECT_EQ(value, "w");
}

TEST_F(FilteredOccTest, GetForUpdateTracksBeforeItReads) {
  // The read after GetForUpdate's tracking: a write in between is a
  // conflict at commit, as in RocksDB.
  std::unique_ptr<Transaction> txn(Begin());
  std::string value;
  EXPECT_TRUE(txn->GetForUpdate(ReadOptions(), "k", &value).IsNotFound());
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v").ok());
  ASSERT_TRUE(txn->Put("k", "mine").ok());
  EXPECT_TRUE(txn->Commit().IsBusy());
  ASSERT_TRUE(db_->Get(ReadOptions(), "k", &value).ok());
  EXPECT_EQ(value, "v");
  EXPECT_EQ(FilterKeys(db_.get()), 1u);
}

// The optimistic DB's non-transactional writes take FilteredDB's striped
// path, which records the keys they leave live (FilteredDBOptions::
// recent_keys, on by default); a commit takes the exclusive path, which
// must make the record forget them. A stale "k is live" costs nothing while
// the filter rules k out; it bites when another key's fingerprint makes the
// filter answer "maybe" for k: a Delete of k then erases that fingerprint at
// once, without reading k, and the other key becomes a false negative. The
// test finds such a key (8-bit fingerprints, 8 buckets: about one key in
// 500) and checks that it survives the Delete of k.
TEST_F(FilteredOccTest, ReservedLogDataIsRefusedWithoutOperations) {
  std::unique_ptr<Transaction> txn(Begin());
  txn->PutLogData(std::string("\xC5\x02forged", 8));
  EXPECT_TRUE(txn->Commit().IsInvalidArgument());
  EXPECT_TRUE(txn->Rollback().ok());
}

TEST(FilteredOccRecentKeys, CommitDeletingARecentKeyLeavesNoStaleRecord) {
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions(64);
  fopts.filter.fingerprint_bits = 8;
  ASSERT_GT(fopts.recent_keys, 0u);  // the default
  std::unique_ptr<FilteredOptimisticTransactionDB> db;
  ASSERT_TRUE(test::OpenOccDB(dir.Sub("db"), fopts, &db).ok());
  const cuckoo::LiveKeyFilter* filter = db->GetLiveKeyFilter(nullptr);
  ASSERT_NE(filter, nullptr);
  std::string value;
  ASSERT_TRUE(db->Put(WriteOptions(), "k", "v1").ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "k", "v2").ok());
  // The record is in use: the overwrite was answered from it.
  ASSERT_GE(FilterStats(db.get()).recent_key_hits, 1u);
  std::unique_ptr<Transaction> txn(
      db->BeginTransaction(WriteOptions(), OptimisticTransactionOptions()));
  ASSERT_TRUE(txn->Delete("k").ok());
  ASSERT_TRUE(txn->Commit().ok());
  txn.reset();
  ASSERT_TRUE(db->Get(ReadOptions(), "k", &value).IsNotFound());
  ASSERT_FALSE(filter->MayContain("k"));
  // A key whose fingerprint the filter takes for k's (Put and Delete of the
  // others go through the striped path, which keeps the record).
  std::string collider;
  for (int i = 0; i < 50000 && collider.empty(); ++i) {
    const std::string x = "x" + std::to_string(i);
    ASSERT_TRUE(db->Put(WriteOptions(), x, "c").ok());
    if (filter->MayContain("k")) {
      collider = x;
    } else {
      ASSERT_TRUE(db->Delete(WriteOptions(), x).ok());
    }
  }
  ASSERT_FALSE(collider.empty()) << "no fingerprint collision found";
  ASSERT_TRUE(db->Delete(WriteOptions(), "k").ok());  // k is not live
  EXPECT_TRUE(db->Get(ReadOptions(), collider, &value).ok())
      << "false negative for " << collider;
  EXPECT_TRUE(filter->MayContain(collider));
  EXPECT_EQ(FilterKeys(db.get()), 1u);
  // And a key a commit made live, deleted and written again outside.
  txn.reset(
      db->BeginTransaction(WriteOptions(), OptimisticTransactionOptions()));
  ASSERT_TRUE(txn->Put("j", "t").ok());
  ASSERT_TRUE(txn->Commit().ok());
  txn.reset();
  ASSERT_TRUE(db->Delete(WriteOptions(), "j").ok());
  EXPECT_TRUE(db->Get(ReadOptions(), "j", &value).IsNotFound());
  ASSERT_TRUE(db->Put(WriteOptions(), "j", "again").ok());
  ASSERT_TRUE(db->Get(ReadOptions(), "j", &value).ok());
  EXPECT_EQ(FilterKeys(db.get()), 2u);
}

#if ROCKSDB_MAJOR > 8 || (ROCKSDB_MAJOR == 8 && ROCKSDB_MINOR >= 9)
// PutEntity with attribute groups (RocksDB 8.9+) writes several families at
// once; StackableDB forwards it to the base DB, around the filter. The
// optimistic DB writes it as a batch through the filter.
TEST_F(FilteredOccTest, AttributeGroupsGoThroughTheFilter) {
  ROCKSDB_NAMESPACE::AttributeGroups groups;
  groups.emplace_back(db_->DefaultColumnFamily(),
                      ROCKSDB_NAMESPACE::WideColumns{{"col", "v"}});
  ASSERT_TRUE(db_->PutEntity(WriteOptions(), "grouped", groups).ok());
  ROCKSDB_NAMESPACE::PinnableWideColumns columns;
  ASSERT_TRUE(db_->GetEntity(ReadOptions(), db_->DefaultColumnFamily(),
                             "grouped", &columns)
                  .ok());
  EXPECT_EQ(FilterKeys(db_.get()), 1u);
}
#endif

}  // namespace
}  // namespace rocksdb_cuckoo
