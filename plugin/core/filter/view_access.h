// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Internal access to a CuckooFilterView's table and victim slot, for the
// SST reader (which probes the table through its own per-layout code) and
// white-box tests, and to a CuckooFilter's table operations, for white-box
// tests. Not part of the public API. Internal header.
#ifndef CUCKOO_PLUGIN_CORE_FILTER_VIEW_ACCESS_H_
#define CUCKOO_PLUGIN_CORE_FILTER_VIEW_ACCESS_H_

#include "cuckoo/cuckoo_filter.h"
#include "filter/cuckoo_table.h"
#include "filter/table_ops.h"

namespace cuckoo {
namespace internal {

struct ViewAccess {
  // The bucket array, bucket count, seed and victim slot of a valid view.
  static TableRef Ref(const CuckooFilterView& view) {
    TableRef t;
    t.table = view.table_;
    t.num_buckets = static_cast<uint32_t>(view.geometry_.num_buckets);
    t.seed = view.geometry_.seed;
    t.victim_fp = view.geometry_.victim_fp;
    t.victim_bucket = view.geometry_.victim_bucket;
    return t;
  }
};

struct FilterAccess {
  // CuckooFilter::InsertUnordered, grouping by bucket from tables of
  // min_table_bytes on (0: every table), so tests reach that path on small
  // tables.
  static uint64_t InsertUnordered(CuckooFilter* filter, const KeyHash* hashes,
                                  size_t n, uint64_t min_table_bytes) {
    return filter->ops_->InsertUnordered(filter->MutableRef(), hashes, n,
                                         min_table_bytes);
  }
};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_FILTER_VIEW_ACCESS_H_
