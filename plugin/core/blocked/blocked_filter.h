// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Construction and parsing of a blocked cuckoo table (blocked_layout.h,
// format versions 3 and 4 of filter_format.h). Internal header;
// RocksDB-free.
//
// Construction from a known set of distinct hashes, writing format
// version 4 (an item's secondary block is the next block):
//
//   1. Items are grouped by primary block, stably (input order within a
//      block): a first pass scatters them by range of blocks, then each
//      range is grouped by block in a cache-resident buffer and its blocks
//      are filled right away, in order.
//   2. Block b, unpacked in a small local array, takes first the items that
//      overflowed from block b - 1 (whose only other place is the stash),
//      then its own items: each into the emptier of its two buckets, else
//      along the shortest path of moves (each entry between its own two
//      buckets) to a bucket with room, found by a breadth-first search over
//      the block's buckets (at most one visit each, so a search that fails
//      costs no more than one that succeeds). An item without room
//      overflows to block b + 1, or, when its overflow class is not yet set
//      in b, a reachable item of a class that is (before any is, of b's
//      most frequent class) is evicted instead, so that few overflow bits
//      are set. The block is then packed (the core's semi-sorted codec).
//   3. The last block's overflow goes to block 0, which takes it as any
//      block takes its predecessor's (the first 8 blocks are kept unpacked
//      for this); what the 8th cannot take goes to the stash.
// Entries only ever move between their own two buckets of one block, so
// every item stays findable. Every item is stored, even when an equal
// fingerprint is already in one of its buckets (an equal entry may belong
// to an item with a different bucket pair). O(n) expected; besides the
// input, the memory is one array of n hashes (the first pass's output) and
// a few cache-sized buffers.
#ifndef CUCKOO_PLUGIN_CORE_BLOCKED_BLOCKED_FILTER_H_
#define CUCKOO_PLUGIN_CORE_BLOCKED_BLOCKED_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include <string>

#include "blocked/blocked_layout.h"
#include "bulk/hash_list.h"
#include "bulk/scratch_array.h"

namespace cuckoo {
namespace internal {

struct BlockedBuildParams {
  int fingerprint_bits = 0;  // 4..16 (semi-sorted buckets of four)
  uint32_t num_blocks = 0;   // >= 1
  uint32_t seed = 0;
  // Longest path of moves inside a block when placing an item (0: an item
  // goes only to a free slot of its own two buckets).
  int max_kicks = 100;
  uint32_t max_stash = 0;  // build fails if more items need the stash
  // Tests only: how the builder groups the items by block, which does not
  // change the result: -1 chooses by size, 32 groups all blocks at once,
  // 0..31 by ranges of 2^group_range_bits blocks first.
  int group_range_bits = -1;
};

struct BlockedBuildResult {
  bool ok = false;
  uint64_t num_items = 0;      // items stored (blocks + stash)
  uint64_t overflowed = 0;     // items stored outside their primary block
  uint64_t stash_size = 0;     // 32-bit stash keys written after the blocks
  uint64_t overflow_bits = 0;  // overflow bits set, over all blocks
};

// Memory of a builder, reused across filters (BuildBlockedTable only grows
// it; its capacity is about 8 bytes per item of the largest filter built).
struct BlockedScratch {
  // An item overflowed from its primary block, on its way to the next one:
  // its unpacked entry and its hash (for the stash).
  struct Pending {
    uint64_t entry;
    uint64_t hash;
  };
  ScratchArray<uint64_t> grouped;      // hashes grouped by range of blocks
  std::vector<uint32_t> range_starts;  // the first pass's cursors
  ScratchArray<uint64_t> local;        // one range grouped by block
  std::vector<uint32_t> starts;        // block b: local[starts[b], ...)
  std::vector<Pending> incoming;       // overflow of the previous block
  std::vector<Pending> outgoing;       // overflow of the current block
  std::vector<uint32_t> stash;
  std::vector<uint64_t> wrap_items;  // the first blocks' items

  // Bytes held (for a cache of scratch memory that bounds what it keeps).
  size_t CapacityBytes() const {
    return grouped.capacity() * sizeof(uint64_t) +
           local.capacity() * sizeof(uint64_t) +
           (range_starts.capacity() + starts.capacity() + stash.capacity()) *
               sizeof(uint32_t) +
           wrap_items.capacity() * sizeof(uint64_t) +
           (incoming.capacity() + outgoing.capacity()) * sizeof(Pending);
  }
};

// Builds the blocks of the hashes in `spans` (n distinct hashes in total)
// into out[0, 64 * num_blocks) and the sorted stash right after them
// (result.stash_size little-endian u32). `out` must be zeroed and writable
// for 64 * num_blocks + 4 * max_stash + 8 bytes. On failure (more than
// max_stash items left over, or an unsupported fingerprint width) result.ok
// is false and `out` is garbage; retry with another seed or more blocks.
BlockedBuildResult BuildBlockedTable(const cuckoo::internal::HashSpan* spans,
                                     size_t num_spans, size_t n,
                                     const BlockedBuildParams& params,
                                     BlockedScratch* scratch, uint8_t* out);

// Writes the version 4 trailer (filter_format.h) after the blocks and stash
// that BuildBlockedTable(params, ...) wrote to out, which needs room for
// 4 * r.stash_size + kTrailerSize bytes after the blocks. Returns the size of
// the whole filter block. The one place that assembles a blocked block.
size_t EncodeBlockedTrailer(const BlockedBuildParams& params,
                            const BlockedBuildResult& r, uint8_t* out);

// A parsed blocked block (format version 3 or 4).
struct BlockedView {
  BlockedTableRef ref;
  int fingerprint_bits = 0;
  uint64_t num_items = 0;
  uint32_t seed = 0;
};

// Validates a blocked block of format version 3 or 4 (DecodeBlockedFilter)
// and points *view into it (no copy). False, with a message, if it does not
// validate.
bool ParseBlockedFilter(const char* data, size_t size, BlockedView* view,
                        std::string* error);

// Membership of one item hash, dispatched on the fingerprint width (for
// verification and tests; readers use BlockedTable<S> directly).
bool BlockedContains(const BlockedView& view, uint64_t hash);

// Fraction of overflow bits set over all blocks (the probability that a
// negative lookup reads a second cache line, before the stash).
double BlockedOverflowBitFraction(const BlockedView& view);

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_BLOCKED_BLOCKED_FILTER_H_
