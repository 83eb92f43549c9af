// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Serialized cuckoo filter: the bucket array followed by a 32-byte trailer.
// Internal header.
//
//   +------------------------------+  offset 0
//   | bucket array                 |  TableBytes(num_buckets) bytes
//   +------------------------------+
//   | trailer (32 bytes, LE)       |
//   |   0  u32 num_buckets         |  even, 2 .. 2^32 - 2
//   |   4  u64 num_items           |  <= num_buckets * b + 1
//   |  12  u32 seed                |
//   |  16  u32 victim_fp           |  0: no victim
//   |  20  u32 victim_bucket       |  0 when no victim
//   |  24  u32 checksum            |  see below
//   |  28  u8  fingerprint_bits    |  4..32
//   |  29  u8  bucket_size         |  1, 2, 4, 8
//   |  30  u8  flags               |  bit 0: semi-sorted; others 0
//   |  31  u8  format_version      |  1 or 2 (kFormatVersion, written)
//   +------------------------------+
//
// Format version 3 (kFormatVersionBlocked, the blocked layout of
// blocked_layout.h, written by the SST policy's "blocked" option) reuses the
// trailer with other meanings; readers of versions 1 and 2 reject it (any
// unknown version), and a rejected SST block reads as "may match":
//
//   +------------------------------+  offset 0
//   | blocks                       |  64 bytes each
//   +------------------------------+  64 * num_blocks
//   | stash                        |  stash_size sorted u32 (LE)
//   +------------------------------+
//   | trailer (32 bytes, LE)       |
//   |   0  u32 num_blocks          |  >= 1
//   |   4  u64 num_items           |  <= capacity of the blocks + stash_size
//   |  12  u32 seed                |
//   |  16  u32 stash_size          |  <= num_items
//   |  20  u32 reserved            |  0
//   |  24  u32 checksum            |  as version 2 (whole block)
//   |  28  u8  fingerprint_bits    |  4..16
//   |  29  u8  bucket_size         |  4
//   |  30  u8  flags               |  1 (semi-sorted buckets); others 0
//   |  31  u8  format_version      |  3
//   +------------------------------+
//
// Format version 4 is version 3 with another secondary block: an item's
// overflow goes to the next block (blocked_layout.h) instead of a block
// chosen from its hash. Same fields; readers before version 4 reject it.
//
// Checksum (the trailer copied with the checksum field set to 0):
//   version 1: XXH32(trailer, seed "CUK1"): covers the trailer only, so a
//              damaged bucket array goes unnoticed (read, never written).
//   version 2: XXH32(trailer, seed "CUK1" ^ lo32(x) ^ hi32(x)) with
//              x = XXH3_64bits_withSeed(bucket array, seed "CUK1"): covers
//              the whole block. Readers verify it once, when a view is
//              parsed (O(block size), a hash at memory speed).
//
// The trailer follows the table so that a bucket load near the end of the
// table (up to 16 bytes wide) stays inside the serialized bytes.
#ifndef CUCKOO_PLUGIN_CORE_FILTER_FILTER_FORMAT_H_
#define CUCKOO_PLUGIN_CORE_FILTER_FILTER_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuckoo/detail/table_geometry.h"

namespace cuckoo {
namespace internal {

constexpr size_t kTrailerSize = 32;
// Written by every encoder; version 1 blocks are still read.
constexpr uint8_t kFormatVersion = 2;
constexpr uint8_t kFormatVersionTrailerChecksum = 1;
constexpr uint8_t kFormatVersionBlocked = 3;      // read, no longer written
constexpr uint8_t kFormatVersionBlockedNext = 4;  // written by the builder
constexpr uint8_t kFlagSemiSort = 1;

// The trailer's fields: a table's geometry (for version 3, num_buckets is
// the block count and victim_fp the stash size) and the format version. The
// flags byte is semi_sort (bit 0).
struct Trailer : detail::TableGeometry {
  uint8_t format_version = kFormatVersion;

  // A trailer for layout (f, b, semi-sort); the other fields are 0.
  static Trailer ForLayout(int fingerprint_bits, int bucket_size,
                           bool semi_sort) {
    Trailer t;
    t.fingerprint_bits = fingerprint_bits;
    t.bucket_size = bucket_size;
    t.semi_sort = semi_sort;
    return t;
  }
};

// The one trailer writer: writes the 32-byte trailer (with
// trailer.format_version and its checksum) at block + table_bytes, after
// the bucket array block[0, table_bytes) that the checksum covers.
void EncodeTrailer(const Trailer& trailer, char* block, uint64_t table_bytes);

// Parses and validates serialized bytes. On success sets *trailer and
// *table_bytes (bucket array size) and returns true; otherwise returns false
// with a message. Checks checksum, version, flags, configuration, bucket
// count, item count, victim fields and that size == table bytes + trailer.
// Version 2: also the checksum of the whole block (reads every byte once).
bool DecodeFilter(const char* data, size_t size, Trailer* trailer,
                  uint64_t* table_bytes, std::string* error);

// Parses and validates a version 3 or 4 (blocked) block: trailer fields, sizes,
// the whole-block checksum and the order of the stash. On success sets
// *trailer (num_buckets = blocks, victim_fp = stash size) and returns true.
bool DecodeBlockedFilter(const char* data, size_t size, Trailer* trailer,
                         std::string* error);

// For tests and fuzzers: rewrites the checksum of data[0, size) as the
// encoder would, taking the version from the trailer and everything before
// the trailer as the table, so that damaged contents reach the validation
// behind the checksum. False if size is too small or the version unknown.
bool ResealChecksum(char* data, size_t size);

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_FILTER_FILTER_FORMAT_H_
