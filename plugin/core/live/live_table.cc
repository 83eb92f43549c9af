// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "live/live_table.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "live/frozen_view.h"

namespace cuckoo {
namespace internal {

uint64_t LiveTable::BaseBucketsFor(uint64_t keys, int fingerprint_bits,
                                   double load) {
  if (!(load > 0.0) || load > 1.0) load = 1.0;
  const double slots = LiveSlotsPerBucket(fingerprint_bits);
  double wanted = std::ceil(static_cast<double>(keys) / (slots * load));
  const double largest = static_cast<double>(kLiveMaxBuckets - 2);
  if (!(wanted <= largest)) wanted = largest;
  uint64_t c = static_cast<uint64_t>(wanted);
  c += c & 1;
  return c < 2 ? 2 : c;
}

LiveTable::LiveTable(const LiveLayout& layout)
    : detail::LiveProbeTable{layout.placement()},
      layout_(layout),
      num_buckets_(layout.num_buckets()),
      // Zero-filled memory is a valid array of atomics holding 0 (trivial
      // default construction).
      words_(kStripes + num_buckets_),
      versions_(words_.get()),
      buckets_(words_.get() + kStripes),
      sub_items_(new uint32_t[size_t{1} << layout.level()]()) {
  buckets = buckets_;
}

LiveTable::~LiveTable() = default;

void LiveTable::CopyBuckets(uint64_t first, uint64_t count,
                            uint64_t* out) const {
  for (uint64_t i = 0; i < count; ++i) {
    out[i] = buckets_[first + i].load(std::memory_order_relaxed);
  }
}

void LiveTable::AttachView(FrozenView* view) { views_[num_views_++] = view; }

void LiveTable::DetachView(FrozenView* view) {
  for (int k = 0; k < num_views_; ++k) {
    if (views_[k] == view) {
      views_[k] = views_[--num_views_];
      views_[num_views_] = nullptr;
      return;
    }
  }
}

void LiveTable::BeforeWrite(uint64_t bucket) {
  for (int k = 0; k < num_views_; ++k) views_[k]->BeforeWrite(bucket);
}

void LiveTable::Store(uint64_t bucket, uint64_t word, std::memory_order order) {
  if (num_views_ != 0) BeforeWrite(bucket);
  buckets_[bucket].store(word, order);
}

bool LiveTable::Insert(uint64_t hash) {
  const LivePlace p = layout_.Place(hash);
  const uint64_t w1 = buckets_[p.i1].load(std::memory_order_relaxed);
  const uint64_t w2 = buckets_[p.i2].load(std::memory_order_relaxed);
  // Fast path: an empty slot in the less loaded candidate. Publishing a new
  // entry hides nothing, so no version change is needed.
  const bool first = layout_.CountEntries(w1) <= layout_.CountEntries(w2);
  const uint64_t order[2] = {first ? p.i1 : p.i2, first ? p.i2 : p.i1};
  const uint64_t words[2] = {first ? w1 : w2, first ? w2 : w1};
  for (int k = 0; k < 2; ++k) {
    const int slot = layout_.EmptySlot(words[k]);
    if (slot >= 0) {
      Store(order[k], layout_.WithSlot(words[k], slot, p.pattern),
            std::memory_order_release);
      Count(p.i1, 1);
      return true;
    }
  }
  if (!SearchAndInsert(p)) return false;
  Count(p.i1, 1);
  return true;
}

bool LiveTable::OnlyCopiesOf(uint64_t hash) const {
  const LivePlace p = layout_.Place(hash);
  for (uint64_t bucket : {p.i1, p.i2}) {
    const uint64_t word = buckets_[bucket].load(std::memory_order_relaxed);
    for (int j = 0; j < layout_.slots(); ++j) {
      if (layout_.Slot(word, j) != p.pattern) return false;
    }
  }
  return true;
}

bool LiveTable::SearchAndInsert(const LivePlace& p) {
  // Breadth-first search over buckets for a path ending in an empty slot.
  // Node k is a bucket reached by moving the entry in slot `slot` of its
  // parent's bucket there.
  struct Node {
    uint32_t bucket;
    int16_t parent;  // -1 for the two candidate buckets
    uint8_t slot;    // slot of the parent's bucket whose entry moves here
    uint8_t depth;   // moves from a candidate bucket to this one
  };
  Node nodes[kMaxSearchNodes];
  // Open-addressing set of enqueued buckets, so a path never repeats one.
  constexpr uint32_t kSetSize = 2 * kMaxSearchNodes;  // power of two
  constexpr uint32_t kNone = 0xffffffffu;
  uint32_t seen[kSetSize];
  std::memset(seen, 0xff, sizeof(seen));
  auto add_seen = [&](uint32_t bucket) {
    uint32_t pos = (bucket * 0x9e3779b1u) & (kSetSize - 1);
    while (seen[pos] != kNone) {
      if (seen[pos] == bucket) return false;
      pos = (pos + 1) & (kSetSize - 1);
    }
    seen[pos] = bucket;
    return true;
  };
  // Bucket indexes are < kLiveMaxBuckets < kNone.
  const uint32_t i1 = static_cast<uint32_t>(p.i1);
  const uint32_t i2 = static_cast<uint32_t>(p.i2);

  int count = 0;
  nodes[count++] = Node{i1, -1, 0, 0};
  nodes[count++] = Node{i2, -1, 0, 0};
  add_seen(i1);
  add_seen(i2);

  const int b = layout_.slots();
  int found_node = -1;
  int found_slot = -1;
  uint32_t target_bucket = 0;
  int target_slot = -1;
  for (int head = 0; head < count && found_node < 0; ++head) {
    const Node node = nodes[head];
    const uint64_t word = buckets_[node.bucket].load(std::memory_order_relaxed);
    for (int j = 0; j < b; ++j) {
      const uint32_t alt = static_cast<uint32_t>(
          layout_.AltOf(node.bucket, layout_.Slot(word, j)));
      const uint64_t alt_word = buckets_[alt].load(std::memory_order_relaxed);
      const int empty = layout_.EmptySlot(alt_word);
      if (empty >= 0) {
        // Every bucket on the path was full when enqueued and nothing
        // changes during the search, so `alt` is not on the path.
        found_node = head;
        found_slot = j;
        target_bucket = alt;
        target_slot = empty;
        break;
      }
      if (count < kMaxSearchNodes && node.depth + 1 < kMaxPathLength &&
          add_seen(alt)) {
        nodes[count++] =
            Node{alt, static_cast<int16_t>(head), static_cast<uint8_t>(j),
                 static_cast<uint8_t>(node.depth + 1)};
      }
    }
  }
  if (found_node < 0) return false;

  // Path: bucket[0] (a candidate) ... bucket[len-1] = found node, then the
  // target. slot[k] is the slot of bucket[k] whose entry moves to bucket[k+1].
  uint32_t path_bucket[kMaxPathLength + 1];
  uint8_t path_slot[kMaxPathLength + 1];
  int len = 0;
  {
    int chain[kMaxPathLength];
    int depth = 0;
    for (int k = found_node; k >= 0; k = nodes[k].parent) chain[depth++] = k;
    for (int d = depth - 1; d >= 0; --d) {
      path_bucket[len] = nodes[chain[d]].bucket;
      // The slot moving out of this bucket is recorded in the next node.
      path_slot[len] =
          d > 0 ? nodes[chain[d - 1]].slot : static_cast<uint8_t>(found_slot);
      ++len;
    }
  }
  path_bucket[len] = target_bucket;
  path_slot[len] = static_cast<uint8_t>(target_slot);

  // Seqlock write side: the stripe of every pair an entry moves in goes
  // odd, the moves run from the empty end back to the candidate bucket (each
  // entry is copied before its old slot is overwritten), then the stripes go
  // even.
  uint32_t stripes[kMaxPathLength];
  int num_stripes = 0;
  for (int k = 0; k < len; ++k) {
    // The entry moving from bucket[k] to bucket[k + 1]: its pair.
    const uint32_t s = PairStripe(path_bucket[k], path_bucket[k + 1]);
    bool dup = false;
    for (int t = 0; t < num_stripes; ++t) dup |= stripes[t] == s;
    if (!dup) stripes[num_stripes++] = s;
  }
  BeginWrite(stripes, num_stripes);
  for (int k = len - 1; k >= 0; --k) {
    const uint64_t from =
        buckets_[path_bucket[k]].load(std::memory_order_relaxed);
    const uint32_t moved = layout_.Slot(from, path_slot[k]);
    const uint32_t dest = path_bucket[k + 1];
    const uint64_t to = buckets_[dest].load(std::memory_order_relaxed);
    Store(dest, layout_.WithSlot(to, path_slot[k + 1], moved),
          std::memory_order_relaxed);
  }
  const uint64_t root =
      buckets_[path_bucket[0]].load(std::memory_order_relaxed);
  Store(path_bucket[0], layout_.WithSlot(root, path_slot[0], p.pattern),
        std::memory_order_relaxed);
  EndWrite(stripes, num_stripes);
  relocations_.fetch_add(static_cast<uint64_t>(len), std::memory_order_relaxed);
  return true;
}

void LiveTable::BeginWrite(const uint32_t* stripes, int n) {
  for (int t = 0; t < n; ++t) {
    const uint64_t v = versions_[stripes[t]].load(std::memory_order_relaxed);
    versions_[stripes[t]].store(v + 1, std::memory_order_relaxed);
  }
  std::atomic_thread_fence(std::memory_order_release);
}

void LiveTable::EndWrite(const uint32_t* stripes, int n) {
  for (int t = 0; t < n; ++t) {
    const uint64_t v = versions_[stripes[t]].load(std::memory_order_relaxed);
    versions_[stripes[t]].store(v + 1, std::memory_order_release);
  }
}

bool LiveTable::Erase(uint64_t hash) {
  const LivePlace p = layout_.Place(hash);
  for (uint64_t bucket : {p.i1, p.i2}) {
    const uint64_t word = buckets_[bucket].load(std::memory_order_relaxed);
    for (int j = 0; j < layout_.slots(); ++j) {
      if (layout_.Slot(word, j) == p.pattern) {
        // Another copy of this fingerprint may stand for a live item and may
        // have been inserted into the other bucket after a reader loaded it:
        // removing this copy must invalidate such a reader (see the header).
        const uint32_t stripe = PairStripe(p.i1, p.i2);
        BeginWrite(&stripe, 1);
        Store(bucket, layout_.WithSlot(word, j, 0), std::memory_order_relaxed);
        EndWrite(&stripe, 1);
        Count(bucket, -1);
        return true;
      }
    }
  }
  return false;
}

std::unique_ptr<LiveTable> LiveTable::SplitCopy() const {
  auto dst = std::make_unique<LiveTable>(layout_.Split());
  uint64_t buf[kChunkBuckets];
  for (uint64_t first = 0; first < num_buckets_; first += kChunkBuckets) {
    const uint64_t n = std::min(kChunkBuckets, num_buckets_ - first);
    CopyBuckets(first, n, buf);
    dst->SplitFrom(buf, first, n);
  }
  return dst;
}

void LiveTable::SplitFrom(const uint64_t* words, uint64_t first,
                          uint64_t count) {
  const LiveLayout source(layout_.fingerprint_bits(), layout_.base_buckets(),
                          layout_.level() - 1, layout_.seed());
  const uint64_t half = num_buckets_ / 2;
  for (uint64_t k = 0; k < count; ++k) {
    const uint64_t word = words[k];
    if (word == 0) continue;
    uint64_t low, high;
    source.SplitWord(word, &low, &high);
    InitBucket(first + k, low);
    InitBucket(first + half + k, high);
  }
}

}  // namespace internal

namespace detail {

bool LiveContainsRetry(const LiveProbeTable& t, uint64_t i1, uint64_t i2,
                       uint32_t pattern, std::atomic<uint64_t>* retries) {
  // The table is a LiveTable (the only kind published): its out-of-line
  // retry loop.
  return static_cast<const internal::LiveTable&>(t).ContainsRetryOf(
      i1, i2, pattern, retries);
}

}  // namespace detail
}  // namespace cuckoo
