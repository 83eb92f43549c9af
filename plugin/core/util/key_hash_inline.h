// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The key hash of the SST filter, inlined into the builder and the readers.
// Internal header: include it from one .cc file only, and from no file that
// also includes <xxhash.h> without XXH_INLINE_ALL.
//
// cuckoo::HashKey (key_hash.cc) is XXH3_64bits with seed 0 from libxxhash;
// this is the same function compiled inline (XXH_INLINE_ALL), which saves a
// call through the PLT on every lookup. XXH3's output is fixed by its
// specification since xxHash 0.8.0, so both give identical hashes (pinned by
// a test).
#ifndef CUCKOO_PLUGIN_CORE_UTIL_KEY_HASH_INLINE_H_
#define CUCKOO_PLUGIN_CORE_UTIL_KEY_HASH_INLINE_H_

#include <cstddef>
#include <cstdint>

// GCC 12 reports -Wmaybe-uninitialized false positives inside its own
// avx512fintrin.h when XXH3's AVX-512 code is inlined, which breaks RocksDB's
// in-tree build (-march=native -Werror). XXH3's result does not depend on
// the vector code, which only keys over 240 bytes use: take AVX2 there.
#if !defined(XXH_VECTOR) && defined(__AVX512F__)
#define XXH_VECTOR 2  // XXH_AVX2
#endif
#define XXH_INLINE_ALL
#include <xxhash.h>

#if XXH_VERSION_NUMBER < 800
#error "xxHash >= 0.8.0 is needed (stable XXH3)"
#endif

namespace cuckoo {
namespace internal {

inline uint64_t HashKeyInline(const char* data, size_t size) {
  return XXH3_64bits(data, size);
}

}  // namespace internal
}  // namespace cuckoo

#endif  // CUCKOO_PLUGIN_CORE_UTIL_KEY_HASH_INLINE_H_
