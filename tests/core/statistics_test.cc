// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Statistical properties at full size: load factor reached
// before the first insert failure (2^20 and 1000003 buckets), measured FPR
// against 2b*load/2^f (also after erasing half), and semi-sorted filters
// answering exactly like plain ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cuckoo/cuckoo_filter.h"
#include "test_util.h"

namespace cuckoo {
namespace {

using test::KeyStream;
using test::Size;

// ------------------------------------------------------------- load factor

struct LoadCase {
  int b;
  int f;
  bool semi_sort;
  uint64_t buckets;  // requested; odd requests round up to even
  double min_load;   // the paper's load for this b, less 1%
};

std::string LoadCaseName(const ::testing::TestParamInfo<LoadCase>& info) {
  const LoadCase& c = info.param;
  return "b" + std::to_string(c.b) + "_f" + std::to_string(c.f) +
         (c.semi_sort ? "_ss" : "") + "_m" + std::to_string(c.buckets);
}

std::vector<LoadCase> LoadCases() {
  // 2^20 buckets, and non-power-of-two sizes such as 1000003.
  // Sanitizer builds use 2^16 and 100003.
  const uint64_t pow2 = Size(uint64_t{1} << 20, uint64_t{1} << 16);
  const uint64_t odd = Size(1000003, 100003);
  const double bound[9] = {0, 0.49, 0.83, 0, 0.94, 0, 0, 0, 0.97};
  std::vector<LoadCase> cases;
  for (uint64_t m : {pow2, odd}) {
    // f = 16 and 32 are "large enough": small f limits the distinct
    // alternate-bucket offsets and with them the achievable load.
    for (int f : {16, 32}) {
      for (int b : {1, 2, 4, 8}) cases.push_back({b, f, false, m, bound[b]});
    }
    cases.push_back({4, 16, true, m, bound[4]});
    cases.push_back({4, 13, true, m, bound[4]});
    cases.push_back({4, 12, false, m, bound[4]});
  }
  return cases;
}

class LoadFactorTest : public ::testing::TestWithParam<LoadCase> {};

TEST_P(LoadFactorTest, ReachedBeforeFirstFailure) {
  const LoadCase& c = GetParam();
  std::string error;
  auto filter = CuckooFilter::CreateWithBuckets(
      test::MakeConfig(c.f, c.b, c.semi_sort), c.buckets, &error);
  ASSERT_NE(filter, nullptr) << error;
  const uint64_t m = filter->num_buckets();
  EXPECT_EQ(m, c.buckets + (c.buckets & 1));
  // 1000003 -> 1000004 buckets: exact sizing, not a power of two.
  EXPECT_EQ((m & (m - 1)) == 0, (c.buckets & (c.buckets - 1)) == 0);
  const KeyStream keys(100 + c.b);
  std::vector<KeyHash> stored;
  stored.reserve(m * c.b);
  InsertResult result = InsertResult::kInserted;
  while (result == InsertResult::kInserted) {
    ASSERT_LE(stored.size(), m * c.b) << "more items than slots";
    const KeyHash key = keys.Key(stored.size());
    result = filter->Insert(key);
    ASSERT_NE(result, InsertResult::kFull);
    stored.push_back(key);
  }
  // The load before the failing insert (that one went to the victim slot).
  const double load = double(stored.size() - 1) / double(m * c.b);
  std::printf("[ load     ] b=%d f=%d%s m=%llu: first failure at load %.4f\n",
              c.b, c.f, c.semi_sort ? " semi-sorted" : "",
              static_cast<unsigned long long>(m), load);
  RecordProperty("load_factor", std::to_string(load));
  EXPECT_GE(load, c.min_load);

  std::unique_ptr<bool[]> found(new bool[stored.size()]);
  filter->ContainsBatch(stored.data(), stored.size(), found.get());
  uint64_t missing = 0;
  for (size_t k = 0; k < stored.size(); ++k) missing += found[k] ? 0 : 1;
  EXPECT_EQ(missing, 0u) << "false negatives at the load limit";
}

INSTANTIATE_TEST_SUITE_P(FullSize, LoadFactorTest,
                         ::testing::ValuesIn(LoadCases()), LoadCaseName);

// ------------------------------------------------------------------- FPR

struct FprCase {
  int f;
  bool semi_sort;
};

class FprTest : public ::testing::TestWithParam<FprCase> {
 protected:
  // Enough probes that 15% of the expected count is at least 5 standard
  // deviations (so the bound is meaningful, not a coin flip): 10^6 for
  // f = 8 and 12, more for larger f. Sanitizer builds
  // use 10^5 and a bound of max(15%, 5 sigma).
  static uint64_t Probes(double p) {
    if (test::kSmall) return 100000;
    const double needed = std::ceil((5 / 0.15) * (5 / 0.15) / p);
    return needed < 1e6 ? 1000000 : static_cast<uint64_t>(needed);
  }

  static void CheckFpr(const CuckooFilter& filter, const KeyStream& keys,
                       uint64_t absent_from, const char* phase) {
    const FilterStats s = filter.stats();
    const int f = filter.config().fingerprint_bits;
    const double paper = test::PaperFpr(f, 4, s.load_factor);
    const uint64_t n = Probes(s.expected_fpr);
    uint64_t positives = 0;
    std::vector<KeyHash> batch(1024);
    std::unique_ptr<bool[]> out(new bool[batch.size()]);
    for (uint64_t done = 0; done < n; done += batch.size()) {
      const size_t len = std::min<uint64_t>(batch.size(), n - done);
      for (size_t k = 0; k < len; ++k)
        batch[k] = keys.Absent(absent_from + done + k);
      filter.ContainsBatch(batch.data(), len, out.get());
      for (size_t k = 0; k < len; ++k) positives += out[k];
    }
    const double measured = double(positives) / double(n);
    std::printf(
        "[ fpr      ] f=%d b=4%s %-12s load %.4f  %.3f bits/item  "
        "measured %.6f%%  expected %.6f%%  2b*load/2^f %.6f%%  "
        "(%llu probes)\n",
        f, filter.config().semi_sort ? " semi-sorted" : "", phase,
        s.load_factor, s.bits_per_item, 100 * measured, 100 * s.expected_fpr,
        100 * paper, static_cast<unsigned long long>(n));
    std::string why;
    if (test::kSmall) {
      EXPECT_TRUE(test::WithinBinomialBound(positives, n, s.expected_fpr, 0.15,
                                            5, &why))
          << phase << ": " << why;
      return;
    }
    EXPECT_NEAR(measured, s.expected_fpr, 0.15 * s.expected_fpr)
        << phase << " vs the filter's estimate";
    EXPECT_NEAR(measured, paper, 0.15 * paper) << phase << " vs 2b*load/2^f";
  }
};

// 10^6 items in a filter sized by Create() for 10^6 at the default 95% load;
// FPR on absent items within 15% of 2b*load/2^f. Then erase half: the other
// half is found and the FPR drops to the value for the remaining load.
TEST_P(FprTest, MeasuredWithin15PercentThenAfterEraseHalf) {
  const FprCase& c = GetParam();
  const uint64_t n = Size(1000000, 100000);
  std::string error;
  auto filter =
      CuckooFilter::Create(test::MakeConfig(c.f, 4, c.semi_sort), n, &error);
  ASSERT_NE(filter, nullptr) << error;
  const KeyStream keys(200 + c.f);
  std::vector<KeyHash> stored;
  stored.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    const InsertResult r = filter->Insert(keys.Key(i));
    ASSERT_EQ(r, InsertResult::kInserted)
        << "a filter Create()d for " << n << " items failed at item " << i
        << " (load " << filter->stats().load_factor << ")";
    stored.push_back(keys.Key(i));
  }
  EXPECT_GE(filter->stats().load_factor, 0.949);
  CheckFpr(*filter, keys, 0, "full");

  for (size_t k = 0; k < stored.size(); k += 2) {
    ASSERT_TRUE(filter->Erase(stored[k]));
  }
  EXPECT_EQ(filter->size(), n / 2);
  uint64_t missing = 0;
  for (size_t k = 1; k < stored.size(); k += 2) {
    missing += filter->Contains(stored[k]) ? 0 : 1;
  }
  EXPECT_EQ(missing, 0u) << "false negatives after erasing half";
  CheckFpr(*filter, keys, uint64_t{1} << 40, "erased half");
}

INSTANTIATE_TEST_SUITE_P(FullSize, FprTest,
                         ::testing::Values(FprCase{8, false},
                                           FprCase{12, false},
                                           FprCase{16, false}, FprCase{8, true},
                                           FprCase{12, true}, FprCase{13, true},
                                           FprCase{16, true}),
                         [](const ::testing::TestParamInfo<FprCase>& info) {
                           return "f" + std::to_string(info.param.f) +
                                  (info.param.semi_sort ? "_ss" : "");
                         });

// ----------------------------------------------- semi-sort vs plain filter

class SemiSortEquivalenceTest : public ::testing::TestWithParam<int> {};

// Same f, same bucket count, same seed, same items: the semi-sorted filter
// answers every query exactly like the plain one. (Placements may differ
// after evictions, but an item matches a query only through the query's own
// bucket pair, so the answers cannot.)
TEST_P(SemiSortEquivalenceTest, AnswersExactlyLikePlain) {
  const int f = GetParam();
  const uint64_t m = Size((uint64_t{1} << 16) + 2, 4098);
  auto plain =
      CuckooFilter::CreateWithBuckets(test::MakeConfig(f, 4, false, 77), m);
  auto semi =
      CuckooFilter::CreateWithBuckets(test::MakeConfig(f, 4, true, 77), m);
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(semi, nullptr);
  EXPECT_LT(semi->stats().table_bytes, plain->stats().table_bytes);
  const KeyStream keys(300 + f);
  std::vector<KeyHash> stored;
  // Both hold the same items: insert in lockstep up to 90% or until either
  // walk fails (that item is still stored in both, possibly as the victim).
  for (uint64_t i = 0; i < m * 4 * 9 / 10; ++i) {
    const InsertResult a = plain->Insert(keys.Key(i));
    const InsertResult b = semi->Insert(keys.Key(i));
    ASSERT_NE(a, InsertResult::kFull);
    ASSERT_NE(b, InsertResult::kFull);
    stored.push_back(keys.Key(i));
    if (a != InsertResult::kInserted || b != InsertResult::kInserted) break;
  }
  ASSERT_EQ(plain->size(), semi->size());

  const uint64_t absent = Size(1000000, 100000);
  auto compare = [&](const char* phase) {
    std::vector<KeyHash> probes(stored);
    for (uint64_t i = 0; i < absent; ++i) probes.push_back(keys.Absent(i));
    std::unique_ptr<bool[]> pa(new bool[probes.size()]);
    std::unique_ptr<bool[]> sa(new bool[probes.size()]);
    plain->ContainsBatch(probes.data(), probes.size(), pa.get());
    semi->ContainsBatch(probes.data(), probes.size(), sa.get());
    uint64_t differ = 0, positives = 0;
    for (size_t k = 0; k < probes.size(); ++k) {
      const bool p = plain->Contains(probes[k]);
      const bool s = semi->Contains(probes[k]);
      ASSERT_EQ(pa[k], p);
      ASSERT_EQ(sa[k], s);
      differ += p != s;
      positives += p;
    }
    EXPECT_EQ(differ, 0u) << phase << ": answers differ (" << positives
                          << " positives)";
  };
  compare("filled");
  for (size_t k = 0; k < stored.size(); k += 2) {
    ASSERT_TRUE(plain->Erase(stored[k]));
    ASSERT_TRUE(semi->Erase(stored[k]));
  }
  compare("erased half");
}

INSTANTIATE_TEST_SUITE_P(AllF, SemiSortEquivalenceTest, ::testing::Range(4, 17),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "f" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace cuckoo
