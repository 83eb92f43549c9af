// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredTransactionDB and FilteredOptimisticTransactionDB: RocksDB's
// TransactionDB (pessimistic, WRITE_COMMITTED) and OptimisticTransactionDB
// with the live-key filter of FilteredDB (filtered_db.h): a cuckoo filter of
// the live keys of each opted-in column family, kept up to date by every
// commit, so that reads of absent keys answer NotFound without descending
// into the memtables and SST files.
//
// Example (examples/filtered_transaction_db.cc):
//   rocksdb_cuckoo::FilteredDBOptions fopts;  // the default column family
//   std::unique_ptr<rocksdb_cuckoo::FilteredTransactionDB> db;
//   ROCKSDB_NAMESPACE::Status s = rocksdb_cuckoo::FilteredTransactionDB::Open(
//       options, ROCKSDB_NAMESPACE::TransactionDBOptions(), path, fopts, &db);
//   std::unique_ptr<ROCKSDB_NAMESPACE::Transaction> txn(
//       db->BeginTransaction(ROCKSDB_NAMESPACE::WriteOptions()));
//   s = txn->GetForUpdate(ROCKSDB_NAMESPACE::ReadOptions(), "counter", &value);
//   // s.IsNotFound(): the key is locked, then the filter answers (no I/O)
//   s = txn->Put("counter", "1");
//   s = txn->Commit();  // the filter learns "counter" with the commit
//
// Everything FilteredDB says about the filter (options, growth, snapshots,
// properties, statistics, what bypasses it, limitations) holds here; this
// file says what transactions add.
//
// Guarantee: no read misses a committed key. The filter is a superset of the
// committed live keys at every instant, and exact (one fingerprint per live
// key) once deferred checks settle (WaitForDeleteChecks).
//
// Reads that consult the filter: TransactionDB/OptimisticTransactionDB Get,
// MultiGet, GetEntity, GetMergeOperands and KeyMayExist (as FilteredDB);
// Transaction::Get, GetForUpdate, MultiGet, MultiGetForUpdate, and from
// RocksDB 9.3 GetEntity, GetEntityForUpdate and MultiGetEntity. A key the
// transaction itself wrote (any entry in its WriteBatchWithIndex, including
// a Delete or a Merge) is never answered from the filter: such reads go to
// RocksDB, which merges the batch with the DB. GetForUpdate first takes the
// key's lock (or, optimistic, records the key for validation) exactly as
// RocksDB does, and only then consults the filter, so it never returns an
// answer older than its lock. Reads with a ReadOptions::snapshot (e.g. the
// transaction's own snapshot), a timestamp or a read tier other than
// kReadAllTier bypass the filter and are exact as in RocksDB. Iterators
// (GetIterator, NewIterator) bypass it.
//
// Writes. A commit (Transaction::Commit, including the commit of a prepared
// transaction, and the non-transactional Put, Delete, SingleDelete, Merge,
// PutEntity and Write of the DB) updates the filter around the DB write as
// FilteredDB::Write(batch) does: the keys that become live are inserted
// before, the keys that stop being live are erased after it. Only the
// operations that reach the DB count: after Rollback, RollbackToSavePoint
// or a rolled back prepared transaction the filter is untouched, and the
// commit of a prepared transaction applies its commit-time batch and its
// batch. Prepare changes nothing (a prepared transaction's writes are not
// live). A commit that fails before its write (Busy or TryAgain from an
// optimistic validation, Expired, TxnNotPrepared) erases again what it
// inserted: it leaves the filter as it found it. Any other failed commit
// leaves the fingerprints it inserted (extra positives, never a false
// negative). Lock timeouts, Busy and deadlocks of pessimistic transactions
// happen in Put/GetForUpdate, before the commit, and never touch the filter.
//
// Lock order. RocksDB's key locks come first, the filter's locks second:
// a pessimistic transaction holds its key locks when Commit takes the
// filter's writer locks, and nothing waits for a key lock while holding a
// filter lock. The non-transactional writes of FilteredTransactionDB (Put,
// Delete, SingleDelete, Merge, PutEntity, Write) therefore run as RocksDB
// runs them: an internal transaction locks the keys (a batch's keys in
// sorted order, as PessimisticTransactionDB::Write does), then the write goes
// through the filter. So a FilteredTransactionDB has no deadlock, and no
// lock wait, that a plain TransactionDB with the same workload does not
// have. Optimistic transactions hold no key locks: RocksDB's validation
// mutexes are taken inside Commit, after the filter's locks, and released
// before Commit returns; they are never held while waiting for a filter
// lock. Write(batch) with TransactionDBWriteOptimizations::
// skip_concurrency_control (and TransactionDBOptions::
// skip_concurrency_control) takes no key locks, as in RocksDB.
//
// Cost. A commit costs what FilteredDB::Write of its batch costs (see
// filtered_db.h): a Delete of a key that FilteredDBOptions::recent_keys does
// not know costs a point read of the DB (deferred, on a background thread),
// about a third of a plain commit of five operations. Commits that delete
// keys written long before run at about half a plain TransactionDB's rate;
// recent_keys larger than the keys written between a key's Put and its
// Delete, or unchecked_delete_ratio, remove the read (docs/live_filter.md,
// "Transactions").
//
// Write policies: WRITE_COMMITTED only. Open refuses WRITE_PREPARED and
// WRITE_UNPREPARED with Status::NotSupported naming the policy (they write
// uncommitted data into the DB, which the filter's protocol does not model).
//
// Two-phase commit and recovery. Prepared transactions recovered at Open
// (GetTransactionByName, GetAllPreparedTransactions) are returned wrapped,
// one object per transaction (repeated calls return the same object); their
// Commit updates the filter, their Rollback does not. The filter itself is
// built at Open from the DB (or loaded from a snapshot that matches the DB
// exactly, see FilteredDB), which holds the committed writes and not the
// prepared ones.
//
// Transactions. The Transaction objects returned here wrap RocksDB's; use
// them only with the DB that created them (BeginTransaction's old_txn must
// come from the same DB). Delete every transaction before the DB, as with
// RocksDB. Transaction::GetState() is refreshed by each call on the
// transaction (a state changed by another thread, e.g. LOCKS_STOLEN after an
// expiration, shows from the next call on).
//
// Column families: as FilteredDB (only families opted in at Open are
// filtered). Handles of filtered families must be destroyed through
// DestroyColumnFamilyHandle. FilteredTransactionDB::Write(batch) locks the
// keys of each column family through a handle it knows: the default family,
// a family passed to Open or created through this object; a batch that
// writes to another family (its handle destroyed) returns InvalidArgument.
// DeleteRange is refused with NotSupported, as RocksDB's TransactionDB does;
// a DeleteRange in a batch written with skip_concurrency_control is
// filtered exactly (FilteredDB's range protocol).
//
// Every write to a filtered column family must go through this object or its
// transactions (not GetRootDB(), not a second instance), as with FilteredDB.
#ifndef ROCKSDB_CUCKOO_FILTERED_TRANSACTION_DB_H_
#define ROCKSDB_CUCKOO_FILTERED_TRANSACTION_DB_H_

#include <memory>
#include <string>
#include <vector>

#include "rocksdb/utilities/optimistic_transaction_db.h"
#include "rocksdb/utilities/transaction_db.h"
#include "rocksdb/version.h"
#include "rocksdb_cuckoo/filtered_db.h"

namespace rocksdb_cuckoo {

class FilteredTransactionDB : public ROCKSDB_NAMESPACE::TransactionDB {
 public:
  // Opens the default column family only (as TransactionDB::Open).
  static ROCKSDB_NAMESPACE::Status Open(
      const ROCKSDB_NAMESPACE::Options& options,
      const ROCKSDB_NAMESPACE::TransactionDBOptions& txn_db_options,
      const std::string& name, const FilteredDBOptions& filtered_options,
      std::unique_ptr<FilteredTransactionDB>* db);
  // Opens the given column families; the handles are owned by the caller
  // and must be destroyed (DestroyColumnFamilyHandle) before the DB. The
  // filters are loaded or built as FilteredDB::Open says.
  static ROCKSDB_NAMESPACE::Status Open(
      const ROCKSDB_NAMESPACE::DBOptions& db_options,
      const ROCKSDB_NAMESPACE::TransactionDBOptions& txn_db_options,
      const std::string& name,
      const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor>&
          column_families,
      std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*>* handles,
      const FilteredDBOptions& filtered_options,
      std::unique_ptr<FilteredTransactionDB>* db);

  // As FilteredDB (see filtered_db.h).
  virtual bool HasFilter(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family) const = 0;
  virtual ROCKSDB_NAMESPACE::Status GetFilterStats(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family,
      FilteredDBStats* stats) const = 0;
  virtual const cuckoo::LiveKeyFilter* GetLiveKeyFilter(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family) const = 0;
  virtual ROCKSDB_NAMESPACE::Status PersistFilterSnapshots() = 0;
  virtual ROCKSDB_NAMESPACE::Status RebuildFilter(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family) = 0;
  virtual void WaitForFilterRebuilds() = 0;
  virtual void WaitForDeleteChecks() = 0;

 protected:
  explicit FilteredTransactionDB(ROCKSDB_NAMESPACE::DB* db)
      : TransactionDB(db) {}
};

class FilteredOptimisticTransactionDB
    : public ROCKSDB_NAMESPACE::OptimisticTransactionDB {
 public:
  // Opens the default column family only.
  static ROCKSDB_NAMESPACE::Status Open(
      const ROCKSDB_NAMESPACE::Options& options,
      const ROCKSDB_NAMESPACE::OptimisticTransactionDBOptions& occ_options,
      const std::string& name, const FilteredDBOptions& filtered_options,
      std::unique_ptr<FilteredOptimisticTransactionDB>* db);
  // Opens the given column families (handles as FilteredTransactionDB).
  static ROCKSDB_NAMESPACE::Status Open(
      const ROCKSDB_NAMESPACE::DBOptions& db_options,
      const ROCKSDB_NAMESPACE::OptimisticTransactionDBOptions& occ_options,
      const std::string& name,
      const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor>&
          column_families,
      std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*>* handles,
      const FilteredDBOptions& filtered_options,
      std::unique_ptr<FilteredOptimisticTransactionDB>* db);

  // As FilteredDB (see filtered_db.h).
  virtual bool HasFilter(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family) const = 0;
  virtual ROCKSDB_NAMESPACE::Status GetFilterStats(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family,
      FilteredDBStats* stats) const = 0;
  virtual const cuckoo::LiveKeyFilter* GetLiveKeyFilter(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family) const = 0;
  virtual ROCKSDB_NAMESPACE::Status PersistFilterSnapshots() = 0;
  virtual ROCKSDB_NAMESPACE::Status RebuildFilter(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family) = 0;
  virtual void WaitForFilterRebuilds() = 0;
  virtual void WaitForDeleteChecks() = 0;

 protected:
  // RocksDB 11.0 takes the base DB as a std::unique_ptr.
#if ROCKSDB_MAJOR >= 11
  explicit FilteredOptimisticTransactionDB(ROCKSDB_NAMESPACE::DB* db)
      : OptimisticTransactionDB(std::unique_ptr<ROCKSDB_NAMESPACE::DB>(db)) {}
#else
  explicit FilteredOptimisticTransactionDB(ROCKSDB_NAMESPACE::DB* db)
      : OptimisticTransactionDB(db) {}
#endif
};

}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_FILTERED_TRANSACTION_DB_H_
