// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The fields that place and describe one cuckoo table: its layout (f, b,
// semi-sort), bucket count, seed, item count and victim slot. A
// CuckooFilterView holds one; the serialized trailer
// (plugin/core/filter/filter_format.h) records exactly these fields plus a
// format version. Included by cuckoo_filter.h; not an API of its own: names
// and layout may change between versions.
#ifndef CUCKOO_DETAIL_TABLE_GEOMETRY_H_
#define CUCKOO_DETAIL_TABLE_GEOMETRY_H_

#include <cstdint>

namespace cuckoo {
namespace detail {

struct TableGeometry {
  uint64_t num_buckets = 0;
  uint64_t num_items = 0;  // stored items, the victim included
  uint32_t seed = 0;
  uint32_t victim_fp = 0;      // 0: no victim
  uint32_t victim_bucket = 0;  // 0 when there is no victim
  int fingerprint_bits = 0;
  int bucket_size = 0;
  bool semi_sort = false;
};

}  // namespace detail
}  // namespace cuckoo

#endif  // CUCKOO_DETAIL_TABLE_GEOMETRY_H_
