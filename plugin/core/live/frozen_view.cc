// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "live/frozen_view.h"

#include <cstring>

#include "live/live_table.h"

namespace cuckoo {
namespace internal {

namespace {
constexpr uint64_t kChunk = LiveTable::kChunkBuckets;
}  // namespace

FrozenView::FrozenView(const LiveTable& table,
                       std::atomic<uint64_t>* bytes_total)
    : table_(table),
      chunk_state_((table.num_buckets() + kChunk - 1) / kChunk, kUntouched),
      preimage_(chunk_state_.size()),
      bytes_total_(bytes_total) {}

FrozenView::~FrozenView() { Account(-static_cast<int64_t>(saved_bytes_)); }

void FrozenView::Account(int64_t delta) {
  saved_bytes_ += delta;
  if (bytes_total_ != nullptr) {
    bytes_total_->fetch_add(static_cast<uint64_t>(delta),
                            std::memory_order_relaxed);
  }
}

uint64_t FrozenView::chunk_buckets(uint64_t k) const {
  const uint64_t first = k * kChunk;
  const uint64_t m = table_.num_buckets();
  return m - first < kChunk ? m - first : kChunk;
}

void FrozenView::BeforeWrite(uint64_t bucket) {
  const uint64_t k = bucket / kChunk;
  if (chunk_state_[k] != kUntouched) return;
  const uint64_t n = chunk_buckets(k);
  preimage_[k].reset(new uint64_t[n]);
  table_.CopyBuckets(k * kChunk, n, preimage_[k].get());
  chunk_state_[k] = kSaved;
  Account(static_cast<int64_t>(n * sizeof(uint64_t)));
}

void FrozenView::CopyChunk(uint64_t k, uint64_t* out) {
  const uint64_t n = chunk_buckets(k);
  if (chunk_state_[k] == kSaved) {
    std::memcpy(out, preimage_[k].get(), n * sizeof(uint64_t));
    preimage_[k].reset();
    Account(-static_cast<int64_t>(n * sizeof(uint64_t)));
  } else {
    table_.CopyBuckets(k * kChunk, n, out);
  }
  chunk_state_[k] = kCopied;
}

}  // namespace internal
}  // namespace cuckoo
