// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The rocksdb-cuckoo release: compile-time macros and a runtime accessor.
//
// Example (examples/sst_filter_policy.cc):
//   #include "rocksdb_cuckoo/version.h"
//
//   static_assert(ROCKSDB_CUCKOO_VERSION_MAJOR == 1, "written for 1.x");
//   rocksdb_cuckoo::Version v = rocksdb_cuckoo::GetVersion();  // the library
//
// The macros say which headers a program was compiled with; GetVersion() and
// GetVersionString() say which library it runs with (they are defined in the
// library, so a program loading another build of librocksdb_cuckoo.so sees
// that build's version). Versions follow semantic versioning: the major
// changes with breaking API changes (and is the shared library's SOVERSION),
// the minor with additions, the patch with fixes. CHANGELOG.md lists each
// release's features, formats written and read, and breaking changes.
//
// This file is the single source of the version: CMakeLists.txt reads the
// three numbers below (the CMake package version and the pkg-config Version
// come from it). Keep each "#define ROCKSDB_CUCKOO_VERSION_<PART> <number>"
// on one line.
#ifndef ROCKSDB_CUCKOO_VERSION_H_
#define ROCKSDB_CUCKOO_VERSION_H_

#define ROCKSDB_CUCKOO_VERSION_MAJOR 1
#define ROCKSDB_CUCKOO_VERSION_MINOR 0
#define ROCKSDB_CUCKOO_VERSION_PATCH 0

// "<major>.<minor>.<patch>", e.g. "1.0.0".
// clang-format off
#define ROCKSDB_CUCKOO_VERSION_STRING                                  \
  ROCKSDB_CUCKOO_VERSION_STR_(ROCKSDB_CUCKOO_VERSION_MAJOR) "."        \
  ROCKSDB_CUCKOO_VERSION_STR_(ROCKSDB_CUCKOO_VERSION_MINOR) "."        \
  ROCKSDB_CUCKOO_VERSION_STR_(ROCKSDB_CUCKOO_VERSION_PATCH)
#define ROCKSDB_CUCKOO_VERSION_STR_(x) ROCKSDB_CUCKOO_VERSION_STR2_(x)
#define ROCKSDB_CUCKOO_VERSION_STR2_(x) #x
// clang-format on

namespace rocksdb_cuckoo {

// A release number.
struct Version {
  int major;
  int minor;
  int patch;
};

// The version of the rocksdb-cuckoo library this program runs with.
// Thread-safe, no allocation.
Version GetVersion();

// The same as "<major>.<minor>.<patch>" (a static string).
const char* GetVersionString();

}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_VERSION_H_
