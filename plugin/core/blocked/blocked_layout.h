// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The blocked ("one cache line") cuckoo layout for immutable filters (SST
// filter blocks, format versions 3 and 4): placement arithmetic and the
// inline lookup. Internal header; RocksDB-free.
//
// A key's hash selects one 64-byte block, and both of its candidate buckets
// lie inside that block, so a negative lookup reads one cache line (as a
// blocked Bloom filter does). Buckets are the core's semi-sorted buckets of
// four f-bit fingerprints (4f - 4 bits, bucket_codec.h), packed from bit 0;
// the last byte of the block holds 8 overflow bits:
//
//   bit 0                                                      bit 511
//   +----------+----------+-----+--------------+--------+----------+
//   | bucket 0 | bucket 1 | ... | bucket nb-1  | unused | overflow |
//   | 4f-4 bit | 4f-4 bit |     |              | (zero) | 8 bits   |
//   +----------+----------+-----+--------------+--------+----------+
//   nb = floor(504 / (4f - 4)): f = 10 -> 14 buckets (56 slots, 504 bits),
//   f = 8 -> 18, f = 12 -> 11, f = 16 -> 8.
//
// Item hash h (64 bits), filter seed s, B blocks:
//   block  = FastRange32(lo32(h), B)
//   fp     = 1 + FastRange(hi32(h), 2^f - 1)            (as the core's)
//   g      = (h ^ SeedMix(s)) * 0x9e3779b97f4a7c15        (mod 2^64)
//   t1     = hi32(g) * nb:         i1 = hi32(t1)
//   t2     = lo32(t1) * (nb - 1):  i2 = (i1 + 1 + hi32(t2)) mod nb  (!= i1)
//   class  = lo32(t2) >> 29                              (overflow bit)
// The builder knows every item's hash, so i2 need not be derivable from
// (i1, fp) as in a deletable cuckoo filter: entries are moved by the builder
// with their hashes and the two buckets are independent.
//
// Items that do not fit in their block (a block holds at most 4 * nb, and
// the number of keys hashed to a block varies) go to a secondary block,
// and the overflow bit of their class is set in the primary block:
//   format 4:  block2 = block + 1, or 0 for the last block
//   format 3:  block2 = FastRange32(lo32(g), B - 1), skipping `block` (B > 1)
//              (read, no longer written)
// with the same in-block buckets i1, i2. An item that fits neither block is
// kept in the stash, a sorted array of 32-bit keys hi32(g) after the blocks.
// (With B = 1, block2 is the block itself: overflowed items are in the
// stash.) Format 4's neighbour lets the builder fill the blocks in order,
// each from a cache-resident buffer, since an overflowed item only ever
// waits for the next block; and a lookup's second block is the adjacent
// 64 bytes of memory.
// A lookup reads the primary block, and the secondary block only if the
// item's overflow bit is set (then, if the stash is not empty, it also
// binary-searches the stash). Lines touched by a negative lookup:
// 1 + (fraction of overflow bits set) (+ stash, rare).
#ifndef CUCKOO_PLUGIN_CORE_BLOCKED_BLOCKED_LAYOUT_H_
#define CUCKOO_PLUGIN_CORE_BLOCKED_BLOCKED_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <utility>

#include "filter/bucket_codec.h"
#include "filter/table_settings.h"
#include "util/bit_util.h"

namespace cuckoo {
namespace internal {

constexpr size_t kBlockBytes = 64;
// Bits of a block available to buckets; the last byte is the overflow bits.
constexpr int kBlockBucketBits = 504;
constexpr int kOverflowClasses = 8;
// Semi-sorted fingerprints of the blocked layout (TableSettings<f, 4, true>).
constexpr int kBlockedMinFpBits = 4;
constexpr int kBlockedMaxFpBits = 16;

// Buckets per block for f-bit fingerprints (semi-sorted buckets of four).
constexpr int BlockedBucketsPerBlock(int fp_bits) {
  return kBlockBucketBits / (4 * fp_bits - 4);
}

template <typename Fn, int... Fs>
bool DispatchBlockedFp(int fp_bits, Fn& fn, std::integer_sequence<int, Fs...>) {
  return ((fp_bits == Fs && (fn(TableSettings<Fs, 4, true>{}), true)) || ...);
}

// Calls fn(TableSettings<f, 4, true>{}) for f in [kBlockedMinFpBits,
// kBlockedMaxFpBits] and returns true; returns false otherwise.
template <typename Fn>
bool DispatchBlocked(int fp_bits, Fn&& fn) {
  return DispatchBlockedFp(fp_bits, fn,
                           std::integer_sequence<int, 4, 5, 6, 7, 8, 9, 10, 11,
                                                 12, 13, 14, 15, 16>{});
}

// The placement of one item in a blocked table.
struct BlockedSlot {
  uint32_t block = 0;
  uint32_t fp = 0;
  uint32_t i1 = 0;
  uint32_t i2 = 0;
  uint32_t overflow_class = 0;  // 0..7
  uint32_t overflow_bit = 0;    // 1 << overflow_class
  uint64_t g = 0;               // for the secondary block and stash key
};

inline uint64_t BlockedSeedMix(uint32_t seed) {
  return Mix64(uint64_t{seed} * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL);
}

// One multiply: the high half mixes every bit of the hash (and the seed);
// the low half is a bijection of the hash's low 32 bits.
constexpr uint64_t kBlockedPlaceMul = 0x9e3779b97f4a7c15ULL;

// An item's primary block (BlockedSlot::block), alone: what a batched
// lookup needs to prefetch before it computes the rest of the slot.
inline uint32_t BlockedPrimaryBlock(uint64_t hash, uint32_t num_blocks) {
  return FastRange32(static_cast<uint32_t>(hash), num_blocks);
}

template <typename S>
inline BlockedSlot BlockedPlace(uint64_t hash, uint32_t num_blocks,
                                uint64_t seed_mix) {
  constexpr uint32_t kNb = BlockedBucketsPerBlock(S::kFpBits);
  BlockedSlot s;
  s.block = BlockedPrimaryBlock(hash, num_blocks);
  s.fp = detail::Fingerprint(hash, S::kFpBits);
  s.g = (hash ^ seed_mix) * kBlockedPlaceMul;
  // i1, the offset of i2 and the overflow class from successive
  // multiply-shift range reductions of the high half (each uses the
  // fraction the previous one left).
  uint64_t t = uint64_t{static_cast<uint32_t>(s.g >> 32)} * kNb;
  s.i1 = static_cast<uint32_t>(t >> 32);
  t = uint64_t{static_cast<uint32_t>(t)} * (kNb - 1);
  uint32_t i2 = s.i1 + 1 + static_cast<uint32_t>(t >> 32);
  i2 -= i2 >= kNb ? kNb : 0;
  s.i2 = i2;
  s.overflow_class = static_cast<uint32_t>(t) >> 29;
  s.overflow_bit = uint32_t{1} << s.overflow_class;
  return s;
}

// Format 3's secondary block and the stash key of an item (only when it
// overflowed).
struct BlockedOverflow {
  uint32_t block2 = 0;
  uint32_t stash_key = 0;
};

inline BlockedOverflow BlockedOverflowOf(uint64_t g, uint32_t block,
                                         uint32_t num_blocks) {
  BlockedOverflow o;
  uint32_t b2 = FastRange32(static_cast<uint32_t>(g), num_blocks - 1);
  b2 += static_cast<uint32_t>((b2 >= block) & (num_blocks > 1));
  o.block2 = b2;
  o.stash_key = static_cast<uint32_t>(g >> 32);
  return o;
}

// Where the 64-bit load of bucket j of a block starts (byte) and the shift
// that brings the bucket to bit 0: byte = min(bit / 8, 56) for the bucket's
// first bit j * kBucketBits, so the load never leaves the block.
struct BlockedBucketPos {
  uint8_t byte = 0;
  uint8_t shift = 0;
};

// The byte and shift of bit `kOffset` of bucket j (j < 2 * nb, taken mod nb)
// of a block, for an 8-byte load that stays inside the block: entry j + nb
// is entry j, so that an index i1 + 1 + offset (< 2 * nb) needs no reduction
// mod nb.
template <int kBucketBits, int kBuckets, int kOffset>
struct BlockedPositions {
  BlockedBucketPos at[2 * kBuckets];
  constexpr BlockedPositions() : at() {
    for (int j = 0; j < 2 * kBuckets; ++j) {
      const int bit = (j % kBuckets) * kBucketBits + kOffset;
      int byte = bit >> 3;
      byte = byte < static_cast<int>(kBlockBytes) - 8
                 ? byte
                 : static_cast<int>(kBlockBytes) - 8;
      at[j].byte = static_cast<uint8_t>(byte);
      at[j].shift = static_cast<uint8_t>(bit - 8 * byte);
    }
  }
};

// The positions of a layout's buckets, as a table: a lookup reads a
// bucket's byte and shift (two byte loads from a line that stays in L1)
// instead of computing them (a multiply, a clamp and a subtraction each).
template <typename S>
inline constexpr BlockedPositions<S::kBucketBits,
                                  BlockedBucketsPerBlock(S::kFpBits), 0>
    kBlockedBucketPositions{};

// The positions of the low parts of a bucket's entries (its bits from 12
// on, beside the 12-bit rank).
template <typename S>
inline constexpr BlockedPositions<S::kBucketBits,
                                  BlockedBucketsPerBlock(S::kFpBits), 12>
    kBlockedLowsPositions{};

// The 64-bit word holding bucket j (< 2 * nb, taken mod nb) of a block, shifted
// so the bucket starts at bit 0 (upper bits unmasked).
template <typename S>
inline uint64_t BlockedBucketWord(const uint8_t* block, uint32_t j) {
  const BlockedBucketPos p = kBlockedBucketPositions<S>.at[j];
  return LoadLE<uint64_t>(block + p.byte) >> p.shift;
}

template <typename S>
inline bool BlockedBucketHas(const uint8_t* block, uint32_t j, uint32_t fp) {
  using Codec = BucketCodec<S>;
  return Codec::SemiSortedContains(
      BlockedBucketWord<S>(block, j) & Codec::kWordMask, fp);
}

// True if bucket i1 or i2 of a block holds the item's fingerprint. When the
// low parts have at least kPretestMinLowBits bits (and at least 4), they
// are compared first, which settles most negative lookups without decoding
// a rank: a branch taken for about 8 * 2^-kLowBits of the negatives and for
// every positive. Single lookups, which wait on the block's cache miss, gain
// from the shorter path at every width (the default, 4). Batched lookups,
// whose blocks are in cache by then, pay for the branch's mispredictions
// where it is often taken (see kBatchedPretestMinLowBits).
template <typename S, int kPretestMinLowBits = 4>
inline bool BlockedPairHas(const uint8_t* block, const BlockedSlot& s) {
  using Codec = BucketCodec<S>;
  const uint64_t w1 = BlockedBucketWord<S>(block, s.i1) & Codec::kWordMask;
  const uint64_t w2 = BlockedBucketWord<S>(block, s.i2) & Codec::kWordMask;
  if constexpr (S::kLowBits >= 4 && S::kLowBits >= kPretestMinLowBits) {
    if (__builtin_expect(!(Codec::SemiSortedLowMayMatch(w1, s.fp) |
                           Codec::SemiSortedLowMayMatch(w2, s.fp)),
                         1)) {
      return false;
    }
  }
  return Codec::SemiSortedContains(w1, s.fp) |
         Codec::SemiSortedContains(w2, s.fp);
}

// A read-only blocked table (validated by DecodeBlockedFilter).
struct BlockedTableRef {
  const uint8_t* blocks = nullptr;  // num_blocks * 64 bytes
  uint32_t num_blocks = 0;          // >= 1
  uint64_t seed_mix = 0;            // BlockedSeedMix(seed)
  const uint8_t* stash = nullptr;   // stash_size little-endian u32, sorted
  uint32_t stash_size = 0;
  bool next_block_secondary = true;  // format 4 (false: format 3)
};

// The secondary block of an item whose primary block is `block` (format 4).
inline uint32_t BlockedNextBlock(uint32_t block, uint32_t num_blocks) {
  const uint32_t next = block + 1;
  return next == num_blocks ? 0 : next;
}

// The secondary block of an item in table t, either format.
inline uint32_t BlockedSecondaryBlock(const BlockedTableRef& t,
                                      const BlockedSlot& s) {
  if (t.next_block_secondary) return BlockedNextBlock(s.block, t.num_blocks);
  return BlockedOverflowOf(s.g, s.block, t.num_blocks).block2;
}

inline bool StashHas(const BlockedTableRef& t, uint32_t key) {
  uint32_t lo = 0, hi = t.stash_size;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    const uint32_t v = LoadLE<uint32_t>(t.stash + 4 * size_t{mid});
    if (v == key) return true;
    if (v < key) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return false;
}

template <typename S>
struct BlockedTable {
  static const uint8_t* BlockAddress(const BlockedTableRef& t, uint32_t b) {
    return t.blocks + size_t{b} * kBlockBytes;
  }

  // True if the primary block b has the overflow bit of the item's class.
  static bool Overflowed(const uint8_t* b, const BlockedSlot& s) {
    return (b[kBlockBytes - 1] & s.overflow_bit) != 0;
  }

  // The secondary block of an item (read only when it overflowed).
  static const uint8_t* SecondaryBlock(const BlockedTableRef& t,
                                       const BlockedSlot& s) {
    return BlockAddress(t, BlockedSecondaryBlock(t, s));
  }

  // The item's two buckets in its secondary block, then the stash: the
  // rest of a probe when the item's overflow bit is set.
  static bool ProbeSecondary(const BlockedTableRef& t, const BlockedSlot& s) {
    return BlockedPairHas<S>(SecondaryBlock(t, s), s) ||
           (t.stash_size != 0 && StashHas(t, static_cast<uint32_t>(s.g >> 32)));
  }

  // Probe of an item whose slot is computed: its two buckets in the primary
  // block, then, only if the item's overflow bit is set there, in the
  // secondary block and the stash. The branch on the bit is predicted as
  // not taken and is taken for a fraction of lookups equal to the share of
  // overflow bits set (policy_bench's lines_neg - 1). It replaced a
  // branch-free probe of four buckets (the second pair in the primary block
  // again unless the bit was set), whose extra instructions kept fewer
  // lookups in flight: see the SST reader's MayMatch for the measurements.
  static bool Probe(const BlockedTableRef& t, const BlockedSlot& s) {
    const uint8_t* b = BlockAddress(t, s.block);
    bool found = BlockedPairHas<S>(b, s);
    if (__builtin_expect(Overflowed(b, s), 0)) {
      found = found || ProbeSecondary(t, s);
    }
    return found;
  }

  static bool Contains(const BlockedTableRef& t, uint64_t hash) {
    return Probe(t, BlockedPlace<S>(hash, t.num_blocks, t.seed_mix));
  }

  // A single lookup: the same answer as Contains, computed so that the
  // common negative case is short. Inline part: the primary block's buckets'
  // low parts and the item's overflow bit (BlockedPlace's arithmetic,
  // except that bucket i2 is read through its unreduced index
  // i1 + 1 + offset, which the position tables cover, and that each
  // bucket's low parts are loaded directly, the rank's 12 bits skipped by
  // the table's shift; SemiSortedLowMayMatch's test, with the overflow bit
  // in the same integer so that one branch decides). It settles all
  // negatives but about 8 * 2^-kLowBits of them plus the share of overflow
  // bits set; the rest (and every positive) continue out of line in
  // PrimaryRest, which is given the hash and the primary block.
  //
  // Below kSingleSplitMinLowBits (f < 10), where a quarter (f = 9) to half
  // (f = 8) of negatives pass the low-part test, it is Contains: the call
  // and the slot computed twice would cost more than they save.
  static constexpr int kSingleSplitMinLowBits = 6;
  static bool ContainsSingle(const BlockedTableRef& t, uint64_t hash) {
    if constexpr (S::kLowBits < kSingleSplitMinLowBits) {
      return Contains(t, hash);
    } else {
      constexpr uint32_t kNb = BlockedBucketsPerBlock(S::kFpBits);
      constexpr uint64_t kLo = LaneOnes<uint64_t, S::kLowBits, 4>();
      constexpr uint64_t kHi = kLo << (S::kLowBits - 1);
      constexpr uint32_t kLowMask = (uint32_t{1} << S::kLowBits) - 1;
      const uint8_t* b =
          BlockAddress(t, BlockedPrimaryBlock(hash, t.num_blocks));
      const uint32_t fp = detail::Fingerprint(hash, S::kFpBits);
      const uint64_t g = (hash ^ t.seed_mix) * kBlockedPlaceMul;
      const uint64_t t1 = uint64_t{static_cast<uint32_t>(g >> 32)} * kNb;
      const uint32_t i1 = static_cast<uint32_t>(t1 >> 32);
      const uint64_t t2 = uint64_t{static_cast<uint32_t>(t1)} * (kNb - 1);
      const uint32_t i2u = i1 + 1 + static_cast<uint32_t>(t2 >> 32);
      const uint32_t overflow_class = static_cast<uint32_t>(t2) >> 29;
      const BlockedBucketPos p1 = kBlockedLowsPositions<S>.at[i1];
      const BlockedBucketPos p2 = kBlockedLowsPositions<S>.at[i2u];
      const uint64_t pattern = kLo * (fp & kLowMask);
      // The bits above the four low parts (the next bucket's, or the
      // overflow byte's) are left unmasked: x - kLo borrows only upwards,
      // so they cannot change the four lanes kHi tests.
      const uint64_t x1 = (LoadLE<uint64_t>(b + p1.byte) >> p1.shift) ^ pattern;
      const uint64_t x2 = (LoadLE<uint64_t>(b + p2.byte) >> p2.shift) ^ pattern;
      const uint64_t zero_lanes = ((x1 - kLo) & ~x1) | ((x2 - kLo) & ~x2);
      const uint32_t overflowed = (b[kBlockBytes - 1] >> overflow_class) & 1;
      if (__builtin_expect(((zero_lanes & kHi) | overflowed) == 0, 1)) {
        return false;
      }
      return PrimaryRest(t, hash, b);
    }
  }

 private:
  // The rest of ContainsSingle, given the item's primary block b: both
  // buckets there in full, then, if the item's overflow bit is set there,
  // its secondary block and the stash. Only the hash and the block are
  // passed (the slot is computed again, a few multiplies): values kept for
  // the call would be live across ContainsSingle's inline part.
  __attribute__((noinline)) static bool PrimaryRest(const BlockedTableRef& t,
                                                    uint64_t hash,
                                                    const uint8_t* b) {
    using Codec = BucketCodec<S>;
    const BlockedSlot s = BlockedPlace<S>(hash, t.num_blocks, t.seed_mix);
    const uint64_t w1 = BlockedBucketWord<S>(b, s.i1) & Codec::kWordMask;
    const uint64_t w2 = BlockedBucketWord<S>(b, s.i2) & Codec::kWordMask;
    if (Codec::SemiSortedContains(w1, s.fp) |
        Codec::SemiSortedContains(w2, s.fp)) {
      return true;
    }
    return Overflowed(b, s) && SecondaryRest(t, hash);
  }

  // The secondary block and the stash (out of line again, so that
  // PrimaryRest's common case saves no registers).
  __attribute__((noinline)) static bool SecondaryRest(const BlockedTableRef& t,
                                                      uint64_t hash) {
    return ProbeSecondary(t, BlockedPlace<S>(hash, t.num_blocks, t.seed_mix));
  }
};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_BLOCKED_BLOCKED_LAYOUT_H_
