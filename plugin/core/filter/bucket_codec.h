// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Reading, matching and writing one packed bucket. Internal header.
//
// Plain bucket (b entries of f bits), entry j at bits [j*f, (j+1)*f):
//
//   | entry b-1 | ... | entry 1 | entry 0 |      (bit 0 on the right)
//
// Semi-sorted bucket (b = 4), entries sorted by value so their high nibbles
// are ascending; the nibbles are replaced by their 12-bit rank:
//
//   | low 3 | low 2 | low 1 | low 0 | rank (12 bits) |
//    f-4 bits each
//
// Lookups compare all entries of a word at once (SWAR), without a branch per
// entry.
#ifndef CUCKOO_PLUGIN_CORE_FILTER_BUCKET_CODEC_H_
#define CUCKOO_PLUGIN_CORE_FILTER_BUCKET_CODEC_H_

#include <cstdint>

#include "filter/semi_sort.h"
#include "filter/table_settings.h"
#include "util/bit_util.h"

namespace cuckoo {
namespace internal {

// kLanes copies of bit 0 of a kLaneBits-wide lane.
template <typename Word, int kLaneBits, int kLanes>
constexpr Word LaneOnes() {
  Word ones = 0;
  for (int j = 0; j < kLanes; ++j) ones |= Word{1} << (j * kLaneBits);
  return ones;
}

// True if any kLaneBits-wide lane of x (kLanes lanes) is zero. Exact: a
// borrow can only start in a lane that is zero.
template <typename Word, int kLaneBits, int kLanes>
inline bool AnyZeroLane(Word x) {
  constexpr Word kLo = LaneOnes<Word, kLaneBits, kLanes>();
  constexpr Word kHi = kLo << (kLaneBits - 1);
  return ((x - kLo) & ~x & kHi) != 0;
}

// A 4-bit mask with bit j set iff lane j (of 4 lanes, kLaneBits wide) of x is
// zero. Carry-free, so each lane is judged independently.
template <int kLaneBits>
inline uint32_t ZeroLaneMask4(uint64_t x) {
  constexpr uint64_t kLo = LaneOnes<uint64_t, kLaneBits, 4>();
  constexpr uint64_t kHi = kLo << (kLaneBits - 1);
  constexpr uint64_t kLowPart = (kLo * ((uint64_t{1} << kLaneBits) - 1)) ^ kHi;
  const uint64_t z = ~(((x & kLowPart) + kLowPart) | x) & kHi;
  constexpr int kStep = kLaneBits - 1;  // lane j's top bit moves to bit j
  return static_cast<uint32_t>(((z >> kStep) & 1) | ((z >> (2 * kStep)) & 2) |
                               ((z >> (3 * kStep)) & 4) |
                               ((z >> (4 * kStep)) & 8));
}

template <typename S>
struct BucketCodec {
  using Word = typename S::Word;
  static constexpr int kWordBitsOfType = static_cast<int>(sizeof(Word) * 8);
  static constexpr Word kWordMask = S::kWordBits == kWordBitsOfType
                                        ? ~Word{0}
                                        : (Word{1} << S::kWordBits) - 1;

  static uint64_t WordBitPos(uint64_t bucket, int word) {
    return bucket * S::kBucketBits + uint64_t(word) * S::kWordBits;
  }

  // Address of the first byte of a bucket (for prefetching).
  static const uint8_t* BucketAddress(const uint8_t* table, uint64_t bucket) {
    return table + ((bucket * S::kBucketBits) >> 3);
  }

  static Word LoadWord(const uint8_t* table, uint64_t bit_pos) {
    const Word raw = LoadLE<Word>(table + (bit_pos >> 3));
    return (raw >> (bit_pos & 7)) & kWordMask;
  }

  static void StoreWord(uint8_t* table, uint64_t bit_pos, Word value) {
    uint8_t* p = table + (bit_pos >> 3);
    const int shift = static_cast<int>(bit_pos & 7);
    Word raw = LoadLE<Word>(p);
    raw = (raw & ~(kWordMask << shift)) | (value << shift);
    StoreLE<Word>(p, raw);
  }

  // True if the bucket holds fingerprint fp (fp != 0).
  static bool Contains(const uint8_t* table, uint64_t bucket, uint32_t fp) {
    if constexpr (S::kSemiSort) {
      return SemiSortedContains(LoadWord(table, WordBitPos(bucket, 0)), fp);
    } else {
      constexpr Word kLo = LaneOnes<Word, S::kFpBits, S::kSlotsPerWord>();
      const Word pattern = kLo * Word{fp};
      bool found = false;
      for (int w = 0; w < S::kWordsPerBucket; ++w) {
        found |= AnyZeroLane<Word, S::kFpBits, S::kSlotsPerWord>(
            LoadWord(table, WordBitPos(bucket, w)) ^ pattern);
      }
      return found;
    }
  }

  static bool SemiSortedContains(Word word, uint32_t fp) {
    if constexpr (S::kLowBits >= 4) {
      // Lane j of d is zero iff entry j equals fp: its low part and its
      // high nibble (from the rank, pre-spread to the same lanes) both match.
      constexpr uint64_t kLo = LaneOnes<uint64_t, S::kLowBits, 4>();
      constexpr uint64_t kHi = kLo << (S::kLowBits - 1);
      constexpr uint32_t kLowMask = (uint32_t{1} << S::kLowBits) - 1;
      const uint64_t nibbles =
          kSemiSortSpread<S::kLowBits>[static_cast<uint32_t>(word) & 0xfff];
      const uint64_t lows = static_cast<uint64_t>(word >> 12);
      const uint64_t d = (lows ^ (kLo * (fp & kLowMask))) |
                         (nibbles ^ (kLo * (fp >> S::kLowBits)));
      return ((d - kLo) & ~d & kHi) != 0;
    } else {
      return SemiSortedContainsNarrow(word, fp);
    }
  }

  // False only if no entry's low part (the f - 4 bits beside the rank)
  // equals fp's, which rules fp out without decoding the rank: a cheap
  // first test for lookups that are mostly negative. For kLowBits >= 4
  // (f >= 8); a true answer needs SemiSortedContains to confirm.
  static bool SemiSortedLowMayMatch(Word word, uint32_t fp) {
    static_assert(S::kSemiSort && S::kLowBits >= 4, "low parts of >= 4 bits");
    constexpr uint64_t kLo = LaneOnes<uint64_t, S::kLowBits, 4>();
    constexpr uint32_t kLowMask = (uint32_t{1} << S::kLowBits) - 1;
    constexpr uint64_t kLowsMask = (uint64_t{1} << (4 * S::kLowBits)) - 1;
    const uint64_t lows = static_cast<uint64_t>(word >> 12) & kLowsMask;
    return AnyZeroLane<uint64_t, S::kLowBits, 4>(lows ^
                                                 (kLo * (fp & kLowMask)));
  }

  // Low parts narrower than a nibble: per-lane zero masks, combined.
  static bool SemiSortedContainsNarrow(Word word, uint32_t fp) {
    const uint32_t nibbles =
        kSemiSortDecode[static_cast<uint32_t>(word) & 0xfff];
    uint32_t match =
        ZeroLaneMask4<4>(nibbles ^ ((fp >> S::kLowBits) * 0x1111u));
    if constexpr (S::kLowBits > 0) {
      constexpr uint64_t kLo = LaneOnes<uint64_t, S::kLowBits, 4>();
      constexpr uint32_t kLowMask = (uint32_t{1} << S::kLowBits) - 1;
      const uint64_t lows = static_cast<uint64_t>(word >> 12);
      match &= ZeroLaneMask4<S::kLowBits>(lows ^ (kLo * (fp & kLowMask)));
    }
    return match != 0;
  }

  // Reads all entries of a bucket (0 = empty slot).
  static void Read(const uint8_t* table, uint64_t bucket,
                   uint32_t (&entries)[S::kSlots]) {
    if constexpr (S::kSemiSort) {
      const Word word = LoadWord(table, WordBitPos(bucket, 0));
      const uint32_t nibbles =
          kSemiSortDecode[static_cast<uint32_t>(word) & 0xfff];
      for (int j = 0; j < 4; ++j) {
        const uint32_t low =
            static_cast<uint32_t>(word >> (12 + j * S::kLowBits)) &
            ((uint32_t{1} << S::kLowBits) - 1);
        entries[j] = (((nibbles >> (4 * j)) & 0xf) << S::kLowBits) | low;
      }
    } else {
      for (int w = 0; w < S::kWordsPerBucket; ++w) {
        const Word word = LoadWord(table, WordBitPos(bucket, w));
        for (int j = 0; j < S::kSlotsPerWord; ++j) {
          entries[w * S::kSlotsPerWord + j] =
              static_cast<uint32_t>(word >> (j * S::kFpBits)) & S::kFpMask;
        }
      }
    }
  }

  // The kBucketBits-bit word of a semi-sorted bucket holding `entries`
  // (0 = empty slot), in any order.
  static Word EncodeSemiSorted(const uint32_t (&entries)[4]) {
    static_assert(S::kSemiSort && S::kSlots == 4, "semi-sorted buckets");
    uint32_t e[4] = {entries[0], entries[1], entries[2], entries[3]};
    SortFour(e);
    uint32_t packed_nibbles = 0;
    Word word = 0;
    for (int j = 0; j < 4; ++j) {
      packed_nibbles |= (e[j] >> S::kLowBits) << (4 * j);
      word |= Word{e[j] & ((uint32_t{1} << S::kLowBits) - 1)}
              << (12 + j * S::kLowBits);
    }
    return word | SemiSortEncode(packed_nibbles);
  }

  // Word w of the bucket holding `entries` (the value Write stores there).
  static Word EncodeWord(const uint32_t (&entries)[S::kSlots], int w) {
    if constexpr (S::kSemiSort) {
      return EncodeSemiSorted(entries);
    } else {
      Word word = 0;
      for (int j = 0; j < S::kSlotsPerWord; ++j) {
        word |= Word{entries[w * S::kSlotsPerWord + j]} << (j * S::kFpBits);
      }
      return word;
    }
  }

  // Writes all entries of a bucket. Semi-sorted buckets are re-sorted.
  static void Write(uint8_t* table, uint64_t bucket,
                    const uint32_t (&entries)[S::kSlots]) {
    if constexpr (S::kSemiSort) {
      StoreWord(table, WordBitPos(bucket, 0), EncodeSemiSorted(entries));
    } else {
      for (int w = 0; w < S::kWordsPerBucket; ++w) {
        Word word = 0;
        for (int j = 0; j < S::kSlotsPerWord; ++j) {
          word |= Word{entries[w * S::kSlotsPerWord + j]} << (j * S::kFpBits);
        }
        StoreWord(table, WordBitPos(bucket, w), word);
      }
    }
  }

 private:
  static void CompareSwap(uint32_t& a, uint32_t& b) {
    const uint32_t lo = a < b ? a : b;
    const uint32_t hi = a < b ? b : a;
    a = lo;
    b = hi;
  }
  // Sorting network for 4 values.
  static void SortFour(uint32_t (&e)[4]) {
    CompareSwap(e[0], e[1]);
    CompareSwap(e[2], e[3]);
    CompareSwap(e[0], e[2]);
    CompareSwap(e[1], e[3]);
    CompareSwap(e[1], e[2]);
  }
};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_FILTER_BUCKET_CODEC_H_
