// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB and the column family handles its caller owns: the caller may
// destroy the handles Open returned (through DestroyColumnFamilyHandle)
// whenever a plain DB allows it, and FilteredDB's own work (deferred delete
// checks, point reads of writes, DeleteRange scans, rebuilds, the flush of
// unlogged writes) must never use a destroyed handle. Before the fix these
// tests read freed handles: AddressSanitizer reports a heap-use-after-free; a
// Release build may crash or pass by luck.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "rocksdb/metadata.h"
#include "rocksdb/write_batch.h"
#include "test_util.h"

namespace rocksdb_cuckoo {
namespace {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WriteOptions;
using test::Key;
using test::TempDir;

// A FilteredDB over {default, "cf1"}, both filtered (snapshots in dir/snap).
struct TwoFamilies {
  std::unique_ptr<FilteredDB> db;
  std::vector<ColumnFamilyHandle*> handles;  // [0] default, [1] cf1

  Status Open(const TempDir& dir) {
    FilteredDBOptions fopts = test::SmallFilterOptions();
    fopts.filtered_column_families = {};  // every family opened
    fopts.snapshot_dir = dir.path() + "/snap";
    fopts.recent_keys = 0;  // deletes leave checks pending (deferred)
    return test::OpenFamilies(dir.path(), {"cf1"}, fopts, &handles, &db);
  }
  // Destroys the handles not destroyed yet (nullptr entries were).
  void DestroyHandles() { test::DestroyHandles(db.get(), &handles); }
  // Destroys handles[i] through the FilteredDB.
  void DestroyHandle(size_t i) {
    ASSERT_TRUE(db->DestroyColumnFamilyHandle(handles[i]).ok());
    handles[i] = nullptr;
  }
  ~TwoFamilies() {
    if (db != nullptr) DestroyHandles();
  }
};

// The family's filter was loaded from the snapshot written at the last
// Close and holds `num_keys` fingerprints.
void ExpectLoadedFromSnapshot(FilteredDB* db, ColumnFamilyHandle* cf,
                              uint64_t num_keys) {
  FilteredDBStats s;
  ASSERT_TRUE(db->GetFilterStats(cf, &s).ok());
  EXPECT_TRUE(s.loaded_from_snapshot) << s.snapshot_status;
  EXPECT_EQ(s.num_keys, num_keys);
}

// Every key of `keys` is found in the column family through `cf`.
void ExpectFound(FilteredDB* db, ColumnFamilyHandle* cf,
                 const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    std::string value;
    EXPECT_TRUE(db->Get(ReadOptions(), cf, key, &value).ok()) << key;
  }
}

// First variant: the handles go right after a Delete, whose
// check is still queued (the checker waits up to 10 ms for a batch), then
// Close resolves it. Before the fix the check's MultiGet used the freed
// handles (both the default family's and cf1's).
TEST(FilteredDBHandles, DestroyHandlesRightAfterADeleteThenClose) {
  TempDir dir("handles");
  {
    TwoFamilies t;
    ASSERT_TRUE(t.Open(dir).ok());
    for (ColumnFamilyHandle* h : t.handles) {
      ASSERT_TRUE(t.db->Put(WriteOptions(), h, "gone", "v").ok());
      ASSERT_TRUE(t.db->Put(WriteOptions(), h, "kept", "v").ok());
      ASSERT_TRUE(t.db->Delete(WriteOptions(), h, "gone").ok());
    }
    t.DestroyHandles();
    ASSERT_TRUE(t.db->Close().ok());
    // The checks ran: one fingerprint per live key in each family.
    FilteredDBStats s;
    ASSERT_TRUE(t.db->GetFilterStats(nullptr, &s).ok());
    EXPECT_EQ(s.num_keys, 1u);
    EXPECT_EQ(s.deferred_checks, 1u);
  }
  // Reopened (from the snapshots written at Close): the live keys are found.
  TwoFamilies t;
  ASSERT_TRUE(t.Open(dir).ok());
  for (ColumnFamilyHandle* h : t.handles) {
    ExpectFound(t.db.get(), h, {"kept"});
    std::string value;
    EXPECT_TRUE(t.db->Get(ReadOptions(), h, "gone", &value).IsNotFound());
    ExpectLoadedFromSnapshot(t.db.get(), h, 1);
  }
}

// Second variant: the default family's handle from Open is
// destroyed (legal with a plain DB: DefaultColumnFamily() stays usable) and
// the writes go on through DefaultColumnFamily(). Every path that reads the
// family on FilteredDB's side runs: a Put of a key the filter may contain
// (point read), a deferred delete check, DeleteRange (iterator), a batch,
// RebuildFilter and a rescan (scans), and PersistFilterSnapshots after an
// unlogged write (flush).
TEST(FilteredDBHandles, DefaultHandleFromOpenDestroyedWritesGoOn) {
  TempDir dir("handles");
  TwoFamilies t;
  ASSERT_TRUE(t.Open(dir).ok());
  FilteredDB* db = t.db.get();
  ASSERT_TRUE(db->Put(WriteOptions(), t.handles[0], "k", "v0").ok());
  t.DestroyHandle(0);
  ColumnFamilyHandle* def = db->DefaultColumnFamily();
  ASSERT_TRUE(db->HasFilter(def));
  ASSERT_TRUE(db->Put(WriteOptions(), def, "k", "v1").ok());  // point read
  ASSERT_TRUE(db->Delete(WriteOptions(), def, "k").ok());     // deferred
  db->WaitForDeleteChecks();
  ASSERT_TRUE(db->Put(WriteOptions(), def, "r1", "v").ok());
  ASSERT_TRUE(db->Put(WriteOptions(), def, "r2", "v").ok());
  ASSERT_TRUE(db->DeleteRange(WriteOptions(), def, "r", "s").ok());
  ROCKSDB_NAMESPACE::WriteBatch batch;
  ASSERT_TRUE(batch.Put(def, "b", "v").ok());
  ASSERT_TRUE(batch.Delete(def, "b").ok());
  ASSERT_TRUE(db->Write(WriteOptions(), &batch).ok());
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; ++i) {  // past the initial capacity: a split
    keys.push_back(Key(i));
    ASSERT_TRUE(db->Put(WriteOptions(), def, keys.back(), "v").ok());
  }
  db->WaitForFilterRebuilds();
  ASSERT_TRUE(db->RebuildFilter(def).ok());
  WriteOptions unlogged;
  unlogged.disableWAL = true;
  ASSERT_TRUE(db->Put(unlogged, def, "unlogged", "v").ok());
  keys.push_back("unlogged");
  ASSERT_TRUE(db->PersistFilterSnapshots().ok());  // flushes the family
  ExpectFound(db, def, keys);
  db->WaitForDeleteChecks();
  FilteredDBStats s;
  ASSERT_TRUE(db->GetFilterStats(def, &s).ok());
  EXPECT_EQ(s.num_keys, keys.size());
  EXPECT_GE(s.splits, 1u);    // growth by splits; RebuildFilter read the DB
  EXPECT_GE(s.rebuilds, 2u);  // the open build and RebuildFilter
}

// A filtered non-default family whose only handle is destroyed: its pending
// check is still resolved, PersistFilterSnapshots still flushes its
// unlogged write, and its filter is persisted at Close and used at reopen
// (FilteredDB keeps the handle until Close).
TEST(FilteredDBHandles, NonDefaultHandleDestroyedBeforePersist) {
  TempDir dir("handles");
  {
    TwoFamilies t;
    ASSERT_TRUE(t.Open(dir).ok());
    FilteredDB* db = t.db.get();
    WriteOptions unlogged;
    unlogged.disableWAL = true;
    ASSERT_TRUE(db->Put(WriteOptions(), t.handles[1], "a", "v").ok());
    ASSERT_TRUE(db->Put(unlogged, t.handles[1], "b", "v").ok());
    ASSERT_TRUE(db->Delete(WriteOptions(), t.handles[1], "a").ok());
    t.DestroyHandle(1);
    ASSERT_TRUE(db->Put(WriteOptions(), t.handles[0], "d", "v").ok());
    ASSERT_TRUE(db->PersistFilterSnapshots().ok());
    // The unlogged write to cf1 was flushed (through the retired handle).
    std::vector<ROCKSDB_NAMESPACE::LiveFileMetaData> files;
    db->GetLiveFilesMetaData(&files);
    size_t cf1_files = 0;
    for (const auto& f : files) cf1_files += f.column_family_name == "cf1";
    EXPECT_EQ(cf1_files, 1u);
    ASSERT_TRUE(db->Put(WriteOptions(), t.handles[0], "e", "v").ok());
  }
  TwoFamilies t;
  ASSERT_TRUE(t.Open(dir).ok());
  ExpectFound(t.db.get(), t.handles[0], {"d", "e"});
  ExpectFound(t.db.get(), t.handles[1], {"b"});
  std::string value;
  EXPECT_TRUE(t.db->Get(ReadOptions(), t.handles[1], "a", &value).IsNotFound());
  ExpectLoadedFromSnapshot(t.db.get(), t.handles[1], 1);
}

// A batch built with cf1's handle and written after the handle was
// destroyed (legal with a plain DB: batches name families by id) is planned
// with reads through the retired handle. A Close refused for a held
// snapshot keeps the retired handle (FilteredDB still needs it); the retry
// closes.
TEST(FilteredDBHandles, RetiredHandleServesLaterBatchesAndAFailedClose) {
  TempDir dir("handles");
  {
    TwoFamilies t;
    ASSERT_TRUE(t.Open(dir).ok());
    FilteredDB* db = t.db.get();
    ASSERT_TRUE(db->Put(WriteOptions(), t.handles[1], "a", "v").ok());
    ROCKSDB_NAMESPACE::WriteBatch batch;
    ASSERT_TRUE(batch.Put(t.handles[1], "a", "v2").ok());  // maybe: a read
    ASSERT_TRUE(batch.Put(t.handles[1], "b", "v").ok());
    ASSERT_TRUE(batch.DeleteRange(t.handles[1], "c", "d").ok());  // a scan
    t.DestroyHandle(1);
    const ROCKSDB_NAMESPACE::Snapshot* snapshot = db->GetSnapshot();
    EXPECT_TRUE(db->Close().IsAborted());
    ASSERT_TRUE(db->Write(WriteOptions(), &batch).ok());
    ASSERT_TRUE(db->Put(WriteOptions(), t.handles[0], "x", "v").ok());
    ASSERT_TRUE(db->Delete(WriteOptions(), t.handles[0], "x").ok());
    db->ReleaseSnapshot(snapshot);
    t.DestroyHandles();
    ASSERT_TRUE(db->Close().ok());
  }
  TwoFamilies t;
  ASSERT_TRUE(t.Open(dir).ok());
  ExpectFound(t.db.get(), t.handles[1], {"a", "b"});
  ExpectLoadedFromSnapshot(t.db.get(), t.handles[1], 2);
  ExpectLoadedFromSnapshot(t.db.get(), t.handles[0], 0);
}

// A dropped family's handle can be destroyed at any time; other handles and
// families are not disturbed.
TEST(FilteredDBHandles, DroppedFamilyHandleDestroyed) {
  TempDir dir("handles");
  TwoFamilies t;
  ASSERT_TRUE(t.Open(dir).ok());
  FilteredDB* db = t.db.get();
  ASSERT_TRUE(db->Put(WriteOptions(), t.handles[1], "x", "v").ok());
  ASSERT_TRUE(db->Delete(WriteOptions(), t.handles[1], "x").ok());
  ASSERT_TRUE(db->DropColumnFamily(t.handles[1]).ok());
  t.DestroyHandle(1);
  ASSERT_TRUE(db->Put(WriteOptions(), t.handles[0], "y", "v").ok());
  ASSERT_TRUE(db->Delete(WriteOptions(), t.handles[0], "y").ok());
  ASSERT_TRUE(db->Put(WriteOptions(), t.handles[0], "z", "v").ok());
  db->WaitForDeleteChecks();
  ExpectFound(db, t.handles[0], {"z"});
  t.DestroyHandles();
  ASSERT_TRUE(db->Close().ok());
}

// DestroyColumnFamilyHandle refuses DefaultColumnFamily() as a plain DB
// does, and forwards handles of families FilteredDB does not filter.
TEST(FilteredDBHandles, DefaultColumnFamilyAndUnfilteredHandles) {
  TempDir dir("handles");
  TwoFamilies t;
  ASSERT_TRUE(t.Open(dir).ok());
  EXPECT_TRUE(t.db->DestroyColumnFamilyHandle(t.db->DefaultColumnFamily())
                  .IsInvalidArgument());
  ColumnFamilyHandle* extra = nullptr;
  ASSERT_TRUE(t.db->CreateColumnFamily(ROCKSDB_NAMESPACE::ColumnFamilyOptions(
                                           test::TestOptions()),
                                       "later", &extra)
                  .ok());
  EXPECT_FALSE(t.db->HasFilter(extra));
  ASSERT_TRUE(t.db->Put(WriteOptions(), extra, "k", "v").ok());
  EXPECT_TRUE(t.db->DestroyColumnFamilyHandle(extra).ok());
}

}  // namespace
}  // namespace rocksdb_cuckoo
