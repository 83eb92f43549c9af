// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDBOptions::unchecked_delete_ratio: deletes that read nothing and
// leave their fingerprints, dropped by a rebuild from the DB once they reach
// the ratio of the keys. Never a false negative; reads stay exact (the DB
// answers what the filter lets through).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rocksdb/write_batch.h"
#include "test_util.h"

namespace rocksdb_cuckoo {
namespace {

using ROCKSDB_NAMESPACE::FlushOptions;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WriteOptions;
using test::TempDir;

FilteredDBOptions UncheckedOptions(double ratio, uint64_t recent_keys = 0) {
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.unchecked_delete_ratio = ratio;
  fopts.recent_keys = recent_keys;
  return fopts;
}

FilteredDBStats Stats(FilteredDB* db) {
  FilteredDBStats s;
  EXPECT_TRUE(db->GetFilterStats(nullptr, &s).ok());
  return s;
}

// Every key of [0, n): the filter never rules out a key the DB has, and a
// read through FilteredDB answers as the DB does.
void ExpectExact(FilteredDB* db, int n) {
  const cuckoo::LiveKeyFilter* filter = db->GetLiveKeyFilter(nullptr);
  for (int i = 0; i < n; ++i) {
    const std::string key = test::Key(i);
    std::string in_db, through;
    const bool live = db->GetBaseDB()->Get(ReadOptions(), key, &in_db).ok();
    ASSERT_EQ(db->Get(ReadOptions(), key, &through).ok(), live) << key;
    if (live) {
      ASSERT_EQ(through, in_db) << key;
      ASSERT_TRUE(filter->MayContain(key)) << "false negative for " << key;
    }
  }
}

// Deletes of live keys read nothing (no maybe check, nothing deferred) and
// leave their fingerprints; once they reach a quarter of the keys a rescan
// drops them.
TEST(FilteredDbUnchecked, DeletesReadNothingAndARescanDropsTheirEntries) {
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), dir.path(),
                               UncheckedOptions(0.25), &db)
                  .ok());
  constexpr int kN = 4000;
  for (int i = 0; i < kN; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), test::Key(i), "v").ok());
  }
  ASSERT_TRUE(db->Flush(FlushOptions()).ok());
  db->WaitForFilterRebuilds();
  const FilteredDBStats before = Stats(db.get());
  ASSERT_EQ(before.num_keys, uint64_t{kN});
  // 200 deletes: fewer than the limit (a quarter of the keys): no rescan,
  // the fingerprints stay.
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(db->Delete(WriteOptions(), test::Key(i)).ok());
  }
  db->WaitForDeleteChecks();
  FilteredDBStats s = Stats(db.get());
  EXPECT_EQ(s.maybe_checks, before.maybe_checks);
  EXPECT_EQ(s.deferred_checks, before.deferred_checks);
  EXPECT_EQ(s.unchecked_deletes, 200u);
  EXPECT_EQ(s.num_keys, uint64_t{kN});
  EXPECT_EQ(s.rescans, before.rescans);
  ASSERT_NO_FATAL_FAILURE(ExpectExact(db.get(), kN));
  // 1800 more, in batches too: past the limit, a rescan drops the entries.
  for (int i = 200; i < 2000; i += 2) {
    ROCKSDB_NAMESPACE::WriteBatch batch;
    ASSERT_TRUE(batch.Delete(test::Key(i)).ok());
    ASSERT_TRUE(batch.SingleDelete(test::Key(i + 1)).ok());
    ASSERT_TRUE(db->Write(WriteOptions(), &batch).ok());
  }
  db->WaitForFilterRebuilds();
  db->WaitForDeleteChecks();
  s = Stats(db.get());
  EXPECT_EQ(s.maybe_checks, before.maybe_checks);
  EXPECT_EQ(s.unchecked_deletes, 2000u);
  EXPECT_GE(s.rescans, before.rescans + 1);
  // The rescan dropped the entries of the deletes made before it started
  // (the last deletes may have run while it scanned: their entries stay).
  EXPECT_GE(s.num_keys, 2000u);
  EXPECT_LT(s.num_keys, uint64_t{kN});
  ASSERT_NO_FATAL_FAILURE(ExpectExact(db.get(), kN));
  // A rebuild drops them all.
  ASSERT_TRUE(db->RebuildFilter(nullptr).ok());
  EXPECT_EQ(Stats(db.get()).num_keys, 2000u);
  // A key deleted unchecked and Put again is live (its fingerprint may be
  // there twice: never too few copies).
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), test::Key(i), "again").ok());
  }
  ASSERT_NO_FATAL_FAILURE(ExpectExact(db.get(), kN));
}

// With the record of recent writes on, a Delete of a recorded key is exact
// (its fingerprint goes at once); only keys it does not know are unchecked.
TEST(FilteredDbUnchecked, RecentKeysStayExact) {
  TempDir dir;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), dir.path(),
                               UncheckedOptions(0.25, 65536), &db)
                  .ok());
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), test::Key(i), "v").ok());
  }
  for (int i = 0; i < 500; ++i) {
    ASSERT_TRUE(db->Delete(WriteOptions(), test::Key(i)).ok());
  }
  const FilteredDBStats s = Stats(db.get());
  EXPECT_EQ(s.unchecked_deletes, 0u);
  EXPECT_EQ(s.recent_key_hits, 500u);
  EXPECT_EQ(s.num_keys, 500u);
  ASSERT_NO_FATAL_FAILURE(ExpectExact(db.get(), 1000));
}

// Four writers of few keys, and readers, with rescans every 256 unchecked
// deletes running under them: no false negative.
TEST(FilteredDbUnchecked, ConcurrentWritersAndRescans) {
  for (uint64_t recent : {uint64_t{0}, uint64_t{4096}}) {
    SCOPED_TRACE(recent);
    TempDir dir;
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), dir.path(),
                                 UncheckedOptions(0.5, recent), &db)
                    .ok());
    test::RunRandomWriters(db.get(), 3000, 200, 777);
    db->WaitForFilterRebuilds();
    db->WaitForDeleteChecks();
    const FilteredDBStats s = Stats(db.get());
    if (recent == 0) {
      EXPECT_GT(s.unchecked_deletes, 256u);
      EXPECT_GT(s.rescans, 0u);
    } else {
      // Every live key was written through FilteredDB and is recorded: the
      // deletes are exact.
      EXPECT_EQ(s.unchecked_deletes, 0u);
    }
    EXPECT_EQ(s.erase_misses, 0u);
    ASSERT_NO_FATAL_FAILURE(ExpectExact(db.get(), 200));
  }
}

TEST(FilteredDbUnchecked, RatioOutsideItsRangeIsRefused) {
  TempDir dir;
  for (double ratio : {-0.5, 16.5, std::numeric_limits<double>::quiet_NaN(),
                       std::numeric_limits<double>::infinity()}) {
    std::unique_ptr<FilteredDB> db;
    const Status s = FilteredDB::Open(test::TestOptions(), dir.path(),
                                      UncheckedOptions(ratio), &db);
    EXPECT_TRUE(s.IsInvalidArgument()) << ratio << ": " << s.ToString();
    EXPECT_EQ(db, nullptr);
  }
  std::unique_ptr<FilteredDB> db;
  EXPECT_TRUE(FilteredDB::Open(test::TestOptions(), dir.path(),
                               UncheckedOptions(16), &db)
                  .ok());
}

}  // namespace
}  // namespace rocksdb_cuckoo
