// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// DB::Open across RocksDB versions, shared by the RocksDB test suites: the
// DB** form until 9.x, std::unique_ptr<DB>* from 10.0 (the only one in 11.x).
#ifndef ROCKSDB_CUCKOO_TESTS_OPEN_DB_H_
#define ROCKSDB_CUCKOO_TESTS_OPEN_DB_H_

#include <memory>
#include <string>

#include "rocksdb/db.h"
#include "rocksdb/version.h"

namespace cuckoo_test {

inline ROCKSDB_NAMESPACE::Status OpenDB(
    const ROCKSDB_NAMESPACE::Options& options, const std::string& path,
    std::unique_ptr<ROCKSDB_NAMESPACE::DB>* db) {
#if ROCKSDB_MAJOR >= 10
  return ROCKSDB_NAMESPACE::DB::Open(options, path, db);
#else
  ROCKSDB_NAMESPACE::DB* raw = nullptr;
  ROCKSDB_NAMESPACE::Status s =
      ROCKSDB_NAMESPACE::DB::Open(options, path, &raw);
  db->reset(raw);
  return s;
#endif
}

}  // namespace cuckoo_test

#endif  // ROCKSDB_CUCKOO_TESTS_OPEN_DB_H_
