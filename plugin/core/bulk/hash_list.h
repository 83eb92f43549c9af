// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// An append-only list of 64-bit hashes in chunks that never move. Internal
// header.
//
// A filter builder does not know how many keys it will get. A std::vector
// doubles and copies, which touches twice the memory (page faults dominate
// for fresh, large allocations) and copies every hash once more; chunks of
// geometrically growing size are filled in place and read back in order.
#ifndef CUCKOO_PLUGIN_CORE_BULK_HASH_LIST_H_
#define CUCKOO_PLUGIN_CORE_BULK_HASH_LIST_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace cuckoo {
namespace internal {

// A contiguous run of hashes.
struct HashSpan {
  const uint64_t* data = nullptr;
  size_t size = 0;
};

class HashList {
 public:
  static constexpr size_t kFirstChunk = 1024;
  static constexpr size_t kMaxChunk = size_t{1} << 20;  // 8 MiB

  void push_back(uint64_t h) {
    if (chunks_.empty() || chunks_.back().size() == chunks_.back().capacity()) {
      NewChunk();
    }
    chunks_.back().push_back(h);  // within capacity: never reallocates
    ++size_;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // The chunks, in insertion order.
  std::vector<HashSpan> Spans() const {
    std::vector<HashSpan> spans;
    spans.reserve(chunks_.size());
    for (const std::vector<uint64_t>& c : chunks_) {
      if (!c.empty()) spans.push_back({c.data(), c.size()});
    }
    return spans;
  }

  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const std::vector<uint64_t>& c : chunks_) {
      for (uint64_t h : c) fn(h);
    }
  }

  // Moves all hashes into one vector (for in-place algorithms), leaving the
  // list empty.
  std::vector<uint64_t> TakeFlat() {
    std::vector<uint64_t> flat;
    if (chunks_.size() == 1) {
      flat.swap(chunks_.front());
    } else {
      flat.reserve(size_);
      for (const std::vector<uint64_t>& c : chunks_)
        flat.insert(flat.end(), c.begin(), c.end());
    }
    chunks_.clear();
    size_ = 0;
    return flat;
  }

  // Replaces the contents with `hashes`.
  void Assign(std::vector<uint64_t>&& hashes) {
    chunks_.clear();
    size_ = hashes.size();
    if (!hashes.empty()) chunks_.push_back(std::move(hashes));
  }

  // Empties the list, keeping the first chunk's memory for reuse (filter
  // partitions reuse one builder).
  void clear() {
    if (chunks_.size() > 1) chunks_.resize(1);
    if (!chunks_.empty()) {
      if (chunks_.front().capacity() > kMaxChunk) {
        chunks_.clear();
      } else {
        chunks_.front().clear();
      }
    }
    size_ = 0;
  }

  void swap(HashList& other) {
    chunks_.swap(other.chunks_);
    std::swap(size_, other.size_);
  }

 private:
  void NewChunk() {
    size_t capacity = kFirstChunk;
    if (!chunks_.empty()) {
      capacity = chunks_.back().capacity() * 2;
      if (capacity > kMaxChunk) capacity = kMaxChunk;
      if (capacity < kFirstChunk) capacity = kFirstChunk;
    }
    chunks_.emplace_back();
    chunks_.back().reserve(capacity);
  }

  std::vector<std::vector<uint64_t>> chunks_;
  size_t size_ = 0;
};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_BULK_HASH_LIST_H_
