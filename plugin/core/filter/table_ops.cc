// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "filter/table_ops.h"

#include <type_traits>

#include "filter/table_settings.h"

namespace cuckoo {
namespace internal {
namespace {

template <typename S>
class TableOpsImpl final : public TableOps {
 public:
  int fingerprint_bits() const override { return S::kFpBits; }
  int bucket_size() const override { return S::kSlots; }
  bool semi_sort() const override { return S::kSemiSort; }
  uint64_t TableBytes(uint64_t num_buckets) const override {
    return S::TableBytes(num_buckets);
  }
  bool Contains(const TableRef& t, uint64_t hash) const override {
    return CuckooTable<S>::Contains(t, hash);
  }
  void ContainsBatch(const TableRef& t, const KeyHash* hashes, size_t n,
                     bool* out) const override {
    CuckooTable<S>::ContainsBatch(t, hashes, n, out);
  }
  InsertResult Insert(const MutableTableRef& t, uint64_t hash) const override {
    return CuckooTable<S>::Insert(t, hash);
  }
  uint64_t InsertMany(const MutableTableRef& t, const KeyHash* hashes,
                      size_t n) const override {
    return CuckooTable<S>::InsertMany(t, hashes, n);
  }
  uint64_t InsertUnordered(const MutableTableRef& t, const KeyHash* hashes,
                           size_t n, uint64_t min_table_bytes) const override {
    return CuckooTable<S>::InsertUnordered(t, hashes, n, min_table_bytes);
  }
  uint64_t UnorderedMinTableBytes() const override {
    return CuckooTable<S>::kUnorderedMinTableBytes;
  }
  bool Erase(const MutableTableRef& t, uint64_t hash) const override {
    return CuckooTable<S>::Erase(t, hash);
  }
  uint64_t CountOccupied(const uint8_t* table,
                         uint64_t num_buckets) const override {
    uint64_t n = 0;
    uint32_t entries[S::kSlots];
    for (uint64_t i = 0; i < num_buckets; ++i) {
      BucketCodec<S>::Read(table, i, entries);
      for (uint32_t e : entries) n += e != 0;
    }
    return n;
  }
  detail::ProbeParams probe_params() const override {
    detail::ProbeParams p;
    if constexpr (S::kWordsPerBucket == 1 &&
                  std::is_same_v<typename S::Word, uint64_t> &&
                  (!S::kSemiSort || S::kLowBits >= 4)) {
      p.bucket_bits = S::kBucketBits;
      p.fp_bits = S::kFpBits;
      if constexpr (S::kSemiSort) {
        p.low_bits = S::kLowBits;
        p.lane_lo = LaneOnes<uint64_t, S::kLowBits, 4>();
        p.lane_hi = p.lane_lo << (S::kLowBits - 1);
        p.semi_sort_spread = kSemiSortSpread<S::kLowBits>.data();
      } else {
        p.lane_lo = LaneOnes<uint64_t, S::kFpBits, S::kSlots>();
        p.lane_hi = p.lane_lo << (S::kFpBits - 1);
      }
    }
    return p;
  }
};

template <typename S>
const TableOps* Singleton() {
  static const TableOpsImpl<S> ops;
  return &ops;
}

}  // namespace

const TableOps* GetTableOps(int fingerprint_bits, int bucket_size,
                            bool semi_sort) {
  const TableOps* ops = nullptr;
  DispatchSettings(
      fingerprint_bits, bucket_size, semi_sort,
      [&](auto settings) { ops = Singleton<decltype(settings)>(); });
  return ops;
}

}  // namespace internal
}  // namespace cuckoo
