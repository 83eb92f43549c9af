// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Runtime-dispatched access to the CuckooTable of one configuration.
// Internal header.
#ifndef CUCKOO_PLUGIN_CORE_FILTER_TABLE_OPS_H_
#define CUCKOO_PLUGIN_CORE_FILTER_TABLE_OPS_H_

#include <cstddef>
#include <cstdint>

#include "cuckoo/cuckoo_filter.h"
#include "filter/cuckoo_table.h"

namespace cuckoo {
namespace internal {

// One immutable singleton per supported (f, b, semi-sort); see GetTableOps.
class TableOps {
 public:
  virtual ~TableOps() = default;
  virtual int fingerprint_bits() const = 0;
  virtual int bucket_size() const = 0;
  virtual bool semi_sort() const = 0;
  virtual uint64_t TableBytes(uint64_t num_buckets) const = 0;
  virtual bool Contains(const TableRef& t, uint64_t hash) const = 0;
  virtual void ContainsBatch(const TableRef& t, const KeyHash* hashes, size_t n,
                             bool* out) const = 0;
  virtual InsertResult Insert(const MutableTableRef& t,
                              uint64_t hash) const = 0;
  virtual uint64_t InsertMany(const MutableTableRef& t, const KeyHash* hashes,
                              size_t n) const = 0;
  // CuckooTable::InsertUnordered; it groups by bucket on tables of
  // min_table_bytes or more (see UnorderedMinTableBytes).
  virtual uint64_t InsertUnordered(const MutableTableRef& t,
                                   const KeyHash* hashes, size_t n,
                                   uint64_t min_table_bytes) const = 0;
  virtual uint64_t UnorderedMinTableBytes() const = 0;
  virtual bool Erase(const MutableTableRef& t, uint64_t hash) const = 0;
  // Non-empty slots of a table of num_buckets buckets (victim excluded).
  virtual uint64_t CountOccupied(const uint8_t* table,
                                 uint64_t num_buckets) const = 0;
  // Constants of the inline lookup (cuckoo/detail/probe.h); bucket_bits 0
  // when this layout has none (the caller then uses Contains above).
  virtual detail::ProbeParams probe_params() const = 0;
};

// The operations of a configuration, or null if it is not supported.
const TableOps* GetTableOps(int fingerprint_bits, int bucket_size,
                            bool semi_sort);

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_FILTER_TABLE_OPS_H_
