// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Inline lookup path of CuckooFilter and CuckooFilterView, and the hash
// arithmetic that places an item (shared with the table code in plugin/core).
// Included by cuckoo_filter.h; not an API of its own: names and layout may
// change between versions.
//
// Why inline: a loop of independent Contains calls on a table larger than
// the caches is bound by memory latency, and the CPU only overlaps the cache
// misses of consecutive calls if each call is short and visible to it. An
// out-of-line virtual call per key (dispatch on f, b, semi-sort) plus the
// copying around it kept about one lookup in flight; this path is a few
// dozen instructions with the layout in a ProbeParams filled once per filter.
#ifndef CUCKOO_DETAIL_PROBE_H_
#define CUCKOO_DETAIL_PROBE_H_

#include <cstdint>
#include <cstring>

namespace cuckoo {
namespace detail {

constexpr int Gcd(int a, int b) { return b == 0 ? a : Gcd(b, a % b); }

// Bits of one bucket: b fingerprints of f bits, or, semi-sorted (b = 4), a
// 12-bit rank of the sorted high nibbles plus 4 low parts of f - 4 bits.
// Bucket i starts at bit i * BucketBits of the table.
constexpr int BucketBits(int fp_bits, int bucket_size, bool semi_sort) {
  return semi_sort ? 12 + 4 * (fp_bits - 4) : bucket_size * fp_bits;
}

// Maps a uniformly distributed 32-bit value to [0, n) without a division
// (Lemire's multiply-shift).
inline uint32_t FastRange32(uint32_t hash, uint32_t n) {
  return static_cast<uint32_t>((uint64_t{hash} * n) >> 32);
}

// A bijective 32-bit finalizer (MurmurHash3 fmix32).
inline uint32_t Mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bU;
  h ^= h >> 13;
  h *= 0xc2b2ae35U;
  h ^= h >> 16;
  return h;
}

// Primary bucket of an item hash: FastRange32 of its low 32 bits.
inline uint32_t PrimaryBucket(uint64_t hash, uint32_t num_buckets) {
  return FastRange32(static_cast<uint32_t>(hash), num_buckets);
}

// Fingerprint of an item hash, in [1, 2^fp_bits - 1] (0 marks an empty
// slot): 1 + FastRange of the high 32 bits over 2^f - 1 values.
inline uint32_t Fingerprint(uint64_t hash, int fp_bits) {
  const uint64_t range = (uint64_t{1} << fp_bits) - 1;
  return static_cast<uint32_t>(((hash >> 32) * range) >> 32) + 1;
}

// The other bucket of fingerprint fp stored in `bucket`:
//   alt(i, fp) = (m - i - r(fp)) mod m,  r(fp) = FastRange32(Mix32(fp ^ seed),
//   m) | 1.
// An involution; with m even and r odd, alt(i) != i.
// m - r(fp), in [1, m - 1]: the part of AltBucket that depends only on fp.
// Large filters precompute it for every fp when f <= 16 (2^f entries): one
// load that hits the cache instead of the dozen instructions of Mix32 and
// FastRange32, so on tables larger than the caches the CPU keeps more
// lookups, and so more cache misses, in flight.
inline uint32_t AltOffset(uint32_t fp, uint32_t num_buckets, uint32_t seed) {
  return num_buckets - (FastRange32(Mix32(fp ^ seed), num_buckets) | 1);
}

// (offset - bucket) mod m without a branch: the comparison is a coin flip.
inline uint32_t AltBucketFromOffset(uint32_t bucket, uint32_t offset,
                                    uint32_t num_buckets) {
  const uint32_t wrap = 0u - static_cast<uint32_t>(offset < bucket);
  return offset - bucket + (num_buckets & wrap);
}

inline uint32_t AltBucket(uint32_t bucket, uint32_t fp, uint32_t num_buckets,
                          uint32_t seed) {
  return AltBucketFromOffset(bucket, AltOffset(fp, num_buckets, seed),
                             num_buckets);
}

// AltBucket, reading the offset from alt_offsets (AltOffset of every
// fingerprint, as large filters precompute it) unless that is null.
inline uint32_t AltBucketWith(const uint32_t* alt_offsets, uint32_t bucket,
                              uint32_t fp, uint32_t num_buckets,
                              uint32_t seed) {
  return AltBucketFromOffset(bucket,
                             alt_offsets != nullptr
                                 ? alt_offsets[fp]
                                 : AltOffset(fp, num_buckets, seed),
                             num_buckets);
}

// Layout constants of a table whose bucket fits one 64-bit load (plain
// buckets of at most 64 bits plus the shift to their first bit, e.g. b = 4
// with f <= 16, and semi-sorted f >= 8). bucket_bits == 0 means "no inline
// path": use the table code.
struct ProbeParams {
  uint32_t bucket_bits = 0;  // bits per bucket; bucket i starts at bit i * this
  int fp_bits = 0;           // f
  int low_bits = 0;          // semi-sorted: f - 4 (lane width); plain: unused
  uint64_t lane_lo = 0;      // bit 0 of every lane
  uint64_t lane_hi = 0;      // top bit of every lane
  // Semi-sorted: rank -> sorted high nibbles spread to the lanes; null for
  // plain buckets.
  const uint64_t* semi_sort_spread = nullptr;
};

// True if the bucket holds fingerprint fp. `table` must be readable 8 bytes
// past the byte holding the bucket's first bit (tables carry that slack).
inline bool ProbeBucket(const ProbeParams& p, const uint8_t* table,
                        uint32_t bucket, uint32_t fp) {
  const uint64_t bit = uint64_t{bucket} * p.bucket_bits;
  uint64_t raw;
  std::memcpy(&raw, table + (bit >> 3), sizeof(raw));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  raw = __builtin_bswap64(raw);
#endif
  // Not masked to the bucket's bits: the bits above it cannot change
  // the answer (a borrow only moves upwards and only lane tops are tested).
  const uint64_t word = raw >> (bit & 7);
  uint64_t d;  // lane j is zero iff entry j equals fp
  if (p.semi_sort_spread == nullptr) {
    d = word ^ (p.lane_lo * fp);
  } else {
    const uint32_t low_mask = (uint32_t{1} << p.low_bits) - 1;
    d = ((word >> 12) ^ (p.lane_lo * (fp & low_mask))) |
        (p.semi_sort_spread[word & 0xfff] ^ (p.lane_lo * (fp >> p.low_bits)));
  }
  // Any zero lane; exact, since a borrow can only start in a zero lane.
  return ((d - p.lane_lo) & ~d & p.lane_hi) != 0;
}

// Contains over a table with an inline path (p.bucket_bits != 0): both
// buckets are loaded without a branch between them, then the victim slot.
// alt_offsets: AltOffset of every fingerprint, or null (computed).
inline bool ProbeItem(const ProbeParams& p, const uint8_t* table,
                      const uint32_t* alt_offsets, uint32_t num_buckets,
                      uint32_t seed, uint32_t victim_fp, uint32_t victim_bucket,
                      uint64_t hash) {
  const uint32_t fp = Fingerprint(hash, p.fp_bits);
  const uint32_t i1 = PrimaryBucket(hash, num_buckets);
  const uint32_t i2 = AltBucketWith(alt_offsets, i1, fp, num_buckets, seed);
  // fp (never 0) equals the victim's fingerprint (0 when the slot is empty)
  // about once in 2^f lookups of a full filter: a predicted branch.
  if (__builtin_expect(fp == victim_fp, 0)) {
    if ((i1 == victim_bucket) | (i2 == victim_bucket)) return true;
  }
  return ProbeBucket(p, table, i1, fp) | ProbeBucket(p, table, i2, fp);
}

}  // namespace detail
}  // namespace cuckoo

#endif  // CUCKOO_DETAIL_PROBE_H_
