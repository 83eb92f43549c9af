// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Partial-key cuckoo hashing over a packed bucket table: lookup, batched
// lookup, insert with random-walk eviction and a victim slot, erase.
// Internal header; RocksDB-independent.
//
// Item hash h (64 bits) -> primary bucket i1 = FastRange32(low 32 bits, m)
// and fingerprint fp = 1 + FastRange(high 32 bits, 2^f - 1), so fp != 0.
// The alternate bucket depends only on (bucket, fp), so entries can be moved
// without their keys:
//
//   alt(i, fp) = (m - i - r(fp)) mod m,   r(fp) = FastRange32(Mix32(fp ^ seed),
//   m) | 1
//
// alt is its own inverse for any m. With m even and r odd, alt(i) and i have
// different parity, so the two buckets are always distinct. The fingerprint
// is hashed before it is mixed in, so victims spread over the whole table.
#ifndef CUCKOO_PLUGIN_CORE_FILTER_CUCKOO_TABLE_H_
#define CUCKOO_PLUGIN_CORE_FILTER_CUCKOO_TABLE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

#include "cuckoo/cuckoo_filter.h"
#include "filter/bucket_codec.h"
#include "filter/table_settings.h"
#include "util/bit_util.h"

namespace cuckoo {
namespace internal {

// A read-only table: bucket array plus the victim slot.
struct TableRef {
  const uint8_t* table = nullptr;  // readable up to TableBytes + 16
  uint32_t num_buckets = 0;        // even, >= 2
  uint32_t seed = 0;
  uint32_t victim_fp = 0;  // 0: no victim
  uint32_t victim_bucket = 0;
};

// A mutable table and the state of its insert path.
struct MutableTableRef {
  uint8_t* table = nullptr;
  uint32_t num_buckets = 0;
  uint32_t seed = 0;
  uint32_t* victim_fp = nullptr;
  uint32_t* victim_bucket = nullptr;
  uint64_t* num_items = nullptr;
  uint64_t* rng_state = nullptr;
  int max_kicks = 0;
  // detail::AltOffset of every fingerprint, or null (computed per call).
  const uint32_t* alt_offsets = nullptr;
};

using detail::AltBucket;
using detail::PrimaryBucket;

template <int kFpBits>
inline uint32_t FingerprintOf(uint64_t hash) {
  return detail::Fingerprint(hash, kFpBits);
}

template <typename S>
class CuckooTable {
 public:
  using Codec = BucketCodec<S>;
  // Keys whose buckets are in flight ahead of the probe in ContainsBatch.
  static constexpr size_t kPrefetchDistance = 16;

  static bool Contains(const TableRef& t, uint64_t hash) {
    const uint32_t fp = FingerprintOf<S::kFpBits>(hash);
    const uint32_t i1 = PrimaryBucket(hash, t.num_buckets);
    const uint32_t i2 = AltBucket(i1, fp, t.num_buckets, t.seed);
    return Probe(t, fp, i1, i2);
  }

  // Rolling prefetch: both buckets of key k + kPrefetchDistance are
  // requested before key k is probed, so the memory system always has
  // 2 * kPrefetchDistance bucket loads outstanding, across group borders.
  static void ContainsBatch(const TableRef& t, const KeyHash* hashes, size_t n,
                            bool* out) {
    uint32_t fps[kPrefetchDistance], b1[kPrefetchDistance],
        b2[kPrefetchDistance];
    auto prepare = [&](size_t k) {
      const size_t slot = k % kPrefetchDistance;
      const uint64_t h = hashes[k].value;
      fps[slot] = FingerprintOf<S::kFpBits>(h);
      b1[slot] = PrimaryBucket(h, t.num_buckets);
      b2[slot] = AltBucket(b1[slot], fps[slot], t.num_buckets, t.seed);
      __builtin_prefetch(Codec::BucketAddress(t.table, b1[slot]));
      __builtin_prefetch(Codec::BucketAddress(t.table, b2[slot]));
    };
    const size_t primed = n < kPrefetchDistance ? n : kPrefetchDistance;
    for (size_t k = 0; k < primed; ++k) prepare(k);
    for (size_t k = 0; k < n; ++k) {
      const size_t slot = k % kPrefetchDistance;
      out[k] = Probe(t, fps[slot], b1[slot], b2[slot]);
      if (k + kPrefetchDistance < n) prepare(k + kPrefetchDistance);
    }
  }

  static InsertResult Insert(const MutableTableRef& t, uint64_t hash) {
    if (*t.victim_fp != 0) return InsertResult::kFull;
    const uint32_t fp = FingerprintOf<S::kFpBits>(hash);
    const uint32_t i1 = PrimaryBucket(hash, t.num_buckets);
    ++*t.num_items;
    return Place(t, fp, i1, (SplitMix64(t.rng_state) & 1) != 0);
  }

  // Insert(hashes[k]) for k < n, in order, so the table, victim and random
  // state end exactly as after that loop; returns the number of items stored
  // (kInserted or kInsertedFull). While key k is placed, the two buckets of
  // key k + kPrefetchDistance are already requested (for writing), so on a
  // table larger than the caches the first probes of consecutive keys
  // overlap instead of each waiting for memory; only eviction walks stay
  // serial.
  static uint64_t InsertMany(const MutableTableRef& t, const KeyHash* hashes,
                             size_t n) {
    auto prefetch = [&](uint64_t h) {
      const uint32_t fp = FingerprintOf<S::kFpBits>(h);
      const uint32_t i1 = PrimaryBucket(h, t.num_buckets);
      const uint32_t i2 = Alt(t, i1, fp);
      __builtin_prefetch(Codec::BucketAddress(t.table, i1), 1);
      __builtin_prefetch(Codec::BucketAddress(t.table, i2), 1);
    };
    const size_t primed = n < kPrefetchDistance ? n : kPrefetchDistance;
    for (size_t k = 0; k < primed; ++k) prefetch(hashes[k].value);
    uint64_t stored = 0;
    for (size_t k = 0; k < n; ++k) {
      if (k + kPrefetchDistance < n) {
        prefetch(hashes[k + kPrefetchDistance].value);
      }
      stored += Insert(t, hashes[k].value) != InsertResult::kFull;
    }
    return stored;
  }

  // Tables of at least this many bytes are filled by InsertUnordered in
  // bucket order; on smaller ones (mostly cache-resident) InsertMany was as
  // fast or faster, counting the page faults of the scratch array (measured
  // at 1.5-15 MB tables; semi-sorted buckets, slower to rewrite, gain
  // earlier).
  static constexpr uint64_t kUnorderedMinTableBytes = (S::kSemiSort ? 2 : 8)
                                                      << 20;

  // Stores hashes[0, n) in an order of its own choosing: every item ends in
  // one of its two buckets, or in the victim slot, as after a loop of
  // Insert, but the bytes differ from that loop. Returns the number of items
  // stored; fewer than n means the table is full and an unspecified subset
  // is missing.
  //
  // On tables larger than the caches a loop of Insert waits on memory for
  // every item. Here a counting sort groups the items by primary bucket
  // range (about 64 KiB of table) in a scratch array of n uint64_t, and each
  // range is filled while it is cache-resident. The items whose primary
  // bucket is full are then grouped by alternate bucket and tried there the
  // same way. Only the rest (both buckets full) pay random memory accesses,
  // in eviction walks. Tables smaller than min_table_bytes, or a failed
  // scratch allocation, take InsertMany.
  static uint64_t InsertUnordered(
      const MutableTableRef& t, const KeyHash* hashes, size_t n,
      uint64_t min_table_bytes = kUnorderedMinTableBytes) {
    if (S::TableBytes(t.num_buckets) < min_table_bytes) {
      return InsertMany(t, hashes, n);
    }
    if (*t.victim_fp != 0) return 0;
    std::unique_ptr<uint64_t[]> owned(new (std::nothrow) uint64_t[n]);
    if (owned == nullptr) return InsertMany(t, hashes, n);
    uint64_t* const scratch = owned.get();
    const int shift = GroupShift(t.num_buckets);
    const size_t groups = (size_t{t.num_buckets} >> shift) + 1;
    // 1. Group by primary bucket; a record is bucket << 32 | fp.
    GroupBy(
        n, shift, groups,
        [&](size_t k) {
          const uint64_t h = hashes[k].value;
          return uint64_t{PrimaryBucket(h, t.num_buckets)} << 32 |
                 FingerprintOf<S::kFpBits>(h);
        },
        scratch);
    // 2. Into the primary bucket; the others are compacted to the front.
    uint64_t stored = 0;
    size_t left = 0;
    for (size_t k = 0; k < n; ++k) {
      const uint64_t rec = scratch[k];
      const uint32_t bucket = static_cast<uint32_t>(rec >> 32);
      const uint32_t fp = static_cast<uint32_t>(rec);
      if (TryAdd(t.table, bucket, fp)) {
        ++stored;
      } else {
        scratch[left++] = uint64_t{Alt(t, bucket, fp)} << 32 | fp;
      }
    }
    *t.num_items += stored;
    // 3. Into the alternate bucket, grouped the same way when there is room
    // behind the leftovers to group them into.
    uint64_t* rest = scratch;
    if (left > 0 && 2 * left <= n) {
      const uint64_t* from = scratch;
      GroupBy(
          left, shift, groups, [&](size_t k) { return from[k]; },
          scratch + left);
      rest = scratch + left;
    }
    size_t walks = 0;
    for (size_t k = 0; k < left; ++k) {
      const uint64_t rec = rest[k];
      if (TryAdd(t.table, static_cast<uint32_t>(rec >> 32),
                 static_cast<uint32_t>(rec))) {
        ++stored;
        ++*t.num_items;
      } else {
        rest[walks++] = rec;
      }
    }
    // 4. Both buckets full: eviction walks from the alternate bucket. The
    // walk's first step reads that bucket and the alternates of its entries:
    // the bucket of walk k + 2d is prefetched, and when it has arrived (at
    // walk k + d) the alternates of its entries are.
    constexpr size_t d = kPrefetchDistance / 2;
    for (size_t k = 0; k < walks; ++k) {
      if (k + 2 * d < walks) {
        __builtin_prefetch(
            Codec::BucketAddress(t.table,
                                 static_cast<uint32_t>(rest[k + 2 * d] >> 32)),
            1);
      }
      if (k + d < walks) {
        uint32_t entries[S::kSlots], alts[S::kSlots];
        ReadWithAlternates(t, static_cast<uint32_t>(rest[k + d] >> 32), entries,
                           alts);
      }
      ++*t.num_items;
      const InsertResult r = Walk(t, static_cast<uint32_t>(rest[k]),
                                  static_cast<uint32_t>(rest[k] >> 32));
      ++stored;
      if (r == InsertResult::kInsertedFull) break;
    }
    return stored;
  }

  // True if bucket i1 or i2 holds fp, or the victim slot does (fp at i1 or
  // i2). For callers that compute fp, i1 and i2 = AltBucket(i1, fp, ...)
  // ahead of the probe (e.g. to prefetch the buckets).
  static bool Probe(const TableRef& t, uint32_t fp, uint32_t i1, uint32_t i2) {
    // Non-short-circuit ORs: both bucket loads are issued together.
    return Codec::Contains(t.table, i1, fp) | Codec::Contains(t.table, i2, fp) |
           ((fp == t.victim_fp) &
            ((i1 == t.victim_bucket) | (i2 == t.victim_bucket)));
  }

  static bool Erase(const MutableTableRef& t, uint64_t hash) {
    const uint32_t fp = FingerprintOf<S::kFpBits>(hash);
    const uint32_t i1 = PrimaryBucket(hash, t.num_buckets);
    const uint32_t i2 = Alt(t, i1, fp);
    if (Remove(t.table, i1, fp) || Remove(t.table, i2, fp)) {
      --*t.num_items;
      // Room was made: move the victim back into the table if it fits.
      const uint32_t victim = *t.victim_fp;
      if (victim != 0) {
        // Empty the slot completely (fp 0 and bucket 0, as the format
        // requires); Place refills both if the walk fails again.
        const uint32_t victim_bucket = *t.victim_bucket;
        *t.victim_fp = 0;
        *t.victim_bucket = 0;
        Place(t, victim, victim_bucket, true);
      }
      return true;
    }
    if (*t.victim_fp == fp &&
        (*t.victim_bucket == i1 || *t.victim_bucket == i2)) {
      *t.victim_fp = 0;
      *t.victim_bucket = 0;
      --*t.num_items;
      return true;
    }
    return false;
  }

 private:
  // log2 of the buckets per group of InsertUnordered: about 64 KiB of table,
  // and at most kMaxGroups groups (the scatter's write streams).
  static constexpr size_t kMaxGroups = 4096;
  static int GroupShift(uint32_t num_buckets) {
    int shift = 0;
    while ((uint64_t{S::kBucketBits} << (shift + 1)) <=
           uint64_t{64 << 10} * 8) {
      ++shift;
    }
    while ((uint64_t{num_buckets} >> shift) >= kMaxGroups) ++shift;
    return shift;
  }

  // Counting sort of records rec(0..n) by (rec >> 32) >> shift into out.
  template <typename RecordFn>
  static void GroupBy(size_t n, int shift, size_t groups, RecordFn&& rec,
                      uint64_t* out) {
    size_t start[kMaxGroups + 1];
    std::fill(start, start + groups + 1, size_t{0});
    for (size_t k = 0; k < n; ++k) ++start[(rec(k) >> 32 >> shift) + 1];
    for (size_t g = 1; g <= groups; ++g) start[g] += start[g - 1];
    for (size_t k = 0; k < n; ++k) {
      const uint64_t r = rec(k);
      out[start[r >> 32 >> shift]++] = r;
    }
  }

  // AltBucket(bucket, fp, ...), from the precomputed offsets when there are.
  static uint32_t Alt(const MutableTableRef& t, uint32_t bucket, uint32_t fp) {
    return detail::AltBucketWith(t.alt_offsets, bucket, fp, t.num_buckets,
                                 t.seed);
  }

  static bool TryAdd(uint8_t* table, uint32_t bucket, uint32_t fp) {
    uint32_t entries[S::kSlots];
    Codec::Read(table, bucket, entries);
    for (int j = 0; j < S::kSlots; ++j) {
      if (entries[j] == 0) {
        entries[j] = fp;
        Codec::Write(table, bucket, entries);
        return true;
      }
    }
    return false;
  }

  static bool Remove(uint8_t* table, uint32_t bucket, uint32_t fp) {
    uint32_t entries[S::kSlots];
    Codec::Read(table, bucket, entries);
    for (int j = 0; j < S::kSlots; ++j) {
      if (entries[j] == fp) {
        entries[j] = 0;
        Codec::Write(table, bucket, entries);
        return true;
      }
    }
    return false;
  }

  // Stores fp (already counted in num_items) in bucket i or its alternate,
  // evicting along a random walk of at most max_kicks steps. The entry left
  // over when the walk gives up goes to the (empty) victim slot.
  //
  // Each step first looks one move ahead: if some entry of the full bucket
  // has room in its own alternate bucket, it moves there and fp takes its
  // slot (the b alternate buckets are prefetched together, so this costs
  // about one memory latency). Otherwise a random entry is evicted, as in the
  // paper's random walk. The lookahead shortens walks near full load.
  static InsertResult Place(const MutableTableRef& t, uint32_t fp, uint32_t i,
                            bool walk_from_alt) {
    const uint32_t alt = Alt(t, i, fp);
    if (TryAdd(t.table, i, fp) || TryAdd(t.table, alt, fp)) {
      return InsertResult::kInserted;
    }
    return Walk(t, fp, walk_from_alt ? alt : i);
  }

  // Reads a bucket's entries and their alternate buckets, and prefetches
  // those: the first half of an eviction step (Walk), also issued ahead of
  // the walks of InsertUnordered.
  static void ReadWithAlternates(const MutableTableRef& t, uint32_t bucket,
                                 uint32_t (&entries)[S::kSlots],
                                 uint32_t (&alts)[S::kSlots]) {
    Codec::Read(t.table, bucket, entries);
    for (int j = 0; j < S::kSlots; ++j) {
      alts[j] = Alt(t, bucket, entries[j]);
      __builtin_prefetch(Codec::BucketAddress(t.table, alts[j]));
    }
  }

  // The eviction walk of Place, from `bucket` (full, one of fp's two).
  static InsertResult Walk(const MutableTableRef& t, uint32_t fp,
                           uint32_t bucket) {
    for (int kick = 0; kick < t.max_kicks; ++kick) {
      uint32_t entries[S::kSlots];
      uint32_t alts[S::kSlots];
      ReadWithAlternates(t, bucket, entries, alts);
      const uint32_t random = static_cast<uint32_t>(SplitMix64(t.rng_state));
      for (int k = 0; k < S::kSlots; ++k) {
        const uint32_t j = (random + k) & (S::kSlots - 1);
        if (TryAdd(t.table, alts[j], entries[j])) {
          entries[j] = fp;
          Codec::Write(t.table, bucket, entries);
          return InsertResult::kInserted;
        }
      }
      const uint32_t slot = random & (S::kSlots - 1);
      const uint32_t evicted = entries[slot];
      entries[slot] = fp;
      Codec::Write(t.table, bucket, entries);
      fp = evicted;
      bucket = alts[slot];
    }
    *t.victim_fp = fp;
    *t.victim_bucket = bucket;
    return InsertResult::kInsertedFull;
  }
};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_FILTER_CUCKOO_TABLE_H_
