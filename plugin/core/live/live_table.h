// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// A fixed-size cuckoo table with one writer at a time and lock-free
// readers: the store behind LiveKeyFilter. Internal header.
//
// Layout and placement: live_layout.h (f-bit slots in 64-bit bucket words,
// two-level bucket coordinates, splits). The bucket array is zero-filled
// memory from the OS (util/table_memory.h): creating a table touches no page.
//
// Concurrency (MemC3-style optimistic reads):
// - Readers load the two buckets with relaxed atomic loads. A match is
//   always a safe answer ("may contain"): fingerprints are only ever written
//   for items that are present.
// - Before answering "absent" a reader re-checks the version counter of the
//   stripe of its bucket pair (seqlock; plain loads of a 8 KiB array; the
//   stripe is a symmetric function of the two bucket indexes). Only entries
//   of that pair can match: the compared slot value holds the tag, which
//   fixes an entry's alternate bucket, so an entry equal to the reader's
//   pattern in one of its buckets has the other as its alternate. The
//   writer makes the counter of an entry's pair odd around every relocation
//   (the entry moving from one of its buckets to the other), so a reader
//   that raced with a move of a matching entry retries instead of missing
//   it between its two bucket loads; moves in other pairs cannot hide it.
// - Inserting into an empty slot needs no version change: publishing a new
//   entry hides nothing.
// - Erasing DOES bump the stripe of the erased item's pair. Copies of one
//   fingerprint in the two buckets of a pair are interchangeable: if another
//   item with the same fingerprint and bucket pair is inserted into the
//   bucket a reader already loaded and then erased from the bucket it loads
//   next (removing the copy that stood for a live item), the live item's
//   fingerprint moved between the reader's two loads without any
//   relocation. The version bump makes that reader retry.
// - Inserts find a complete cuckoo path to an empty slot by breadth-first
//   search first, then execute it from the empty end, so a failed insert
//   leaves the table unchanged and there is never a displaced "victim".
// - Frozen views (frozen_view.h): while one is attached, every bucket write
//   first lets the view save the pre-image of the bucket's chunk.
//
// Sub-tables: the c buckets sharing a low part l are a cuckoo table of
// their own (an item's two buckets and every relocation stay inside it).
// Their loads drift apart by about 1/sqrt(b c) after splits, so growth is
// decided on the fullest one (SubTableItems), not on the average.
//
// Thread safety: Contains/ContainsBatch/LoadBucket/size may run in any
// thread at any time. Insert/Erase/AttachView/DetachView/SubTableItems must
// be serialized by the caller (one writer at a time). SplitFrom/InitBucket
// only before the table is shared with readers.
#ifndef CUCKOO_PLUGIN_CORE_LIVE_LIVE_TABLE_H_
#define CUCKOO_PLUGIN_CORE_LIVE_LIVE_TABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "cuckoo/cuckoo_filter.h"  // KeyHash
#include "live/live_layout.h"
#include "util/table_memory.h"

#if defined(__GNUC__)
// Out of line and laid out away from the hot code.
#define CUCKOO_LIVE_COLD __attribute__((noinline, cold))
#else
#define CUCKOO_LIVE_COLD
#endif

namespace cuckoo {
namespace internal {

class FrozenView;

// The reader's view (buckets, stripes, placement constants) comes first, so
// that the inline lookup of LiveKeyFilter (detail::LiveContains) reads a
// published table without knowing this class.
class LiveTable : public detail::LiveProbeTable {
 public:
  // Seqlock stripes (power of two). 8 KiB of counters per table.
  static constexpr uint32_t kStripes = detail::kLiveStripes;
  // Breadth-first search budget of one insert: at most this many buckets are
  // examined, on paths of at most kMaxPathLength moves.
  static constexpr int kMaxSearchNodes = 1024;
  static constexpr int kMaxPathLength = 6;
  // Frozen views save and copy the table in chunks of this many buckets
  // (4 KiB).
  static constexpr uint64_t kChunkBuckets = 512;
  // Views attached at once: one split and one checkpoint.
  static constexpr int kMaxViews = 2;

  // Base buckets c of a fresh table for `keys` items at `load` (0 < load
  // <= 1) with f-bit fingerprints: ceil(keys / (b * load)) rounded up to
  // even, at least 2, at most kLiveMaxBuckets - 2.
  static uint64_t BaseBucketsFor(uint64_t keys, int fingerprint_bits,
                                 double load);

  // An empty table. Throws std::bad_alloc if the memory is not available.
  explicit LiveTable(const LiveLayout& layout);
  ~LiveTable();
  LiveTable(const LiveTable&) = delete;
  LiveTable& operator=(const LiveTable&) = delete;

  const LiveLayout& layout() const { return layout_; }

  // True if the item may be present. Lock-free; retries (counted in
  // *retries: a uint64_t, or a reader's relaxed counter) only when a
  // relocation or erase in the item's pair raced with a negative answer.
  // Inline: the hash arithmetic, two loads of the pair's stripe (L1/L2), two
  // bucket loads and the SWAR compare, so that consecutive probes overlap
  // their misses.
  template <typename Counter>
  bool Contains(uint64_t hash, Counter* retries) const {
    return ContainsAt(layout_.Place(hash), retries);
  }
  // out[k] = Contains(hashes[k]); keeps the buckets of the next 16 keys in
  // flight (rolling prefetch).
  template <typename Counter>
  void ContainsBatch(const KeyHash* hashes, size_t n, bool* out,
                     Counter* retries) const {
    constexpr size_t kAhead = 16;
    LivePlace places[kAhead];
    auto prepare = [&](size_t k) {
      const LivePlace p = layout_.Place(hashes[k].value);
      __builtin_prefetch(&buckets_[p.i1]);
      __builtin_prefetch(&buckets_[p.i2]);
      places[k % kAhead] = p;
    };
    const size_t primed = n < kAhead ? n : kAhead;
    for (size_t k = 0; k < primed; ++k) prepare(k);
    for (size_t k = 0; k < n; ++k) {
      out[k] = ContainsAt(places[k % kAhead], retries);
      if (k + kAhead < n) prepare(k + kAhead);
    }
  }

  // Writer only. Adds one copy of the item (copies of one item may repeat,
  // up to 2b). Returns false and leaves the table unchanged when no cuckoo
  // path of at most kMaxPathLength moves within kMaxSearchNodes buckets
  // leads to an empty slot (the item's sub-table is too full).
  bool Insert(uint64_t hash);
  // Writer only. Items stored in the sub-table of the item, and its slots.
  uint64_t SubTableItems(uint64_t hash) const {
    return sub_items_[layout_.Place(hash).i1 / layout_.base_buckets()];
  }
  uint64_t sub_table_capacity() const {
    return layout_.base_buckets() * layout_.slots();
  }
  // Writer only: true if both buckets of the item hold nothing but copies of
  // its fingerprint (a run of duplicates no split can separate).
  bool OnlyCopiesOf(uint64_t hash) const;
  // Writer only. Removes one copy of the item's fingerprint from its two
  // buckets; false if none is there. Erasing an item that is not present can
  // remove the copy of another item with the same fingerprint and buckets:
  // callers erase only items they know are present.
  bool Erase(uint64_t hash);

  // Fills buckets [first, first + count) and [first + m, first + m + count)
  // of this table (level d + 1, m = half its buckets) from the words of
  // buckets [first, first + count) of a table of level d with the same base
  // (LiveLayout::SplitWord). Before the table is shared; each source range
  // once.
  void SplitFrom(const uint64_t* words, uint64_t first, uint64_t count);
  // A table of the next level holding every entry of this one (which must
  // not change meanwhile, e.g. a builder's table). Throws std::bad_alloc.
  std::unique_ptr<LiveTable> SplitCopy() const;

  uint64_t num_buckets() const { return num_buckets_; }
  uint64_t capacity() const { return num_buckets_ * layout_.slots(); }
  uint64_t size() const { return num_items_.load(std::memory_order_relaxed); }
  double load_factor() const {
    return static_cast<double>(size()) / static_cast<double>(capacity());
  }
  // Bytes of the bucket array, and of everything the table allocates.
  uint64_t table_bytes() const { return num_buckets_ * sizeof(uint64_t); }
  uint64_t memory_bytes() const {
    return table_bytes() + kStripes * sizeof(uint64_t) + sizeof(*this) +
           (uint64_t{1} << layout_.level()) * sizeof(uint32_t);
  }
  // Entries moved by inserts since construction.
  uint64_t relocations() const {
    return relocations_.load(std::memory_order_relaxed);
  }

  // The retries of detail::LiveContains (after a raced read).
  bool ContainsRetryOf(uint64_t i1, uint64_t i2, uint32_t pattern,
                       std::atomic<uint64_t>* retries) const {
    return ContainsRetry(i1, i2, pattern, retries);
  }

  // Raw bucket words: LoadBucket is safe anywhere; InitBucket (of an empty
  // bucket) only before the table is shared with readers.
  uint64_t LoadBucket(uint64_t i) const {
    return buckets_[i].load(std::memory_order_relaxed);
  }
  // Copies buckets [first, first + count) (a reader's relaxed loads).
  void CopyBuckets(uint64_t first, uint64_t count, uint64_t* out) const;
  void InitBucket(uint64_t i, uint64_t word) {
    buckets_[i].store(word, std::memory_order_relaxed);
    Count(i, layout_.CountEntries(word));
  }

  // Writer only: frozen views notified before every bucket write.
  void AttachView(FrozenView* view);
  void DetachView(FrozenView* view);

#ifdef ROCKSDB_CUCKOO_LIVE_TABLE_RACE_WINDOW
  // Test builds only: the seqlock write side of one bucket pair, and raw
  // bucket stores, so that tests can stop a writer in the middle of a move
  // (between BeginWrite and EndWrite) at a reader's chosen point.
  void TestBeginWrite(uint64_t i1, uint64_t i2) {
    const uint32_t s = PairStripe(i1, i2);
    BeginWrite(&s, 1);
  }
  void TestEndWrite(uint64_t i1, uint64_t i2) {
    const uint32_t s = PairStripe(i1, i2);
    EndWrite(&s, 1);
  }
  void TestStoreBucket(uint64_t i, uint64_t word) {
    Store(i, word, std::memory_order_release);
  }
#endif

 private:
  // One optimistic read (detail::LiveTryContains, the inline path of
  // LiveKeyFilter::Probe); a read that raced a move or an erase (rare)
  // retries out of line, so the inline path holds no loop.
  template <typename Counter>
  bool ContainsAt(const LivePlace& p, Counter* retries) const {
    const int r = detail::LiveTryContains(*this, p);
    if (__builtin_expect(r != detail::kLiveRaced, 1)) {
      return r == detail::kLivePresent;
    }
    // Scalars, not the place's address: the inline path keeps it in
    // registers.
    return ContainsRetry(p.i1, p.i2, p.pattern, retries);
  }
  template <typename Counter>
  CUCKOO_LIVE_COLD bool ContainsRetry(uint64_t i1, uint64_t i2,
                                      uint32_t pattern,
                                      Counter* retries) const {
    const LivePlace p{i1, i2, pattern};
    for (;;) {
      AddRetry(retries);
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      const int r = detail::LiveTryContains(*this, p);
      if (r != detail::kLiveRaced) return r == detail::kLivePresent;
    }
  }
  static void AddRetry(uint64_t* retries) { ++*retries; }
  static void AddRetry(std::atomic<uint64_t>* retries) {
    retries->store(retries->load(std::memory_order_relaxed) + 1,
                   std::memory_order_relaxed);
  }
  // The stripe of a bucket pair (symmetric: either order). Only entries
  // of the pair {i1, i2} can match a lookup whose buckets they are (the
  // compared slot value holds the tag, which fixes the alternate bucket), so
  // a move or erase needs to invalidate only the readers of its own pair.
  static uint32_t PairStripe(uint64_t i1, uint64_t i2) {
    return detail::LivePairStripe(i1, i2);
  }
  bool SearchAndInsert(const LivePlace& p);
  // Every bucket write goes through here (frozen views first).
  void Store(uint64_t bucket, uint64_t word, std::memory_order order);
  void BeforeWrite(uint64_t bucket);
  // Seqlock write side over a set of stripes.
  void BeginWrite(const uint32_t* stripes, int n);
  void EndWrite(const uint32_t* stripes, int n);
  // Entries added to (removed from, if negative) bucket i.
  void Count(uint64_t bucket, int64_t delta) {
    num_items_.store(num_items_.load(std::memory_order_relaxed) + delta,
                     std::memory_order_relaxed);
    sub_items_[bucket / layout_.base_buckets()] += delta;
  }

  const LiveLayout layout_;
  const uint64_t num_buckets_;
  // One allocation: kStripes seqlock versions, then the buckets (readers
  // address both from the bucket pointer).
  const ZeroedArray<std::atomic<uint64_t>> words_;
  std::atomic<uint64_t>* const versions_;  // words_[0, kStripes)
  std::atomic<uint64_t>* const buckets_;   // words_[kStripes, ...)
  std::atomic<uint64_t> num_items_{0};     // written by the writer only
  std::atomic<uint64_t> relocations_{0};
  std::unique_ptr<uint32_t[]> sub_items_;  // items per low part l
  FrozenView* views_[kMaxViews] = {};
  int num_views_ = 0;
};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_LIVE_LIVE_TABLE_H_
