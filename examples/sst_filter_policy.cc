// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Cuckoo filters in a DB's SST files: README.md "SST filter blocks",
// include/rocksdb_cuckoo/filter_policy.h, statistics.h and version.h show
// parts of this file. Opens a DB in the directory given as argv[1] (default
// /tmp/rocksdb_cuckoo_example_sst; wiped first), writes, flushes and reads
// absent keys, which the filter rules out. Links
// rocksdb_cuckoo::rocksdb_cuckoo.
#include <cstdio>
#include <memory>
#include <string>

#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/statistics.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/object_registry.h"
#include "rocksdb/version.h"
#include "rocksdb_cuckoo/filter_policy.h"
#include "rocksdb_cuckoo/statistics.h"
#include "rocksdb_cuckoo/version.h"

namespace {

int Fail(const char* what, const ROCKSDB_NAMESPACE::Status& s) {
  fprintf(stderr, "sst_filter_policy: %s: %s\n", what, s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path =
      argc > 1 ? argv[1] : "/tmp/rocksdb_cuckoo_example_sst";

  static_assert(ROCKSDB_CUCKOO_VERSION_MAJOR == 1, "written for 1.x");
  rocksdb_cuckoo::Version v = rocksdb_cuckoo::GetVersion();  // the library
  printf("rocksdb_cuckoo %d.%d.%d\n", v.major, v.minor, v.patch);

  ROCKSDB_NAMESPACE::Options options;
  options.create_if_missing = true;
  ROCKSDB_NAMESPACE::BlockBasedTableOptions table_options;
  table_options.filter_policy.reset(
      rocksdb_cuckoo::NewCuckooFilterPolicy(10));  // bits/key
  options.table_factory.reset(
      ROCKSDB_NAMESPACE::NewBlockBasedTableFactory(table_options));

  // Or by target false positive rate, or with an explicit layout; bad
  // arguments return InvalidArgument and a null policy.
  std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> policy;
  ROCKSDB_NAMESPACE::Status s =
      rocksdb_cuckoo::NewCuckooFilterPolicyForFpr(0.001, &policy);
  s = rocksdb_cuckoo::NewCuckooFilterPolicyWithLayout(
      /*bits_per_key=*/12, /*fingerprint_bits=*/12, /*bucket_size=*/4,
      /*semi_sort=*/true, &policy);
  if (!s.ok()) return Fail("NewCuckooFilterPolicyWithLayout", s);

  // Or by name, in an options string (or an OPTIONS file: see
  // examples/options_file.cc), once the factories are registered.
  rocksdb_cuckoo::RegisterCuckooFilterPolicies(
      *ROCKSDB_NAMESPACE::ObjectLibrary::Default(), "");
  ROCKSDB_NAMESPACE::ConfigOptions config;
  s = ROCKSDB_NAMESPACE::GetColumnFamilyOptionsFromString(
      config, options,
      "block_based_table_factory={filter_policy=cuckoofilter:10}", &options);
  if (!s.ok()) return Fail("GetColumnFamilyOptionsFromString", s);

  // RocksDB's Statistics, plus the SST policies' counters in ToString().
  options.statistics = rocksdb_cuckoo::NewCuckooStatistics();

  ROCKSDB_NAMESPACE::DestroyDB(path, options).PermitUncheckedError();
  std::unique_ptr<ROCKSDB_NAMESPACE::DB> db;
#if ROCKSDB_MAJOR >= 10  // 10.0 added this overload, 11.0 removed DB**
  s = ROCKSDB_NAMESPACE::DB::Open(options, path, &db);
#else
  ROCKSDB_NAMESPACE::DB* raw = nullptr;
  s = ROCKSDB_NAMESPACE::DB::Open(options, path, &raw);
  db.reset(raw);
#endif
  if (!s.ok()) return Fail("open", s);
  for (int i = 0; i < 10000; ++i) {
    s = db->Put(ROCKSDB_NAMESPACE::WriteOptions(), "key" + std::to_string(i),
                "value");
    if (!s.ok()) return Fail("put", s);
  }
  s = db->Flush(ROCKSDB_NAMESPACE::FlushOptions());  // builds a filter
  if (!s.ok()) return Fail("flush", s);
  std::string value;
  int absent = 0;
  for (int i = 0; i < 10000; ++i) {
    absent += db->Get(ROCKSDB_NAMESPACE::ReadOptions(),
                      "absent" + std::to_string(i), &value)
                  .IsNotFound();
  }
  const uint64_t useful = options.statistics->getTickerCount(
      ROCKSDB_NAMESPACE::BLOOM_FILTER_USEFUL);
  rocksdb_cuckoo::CuckooFilterPolicyStats stats =
      rocksdb_cuckoo::GetGlobalCuckooFilterPolicyStats();
  s = db->Close();
  if (!s.ok()) return Fail("close", s);
  db.reset();
  ROCKSDB_NAMESPACE::DestroyDB(path, options).PermitUncheckedError();

  // About 0.7% of the absent keys pass the filter at 10 bits/key.
  const bool ok = absent == 10000 && useful > 9500 &&
                  stats.filters_built >= 1 && stats.invalid_blocks == 0;
  printf(
      "sst_filter_policy: %s (%llu of %d absent keys ruled out by the "
      "filter, %llu filters built)\n",
      ok ? "ok" : "FAILED", static_cast<unsigned long long>(useful), absent,
      static_cast<unsigned long long>(stats.filters_built));
  return ok ? 0 : 1;
}
