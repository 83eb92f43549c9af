// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// A builder's scratch array that keeps its memory between filters and does
// not initialize its elements when it grows. Internal header.
//
// std::vector zero-fills (value-initializes) what it grows by; for scratch
// arrays of hundreds of MB that the builder overwrites element by element
// anyway, that fill is a whole pass over memory (and, for fresh memory, one
// more write after the kernel has zeroed the pages). Only for trivial T:
// every element must be written before it is read.
#ifndef CUCKOO_PLUGIN_CORE_BULK_SCRATCH_ARRAY_H_
#define CUCKOO_PLUGIN_CORE_BULK_SCRATCH_ARRAY_H_

#include <cstddef>
#include <memory>
#include <type_traits>

namespace cuckoo {
namespace internal {

template <typename T>
class ScratchArray {
  static_assert(std::is_trivial<T>::value, "elements are left uninitialized");

 public:
  // Room for n elements; their contents are unspecified.
  void Reserve(size_t n) {
    if (n > capacity_) {
      data_.reset(new T[n]);
      capacity_ = n;
    }
  }
  size_t capacity() const { return capacity_; }
  // Frees the memory.
  void Release() {
    data_.reset();
    capacity_ = 0;
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  std::unique_ptr<T[]> data_;
  size_t capacity_ = 0;
};

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_BULK_SCRATCH_ARRAY_H_
