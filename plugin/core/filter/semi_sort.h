// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Semi-sorting of 4-entry buckets (paper section 5.2): the high 4 bits of the
// 4 fingerprints of a bucket, sorted, form one of C(19, 4) = 3876 multisets,
// stored as a 12-bit rank instead of 16 bits. Internal header.
//
// A sorted nibble quadruple a <= b <= c <= d is packed as the 16-bit value
// a | b << 4 | c << 8 | d << 12. Its rank is the combinatorial number system
// index of the strictly increasing (a, b+1, c+2, d+3):
//   rank = C(a,1) + C(b+1,2) + C(c+2,3) + C(d+3,4)   in [0, 3876).
#ifndef CUCKOO_PLUGIN_CORE_FILTER_SEMI_SORT_H_
#define CUCKOO_PLUGIN_CORE_FILTER_SEMI_SORT_H_

#include <array>
#include <cstdint>

namespace cuckoo {
namespace internal {

constexpr uint32_t kSemiSortCombinations = 3876;
// Decode entries beyond the valid ranks (reachable only from corrupt bytes)
// decode to all-zero nibbles, so any 12-bit index is safe to look up.
constexpr uint32_t kSemiSortTableSize = 4096;

// Rank of the sorted nibbles a <= b <= c <= d.
constexpr uint32_t SemiSortRank(uint32_t a, uint32_t b, uint32_t c,
                                uint32_t d) {
  b += 1;
  c += 2;
  d += 3;
  return a + b * (b - 1) / 2 + c * (c - 1) * (c - 2) / 6 +
         d * (d - 1) * (d - 2) * (d - 3) / 24;
}

// Rank of a packed, sorted nibble quadruple.
// SemiSortRank's terms for each nibble value, so that encoding is three
// loads and adds (the polynomial's multiplies and divisions kept GCC from
// inlining the encoder, which the bulk builders call once per bucket).
template <int kTerm>
constexpr std::array<uint16_t, 16> MakeSemiSortTermTable() {
  std::array<uint16_t, 16> t{};
  for (uint32_t v = 0; v < 16; ++v) {
    t[v] = static_cast<uint16_t>(
        kTerm == 1   ? SemiSortRank(0, v, v, v) - SemiSortRank(0, 0, v, v)
        : kTerm == 2 ? SemiSortRank(0, 0, v, v) - SemiSortRank(0, 0, 0, v)
                     : SemiSortRank(0, 0, 0, v) - SemiSortRank(0, 0, 0, 0));
  }
  return t;
}
inline constexpr std::array<uint16_t, 16> kSemiSortTerm1 =
    MakeSemiSortTermTable<1>();
inline constexpr std::array<uint16_t, 16> kSemiSortTerm2 =
    MakeSemiSortTermTable<2>();
inline constexpr std::array<uint16_t, 16> kSemiSortTerm3 =
    MakeSemiSortTermTable<3>();

// The rank of four sorted nibbles (a <= b <= c <= d, a in bits 0-3).
constexpr uint32_t SemiSortEncode(uint32_t packed) {
  return (packed & 0xf) + kSemiSortTerm1[(packed >> 4) & 0xf] +
         kSemiSortTerm2[(packed >> 8) & 0xf] +
         kSemiSortTerm3[(packed >> 12) & 0xf];
}
static_assert(SemiSortEncode(0xfedc) == SemiSortRank(0xc, 0xd, 0xe, 0xf) &&
                  SemiSortEncode(0xffff) == SemiSortRank(15, 15, 15, 15) &&
                  SemiSortEncode(0x7310) == SemiSortRank(0, 1, 3, 7),
              "the term tables add up to SemiSortRank");

constexpr std::array<uint16_t, kSemiSortTableSize> MakeSemiSortDecodeTable() {
  std::array<uint16_t, kSemiSortTableSize> table{};
  for (uint32_t a = 0; a < 16; ++a)
    for (uint32_t b = a; b < 16; ++b)
      for (uint32_t c = b; c < 16; ++c)
        for (uint32_t d = c; d < 16; ++d)
          table[SemiSortRank(a, b, c, d)] =
              static_cast<uint16_t>(a | b << 4 | c << 8 | d << 12);
  return table;
}

// rank -> packed sorted nibbles.
inline constexpr std::array<uint16_t, kSemiSortTableSize> kSemiSortDecode =
    MakeSemiSortDecodeTable();

// rank -> sorted nibbles spread to kLaneBits-wide lanes (nibble j at bit
// j * kLaneBits), so that they line up with the low parts of the entries in
// a semi-sorted bucket of (kLaneBits + 4)-bit fingerprints. Invalid ranks
// map to 0, like kSemiSortDecode.
template <int kLaneBits>
constexpr std::array<uint64_t, kSemiSortTableSize> MakeSemiSortSpreadTable() {
  static_assert(kLaneBits >= 4 && kLaneBits <= 12,
                "lanes hold a nibble, 4 fit 64 bits");
  std::array<uint64_t, kSemiSortTableSize> table{};
  for (uint32_t rank = 0; rank < kSemiSortTableSize; ++rank) {
    const uint32_t packed = kSemiSortDecode[rank];
    uint64_t spread = 0;
    for (int j = 0; j < 4; ++j) {
      spread |= uint64_t{(packed >> (4 * j)) & 0xf} << (j * kLaneBits);
    }
    table[rank] = spread;
  }
  return table;
}

template <int kLaneBits>
inline constexpr std::array<uint64_t, kSemiSortTableSize> kSemiSortSpread =
    MakeSemiSortSpreadTable<kLaneBits>();

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_FILTER_SEMI_SORT_H_
