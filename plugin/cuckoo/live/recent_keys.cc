// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "recent_keys.h"

namespace rocksdb_cuckoo {
namespace live {

namespace {

// Stored hashes are never 0 (0 marks a free slot).
uint64_t Stored(uint64_t hash) { return hash == 0 ? 1 : hash; }

}  // namespace

RecentKeys::RecentKeys(size_t partitions, size_t per_partition)
    : per_partition_(per_partition),
      hashes_(new uint64_t[partitions * per_partition]()),
      entries_(new Entry[partitions * per_partition]),
      next_(new uint32_t[partitions]()),
      partitions_(partitions) {}

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

void RecentKeys::Add(size_t partition, uint32_t cf, uint64_t hash,
                     std::string_view key) {
  if (per_partition_ == 0 || Find(partition, cf, hash, key) >= 0) return;
  uint64_t* hashes = &hashes_[partition * per_partition_];
  Entry* entries = &entries_[partition * per_partition_];
  // A free slot, else the oldest (round robin over the slots).
  size_t slot = per_partition_;
  for (size_t i = 0; i < per_partition_; ++i) {
    if (hashes[i] == 0) {
      slot = i;
      break;
    }
  }
  if (slot == per_partition_) {
    slot = next_[partition];
    next_[partition] = static_cast<uint32_t>((slot + 1) % per_partition_);
  }
  hashes[slot] = Stored(hash);
  entries[slot].Set(cf, key);
}

void RecentKeys::Remove(size_t partition, uint32_t cf, uint64_t hash,
                        std::string_view key) {
  if (per_partition_ == 0) return;
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
