// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Randomized model test: the same random sequence of transactional and
// non-transactional operations against a FilteredTransactionDB (or a
// FilteredOptimisticTransactionDB) and a plain TransactionDB (or
// OptimisticTransactionDB). Up to three transactions are open at once on one
// thread, with lock timeouts of 0, so lock conflicts (TimedOut), snapshot
// validation failures (Busy) and optimistic conflicts (Busy at Commit) are
// deterministic and must be the same in both. Every read's status and value
// must be the same; at checkpoints every key is read through both DBs, and
// the filter must hold exactly one fingerprint per live key. Includes
// savepoints, two-phase commit, reopening with prepared transactions and
// committing or rolling them back after recovery, flushes, and filter
// growth. TXN_MODEL_SEEDS=<n> runs more seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "filtered_txn_test_util.h"
#include "rocksdb/utilities/transaction.h"

namespace rocksdb_cuckoo {
namespace {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::FlushOptions;
using ROCKSDB_NAMESPACE::Iterator;
using ROCKSDB_NAMESPACE::OptimisticTransactionDB;
using ROCKSDB_NAMESPACE::OptimisticTransactionOptions;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::Transaction;
using ROCKSDB_NAMESPACE::TransactionDB;
using ROCKSDB_NAMESPACE::TransactionDBOptions;
using ROCKSDB_NAMESPACE::TransactionOptions;
using ROCKSDB_NAMESPACE::WriteBatch;
using ROCKSDB_NAMESPACE::WriteOptions;
using test::Key;
using test::TempDir;

struct ModelParam {
  bool optimistic;
  bool background_open;
};

std::string Describe(const Status& s) {
  return std::to_string(static_cast<int>(s.code())) + "/" +
         std::to_string(static_cast<int>(s.subcode()));
}

class TxnModel : public ::testing::TestWithParam<ModelParam> {
 protected:
  static constexpr int kKeys = 300;
  // Keys [kBulkBegin, kBulkBegin + kBulk) are written and deleted in bulk
  // transactions (filter growth under commits).
  static constexpr int kBulkBegin = 100000;
  static constexpr int kBulk = 3000;
  static constexpr int kSlots = 3;

  struct Slot {
    Transaction* subject = nullptr;
    Transaction* model = nullptr;
    std::string name;  // set once named (pessimistic 2PC)
    bool prepared = false;
    int savepoints = 0;
  };

  void OpenBoth() {
    FilteredDBOptions fopts = test::SmallFilterOptions(64);
    fopts.background_open = GetParam().background_open;
    TransactionDBOptions txn_options;
    txn_options.transaction_lock_timeout = 0;
    txn_options.default_lock_timeout = 0;
    if (GetParam().optimistic) {
      ASSERT_TRUE(test::OpenOccDB(dir_.Sub("subject"), fopts, &occ_).ok());
      ASSERT_TRUE(test::OpenPlainOccDB(dir_.Sub("model"), &occ_model_).ok());
      subject_db_ = occ_.get();
      model_db_ = occ_model_.get();
    } else {
      ASSERT_TRUE(
          test::OpenTxnDB(dir_.Sub("subject"), fopts, &pes_, txn_options).ok());
      ASSERT_TRUE(
          test::OpenPlainTxnDB(dir_.Sub("model"), &pes_model_, txn_options)
              .ok());
      subject_db_ = pes_.get();
      model_db_ = pes_model_.get();
    }
  }

  // Closes both with the transactions gone (prepared ones stay prepared in
  // the WAL), reopens, and puts the recovered prepared ones back in slots.
  void Reopen() {
    ++reopens_;
    std::map<std::string, int> prepared_slots;
    for (int i = 0; i < kSlots; ++i) {
      if (slots_[i].prepared) prepared_slots[slots_[i].name] = i;
      DropSlot(i, /*keep_prepared=*/true);
    }
    pes_.reset();
    pes_model_.reset();
    occ_.reset();
    occ_model_.reset();
    ASSERT_NO_FATAL_FAILURE(OpenBoth());
    if (GetParam().optimistic) return;
    std::vector<Transaction*> subject, model;
    pes_->GetAllPreparedTransactions(&subject);
    pes_model_->GetAllPreparedTransactions(&model);
    ASSERT_EQ(subject.size(), prepared_slots.size());
    ASSERT_EQ(model.size(), prepared_slots.size());
    for (Transaction* t : subject) {
      auto it = prepared_slots.find(t->GetName());
      ASSERT_NE(it, prepared_slots.end()) << t->GetName();
      Slot& slot = slots_[it->second];
      slot.subject = t;
      slot.model = pes_model_->GetTransactionByName(t->GetName());
      ASSERT_NE(slot.model, nullptr);
      ASSERT_EQ(t->GetState(), Transaction::PREPARED);
      slot.name = t->GetName();
      slot.prepared = true;
    }
  }

  void DropSlot(int i, bool keep_prepared = false) {
    Slot& slot = slots_[i];
    if (slot.subject != nullptr && !(keep_prepared && slot.prepared)) {
      // Not prepared: rolled back by deletion. Prepared and not kept: roll
      // back explicitly.
      if (slot.prepared) {
        EXPECT_TRUE(slot.subject->Rollback().ok());
        EXPECT_TRUE(slot.model->Rollback().ok());
      }
    }
    delete slot.subject;
    delete slot.model;
    slot = Slot();
  }

  Transaction* BeginSubject(bool snapshot) {
    Transaction* t;
    if (GetParam().optimistic) {
      OptimisticTransactionOptions o;
      o.set_snapshot = snapshot;
      t = occ_->BeginTransaction(WriteOptions(), o);
    } else {
      TransactionOptions o;
      o.set_snapshot = snapshot;
      o.lock_timeout = 0;
      t = pes_->BeginTransaction(WriteOptions(), o);
    }
    return t;
  }
  Transaction* BeginModel(bool snapshot) {
    if (GetParam().optimistic) {
      OptimisticTransactionOptions o;
      o.set_snapshot = snapshot;
      return occ_model_->BeginTransaction(WriteOptions(), o);
    }
    TransactionOptions o;
    o.set_snapshot = snapshot;
    o.lock_timeout = 0;
    return pes_model_->BeginTransaction(WriteOptions(), o);
  }

  void Same(const Status& a, const Status& b, const std::string& what) {
    const std::string op = what.substr(0, what.find(" key"));
    ++counts_[op +
              (a.ok() ? ""
                      : " -> " + std::string(a.IsNotFound()
                                                 ? "NotFound"
                                                 : a.ToString().substr(0, 9)))];
    ASSERT_EQ(Describe(a), Describe(b))
        << what << ": subject " << a.ToString() << ", model " << b.ToString()
        << " (step " << step_ << ")";
  }
  void SameRead(const Status& a, const std::string& va, const Status& b,
                const std::string& vb, const std::string& what) {
    ASSERT_NO_FATAL_FAILURE(Same(a, b, what));
    if (a.ok()) {
      ASSERT_EQ(va, vb) << what << " (step " << step_ << ")";
    }
  }

  uint64_t FilterSize() {
    if (GetParam().optimistic) return test::FilterKeys(occ_.get());
    return test::FilterKeys(pes_.get());
  }
  const cuckoo::LiveKeyFilter* Filter() {
    return GetParam().optimistic ? occ_->GetLiveKeyFilter(nullptr)
                                 : pes_->GetLiveKeyFilter(nullptr);
  }
  void WaitForRebuilds() {
    if (GetParam().optimistic) {
      occ_->WaitForFilterRebuilds();
    } else {
      pes_->WaitForFilterRebuilds();
    }
  }

  // Every key read through both DBs; the filter exact.
  void Check() {
    WaitForRebuilds();
    uint64_t live = 0;
    std::vector<int> keys;
    for (int k = 0; k < kKeys; ++k) keys.push_back(k);
    for (int k = kBulkBegin; k < kBulkBegin + kBulk; ++k) keys.push_back(k);
    for (int k : keys) {
      std::string a, b;
      Status sa = subject_db_->Get(ReadOptions(), Key(k), &a);
      Status sb = model_db_->Get(ReadOptions(), Key(k), &b);
      ASSERT_NO_FATAL_FAILURE(SameRead(sa, a, sb, b, "check " + Key(k)));
      if (sb.ok()) {
        ++live;
        ASSERT_TRUE(Filter()->MayContain(Key(k)))
            << "false negative " << Key(k) << " (step " << step_ << ")";
      }
    }
    ASSERT_EQ(FilterSize(), live) << "step " << step_;
  }

  // Half the picks from 20 hot keys, so that transactions conflict.
  std::string RandomKey() {
    const uint32_t r = rng_();
    return Key(static_cast<int>(r % 2 == 0 ? (r / 2) % 20 : (r / 2) % kKeys));
  }

  void TxnRead(Slot& slot) {
    const std::string key = RandomKey();
    ReadOptions ro;
    ReadOptions ro_model;
    if (slot.subject->GetSnapshot() != nullptr && rng_() % 3 == 0) {
      ro.snapshot = slot.subject->GetSnapshot();
      ro_model.snapshot = slot.model->GetSnapshot();
    }
    std::string a, b;
    Status sa, sb;
    switch (rng_() % 6) {
      case 0:
        sa = slot.subject->Get(ro, key, &a);
        sb = slot.model->Get(ro_model, key, &b);
        break;
      case 1: {
        PinnableSlice pa, pb;
        sa =
            slot.subject->Get(ro, subject_db_->DefaultColumnFamily(), key, &pa);
        sb = slot.model->Get(ro_model, model_db_->DefaultColumnFamily(), key,
                             &pb);
        a = pa.ToString();
        b = pb.ToString();
        break;
      }
      case 2: {
        // GetForUpdate: a snapshot read must be the transaction's snapshot.
        const bool exclusive = rng_() % 4 != 0;
        sa = slot.subject->GetForUpdate(ro, key, &a, exclusive);
        sb = slot.model->GetForUpdate(ro_model, key, &b, exclusive);
        break;
      }
      case 3: {
        PinnableSlice pa, pb;
        sa = slot.subject->GetForUpdate(ro, subject_db_->DefaultColumnFamily(),
                                        key, &pa);
        sb = slot.model->GetForUpdate(
            ro_model, model_db_->DefaultColumnFamily(), key, &pb);
        a = pa.ToString();
        b = pb.ToString();
        break;
      }
      case 4: {
        std::vector<std::string> keys = {key, RandomKey(), RandomKey()};
        std::vector<Slice> slices(keys.begin(), keys.end());
        std::vector<std::string> va, vb;
        const bool for_update = rng_() % 2 == 0;
        std::vector<Status> xa =
            for_update ? slot.subject->MultiGetForUpdate(ro, slices, &va)
                       : slot.subject->MultiGet(ro, slices, &va);
        std::vector<Status> xb =
            for_update ? slot.model->MultiGetForUpdate(ro_model, slices, &vb)
                       : slot.model->MultiGet(ro_model, slices, &vb);
        ASSERT_EQ(xa.size(), keys.size());
        ASSERT_EQ(xb.size(), keys.size());
        for (size_t i = 0; i < keys.size(); ++i) {
          ASSERT_NO_FATAL_FAILURE(
              SameRead(xa[i], va[i], xb[i], vb[i], "multiget " + keys[i]));
        }
        return;
      }
      default: {
        const size_t n = 4;
        std::vector<std::string> keys;
        for (size_t i = 0; i < n; ++i) keys.push_back(RandomKey());
        std::vector<Slice> slices(keys.begin(), keys.end());
        std::vector<PinnableSlice> va(n), vb(n);
        std::vector<Status> xa(n), xb(n);
        slot.subject->MultiGet(ro, subject_db_->DefaultColumnFamily(), n,
                               slices.data(), va.data(), xa.data());
        slot.model->MultiGet(ro_model, model_db_->DefaultColumnFamily(), n,
                             slices.data(), vb.data(), xb.data());
        for (size_t i = 0; i < n; ++i) {
          ASSERT_NO_FATAL_FAILURE(SameRead(xa[i], va[i].ToString(), xb[i],
                                           vb[i].ToString(),
                                           "batched multiget " + keys[i]));
        }
        return;
      }
    }
    ASSERT_NO_FATAL_FAILURE(SameRead(sa, a, sb, b, "txn read " + key));
  }

  void TxnWrite(Slot& slot) {
    const std::string key = RandomKey();
    const std::string value = "v" + std::to_string(step_);
    Status sa, sb;
    switch (rng_() % 7) {
      case 0:
      case 1:
      case 2:
        sa = slot.subject->Put(key, value);
        sb = slot.model->Put(key, value);
        break;
      case 3:
      case 4:
        sa = slot.subject->Delete(key);
        sb = slot.model->Delete(key);
        break;
      case 5:
        sa = slot.subject->Merge(key, value);
        sb = slot.model->Merge(key, value);
        break;
      default:
        sa = slot.subject->PutUntracked(key, value);
        sb = slot.model->PutUntracked(key, value);
        break;
    }
    ASSERT_NO_FATAL_FAILURE(Same(sa, sb, "txn write " + key));
  }

  void NonTxnWrite() {
    const std::string key = RandomKey();
    const std::string value = "w" + std::to_string(step_);
    Status sa, sb;
    switch (rng_() % 6) {
      case 0:
        sa = subject_db_->Put(WriteOptions(), key, value);
        sb = model_db_->Put(WriteOptions(), key, value);
        break;
      case 1:
        sa = subject_db_->Delete(WriteOptions(), key);
        sb = model_db_->Delete(WriteOptions(), key);
        break;
      case 2:
        sa = subject_db_->Merge(WriteOptions(), key, value);
        sb = model_db_->Merge(WriteOptions(), key, value);
        break;
      case 3:
        if (!GetParam().optimistic) {
          // DeleteRange: only without concurrency control (as RocksDB).
          const int first = static_cast<int>(rng_() % kKeys);
          const std::string begin = Key(first);
          const std::string end = Key(first + 1 + static_cast<int>(rng_() % 8));
          WriteBatch batch;
          batch.DeleteRange(begin, end);
          batch.Put(RandomKey(), value);
          WriteBatch copy = batch;
          ROCKSDB_NAMESPACE::TransactionDBWriteOptimizations skip;
          skip.skip_concurrency_control = true;
          sa = pes_->Write(WriteOptions(), skip, &batch);
          sb = pes_model_->Write(WriteOptions(), skip, &copy);
          break;
        }
        [[fallthrough]];
      default: {
        WriteBatch batch;
        const int n = 1 + static_cast<int>(rng_() % 6);
        for (int i = 0; i < n; ++i) {
          const std::string k = RandomKey();
          if (rng_() % 2 == 0) {
            batch.Put(k, value);
          } else {
            batch.Delete(k);
          }
        }
        WriteBatch copy = batch;
        sa = subject_db_->Write(WriteOptions(), &batch);
        sb = model_db_->Write(WriteOptions(), &copy);
        break;
      }
    }
    ASSERT_NO_FATAL_FAILURE(Same(sa, sb, "write " + key));
  }

  void Run(uint32_t seed, int steps) {
    rng_.seed(seed);
    ASSERT_NO_FATAL_FAILURE(OpenBoth());
    for (step_ = 0; step_ < steps; ++step_) {
      const int i = static_cast<int>(rng_() % kSlots);
      Slot& slot = slots_[i];
      const uint32_t r = rng_() % 100;
      if (slot.subject == nullptr) {
        if (r < 60) {
          const bool snapshot = rng_() % 3 == 0;
          slot.subject = BeginSubject(snapshot);
          slot.model = BeginModel(snapshot);
          if (!GetParam().optimistic && rng_() % 3 == 0) {
            slot.name =
                "xid" + std::to_string(seed) + "_" + std::to_string(step_);
            Same(slot.subject->SetName(slot.name),
                 slot.model->SetName(slot.name), "SetName");
          }
        } else if (r < 85) {
          ASSERT_NO_FATAL_FAILURE(NonTxnWrite());
        } else if (r < 95) {
          std::string a, b;
          const std::string key = RandomKey();
          ASSERT_NO_FATAL_FAILURE(SameRead(
              subject_db_->Get(ReadOptions(), key, &a), a,
              model_db_->Get(ReadOptions(), key, &b), b, "db read " + key));
        } else if (r < 97) {
          ASSERT_TRUE(subject_db_->Flush(FlushOptions()).ok());
          ASSERT_TRUE(model_db_->Flush(FlushOptions()).ok());
        } else if (r < 99) {
          ASSERT_NO_FATAL_FAILURE(Check());
        } else {
          ASSERT_NO_FATAL_FAILURE(Reopen());
        }
        continue;
      }
      if (slot.prepared) {
        // Prepared: only Commit or Rollback (or a reopen) may follow.
        if (r < 50) {
          ASSERT_NO_FATAL_FAILURE(Same(
              slot.subject->Commit(), slot.model->Commit(), "prepared commit"));
          slot.prepared = false;
          DropSlot(i);
        } else if (r < 70) {
          ASSERT_NO_FATAL_FAILURE(Same(slot.subject->Rollback(),
                                       slot.model->Rollback(),
                                       "prepared rollback"));
          slot.prepared = false;
          DropSlot(i);
        } else if (r < 75) {
          ASSERT_NO_FATAL_FAILURE(Reopen());
        }
        continue;
      }
      if (r < 30) {
        ASSERT_NO_FATAL_FAILURE(TxnWrite(slot));
      } else if (r < 60) {
        ASSERT_NO_FATAL_FAILURE(TxnRead(slot));
      } else if (r < 66) {
        slot.subject->SetSavePoint();
        slot.model->SetSavePoint();
        ++slot.savepoints;
      } else if (r < 71) {
        ASSERT_NO_FATAL_FAILURE(Same(slot.subject->RollbackToSavePoint(),
                                     slot.model->RollbackToSavePoint(),
                                     "rollback to savepoint"));
      } else if (r < 74) {
        ASSERT_NO_FATAL_FAILURE(Same(slot.subject->PopSavePoint(),
                                     slot.model->PopSavePoint(),
                                     "pop savepoint"));
      } else if (r < 75) {
        // Bulk: a run of keys put or deleted in this transaction.
        const int begin = kBulkBegin + static_cast<int>(rng_() % kBulk);
        const int end = std::min(kBulkBegin + kBulk,
                                 begin + static_cast<int>(rng_() % 1500));
        const bool put = rng_() % 3 != 0;
        for (int k = begin; k < end; ++k) {
          Status sa = put ? slot.subject->Put(Key(k), "bulk")
                          : slot.subject->Delete(Key(k));
          Status sb = put ? slot.model->Put(Key(k), "bulk")
                          : slot.model->Delete(Key(k));
          ASSERT_NO_FATAL_FAILURE(Same(sa, sb, "bulk"));
        }
      } else if (r < 88) {
        if (!slot.name.empty() && rng_() % 2 == 0) {
          ASSERT_NO_FATAL_FAILURE(
              Same(slot.subject->Prepare(), slot.model->Prepare(), "prepare"));
          slot.prepared = slot.subject->GetState() == Transaction::PREPARED;
          if (slot.prepared && rng_() % 2 == 0) {
            const std::string key = RandomKey();
            slot.subject->GetCommitTimeWriteBatch()->Put(key, "ct");
            slot.model->GetCommitTimeWriteBatch()->Put(key, "ct");
          }
          continue;
        }
        ASSERT_NO_FATAL_FAILURE(
            Same(slot.subject->Commit(), slot.model->Commit(), "commit"));
        DropSlot(i);
      } else if (r < 94) {
        ASSERT_NO_FATAL_FAILURE(
            Same(slot.subject->Rollback(), slot.model->Rollback(), "rollback"));
        DropSlot(i);
      } else {
        ASSERT_NO_FATAL_FAILURE(NonTxnWrite());
      }
    }
    for (int i = 0; i < kSlots; ++i) DropSlot(i);
    ASSERT_NO_FATAL_FAILURE(Check());
    // What the run exercised (outcomes by operation).
    std::string summary;
    for (const auto& c : counts_) {
      summary += "  " + c.first + ": " + std::to_string(c.second) + "\n";
    }
    const FilteredDBStats stats = GetParam().optimistic
                                      ? test::FilterStats(occ_.get())
                                      : test::FilterStats(pes_.get());
    std::printf("seed %u: reopens %d, splits %llu, rescans %llu\n%s", seed,
                reopens_, static_cast<unsigned long long>(stats.splits),
                static_cast<unsigned long long>(stats.rescans),
                summary.c_str());
    counts_.clear();
    reopens_ = 0;
  }

  void TearDown() override {
    for (int i = 0; i < kSlots; ++i) DropSlot(i);
  }

  TempDir dir_;
  std::mt19937 rng_;
  int step_ = 0;
  int reopens_ = 0;
  std::map<std::string, int> counts_;
  Slot slots_[kSlots];
  std::unique_ptr<FilteredTransactionDB> pes_;
  std::unique_ptr<TransactionDB> pes_model_;
  std::unique_ptr<FilteredOptimisticTransactionDB> occ_;
  std::unique_ptr<OptimisticTransactionDB> occ_model_;
  DB* subject_db_ = nullptr;
  DB* model_db_ = nullptr;
};

TEST_P(TxnModel, RandomOperations) {
  int seeds = 3;
  if (const char* env = std::getenv("TXN_MODEL_SEEDS")) seeds = std::atoi(env);
  for (int seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ASSERT_NO_FATAL_FAILURE(Run(static_cast<uint32_t>(seed), 4000));
    TearDown();
    pes_.reset();
    pes_model_.reset();
    occ_.reset();
    occ_model_.reset();
    ASSERT_TRUE(
        ROCKSDB_NAMESPACE::DestroyDB(dir_.Sub("subject"), test::TestOptions())
            .ok());
    ASSERT_TRUE(
        ROCKSDB_NAMESPACE::DestroyDB(dir_.Sub("model"), test::TestOptions())
            .ok());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, TxnModel,
    ::testing::Values(ModelParam{false, false}, ModelParam{false, true},
                      ModelParam{true, false}, ModelParam{true, true}),
    [](const ::testing::TestParamInfo<ModelParam>& p) {
      return std::string(p.param.optimistic ? "Optimistic" : "Pessimistic") +
             (p.param.background_open ? "BackgroundOpen" : "");
    });

}  // namespace
}  // namespace rocksdb_cuckoo
