// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredTransactionDB, a RocksDB TransactionDB with a live-key filter:
// include/rocksdb_cuckoo/filtered_transaction_db.h shows part of this file.
// Opens a DB in the directory given as argv[1] (default
// /tmp/rocksdb_cuckoo_example_filtered_transaction_db; wiped first), runs a
// read-modify-write transaction and a two-phase commit, reads, and prints
// the filter's figures. Links rocksdb_cuckoo::rocksdb_cuckoo.
#include <cstdio>
#include <memory>
#include <string>

#include "rocksdb/convenience.h"
#include "rocksdb/options.h"
#include "rocksdb/utilities/transaction.h"
#include "rocksdb/utilities/transaction_db.h"
#include "rocksdb_cuckoo/filtered_transaction_db.h"

int main(int argc, char** argv) {
  const std::string path =
      argc > 1 ? argv[1]
               : "/tmp/rocksdb_cuckoo_example_filtered_transaction_db";
  ROCKSDB_NAMESPACE::Options options;
  options.create_if_missing = true;
  ROCKSDB_NAMESPACE::DestroyDB(path, options).PermitUncheckedError();
  std::string value;

  rocksdb_cuckoo::FilteredDBOptions fopts;  // the default column family
  std::unique_ptr<rocksdb_cuckoo::FilteredTransactionDB> db;
  ROCKSDB_NAMESPACE::Status s = rocksdb_cuckoo::FilteredTransactionDB::Open(
      options, ROCKSDB_NAMESPACE::TransactionDBOptions(), path, fopts, &db);
  if (!s.ok()) {
    fprintf(stderr, "Open: %s\n", s.ToString().c_str());
    return 1;
  }
  // Open returned before the filter was built from the DB (background_open);
  // until then reads go to the DB. Wait for it here, to see the filter answer.
  db->WaitForFilterRebuilds();
  std::unique_ptr<ROCKSDB_NAMESPACE::Transaction> txn(
      db->BeginTransaction(ROCKSDB_NAMESPACE::WriteOptions()));
  s = txn->GetForUpdate(ROCKSDB_NAMESPACE::ReadOptions(), "counter", &value);
  // s.IsNotFound(): the key is locked, then the filter answers (no I/O)
  s = txn->Put("counter", "1");
  s = txn->Get(ROCKSDB_NAMESPACE::ReadOptions(), "counter", &value);
  // s.ok(), value "1": a key the transaction wrote is never ruled out
  s = txn->Commit();  // the filter learns "counter" with the commit
  const bool counted = s.ok();

  // Two-phase commit: prepared writes are not live until the commit (a
  // prepared transaction that a crash interrupts is recovered at Open:
  // GetTransactionByName, GetAllPreparedTransactions).
  txn.reset(db->BeginTransaction(ROCKSDB_NAMESPACE::WriteOptions()));
  s = txn->SetName("xid-1");
  s = txn->Delete("counter");
  s = txn->Put("other", "2");
  s = txn->Prepare();
  s = txn->Commit();
  const bool two_phase = s.ok();
  txn.reset();  // transactions go before the DB

  s = db->Get(ROCKSDB_NAMESPACE::ReadOptions(), "counter", &value);
  const bool deleted = s.IsNotFound();
  rocksdb_cuckoo::FilteredDBStats stats;  // bytes, bits/key, load, counters
  s = db->GetFilterStats(db->DefaultColumnFamily(), &stats);
  printf("%llu keys in the filter, %llu of %llu reads answered by it\n",
         static_cast<unsigned long long>(stats.num_keys),
         static_cast<unsigned long long>(stats.reads_absent),
         static_cast<unsigned long long>(stats.reads_checked));

  s = db->Close();
  db.reset();
  ROCKSDB_NAMESPACE::DestroyDB(path, options).PermitUncheckedError();
  const bool ok = s.ok() && counted && two_phase && deleted &&
                  stats.num_keys == 1 && stats.reads_absent >= 1;
  printf("filtered_transaction_db: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
