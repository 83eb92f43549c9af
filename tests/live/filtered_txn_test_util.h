// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Helpers shared by the FilteredTransactionDB tests.
#ifndef ROCKSDB_CUCKOO_TESTS_LIVE_FILTERED_TXN_TEST_UTIL_H_
#define ROCKSDB_CUCKOO_TESTS_LIVE_FILTERED_TXN_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "rocksdb/utilities/optimistic_transaction_db.h"
#include "rocksdb/utilities/transaction_db.h"
#include "rocksdb_cuckoo/filtered_transaction_db.h"
#include "test_util.h"

namespace rocksdb_cuckoo {
namespace test {

inline ROCKSDB_NAMESPACE::Status OpenTxnDB(
    const std::string& path, const FilteredDBOptions& fopts,
    std::unique_ptr<FilteredTransactionDB>* db,
    ROCKSDB_NAMESPACE::TransactionDBOptions txn_options =
        ROCKSDB_NAMESPACE::TransactionDBOptions()) {
  return FilteredTransactionDB::Open(TestOptions(), txn_options, path, fopts,
                                     db);
}

inline ROCKSDB_NAMESPACE::Status OpenOccDB(
    const std::string& path, const FilteredDBOptions& fopts,
    std::unique_ptr<FilteredOptimisticTransactionDB>* db) {
  return FilteredOptimisticTransactionDB::Open(
      TestOptions(), ROCKSDB_NAMESPACE::OptimisticTransactionDBOptions(), path,
      fopts, db);
}

// A plain TransactionDB / OptimisticTransactionDB (the model).
inline ROCKSDB_NAMESPACE::Status OpenPlainTxnDB(
    const std::string& path,
    std::unique_ptr<ROCKSDB_NAMESPACE::TransactionDB>* db,
    ROCKSDB_NAMESPACE::TransactionDBOptions txn_options =
        ROCKSDB_NAMESPACE::TransactionDBOptions()) {
  ROCKSDB_NAMESPACE::TransactionDB* raw = nullptr;
  ROCKSDB_NAMESPACE::Status s = ROCKSDB_NAMESPACE::TransactionDB::Open(
      TestOptions(), txn_options, path, &raw);
  db->reset(raw);
  return s;
}

inline ROCKSDB_NAMESPACE::Status OpenPlainOccDB(
    const std::string& path,
    std::unique_ptr<ROCKSDB_NAMESPACE::OptimisticTransactionDB>* db) {
  ROCKSDB_NAMESPACE::OptimisticTransactionDB* raw = nullptr;
  ROCKSDB_NAMESPACE::Status s =
      ROCKSDB_NAMESPACE::OptimisticTransactionDB::Open(TestOptions(), path,
                                                       &raw);
  db->reset(raw);
  return s;
}

// Fingerprints in a family's filter (one per live key once the deferred
// delete checks are resolved).
template <typename DBType>
uint64_t FilterKeys(DBType* db,
                    ROCKSDB_NAMESPACE::ColumnFamilyHandle* cf = nullptr) {
  db->WaitForDeleteChecks();
  const cuckoo::LiveKeyFilter* filter = db->GetLiveKeyFilter(cf);
  return filter == nullptr ? 0 : filter->size();
}

template <typename DBType>
FilteredDBStats FilterStats(
    DBType* db, ROCKSDB_NAMESPACE::ColumnFamilyHandle* cf = nullptr) {
  FilteredDBStats s;
  EXPECT_TRUE(db->GetFilterStats(cf, &s).ok());
  return s;
}

// The value of a key as the DB holds it, bypassing the filter (a read at a
// snapshot is never answered by it).
template <typename DBType>
ROCKSDB_NAMESPACE::Status TruthGet(
    DBType* db, const std::string& key, std::string* value,
    ROCKSDB_NAMESPACE::ColumnFamilyHandle* cf = nullptr) {
  ROCKSDB_NAMESPACE::ReadOptions ro;
  ro.snapshot = db->GetSnapshot();
  ROCKSDB_NAMESPACE::Status s =
      db->Get(ro, cf == nullptr ? db->DefaultColumnFamily() : cf, key, value);
  db->ReleaseSnapshot(ro.snapshot);
  return s;
}

}  // namespace test
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_TESTS_LIVE_FILTERED_TXN_TEST_UTIL_H_
