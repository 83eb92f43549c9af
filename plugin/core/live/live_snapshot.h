// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// On-disk snapshot of a live table, format version 2. Internal header.
//
//   offset  size  field (little-endian)
//   0       8     magic "CKOOLIVE"
//   8       4     format version (2)
//   12      1     f: fingerprint bits (8..16)
//   13      1     b: slots per bucket (= 64 / f)
//   14      1     T: stable tag bits (4)
//   15      1     d: level (splits since the table was built from keys,
//                 0 .. f - T)
//   16      4     seed of the alternate-bucket offsets
//   20      4     I: length of the owner's identity (<= 1 MiB)
//   24      8     c: base buckets (even, >= 2)
//   32      8     m: buckets (= c * 2^d, <= 2^32 - 2)
//   40      8     entries stored (== non-empty slots)
//   48      I     the owner's identity (opaque bytes, e.g. FilteredDB's DB
//                 identity, column family and sequence number)
//   48+I    8m    bucket words (live_layout.h)
//   end-8   8     XXH64 (seed 0) of every preceding byte
//
// The encoder streams: the header, then the bucket words as the caller
// supplies them (e.g. chunk by chunk from a frozen view), then the checksum;
// nothing is buffered beyond one piece. The decoder checks the version
// first (version 1 - 16-bit fingerprints, 4 per bucket, no levels - is
// rejected with that reason), then the checksum, then every field, the
// exact size, every bucket word (no bits outside the slots, every entry
// with the low d bits of its level) and the entry count; it never reads
// outside the buffer. Anything unexpected: not used.
#ifndef CUCKOO_PLUGIN_CORE_LIVE_LIVE_SNAPSHOT_H_
#define CUCKOO_PLUGIN_CORE_LIVE_LIVE_SNAPSHOT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "live/live_layout.h"
#include "live/live_table.h"

namespace cuckoo {
namespace internal {

constexpr char kLiveSnapshotMagic[8] = {'C', 'K', 'O', 'O', 'L', 'I', 'V', 'E'};
constexpr uint32_t kLiveSnapshotVersion = 2;
constexpr size_t kLiveSnapshotHeaderSize = 48;
constexpr uint32_t kMaxSnapshotIdentity = uint32_t{1} << 20;

// Receives the encoded bytes piece by piece; returns false to stop.
using SnapshotSink = std::function<bool(std::string_view piece)>;

// Total bytes of a snapshot of `num_buckets` buckets and an identity of
// `identity_size` bytes.
uint64_t LiveSnapshotSize(uint64_t num_buckets, size_t identity_size);

// Streams one snapshot into a sink: Begin, AddWords until all m buckets were
// given (in bucket order), Finish. Each call returns false (and the encoder
// stops) once the sink returned false.
class LiveSnapshotEncoder {
 public:
  explicit LiveSnapshotEncoder(SnapshotSink sink);
  ~LiveSnapshotEncoder();
  LiveSnapshotEncoder(const LiveSnapshotEncoder&) = delete;
  LiveSnapshotEncoder& operator=(const LiveSnapshotEncoder&) = delete;

  // identity.size() <= kMaxSnapshotIdentity.
  bool Begin(const LiveLayout& layout, uint64_t entries,
             std::string_view identity);
  bool AddWords(const uint64_t* words, size_t n);
  bool Finish();

 private:
  bool Emit(const char* data, size_t n);
  SnapshotSink sink_;
  struct Hasher;
  std::unique_ptr<Hasher> hasher_;
  bool ok_ = true;
};

// Parses and validates a snapshot. Returns the table (not shared with anyone
// yet) and sets *identity, or returns null with the reason in *why.
std::unique_ptr<LiveTable> DecodeLiveSnapshot(std::string_view data,
                                              std::string* identity,
                                              std::string* why);

// Fills `dst` with the next up to `n` bytes of a snapshot and sets *got;
// *got == 0 at its end. False: a read error (the decode stops).
using SnapshotSource = std::function<bool(char* dst, size_t n, size_t* got)>;
// The same, from a snapshot read piece by piece (1 MiB buffered beside the
// table; the same checks and reasons). `size` is the snapshot's size as the
// caller knows it (e.g. its file's): the table is allocated as soon as the
// header is in only if the header's size is that one (the checksum is known
// at the end only, and a damaged header could ask for 32 GiB); a stream of
// another length is rejected.
std::unique_ptr<LiveTable> DecodeLiveSnapshot(uint64_t size,
                                              const SnapshotSource& source,
                                              std::string* identity,
                                              std::string* why);

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_LIVE_LIVE_SNAPSHOT_H_
