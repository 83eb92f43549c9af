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
//   |  24  u32 checksum            |  XXH32 of the trailer with this field 0
//   |  28  u8  fingerprint_bits    |  4..16 or 32
//   |  29  u8  bucket_size         |  1, 2, 4, 8
//   |  30  u8  flags               |  bit 0: semi-sorted; others 0
//   |  31  u8  format_version      |  kFormatVersion
//   +------------------------------+
//
// The trailer follows the table so that a bucket load near the end of the
// table (up to 16 bytes wide) stays inside the serialized bytes.
#ifndef CUCKOO_PLUGIN_CORE_FILTER_FORMAT_H_
#define CUCKOO_PLUGIN_CORE_FILTER_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace cuckoo {
namespace internal {

constexpr size_t kTrailerSize = 32;
constexpr uint8_t kFormatVersion = 1;
constexpr uint8_t kFlagSemiSort = 1;

struct Trailer {
  uint32_t num_buckets = 0;
  uint64_t num_items = 0;
  uint32_t seed = 0;
  uint32_t victim_fp = 0;
  uint32_t victim_bucket = 0;
  uint8_t fingerprint_bits = 0;
  uint8_t bucket_size = 0;
  uint8_t flags = 0;
};

// Writes the 32-byte trailer (with version and checksum) to out.
void EncodeTrailer(const Trailer& trailer, char* out);

// Parses and validates serialized bytes. On success sets *trailer and
// *table_bytes (bucket array size) and returns true; otherwise returns false
// with a message. Checks checksum, version, flags, configuration, bucket
// count, item count, victim fields and that size == table bytes + trailer.
bool DecodeFilter(const char* data, size_t size, Trailer* trailer,
                  uint64_t* table_bytes, std::string* error);

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_FILTER_FORMAT_H_
