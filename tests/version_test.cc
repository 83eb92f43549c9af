// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// include/rocksdb_cuckoo/version.h: the macros, the runtime accessors and
// the CMake project version (read from the same header) agree.
#include "rocksdb_cuckoo/version.h"

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(VersionTest, AccessorMatchesMacros) {
  const rocksdb_cuckoo::Version v = rocksdb_cuckoo::GetVersion();
  EXPECT_EQ(v.major, ROCKSDB_CUCKOO_VERSION_MAJOR);
  EXPECT_EQ(v.minor, ROCKSDB_CUCKOO_VERSION_MINOR);
  EXPECT_EQ(v.patch, ROCKSDB_CUCKOO_VERSION_PATCH);
}

TEST(VersionTest, StringsMatchNumbers) {
  const std::string expected =
      std::to_string(ROCKSDB_CUCKOO_VERSION_MAJOR) + "." +
      std::to_string(ROCKSDB_CUCKOO_VERSION_MINOR) + "." +
      std::to_string(ROCKSDB_CUCKOO_VERSION_PATCH);
  EXPECT_EQ(std::string(ROCKSDB_CUCKOO_VERSION_STRING), expected);
  EXPECT_EQ(std::string(rocksdb_cuckoo::GetVersionString()), expected);
}

// CMakeLists.txt parses version.h for project(VERSION): the package version
// file, the pkg-config Version and the SOVERSION come from it.
TEST(VersionTest, CMakeProjectVersionIsTheHeaders) {
  EXPECT_EQ(std::string(CUCKOO_CMAKE_PROJECT_VERSION),
            ROCKSDB_CUCKOO_VERSION_STRING);
}

}  // namespace
