// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB observability: the "rocksdb.cuckoo." DB properties,
// the Statistics tickers and the PerfContext counter of reads the filter
// answered (names and mapping in filtered_db.h).
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "rocksdb/perf_context.h"
#include "rocksdb/perf_level.h"
#include "rocksdb/statistics.h"
#include "rocksdb/wide_columns.h"
#include "test_util.h"

namespace rocksdb_cuckoo {
namespace {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Statistics;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WriteOptions;
using test::Key;
using test::TempDir;

// The integer properties, as filtered_db.h lists them; kOtherNames are the
// figures that are in the map and the text only.
const std::vector<std::string> kIntNames = {
    "rocksdb.cuckoo.num-keys",
    "rocksdb.cuckoo.capacity",
    "rocksdb.cuckoo.num-buckets",
    "rocksdb.cuckoo.table-bytes",
    "rocksdb.cuckoo.milli-bits-per-key",
    "rocksdb.cuckoo.memory-bytes",
    "rocksdb.cuckoo.fingerprint-bits",
    "rocksdb.cuckoo.width",
    "rocksdb.cuckoo.level",
    "rocksdb.cuckoo.reads-checked",
    "rocksdb.cuckoo.reads-answered-absent",
    "rocksdb.cuckoo.not-ready",
    "rocksdb.cuckoo.filter-lookups",
    "rocksdb.cuckoo.filter-absent",
    "rocksdb.cuckoo.read-retries",
    "rocksdb.cuckoo.inserts",
    "rocksdb.cuckoo.erases",
    "rocksdb.cuckoo.erase-misses",
    "rocksdb.cuckoo.insert-failures",
    "rocksdb.cuckoo.relocations",
    "rocksdb.cuckoo.range-deleted",
    "rocksdb.cuckoo.splits",
    "rocksdb.cuckoo.insert-waits",
    "rocksdb.cuckoo.split-micros",
    "rocksdb.cuckoo.last-split-micros",
    "rocksdb.cuckoo.split-in-progress",
    "rocksdb.cuckoo.maybe-checks",
    "rocksdb.cuckoo.maybe-checks-live",
    "rocksdb.cuckoo.deferred-checks",
    "rocksdb.cuckoo.check-errors",
    "rocksdb.cuckoo.pending-delete-checks",
    "rocksdb.cuckoo.assumed-unique",
    "rocksdb.cuckoo.recent-key-hits",
    "rocksdb.cuckoo.unchecked-deletes",
    "rocksdb.cuckoo.rebuilds",
    "rocksdb.cuckoo.rescans",
    "rocksdb.cuckoo.keys-scanned",
    "rocksdb.cuckoo.rebuild-in-progress",
    "rocksdb.cuckoo.rescan-wanted",
    "rocksdb.cuckoo.loaded-from-snapshot",
    "rocksdb.cuckoo.checkpoints"};
const std::vector<std::string> kOtherNames = {
    "load-factor", "bits-per-key", "expected-fpr", "snapshot-status"};
constexpr char kStats[] = "rocksdb.cuckoo.live-filter-stats";

uint64_t IntProperty(FilteredDB* db, const std::string& name,
                     ColumnFamilyHandle* cf = nullptr) {
  uint64_t v = 0;
  EXPECT_TRUE(db->GetIntProperty(cf != nullptr ? cf : db->DefaultColumnFamily(),
                                 name, &v))
      << name;
  return v;
}

// The tickers of one read, before and after.
struct Tickers {
  uint64_t keys_read, multiget_keys_read, multiget_calls, memtable_hit,
      memtable_miss, useful;
  static Tickers Of(Statistics* s) {
    using namespace ROCKSDB_NAMESPACE;
    return {s->getTickerCount(NUMBER_KEYS_READ),
            s->getTickerCount(NUMBER_MULTIGET_KEYS_READ),
            s->getTickerCount(NUMBER_MULTIGET_CALLS),
            s->getTickerCount(MEMTABLE_HIT),
            s->getTickerCount(MEMTABLE_MISS),
            s->getTickerCount(BLOOM_FILTER_USEFUL)};
  }
  Tickers operator-(const Tickers& o) const {
    return {keys_read - o.keys_read,
            multiget_keys_read - o.multiget_keys_read,
            multiget_calls - o.multiget_calls,
            memtable_hit - o.memtable_hit,
            memtable_miss - o.memtable_miss,
            useful - o.useful};
  }
};

std::unique_ptr<FilteredDB> OpenWithStatistics(
    const TempDir& dir, std::shared_ptr<Statistics> statistics,
    uint64_t initial_capacity = 1024) {
  Options options = test::TestOptions();
  options.statistics = std::move(statistics);  // no SST filter: tickers are
  std::unique_ptr<FilteredDB> db;              // the live filter's alone
  EXPECT_TRUE(FilteredDB::Open(options, dir.path(),
                               test::SmallFilterOptions(initial_capacity), &db)
                  .ok());
  return db;
}

// Every read kind: the properties count the keys the filter was asked
// about and those it ruled out; the tickers count the ruled-out keys as
// RocksDB counts absent keys, so that keys read, memtable hits + misses and
// multiget calls add up over reads answered by the filter and by the DB.
TEST(FilteredDBObservability, ReadsAnsweredByTheFilterAreCounted) {
  TempDir dir("props");
  auto statistics = ROCKSDB_NAMESPACE::CreateDBStatistics();
  auto db = OpenWithStatistics(dir, statistics);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
  }
  db->WaitForDeleteChecks();
  const uint64_t checked0 =
      IntProperty(db.get(), "rocksdb.cuckoo.reads-checked");
  const uint64_t absent0 =
      IntProperty(db.get(), "rocksdb.cuckoo.reads-answered-absent");
  EXPECT_EQ(checked0, 0u);  // writes' own filter lookups are not reads
  const Tickers t0 = Tickers::Of(statistics.get());
  ROCKSDB_NAMESPACE::SetPerfLevel(ROCKSDB_NAMESPACE::PerfLevel::kEnableCount);
  ROCKSDB_NAMESPACE::get_perf_context()->Reset();

  uint64_t gets = 0, multiget_keys = 0, multiget_calls = 0;
  std::string value;
  for (int i = 0; i < 50; ++i) {  // 50 absent, 10 present
    EXPECT_TRUE(db->Get(ReadOptions(), Key(1000 + i), &value).IsNotFound());
    ++gets;
  }
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(db->Get(ReadOptions(), Key(i), &value).ok());
    ++gets;
  }
  bool found = true;
  EXPECT_FALSE(db->KeyMayExist(ReadOptions(), db->DefaultColumnFamily(),
                               Key(2000), &value, &found));
  ++gets;
  ROCKSDB_NAMESPACE::PinnableWideColumns columns;
  EXPECT_TRUE(db->GetEntity(ReadOptions(), db->DefaultColumnFamily(), Key(2001),
                            &columns)
                  .IsNotFound());
  ++gets;
  {  // batched MultiGet: 3 absent + 1 present, then 4 absent (answered whole)
    std::vector<std::string> k = {Key(3000), Key(3001), Key(5), Key(3002)};
    std::vector<Slice> keys(k.begin(), k.end());
    std::vector<PinnableSlice> values(keys.size());
    std::vector<Status> st(keys.size());
    db->MultiGet(ReadOptions(), db->DefaultColumnFamily(), keys.size(),
                 keys.data(), values.data(), st.data());
    EXPECT_TRUE(st[2].ok());
    k = {Key(3003), Key(3004), Key(3005), Key(3006)};
    keys.assign(k.begin(), k.end());
    db->MultiGet(ReadOptions(), db->DefaultColumnFamily(), keys.size(),
                 keys.data(), values.data(), st.data());
    multiget_keys += 8;
    multiget_calls += 2;
  }
  {  // the vector MultiGet: 2 absent
    std::vector<std::string> out;
    const std::vector<Slice> keys = {Key(4000), Key(4001)};
    db->MultiGet(ReadOptions(), keys, &out);
    multiget_keys += 2;
    multiget_calls += 1;
  }

  const uint64_t checked =
      IntProperty(db.get(), "rocksdb.cuckoo.reads-checked") - checked0;
  const uint64_t absent =
      IntProperty(db.get(), "rocksdb.cuckoo.reads-answered-absent") - absent0;
  EXPECT_EQ(checked, gets + multiget_keys);
  // 50 + 1 + 1 + 3 + 4 + 2 absent keys; a false positive (rate ~1e-4) at
  // most moves one to the DB.
  EXPECT_GE(absent, 60u);
  EXPECT_LE(absent, 61u);
  const Tickers d = Tickers::Of(statistics.get()) - t0;
  EXPECT_EQ(d.useful, absent);  // no SST filters in this DB: all ours
  EXPECT_EQ(d.keys_read, gets);
  EXPECT_EQ(d.multiget_keys_read, multiget_keys);
  EXPECT_EQ(d.multiget_calls, multiget_calls);
  EXPECT_EQ(d.memtable_hit + d.memtable_miss, gets + multiget_keys);
  EXPECT_EQ(ROCKSDB_NAMESPACE::get_perf_context()->bloom_sst_miss_count,
            absent);
  ROCKSDB_NAMESPACE::SetPerfLevel(ROCKSDB_NAMESPACE::PerfLevel::kDisable);

  FilteredDBStats stats;
  ASSERT_TRUE(db->GetFilterStats(nullptr, &stats).ok());
  EXPECT_EQ(stats.reads_checked, checked0 + checked);
  EXPECT_EQ(stats.reads_absent, absent0 + absent);
  // Reads that bypass the filter are not counted.
  const ROCKSDB_NAMESPACE::Snapshot* snapshot = db->GetSnapshot();
  ReadOptions at_snapshot;
  at_snapshot.snapshot = snapshot;
  EXPECT_TRUE(db->Get(at_snapshot, Key(5000), &value).IsNotFound());
  db->ReleaseSnapshot(snapshot);
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.reads-checked"),
            checked0 + checked);
}

// Without a Statistics object the properties still count.
TEST(FilteredDBObservability, NoStatistics) {
  TempDir dir("props");
  auto db = OpenWithStatistics(dir, nullptr);
  ASSERT_TRUE(db->Put(WriteOptions(), "k", "v").ok());
  std::string value;
  EXPECT_TRUE(db->Get(ReadOptions(), "absent", &value).IsNotFound());
  EXPECT_TRUE(db->Get(ReadOptions(), "k", &value).ok());
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.reads-checked"), 2u);
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.reads-answered-absent"), 1u);
}

// Every documented name answers, agrees with GetFilterStats, and reads the
// same through the three property calls and the default-family overloads;
// unknown cuckoo names are refused; other names go to the DB.
TEST(FilteredDBObservability, PropertyNames) {
  TempDir dir("props");
  // Sized for 400 keys: the 500 below make the table split once.
  auto db = OpenWithStatistics(dir, nullptr, 400);
  for (int i = 0; i < 500; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), "v").ok());
  }
  ASSERT_TRUE(db->Delete(WriteOptions(), Key(0)).ok());
  db->WaitForDeleteChecks();
  FilteredDBStats stats;
  for (int i = 0; i < 3000; ++i) {  // the split runs in the background
    ASSERT_TRUE(db->GetFilterStats(nullptr, &stats).ok());
    if (!stats.split_in_progress) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_FALSE(stats.split_in_progress);
  ColumnFamilyHandle* def = db->DefaultColumnFamily();
  for (const std::string& name : kIntNames) {
    uint64_t v = 0, w = 0;
    ASSERT_TRUE(db->GetIntProperty(def, name, &v)) << name;
    ASSERT_TRUE(db->GetIntProperty(name, &w)) << name;  // default family
    EXPECT_EQ(v, w) << name;
    std::string text;
    ASSERT_TRUE(db->GetProperty(def, name, &text)) << name;
    EXPECT_EQ(text, std::to_string(v)) << name;
    std::map<std::string, std::string> map;
    EXPECT_FALSE(db->GetMapProperty(def, name, &map)) << name;
  }
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.num-keys"), 499u);
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.num-keys"), stats.num_keys);
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.capacity"), stats.capacity);
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.table-bytes"),
            stats.table_bytes);
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.milli-bits-per-key"),
            static_cast<uint64_t>(stats.bits_per_key * 1000 + 0.5));
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.maybe-checks"),
            stats.maybe_checks);
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.pending-delete-checks"), 0u);
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.rebuild-in-progress"), 0u);
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.not-ready"), 0u);
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.rebuilds"), stats.rebuilds);
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.rescans"), stats.rescans);
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.splits"), stats.splits);
  EXPECT_EQ(stats.splits, 1u);
  EXPECT_EQ(stats.level, 1);
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.level"),
            uint64_t(stats.level));
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.width"),
            uint64_t(stats.width));
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.fingerprint-bits"),
            uint64_t(stats.fingerprint_bits));
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.insert-waits"),
            stats.insert_waits);
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.inserts"), stats.inserts);

  std::string text;
  ASSERT_TRUE(db->GetProperty(kStats, &text));
  EXPECT_NE(text.find("[default]"), std::string::npos) << text;
  EXPECT_NE(text.find("Table: 499 keys"), std::string::npos) << text;
  EXPECT_NE(text.find("Splits: " + std::to_string(stats.splits) + " splits"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("level " + std::to_string(stats.level)),
            std::string::npos)
      << text;
  std::map<std::string, std::string> map;
  ASSERT_TRUE(db->GetMapProperty(def, kStats, &map));
  EXPECT_EQ(map["num-keys"], "499");
  EXPECT_EQ(map["erases"], std::to_string(stats.erases));
  EXPECT_EQ(map["snapshot-status"], stats.snapshot_status);
  // The map holds exactly the integer properties and the other figures.
  EXPECT_EQ(map.size(), kIntNames.size() + kOtherNames.size());
  for (const std::string& name : kIntNames) {
    const std::string key = name.substr(sizeof("rocksdb.cuckoo.") - 1);
    ASSERT_EQ(map.count(key), 1u) << key;
    EXPECT_EQ(map[key], std::to_string(IntProperty(db.get(), name))) << key;
  }
  uint64_t v = 0;
  for (const std::string& key : kOtherNames) {
    EXPECT_EQ(map.count(key), 1u) << key;
    EXPECT_FALSE(db->GetIntProperty(def, "rocksdb.cuckoo." + key, &v)) << key;
  }
  // filtered_db.h documents every figure by name.
  std::ifstream header(std::string(CUCKOO_SOURCE_DIR) +
                       "/include/rocksdb_cuckoo/filtered_db.h");
  ASSERT_TRUE(header.good());
  const std::string doc((std::istreambuf_iterator<char>(header)),
                        std::istreambuf_iterator<char>());
  for (const auto& entry : map) {
    const std::regex word("[^a-z-]" + entry.first + "[^a-z-]");
    EXPECT_TRUE(std::regex_search(doc, word))
        << entry.first << " is not documented in filtered_db.h";
  }
  EXPECT_FALSE(db->GetIntProperty(def, kStats, &v));

  for (const char* unknown :
       {"rocksdb.cuckoo.", "rocksdb.cuckoo.nope", "rocksdb.cuckoo.num-keys2"}) {
    EXPECT_FALSE(db->GetProperty(def, unknown, &text)) << unknown;
    EXPECT_FALSE(db->GetIntProperty(def, unknown, &v)) << unknown;
    EXPECT_FALSE(db->GetMapProperty(def, unknown, &map)) << unknown;
    EXPECT_FALSE(db->GetAggregatedIntProperty(unknown, &v)) << unknown;
  }
  // RocksDB's own properties are forwarded.
  EXPECT_TRUE(db->GetIntProperty(def, "rocksdb.estimate-num-keys", &v));
  EXPECT_GT(v, 0u);
  EXPECT_TRUE(db->GetProperty("rocksdb.stats", &text));
  EXPECT_TRUE(db->GetMapProperty("rocksdb.cfstats", &map));
  EXPECT_TRUE(db->GetAggregatedIntProperty("rocksdb.estimate-num-keys", &v));
  EXPECT_FALSE(db->GetIntProperty(def, "rocksdb.no-such-property", &v));
}

// Families without a filter (not opted in, created later, dropped) have no
// cuckoo properties; GetAggregatedIntProperty sums the filtered ones.
TEST(FilteredDBObservability, FamiliesWithoutAFilterAndAggregates) {
  TempDir dir("props");
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.filtered_column_families = {"default", "a"};
  std::vector<ColumnFamilyHandle*> handles;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(
      test::OpenFamilies(dir.path(), {"a", "plain"}, fopts, &handles, &db)
          .ok());
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), handles[0], Key(i), "v").ok());
  }
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), handles[1], Key(i), "v").ok());
    ASSERT_TRUE(db->Put(WriteOptions(), handles[2], Key(i), "v").ok());
  }
  uint64_t v = 0;
  std::string text;
  EXPECT_EQ(IntProperty(db.get(), "rocksdb.cuckoo.num-keys", handles[1]), 20u);
  EXPECT_FALSE(db->GetIntProperty(handles[2], "rocksdb.cuckoo.num-keys", &v));
  EXPECT_FALSE(db->GetProperty(handles[2], kStats, &text));
  EXPECT_TRUE(db->GetIntProperty(handles[2], "rocksdb.estimate-num-keys", &v));
  ASSERT_TRUE(db->GetAggregatedIntProperty("rocksdb.cuckoo.num-keys", &v));
  EXPECT_EQ(v, 50u);
  const uint64_t table_bits =
      8 * (IntProperty(db.get(), "rocksdb.cuckoo.table-bytes", handles[0]) +
           IntProperty(db.get(), "rocksdb.cuckoo.table-bytes", handles[1]));
  ASSERT_TRUE(
      db->GetAggregatedIntProperty("rocksdb.cuckoo.milli-bits-per-key", &v));
  EXPECT_EQ(v, (table_bits * 1000 + 25) / 50);
  ASSERT_TRUE(db->DropColumnFamily(handles[1]).ok());
  EXPECT_FALSE(db->GetIntProperty(handles[1], "rocksdb.cuckoo.num-keys", &v));
  ASSERT_TRUE(db->GetAggregatedIntProperty("rocksdb.cuckoo.num-keys", &v));
  EXPECT_EQ(v, 30u);
  test::DestroyHandles(db.get(), &handles);
}

}  // namespace
}  // namespace rocksdb_cuckoo
