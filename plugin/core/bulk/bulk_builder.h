// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Bulk construction of a packed cuckoo table from a known set of hashes, for
// the SST filter builder. Internal header.
//
// The core's CuckooFilter::Insert works directly on the packed (and, for
// semi-sorted buckets, rank-encoded) table, decoding and re-encoding a bucket
// on every touch, one key at a time. A filter block is built once from all
// its keys, so this builder instead works on an unpacked scratch table (one
// 16- or 32-bit slot per entry, 0 = empty) in three phases, then packs every
// bucket once, in order, with the core's BucketCodec:
//
//   1. every item into its primary bucket if that has room, prefetching the
//      buckets of the items a few positions ahead (no alternate bucket is
//      computed for the ~85% of items that fit there);
//   2. the rest into their alternate bucket if that has room (prefetched);
//   3. the few items left (both buckets full) by cuckoo relocation walks.
//      Walks are dependent chains of cache misses, so kLanes of them advance
//      in lockstep: each step prefetches the buckets the next step needs,
//      and the other lanes run while those loads are in flight.
//
// A walk step looks one move ahead first: if some entry of the full bucket
// has room in its own alternate bucket, it moves there and the homeless
// fingerprint takes its slot; otherwise a random entry is evicted to its
// (full) alternate bucket, where the walk continues. A walk that gives up
// after max_kicks steps leaves one fingerprint in the victim slot; a second
// failure fails the build (the caller retries with another seed or more
// buckets). Buckets never lose entries, so a bucket found full stays full.
//
// An item whose fingerprint is already in one of its buckets is skipped: the
// table already answers "may match" for it (entries only move between their
// own two buckets), so the answer set is unchanged and a slot is saved. Phase
// 1 checks the primary bucket only (not touching the alternate is what makes
// it cheap), so a combination whose first copy sits in the alternate bucket
// can be stored twice; that wastes a slot (for roughly b * load / 2^f of the
// items: 0.2% at f = 10) but never changes an answer.
//
// Bucket choice, fingerprints and the alternate-bucket function are the
// core's (cuckoo_table.h), so the result is read by CuckooTable<S>::Contains
// like any other serialized filter.
#ifndef CUCKOO_PLUGIN_CORE_BULK_BULK_BUILDER_H_
#define CUCKOO_PLUGIN_CORE_BULK_BULK_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "bulk/hash_list.h"
#include "filter/bucket_codec.h"
#include "filter/cuckoo_table.h"
#include "filter/table_settings.h"
#include "util/bit_util.h"

namespace cuckoo {
namespace internal {

struct BulkBuildParams {
  uint32_t num_buckets = 0;  // even, >= 2
  uint32_t seed = 0;         // stored in the trailer; selects the alt function
  int max_kicks = 500;
};

struct BulkBuildResult {
  bool ok = false;
  uint64_t num_items = 0;  // entries stored, victim included
  uint64_t skipped = 0;    // items whose fingerprint was already there
  uint32_t victim_fp = 0;  // 0: no victim
  uint32_t victim_bucket = 0;
  uint64_t walks = 0;       // items placed by relocation walks
  uint64_t walk_steps = 0;  // relocation steps of those walks
};

// Memory of a builder reused across filters (partitions).
struct BulkScratch {
  std::vector<uint16_t> slots16;
  std::vector<uint32_t> slots32;
  std::vector<uint64_t> pending;  // hashes waiting for phase 2 / phase 3
};

template <typename S>
class BulkBuilder {
 public:
  using Slot = std::conditional_t<(S::kFpBits <= 16), uint16_t, uint32_t>;
  static constexpr int kB = S::kSlots;
  static constexpr size_t kAhead = 16;  // items whose buckets are prefetched
  static constexpr int kLanes = 8;      // relocation walks in flight

  // Builds the table of the hashes in `spans` (n in total) into `table`,
  // which must be zeroed and writable for S::TableBytes(num_buckets) +
  // kTableLoadSlack bytes. O(n) expected.
  static BulkBuildResult Build(const HashSpan* spans, size_t num_spans,
                               size_t n, const BulkBuildParams& params,
                               BulkScratch* scratch, uint8_t* table) {
    std::vector<Slot>& slots = Slots(scratch);
    const uint32_t m = params.num_buckets;
    slots.assign(size_t{m} * kB, 0);
    State st{slots.data(), m, params.seed};
    std::vector<uint64_t>& pending = scratch->pending;
    pending.clear();
    BulkBuildResult result;

    // Phase 1: primary buckets.
    for (size_t s = 0; s < num_spans; ++s) {
      const uint64_t* hashes = spans[s].data;
      const size_t count = spans[s].size;
      for (size_t k = 0; k < count; ++k) {
        if (k + kAhead < count) {
          __builtin_prefetch(st.Bucket(PrimaryBucket(hashes[k + kAhead], m)),
                             1);
        }
        const uint64_t h = hashes[k];
        const uint32_t fp = FingerprintOf<S::kFpBits>(h);
        Slot* b1 = st.Bucket(PrimaryBucket(h, m));
        if (Has(b1, fp)) {
          ++result.skipped;
        } else if (!Put(b1, fp)) {
          pending.push_back(h);
        }
      }
    }

    // Phase 2: alternate buckets. Primary buckets of these items are full.
    size_t walkers = 0;  // pending[0, walkers) wait for phase 3
    const size_t n2 = pending.size();
    for (size_t k = 0; k < n2; ++k) {
      if (k + kAhead < n2) {
        const uint64_t ha = pending[k + kAhead];
        const uint32_t i1a = PrimaryBucket(ha, m);
        __builtin_prefetch(st.Bucket(i1a), 0);
        __builtin_prefetch(st.Bucket(AltBucket(
                               i1a, FingerprintOf<S::kFpBits>(ha), m, st.seed)),
                           1);
      }
      const uint64_t h = pending[k];
      const uint32_t fp = FingerprintOf<S::kFpBits>(h);
      const uint32_t i1 = PrimaryBucket(h, m);
      Slot* b1 = st.Bucket(i1);
      Slot* b2 = st.Bucket(AltBucket(i1, fp, m, st.seed));
      if (Has(b1, fp) || Has(b2, fp)) {
        ++result.skipped;
      } else if (!Put(b2, fp)) {
        pending[walkers++] = h;
      }
    }

    // Phase 3: relocation walks, kLanes at a time.
    if (!Walks(&st, pending.data(), walkers, params.max_kicks, &result)) {
      return result;
    }
    result.num_items = n - result.skipped;

    // Pack every bucket once, in order, as one stream of bits written 64
    // at a time (the same bytes as BucketCodec<S>::Write per bucket into the
    // zeroed table, whose read-modify-writes of overlapping words each
    // waited for the previous bucket's store).
    static_assert(S::kBucketBits == S::kWordsPerBucket * S::kWordBits,
                  "a bucket's words are contiguous");
    BitStream out(table);
    uint32_t entries[kB];
    for (uint32_t i = 0; i < m; ++i) {
      const Slot* b = st.Bucket(i);
      for (int j = 0; j < kB; ++j) entries[j] = b[j];
      for (int w = 0; w < S::kWordsPerBucket; ++w) {
        const typename S::Word word = BucketCodec<S>::EncodeWord(entries, w);
        if constexpr (S::kWordBits <= 64) {
          out.Append(static_cast<uint64_t>(word), S::kWordBits);
        } else {
          out.Append(static_cast<uint64_t>(word), 64);
          out.Append(static_cast<uint64_t>(word >> 64), S::kWordBits - 64);
        }
      }
    }
    out.Finish();
    result.ok = true;
    return result;
  }

 private:
  struct State {
    Slot* t;
    uint32_t m;
    uint32_t seed;
    Slot* Bucket(uint32_t i) const { return t + size_t{i} * kB; }
    uint32_t Alt(uint32_t bucket, uint32_t fp) const {
      return AltBucket(bucket, fp, m, seed);
    }
  };

  // Little-endian bit stream into a zeroed buffer, one 64-bit store per 64
  // bits.
  class BitStream {
   public:
    explicit BitStream(uint8_t* dst) : p_(dst) {}
    // Appends the low `bits` bits of v (1..64; v has no higher bits set).
    void Append(uint64_t v, int bits) {
      acc_ |= v << pending_;  // pending_ < 64
      const int total = pending_ + bits;
      if (total >= 64) {
        StoreLE<uint64_t>(p_, acc_);
        p_ += 8;
        // The bits of v that did not fit (none when pending_ == 0).
        acc_ = pending_ == 0 ? 0 : v >> (64 - pending_);
        pending_ = total - 64;
      } else {
        pending_ = total;
      }
    }
    // Writes the last partial word's bytes.
    void Finish() {
      for (int k = 0; 8 * k < pending_; ++k) {
        p_[k] = static_cast<uint8_t>(acc_ >> (8 * k));
      }
    }

   private:
    uint8_t* p_;
    uint64_t acc_ = 0;
    int pending_ = 0;  // bits in acc_
  };

  static std::vector<Slot>& Slots(BulkScratch* s) {
    if constexpr (std::is_same_v<Slot, uint16_t>) {
      return s->slots16;
    } else {
      return s->slots32;
    }
  }

  // Buckets of four 16-bit slots are handled as one 64-bit word (SWAR).
  static constexpr bool kWordBucket = std::is_same_v<Slot, uint16_t> && kB == 4;
  static constexpr uint64_t kLaneOnes = 0x0001000100010001ULL;
  static constexpr uint64_t kHigh = 0x8000800080008000ULL;

  static uint64_t LoadBucket(const Slot* bucket) {
    uint64_t w;
    std::memcpy(&w, bucket, sizeof(w));
    return w;
  }
  // Bit 15 of each 16-bit lane set iff the lane is zero (exact, carry-free).
  static uint64_t ZeroLanes(uint64_t w) {
    return ~(((w & ~kHigh) + ~kHigh) | w) & kHigh;
  }

  static bool Has(const Slot* bucket, uint32_t fp) {
    if constexpr (kWordBucket) {
      return ZeroLanes(LoadBucket(bucket) ^ (kLaneOnes * fp)) != 0;
    } else {
      bool found = false;
      for (int j = 0; j < kB; ++j) found |= bucket[j] == fp;
      return found;
    }
  }

  static bool Put(Slot* bucket, uint32_t fp) {
    if constexpr (kWordBucket) {
      const uint64_t w = LoadBucket(bucket);
      const uint64_t zero = ZeroLanes(w);
      if (zero == 0) return false;
      const int shift = __builtin_ctzll(zero) - 15;  // 16 * lane
      const uint64_t updated = w | (uint64_t{fp} << shift);
      std::memcpy(bucket, &updated, sizeof(updated));
      return true;
    } else {
      for (int j = 0; j < kB; ++j) {
        if (bucket[j] == 0) {
          bucket[j] = static_cast<Slot>(fp);
          return true;
        }
      }
      return false;
    }
  }

  // One relocation walk in progress.
  struct Lane {
    bool active = false;
    bool warm = false;  // lane.bucket is cached and its alternates prefetched
    int kicks = 0;
    uint32_t homeless = 0;  // fingerprint without a slot
    uint32_t bucket = 0;    // full bucket of `homeless` the walk is at
    Slot seen[kB];          // entries of `bucket` when `alts` were computed
    uint32_t alts[kB];      // their alternate buckets (prefetched)
  };

  // Computes and prefetches the buckets the next step of a lane reads: the
  // alternate buckets of the entries of lane->bucket.
  static void PrefetchStep(const State& st, Lane* lane) {
    const Slot* b = st.Bucket(lane->bucket);
    for (int j = 0; j < kB; ++j) {
      lane->seen[j] = b[j];
      lane->alts[j] = st.Alt(lane->bucket, b[j]);
      __builtin_prefetch(st.Bucket(lane->alts[j]), 1);
    }
  }

  // One step of a walk at a full bucket. Returns true when the walk is done.
  static bool Step(const State& st, Lane* lane, uint64_t* rng) {
    Slot* b = st.Bucket(lane->bucket);
    if (Put(b, lane->homeless)) return true;  // another lane made room
    // Other lanes may have changed the bucket since PrefetchStep.
    if (std::memcmp(b, lane->seen, sizeof(lane->seen)) != 0) {
      for (int j = 0; j < kB; ++j) lane->alts[j] = st.Alt(lane->bucket, b[j]);
    }
    const uint32_t* alts = lane->alts;
    const uint32_t r = static_cast<uint32_t>(SplitMix64(rng));
    for (int k = 0; k < kB; ++k) {
      const int j = static_cast<int>((r + k) & (kB - 1));
      if (Put(st.Bucket(alts[j]), b[j])) {
        b[j] = static_cast<Slot>(lane->homeless);
        return true;
      }
    }
    const int j = static_cast<int>(r & (kB - 1));
    const uint32_t evicted = b[j];
    b[j] = static_cast<Slot>(lane->homeless);
    lane->homeless = evicted;
    lane->bucket = alts[j];
    ++lane->kicks;
    return false;
  }

  static bool Walks(State* st, const uint64_t* items, size_t count,
                    int max_kicks, BulkBuildResult* result) {
    uint64_t rng = 0x9e3779b97f4a7c15ULL ^ (uint64_t{st->seed} << 21);
    Lane lanes[kLanes];
    size_t next = 0;
    int active = 0;
    result->walks = count;
    for (;;) {
      // Fill idle lanes with new walks, starting at a random one of the two
      // (full) buckets.
      for (int l = 0; l < kLanes && next < count; ++l) {
        if (lanes[l].active) continue;
        const uint64_t h = items[next++];
        const uint32_t fp = FingerprintOf<S::kFpBits>(h);
        const uint32_t i1 = PrimaryBucket(h, st->m);
        lanes[l].active = true;
        lanes[l].warm = false;
        lanes[l].kicks = 0;
        lanes[l].homeless = fp;
        lanes[l].bucket = (SplitMix64(&rng) & 1) ? st->Alt(i1, fp) : i1;
        // Its entries are needed before its alternates can be prefetched.
        __builtin_prefetch(st->Bucket(lanes[l].bucket), 1);
        ++active;
      }
      if (active == 0) return true;
      for (int l = 0; l < kLanes; ++l) {
        Lane& lane = lanes[l];
        if (!lane.active) continue;
        if (!lane.warm) {
          PrefetchStep(*st, &lane);
          lane.warm = true;
          continue;
        }
        ++result->walk_steps;
        if (Step(*st, &lane, &rng)) {
          lane.active = false;
          --active;
        } else if (lane.kicks >= max_kicks) {
          lane.active = false;
          --active;
          if (result->victim_fp != 0) return false;  // second failure
          result->victim_fp = lane.homeless;
          result->victim_bucket = lane.bucket;
        } else {
          PrefetchStep(*st, &lane);
        }
      }
    }
  }
};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_BULK_BULK_BUILDER_H_
