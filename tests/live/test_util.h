// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Helpers shared by the FilteredDB tests: temporary directories, an append
// merge operator, options sized for tests.
#ifndef ROCKSDB_CUCKOO_TESTS_LIVE_TEST_UTIL_H_
#define ROCKSDB_CUCKOO_TESTS_LIVE_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.h"

#include "rocksdb/db.h"
#include "rocksdb/merge_operator.h"
#include "rocksdb/options.h"
#include "rocksdb/table.h"
#include "rocksdb/write_batch.h"
#include "rocksdb_cuckoo/filtered_db.h"

namespace rocksdb_cuckoo {
namespace test {

using cuckoo_test::TempDir;

// Merge operator: concatenates operands (a missing base value is "").
class AppendOperator : public ROCKSDB_NAMESPACE::AssociativeMergeOperator {
 public:
  bool Merge(const ROCKSDB_NAMESPACE::Slice&,
             const ROCKSDB_NAMESPACE::Slice* existing,
             const ROCKSDB_NAMESPACE::Slice& value, std::string* new_value,
             ROCKSDB_NAMESPACE::Logger*) const override {
    new_value->assign(existing != nullptr ? existing->ToString()
                                          : std::string());
    new_value->append(value.data(), value.size());
    return true;
  }
  const char* Name() const override { return "cuckoo_test.append"; }
};

// Small memtables (4 MiB is the minimum the Debian build's assertions
// accept) so that tests exercise flushes and compactions.
inline ROCKSDB_NAMESPACE::Options TestOptions() {
  ROCKSDB_NAMESPACE::Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 4 << 20;
  options.merge_operator = std::make_shared<AppendOperator>();
  options.max_background_jobs = 2;
  return options;
}

inline FilteredDBOptions SmallFilterOptions(uint64_t initial_capacity = 1024) {
  FilteredDBOptions o;
  o.filter.initial_capacity = initial_capacity;
  // Most tests look at the filter right after Open; the background build at
  // Open has its own tests and model mode.
  o.background_open = false;
  return o;
}

// Opens a FilteredDB over the default column family and `names` (created
// when missing), all with TestOptions(); (*handles)[0] is the default one.
inline ROCKSDB_NAMESPACE::Status OpenFamilies(
    const std::string& path, const std::vector<std::string>& names,
    const FilteredDBOptions& fopts,
    std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*>* handles,
    std::unique_ptr<FilteredDB>* db) {
  ROCKSDB_NAMESPACE::Options options = TestOptions();
  options.create_missing_column_families = true;
  const ROCKSDB_NAMESPACE::ColumnFamilyOptions cf_options(options);
  std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor> cfds = {
      {ROCKSDB_NAMESPACE::kDefaultColumnFamilyName, cf_options}};
  for (const std::string& name : names) cfds.push_back({name, cf_options});
  return FilteredDB::Open(ROCKSDB_NAMESPACE::DBOptions(options), path, cfds,
                          handles, fopts, db);
}

// Destroys the handles not destroyed yet (nullptr entries) and clears them.
inline void DestroyHandles(
    FilteredDB* db,
    std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*>* handles) {
  for (ROCKSDB_NAMESPACE::ColumnFamilyHandle*& h : *handles) {
    if (h != nullptr) {
      EXPECT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
    }
    h = nullptr;
  }
}

inline std::string Key(int i) {
  char buf[32];
  snprintf(buf, sizeof(buf), "key%08d", i);
  return buf;
}

// Four threads, `ops` random writes each over the keys Key(0..universe-1)
// except the stable ones (every 7th, Put once before the threads start):
// Put, Delete, or a batch of a Put and a Delete; every write must succeed.
// Every 500 writes a thread reads every stable key through FilteredDB: each
// must be found while the others write (no false negative during splits,
// rescans, deferred checks).
inline void RunRandomWriters(FilteredDB* db, int ops, int universe,
                             uint64_t seed) {
  using ROCKSDB_NAMESPACE::ReadOptions;
  using ROCKSDB_NAMESPACE::WriteOptions;
  for (int k = 0; k < universe; k += 7) {
    EXPECT_TRUE(db->Put(WriteOptions(), Key(k), "stable").ok());
  }
  auto written = [universe](uint64_t r) {
    const int i = static_cast<int>(r % static_cast<uint64_t>(universe));
    if (i % 7 != 0) return Key(i);
    return Key(i + 1 < universe ? i + 1 : i - 1);  // not a stable key
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([=] {
      uint64_t x = seed + static_cast<uint64_t>(t);
      for (int i = 0; i < ops; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const std::string key = written(x >> 33);
        const int op = static_cast<int>((x >> 20) % 5);
        ROCKSDB_NAMESPACE::Status st;
        if (op < 2) {
          st = db->Put(WriteOptions(), key, "v");
        } else if (op < 4) {
          st = db->Delete(WriteOptions(), key);
        } else {
          ROCKSDB_NAMESPACE::WriteBatch b;
          b.Put(key, "b").PermitUncheckedError();
          b.Delete(written(x >> 40)).PermitUncheckedError();
          st = db->Write(WriteOptions(), &b);
        }
        EXPECT_TRUE(st.ok()) << st.ToString();
        if (i % 500 != 0) continue;
        for (int k = 0; k < universe; k += 7) {
          std::string v;
          EXPECT_TRUE(db->Get(ReadOptions(), Key(k), &v).ok())
              << "false negative " << k;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace test
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_TESTS_LIVE_TEST_UTIL_H_
