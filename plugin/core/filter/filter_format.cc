// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "filter/filter_format.h"

#include <xxhash.h>

#include <cstring>

#include "blocked/blocked_layout.h"
#include "cuckoo/cuckoo_filter.h"
#include "filter/table_ops.h"
#include "util/bit_util.h"

namespace cuckoo {
namespace internal {
namespace {

constexpr uint32_t kChecksumSeed = 0x43554b31;  // "CUK1"

// The checksum of a block of `version` whose trailer is at table +
// table_bytes (see the format diagram).
uint32_t BlockChecksum(const char* table, uint64_t table_bytes,
                       uint8_t version) {
  const char* trailer = table + table_bytes;
  char copy[kTrailerSize];
  std::memcpy(copy, trailer, kTrailerSize);
  std::memset(copy + 24, 0, 4);
  uint32_t seed = kChecksumSeed;
  if (version != kFormatVersionTrailerChecksum) {
    const uint64_t x = XXH3_64bits_withSeed(
        table, static_cast<size_t>(table_bytes), kChecksumSeed);
    seed ^= static_cast<uint32_t>(x) ^ static_cast<uint32_t>(x >> 32);
  }
  return XXH32(copy, kTrailerSize, seed);
}

bool Fail(std::string* error, const std::string& message) {
  if (error != nullptr) *error = "cuckoo filter: " + message;
  return false;
}

// The fields of the 32-byte trailer at p (checksum excluded), unvalidated;
// the flags byte goes to *flags (semi_sort is its bit 0).
Trailer ReadTrailerFields(const char* p, uint8_t* flags) {
  Trailer t;
  t.num_buckets = LoadLE<uint32_t>(p + 0);
  t.num_items = LoadLE<uint64_t>(p + 4);
  t.seed = LoadLE<uint32_t>(p + 12);
  t.victim_fp = LoadLE<uint32_t>(p + 16);
  t.victim_bucket = LoadLE<uint32_t>(p + 20);
  t.fingerprint_bits = static_cast<uint8_t>(p[28]);
  t.bucket_size = static_cast<uint8_t>(p[29]);
  *flags = static_cast<uint8_t>(p[30]);
  t.semi_sort = (*flags & kFlagSemiSort) != 0;
  t.format_version = static_cast<uint8_t>(p[31]);
  return t;
}

}  // namespace

void EncodeTrailer(const Trailer& t, char* block, uint64_t table_bytes) {
  char* out = block + table_bytes;
  StoreLE<uint32_t>(out + 0, static_cast<uint32_t>(t.num_buckets));
  StoreLE<uint64_t>(out + 4, t.num_items);
  StoreLE<uint32_t>(out + 12, t.seed);
  StoreLE<uint32_t>(out + 16, t.victim_fp);
  StoreLE<uint32_t>(out + 20, t.victim_bucket);
  StoreLE<uint32_t>(out + 24, 0);
  out[28] = static_cast<char>(t.fingerprint_bits);
  out[29] = static_cast<char>(t.bucket_size);
  out[30] = static_cast<char>(t.semi_sort ? kFlagSemiSort : 0);
  out[31] = static_cast<char>(t.format_version);
  StoreLE<uint32_t>(out + 24,
                    BlockChecksum(block, table_bytes, t.format_version));
}

bool DecodeFilter(const char* data, size_t size, Trailer* trailer,
                  uint64_t* table_bytes, std::string* error) {
  if (data == nullptr || size < kTrailerSize) {
    return Fail(error, "block of " + std::to_string(size) +
                           " bytes is shorter than the 32-byte trailer");
  }
  const char* p = data + size - kTrailerSize;
  const uint8_t version = static_cast<uint8_t>(p[31]);
  if (version != kFormatVersion && version != kFormatVersionTrailerChecksum) {
    return Fail(error, "unsupported format version " + std::to_string(version));
  }
  // Version 1 covers the trailer only; version 2's checksum needs the table
  // size, so it is checked after the fields (each validated on its own).
  if (version == kFormatVersionTrailerChecksum &&
      LoadLE<uint32_t>(p + 24) != BlockChecksum(p, 0, version)) {
    return Fail(error, "trailer checksum mismatch");
  }
  uint8_t flags = 0;
  Trailer t = ReadTrailerFields(p, &flags);
  if ((flags & ~kFlagSemiSort) != 0) {
    return Fail(error, "unknown flags " + std::to_string(flags));
  }
  const TableOps* ops =
      GetTableOps(t.fingerprint_bits, t.bucket_size, t.semi_sort);
  if (ops == nullptr) {
    return Fail(error, "unsupported configuration f=" +
                           std::to_string(t.fingerprint_bits) +
                           " b=" + std::to_string(t.bucket_size) +
                           " semi_sort=" + std::to_string(flags & 1));
  }
  if (t.num_buckets < 2 || t.num_buckets % 2 != 0) {
    return Fail(error, "bucket count " + std::to_string(t.num_buckets) +
                           " is not even and >= 2");
  }
  const uint64_t capacity = uint64_t{t.num_buckets} * t.bucket_size;
  if (t.num_items > capacity + 1) {
    return Fail(error, "item count " + std::to_string(t.num_items) +
                           " exceeds capacity " + std::to_string(capacity));
  }
  const uint64_t fp_limit = t.fingerprint_bits == 32
                                ? uint64_t{0xffffffff}
                                : (uint64_t{1} << t.fingerprint_bits) - 1;
  if (t.victim_fp > fp_limit || t.victim_bucket >= t.num_buckets ||
      (t.victim_fp == 0 && t.victim_bucket != 0)) {
    return Fail(error, "invalid victim slot");
  }
  const uint64_t bytes = ops->TableBytes(t.num_buckets);
  if (size - kTrailerSize != bytes) {
    return Fail(error, "table of " + std::to_string(size - kTrailerSize) +
                           " bytes, expected " + std::to_string(bytes));
  }
  if (version != kFormatVersionTrailerChecksum &&
      LoadLE<uint32_t>(p + 24) != BlockChecksum(data, bytes, version)) {
    return Fail(error, "block checksum mismatch");
  }
  *trailer = t;
  *table_bytes = bytes;
  return true;
}

bool DecodeBlockedFilter(const char* data, size_t size, Trailer* trailer,
                         std::string* error) {
  if (data == nullptr || size < kTrailerSize) {
    return Fail(error, "block of " + std::to_string(size) +
                           " bytes is shorter than the 32-byte trailer");
  }
  const char* p = data + size - kTrailerSize;
  uint8_t flags = 0;
  const Trailer t = ReadTrailerFields(p, &flags);
  if (t.format_version != kFormatVersionBlocked &&
      t.format_version != kFormatVersionBlockedNext) {
    return Fail(error, "not a blocked filter (format version " +
                           std::to_string(t.format_version) + ")");
  }
  if (flags != kFlagSemiSort || t.bucket_size != 4 ||
      t.fingerprint_bits < kBlockedMinFpBits ||
      t.fingerprint_bits > kBlockedMaxFpBits || t.victim_bucket != 0) {
    return Fail(error, "unsupported blocked layout f=" +
                           std::to_string(t.fingerprint_bits) +
                           " b=" + std::to_string(t.bucket_size) +
                           " flags=" + std::to_string(flags));
  }
  if (t.num_buckets == 0) return Fail(error, "no blocks");
  const uint64_t stash = t.victim_fp;
  const uint64_t capacity =
      uint64_t{t.num_buckets} * 4 * BlockedBucketsPerBlock(t.fingerprint_bits);
  if (stash > t.num_items || t.num_items > capacity + stash) {
    return Fail(error, "item count " + std::to_string(t.num_items) +
                           " or stash size " + std::to_string(stash) +
                           " inconsistent with capacity " +
                           std::to_string(capacity));
  }
  const uint64_t table_bytes =
      uint64_t{t.num_buckets} * kBlockBytes + 4 * stash;
  if (size - kTrailerSize != table_bytes) {
    return Fail(error, "table of " + std::to_string(size - kTrailerSize) +
                           " bytes, expected " + std::to_string(table_bytes));
  }
  if (LoadLE<uint32_t>(p + 24) !=
      BlockChecksum(data, table_bytes, t.format_version)) {
    return Fail(error, "block checksum mismatch");
  }
  const char* s = data + uint64_t{t.num_buckets} * kBlockBytes;
  for (uint64_t i = 1; i < stash; ++i) {
    if (LoadLE<uint32_t>(s + 4 * (i - 1)) >= LoadLE<uint32_t>(s + 4 * i)) {
      return Fail(error, "stash not sorted");
    }
  }
  *trailer = t;
  return true;
}

bool ResealChecksum(char* data, size_t size) {
  if (data == nullptr || size < kTrailerSize) return false;
  char* p = data + size - kTrailerSize;
  const uint8_t version = static_cast<uint8_t>(p[31]);
  if (version == kFormatVersionTrailerChecksum) {
    StoreLE<uint32_t>(p + 24, BlockChecksum(p, 0, version));
    return true;
  }
  if (version != kFormatVersion && version != kFormatVersionBlocked &&
      version != kFormatVersionBlockedNext) {
    return false;
  }
  StoreLE<uint32_t>(p + 24, BlockChecksum(data, size - kTrailerSize, version));
  return true;
}

}  // namespace internal
}  // namespace cuckoo
