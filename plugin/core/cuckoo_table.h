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
#ifndef CUCKOO_PLUGIN_CORE_CUCKOO_TABLE_H_
#define CUCKOO_PLUGIN_CORE_CUCKOO_TABLE_H_

#include <cstddef>
#include <cstdint>

#include "bit_util.h"
#include "bucket_codec.h"
#include "cuckoo/cuckoo_filter.h"
#include "table_settings.h"

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
    uint32_t bucket = walk_from_alt ? alt : i;
    for (int kick = 0; kick < t.max_kicks; ++kick) {
      uint32_t entries[S::kSlots];
      uint32_t alts[S::kSlots];
      Codec::Read(t.table, bucket, entries);
      for (int j = 0; j < S::kSlots; ++j) {
        alts[j] = Alt(t, bucket, entries[j]);
        __builtin_prefetch(Codec::BucketAddress(t.table, alts[j]));
      }
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

#endif  // CUCKOO_PLUGIN_CORE_CUCKOO_TABLE_H_
