// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "blocked/blocked_filter.h"

#include <algorithm>
#include <cstring>

#include "blocked/blocked_layout.h"
#include "filter/bucket_codec.h"
#include "filter/filter_format.h"
#include "filter/table_settings.h"

namespace cuckoo {
namespace internal {
namespace {


template <typename S>
class BlockedBuilder {
 public:
  static constexpr uint32_t kNb = BlockedBucketsPerBlock(S::kFpBits);
  static constexpr uint32_t kCap = 4 * kNb;
  // Blocks an overflowed item's displacement chain may visit.
  static constexpr int kBlockSteps = 64;
  static constexpr uint32_t kNone = ~uint32_t{0};

  BlockedBuilder(const BlockedBuildParams& p, BlockedScratch* scratch)
      : p_(p),
        sc_(*scratch),
        seed_mix_(BlockedSeedMix(p.seed)),
        rng_(0x2545f4914f6cdd1dULL ^ (uint64_t{p.seed} << 17)) {}

  BlockedBuildResult Build(const HashSpan* spans, size_t num_spans, size_t n,
                           uint8_t* out) {
    BlockedBuildResult result;
    const uint32_t nblocks = p_.num_blocks;
    GroupByBlock(spans, num_spans, n);
    sc_.items.assign(size_t{nblocks} * kCap, 0);
    sc_.fps.assign(size_t{nblocks} * kCap, 0);
    sc_.overflow.assign(nblocks, 0);
    sc_.pending.clear();
    sc_.stash.clear();

    // Primary blocks.
    for (uint32_t b = 0; b < nblocks; ++b) {
      for (uint32_t k = sc_.starts[b]; k < sc_.starts[b + 1]; ++k) {
        const uint32_t homeless = Insert(b, k, Place(k));
        if (homeless != 0) {
          uint32_t idx = homeless - 1;
          // Overflow an item of a class already set in b (before any is,
          // of b's most frequent class) if one can make room: each bit set
          // sends 1/8 of b's lookups to a second block.
          const BlockedSlot hs = Place(idx);
          const uint32_t classes = EvictableClasses(b);
          if ((classes & hs.overflow_bit) == 0) {
            const uint32_t evicted = EvictOfClasses(b, idx, hs, classes);
            if (evicted != 0) idx = evicted - 1;
          }
          sc_.overflow[b] |= static_cast<uint8_t>(Place(idx).overflow_bit);
          sc_.pending.push_back(idx);
        }
      }
    }

    // Secondary blocks, then the stash.
    for (uint32_t idx : sc_.pending) {
      ++result.overflowed;
      uint32_t homeless = idx;
      for (int step = 0; nblocks > 1 && step < kBlockSteps; ++step) {
        const uint32_t evicted = PlaceSecondary(homeless);
        if (evicted == 0) {
          homeless = kNone;
          break;
        }
        if (evicted - 1 == homeless) break;  // nothing to displace
        ++result.overflowed;
        homeless = evicted - 1;
      }
      if (homeless == kNone) continue;
      const BlockedSlot s = Place(homeless);
      sc_.stash.push_back(BlockedOverflowOf(s.g, s.block, nblocks).stash_key);
    }
    const size_t stashed = sc_.stash.size();
    std::sort(sc_.stash.begin(), sc_.stash.end());
    sc_.stash.erase(std::unique(sc_.stash.begin(), sc_.stash.end()),
                    sc_.stash.end());
    if (sc_.stash.size() > p_.max_stash) return result;

    // Pack.
    for (uint32_t b = 0; b < nblocks; ++b) {
      uint8_t* block = out + size_t{b} * kBlockBytes;
      const uint16_t* fps = Fps(b);
      for (uint32_t j = 0; j < kNb; ++j) {
        const uint32_t entries[4] = {fps[4 * j], fps[4 * j + 1], fps[4 * j + 2],
                                     fps[4 * j + 3]};
        // The codec's read-modify-write may touch up to 2 bytes of the next
        // block (or of the stash area), keeping their bits.
        BucketCodec<S>::Write(block, j, entries);
      }
      block[kBlockBytes - 1] = sc_.overflow[b];
      result.overflow_bits += static_cast<uint64_t>(
          __builtin_popcount(static_cast<unsigned>(sc_.overflow[b])));
    }
    uint8_t* stash = out + size_t{nblocks} * kBlockBytes;
    for (size_t i = 0; i < sc_.stash.size(); ++i) {
      StoreLE<uint32_t>(stash + 4 * i, sc_.stash[i]);
    }
    result.stash_size = sc_.stash.size();
    result.num_items = n - (stashed - sc_.stash.size());
    result.ok = true;
    return result;
  }

 private:
  BlockedSlot Place(uint32_t idx) const {
    return BlockedPlace<S>(sc_.sorted[idx], p_.num_blocks, seed_mix_);
  }
  uint32_t* Items(uint32_t b) { return sc_.items.data() + size_t{b} * kCap; }
  uint16_t* Fps(uint32_t b) { return sc_.fps.data() + size_t{b} * kCap; }

  void GroupByBlock(const HashSpan* spans, size_t num_spans, size_t n) {
    const uint32_t nblocks = p_.num_blocks;
    std::vector<uint32_t>& starts = sc_.starts;
    starts.assign(size_t{nblocks} + 1, 0);
    for (size_t s = 0; s < num_spans; ++s) {
      for (size_t k = 0; k < spans[s].size; ++k) {
        ++starts[FastRange32(static_cast<uint32_t>(spans[s].data[k]), nblocks) +
                 1];
      }
    }
    for (uint32_t b = 0; b < nblocks; ++b) starts[b + 1] += starts[b];
    sc_.sorted.resize(n);
    std::vector<uint32_t> next(starts.begin(), starts.end() - 1);
    for (size_t s = 0; s < num_spans; ++s) {
      for (size_t k = 0; k < spans[s].size; ++k) {
        const uint64_t h = spans[s].data[k];
        sc_.sorted[next[FastRange32(static_cast<uint32_t>(h), nblocks)]++] = h;
      }
    }
  }

  // Free slot of bucket j of block b, or -1.
  int FreeSlot(uint32_t b, uint32_t j) {
    const uint32_t* items = Items(b) + 4 * j;
    for (int k = 0; k < 4; ++k) {
      if (items[k] == 0) return k;
    }
    return -1;
  }

  int Fill(uint32_t b, uint32_t j) {
    const uint32_t* items = Items(b) + 4 * j;
    return (items[0] != 0) + (items[1] != 0) + (items[2] != 0) +
           (items[3] != 0);
  }

  void Set(uint32_t b, uint32_t slot, uint32_t idx, uint32_t fp) {
    Items(b)[slot] = idx + 1;
    Fps(b)[slot] = static_cast<uint16_t>(fp);
  }

  // Places overflowed item idx in its secondary block b2: in a free slot
  // or by relocations inside b2 (kept only if they succeed, so that the
  // items of b2 stay), else in place of a primary item of b2 whose overflow
  // class is already set there, or before any is, of its most frequent
  // class (EvictOfClasses), else in place of a random primary item of b2 in
  // its two buckets, setting that item's class.
  // Returns 0, or 1 + the index of the item displaced (now overflowed from
  // b2), or 1 + idx when there is none to displace.
  uint32_t PlaceSecondary(uint32_t idx) {
    const BlockedSlot s = Place(idx);
    const uint32_t b2 = BlockedOverflowOf(s.g, s.block, p_.num_blocks).block2;
    uint32_t saved_items[kCap];
    uint16_t saved_fps[kCap];
    std::memcpy(saved_items, Items(b2), sizeof(saved_items));
    std::memcpy(saved_fps, Fps(b2), sizeof(saved_fps));
    if (Insert(b2, idx, s) == 0) return 0;
    std::memcpy(Items(b2), saved_items, sizeof(saved_items));
    std::memcpy(Fps(b2), saved_fps, sizeof(saved_fps));
    const uint32_t evicted =
        EvictOfClasses(b2, idx, s, EvictableClasses(b2));
    if (evicted != 0) {
      sc_.overflow[b2] |= static_cast<uint8_t>(Place(evicted - 1).overflow_bit);
      return evicted;
    }
    uint32_t any[8];
    int num_any = 0;
    const uint32_t* items = Items(b2);
    for (uint32_t j : {s.i1, s.i2}) {
      for (uint32_t k = 0; k < 4; ++k) {
        if (IsPrimaryAt(b2, 4 * j + k)) any[num_any++] = 4 * j + k;
      }
    }
    if (num_any == 0) return idx + 1;
    rng_ = Mix64(rng_ + 0x9e3779b97f4a7c15ULL);
    const uint32_t slot = any[rng_ % static_cast<uint32_t>(num_any)];
    const uint32_t y = items[slot] - 1;
    sc_.overflow[b2] |= static_cast<uint8_t>(Place(y).overflow_bit);
    Set(b2, slot, idx, s.fp);
    return y + 1;
  }

  // True if slot `slot` of block b holds a primary item of b (not an item
  // placed there from another block, which has no other place to go).
  bool IsPrimaryAt(uint32_t b, uint32_t slot) {
    const uint32_t y = Items(b)[slot] - 1;  // ~0 for an empty slot
    return y >= sc_.starts[b] && y < sc_.starts[b + 1];
  }

  bool IsPrimaryOfClassesAt(uint32_t b, uint32_t slot, uint32_t classes) {
    return IsPrimaryAt(b, slot) &&
           (classes & Place(Items(b)[slot] - 1).overflow_bit) != 0;
  }

  // The overflow classes whose items block b should overflow first: those
  // already set there (overflowing one sets no new bit); before any is set,
  // the class with the most primary items in b (the likeliest to have an
  // evictable item then and at b's later overflows).
  uint32_t EvictableClasses(uint32_t b) {
    if (sc_.overflow[b] != 0) return sc_.overflow[b];
    uint32_t count[kOverflowClasses] = {};
    for (uint32_t k = sc_.starts[b]; k < sc_.starts[b + 1]; ++k) {
      ++count[__builtin_ctz(Place(k).overflow_bit)];
    }
    int best = 0;
    for (int c = 1; c < kOverflowClasses; ++c) {
      if (count[c] > count[best]) best = c;
    }
    return uint32_t{1} << best;
  }

  // Makes room for item idx (slot s, both of its buckets full in block b)
  // by evicting a primary item of b whose overflow class is in `classes`
  // (see EvictableClasses): one in bucket s.i1 or s.i2, else one in the
  // other bucket of an entry of those buckets, which moves there. Returns
  // 1 + the index of the evicted item, or 0 if there is none.
  uint32_t EvictOfClasses(uint32_t b, uint32_t idx, const BlockedSlot& s,
                          uint32_t classes) {
    uint32_t* items = Items(b);
    for (uint32_t j : {s.i1, s.i2}) {
      for (uint32_t k = 0; k < 4; ++k) {
        const uint32_t slot = 4 * j + k;
        if (!IsPrimaryOfClassesAt(b, slot, classes)) continue;
        const uint32_t y = items[slot] - 1;
        Set(b, slot, idx, s.fp);
        return y + 1;
      }
    }
    for (uint32_t j : {s.i1, s.i2}) {
      for (uint32_t k = 0; k < 4; ++k) {
        const uint32_t slot = 4 * j + k;
        if (items[slot] == 0) continue;
        const uint32_t z = items[slot] - 1;
        const BlockedSlot zs = Place(z);
        const uint32_t other = zs.i1 == j ? zs.i2 : zs.i1;
        for (uint32_t k2 = 0; k2 < 4; ++k2) {
          const uint32_t slot2 = 4 * other + k2;
          if (!IsPrimaryOfClassesAt(b, slot2, classes)) continue;
          const uint32_t y = items[slot2] - 1;
          Set(b, slot2, z, zs.fp);
          Set(b, slot, idx, s.fp);
          return y + 1;
        }
      }
    }
    return 0;
  }

  // Stores item idx (slot s) in block b, relocating entries inside the block
  // if both buckets are full. Returns 0, or 1 + the index of the item left
  // without a slot (possibly another item of the block).
  uint32_t Insert(uint32_t b, uint32_t idx, const BlockedSlot& s) {
    const int f1 = Fill(b, s.i1);
    const int f2 = Fill(b, s.i2);
    if (f1 < 4 || f2 < 4) {
      const uint32_t j = f1 <= f2 ? s.i1 : s.i2;
      Set(b, 4 * j + static_cast<uint32_t>(FreeSlot(b, j)), idx, s.fp);
      return 0;
    }
    // A full block has nothing to relocate to.
    const uint32_t* items = Items(b);
    uint32_t used = 0;
    for (uint32_t k = 0; k < kCap; ++k) used += items[k] != 0;
    if (used == kCap) return idx + 1;
    uint32_t homeless = idx;
    uint32_t fp = s.fp;
    uint32_t bucket = (rng_ & 1) ? s.i1 : s.i2;
    for (int kick = 0; kick < p_.max_kicks; ++kick) {
      rng_ = Mix64(rng_ + 0x9e3779b97f4a7c15ULL);
      const uint32_t slot = 4 * bucket + static_cast<uint32_t>(rng_ & 3);
      const uint32_t evicted = Items(b)[slot] - 1;
      Set(b, slot, homeless, fp);
      homeless = evicted;
      const BlockedSlot e = Place(homeless);
      fp = e.fp;
      bucket = e.i1 == bucket ? e.i2 : e.i1;
      const int free_slot = FreeSlot(b, bucket);
      if (free_slot >= 0) {
        Set(b, 4 * bucket + static_cast<uint32_t>(free_slot), homeless, fp);
        return 0;
      }
    }
    return homeless + 1;
  }

  const BlockedBuildParams& p_;
  BlockedScratch& sc_;
  const uint64_t seed_mix_;
  uint64_t rng_;
};

}  // namespace

BlockedBuildResult BuildBlockedTable(const HashSpan* spans, size_t num_spans,
                                     size_t n, const BlockedBuildParams& params,
                                     BlockedScratch* scratch, uint8_t* out) {
  BlockedBuildResult result;
  if (params.num_blocks == 0 || n >= (uint64_t{1} << 32) - 1) return result;
  DispatchBlocked(params.fingerprint_bits, [&](auto settings) {
    using S = decltype(settings);
    result = BlockedBuilder<S>(params, scratch).Build(spans, num_spans, n, out);
  });
  return result;
}

size_t EncodeBlockedTrailer(const BlockedBuildParams& params,
                            const BlockedBuildResult& r, uint8_t* out) {
  Trailer t = Trailer::ForLayout(params.fingerprint_bits, 4,
                                 /*semi_sort=*/true);
  t.format_version = kFormatVersionBlocked;
  t.num_buckets = params.num_blocks;
  t.num_items = r.num_items;
  t.seed = params.seed;
  t.victim_fp = static_cast<uint32_t>(r.stash_size);
  const size_t table_bytes =
      size_t{params.num_blocks} * kBlockBytes + 4 * r.stash_size;
  EncodeTrailer(t, reinterpret_cast<char*>(out), table_bytes);
  return table_bytes + kTrailerSize;
}

bool ParseBlockedFilter(const char* data, size_t size, BlockedView* view,
                        std::string* error) {
  Trailer t;
  if (!DecodeBlockedFilter(data, size, &t, error)) return false;
  const uint8_t* base = reinterpret_cast<const uint8_t*>(data);
  view->ref.blocks = base;
  view->ref.num_blocks = static_cast<uint32_t>(t.num_buckets);  // < 2^32
  view->ref.seed_mix = BlockedSeedMix(t.seed);
  view->ref.stash = base + static_cast<size_t>(t.num_buckets) * kBlockBytes;
  view->ref.stash_size = t.victim_fp;
  view->fingerprint_bits = t.fingerprint_bits;
  view->num_items = t.num_items;
  view->seed = t.seed;
  return true;
}

bool BlockedContains(const BlockedView& view, uint64_t hash) {
  bool found = true;  // an unknown width cannot pass ParseBlockedFilter
  DispatchBlocked(view.fingerprint_bits, [&](auto settings) {
    using S = decltype(settings);
    found = BlockedTable<S>::Contains(view.ref, hash);
  });
  return found;
}

double BlockedOverflowBitFraction(const BlockedView& view) {
  uint64_t set = 0;
  for (uint32_t b = 0; b < view.ref.num_blocks; ++b) {
    set += static_cast<uint64_t>(__builtin_popcount(
        view.ref.blocks[size_t{b} * kBlockBytes + kBlockBytes - 1]));
  }
  return double(set) / (double(view.ref.num_blocks) * kOverflowClasses);
}

}  // namespace internal
}  // namespace cuckoo
