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
  // Grouping: ranges of at least 2^kMinRangeBits blocks (about 3,300 items,
  // 26 KB of hashes at f = 10, so that a range's second pass and its fill
  // stay in the L1/L2 cache), at most kMaxRanges of them (the first pass's
  // write cursors stay cached).
  static constexpr int kMinRangeBits = 6;
  static constexpr uint64_t kMaxRanges = 1024;
  static_assert(kNb <= 63, "an entry keeps a bucket index in 6 bits");

  BlockedBuilder(const BlockedBuildParams& p, BlockedScratch* scratch)
      : p_(p), sc_(*scratch), seed_mix_(BlockedSeedMix(p.seed)) {}

  BlockedBuildResult Build(const HashSpan* spans, size_t num_spans, size_t n,
                           uint8_t* out) {
    BlockedBuildResult result;
    out_ = out;
    sc_.incoming.clear();
    sc_.outgoing.clear();
    sc_.stash.clear();
    sc_.wrap_items.clear();
    GroupAndFill(spans, num_spans, n);
    // The last block's overflow goes to block 0, filled first: the first
    // blocks were kept unpacked (with their items) for this, and take it as
    // any block takes its predecessor's overflow, evicting their own items
    // to the next one if needed. What the last of them cannot take goes to
    // the stash (with a single block, all of it).
    const uint32_t wrap_blocks = std::min(kWrapBlocks, p_.num_blocks);
    for (uint32_t b = 0; b < wrap_blocks && p_.num_blocks > 1; ++b) {
      if (sc_.incoming.empty()) break;
      Block& k = wrap_[b];
      const uint32_t before =
          static_cast<uint32_t>(__builtin_popcount(k.overflow));
      sc_.outgoing.clear();
      const uint64_t* items = sc_.wrap_items.data() + wrap_start_[b];
      const uint32_t count = wrap_start_[b + 1] - wrap_start_[b];
      uint32_t most_frequent = MostFrequentClass(items, count, 0);
      Absorb(&k, items, most_frequent);
      overflowed_ += sc_.outgoing.size();
      overflow_bits_ +=
          static_cast<uint32_t>(__builtin_popcount(k.overflow)) - before;
      Pack(k, out_ + size_t{b} * kBlockBytes);
      sc_.incoming.swap(sc_.outgoing);
    }
    for (const Pending& q : sc_.incoming) StashHash(q.hash);
    const size_t stashed = sc_.stash.size();
    std::sort(sc_.stash.begin(), sc_.stash.end());
    sc_.stash.erase(std::unique(sc_.stash.begin(), sc_.stash.end()),
                    sc_.stash.end());
    if (sc_.stash.size() > p_.max_stash) return result;
    uint8_t* stash = out + size_t{p_.num_blocks} * kBlockBytes;
    for (size_t i = 0; i < sc_.stash.size(); ++i) {
      StoreLE<uint32_t>(stash + 4 * i, sc_.stash[i]);
    }
    result.ok = true;
    result.num_items = n - (stashed - sc_.stash.size());
    result.overflowed = overflowed_;
    result.stash_size = sc_.stash.size();
    result.overflow_bits = overflow_bits_;
    return result;
  }

 private:
  // An entry of the unpacked block: fingerprint (bits 0-15), the item's two
  // buckets (16-21, 22-27), its overflow class (28-30), whether the block is
  // its primary one (31), and for a primary item its index among the
  // block's items (32-63), which gives its hash when it is overflowed.
  using Entry = uint64_t;
  static constexpr Entry kPrimaryBit = Entry{1} << 31;
  static constexpr uint32_t kAllClasses = (uint32_t{1} << kOverflowClasses) - 1;

  static Entry MakeEntry(const BlockedSlot& s, uint32_t index) {
    return Entry{s.fp} | Entry{s.i1} << 16 | Entry{s.i2} << 22 |
           Entry{s.overflow_class} << 28 | kPrimaryBit | Entry{index} << 32;
  }
  static uint32_t Fp(Entry e) { return static_cast<uint32_t>(e) & 0xffffu; }
  static uint32_t Bucket1(Entry e) {
    return static_cast<uint32_t>(e >> 16) & 63u;
  }
  static uint32_t Bucket2(Entry e) {
    return static_cast<uint32_t>(e >> 22) & 63u;
  }
  // The bucket of e's pair that is not u (u is one of them).
  static uint32_t Other(Entry e, uint32_t u) {
    return Bucket1(e) ^ Bucket2(e) ^ u;
  }
  static uint32_t OverflowBit(Entry e) {
    return uint32_t{1} << ((static_cast<uint32_t>(e) >> 28) & 7u);
  }
  static bool IsPrimary(Entry e) { return (e & kPrimaryBit) != 0; }
  static uint32_t Index(Entry e) { return static_cast<uint32_t>(e >> 32); }

  // Fill counts of a block's buckets, 4 bits each (one word up to 16
  // buckets, f >= 9).
  static constexpr uint32_t kFillWords = (kNb + 15) / 16;
  struct Fills {
    uint64_t w[kFillWords];
    uint32_t Get(uint32_t j) const {
      return static_cast<uint32_t>(w[j >> 4] >> (4 * (j & 15))) & 15u;
    }
    void Increment(uint32_t j) { w[j >> 4] += uint64_t{1} << (4 * (j & 15)); }
  };

  // One block, unpacked: bucket j's entries are slot[4j, 4j + fill.Get(j)).
  struct Block {
    Entry slot[kCap];
    Fills fill;
    uint32_t used;
    uint32_t overflow;  // overflow bits
    void Reset() {
      fill = Fills{};
      used = 0;
      overflow = 0;
    }
    void Append(uint32_t j, Entry e) {
      slot[4 * j + fill.Get(j)] = e;
      fill.Increment(j);
      ++used;
    }
  };
  using Pending = BlockedScratch::Pending;

  // Groups the hashes by primary block, stably (input order within a
  // block), and fills the blocks in order. A first pass scatters the
  // hashes by range of 2^range_bits blocks (at most kMaxRanges write
  // cursors, which stay cached); each range is then grouped by block in a
  // cache-resident buffer and its blocks are filled right away.
  void GroupAndFill(const HashSpan* spans, size_t num_spans, size_t n) {
    const uint32_t nblocks = p_.num_blocks;
    int range_bits = p_.group_range_bits;
    if (range_bits < 0) {
      range_bits = kMinRangeBits;
      while ((uint64_t{nblocks} >> range_bits) >= kMaxRanges) ++range_bits;
    }
    if (range_bits >= 32 || (uint64_t{nblocks} >> range_bits) == 0) {
      SortRange(spans, num_spans, n, 0, nblocks);
      FillRange(0, nblocks);
      return;
    }
    const uint32_t num_ranges =
        static_cast<uint32_t>(((uint64_t{nblocks} - 1) >> range_bits) + 1);
    std::vector<uint32_t>& cursor = sc_.range_starts;
    cursor.assign(size_t{num_ranges} + 1, 0);
    // Loop bounds and the block count in locals: the stores through the
    // cursors could alias them, and the compiler reloaded them per hash.
    const uint32_t nb = nblocks;
    for (size_t s = 0; s < num_spans; ++s) {
      const uint64_t* data = spans[s].data;
      const size_t size = spans[s].size;
      uint32_t* counts = cursor.data() + 1;
      for (size_t k = 0; k < size; ++k) {
        ++counts[BlockOf(data[k], nb) >> range_bits];
      }
    }
    for (uint32_t r = 0; r < num_ranges; ++r) cursor[r + 1] += cursor[r];
    // Scatter by range; afterwards cursor[r] is range r's end, and range r
    // starts where range r - 1 ends.
    sc_.grouped.Reserve(n);
    uint64_t* grouped = sc_.grouped.data();
    uint32_t* cursors = cursor.data();
    for (size_t s = 0; s < num_spans; ++s) {
      const uint64_t* data = spans[s].data;
      const size_t size = spans[s].size;
      for (size_t k = 0; k < size; ++k) {
        const uint64_t h = data[k];
        grouped[cursors[BlockOf(h, nb) >> range_bits]++] = h;
      }
    }
    for (uint32_t r = 0; r < num_ranges; ++r) {
      const uint32_t begin = r == 0 ? 0 : cursor[r - 1];
      const uint32_t first_block = r << range_bits;
      const uint32_t end_block = static_cast<uint32_t>(
          std::min<uint64_t>(nblocks, (uint64_t{r} + 1) << range_bits));
      const HashSpan range{grouped + begin, cursor[r] - begin};
      SortRange(&range, 1, range.size, first_block, end_block);
      FillRange(first_block, end_block);
    }
  }

  static uint32_t BlockOf(uint64_t h, uint32_t num_blocks) {
    return FastRange32(static_cast<uint32_t>(h), num_blocks);
  }

  // Stable counting sort of the `count` hashes in `spans`, all of blocks
  // [first_block, end_block), into sc_.local; block b's are
  // local[starts[b - first_block], starts[b - first_block + 1]).
  void SortRange(const HashSpan* spans, size_t num_spans, size_t count,
                 uint32_t first_block, uint32_t end_block) {
    const uint32_t blocks = end_block - first_block;
    std::vector<uint32_t>& starts = sc_.starts;
    starts.assign(size_t{blocks} + 1, 0);
    const uint32_t nb = p_.num_blocks;
    for (size_t s = 0; s < num_spans; ++s) {
      const uint64_t* data = spans[s].data;
      const size_t size = spans[s].size;
      uint32_t* counts = starts.data() + 1;
      for (size_t k = 0; k < size; ++k) {
        ++counts[BlockOf(data[k], nb) - first_block];
      }
    }
    for (uint32_t b = 0; b < blocks; ++b) starts[b + 1] += starts[b];
    // Scatter with the starts as cursors (each ends at its block's end),
    // then shift them back by one block.
    sc_.local.Reserve(count);
    uint64_t* out = sc_.local.data();
    uint32_t* cursors = starts.data();
    for (size_t s = 0; s < num_spans; ++s) {
      const uint64_t* data = spans[s].data;
      const size_t size = spans[s].size;
      for (size_t k = 0; k < size; ++k) {
        const uint64_t h = data[k];
        out[cursors[BlockOf(h, nb) - first_block]++] = h;
      }
    }
    for (uint32_t b = blocks; b > 0; --b) starts[b] = starts[b - 1];
    starts[0] = 0;
  }

  void FillRange(uint32_t first_block, uint32_t end_block) {
    const uint64_t* local = sc_.local.data();
    const uint32_t* starts = sc_.starts.data();
    for (uint32_t b = first_block; b < end_block; ++b) {
      const uint32_t at = starts[b - first_block];
      FillBlock(b, local + at, starts[b - first_block + 1] - at);
    }
  }

  // Fills block b with its own `count` items, then with the items that
  // overflowed from block b - 1 (whose only other place is the stash: they
  // take free slots, else evict one of b's own items, which moves on), packs
  // it, and leaves its own overflow for block b + 1.
  void FillBlock(uint32_t b, const uint64_t* items, uint32_t count) {
    Block& k = block_;
    k.Reset();
    sc_.outgoing.clear();
    uint32_t most_frequent = kOverflowClasses;  // not counted yet
    // Items per overflow class, 8 bits each (wrapping only in a block of
    // more than 255 items of a class, where it would merely steer the
    // choice of class).
    uint64_t class_counts = 0;
    // The items that fit in the emptier of their two buckets (most of them)
    // take this loop, with the fill counts and the item count in registers
    // (kept in the block, they made every item wait for the previous one's
    // store); the rest leave it for SlowPlace.
    uint32_t i = 0;
    while (i < count) {
      Fills fill = k.fill;
      uint32_t used = k.used;
      Entry homeless = 0;
      for (; i < count; ++i) {
        const BlockedSlot s =
            BlockedPlace<S>(items[i], p_.num_blocks, seed_mix_);
        class_counts += uint64_t{1} << (8 * s.overflow_class);
        const Entry e = MakeEntry(s, i);
        const uint32_t f1 = fill.Get(s.i1), f2 = fill.Get(s.i2);
        const bool take2 = f2 < f1;
        const uint32_t second = 0u - static_cast<uint32_t>(take2);
        const uint32_t j = s.i1 ^ ((s.i1 ^ s.i2) & second);
        const uint32_t f = f1 ^ ((f1 ^ f2) & second);
        if constexpr (kFillWords == 1) {
          // The next item waits only for this update of the fill counts:
          // its operands are ready before the counts are read, and it is
          // undone if the bucket turns out full.
          const Fills before = fill;
          fill.w[0] +=
              take2 ? uint64_t{1} << (4 * s.i2) : uint64_t{1} << (4 * s.i1);
          if (__builtin_expect(f >= 4, 0)) {
            fill = before;
            homeless = e;
            break;
          }
        } else {
          if (__builtin_expect(f >= 4, 0)) {
            homeless = e;
            break;
          }
          fill.Increment(j);
        }
        k.slot[4 * j + f] = e;
        ++used;
      }
      k.fill = fill;
      k.used = used;
      if (i == count) break;
      SlowPlace(&k, homeless, items, i, count, class_counts, &most_frequent);
      ++i;
    }
    if (!sc_.incoming.empty()) {
      if (most_frequent == kOverflowClasses) {
        most_frequent = MostFrequentClass(nullptr, 0, class_counts);
      }
      Absorb(&k, items, most_frequent);
    }
    overflowed_ += sc_.outgoing.size();
    overflow_bits_ += static_cast<uint64_t>(__builtin_popcount(k.overflow));
    if (b < kWrapBlocks) {
      wrap_[b] = k;
      sc_.wrap_items.insert(sc_.wrap_items.end(), items, items + count);
      wrap_start_[b + 1] = static_cast<uint32_t>(sc_.wrap_items.size());
    }
    Pack(k, out_ + size_t{b} * kBlockBytes);
    sc_.incoming.swap(sc_.outgoing);
  }

  // Item i of block k's `count` items (`homeless`), whose two buckets are
  // full: stores it by moving entries (Search), else overflows it or, when
  // its class is not set in k, an item of a class that is (before any is, of
  // b's most frequent class) if one can make room: each bit set sends 1/8 of
  // b's lookups to a second block. class_counts counts items [0, i].
  __attribute__((noinline)) void SlowPlace(Block* k, Entry homeless,
                                           const uint64_t* items, uint32_t i,
                                           uint32_t count,
                                           uint64_t class_counts,
                                           uint32_t* most_frequent) {
    if (k->used != kCap && Search(k, homeless, 0, nullptr)) return;
    if (*most_frequent == kOverflowClasses) {
      *most_frequent =
          MostFrequentClass(items + i + 1, count - i - 1, class_counts);
    }
    const uint32_t classes = Evictable(*k, *most_frequent);
    if ((classes & OverflowBit(homeless)) == 0) {
      Entry evicted;
      if (Search(k, homeless, classes, &evicted)) homeless = evicted;
    }
    Overflow(k, homeless, items);
  }

  // Stores the items that overflowed from the previous block (sc_.incoming)
  // in block k, whose own items are `items`: each in a free slot if one is
  // reachable, else in place of one of k's own items (of an evictable
  // class if one is reachable), which then overflows to the next block
  // (sc_.outgoing); else in the stash.
  void Absorb(Block* k, const uint64_t* items, uint32_t most_frequent) {
    for (const Pending& q : sc_.incoming) {
      if (Place(k, q.entry)) continue;
      Entry evicted;
      if (Search(k, q.entry, Evictable(*k, most_frequent), &evicted) ||
          Search(k, q.entry, kAllClasses, &evicted)) {
        Overflow(k, evicted, items);
      } else {
        StashHash(q.hash);
      }
    }
  }

  // The first of the classes with the most items among a block's items:
  // `counts` (8 bits per class) of the items seen so far, and the `count`
  // items at `rest` (computed only for the blocks that overflow).
  uint32_t MostFrequentClass(const uint64_t* rest, uint32_t count,
                             uint64_t counts) const {
    for (uint32_t i = 0; i < count; ++i) {
      const BlockedSlot s = BlockedPlace<S>(rest[i], p_.num_blocks, seed_mix_);
      counts += uint64_t{1} << (8 * s.overflow_class);
    }
    uint32_t best = 0;
    for (uint32_t c = 1; c < kOverflowClasses; ++c) {
      if (((counts >> (8 * c)) & 0xff) > ((counts >> (8 * best)) & 0xff)) {
        best = c;
      }
    }
    return best;
  }

  // The overflow classes whose items block k should overflow first: those
  // already set there (overflowing one sets no new bit); before any is set,
  // the class with the most items in the block.
  static uint32_t Evictable(const Block& k, uint32_t most_frequent) {
    return k.overflow != 0 ? k.overflow : uint32_t{1} << most_frequent;
  }

  // Sends e, one of block k's own items (its hash is items[Index(e)]), to
  // the next block, and sets its overflow bit in k.
  void Overflow(Block* k, Entry e, const uint64_t* items) {
    k->overflow |= OverflowBit(e);
    sc_.outgoing.push_back({e & 0xffffffffu & ~kPrimaryBit, items[Index(e)]});
  }

  // Stores e in block k: in the emptier of its two buckets if one has room,
  // else by moving entries between their own two buckets along the
  // shortest path to a bucket with room (Search). False if there is none.
  bool Place(Block* k, Entry e) {
    if (PlaceFast(k, e)) return true;
    if (k->used == kCap) return false;
    return Search(k, e, 0, nullptr);
  }

  // The emptier of e's two buckets (i1 on a tie), if it has room. GCC
  // compiled both "f1 < 4 || f2 < 4" and std::min as branches, mispredicted
  // for a good part of the items (the fill at 10^6 items took 40% longer):
  // one branch, taken for most items.
  static bool PlaceFast(Block* k, Entry e) {
    const uint32_t i1 = Bucket1(e), i2 = Bucket2(e);
    const uint32_t f1 = k->fill.Get(i1), f2 = k->fill.Get(i2);
    const uint32_t second = 0u - static_cast<uint32_t>(f2 < f1);
    const uint32_t j = i1 ^ ((i1 ^ i2) & second);
    const uint32_t f = f1 ^ ((f1 ^ f2) & second);
    if (__builtin_expect(f < 4, 1)) {
      k->slot[4 * j + f] = e;
      k->fill.Increment(j);
      ++k->used;
      return true;
    }
    return false;
  }

  // Breadth-first search over the buckets of block k reachable from e's two
  // buckets (both full) by moving entries to the other bucket of their
  // pair, paths of at most max_kicks moves. With classes == 0: finds the
  // nearest bucket with room, shifts the entries along the path and stores
  // e. Otherwise: finds the nearest primary entry of one of the classes,
  // evicts it into *evicted, shifts the path and stores e. Returns false
  // (k unchanged) if there is no such bucket or entry. At most kNb buckets
  // are visited: a walk that cannot succeed costs no more than one that
  // does.
  bool Search(Block* k, Entry e, uint32_t classes, Entry* evicted) const {
    return classes == 0 ? SearchFor<false>(k, e, 0, nullptr)
                        : SearchFor<true>(k, e, classes, evicted);
  }

  // Search, one visited bucket at a time (the same order of visits, so the
  // same result as one entry at a time): kEvict: the first of the bucket's
  // entries that may be evicted, else its entries' other buckets are
  // queued. !kEvict: the first of the bucket's entries whose other bucket
  // has room moves there (every bucket already seen is full: the roots,
  // since the caller found them so, and every other one was checked when
  // it was queued), else the unseen ones are queued.
  template <bool kEvict>
  bool SearchFor(Block* k, Entry e, uint32_t classes, Entry* evicted) const {
    const uint32_t i1 = Bucket1(e), i2 = Bucket2(e);
    const uint64_t roots = (uint64_t{1} << i1) | (uint64_t{1} << i2);
    uint64_t seen = roots;
    uint8_t queue[kNb];
    uint8_t depth[kNb];
    uint8_t parent[kNb];  // the slot whose entry moves to the bucket
    uint32_t head = 0, tail = 0;
    queue[tail++] = static_cast<uint8_t>(i1);
    queue[tail++] = static_cast<uint8_t>(i2);
    depth[i1] = depth[i2] = 0;
    const Fills fill = k->fill;
    while (head < tail) {
      const uint32_t u = queue[head++];
      const Entry* xs = k->slot + 4 * u;
      if constexpr (kEvict) {
        for (uint32_t s = 0; s < 4; ++s) {
          const Entry x = xs[s];
          if (IsPrimary(x) && (classes & OverflowBit(x)) != 0) {
            *evicted = x;
            ShiftPath(k, 4 * u + s, u, roots, parent, e);
            return true;
          }
        }
      }
      if (depth[u] >= p_.max_kicks) continue;
      uint32_t v[4];
      uint64_t reached = 0;
      uint32_t room = 0;  // bit s: v[s] has room
      for (uint32_t s = 0; s < 4; ++s) {
        v[s] = Other(xs[s], u);
        reached |= uint64_t{1} << v[s];
        if constexpr (!kEvict) {
          room |= static_cast<uint32_t>(fill.Get(v[s]) < 4) << s;
        }
      }
      if (!kEvict && room != 0) {
        const uint32_t s = static_cast<uint32_t>(__builtin_ctz(room));
        k->Append(v[s], xs[s]);
        ShiftPath(k, 4 * u + s, u, roots, parent, e);
        return true;
      }
      if ((reached & ~seen) == 0) continue;
      const uint8_t next_depth = static_cast<uint8_t>(depth[u] + 1);
      for (uint32_t s = 0; s < 4; ++s) {
        if ((seen >> v[s]) & 1) continue;
        seen |= uint64_t{1} << v[s];
        parent[v[s]] = static_cast<uint8_t>(4 * u + s);
        depth[v[s]] = next_depth;
        queue[tail++] = static_cast<uint8_t>(v[s]);
      }
    }
    return false;
  }

  // Slot `hole` of bucket u is free: moves into it the entry whose move
  // reached u, and so on back to a root bucket, whose freed slot takes e.
  static void ShiftPath(Block* k, uint32_t hole, uint32_t u, uint64_t roots,
                        const uint8_t* parent, Entry e) {
    while (((roots >> u) & 1) == 0) {
      const uint32_t from = parent[u];
      k->slot[hole] = k->slot[from];
      hole = from;
      u = from / 4;
    }
    k->slot[hole] = e;
  }

  void StashHash(uint64_t h) {
    const BlockedSlot s = BlockedPlace<S>(h, p_.num_blocks, seed_mix_);
    sc_.stash.push_back(
        BlockedOverflowOf(s.g, s.block, p_.num_blocks).stash_key);
  }

  // Packs every bucket once with the semi-sorted codec, and the overflow
  // bits into the last byte. The block is assembled in registers and
  // stored once (bucket-by-bucket read-modify-writes of overlapping words
  // stalled on store forwarding).
  static void Pack(const Block& k, uint8_t* dst) {
    constexpr int kBits = S::kBucketBits;
    static_assert(kBits <= 64, "a bucket fits one word");
    uint64_t w[kBlockBytes / 8 + 1] = {};
    for (uint32_t j = 0; j < kNb; ++j) {
      const Entry* e = k.slot + 4 * j;
      const uint32_t f = k.fill.Get(j);
      const uint32_t fps[4] = {f > 0 ? Fp(e[0]) : 0, f > 1 ? Fp(e[1]) : 0,
                               f > 2 ? Fp(e[2]) : 0, f > 3 ? Fp(e[3]) : 0};
      const uint64_t word =
          static_cast<uint64_t>(BucketCodec<S>::EncodeSemiSorted(fps));
      const uint32_t pos = j * kBits;
      const uint32_t shift = pos & 63;
      w[pos >> 6] |= word << shift;
      if (shift + kBits > 64) w[(pos >> 6) + 1] |= word >> (64 - shift);
    }
    w[kBlockBytes / 8 - 1] |= uint64_t{k.overflow} << 56;
    for (size_t i = 0; i < kBlockBytes / 8; ++i) StoreLE(dst + 8 * i, w[i]);
  }

  const BlockedBuildParams& p_;
  BlockedScratch& sc_;
  const uint64_t seed_mix_;
  uint8_t* out_ = nullptr;
  Block block_;
  // The first blocks, unpacked, and their items (sc_.wrap_items, block b's
  // from wrap_start_[b]): the last block's overflow goes to block 0.
  static constexpr uint32_t kWrapBlocks = 8;
  Block wrap_[kWrapBlocks];
  uint32_t wrap_start_[kWrapBlocks + 1] = {};
  uint64_t overflowed_ = 0;
  uint64_t overflow_bits_ = 0;
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
  t.format_version = kFormatVersionBlockedNext;
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
  view->ref.next_block_secondary =
      t.format_version == kFormatVersionBlockedNext;
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
