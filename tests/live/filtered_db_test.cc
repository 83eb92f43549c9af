// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB against real RocksDB databases in temporary directories.
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../../plugin/cuckoo/live/test_hooks.h"
#include "open_db.h"
#include "rocksdb/sst_file_writer.h"
#include "rocksdb/utilities/checkpoint.h"
#include "test_util.h"

#ifndef CUCKOO_CRASH_WRITER
#error "CUCKOO_CRASH_WRITER must name the live_crash_writer binary"
#endif

namespace rocksdb_cuckoo {
namespace {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::FlushOptions;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WriteBatch;
using ROCKSDB_NAMESPACE::WriteOptions;
using test::Key;
using test::TempDir;

using Model = std::map<std::string, std::string>;

FilteredDBStats Stats(FilteredDB* db, ColumnFamilyHandle* cf = nullptr) {
  FilteredDBStats s;
  EXPECT_TRUE(db->GetFilterStats(cf, &s).ok());
  return s;
}

// Every live key is found with its value and passes the filter; every other
// key of the universe is NotFound; the filter holds exactly one fingerprint
// per live key (at least one with unchecked deletes: `exact_count` false).
void VerifyModel(FilteredDB* db, const Model& model, int universe,
                 ColumnFamilyHandle* cf = nullptr, bool exact_count = true) {
  const cuckoo::LiveKeyFilter* filter = db->GetLiveKeyFilter(cf);
  ASSERT_NE(filter, nullptr);
  db->WaitForDeleteChecks();  // exact from here on
  if (cf == nullptr) cf = db->DefaultColumnFamily();
  if (!filter->ready()) {
    // Still building (background_open): the reads go to the DB and must
    // match the model too; then the filter itself is checked once built.
    for (int i = 0; i < universe; ++i) {
      std::string value;
      const Status s = db->Get(ReadOptions(), cf, Key(i), &value);
      ASSERT_EQ(s.ok(), model.count(Key(i)) == 1) << Key(i);
    }
    db->WaitForFilterRebuilds();
    db->WaitForDeleteChecks();
    ASSERT_TRUE(filter->ready());
  }
  for (int i = 0; i < universe; ++i) {
    const std::string key = Key(i);
    std::string value;
    const Status s = db->Get(ReadOptions(), cf, key, &value);
    auto it = model.find(key);
    if (it == model.end()) {
      ASSERT_TRUE(s.IsNotFound()) << key << ": " << s.ToString();
    } else {
      ASSERT_TRUE(s.ok()) << key << ": " << s.ToString();
      ASSERT_EQ(value, it->second) << key;
      ASSERT_TRUE(filter->MayContain(key)) << "false negative for " << key;
    }
  }
  if (exact_count) {
    ASSERT_EQ(filter->size(), model.size());
  } else {
    ASSERT_GE(filter->size(), model.size());
  }
}

// Applies a batch to the model in order, as RocksDB does.
struct ModelOp {
  enum Type { kPut, kDelete, kSingleDelete, kMerge, kDeleteRange } type;
  std::string key;
  std::string arg;  // value, operand or range end
};

void ApplyToModel(const ModelOp& op, Model* model) {
  switch (op.type) {
    case ModelOp::kPut:
      (*model)[op.key] = op.arg;
      break;
    case ModelOp::kDelete:
    case ModelOp::kSingleDelete:
      model->erase(op.key);
      break;
    case ModelOp::kMerge:
      (*model)[op.key] += op.arg;  // a missing base is ""
      break;
    case ModelOp::kDeleteRange:
      if (op.key < op.arg) {
        model->erase(model->lower_bound(op.key), model->lower_bound(op.arg));
      }
      break;
  }
}

void AddToBatch(const ModelOp& op, WriteBatch* batch) {
  switch (op.type) {
    case ModelOp::kPut:
      ASSERT_TRUE(batch->Put(op.key, op.arg).ok());
      break;
    case ModelOp::kDelete:
      ASSERT_TRUE(batch->Delete(op.key).ok());
      break;
    case ModelOp::kSingleDelete:
      ASSERT_TRUE(batch->SingleDelete(op.key).ok());
      break;
    case ModelOp::kMerge:
      ASSERT_TRUE(batch->Merge(op.key, op.arg).ok());
      break;
    case ModelOp::kDeleteRange:
      ASSERT_TRUE(batch->DeleteRange(op.key, op.arg).ok());
      break;
  }
}

// ------------------------------------------------------------------ basics

TEST(FilteredDB, PutGetDeleteAndCounters) {
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.recent_keys = 0;  // the counters of the checks (see RecentKeys tests)
  ASSERT_TRUE(
      FilteredDB::Open(test::TestOptions(), dir.path(), fopts, &db).ok());
  ASSERT_TRUE(db->HasFilter(nullptr));
  ASSERT_TRUE(db->Put(WriteOptions(), "apple", "red").ok());
  std::string value;
  ASSERT_TRUE(db->Get(ReadOptions(), "apple", &value).ok());
  EXPECT_EQ(value, "red");
  EXPECT_TRUE(db->Get(ReadOptions(), "pear", &value).IsNotFound());
  EXPECT_TRUE(db->GetLiveKeyFilter(nullptr)->MayContain("apple"));
  EXPECT_FALSE(db->GetLiveKeyFilter(nullptr)->MayContain("pear"));
  std::string v2;
  EXPECT_FALSE(db->KeyMayExist(ReadOptions(), "pear", &v2));

  FilteredDBStats s = Stats(db.get());
  EXPECT_EQ(s.num_keys, 1u);
  EXPECT_EQ(s.inserts, 1u);
  EXPECT_EQ(s.maybe_checks, 0u);  // "apple" was absent from the filter
  EXPECT_GT(s.table_bytes, 0u);
  EXPECT_GT(s.memory_bytes, s.table_bytes);
  EXPECT_NEAR(s.bits_per_key, double(s.table_bytes) * 8, 1e-9);
  EXPECT_EQ(s.snapshot_status, "disabled");

  // Overwrite: the filter says "maybe", a point read finds it live, no
  // second copy.
  ASSERT_TRUE(db->Put(WriteOptions(), "apple", "green").ok());
  s = Stats(db.get());
  EXPECT_EQ(s.num_keys, 1u);
  EXPECT_EQ(s.maybe_checks, 1u);
  EXPECT_EQ(s.maybe_checks_live, 1u);

  // Deleting a key that was never inserted erases nothing and needs no read.
  ASSERT_TRUE(db->Delete(WriteOptions(), "pear").ok());
  s = Stats(db.get());
  EXPECT_EQ(s.erases, 0u);
  EXPECT_EQ(s.maybe_checks, 1u);

  // The delete of a live key is checked after the write, at a snapshot.
  ASSERT_TRUE(db->Delete(WriteOptions(), "apple").ok());
  db->WaitForDeleteChecks();
  s = Stats(db.get());
  EXPECT_EQ(s.num_keys, 0u);
  EXPECT_EQ(s.erases, 1u);
  EXPECT_EQ(s.maybe_checks, 2u);
  EXPECT_EQ(s.deferred_checks, 1u);
  EXPECT_TRUE(db->Get(ReadOptions(), "apple", &value).IsNotFound());
  // A second delete finds the filter empty: no erase, no read.
  ASSERT_TRUE(db->Delete(WriteOptions(), "apple").ok());
  s = Stats(db.get());
  EXPECT_EQ(s.erases, 1u);
  EXPECT_EQ(s.erase_misses, 0u);
  EXPECT_EQ(s.maybe_checks, 2u);
  EXPECT_GT(s.lookups, 0u);
  EXPECT_GT(s.absent, 0u);
}

// With assume_unique_writes the maybe-check reads are skipped for Put and
// Delete, and the filter is still exact for a workload keeping the promise.
TEST(FilteredDB, AssumeUniqueWritesSkipsReads) {
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.assume_unique_writes = true;
  fopts.recent_keys = 0;  // every write's liveness from the promise
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(
      FilteredDB::Open(test::TestOptions(), dir.path(), fopts, &db).ok());
  Model model;
  for (int i = 0; i < 3000; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
    model[Key(i)] = "v";
    if (i >= 1000) {
      ASSERT_TRUE(db->Delete(WriteOptions(), Key(i - 1000)).ok());
      model.erase(Key(i - 1000));
    }
  }
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), model, 3000));
  const FilteredDBStats s = Stats(db.get());
  EXPECT_EQ(s.maybe_checks, 0u);
  EXPECT_GE(s.assumed_unique,
            2000u);  // every delete, plus puts on false positives
  // Merge is still checked.
  ASSERT_TRUE(db->Merge(WriteOptions(), Key(2999), "x").ok());
  EXPECT_EQ(Stats(db.get()).maybe_checks, 1u);
}

TEST(FilteredDB, ReadsWithASnapshotBypassTheFilter) {
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), dir.path(),
                               test::SmallFilterOptions(), &db)
                  .ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "k", "old").ok());
  const ROCKSDB_NAMESPACE::Snapshot* snap = db->GetSnapshot();
  ASSERT_TRUE(db->Delete(WriteOptions(), "k").ok());
  std::string value;
  EXPECT_TRUE(db->Get(ReadOptions(), "k", &value).IsNotFound());
  ReadOptions at_snapshot;
  at_snapshot.snapshot = snap;
  ASSERT_TRUE(db->Get(at_snapshot, "k", &value).ok());
  EXPECT_EQ(value, "old");
  db->ReleaseSnapshot(snap);
}

// Both MultiGet interfaces, at sizes below and above the batched read's
// stack scratch (256 keys) and its probe chunk (64 keys).
TEST(FilteredDB, MultiGetBothInterfaces) {
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), dir.path(),
                               test::SmallFilterOptions(), &db)
                  .ok());
  constexpr int kKeys = 1000;
  for (int i = 0; i < kKeys; i += 2)
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v" + Key(i)).ok());
  for (const int n : {1, 63, 100, 257, kKeys}) {
    SCOPED_TRACE(n);
    std::vector<std::string> key_strings;
    for (int i = 0; i < n; ++i) key_strings.push_back(Key(i));
    std::vector<Slice> keys(key_strings.begin(), key_strings.end());
    std::vector<std::string> values;
    std::vector<Status> st = db->MultiGet(ReadOptions(), keys, &values);
    ASSERT_EQ(st.size(), size_t(n));
    ASSERT_EQ(values.size(), size_t(n));
    for (int i = 0; i < n; ++i) {
      if (i % 2 == 0) {
        ASSERT_TRUE(st[i].ok()) << i;
        EXPECT_EQ(values[i], "v" + Key(i));
      } else {
        ASSERT_TRUE(st[i].IsNotFound()) << i;
      }
    }
    std::vector<PinnableSlice> pvalues(n);
    std::vector<Status> pst(n);
    db->MultiGet(ReadOptions(), db->DefaultColumnFamily(), keys.size(),
                 keys.data(), pvalues.data(), pst.data(),
                 /*sorted_input=*/true);
    for (int i = 0; i < n; ++i) {
      if (i % 2 == 0) {
        ASSERT_TRUE(pst[i].ok()) << i;
        EXPECT_EQ(pvalues[i].ToString(), "v" + Key(i));
      } else {
        ASSERT_TRUE(pst[i].IsNotFound()) << i;
      }
    }
    // Only absent keys: answered whole by the filter (up to its false
    // positives, which the DB answers NotFound as well).
    std::vector<std::string> absent_strings;
    for (int i = 0; i < n; ++i) absent_strings.push_back(Key(kKeys + i));
    std::vector<Slice> absent(absent_strings.begin(), absent_strings.end());
    db->MultiGet(ReadOptions(), db->DefaultColumnFamily(), absent.size(),
                 absent.data(), pvalues.data(), pst.data(),
                 /*sorted_input=*/false);
    for (int i = 0; i < n; ++i) ASSERT_TRUE(pst[i].IsNotFound()) << i;
  }
}

// ------------------------------------------------------------------ model

struct ModelParam {
  const char* name;
  bool assume_unique;
  bool background_rescan;
  bool background_open = false;
  uint64_t recent_keys = FilteredDBOptions().recent_keys;
  double unchecked_delete_ratio = 0;
};

void PrintTo(const ModelParam& p, std::ostream* os) { *os << p.name; }

class FilteredDBModelTest : public ::testing::TestWithParam<ModelParam> {};

// Random Put / Delete / SingleDelete / Merge / DeleteRange / batches /
// flushes / reopens, checked against a std::map after every few steps.
TEST_P(FilteredDBModelTest, RandomOperationsMatchModel) {
  const ModelParam param = GetParam();
  TempDir dir;
  const int kUniverse = 1500;
  const int kSteps = 2500;
  FilteredDBOptions fopts =
      test::SmallFilterOptions(128);  // grows several times
  fopts.assume_unique_writes = param.assume_unique;
  fopts.background_rescan = param.background_rescan;
  fopts.background_open = param.background_open;
  fopts.recent_keys = param.recent_keys;
  fopts.unchecked_delete_ratio = param.unchecked_delete_ratio;
  fopts.snapshot_dir = dir.Sub("snapshots");
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(
      FilteredDB::Open(test::TestOptions(), dir.Sub("db"), fopts, &db).ok());
  Model model;
  std::set<std::string> single_ok;  // live keys written by exactly one Put
  std::mt19937 rng(param.assume_unique ? 17 : 23);
  auto random_key = [&] { return Key(static_cast<int>(rng() % kUniverse)); };
  // With assume_unique the workload keeps the promise: Put only creates,
  // Delete only removes live keys.
  auto live_key = [&]() -> std::string {
    if (model.empty()) return "";
    auto it = model.lower_bound(random_key());
    if (it == model.end()) it = model.begin();
    return it->first;
  };
  auto absent_key = [&]() -> std::string {
    for (int tries = 0; tries < 100; ++tries) {
      std::string k = random_key();
      if (model.count(k) == 0) return k;
    }
    return "";
  };
  int reopens = 0;
  for (int step = 0; step < kSteps; ++step) {
    const int choice = static_cast<int>(rng() % 100);
    const std::string value = "v" + std::to_string(step);
    if (choice < 35) {
      const std::string k = param.assume_unique ? absent_key() : random_key();
      if (k.empty()) continue;
      ASSERT_TRUE(db->Put(WriteOptions(), k, value).ok());
      if (model.count(k))
        single_ok.erase(k);
      else
        single_ok.insert(k);
      model[k] = value;
    } else if (choice < 55) {
      const std::string k = param.assume_unique ? live_key() : random_key();
      if (k.empty()) continue;
      ASSERT_TRUE(db->Delete(WriteOptions(), k).ok());
      model.erase(k);
      single_ok.erase(k);
    } else if (choice < 60) {
      if (single_ok.empty()) continue;
      const std::string k = *single_ok.begin();
      ASSERT_TRUE(db->SingleDelete(WriteOptions(), k).ok());
      model.erase(k);
      single_ok.erase(k);
    } else if (choice < 67 && !param.assume_unique) {
      const std::string k = random_key();
      ASSERT_TRUE(db->Merge(WriteOptions(), k, "+m").ok());
      model[k] += "+m";
      single_ok.erase(k);
    } else if (choice < 70) {
      std::string a = random_key(), b = random_key();
      if (b < a) std::swap(a, b);
      // Keep ranges short most of the time.
      if (rng() % 4 != 0)
        b = Key(
            std::min(kUniverse, std::stoi(a.substr(3)) + 1 + int(rng() % 30)));
      ASSERT_TRUE(
          db->DeleteRange(WriteOptions(), db->DefaultColumnFamily(), a, b)
              .ok());
      ApplyToModel(ModelOp{ModelOp::kDeleteRange, a, b}, &model);
      for (auto it = single_ok.begin(); it != single_ok.end();) {
        it = model.count(*it) ? std::next(it) : single_ok.erase(it);
      }
    } else if (choice < 92) {
      // A batch of 1..12 operations, possibly touching a key several times.
      WriteBatch batch;
      std::vector<ModelOp> ops;
      Model after = model;
      std::set<std::string> used;
      const int n = 1 + static_cast<int>(rng() % 12);
      for (int j = 0; j < n; ++j) {
        const int kind = static_cast<int>(rng() % 10);
        ModelOp op;
        if (param.assume_unique) {
          // Distinct keys; creates absent keys, deletes live ones.
          if (kind < 5) {
            op = ModelOp{ModelOp::kPut, absent_key(),
                         value + "b" + std::to_string(j)};
            if (op.key.empty() || after.count(op.key)) continue;
          } else if (kind < 9) {
            op = ModelOp{ModelOp::kDelete, live_key(), ""};
            if (op.key.empty() || !after.count(op.key)) continue;
          } else {
            std::string a = random_key();
            op = ModelOp{ModelOp::kDeleteRange, a,
                         Key(std::min(kUniverse, std::stoi(a.substr(3)) + 5))};
          }
          if (op.type != ModelOp::kDeleteRange && !used.insert(op.key).second)
            continue;
        } else {
          const std::string k = random_key();
          if (kind < 4) {
            op = ModelOp{ModelOp::kPut, k, value + "b" + std::to_string(j)};
          } else if (kind < 7) {
            op = ModelOp{ModelOp::kDelete, k, ""};
          } else if (kind < 9) {
            op = ModelOp{ModelOp::kMerge, k, "+b"};
          } else {
            op = ModelOp{ModelOp::kDeleteRange, k,
                         Key(std::min(kUniverse, std::stoi(k.substr(3)) + 1 +
                                                     int(rng() % 10)))};
          }
        }
        ApplyToModel(op, &after);
        ops.push_back(op);
        ASSERT_NO_FATAL_FAILURE(AddToBatch(op, &batch));
      }
      ASSERT_TRUE(db->Write(WriteOptions(), &batch).ok());
      model = after;
      single_ok.clear();  // conservative: batches may rewrite keys
    } else if (choice < 96) {
      ASSERT_TRUE(db->Flush(FlushOptions()).ok());
    } else {
      // Clean close (writes a snapshot) and reopen; or reopen without the
      // snapshot by removing it.
      ASSERT_TRUE(db->Close().ok());
      db.reset();
      if (rng() % 2 == 0) {
        std::error_code ec;
        std::filesystem::remove_all(fopts.snapshot_dir, ec);
      }
      ASSERT_TRUE(
          FilteredDB::Open(test::TestOptions(), dir.Sub("db"), fopts, &db)
              .ok());
      ++reopens;
    }
    if (step % 100 == 99) {
      ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), model, kUniverse, nullptr,
                                          param.unchecked_delete_ratio == 0))
          << "step " << step;
    }
  }
  db->WaitForFilterRebuilds();
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), model, kUniverse, nullptr,
                                      param.unchecked_delete_ratio == 0));
  const FilteredDBStats s = Stats(db.get());
  EXPECT_GT(reopens, 0);
  EXPECT_EQ(s.check_errors, 0u);
  if (param.assume_unique) {
    EXPECT_EQ(s.maybe_checks, 0u);
  } else {
    EXPECT_GT(s.maybe_checks, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, FilteredDBModelTest,
    ::testing::Values(
        ModelParam{"Exact", false, true},
        ModelParam{"ExactSyncRescan", false, false},
        ModelParam{"AssumeUnique", true, true},
        // Reopens without a snapshot return before the scan:
        // the steps after them run while the filter builds.
        ModelParam{"ExactBackgroundOpen", false, true, true},
        // Every write's liveness from the filter and reads
        // (no record of recent writes), and a record too small
        // to hold the universe (keys fall out).
        ModelParam{"ExactNoRecentKeys", false, true, false, 0},
        ModelParam{"ExactFewRecentKeys", false, true, false, 1024},
        // Deletes that leave their fingerprints (no reads),
        // with and without the record of recent writes.
        ModelParam{"Unchecked", false, true, false,
                   FilteredDBOptions().recent_keys, 0.01},
        ModelParam{"UncheckedNoRecentKeys", false, true, false, 0, 0.01}),
    [](const ::testing::TestParamInfo<ModelParam>& info) {
      return info.param.name;
    });

// ------------------------------------------------------------------
// DeleteRange

TEST(FilteredDB, DeleteRangeErasesExactlyTheLiveKeysOfTheRange) {
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), dir.path(),
                               test::SmallFilterOptions(), &db)
                  .ok());
  Model model;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
    model[Key(i)] = "v";
  }
  ASSERT_TRUE(db->Flush(FlushOptions()).ok());
  ASSERT_TRUE(db->DeleteRange(WriteOptions(), db->DefaultColumnFamily(),
                              Key(100), Key(300))
                  .ok());
  ApplyToModel(ModelOp{ModelOp::kDeleteRange, Key(100), Key(300)}, &model);
  EXPECT_EQ(Stats(db.get()).range_deleted, 200u);
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), model, 1000));

  // In one batch: a put inside a later range dies, a put after the range
  // lives, and overlapping / empty / reversed ranges are handled.
  WriteBatch batch;
  std::vector<ModelOp> ops = {
      {ModelOp::kPut, Key(150), "a"},  // re-created, then deleted below
      {ModelOp::kDeleteRange, Key(140), Key(420)},
      {ModelOp::kDeleteRange, Key(400), Key(450)},
      {ModelOp::kPut, Key(120), "b"},  // inside the range, after it: lives
      {ModelOp::kDeleteRange, Key(600), Key(600)},
      {ModelOp::kMerge, Key(410), "m"},  // after its range: lives as "m"
  };
  for (const auto& op : ops) {
    ASSERT_NO_FATAL_FAILURE(AddToBatch(op, &batch));
    ApplyToModel(op, &model);
  }
  ASSERT_TRUE(db->Write(WriteOptions(), &batch).ok());
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), model, 1000));
  std::string value;
  ASSERT_TRUE(db->Get(ReadOptions(), Key(410), &value).ok());
  EXPECT_EQ(value, "m");
}

// ------------------------------------------------------------------ column
// families

TEST(FilteredDB, OneFilterPerOptedInColumnFamily) {
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.filtered_column_families = {"default", "a"};
  std::vector<ColumnFamilyHandle*> handles;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(
      test::OpenFamilies(dir.path(), {"a", "b"}, fopts, &handles, &db).ok());
  // Handles go before the DB, also when an assertion returns early.
  struct HandleGuard {
    FilteredDB* db;
    std::vector<ColumnFamilyHandle*>* handles;
    ~HandleGuard() { test::DestroyHandles(db, handles); }
  } guard{db.get(), &handles};
  ASSERT_EQ(handles.size(), 3u);
  EXPECT_TRUE(db->HasFilter(handles[0]));
  EXPECT_TRUE(db->HasFilter(handles[1]));
  EXPECT_FALSE(db->HasFilter(handles[2]));
  FilteredDBStats unused;
  EXPECT_TRUE(db->GetFilterStats(handles[2], &unused).IsNotFound());
  EXPECT_EQ(db->GetLiveKeyFilter(handles[2]), nullptr);

  Model models[3];
  for (int i = 0; i < 300; ++i) {
    for (int c = 0; c < 3; ++c) {
      if ((i + c) % 3 == 0) continue;
      ASSERT_TRUE(
          db->Put(WriteOptions(), handles[c], Key(i), "c" + std::to_string(c))
              .ok());
      models[c][Key(i)] = "c" + std::to_string(c);
    }
  }
  WriteBatch batch;  // spans all three column families
  ASSERT_TRUE(batch.Delete(handles[0], Key(1)).ok());
  ASSERT_TRUE(batch.DeleteRange(handles[1], Key(10), Key(50)).ok());
  ASSERT_TRUE(batch.Put(handles[1], Key(20), "again").ok());
  ASSERT_TRUE(batch.Delete(handles[2], Key(2)).ok());
  ASSERT_TRUE(db->Write(WriteOptions(), &batch).ok());
  models[0].erase(Key(1));
  ApplyToModel(ModelOp{ModelOp::kDeleteRange, Key(10), Key(50)}, &models[1]);
  models[1][Key(20)] = "again";
  models[2].erase(Key(2));
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), models[0], 300, handles[0]));
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), models[1], 300, handles[1]));
  for (int i = 0; i < 300; ++i) {
    std::string v;
    const Status s = db->Get(ReadOptions(), handles[2], Key(i), &v);
    ASSERT_EQ(s.ok(), models[2].count(Key(i)) == 1) << i;
  }
  // Batched MultiGet over keys of all three families in one call (the
  // entry point every MultiGet reaches from RocksDB 9.0), in runs and mixed.
  {
    std::vector<std::string> key_strings;
    std::vector<ColumnFamilyHandle*> cfs;
    std::vector<int> family;
    for (int i = 0; i < 300; ++i) {
      const int c = (i < 150) ? (i / 50) : (i % 3);  // three runs, then mixed
      key_strings.push_back(Key(i));
      cfs.push_back(handles[c]);
      family.push_back(c);
    }
    std::vector<Slice> keys(key_strings.begin(), key_strings.end());
    std::vector<PinnableSlice> values(keys.size());
    std::vector<Status> st(keys.size());
    FilteredDBStats before;
    ASSERT_TRUE(db->GetFilterStats(handles[0], &before).ok());
    db->MultiGet(ReadOptions(), keys.size(), cfs.data(), keys.data(),
                 values.data(), st.data());
    for (size_t i = 0; i < keys.size(); ++i) {
      const Model& m = models[family[i]];
      auto it = m.find(key_strings[i]);
      if (it == m.end()) {
        ASSERT_TRUE(st[i].IsNotFound()) << i << " " << st[i].ToString();
      } else {
        ASSERT_TRUE(st[i].ok()) << i << " " << st[i].ToString();
        EXPECT_EQ(values[i].ToString(), it->second) << i;
      }
    }
    FilteredDBStats after;
    ASSERT_TRUE(db->GetFilterStats(handles[0], &after).ok());
    EXPECT_GT(after.absent,
              before.absent);  // the filter answered, not only the DB
  }
  // Dropping a filtered column family removes its filter.
  ASSERT_TRUE(db->DropColumnFamily(handles[1]).ok());
  EXPECT_FALSE(db->HasFilter(handles[1]));
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), models[0], 300, handles[0]));
}

TEST(FilteredDB, UnknownColumnFamilyToFilterIsAnError) {
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.filtered_column_families = {"no_such_cf"};
  std::unique_ptr<FilteredDB> db;
  const Status s =
      FilteredDB::Open(test::TestOptions(), dir.path(), fopts, &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(db, nullptr);
  fopts = test::SmallFilterOptions();
  fopts.filter.max_load = 2.0;
  EXPECT_TRUE(FilteredDB::Open(test::TestOptions(), dir.path(), fopts, &db)
                  .IsInvalidArgument());
}

// ------------------------------------------------------------------ growth

struct GrowthParam {
  const char* name;
  bool background_rescan;
  int batch_size;  // keys per write
};

void PrintTo(const GrowthParam& p, std::ostream* os) { *os << p.name; }

class FilteredDBGrowthTest : public ::testing::TestWithParam<GrowthParam> {};

TEST_P(FilteredDBGrowthTest, GrowsPastInitialCapacityWithoutLosingKeys) {
  const GrowthParam param = GetParam();
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions(500);
  fopts.background_rescan = param.background_rescan;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(
      FilteredDB::Open(test::TestOptions(), dir.path(), fopts, &db).ok());
  const cuckoo::LiveKeyFilter* filter = db->GetLiveKeyFilter(nullptr);
  const uint64_t initial_capacity = Stats(db.get()).capacity;
  const int kKeys = 40000;
  uint64_t false_negatives = 0;
  for (int i = 0; i < kKeys;) {
    WriteBatch batch;
    const int end = std::min(kKeys, i + param.batch_size);
    for (int j = i; j < end; ++j) ASSERT_TRUE(batch.Put(Key(j), "v").ok());
    ASSERT_TRUE(db->Write(WriteOptions(), &batch).ok());
    // Everything written so far stays visible, during growth too.
    for (int j = std::max(0, i - 50); j < end; ++j)
      false_negatives += !filter->MayContain(Key(j));
    i = end;
  }
  EXPECT_EQ(false_negatives, 0u);
  db->WaitForFilterRebuilds();
  Model model;
  for (int i = 0; i < kKeys; ++i) model[Key(i)] = "v";
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), model, kKeys + 100));
  const FilteredDBStats s = Stats(db.get());
  EXPECT_GT(s.capacity, 40 * initial_capacity);
  // Doublings by splits, and rebuilds from the DB once splits made the
  // fingerprints narrow (rescan_below_bits).
  EXPECT_GE(s.splits, 3u);
  EXPECT_GE(s.rescans, 1u);
  EXPECT_GE(s.rebuilds, 1 + s.rescans);  // the open build plus rescans
  EXPECT_LE(s.load_factor, 0.97);
  EXPECT_FALSE(s.rebuild_in_progress);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, FilteredDBGrowthTest,
    ::testing::Values(GrowthParam{"Background", true, 1},
                      GrowthParam{"Synchronous", false, 1},
                      GrowthParam{"BackgroundBatches", true, 97},
                      // One batch far larger than the table: the writer grows
                      // in the middle of inserting it.
                      GrowthParam{"OneHugeBatch", true, 40000}),
    [](const ::testing::TestParamInfo<GrowthParam>& info) {
      return info.param.name;
    });

// A finished background rebuild is installed by its own thread (it waits
// for the write lock), not only by the next write: after the last write the
// grown table goes live without any further call.
TEST(FilteredDB, BackgroundRebuildInstallsItselfWithoutFurtherWrites) {
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions(500);
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(
      FilteredDB::Open(test::TestOptions(), dir.path(), fopts, &db).ok());
  const uint64_t rebuilds_before = Stats(db.get()).rebuilds;  // open build
  int written = 0;
  while (Stats(db.get()).rescans == 0) {
    ASSERT_TRUE(db->Put(WriteOptions(), Key(written++), "v").ok());
    ASSERT_LT(written, 100000);
  }
  bool installed = false;
  for (int i = 0; i < 3000 && !installed; ++i) {  // up to 30 s
    const FilteredDBStats s = Stats(db.get());
    installed = !s.rebuild_in_progress && s.rebuilds > rebuilds_before;
    if (!installed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(installed);
  Model model;
  for (int i = 0; i < written; ++i) model[Key(i)] = "v";
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), model, written + 100));
}

// ------------------------------------------------------------------ churn

// A sliding window of N live keys (insert a new key, delete the oldest) for
// 10 N operations: the FPR on never-inserted keys stays within 20% of its
// value after the initial fill, and bits per live key stay flat.
TEST(FilteredDB, ChurnKeepsFalsePositiveRateAndSize) {
  TempDir dir;
  const int kN = 20000;
  // Room for the fingerprints of deletes whose checks are pending (up to a
  // few thousand at a time), so that the table never splits.
  FilteredDBOptions fopts = test::SmallFilterOptions(2 * kN);
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(
      FilteredDB::Open(test::TestOptions(), dir.path(), fopts, &db).ok());
  const cuckoo::LiveKeyFilter* filter = db->GetLiveKeyFilter(nullptr);
  auto measure_fpr = [&](uint64_t salt) {
    const size_t kQueries = 8000000, kBatch = 1024;
    std::vector<cuckoo::KeyHash> hashes(kBatch);
    std::unique_ptr<bool[]> out(new bool[kBatch]);
    uint64_t positives = 0;
    for (size_t done = 0; done < kQueries; done += kBatch) {
      for (size_t k = 0; k < kBatch; ++k) {
        // Never-inserted keys: a different prefix than Key().
        const std::string key =
            "never" + std::to_string(salt) + "_" + std::to_string(done + k);
        hashes[k] = cuckoo::HashKey(key);
      }
      filter->MayContainBatch(hashes.data(), kBatch, out.get());
      for (size_t k = 0; k < kBatch; ++k) positives += out[k];
    }
    return double(positives) / double(kQueries);
  };
  for (int i = 0; i < kN; ++i)
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
  const double fpr0 = measure_fpr(1);
  const FilteredDBStats s0 = Stats(db.get());
  ASSERT_EQ(s0.num_keys, uint64_t(kN));
  std::vector<double> fprs;
  for (int op = 0; op < 10 * kN; op += 2) {
    const int next = kN + op / 2;
    ASSERT_TRUE(db->Put(WriteOptions(), Key(next), "v").ok());
    ASSERT_TRUE(db->Delete(WriteOptions(), Key(next - kN)).ok());
  }
  db->WaitForDeleteChecks();
  const double fpr1 = measure_fpr(2);
  const FilteredDBStats s1 = Stats(db.get());
  EXPECT_EQ(s1.num_keys, uint64_t(kN));
  EXPECT_GT(fpr0, 0.0);
  EXPECT_NEAR(fpr1, fpr0, 0.2 * fpr0)
      << "fpr after fill " << fpr0 << ", after churn " << fpr1;
  EXPECT_NEAR(fpr0, s0.expected_fpr, 0.3 * s0.expected_fpr);
  EXPECT_DOUBLE_EQ(s1.bits_per_key, s0.bits_per_key);  // same table, same count
  EXPECT_EQ(s1.rescans, 0u);
  EXPECT_EQ(s1.rebuilds, s0.rebuilds);
  EXPECT_EQ(s1.erases, uint64_t(5 * kN));
  // Each delete's "maybe" was resolved by one point read, or by the record
  // of recent writes (which holds the keys Put since their last check).
  EXPECT_GE(s1.maybe_checks + s1.recent_key_hits, uint64_t(5 * kN));
  // Spot-check the window.
  for (int i = 5 * kN; i < 6 * kN; i += 97) {
    std::string v;
    ASSERT_TRUE(db->Get(ReadOptions(), Key(i), &v).ok()) << i;
  }
  std::string v;
  EXPECT_TRUE(db->Get(ReadOptions(), Key(kN), &v).IsNotFound());
}

// ------------------------------------------------------------------ recovery

// Runs the crash writer; returns its stdout.
std::string RunCrashWriter(const std::string& db, const std::string& snapshots,
                           int put_begin, int put_end, int del_begin,
                           int del_end, const std::string& flags = "") {
  const std::string out = db + ".writer_out";
  const std::string cmd = std::string(CUCKOO_CRASH_WRITER) + " " + db + " " +
                          snapshots + " " + std::to_string(put_begin) + " " +
                          std::to_string(put_end) + " " +
                          std::to_string(del_begin) + " " +
                          std::to_string(del_end) + " " + flags + " > " + out;
  const int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd;
  std::ifstream in(out);
  std::string line;
  std::getline(in, line);
  return line;
}

Model CrashModel(int put_begin, int put_end, int del_begin, int del_end,
                 Model model = {}) {
  for (int i = put_begin; i < put_end; ++i)
    model[Key(i)] = "value" + std::to_string(i);
  for (int i = del_begin; i < del_end; ++i) model.erase(Key(i));
  return model;
}

TEST(FilteredDBRecovery, RebuildsAfterAProcessDiesWithoutClosing) {
  TempDir dir;
  const std::string db_path = dir.Sub("db");
  EXPECT_EQ(RunCrashWriter(db_path, dir.Sub("snap"), 0, 3000, 1000, 1500),
            "snapshot=none");
  const Model model = CrashModel(0, 3000, 1000, 1500);
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.snapshot_dir = dir.Sub("snap");
  std::vector<std::pair<uint64_t, bool>> progress;
  fopts.progress_interval_keys = 500;
  fopts.progress_callback = [&](const std::string& cf, uint64_t n, bool done) {
    EXPECT_EQ(cf, "default");
    progress.emplace_back(n, done);
  };
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), db_path, fopts, &db).ok());
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), model, 3100));
  // The DB's key estimate may be low: a growth can follow the open build.
  db->WaitForFilterRebuilds();
  const FilteredDBStats s = Stats(db.get());
  EXPECT_FALSE(s.loaded_from_snapshot);
  EXPECT_EQ(s.snapshot_status, "none");
  EXPECT_GE(s.keys_scanned, model.size());
  // Progress: every 500 keys, then once at the end of the open build.
  ASSERT_FALSE(progress.empty());
  const auto first_done = std::find_if(progress.begin(), progress.end(),
                                       [](const auto& p) { return p.second; });
  ASSERT_NE(first_done, progress.end());
  EXPECT_EQ(first_done->first, uint64_t(model.size()));
  EXPECT_GE(first_done - progress.begin(), std::ptrdiff_t(model.size() / 500));
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), model, 3100));
}

TEST(FilteredDBRecovery, CleanCloseSnapshotIsUsed) {
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.snapshot_dir = dir.Sub("snap");
  Model model;
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(
        FilteredDB::Open(test::TestOptions(), dir.Sub("db"), fopts, &db).ok());
    for (int i = 0; i < 5000; ++i) {
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
      model[Key(i)] = "v";
    }
    for (int i = 0; i < 5000; i += 3) {
      ASSERT_TRUE(db->Delete(WriteOptions(), Key(i)).ok());
      model.erase(Key(i));
    }
    db->WaitForFilterRebuilds();  // persist a settled table
    ASSERT_TRUE(db->Close().ok());
  }
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(
      FilteredDB::Open(test::TestOptions(), dir.Sub("db"), fopts, &db).ok());
  const FilteredDBStats s = Stats(db.get());
  EXPECT_TRUE(s.loaded_from_snapshot);
  EXPECT_EQ(s.snapshot_status, "used");
  EXPECT_EQ(s.keys_scanned, 0u);  // no rebuild scan
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), model, 5100));
}

// A snapshot from a clean close, then more writes by a process that dies:
// the snapshot is stale (the DB's sequence moved on) and must be ignored.
TEST(FilteredDBRecovery, WritesAfterTheSnapshotAreReplayed) {
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.snapshot_dir = dir.Sub("snap");
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(
        FilteredDB::Open(test::TestOptions(), dir.Sub("db"), fopts, &db).ok());
    for (int i = 0; i < 2000; ++i)
      ASSERT_TRUE(
          db->Put(WriteOptions(), Key(i), "value" + std::to_string(i)).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  // The crash writer starts from the (valid) snapshot, then writes and dies
  // with every delete check pending (stallchecks: else the checks its
  // checker resolves before the exit are replayed, and fewer than the 256
  // that start a rescan may be left, as under TSan in CI: 115).
  EXPECT_EQ(RunCrashWriter(dir.Sub("db"), dir.Sub("snap"), 2000, 2600, 0, 700,
                           "stallchecks"),
            "snapshot=used");
  const Model model = CrashModel(0, 2600, 0, 700);
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(
      FilteredDB::Open(test::TestOptions(), dir.Sub("db"), fopts, &db).ok());
  // The crash writer died with its deletes' checks pending (its keys were
  // written by another session: no recent-keys hit): their fingerprints
  // were in its filter at the kill and stay (extra positives only) until
  // the rescan that these lost checks start (700 of them, more than 256).
  ASSERT_NO_FATAL_FAILURE(
      VerifyModel(db.get(), model, 2700, nullptr, /*exact_count=*/false));
  EXPECT_LE(db->GetLiveKeyFilter(nullptr)->size(), model.size() + 700);
  db->WaitForFilterRebuilds();
  const FilteredDBStats s = Stats(db.get());
  // The crash writer's open used the snapshot and left it; its writes after
  // it are replayed from the WAL (docs/recovery_design.md): the load read
  // no key, the one scan is the rescan's.
  EXPECT_TRUE(s.loaded_from_snapshot);
  EXPECT_EQ(s.snapshot_status, "used, 1300 writes replayed");
  EXPECT_EQ(s.rescans, 1u);
  EXPECT_EQ(s.keys_scanned, model.size());
  EXPECT_TRUE(
      std::filesystem::exists(fopts.snapshot_dir + "/CUCKOO_LIVE_FILTER-0"));
  ASSERT_NO_FATAL_FAILURE(
      VerifyModel(db.get(), model, 2700, nullptr, /*exact_count=*/true));
}

void FlipByte(const std::string& path, size_t offset_from_end) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << path;
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  ASSERT_GT(size, std::streamoff(offset_from_end));
  const std::streamoff pos = size - 1 - std::streamoff(offset_from_end);
  f.seekg(pos);
  char c;
  f.read(&c, 1);
  c ^= 0x10;
  f.seekp(pos);
  f.write(&c, 1);
}

TEST(FilteredDBRecovery, CorruptedOrForeignSnapshotIsIgnored) {
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.snapshot_dir = dir.Sub("snap");
  Model model;
  auto make_db = [&](const std::string& path, int keys) {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), path, fopts, &db).ok());
    for (int i = 0; i < keys; ++i)
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
    ASSERT_TRUE(db->Close().ok());
  };
  ASSERT_NO_FATAL_FAILURE(make_db(dir.Sub("db"), 3000));
  for (int i = 0; i < 3000; ++i) model[Key(i)] = "v";
  const std::string snap = fopts.snapshot_dir + "/CUCKOO_LIVE_FILTER-0";
  ASSERT_TRUE(std::filesystem::exists(snap));

  struct Case {
    const char* name;
    std::function<void()> damage;
    const char* expected_reason;
  };
  const std::string pristine = dir.Sub("pristine");
  std::filesystem::copy_file(snap, pristine);
  std::vector<Case> cases = {
      {"bit flip in the table", [&] { FlipByte(snap, 5000); },
       "checksum mismatch"},
      {"bit flip in the checksum", [&] { FlipByte(snap, 0); },
       "checksum mismatch"},
      {"truncated",
       [&] {
         std::filesystem::resize_file(snap,
                                      std::filesystem::file_size(snap) - 8);
       },
       "checksum mismatch"},
      {"empty", [&] { std::filesystem::resize_file(snap, 0); }, "too short"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::filesystem::copy_file(
        pristine, snap, std::filesystem::copy_options::overwrite_existing);
    c.damage();
    FilteredDBOptions no_persist = fopts;
    no_persist.persist_on_close =
        false;  // keep the damaged file for the next case
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(
        FilteredDB::Open(test::TestOptions(), dir.Sub("db"), no_persist, &db)
            .ok());
    db->WaitForFilterRebuilds();
    const FilteredDBStats s = Stats(db.get());
    EXPECT_FALSE(s.loaded_from_snapshot);
    EXPECT_NE(s.snapshot_status.find(c.expected_reason), std::string::npos)
        << s.snapshot_status;
    EXPECT_GE(s.keys_scanned, model.size());  // rebuilt from the DB
    ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), model, 3100));
  }

  // A valid snapshot of another DB at the same path is not used either.
  ASSERT_NO_FATAL_FAILURE(make_db(dir.Sub("other"), 10));  // overwrites snap
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(
      FilteredDB::Open(test::TestOptions(), dir.Sub("db"), fopts, &db).ok());
  const FilteredDBStats s = Stats(db.get());
  EXPECT_FALSE(s.loaded_from_snapshot);
  EXPECT_NE(s.snapshot_status.find("another DB"), std::string::npos)
      << s.snapshot_status;
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), model, 3100));
}

// Every key the base DB lists (iterators bypass the filter) is found by a
// filtered Get. Returns the number of false negatives.
size_t FalseNegatives(FilteredDB* db) {
  std::unique_ptr<ROCKSDB_NAMESPACE::Iterator> it(
      db->GetBaseDB()->NewIterator(ReadOptions()));
  size_t misses = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string value;
    if (!db->Get(ReadOptions(), it->key(), &value).ok()) ++misses;
  }
  EXPECT_TRUE(it->status().ok());
  return misses;
}

std::string IngestFile(const std::string& path, const Options& options,
                       int begin, int end) {
  ROCKSDB_NAMESPACE::SstFileWriter writer(ROCKSDB_NAMESPACE::EnvOptions(),
                                          options);
  EXPECT_TRUE(writer.Open(path).ok());
  for (int i = begin; i < end; ++i)
    EXPECT_TRUE(writer.Put(Key(i), "ingested").ok());
  EXPECT_TRUE(writer.Finish().ok());
  return path;
}

// A non-overlapping ingestion does not consume a sequence
// number. Open 1 closes cleanly (snapshot), open 2 ingests and closes without
// persisting, open 3 must not load open 1's snapshot.
TEST(FilteredDBRecovery, IngestionThenCloseWithoutPersistInvalidatesSnapshot) {
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.snapshot_dir = dir.Sub("snap");
  const Options options = test::TestOptions();
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(options, dir.Sub("db"), fopts, &db).ok());
    for (int i = 0; i < 100; ++i)
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
    ASSERT_TRUE(db->Close().ok());
  }
  {
    FilteredDBOptions no_persist = fopts;
    no_persist.persist_on_close = false;
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(options, dir.Sub("db"), no_persist, &db).ok());
    const uint64_t seq = db->GetLatestSequenceNumber();
    ASSERT_TRUE(db->IngestExternalFile(
                      {IngestFile(dir.Sub("a.sst"), options, 1000, 2000)},
                      ROCKSDB_NAMESPACE::IngestExternalFileOptions())
                    .ok());
    ASSERT_EQ(db->GetLatestSequenceNumber(), seq);  // the premise of the bug
    ASSERT_TRUE(db->Close().ok());
  }
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(options, dir.Sub("db"), fopts, &db).ok());
  EXPECT_FALSE(Stats(db.get()).loaded_from_snapshot)
      << Stats(db.get()).snapshot_status;
  EXPECT_EQ(FalseNegatives(db.get()), 0u);
}

// Freezes of PersistFilterSnapshots (test hook, under its one-at-a-time
// lock).
std::atomic<int> persist_freezes{0};
void CountPersistFreezes(const char* point) {
  if (strcmp(point, "PersistFilterSnapshots:AfterFreeze") == 0) {
    ++persist_freezes;
  }
}

// PersistFilterSnapshots freezes the filters at a quiescent point and streams
// the images while writers go on: persists (two threads at once) racing
// Puts and Deletes leave no false negative, a snapshot taken before later
// writes is never used, and one taken after the last write is (crash
// without close: persist_on_close off).
TEST(FilteredDBRecovery, PersistWhileWriting) {
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.snapshot_dir = dir.Sub("snap");
  fopts.persist_on_close = false;
  const Options options = test::TestOptions();
  for (const bool persist_last : {false, true}) {
    {
      std::unique_ptr<FilteredDB> db;
      ASSERT_TRUE(FilteredDB::Open(options, dir.Sub("db"), fopts, &db).ok());
      std::atomic<bool> stop{false};
      std::atomic<int> persists{0};
      persist_freezes = 0;
      live::SetTestHook(&CountPersistFreezes);
      std::thread writer([&] {
        std::mt19937_64 rng(persist_last ? 7 : 8);
        for (int i = 0; i < 20000 || persists.load() < 4; ++i) {
          const std::string k = Key(static_cast<int>(rng() % 5000));
          if (rng() % 4 == 0) {
            EXPECT_TRUE(db->Delete(WriteOptions(), k).ok());
          } else {
            EXPECT_TRUE(db->Put(WriteOptions(), k, "v").ok());
          }
        }
        // The persisters stop once a persist froze after the last write, so
        // that the last checkpoint holds every write of this thread (the
        // replay count below is exact). Two freezes from now: the persist
        // in flight may have frozen before the last write. Without this
        // wait, a persister preempted between two persists saw `stop` only
        // after the other persister's last freeze and the writes after it.
        const int freezes = persist_freezes.load();
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (persist_freezes.load() < freezes + 2 &&
               std::chrono::steady_clock::now() < deadline) {
          std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        stop = true;
      });
      std::vector<std::thread> persisters;
      for (int t = 0; t < 2; ++t) {
        persisters.emplace_back([&] {
          while (!stop.load()) {
            EXPECT_TRUE(db->PersistFilterSnapshots().ok());
            ++persists;
          }
        });
      }
      writer.join();
      for (auto& t : persisters) t.join();
      live::SetTestHook(nullptr);
      EXPECT_EQ(FalseNegatives(db.get()), 0u);
      if (persist_last) {
        ASSERT_TRUE(db->PersistFilterSnapshots().ok());
      } else {
        ASSERT_TRUE(db->Put(WriteOptions(), "after", "v").ok());
      }
      ASSERT_TRUE(db->Close().ok());
    }
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(options, dir.Sub("db"), fopts, &db).ok());
    // Without a persist last, the write after the last one is replayed.
    EXPECT_EQ(Stats(db.get()).snapshot_status,
              persist_last ? "used" : "used, 1 writes replayed");
    EXPECT_EQ(FalseNegatives(db.get()), 0u);
    ASSERT_TRUE(db->Close().ok());
  }
}

// Item 1, second form: an ingestion through a plain DB between two opens.
TEST(FilteredDBRecovery, IngestionThroughAPlainDBInvalidatesSnapshot) {
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.snapshot_dir = dir.Sub("snap");
  const Options options = test::TestOptions();
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(options, dir.Sub("db"), fopts, &db).ok());
    for (int i = 0; i < 100; ++i)
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
    ASSERT_TRUE(db->Close().ok());
  }
  {
    std::unique_ptr<ROCKSDB_NAMESPACE::DB> plain;
    ASSERT_TRUE(cuckoo_test::OpenDB(options, dir.Sub("db"), &plain).ok());
    ASSERT_TRUE(plain
                    ->IngestExternalFile(
                        {IngestFile(dir.Sub("a.sst"), options, 1000, 2000)},
                        ROCKSDB_NAMESPACE::IngestExternalFileOptions())
                    .ok());
    ASSERT_TRUE(plain->Close().ok());
  }
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(options, dir.Sub("db"), fopts, &db).ok());
  EXPECT_FALSE(Stats(db.get()).loaded_from_snapshot)
      << Stats(db.get()).snapshot_status;
  EXPECT_EQ(FalseNegatives(db.get()), 0u);
}

// manual_wal_flush. Persist at seq 101 while write 101 is
// only in RocksDB's buffer, die (write 101 lost, DB at 100), reopen and write
// one key (back to 101), die, reopen: the old snapshot must not be used.
TEST(FilteredDBRecovery, ManualWalFlushCrashDoesNotReviveAnOldSnapshot) {
  TempDir dir;
  const std::string db_path = dir.Sub("db");
  const std::string snap = dir.Sub("snap");
  EXPECT_EQ(RunCrashWriter(db_path, snap, 0, 100, 0, 0, "manual_wal,flushwal"),
            "snapshot=none");
  RunCrashWriter(db_path, snap, 100, 101, 0, 0, "manual_wal,persist");
  RunCrashWriter(db_path, snap, 200, 201, 0, 0, "flushwal");
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.snapshot_dir = snap;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), db_path, fopts, &db).ok());
  std::string value;
  EXPECT_TRUE(db->Get(ReadOptions(), Key(200), &value).ok())
      << "false negative; snapshot " << Stats(db.get()).snapshot_status;
  EXPECT_EQ(FalseNegatives(db.get()), 0u);
}

// A byte-copied DB directory (same IDENTITY) whose copies
// diverged by the same number of writes; the snapshot of one is put into the
// other's snapshot directory.
TEST(FilteredDBRecovery, SnapshotOfACopiedDirectoryIsNotUsed) {
  TempDir dir;
  const Options options = test::TestOptions();
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.snapshot_dir = dir.Sub("snap1");
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(options, dir.Sub("db1"), fopts, &db).ok());
    for (int i = 0; i < 100; ++i)
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
    ASSERT_TRUE(db->Close().ok());
  }
  std::filesystem::copy(dir.Sub("db1"), dir.Sub("db2"),
                        std::filesystem::copy_options::recursive);
  FilteredDBOptions fopts2 = fopts;
  fopts2.snapshot_dir = dir.Sub("snap2");
  auto write = [&](const std::string& path, const FilteredDBOptions& o,
                   int begin) {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(options, path, o, &db).ok());
    for (int i = begin; i < begin + 500; ++i)
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
    ASSERT_TRUE(db->Close().ok());
  };
  ASSERT_NO_FATAL_FAILURE(write(dir.Sub("db1"), fopts, 1000));
  ASSERT_NO_FATAL_FAILURE(write(dir.Sub("db2"), fopts2, 5000));
  std::filesystem::copy_file(dir.Sub("snap2") + "/CUCKOO_LIVE_FILTER-0",
                             dir.Sub("snap1") + "/CUCKOO_LIVE_FILTER-0",
                             std::filesystem::copy_options::overwrite_existing);
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(options, dir.Sub("db1"), fopts, &db).ok());
  EXPECT_FALSE(Stats(db.get()).loaded_from_snapshot)
      << Stats(db.get()).snapshot_status;
  EXPECT_EQ(FalseNegatives(db.get()), 0u);
}

// 200k live keys plus 200k deletes of keys never written make
// estimate-num-keys 0; Open must still succeed (grow without a limit).
TEST(FilteredDBRecovery, OpenSucceedsWhenTheKeyEstimateIsZero) {
  TempDir dir;
  const Options options = test::TestOptions();
  {
    std::unique_ptr<ROCKSDB_NAMESPACE::DB> plain;
    ASSERT_TRUE(cuckoo_test::OpenDB(options, dir.Sub("db"), &plain).ok());
    WriteBatch batch;
    for (int i = 0; i < 200000; ++i) {
      ASSERT_TRUE(batch.Put(Key(i), "v").ok());
      ASSERT_TRUE(batch.Delete("never" + Key(i)).ok());
    }
    WriteOptions wo;
    wo.disableWAL = true;
    ASSERT_TRUE(plain->Write(wo, &batch).ok());
    ASSERT_TRUE(plain->Flush(FlushOptions()).ok());
    uint64_t estimate = 1;
    ASSERT_TRUE(plain->GetIntProperty("rocksdb.estimate-num-keys", &estimate));
    EXPECT_EQ(estimate, 0u);  // the premise
    ASSERT_TRUE(plain->Close().ok());
  }
  std::unique_ptr<FilteredDB> db;
  const Status s =
      FilteredDB::Open(options, dir.Sub("db"), test::SmallFilterOptions(), &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(db->GetLiveKeyFilter(nullptr)->size(), 200000u);
  EXPECT_EQ(FalseNegatives(db.get()), 0u);
}

// ------------------------------------------------------------------ defects

// A Close that fails (unreleased snapshot: Aborted) leaves the DB usable:
// writes, growth and a later Close work, and the destructor does not
// terminate.
TEST(FilteredDB, FailedCloseLeavesTheDBUsable) {
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.snapshot_dir = dir.Sub("snap");
  ASSERT_TRUE(
      FilteredDB::Open(test::TestOptions(), dir.Sub("db"), fopts, &db).ok());
  const ROCKSDB_NAMESPACE::Snapshot* snap = db->GetSnapshot();
  ASSERT_TRUE(db->Close().IsAborted());
  Model model;
  for (int i = 0; i < 5000;
       ++i) {  // several splits and rescans beyond 1024 keys
    const Status s = db->Put(WriteOptions(), Key(i), "v");
    ASSERT_TRUE(s.ok()) << i << ": " << s.ToString();
    model[Key(i)] = "v";
  }
  db->WaitForFilterRebuilds();
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), model, 5100));
  db->ReleaseSnapshot(snap);
  ASSERT_TRUE(db->Close().ok());
  // The second close wrote a snapshot.
  db.reset();
  ASSERT_TRUE(
      FilteredDB::Open(test::TestOptions(), dir.Sub("db"), fopts, &db).ok());
  EXPECT_TRUE(Stats(db.get()).loaded_from_snapshot)
      << Stats(db.get()).snapshot_status;
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), model, 5100));
}

TEST(FilteredDB, FailedCloseThenDestructorDoesNotTerminate) {
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), dir.path(),
                               test::SmallFilterOptions(), &db)
                  .ok());
  const ROCKSDB_NAMESPACE::Snapshot* snap = db->GetSnapshot();
  ASSERT_TRUE(db->Close().IsAborted());
  for (int i = 0; i < 3000; ++i)
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
  db->ReleaseSnapshot(snap);
  db.reset();  // joins any background rebuild
}

// Batched MultiGet fills caller-owned PinnableSlice buffers, as the base DB.
TEST(FilteredDB, BatchedMultiGetFillsCallerBuffers) {
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), dir.path(),
                               test::SmallFilterOptions(), &db)
                  .ok());
  for (int i = 0; i < 10; i += 2)
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v" + Key(i)).ok());
  std::vector<std::string> key_strings;
  for (int i = 0; i < 10; ++i) key_strings.push_back(Key(i));
  std::vector<Slice> keys(key_strings.begin(), key_strings.end());
  std::vector<std::string> buffers(10);
  std::vector<PinnableSlice> values;
  values.reserve(10);
  for (int i = 0; i < 10; ++i) values.emplace_back(&buffers[i]);
  std::vector<Status> st(10);
  db->MultiGet(ReadOptions(), db->DefaultColumnFamily(), keys.size(),
               keys.data(), values.data(), st.data(), /*sorted_input=*/true);
  for (int i = 0; i < 10; ++i) {
    if (i % 2 == 0) {
      ASSERT_TRUE(st[i].ok()) << i;
      EXPECT_EQ(values[i].ToString(), "v" + Key(i)) << i;
      EXPECT_EQ(buffers[i], "v" + Key(i)) << "caller buffer of key " << i;
    } else {
      EXPECT_TRUE(st[i].IsNotFound()) << i;
    }
  }
}

TEST(FilteredDB, DuplicateFilteredColumnFamilyNamesAreAccepted) {
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.filtered_column_families = {"default", "default"};
  std::unique_ptr<FilteredDB> db;
  const Status s =
      FilteredDB::Open(test::TestOptions(), dir.path(), fopts, &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(db->HasFilter(nullptr));
}

// Reads whose answer the filter cannot reproduce go to the DB: a range-
// deleted key read with ignore_range_deletions, and block-cache-only reads.
TEST(FilteredDB, ReadsTheFilterCannotAnswerPassThrough) {
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), dir.Sub("db"),
                               test::SmallFilterOptions(), &db)
                  .ok());
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
  ASSERT_TRUE(db->Flush(FlushOptions()).ok());
  ASSERT_TRUE(
      db->DeleteRange(WriteOptions(), db->DefaultColumnFamily(), Key(0), Key(5))
          .ok());
  ROCKSDB_NAMESPACE::DB* base = db->GetBaseDB();
  ReadOptions ignore;
  ignore.ignore_range_deletions = true;
  std::string a, b;
  const Status sb = base->Get(ignore, Key(2), &b);
  const Status sa = db->Get(ignore, Key(2), &a);
  EXPECT_EQ(sa.code(), sb.code())
      << sa.ToString() << " vs base " << sb.ToString();
  EXPECT_EQ(a, b);
  ASSERT_TRUE(db->Close().ok());
  db.reset();
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), dir.Sub("db"),
                               test::SmallFilterOptions(), &db)
                  .ok());
  ReadOptions cache_only;
  cache_only.read_tier = ROCKSDB_NAMESPACE::kBlockCacheTier;
  for (int i : {20, 7}) {
    const Status cb = db->GetBaseDB()->Get(cache_only, Key(i), &b);
    const Status ca = db->Get(cache_only, Key(i), &a);
    EXPECT_EQ(ca.code(), cb.code())
        << Key(i) << ": " << ca.ToString() << " vs base " << cb.ToString();
  }
}

// ------------------------------------------------------------------ ingestion

TEST(FilteredDB, IngestedKeysAreFound) {
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  Options options = test::TestOptions();
  ASSERT_TRUE(
      FilteredDB::Open(options, dir.Sub("db"), test::SmallFilterOptions(), &db)
          .ok());
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
  ROCKSDB_NAMESPACE::SstFileWriter writer(ROCKSDB_NAMESPACE::EnvOptions(),
                                          options);
  const std::string file = dir.Sub("ingest.sst");
  ASSERT_TRUE(writer.Open(file).ok());
  for (int i = 1000; i < 3000; ++i)
    ASSERT_TRUE(writer.Put(Key(i), "ingested").ok());
  ASSERT_TRUE(writer.Finish().ok());
  ASSERT_TRUE(db->IngestExternalFile(
                    {file}, ROCKSDB_NAMESPACE::IngestExternalFileOptions())
                  .ok());
  Model model;
  for (int i = 0; i < 100; ++i) model[Key(i)] = "v";
  for (int i = 1000; i < 3000; ++i) model[Key(i)] = "ingested";
  ASSERT_NO_FATAL_FAILURE(VerifyModel(db.get(), model, 3100));
  EXPECT_FALSE(Stats(db.get()).building);
}

}  // namespace
}  // namespace rocksdb_cuckoo
