// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "bulk/hash_dedupe.h"

#include <cstring>

namespace cuckoo {
namespace internal {

namespace {
constexpr size_t kTargetGroupSize = 1024;
constexpr int kMaxGroupBits = 12;
}  // namespace

size_t DedupeHashes(std::vector<uint64_t>* hashes, DedupeScratch* scratch) {
  std::vector<uint64_t>& v = *hashes;
  const size_t n = v.size();
  if (n < 2) return n;

  int k = 0;
  while (k < kMaxGroupBits && (n >> (k + 1)) >= kTargetGroupSize) ++k;
  const size_t groups = size_t{1} << k;
  const int shift = 32 - k;
  auto group_of = [shift](uint64_t h) {
    return static_cast<size_t>((h & 0xffffffffu) >> shift);
  };

  // offsets[0..groups]: group starts; offsets[groups+1..]: write cursors.
  std::vector<uint32_t>& offsets = scratch->offsets;
  offsets.assign(2 * groups + 1, 0);
  for (uint64_t h : v) ++offsets[group_of(h) + 1];
  size_t largest = 0;
  for (size_t g = 0; g < groups; ++g) {
    if (offsets[g + 1] > largest) largest = offsets[g + 1];
    offsets[g + 1] += offsets[g];
  }
  uint32_t* cursor = offsets.data() + groups + 1;
  std::memcpy(cursor, offsets.data(), groups * sizeof(uint32_t));
  std::vector<uint64_t>& part = scratch->partitioned;
  part.resize(n);
  for (uint64_t h : v) part[cursor[group_of(h)]++] = h;

  // Open-addressing set, at most half full; 0 marks an empty slot, so the
  // value 0 is tracked separately.
  size_t capacity = 16;
  while (capacity < 2 * largest) capacity *= 2;
  std::vector<uint64_t>& set = scratch->set;
  if (set.size() < capacity) set.resize(capacity);
  size_t out = 0;
  for (size_t g = 0; g < groups; ++g) {
    const uint64_t* begin = part.data() + offsets[g];
    const uint64_t* end = part.data() + offsets[g + 1];
    const size_t len = static_cast<size_t>(end - begin);
    if (len == 0) continue;
    size_t cap = 16;
    while (cap < 2 * len) cap *= 2;
    const size_t mask = cap - 1;
    std::memset(set.data(), 0, cap * sizeof(uint64_t));
    bool zero_seen = false;
    for (const uint64_t* p = begin; p != end; ++p) {
      const uint64_t h = *p;
      if (h == 0) {
        if (!zero_seen) v[out++] = 0;
        zero_seen = true;
        continue;
      }
      // The high 32 bits are independent of the group bits.
      size_t i = static_cast<size_t>(h >> 32) & mask;
      for (;;) {
        const uint64_t slot = set[i];
        if (slot == h) break;  // duplicate
        if (slot == 0) {
          set[i] = h;
          v[out++] = h;
          break;
        }
        i = (i + 1) & mask;
      }
    }
  }
  v.resize(out);
  return out;
}

}  // namespace internal
}  // namespace cuckoo
