// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The record of recent writes (FilteredDBOptions::recent_keys,
// plugin/cuckoo/live/recent_keys.h): keys FilteredDB left live are deleted
// and overwritten without a read, and every write that may end a key's life
// behind the record's back (a failed write, DeleteRange, an ingestion, a
// drop) makes it forget.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../../plugin/cuckoo/live/recent_keys.h"
#include "../../plugin/cuckoo/live/test_hooks.h"
#include "rocksdb/compaction_filter.h"
#include "rocksdb/sst_file_writer.h"
#include "rocksdb/write_batch.h"
#include "test_util.h"

namespace rocksdb_cuckoo {
namespace {

using live::RecentKeys;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WriteOptions;
using test::TempDir;

// ------------------------------------------------------------ RecentKeys

// Slots 1 and 1 + 4 * n share a partition when there are 4 stripes and
// one partition per stripe (keys <= 4 * kPerPartition).
constexpr size_t kPer = RecentKeys::kPerPartition;

TEST(RecentKeys, AddContainsRemoveClear) {
  RecentKeys r(4, 4 * kPer);
  EXPECT_EQ(r.capacity(), 4 * kPer);
  const std::string long_key(100, 'x');
  EXPECT_FALSE(r.Contains(1, 0, 7, "a"));
  r.Add(1, 0, 7, "a");
  r.Add(1, 0, 7, long_key);  // same hash, other key
  r.Add(1, 5, 7, "a");       // same key, other family
  EXPECT_TRUE(r.Contains(1, 0, 7, "a"));
  EXPECT_TRUE(r.Contains(1, 0, 7, long_key));
  EXPECT_TRUE(r.Contains(1, 5, 7, "a"));
  EXPECT_FALSE(r.Contains(1, 0, 8, "a"));  // hash differs
  EXPECT_FALSE(r.Contains(1, 0, 7, "b"));  // key differs
  EXPECT_FALSE(r.Contains(2, 0, 7, "a"));  // other partition
  EXPECT_EQ(r.size(), 3u);
  r.Add(1, 0, 7, "a");  // already there: no second entry
  EXPECT_EQ(r.size(), 3u);
  r.Remove(1, 0, 7, "a");
  EXPECT_FALSE(r.Contains(1, 0, 7, "a"));
  EXPECT_TRUE(r.Contains(1, 5, 7, "a"));
  r.Remove(1, 0, 7, "never added");  // no effect
  EXPECT_EQ(r.size(), 2u);
  r.Clear();
  EXPECT_EQ(r.size(), 0u);
  EXPECT_FALSE(r.Contains(1, 0, 7, long_key));
}

TEST(RecentKeys, FullPartitionForgetsItsOldestFirst) {
  RecentKeys r(4, 4 * kPer);
  auto slot = [](uint64_t i) { return 3 + 4 * i; };  // all in partition 3
  for (uint64_t i = 0; i < kPer; ++i) {
    r.Add(slot(i), 0, i + 1, std::to_string(i));
  }
  r.Add(slot(kPer), 0, kPer + 1, "new");  // replaces "0"
  EXPECT_FALSE(r.Contains(slot(0), 0, 1, "0"));
  for (uint64_t i = 1; i < kPer; ++i) {
    EXPECT_TRUE(r.Contains(slot(i), 0, i + 1, std::to_string(i)));
  }
  EXPECT_TRUE(r.Contains(slot(kPer), 0, kPer + 1, "new"));
  r.Remove(slot(2), 0, 3, "2");
  r.Add(slot(99), 0, 100, "99");  // takes the free slot, nothing forgotten
  EXPECT_TRUE(r.Contains(slot(1), 0, 2, "1"));
  EXPECT_TRUE(r.Contains(slot(99), 0, 100, "99"));
  EXPECT_EQ(r.size(), kPer);
}

TEST(RecentKeys, CapacityIsWholePartitionsPerStripe) {
  EXPECT_EQ(RecentKeys(4, 1).capacity(), 4 * kPer);
  EXPECT_EQ(RecentKeys(4, 4 * kPer + 1).capacity(), 8 * kPer);
  EXPECT_EQ(RecentKeys(1024, 65536).capacity(), 65536u);
  EXPECT_EQ(RecentKeys(1024, 65537).capacity(), 131072u);
}

TEST(RecentKeys, Disabled) {
  RecentKeys r(4, 0);
  EXPECT_FALSE(r.enabled());
  r.Add(0, 0, 1, "a");
  EXPECT_FALSE(r.Contains(0, 0, 1, "a"));
  r.Remove(0, 0, 1, "a");
  r.Clear();
  EXPECT_EQ(r.size(), 0u);
}

// ------------------------------------------------------------ FilteredDB

std::unique_ptr<FilteredDB> Open(
    const std::string& path,
    uint64_t recent_keys = FilteredDBOptions().recent_keys) {
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.recent_keys = recent_keys;
  std::unique_ptr<FilteredDB> db;
  EXPECT_TRUE(FilteredDB::Open(test::TestOptions(), path, fopts, &db).ok());
  return db;
}

FilteredDBStats Stats(FilteredDB* db) {
  FilteredDBStats s;
  EXPECT_TRUE(db->GetFilterStats(nullptr, &s).ok());
  return s;
}

bool Found(FilteredDB* db, const std::string& key) {
  std::string value;
  return db->Get(ReadOptions(), key, &value).ok();
}

// A key Put through FilteredDB is deleted with no read and no deferred
// check, and its fingerprint goes at once; an overwrite reads nothing.
TEST(FilteredDbRecentKeys, DeleteAndOverwriteOfARecentKeyReadNothing) {
  TempDir dir;
  auto db = Open(dir.path());
  ASSERT_TRUE(db->Put(WriteOptions(), "k", "v1").ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "k", "v2").ok());  // overwrite
  ASSERT_TRUE(db->Merge(WriteOptions(), "k", "+").ok());
  FilteredDBStats s = Stats(db.get());
  EXPECT_EQ(s.recent_key_hits, 2u);
  EXPECT_EQ(s.maybe_checks, 0u);
  EXPECT_EQ(s.num_keys, 1u);
  ASSERT_TRUE(db->Delete(WriteOptions(), "k").ok());
  s = Stats(db.get());
  EXPECT_EQ(s.recent_key_hits, 3u);
  EXPECT_EQ(s.pending_checks, 0u);
  EXPECT_EQ(s.maybe_checks, 0u);
  EXPECT_EQ(s.num_keys, 0u);  // erased at once
  EXPECT_FALSE(Found(db.get(), "k"));
  // Deleted: not recorded any more, so the next delete of k (a no-op) is
  // ruled out by the filter alone, and a Put inserts again.
  ASSERT_TRUE(db->Delete(WriteOptions(), "k").ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "k", "v3").ok());
  db->WaitForDeleteChecks();
  s = Stats(db.get());
  EXPECT_EQ(s.num_keys, 1u);
  EXPECT_EQ(s.erase_misses, 0u);
  EXPECT_TRUE(Found(db.get(), "k"));
}

// The same through batches (planned under the keys' stripes).
TEST(FilteredDbRecentKeys, Batches) {
  TempDir dir;
  auto db = Open(dir.path());
  ROCKSDB_NAMESPACE::WriteBatch put;
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(put.Put(test::Key(i), "v").ok());
  ASSERT_TRUE(db->Write(WriteOptions(), &put).ok());
  ROCKSDB_NAMESPACE::WriteBatch del;
  for (int i = 0; i < 50; i += 2) ASSERT_TRUE(del.Delete(test::Key(i)).ok());
  ASSERT_TRUE(db->Write(WriteOptions(), &del).ok());
  const FilteredDBStats s = Stats(db.get());
  EXPECT_EQ(s.recent_key_hits, 25u);
  EXPECT_EQ(s.maybe_checks, 0u);
  EXPECT_EQ(s.pending_checks, 0u);
  EXPECT_EQ(s.num_keys, 25u);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(Found(db.get(), test::Key(i)), i % 2 == 1) << i;
  }
}

// A write that fails may or may not have ended the key's life, as far as
// FilteredDB knows: the key is forgotten, and its next delete is checked.
TEST(FilteredDbRecentKeys, FailedWriteForgetsTheKey) {
  TempDir dir;
  auto db = Open(dir.path());
  ASSERT_TRUE(db->Put(WriteOptions(), "k", "v").ok());
  WriteOptions invalid;  // RocksDB refuses sync writes without WAL
  invalid.sync = true;
  invalid.disableWAL = true;
  EXPECT_FALSE(db->Delete(invalid, "k").ok());
  EXPECT_TRUE(Found(db.get(), "k"));
  EXPECT_FALSE(db->Put(invalid, "n", "v").ok());  // a new key: not recorded
  const uint64_t hits = Stats(db.get()).recent_key_hits;
  ASSERT_TRUE(db->Delete(WriteOptions(), "k").ok());
  db->WaitForDeleteChecks();
  const FilteredDBStats s = Stats(db.get());
  EXPECT_EQ(s.recent_key_hits, hits);
  EXPECT_EQ(s.maybe_checks_live, 1u);  // the check found it live
  // The failed Put of "n" left its copy (inserted before the write; a failed
  // write keeps the filter a superset).
  EXPECT_EQ(s.num_keys, 1u);
  EXPECT_EQ(s.erase_misses, 0u);
  EXPECT_FALSE(Found(db.get(), "k"));
}

// Writes under the exclusive writer lock do not update the record, so they
// clear it: after a DeleteRange, a Delete of a key Put before it is checked.
TEST(FilteredDbRecentKeys, DeleteRangeForgetsEveryKey) {
  TempDir dir;
  auto db = Open(dir.path());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), test::Key(i), "v").ok());
  }
  ASSERT_TRUE(db->DeleteRange(WriteOptions(), db->DefaultColumnFamily(),
                              test::Key(0), test::Key(5))
                  .ok());
  const uint64_t hits = Stats(db.get()).recent_key_hits;
  ASSERT_TRUE(db->Delete(WriteOptions(), test::Key(7)).ok());
  db->WaitForDeleteChecks();
  const FilteredDBStats s = Stats(db.get());
  EXPECT_EQ(s.recent_key_hits, hits);
  EXPECT_EQ(s.maybe_checks_live, 1u);
  EXPECT_EQ(s.num_keys, 4u);
}

// An ingested file may delete a recorded key behind the record's back: a
// later Delete of that key must not erase a fingerprint on the record's word
// (the rebuilt filter has no copy for it; the erase would take another
// key's). After the ingestion of a tombstone for k, Delete(k) erases
// nothing.
TEST(FilteredDbRecentKeys, IngestionForgetsEveryKey) {
  TempDir dir;
  auto db = Open(dir.path() + "/db");
  ASSERT_TRUE(db->Put(WriteOptions(), "k", "v").ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "other", "v").ok());
  const std::string sst = dir.path() + "/tombstone.sst";
  ROCKSDB_NAMESPACE::SstFileWriter writer(ROCKSDB_NAMESPACE::EnvOptions(),
                                          test::TestOptions());
  ASSERT_TRUE(writer.Open(sst).ok());
  ASSERT_TRUE(writer.Delete("k").ok());
  ASSERT_TRUE(writer.Finish().ok());
  ASSERT_TRUE(db->IngestExternalFile(
                    {sst}, ROCKSDB_NAMESPACE::IngestExternalFileOptions())
                  .ok());
  EXPECT_FALSE(Found(db.get(), "k"));
  const FilteredDBStats before = Stats(db.get());
  EXPECT_EQ(before.num_keys, 1u);  // rebuilt from the DB: "other"
  ASSERT_TRUE(db->Delete(WriteOptions(), "k").ok());
  db->WaitForDeleteChecks();
  const FilteredDBStats after = Stats(db.get());
  EXPECT_EQ(after.recent_key_hits, before.recent_key_hits);
  EXPECT_EQ(after.erases, before.erases);
  EXPECT_EQ(after.num_keys, 1u);
  EXPECT_TRUE(Found(db.get(), "other"));
}

// A key can stop being live without a FilteredDB write (a compaction filter
// drops it: documented as leaving extra positives only). A rebuild of the
// filter from the DB then has no copy for it, so the record must not survive
// the rebuild: a later Delete of the key, answered "maybe" by another key's
// colliding fingerprint, would erase that key's only copy, and a Put would
// insert nothing. 8-bit fingerprints make such collisions frequent. Failed
// before the fix (197 false negatives of 40,000 keys).
class DropX : public ROCKSDB_NAMESPACE::CompactionFilter {
 public:
  bool Filter(int, const ROCKSDB_NAMESPACE::Slice& key,
              const ROCKSDB_NAMESPACE::Slice&, std::string*,
              bool*) const override {
    return !key.empty() && key[0] == 'x';
  }
  const char* Name() const override { return "DropX"; }
};

TEST(FilteredDbRecentKeys, RebuildForgetsEveryKey) {
  for (bool background : {false, true}) {
    SCOPED_TRACE(background ? "rescan" : "RebuildFilter");
    TempDir dir;
    static DropX drop_x;
    ROCKSDB_NAMESPACE::Options options = test::TestOptions();
    options.compaction_filter = &drop_x;
    FilteredDBOptions fopts = test::SmallFilterOptions(1024);
    fopts.filter.fingerprint_bits = 8;
    fopts.recent_keys = 65536;
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(options, dir.path(), fopts, &db).ok());
    constexpr int kN = 8000;
    auto key = [](char c, int i) {
      char buf[16];
      snprintf(buf, sizeof(buf), "%c%07d", c, i);
      return std::string(buf);
    };
    for (int i = 0; i < kN; ++i) {
      ASSERT_TRUE(db->Put(WriteOptions(), key('j', i), "v").ok());
      ASSERT_TRUE(db->Put(WriteOptions(), key('x', i), "v").ok());
    }
    ASSERT_TRUE(db->Flush(ROCKSDB_NAMESPACE::FlushOptions()).ok());
    ASSERT_TRUE(
        db->CompactRange(ROCKSDB_NAMESPACE::CompactRangeOptions(), nullptr,
                         nullptr)
            .ok());  // the x keys are gone from the DB, not from the filter
    if (background) {
      // New keys make the table split until it asks for a rescan.
      for (int i = 0; i < 4 * kN; ++i) {
        ASSERT_TRUE(db->Put(WriteOptions(), key('y', i), "v").ok());
      }
      db->WaitForFilterRebuilds();
      ASSERT_GT(Stats(db.get()).rescans, 0u);
    } else {
      ASSERT_TRUE(db->RebuildFilter(nullptr).ok());
    }
    const cuckoo::LiveKeyFilter* filter = db->GetLiveKeyFilter(nullptr);
    int touched = 0;
    for (int i = 0; i < kN; ++i) {
      const std::string x = key('x', i);
      if (!filter->MayContain(x)) continue;  // a colliding fingerprint
      ++touched;
      if (i % 2 == 1) {
        ASSERT_TRUE(db->Delete(WriteOptions(), x).ok());
      } else {
        ASSERT_TRUE(db->Put(WriteOptions(), x, "again").ok());
      }
    }
    EXPECT_GT(touched, 0);
    db->WaitForDeleteChecks();
    int false_negatives = 0;
    for (char c : {'j', 'x'}) {
      for (int i = 0; i < kN; ++i) {
        std::string value;
        const std::string k = key(c, i);
        if (db->GetBaseDB()->Get(ReadOptions(), k, &value).ok() &&
            !Found(db.get(), k)) {
          ++false_negatives;
        }
      }
    }
    EXPECT_EQ(false_negatives, 0);
  }
}

// Runs `write` on its own thread, paused (the first single-key write to get
// there) at WriteOneShared:BeforeWrite, i.e. holding its key's stripe and
// already recorded; meanwhile `other` runs on a second thread, which must
// not finish while the write is paused (it waits for the stripe). Then the
// write goes on and both threads are joined.
void WriteWithAnotherWaitingBeforeItsDbWrite(
    const std::function<void()>& write, const std::function<void()>& other) {
  static std::atomic<int> state{0};  // 1: paused, 2: released
  state = 0;
  live::SetTestHook([](const char* point) {
    if (std::strcmp(point, "WriteOneShared:BeforeWrite") != 0) return;
    int expected = 0;
    if (!state.compare_exchange_strong(expected, 1)) return;
    while (state.load() != 2) std::this_thread::yield();
  });
  std::thread first(write);
  while (state.load() != 1) std::this_thread::yield();
  std::atomic<bool> done{false};
  std::thread second([&] {
    other();
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(done.load()) << "the second write ran inside the first";
  state = 2;
  first.join();
  second.join();
  live::SetTestHook(nullptr);
}

// A Delete racing the Put that records its key: the Put is paused between
// its filter insert and its DB write (stripe held; the key is recorded
// already, before the write). The Delete waits for the stripe, then finds
// the key recorded (live) and erases its copy. Neither order loses a key or
// leaves a copy.
TEST(FilteredDbRecentKeys, DeleteRacingThePutThatRecordsTheKey) {
  TempDir dir;
  auto db = Open(dir.path());
  WriteWithAnotherWaitingBeforeItsDbWrite(
      [&] { EXPECT_TRUE(db->Put(WriteOptions(), "k", "v").ok()); },
      [&] { EXPECT_TRUE(db->Delete(WriteOptions(), "k").ok()); });
  db->WaitForDeleteChecks();
  const FilteredDBStats s = Stats(db.get());
  EXPECT_EQ(s.recent_key_hits, 1u);
  EXPECT_EQ(s.num_keys, 0u);
  EXPECT_EQ(s.erase_misses, 0u);
  EXPECT_FALSE(Found(db.get(), "k"));
}

// A single-key Put records a key it makes live before its DB write (under
// the key's stripe), so a failed write must forget it before the stripe
// goes. Worst interleaving: a Delete of the key waits for the stripe while
// the Put, recorded, is paused before its write, which then fails. The
// Delete must not find the key recorded: it was never live, and trusting
// the record would erase a fingerprint copy with no check (the copy of
// whichever key shares it). Here the check finds the key not live and the
// failed Put's copy stays (a failed write keeps the filter a superset).
// Without the forget after a failed write: recent_key_hits 1, num_keys 0.
TEST(FilteredDbRecentKeys, DeleteWaitingForAFailedPutDoesNotTrustItsRecord) {
  TempDir dir;
  auto db = Open(dir.path());
  WriteOptions invalid;  // RocksDB refuses sync writes without WAL
  invalid.sync = true;
  invalid.disableWAL = true;
  WriteWithAnotherWaitingBeforeItsDbWrite(
      [&] { EXPECT_FALSE(db->Put(invalid, "n", "v").ok()); },
      [&] { EXPECT_TRUE(db->Delete(WriteOptions(), "n").ok()); });
  db->WaitForDeleteChecks();
  const FilteredDBStats s = Stats(db.get());
  EXPECT_EQ(s.recent_key_hits, 0u);
  EXPECT_EQ(s.maybe_checks, 1u);  // the Delete's deferred check
  EXPECT_EQ(s.maybe_checks_live, 0u);
  EXPECT_EQ(s.num_keys, 1u);  // the failed Put's copy
  EXPECT_EQ(s.erase_misses, 0u);
  EXPECT_FALSE(Found(db.get(), "n"));
  // A later Put of the key records it again.
  ASSERT_TRUE(db->Put(WriteOptions(), "n", "v").ok());
  ASSERT_TRUE(db->Delete(WriteOptions(), "n").ok());
  EXPECT_EQ(Stats(db.get()).recent_key_hits, 1u);
}

// Many threads writing and deleting the same few keys, with the record and
// without it: afterwards the filter holds exactly the live keys.
TEST(FilteredDbRecentKeys, ConcurrentWritersOfFewKeysStayExact) {
  for (uint64_t recent : {uint64_t{0}, uint64_t{16}, uint64_t{4096}}) {
    SCOPED_TRACE(recent);
    TempDir dir;
    auto db = Open(dir.path(), recent);
    test::RunRandomWriters(db.get(), 3000, 64, 12345);
    db->WaitForDeleteChecks();
    uint64_t live = 0;
    for (int i = 0; i < 64; ++i) {
      std::string value;
      const bool in_db =
          db->GetBaseDB()->Get(ReadOptions(), test::Key(i), &value).ok();
      live += in_db;
      if (in_db) {
        EXPECT_TRUE(Found(db.get(), test::Key(i))) << i;
      }
    }
    const FilteredDBStats s = Stats(db.get());
    EXPECT_EQ(s.num_keys, live);
    EXPECT_EQ(s.erase_misses, 0u);
    if (recent != 0) {
      EXPECT_GT(s.recent_key_hits, 0u);
    }
  }
}

}  // namespace
}  // namespace rocksdb_cuckoo
