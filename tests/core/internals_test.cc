// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// White-box tests of the core internals (plugin/core): semi-sort rank
// tables, the packed bucket codec and its branch-free SWAR probes, and the
// hashing functions (fingerprint range, alternate-bucket involution).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cuckoo/cuckoo_filter.h"
#include "filter/bucket_codec.h"
#include "filter/cuckoo_table.h"
#include "filter/semi_sort.h"
#include "filter/table_ops.h"
#include "filter/table_settings.h"
#include "filter/view_access.h"
#include "test_util.h"

namespace cuckoo {
namespace internal {
namespace {

// ------------------------------------------------------------- semi-sort

// All C(19, 4) = 3876 sorted nibble quadruples encode to distinct ranks in
// [0, 3876) and decode back; ranks past the end decode to all zeros.
TEST(SemiSort, All3876CombinationsRoundTrip) {
  std::set<uint32_t> ranks;
  uint32_t combinations = 0;
  for (uint32_t a = 0; a < 16; ++a)
    for (uint32_t b = a; b < 16; ++b)
      for (uint32_t c = b; c < 16; ++c)
        for (uint32_t d = c; d < 16; ++d) {
          const uint32_t packed = a | b << 4 | c << 8 | d << 12;
          const uint32_t rank = SemiSortEncode(packed);
          ASSERT_LT(rank, kSemiSortCombinations) << std::hex << packed;
          ASSERT_EQ(kSemiSortDecode[rank], packed) << "rank " << rank;
          ranks.insert(rank);
          ++combinations;
        }
  EXPECT_EQ(combinations, 3876u);
  EXPECT_EQ(ranks.size(), 3876u);
  EXPECT_EQ(*ranks.rbegin(), 3875u);
  for (uint32_t r = kSemiSortCombinations; r < kSemiSortTableSize; ++r) {
    EXPECT_EQ(kSemiSortDecode[r], 0u) << "rank " << r;
  }
  // Ranks fit the 12-bit field.
  EXPECT_LE(kSemiSortCombinations, 1u << 12);
}

// One table of three buckets with random neighbours: writes to the middle
// bucket must not disturb them.
template <typename S>
class BucketFixture {
 public:
  using Codec = BucketCodec<S>;
  explicit BucketFixture(std::mt19937_64* rng)
      : bytes_(S::TableBytes(3) + kTableLoadSlack + 8, 0), rng_(rng) {
    for (uint64_t i : {0, 2}) {
      uint32_t e[S::kSlots];
      for (uint32_t& x : e) x = RandomFp();
      Codec::Write(table(), i, e);
      Codec::Read(table(), i, neighbours_[i == 0 ? 0 : 1]);
    }
  }
  uint8_t* table() { return bytes_.data(); }
  uint32_t RandomFp() { return static_cast<uint32_t>((*rng_)()) & S::kFpMask; }
  void ExpectNeighboursIntact() {
    for (uint64_t i : {0, 2}) {
      uint32_t e[S::kSlots];
      Codec::Read(table(), i, e);
      for (int j = 0; j < S::kSlots; ++j) {
        ASSERT_EQ(e[j], neighbours_[i == 0 ? 0 : 1][j]) << "neighbour " << i;
      }
    }
    for (size_t k = S::TableBytes(3); k < bytes_.size(); ++k) {
      ASSERT_EQ(bytes_[k], 0) << "write past the table end at byte " << k;
    }
  }

 private:
  std::vector<uint8_t> bytes_;
  std::mt19937_64* rng_;
  uint32_t neighbours_[2][S::kSlots];
};

// Writes `entries` to bucket 1 and checks Read (as a multiset; sorted for
// semi-sorted buckets) and Contains against brute force for `probes`.
template <typename S>
void CheckBucket(BucketFixture<S>* fx, const uint32_t (&entries)[S::kSlots],
                 const std::vector<uint32_t>& probes) {
  using Codec = BucketCodec<S>;
  Codec::Write(fx->table(), 1, entries);
  uint32_t got[S::kSlots];
  Codec::Read(fx->table(), 1, got);
  std::vector<uint32_t> want(entries, entries + S::kSlots);
  std::vector<uint32_t> have(got, got + S::kSlots);
  if constexpr (S::kSemiSort) {
    ASSERT_TRUE(std::is_sorted(have.begin(), have.end()));
  }
  std::sort(want.begin(), want.end());
  std::sort(have.begin(), have.end());
  ASSERT_EQ(have, want);
  for (uint32_t fp : probes) {
    if (fp == 0) continue;  // never queried: 0 marks an empty slot
    const bool brute = std::find(want.begin(), want.end(), fp) != want.end();
    ASSERT_EQ(Codec::Contains(fx->table(), 1, fp), brute)
        << "fp " << fp << " f=" << S::kFpBits << " b=" << S::kSlots;
  }
  fx->ExpectNeighboursIntact();
}

template <typename S>
void CheckCodec(std::mt19937_64* rng) {
  BucketFixture<S> fx(rng);
  const uint32_t max_fp = S::kFpMask;
  // Probes: every fingerprint for small f; otherwise the entries, their
  // one-bit neighbours and random values.
  auto probes_for = [&](const uint32_t(&e)[S::kSlots]) {
    std::vector<uint32_t> probes;
    if (S::kFpBits <= 8) {
      for (uint32_t fp = 1; fp <= max_fp; ++fp) probes.push_back(fp);
      return probes;
    }
    for (uint32_t x : e) {
      probes.push_back(x);
      for (int bit = 0; bit < S::kFpBits; ++bit)
        probes.push_back((x ^ (1u << bit)) & max_fp);
      probes.push_back((x + 1) & max_fp);
      probes.push_back((x - 1) & max_fp);
    }
    for (int k = 0; k < 16; ++k) probes.push_back(fx.RandomFp());
    probes.push_back(max_fp);
    probes.push_back(1);
    return probes;
  };
  if constexpr (S::kSemiSort) {
    // Every nibble combination, each with random low parts in a random slot
    // order (the writer must sort).
    for (uint32_t r = 0; r < kSemiSortCombinations; ++r) {
      const uint32_t packed = kSemiSortDecode[r];
      uint32_t e[4];
      for (int j = 0; j < 4; ++j) {
        const uint32_t low =
            static_cast<uint32_t>((*rng)()) & ((1u << S::kLowBits) - 1);
        e[j] = (((packed >> (4 * j)) & 15) << S::kLowBits) | low;
      }
      std::shuffle(e, e + 4, *rng);
      std::vector<uint32_t> probes = S::kFpBits <= 8 || r % 64 == 0
                                         ? probes_for(e)
                                         : std::vector<uint32_t>();
      if (probes.empty()) {
        for (uint32_t x : e) {
          probes.push_back(x);
          probes.push_back(x ^ 1);
          probes.push_back(x ^ (1u << (S::kFpBits - 1)));
        }
      }
      CheckBucket<S>(&fx, e, probes);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  for (int round = 0; round < 3000; ++round) {
    uint32_t e[S::kSlots];
    for (uint32_t& x : e) {
      switch ((*rng)() % 5) {
        case 0:
          x = 0;
          break;  // empty
        case 1:
          x = max_fp;
          break;  // all ones
        case 2:
          x = static_cast<uint32_t>((*rng)() % 3) + 1;
          break;  // tiny
        default:
          x = fx.RandomFp();
      }
    }
    if (round % 7 == 0) {  // near-duplicates: one-bit neighbours of slot 0
      for (int j = 1; j < S::kSlots; ++j)
        e[j] = e[0] ^ (1u << ((*rng)() % S::kFpBits));
      for (uint32_t& x : e) x &= max_fp;
    }
    CheckBucket<S>(&fx, e, probes_for(e));
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// Packed buckets of every configuration: write/read round trip, exact
// branch-free Contains (no false negatives or positives at bucket level),
// neighbours untouched.
TEST(BucketCodecTest, EveryConfigurationRoundTripsAndProbesExactly) {
  std::mt19937_64 rng(800);
  for (const FilterConfig& c : test::AllConfigs()) {
    SCOPED_TRACE(test::ConfigName(c));
    const bool dispatched = DispatchSettings(
        c.fingerprint_bits, c.bucket_size, c.semi_sort,
        [&](auto settings) { CheckCodec<decltype(settings)>(&rng); });
    ASSERT_TRUE(dispatched);
    if (HasFatalFailure()) return;
  }
  EXPECT_FALSE(DispatchSettings(33, 4, false, [](auto) {}));
  EXPECT_FALSE(DispatchSettings(17, 4, true, [](auto) {}));
  EXPECT_FALSE(DispatchSettings(12, 3, false, [](auto) {}));
  EXPECT_FALSE(DispatchSettings(32, 4, true, [](auto) {}));
  EXPECT_FALSE(DispatchSettings(12, 2, true, [](auto) {}));
}

// The SWAR zero-lane helpers against brute force.
TEST(BucketCodecTest, ZeroLaneMasksAreExact) {
  for (uint32_t x = 0; x < (1u << 16); ++x) {
    uint32_t want = 0;
    for (int j = 0; j < 4; ++j) want |= (((x >> (4 * j)) & 15) == 0) << j;
    ASSERT_EQ(ZeroLaneMask4<4>(x), want) << x;
    ASSERT_EQ((AnyZeroLane<uint64_t, 4, 4>(x)), want != 0) << x;
  }
  std::mt19937_64 rng(801);
  auto check = [&](auto lane_tag) {
    constexpr int kBits = decltype(lane_tag)::value;
    const uint64_t lane_mask = (uint64_t{1} << kBits) - 1;
    for (int round = 0; round < 20000; ++round) {
      uint64_t x = 0;
      uint32_t want = 0;
      for (int j = 0; j < 4; ++j) {
        uint64_t lane = rng() & lane_mask;
        if (rng() % 3 == 0) lane = 0;
        if (rng() % 5 == 0) lane = lane_mask;
        if (rng() % 5 == 0) lane = uint64_t{1} << (kBits - 1);
        x |= lane << (j * kBits);
        want |= (lane == 0) << j;
      }
      ASSERT_EQ(ZeroLaneMask4<kBits>(x), want) << "lane bits " << kBits;
      ASSERT_EQ((AnyZeroLane<uint64_t, kBits, 4>(x)), want != 0);
    }
  };
  check(std::integral_constant<int, 1>{});
  check(std::integral_constant<int, 2>{});
  check(std::integral_constant<int, 3>{});
  check(std::integral_constant<int, 5>{});
  check(std::integral_constant<int, 8>{});
  check(std::integral_constant<int, 12>{});
  check(std::integral_constant<int, 13>{});
  check(std::integral_constant<int, 16>{});
}

// -------------------------------------------------------------- hashing

TEST(Hashing, FingerprintIsNeverZeroAndCoversTheRange) {
  const uint64_t extremes[] = {
      0,          ~uint64_t{0},      uint64_t{0xffffffff} << 32,
      0xffffffff, uint64_t{1} << 63, 1};
  for (int f : {4, 5, 8, 12, 13, 16, 32}) {
    DispatchSettings(f, 4, false, [&](auto settings) {
      using S = decltype(settings);
      for (uint64_t h : extremes) {
        const uint32_t fp = FingerprintOf<S::kFpBits>(h);
        EXPECT_GE(fp, 1u);
        EXPECT_LE(fp, S::kFpMask);
      }
      EXPECT_EQ(FingerprintOf<S::kFpBits>(0), 1u);
      EXPECT_EQ(FingerprintOf<S::kFpBits>(~uint64_t{0}), S::kFpMask);
    });
  }
  // f = 4: all 15 values appear about equally often.
  std::vector<uint64_t> counts(16, 0);
  test::KeyStream keys(802);
  for (uint64_t i = 0; i < 150000; ++i)
    ++counts[FingerprintOf<4>(keys.Key(i).value)];
  EXPECT_EQ(counts[0], 0u);
  for (int fp = 1; fp < 16; ++fp)
    EXPECT_NEAR(double(counts[fp]), 10000, 500) << fp;
}

TEST(Hashing, AltBucketIsAnInvolutionWithDistinctBuckets) {
  std::mt19937_64 rng(803);
  const uint32_t sizes[] = {
      2,        4,       6,
      10,       1000,    1000004,
      1u << 20, 2631580, static_cast<uint32_t>(kMaxBuckets)};
  for (uint32_t m : sizes) {
    for (int round = 0; round < 20000; ++round) {
      const uint32_t i = round < 3 ? uint32_t(round % m)
                                   : (round < 6 ? m - 1 - uint32_t(round % 2)
                                                : PrimaryBucket(rng(), m));
      const uint32_t fp = static_cast<uint32_t>(rng());
      const uint32_t seed = round % 2 ? 0 : static_cast<uint32_t>(rng());
      ASSERT_LT(i, m);
      const uint32_t alt = AltBucket(i, fp, m, seed);
      ASSERT_LT(alt, m) << "m " << m;
      ASSERT_NE(alt, i) << "m " << m;
      ASSERT_NE(alt % 2, i % 2) << "m even, offset odd: parities differ";
      ASSERT_EQ(AltBucket(alt, fp, m, seed), i) << "m " << m << " i " << i;
    }
  }
}

// Victims spread over the whole table: for a fixed bucket, the alternates
// of different fingerprints are not clustered near it.
TEST(Hashing, AlternatesSpreadOverTheTable) {
  const uint32_t m = 1000004;
  std::vector<uint32_t> deciles(10, 0);
  for (uint32_t fp = 1; fp < 4096; ++fp) {
    ++deciles[uint64_t{AltBucket(500000, fp, m, 0)} * 10 / m];
  }
  for (uint32_t d : deciles) EXPECT_NEAR(double(d), 409.5, 100);
}

TEST(Hashing, PrimaryBucketInRange) {
  for (uint32_t m : {2u, 6u, 1000004u, static_cast<uint32_t>(kMaxBuckets)}) {
    EXPECT_EQ(PrimaryBucket(0, m), 0u);
    EXPECT_EQ(PrimaryBucket(~uint64_t{0}, m), m - 1);
    EXPECT_EQ(PrimaryBucket(uint64_t{0xffffffff} << 32, m),
              0u);  // low bits only
  }
}

// ------------------------------------------------------------ inline probe

// The inline lookup of cuckoo_filter.h (cuckoo/detail/probe.h) answers
// exactly as the table code (CuckooTable<S>::Contains through TableOps) on a
// filter filled until its victim slot is in use: every stored item and 2^16
// random queries, through the filter and through a parsed view. Which layouts
// take the inline path is pinned, so that a layout silently falling back to
// the out-of-line code (and this test to comparing it with itself) fails.
TEST(InlineProbe, MatchesTableCodeOnAFullFilter) {
  int inline_layouts = 0;
  for (const FilterConfig& config : test::AllConfigs()) {
    SCOPED_TRACE(test::ConfigName(config));
    const TableOps* ops = GetTableOps(config.fingerprint_bits,
                                      config.bucket_size, config.semi_sort);
    ASSERT_NE(ops, nullptr);
    const detail::ProbeParams p = ops->probe_params();
    // A plain bucket is inline when it fits one 64-bit load after the shift
    // to its first bit: bucket i starts at bit i * B, whose offset within a
    // byte reaches 8 - gcd(B, 8) (0 when B is a multiple of 8).
    const int bucket_bits = config.bucket_size * config.fingerprint_bits;
    const int max_shift =
        bucket_bits % 8 == 0 ? 0 : 8 - std::gcd(bucket_bits, 8);
    const bool wide = bucket_bits + max_shift > 64 && !config.semi_sort;
    const bool narrow_semi = config.semi_sort && config.fingerprint_bits < 8;
    // Plain b*f <= 64 and semi-sorted f >= 8 are inline; the rest is not
    // (b = 8 with f = 15/16 pack 120/128 bits).
    EXPECT_EQ(p.bucket_bits != 0, !wide && !narrow_semi);
    inline_layouts += p.bucket_bits != 0;

    auto filter = CuckooFilter::CreateWithBuckets(config, 1002);
    ASSERT_NE(filter, nullptr);
    test::KeyStream keys(config.fingerprint_bits * 16 + config.bucket_size);
    std::vector<KeyHash> stored;
    while (!filter->full() && stored.size() < 100000) {
      stored.push_back(keys.Key(stored.size()));
      filter->Insert(stored.back());
    }
    ASSERT_TRUE(filter->full());
    const std::string bytes = filter->Serialize();
    CuckooFilterView view;
    std::string error;
    ASSERT_TRUE(
        CuckooFilterView::Parse(bytes.data(), bytes.size(), &view, &error))
        << error;
    const TableRef ref = ViewAccess::Ref(view);
    for (KeyHash h : stored) {
      ASSERT_TRUE(filter->Contains(h));
      ASSERT_TRUE(view.Contains(h));
    }
    uint64_t positives = 0;
    for (uint64_t q = 0; q < (1u << 16); ++q) {
      const KeyHash h = keys.Key((uint64_t{1} << 40) + q);
      const bool expected = ops->Contains(ref, h.value);
      ASSERT_EQ(filter->Contains(h), expected) << "query " << q;
      ASSERT_EQ(view.Contains(h), expected) << "query " << q;
      positives += expected;
    }
    // Small fingerprints give false positives: the comparison saw both answers.
    if (config.fingerprint_bits <= 6) {
      EXPECT_GT(positives, 0u);
    }
  }
  // Of the 116 plain layouts (f = 4..32, b = 1, 2, 4, 8), the 75 whose
  // bucket plus shift fits 64 bits (every b = 1 and 2 except f = 31 b = 2;
  // b = 4 up to f = 16; b = 8 up to f = 8), plus semi-sorted f = 8..16.
  EXPECT_EQ(inline_layouts, 75 + 9);
}

// ------------------------------------------------------------- victim slot

// The victim is the last displaced entry: its fingerprint and bucket belong
// to a stored item. Erasing exactly that item empties the victim slot and
// re-admits inserts.
TEST(VictimSlot, HoldsAStoredItemAndErasingItReadmits) {
  for (int b : {1, 2, 4, 8}) {
    SCOPED_TRACE("b=" + std::to_string(b));
    auto filter =
        CuckooFilter::CreateWithBuckets(test::MakeConfig(16, b), 1002);
    test::KeyStream keys(804);
    std::vector<KeyHash> stored;
    InsertResult r = InsertResult::kInserted;
    while (r == InsertResult::kInserted) {
      stored.push_back(keys.Key(stored.size()));
      r = filter->Insert(stored.back());
    }
    ASSERT_EQ(r, InsertResult::kInsertedFull);
    const TableRef ref = ViewAccess::Ref(filter->View());
    const uint32_t vfp = ref.victim_fp;
    const uint32_t vbucket = ref.victim_bucket;
    ASSERT_NE(vfp, 0u);
    std::vector<KeyHash> owners;
    for (KeyHash h : stored) {
      const uint32_t fp = FingerprintOf<16>(h.value);
      const uint32_t i1 = PrimaryBucket(h.value, 1002);
      if (fp == vfp &&
          (i1 == vbucket || AltBucket(i1, fp, 1002, 0) == vbucket)) {
        owners.push_back(h);
      }
    }
    ASSERT_FALSE(owners.empty()) << "the victim belongs to no stored item";
    ASSERT_EQ(filter->Insert(keys.Key(1u << 30)), InsertResult::kFull);
    ASSERT_TRUE(filter->Erase(owners[0]));
    EXPECT_FALSE(filter->full());
    EXPECT_EQ(filter->size(), stored.size() - 1);
    for (KeyHash h : stored) {
      if (h != owners[0]) {
        ASSERT_TRUE(filter->Contains(h));
      }
    }
    EXPECT_NE(filter->Insert(keys.Key(1u << 30)), InsertResult::kFull);
  }
}

}  // namespace
}  // namespace internal
}  // namespace cuckoo
