// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Static initializer of librocksdb_cuckoo.so (not part of the static library
// nor of the in-tree plugin, which registers through cuckoo_FUNC): loading the
// shared library, e.g. with LD_PRELOAD into a stock db_bench, ldb or
// sst_dump, registers the plugin's factories in ObjectLibrary::Default(), so
// OPTIONS files and options strings naming them work unchanged.
#include <string>

#include "rocksdb/utilities/object_registry.h"

extern "C" int cuckoo_RegisterPlugin(ROCKSDB_NAMESPACE::ObjectLibrary& library,
                                     const std::string& arg);

namespace {

const int kRegisteredFactories =
    cuckoo_RegisterPlugin(*ROCKSDB_NAMESPACE::ObjectLibrary::Default(), "");

}  // namespace

// For tests and tools: the number of factories the initializer registered.
extern "C" int rocksdb_cuckoo_shared_library_registered() {
  return kRegisteredFactories;
}
