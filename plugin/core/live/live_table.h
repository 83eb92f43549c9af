// A fixed-size cuckoo table with one writer and lock-free readers: the store
// behind LiveKeyFilter. Internal header.
//
// Layout: f = 16-bit fingerprints, b = 4 entries per bucket, so a bucket is
// exactly one aligned std::atomic<uint64_t> (entry j in bits [16j, 16j+16),
// 0 = empty slot). Bucket and fingerprint derivation are the core's
// (cuckoo_table.h): i1 = PrimaryBucket(h, m), fp = FingerprintOf<16>(h),
// i2 = AltBucket(i1, fp, m, seed), with m even so i1 != i2.
//
// Concurrency (MemC3-style optimistic reads):
// - Readers load the two buckets with relaxed atomic loads. A match is
//   always a safe answer ("may contain"): fingerprints are only ever written
//   for items that are present.
// - Before answering "absent" a reader re-checks the version counters of the
//   stripes of both buckets (seqlock). The writer makes the counters odd
//   around every relocation (an entry moving from one of its buckets to the
//   other), so a reader that raced with a move retries instead of missing the
//   entry between the two bucket loads.
// - Inserting into an empty slot needs no version change: publishing a new
//   entry hides nothing.
// - Erasing DOES bump the stripes of both buckets. Copies of one fingerprint
//   in the two buckets of a pair are interchangeable: if another item with
//   the same fingerprint and bucket pair is inserted into the bucket a reader
//   already loaded and then erased from the bucket it loads next (removing
//   the copy that stood for a live item), the live item's fingerprint moved
//   between the reader's two loads without any relocation. The version bump
//   makes that reader retry (issue 9, item 4).
// - Inserts find a complete cuckoo path to an empty slot by breadth-first
//   search first, then execute it from the empty end, so a failed insert
//   leaves the table unchanged and there is never a displaced "victim".
//
// Thread safety: Contains/ContainsBatch/LoadBucket/size may run in any
// thread at any time. Insert/Erase/InitBucket must be serialized by the
// caller (one writer at a time).
#ifndef CUCKOO_PLUGIN_CORE_LIVE_LIVE_TABLE_H_
#define CUCKOO_PLUGIN_CORE_LIVE_LIVE_TABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace cuckoo {
namespace internal {

class LiveTable {
 public:
  static constexpr int kFingerprintBits = 16;
  static constexpr int kSlots = 4;
  // Seqlock stripes (power of two). 8 KiB of counters per table.
  static constexpr uint32_t kStripes = 1024;
  // Breadth-first search budget of one insert: at most this many buckets are
  // examined (about 5 levels of 4-way branching from the two candidates).
  static constexpr int kMaxSearchNodes = 1024;
  static constexpr int kMaxPathLength = 6;
  // Largest bucket count (bucket indexes are 32-bit, m must be even).
  static constexpr uint64_t kMaxBuckets = (uint64_t{1} << 32) - 2;

  // Buckets for `keys` items at `load` (0 < load <= 1): ceil(keys / (4 load))
  // rounded up to even, at least 2, at most kMaxBuckets.
  static uint64_t BucketsFor(uint64_t keys, double load);

  // An empty table with `num_buckets` buckets (even, 2..kMaxBuckets).
  LiveTable(uint64_t num_buckets, uint32_t seed);
  ~LiveTable();
  LiveTable(const LiveTable&) = delete;
  LiveTable& operator=(const LiveTable&) = delete;

  // True if the item may be present. Lock-free; retries (counted in
  // *retries when non-null) only when a relocation raced with a negative
  // answer.
  bool Contains(uint64_t hash, uint64_t* retries = nullptr) const;
  // out[k] = Contains(hashes[k]); prefetches the buckets of 16 keys at a
  // time.
  void ContainsBatch(const uint64_t* hashes, size_t n, bool* out,
                     uint64_t* retries = nullptr) const;

  // Writer only. Adds one copy of the item (copies of one item may repeat,
  // up to 8). Returns false and leaves the table unchanged when no cuckoo
  // path of at most kMaxPathLength moves within kMaxSearchNodes buckets
  // leads to an empty slot (the table is too full).
  bool Insert(uint64_t hash);
  // Writer only. Removes one copy of the item's fingerprint from its two
  // buckets; false if none is there. Erasing an item that is not present can
  // remove the copy of another item with the same fingerprint and buckets:
  // callers erase only items they know are present.
  bool Erase(uint64_t hash);

  uint64_t num_buckets() const { return num_buckets_; }
  uint32_t seed() const { return seed_; }
  uint64_t capacity() const { return num_buckets_ * kSlots; }
  uint64_t size() const { return num_items_.load(std::memory_order_relaxed); }
  double load_factor() const {
    return static_cast<double>(size()) / static_cast<double>(capacity());
  }
  // Bytes of the bucket array, and of everything the table allocates.
  uint64_t table_bytes() const { return num_buckets_ * sizeof(uint64_t); }
  uint64_t memory_bytes() const {
    return table_bytes() + kStripes * sizeof(uint64_t) + sizeof(*this);
  }
  // Entries moved by inserts since construction (writer-maintained).
  uint64_t relocations() const {
    return relocations_.load(std::memory_order_relaxed);
  }

  // Raw bucket words, for snapshots: LoadBucket is safe anywhere;
  // InitBucket/SetSize only before the table is shared with readers.
  uint64_t LoadBucket(uint64_t i) const {
    return buckets_[i].load(std::memory_order_relaxed);
  }
  void InitBucket(uint64_t i, uint64_t word) {
    buckets_[i].store(word, std::memory_order_relaxed);
  }
  void SetSize(uint64_t n) { num_items_.store(n, std::memory_order_relaxed); }
  // Number of non-empty entries of a bucket word.
  static int CountEntries(uint64_t word);

#ifdef ROCKSDB_CUCKOO_LIVE_TABLE_RACE_WINDOW
  // Test builds only: when set, Contains calls it once between its two
  // bucket loads (the hook clears itself if it wants to run once), so tests
  // can interleave a writer deterministically at that point.
  static void (*test_between_loads)(void* arg);
  static void* test_between_loads_arg;
#endif

 private:
  struct Candidates {
    uint32_t fp;
    uint32_t i1;
    uint32_t i2;
  };
  Candidates Locate(uint64_t hash) const;
  uint32_t Stripe(uint32_t bucket) const { return bucket & (kStripes - 1); }
  bool SearchAndInsert(const Candidates& c);
  // Seqlock write side over the stripes of two buckets.
  void BeginWrite(uint32_t s1, uint32_t s2);
  void EndWrite(uint32_t s1, uint32_t s2);

  const uint32_t num_buckets_;
  const uint32_t seed_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  std::unique_ptr<std::atomic<uint64_t>[]> versions_;  // kStripes seqlocks
  std::atomic<uint64_t> num_items_{0};
  std::atomic<uint64_t> relocations_{0};
};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_LIVE_LIVE_TABLE_H_
