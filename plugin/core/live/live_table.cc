#include "live/live_table.h"

#include <cmath>
#include <cstring>
#include <thread>

#include "filter/bucket_codec.h"  // core: AnyZeroLane, LaneOnes
#include "filter/cuckoo_table.h"  // core: PrimaryBucket, FingerprintOf, AltBucket

namespace cuckoo {
namespace internal {

namespace {


constexpr int kF = LiveTable::kFingerprintBits;
constexpr uint64_t kLaneMask = 0xffff;
constexpr uint64_t kLo = LaneOnes<uint64_t, kF, LiveTable::kSlots>();

inline bool HasFingerprint(uint64_t word, uint32_t fp) {
  return AnyZeroLane<uint64_t, kF, LiveTable::kSlots>(word ^ (kLo * fp));
}

inline uint32_t Lane(uint64_t word, int j) {
  return static_cast<uint32_t>((word >> (j * kF)) & kLaneMask);
}

inline uint64_t WithLane(uint64_t word, int j, uint32_t fp) {
  return (word & ~(kLaneMask << (j * kF))) | (uint64_t{fp} << (j * kF));
}

// Index of an empty lane of the word, or -1.
inline int EmptyLane(uint64_t word) {
  for (int j = 0; j < LiveTable::kSlots; ++j) {
    if (Lane(word, j) == 0) return j;
  }
  return -1;
}

#ifdef ROCKSDB_CUCKOO_LIVE_TABLE_RACE_WINDOW
// Test builds only: widens the window between a reader's two bucket loads
// so that races with relocations actually happen in tests, and runs the
// test hook (a deterministic interleaving) if one is set.
inline void RaceWindow() {
  if (LiveTable::test_between_loads != nullptr) {
    LiveTable::test_between_loads(LiveTable::test_between_loads_arg);
  }
  // A delay the compiler cannot remove (no volatile arithmetic: C++20
  // deprecates it).
  for (int i = 0; i < 64; ++i)
    std::atomic_signal_fence(std::memory_order_seq_cst);
}
#else
inline void RaceWindow() {}
#endif

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

#ifdef ROCKSDB_CUCKOO_LIVE_TABLE_RACE_WINDOW
void (*LiveTable::test_between_loads)(void* arg) = nullptr;
void* LiveTable::test_between_loads_arg = nullptr;
#endif

uint64_t LiveTable::BucketsFor(uint64_t keys, double load) {
  if (!(load > 0.0) || load > 1.0) load = 1.0;
  double wanted = std::ceil(static_cast<double>(keys) / (kSlots * load));
  if (!(wanted <= static_cast<double>(kMaxBuckets))) wanted = kMaxBuckets;
  uint64_t m = static_cast<uint64_t>(wanted);
  m += m & 1;
  return m < 2 ? 2 : m;
}

int LiveTable::CountEntries(uint64_t word) {
  int n = 0;
  for (int j = 0; j < kSlots; ++j) n += Lane(word, j) != 0;
  return n;
}

LiveTable::LiveTable(uint64_t num_buckets, uint32_t seed)
    : num_buckets_(static_cast<uint32_t>(num_buckets)),
      seed_(seed),
      buckets_(new std::atomic<uint64_t>[num_buckets]),
      versions_(new std::atomic<uint64_t>[kStripes]) {
  for (uint64_t i = 0; i < num_buckets; ++i) {
    buckets_[i].store(0, std::memory_order_relaxed);
  }
  for (uint32_t s = 0; s < kStripes; ++s) {
    versions_[s].store(0, std::memory_order_relaxed);
  }
}

LiveTable::~LiveTable() = default;

LiveTable::Candidates LiveTable::Locate(uint64_t hash) const {
  Candidates c;
  c.fp = FingerprintOf<kF>(hash);
  c.i1 = PrimaryBucket(hash, num_buckets_);
  c.i2 = AltBucket(c.i1, c.fp, num_buckets_, seed_);
  return c;
}

bool LiveTable::Contains(uint64_t hash, uint64_t* retries) const {
  const Candidates c = Locate(hash);
  const uint32_t s1 = Stripe(c.i1);
  const uint32_t s2 = Stripe(c.i2);
  for (;;) {
    const uint64_t v1 = versions_[s1].load(std::memory_order_acquire);
    const uint64_t v2 = versions_[s2].load(std::memory_order_acquire);
    const uint64_t w1 = buckets_[c.i1].load(std::memory_order_relaxed);
    RaceWindow();
    const uint64_t w2 = buckets_[c.i2].load(std::memory_order_relaxed);
    // A fingerprint is only ever present for a present item: a match needs
    // no validation.
    if (HasFingerprint(w1, c.fp) | HasFingerprint(w2, c.fp)) return true;
    // Seqlock read side: the bucket loads above happen before these
    // re-reads, so a relocation that overlapped them changed a version.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (((v1 | v2) & 1) == 0 &&
        versions_[s1].load(std::memory_order_relaxed) == v1 &&
        versions_[s2].load(std::memory_order_relaxed) == v2) {
      return false;
    }
    if (retries != nullptr) ++*retries;
    CpuRelax();
  }
}

void LiveTable::ContainsBatch(const uint64_t* hashes, size_t n, bool* out,
                              uint64_t* retries) const {
  constexpr size_t kGroup = 16;
  for (size_t start = 0; start < n; start += kGroup) {
    const size_t count = n - start < kGroup ? n - start : kGroup;
    for (size_t k = 0; k < count; ++k) {
      const Candidates c = Locate(hashes[start + k]);
      __builtin_prefetch(&buckets_[c.i1]);
      __builtin_prefetch(&buckets_[c.i2]);
    }
    for (size_t k = 0; k < count; ++k) {
      out[start + k] = Contains(hashes[start + k], retries);
    }
  }
}

bool LiveTable::Insert(uint64_t hash) {
  const Candidates c = Locate(hash);
  const uint64_t w1 = buckets_[c.i1].load(std::memory_order_relaxed);
  const uint64_t w2 = buckets_[c.i2].load(std::memory_order_relaxed);
  // Fast path: an empty slot in the less loaded candidate. Publishing a new
  // entry hides nothing, so no version change is needed.
  const bool first = CountEntries(w1) <= CountEntries(w2);
  const uint32_t order[2] = {first ? c.i1 : c.i2, first ? c.i2 : c.i1};
  const uint64_t words[2] = {first ? w1 : w2, first ? w2 : w1};
  for (int k = 0; k < 2; ++k) {
    const int lane = EmptyLane(words[k]);
    if (lane >= 0) {
      buckets_[order[k]].store(WithLane(words[k], lane, c.fp),
                               std::memory_order_release);
      num_items_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
  }
  if (!SearchAndInsert(c)) return false;
  num_items_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool LiveTable::SearchAndInsert(const Candidates& c) {
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

  int count = 0;
  nodes[count++] = Node{c.i1, -1, 0, 0};
  nodes[count++] = Node{c.i2, -1, 0, 0};
  add_seen(c.i1);
  add_seen(c.i2);

  int found_node = -1;
  int found_slot = -1;
  uint32_t target_bucket = 0;
  int target_lane = -1;
  for (int head = 0; head < count && found_node < 0; ++head) {
    const Node node = nodes[head];
    const uint64_t word = buckets_[node.bucket].load(std::memory_order_relaxed);
    for (int j = 0; j < kSlots; ++j) {
      const uint32_t fp = Lane(word, j);
      const uint32_t alt = AltBucket(node.bucket, fp, num_buckets_, seed_);
      const uint64_t alt_word = buckets_[alt].load(std::memory_order_relaxed);
      const int lane = EmptyLane(alt_word);
      if (lane >= 0) {
        // Every bucket on the path was full when enqueued and nothing
        // changes during the search, so `alt` is not on the path.
        found_node = head;
        found_slot = j;
        target_bucket = alt;
        target_lane = lane;
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
  path_slot[len] = static_cast<uint8_t>(target_lane);

  // Seqlock write side: every stripe the path touches goes odd, the moves
  // run from the empty end back to the candidate bucket (each entry is
  // copied before its old slot is overwritten), then the stripes go even.
  uint32_t stripes[kMaxPathLength + 1];
  int num_stripes = 0;
  for (int k = 0; k <= len; ++k) {
    const uint32_t s = Stripe(path_bucket[k]);
    bool dup = false;
    for (int t = 0; t < num_stripes; ++t) dup |= stripes[t] == s;
    if (!dup) stripes[num_stripes++] = s;
  }
  for (int t = 0; t < num_stripes; ++t) {
    const uint64_t v = versions_[stripes[t]].load(std::memory_order_relaxed);
    versions_[stripes[t]].store(v + 1, std::memory_order_relaxed);
  }
  std::atomic_thread_fence(std::memory_order_release);
  for (int k = len - 1; k >= 0; --k) {
    const uint64_t from =
        buckets_[path_bucket[k]].load(std::memory_order_relaxed);
    const uint32_t fp = Lane(from, path_slot[k]);
    const uint32_t dest = path_bucket[k + 1];
    const uint64_t to = buckets_[dest].load(std::memory_order_relaxed);
    buckets_[dest].store(WithLane(to, path_slot[k + 1], fp),
                         std::memory_order_relaxed);
  }
  const uint64_t root =
      buckets_[path_bucket[0]].load(std::memory_order_relaxed);
  buckets_[path_bucket[0]].store(WithLane(root, path_slot[0], c.fp),
                                 std::memory_order_relaxed);
  for (int t = 0; t < num_stripes; ++t) {
    const uint64_t v = versions_[stripes[t]].load(std::memory_order_relaxed);
    versions_[stripes[t]].store(v + 1, std::memory_order_release);
  }
  relocations_.fetch_add(static_cast<uint64_t>(len), std::memory_order_relaxed);
  return true;
}

void LiveTable::BeginWrite(uint32_t s1, uint32_t s2) {
  versions_[s1].store(versions_[s1].load(std::memory_order_relaxed) + 1,
                      std::memory_order_relaxed);
  if (s2 != s1) {
    versions_[s2].store(versions_[s2].load(std::memory_order_relaxed) + 1,
                        std::memory_order_relaxed);
  }
  std::atomic_thread_fence(std::memory_order_release);
}

void LiveTable::EndWrite(uint32_t s1, uint32_t s2) {
  versions_[s1].store(versions_[s1].load(std::memory_order_relaxed) + 1,
                      std::memory_order_release);
  if (s2 != s1) {
    versions_[s2].store(versions_[s2].load(std::memory_order_relaxed) + 1,
                        std::memory_order_release);
  }
}

bool LiveTable::Erase(uint64_t hash) {
  const Candidates c = Locate(hash);
  for (uint32_t bucket : {c.i1, c.i2}) {
    const uint64_t word = buckets_[bucket].load(std::memory_order_relaxed);
    for (int j = 0; j < kSlots; ++j) {
      if (Lane(word, j) == c.fp) {
        // Another copy of this fingerprint may stand for a live item and may
        // have been inserted into the other bucket after a reader loaded it:
        // removing this copy must invalidate such a reader (see the header).
        const uint32_t s1 = Stripe(c.i1);
        const uint32_t s2 = Stripe(c.i2);
        BeginWrite(s1, s2);
        buckets_[bucket].store(WithLane(word, j, 0), std::memory_order_relaxed);
        EndWrite(s1, s2);
        num_items_.fetch_sub(1, std::memory_order_relaxed);
        return true;
      }
    }
  }
  return false;
}

}  // namespace internal
}  // namespace cuckoo
