// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// CuckooStatistics (include/rocksdb_cuckoo/statistics.h): created by name as
// db_bench's --statistics_string does, records RocksDB's tickers as the
// built-in Statistics do, and reports the SST policies' counters (filters
// built, invalid blocks, ...) counted from its creation or Reset.
#include "rocksdb_cuckoo/statistics.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "filter_bits_abi.h"
#include "open_db.h"
#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "rocksdb_cuckoo/filter_policy.h"

namespace rocksdb_cuckoo {
namespace {

namespace rdb = ROCKSDB_NAMESPACE;

std::shared_ptr<rdb::Statistics> CreateByName() {
  static const int registered =
      RegisterCuckooStatistics(*rdb::ObjectLibrary::Default(), "");
  EXPECT_EQ(registered, 1);
  std::shared_ptr<rdb::Statistics> stats;
  const rdb::Status s = rdb::Statistics::CreateFromString(
      rdb::ConfigOptions(), kCuckooStatisticsName, &stats);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return stats;
}

uint64_t Counter(const rdb::Statistics& stats, const std::string& name) {
  std::map<std::string, uint64_t> map;
  EXPECT_TRUE(stats.getTickerMap(&map));
  EXPECT_EQ(map.count(name), 1u) << name;
  return map[name];
}

TEST(CuckooStatistics, CreatedByName) {
  std::shared_ptr<rdb::Statistics> stats = CreateByName();
  ASSERT_NE(stats, nullptr);
  EXPECT_STREQ(stats->Name(), kCuckooStatisticsName);
}

// A DB with the cuckoo policy and CuckooStatistics: RocksDB's tickers as
// usual, the policy's counters in ToString and getTickerMap.
TEST(CuckooStatistics, ReportsThePolicyCountersBesideRocksDBsTickers) {
  std::shared_ptr<rdb::Statistics> stats = CreateByName();
  ASSERT_NE(stats, nullptr);
  const std::string path = testing::TempDir() + "cuckoo_statistics_test";
  rdb::Options options;
  options.create_if_missing = true;
  options.statistics = stats;
  rdb::BlockBasedTableOptions table;
  table.filter_policy.reset(NewCuckooFilterPolicy(10));
  options.table_factory.reset(rdb::NewBlockBasedTableFactory(table));
  ASSERT_TRUE(rdb::DestroyDB(path, options).ok());
  std::unique_ptr<rdb::DB> db;
  ASSERT_TRUE(cuckoo_test::OpenDB(options, path, &db).ok());
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(
        db->Put(rdb::WriteOptions(), "key" + std::to_string(i), "v").ok());
  }
  ASSERT_TRUE(db->Flush(rdb::FlushOptions()).ok());
  std::string value;
  int absent = 0;
  for (int i = 0; i < 1000; ++i) {
    absent += db->Get(rdb::ReadOptions(), "absent" + std::to_string(i), &value)
                  .IsNotFound();
  }
  EXPECT_EQ(absent, 1000);
  EXPECT_GT(stats->getTickerCount(rdb::BLOOM_FILTER_USEFUL), 900u);
  EXPECT_EQ(Counter(*stats, "rocksdb.cuckoo.sst.filters.built"), 1u);
  EXPECT_EQ(Counter(*stats, "rocksdb.cuckoo.sst.keys.added"), 1000u);
  EXPECT_GE(Counter(*stats, "rocksdb.cuckoo.sst.readers.created"), 1u);
  EXPECT_EQ(Counter(*stats, "rocksdb.cuckoo.sst.invalid.blocks"), 0u);
  const std::string text = stats->ToString();
  EXPECT_NE(text.find("rocksdb.bloom.filter.useful COUNT : "),
            std::string::npos);
  EXPECT_NE(text.find("rocksdb.cuckoo.sst.filters.built COUNT : 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rocksdb.cuckoo.sst.filters.grown COUNT : 0\n"),
            std::string::npos)
      << text;

  // A block the policy cannot read counts as an invalid block.
  std::unique_ptr<rdb::FilterBitsReader> reader(
      table.filter_policy->GetFilterBitsReader(rdb::Slice("garbage block")));
  ASSERT_NE(reader, nullptr);
  EXPECT_TRUE(reader->MayMatch("anything"));
  EXPECT_EQ(Counter(*stats, "rocksdb.cuckoo.sst.invalid.blocks"), 1u);

  // Reset starts the counters again.
  ASSERT_TRUE(stats->Reset().ok());
  EXPECT_EQ(Counter(*stats, "rocksdb.cuckoo.sst.filters.built"), 0u);
  EXPECT_EQ(Counter(*stats, "rocksdb.cuckoo.sst.invalid.blocks"), 0u);
  EXPECT_EQ(stats->getTickerCount(rdb::BLOOM_FILTER_USEFUL), 0u);
  ASSERT_TRUE(db->Close().ok());
  db.reset();
  ASSERT_TRUE(rdb::DestroyDB(path, options).ok());
}

// The stats level set on the object governs what it records.
TEST(CuckooStatistics, StatsLevel) {
  std::shared_ptr<rdb::Statistics> stats = NewCuckooStatistics();
  stats->set_stats_level(rdb::StatsLevel::kExceptTickers);
  stats->recordTick(rdb::NUMBER_KEYS_READ, 5);
  EXPECT_EQ(stats->getTickerCount(rdb::NUMBER_KEYS_READ), 0u);
  stats->set_stats_level(rdb::StatsLevel::kExceptDetailedTimers);
  stats->recordTick(rdb::NUMBER_KEYS_READ, 5);
  EXPECT_EQ(stats->getTickerCount(rdb::NUMBER_KEYS_READ), 5u);
  stats->recordInHistogram(rdb::DB_GET, 100);
  rdb::HistogramData data;
  stats->histogramData(rdb::DB_GET, &data);
  EXPECT_EQ(data.count, 1u);
  stats->set_stats_level(rdb::StatsLevel::kExceptHistogramOrTimers);
  stats->recordInHistogram(rdb::DB_GET, 100);
  stats->histogramData(rdb::DB_GET, &data);
  EXPECT_EQ(data.count, 1u);
}

}  // namespace
}  // namespace rocksdb_cuckoo
