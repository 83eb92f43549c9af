// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "recent_keys.h"

#include <new>

namespace rocksdb_cuckoo {
namespace live {

namespace {

// Stored hashes are never 0 (0 marks a free slot).
uint64_t Stored(uint64_t hash) { return hash == 0 ? 1 : hash; }

// `stripes` times the smallest power of two of partitions per stripe that
// holds `keys`.
size_t Partitions(size_t stripes, uint64_t keys) {
  if (keys == 0) return 1;
  size_t per_stripe = 1;
  while (stripes * per_stripe * RecentKeys::kPerPartition < keys) {
    per_stripe *= 2;
  }
  return stripes * per_stripe;
}

}  // namespace

RecentKeys::RecentKeys(size_t stripes, uint64_t keys)
    : per_partition_(keys == 0 ? 0 : kPerPartition),
      // Whole multiples of the stripes, so a partition's keys share one.
      partitions_(Partitions(stripes, keys)),
      hashes_(new (std::nothrow) uint64_t[partitions_ * per_partition_]()),
      entries_(new (std::nothrow) Entry[partitions_ * per_partition_]),
      next_(new (std::nothrow) uint8_t[partitions_]()) {
  if (hashes_ == nullptr || entries_ == nullptr || next_ == nullptr) {
    allocation_failed_ = true;
    per_partition_ = 0;
    partitions_ = 1;
    hashes_.reset();
    entries_.reset();
    next_.reset(new (std::nothrow) uint8_t[1]());
  }
}

void RecentKeys::Entry::Set(uint32_t family, std::string_view k) {
  cf = family;
  size = static_cast<uint32_t>(k.size());
  if (k.size() <= kInline) {
    heap.reset();
    std::memcpy(inline_bytes, k.data(), k.size());
  } else {
    heap.reset(new char[k.size()]);
    std::memcpy(heap.get(), k.data(), k.size());
  }
}

int RecentKeys::Find(size_t partition, uint32_t cf, uint64_t hash,
                     std::string_view key) const {
  const uint64_t h = Stored(hash);
  const uint64_t* hashes = &hashes_[partition * per_partition_];
  const Entry* entries = &entries_[partition * per_partition_];
  for (size_t i = 0; i < per_partition_; ++i) {
    if (hashes[i] == h && entries[i].cf == cf && entries[i].key() == key) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void RecentKeys::Add(uint64_t slot_of_key, uint32_t cf, uint64_t hash,
                     std::string_view key) {
  if (per_partition_ == 0) return;
  const size_t partition = Partition(slot_of_key);
  if (Find(partition, cf, hash, key) >= 0) return;
  uint64_t* hashes = &hashes_[partition * per_partition_];
  Entry* entries = &entries_[partition * per_partition_];
  // A free slot, else the oldest (round robin over the slots).
  const size_t slot = AddTarget(partition);
  if (hashes[slot] != 0) {
    next_[partition] = static_cast<uint8_t>((slot + 1) % per_partition_);
  }
  hashes[slot] = Stored(hash);
  entries[slot].Set(cf, key);
}

void RecentKeys::Remove(uint64_t slot_of_key, uint32_t cf, uint64_t hash,
                        std::string_view key) {
  if (per_partition_ == 0) return;
  const size_t partition = Partition(slot_of_key);
  const int i = Find(partition, cf, hash, key);
  if (i < 0) return;
  hashes_[partition * per_partition_ + i] = 0;
  entries_[partition * per_partition_ + i].heap.reset();
}

void RecentKeys::Clear() {
  const size_t n = partitions_ * per_partition_;
  for (size_t i = 0; i < n; ++i) {
    if (hashes_[i] != 0) {
      hashes_[i] = 0;
      entries_[i].heap.reset();
    }
  }
}

size_t RecentKeys::size() const {
  size_t n = 0;
  const size_t total = partitions_ * per_partition_;
  for (size_t i = 0; i < total; ++i) n += hashes_[i] != 0;
  return n;
}

}  // namespace live
}  // namespace rocksdb_cuckoo
