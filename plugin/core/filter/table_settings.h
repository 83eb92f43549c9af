// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Compile-time parameters of a cuckoo table and the dispatch from runtime
// (f, b, semi-sort) values to them. Internal header.
#ifndef CUCKOO_PLUGIN_CORE_FILTER_TABLE_SETTINGS_H_
#define CUCKOO_PLUGIN_CORE_FILTER_TABLE_SETTINGS_H_

#include <cstdint>
#include <type_traits>
#include <utility>

#include "util/bit_util.h"

namespace cuckoo {
namespace internal {

// One supported configuration. Buckets are bit-packed back to back: bucket i
// starts at bit i * kBucketBits of the table. A bucket is read as one or two
// fixed-width little-endian words, so a lookup never loops over slots.
using detail::Gcd;

template <int kFingerprintBits, int kBucketSize, bool kSemiSorted>
struct TableSettings {
  static constexpr int kFpBits = kFingerprintBits;
  static constexpr int kSlots = kBucketSize;
  static constexpr bool kSemiSort = kSemiSorted;

  static_assert(kFpBits >= 4 && kFpBits <= 32,
                "fingerprints are 4..32 bits (entries are read as uint32_t)");
  static_assert(kSlots == 1 || kSlots == 2 || kSlots == 4 || kSlots == 8,
                "buckets hold 1, 2, 4 or 8 entries");
  static_assert(!kSemiSort || (kSlots == 4 && kFpBits <= 16),
                "semi-sorting packs exactly 4 entries of at most 16 bits");

  static constexpr uint32_t kFpMask =
      kFpBits == 32 ? 0xffffffffu : (uint32_t{1} << kFpBits) - 1;
  // Semi-sorted: a 12-bit rank of the sorted high nibbles plus 4 low parts.
  static constexpr int kLowBits = kFpBits - 4;
  static constexpr int kBucketBits =
      detail::BucketBits(kFpBits, kSlots, kSemiSort);
  // Only b=8, f=32 (256 bits) needs two words per bucket.
  static constexpr int kWordsPerBucket = kBucketBits > 128 ? 2 : 1;
  static constexpr int kWordBits = kBucketBits / kWordsPerBucket;
  static constexpr int kSlotsPerWord = kSlots / kWordsPerBucket;
  // A word is loaded from its first byte and shifted right by the bit offset
  // of its start within that byte. Word starts are multiples of
  // gcd(kBucketBits, kWordBits, 8) bits, so that offset is at most
  // kMaxShift, and a 64-bit load suffices when kWordBits + kMaxShift <= 64.
  static constexpr int kAlign = Gcd(Gcd(kBucketBits, kWordBits), 8);
  static constexpr int kMaxShift = 8 - kAlign;
  using Word =
      std::conditional_t<(kWordBits + kMaxShift <= 64), uint64_t, uint128_t>;
  static_assert(kWordBits + kMaxShift <= 128,
                "a bucket word must fit one unaligned 128-bit load");
  // Two-word buckets (b = 8, f > 16) need not be byte aligned: each word is
  // loaded at its own bit offset, within the 128-bit bound above.

  // Bytes of a table of `num_buckets` buckets.
  static constexpr uint64_t TableBytes(uint64_t num_buckets) {
    return (num_buckets * kBucketBits + 7) / 8;
  }
};

// Bytes that may be read past the end of the table by a bucket load.
constexpr uint64_t kTableLoadSlack = 16;

template <int F, typename Fn>
bool DispatchBucketSize(int bucket_size, bool semi_sort, Fn& fn) {
  if (semi_sort) {
    if constexpr (F <= 16) {
      if (bucket_size == 4) {
        fn(TableSettings<F, 4, true>{});
        return true;
      }
    }
    return false;
  }
  switch (bucket_size) {
    case 1:
      fn(TableSettings<F, 1, false>{});
      return true;
    case 2:
      fn(TableSettings<F, 2, false>{});
      return true;
    case 4:
      fn(TableSettings<F, 4, false>{});
      return true;
    case 8:
      fn(TableSettings<F, 8, false>{});
      return true;
    default:
      return false;
  }
}

template <typename Fn, int... Fs>
bool DispatchFingerprint(int fp_bits, int bucket_size, bool semi_sort, Fn& fn,
                         std::integer_sequence<int, Fs...>) {
  bool dispatched = false;
  ((fp_bits == Fs &&
    (dispatched = DispatchBucketSize<Fs>(bucket_size, semi_sort, fn))),
   ...);
  return dispatched;
}

// Calls fn(TableSettings<f, b, semi>{}) for a supported configuration and
// returns true; returns false (fn not called) otherwise.
template <typename Fn>
bool DispatchSettings(int fp_bits, int bucket_size, bool semi_sort, Fn&& fn) {
  return DispatchFingerprint(
      fp_bits, bucket_size, semi_sort, fn,
      std::integer_sequence<int, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                            17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
                            30, 31, 32>{});
}

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_FILTER_TABLE_SETTINGS_H_
