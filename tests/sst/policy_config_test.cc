// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Options strings, named factories, layouts, registration and sizing rules
// of the cuckoo FilterPolicy.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "policy_config.h"
#include "rocksdb/convenience.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "rocksdb_cuckoo/filter_policy.h"
#include "test_util.h"

namespace rocksdb_cuckoo {
namespace {

using internal::PolicyConfig;
using ROCKSDB_NAMESPACE::ConfigOptions;
using ROCKSDB_NAMESPACE::FilterPolicy;
using ROCKSDB_NAMESPACE::Status;

class PolicyConfigTest : public ::testing::Test {
 protected:
  void SetUp() override { test::RegisterOnce(); }

  static Status Create(const std::string& value,
                       std::shared_ptr<const FilterPolicy>* policy) {
    ConfigOptions options;  // defaults: ignore_unsupported_options = true
    return FilterPolicy::CreateFromString(options, value, policy);
  }

  // The layout of NewCuckooFilterPolicy(bits).
  static CuckooFilterLayout AutoLayout(double bits) {
    std::unique_ptr<const FilterPolicy> policy(NewCuckooFilterPolicy(bits));
    CuckooFilterLayout layout;
    EXPECT_TRUE(GetCuckooFilterLayout(policy.get(), &layout)) << bits;
    return layout;
  }
};

TEST_F(PolicyConfigTest, AutomaticLayoutPerBudget) {
  struct Case {
    double bits;
    int f;
    bool semi;
  };
  // Largest f with (f - 1) / 0.95 <= bits (semi-sorted, f <= 16); above
  // 17.89 bits (f = 17 plain at 0.95) the largest plain f with f / 0.95 <=
  // bits, up to f = 32 from 33.68 bits.
  const Case cases[] = {
      {4, 4, true},     {7.9, 8, true},    {8, 8, true},      {9.47, 9, true},
      {9.48, 10, true}, {10, 10, true},    {12, 12, true},    {15.79, 16, true},
      {16, 16, true},   {17.8, 16, true},  {17.9, 17, false}, {20, 19, false},
      {24, 22, false},  {33.6, 31, false}, {33.7, 32, false}, {64, 32, false}};
  for (const Case& c : cases) {
    const CuckooFilterLayout layout = AutoLayout(c.bits);
    EXPECT_EQ(layout.fingerprint_bits, c.f) << c.bits;
    EXPECT_EQ(layout.semi_sort, c.semi) << c.bits;
    EXPECT_EQ(layout.bucket_size, 4);
    EXPECT_LE(layout.load_factor, 0.95 + 1e-9) << c.bits;
    // The load spends exactly the budget.
    const double per_entry = c.semi ? c.f - 1 : c.f;
    EXPECT_NEAR(per_entry / layout.load_factor, c.bits, 1e-3) << c.bits;
  }
}

TEST_F(PolicyConfigTest, ExpectedFprFallsWithBudgetAndBeatsBloomTargets) {
  double previous = 1.0;
  for (int millibits = 4000; millibits <= 64000; millibits += 250) {
    const PolicyConfig c = internal::AutoConfig(millibits);
    const double fpr = internal::ExpectedFpr(c.fingerprint_bits, c.bucket_size,
                                             c.TargetLoad());
    // Not monotone at every step (the load rises within one f), but a
    // larger f always wins: never worse than 1.5x the previous step.
    EXPECT_LT(fpr, previous * 1.5) << millibits;
    previous = fpr;
  }
  // The design points: below Bloom's ~0.95% at 10 and ~0.084% at 16 bits/key
  // (RocksDB's measured rates; the DB test and the benchmark measure ours).
  EXPECT_LT(
      internal::ExpectedFpr(10, 4, internal::AutoConfig(10000).TargetLoad()),
      0.0075);
  EXPECT_LT(
      internal::ExpectedFpr(16, 4, internal::AutoConfig(16000).TargetLoad()),
      0.0002);
  // Every bit/key keeps buying FPR past 16 (before f 17..31,
  // the layouts jumped from f = 16 to 32 and 17..33 bits/key all gave f =
  // 16's ~1e-4): at least a factor 1.8 per two bits/key up to 24 (one bit
  // less than 2x: semi-sorting, which saves a bit per entry, stops at f =
  // 16), ending near the bound fpr = 8 * load / 2^f of b = 4 buckets.
  double fpr_at[25] = {};
  for (int bits = 16; bits <= 24; ++bits) {
    const PolicyConfig c = internal::AutoConfig(bits * 1000);
    fpr_at[bits] = internal::ExpectedFpr(c.fingerprint_bits, c.bucket_size,
                                         c.TargetLoad());
    if (bits >= 18) {
      EXPECT_LT(fpr_at[bits] * 1.8, fpr_at[bits - 2]) << bits << " bits/key";
    }
  }
  EXPECT_LT(fpr_at[24], 2e-6);
}

// The blocked layout per budget: the widest f whose 64-byte blocks hold
// 512 / bits keys at a load of at most kBlockedMaxLoad.
TEST_F(PolicyConfigTest, BlockedLayoutPerBudget) {
  const std::pair<double, int> expected[] = {
      {4, 4},   {6, 6},   {8, 8},   {9, 8},   {10, 10}, {12, 11},
      {14, 13}, {16, 15}, {20, 16}, {24, 16}, {64, 16}};
  for (const auto& [bits, f] : expected) {
    char name[48];
    snprintf(name, sizeof(name), "cuckoofilter:%g:blocked", bits);
    CuckooFilterLayout layout;
    ASSERT_TRUE(ParseCuckooFilterPolicyString(name, &layout).ok()) << name;
    EXPECT_EQ(layout.fingerprint_bits, f) << name;
    EXPECT_EQ(layout.bucket_size, 4);
    EXPECT_TRUE(layout.semi_sort);
    EXPECT_LE(layout.load_factor, internal::kBlockedMaxLoad + 1e-9) << name;
    EXPECT_EQ(layout.name, name);
  }
  // Sizing: whole blocks within the budget, at least one, never above the
  // maximum load.
  PolicyConfig c;
  ASSERT_TRUE(internal::ParsePolicyString("cuckoofilter:10:blocked", &c).ok());
  EXPECT_EQ(internal::BucketsForKeys(c, 0), 1u);
  EXPECT_EQ(internal::BucketsForKeys(c, 1), 1u);
  EXPECT_EQ(internal::BucketsForKeys(c, 100), 2u);
  EXPECT_EQ(internal::BucketsForKeys(c, 1000000), 19531u);  // floor(10^7/512)
  EXPECT_EQ(internal::FilterBytesForKeys(c, 1000000), 19531u * 64 + 32);
  const uint64_t keys = internal::KeysForFilterBytes(c, 19531u * 64 + 32);
  EXPECT_EQ(internal::FilterBytesForKeys(c, keys), 19531u * 64 + 32);
  EXPECT_GT(internal::FilterBytesForKeys(c, keys + 1), 19531u * 64 + 32);
}

// The named factory of the blocked layout: the same policy as its options
// string, clamped like NewCuckooFilterPolicy, and its filters hold every key.
TEST_F(PolicyConfigTest, BlockedFactoryMatchesItsOptionsString) {
  const std::pair<double, const char*> cases[] = {
      {10, "cuckoofilter:10:blocked"},
      {12.5, "cuckoofilter:12.5:blocked"},
      {1, "cuckoofilter:4:blocked"},
      {1000, "cuckoofilter:64:blocked"},
      {std::nan(""), "cuckoofilter:10:blocked"}};
  for (const auto& [bits, name] : cases) {
    std::unique_ptr<const FilterPolicy> policy(
        NewBlockedCuckooFilterPolicy(bits));
    ASSERT_NE(policy, nullptr);
    EXPECT_STREQ(policy->Name(), name);
    CuckooFilterLayout from_policy, from_string;
    ASSERT_TRUE(GetCuckooFilterLayout(policy.get(), &from_policy));
    ASSERT_TRUE(ParseCuckooFilterPolicyString(name, &from_string).ok());
    EXPECT_TRUE(from_policy.blocked) << name;
    EXPECT_TRUE(from_string.blocked) << name;
    EXPECT_EQ(from_policy.fingerprint_bits, from_string.fingerprint_bits);
    EXPECT_EQ(from_policy.name, name);
  }
  CuckooFilterLayout plain;
  ASSERT_TRUE(ParseCuckooFilterPolicyString("cuckoofilter:10", &plain).ok());
  EXPECT_FALSE(plain.blocked);
}

TEST_F(PolicyConfigTest, NamesRoundTrip) {
  const std::vector<std::string> names = {"cuckoofilter:10",
                                          "cuckoofilter:4",
                                          "cuckoofilter:64",
                                          "cuckoofilter:9.5",
                                          "cuckoofilter:12.345",
                                          "cuckoofilter:40",
                                          "cuckoofilter:13:12:4:0",
                                          "cuckoofilter:12:12:4:1",
                                          "cuckoofilter:11.579:12:4:1",
                                          "cuckoofilter:10:8:2:0",
                                          "cuckoofilter:12:8:8:0",
                                          "cuckoofilter:40:32:4:0",
                                          "cuckoofilter:20:8:1:0",
                                          "cuckoofilter:34:32:8:0",
                                          "cuckoofilter:20:17:4:0",
                                          "cuckoofilter:24:21:8:0",
                                          "cuckoofilter:10:blocked",
                                          "cuckoofilter:4:blocked",
                                          "cuckoofilter:12.5:blocked",
                                          "cuckoofilter:64:blocked"};
  for (const std::string& name : names) {
    PolicyConfig a;
    ASSERT_TRUE(internal::ParsePolicyString(name, &a).ok()) << name;
    EXPECT_EQ(internal::PolicyName(a), name);
    std::shared_ptr<const FilterPolicy> policy;
    ASSERT_TRUE(Create(name, &policy).ok()) << name;
    ASSERT_NE(policy, nullptr) << name;  // the silent no-filter trap
    EXPECT_EQ(std::string(policy->Name()), name);
    EXPECT_EQ(policy->GetId(), name);
    EXPECT_TRUE(IsCuckooFilterPolicy(policy.get()));
    EXPECT_TRUE(policy->IsInstanceOf("cuckoofilter"));
    EXPECT_STREQ(policy->CompatibilityName(), "rocksdb_cuckoo.CuckooFilter.v1");
    EXPECT_NE(std::string(policy->Name()), "rocksdb.BuiltinBloomFilter");
  }
}

TEST_F(PolicyConfigTest, NonCanonicalInputsNormalize) {
  const std::pair<std::string, std::string> cases[] = {
      {"cuckoofilter:10.0", "cuckoofilter:10"},
      {"cuckoofilter:010", "cuckoofilter:10"},
      {"cuckoofilter:9.99951", "cuckoofilter:10"},  // 0.001-bit precision
      {"cuckoofilter:12.50:12:4:1", "cuckoofilter:12.5:12:4:1"},
  };
  for (const auto& c : cases) {
    std::shared_ptr<const FilterPolicy> policy;
    ASSERT_TRUE(Create(c.first, &policy).ok()) << c.first;
    ASSERT_NE(policy, nullptr);
    EXPECT_EQ(std::string(policy->Name()), c.second);
  }
}

TEST_F(PolicyConfigTest, TargetFprForm) {
  for (double rate : {0.2, 0.03, 0.01, 0.001, 1e-4, 1e-6}) {
    const std::string value = "cuckoofilter:fpr:" + std::to_string(rate);
    CuckooFilterLayout layout;
    ASSERT_TRUE(ParseCuckooFilterPolicyString(value, &layout).ok()) << value;
    EXPECT_LE(layout.expected_fpr, rate) << value;
    // Not wasteful: 5% fewer bits would miss the target (unless at the
    // minimum budget).
    if (layout.bits_per_key > kMinBitsPerKey) {
      const CuckooFilterLayout s =
          AutoLayout(std::max(kMinBitsPerKey, layout.bits_per_key * 0.95));
      EXPECT_GT(s.expected_fpr, rate) << value;
    }
    // Its canonical name is the automatic form.
    std::shared_ptr<const FilterPolicy> policy;
    ASSERT_TRUE(Create(value, &policy).ok());
    ASSERT_NE(policy, nullptr);
    EXPECT_EQ(std::string(policy->Name()), layout.name);
    EXPECT_EQ(layout.name.find("fpr"), std::string::npos);
  }
}

TEST_F(PolicyConfigTest, BadStringsAreErrorsNotNull) {
  const std::vector<std::string> bad = {
      "cuckoofilter",                   // no budget
      "cuckoofilter:",                  // empty budget
      "cuckoofilter:abc",               // not a number
      "cuckoofilter:-1",                // sign
      "cuckoofilter:+10",               // sign
      "cuckoofilter:3.9",               // below 4
      "cuckoofilter:64.5",              // above 64
      "cuckoofilter:0",                 // no filter is not a cuckoo filter
      "cuckoofilter:1e1",               // exponent
      "cuckoofilter:nan",               //
      "cuckoofilter:inf",               //
      "cuckoofilter:10.",               // dangling point
      "cuckoofilter: 10",               // space
      "cuckoofilter:10:12:3:1",         // bucket size 3
      "cuckoofilter:10:12:4:2",         // semi flag
      "cuckoofilter:40:33:4:0",         // f = 33
      "cuckoofilter:20:3:4:0",          // f = 3
      "cuckoofilter:10:12:4:1",         // needs 11.579 bits at load 0.95
      "cuckoofilter:20:12:8:1",         // semi-sorting needs b = 4
      "cuckoofilter:40:32:4:1",         // semi-sorting needs f <= 16
      "cuckoofilter:64:32:1:0",         // needs 71.1 bits
      "cuckoofilter:10:12:4",           // 3 arguments
      "cuckoofilter:10:12:4:1:0",       // 5 arguments
      "cuckoofilter:10::4:1",           // empty field
      "cuckoofilter:fpr",               //
      "cuckoofilter:fpr:0",             //
      "cuckoofilter:fpr:1",             //
      "cuckoofilter:fpr:1.5",           //
      "cuckoofilter:fpr:abc",           //
      "cuckoofilter:fpr:0.0000000001",  // needs far more than 64 bits
      "cuckoofilter:blocked",           // no budget
      "cuckoofilter:10:block",          // misspelt
      "cuckoofilter:10:BLOCKED",        // case
      "cuckoofilter:10:blocked:1",      // extra argument
      "cuckoofilter:3:blocked",         // below 4
      "cuckoofilter:fpr:0.01:blocked",  // no target-rate form
  };
  for (const std::string& value : bad) {
    std::shared_ptr<const FilterPolicy> policy;
    Status s = Create(value, &policy);
    EXPECT_FALSE(s.ok()) << value << " gave "
                         << (policy ? policy->Name() : "null");
    EXPECT_EQ(policy, nullptr) << value;
    CuckooFilterLayout layout;
    EXPECT_FALSE(ParseCuckooFilterPolicyString(value, &layout).ok()) << value;

    // Through the strict table options parser.
    ROCKSDB_NAMESPACE::BlockBasedTableOptions table_options;
    ConfigOptions strict;
    strict.input_strings_escaped = false;
    s = ROCKSDB_NAMESPACE::GetBlockBasedTableOptionsFromString(
        strict, ROCKSDB_NAMESPACE::BlockBasedTableOptions(),
        "filter_policy=" + value, &table_options);
    EXPECT_FALSE(s.ok()) << "table options: " << value;

    // RocksDB's lenient parsing (escaped input, as for OPTIONS files)
    // ignores errors of options set by name: no filter, OK status. This is
    // why loaded policies must be checked for null.
    ConfigOptions lenient;
    ROCKSDB_NAMESPACE::BlockBasedTableOptions lenient_options;
    s = ROCKSDB_NAMESPACE::GetBlockBasedTableOptionsFromString(
        lenient, ROCKSDB_NAMESPACE::BlockBasedTableOptions(),
        "filter_policy=" + value, &lenient_options);
    EXPECT_TRUE(s.ok()) << value;
    EXPECT_EQ(lenient_options.filter_policy, nullptr) << value;
  }
}

TEST_F(PolicyConfigTest, TableOptionsStringCreatesThePolicy) {
  ROCKSDB_NAMESPACE::BlockBasedTableOptions table_options;
  ConfigOptions config;
  ASSERT_TRUE(ROCKSDB_NAMESPACE::GetBlockBasedTableOptionsFromString(
                  config, ROCKSDB_NAMESPACE::BlockBasedTableOptions(),
                  "filter_policy=cuckoofilter:12;block_size=8192",
                  &table_options)
                  .ok());
  ASSERT_NE(table_options.filter_policy, nullptr);
  EXPECT_STREQ(table_options.filter_policy->Name(), "cuckoofilter:12");
  EXPECT_TRUE(IsCuckooFilterPolicy(table_options.filter_policy.get()));
}

// Each named factory makes the policy of its options-string form: same
// Name(), same layout (named factories instead of an options struct with
// zero sentinels).
// Arguments of NewCuckooFilterPolicyWithLayout, and the expected name or
// error message.
struct LayoutCase {
  double bits;
  int f;
  int b;
  bool semi;
  const char* text;
};

TEST_F(PolicyConfigTest, NamedFactoriesMatchTheirOptionsStrings) {
  const LayoutCase layouts[] = {
      {14, 12, 4, true, "cuckoofilter:14:12:4:1"},
      {11.579, 12, 4, true, "cuckoofilter:11.579:12:4:1"},  // load 0.95
      {10, 8, 2, false, "cuckoofilter:10:8:2:0"},
      {12, 8, 8, false, "cuckoofilter:12:8:8:0"},
      {20, 8, 1, false, "cuckoofilter:20:8:1:0"},
      {20, 17, 4, false, "cuckoofilter:20:17:4:0"},
      {40, 32, 4, false, "cuckoofilter:40:32:4:0"},
      {12.5004, 12, 4, true, "cuckoofilter:12.5:12:4:1"},  // 0.001 precision
  };
  for (const LayoutCase& c : layouts) {
    std::shared_ptr<const FilterPolicy> policy;
    ASSERT_TRUE(
        NewCuckooFilterPolicyWithLayout(c.bits, c.f, c.b, c.semi, &policy).ok())
        << c.text;
    ASSERT_NE(policy, nullptr);
    EXPECT_STREQ(policy->Name(), c.text);
    EXPECT_TRUE(IsCuckooFilterPolicy(policy.get()));
    CuckooFilterLayout layout, parsed;
    ASSERT_TRUE(GetCuckooFilterLayout(policy.get(), &layout));
    EXPECT_EQ(layout.fingerprint_bits, c.f);
    EXPECT_EQ(layout.bucket_size, c.b);
    EXPECT_EQ(layout.semi_sort, c.semi);
    EXPECT_EQ(layout.name, c.text);
    const double per_entry = c.semi ? c.f - 1 : c.f;
    EXPECT_NEAR(layout.load_factor, per_entry / layout.bits_per_key, 1e-9);
    ASSERT_TRUE(ParseCuckooFilterPolicyString(c.text, &parsed).ok());
    EXPECT_EQ(parsed.name, layout.name);
    EXPECT_EQ(parsed.expected_fpr, layout.expected_fpr);
  }

  const std::pair<double, const char*> rates[] = {
      {0.05, "0.05"},   {0.01, "0.01"},    {0.005, "0.005"},
      {0.001, "0.001"}, {1e-5, "0.00001"}, {1e-8, "0.00000001"}};
  for (const auto& [rate, text] : rates) {
    std::shared_ptr<const FilterPolicy> policy, by_string;
    ASSERT_TRUE(NewCuckooFilterPolicyForFpr(rate, &policy).ok()) << rate;
    ASSERT_NE(policy, nullptr);
    ASSERT_TRUE(
        Create(std::string("cuckoofilter:fpr:") + text, &by_string).ok())
        << text;
    EXPECT_STREQ(policy->Name(), by_string->Name()) << rate;
    CuckooFilterLayout layout;
    ASSERT_TRUE(GetCuckooFilterLayout(policy.get(), &layout));
    EXPECT_LE(layout.expected_fpr, rate);
    EXPECT_EQ(layout.bucket_size, 4);
    // The automatic form: its name has no layout and parses back to it.
    std::unique_ptr<const FilterPolicy> same(
        NewCuckooFilterPolicy(layout.bits_per_key));
    EXPECT_STREQ(same->Name(), policy->Name());
  }
  std::shared_ptr<const FilterPolicy> policy;
  ASSERT_TRUE(NewCuckooFilterPolicyForFpr(0.001, &policy).ok());
  EXPECT_STREQ(policy->Name(), "cuckoofilter:12.632");  // header's example

  // Not a cuckoo policy: no layout.
  std::unique_ptr<const FilterPolicy> bloom(
      ROCKSDB_NAMESPACE::NewBloomFilterPolicy(10));
  CuckooFilterLayout layout;
  EXPECT_FALSE(GetCuckooFilterLayout(bloom.get(), &layout));
  EXPECT_FALSE(GetCuckooFilterLayout(nullptr, &layout));
}

// Bad arguments are InvalidArgument with a reason, and leave no policy
// behind (not even one the caller passed in).
TEST_F(PolicyConfigTest, NamedFactoriesRejectBadArguments) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const LayoutCase bad_layouts[] = {
      {10, 12, 3, false, "bucket_size"},       // b = 3
      {10, 12, 0, false, "bucket_size"},       // b = 0 (no default)
      {40, 33, 4, false, "fingerprint_bits"},  // f = 33
      {20, 3, 4, false, "fingerprint_bits"},   // f = 3
      {10, 0, 4, false, "fingerprint_bits"},   // f = 0 (no "automatic")
      {20, 12, 8, true, "semi_sort"},          // semi-sorting needs b = 4
      {40, 32, 4, true, "semi_sort"},          // ... and f <= 16
      {11, 12, 4, true, "needs at least 11.579"},
      {64, 32, 1, false, "needs at least"},  // 71.1 bits at load 0.45
      {0, 12, 4, true, "bits per key"},      // no "smallest" sentinel
      {-1, 12, 4, true, "bits per key"},
      {3.9, 4, 4, false, "bits per key"},
      {64.5, 32, 4, false, "bits per key"},
      {nan, 12, 4, true, "bits per key"},
      {inf, 12, 4, true, "bits per key"},
  };
  for (const LayoutCase& c : bad_layouts) {
    std::unique_ptr<const FilterPolicy> stale(NewCuckooFilterPolicy(10));
    std::shared_ptr<const FilterPolicy> policy = std::move(stale);
    const Status s =
        NewCuckooFilterPolicyWithLayout(c.bits, c.f, c.b, c.semi, &policy);
    EXPECT_TRUE(s.IsInvalidArgument()) << c.bits << " " << c.f << " " << c.b
                                       << " " << c.semi << ": " << s.ToString();
    EXPECT_NE(s.ToString().find(c.text), std::string::npos) << s.ToString();
    EXPECT_EQ(policy, nullptr) << c.text;
  }
  for (double rate : {0.0, 1.0, 1.5, -0.01, 1e-10, nan, inf}) {
    std::unique_ptr<const FilterPolicy> stale(NewCuckooFilterPolicy(10));
    std::shared_ptr<const FilterPolicy> policy = std::move(stale);
    const Status s = NewCuckooFilterPolicyForFpr(rate, &policy);
    EXPECT_TRUE(s.IsInvalidArgument()) << rate << ": " << s.ToString();
    EXPECT_EQ(policy, nullptr) << rate;
  }
}

TEST_F(PolicyConfigTest, BitsFactoryClamps) {
  const std::pair<double, std::string> cases[] = {
      {10, "cuckoofilter:10"},
      {1.0, "cuckoofilter:4"},
      {-5, "cuckoofilter:4"},
      {1000, "cuckoofilter:64"},
      {std::numeric_limits<double>::quiet_NaN(), "cuckoofilter:10"},
      {std::numeric_limits<double>::infinity(), "cuckoofilter:64"},
      {9.8765, "cuckoofilter:9.877"}};
  for (const auto& c : cases) {
    std::unique_ptr<const FilterPolicy> p(NewCuckooFilterPolicy(c.first));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(std::string(p->Name()), c.second) << c.first;
  }
}

TEST_F(PolicyConfigTest, NotACuckooPolicy) {
  std::unique_ptr<const FilterPolicy> bloom(
      ROCKSDB_NAMESPACE::NewBloomFilterPolicy(10));
  EXPECT_FALSE(IsCuckooFilterPolicy(bloom.get()));
  EXPECT_FALSE(IsCuckooFilterPolicy(nullptr));
  CuckooFilterPolicyStats stats;
  EXPECT_FALSE(GetCuckooFilterPolicyStats(bloom.get(), &stats));
}

// BucketsForKeys keeps the table within the budget and under the maximum
// load; KeysForFilterBytes is its inverse.
TEST_F(PolicyConfigTest, SizingRules) {
  for (const char* name :
       {"cuckoofilter:8", "cuckoofilter:10", "cuckoofilter:16",
        "cuckoofilter:9.474", "cuckoofilter:40", "cuckoofilter:10:8:2:0",
        "cuckoofilter:12:8:8:0", "cuckoofilter:20:8:1:0"}) {
    PolicyConfig c;
    ASSERT_TRUE(internal::ParsePolicyString(name, &c).ok());
    uint64_t previous_bytes = 0;
    for (uint64_t n : {0, 1, 2, 3, 10, 99, 100, 1000, 4321, 100000, 10000000}) {
      const uint64_t buckets = internal::BucketsForKeys(c, n);
      ASSERT_GE(buckets, 2u);
      EXPECT_EQ(buckets % 2, 0u);
      EXPECT_LE(double(n), buckets * c.bucket_size * c.HardMaxLoad() + 1e-9)
          << name << " " << n;
      const uint64_t bytes = internal::FilterBytesForKeys(c, n);
      EXPECT_GE(bytes, previous_bytes);
      previous_bytes = bytes;
      if (n >= 1000) {
        // Within the budget, and using nearly all of it.
        const double budget = std::ceil(n * c.BitsPerKey() / 8);
        EXPECT_LE(double(bytes), budget + 32) << name << " " << n;
        EXPECT_GT(double(bytes), 0.98 * budget) << name << " " << n;
      }
    }
    for (uint64_t bytes : {0, 10, 40, 41, 64, 100, 4096, 65536, 1000000}) {
      const uint64_t n = internal::KeysForFilterBytes(c, bytes);
      if (n > 0) {
        EXPECT_LE(internal::FilterBytesForKeys(c, n), bytes) << name;
      }
      EXPECT_GT(internal::FilterBytesForKeys(c, n + 1), bytes)
          << name << " " << bytes;
    }
  }
}

}  // namespace
}  // namespace rocksdb_cuckoo
