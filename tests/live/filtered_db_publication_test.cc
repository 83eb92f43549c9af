// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB reads while a filter table is installed or swapped: Open's
// background build, an ingestion, RebuildFilter, a split, a persist (freeze
// and thaw), a column family drop. The deterministic tests read through the
// public API from inside the core's publish hook (plugin/core/live/
// test_hooks.h: the instant the new table is about to become the one readers
// probe) or FilteredDB's own hooks; the randomized ones read from another
// thread while the operation runs, many times.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../../plugin/cuckoo/live/test_hooks.h"
#include "live/test_hooks.h"
#include "rocksdb/sst_file_writer.h"
#include "test_util.h"

namespace rocksdb_cuckoo {
namespace {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WriteOptions;
using test::Key;
using test::TempDir;

// What a hook reads: keys [first, first + count) of `cf` through `db`, each
// must be found. The hook waits (bounded) for `db` when it runs before the
// test stored it (Open's build may finish before Open returns).
struct Reads {
  std::atomic<FilteredDB*> db{nullptr};
  ColumnFamilyHandle* cf = nullptr;  // nullptr: the default family
  std::vector<std::string> keys;
  std::string point;  // the hook point to read at
  std::atomic<int> calls{0};
  std::atomic<uint64_t> misses{0};
  std::atomic<uint64_t> errors{0};
};
Reads* reads = nullptr;

void ReadAll(Reads* r) {
  FilteredDB* db = nullptr;
  for (int i = 0; i < 10000 && (db = r->db.load()) == nullptr; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (db == nullptr) {
    r->errors++;
    return;
  }
  ColumnFamilyHandle* cf = r->cf != nullptr ? r->cf : db->DefaultColumnFamily();
  r->calls++;
  for (const std::string& k : r->keys) {
    PinnableSlice value;
    const Status s = db->Get(ReadOptions(), cf, k, &value);
    if (s.IsNotFound()) {
      r->misses++;
    } else if (!s.ok()) {
      r->errors++;
    }
  }
  // The batched path too.
  std::vector<ROCKSDB_NAMESPACE::Slice> slices(r->keys.begin(), r->keys.end());
  std::vector<PinnableSlice> values(slices.size());
  std::vector<Status> statuses(slices.size());
  db->MultiGet(ReadOptions(), cf, slices.size(), slices.data(), values.data(),
               statuses.data());
  for (const Status& s : statuses) {
    if (s.IsNotFound()) {
      r->misses++;
    } else if (!s.ok()) {
      r->errors++;
    }
  }
}

void AtPublication(const char* what) {
  if (reads != nullptr && reads->point == what) ReadAll(reads);
}
void AtFilteredDbPoint(const char* point) {
  if (reads != nullptr && reads->point == point) ReadAll(reads);
}

class HookScope {
 public:
  explicit HookScope(Reads* r) {
    reads = r;
    cuckoo::internal::publish_hook.store(&AtPublication);
    live::SetTestHook(&AtFilteredDbPoint);
  }
  ~HookScope() {
    cuckoo::internal::publish_hook.store(nullptr);
    live::SetTestHook(nullptr);
    reads = nullptr;
  }
};

std::vector<std::string> Keys(int first, int count) {
  std::vector<std::string> out;
  for (int i = first; i < first + count; ++i) out.push_back(Key(i));
  return out;
}

void Fill(FilteredDB* db, int first, int count) {
  for (int i = first; i < first + count; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
  }
}

// Writes `keys` to an SST file for ingestion.
std::string WriteSst(const std::string& dir, const std::string& name,
                     const std::vector<std::string>& keys) {
  const std::string path = dir + "/" + name;
  ROCKSDB_NAMESPACE::SstFileWriter writer(ROCKSDB_NAMESPACE::EnvOptions(),
                                          test::TestOptions());
  EXPECT_TRUE(writer.Open(path).ok());
  for (const std::string& k : keys) EXPECT_TRUE(writer.Put(k, "ingested").ok());
  EXPECT_TRUE(writer.Finish().ok());
  return path;
}

// Open's background build installs the table built from the DB: a read at
// that instant must find every key (before the fix it probed the empty table
// Open starts with).
TEST(FilteredDbPublication, BackgroundOpenInstall) {
  TempDir dir;
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), dir.path(),
                                 test::SmallFilterOptions(), &db)
                    .ok());
    Fill(db.get(), 0, 2000);
    ASSERT_TRUE(db->Close().ok());
  }
  Reads r;
  r.keys = Keys(0, 2000);
  r.point = "Replace";
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.background_open = true;
  std::unique_ptr<FilteredDB> db;
  {
    HookScope scope(&r);
    ASSERT_TRUE(
        FilteredDB::Open(test::TestOptions(), dir.path(), fopts, &db).ok());
    r.db = db.get();
    db->WaitForFilterRebuilds();
  }
  EXPECT_EQ(r.calls.load(), 1);
  EXPECT_EQ(r.errors.load(), 0u);
  EXPECT_EQ(r.misses.load(), 0u);
  FilteredDBStats stats;
  ASSERT_TRUE(db->GetFilterStats(nullptr, &stats).ok());
  EXPECT_FALSE(stats.building);
}

// An ingestion installs the table rebuilt from the DB with the ingested keys:
// a read at that instant must find them (before the fix it probed the table
// from before the ingestion).
TEST(FilteredDbPublication, IngestionInstall) {
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), dir.path() + "/db",
                               test::SmallFilterOptions(), &db)
                  .ok());
  Fill(db.get(), 0, 500);
  Reads r;
  r.keys = Keys(100000, 50);
  const std::vector<std::string> old_keys = Keys(0, 500);
  r.keys.insert(r.keys.end(), old_keys.begin(), old_keys.end());
  r.point = "Replace";
  r.db = db.get();
  const std::string sst = WriteSst(dir.path(), "a.sst", Keys(100000, 50));
  {
    HookScope scope(&r);
    ASSERT_TRUE(db->IngestExternalFile(
                      {sst}, ROCKSDB_NAMESPACE::IngestExternalFileOptions())
                    .ok());
  }
  EXPECT_EQ(r.calls.load(), 1);
  EXPECT_EQ(r.errors.load(), 0u);
  EXPECT_EQ(r.misses.load(), 0u);
}

// RebuildFilter of a ready filter: the old table serves every key until the
// new one is in.
TEST(FilteredDbPublication, RebuildFilterInstall) {
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), dir.path(),
                               test::SmallFilterOptions(), &db)
                  .ok());
  Fill(db.get(), 0, 3000);
  Reads r;
  r.keys = Keys(0, 3000);
  r.point = "Replace";
  r.db = db.get();
  {
    HookScope scope(&r);
    ASSERT_TRUE(db->RebuildFilter(nullptr).ok());
  }
  EXPECT_EQ(r.calls.load(), 1);
  EXPECT_EQ(r.misses.load(), 0u);
}

// Splits: the doubled table is published with every key written so far.
TEST(FilteredDbPublication, SplitInstall) {
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  FilteredDBOptions fopts = test::SmallFilterOptions(256);
  fopts.filter.background_splits = false;  // splits in the writing thread
  fopts.filter.rescan_below_bits = 0;
  ASSERT_TRUE(
      FilteredDB::Open(test::TestOptions(), dir.path(), fopts, &db).ok());
  Reads r;
  r.point = "Split";
  r.db = db.get();
  int calls = 0;
  {
    HookScope scope(&r);
    for (int i = 0; i < 6000; ++i) {
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
      // The keys the next split must hold (a Put's own key is inserted
      // before its DB write, so it is not read here).
      r.keys.push_back(Key(i));
      calls = r.calls.load();
    }
  }
  EXPECT_GE(calls, 3);
  EXPECT_EQ(r.misses.load(), 0u);
  FilteredDBStats stats;
  ASSERT_TRUE(db->GetFilterStats(nullptr, &stats).ok());
  EXPECT_EQ(stats.splits, uint64_t(calls));
}

// A persist freezes the filter and streams it while writers go on: reads at
// the freeze and after it find every key.
TEST(FilteredDbPublication, PersistFreezeAndThaw) {
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.snapshot_dir = dir.path() + "/snapshots";
  ASSERT_TRUE(
      FilteredDB::Open(test::TestOptions(), dir.path() + "/db", fopts, &db)
          .ok());
  Fill(db.get(), 0, 2000);
  Reads r;
  r.keys = Keys(0, 2000);
  r.point = "PersistFilterSnapshots:AfterFreeze";
  r.db = db.get();
  {
    HookScope scope(&r);
    ASSERT_TRUE(db->PersistFilterSnapshots().ok());
  }
  EXPECT_EQ(r.calls.load(), 1);
  EXPECT_EQ(r.misses.load(), 0u);
  r.calls = 0;
  ReadAll(&r);
  EXPECT_EQ(r.misses.load(), 0u);
}

// Reads of a family that is being dropped: the filter goes "not ready"
// before the family stops being filtered; no read of a present key says
// NotFound.
TEST(FilteredDbPublication, ReadsDuringADrop) {
  for (int round = 0; round < 5; ++round) {
    TempDir dir;
    std::vector<ColumnFamilyHandle*> handles;
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(test::OpenFamilies(dir.path(), {"a"},
                                   test::SmallFilterOptions(), &handles, &db)
                    .ok());
    for (int i = 0; i < 1000; ++i) {
      ASSERT_TRUE(db->Put(WriteOptions(), handles[1], Key(i), "v").ok());
    }
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> misses{0}, reads_done{0};
    std::thread reader([&] {
      int i = 0;
      while (!stop.load()) {
        PinnableSlice value;
        const Status s =
            db->Get(ReadOptions(), handles[1], Key(i++ % 1000), &value);
        misses += s.IsNotFound();
        reads_done++;
      }
    });
    while (reads_done.load() < 100) std::this_thread::yield();
    ASSERT_TRUE(db->DropColumnFamily(handles[1]).ok());
    const uint64_t at_drop = reads_done.load();
    while (reads_done.load() < at_drop + 100) std::this_thread::yield();
    stop = true;
    reader.join();
    EXPECT_EQ(misses.load(), 0u);
    test::DestroyHandles(db.get(), &handles);
  }
}

// Randomized, the first reproduction: a reader thread reads every
// key of the DB while Open's background build runs and is installed, over
// many opens.
TEST(FilteredDbPublication, ReadsDuringBackgroundOpens) {
  constexpr int kKeys = 3000;
  const int opens = std::getenv("CUCKOO_PUBLICATION_OPENS") != nullptr
                        ? std::atoi(std::getenv("CUCKOO_PUBLICATION_OPENS"))
                        : 40;
  TempDir dir;
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), dir.path(),
                                 test::SmallFilterOptions(), &db)
                    .ok());
    Fill(db.get(), 0, kKeys);
    ASSERT_TRUE(db->Close().ok());
  }
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.background_open = true;
  uint64_t misses = 0, reads_total = 0;
  for (int open = 0; open < opens; ++open) {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(
        FilteredDB::Open(test::TestOptions(), dir.path(), fopts, &db).ok());
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> m{0}, n{0};
    std::thread reader([&] {
      for (int i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        std::string value;
        m += db->Get(ReadOptions(), Key(i % kKeys), &value).IsNotFound();
        n++;
      }
    });
    db->WaitForFilterRebuilds();
    // A little past the install.
    const uint64_t at = n.load();
    while (n.load() < at + 200) std::this_thread::yield();
    stop = true;
    reader.join();
    misses += m.load();
    reads_total += n.load();
    ASSERT_TRUE(db->Close().ok());
  }
  EXPECT_EQ(misses, 0u) << "of " << reads_total << " reads in " << opens
                        << " opens";
}

// Randomized, the second reproduction: a reader thread reads the key
// being ingested while ingestions run back to back. Once a plain read of the
// base DB finds it (the ingestion reached the DB, the filter is still being
// rebuilt), a read through FilteredDB that follows must find it too.
TEST(FilteredDbPublication, ReadsDuringIngestions) {
  const int ingestions =
      std::getenv("CUCKOO_PUBLICATION_INGESTIONS") != nullptr
          ? std::atoi(std::getenv("CUCKOO_PUBLICATION_INGESTIONS"))
          : 500;
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), dir.path() + "/db",
                               test::SmallFilterOptions(), &db)
                  .ok());
  Fill(db.get(), 0, 300);
  std::atomic<int> current{-1};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> misses{0}, checked{0};
  std::thread reader([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      const int k = current.load(std::memory_order_acquire);
      if (k < 0) continue;
      const std::string key = Key(1000000 + k);
      std::string value;
      if (!db->GetBaseDB()->Get(ReadOptions(), key, &value).ok()) continue;
      misses += db->Get(ReadOptions(), key, &value).IsNotFound();
      checked++;
    }
  });
  for (int i = 0; i < ingestions; ++i) {
    const std::string sst = WriteSst(
        dir.path(), "i" + std::to_string(i) + ".sst", {Key(1000000 + i)});
    current.store(i, std::memory_order_release);
    ASSERT_TRUE(db->IngestExternalFile(
                      {sst}, ROCKSDB_NAMESPACE::IngestExternalFileOptions())
                    .ok());
  }
  stop = true;
  reader.join();
  EXPECT_GT(checked.load(), 0u);
  EXPECT_EQ(misses.load(), 0u) << "of " << checked.load() << " reads";
}

}  // namespace
}  // namespace rocksdb_cuckoo
