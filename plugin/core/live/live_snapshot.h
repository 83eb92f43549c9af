// On-disk snapshot of a LiveKeyFilter table. Internal header.
//
//   offset  size  field (little-endian)
//   0       8     magic "CKOOLIVE"
//   8       4     format version (kSnapshotVersion)
//   12      1     fingerprint bits (16)
//   13      1     entries per bucket (4)
//   14      2     reserved, 0
//   16      4     seed of the alternate-bucket hash
//   20      4     column family id
//   24      8     sequence number covered (DB::GetLatestSequenceNumber)
//   32      8     m: number of buckets (even, 2 .. 2^32 - 2)
//   40      8     number of stored fingerprints (== non-zero entries)
//   48      4     D: length of the DB identity (<= 4096)
//   52      4     C: length of the column family name (<= 65536)
//   56      D     DB identity (DB::GetDbIdentity)
//   56+D    C     column family name
//   56+D+C  8m    bucket words: entry j of a bucket in bits [16j, 16j+16)
//   end-8   8     XXH64 (seed 0) of every preceding byte
//
// A reader validates every field, the exact total size and the checksum,
// and never reads outside the buffer. Anything unexpected: not used.
#ifndef CUCKOO_PLUGIN_CORE_LIVE_LIVE_SNAPSHOT_H_
#define CUCKOO_PLUGIN_CORE_LIVE_LIVE_SNAPSHOT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "live/live_table.h"

namespace cuckoo {
namespace internal {

constexpr char kSnapshotMagic[8] = {'C', 'K', 'O', 'O', 'L', 'I', 'V', 'E'};
constexpr uint32_t kSnapshotVersion = 1;
constexpr size_t kSnapshotHeaderSize = 56;
constexpr uint32_t kMaxDbIdLength = 4096;
constexpr uint32_t kMaxCfNameLength = 65536;

struct SnapshotHeader {
  uint32_t seed = 0;
  uint32_t cf_id = 0;
  uint64_t sequence = 0;
  std::string db_id;
  std::string cf_name;
};

// Appends the snapshot of `table` to *out. The table must not change
// meanwhile (writer-serialized).
void EncodeLiveSnapshot(const LiveTable& table, const SnapshotHeader& header,
                        std::string* out);

// Parses and validates a snapshot. Returns the table and fills *header, or
// returns null with a reason in *why.
std::unique_ptr<LiveTable> DecodeLiveSnapshot(std::string_view data,
                                              SnapshotHeader* header,
                                              std::string* why);

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_LIVE_LIVE_SNAPSHOT_H_
