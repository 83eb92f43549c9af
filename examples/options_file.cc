// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Loading an OPTIONS file that names the cuckoo policy, and the trap of an
// unregistered name: README.md "An OPTIONS file" shows parts of this file.
// Usage: options_file <OPTIONS file> (examples/db_bench_options.ini).
//
// RocksDB loads an OPTIONS file leniently: a filter_policy whose name no
// factory knows becomes "no filter", and LoadOptionsFromFile still returns
// OK. This program shows it (the file loaded before the factories are
// registered has no filter), then registers them and loads it again.
#include <cstdio>
#include <string>
#include <vector>

#include "rocksdb/convenience.h"
#include "rocksdb/env.h"
#include "rocksdb/options.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/object_registry.h"
#include "rocksdb/utilities/options_util.h"
#include "rocksdb_cuckoo/filter_policy.h"

namespace {

// The filter policy of the default column family in an OPTIONS file; false
// if the file does not load.
bool LoadFilterPolicy(
    const std::string& file,
    std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy>* policy) {
  ROCKSDB_NAMESPACE::ConfigOptions config;
  config.env = ROCKSDB_NAMESPACE::Env::Default();
  ROCKSDB_NAMESPACE::DBOptions db_options;
  std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor> families;
  ROCKSDB_NAMESPACE::Status s = ROCKSDB_NAMESPACE::LoadOptionsFromFile(
      config, file, &db_options, &families);
  if (!s.ok()) {
    fprintf(stderr, "LoadOptionsFromFile: %s\n", s.ToString().c_str());
    return false;
  }
  const auto* table =
      families[0]
          .options.table_factory
          ->GetOptions<ROCKSDB_NAMESPACE::BlockBasedTableOptions>();
  *policy = table == nullptr ? nullptr : table->filter_policy;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <OPTIONS file>\n", argv[0]);
    return 2;
  }
  const std::string file = argv[1];
  std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy> policy;

  // Before registration: OK, and no filter at all.
  if (!LoadFilterPolicy(file, &policy)) return 1;
  const bool trap = policy == nullptr;
  printf("unregistered: status OK, filter_policy %s\n",
         policy == nullptr ? "null (no filter!)" : policy->Name());

  // Register the factories once per process, then check what was loaded.
  rocksdb_cuckoo::RegisterCuckooFilterPolicies(
      *ROCKSDB_NAMESPACE::ObjectLibrary::Default(), "");
  if (!LoadFilterPolicy(file, &policy)) return 1;
  if (!rocksdb_cuckoo::IsCuckooFilterPolicy(policy.get())) {
    fprintf(stderr, "the OPTIONS file loaded without a cuckoo filter\n");
    return 1;
  }
  printf("registered: filter_policy %s\n", policy->Name());
  printf("options_file: %s\n", trap ? "ok" : "FAILED (no trap shown)");
  return trap ? 0 : 1;
}
