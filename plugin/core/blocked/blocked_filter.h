// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Construction and parsing of a blocked cuckoo table (blocked_layout.h,
// format version 3 of filter_format.h). Internal header; RocksDB-free.
//
// Construction from a known set of distinct hashes:
//
//   1. Items are grouped by primary block, stably (a counting sort; for
//      tables beyond the caches two, by range of blocks and then by block,
//      so that no pass scatters writes over the whole array).
//   2. Each block is filled on its own: an item goes to the emptier of its
//      two buckets, else a random walk of at most max_kicks steps moves
//      entries between their own two buckets inside the block. The item
//      left homeless by a failed walk overflows, and the overflow bit of
//      its class is set in the block.
//   3. Each overflowed item is placed in its secondary block the same way,
//      on a copy of that block that is kept only if the walk succeeds (so
//      the items already there stay); otherwise its 32-bit stash key goes to
//      the stash.
//   4. Every bucket is packed once with the core's semi-sorted codec.
// Every item is stored, even when an equal fingerprint is already in one of
// its buckets: unlike the global table (whose second bucket follows from the
// first and the fingerprint), an equal entry may belong to an item with a
// different bucket pair and move away later. Entries only ever move between
// their own two buckets of one block, so every item stays findable. O(n)
// expected.
//
// Memory: an unpacked entry (BlockedEntry, 8 bytes) per slot carries what
// steps 2 and 3 need of its item (buckets, class, secondary block), so a
// walk or a secondary placement reads only the block's own entries; step 3,
// whose blocks are random ones, prefetches them. Step 1 needs 8 bytes per
// item besides the input.
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
  int max_kicks = 100;     // relocation steps of one walk inside a block
  uint32_t max_stash = 0;  // build fails if more items need the stash
  // Tests only: how the builder groups the items by block, which does not
  // change the result: -1 chooses by size, 32 sorts in one pass, 0..31 in
  // two passes (by ranges of 2^group_range_bits blocks, then by block).
  int group_range_bits = -1;
};

struct BlockedBuildResult {
  bool ok = false;
  uint64_t num_items = 0;      // items stored (blocks + stash)
  uint64_t overflowed = 0;     // items stored outside their primary block
  uint64_t stash_size = 0;     // 32-bit stash keys written after the blocks
  uint64_t overflow_bits = 0;  // overflow bits set, over all blocks
};

// One slot of a builder's unpacked table: what the builder needs of the
// item stored there, so that neither moving it within its block nor sending
// it to its secondary block reads its hash. Trivial: a value-initialized
// entry (BlockedEntry()) is empty.
struct BlockedEntry {
  uint32_t block2;  // the item's secondary block
  uint16_t fp;      // fingerprint (>= 1; 0: the slot is empty)
  // Bits 0-5 and 6-11: the item's two buckets; 12-14: its overflow class;
  // 15: stored in its primary block.
  uint16_t meta;
};

// An item overflowed from its primary block, waiting for its secondary.
struct BlockedPending {
  BlockedEntry entry;
  uint32_t block = 0;  // its primary block
};

// Memory of a builder reused across filters.
struct BlockedScratch {
  ScratchArray<uint64_t> sorted;  // hashes grouped by primary block
  std::vector<uint32_t> starts;   // block b: sorted[starts[b], starts[b+1])
  std::vector<uint32_t> range_starts;  // GroupByBlock's first pass
  std::vector<uint64_t> range;         // GroupByBlock's second pass
  // Per block, its slots' entries and then its own record (an entry whose
  // block2 holds the block's number of entries, fp its overflow bits and meta
  // the overflow class most frequent among its primary items), so that
  // placing an item in a random block reads one contiguous record.
  ScratchArray<BlockedEntry> entries;
  std::vector<BlockedPending> pending;  // overflowed items
  std::vector<uint32_t> stash;
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

// Writes the version 3 trailer (filter_format.h) after the blocks and stash
// that BuildBlockedTable(params, ...) wrote to out, which needs room for
// 4 * r.stash_size + kTrailerSize bytes after the blocks. Returns the size of
// the whole filter block. The one place that assembles a version 3 block.
size_t EncodeBlockedTrailer(const BlockedBuildParams& params,
                            const BlockedBuildResult& r, uint8_t* out);

// A parsed version 3 block.
struct BlockedView {
  BlockedTableRef ref;
  int fingerprint_bits = 0;
  uint64_t num_items = 0;
  uint32_t seed = 0;
};

// Validates a version 3 block (DecodeBlockedFilter) and points *view into
// it (no copy). False, with a message, if it does not validate.
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
