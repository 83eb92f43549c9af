// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// False negatives found by hostile review through the public API, each
// reproduced here (each test failed before its fix).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "rocksdb/write_batch.h"
#include "test_util.h"

namespace rocksdb_cuckoo {
namespace {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::FlushOptions;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WriteOptions;
using test::TempDir;

// A Delete written without WAL, then a logged Put, then a flush that is
// queued but cannot run (background work paused) and Close. RocksDB's Close
// flushes only non-empty mutable memtables, so the switched-out memtable
// with the delete is dropped and the key is live again after reopen, at the
// same sequence number. The snapshot written at Close (which lacks the key)
// must not be used then.
TEST(FilteredDbRegression, CloseAfterAnUnloggedDeleteWhoseFlushIsPending) {
  TempDir dir;
  const std::string path = dir.path() + "/db";
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.snapshot_dir = dir.path() + "/snapshots";
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), path, fopts, &db).ok());
    ASSERT_TRUE(db->Put(WriteOptions(), "k", "v").ok());
    ASSERT_TRUE(db->Flush(FlushOptions()).ok());
    WriteOptions no_wal;
    no_wal.disableWAL = true;
    ASSERT_TRUE(db->Delete(no_wal, "k").ok());
    ASSERT_TRUE(db->Put(WriteOptions(), "j", "v").ok());
    db->WaitForDeleteChecks();
    ASSERT_TRUE(db->PauseBackgroundWork().ok());
    FlushOptions no_wait;
    no_wait.wait = false;
    ASSERT_TRUE(db->Flush(no_wait).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), path, fopts, &db).ok());
  std::string value;
  const Status base = db->GetBaseDB()->Get(ReadOptions(), "k", &value);
  const Status filtered = db->Get(ReadOptions(), "k", &value);
  EXPECT_EQ(base.ok(), filtered.ok())
      << "base: " << base.ToString() << ", filtered: " << filtered.ToString();
  EXPECT_TRUE(db->Get(ReadOptions(), "j", &value).ok());
}

// DropColumnFamilies stops at the first family it cannot drop, after
// dropping the ones before it, and returns that error: here "a" is dropped,
// then the default family (or "a" again) fails. A Delete that then ignores
// the missing family writes nothing; the filter must not lose the key that
// a read through the handle still finds.
TEST(FilteredDbRegression, PartlyFailedDropOfAFilteredFamily) {
  for (bool twice : {false, true}) {
    SCOPED_TRACE(twice ? "{a, a}" : "{a, default}");
    TempDir dir;
    std::vector<ColumnFamilyHandle*> handles;
    std::unique_ptr<FilteredDB> db;
    FilteredDBOptions fopts = test::SmallFilterOptions();
    fopts.filtered_column_families = {"a"};
    ASSERT_TRUE(
        test::OpenFamilies(dir.path(), {"a"}, fopts, &handles, &db).ok());
    ASSERT_TRUE(db->Put(WriteOptions(), handles[1], "k", "v").ok());
    const Status drop = twice
                            ? db->DropColumnFamilies({handles[1], handles[1]})
                            : db->DropColumnFamilies({handles[1], handles[0]});
    EXPECT_FALSE(drop.ok());
    WriteOptions ignore_missing;
    ignore_missing.ignore_missing_column_families = true;
    ASSERT_TRUE(db->Delete(ignore_missing, handles[1], "k").ok());
    db->WaitForDeleteChecks();
    std::string value;
    const Status base =
        db->GetBaseDB()->Get(ReadOptions(), handles[1], "k", &value);
    const Status filtered = db->Get(ReadOptions(), handles[1], "k", &value);
    EXPECT_EQ(base.ok(), filtered.ok())
        << "base: " << base.ToString() << ", filtered: " << filtered.ToString();
    test::DestroyHandles(db.get(), &handles);
  }
}

// A family with inplace_update_support makes DB::GetSnapshot return null.
// A Delete whose check would be deferred to a snapshot then checks at once
// (crashed: the shared snapshot's sequence number was read from null).
TEST(FilteredDbRegression, DeletesWhenTheDbRefusesSnapshots) {
  TempDir dir;
  ROCKSDB_NAMESPACE::Options options = test::TestOptions();
  options.inplace_update_support = true;
  options.allow_concurrent_memtable_write = false;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.recent_keys = 0;  // every delete checked
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(options, dir.path(), fopts, &db).ok());
  ASSERT_EQ(db->GetSnapshot(), nullptr);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), test::Key(i), "v").ok());
  }
  for (int i = 0; i < 100; i += 2) {
    ASSERT_TRUE(db->Delete(WriteOptions(), test::Key(i)).ok());
  }
  ROCKSDB_NAMESPACE::WriteBatch batch;
  ASSERT_TRUE(batch.Delete(test::Key(1)).ok());
  ASSERT_TRUE(batch.Delete(test::Key(3)).ok());
  ASSERT_TRUE(db->Write(WriteOptions(), &batch).ok());
  db->WaitForDeleteChecks();
  FilteredDBStats stats;
  ASSERT_TRUE(db->GetFilterStats(nullptr, &stats).ok());
  EXPECT_EQ(stats.num_keys, 48u);  // exact: every delete was checked
  EXPECT_EQ(stats.erase_misses, 0u);
  for (int i = 0; i < 100; ++i) {
    std::string value;
    const bool live = i % 2 == 1 && i != 1 && i != 3;
    EXPECT_EQ(db->Get(ReadOptions(), test::Key(i), &value).ok(), live) << i;
  }
}

// An absurd recent_keys is refused before the DB opens (hung in an
// overflowing loop above 2^63, or threw std::bad_alloc out of Open after
// the DB had opened, leaking it).
TEST(FilteredDbRegression, HugeRecentKeysIsRefusedBeforeTheDbOpens) {
  TempDir dir;
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.recent_keys = ~uint64_t{0};
  std::unique_ptr<FilteredDB> db;
  const Status s =
      FilteredDB::Open(test::TestOptions(), dir.path(), fopts, &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(db, nullptr);
  fopts.recent_keys = 1000;  // the DB is not left locked
  ASSERT_TRUE(
      FilteredDB::Open(test::TestOptions(), dir.path(), fopts, &db).ok());
}

}  // namespace
}  // namespace rocksdb_cuckoo
