// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Zero-filled memory for large tables, straight from the OS. Internal
// header.
//
// Why: a new table must read as all zeros (an empty table), and filling it
// with memset touches every page at once (tens of milliseconds for a large
// table, under whatever lock the caller holds). Anonymous mappings are
// zero-filled by the kernel page by page, on first touch. Regions from
// kHugePageMinBytes on are aligned to 2 MiB and advised MADV_HUGEPAGE: a
// lookup touches two random buckets, and with 4 KiB pages nearly every one
// also misses the TLB once the table is larger than the TLB's reach.
// Benchmarks allocate their baseline arrays here too, so that both sides
// have the same page size.
#ifndef CUCKOO_PLUGIN_CORE_UTIL_TABLE_MEMORY_H_
#define CUCKOO_PLUGIN_CORE_UTIL_TABLE_MEMORY_H_

#include <cstddef>

namespace cuckoo {
namespace internal {

constexpr size_t kHugePageMinBytes = size_t{4} << 20;

// `bytes` (> 0) zero bytes, aligned to at least 64. Throws std::bad_alloc.
void* AllocateZeroed(size_t bytes);
// Frees memory from AllocateZeroed(bytes) (the same `bytes`).
void FreeZeroed(void* p, size_t bytes);

// An owned array of n zero-initialised T from AllocateZeroed (T trivially
// default-constructible, e.g. std::atomic<uint64_t>).
template <typename T>
class ZeroedArray {
 public:
  explicit ZeroedArray(size_t n)
      : p_(static_cast<T*>(AllocateZeroed(n * sizeof(T)))), n_(n) {}
  ~ZeroedArray() { FreeZeroed(p_, n_ * sizeof(T)); }
  ZeroedArray(const ZeroedArray&) = delete;
  ZeroedArray& operator=(const ZeroedArray&) = delete;
  T& operator[](size_t i) const { return p_[i]; }
  T* get() const { return p_; }

 private:
  T* const p_;
  const size_t n_;
};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_UTIL_TABLE_MEMORY_H_
