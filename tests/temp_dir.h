// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// A fresh directory for one test, shared by the RocksDB test suites.
#ifndef ROCKSDB_CUCKOO_TESTS_TEMP_DIR_H_
#define ROCKSDB_CUCKOO_TESTS_TEMP_DIR_H_

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace cuckoo_test {

// A new directory $TEST_TMPDIR/rocksdb_cuckoo_<tag>_XXXXXX (TEST_TMPDIR
// defaults to /tmp), removed with its contents on destruction. Aborts if it
// cannot be created: no test can run without it.
class TempDir {
 public:
  explicit TempDir(const std::string& tag = "test") {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string pattern =
        std::string(base != nullptr && *base ? base : "/tmp") +
        "/rocksdb_cuckoo_" + tag + "_XXXXXX";
    if (mkdtemp(&pattern[0]) == nullptr) {
      std::perror(("mkdtemp " + pattern).c_str());
      std::abort();
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace cuckoo_test

#endif  // ROCKSDB_CUCKOO_TESTS_TEMP_DIR_H_
