// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The registrar of the in-tree plugin (cuckoo_FUNC in cuckoo.mk and
// CMakeLists.txt). RocksDB's generated util/build_version.cc declares it
// inside extern "C" and calls it for ObjectRegistry::Default(), so the
// "cuckoofilter" options strings (and the "CuckooStatistics" Statistics)
// work in a RocksDB built with
// ROCKSDB_PLUGINS=cuckoo without any call from the application.
//
// Every registration function of the plugin is called from here: add new
// ones (e.g. the live-key filter's) below.
#include <string>

#include "rocksdb/utilities/object_registry.h"
#include "rocksdb_cuckoo/filter_policy.h"
#include "rocksdb_cuckoo/statistics.h"

extern "C" int cuckoo_RegisterPlugin(ROCKSDB_NAMESPACE::ObjectLibrary& library,
                                     const std::string& arg) {
  int count = 0;
  count += rocksdb_cuckoo::RegisterCuckooFilterPolicies(library, arg);
  count += rocksdb_cuckoo::RegisterCuckooStatistics(library, arg);
  return count;
}
