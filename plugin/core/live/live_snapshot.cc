// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "live/live_snapshot.h"

#define XXH_STATIC_LINKING_ONLY  // XXH64_state_t on the stack
#include <xxhash.h>

#include <algorithm>
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

namespace {

// The decoder's state: the stream is checked as it arrives (at most one
// piece buffered), and the checks are reported at the end in the order of
// the format's description (the checksum before any field after the
// version).
// Why the header's table parameters (f, b, T, d, c, m) describe no valid
// table, or empty: checked once the header is in (before allocating the
// table) and again, as the reported reason, at the end.
std::string LayoutProblem(const char* h) {
  const int f = LoadLE<uint8_t>(h + 12);
  const int b = LoadLE<uint8_t>(h + 13);
  const int tag_bits = LoadLE<uint8_t>(h + 14);
  const int d = LoadLE<uint8_t>(h + 15);
  const uint64_t c = LoadLE<uint64_t>(h + 24);
  const uint64_t m = LoadLE<uint64_t>(h + 32);
  if (f < kLiveMinFingerprintBits || f > kLiveMaxFingerprintBits ||
      b != LiveSlotsPerBucket(f) || tag_bits != kLiveTagBits) {
    return "unsupported table parameters (f " + std::to_string(f) + ", b " +
           std::to_string(b) + ", T " + std::to_string(tag_bits) + ")";
  }
  if (d > LiveMaxLevel(f)) return "bad level " + std::to_string(d);
  if (c < 2 || (c & 1) != 0 || c > kLiveMaxBuckets || (m >> d) != c ||
      (c << d) != m || m > kLiveMaxBuckets) {
    return "bad bucket counts (c " + std::to_string(c) + ", m " +
           std::to_string(m) + ", d " + std::to_string(d) + ")";
  }
  return std::string();
}

class StreamDecoder {
 public:
  explicit StreamDecoder(uint64_t size) : size_(size) {
    XXH64_reset(&state_, 0);
  }

  // Bytes [offset_, offset_ + n) of the stream, without its last 8 bytes.
  void Body(const char* p, size_t n) {
    XXH64_update(&state_, p, n);
    while (n > 0) {
      size_t used = 0;
      if (offset_ < kLiveSnapshotHeaderSize) {
        used = std::min<uint64_t>(n, kLiveSnapshotHeaderSize - offset_);
        std::memcpy(header_ + offset_, p, used);
        if (offset_ + used == kLiveSnapshotHeaderSize) ParseHeader();
      } else if (offset_ < words_begin_) {
        used = std::min<uint64_t>(n, words_begin_ - offset_);
        if (keep_identity_) id_.append(p, used);
      } else if (offset_ < words_end_) {
        used = std::min<uint64_t>(n, words_end_ - offset_);
        Words(p, used);
      } else {
        used = n;  // beyond the words: the size check rejects it
      }
      offset_ += used;
      p += used;
      n -= used;
    }
  }

  std::unique_ptr<LiveTable> Finish(const char* tail, size_t tail_len,
                                    std::string* identity, std::string* why) {
    const uint64_t total = offset_ + tail_len;
    if (total < kLiveSnapshotHeaderSize + 8) {
      return Reject(why,
                    "snapshot too short (" + std::to_string(total) + " bytes)");
    }
    const char* h = header_;
    if (std::memcmp(h, kLiveSnapshotMagic, sizeof(kLiveSnapshotMagic)) != 0) {
      return Reject(why, "bad magic");
    }
    const uint32_t version = LoadLE<uint32_t>(h + 8);
    if (version == 1) {
      return Reject(why,
                    "format version 1 (16-bit fingerprints, 4 per bucket) is "
                    "no longer read; version 2 is");
    }
    if (version != kLiveSnapshotVersion) {
      return Reject(why, "unknown format version " + std::to_string(version));
    }
    if (XXH64_digest(&state_) != LoadLE<uint64_t>(tail)) {
      return Reject(why, "checksum mismatch");
    }
    const int b = LoadLE<uint8_t>(h + 13);
    const uint32_t id_len = LoadLE<uint32_t>(h + 20);
    const uint64_t m = LoadLE<uint64_t>(h + 32);
    const uint64_t entries = LoadLE<uint64_t>(h + 40);
    const std::string layout_problem = LayoutProblem(h);
    if (!layout_problem.empty()) return Reject(why, layout_problem);
    if (id_len > kMaxSnapshotIdentity) {
      return Reject(why, "identity too long");
    }
    // Every term is bounded (m < 2^32, id_len <= 2^20): no overflow.
    const uint64_t expected = LiveSnapshotSize(m, id_len);
    if (expected != total) {
      return Reject(why, "size " + std::to_string(total) +
                             " does not match the header (" +
                             std::to_string(expected) + ")");
    }
    if (entries > m * static_cast<uint64_t>(b)) {
      return Reject(why, "bad entry count");
    }
    if (table_ == nullptr) {
      return Reject(why, alloc_failed_ ? "cannot allocate the table"
                                       : "snapshot size changed while read");
    }
    if (invalid_ != kNone) {
      return Reject(why, "invalid bucket " + std::to_string(invalid_));
    }
    if (table_->size() != entries) {
      return Reject(why, "entry count " + std::to_string(table_->size()) +
                             " != header " + std::to_string(entries));
    }
    if (identity != nullptr) *identity = std::move(id_);
    return std::move(table_);
  }

 private:
  static constexpr uint64_t kNone = ~uint64_t{0};

  // Where the identity and the words are, and the table, once the header
  // is in. The table is allocated only for a header whose layout is valid
  // and whose size is the stream's: a damaged header could ask for up to
  // 32 GiB, and the checksum is known only at the end.
  void ParseHeader() {
    const char* h = header_;
    const int f = LoadLE<uint8_t>(h + 12);
    const int d = LoadLE<uint8_t>(h + 15);
    const uint32_t id_len = LoadLE<uint32_t>(h + 20);
    const uint64_t c = LoadLE<uint64_t>(h + 24);
    const uint64_t m = LoadLE<uint64_t>(h + 32);
    if (id_len > kMaxSnapshotIdentity) return;  // rejected at the end
    keep_identity_ = true;
    words_begin_ = kLiveSnapshotHeaderSize + uint64_t{id_len};
    words_end_ = words_begin_;
    if (!LayoutProblem(h).empty() || LiveSnapshotSize(m, id_len) != size_) {
      return;  // rejected at the end
    }
    try {
      layout_ = std::make_unique<LiveLayout>(f, c, d, LoadLE<uint32_t>(h + 16));
      table_ = std::make_unique<LiveTable>(*layout_);
    } catch (const std::bad_alloc&) {
      alloc_failed_ = true;
      table_.reset();
      return;
    }
    words_end_ = words_begin_ + 8 * m;
  }

  // Bytes of the words region, at offset_ (a word may span two pieces).
  void Words(const char* p, size_t n) {
    uint64_t i = (offset_ - words_begin_) / 8;
    if (carry_len_ > 0) {
      const size_t k = std::min<size_t>(n, 8 - carry_len_);
      std::memcpy(carry_ + carry_len_, p, k);
      carry_len_ += k;
      p += k;
      n -= k;
      if (carry_len_ < 8) return;
      Word(i++, LoadLE<uint64_t>(carry_));
      carry_len_ = 0;
    }
    for (; n >= 8; p += 8, n -= 8) Word(i++, LoadLE<uint64_t>(p));
    std::memcpy(carry_, p, n);
    carry_len_ = n;
  }

  void Word(uint64_t i, uint64_t word) {
    if (invalid_ != kNone) return;
    if (!layout_->ValidWord(word)) {
      invalid_ = i;
      return;
    }
    if (word != 0) table_->InitBucket(i, word);
  }

  const uint64_t size_;
  XXH64_state_t state_;
  uint64_t offset_ = 0;
  char header_[kLiveSnapshotHeaderSize] = {};
  bool keep_identity_ = false;
  std::string id_;
  uint64_t words_begin_ = ~uint64_t{0};
  uint64_t words_end_ = ~uint64_t{0};
  std::unique_ptr<LiveLayout> layout_;
  std::unique_ptr<LiveTable> table_;
  bool alloc_failed_ = false;
  uint64_t invalid_ = kNone;
  char carry_[8] = {};
  size_t carry_len_ = 0;
};

}  // namespace

std::unique_ptr<LiveTable> DecodeLiveSnapshot(uint64_t size,
                                              const SnapshotSource& source,
                                              std::string* identity,
                                              std::string* why) {
  // Each piece is read after the 8 bytes held back from the previous one
  // (the stream's last 8 bytes are its checksum, not hashed).
  constexpr size_t kPiece = size_t{1} << 20;
  std::unique_ptr<char[]> buf(new char[8 + kPiece]);
  StreamDecoder decoder(size);
  size_t held = 0;  // bytes at buf + 8 - held
  for (;;) {
    size_t got = 0;
    if (!source(buf.get() + 8, kPiece, &got)) {
      return Reject(why, "read error");
    }
    if (got == 0) break;
    const size_t n = held + got;
    char* begin = buf.get() + 8 - held;
    if (n > 8) {
      decoder.Body(begin, n - 8);
      std::memmove(buf.get(), begin + n - 8, 8);
      held = 8;
    } else {
      std::memmove(buf.get() + 8 - n, begin, n);
      held = n;
    }
  }
  char tail[8] = {};
  std::memcpy(tail, buf.get() + 8 - held, held);
  if (held < 8) {
    // Too short for a checksum (then also for a header: rejected as such).
    return decoder.Finish(tail, held, identity, why);
  }
  return decoder.Finish(tail, 8, identity, why);
}

std::unique_ptr<LiveTable> DecodeLiveSnapshot(std::string_view data,
                                              std::string* identity,
                                              std::string* why) {
  size_t at = 0;
  return DecodeLiveSnapshot(
      data.size(),
      [&](char* dst, size_t n, size_t* got) {
        *got = std::min(n, data.size() - at);
        std::memcpy(dst, data.data() + at, *got);
        at += *got;
        return true;
      },
      identity, why);
}

}  // namespace internal
}  // namespace cuckoo
