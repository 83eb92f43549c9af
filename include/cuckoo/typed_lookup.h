// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Layout-typed lookups for loops of many independent Contains calls.
//
// CuckooFilter::Contains and CuckooFilterView::Contains read the filter's
// layout (f, b, semi-sort) at run time on every call. VisitLookup reads it
// once and calls the caller's function with a TypedLookup whose layout is a
// compile-time constant, so the caller's own loop compiles to a short lookup
// with every constant in a register or an immediate (GCC 12 -O3, f = 12,
// b = 4: 47 instructions per key with the precomputed alternate-bucket
// offsets of a large filter, about 60 without; the public Contains loop
// about 75). On tables larger than the CPU
// caches a lookup is bound by its two cache misses, and the CPU overlaps the
// misses of as many consecutive lookups as its out-of-order window holds:
// the fewer instructions per lookup, the more lookups are in flight.
//
// Example (examples/core_filter.cc):
//   #include "cuckoo/typed_lookup.h"
//
//   uint64_t hits = cuckoo::VisitLookup(*users, [&](auto lookup) {
//     uint64_t n = 0;
//     for (cuckoo::KeyHash q : all) n += lookup.Contains(q);
//     return n;
//   });
//
// The function is called exactly once, with either a TypedLookup<f, b,
// semi> (every layout whose bucket fits one 64-bit load: b = 1, 2 and 4 up
// to f = 32, 16 and 16 (except b = 2, f = 31), b = 8 up to f = 8, semi-sorted
// f = 8..16) or, for every other layout and for an invalid view, a
// GenericLookup that calls the filter's Contains. Both answer exactly like
// the filter's Contains. Write the function as a generic lambda (`auto`
// parameter); it is compiled once per layout, so keep it small (a loop), and
// give every instantiation the same return type.
//
// A lookup object holds a pointer into the filter's table: it is valid as
// long as a CuckooFilterView over the same bytes would be (until the filter
// is modified or destroyed). Cheap to copy, thread-safe for reading.
#ifndef CUCKOO_TYPED_LOOKUP_H_
#define CUCKOO_TYPED_LOOKUP_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cuckoo/cuckoo_filter.h"
#include "cuckoo/detail/probe.h"

namespace cuckoo {

namespace detail {

// Compile-time layout of a table whose bucket is read with one 64-bit load:
// the same bit packing as the table code (plugin/core/filter/table_settings.h,
// bucket_codec.h); a test checks both agree on every layout.
template <int kFpBits, int kBucketSize, bool kSemiSort>
struct LookupLayout {
  static constexpr int kBucketBits =
      BucketBits(kFpBits, kBucketSize, kSemiSort);
  // A bucket starts at a multiple of gcd(bucket bits, 8) bits, so the load
  // from its first byte is shifted by at most kMaxShift bits.
  static constexpr int kMaxShift = 8 - Gcd(kBucketBits, 8);
  static constexpr bool kSupported =
      kFpBits >= 4 && kFpBits <= 32 &&
      (kSemiSort ? (kBucketSize == 4 && kFpBits >= 8 && kFpBits <= 16)
                 : ((kBucketSize == 1 || kBucketSize == 2 || kBucketSize == 4 ||
                     kBucketSize == 8) &&
                    kBucketBits + kMaxShift <= 64));
  // Lane width and count of the word compared at once: the fingerprints of
  // a plain bucket, the low parts (f - 4 bits) of a semi-sorted one.
  static constexpr int kLaneBits = kSemiSort ? kFpBits - 4 : kFpBits;
  static constexpr int kLanes = kSemiSort ? 4 : kBucketSize;
  static constexpr uint64_t LaneOnes() {
    uint64_t v = 0;
    for (int j = 0; j < kLanes; ++j) v |= uint64_t{1} << (j * kLaneBits);
    return v;
  }
  static constexpr uint64_t kLaneLo = LaneOnes();
  static constexpr uint64_t kLaneHi = kLaneLo << (kLaneBits - 1);
};

struct LookupAccess;

}  // namespace detail

// Lookups in a filter of one compile-time layout: f-bit fingerprints,
// b-entry buckets, semi-sorted or not. Made by VisitLookup only.
template <int kFpBits, int kBucketSize, bool kSemiSort>
class TypedLookup {
  using Layout = detail::LookupLayout<kFpBits, kBucketSize, kSemiSort>;
  static_assert(Layout::kSupported,
                "TypedLookup covers the layouts read with one 64-bit load");

 public:
  static constexpr int kFingerprintBits = kFpBits;
  static constexpr int kSlots = kBucketSize;
  static constexpr bool kSemiSorted = kSemiSort;
  static constexpr bool kTyped = true;

  // As CuckooFilter::Contains: both buckets are loaded without a branch
  // between them, then the victim slot is compared.
  bool Contains(KeyHash hash) const {
    const uint64_t h = hash.value;
    const uint32_t fp = detail::Fingerprint(h, kFpBits);
    const uint32_t i1 = detail::PrimaryBucket(h, num_buckets_);
    const uint32_t i2 =
        detail::AltBucketWith(alt_offsets_, i1, fp, num_buckets_, seed_);
    // The victim slot holds an item only in a full filter, and fp (never 0)
    // equals its fingerprint (0 when empty) about once in 2^f lookups: a
    // branch that is predicted, two instructions instead of nine.
    if (__builtin_expect(fp == victim_fp_, 0)) {
      if ((i1 == victim_bucket_) | (i2 == victim_bucket_)) return true;
    }
    return BucketHas(i1, fp) | BucketHas(i2, fp);
  }
  bool Contains(std::string_view key) const { return Contains(HashKey(key)); }
  template <typename Int, typename = std::enable_if_t<std::is_integral_v<Int>>>
  bool Contains(Int) const = delete;  // see CuckooFilter::Insert

  // Requests both buckets of the item into the cache, for callers that
  // pipeline their own loops (probe the item a few iterations later).
  void Prefetch(KeyHash hash) const {
    const uint64_t h = hash.value;
    const uint32_t fp = detail::Fingerprint(h, kFpBits);
    const uint32_t i1 = detail::PrimaryBucket(h, num_buckets_);
    const uint32_t i2 = detail::AltBucket(i1, fp, num_buckets_, seed_);
    __builtin_prefetch(table_ + ((uint64_t{i1} * Layout::kBucketBits) >> 3));
    __builtin_prefetch(table_ + ((uint64_t{i2} * Layout::kBucketBits) >> 3));
  }

 private:
  friend struct detail::LookupAccess;

  bool BucketHas(uint32_t bucket, uint32_t fp) const {
    const uint64_t bit = uint64_t{bucket} * Layout::kBucketBits;
    uint64_t raw;
    std::memcpy(&raw, table_ + (bit >> 3), sizeof(raw));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    raw = __builtin_bswap64(raw);
#endif
    if constexpr (Layout::kMaxShift != 0) raw >>= (bit & 7);
    // The bits above the bucket (the next bucket's) are not masked off: a
    // borrow only moves upwards and only lane tops are tested, so they
    // cannot change the answer.
    const uint64_t word = raw;
    // kLo * fp as one multiply: left as a constant, GCC spells it as four
    // shifts and adds per bucket; the empty asm hides the value, and the
    // loop-invariant register it lands in is hoisted out of the loop.
    uint64_t kLo = Layout::kLaneLo;
    __asm__("" : "+r"(kLo));
    uint64_t d;  // lane j is zero iff entry j equals fp
    if constexpr (kSemiSort) {
      // 12-bit rank of the sorted high nibbles, then 4 low parts.
      constexpr uint32_t kLowMask = (uint32_t{1} << Layout::kLaneBits) - 1;
      d = ((word >> 12) ^ (kLo * (fp & kLowMask))) |
          (spread_[word & 0xfff] ^ (kLo * (fp >> Layout::kLaneBits)));
    } else {
      d = word ^ (kLo * fp);
    }
    // Any zero lane; exact, since a borrow can only start in a zero lane.
    return ((d - kLo) & ~d & Layout::kLaneHi) != 0;
  }

  const uint8_t* table_ = nullptr;
  const uint32_t* alt_offsets_ = nullptr;  // detail::AltOffset per fp, or null
  const uint64_t* spread_ = nullptr;       // semi-sorted: rank -> high nibbles
  uint32_t num_buckets_ = 0;
  uint32_t seed_ = 0;
  uint32_t victim_fp_ = 0;
  uint32_t victim_bucket_ = 0;
};

// Lookups in a filter of a layout without a TypedLookup (or an invalid
// view): each call is CuckooFilterView::Contains.
class GenericLookup {
 public:
  static constexpr bool kTyped = false;
  bool Contains(KeyHash hash) const { return view_.Contains(hash); }
  bool Contains(std::string_view key) const { return view_.Contains(key); }
  template <typename Int, typename = std::enable_if_t<std::is_integral_v<Int>>>
  bool Contains(Int) const = delete;
  void Prefetch(KeyHash) const {}

 private:
  friend struct detail::LookupAccess;
  CuckooFilterView view_;
};

namespace detail {

struct LookupAccess {
  template <int F, int B, bool S>
  static TypedLookup<F, B, S> Typed(const CuckooFilterView& v) {
    TypedLookup<F, B, S> t;
    t.table_ = v.table_;
    t.alt_offsets_ = v.alt_offsets_;
    t.spread_ = v.probe_.semi_sort_spread;
    t.num_buckets_ = static_cast<uint32_t>(v.geometry_.num_buckets);
    t.seed_ = v.geometry_.seed;
    t.victim_fp_ = v.geometry_.victim_fp;
    t.victim_bucket_ = v.geometry_.victim_bucket;
    return t;
  }
  static GenericLookup Generic(const CuckooFilterView& v) {
    GenericLookup g;
    g.view_ = v;
    return g;
  }
  static bool HasInlinePath(const CuckooFilterView& v) {
    return v.probe_.bucket_bits != 0;
  }
};

// Layout kinds of the dispatch table: plain b = 1, 2, 4, 8, semi-sorted.
constexpr int kLookupKinds = 5;
constexpr int kLookupFpSlots = 33;  // index by f (0..32)

template <typename R, typename Fn>
using LookupEntry = R (*)(const CuckooFilterView&, Fn&);

template <int F, int B, bool S, typename R, typename Fn>
R CallTyped(const CuckooFilterView& v, Fn& fn) {
  return fn(LookupAccess::Typed<F, B, S>(v));
}

template <typename R, typename Fn, int kIndex>
constexpr LookupEntry<R, Fn> MakeLookupEntry() {
  constexpr int kKind = kIndex / kLookupFpSlots;
  constexpr int kF = kIndex % kLookupFpSlots;
  constexpr bool kSemi = kKind == 4;
  constexpr int kB = kSemi ? 4 : (1 << kKind);
  if constexpr (LookupLayout<kF, kB, kSemi>::kSupported) {
    return &CallTyped<kF, kB, kSemi, R, Fn>;
  } else {
    return nullptr;
  }
}

template <typename R, typename Fn, int... kIndexes>
constexpr std::array<LookupEntry<R, Fn>, sizeof...(kIndexes)> MakeLookupTable(
    std::integer_sequence<int, kIndexes...>) {
  return {MakeLookupEntry<R, Fn, kIndexes>()...};
}

template <typename R, typename Fn>
inline constexpr auto kLookupTable = MakeLookupTable<R, Fn>(
    std::make_integer_sequence<int, kLookupKinds * kLookupFpSlots>{});

inline int LookupKind(int bucket_size, bool semi_sort) {
  if (semi_sort) return 4;
  switch (bucket_size) {
    case 1:
      return 0;
    case 2:
      return 1;
    case 4:
      return 2;
    default:
      return 3;
  }
}

}  // namespace detail

// Calls fn(lookup) once, with a TypedLookup for the view's layout or a
// GenericLookup (see the top of this header), and returns its result. One
// indirect call per VisitLookup, none per key.
template <typename Fn>
std::invoke_result_t<Fn&, GenericLookup> VisitLookup(
    const CuckooFilterView& view, Fn&& fn) {
  using R = std::invoke_result_t<Fn&, GenericLookup>;
  using Decayed = std::remove_reference_t<Fn>;
  if (view.valid() && detail::LookupAccess::HasInlinePath(view)) {
    const int f = view.fingerprint_bits();
    const int index = detail::LookupKind(view.bucket_size(), view.semi_sort()) *
                          detail::kLookupFpSlots +
                      f;
    const auto entry = detail::kLookupTable<R, Decayed>[index];
    if (entry != nullptr) return entry(view, fn);
  }
  return fn(detail::LookupAccess::Generic(view));
}

// The same over a filter's current contents (valid until it is modified).
template <typename Fn>
std::invoke_result_t<Fn&, GenericLookup> VisitLookup(const CuckooFilter& filter,
                                                     Fn&& fn) {
  return VisitLookup(filter.View(), std::forward<Fn>(fn));
}

}  // namespace cuckoo

#endif  // CUCKOO_TYPED_LOOKUP_H_
