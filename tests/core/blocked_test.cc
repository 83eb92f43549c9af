// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The blocked ("one cache line") layout of immutable filters, format
// versions 4 (written) and 3 (read) (blocked_layout.h, blocked_filter.h):
// no false negatives against the exact set for every fingerprint width and
// size, the false positive rate against its formula, the stash and overflow
// paths (the next block, the last block's overflow into block 0), and
// version 3 blocks written by the previous builder.
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
#include "blocked_v3_vectors.inc"
#include "filter/bucket_codec.h"
#include "filter/filter_format.h"
#include "test_util.h"
#include "util/bit_util.h"
#include "util/key_hash_inline.h"

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

// A serialized version 4 block for `hashes` at `load` (items per slot).
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

// BlockedTable<S>::ContainsSingle (the SST reader's single lookup) for the
// view's fingerprint width.
bool ContainsSingle(const BlockedView& view, uint64_t hash) {
  bool found = false;
  EXPECT_TRUE(DispatchBlocked(view.fingerprint_bits, [&](auto settings) {
    found = BlockedTable<decltype(settings)>::ContainsSingle(view.ref, hash);
  }));
  return found;
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
  for (uint64_t h : keys) {
    ASSERT_TRUE(BlockedContains(view, h)) << h;
    ASSERT_TRUE(ContainsSingle(view, h)) << h;
  }

  // Absent items: each compares against the 8 entries of its two buckets,
  // and again in the secondary block when its overflow bit is set, so
  // FPR ~= 8 * load / (2^f - 1) * (1 + overflow bit fraction).
  const size_t queries = test::Size(400000, 100000);
  const std::vector<uint64_t> absent = Hashes(queries, 7777 + c.f);
  size_t fp = 0;
  for (uint64_t h : absent) {
    const bool found = BlockedContains(view, h);
    fp += found;
    ASSERT_EQ(ContainsSingle(view, h), found) << h;
  }
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
  for (uint64_t h : keys) {
    ASSERT_TRUE(BlockedContains(view, h));
    ASSERT_TRUE(ContainsSingle(view, h));
  }
  // The stash is consulted only behind an overflow bit: with every bit set
  // an absent item still needs an equal 32-bit stash key (or fingerprint).
  const std::vector<uint64_t> absent = Hashes(100000, 43);
  size_t fp = 0;
  for (uint64_t h : absent) {
    fp += BlockedContains(view, h);
    ASSERT_EQ(ContainsSingle(view, h), BlockedContains(view, h));
  }
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

// The position tables (kBlockedBucketPositions, kBlockedLowsPositions,
// 2 * nb entries each, entry j + nb repeating entry j) give the bytes a
// bucket's word and its low parts are loaded from: the same bits as the
// computed position of bucket j mod nb, and never a load past the block.
template <int F>
void CheckBucketPositions(std::mt19937_64* rng) {
  using S = TableSettings<F, 4, true>;
  constexpr int kNb = BlockedBucketsPerBlock(F);
  constexpr uint64_t kBucketMask = (uint64_t{1} << S::kBucketBits) - 1;
  constexpr uint64_t kLowsMask = (uint64_t{1} << (4 * S::kLowBits)) - 1;
  uint8_t block[kBlockBytes];
  for (int round = 0; round < 200; ++round) {
    for (uint8_t& byte : block) byte = static_cast<uint8_t>((*rng)());
    for (int j = 0; j < 2 * kNb; ++j) {
      const int bucket = j % kNb;
      // The bucket's bits, one at a time.
      uint64_t expected = 0;
      for (int k = 0; k < S::kBucketBits; ++k) {
        const int bit = bucket * S::kBucketBits + k;
        expected |= uint64_t{(block[bit >> 3] >> (bit & 7)) & 1u} << k;
      }
      const BlockedBucketPos w = kBlockedBucketPositions<S>.at[j];
      const BlockedBucketPos l = kBlockedLowsPositions<S>.at[j];
      ASSERT_LE(w.byte + 8u, kBlockBytes);
      ASSERT_LE(l.byte + 8u, kBlockBytes);
      ASSERT_LE(w.shift + S::kBucketBits, 64);
      ASSERT_LE(l.shift + 4 * S::kLowBits, 64);
      ASSERT_EQ(BlockedBucketWord<S>(block, j) & kBucketMask, expected)
          << "f=" << F << " j=" << j;
      ASSERT_EQ((LoadLE<uint64_t>(block + l.byte) >> l.shift) & kLowsMask,
                expected >> 12)
          << "f=" << F << " j=" << j;
    }
  }
}

TEST(BlockedLookupTest, BucketPositionTablesMatchTheLayout) {
  std::mt19937_64 rng(48);
  CheckBucketPositions<4>(&rng);
  CheckBucketPositions<5>(&rng);
  CheckBucketPositions<6>(&rng);
  CheckBucketPositions<7>(&rng);
  CheckBucketPositions<8>(&rng);
  CheckBucketPositions<9>(&rng);
  CheckBucketPositions<10>(&rng);
  CheckBucketPositions<11>(&rng);
  CheckBucketPositions<12>(&rng);
  CheckBucketPositions<13>(&rng);
  CheckBucketPositions<14>(&rng);
  CheckBucketPositions<15>(&rng);
  CheckBucketPositions<16>(&rng);
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
// set were, with format 3's random secondary blocks, 13.1% of all with
// neither choice, 6.2% with the first and 5.2% with both; with format 4's
// next block 5.8-6.1% (an overloaded block's overflow all goes to one block,
// which then overflows more of its own items); a Poisson bound (one bit per
// block whose primaries exceed its 56 slots) is 2.8%.
TEST(BlockedOverflowTest, FewOverflowBitsAtTheDefaultLoad) {
  const std::vector<uint64_t> keys = Hashes(test::Size(400000, 100000), 47);
  const Built b = Build(keys, 10, BlocksFor(keys.size(), 10, 0.914));
  ASSERT_TRUE(b.result.ok);
  const BlockedView view = Parse(b.bytes);
  const double bits = BlockedOverflowBitFraction(view);
  std::printf("[ blocked ] overflow bits set: %.4f of all\n", bits);
  EXPECT_LT(bits, 0.066);
  EXPECT_GT(bits, 0.02);
  EXPECT_EQ(b.result.overflow_bits,
            static_cast<uint64_t>(bits * 8 * view.ref.num_blocks + 0.5));
  for (uint64_t h : keys) ASSERT_TRUE(BlockedContains(view, h));
}

// The builder groups the items by range of blocks, then each range by
// block (ranges of 64 blocks or more, at most 1024 ranges), or all blocks
// at once: the same grouping, so the same blocks byte for byte. Here ranges
// from one block up, and the hashes come in several spans as from a
// HashList.
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

// Two items of one block whose entries are equal (fingerprint, buckets and
// overflow class) but whose stash keys differ: the builder keeps each
// stored item's index, so an overflowed twin stashes its own key (the
// format 3 builder kept entries without hashes and stashed both twins'
// keys). One block, so every overflowed item ends in the stash; many
// fillers and positions, so that sometimes one twin is stored and the
// other stashed.
TEST(BlockedStashTest, TwinEntriesAreBothFound) {
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
  const uint32_t key_a =
      static_cast<uint32_t>(BlockedPlace<S>(a, 1, seed_mix).g >> 32);
  const uint32_t key_b =
      static_cast<uint32_t>(BlockedPlace<S>(b, 1, seed_mix).g >> 32);
  size_t one_twin_stashed = 0;
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
      EXPECT_LE(built.result.stash_size, built.result.overflowed);
      one_twin_stashed +=
          StashHas(view.ref, key_a) != StashHas(view.ref, key_b);
    }
  }
  // Runs where exactly one twin went to the stash: the case this test is
  // about.
  EXPECT_GT(one_twin_stashed, 0u);
}

// Format 4: an item not in its primary block is in the next one (or the
// stash), in the same two buckets.
TEST(BlockedOverflowTest, OverflowGoesToTheNextBlock) {
  using S = TableSettings<10, 4, true>;
  const std::vector<uint64_t> keys = Hashes(50000, 51);
  const Built b = Build(keys, 10, BlocksFor(keys.size(), 10, 0.93));
  ASSERT_TRUE(b.result.ok);
  const BlockedView view = Parse(b.bytes);
  ASSERT_TRUE(view.ref.next_block_secondary);
  size_t in_next = 0;
  for (uint64_t h : keys) {
    const BlockedSlot s =
        BlockedPlace<S>(h, view.ref.num_blocks, view.ref.seed_mix);
    if (BlockedPairHas<S>(BlockedTable<S>::BlockAddress(view.ref, s.block),
                          s)) {
      continue;
    }
    ASSERT_TRUE(BlockedTable<S>::Overflowed(
        BlockedTable<S>::BlockAddress(view.ref, s.block), s));
    const uint32_t next = (s.block + 1) % view.ref.num_blocks;
    if (BlockedPairHas<S>(BlockedTable<S>::BlockAddress(view.ref, next), s)) {
      ++in_next;
    } else {
      ASSERT_TRUE(StashHas(view.ref, static_cast<uint32_t>(s.g >> 32)));
    }
  }
  EXPECT_GT(in_next, keys.size() / 100);
}

// The last block's overflow goes to block 0: into its free slots, else in
// place of block 0's own items, which move on to block 1 (block 0's
// overflow bit for them set), and so on along the first blocks; only what
// the wrap chain cannot take goes to the stash.
TEST(BlockedOverflowTest, LastBlockOverflowsIntoBlockZero) {
  using S = TableSettings<10, 4, true>;
  const uint32_t blocks = 4;
  constexpr size_t kSlots = 4 * BlockedBucketsPerBlock(10);  // 56
  // Hashes whose primary block is `block`.
  auto hashes_in = [&](uint32_t block, size_t n, uint64_t seed) {
    std::vector<uint64_t> out;
    uint64_t state = seed;
    while (out.size() < n) {
      const uint64_t h = SplitMix64(&state);
      if (BlockedPrimaryBlock(h, blocks) == block) out.push_back(h);
    }
    return out;
  };
  // Items of block `block` (among keys) not held by it: each must be in its
  // two buckets of the next block, or in the stash.
  auto displaced = [&](const BlockedView& view,
                       const std::vector<uint64_t>& keys, uint32_t block,
                       size_t* stashed) {
    size_t count = 0;
    for (uint64_t h : keys) {
      const BlockedSlot s = BlockedPlace<S>(h, blocks, view.ref.seed_mix);
      if (s.block != block) continue;
      const uint8_t* own = BlockedTable<S>::BlockAddress(view.ref, block);
      if (BlockedPairHas<S>(own, s)) continue;
      ++count;
      EXPECT_TRUE(BlockedTable<S>::Overflowed(own, s));
      const uint8_t* next =
          BlockedTable<S>::BlockAddress(view.ref, (block + 1) % blocks);
      if (!BlockedPairHas<S>(next, s)) {
        EXPECT_TRUE(StashHas(view.ref, static_cast<uint32_t>(s.g >> 32)));
        ++*stashed;
      }
    }
    return count;
  };
  // Block 0 empty, half full, full; then every block full.
  for (size_t in_zero : {size_t{0}, size_t{30}, kSlots, kSlots + 10}) {
    SCOPED_TRACE("items of block 0: " + std::to_string(in_zero));
    const bool all_full = in_zero > kSlots;
    std::vector<uint64_t> keys = hashes_in(blocks - 1, 100, 52);
    const std::vector<uint64_t> zero = hashes_in(0, in_zero, 53);
    keys.insert(keys.end(), zero.begin(), zero.end());
    if (all_full) {
      for (uint32_t b = 1; b + 1 < blocks; ++b) {
        const std::vector<uint64_t> more = hashes_in(b, kSlots, 54 + b);
        keys.insert(keys.end(), more.begin(), more.end());
      }
    }
    const Built b = Build(keys, 10, blocks);
    ASSERT_TRUE(b.result.ok);
    const BlockedView view = Parse(b.bytes);
    for (uint64_t h : keys) ASSERT_TRUE(BlockedContains(view, h));
    size_t stashed = 0;
    // At least the 44 of the last block's 100 items beyond its 56 slots
    // (- 2: items whose fingerprint and buckets equal a stored one's).
    EXPECT_GE(displaced(view, keys, blocks - 1, &stashed), 100u - kSlots - 2);
    const size_t zero_displaced = displaced(view, keys, 0, &stashed);
    if (in_zero == 0) {
      EXPECT_EQ(zero_displaced, 0u);
    }
    // A full block 0 takes the wrapped items in place of its own.
    if (in_zero == kSlots) {
      EXPECT_GT(zero_displaced, 0u);
    }
    if (all_full) {
      // 100 + 66 + 56 + 56 items for 224 slots: some must be stashed.
      EXPECT_GE(b.result.stash_size, keys.size() - 4 * kSlots - 2);
    } else {
      EXPECT_EQ(b.result.stash_size, 0u);
      EXPECT_EQ(stashed, 0u);
    }
  }
}

// Blocks of format version 3 (random secondary blocks), written by the
// builder of release 1.0.0 (f = 10, seed 0, hashes of "key0", "key1", ...),
// are still read: every key is found. The first is the block
// GoldenBlockedBlock pinned for format 3; the second has overflowed items
// in secondary blocks, which a format 4 reading would miss (the vectors are
// in blocked_v3_vectors.inc).
std::string FromHex(const char* hex) {
  std::string out;
  for (size_t i = 0; hex[i] != '\0' && hex[i + 1] != '\0'; i += 2) {
    out.push_back(
        static_cast<char>(std::stoi(std::string(hex + i, 2), nullptr, 16)));
  }
  return out;
}

TEST(BlockedFormatTest, Version3BlocksStillRead) {
  using S = TableSettings<10, 4, true>;
  struct Vector {
    const char* hex;
    int keys;
  };
  for (const Vector& v :
       {Vector{kV3Golden100, 100}, Vector{kV3Keys2000, 2000}}) {
    SCOPED_TRACE(std::to_string(v.keys) + " keys");
    const std::string bytes = FromHex(v.hex);
    if (v.keys == 100) {
      EXPECT_EQ(HashKeyInline(bytes.data(), bytes.size()),
                0xac2b69aa40f225b5ull);
    }
    ASSERT_EQ(static_cast<uint8_t>(bytes.back()), kFormatVersionBlocked);
    BlockedView view = Parse(bytes);
    EXPECT_FALSE(view.ref.next_block_secondary);
    EXPECT_EQ(view.num_items, static_cast<uint64_t>(v.keys));
    size_t in_secondary = 0, missed_as_format4 = 0;
    BlockedView as_format4 = view;
    as_format4.ref.next_block_secondary = true;
    for (int i = 0; i < v.keys; ++i) {
      const std::string key = "key" + std::to_string(i);
      const uint64_t h = HashKeyInline(key.data(), key.size());
      ASSERT_TRUE(BlockedContains(view, h)) << key;
      const BlockedSlot s =
          BlockedPlace<S>(h, view.ref.num_blocks, view.ref.seed_mix);
      in_secondary += !BlockedPairHas<S>(
          BlockedTable<S>::BlockAddress(view.ref, s.block), s);
      missed_as_format4 += !BlockedContains(as_format4, h);
    }
    if (v.keys == 2000) {
      EXPECT_GT(in_secondary, 0u);
      EXPECT_GT(missed_as_format4, 0u);
      const std::vector<uint64_t> absent = Hashes(100000, 54);
      size_t fp = 0;
      for (uint64_t h : absent) fp += BlockedContains(view, h);
      EXPECT_LT(fp, 2000u);
    }
  }
}

}  // namespace
}  // namespace internal
}  // namespace cuckoo
