// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// librocksdb_cuckoo.so registers its factories when loaded: after dlopen,
// "cuckoofilter:..." strings create the policy through RocksDB alone (this
// test does not link the plugin), as in LD_PRELOAD=librocksdb_cuckoo.so
// db_bench.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "rocksdb/convenience.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"

#ifndef CUCKOO_SHARED_LIBRARY_PATH
#error "CUCKOO_SHARED_LIBRARY_PATH must name librocksdb_cuckoo.so"
#endif

namespace {

namespace rdb = ROCKSDB_NAMESPACE;

TEST(SharedLibraryTest, NotRegisteredBeforeLoading) {
  // The silent trap: an unregistered name is "no filter" with an OK status.
  std::shared_ptr<const rdb::FilterPolicy> policy;
  rdb::Status s = rdb::FilterPolicy::CreateFromString(
      rdb::ConfigOptions(), "cuckoofilter:10", &policy);
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(policy, nullptr);
}

// The handle of the test below, closed by StaysLoadedAfterDlclose.
void* loaded_handle = nullptr;

TEST(SharedLibraryTest, LoadingRegistersTheFactories) {
  void* handle = dlopen(CUCKOO_SHARED_LIBRARY_PATH, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  loaded_handle = handle;
  using CountFn = int (*)();
  auto registered = reinterpret_cast<CountFn>(
      dlsym(handle, "rocksdb_cuckoo_shared_library_registered"));
  ASSERT_NE(registered, nullptr) << dlerror();
  EXPECT_GE(registered(), 1);
  ASSERT_NE(dlsym(handle, "cuckoo_RegisterPlugin"), nullptr)
      << "registrar not exported";

  std::shared_ptr<const rdb::FilterPolicy> policy;
  rdb::Status s = rdb::FilterPolicy::CreateFromString(
      rdb::ConfigOptions(), "cuckoofilter:10", &policy);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_NE(policy, nullptr);
  EXPECT_STREQ(policy->Name(), "cuckoofilter:10");

  // Bad arguments reach the factory (an error, not "no filter").
  rdb::ConfigOptions strict;
  strict.input_strings_escaped = false;
  rdb::BlockBasedTableOptions table;
  s = rdb::GetBlockBasedTableOptionsFromString(
      strict, rdb::BlockBasedTableOptions(), "filter_policy=cuckoofilter:abc",
      &table);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  s = rdb::GetBlockBasedTableOptionsFromString(
      strict, rdb::BlockBasedTableOptions(), "filter_policy=cuckoofilter:16",
      &table);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_NE(table.filter_policy, nullptr);
  EXPECT_STREQ(table.filter_policy->Name(), "cuckoofilter:16");
}

// dlclose of every handle leaves the library mapped (linked with
// -z nodelete): RocksDB's ObjectLibrary keeps the factories it registered,
// and a thread that read a live-key filter runs the reader gate's pthread
// key destructor, code of this library, when it exits, possibly long after.
TEST(SharedLibraryTest, StaysLoadedAfterDlclose) {
  void* handle = dlopen(CUCKOO_SHARED_LIBRARY_PATH, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  ASSERT_EQ(dlclose(handle), 0) << dlerror();
  if (loaded_handle != nullptr) {
    ASSERT_EQ(dlclose(loaded_handle), 0) << dlerror();
    loaded_handle = nullptr;
  }
  void* again =
      dlopen(CUCKOO_SHARED_LIBRARY_PATH, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  EXPECT_NE(again, nullptr) << "librocksdb_cuckoo.so was unloaded by dlclose";
  // Still registered (the factories' code is mapped).
  std::shared_ptr<const rdb::FilterPolicy> policy;
  ASSERT_TRUE(rdb::FilterPolicy::CreateFromString(rdb::ConfigOptions(),
                                                  "cuckoofilter:10", &policy)
                  .ok());
  EXPECT_NE(policy, nullptr);
}

}  // namespace
