// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// A minimal program that uses rocksdb-cuckoo as a dependency: it is built
// both against an installed package (find_package(rocksdb_cuckoo CONFIG))
// and with add_subdirectory() of the source tree (see CMakeLists.txt).
//
// It loads the policy the way an application configured by strings does
// (registered factory + "cuckoofilter:10"), checks that the result is a
// cuckoo policy (an unregistered name would silently load as "no filter"),
// opens a real DB with it, writes, flushes, reads every key back, reads
// absent keys, and checks that filters were built and actually consulted.
// It prints the rocksdb-cuckoo version it runs with and checks that it is the
// headers' (and, when found as a package, the CMake package's).
// Exit status 0 on success; every failed check prints why.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/options.h"
#include "rocksdb/statistics.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/object_registry.h"
#include "rocksdb/version.h"
#include "rocksdb_cuckoo/filter_policy.h"
#include "rocksdb_cuckoo/version.h"

namespace {

int failures = 0;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "consumer: FAILED: %s\n", what);
    ++failures;
  }
}

std::string Key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%08d", i);
  return buf;
}

}  // namespace

int main() {
  using ROCKSDB_NAMESPACE::ConfigOptions;
  using ROCKSDB_NAMESPACE::FilterPolicy;
  using ROCKSDB_NAMESPACE::Status;

  // 0. The library's version is the headers' (and the package's).
  const rocksdb_cuckoo::Version version = rocksdb_cuckoo::GetVersion();
  std::printf("consumer: rocksdb_cuckoo %s (headers %s)\n",
              rocksdb_cuckoo::GetVersionString(),
              ROCKSDB_CUCKOO_VERSION_STRING);
  Check(version.major == ROCKSDB_CUCKOO_VERSION_MAJOR &&
            version.minor == ROCKSDB_CUCKOO_VERSION_MINOR &&
            version.patch == ROCKSDB_CUCKOO_VERSION_PATCH,
        "GetVersion() is the headers' version");
#ifdef CUCKOO_PACKAGE_VERSION
  Check(
      std::string(CUCKOO_PACKAGE_VERSION) == rocksdb_cuckoo::GetVersionString(),
      "the CMake package version is the library's");
#endif

  const char* tmp = std::getenv("TMPDIR");
  std::string dir =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/cuckoo_consumer_XXXXXX";
  if (mkdtemp(&dir[0]) == nullptr) {
    std::perror("mkdtemp");
    return 2;
  }
  const std::string path = dir + "/db";

  // 1. The options-string route: register, then create from a string.
  rocksdb_cuckoo::RegisterCuckooFilterPolicies(
      *ROCKSDB_NAMESPACE::ObjectLibrary::Default(), "");
  ConfigOptions config;
  config.ignore_unsupported_options = false;
  std::shared_ptr<const FilterPolicy> policy;
  Status s = FilterPolicy::CreateFromString(config, "cuckoofilter:10", &policy);
  Check(s.ok(), "CreateFromString(cuckoofilter:10) returned OK");
  Check(policy != nullptr, "the loaded filter policy is not null");
  Check(rocksdb_cuckoo::IsCuckooFilterPolicy(policy.get()),
        "the loaded policy is a cuckoo filter policy");
  if (policy == nullptr) return 1;
  std::printf("consumer: RocksDB %d.%d, policy %s\n", ROCKSDB_MAJOR,
              ROCKSDB_MINOR, policy->Name());

  // 2. A real DB using it.
  ROCKSDB_NAMESPACE::BlockBasedTableOptions table_options;
  table_options.filter_policy = policy;
  ROCKSDB_NAMESPACE::Options options;
  options.create_if_missing = true;
  options.statistics = ROCKSDB_NAMESPACE::CreateDBStatistics();
  options.table_factory.reset(
      ROCKSDB_NAMESPACE::NewBlockBasedTableFactory(table_options));

#if ROCKSDB_MAJOR >= 11
  std::unique_ptr<ROCKSDB_NAMESPACE::DB> db;
  s = ROCKSDB_NAMESPACE::DB::Open(options, path, &db);
#else
  ROCKSDB_NAMESPACE::DB* raw_db = nullptr;
  s = ROCKSDB_NAMESPACE::DB::Open(options, path, &raw_db);
  std::unique_ptr<ROCKSDB_NAMESPACE::DB> db(raw_db);
#endif
  Check(s.ok(), "DB::Open");
  if (!s.ok()) {
    std::fprintf(stderr, "consumer: %s\n", s.ToString().c_str());
    return 1;
  }

  constexpr int kKeys = 2000;
  for (int i = 0; i < kKeys; ++i) {
    s = db->Put(ROCKSDB_NAMESPACE::WriteOptions(), Key(2 * i), "v" + Key(i));
    if (!s.ok()) break;
  }
  Check(s.ok(), "Put");
  Check(db->Flush(ROCKSDB_NAMESPACE::FlushOptions()).ok(), "Flush");

  rocksdb_cuckoo::CuckooFilterPolicyStats stats;
  Check(rocksdb_cuckoo::GetCuckooFilterPolicyStats(policy.get(), &stats),
        "GetCuckooFilterPolicyStats");
  Check(stats.filters_built >= 1, "flush built a cuckoo filter");
  Check(stats.keys_added == kKeys, "the filter holds every key written");

  int found = 0, absent = 0;
  std::string value;
  for (int i = 0; i < kKeys; ++i) {
    // Present keys (even numbers) must all be found: no false negative.
    if (db->Get(ROCKSDB_NAMESPACE::ReadOptions(), Key(2 * i), &value).ok() &&
        value == "v" + Key(i)) {
      ++found;
    }
    // Absent keys (odd numbers) inside the table's key range.
    if (db->Get(ROCKSDB_NAMESPACE::ReadOptions(), Key(2 * i + 1), &value)
            .IsNotFound()) {
      ++absent;
    }
  }
  Check(found == kKeys, "every written key reads back with its value");
  Check(absent == kKeys, "every absent key reads as NotFound");

  Check(rocksdb_cuckoo::GetCuckooFilterPolicyStats(policy.get(), &stats),
        "GetCuckooFilterPolicyStats");
  Check(stats.readers_created >= 1, "the table opened a cuckoo filter reader");
  const uint64_t useful = options.statistics->getTickerCount(
      ROCKSDB_NAMESPACE::BLOOM_FILTER_USEFUL);
  // At ~0.7% false positives nearly all of the absent lookups are filtered.
  Check(useful >= kKeys * 9 / 10, "the filter answered most absent lookups");
  std::printf(
      "consumer: %d keys, filters_built %llu, readers %llu, "
      "useful %llu of %d absent lookups\n",
      kKeys, static_cast<unsigned long long>(stats.filters_built),
      static_cast<unsigned long long>(stats.readers_created),
      static_cast<unsigned long long>(useful), kKeys);

  s = db->Close();
  Check(s.ok(), "Close");
  db.reset();
  s = ROCKSDB_NAMESPACE::DestroyDB(path, options);
  Check(s.ok(), "DestroyDB");
  std::remove(dir.c_str());

  if (failures != 0) return 1;
  std::printf("consumer: OK\n");
  return 0;
}
