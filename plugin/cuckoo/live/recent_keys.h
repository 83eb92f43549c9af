// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// RecentKeys: an exact, bounded record of keys that FilteredDB knows to be
// live because one of its own writes left them live (internal).
//
// A write that ends with a key live (a Put or Merge that FilteredDB planned)
// records the key; a write that may end it (a Delete, a failed write)
// removes it. So a key found here is live, and a later write of it needs no
// read to know that: a Delete erases its fingerprint at once (no deferred
// check, no point read), an overwrite inserts nothing and reads nothing.
//
// Partitions: a key's partition is its slot (FilteredDB's KeySlot) modulo
// the number of partitions, a multiple of the number of key stripes, so all
// the keys of a partition share one stripe. A partition is read and written
// only by a thread that holds its stripe (every write of a key holds its
// stripe from its plan to its last update here), or by one that holds the
// exclusive writer lock (no stripe holder then): no lock of its own, and a
// key's record always reflects every write of the key that completed.
// Writes made under the exclusive lock (DeleteRange, writes that needed a
// rescan, ingestions, drops) call Clear() instead of updating it. A
// single-key write records a key it makes live just before its DB write
// (after its filter insert) and removes it again if the write fails, all
// under the key's stripe: no reader of the partition can tell the
// difference, and the partition's cache lines (Prefetch, PrefetchAddTarget)
// are used before the DB write evicts them.
//
// Each partition holds up to kPerPartition keys, replaced oldest first (a
// key that falls out is simply read again when it is next deleted), so an
// operation compares at most kPerPartition hashes (two cache lines).
// Memory: 48 bytes per key plus the key bytes beyond 24.
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_RECENT_KEYS_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_RECENT_KEYS_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace rocksdb_cuckoo {
namespace live {

class RecentKeys {
 public:
  static constexpr size_t kPerPartition = 16;
  // The most keys FilteredDBOptions::recent_keys may ask for.
  static constexpr uint64_t kMaxKeys = uint64_t{1} << 24;
  // Room for at least `keys` keys: `stripes` (a power of two) times a power
  // of two partitions of kPerPartition keys; 0 disables the record
  // (Contains is always false). Never throws: if the memory cannot be
  // allocated, the record is disabled and allocation_failed() is true.
  RecentKeys(size_t stripes, uint64_t keys);
  RecentKeys(const RecentKeys&) = delete;
  RecentKeys& operator=(const RecentKeys&) = delete;

  bool enabled() const { return per_partition_ != 0; }
  bool allocation_failed() const { return allocation_failed_; }

  // The key's stripe held (slot: FilteredDB's KeySlot of the key). True if
  // the key is recorded (it is live).
  bool Contains(uint64_t slot, uint32_t cf, uint64_t hash,
                std::string_view key) const {
    if (per_partition_ == 0) return false;
    return Find(Partition(slot), cf, hash, key) >= 0;
  }
  // Any thread, no lock needed (a hint: reads nothing): brings the
  // partition's hashes and replacement cursor into the cache for a later
  // Contains/Add/Remove of the key, so that a writer can start those loads
  // before its DB write and find them there after it.
  void Prefetch(uint64_t slot) const {
    if (per_partition_ == 0) return;
    const size_t partition = Partition(slot);
    const uint64_t* hashes = &hashes_[partition * per_partition_];
    __builtin_prefetch(hashes, 1);
    __builtin_prefetch(hashes + per_partition_ - 1, 1);
    __builtin_prefetch(&next_[partition], 1);
  }
  // The key's stripe held (the partition is stable), after Prefetch: also
  // brings in the entry that an Add of the key would write now.
  void PrefetchAddTarget(uint64_t slot) const {
    if (per_partition_ == 0) return;
    const size_t partition = Partition(slot);
    const Entry* e =
        &entries_[partition * per_partition_ + AddTarget(partition)];
    // Both ends: an entry may straddle two cache lines.
    PrefetchLine(e);
    PrefetchLine(reinterpret_cast<const char*>(e + 1) - 1);
  }
  // The key's stripe held: the key is live after a write of it.
  void Add(uint64_t slot, uint32_t cf, uint64_t hash, std::string_view key);
  // The key's stripe held: the key may not be live any more.
  void Remove(uint64_t slot, uint32_t cf, uint64_t hash, std::string_view key);
  size_t capacity() const { return partitions_ * per_partition_; }
  // No stripe held by anyone (the exclusive writer lock): forgets every key.
  void Clear();
  // Keys recorded now; no stripe held by anyone (tests).
  size_t size() const;
  // Bytes allocated at construction (key bytes beyond 24 come on top).
  size_t memory_bytes() const {
    return partitions_ * per_partition_ * (sizeof(uint64_t) + sizeof(Entry)) +
           partitions_ * sizeof(uint8_t);
  }

 private:
  struct Entry {
    uint32_t cf = 0;
    uint32_t size = 0;
    // Keys up to kInline bytes are stored here, longer ones in `heap`.
    static constexpr size_t kInline = 24;
    char inline_bytes[kInline];
    std::unique_ptr<char[]> heap;
    std::string_view key() const {
      return std::string_view(size <= kInline ? inline_bytes : heap.get(),
                              size);
    }
    void Set(uint32_t family, std::string_view k);
  };
  size_t Partition(uint64_t slot) const { return slot & (partitions_ - 1); }
  // GCC drops a __builtin_prefetch whose address comes from AddTarget's
  // loop (seen with GCC 12 -O2), so on x86-64 the instruction is asked for
  // explicitly.
  static void PrefetchLine(const void* p) {
#if defined(__x86_64__)
    asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
    __builtin_prefetch(p, 1);
#endif
  }
  // The slot an Add of a key not in the partition writes: the first free
  // one, else the oldest (round robin).
  size_t AddTarget(size_t partition) const {
    const uint64_t* hashes = &hashes_[partition * per_partition_];
    for (size_t i = 0; i < per_partition_; ++i) {
      if (hashes[i] == 0) return i;
    }
    return next_[partition];
  }
  // Index of the key in the partition, or -1.
  int Find(size_t partition, uint32_t cf, uint64_t hash,
           std::string_view key) const;

  size_t per_partition_;  // kPerPartition, or 0 when disabled
  size_t partitions_;
  bool allocation_failed_ = false;
  // Per partition: the hashes (0 = free slot; stored hashes are never 0),
  // scanned first, and the entries beside them; `next_` is the slot the next
  // Add replaces when the partition is full.
  std::unique_ptr<uint64_t[]> hashes_;
  std::unique_ptr<Entry[]> entries_;
  std::unique_ptr<uint8_t[]> next_;
};

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_RECENT_KEYS_H_
