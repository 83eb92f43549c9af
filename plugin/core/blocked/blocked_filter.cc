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
  // GroupByBlock's two-pass sort: only from kTwoPassMinBlocks blocks on
  // (about 3.3 million items at f = 10, 27 MB of hashes: below that, in the
  // L3 cache, one pass was 4% faster at 10^6 items), with ranges of at least
  // 2^kMinRangeBits blocks, at most kMaxRanges of them.
  static constexpr uint32_t kTwoPassMinBlocks = uint32_t{1} << 16;
  static constexpr int kMinRangeBits = 6;
  static constexpr uint64_t kMaxRanges = 1024;
  // Entries per block in the scratch table: its slots and its record.
  static constexpr uint32_t kRecord = kCap + 1;
  // Overflowed items ahead of the one being placed whose secondary blocks
  // are prefetched.
  static constexpr size_t kPrefetchAhead = 8;
  static_assert(kNb <= 63, "BlockedEntry keeps a bucket index in 6 bits");

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
    sc_.entries.Reserve(size_t{nblocks} * kRecord);
    sc_.pending.clear();
    sc_.stash.clear();

    // Primary blocks. Each block's entries are cleared just before it is
    // filled, so they are still in the cache then.
    for (uint32_t b = 0; b < nblocks; ++b) {
      std::memset(Entries(b), 0, kRecord * sizeof(BlockedEntry));
      uint32_t class_count[kOverflowClasses] = {};
      for (uint32_t k = sc_.starts[b]; k < sc_.starts[b + 1]; ++k) {
        const BlockedEntry e = EntryOf(Place(k), true);
        ++class_count[ClassOf(e)];
        BlockedEntry homeless = Insert(b, e);
        if (homeless.fp == 0) continue;
        // Overflow an item of a class already set in b (before any is, of
        // b's most frequent class) if one can make room: each bit set sends
        // 1/8 of b's lookups to a second block.
        const uint32_t classes = EvictableClasses(b);
        if ((classes & OverflowBit(homeless)) == 0) {
          const BlockedEntry evicted = EvictOfClasses(b, homeless, classes);
          if (evicted.fp != 0) homeless = evicted;
        }
        Record(b).fp |= static_cast<uint16_t>(OverflowBit(homeless));
        sc_.pending.push_back({homeless, b});
      }
      // Every primary of b is counted: EvictableClasses' choice for b from
      // now on, without reading b's hashes again.
      Record(b).meta = static_cast<uint16_t>(MostFrequent(class_count));
    }
    primaries_placed_ = true;

    // Secondary blocks, then the stash.
    const std::vector<BlockedPending>& pending = sc_.pending;
    for (size_t i = 0; i < pending.size(); ++i) {
      if (i + kPrefetchAhead < pending.size()) {
        // The record of a later item's secondary block (these are spread
        // over the whole scratch table). Written out here: GCC deletes a
        // call to a helper that only prefetches (-O2 finds it pure, and its
        // result unused).
        const char* record = reinterpret_cast<const char*>(
            Entries(pending[i + kPrefetchAhead].entry.block2));
        for (size_t at = 0; at < kRecord * sizeof(BlockedEntry) + 63;
             at += 64) {
          __builtin_prefetch(record + at);
        }
      }
      ++result.overflowed;
      BlockedPending homeless = pending[i];
      bool placed = false;
      for (int step = 0; nblocks > 1 && step < kBlockSteps; ++step) {
        BlockedPending evicted;
        if (PlaceSecondary(homeless.entry, &evicted)) {
          placed = true;
          break;
        }
        if (evicted.entry.fp == 0) break;  // nothing to displace
        ++result.overflowed;
        homeless = evicted;
      }
      if (!placed) StashKeys(homeless);
    }
    const size_t stashed = sc_.stash.size();
    std::sort(sc_.stash.begin(), sc_.stash.end());
    sc_.stash.erase(std::unique(sc_.stash.begin(), sc_.stash.end()),
                    sc_.stash.end());
    if (sc_.stash.size() > p_.max_stash) return result;

    // Pack.
    for (uint32_t b = 0; b < nblocks; ++b) {
      uint8_t* block = out + size_t{b} * kBlockBytes;
      const BlockedEntry* e = Entries(b);
      for (uint32_t j = 0; j < kNb; ++j, e += 4) {
        const uint32_t fps[4] = {e[0].fp, e[1].fp, e[2].fp, e[3].fp};
        // The codec's read-modify-write may touch up to 2 bytes of the next
        // block (or of the stash area), keeping their bits.
        BucketCodec<S>::Write(block, j, fps);
      }
      const unsigned overflow = Record(b).fp;
      block[kBlockBytes - 1] = static_cast<uint8_t>(overflow);
      result.overflow_bits +=
          static_cast<uint64_t>(__builtin_popcount(overflow));
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
  BlockedEntry* Entries(uint32_t b) {
    return sc_.entries.data() + size_t{b} * kRecord;
  }
  // Block b's own record (see BlockedScratch::entries): block2 = its entries,
  // fp = its overflow bits, meta = the class EvictableClasses picks while
  // none is set.
  BlockedEntry& Record(uint32_t b) { return Entries(b)[kCap]; }

  // The entry of the item placed at s, stored in its primary block or not.
  BlockedEntry EntryOf(const BlockedSlot& s, bool primary) const {
    BlockedEntry e;
    e.block2 = BlockedOverflowOf(s.g, s.block, p_.num_blocks).block2;
    e.fp = static_cast<uint16_t>(s.fp);
    e.meta = static_cast<uint16_t>(
        s.i1 | s.i2 << 6 |
        static_cast<uint32_t>(__builtin_ctz(s.overflow_bit)) << 12 |
        uint32_t{primary} << 15);
    return e;
  }
  static uint32_t Bucket1(const BlockedEntry& e) { return e.meta & 63u; }
  static uint32_t Bucket2(const BlockedEntry& e) { return (e.meta >> 6) & 63u; }
  // The bucket of e's pair that is not `bucket`.
  static uint32_t OtherBucket(const BlockedEntry& e, uint32_t bucket) {
    return Bucket1(e) == bucket ? Bucket2(e) : Bucket1(e);
  }
  static uint32_t ClassOf(const BlockedEntry& e) { return (e.meta >> 12) & 7u; }
  static uint32_t OverflowBit(const BlockedEntry& e) {
    return uint32_t{1} << ClassOf(e);
  }
  // True if e holds an item whose primary block is the one it is stored in
  // (not an item placed there from another block, which has no other place
  // to go).
  static bool IsPrimary(const BlockedEntry& e) {
    return e.fp != 0 && (e.meta >> 15) != 0;
  }
  static bool IsPrimaryOfClasses(const BlockedEntry& e, uint32_t classes) {
    return IsPrimary(e) && (classes & OverflowBit(e)) != 0;
  }

  // Groups the hashes by primary block, stably (input order within a
  // block): sorted[starts[b], starts[b + 1]) are block b's. One counting
  // sort writes every hash to a random place of the n-entry array, a cache
  // (and, beyond a few MB, TLB) miss each once the array outgrows the
  // caches. So, from kTwoPassMinBlocks blocks on, two stable passes
  // instead: by range of 2^range_bits blocks (at most kMaxRanges write
  // cursors, which stay cached), then each range, whose hashes fit the L2
  // cache, by block. Same result either way.
  void GroupByBlock(const HashSpan* spans, size_t num_spans, size_t n) {
    const uint32_t nblocks = p_.num_blocks;
    int range_bits = p_.group_range_bits;
    if (range_bits < 0 && nblocks < kTwoPassMinBlocks) range_bits = 32;
    if (range_bits < 0) {
      range_bits = kMinRangeBits;
      while ((uint64_t{nblocks} >> range_bits) > kMaxRanges) ++range_bits;
    }
    sc_.starts.assign(size_t{nblocks} + 1, 0);
    sc_.sorted.Reserve(n);
    if (range_bits >= 32) {
      CountingSort(spans, num_spans, 0, nblocks, sc_.sorted.data());
      return;
    }
    const uint32_t num_ranges =
        static_cast<uint32_t>(((uint64_t{nblocks} - 1) >> range_bits) + 1);
    std::vector<uint32_t>& cursor = sc_.range_starts;
    cursor.assign(size_t{num_ranges} + 1, 0);
    for (size_t s = 0; s < num_spans; ++s) {
      for (size_t k = 0; k < spans[s].size; ++k) {
        ++cursor[(BlockOf(spans[s].data[k]) >> range_bits) + 1];
      }
    }
    for (uint32_t r = 0; r < num_ranges; ++r) cursor[r + 1] += cursor[r];
    // Scatter by range; afterwards cursor[r] is range r's end, and range r
    // starts where range r - 1 ends.
    uint64_t* sorted = sc_.sorted.data();
    for (size_t s = 0; s < num_spans; ++s) {
      for (size_t k = 0; k < spans[s].size; ++k) {
        const uint64_t h = spans[s].data[k];
        sorted[cursor[BlockOf(h) >> range_bits]++] = h;
      }
    }
    for (uint32_t r = 0; r < num_ranges; ++r) {
      const uint32_t begin = r == 0 ? 0 : cursor[r - 1];
      const uint32_t first_block = r << range_bits;
      const uint32_t end_block = static_cast<uint32_t>(
          std::min<uint64_t>(nblocks, (uint64_t{r} + 1) << range_bits));
      const HashSpan range{sorted + begin, cursor[r] - begin};
      sc_.range.resize(range.size);
      CountingSort(&range, 1, first_block, end_block, sc_.range.data());
      std::memcpy(sorted + begin, sc_.range.data(),
                  range.size * sizeof(uint64_t));
      // CountingSort counted from 0: shift the range's starts by its
      // position.
      for (uint32_t b = first_block; b <= end_block; ++b) {
        sc_.starts[b] += begin;
      }
    }
  }

  uint32_t BlockOf(uint64_t h) const {
    return FastRange32(static_cast<uint32_t>(h), p_.num_blocks);
  }

  // Stable counting sort of the hashes in `spans`, all of blocks
  // [first_block, end_block), into out[0, total); sets starts[b] for b in
  // [first_block, end_block] relative to out (starts[end_block] = total).
  void CountingSort(const HashSpan* spans, size_t num_spans,
                    uint32_t first_block, uint32_t end_block, uint64_t* out) {
    uint32_t* starts = sc_.starts.data() + first_block;
    const uint32_t blocks = end_block - first_block;
    std::fill(starts, starts + blocks + 1, 0);
    for (size_t s = 0; s < num_spans; ++s) {
      for (size_t k = 0; k < spans[s].size; ++k) {
        ++starts[BlockOf(spans[s].data[k]) - first_block + 1];
      }
    }
    for (uint32_t b = 0; b < blocks; ++b) starts[b + 1] += starts[b];
    // Scatter with the starts as cursors (each ends at its block's end),
    // then shift them back by one block.
    for (size_t s = 0; s < num_spans; ++s) {
      for (size_t k = 0; k < spans[s].size; ++k) {
        const uint64_t h = spans[s].data[k];
        out[starts[BlockOf(h) - first_block]++] = h;
      }
    }
    for (uint32_t b = blocks; b > 0; --b) starts[b] = starts[b - 1];
    starts[0] = 0;
  }

  // Number of entries in bucket j of block b. A bucket's entries always
  // fill its first slots: an entry goes to the first free slot, and
  // relocations and evictions only ever replace entries.
  int Fill(uint32_t b, uint32_t j) {
    const BlockedEntry* e = Entries(b) + 4 * j;
    return (e[0].fp != 0) + (e[1].fp != 0) + (e[2].fp != 0) + (e[3].fp != 0);
  }

  // Places overflowed entry h (taken from its primary block) in its
  // secondary block b2: in a free slot or by relocations inside b2 (kept
  // only if they succeed, so that the items of b2 stay), else in place of a
  // primary item of b2 whose overflow class is already set there, or before
  // any is, of its most frequent class (EvictOfClasses), else in place of a
  // random primary item of b2 in its two buckets, setting that item's
  // class. Returns true if h is stored without displacing anyone; else
  // *evicted is the primary entry of b2 displaced (now overflowed from b2),
  // or an empty entry when there is none to displace.
  bool PlaceSecondary(const BlockedEntry& h, BlockedPending* evicted) {
    const uint32_t b2 = h.block2;
    BlockedEntry e = h;
    e.meta &= 0x7fff;  // not in its primary block
    if (Fill(b2, Bucket1(e)) < 4 || Fill(b2, Bucket2(e)) < 4) {
      Insert(b2, e);  // a free slot: always stored
      return true;
    }
    // A walk that fails leaves b2's entries moved: keep a copy to restore.
    BlockedEntry saved[kCap];
    std::memcpy(saved, Entries(b2), sizeof(saved));
    if (Insert(b2, e).fp == 0) return true;
    std::memcpy(Entries(b2), saved, sizeof(saved));
    evicted->block = b2;
    evicted->entry = EvictOfClasses(b2, e, EvictableClasses(b2));
    if (evicted->entry.fp != 0) {
      Record(b2).fp |= static_cast<uint16_t>(OverflowBit(evicted->entry));
      return false;
    }
    uint32_t any[8];
    int num_any = 0;
    BlockedEntry* entries = Entries(b2);
    for (uint32_t j : {Bucket1(e), Bucket2(e)}) {
      for (uint32_t k = 0; k < 4; ++k) {
        if (IsPrimary(entries[4 * j + k])) any[num_any++] = 4 * j + k;
      }
    }
    if (num_any == 0) return false;
    rng_ = Mix64(rng_ + 0x9e3779b97f4a7c15ULL);
    const uint32_t slot = any[rng_ % static_cast<uint32_t>(num_any)];
    evicted->entry = entries[slot];
    Record(b2).fp |= static_cast<uint16_t>(OverflowBit(evicted->entry));
    entries[slot] = e;
    return false;
  }

  // Adds to the stash the stash key of the item of entry h, taken from
  // its primary block: the items of that block whose entry equals h (any
  // of them answers "may match" for the others; two are expected in about
  // one filter of 10^6).
  void StashKeys(const BlockedPending& h) {
    for (uint32_t k = sc_.starts[h.block]; k < sc_.starts[h.block + 1]; ++k) {
      const BlockedSlot s = Place(k);
      const BlockedEntry e = EntryOf(s, /*primary=*/true);
      if (e.fp == h.entry.fp && e.meta == h.entry.meta &&
          e.block2 == h.entry.block2) {
        sc_.stash.push_back(
            BlockedOverflowOf(s.g, s.block, p_.num_blocks).stash_key);
      }
    }
  }

  // The overflow classes whose items block b should overflow first: those
  // already set there (overflowing one sets no new bit); before any is set,
  // the class with the most primary items in b (the likeliest to have an
  // evictable item then and at b's later overflows).
  uint32_t EvictableClasses(uint32_t b) {
    const BlockedEntry& record = Record(b);
    if (record.fp != 0) return record.fp;
    if (primaries_placed_) return uint32_t{1} << record.meta;
    uint32_t count[kOverflowClasses] = {};
    for (uint32_t k = sc_.starts[b]; k < sc_.starts[b + 1]; ++k) {
      ++count[__builtin_ctz(Place(k).overflow_bit)];
    }
    return uint32_t{1} << MostFrequent(count);
  }

  // The first class with the highest count.
  static uint32_t MostFrequent(const uint32_t (&count)[kOverflowClasses]) {
    uint32_t best = 0;
    for (uint32_t c = 1; c < kOverflowClasses; ++c) {
      if (count[c] > count[best]) best = c;
    }
    return best;
  }

  // Makes room for e (both of its buckets full in block b) by evicting a
  // primary item of b whose overflow class is in `classes` (see
  // EvictableClasses): one in e's buckets, else one in the other bucket of
  // an entry of those buckets, which moves there. Returns the evicted
  // entry, or an empty one if there is none.
  BlockedEntry EvictOfClasses(uint32_t b, const BlockedEntry& e,
                              uint32_t classes) {
    BlockedEntry* entries = Entries(b);
    for (uint32_t j : {Bucket1(e), Bucket2(e)}) {
      for (uint32_t k = 0; k < 4; ++k) {
        const uint32_t slot = 4 * j + k;
        if (!IsPrimaryOfClasses(entries[slot], classes)) continue;
        const BlockedEntry y = entries[slot];
        entries[slot] = e;
        return y;
      }
    }
    for (uint32_t j : {Bucket1(e), Bucket2(e)}) {
      for (uint32_t k = 0; k < 4; ++k) {
        const uint32_t slot = 4 * j + k;
        const BlockedEntry z = entries[slot];
        if (z.fp == 0) continue;
        const uint32_t other = OtherBucket(z, j);
        for (uint32_t k2 = 0; k2 < 4; ++k2) {
          const uint32_t slot2 = 4 * other + k2;
          if (!IsPrimaryOfClasses(entries[slot2], classes)) continue;
          const BlockedEntry y = entries[slot2];
          entries[slot2] = z;
          entries[slot] = e;
          return y;
        }
      }
    }
    return BlockedEntry();
  }

  // Stores e in block b, relocating entries inside the block if both of its
  // buckets are full. Returns an empty entry, or the entry left without a
  // slot (possibly another item of the block). A relocation step moves an
  // entry to the other bucket of its pair, which the entry carries, so a
  // walk reads nothing outside the block's entries.
  BlockedEntry Insert(uint32_t b, const BlockedEntry& e) {
    const uint32_t i1 = Bucket1(e), i2 = Bucket2(e);
    const int f1 = Fill(b, i1);
    const int f2 = Fill(b, i2);
    BlockedEntry* entries = Entries(b);
    uint32_t& used = Record(b).block2;
    if (f1 < 4 || f2 < 4) {
      const uint32_t slot = f1 <= f2 ? 4 * i1 + f1 : 4 * i2 + f2;
      entries[slot] = e;
      ++used;
      return BlockedEntry();
    }
    // A full block has nothing to relocate to.
    if (used == kCap) return e;
    // The walk only replaces entries, so the full buckets stay full until
    // it reaches one that is not: one mask read per step instead of a
    // bucket's four entries.
    uint64_t full = 0;
    for (uint32_t j = 0; j < kNb; ++j) {
      full |= uint64_t{Fill(b, j) == 4} << j;
    }
    BlockedEntry homeless = e;
    uint32_t bucket = (rng_ & 1) ? i1 : i2;
    for (int kick = 0; kick < p_.max_kicks; ++kick) {
      rng_ = Mix64(rng_ + 0x9e3779b97f4a7c15ULL);
      const uint32_t slot = 4 * bucket + static_cast<uint32_t>(rng_ & 3);
      const BlockedEntry evicted = entries[slot];
      entries[slot] = homeless;
      homeless = evicted;
      bucket = OtherBucket(homeless, bucket);
      if (((full >> bucket) & 1) == 0) {
        const int fill = Fill(b, bucket);
        entries[4 * bucket + static_cast<uint32_t>(fill)] = homeless;
        ++used;
        return BlockedEntry();
      }
    }
    return homeless;
  }

  const BlockedBuildParams& p_;
  BlockedScratch& sc_;
  const uint64_t seed_mix_;
  uint64_t rng_;
  // Set once every primary item is in place: from then on each block's
  // record holds its most frequent class.
  bool primaries_placed_ = false;
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
