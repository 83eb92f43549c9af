// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The blocked ("one cache line") layout of immutable filters, format
// version 3 (blocked_layout.h, blocked_filter.h): no false negatives against
// the exact set for every fingerprint width and size, the false positive
// rate against its formula, the stash and overflow paths, and corrupt blocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "blocked/blocked_filter.h"
#include "blocked/blocked_layout.h"
#include "filter/bucket_codec.h"
#include "filter/filter_format.h"
#include "test_util.h"
#include "util/bit_util.h"

namespace cuckoo {
namespace internal {
namespace {

using cuckoo::internal::HashSpan;

std::vector<uint64_t> Hashes(size_t n, uint64_t seed) {
  std::vector<uint64_t> h(n);
  uint64_t state = seed;
  for (uint64_t& x : h) x = SplitMix64(&state);
  return h;
}

// A serialized version 3 block for `hashes` at `load` (items per slot).
struct Built {
  std::string bytes;
  BlockedBuildResult result;
};

uint32_t BlocksFor(size_t n, int f, double load) {
  const double per_block = 4.0 * BlockedBucketsPerBlock(f) * load;
  return std::max<uint32_t>(1, static_cast<uint32_t>(std::ceil(n / per_block)));
}

// The hashes go to the builder in spans of span_size (0: one span), as a
// HashList hands them over.
Built Build(const std::vector<uint64_t>& hashes, int f, uint32_t blocks,
            uint32_t seed = 0, uint32_t max_stash = 1u << 20,
            int max_kicks = 100, int group_range_bits = -1,
            size_t span_size = 0) {
  BlockedBuildParams p;
  p.fingerprint_bits = f;
  p.num_blocks = blocks;
  p.seed = seed;
  p.max_stash = max_stash;
  p.max_kicks = max_kicks;
  p.group_range_bits = group_range_bits;
  std::vector<HashSpan> spans;
  for (size_t at = 0; at < hashes.size();) {
    const size_t size = span_size == 0
                            ? hashes.size()
                            : std::min(span_size, hashes.size() - at);
    spans.push_back({hashes.data() + at, size});
    at += size;
  }
  // Room for the builder (blocks, the largest stash, 8 bytes of load
  // slack) and for the trailer after the stash it wrote.
  std::vector<uint8_t> out(size_t{blocks} * kBlockBytes +
                           4 * size_t{max_stash} + kTrailerSize);
  BlockedScratch scratch;
  Built b;
  b.result = BuildBlockedTable(spans.data(), spans.size(), hashes.size(), p,
                               &scratch, out.data());
  if (!b.result.ok) return b;
  const size_t size = EncodeBlockedTrailer(p, b.result, out.data());
  b.bytes.assign(reinterpret_cast<const char*>(out.data()), size);
  return b;
}

BlockedView Parse(const std::string& bytes) {
  BlockedView view;
  std::string error;
  EXPECT_TRUE(ParseBlockedFilter(bytes.data(), bytes.size(), &view, &error))
      << error;
  return view;
}

struct Case {
  int f;
  size_t n;
  double load;
};

class BlockedLayoutTest : public ::testing::TestWithParam<Case> {};

TEST_P(BlockedLayoutTest, NoFalseNegativesAndFprNearFormula) {
  const Case c = GetParam();
  const std::vector<uint64_t> keys = Hashes(c.n, 1000 + c.f);
  const uint32_t blocks = BlocksFor(c.n, c.f, c.load);
  const Built b = Build(keys, c.f, blocks);
  ASSERT_TRUE(b.result.ok);
  ASSERT_EQ(b.bytes.size(),
            blocks * kBlockBytes + 4 * b.result.stash_size + kTrailerSize);
  const BlockedView view = Parse(b.bytes);
  EXPECT_EQ(view.num_items, c.n);
  for (uint64_t h : keys) ASSERT_TRUE(BlockedContains(view, h)) << h;

  // Absent items: each compares against the 8 entries of its two buckets,
  // and again in the secondary block when its overflow bit is set, so
  // FPR ~= 8 * load / (2^f - 1) * (1 + overflow bit fraction).
  const size_t queries = test::Size(400000, 100000);
  const std::vector<uint64_t> absent = Hashes(queries, 7777 + c.f);
  size_t fp = 0;
  for (uint64_t h : absent) fp += BlockedContains(view, h);
  const double load =
      double(c.n) / (4.0 * BlockedBucketsPerBlock(c.f) * blocks);
  const double ovf = BlockedOverflowBitFraction(view);
  const double expected =
      std::min(1.0, 8.0 * load / (std::ldexp(1.0, c.f) - 1) * (1 + ovf));
  const double measured = double(fp) / queries;
  const double sigma = std::sqrt(expected * (1 - expected) / queries);
  EXPECT_LE(measured, expected + 5 * sigma + 1e-6)
      << "f=" << c.f << " load=" << load << " ovf=" << ovf;
  if (c.n >= 100000 && c.f >= 8) {
    EXPECT_GE(measured, 0.8 * expected - 5 * sigma);
  }
  if (c.n >= 100000) {
    printf(
        "[ blocked ] f=%d n=%zu load=%.3f bits/item=%.3f fpr=%.5f%% "
        "(formula %.5f%%) overflowed=%.3f%% overflow_bits=%.3f stash=%llu "
        "lines/neg=%.3f\n",
        c.f, c.n, load, 8.0 * b.bytes.size() / c.n, 100 * measured,
        100 * expected, 100.0 * b.result.overflowed / c.n, ovf,
        static_cast<unsigned long long>(b.result.stash_size), 1 + ovf);
  }
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (int f = 4; f <= 16; ++f) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{57}, size_t{1000},
                     size_t{100000}}) {
      cases.push_back({f, n, 0.92});
    }
  }
  for (double load : {0.85, 0.90, 0.914, 0.93, 0.95, 0.97}) {
    cases.push_back({10, test::Size(1000000, 200000), load});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Blocked, BlockedLayoutTest,
                         ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return "f" + std::to_string(info.param.f) + "_n" +
                                  std::to_string(info.param.n) + "_load" +
                                  std::to_string(
                                      static_cast<int>(info.param.load * 1000));
                         });

// One block cannot hold 100 items (56 slots at f = 10): the rest go to the
// stash (no secondary block exists), which lookups search when the item's
// overflow bit is set.
TEST(BlockedStashTest, SingleBlockOverflowsToTheStash) {
  const std::vector<uint64_t> keys = Hashes(100, 42);
  const Built b = Build(keys, 10, /*blocks=*/1);
  ASSERT_TRUE(b.result.ok);
  EXPECT_GE(b.result.stash_size, 100u - 56u);
  const BlockedView view = Parse(b.bytes);
  EXPECT_EQ(view.ref.stash_size, b.result.stash_size);
  for (uint64_t h : keys) ASSERT_TRUE(BlockedContains(view, h));
  // The stash is consulted only behind an overflow bit: with every bit set
  // an absent item still needs an equal 32-bit stash key (or fingerprint).
  const std::vector<uint64_t> absent = Hashes(100000, 43);
  size_t fp = 0;
  for (uint64_t h : absent) fp += BlockedContains(view, h);
  EXPECT_LT(fp, 100000 * (8.0 * 1.0 / 1023 * 2) + 50);
}

// A build that would need a larger stash than allowed fails (the policy
// then retries with another seed or more blocks).
TEST(BlockedStashTest, StashLimitFailsTheBuild) {
  const std::vector<uint64_t> keys = Hashes(100, 44);
  EXPECT_FALSE(Build(keys, 10, 1, 0, /*max_stash=*/10).result.ok);
  EXPECT_TRUE(Build(keys, 10, 1, 0, /*max_stash=*/100).result.ok);
}

// Items spread over several blocks with in-block walks off: the
// displacement chains between blocks still place everything, and the
// answers do not depend on the walk.
TEST(BlockedStashTest, NoWalksNoFalseNegatives) {
  const std::vector<uint64_t> keys = Hashes(50000, 45);
  const Built b =
      Build(keys, 10, BlocksFor(keys.size(), 10, 0.93), 3, 1 << 20, 0);
  ASSERT_TRUE(b.result.ok);
  const BlockedView view = Parse(b.bytes);
  EXPECT_EQ(view.seed, 3u);
  for (uint64_t h : keys) ASSERT_TRUE(BlockedContains(view, h));
}

// The low-part test that settles most negative lookups without decoding
// a rank (BucketCodec::SemiSortedLowMayMatch) never rules out a fingerprint
// that the bucket holds: random buckets (empty slots included) of every
// width it is used for, each stored fingerprint and random others.
template <int F>
void CheckLowPartTest(std::mt19937_64* rng) {
  using S = TableSettings<F, 4, true>;
  using Codec = BucketCodec<S>;
  constexpr uint32_t kMax = (uint32_t{1} << F) - 1;
  uint8_t table[16] = {};
  size_t rejected = 0, absent = 0;
  for (int round = 0; round < 20000; ++round) {
    uint32_t entries[4];
    for (uint32_t& e : entries) {
      e = (*rng)() % 5 == 0 ? 0 : 1 + static_cast<uint32_t>((*rng)() % kMax);
    }
    std::memset(table, 0, sizeof(table));
    Codec::Write(table, 0, entries);
    const uint64_t word = LoadLE<uint64_t>(table) & Codec::kWordMask;
    for (uint32_t e : entries) {
      if (e == 0) continue;
      ASSERT_TRUE(Codec::SemiSortedContains(word, e)) << "f=" << F;
      ASSERT_TRUE(Codec::SemiSortedLowMayMatch(word, e)) << "f=" << F;
    }
    for (int q = 0; q < 8; ++q) {
      const uint32_t fp = 1 + static_cast<uint32_t>((*rng)() % kMax);
      const bool low = Codec::SemiSortedLowMayMatch(word, fp);
      if (Codec::SemiSortedContains(word, fp)) {
        ASSERT_TRUE(low) << "f=" << F << " fp=" << fp;
      } else {
        ++absent;
        rejected += !low;
      }
    }
  }
  // It is a useful test, too: it rules out most absent fingerprints (all
  // but about 4 * 2^(4 - f) of them; the bound allows twice that).
  EXPECT_GT(double(rejected) / absent, 1 - 8 * std::ldexp(1.0, 4 - F))
      << "f=" << F;
}

TEST(BlockedLookupTest, LowPartTestNeverRulesOutAStoredFingerprint) {
  std::mt19937_64 rng(46);
  CheckLowPartTest<8>(&rng);
  CheckLowPartTest<9>(&rng);
  CheckLowPartTest<10>(&rng);
  CheckLowPartTest<11>(&rng);
  CheckLowPartTest<12>(&rng);
  CheckLowPartTest<13>(&rng);
  CheckLowPartTest<14>(&rng);
  CheckLowPartTest<15>(&rng);
  CheckLowPartTest<16>(&rng);
}

// The builder overflows items of a class whose bit is already set in the
// block when it can, and before any is set, of the block's most frequent
// class, so few bits are set: every set bit sends 1/8 of the block's
// lookups to a second block. At 10 bits/key (f = 10, load 0.914) the bits
// set were 13.1% of all with neither choice, 6.2% (5.8% with the smaller
// key set of sanitizer builds) with the first, and 5.2% (5.0%) with both;
// a Poisson bound (one bit per block whose primaries exceed its 56 slots)
// is 2.8%.
TEST(BlockedOverflowTest, FewOverflowBitsAtTheDefaultLoad) {
  const std::vector<uint64_t> keys = Hashes(test::Size(400000, 100000), 47);
  const Built b = Build(keys, 10, BlocksFor(keys.size(), 10, 0.914));
  ASSERT_TRUE(b.result.ok);
  const BlockedView view = Parse(b.bytes);
  const double bits = BlockedOverflowBitFraction(view);
  std::printf("[ blocked ] overflow bits set: %.4f of all\n", bits);
  EXPECT_LT(bits, 0.056);
  EXPECT_GT(bits, 0.02);
  EXPECT_EQ(b.result.overflow_bits,
            static_cast<uint64_t>(bits * 8 * view.ref.num_blocks + 0.5));
  for (uint64_t h : keys) ASSERT_TRUE(BlockedContains(view, h));
}

// The builder groups the items by primary block in one counting sort or,
// from 65536 blocks on, in two (by range of blocks, then each
// range by block): the same grouping, so the same blocks byte for byte.
// Here the two-pass path runs on small tables with ranges from one block
// up, and the hashes come in several spans as from a HashList.
TEST(BlockedBuildTest, TwoPassGroupingBuildsTheSameBlocks) {
  for (int f : {6, 10, 13}) {
    for (size_t n : {size_t{1}, size_t{1000}, size_t{30000}}) {
      const std::vector<uint64_t> keys = Hashes(n, 50 + f);
      const uint32_t blocks = BlocksFor(n, f, 0.914);
      const Built one = Build(keys, f, blocks, 0, 1u << 20, 100, 32);
      ASSERT_TRUE(one.result.ok);
      const BlockedView view = Parse(one.bytes);
      for (uint64_t h : keys) ASSERT_TRUE(BlockedContains(view, h));
      for (int range_bits : {0, 1, 3, 6, 31}) {
        for (size_t span_size : {size_t{0}, size_t{777}}) {
          const Built two =
              Build(keys, f, blocks, 0, 1u << 20, 100, range_bits, span_size);
          ASSERT_TRUE(two.result.ok);
          EXPECT_EQ(two.bytes, one.bytes)
              << "f=" << f << " n=" << n << " range_bits=" << range_bits
              << " span_size=" << span_size;
        }
      }
    }
  }
}

// Two items of one block whose entries are equal (fingerprint, buckets,
// overflow class and secondary block) but whose stash keys differ: the
// builder keeps an item's entry, not its hash, so when one of them goes to
// the stash it looks the stash key up among its block's items, and must
// stash the keys of both (either one would make the other a false
// negative). One block, so every overflowed item ends in the stash; many
// fillers and positions, so that sometimes one twin is stored and the
// other stashed.
TEST(BlockedStashTest, TwinEntriesStashBothKeys) {
  using S = TableSettings<10, 4, true>;
  const uint64_t seed_mix = BlockedSeedMix(0);
  auto twin_key = [&](uint64_t h) {
    const BlockedSlot s = BlockedPlace<S>(h, 1, seed_mix);
    return (uint64_t{s.fp} << 32) | s.i1 << 16 | s.i2 << 8 | s.overflow_bit;
  };
  std::vector<uint64_t> candidates = Hashes(20000, 48);
  std::sort(candidates.begin(), candidates.end(),
            [&](uint64_t a, uint64_t b) { return twin_key(a) < twin_key(b); });
  uint64_t a = 0, b = 0;
  for (size_t i = 1; i < candidates.size() && a == b; ++i) {
    if (twin_key(candidates[i - 1]) == twin_key(candidates[i]) &&
        (BlockedPlace<S>(candidates[i - 1], 1, seed_mix).g >> 32) !=
            (BlockedPlace<S>(candidates[i], 1, seed_mix).g >> 32)) {
      a = candidates[i - 1];
      b = candidates[i];
    }
  }
  ASSERT_NE(a, b) << "no twins among the candidates";
  size_t stashed_twin_runs = 0;
  for (size_t fillers = 40; fillers <= 120; fillers += 4) {
    const std::vector<uint64_t> filler = Hashes(fillers, 49 + fillers);
    for (size_t at : {size_t{0}, fillers / 2, fillers}) {
      std::vector<uint64_t> keys(filler.begin(), filler.begin() + at);
      keys.push_back(a);
      keys.insert(keys.end(), filler.begin() + at, filler.end());
      keys.push_back(b);
      const Built built = Build(keys, 10, /*blocks=*/1);
      ASSERT_TRUE(built.result.ok);
      const BlockedView view = Parse(built.bytes);
      for (uint64_t h : keys) {
        ASSERT_TRUE(BlockedContains(view, h))
            << "fillers=" << fillers << " at=" << at;
      }
      const uint32_t key_a =
          static_cast<uint32_t>(BlockedPlace<S>(a, 1, seed_mix).g >> 32);
      const uint32_t key_b =
          static_cast<uint32_t>(BlockedPlace<S>(b, 1, seed_mix).g >> 32);
      const bool has_a = StashHas(view.ref, key_a);
      EXPECT_EQ(StashHas(view.ref, key_b), has_a)
          << "fillers=" << fillers << " at=" << at;
      stashed_twin_runs += has_a;
    }
  }
  // Runs where a twin went to the stash: the case this test is about.
  EXPECT_GT(stashed_twin_runs, 0u);
}

}  // namespace
}  // namespace internal
}  // namespace cuckoo
