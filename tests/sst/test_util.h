// Helpers shared by the SST filter policy tests.
#ifndef ROCKSDB_CUCKOO_TESTS_SST_TEST_UTIL_H_
#define ROCKSDB_CUCKOO_TESTS_SST_TEST_UTIL_H_

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

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

// A fresh directory under $TEST_TMPDIR (or /tmp), removed on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string pattern = std::string(base != nullptr && *base ? base : "/tmp") +
                          "/cuckoo_sst_" + tag + "_XXXXXX";
    char* made = mkdtemp(&pattern[0]);
    if (made == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    path_ = made;
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

}  // namespace test
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_TESTS_SST_TEST_UTIL_H_
