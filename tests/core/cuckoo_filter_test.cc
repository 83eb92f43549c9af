// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Behaviour of CuckooFilter over every supported (f, b, semi-sort)
// configuration, checked against an exact std::unordered_set reference:
// no false negatives up to the load limit, erase and duplicate semantics,
// the victim slot, serialization round trips and corrupt input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "cuckoo/cuckoo_filter.h"
#include "cuckoo/typed_lookup.h"
#include "filter/filter_format.h"  // internal::ResealChecksum
#include "filter/view_access.h"
#include "test_util.h"

namespace cuckoo {
namespace {

using internal::ViewAccess;
using test::KeyStream;
using test::Size;

// Non-power-of-two bucket counts for the per-configuration tests.
constexpr uint64_t kBuckets = Size(40002, 2002);
constexpr uint64_t kSmallBuckets = 1026;
// Absent probes of the per-configuration FPR sanity checks.
constexpr uint64_t kAbsentProbes = Size(200000, 20000);

class ConfigTest : public ::testing::TestWithParam<FilterConfig> {
 protected:
  std::unique_ptr<CuckooFilter> NewFilter(uint64_t buckets,
                                          uint32_t seed = 0) const {
    FilterConfig config = GetParam();
    config.seed = seed;
    std::string error;
    auto filter = CuckooFilter::CreateWithBuckets(config, buckets, &error);
    EXPECT_NE(filter, nullptr) << error;
    EXPECT_TRUE(error.empty()) << error;
    return filter;
  }

  int f() const { return GetParam().fingerprint_bits; }
  int b() const { return GetParam().bucket_size; }

  // Inserts keys 0, 1, ... until `limit` items are stored or the first
  // insert that is not kInserted (which is kept: kInsertedFull stores the
  // item). Returns the stored keys; checks the results on the way.
  std::vector<KeyHash> FillUntil(CuckooFilter* filter, const KeyStream& keys,
                                 uint64_t limit,
                                 std::unordered_set<KeyHash>* reference,
                                 InsertResult* last = nullptr) const {
    std::vector<KeyHash> stored;
    InsertResult result = InsertResult::kInserted;
    for (uint64_t i = 0; stored.size() < limit; ++i) {
      const KeyHash key = keys.Key(i);
      result = filter->Insert(key);
      EXPECT_NE(result, InsertResult::kFull)
          << "kFull before any kInsertedFull, at item " << i;
      if (result == InsertResult::kFull) break;
      stored.push_back(key);
      if (reference != nullptr) reference->insert(key);
      if (result == InsertResult::kInsertedFull) break;
    }
    if (last != nullptr) *last = result;
    return stored;
  }

  // Counts positives among `n` absent keys starting at absent index `from`;
  // the reference proves they are absent.
  static uint64_t CountAbsentPositives(const CuckooFilter& filter,
                                       const KeyStream& keys, uint64_t n,
                                       const std::unordered_set<KeyHash>& ref,
                                       uint64_t from = 0) {
    uint64_t positives = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const KeyHash key = keys.Absent(from + i);
      if (ref.count(key) != 0) {
        ADD_FAILURE() << "absent key stream collides with an inserted key";
        continue;
      }
      positives += filter.Contains(key) ? 1 : 0;
    }
    return positives;
  }

  // Every reference item is found, by Contains and by ContainsBatch.
  static void ExpectAllFound(const CuckooFilter& filter,
                             const std::vector<KeyHash>& items,
                             const char* when) {
    uint64_t missing = 0;
    for (KeyHash key : items) missing += filter.Contains(key) ? 0 : 1;
    EXPECT_EQ(missing, 0u) << "false negatives (Contains) " << when;
    std::unique_ptr<bool[]> out(new bool[items.size() + 1]);
    filter.ContainsBatch(items.data(), items.size(), out.get());
    uint64_t batch_missing = 0;
    for (size_t k = 0; k < items.size(); ++k) batch_missing += out[k] ? 0 : 1;
    EXPECT_EQ(batch_missing, 0u) << "false negatives (ContainsBatch) " << when;
  }
};

// No false negatives, ever: fill to the first insert failure, checking every
// stored item at a quarter, half, three quarters of the capacity and at the
// end; then the FPR on absent items matches the filter's own estimate.
TEST_P(ConfigTest, NoFalseNegativesUpToLoadLimit) {
  auto filter = NewFilter(kBuckets);
  ASSERT_NE(filter, nullptr);
  ASSERT_EQ(filter->num_buckets(), kBuckets);
  const KeyStream keys(1);
  const uint64_t capacity = kBuckets * b();
  std::unordered_set<KeyHash> reference;
  std::vector<KeyHash> stored;
  InsertResult result = InsertResult::kInserted;
  for (int quarter = 1; quarter <= 4 && result == InsertResult::kInserted;
       ++quarter) {
    // The last round asks for more than fits, so it ends at the failure.
    const uint64_t target =
        quarter <= 3 ? capacity * quarter / 4 : capacity + 1;
    for (uint64_t i = stored.size(); stored.size() < target; ++i) {
      const KeyHash key = keys.Key(i);
      result = filter->Insert(key);
      ASSERT_NE(result, InsertResult::kFull) << "at item " << i;
      stored.push_back(key);
      reference.insert(key);
      if (result != InsertResult::kInserted) break;
    }
    ExpectAllFound(
        *filter, stored,
        ("after " + std::to_string(stored.size()) + " items").c_str());
    ASSERT_EQ(filter->size(), reference.size());
  }
  // Capacity + 1 items cannot fit: the walk must have failed on the way.
  ASSERT_EQ(result, InsertResult::kInsertedFull);
  EXPECT_TRUE(filter->full());
  const FilterStats stats = filter->stats();
  EXPECT_TRUE(stats.has_victim);
  EXPECT_EQ(stats.num_items, stored.size());
  EXPECT_EQ(stats.capacity, capacity);
  EXPECT_NEAR(stats.load_factor, double(stored.size()) / double(capacity),
              1e-12);
  std::printf("[ load     ] %-9s first failure at load %.4f\n",
              test::ConfigName(GetParam()).c_str(), stats.load_factor);

  const uint64_t positives =
      CountAbsentPositives(*filter, keys, kAbsentProbes, reference);
  std::string why;
  EXPECT_TRUE(test::WithinBinomialBound(positives, kAbsentProbes,
                                        stats.expected_fpr, 0.15, 5, &why))
      << why;
}

// ContainsBatch answers exactly like Contains, for any batch length.
TEST_P(ConfigTest, ContainsBatchMatchesContains) {
  auto filter = NewFilter(kSmallBuckets);
  const KeyStream keys(2);
  FillUntil(filter.get(), keys, kSmallBuckets * b() * 8 / 10, nullptr);
  std::vector<KeyHash> probes;
  for (uint64_t i = 0; i < 3000; ++i) {
    probes.push_back(i % 2 ? keys.Key(i / 2) : keys.Absent(i));
  }
  std::vector<uint8_t> out(probes.size() + 1);
  for (size_t len : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17},
                     size_t{33}, probes.size()}) {
    std::unique_ptr<bool[]> got(new bool[len + 1]);
    filter->ContainsBatch(probes.data(), len, got.get());
    for (size_t k = 0; k < len; ++k) {
      ASSERT_EQ(got[k], filter->Contains(probes[k]))
          << "len " << len << " k " << k;
    }
  }
}

// VisitLookup's lookup (cuckoo/typed_lookup.h) answers exactly like
// Contains, through the filter and through a parsed view, at 80% of the
// load limit (empty victim slot) and on a full filter (victim in use): every
// stored item is found (checked against the exact set) and 20000 mixed queries
// agree. Which layouts get a TypedLookup is pinned: plain buckets read with one
// 64-bit load and semi-sorted f >= 8, the layouts of the inline Contains.
TEST_P(ConfigTest, TypedLookupMatchesContains) {
  const int bucket_bits = f() * b();
  const int max_shift = 8 - std::gcd(bucket_bits, 8);
  const bool expect_typed =
      GetParam().semi_sort ? f() >= 8 : bucket_bits + max_shift <= 64;
  auto filter = NewFilter(kSmallBuckets);
  const KeyStream keys(31);
  std::unordered_set<KeyHash> reference;
  const auto below_limit = static_cast<uint64_t>(double(kSmallBuckets * b()) *
                                                 DefaultTargetLoad(b()) * 0.8);
  std::vector<KeyHash> stored =
      FillUntil(filter.get(), keys, below_limit, &reference);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "80% of the load limit" : "full");
    if (round == 1 && !filter->full()) {
      const KeyStream more_keys(32);
      FillUntil(filter.get(), more_keys, ~uint64_t{0}, &reference);
      stored.assign(reference.begin(), reference.end());
    }
    if (round == 1) {
      ASSERT_TRUE(filter->full());
    }
    std::vector<KeyHash> queries;
    for (uint64_t i = 0; i < 20000; ++i) {
      queries.push_back(i % 4 == 0 ? keys.Key(i / 4) : keys.Absent(i));
    }
    const std::string bytes = filter->Serialize();
    CuckooFilterView view;
    std::string error;
    ASSERT_TRUE(
        CuckooFilterView::Parse(bytes.data(), bytes.size(), &view, &error))
        << error;
    for (int via_view = 0; via_view < 2; ++via_view) {
      auto check = [&](auto lookup) {
        EXPECT_EQ(decltype(lookup)::kTyped, expect_typed);
        uint64_t missing = 0;
        for (KeyHash h : stored) {
          missing += lookup.Contains(h) ? 0 : 1;
          EXPECT_NE(reference.count(h), 0u);
        }
        uint64_t mismatches = 0;
        for (KeyHash h : queries) {
          mismatches += lookup.Contains(h) != filter->Contains(h);
        }
        lookup.Prefetch(queries[0]);
        return std::make_pair(missing, mismatches);
      };
      const auto [missing, mismatches] =
          via_view ? VisitLookup(view, check) : VisitLookup(*filter, check);
      EXPECT_EQ(missing, 0u) << "false negatives, via_view " << via_view;
      EXPECT_EQ(mismatches, 0u)
          << "answers unlike Contains, via_view " << via_view;
    }
  }
}

// InsertMany is a loop of Insert: the same table bytes, item count, victim
// and random state (so later inserts also agree), for batches shorter and
// longer than the prefetch distance, and past the first failure (then the
// count says how many were stored).
TEST_P(ConfigTest, InsertManyMatchesInsertLoop) {
  const KeyStream keys(12);
  const uint64_t capacity = kSmallBuckets * b();
  std::vector<KeyHash> hashes;
  for (uint64_t i = 0; i < capacity + 64; ++i) hashes.push_back(keys.Key(i));
  auto looped = NewFilter(kSmallBuckets, 7);
  auto bulk = NewFilter(kSmallBuckets, 7);
  uint64_t begin = 0;
  // Chunks of several lengths, the last one runs past full.
  for (uint64_t len : {uint64_t{0}, uint64_t{1}, uint64_t{5}, uint64_t{16},
                       uint64_t{17}, capacity / 2, capacity + 64}) {
    len = std::min<uint64_t>(len, hashes.size() - begin);
    uint64_t stored = 0;
    for (uint64_t k = begin; k < begin + len; ++k) {
      stored += looped->Insert(hashes[k]) != InsertResult::kFull;
    }
    ASSERT_EQ(bulk->InsertMany(hashes.data() + begin, len), stored)
        << "chunk at " << begin;
    ASSERT_EQ(bulk->size(), looped->size());
    ASSERT_EQ(bulk->full(), looped->full());
    ASSERT_TRUE(test::SameBytes(bulk->Serialize(), looped->Serialize()))
        << "chunk at " << begin << " of " << len;
    begin += len;
  }
  ASSERT_TRUE(bulk->full()) << "the last chunk must overfill the filter";
  // The random walks agree afterwards too: erase some items, refill.
  for (uint64_t k = 0; k < capacity / 4; ++k) {
    ASSERT_EQ(bulk->Erase(hashes[k]), looped->Erase(hashes[k]));
  }
  std::vector<KeyHash> more;
  for (uint64_t i = 0; i < capacity / 4; ++i) more.push_back(keys.Absent(i));
  uint64_t stored = 0;
  for (KeyHash h : more) stored += looped->Insert(h) != InsertResult::kFull;
  EXPECT_EQ(bulk->InsertMany(more.data(), more.size()), stored);
  EXPECT_TRUE(test::SameBytes(bulk->Serialize(), looped->Serialize()));
}

// InsertUnordered, its grouped path forced on this small table, stores every
// item: each is found (Contains, ContainsBatch, a parsed copy), the count is
// exact, the FPR is the filter's estimate, and erasing them all leaves an
// empty table. Past the capacity it reports the shortfall and full(), and a
// full filter takes nothing more.
TEST_P(ConfigTest, InsertUnorderedStoresEveryItem) {
  const KeyStream keys(13);
  // Items a loop of Insert stores well below the load limit (a tenth fewer
  // if the loop already fills up there: small f).
  auto looped = NewFilter(kBuckets, 5);
  std::unordered_set<KeyHash> reference;
  std::vector<KeyHash> items =
      FillUntil(looped.get(), keys, kBuckets * b() * (b() == 1 ? 40 : 85) / 100,
                &reference);
  if (looped->full()) {
    items.resize(items.size() * 9 / 10);
    reference = std::unordered_set<KeyHash>(items.begin(), items.end());
  }
  ASSERT_GT(items.size(), 0u);

  auto filter = NewFilter(kBuckets, 5);
  ASSERT_EQ(internal::FilterAccess::InsertUnordered(filter.get(), items.data(),
                                                    items.size(), 0),
            items.size());
  EXPECT_EQ(filter->size(), items.size());
  EXPECT_FALSE(filter->full());
  ExpectAllFound(*filter, items, "after InsertUnordered");
  const std::string bytes = filter->Serialize();
  std::string error;
  auto copy = CuckooFilter::Deserialize(bytes.data(), bytes.size(), &error);
  ASSERT_NE(copy, nullptr) << error;
  ExpectAllFound(*copy, items, "after a serialization round trip");
  std::string why;
  EXPECT_TRUE(test::WithinBinomialBound(
      CountAbsentPositives(*filter, keys, kAbsentProbes, reference),
      kAbsentProbes, filter->stats().expected_fpr, 0.15, 5, &why))
      << why;
  for (KeyHash key : items) ASSERT_TRUE(filter->Erase(key));
  EXPECT_TRUE(
      test::SameBytes(filter->Serialize(), NewFilter(kBuckets, 5)->Serialize()))
      << "erasing every item must leave an all-empty table";

  // More items than slots.
  const uint64_t capacity = kSmallBuckets * b();
  std::vector<KeyHash> too_many;
  for (uint64_t i = 0; i < capacity + 64; ++i) too_many.push_back(keys.Key(i));
  auto small = NewFilter(kSmallBuckets);
  const uint64_t stored = internal::FilterAccess::InsertUnordered(
      small.get(), too_many.data(), too_many.size(), 0);
  EXPECT_LT(stored, too_many.size());
  EXPECT_TRUE(small->full());
  EXPECT_EQ(small->size(), stored);
  EXPECT_EQ(internal::FilterAccess::InsertUnordered(small.get(),
                                                    too_many.data(), 8, 0),
            0u);
  EXPECT_EQ(small->size(), stored);
}

// Insert N, erase half: the other half is still found, the erased half and
// fresh absent items are positive at the FPR of the remaining load, and
// erasing the rest leaves the exact bytes of an empty filter.
TEST_P(ConfigTest, EraseHalfKeepsTheOtherHalf) {
  auto filter = NewFilter(kBuckets);
  const KeyStream keys(3);
  // Well below the load limit (lower for b = 1), stopping early if the
  // configuration's limit is lower still (small f).
  const uint64_t target = kBuckets * b() * (b() == 1 ? 40 : 85) / 100;
  std::unordered_set<KeyHash> reference;
  const std::vector<KeyHash> stored =
      FillUntil(filter.get(), keys, target, &reference);
  ASSERT_GT(stored.size(), 0u);

  std::vector<KeyHash> kept, erased;
  for (size_t k = 0; k < stored.size(); ++k) {
    if (k % 2 == 0) {
      ASSERT_TRUE(filter->Erase(stored[k])) << "erase of stored item " << k;
      reference.erase(stored[k]);
      erased.push_back(stored[k]);
    } else {
      kept.push_back(stored[k]);
    }
  }
  EXPECT_EQ(filter->size(), kept.size());
  EXPECT_FALSE(filter->full());
  ExpectAllFound(*filter, kept, "after erasing half");

  const FilterStats stats = filter->stats();
  EXPECT_NEAR(stats.load_factor, double(kept.size()) / double(kBuckets * b()),
              1e-12);
  std::string why;
  const uint64_t absent_positives =
      CountAbsentPositives(*filter, keys, kAbsentProbes, reference);
  EXPECT_TRUE(test::WithinBinomialBound(absent_positives, kAbsentProbes,
                                        stats.expected_fpr, 0.15, 5, &why))
      << "fresh absent items: " << why;
  uint64_t erased_positives = 0;
  for (KeyHash key : erased) erased_positives += filter->Contains(key) ? 1 : 0;
  EXPECT_TRUE(test::WithinBinomialBound(erased_positives, erased.size(),
                                        stats.expected_fpr, 0.15, 5, &why))
      << "erased items: " << why;

  for (KeyHash key : kept) ASSERT_TRUE(filter->Erase(key));
  EXPECT_EQ(filter->size(), 0u);
  EXPECT_TRUE(
      test::SameBytes(filter->Serialize(), NewFilter(kBuckets)->Serialize()))
      << "erasing every item must leave an all-empty table";
  for (KeyHash key : stored) ASSERT_FALSE(filter->Contains(key));
}

// The same item can be stored 2b times (both buckets full of its copies);
// Erase removes exactly one copy at a time. A (2b+1)-th copy cannot fit in
// the table and lands in the victim slot.
TEST_P(ConfigTest, DuplicatesUpTo2bThenEraseOneAtATime) {
  auto filter = NewFilter(kSmallBuckets);
  const KeyStream keys(4);
  const KeyHash key = keys.Key(0);
  const int copies = 2 * b();
  for (int c = 0; c < copies; ++c) {
    ASSERT_EQ(filter->Insert(key), InsertResult::kInserted) << "copy " << c;
  }
  EXPECT_EQ(filter->size(), uint64_t(copies));
  EXPECT_TRUE(filter->Contains(key));
  EXPECT_FALSE(filter->full());

  EXPECT_EQ(filter->Insert(key), InsertResult::kInsertedFull)
      << "copy 2b+1 cannot fit in the item's two buckets";
  EXPECT_TRUE(filter->full());
  EXPECT_EQ(filter->Insert(keys.Key(1)), InsertResult::kFull);
  EXPECT_EQ(filter->size(), uint64_t(copies) + 1);

  for (int c = copies + 1; c > 0; --c) {
    ASSERT_TRUE(filter->Contains(key)) << c << " copies left";
    ASSERT_TRUE(filter->Erase(key)) << c << " copies left";
    ASSERT_EQ(filter->size(), uint64_t(c - 1));
    ASSERT_FALSE(filter->full()) << "an erase must make room for the victim";
  }
  EXPECT_FALSE(filter->Contains(key));  // the filter is otherwise empty
  EXPECT_FALSE(filter->Erase(key));
  EXPECT_TRUE(test::SameBytes(filter->Serialize(),
                              NewFilter(kSmallBuckets)->Serialize()));
}

// Erasing an item whose fingerprint matches in neither bucket returns false
// and changes nothing.
TEST_P(ConfigTest, EraseOfAbsentItemReturnsFalse) {
  auto filter = NewFilter(kSmallBuckets);
  const KeyStream keys(5);
  std::unordered_set<KeyHash> reference;
  FillUntil(filter.get(), keys, kSmallBuckets * b() / 2, &reference);
  const std::string before = filter->Serialize();
  uint64_t tried = 0;
  for (uint64_t i = 0; i < 5000; ++i) {
    const KeyHash key = keys.Absent(i);
    ASSERT_EQ(reference.count(key), 0u);
    if (filter->Contains(key)) continue;  // a false positive: may match
    ++tried;
    ASSERT_FALSE(filter->Erase(key)) << "absent item " << i;
  }
  EXPECT_GT(tried, 0u);
  EXPECT_TRUE(test::SameBytes(filter->Serialize(), before));
}

// Documented hazard: erasing a false positive removes another item's
// fingerprint. Shown where false positives are easy to find (f <= 8).
TEST_P(ConfigTest, EraseOfFalsePositiveRemovesAnotherItem) {
  if (f() > 8) return;  // false positives too rare to find quickly
  auto filter = NewFilter(kSmallBuckets);
  const KeyStream keys(6);
  std::unordered_set<KeyHash> reference;
  const std::vector<KeyHash> stored =
      FillUntil(filter.get(), keys, kSmallBuckets * b() / 2, &reference);
  KeyHash impostor;
  bool found = false;
  for (uint64_t i = 0; i < 1000000 && !found; ++i) {
    impostor = keys.Absent(i);
    found = filter->Contains(impostor);
  }
  ASSERT_TRUE(found) << "no false positive among 10^6 absent items";
  const uint64_t size = filter->size();
  EXPECT_TRUE(filter->Erase(impostor));
  EXPECT_EQ(filter->size(), size - 1);
}

// Victim slot: after the first failed walk, every item inserted before (and
// the one that failed) is still found; the next Insert returns kFull and
// changes nothing; erasing makes room again.
TEST_P(ConfigTest, VictimSlotKeepsEverythingAndRejectsFurtherInserts) {
  auto filter = NewFilter(kSmallBuckets);
  const KeyStream keys(7);
  std::unordered_set<KeyHash> reference;
  InsertResult last;
  std::vector<KeyHash> stored =
      FillUntil(filter.get(), keys, kSmallBuckets * b() + 1, &reference, &last);
  ASSERT_EQ(last, InsertResult::kInsertedFull);
  ASSERT_TRUE(filter->full());
  ASSERT_TRUE(filter->stats().has_victim);
  ASSERT_EQ(filter->size(), stored.size());
  ExpectAllFound(*filter, stored, "after the first failure");

  // Further inserts are refused without touching the filter.
  const std::string before = filter->Serialize();
  for (uint64_t i = 0; i < 20; ++i) {
    ASSERT_EQ(filter->Insert(keys.Key(stored.size() + i)), InsertResult::kFull);
  }
  EXPECT_TRUE(test::SameBytes(filter->Serialize(), before));
  EXPECT_EQ(filter->size(), stored.size());

  // The victim survives serialization.
  {
    CuckooFilterView view;
    std::string error;
    ASSERT_TRUE(
        CuckooFilterView::Parse(before.data(), before.size(), &view, &error))
        << error;
    EXPECT_NE(ViewAccess::Ref(view).victim_fp, 0u);
    EXPECT_TRUE(view.stats().has_victim);
    for (KeyHash key : stored) ASSERT_TRUE(view.Contains(key));
    auto copy = CuckooFilter::Deserialize(before.data(), before.size(), &error);
    ASSERT_NE(copy, nullptr) << error;
    EXPECT_TRUE(copy->full());
    EXPECT_EQ(copy->Insert(keys.Key(stored.size())), InsertResult::kFull);
    ExpectAllFound(*copy, stored, "in the deserialized copy");
  }

  // Erase stored items (in a scrambled order) until the victim finds a
  // place; then inserts are admitted again.
  std::mt19937_64 rng(7);
  std::shuffle(stored.begin(), stored.end(), rng);
  size_t erases = 0;
  while (filter->full()) {
    ASSERT_LT(erases, stored.size());
    ASSERT_TRUE(filter->Erase(stored[erases]));
    reference.erase(stored[erases]);
    ++erases;
  }
  std::printf("[ victim   ] %-9s re-admits after %zu erase(s)\n",
              test::ConfigName(GetParam()).c_str(), erases);
  std::vector<KeyHash> remaining(stored.begin() + erases, stored.end());
  ExpectAllFound(*filter, remaining, "after the erases");
  // With the victim moved back into the table, the filter still serializes
  // to bytes its own parser accepts (empty victim slot: fp 0, bucket 0).
  {
    const std::string bytes = filter->Serialize();
    CuckooFilterView view;
    std::string error;
    EXPECT_TRUE(
        CuckooFilterView::Parse(bytes.data(), bytes.size(), &view, &error))
        << "after the victim was re-placed: " << error;
    EXPECT_EQ(ViewAccess::Ref(filter->View()).victim_bucket, 0u);
  }
  const KeyHash extra = keys.Key(1u << 30);
  const InsertResult again = filter->Insert(extra);
  EXPECT_NE(again, InsertResult::kFull);
  EXPECT_TRUE(filter->Contains(extra));
  remaining.push_back(extra);
  ExpectAllFound(*filter, remaining, "after the re-admitted insert");
}

// Short walks (max_kicks 0..8) end in the victim slot much earlier and from
// every step of the walk: the slot must hold a real fingerprint, nothing may
// be lost, and the bytes must stay parseable throughout.
TEST_P(ConfigTest, ShortWalksKeepVictimSemantics) {
  for (int kicks : {0, 1, 2, 3, 8}) {
    SCOPED_TRACE("max_kicks=" + std::to_string(kicks));
    for (uint32_t seed = 0; seed < 4; ++seed) {
      FilterConfig config = GetParam();
      config.max_kicks = kicks;
      config.seed = seed;
      auto filter = CuckooFilter::CreateWithBuckets(config, 130);
      ASSERT_NE(filter, nullptr);
      const KeyStream keys(12 + seed);
      std::vector<KeyHash> stored;
      InsertResult r = InsertResult::kInserted;
      while (r == InsertResult::kInserted) {
        ASSERT_LE(stored.size(), 130u * b());
        stored.push_back(keys.Key(stored.size()));
        r = filter->Insert(stored.back());
      }
      ASSERT_EQ(r, InsertResult::kInsertedFull);
      ASSERT_TRUE(filter->full())
          << "kInsertedFull but the victim slot is empty";
      ASSERT_NE(ViewAccess::Ref(filter->View()).victim_fp, 0u);
      ASSERT_EQ(filter->size(), stored.size());
      ExpectAllFound(*filter, stored, "after the first failure");
      ASSERT_EQ(filter->Insert(keys.Absent(0)), InsertResult::kFull);
      std::string bytes = filter->Serialize();
      CuckooFilterView view;
      std::string error;
      ASSERT_TRUE(
          CuckooFilterView::Parse(bytes.data(), bytes.size(), &view, &error))
          << error;
      // Erase half: every erase succeeds, the rest stays found, and the
      // bytes stay valid. (With so few kicks the victim may still find its
      // two buckets full and stay in the slot.)
      for (size_t k = 0; k < stored.size(); k += 2) {
        ASSERT_TRUE(filter->Erase(stored[k])) << k;
        ASSERT_EQ(filter->full(),
                  ViewAccess::Ref(filter->View()).victim_fp != 0);
      }
      EXPECT_EQ(filter->size(), stored.size() / 2);
      std::vector<KeyHash> kept;
      for (size_t k = 1; k < stored.size(); k += 2) kept.push_back(stored[k]);
      ExpectAllFound(*filter, kept, "after erasing half");
      bytes = filter->Serialize();
      ASSERT_TRUE(
          CuckooFilterView::Parse(bytes.data(), bytes.size(), &view, &error))
          << error;
      if (HasFatalFailure()) return;
    }
  }
}

// Serialize -> Parse (zero copy) and Deserialize answer exactly like the
// original; Deserialize -> Serialize reproduces the bytes; a deserialized
// filter keeps working.
TEST_P(ConfigTest, SerializationRoundTrip) {
  auto filter = NewFilter(kSmallBuckets, /*seed=*/0x1234567);
  const KeyStream keys(8);
  const std::vector<KeyHash> stored =
      FillUntil(filter.get(), keys, kSmallBuckets * b() * 6 / 10, nullptr);
  const std::string bytes = filter->Serialize();
  ASSERT_EQ(bytes.size(), filter->SerializedSize());
  ASSERT_EQ(bytes.size(), filter->stats().table_bytes + 32);

  // SerializeTo an odd address: loads must not assume alignment.
  std::vector<char> unaligned(bytes.size() + 1);
  filter->SerializeTo(unaligned.data() + 1);
  ASSERT_EQ(std::memcmp(unaligned.data() + 1, bytes.data(), bytes.size()), 0);

  std::string error;
  CuckooFilterView view;
  ASSERT_TRUE(CuckooFilterView::Parse(unaligned.data() + 1, bytes.size(), &view,
                                      &error))
      << error;
  ASSERT_TRUE(view.valid());
  EXPECT_EQ(view.fingerprint_bits(), f());
  EXPECT_EQ(view.bucket_size(), b());
  EXPECT_EQ(view.semi_sort(), GetParam().semi_sort);
  EXPECT_EQ(view.seed(), 0x1234567u);
  EXPECT_EQ(view.num_buckets(), kSmallBuckets);
  EXPECT_EQ(view.size(), stored.size());
  const FilterStats a = filter->stats(), v = view.stats();
  EXPECT_EQ(a.num_items, v.num_items);
  EXPECT_EQ(a.table_bytes, v.table_bytes);
  EXPECT_EQ(a.capacity, v.capacity);
  EXPECT_DOUBLE_EQ(a.expected_fpr, v.expected_fpr);

  auto copy = CuckooFilter::Deserialize(bytes.data(), bytes.size(), &error);
  ASSERT_NE(copy, nullptr) << error;
  EXPECT_TRUE(test::SameBytes(copy->Serialize(), bytes));
  EXPECT_EQ(copy->config().seed, 0x1234567u);

  std::vector<KeyHash> probes(stored);
  for (uint64_t i = 0; i < 20000; ++i) probes.push_back(keys.Absent(i));
  std::unique_ptr<bool[]> batch(new bool[probes.size()]);
  view.ContainsBatch(probes.data(), probes.size(), batch.get());
  for (size_t k = 0; k < probes.size(); ++k) {
    const bool expected = filter->Contains(probes[k]);
    ASSERT_EQ(view.Contains(probes[k]), expected) << k;
    ASSERT_EQ(batch[k], expected) << k;
    ASSERT_EQ(copy->Contains(probes[k]), expected) << k;
  }
  // The View() of a live filter agrees too.
  const CuckooFilterView live = filter->View();
  for (size_t k = 0; k < probes.size(); k += 7) {
    ASSERT_EQ(live.Contains(probes[k]), filter->Contains(probes[k]));
  }

  // The copy stays usable: erase and insert behave as on the original.
  for (size_t k = 0; k < stored.size(); k += 2) {
    ASSERT_TRUE(copy->Erase(stored[k]));
    ASSERT_TRUE(filter->Erase(stored[k]));
  }
  for (size_t k = 1; k < stored.size(); k += 2)
    ASSERT_TRUE(copy->Contains(stored[k]));
  EXPECT_EQ(copy->size(), filter->size());
  EXPECT_NE(copy->Insert(keys.Key(1u << 20)), InsertResult::kFull);
}

// Every single-bit flip of the 32-byte trailer, every truncation, every
// dropped prefix and appended bytes are rejected with an error (and never
// read out of bounds: run under ASan).
TEST_P(ConfigTest, CorruptTrailerAndSizesRejected) {
  auto filter = NewFilter(10);
  const KeyStream keys(9);
  FillUntil(filter.get(), keys, 7, nullptr);
  const std::string good = filter->Serialize();
  const size_t n = good.size();
  std::string error;
  CuckooFilterView view;
  ASSERT_TRUE(CuckooFilterView::Parse(good.data(), n, &view, &error)) << error;

  for (size_t byte = n - 32; byte < n; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
      // Exact-size heap copy so ASan sees any overread.
      std::unique_ptr<char[]> buf(new char[n]);
      std::memcpy(buf.get(), bad.data(), n);
      error.clear();
      CuckooFilterView v;
      EXPECT_FALSE(CuckooFilterView::Parse(buf.get(), n, &v, &error))
          << "flip of trailer byte " << byte - (n - 32) << " bit " << bit;
      EXPECT_FALSE(error.empty());
      EXPECT_FALSE(v.valid());
      EXPECT_EQ(CuckooFilter::Deserialize(buf.get(), n, &error), nullptr);
    }
  }
  for (size_t len = 0; len < n; ++len) {
    std::unique_ptr<char[]> prefix(new char[len + 1]);
    std::memcpy(prefix.get(), good.data(), len);
    error.clear();
    EXPECT_FALSE(CuckooFilterView::Parse(prefix.get(), len, &view, &error))
        << "truncated to " << len;
    EXPECT_FALSE(error.empty());
    // Dropping leading bytes keeps a valid trailer but a wrong size.
    std::unique_ptr<char[]> suffix(new char[len + 1]);
    std::memcpy(suffix.get(), good.data() + (n - len), len);
    EXPECT_FALSE(CuckooFilterView::Parse(suffix.get(), len, &view, &error))
        << "last " << len << " bytes";
  }
  for (size_t extra = 1; extra <= 40; ++extra) {
    std::string longer = good + std::string(extra, '\0');
    EXPECT_FALSE(
        CuckooFilterView::Parse(longer.data(), longer.size(), &view, &error))
        << extra << " bytes appended";
    // Bytes prepended: the trailer is intact, the size is not.
    std::string shifted = std::string(extra, '\0') + good;
    EXPECT_FALSE(
        CuckooFilterView::Parse(shifted.data(), shifted.size(), &view, &error))
        << extra << " bytes prepended";
  }
  EXPECT_FALSE(CuckooFilterView::Parse(nullptr, 0, &view, &error));
  EXPECT_FALSE(CuckooFilterView::Parse(nullptr, n, &view, &error));
}

// A valid trailer over a garbage bucket array is accepted (the checksum
// covers the trailer only); lookups, and a mutable copy's inserts and
// erases, must never crash or read out of bounds.
TEST_P(ConfigTest, GarbageTableNeverCrashes) {
  std::mt19937_64 rng(10);
  for (uint64_t buckets : {uint64_t{2}, uint64_t{6}, uint64_t{130}}) {
    auto filter = NewFilter(buckets);
    const std::string good = filter->Serialize();
    const size_t n = good.size();
    for (int round = 0; round < 20; ++round) {
      std::unique_ptr<char[]> buf(new char[n]);
      std::memcpy(buf.get(), good.data(), n);
      for (size_t k = 0; k + 32 < n; ++k) buf[k] = static_cast<char>(rng());
      CuckooFilterView view;
      std::string error;
      // The block checksum (format 2) catches the garbage ...
      ASSERT_FALSE(CuckooFilterView::Parse(buf.get(), n, &view, &error));
      // ... and a resealed garbage table must still never crash a reader.
      ASSERT_TRUE(internal::ResealChecksum(buf.get(), n));
      ASSERT_TRUE(CuckooFilterView::Parse(buf.get(), n, &view, &error))
          << error;
      KeyHash probes[64];
      bool out[64];
      uint64_t sink = 0;
      for (KeyHash& p : probes) p = KeyHash(rng());
      view.ContainsBatch(probes, 64, out);
      for (int k = 0; k < 64; ++k) {
        ASSERT_EQ(out[k], view.Contains(probes[k]));
        sink += out[k];
      }
      auto copy = CuckooFilter::Deserialize(buf.get(), n, &error);
      // The mutable copy counts the occupied slots: garbage almost never
      // holds the trailer's item count.
      if (copy == nullptr) {
        EXPECT_NE(error.find("item count"), std::string::npos) << error;
        continue;
      }
      for (int k = 0; k < 64; ++k) {
        copy->Insert(probes[k]);
        copy->Erase(KeyHash(rng()));
        sink += copy->Contains(probes[k]);
      }
      (void)copy->stats();
      (void)copy->Serialize();
      (void)sink;
    }
  }
}

// Same config, seed and insert sequence -> identical bytes; Clear() restores
// the initial state exactly (including the random walk's state).
TEST_P(ConfigTest, DeterministicBytesAndClear) {
  const KeyStream keys(11);
  const uint64_t n = kSmallBuckets * b() * 95 / 100;
  auto one = NewFilter(kSmallBuckets, 42);
  auto two = NewFilter(kSmallBuckets, 42);
  FillUntil(one.get(), keys, n, nullptr);
  FillUntil(two.get(), keys, n, nullptr);
  const std::string bytes = one->Serialize();
  EXPECT_EQ(bytes, two->Serialize());

  auto other_seed = NewFilter(kSmallBuckets, 43);
  FillUntil(other_seed.get(), keys, n, nullptr);
  EXPECT_NE(other_seed->Serialize(), bytes) << "the seed must matter";

  one->Clear();
  EXPECT_EQ(one->size(), 0u);
  EXPECT_FALSE(one->full());
  EXPECT_TRUE(test::SameBytes(one->Serialize(),
                              NewFilter(kSmallBuckets, 42)->Serialize()));
  FillUntil(one.get(), keys, n, nullptr);
  EXPECT_TRUE(test::SameBytes(one->Serialize(), bytes));
}

// Bucket counts are exact: odd requests round up to even, nothing rounds to
// a power of two, and the table is exactly m * bucket_bits / 8 bytes.
TEST_P(ConfigTest, ExactSizing) {
  const int bucket_bits = GetParam().semi_sort ? 12 + 4 * (f() - 4) : b() * f();
  for (uint64_t requested : {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{3},
                             uint64_t{1001}, uint64_t{1000003}}) {
    auto filter = NewFilter(requested);
    ASSERT_NE(filter, nullptr);
    uint64_t expected = requested < 2 ? 2 : requested + (requested & 1);
    EXPECT_EQ(filter->num_buckets(), expected) << requested;
    const FilterStats s = filter->stats();
    EXPECT_EQ(s.table_bytes, (expected * bucket_bits + 7) / 8);
    EXPECT_EQ(s.capacity, expected * b());
    EXPECT_EQ(filter->SerializedSize(), s.table_bytes + 32);
  }
  // Create(config, n) uses ceil(n / (b * load)) buckets, rounded to even.
  for (uint64_t n : {uint64_t{1}, uint64_t{1000}, uint64_t{999999},
                     uint64_t{1000000}, uint64_t{12345678}}) {
    const FilterConfig config = GetParam();
    const double load = DefaultTargetLoad(b());
    const uint64_t raw =
        static_cast<uint64_t>(std::ceil(double(n) / (b() * load)));
    const uint64_t m = BucketsForItems(config, n);
    EXPECT_GE(m, raw);
    EXPECT_LE(m, raw + 2);
    EXPECT_EQ(m % 2, 0u);
    auto filter = CuckooFilter::Create(config, n);
    ASSERT_NE(filter, nullptr);
    EXPECT_EQ(filter->num_buckets(), m);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllConfigs, ConfigTest, ::testing::ValuesIn(test::AllConfigs()),
    [](const ::testing::TestParamInfo<FilterConfig>& info) {
      return test::ConfigName(info.param);
    });

// The public InsertUnordered: on a small table it is InsertMany (the same
// bytes); on a table past its threshold (2 MiB for a semi-sorted one) it
// groups by bucket, which gives other bytes, and stores every item.
TEST(InsertUnordered, SmallTablesTakeInsertManyLargeOnesGroup) {
  const FilterConfig config = test::MakeConfig(13, 4, /*semi_sort=*/true);
  const KeyStream keys(14);
  for (const uint64_t n : {uint64_t{20000}, uint64_t{1400000}}) {
    std::vector<KeyHash> items;
    for (uint64_t i = 0; i < n; ++i) items.push_back(keys.Key(i));
    auto grouped = CuckooFilter::Create(config, n);
    auto ordered = CuckooFilter::Create(config, n);
    ASSERT_NE(grouped, nullptr);
    ASSERT_NE(ordered, nullptr);
    const bool large = grouped->stats().table_bytes >= (uint64_t{2} << 20);
    EXPECT_EQ(large, n > 20000) << grouped->stats().table_bytes;
    ASSERT_EQ(grouped->InsertUnordered(items.data(), n), n);
    ASSERT_EQ(ordered->InsertMany(items.data(), n), n);
    EXPECT_EQ(grouped->size(), n);
    EXPECT_EQ(test::SameBytes(grouped->Serialize(), ordered->Serialize()),
              !large)
        << n << " items";
    uint64_t missing = 0;
    for (KeyHash key : items) missing += grouped->Contains(key) ? 0 : 1;
    EXPECT_EQ(missing, 0u) << n << " items";
  }
}

// An invalid (default) view gets a GenericLookup that answers false.
TEST(TypedLookup, InvalidViewIsGenericAndEmpty) {
  const CuckooFilterView view;
  const bool any = VisitLookup(view, [](auto lookup) {
    EXPECT_FALSE(decltype(lookup)::kTyped);
    return lookup.Contains(HashKey("a")) || lookup.Contains("b");
  });
  EXPECT_FALSE(any);
}

// ------------------------------------------------------------ configuration

// Tables from 4 MiB on are allocated differently (advised for huge pages,
// then zero-filled): a new one is all zeros, and a deserialized copy of a
// filled one has its bytes and answers.
TEST(LargeTable, StartsEmptyAndRoundTrips) {
  FilterConfig config;               // f = 12, b = 4: 6 bytes per bucket
  const uint64_t buckets = 1200000;  // 7.2 MB
  auto filter = CuckooFilter::CreateWithBuckets(config, buckets);
  ASSERT_NE(filter, nullptr);
  ASSERT_GE(filter->stats().table_bytes, uint64_t{4} << 20);
  const std::string empty = filter->Serialize();
  const size_t table_bytes = filter->stats().table_bytes;
  EXPECT_EQ(std::count(empty.begin(), empty.begin() + table_bytes, '\0'),
            static_cast<std::ptrdiff_t>(table_bytes));
  const KeyStream keys(13);
  std::vector<KeyHash> hashes;
  for (uint64_t i = 0; i < buckets * 3; ++i) hashes.push_back(keys.Key(i));
  ASSERT_EQ(filter->InsertMany(hashes.data(), hashes.size()), hashes.size());
  std::string error;
  const std::string bytes = filter->Serialize();
  auto copy = CuckooFilter::Deserialize(bytes.data(), bytes.size(), &error);
  ASSERT_NE(copy, nullptr) << error;
  EXPECT_TRUE(test::SameBytes(copy->Serialize(), bytes));
  uint64_t missing = 0;
  for (KeyHash h : hashes) missing += copy->Contains(h) ? 0 : 1;
  EXPECT_EQ(missing, 0u);
}

TEST(ConfigValidation, RejectsUnsupportedConfigurations) {
  struct Bad {
    FilterConfig config;
    const char* why;
  };
  auto with = [](int f, int b, bool ss) { return test::MakeConfig(f, b, ss); };
  std::vector<Bad> bad = {
      {with(3, 4, false), "f=3"},      {with(33, 4, false), "f=33"},
      {with(64, 4, false), "f=64"},    {with(17, 4, true), "semi f=17"},
      {with(0, 4, false), "f=0"},      {with(-12, 4, false), "f<0"},
      {with(12, 0, false), "b=0"},     {with(12, 3, false), "b=3"},
      {with(12, 16, false), "b=16"},   {with(12, 2, true), "semi b=2"},
      {with(12, 8, true), "semi b=8"}, {with(32, 4, true), "semi f=32"},
  };
  FilterConfig c = with(12, 4, false);
  c.target_load = -0.1;
  bad.push_back({c, "load<0"});
  c.target_load = 1.01;
  bad.push_back({c, "load>1"});
  c.target_load = std::nan("");
  bad.push_back({c, "load NaN"});
  c.target_load = 0;
  c.max_kicks = -1;
  bad.push_back({c, "kicks<0"});
  for (const Bad& x : bad) {
    EXPECT_FALSE(ValidateConfig(x.config).empty()) << x.why;
    std::string error;
    EXPECT_EQ(CuckooFilter::Create(x.config, 1000, &error), nullptr) << x.why;
    EXPECT_FALSE(error.empty()) << x.why;
    error.clear();
    EXPECT_EQ(CuckooFilter::CreateWithBuckets(x.config, 1000, &error), nullptr)
        << x.why;
    EXPECT_FALSE(error.empty()) << x.why;
  }
  for (const FilterConfig& good : test::AllConfigs()) {
    EXPECT_TRUE(ValidateConfig(good).empty()) << test::ConfigName(good);
  }
  // max_kicks = 0 is valid: every collision goes straight to the victim.
  FilterConfig no_kicks = with(12, 4, false);
  no_kicks.max_kicks = 0;
  EXPECT_TRUE(ValidateConfig(no_kicks).empty());
}

TEST(ConfigValidation, TooManyBucketsRejected) {
  const FilterConfig c = test::MakeConfig(12, 1, false);
  EXPECT_EQ(BucketsForItems(c, uint64_t{1} << 40), 0u);
  std::string error;
  EXPECT_EQ(CuckooFilter::Create(c, uint64_t{1} << 40, &error), nullptr);
  EXPECT_FALSE(error.empty());
  error.clear();
  EXPECT_EQ(CuckooFilter::CreateWithBuckets(c, kMaxBuckets + 1, &error),
            nullptr);
  EXPECT_FALSE(error.empty());
}

TEST(ConfigValidation, DefaultLoadsAndSizingFormula) {
  EXPECT_DOUBLE_EQ(DefaultTargetLoad(1), 0.45);
  EXPECT_DOUBLE_EQ(DefaultTargetLoad(2), 0.84);
  EXPECT_DOUBLE_EQ(DefaultTargetLoad(4), 0.95);
  EXPECT_DOUBLE_EQ(DefaultTargetLoad(8), 0.98);
  FilterConfig c = test::MakeConfig(12, 4);
  // ceil(10^7 / 3.8) = 2631579 -> even 2631580: not a power of two.
  EXPECT_EQ(BucketsForItems(c, 10000000), 2631580u);
  c.target_load = 0.5;
  EXPECT_EQ(BucketsForItems(c, 1000), 500u);
  EXPECT_EQ(BucketsForItems(c, 1002), 502u);  // 501 -> 502
  EXPECT_EQ(BucketsForItems(c, 0), 2u);
}

// A key's hash is XXH3-64 with seed 0 (adapters rely on it).
TEST(HashKeyTest, IsXxh3OfTheBytes) {
  EXPECT_EQ(HashKey("").value, 0x2D06800538D394C2ULL);  // XXH3_64bits of ""
  EXPECT_NE(HashKey("apple"), HashKey("apples"));
  EXPECT_EQ(HashKey(std::string("a\0b", 3)), HashKey(std::string("a\0b", 3)));
  EXPECT_NE(HashKey(std::string("a\0b", 3)), HashKey("a"));
}

}  // namespace
}  // namespace cuckoo
