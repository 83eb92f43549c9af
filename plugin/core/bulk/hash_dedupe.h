// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Exact de-duplication of 64-bit key hashes for the SST filter builder.
// Internal header.
//
// RocksDB hands the builder keys in comparator order but not de-duplicated
// (several versions of a key) and, with a prefix extractor plus whole-key
// filtering, keys and prefixes interleaved, so equal hashes need not be
// adjacent. A cuckoo filter must be sized for the number of distinct items,
// so every duplicate is removed before sizing.
//
// Method (O(n), no comparison sort): one counting pass and one scatter pass
// partition the hashes by the top bits of their low 32 bits into up to 4096
// groups, then each group (a few thousand hashes at most) is de-duplicated
// with a small open-addressing set that stays in the L1/L2 cache. The low 32
// bits select the primary bucket (FastRange32 is monotonic), so the output is
// also grouped by primary bucket range, which keeps the filter builder's
// accesses to primary buckets within a cache-sized window.
#ifndef CUCKOO_PLUGIN_CORE_BULK_HASH_DEDUPE_H_
#define CUCKOO_PLUGIN_CORE_BULK_HASH_DEDUPE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cuckoo {
namespace internal {

// Buffers reused between calls.
struct DedupeScratch {
  std::vector<uint64_t> partitioned;
  std::vector<uint32_t> offsets;
  std::vector<uint64_t> set;
};

// Removes duplicate values from *hashes (keeping one of each) and reorders
// it: grouped by (uint32_t)h >> (32 - k) for some k, in increasing group
// order. Returns the new size.
size_t DedupeHashes(std::vector<uint64_t>* hashes, DedupeScratch* scratch);

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_BULK_HASH_DEDUPE_H_
