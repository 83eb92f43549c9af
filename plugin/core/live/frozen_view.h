// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// A copy-on-write image of a LiveTable at one instant, read chunk by chunk
// while writers keep modifying the table. Internal header.
//
// Protocol (all calls under the owner's writer mutex, so each is atomic with
// respect to writes):
//   FrozenView(table) + table.AttachView(&view)   the freeze instant; O(1)
//                                                 except for the chunk array
//   table.Store -> BeforeWrite(bucket)            before a writer changes a
//       bucket of a chunk the view has neither copied nor saved, the chunk's
//       pre-image is saved (512 buckets, 4 KiB)
//   CopyChunk(k, out)                             the chunk as it was at the
//       freeze: its pre-image if one was saved (then freed), else the live
//       buckets; from then on writers ignore the chunk
//   table.DetachView(&view), ~FrozenView          frees what is left
// So the reader of the view holds the writer mutex for one chunk copy at a
// time (about a microsecond), a writer waits at most that long, and the view
// costs memory only for the chunks modified before they were copied.
#ifndef CUCKOO_PLUGIN_CORE_LIVE_FROZEN_VIEW_H_
#define CUCKOO_PLUGIN_CORE_LIVE_FROZEN_VIEW_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace cuckoo {
namespace internal {

class LiveTable;

class FrozenView {
 public:
  // `bytes_total`, when given, is kept up to date with the pre-image bytes
  // this view holds (the owner's memory statistics).
  explicit FrozenView(const LiveTable& table,
                      std::atomic<uint64_t>* bytes_total = nullptr);
  ~FrozenView();
  FrozenView(const FrozenView&) = delete;
  FrozenView& operator=(const FrozenView&) = delete;

  uint64_t num_chunks() const { return chunk_state_.size(); }
  // Buckets in chunk k (kChunkBuckets except maybe the last).
  uint64_t chunk_buckets(uint64_t k) const;

  // Writer mutex held, before bucket `bucket` of the table changes.
  void BeforeWrite(uint64_t bucket);
  // Writer mutex held: writes chunk k's image into out[0, chunk_buckets(k))
  // and releases its pre-image. Each chunk at most once.
  void CopyChunk(uint64_t k, uint64_t* out);

  // Bytes of pre-images held now.
  uint64_t saved_bytes() const { return saved_bytes_; }

 private:
  void Account(int64_t delta);
  enum State : uint8_t { kUntouched = 0, kSaved = 1, kCopied = 2 };
  const LiveTable& table_;
  std::vector<uint8_t> chunk_state_;
  std::vector<std::unique_ptr<uint64_t[]>> preimage_;
  uint64_t saved_bytes_ = 0;
  std::atomic<uint64_t>* const bytes_total_;
};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_LIVE_FROZEN_VIEW_H_
