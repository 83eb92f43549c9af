// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Helpers shared by the SST filter policy tests.
#ifndef ROCKSDB_CUCKOO_TESTS_SST_TEST_UTIL_H_
#define ROCKSDB_CUCKOO_TESTS_SST_TEST_UTIL_H_

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "temp_dir.h"

#include "rocksdb/utilities/object_registry.h"
#include "rocksdb_cuckoo/filter_policy.h"

namespace rocksdb_cuckoo {
namespace test {

// Registers the "cuckoofilter" factories in ObjectLibrary::Default() once.
inline void RegisterOnce() {
  static const int registered = RegisterCuckooFilterPolicies(
      *ROCKSDB_NAMESPACE::ObjectLibrary::Default(), "");
  (void)registered;
}

using cuckoo_test::TempDir;

}  // namespace test
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_TESTS_SST_TEST_UTIL_H_
