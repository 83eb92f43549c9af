// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "live/live_snapshot.h"

#define XXH_STATIC_LINKING_ONLY  // XXH64_state_t on the stack
#include <xxhash.h>

#include <cstring>
#include <new>

#include "util/bit_util.h"  // LoadLE / StoreLE

namespace cuckoo {
namespace internal {

namespace {

template <typename T>
void Put(char* p, T value) {
  StoreLE<T>(p, value);
}

std::unique_ptr<LiveTable> Reject(std::string* why, const std::string& reason) {
  if (why != nullptr) *why = reason;
  return nullptr;
}

// Words encoded per sink call.
constexpr size_t kPieceWords = 4096;

}  // namespace

struct LiveSnapshotEncoder::Hasher {
  XXH64_state_t state;
};

uint64_t LiveSnapshotSize(uint64_t num_buckets, size_t identity_size) {
  return kLiveSnapshotHeaderSize + identity_size + 8 * num_buckets + 8;
}

LiveSnapshotEncoder::LiveSnapshotEncoder(SnapshotSink sink)
    : sink_(std::move(sink)), hasher_(new Hasher) {
  XXH64_reset(&hasher_->state, 0);
}

LiveSnapshotEncoder::~LiveSnapshotEncoder() = default;

bool LiveSnapshotEncoder::Emit(const char* data, size_t n) {
  if (!ok_) return false;
  XXH64_update(&hasher_->state, data, n);
  ok_ = sink_(std::string_view(data, n));
  return ok_;
}

bool LiveSnapshotEncoder::Begin(const LiveLayout& layout, uint64_t entries,
                                std::string_view identity) {
  char h[kLiveSnapshotHeaderSize];
  std::memcpy(h, kLiveSnapshotMagic, sizeof(kLiveSnapshotMagic));
  Put<uint32_t>(h + 8, kLiveSnapshotVersion);
  Put<uint8_t>(h + 12, static_cast<uint8_t>(layout.fingerprint_bits()));
  Put<uint8_t>(h + 13, static_cast<uint8_t>(layout.slots()));
  Put<uint8_t>(h + 14, static_cast<uint8_t>(kLiveTagBits));
  Put<uint8_t>(h + 15, static_cast<uint8_t>(layout.level()));
  Put<uint32_t>(h + 16, layout.seed());
  Put<uint32_t>(h + 20, static_cast<uint32_t>(identity.size()));
  Put<uint64_t>(h + 24, layout.base_buckets());
  Put<uint64_t>(h + 32, layout.num_buckets());
  Put<uint64_t>(h + 40, entries);
  return Emit(h, sizeof(h)) && Emit(identity.data(), identity.size());
}

bool LiveSnapshotEncoder::AddWords(const uint64_t* words, size_t n) {
  char buf[kPieceWords * 8];
  while (n > 0 && ok_) {
    const size_t k = n < kPieceWords ? n : kPieceWords;
    for (size_t i = 0; i < k; ++i) Put<uint64_t>(buf + 8 * i, words[i]);
    Emit(buf, 8 * k);
    words += k;
    n -= k;
  }
  return ok_;
}

bool LiveSnapshotEncoder::Finish() {
  if (!ok_) return false;
  char sum[8];
  Put<uint64_t>(sum, XXH64_digest(&hasher_->state));
  ok_ = sink_(std::string_view(sum, sizeof(sum)));
  return ok_;
}

std::unique_ptr<LiveTable> DecodeLiveSnapshot(std::string_view data,
                                              std::string* identity,
                                              std::string* why) {
  if (data.size() < kLiveSnapshotHeaderSize + 8) {
    return Reject(
        why, "snapshot too short (" + std::to_string(data.size()) + " bytes)");
  }
  const char* p = data.data();
  if (std::memcmp(p, kLiveSnapshotMagic, sizeof(kLiveSnapshotMagic)) != 0) {
    return Reject(why, "bad magic");
  }
  const uint32_t version = LoadLE<uint32_t>(p + 8);
  if (version == 1) {
    return Reject(why,
                  "format version 1 (16-bit fingerprints, 4 per bucket) is "
                  "no longer read; version 2 is");
  }
  if (version != kLiveSnapshotVersion) {
    return Reject(why, "unknown format version " + std::to_string(version));
  }
  const uint64_t stored_sum = LoadLE<uint64_t>(p + data.size() - 8);
  if (XXH64(p, data.size() - 8, 0) != stored_sum) {
    return Reject(why, "checksum mismatch");
  }
  const int f = LoadLE<uint8_t>(p + 12);
  const int b = LoadLE<uint8_t>(p + 13);
  const int tag_bits = LoadLE<uint8_t>(p + 14);
  const int d = LoadLE<uint8_t>(p + 15);
  const uint32_t seed = LoadLE<uint32_t>(p + 16);
  const uint32_t id_len = LoadLE<uint32_t>(p + 20);
  const uint64_t c = LoadLE<uint64_t>(p + 24);
  const uint64_t m = LoadLE<uint64_t>(p + 32);
  const uint64_t entries = LoadLE<uint64_t>(p + 40);
  if (f < kLiveMinFingerprintBits || f > kLiveMaxFingerprintBits ||
      b != LiveSlotsPerBucket(f) || tag_bits != kLiveTagBits) {
    return Reject(why, "unsupported table parameters (f " + std::to_string(f) +
                           ", b " + std::to_string(b) + ", T " +
                           std::to_string(tag_bits) + ")");
  }
  if (d > LiveMaxLevel(f)) {
    return Reject(why, "bad level " + std::to_string(d));
  }
  if (c < 2 || (c & 1) != 0 || c > kLiveMaxBuckets || (m >> d) != c ||
      (c << d) != m || m > kLiveMaxBuckets) {
    return Reject(why, "bad bucket counts (c " + std::to_string(c) + ", m " +
                           std::to_string(m) + ", d " + std::to_string(d) +
                           ")");
  }
  if (id_len > kMaxSnapshotIdentity) {
    return Reject(why, "identity too long");
  }
  // Every term is bounded (m < 2^32, id_len <= 2^20): no overflow.
  const uint64_t expected = LiveSnapshotSize(m, id_len);
  if (expected != data.size()) {
    return Reject(why, "size " + std::to_string(data.size()) +
                           " does not match the header (" +
                           std::to_string(expected) + ")");
  }
  const LiveLayout layout(f, c, d, seed);
  if (entries > m * static_cast<uint64_t>(b)) {
    return Reject(why, "bad entry count");
  }
  const char* q = p + kLiveSnapshotHeaderSize;
  const char* words = q + id_len;
  std::unique_ptr<LiveTable> table;
  try {
    table = std::make_unique<LiveTable>(layout);
  } catch (const std::bad_alloc&) {
    return Reject(why, "cannot allocate the table");
  }
  for (uint64_t i = 0; i < m; ++i) {
    const uint64_t word = LoadLE<uint64_t>(words + 8 * i);
    if (!layout.ValidWord(word)) {
      return Reject(why, "invalid bucket " + std::to_string(i));
    }
    if (word != 0) table->InitBucket(i, word);
  }
  if (table->size() != entries) {
    return Reject(why, "entry count " + std::to_string(table->size()) +
                           " != header " + std::to_string(entries));
  }
  if (identity != nullptr) identity->assign(q, id_len);
  return table;
}

}  // namespace internal
}  // namespace cuckoo
