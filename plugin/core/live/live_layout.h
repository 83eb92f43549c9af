// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Where a key lives in a live table and how its fingerprint is stored: the
// arithmetic shared by lookups, inserts, splits and snapshot validation.
// Internal header; RocksDB-free.
//
// Bucket word: one aligned 64-bit word holds b = floor(64 / f) slots of f
// bits (f = 8..16; f = 12 gives 5 slots and 4 spare bits, always 0). Slot j
// is bits [j*f, (j+1)*f). A slot of value 0 is empty, so zeroed memory is an
// empty table.
//
// Two-level bucket coordinates. A table has c base buckets (c even) and has
// been split d times since it was built from keys (its level); it has
// m = c * 2^d buckets, bucket index = l * c + a with a in [0, c), l in
// [0, 2^d). For an item hash h:
//   G    = the top f bits of h; the value 2^f - 1 is replaced by 2^f - 2, so
//          that a stored slot is never 0 (below);
//   a1   = FastRange32(low 32 bits of h, c);
//   tag  = the top T = 4 bits of G; a2 = Alt(a1, tag) = (c - a1 - r(tag))
//          mod c with r(tag) odd and c even, so a2 != a1 and Alt is an
//          involution; r of the 16 tags is precomputed per table;
//   l    = the d lowest bits of G; the buckets are l*c + a1 and l*c + a2.
// The compared fingerprint is G >> d (w = f - d bits: the width).
//
// Stored slot at level d: (~G within f bits) | (2^d - 1). At level 0 that is
// G's complement (never 0, since G != 2^f - 1); from level 1 on, its low d
// bits are ones (never 0 either), and the top w bits are the complement of
// the compared fingerprint. A lookup compares whole slots against this
// pattern.
//
// Split (level d -> d + 1, no key needed): bit d of a stored slot is the
// complement of G's bit d. An entry of bucket i moves to bucket i + m when
// G's bit d is 1 (slot bit d is 0), and stays in bucket i otherwise; its slot
// becomes slot | 2^d. Both buckets of an item share l, and Alt depends only
// on the stable tag, so the pair moves together and stays a pair; a source
// bucket feeds only buckets i and i + m of the new table, so nothing
// overflows. At most D_max = f - T splits (the tag is never consumed).
//
// False positive rate at load a: 1 - (1 - 1/V)^(2 b a), V = 2^w values of
// the compared fingerprint (2^f - 1 at level 0): about 2 b a / 2^w, so each
// split doubles it at equal load.
#ifndef CUCKOO_PLUGIN_CORE_LIVE_LIVE_LAYOUT_H_
#define CUCKOO_PLUGIN_CORE_LIVE_LIVE_LAYOUT_H_

#include <cstdint>

#include "cuckoo/detail/live_probe.h"  // LivePlaceOf, LiveMatch
#include "util/bit_util.h"             // FastRange32, Mix32

namespace cuckoo {
namespace internal {

constexpr int kLiveMinFingerprintBits = 8;
constexpr int kLiveMaxFingerprintBits = 16;
// Stable alternate-bucket tag bits: never moved into the bucket index.
constexpr int kLiveTagBits = 4;
constexpr int kLiveTags = 1 << kLiveTagBits;
// Largest table: bucket indexes are 32-bit (and 2^32 - 1 is never one).
constexpr uint64_t kLiveMaxBuckets = (uint64_t{1} << 32) - 2;

constexpr int LiveSlotsPerBucket(int fingerprint_bits) {
  return 64 / fingerprint_bits;
}
constexpr int LiveMaxLevel(int fingerprint_bits) {
  return fingerprint_bits - kLiveTagBits;
}

// Where one item is looked for: its two buckets and the slot value that
// matches it.
using LivePlace = detail::LivePlace;
static_assert(kLiveTags == 16 && kLiveTagBits == 4,
              "detail::LivePlaceOf takes the tag as the hash's top 4 bits");

// The placement parameters of one table (f, b, c, d, seed), with the SWAR
// constants derived from them. Immutable once made.
class LiveLayout {
 public:
  LiveLayout() = default;
  // f in [8, 16], c even >= 2, 0 <= d <= f - T, c * 2^d <= kLiveMaxBuckets.
  LiveLayout(int fingerprint_bits, uint64_t base_buckets, int level,
             uint32_t seed)
      : f_(fingerprint_bits),
        b_(LiveSlotsPerBucket(fingerprint_bits)),
        d_(level),
        seed_(seed) {
    detail::LivePlacement& p = p_;
    p.c = static_cast<uint32_t>(base_buckets);
    p.shift = static_cast<uint32_t>(64 - fingerprint_bits);
    p.slot_mask = (uint32_t{1} << fingerprint_bits) - 1;
    p.low_mask = (uint32_t{1} << level) - 1;
    for (int j = 0; j < b_; ++j) p.lane_ones |= uint64_t{1} << (j * f_);
    p.lane_highs = p.lane_ones << (f_ - 1);
    for (uint32_t t = 0; t < kLiveTags; ++t) {
      // r(t): odd, in [1, c - 1] (c even). Stored as c - r(t), in [1, c - 1].
      const uint32_t r = FastRange32(Mix32(t * 0x9e3779b9u ^ seed), p.c) | 1;
      p.c_minus_r[t] = p.c - r;
    }
  }

  int fingerprint_bits() const { return f_; }
  int slots() const { return b_; }
  int level() const { return d_; }
  int width() const { return f_ - d_; }
  uint64_t base_buckets() const { return p_.c; }
  uint64_t num_buckets() const { return uint64_t{p_.c} << d_; }
  uint32_t seed() const { return seed_; }
  bool can_split() const {
    return d_ < LiveMaxLevel(f_) && 2 * num_buckets() <= kLiveMaxBuckets;
  }
  // The layout after one more split.
  LiveLayout Split() const { return LiveLayout(f_, p_.c, d_ + 1, seed_); }
  // The constants of the inline lookup path.
  const detail::LivePlacement& placement() const { return p_; }

  LivePlace Place(uint64_t hash) const { return detail::LivePlaceOf(p_, hash); }

  // The other bucket of the entry with stored value `slot` in bucket i.
  uint64_t AltOf(uint64_t i, uint32_t slot) const {
    const uint64_t l = i / p_.c;
    const uint32_t a = static_cast<uint32_t>(i - l * p_.c);
    const uint32_t tag = (~slot >> (f_ - kLiveTagBits)) & (kLiveTags - 1);
    return l * p_.c + Alt(a, tag);
  }

  // True if a slot of `word` equals `pattern` (non-zero). SWAR: exact, as a
  // borrow can only start in a lane that is zero after the XOR.
  bool Match(uint64_t word, uint32_t pattern) const {
    return detail::LiveMatch(p_, word, pattern);
  }

  uint32_t Slot(uint64_t word, int j) const {
    return static_cast<uint32_t>(word >> (j * f_)) & p_.slot_mask;
  }
  uint64_t WithSlot(uint64_t word, int j, uint32_t value) const {
    return (word & ~(uint64_t{p_.slot_mask} << (j * f_))) |
           (uint64_t{value} << (j * f_));
  }
  // Index of an empty slot, or -1.
  int EmptySlot(uint64_t word) const {
    for (int j = 0; j < b_; ++j) {
      if (Slot(word, j) == 0) return j;
    }
    return -1;
  }
  int CountEntries(uint64_t word) const {
    int n = 0;
    for (int j = 0; j < b_; ++j) n += Slot(word, j) != 0;
    return n;
  }
  // True if every bit outside the slots is 0 and every entry has the low d
  // bits a slot of this level always has (a structural check for decoding).
  bool ValidWord(uint64_t word) const {
    if (b_ * f_ < 64 && (word >> (b_ * f_)) != 0) return false;
    for (int j = 0; j < b_; ++j) {
      const uint32_t s = Slot(word, j);
      if (s != 0 && (s & p_.low_mask) != p_.low_mask) return false;
    }
    return true;
  }

  // Splits one bucket word of this level: the entries that stay in bucket i
  // (*low) and those that move to bucket i + m (*high), as stored at the
  // next level.
  void SplitWord(uint64_t word, uint64_t* low, uint64_t* high) const {
    uint64_t lo = 0, hi = 0;
    int nlo = 0, nhi = 0;
    const uint32_t bit = uint32_t{1} << d_;
    for (int j = 0; j < b_; ++j) {
      const uint32_t s = Slot(word, j);
      if (s == 0) continue;
      if ((s & bit) != 0) {
        lo |= uint64_t{s} << (nlo++ * f_);
      } else {
        hi |= uint64_t{s | bit} << (nhi++ * f_);
      }
    }
    *low = lo;
    *high = hi;
  }

 private:
  uint32_t Alt(uint32_t a, uint32_t tag) const {
    // (c - a - r) mod c = (c - r) - a, plus c if negative: c - r in
    // [1, c - 1] and a in [0, c).
    const uint32_t cr = p_.c_minus_r[tag];
    const uint32_t x = cr - a;
    return cr < a ? x + p_.c : x;
  }

  int f_ = 0;
  int b_ = 0;
  int d_ = 0;
  uint32_t seed_ = 0;
  detail::LivePlacement p_;
};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_LIVE_LIVE_LAYOUT_H_
