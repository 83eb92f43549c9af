// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The cuckoo FilterPolicy inside a real RocksDB (temporary directories):
// point lookups, MultiGet, partitioned filters, prefix seek, OPTIONS files,
// switching policies on an existing DB.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "filter_bits_abi.h"
#include "open_db.h"
#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/options.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/statistics.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/options_util.h"
#include "rocksdb/write_batch.h"
#include "rocksdb_cuckoo/filter_policy.h"
#include "test_util.h"

namespace rocksdb_cuckoo {
namespace {

namespace rdb = ROCKSDB_NAMESPACE;
using rdb::FilterBitsBuilder;
using rdb::FilterBitsReader;
using rdb::FilterBuildingContext;
using rdb::FilterPolicy;
using rdb::Slice;
using rdb::Status;

std::string Key(uint64_t i) {
  char buf[32];
  snprintf(buf, sizeof(buf), "key%08llu", static_cast<unsigned long long>(i));
  return buf;
}
// Sorts between Key(i) and Key(i + 1): inside the key range of the files.
std::string AbsentKey(uint64_t i) { return Key(i) + "x"; }
std::string Value(uint64_t i) {
  return "value-" + std::to_string(i * 7919) + "-pad";
}

// Forwards to a policy and counts how its readers are called, to show which
// MayMatch path RocksDB takes.
class CountingPolicy : public FilterPolicy {
 public:
  struct Counts {
    std::atomic<uint64_t> single{0};
    std::atomic<uint64_t> batch_calls{0};
    std::atomic<uint64_t> batch_keys{0};
  };

  explicit CountingPolicy(std::shared_ptr<const FilterPolicy> inner)
      : inner_(std::move(inner)), counts_(std::make_shared<Counts>()) {}

  const char* Name() const override { return inner_->Name(); }
  const char* CompatibilityName() const override {
    return inner_->CompatibilityName();
  }
  FilterBitsBuilder* GetBuilderWithContext(
      const FilterBuildingContext& c) const override {
    return inner_->GetBuilderWithContext(c);
  }
  FilterBitsReader* GetFilterBitsReader(const Slice& contents) const override {
    return new Reader(inner_->GetFilterBitsReader(contents), counts_);
  }
  const Counts& counts() const { return *counts_; }

 private:
  class Reader : public FilterBitsReader {
   public:
    Reader(FilterBitsReader* inner, std::shared_ptr<Counts> counts)
        : inner_(inner), counts_(std::move(counts)) {}
    bool MayMatch(const Slice& key) override {
      counts_->single++;
      return inner_->MayMatch(key);
    }
    void MayMatch(int num_keys, Slice** keys, bool* may_match) override {
      counts_->batch_calls++;
      counts_->batch_keys += static_cast<uint64_t>(num_keys);
      inner_->MayMatch(num_keys, keys, may_match);
    }

   private:
    std::unique_ptr<FilterBitsReader> inner_;
    std::shared_ptr<Counts> counts_;
  };

  std::shared_ptr<const FilterPolicy> inner_;
  std::shared_ptr<Counts> counts_;
};

std::shared_ptr<const FilterPolicy> PolicyFromString(const std::string& name) {
  test::RegisterOnce();
  std::shared_ptr<const FilterPolicy> policy;
  Status s =
      FilterPolicy::CreateFromString(rdb::ConfigOptions(), name, &policy);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_NE(policy, nullptr);
  return policy;
}

double ExpectedFpr(const std::string& name) {
  CuckooFilterLayout layout;
  EXPECT_TRUE(ParseCuckooFilterPolicyString(name, &layout).ok());
  return layout.expected_fpr;
}

struct DbOptions {
  std::shared_ptr<const FilterPolicy> policy;
  bool partitioned = false;
  bool detect_corruption = false;
  std::shared_ptr<const rdb::SliceTransform> prefix;
  bool whole_key_filtering = true;
};

rdb::Options MakeOptions(const DbOptions& o) {
  rdb::Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 4
                              << 20;  // Debian's asserting build needs >= 4 MiB
  options.compression = rdb::kNoCompression;
  options.statistics = rdb::CreateDBStatistics();
  options.prefix_extractor = o.prefix;
  rdb::BlockBasedTableOptions table;
  table.filter_policy = o.policy;
  table.whole_key_filtering = o.whole_key_filtering;
  table.detect_filter_construct_corruption = o.detect_corruption;
  if (o.partitioned) {
    table.partition_filters = true;
    table.index_type = rdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
    table.metadata_block_size = 2048;  // many partitions
  }
  options.table_factory.reset(rdb::NewBlockBasedTableFactory(table));
  return options;
}

std::unique_ptr<rdb::DB> Open(const rdb::Options& options,
                              const std::string& path) {
  std::unique_ptr<rdb::DB> db;
  Status s = cuckoo_test::OpenDB(options, path, &db);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return db;
}

void WriteKeys(rdb::DB* db, uint64_t begin, uint64_t end, uint64_t step = 1) {
  rdb::WriteOptions wo;
  wo.disableWAL = true;
  rdb::WriteBatch batch;
  for (uint64_t i = begin; i < end; i += step) {
    ASSERT_TRUE(batch.Put(Key(i), Value(i)).ok());
    if (batch.Count() == 1000) {
      ASSERT_TRUE(db->Write(wo, &batch).ok());
      batch.Clear();
    }
  }
  ASSERT_TRUE(db->Write(wo, &batch).ok());
}

void FlushAndCompact(rdb::DB* db) {
  ASSERT_TRUE(db->Flush(rdb::FlushOptions()).ok());
  rdb::CompactRangeOptions cro;
  cro.bottommost_level_compaction = rdb::BottommostLevelCompaction::kForce;
  ASSERT_TRUE(db->CompactRange(cro, nullptr, nullptr).ok());
}

void ExpectAllPresent(rdb::DB* db, uint64_t n, uint64_t step = 1) {
  std::string value;
  for (uint64_t i = 0; i < n; i += step) {
    Status s = db->Get(rdb::ReadOptions(), Key(i), &value);
    ASSERT_TRUE(s.ok()) << Key(i) << ": " << s.ToString();
    ASSERT_EQ(value, Value(i));
  }
}

void ExpectAllAbsent(rdb::DB* db, uint64_t n) {
  std::string value;
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(db->Get(rdb::ReadOptions(), AbsentKey(i), &value).IsNotFound());
  }
}

uint64_t Ticker(const rdb::Options& options, rdb::Tickers t) {
  return options.statistics->getTickerCount(t);
}

// Seeks that a prefix filter answered "absent": RocksDB 8.3 moved them from
// BLOOM_FILTER_PREFIX_USEFUL to the per-level SEEK_FILTERED tickers.
uint64_t SeeksFiltered(const rdb::Options& options) {
#if CUCKOO_ROCKSDB_VERSION_AT_LEAST(8, 3)
  return Ticker(options, rdb::NON_LAST_LEVEL_SEEK_FILTERED) +
         Ticker(options, rdb::LAST_LEVEL_SEEK_FILTERED);
#else
  return Ticker(options, rdb::BLOOM_FILTER_PREFIX_USEFUL);
#endif
}

// ------------------------------------------------------------ point lookups

using LookupParam =
    std::tuple<std::string, bool /*partitioned*/, bool /*detect*/>;

class PointLookupTest : public ::testing::TestWithParam<LookupParam> {};

TEST_P(PointLookupTest, GetMultiGetAndFilterEfficiency) {
  const std::string name = std::get<0>(GetParam());
  test::TempDir dir("lookup");
  auto cuckoo = PolicyFromString(name);
  auto counting = std::make_shared<CountingPolicy>(cuckoo);
  DbOptions o;
  o.policy = counting;
  o.partitioned = std::get<1>(GetParam());
  o.detect_corruption = std::get<2>(GetParam());
  rdb::Options options = MakeOptions(o);
  auto db = Open(options, dir.path());
  ASSERT_NE(db, nullptr);

  const uint64_t n = 200000;
  WriteKeys(db.get(), 0, n);
  FlushAndCompact(db.get());
  ExpectAllPresent(db.get(), n);

  // Absent keys: the filter must reject at least 1 - 2 * expected FPR.
  options.statistics->Reset();
  ExpectAllAbsent(db.get(), n);
  const double fpr = ExpectedFpr(name);
  const uint64_t useful = Ticker(options, rdb::BLOOM_FILTER_USEFUL);
  const uint64_t positive = Ticker(options, rdb::BLOOM_FILTER_FULL_POSITIVE);
  EXPECT_GE(double(useful), n * (1 - 2 * fpr))
      << name << " useful=" << useful << " positive=" << positive;
  EXPECT_EQ(Ticker(options, rdb::BLOOM_FILTER_FULL_TRUE_POSITIVE), 0u);

  // MultiGet over present and absent keys equals Get, through the batched
  // MayMatch.
  std::mt19937_64 rng(5);
  const uint64_t batch_calls_before = counting->counts().batch_calls;
  options.statistics->Reset();
  uint64_t absent_asked = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> keys;
    for (int k = 0; k < 32; ++k) {
      const uint64_t i = rng() % n;
      const bool present = rng() % 2 == 0;
      keys.push_back(present ? Key(i) : AbsentKey(i));
      absent_asked += !present;
    }
    std::vector<Slice> slices(keys.begin(), keys.end());
    std::vector<rdb::PinnableSlice> values(keys.size());
    std::vector<Status> statuses(keys.size());
    db->MultiGet(rdb::ReadOptions(), db->DefaultColumnFamily(), keys.size(),
                 slices.data(), values.data(), statuses.data());
    for (size_t k = 0; k < keys.size(); ++k) {
      std::string expected;
      Status s = db->Get(rdb::ReadOptions(), keys[k], &expected);
      ASSERT_EQ(s.code(), statuses[k].code()) << keys[k];
      if (s.ok()) {
        ASSERT_EQ(values[k].ToString(), expected);
      }
    }
  }
  EXPECT_GT(counting->counts().batch_calls, batch_calls_before)
      << "MultiGet did not use the batched MayMatch";
  EXPECT_GT(counting->counts().batch_keys, 0u);

  CuckooFilterPolicyStats stats;
  ASSERT_TRUE(GetCuckooFilterPolicyStats(cuckoo.get(), &stats));
  EXPECT_GE(stats.filters_built, 1u);
  EXPECT_EQ(stats.invalid_blocks, 0u);
  EXPECT_EQ(stats.construction_corruptions, 0u);
  EXPECT_GE(stats.keys_added, n);
  if (o.partitioned) {
    EXPECT_GT(stats.filters_built, 10u) << "expected many partitions";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policies, PointLookupTest,
    ::testing::Values(LookupParam{"cuckoofilter:10", false, false},
                      LookupParam{"cuckoofilter:10", true, true},
                      LookupParam{"cuckoofilter:16", false, true},
                      LookupParam{"cuckoofilter:13:12:4:0", true, false},
                      LookupParam{"cuckoofilter:10:blocked", false, true},
                      LookupParam{"cuckoofilter:10:blocked", true, false}),
    [](const ::testing::TestParamInfo<LookupParam>& info) {
      std::string name =
          std::get<0>(info.param).substr(std::strlen("cuckoofilter:"));
      for (char& c : name) {
        if (c == ':' || c == '.') c = '_';
      }
      return "b" + name + (std::get<1>(info.param) ? "_partitioned" : "_full") +
             (std::get<2>(info.param) ? "_verify" : "");
    });

// ------------------------------------------------------------ prefix seek

using PrefixParam =
    std::tuple<bool /*whole_key_filtering*/, bool /*partitioned*/>;

class PrefixSeekTest : public ::testing::TestWithParam<PrefixParam> {};

std::string PrefixKey(int prefix, int suffix) {
  char buf[32];
  snprintf(buf, sizeof(buf), "p%05d-s%03d", prefix, suffix);
  return buf;
}

TEST_P(PrefixSeekTest, SeekWithinPrefix) {
  test::TempDir dir("prefix");
  DbOptions o;
  o.policy = PolicyFromString("cuckoofilter:10");
  o.whole_key_filtering = std::get<0>(GetParam());
  o.partitioned = std::get<1>(GetParam());
  o.prefix.reset(rdb::NewFixedPrefixTransform(6));  // "p00042"
  rdb::Options options = MakeOptions(o);
  auto db = Open(options, dir.path());
  ASSERT_NE(db, nullptr);

  // Even prefixes only, 20 keys each.
  const int prefixes = 4000;
  const int per = 20;
  rdb::WriteOptions wo;
  wo.disableWAL = true;
  rdb::WriteBatch batch;
  for (int p = 0; p < prefixes; p += 2) {
    for (int s = 0; s < per; ++s)
      ASSERT_TRUE(batch.Put(PrefixKey(p, s), "v").ok());
  }
  ASSERT_TRUE(db->Write(wo, &batch).ok());
  FlushAndCompact(db.get());

  options.statistics->Reset();
  rdb::ReadOptions ro;
  ro.prefix_same_as_start = true;
  std::unique_ptr<rdb::Iterator> it(db->NewIterator(ro));
  for (int p = 0; p < prefixes; ++p) {
    // From the start of the prefix.
    it->Seek(PrefixKey(p, 0).substr(0, 6));
    int found = 0;
    for (; it->Valid(); it->Next()) {
      ASSERT_EQ(it->key().ToString(), PrefixKey(p, found));
      ++found;
    }
    ASSERT_TRUE(it->status().ok());
    ASSERT_EQ(found, p % 2 == 0 ? per : 0) << "prefix " << p;
    // From the middle of the prefix.
    it->Seek(PrefixKey(p, per / 2));
    found = 0;
    for (; it->Valid(); it->Next()) ++found;
    ASSERT_EQ(found, p % 2 == 0 ? per - per / 2 : 0) << "prefix " << p;
  }
  // Absent prefixes were rejected by the filter (not only by the data).
  EXPECT_GT(SeeksFiltered(options), uint64_t(prefixes / 2 * 9 / 10));

  // Whole-key Gets are correct either way; filtered only with
  // whole_key_filtering.
  options.statistics->Reset();
  std::string value;
  for (int p = 0; p < prefixes; p += 2) {
    ASSERT_TRUE(
        db->Get(rdb::ReadOptions(), PrefixKey(p, per / 2), &value).ok());
    ASSERT_TRUE(db->Get(rdb::ReadOptions(), PrefixKey(p, per + 5), &value)
                    .IsNotFound());
  }
  if (o.whole_key_filtering) {
    EXPECT_GT(Ticker(options, rdb::BLOOM_FILTER_USEFUL),
              uint64_t(prefixes / 2 * 9 / 10));
  }
}

INSTANTIATE_TEST_SUITE_P(
    WholeKeyAndPartitions, PrefixSeekTest,
    ::testing::Combine(::testing::Bool(), ::testing::Bool()),
    [](const ::testing::TestParamInfo<PrefixParam>& info) {
      return std::string(std::get<0>(info.param) ? "whole_key"
                                                 : "prefix_only") +
             (std::get<1>(info.param) ? "_partitioned" : "_full");
    });

// ------------------------------------------------------------ OPTIONS files

std::string ReadOptionsFileText(const std::string& db_path) {
  std::string latest;
  Status s =
      rdb::GetLatestOptionsFileName(db_path, rdb::Env::Default(), &latest);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::ifstream in(db_path + "/" + latest);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(OptionsFileTest, RoundTripAndPolicySwitches) {
  for (const std::string name : {"cuckoofilter:10", "cuckoofilter:12.5:12:4:1",
                                 "cuckoofilter:10:blocked"}) {
    test::TempDir dir("options");
    const uint64_t n = 20000;
    {
      // Configured from a string, as a user of OPTIONS files would.
      test::RegisterOnce();
      rdb::BlockBasedTableOptions table;
      ASSERT_TRUE(rdb::GetBlockBasedTableOptionsFromString(
                      rdb::ConfigOptions(), rdb::BlockBasedTableOptions(),
                      "filter_policy=" + name, &table)
                      .ok());
      ASSERT_NE(table.filter_policy, nullptr);
      rdb::Options options;
      options.create_if_missing = true;
      options.write_buffer_size = 4 << 20;
      options.table_factory.reset(rdb::NewBlockBasedTableFactory(table));
      auto db = Open(options, dir.path());
      ASSERT_NE(db, nullptr);
      WriteKeys(db.get(), 0, n);
      FlushAndCompact(db.get());
    }
    EXPECT_NE(ReadOptionsFileText(dir.path()).find("filter_policy=" + name),
              std::string::npos)
        << ReadOptionsFileText(dir.path());

    // Load the OPTIONS file back: the policy must not be silently null.
    rdb::ConfigOptions config;
    rdb::DBOptions db_options;
    std::vector<rdb::ColumnFamilyDescriptor> cfs;
    ASSERT_TRUE(
        rdb::LoadLatestOptions(config, dir.path(), &db_options, &cfs).ok());
    ASSERT_EQ(cfs.size(), 1u);
    const auto* loaded =
        cfs[0].options.table_factory->GetOptions<rdb::BlockBasedTableOptions>();
    ASSERT_NE(loaded, nullptr);
    ASSERT_NE(loaded->filter_policy, nullptr) << "policy loaded as null";
    EXPECT_EQ(std::string(loaded->filter_policy->Name()), name);
    EXPECT_TRUE(IsCuckooFilterPolicy(loaded->filter_policy.get()));

    // Reopen with the loaded options: data readable, filter in use.
    {
      rdb::Options options(db_options, cfs[0].options);
      options.statistics = rdb::CreateDBStatistics();
      auto db = Open(options, dir.path());
      ASSERT_NE(db, nullptr);
      ExpectAllPresent(db.get(), n);
      ExpectAllAbsent(db.get(), n);
      EXPECT_GT(Ticker(options, rdb::BLOOM_FILTER_USEFUL), n * 9 / 10);
    }
    // Reopen with Bloom, then with no filter: same data (unfiltered).
    for (bool bloom : {true, false}) {
      DbOptions o;
      if (bloom) o.policy.reset(rdb::NewBloomFilterPolicy(10));
      rdb::Options options = MakeOptions(o);
      auto db = Open(options, dir.path());
      ASSERT_NE(db, nullptr);
      ExpectAllPresent(db.get(), n);
      ExpectAllAbsent(db.get(), n);
      EXPECT_EQ(Ticker(options, rdb::BLOOM_FILTER_USEFUL), 0u)
          << "a cuckoo block must not be read by another policy";
    }
  }
}

TEST(OptionsFileTest, BloomDbReopenedWithCuckoo) {
  test::TempDir dir("bloom");
  const uint64_t n = 20000;
  {
    DbOptions o;
    o.policy.reset(rdb::NewBloomFilterPolicy(10));
    auto db = Open(MakeOptions(o), dir.path());
    ASSERT_NE(db, nullptr);
    WriteKeys(db.get(), 0, n);
    FlushAndCompact(db.get());
  }
  DbOptions o;
  auto cuckoo = PolicyFromString("cuckoofilter:10");
  o.policy = cuckoo;
  rdb::Options options = MakeOptions(o);
  auto db = Open(options, dir.path());
  ASSERT_NE(db, nullptr);
  ExpectAllPresent(db.get(), n);
  ExpectAllAbsent(db.get(), n);
  EXPECT_EQ(Ticker(options, rdb::BLOOM_FILTER_USEFUL),
            0u);  // Bloom blocks unread

  // New data and a full compaction rewrite every file with cuckoo filters.
  WriteKeys(db.get(), n, 2 * n);
  FlushAndCompact(db.get());
  options.statistics->Reset();
  ExpectAllPresent(db.get(), 2 * n);
  ExpectAllAbsent(db.get(), 2 * n);
  EXPECT_GE(double(Ticker(options, rdb::BLOOM_FILTER_USEFUL)),
            2 * n * (1 - 2 * ExpectedFpr("cuckoofilter:10")));
  CuckooFilterPolicyStats stats;
  ASSERT_TRUE(GetCuckooFilterPolicyStats(cuckoo.get(), &stats));
  EXPECT_GE(stats.filters_built, 1u);
  EXPECT_EQ(stats.invalid_blocks, 0u);
}

// ------------------------------------------------------------ small files

TEST(SmallFilesTest, ManyTinyTablesAndSingleKeys) {
  test::TempDir dir("small");
  DbOptions o;
  o.policy = PolicyFromString("cuckoofilter:10");
  rdb::Options options = MakeOptions(o);
  options.disable_auto_compactions = true;
  auto db = Open(options, dir.path());
  ASSERT_NE(db, nullptr);
  // 40 files of 1..40 keys (interleaved key ranges, several versions).
  uint64_t written = 0;
  for (uint64_t f = 1; f <= 40; ++f) {
    for (uint64_t k = 0; k < f; ++k) {
      const uint64_t i = k * 40 + f;
      ASSERT_TRUE(db->Put(rdb::WriteOptions(), Key(i), Value(i)).ok());
      ASSERT_TRUE(db->Put(rdb::WriteOptions(), Key(i), Value(i)).ok());
      ++written;
    }
    ASSERT_TRUE(db->Flush(rdb::FlushOptions()).ok());
  }
  std::string value;
  for (uint64_t f = 1; f <= 40; ++f) {
    for (uint64_t k = 0; k < f; ++k) {
      ASSERT_TRUE(db->Get(rdb::ReadOptions(), Key(k * 40 + f), &value).ok());
      ASSERT_EQ(value, Value(k * 40 + f));
    }
  }
  for (uint64_t i = 0; i < 2000; ++i) {
    ASSERT_TRUE(db->Get(rdb::ReadOptions(), AbsentKey(i), &value).IsNotFound());
  }
  EXPECT_GT(Ticker(options, rdb::BLOOM_FILTER_USEFUL), 0u);
  EXPECT_EQ(written, 820u);
}

}  // namespace
}  // namespace rocksdb_cuckoo
