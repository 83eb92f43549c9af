// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The cuckoo FilterBitsBuilder / FilterBitsReader used directly, as RocksDB's
// table builder and reader use them: every layout, sizes, de-duplication,
// builder reuse, post-verification, corrupted blocks, batched lookups.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "blocked/blocked_filter.h"
#include "cuckoo/cuckoo_filter.h"
#include "filter/filter_format.h"
#include "filter_bits_abi.h"
#include "policy_config.h"
#include "rocksdb/convenience.h"
#include "rocksdb/env.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "rocksdb_cuckoo/filter_policy.h"
#include "test_util.h"
// Version 3 blocked blocks (kV3Golden100, kV3Keys2000).
#include "../core/blocked_v3_vectors.inc"
#include "util/key_hash_inline.h"

namespace rocksdb_cuckoo {
namespace {

using ROCKSDB_NAMESPACE::BlockBasedTableOptions;
using ROCKSDB_NAMESPACE::FilterBitsBuilder;
using ROCKSDB_NAMESPACE::FilterBitsReader;
using ROCKSDB_NAMESPACE::FilterBuildingContext;
using ROCKSDB_NAMESPACE::FilterPolicy;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

std::string Key(uint64_t i, const char* tag = "key") {
  char buf[40];
  snprintf(buf, sizeof(buf), "%s%012llu", tag,
           static_cast<unsigned long long>(i));
  return buf;
}

std::shared_ptr<const FilterPolicy> MakePolicy(const std::string& name) {
  test::RegisterOnce();
  std::shared_ptr<const FilterPolicy> policy;
  ROCKSDB_NAMESPACE::ConfigOptions options;
  Status s = FilterPolicy::CreateFromString(options, name, &policy);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_NE(policy, nullptr) << name;
  return policy;
}

// A built filter block with its owner.
struct Block {
  std::unique_ptr<const char[]> owner;
  Slice contents;
  Status status;
};

Block Finish(FilterBitsBuilder* builder) {
  Block b;
  b.contents = builder->Finish(&b.owner, &b.status);
  return b;
}

std::unique_ptr<FilterBitsBuilder> NewBuilder(const FilterPolicy& policy,
                                              bool detect_corruption = false) {
  BlockBasedTableOptions table_options;
  table_options.detect_filter_construct_corruption = detect_corruption;
  FilterBuildingContext context(table_options);
  return std::unique_ptr<FilterBitsBuilder>(
      policy.GetBuilderWithContext(context));
}

cuckoo::FilterStats StatsOf(const Slice& block) {
  cuckoo::CuckooFilterView view;
  std::string error;
  EXPECT_TRUE(cuckoo::CuckooFilterView::Parse(block.data(), block.size(), &view,
                                              &error))
      << error;
  return view.stats();
}

// Batched MayMatch over `keys` in batches of `batch`.
std::vector<bool> BatchMayMatch(FilterBitsReader* reader,
                                const std::vector<std::string>& keys,
                                int batch) {
  std::vector<bool> out;
  std::vector<Slice> slices(batch);
  std::vector<Slice*> ptrs(batch);
  std::unique_ptr<bool[]> may(new bool[batch]);
  for (size_t start = 0; start < keys.size(); start += batch) {
    const int n =
        static_cast<int>(std::min<size_t>(batch, keys.size() - start));
    for (int k = 0; k < n; ++k) {
      slices[k] = keys[start + k];
      ptrs[k] = &slices[k];
      may[k] = false;
    }
    reader->MayMatch(n, ptrs.data(), may.get());
    for (int k = 0; k < n; ++k) out.push_back(may[k]);
  }
  return out;
}

TEST(KeyHashTest, InlineHashIsCuckooHashKey) {
  std::mt19937_64 rng(7);
  std::string data(600, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  for (size_t len = 0; len <= data.size(); ++len) {
    const size_t offset = rng() % 7;
    const size_t n = std::min(len, data.size() - offset);
    EXPECT_EQ(cuckoo::internal::HashKeyInline(data.data() + offset, n),
              cuckoo::HashKey(std::string_view(data.data() + offset, n)).value)
        << len;
  }
}

// ---------------------------------------------------------- every layout

class LayoutTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LayoutTest, NoFalseNegativesAndBoundedFpr) {
  auto policy = MakePolicy(GetParam());
  CuckooFilterLayout layout;
  ASSERT_TRUE(ParseCuckooFilterPolicyString(GetParam(), &layout).ok());
  auto builder = NewBuilder(*policy);
  for (uint64_t n : {0, 1, 2, 7, 100, 3000, 60000}) {
    std::vector<std::string> keys;
    for (uint64_t i = 0; i < n; ++i) keys.push_back(Key(i * 7 + n));
    for (const std::string& k : keys) builder->AddKey(k);
    EXPECT_EQ(builder->EstimateEntriesAdded(), n);
    Block block = Finish(builder.get());
    ASSERT_TRUE(block.status.ok()) << block.status.ToString();
    EXPECT_EQ(builder->EstimateEntriesAdded(), 0u)
        << "builder must reset after Finish";
    const cuckoo::FilterStats stats = StatsOf(block.contents);
    EXPECT_LE(stats.num_items, n);
    EXPECT_LE(stats.load_factor, 0.98 + 1e-9);

    std::unique_ptr<FilterBitsReader> reader(
        policy->GetFilterBitsReader(block.contents));
    for (const std::string& k : keys)
      ASSERT_TRUE(reader->MayMatch(k)) << GetParam() << " " << k;
    const std::vector<bool> batched = BatchMayMatch(reader.get(), keys, 32);
    for (bool b : batched) ASSERT_TRUE(b);

    // False positives: binomial bound around the filter's expected rate at
    // its actual load (with a floor for tiny filters).
    const int absent = 100000;
    int false_positives = 0;
    std::vector<std::string> probes;
    for (int i = 0; i < absent; ++i) probes.push_back(Key(i, "absent"));
    for (const std::string& k : probes) false_positives += reader->MayMatch(k);
    const std::vector<bool> probes_batched =
        BatchMayMatch(reader.get(), probes, 29);
    int batched_positives = 0;
    for (bool b : probes_batched) batched_positives += b;
    EXPECT_EQ(batched_positives, false_positives);
    const double expected =
        internal::ExpectedFpr(layout.fingerprint_bits, layout.bucket_size,
                              stats.load_factor) *
        absent;
    EXPECT_LE(false_positives, expected + 5 * std::sqrt(expected) + 5)
        << GetParam() << " n=" << n << " load " << stats.load_factor;
    if (n >= 3000) {
      // And the layout's documented rate holds for real sizes.
      EXPECT_LE(false_positives, layout.expected_fpr * absent * 1.15 +
                                     5 * std::sqrt(expected) + 5)
          << GetParam();
      // Not an "always true" filter either. (Below the bound by the few
      // (pair, fingerprint) combinations stored twice, which count in the
      // load but not in the rate: a few % at f = 4, negligible from f = 8.)
      EXPECT_GE(false_positives, 0.9 * expected - 5 * std::sqrt(expected) - 5)
          << GetParam();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, LayoutTest,
    ::testing::Values("cuckoofilter:4", "cuckoofilter:8", "cuckoofilter:10",
                      "cuckoofilter:12", "cuckoofilter:16", "cuckoofilter:20",
                      "cuckoofilter:9.474", "cuckoofilter:40",
                      "cuckoofilter:13:12:4:0", "cuckoofilter:17:16:4:0",
                      "cuckoofilter:10:8:2:0", "cuckoofilter:12:8:8:0",
                      "cuckoofilter:18:8:1:0", "cuckoofilter:34:32:8:0",
                      "cuckoofilter:39:32:2:0", "cuckoofilter:8:7:4:1",
                      "cuckoofilter:6:5:4:1", "cuckoofilter:14:13:4:0",
                      // f = 17..31: plain packed buckets,
                      // one- and two-word (b = 8, odd f: not byte aligned).
                      "cuckoofilter:24", "cuckoofilter:19:17:4:0",
                      "cuckoofilter:24:23:8:0", "cuckoofilter:36:29:2:0",
                      "cuckoofilter:64:27:1:0",
                      // The widest plain layout of the report's FPR curve.
                      "cuckoofilter:24:22:4:0"),
    [](const ::testing::TestParamInfo<std::string>& info) {
      std::string name = info.param.substr(std::strlen("cuckoofilter:"));
      for (char& c : name) {
        if (c == ':' || c == '.') c = '_';
      }
      return "b" + name;
    });

// ---------------------------------------------------------- size and budget

TEST(FilterBitsTest, BlockWithinBudget) {
  for (double bits : {8.0, 10.0, 12.0, 16.0, 9.5, 20.0, 40.0}) {
    std::unique_ptr<const FilterPolicy> policy(NewCuckooFilterPolicy(bits));
    auto builder = NewBuilder(*policy);
    for (uint64_t n : {1000, 12345, 100000}) {
      for (uint64_t i = 0; i < n; ++i) builder->AddKey(Key(i));
      Block block = Finish(builder.get());
      ASSERT_TRUE(block.status.ok());
      const double budget = std::ceil(n * bits / 8);
      EXPECT_LE(double(block.contents.size()), budget + 32) << bits << " " << n;
      EXPECT_GT(double(block.contents.size()), 0.98 * budget)
          << bits << " " << n;
    }
  }
  CuckooFilterPolicyStats stats;
  std::unique_ptr<const FilterPolicy> policy(NewCuckooFilterPolicy(10));
  ASSERT_TRUE(GetCuckooFilterPolicyStats(policy.get(), &stats));
  EXPECT_EQ(stats.filters_built, 0u);
}

TEST(FilterBitsTest, ApproximateNumEntriesMatchesFinish) {
  for (const char* name :
       {"cuckoofilter:10", "cuckoofilter:16", "cuckoofilter:10:8:2:0"}) {
    auto policy = MakePolicy(name);
    auto builder = NewBuilder(*policy);
    EXPECT_EQ(builder->ApproximateNumEntries(0), 0u);
    EXPECT_EQ(builder->ApproximateNumEntries(20), 0u);
    for (size_t bytes : {64, 200, 4096, 100000}) {
      const size_t n = builder->ApproximateNumEntries(bytes);
      ASSERT_GT(n, 0u) << name << " " << bytes;
      for (size_t i = 0; i < n; ++i) builder->AddKey(Key(i));
      Block fits = Finish(builder.get());
      EXPECT_LE(fits.contents.size(), bytes) << name;
      for (size_t i = 0; i <= n; ++i) builder->AddKey(Key(i));
      Block over = Finish(builder.get());
      EXPECT_GT(over.contents.size(), bytes) << name;
    }
  }
}

// ---------------------------------------------------------- de-duplication

// The size and the stored items depend only on the distinct keys, however
// often and in whatever order they are added.
TEST(FilterBitsTest, DuplicatesAnywhereAreRemoved) {
  auto policy = MakePolicy("cuckoofilter:10");
  const uint64_t n = 20000;
  auto builder = NewBuilder(*policy);
  for (uint64_t i = 0; i < n; ++i) builder->AddKey(Key(i));
  Block reference = Finish(builder.get());
  const cuckoo::FilterStats ref = StatsOf(reference.contents);

  std::mt19937_64 rng(3);
  std::vector<uint64_t> order;
  for (int copy = 0; copy < 3; ++copy) {
    for (uint64_t i = 0; i < n; ++i) order.push_back(i);
  }
  std::shuffle(order.begin(), order.end(), rng);
  for (uint64_t i : order) {
    builder->AddKey(Key(i));
    if (i % 5 == 0) builder->AddKey(Key(i));  // adjacent repeats too
  }
  EXPECT_EQ(builder->EstimateEntriesAdded(), n);
  Block shuffled = Finish(builder.get());
  const cuckoo::FilterStats s = StatsOf(shuffled.contents);
  EXPECT_EQ(shuffled.contents.size(), reference.contents.size());
  EXPECT_EQ(s.num_buckets, ref.num_buckets);
  EXPECT_LE(s.num_items, n);
  EXPECT_GE(s.num_items, n - n / 50);  // only fingerprint collisions are shared
  std::unique_ptr<FilterBitsReader> reader(
      policy->GetFilterBitsReader(shuffled.contents));
  for (uint64_t i = 0; i < n; ++i) ASSERT_TRUE(reader->MayMatch(Key(i)));
}

TEST(FilterBitsTest, OrderDoesNotChangeTheCount) {
  auto policy = MakePolicy("cuckoofilter:12");
  auto builder = NewBuilder(*policy);
  const uint64_t n = 5000;
  // Descending (a reverse comparator), then interleaved (not monotonic).
  for (uint64_t i = n; i-- > 0;) builder->AddKey(Key(i));
  EXPECT_EQ(builder->EstimateEntriesAdded(), n);
  Block descending = Finish(builder.get());
  // 0, n-1, 1, n-2, ...: a permutation that is not monotonic.
  for (uint64_t i = 0; i < n; ++i)
    builder->AddKey(Key(i % 2 ? n - 1 - i / 2 : i / 2));
  EXPECT_EQ(builder->EstimateEntriesAdded(), n);
  Block mixed = Finish(builder.get());
  EXPECT_EQ(descending.contents.size(), mixed.contents.size());
  // Keys that are their own prefix: "k" < "k1" < "k" is not monotonic.
  builder->AddKey("k");
  builder->AddKey("k1");
  builder->AddKey("k");
  builder->AddKey("k2");
  EXPECT_EQ(builder->EstimateEntriesAdded(), 3u);
  Block tiny = Finish(builder.get());
  EXPECT_EQ(StatsOf(tiny.contents).num_items, 3u);
}

// The builder keeps a copy of the previous key to see whether the keys are
// monotonic (then it skips de-duplication); short keys are copied by
// fixed-size pieces. A key that differs from its predecessor at any byte, of
// any length, must be compared in full: "a", "c", "a" differing only at
// byte `pos` is not monotonic, so the second "a" is a duplicate.
TEST(FilterBitsTest, OrderSeenAtEveryByteOfShortAndLongKeys) {
  for (const char* name : {"cuckoofilter:10", "cuckoofilter:10:blocked"}) {
    auto policy = MakePolicy(name);
    auto builder = NewBuilder(*policy);
    for (size_t len = 1; len <= 40; ++len) {
      for (size_t pos = 0; pos < len; ++pos) {
        std::string a(len, 'm'), c(len, 'm');
        a[pos] = 'a';
        c[pos] = 'c';
        builder->AddKey(a);
        builder->AddKey(c);
        builder->AddKey(a);
        ASSERT_EQ(builder->EstimateEntriesAdded(), 2u)
            << name << " len " << len << " pos " << pos;
        Block block = Finish(builder.get());
        std::unique_ptr<FilterBitsReader> reader(
            policy->GetFilterBitsReader(block.contents));
        ASSERT_TRUE(reader->MayMatch(a));
        ASSERT_TRUE(reader->MayMatch(c));
      }
    }
    // Ascending keys of growing length (each a prefix of the next) and
    // their descending repeats.
    std::vector<std::string> keys;
    for (size_t len = 0; len <= 40; ++len)
      keys.push_back(std::string(len, 'k'));
    for (const std::string& k : keys) builder->AddKey(k);
    EXPECT_EQ(builder->EstimateEntriesAdded(), keys.size());
    for (size_t i = keys.size(); i-- > 0;) builder->AddKey(keys[i]);
    EXPECT_EQ(builder->EstimateEntriesAdded(), keys.size());
    Block block = Finish(builder.get());
    std::unique_ptr<FilterBitsReader> reader(
        policy->GetFilterBitsReader(block.contents));
    for (const std::string& k : keys) ASSERT_TRUE(reader->MayMatch(k));
  }
}

// RocksDB <= 9.5 calls EstimateEntriesAdded once; 9.6+ after every key of a
// partitioned filter. Both must stay correct (and the latter cheap).
TEST(FilterBitsTest, EstimateEntriesAddedRepeatedly) {
  auto policy = MakePolicy("cuckoofilter:10");
  auto builder = NewBuilder(*policy);
  const uint64_t n = 20000;
  // Two scrambled passes over the same n keys: every key twice, apart.
  for (uint64_t i = 0; i < n; ++i) {
    builder->AddKey(Key(i * 7919 % n));
    builder->AddKey(Key((i * 7919 + 13) % n));
    const size_t estimate = builder->EstimateEntriesAdded();
    ASSERT_GE(estimate, std::min<size_t>(i + 1, n));
    ASSERT_LE(estimate, 2 * (i + 1));
  }
  // An upper bound between de-duplications; Finish is exact.
  EXPECT_GE(builder->EstimateEntriesAdded(), n);
  Block block = Finish(builder.get());
  EXPECT_LE(StatsOf(block.contents).num_items, n);
  auto fresh = NewBuilder(*policy);
  for (uint64_t k = 0; k < n; ++k) fresh->AddKey(Key(k));
  Block exact = Finish(fresh.get());
  EXPECT_EQ(block.contents.size(), exact.contents.size());
}

#if CUCKOO_ABI_HAS_ADD_KEY_AND_ALT
TEST(FilterBitsTest, AddKeyAndAlt) {
  auto policy = MakePolicy("cuckoofilter:10");
  auto builder = NewBuilder(*policy);
  builder->AddKey("aa1");
  builder->AddKeyAndAlt("aa2", "aa");
  builder->AddKeyAndAlt("aa3", "aa");
  builder->AddKeyAndAlt("ab", "ab");  // a key that is its own prefix
  builder->AddKey("ab");
  EXPECT_EQ(builder->EstimateEntriesAdded(), 5u);
  Block block = Finish(builder.get());
  std::unique_ptr<FilterBitsReader> reader(
      policy->GetFilterBitsReader(block.contents));
  for (const char* k : {"aa1", "aa2", "aa3", "aa", "ab"})
    EXPECT_TRUE(reader->MayMatch(k));
}
#endif

// ---------------------------------------------------------- reuse, verify

TEST(FilterBitsTest, BuilderReuseForPartitions) {
  auto policy = MakePolicy("cuckoofilter:16");
  auto builder = NewBuilder(*policy, /*detect_corruption=*/true);
  std::vector<Block> blocks;
  const uint64_t per = 3000;
  for (uint64_t p = 0; p < 5; ++p) {
    for (uint64_t i = 0; i < per; ++i) builder->AddKey(Key(p * per + i));
    blocks.push_back(Finish(builder.get()));
    ASSERT_TRUE(blocks.back().status.ok());
    ASSERT_TRUE(builder->MaybePostVerify(blocks.back().contents).ok());
  }
  for (uint64_t p = 0; p < 5; ++p) {
    std::unique_ptr<FilterBitsReader> reader(
        policy->GetFilterBitsReader(blocks[p].contents));
    int other = 0;
    for (uint64_t q = 0; q < 5 * per; ++q) {
      const bool match = reader->MayMatch(Key(q));
      if (q / per == p) {
        ASSERT_TRUE(match);
      } else {
        other += match;
      }
    }
    EXPECT_LT(other, 10) << "partition " << p << " holds keys of others";
    EXPECT_EQ(StatsOf(blocks[p].contents).num_items, per);
  }
}

TEST(FilterBitsTest, MaybePostVerify) {
  auto policy = MakePolicy("cuckoofilter:10");
  for (bool detect : {false, true}) {
    auto builder = NewBuilder(*policy, detect);
    for (uint64_t i = 0; i < 1000; ++i) builder->AddKey(Key(i));
    Block good = Finish(builder.get());
    EXPECT_TRUE(builder->MaybePostVerify(good.contents).ok());

    // A block that lacks the keys just added.
    auto other = NewBuilder(*policy);
    for (uint64_t i = 0; i < 1000; ++i) other->AddKey(Key(i, "other"));
    Block wrong = Finish(other.get());
    for (uint64_t i = 0; i < 1000; ++i) builder->AddKey(Key(i));
    Block ignored = Finish(builder.get());
    Status s = builder->MaybePostVerify(wrong.contents);
    EXPECT_EQ(s.ok(), !detect) << s.ToString();
    if (detect) {
      EXPECT_TRUE(s.IsCorruption());
    }

    // A block that does not parse.
    for (uint64_t i = 0; i < 10; ++i) builder->AddKey(Key(i));
    Block small = Finish(builder.get());
    std::string broken(small.contents.data(), small.contents.size());
    broken.back() ^= 0x40;  // format version
    s = builder->MaybePostVerify(Slice(broken));
    EXPECT_EQ(s.ok(), !detect);
  }
  CuckooFilterPolicyStats stats;
  ASSERT_TRUE(GetCuckooFilterPolicyStats(policy.get(), &stats));
  EXPECT_EQ(stats.construction_corruptions, 2u);
}

// A Logger that keeps the messages.
class CapturingLogger : public ROCKSDB_NAMESPACE::Logger {
 public:
  using ROCKSDB_NAMESPACE::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char buf[1024];
    vsnprintf(buf, sizeof(buf), format, ap);
    messages.push_back(buf);
  }
  std::vector<std::string> messages;
};

// With walks disabled, building fails at the budget: the builder must retry
// with other seeds, then grow the table, and still return a correct block,
// and say so in the info log and the counters.
TEST(FilterBitsTest, NeverFailsRetriesThenGrows) {
  auto policy = MakePolicy("cuckoofilter:10");
  CapturingLogger logger;
  BlockBasedTableOptions table_options;
  FilterBuildingContext context(table_options);
  context.info_log = &logger;
  std::unique_ptr<FilterBitsBuilder> builder(
      policy->GetBuilderWithContext(context));
  internal::SetBuilderMaxKicksForTesting(0);
  const uint64_t n = 2000;
  for (uint64_t i = 0; i < n; ++i) builder->AddKey(Key(i));
  Block block = Finish(builder.get());
  internal::SetBuilderMaxKicksForTesting(-1);
  ASSERT_TRUE(block.status.ok());
  std::unique_ptr<FilterBitsReader> reader(
      policy->GetFilterBitsReader(block.contents));
  for (uint64_t i = 0; i < n; ++i) ASSERT_TRUE(reader->MayMatch(Key(i)));
  CuckooFilterPolicyStats stats;
  ASSERT_TRUE(GetCuckooFilterPolicyStats(policy.get(), &stats));
  EXPECT_EQ(stats.filters_built, 1u);
  EXPECT_EQ(stats.filters_grown, 1u);
  EXPECT_GE(stats.build_retries,
            3u);  // two more seeds at the budget, then growth
  EXPECT_GT(block.contents.size(),
            std::ceil(n * 10.0 / 8) + 32);  // over budget
  EXPECT_EQ(stats.invalid_blocks, 0u);
  bool logged = false;
  for (const std::string& m : logger.messages) {
    logged |= m.find("cuckoofilter") != std::string::npos &&
              m.find("exceeds") != std::string::npos;
  }
  EXPECT_TRUE(logged) << "no info_log line about the grown filter";

  // Back to normal: the next filter is within budget.
  for (uint64_t i = 0; i < n; ++i) builder->AddKey(Key(i));
  Block normal = Finish(builder.get());
  EXPECT_LE(double(normal.contents.size()), std::ceil(n * 10.0 / 8) + 32);
}

// ---------------------------------------------------------- corrupted blocks

// Over the format 2 layout and the blocked (format 4) one.
class CorruptBlockTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    policy_ = MakePolicy(GetParam());
    auto builder = NewBuilder(*policy_);
    for (uint64_t i = 0; i < 200; ++i) {
      keys_.push_back(Key(i));
      builder->AddKey(keys_.back());
    }
    Block b = Finish(builder.get());
    good_.assign(b.contents.data(), b.contents.size());
  }

  // The reader for `bytes` must answer "may match" for every key (if the
  // trailer is rejected it answers so for everything), without reading
  // outside the buffer (ASan) and must count the rejection.
  void ExpectSafe(const std::string& bytes, bool expect_rejected,
                  const std::string& what) {
    CuckooFilterPolicyStats before, after;
    ASSERT_TRUE(GetCuckooFilterPolicyStats(policy_.get(), &before));
    // An exact-size heap copy, so ASan sees any overread.
    std::unique_ptr<char[]> copy(new char[bytes.size() + 1]);
    std::memcpy(copy.get(), bytes.data(), bytes.size());
    std::unique_ptr<FilterBitsReader> reader(
        policy_->GetFilterBitsReader(Slice(copy.get(), bytes.size())));
    ASSERT_NE(reader, nullptr);
    ASSERT_TRUE(GetCuckooFilterPolicyStats(policy_.get(), &after));
    EXPECT_EQ(after.invalid_blocks - before.invalid_blocks,
              expect_rejected ? 1u : 0u)
        << what;
    for (const std::string& k : keys_) ASSERT_TRUE(reader->MayMatch(k)) << what;
    for (bool b : BatchMayMatch(reader.get(), keys_, 32))
      ASSERT_TRUE(b) << what;
    if (expect_rejected) {
      EXPECT_TRUE(reader->MayMatch("not a key")) << what;
    }
  }

  std::shared_ptr<const FilterPolicy> policy_;
  std::vector<std::string> keys_;
  std::string good_;
};

TEST_P(CorruptBlockTest, IntactBlockIsAccepted) {
  ExpectSafe(good_, false, "intact");
}

TEST_P(CorruptBlockTest, Truncated) {
  for (size_t len = 0; len < good_.size(); ++len) {
    ExpectSafe(good_.substr(0, len), true, "prefix of " + std::to_string(len));
    ExpectSafe(good_.substr(good_.size() - len), true,
               "suffix of " + std::to_string(len));
  }
  ExpectSafe(good_ + std::string(8, '\0'), true, "padded");
}

TEST_P(CorruptBlockTest, WrongVersionWithValidChecksum) {
  // A well-formed trailer of an unknown format version, and one whose
  // fields are consistent with its checksum but not with the block size.
  cuckoo::internal::Trailer t;
  std::string error;
  uint64_t table_bytes = good_.size() - 32;
  const bool blocked = static_cast<uint8_t>(good_.back()) ==
                       cuckoo::internal::kFormatVersionBlockedNext;
  if (blocked) {
    ASSERT_TRUE(cuckoo::internal::DecodeBlockedFilter(good_.data(),
                                                      good_.size(), &t, &error))
        << error;
  } else {
    ASSERT_TRUE(cuckoo::internal::DecodeFilter(good_.data(), good_.size(), &t,
                                               &table_bytes, &error));
  }
  std::string bad = good_;
  bad.back() =
      static_cast<char>(cuckoo::internal::kFormatVersionBlockedNext + 1);
  ExpectSafe(bad, true, "version");
  // The other known versions, resealed: fields read with the wrong meaning.
  // (Versions 1 and 2 share the trailer fields: a version 2 block resealed
  // as version 1 is a valid version 1 block; so do versions 3 and 4, which
  // differ only in where an item's secondary block is, so a resealed one
  // may answer wrongly: a forged checksum, not damage, which the checksum
  // catches.)
  const std::vector<uint8_t> others =
      blocked ? std::vector<uint8_t>{1, 2} : std::vector<uint8_t>{3, 4};
  for (uint8_t version : others) {
    bad = good_;
    bad.back() = static_cast<char>(version);
    ASSERT_TRUE(cuckoo::internal::ResealChecksum(&bad[0], bad.size()));
    ExpectSafe(bad, true, "version " + std::to_string(version) + " resealed");
  }

  // Genuine fields with one edited, resealed by the builder's encoder: the
  // reader must reject each.
  const auto expect_rejected =
      [&](const std::string& what,
          const std::function<void(cuckoo::internal::Trailer*)>& edit) {
        cuckoo::internal::Trailer edited = t;
        edit(&edited);
        std::string resealed = good_;
        cuckoo::internal::EncodeTrailer(edited, &resealed[0],
                                        resealed.size() - 32);
        ExpectSafe(resealed, true, what);
      };
  using cuckoo::internal::Trailer;
  expect_rejected("bucket count",
                  [](Trailer* v) { v->num_buckets = 0xfffffffe; });
  expect_rejected("fingerprint bits",
                  [&](Trailer* v) { v->fingerprint_bits = blocked ? 17 : 33; });
  if (blocked) {
    // Blocked only: plain buckets, another bucket size, a stash the block
    // does not have, the reserved field, more items than slots.
    expect_rejected("flags", [](Trailer* v) { v->semi_sort = false; });
    expect_rejected("bucket size", [](Trailer* v) { v->bucket_size = 2; });
    expect_rejected("stash size", [](Trailer* v) { v->victim_fp = 3; });
    expect_rejected("reserved", [](Trailer* v) { v->victim_bucket = 1; });
    expect_rejected("item count", [](Trailer* v) { v->num_items = 1000000; });
  }

  // Re-encoding the genuine fields is accepted (the encoder is the one the
  // builder uses).
  bad = good_;
  cuckoo::internal::EncodeTrailer(t, &bad[0], table_bytes);
  ExpectSafe(bad, false, "re-encoded");
}

TEST_P(CorruptBlockTest, EverySingleBitFlip) {
  for (size_t byte = 0; byte < good_.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good_;
      bad[byte] ^= static_cast<char>(1 << bit);
      ExpectSafe(
          bad, true,
          "flip byte " + std::to_string(byte) + " bit " + std::to_string(bit));
    }
  }
}

TEST_P(CorruptBlockTest, GarbageAndTableDamageDoNotCrash) {
  std::mt19937_64 rng(11);
  for (size_t len : {1, 31, 32, 33, 64, 100, 1000}) {
    std::string garbage(len, '\0');
    for (char& c : garbage) c = static_cast<char>(rng());
    ExpectSafe(garbage, true, "garbage " + std::to_string(len));
  }
  // Damage inside the bucket array: format versions 2 and 3 checksum the
  // whole block, so the reader is "always may match" and the block counted
  // (version 1 blocks gave false negatives here).
  for (size_t byte = 0; byte + 32 < good_.size(); byte += 7) {
    std::string bad = good_;
    bad[byte] = static_cast<char>(~bad[byte]);
    ExpectSafe(bad, true, "table byte " + std::to_string(byte));
  }
  std::string zeroed = good_;
  std::fill(zeroed.begin(), zeroed.end() - 32, '\0');
  ExpectSafe(zeroed, true, "zeroed bucket array");
}

INSTANTIATE_TEST_SUITE_P(Formats, CorruptBlockTest,
                         ::testing::Values("cuckoofilter:10",
                                           "cuckoofilter:10:blocked"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == "cuckoofilter:10" ? "v2"
                                                                  : "blocked";
                         });

// ---------------------------------------------------------- blocked layout

// "cuckoofilter:<bits>:blocked" (format version 4): every budget, sizes
// from empty to 60000 keys, against the exact key set.
class BlockedPolicyTest : public ::testing::TestWithParam<double> {};

// The blocks of a blocked filter, parsed independently of the reader.
cuckoo::internal::BlockedView ParseBlocked(const Slice& contents) {
  cuckoo::internal::BlockedView view;
  std::string error;
  EXPECT_TRUE(cuckoo::internal::ParseBlockedFilter(
      contents.data(), contents.size(), &view, &error))
      << error;
  return view;
}

// 8 * load / (2^f - 1) * (1 + fraction of overflow bits set): two buckets
// of four in the primary block, and again in the secondary block when the
// key's overflow bit is set.
double BlockedExpectedFpr(const cuckoo::internal::BlockedView& view,
                          uint64_t n) {
  const int f = view.fingerprint_bits;
  const double slots =
      4.0 * cuckoo::internal::BlockedBucketsPerBlock(f) * view.ref.num_blocks;
  return std::min(1.0, 8.0 * (n / slots) / (std::ldexp(1.0, f) - 1) *
                           (1 + BlockedOverflowBitFraction(view)));
}

TEST_P(BlockedPolicyTest, NoFalseNegativesBoundedFprAndBudget) {
  const double bits = GetParam();
  char name[48];
  snprintf(name, sizeof(name), "cuckoofilter:%g:blocked", bits);
  auto policy = MakePolicy(name);
  EXPECT_EQ(std::string(policy->Name()), name);
  auto builder = NewBuilder(*policy, /*detect_corruption=*/true);
  for (uint64_t n : {0, 1, 2, 7, 100, 3000, 60000}) {
    std::vector<std::string> keys;
    for (uint64_t i = 0; i < n; ++i) keys.push_back(Key(i * 7 + n));
    for (const std::string& k : keys) builder->AddKey(k);
    Block block = Finish(builder.get());
    ASSERT_TRUE(block.status.ok()) << block.status.ToString();
    ASSERT_TRUE(builder->MaybePostVerify(block.contents).ok());
    ASSERT_EQ(static_cast<uint8_t>(block.contents[block.contents.size() - 1]),
              cuckoo::internal::kFormatVersionBlockedNext);
    const cuckoo::internal::BlockedView view = ParseBlocked(block.contents);
    EXPECT_EQ(view.num_items, n);
    if (n >= 3000) {
      // Within the budget (no stash was needed).
      EXPECT_LE(double(block.contents.size() - 32), std::ceil(n * bits / 8))
          << name << " n=" << n;
      EXPECT_EQ(view.ref.stash_size, 0u);
    }

    std::unique_ptr<FilterBitsReader> reader(
        policy->GetFilterBitsReader(block.contents));
    for (const std::string& k : keys)
      ASSERT_TRUE(reader->MayMatch(k)) << name << " " << k;
    for (bool b : BatchMayMatch(reader.get(), keys, 32)) ASSERT_TRUE(b);

    const int absent = 100000;
    std::vector<std::string> probes;
    for (int i = 0; i < absent; ++i) probes.push_back(Key(i, "absent"));
    int false_positives = 0;
    for (const std::string& k : probes) false_positives += reader->MayMatch(k);
    int batched = 0;
    for (bool b : BatchMayMatch(reader.get(), probes, 29)) batched += b;
    EXPECT_EQ(batched, false_positives);
    const double expected = BlockedExpectedFpr(view, n) * absent;
    EXPECT_LE(false_positives, expected + 5 * std::sqrt(expected) + 5)
        << name << " n=" << n;
    if (n >= 3000 && view.fingerprint_bits >= 8) {
      EXPECT_GE(false_positives, 0.85 * expected - 5 * std::sqrt(expected) - 5)
          << name << " n=" << n;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Budgets, BlockedPolicyTest,
                         ::testing::Values(4, 6, 7, 8, 9, 9.5, 10, 11, 12, 14,
                                           16, 18, 20, 22, 24, 64),
                         [](const ::testing::TestParamInfo<double>& info) {
                           std::string name = std::to_string(info.param);
                           for (char& c : name) {
                             if (c == '.') c = '_';
                           }
                           return "b" + name;
                         });

// Measured false positive rate of a policy's filter of n keys.
double MeasuredFpr(const FilterPolicy& policy, uint64_t n, uint64_t queries,
                   size_t* bytes) {
  auto builder = NewBuilder(policy);
  for (uint64_t i = 0; i < n; ++i) builder->AddKey(Key(i));
  Block block = Finish(builder.get());
  EXPECT_TRUE(block.status.ok());
  *bytes = block.contents.size();
  std::unique_ptr<FilterBitsReader> reader(
      policy.GetFilterBitsReader(block.contents));
  for (uint64_t i = 0; i < n; i += 97) EXPECT_TRUE(reader->MayMatch(Key(i)));
  uint64_t positives = 0;
  for (uint64_t i = 0; i < queries; ++i)
    positives += reader->MayMatch(Key(i, "absent"));
  return double(positives) / queries;
}

// At equal memory the blocked filter's rate is at most RocksDB Bloom's
// (where cuckoo filters are smaller than Bloom at all: from ~10 bits/key;
// at 12 bits/key the two are within noise, 0.38% vs 0.40%), on 10^6 keys.
TEST(BlockedFilterTest, FprAtMostBloomAtEqualMemory) {
  const uint64_t n = 1000000;
  const uint64_t queries = 1000000;
  for (double bits : {10.0, 14.0, 16.0, 20.0}) {
    char name[48];
    snprintf(name, sizeof(name), "cuckoofilter:%g:blocked", bits);
    size_t blocked_bytes = 0, bloom_bytes = 0;
    const double blocked =
        MeasuredFpr(*MakePolicy(name), n, queries, &blocked_bytes);
    std::unique_ptr<const FilterPolicy> bloom(
        ROCKSDB_NAMESPACE::NewBloomFilterPolicy(bits));
    const double bloom_fpr = MeasuredFpr(*bloom, n, queries, &bloom_bytes);
    // Equal bits per key; metadata differs (32-byte trailer vs 5 bytes).
    EXPECT_LE(blocked_bytes, bloom_bytes + 32) << name;
    const double sigma = std::sqrt(bloom_fpr / queries);
    EXPECT_LT(blocked, bloom_fpr + 2 * sigma)
        << name << " blocked " << blocked << " bloom " << bloom_fpr;
    printf(
        "[ blocked ] %s: %.3f bits/key, FPR %.4f%%; Bloom %.3f bits/key, "
        "FPR %.4f%%\n",
        name, blocked_bytes * 8.0 / n, 100 * blocked, bloom_bytes * 8.0 / n,
        100 * bloom_fpr);
  }
}

// Every cuckoo policy reads every cuckoo block: version 2 blocks through a
// blocked policy, version 4 blocks through the default one (and version 3
// blocks: Version3BlockReadByEveryPolicy).
TEST(BlockedFilterTest, OldAndNewBlocksReadByEitherPolicy) {
  auto blocked = MakePolicy("cuckoofilter:10:blocked");
  auto plain = MakePolicy("cuckoofilter:10");
  auto explicit_layout = MakePolicy("cuckoofilter:13:12:4:0");
  for (const auto& writer : {blocked, plain, explicit_layout}) {
    auto builder = NewBuilder(*writer);
    for (uint64_t i = 0; i < 5000; ++i) builder->AddKey(Key(i));
    Block block = Finish(builder.get());
    for (const auto& reader_policy : {blocked, plain}) {
      CuckooFilterPolicyStats before, after;
      ASSERT_TRUE(GetCuckooFilterPolicyStats(reader_policy.get(), &before));
      std::unique_ptr<FilterBitsReader> reader(
          reader_policy->GetFilterBitsReader(block.contents));
      ASSERT_TRUE(GetCuckooFilterPolicyStats(reader_policy.get(), &after));
      EXPECT_EQ(after.invalid_blocks, before.invalid_blocks)
          << writer->Name() << " read by " << reader_policy->Name();
      for (uint64_t i = 0; i < 5000; ++i) ASSERT_TRUE(reader->MayMatch(Key(i)));
      int positives = 0;
      for (uint64_t i = 0; i < 20000; ++i)
        positives += reader->MayMatch(Key(i, "absent"));
      EXPECT_LT(positives, 20000 * 0.02) << writer->Name();
    }
  }
}

// Pins the bytes of a small blocked filter and its trailer fields, read here
// independently of the decoder: a change is a format change (a new version).
// Format 3's block for these keys hashed to 0xac2b69aa40f225b5 (the builder
// of format 4 places items otherwise; Version3BlockReadByEveryPolicy reads
// that block).
TEST(BlockedFilterTest, GoldenBlockedBlock) {
  auto policy = MakePolicy("cuckoofilter:10:blocked");
  auto builder = NewBuilder(*policy);
  for (uint64_t i = 0; i < 100; ++i) builder->AddKey("key" + std::to_string(i));
  Block block = Finish(builder.get());
  // ceil(100 / (56 slots * 0.94)) = 2 blocks, no stash, 32-byte trailer.
  ASSERT_EQ(block.contents.size(), 2u * 64 + 32);
  const unsigned char* t = reinterpret_cast<const unsigned char*>(
      block.contents.data() + block.contents.size() - 32);
  auto le32 = [&](int at) {
    return uint32_t{t[at]} | uint32_t{t[at + 1]} << 8 |
           uint32_t{t[at + 2]} << 16 | uint32_t{t[at + 3]} << 24;
  };
  EXPECT_EQ(le32(0), 2u);    // blocks
  EXPECT_EQ(le32(4), 100u);  // items (low half)
  EXPECT_EQ(le32(8), 0u);    // items (high half)
  EXPECT_EQ(le32(12), 0u);   // seed
  EXPECT_EQ(le32(16), 0u);   // stash size
  EXPECT_EQ(le32(20), 0u);   // reserved
  EXPECT_EQ(t[28], 10);      // f
  EXPECT_EQ(t[29], 4);       // b
  EXPECT_EQ(t[30], 1);       // semi-sorted
  EXPECT_EQ(t[31], 4);       // format version
  EXPECT_EQ(cuckoo::internal::HashKeyInline(block.contents.data(),
                                            block.contents.size()),
            0x246e0793b24448b6ull)  // format 4
      << std::hex
      << cuckoo::internal::HashKeyInline(block.contents.data(),
                                         block.contents.size());
  std::unique_ptr<FilterBitsReader> reader(
      policy->GetFilterBitsReader(block.contents));
  for (uint64_t i = 0; i < 100; ++i) {
    ASSERT_TRUE(reader->MayMatch("key" + std::to_string(i))) << i;
  }
}

// Blocks of format version 3 (written by release 1.0.0) are read by every
// cuckoo policy, single and batched: tests/core/blocked_v3_vectors.inc
// (the second has items in random secondary blocks).
TEST(BlockedFilterTest, Version3BlockReadByEveryPolicy) {
  auto from_hex = [](const char* hex) {
    std::string out;
    for (size_t i = 0; hex[i] != '\0' && hex[i + 1] != '\0'; i += 2) {
      out.push_back(
          static_cast<char>(std::stoi(std::string(hex + i, 2), nullptr, 16)));
    }
    return out;
  };
  for (const char* policy_name : {"cuckoofilter:10:blocked", "cuckoofilter:10",
                                  "cuckoofilter:13:12:4:0"}) {
    auto policy = MakePolicy(policy_name);
    for (const auto& v : {std::make_pair(kV3Golden100, 100),
                          std::make_pair(kV3Keys2000, 2000)}) {
      const std::string bytes = from_hex(v.first);
      ASSERT_EQ(static_cast<uint8_t>(bytes.back()),
                cuckoo::internal::kFormatVersionBlocked);
      CuckooFilterPolicyStats before, after;
      ASSERT_TRUE(GetCuckooFilterPolicyStats(policy.get(), &before));
      std::unique_ptr<FilterBitsReader> reader(
          policy->GetFilterBitsReader(Slice(bytes)));
      ASSERT_TRUE(GetCuckooFilterPolicyStats(policy.get(), &after));
      EXPECT_EQ(after.invalid_blocks, before.invalid_blocks);
      std::vector<std::string> keys;
      for (int i = 0; i < v.second; ++i)
        keys.push_back("key" + std::to_string(i));
      for (const std::string& k : keys) ASSERT_TRUE(reader->MayMatch(k)) << k;
      for (bool b : BatchMayMatch(reader.get(), keys, 32)) ASSERT_TRUE(b);
      int positives = 0;
      for (uint64_t i = 0; i < 20000; ++i)
        positives += reader->MayMatch(Key(i, "absent"));
      EXPECT_LT(positives, 20000 * 0.02) << policy_name;
    }
  }
}

// A builder that must stash: walks are off (SetBuilderMaxKicksForTesting(0)
// leaves in-block placement to free slots and displacement chains) and
// still every key is found.
TEST(BlockedFilterTest, NoWalksStillNoFalseNegatives) {
  auto policy = MakePolicy("cuckoofilter:10:blocked");
  auto builder = NewBuilder(*policy, /*detect_corruption=*/true);
  internal::SetBuilderMaxKicksForTesting(0);
  const uint64_t n = 20000;
  for (uint64_t i = 0; i < n; ++i) builder->AddKey(Key(i));
  Block block = Finish(builder.get());
  internal::SetBuilderMaxKicksForTesting(-1);
  ASSERT_TRUE(block.status.ok());
  ASSERT_TRUE(builder->MaybePostVerify(block.contents).ok());
  std::unique_ptr<FilterBitsReader> reader(
      policy->GetFilterBitsReader(block.contents));
  for (uint64_t i = 0; i < n; ++i) ASSERT_TRUE(reader->MayMatch(Key(i)));
}

// Batched and single lookups agree on every key, for batches of any size
// (the reader splits them into chunks of 32 and probes the overflowed keys'
// secondary blocks and the stash after each chunk), on blocks built with
// a stash: 3 blocks for 400 keys, through the core builder. Fingerprint
// widths on both sides of the batched path's low-part test (f >= 10) and
// of the narrow semi-sorted codec (f < 8).
TEST(BlockedFilterTest, BatchedEqualsSingleWithSecondaryBlocksAndStash) {
  std::vector<std::string> keys, probes;
  std::vector<uint64_t> hashes;
  for (uint64_t i = 0; i < 400; ++i) {
    keys.push_back(Key(i));
    hashes.push_back(cuckoo::internal::HashKeyInline(keys.back().data(),
                                                     keys.back().size()));
  }
  for (uint64_t i = 0; i < 20000; ++i) probes.push_back(Key(i, "absent"));
  auto policy = MakePolicy("cuckoofilter:10:blocked");
  for (int f : {6, 8, 9, 10, 12}) {
    SCOPED_TRACE("f=" + std::to_string(f));
    cuckoo::internal::BlockedBuildParams params;
    params.fingerprint_bits = f;
    params.num_blocks = 3;
    params.max_stash = 400;
    const cuckoo::internal::HashSpan span{hashes.data(), hashes.size()};
    std::vector<uint8_t> out(3 * 64 + 4 * 400 + 8 + 32, 0);
    cuckoo::internal::BlockedScratch scratch;
    const cuckoo::internal::BlockedBuildResult r = BuildBlockedTable(
        &span, 1, hashes.size(), params, &scratch, out.data());
    ASSERT_TRUE(r.ok);
    ASSERT_GT(r.stash_size, 0u);
    ASSERT_GT(r.overflowed, r.stash_size);  // some in secondary blocks
    const size_t size = EncodeBlockedTrailer(params, r, out.data());
    const Slice contents(reinterpret_cast<const char*>(out.data()), size);
    std::unique_ptr<FilterBitsReader> reader(
        policy->GetFilterBitsReader(contents));
    for (const std::string& k : keys) ASSERT_TRUE(reader->MayMatch(k)) << k;
    std::vector<bool> single;
    size_t positives = 0;
    for (const std::string& k : probes) {
      single.push_back(reader->MayMatch(k));
      positives += single.back();
    }
    EXPECT_LT(positives, probes.size());  // not an always-true reader
    for (int batch : {1, 2, 31, 32, 33, 64, 65, 200}) {
      for (bool b : BatchMayMatch(reader.get(), keys, batch))
        ASSERT_TRUE(b) << batch;
      EXPECT_EQ(BatchMayMatch(reader.get(), probes, batch), single) << batch;
    }
  }
}

// ---------------------------------------------------------- batches, format

TEST(FilterBitsTest, BatchedEqualsSingleForAnyBatchSize) {
  auto policy = MakePolicy("cuckoofilter:8");
  auto builder = NewBuilder(*policy);
  for (uint64_t i = 0; i < 5000; i += 2) builder->AddKey(Key(i));
  Block block = Finish(builder.get());
  std::unique_ptr<FilterBitsReader> reader(
      policy->GetFilterBitsReader(block.contents));
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < 5000; ++i) keys.push_back(Key(i));
  std::vector<bool> single;
  for (const std::string& k : keys) single.push_back(reader->MayMatch(k));
  for (int batch : {1, 2, 31, 32, 33, 64, 65, 200}) {
    EXPECT_EQ(BatchMayMatch(reader.get(), keys, batch), single) << batch;
  }
}

// Pins the block of a small filter: a change here is a format change, which
// needs a new format version and CompatibilityName.
TEST(FilterBitsTest, GoldenBlock) {
  auto policy = MakePolicy("cuckoofilter:10");
  auto builder = NewBuilder(*policy);
  for (uint64_t i = 0; i < 100; ++i) builder->AddKey("key" + std::to_string(i));
  Block block = Finish(builder.get());
  ASSERT_EQ(block.contents.size(), 158u);  // 28 buckets x 36 bits + 32
  const cuckoo::FilterStats s = StatsOf(block.contents);
  EXPECT_EQ(s.num_buckets, 28u);
  EXPECT_EQ(cuckoo::internal::HashKeyInline(block.contents.data(),
                                            block.contents.size()),
            0xd480c3bd41646a5full)  // format 2 (whole-block checksum)
      << std::hex
      << cuckoo::internal::HashKeyInline(block.contents.data(),
                                         block.contents.size());
}

TEST(FilterBitsTest, StatsCountBuildsAndReaders) {
  auto policy = MakePolicy("cuckoofilter:10");
  const CuckooFilterPolicyStats global_before =
      GetGlobalCuckooFilterPolicyStats();
  auto builder = NewBuilder(*policy);
  for (uint64_t i = 0; i < 1000; ++i) builder->AddKey(Key(i));
  Block block = Finish(builder.get());
  std::unique_ptr<FilterBitsReader> r1(
      policy->GetFilterBitsReader(block.contents));
  std::unique_ptr<FilterBitsReader> r2(
      policy->GetFilterBitsReader(Slice("junk")));
  CuckooFilterPolicyStats stats;
  ASSERT_TRUE(GetCuckooFilterPolicyStats(policy.get(), &stats));
  EXPECT_EQ(stats.filters_built, 1u);
  EXPECT_EQ(stats.keys_added, 1000u);
  EXPECT_EQ(stats.filter_bytes, block.contents.size());
  EXPECT_EQ(stats.readers_created, 2u);
  EXPECT_EQ(stats.invalid_blocks, 1u);
  const CuckooFilterPolicyStats global = GetGlobalCuckooFilterPolicyStats();
  EXPECT_GE(global.filters_built - global_before.filters_built, 1u);
  EXPECT_GE(global.invalid_blocks - global_before.invalid_blocks, 1u);
}

// "" is a legal smallest key. The builder's order tracking
// used to memcpy from it into a not yet allocated buffer (memcpy(nullptr, p,
// 0): undefined behaviour that UBSan reports in the ASan build).
TEST(FilterBitsTest, EmptyFirstKey) {
  auto policy = MakePolicy("cuckoofilter:10");
  auto builder = NewBuilder(*policy, /*detect_corruption=*/true);
  builder->AddKey("");
  for (uint64_t i = 0; i < 100; ++i) builder->AddKey(Key(i));
  builder->AddKey("");  // out of order now: the de-duplication path
  EXPECT_EQ(builder->EstimateEntriesAdded(), 101u);
  Block block = Finish(builder.get());
  ASSERT_TRUE(block.status.ok()) << block.status.ToString();
  EXPECT_TRUE(builder->MaybePostVerify(block.contents).ok());
  std::unique_ptr<FilterBitsReader> reader(
      policy->GetFilterBitsReader(block.contents));
  EXPECT_TRUE(reader->MayMatch(""));
  for (uint64_t i = 0; i < 100; ++i) EXPECT_TRUE(reader->MayMatch(Key(i)));
  // Only empty keys, and a reused builder starting with "" again.
  builder->AddKey("");
  Block only = Finish(builder.get());
  reader.reset(policy->GetFilterBitsReader(only.contents));
  EXPECT_TRUE(reader->MayMatch(""));
}

}  // namespace
}  // namespace rocksdb_cuckoo
