// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Little-endian loads/stores, fast range reduction and hash mixing used by
// the cuckoo table. Internal header.
#ifndef CUCKOO_PLUGIN_CORE_UTIL_BIT_UTIL_H_
#define CUCKOO_PLUGIN_CORE_UTIL_BIT_UTIL_H_

#include <cstdint>
#include <cstring>

#include "cuckoo/detail/probe.h"

namespace cuckoo {
namespace internal {

using uint128_t = unsigned __int128;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
inline uint32_t ByteSwap(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t ByteSwap(uint64_t v) { return __builtin_bswap64(v); }
inline uint128_t ByteSwap(uint128_t v) {
  return (uint128_t{__builtin_bswap64(static_cast<uint64_t>(v))} << 64) |
         __builtin_bswap64(static_cast<uint64_t>(v >> 64));
}
#else
template <typename T>
inline T ByteSwap(T v) {
  return v;
}
#endif

// Loads a little-endian unsigned integer from possibly unaligned memory.
template <typename T>
inline T LoadLE(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return ByteSwap(v);
}

// Stores a little-endian unsigned integer to possibly unaligned memory.
template <typename T>
inline void StoreLE(void* p, T v) {
  v = ByteSwap(v);
  std::memcpy(p, &v, sizeof(T));
}

// FastRange32 (Lemire's multiply-shift range reduction) and Mix32 (fmix32)
// live with the inline lookup path; one copy of the placement arithmetic.
using detail::FastRange32;
using detail::Mix32;

// SplitMix64's output function: a bijection of 64-bit values (distinct
// inputs give distinct outputs).
inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// SplitMix64 step: the random source of the eviction walk.
inline uint64_t SplitMix64(uint64_t* state) {
  return Mix64(*state += 0x9e3779b97f4a7c15ULL);
}

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_UTIL_BIT_UTIL_H_
