#include "live/live_snapshot.h"

#include <xxhash.h>

#include <cstring>

#include "util/bit_util.h"  // core: LoadLE / StoreLE

namespace cuckoo {
namespace internal {

namespace {


template <typename T>
void Append(std::string* out, T value) {
  char buf[sizeof(T)];
  StoreLE<T>(buf, value);
  out->append(buf, sizeof(T));
}

std::unique_ptr<LiveTable> Reject(std::string* why, const std::string& reason) {
  if (why != nullptr) *why = reason;
  return nullptr;
}

}  // namespace

void EncodeLiveSnapshot(const LiveTable& table, const SnapshotHeader& header,
                        std::string* out) {
  const size_t start = out->size();
  const uint64_t m = table.num_buckets();
  out->reserve(start + kSnapshotHeaderSize + header.db_id.size() +
               header.cf_name.size() + 8 * m + 8);
  out->append(kSnapshotMagic, sizeof(kSnapshotMagic));
  Append<uint32_t>(out, kSnapshotVersion);
  Append<uint8_t>(out, LiveTable::kFingerprintBits);
  Append<uint8_t>(out, LiveTable::kSlots);
  Append<uint16_t>(out, 0);
  Append<uint32_t>(out, table.seed());
  Append<uint32_t>(out, header.cf_id);
  Append<uint64_t>(out, header.sequence);
  Append<uint64_t>(out, m);
  uint64_t items = 0;
  for (uint64_t i = 0; i < m; ++i) {
    items +=
        static_cast<uint64_t>(LiveTable::CountEntries(table.LoadBucket(i)));
  }
  Append<uint64_t>(out, items);
  Append<uint32_t>(out, static_cast<uint32_t>(header.db_id.size()));
  Append<uint32_t>(out, static_cast<uint32_t>(header.cf_name.size()));
  out->append(header.db_id);
  out->append(header.cf_name);
  for (uint64_t i = 0; i < m; ++i) Append<uint64_t>(out, table.LoadBucket(i));
  const uint64_t checksum = XXH64(out->data() + start, out->size() - start, 0);
  Append<uint64_t>(out, checksum);
}

std::unique_ptr<LiveTable> DecodeLiveSnapshot(std::string_view data,
                                              SnapshotHeader* header,
                                              std::string* why) {
  if (data.size() < kSnapshotHeaderSize + 8) {
    return Reject(
        why, "snapshot too short (" + std::to_string(data.size()) + " bytes)");
  }
  const char* p = data.data();
  if (std::memcmp(p, kSnapshotMagic, sizeof(kSnapshotMagic)) != 0) {
    return Reject(why, "bad magic");
  }
  const uint64_t stored_sum = LoadLE<uint64_t>(p + data.size() - 8);
  if (XXH64(p, data.size() - 8, 0) != stored_sum) {
    return Reject(why, "checksum mismatch");
  }
  const uint32_t version = LoadLE<uint32_t>(p + 8);
  if (version != kSnapshotVersion) {
    return Reject(why, "unknown format version " + std::to_string(version));
  }
  if (LoadLE<uint8_t>(p + 12) != LiveTable::kFingerprintBits ||
      LoadLE<uint8_t>(p + 13) != LiveTable::kSlots ||
      LoadLE<uint16_t>(p + 14) != 0) {
    return Reject(why, "unsupported table parameters");
  }
  const uint32_t seed = LoadLE<uint32_t>(p + 16);
  const uint32_t cf_id = LoadLE<uint32_t>(p + 20);
  const uint64_t sequence = LoadLE<uint64_t>(p + 24);
  const uint64_t m = LoadLE<uint64_t>(p + 32);
  const uint64_t items = LoadLE<uint64_t>(p + 40);
  const uint32_t id_len = LoadLE<uint32_t>(p + 48);
  const uint32_t name_len = LoadLE<uint32_t>(p + 52);
  if (m < 2 || (m & 1) != 0 || m > LiveTable::kMaxBuckets) {
    return Reject(why, "bad bucket count " + std::to_string(m));
  }
  if (id_len > kMaxDbIdLength || name_len > kMaxCfNameLength) {
    return Reject(why, "identity fields too long");
  }
  // All terms are bounded (m < 2^32), so the sum cannot overflow.
  const uint64_t expected =
      kSnapshotHeaderSize + uint64_t{id_len} + name_len + 8 * m + 8;
  if (expected != data.size()) {
    return Reject(why, "size " + std::to_string(data.size()) +
                           " does not match the header (" +
                           std::to_string(expected) + ")");
  }
  if (items > m * LiveTable::kSlots) return Reject(why, "bad item count");
  const char* q = p + kSnapshotHeaderSize;
  header->seed = seed;
  header->cf_id = cf_id;
  header->sequence = sequence;
  header->db_id.assign(q, id_len);
  header->cf_name.assign(q + id_len, name_len);
  const char* words = q + id_len + name_len;

  auto table = std::make_unique<LiveTable>(m, seed);
  uint64_t counted = 0;
  for (uint64_t i = 0; i < m; ++i) {
    const uint64_t word = LoadLE<uint64_t>(words + 8 * i);
    counted += static_cast<uint64_t>(LiveTable::CountEntries(word));
    table->InitBucket(i, word);
  }
  if (counted != items) {
    return Reject(why, "entry count " + std::to_string(counted) +
                           " != header " + std::to_string(items));
  }
  table->SetSize(items);
  return table;
}

}  // namespace internal
}  // namespace cuckoo
