// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "util/table_memory.h"

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace cuckoo {
namespace internal {

namespace {
constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
}  // namespace

void* AllocateZeroed(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kHugePageMinBytes) {
    // Over-map by one huge page, keep the aligned part.
    const size_t mapped = bytes + kHugePage;
    void* raw = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t begin = (start + kHugePage - 1) & ~(kHugePage - 1);
    const uintptr_t end = start + mapped;
    if (begin > start) munmap(raw, begin - start);
    const uintptr_t used_end = begin + ((bytes + 4095) & ~size_t{4095});
    if (end > used_end)
      munmap(reinterpret_cast<void*>(used_end), end - used_end);
    madvise(reinterpret_cast<void*>(begin), bytes, MADV_HUGEPAGE);  // advice
    return reinterpret_cast<void*>(begin);
  }
#endif
  void* p = std::calloc(1, bytes + 64);
  if (p == nullptr) throw std::bad_alloc();
  // Aligned to 64 inside the block; the offset is kept in the byte before.
  const uintptr_t start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (start + 64) & ~uintptr_t{63};
  reinterpret_cast<uint8_t*>(aligned)[-1] =
      static_cast<uint8_t>(aligned - start);
  return reinterpret_cast<void*>(aligned);
}

void FreeZeroed(void* p, size_t bytes) {
  if (p == nullptr) return;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kHugePageMinBytes) {
    munmap(p, (bytes + 4095) & ~size_t{4095});
    return;
  }
#endif
  uint8_t* aligned = static_cast<uint8_t*>(p);
  std::free(aligned - aligned[-1]);
}

}  // namespace internal
}  // namespace cuckoo
