// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Transactions over FilteredDB's engine (internal): FilteredTransaction
// wraps one RocksDB Transaction (pessimistic WRITE_COMMITTED or optimistic)
// of the TransactionDB / OptimisticTransactionDB that a FilteredDBImpl (the
// engine) sits on. Contract in
// include/rocksdb_cuckoo/filtered_transaction_db.h.
//
// Every Transaction virtual of RocksDB 7.8 to 11.8 is forwarded to the
// wrapped transaction (guards below name the release that added each). On
// top of that:
//   reads   Get, GetForUpdate, MultiGet, MultiGetForUpdate, GetEntity,
//           GetEntityForUpdate, MultiGetEntity answer NotFound for a key of a
//           filtered family when the transaction's batch has no entry for it
//           and the engine's filter rules it out (KnownAbsentForTransaction:
//           plain reads of the latest state only). The ...ForUpdate reads
//           first lock (or, optimistic, track) the key through RocksDB
//           (GetForUpdate without a value), then read.
//   Commit  the operations the commit applies (the commit-time batch of a
//           prepared transaction, then its batch) are planned and the filter
//           updated around the RocksDB commit through the engine's one
//           entry point, FilteredDBImpl::WriteForTransaction; a commit that
//           fails before writing undoes its inserts (CommitNotWritten).
//   the rest (Prepare, Rollback, savepoints, writes into the batch) touches
//           no filter: only a commit changes what is live.
// Lock order: the RocksDB key locks a pessimistic transaction holds are
// taken before its Commit enters the engine, which takes the filter's locks.
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_FILTERED_TXN_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_FILTERED_TXN_H_

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "rocksdb/utilities/transaction.h"
#include "rocksdb/utilities/write_batch_with_index.h"
#include "rocksdb/version.h"
#include "write_plan.h"

// The Transaction interface by RocksDB release (checked against every
// release tag from 7.8.3 to 11.8.1; releases without a tag in between follow
// the next tag).
#define CUCKOO_ROCKSDB_AT_LEAST(major, minor) \
  (ROCKSDB_MAJOR > (major) ||                 \
   (ROCKSDB_MAJOR == (major) && ROCKSDB_MINOR >= (minor)))
// 8.7: CollapseKey.
#define CUCKOO_TXN_COLLAPSE_KEY CUCKOO_ROCKSDB_AT_LEAST(8, 7)
// 9.1: GetForUpdate(options, key, PinnableSlice*) (default family).
#define CUCKOO_TXN_GET_FOR_UPDATE_PINNABLE_DEFAULT CUCKOO_ROCKSDB_AT_LEAST(9, 1)
// 9.3: wide columns (GetEntity, MultiGetEntity, PutEntity,
// PutEntityUntracked, GetNumPutEntities).
#define CUCKOO_TXN_ENTITY CUCKOO_ROCKSDB_AT_LEAST(9, 3)
// 9.4: GetEntityForUpdate.
#define CUCKOO_TXN_ENTITY_FOR_UPDATE CUCKOO_ROCKSDB_AT_LEAST(9, 4)
// 9.8: GetAttributeGroupIterator; 9.9: GetCoalescingIterator.
#define CUCKOO_TXN_ATTRIBUTE_GROUP_ITERATOR CUCKOO_ROCKSDB_AT_LEAST(9, 8)
#define CUCKOO_TXN_COALESCING_ITERATOR CUCKOO_ROCKSDB_AT_LEAST(9, 9)
// 9.10 and 9.11 only: GetCommitBypassMemTable.
#define CUCKOO_TXN_COMMIT_BYPASS_MEMTABLE \
  (CUCKOO_ROCKSDB_AT_LEAST(9, 10) && ROCKSDB_MAJOR < 10)
// 10.7: SetDeadlockTimeout.
#define CUCKOO_TXN_DEADLOCK_TIMEOUT CUCKOO_ROCKSDB_AT_LEAST(10, 7)

namespace rocksdb_cuckoo {
namespace live {

class FilteredDBImpl;
class FilteredTransaction;

// The wrappers of one pessimistic DB by RocksDB transaction, so that
// GetTransactionByName and GetAllPreparedTransactions return the object the
// application holds (and one object per recovered transaction).
class TxnRegistry {
 public:
  void Add(ROCKSDB_NAMESPACE::Transaction* inner, FilteredTransaction* outer);
  void Remove(ROCKSDB_NAMESPACE::Transaction* inner);
  FilteredTransaction* Find(ROCKSDB_NAMESPACE::Transaction* inner);

 private:
  std::mutex mu_;
  std::unordered_map<ROCKSDB_NAMESPACE::Transaction*, FilteredTransaction*>
      map_;
};

// What a FilteredTransaction needs from its DB (owned by the DB).
struct TxnContext {
  FilteredDBImpl* engine = nullptr;
  bool optimistic = false;
  TxnRegistry* registry = nullptr;  // pessimistic only
};

// True for the statuses of a commit that wrote nothing (the validation of
// an optimistic transaction failed, the transaction expired, was not
// prepared): WriteForTransaction then undoes its filter inserts.
bool CommitNotWritten(const ROCKSDB_NAMESPACE::Status& s);

// Appends the filter's effect record to a transaction's batch, or leaves it
// out when the batch cannot take it (TransactionOptions::
// max_write_batch_size: Transaction::PutLogData asserts that it fits). A
// write without its record is one a replay finds uncovered: it falls back
// to a scan, as for a plain batch at its max_bytes (effect_log.h).
void AppendEffectRecord(ROCKSDB_NAMESPACE::Transaction* txn,
                        const ROCKSDB_NAMESPACE::Slice& record);

// Collects the operations of a transaction's batches (BatchCollector, with
// the two-phase-commit markers of a prepared batch ignored).
class CommitCollector : public BatchCollector {
 public:
  using BatchCollector::BatchCollector;
  Status MarkBeginPrepare(bool) override { return Status::OK(); }
  Status MarkEndPrepare(const Slice&) override { return Status::OK(); }
  Status MarkRollback(const Slice&) override { return Status::OK(); }
  Status MarkCommit(const Slice&) override { return Status::OK(); }
  Status MarkCommitWithTimestamp(const Slice&, const Slice&) override {
    return Status::OK();
  }
};

class FilteredTransaction final : public ROCKSDB_NAMESPACE::Transaction {
 public:
  using ColumnFamilyHandle = ROCKSDB_NAMESPACE::ColumnFamilyHandle;
  using Iterator = ROCKSDB_NAMESPACE::Iterator;
  using PinnableSlice = ROCKSDB_NAMESPACE::PinnableSlice;
  using ReadOptions = ROCKSDB_NAMESPACE::ReadOptions;
  using Slice = ROCKSDB_NAMESPACE::Slice;
  using SliceParts = ROCKSDB_NAMESPACE::SliceParts;
  using Snapshot = ROCKSDB_NAMESPACE::Snapshot;
  using Status = ROCKSDB_NAMESPACE::Status;
  using Transaction = ROCKSDB_NAMESPACE::Transaction;
  using TransactionName = ROCKSDB_NAMESPACE::TransactionName;
  using WriteBatch = ROCKSDB_NAMESPACE::WriteBatch;
  using WriteOptions = ROCKSDB_NAMESPACE::WriteOptions;

  // Takes ownership of `inner`; registers in ctx->registry if set.
  FilteredTransaction(const TxnContext* ctx, Transaction* inner);
  ~FilteredTransaction() override;
  FilteredTransaction(const FilteredTransaction&) = delete;
  FilteredTransaction& operator=(const FilteredTransaction&) = delete;

  Transaction* inner() const { return inner_; }
  // After BeginTransaction(old_txn) reinitialized inner (the same object).
  void Reinitialized();

  // ---------------------------------------------------------- snapshots
  void SetSnapshot() override { inner_->SetSnapshot(); }
  void SetSnapshotOnNextOperation(
      std::shared_ptr<ROCKSDB_NAMESPACE::TransactionNotifier> notifier =
          nullptr) override {
    inner_->SetSnapshotOnNextOperation(notifier);
  }
  const Snapshot* GetSnapshot() const override { return inner_->GetSnapshot(); }
  std::shared_ptr<const Snapshot> GetTimestampedSnapshot() const override {
    return inner_->GetTimestampedSnapshot();
  }
  void ClearSnapshot() override { inner_->ClearSnapshot(); }

  // ---------------------------------------------------------- life cycle
  Status Prepare() override;
  Status Commit() override;
  Status Rollback() override;
  void SetSavePoint() override { inner_->SetSavePoint(); }
  Status RollbackToSavePoint() override;
  Status PopSavePoint() override { return inner_->PopSavePoint(); }

  // ---------------------------------------------------------- reads
  Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family,
             const Slice& key, std::string* value) override;
  Status Get(const ReadOptions& options, ColumnFamilyHandle* column_family,
             const Slice& key, PinnableSlice* pinnable_val) override;
  Status Get(const ReadOptions& options, const Slice& key,
             std::string* value) override;
  Status Get(const ReadOptions& options, const Slice& key,
             PinnableSlice* pinnable_val) override;
#if CUCKOO_TXN_ENTITY
  Status GetEntity(const ReadOptions& options,
                   ColumnFamilyHandle* column_family, const Slice& key,
                   ROCKSDB_NAMESPACE::PinnableWideColumns* columns) override;
#endif
  std::vector<Status> MultiGet(
      const ReadOptions& options,
      const std::vector<ColumnFamilyHandle*>& column_family,
      const std::vector<Slice>& keys,
      std::vector<std::string>* values) override;
  std::vector<Status> MultiGet(const ReadOptions& options,
                               const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override;
  void MultiGet(const ReadOptions& options, ColumnFamilyHandle* column_family,
                const size_t num_keys, const Slice* keys, PinnableSlice* values,
                Status* statuses, const bool sorted_input = false) override;
#if CUCKOO_TXN_ENTITY
  void MultiGetEntity(const ReadOptions& options,
                      ColumnFamilyHandle* column_family, size_t num_keys,
                      const Slice* keys,
                      ROCKSDB_NAMESPACE::PinnableWideColumns* results,
                      Status* statuses, bool sorted_input = false) override;
#endif
  Status GetForUpdate(const ReadOptions& options,
                      ColumnFamilyHandle* column_family, const Slice& key,
                      std::string* value, bool exclusive = true,
                      const bool do_validate = true) override;
  Status GetForUpdate(const ReadOptions& options,
                      ColumnFamilyHandle* column_family, const Slice& key,
                      PinnableSlice* pinnable_val, bool exclusive = true,
                      const bool do_validate = true) override;
  Status GetRangeLock(ColumnFamilyHandle* column_family,
                      const ROCKSDB_NAMESPACE::Endpoint& start,
                      const ROCKSDB_NAMESPACE::Endpoint& end) override {
    return inner_->GetRangeLock(column_family, start, end);
  }
  Status GetForUpdate(const ReadOptions& options, const Slice& key,
                      std::string* value, bool exclusive = true,
                      const bool do_validate = true) override;
#if CUCKOO_TXN_GET_FOR_UPDATE_PINNABLE_DEFAULT
  Status GetForUpdate(const ReadOptions& options, const Slice& key,
                      PinnableSlice* pinnable_val, bool exclusive = true,
                      const bool do_validate = true) override;
#endif
#if CUCKOO_TXN_ENTITY_FOR_UPDATE
  Status GetEntityForUpdate(const ReadOptions& read_options,
                            ColumnFamilyHandle* column_family, const Slice& key,
                            ROCKSDB_NAMESPACE::PinnableWideColumns* columns,
                            bool exclusive = true,
                            bool do_validate = true) override;
#endif
  std::vector<Status> MultiGetForUpdate(
      const ReadOptions& options,
      const std::vector<ColumnFamilyHandle*>& column_family,
      const std::vector<Slice>& keys,
      std::vector<std::string>* values) override;
  std::vector<Status> MultiGetForUpdate(
      const ReadOptions& options, const std::vector<Slice>& keys,
      std::vector<std::string>* values) override;
  Iterator* GetIterator(const ReadOptions& read_options) override {
    return inner_->GetIterator(read_options);
  }
  Iterator* GetIterator(const ReadOptions& read_options,
                        ColumnFamilyHandle* column_family) override {
    return inner_->GetIterator(read_options, column_family);
  }
#if CUCKOO_TXN_COALESCING_ITERATOR
  std::unique_ptr<Iterator> GetCoalescingIterator(
      const ReadOptions& read_options,
      const std::vector<ColumnFamilyHandle*>& column_families) override {
    return inner_->GetCoalescingIterator(read_options, column_families);
  }
#endif
#if CUCKOO_TXN_ATTRIBUTE_GROUP_ITERATOR
  std::unique_ptr<ROCKSDB_NAMESPACE::AttributeGroupIterator>
  GetAttributeGroupIterator(
      const ReadOptions& read_options,
      const std::vector<ColumnFamilyHandle*>& column_families) override {
    return inner_->GetAttributeGroupIterator(read_options, column_families);
  }
#endif

  // ---------------------------------------------------------- writes
  // Into the transaction's batch only (the filter changes at Commit).
  Status Put(ColumnFamilyHandle* column_family, const Slice& key,
             const Slice& value, const bool assume_tracked = false) override {
    return inner_->Put(column_family, key, value, assume_tracked);
  }
  Status Put(const Slice& key, const Slice& value) override {
    return inner_->Put(key, value);
  }
  Status Put(ColumnFamilyHandle* column_family, const SliceParts& key,
             const SliceParts& value,
             const bool assume_tracked = false) override {
    return inner_->Put(column_family, key, value, assume_tracked);
  }
  Status Put(const SliceParts& key, const SliceParts& value) override {
    return inner_->Put(key, value);
  }
#if CUCKOO_TXN_ENTITY
  Status PutEntity(ColumnFamilyHandle* column_family, const Slice& key,
                   const ROCKSDB_NAMESPACE::WideColumns& columns,
                   bool assume_tracked = false) override {
    return inner_->PutEntity(column_family, key, columns, assume_tracked);
  }
#endif
  Status Merge(ColumnFamilyHandle* column_family, const Slice& key,
               const Slice& value, const bool assume_tracked = false) override {
    return inner_->Merge(column_family, key, value, assume_tracked);
  }
  Status Merge(const Slice& key, const Slice& value) override {
    return inner_->Merge(key, value);
  }
  Status Delete(ColumnFamilyHandle* column_family, const Slice& key,
                const bool assume_tracked = false) override {
    return inner_->Delete(column_family, key, assume_tracked);
  }
  Status Delete(const Slice& key) override { return inner_->Delete(key); }
  Status Delete(ColumnFamilyHandle* column_family, const SliceParts& key,
                const bool assume_tracked = false) override {
    return inner_->Delete(column_family, key, assume_tracked);
  }
  Status Delete(const SliceParts& key) override { return inner_->Delete(key); }
  Status SingleDelete(ColumnFamilyHandle* column_family, const Slice& key,
                      const bool assume_tracked = false) override {
    return inner_->SingleDelete(column_family, key, assume_tracked);
  }
  Status SingleDelete(const Slice& key) override {
    return inner_->SingleDelete(key);
  }
  Status SingleDelete(ColumnFamilyHandle* column_family, const SliceParts& key,
                      const bool assume_tracked = false) override {
    return inner_->SingleDelete(column_family, key, assume_tracked);
  }
  Status SingleDelete(const SliceParts& key) override {
    return inner_->SingleDelete(key);
  }
  Status PutUntracked(ColumnFamilyHandle* column_family, const Slice& key,
                      const Slice& value) override {
    return inner_->PutUntracked(column_family, key, value);
  }
  Status PutUntracked(const Slice& key, const Slice& value) override {
    return inner_->PutUntracked(key, value);
  }
  Status PutUntracked(ColumnFamilyHandle* column_family, const SliceParts& key,
                      const SliceParts& value) override {
    return inner_->PutUntracked(column_family, key, value);
  }
  Status PutUntracked(const SliceParts& key, const SliceParts& value) override {
    return inner_->PutUntracked(key, value);
  }
#if CUCKOO_TXN_ENTITY
  Status PutEntityUntracked(
      ColumnFamilyHandle* column_family, const Slice& key,
      const ROCKSDB_NAMESPACE::WideColumns& columns) override {
    return inner_->PutEntityUntracked(column_family, key, columns);
  }
#endif
  Status MergeUntracked(ColumnFamilyHandle* column_family, const Slice& key,
                        const Slice& value) override {
    return inner_->MergeUntracked(column_family, key, value);
  }
  Status MergeUntracked(const Slice& key, const Slice& value) override {
    return inner_->MergeUntracked(key, value);
  }
  Status DeleteUntracked(ColumnFamilyHandle* column_family,
                         const Slice& key) override {
    return inner_->DeleteUntracked(column_family, key);
  }
  Status DeleteUntracked(const Slice& key) override {
    return inner_->DeleteUntracked(key);
  }
  Status DeleteUntracked(ColumnFamilyHandle* column_family,
                         const SliceParts& key) override {
    return inner_->DeleteUntracked(column_family, key);
  }
  Status DeleteUntracked(const SliceParts& key) override {
    return inner_->DeleteUntracked(key);
  }
  Status SingleDeleteUntracked(ColumnFamilyHandle* column_family,
                               const Slice& key) override {
    return inner_->SingleDeleteUntracked(column_family, key);
  }
  Status SingleDeleteUntracked(const Slice& key) override {
    return inner_->SingleDeleteUntracked(key);
  }
#if CUCKOO_TXN_COLLAPSE_KEY
  Status CollapseKey(const ReadOptions& options, const Slice& key,
                     ColumnFamilyHandle* column_family = nullptr) override {
    return inner_->CollapseKey(options, key, column_family);
  }
#endif
  void PutLogData(const Slice& blob) override { inner_->PutLogData(blob); }
  void DisableIndexing() override { inner_->DisableIndexing(); }
  void EnableIndexing() override { inner_->EnableIndexing(); }

  // ---------------------------------------------------------- properties
  uint64_t GetNumKeys() const override { return inner_->GetNumKeys(); }
  uint64_t GetNumPuts() const override { return inner_->GetNumPuts(); }
#if CUCKOO_TXN_ENTITY
  uint64_t GetNumPutEntities() const override {
    return inner_->GetNumPutEntities();
  }
#endif
  uint64_t GetNumDeletes() const override { return inner_->GetNumDeletes(); }
  uint64_t GetNumMerges() const override { return inner_->GetNumMerges(); }
  uint64_t GetElapsedTime() const override { return inner_->GetElapsedTime(); }
  ROCKSDB_NAMESPACE::WriteBatchWithIndex* GetWriteBatch() override {
    return inner_->GetWriteBatch();
  }
  void SetLockTimeout(int64_t timeout_ms) override {
    inner_->SetLockTimeout(timeout_ms);
  }
#if CUCKOO_TXN_DEADLOCK_TIMEOUT
  void SetDeadlockTimeout(int64_t timeout_ms) override {
    inner_->SetDeadlockTimeout(timeout_ms);
  }
#endif
  WriteOptions* GetWriteOptions() override { return inner_->GetWriteOptions(); }
  void SetWriteOptions(const WriteOptions& write_options) override {
    inner_->SetWriteOptions(write_options);
  }
  void UndoGetForUpdate(ColumnFamilyHandle* column_family,
                        const Slice& key) override {
    inner_->UndoGetForUpdate(column_family, key);
  }
  void UndoGetForUpdate(const Slice& key) override {
    inner_->UndoGetForUpdate(key);
  }
  Status RebuildFromWriteBatch(WriteBatch* src_batch) override {
    return inner_->RebuildFromWriteBatch(src_batch);
  }
  WriteBatch* GetCommitTimeWriteBatch() override {
    return inner_->GetCommitTimeWriteBatch();
  }
  void SetLogNumber(uint64_t log) override {
    inner_->SetLogNumber(log);
    log_number_ = log;
  }
  uint64_t GetLogNumber() const override { return inner_->GetLogNumber(); }
  Status SetName(const TransactionName& name) override;
  TransactionName GetName() const override { return inner_->GetName(); }
  ROCKSDB_NAMESPACE::TransactionID GetID() const override {
    return inner_->GetID();
  }
  bool IsDeadlockDetect() const override { return inner_->IsDeadlockDetect(); }
  std::vector<ROCKSDB_NAMESPACE::TransactionID> GetWaitingTxns(
      uint32_t* column_family_id, std::string* key) const override {
    return inner_->GetWaitingTxns(column_family_id, key);
  }
  Status SetReadTimestampForValidation(
      ROCKSDB_NAMESPACE::TxnTimestamp ts) override {
    return inner_->SetReadTimestampForValidation(ts);
  }
  Status SetCommitTimestamp(ROCKSDB_NAMESPACE::TxnTimestamp ts) override {
    return inner_->SetCommitTimestamp(ts);
  }
  ROCKSDB_NAMESPACE::TxnTimestamp GetCommitTimestamp() const override {
    return inner_->GetCommitTimestamp();
  }
#if CUCKOO_TXN_COMMIT_BYPASS_MEMTABLE
  bool GetCommitBypassMemTable() const override {
    return inner_->GetCommitBypassMemTable();
  }
#endif

 private:
  // True if the read may be answered from the filter: a plain read of a
  // filtered family (FilteredDBImpl::ReadState), whatever the key.
  bool Filterable(const ReadOptions& options,
                  ColumnFamilyHandle* column_family) const;
  // True if the transaction's batch holds an entry (of any type) for the
  // key: RocksDB must merge it with the DB.
  bool InBatch(ColumnFamilyHandle* column_family, const Slice& key);
  // True if the read may answer NotFound without RocksDB: no entry in the
  // batch and the filter rules the key out (counts the read).
  bool KnownAbsent(const ReadOptions& options,
                   ColumnFamilyHandle* column_family, const Slice& key,
                   bool multiget);
  // Locks (or tracks) the key as GetForUpdate does, without reading.
  Status LockForRead(const ReadOptions& options,
                     ColumnFamilyHandle* column_family, const Slice& key,
                     bool exclusive, bool do_validate);
  // InvalidArgument if `batch` holds a LogData blob reserved for the
  // filter's records (effect_log::kMagic); OK for null.
  Status CheckLogData(WriteBatch* batch);
  // Points the keys of `ops` (slices into the transaction's batches) at
  // copies in key_store_.
  void CopyKeys(std::vector<Op>* ops);
  // The Transaction base members that its non-virtual accessors read
  // (GetState, GetId), copied from the wrapped transaction.
  void SyncState();

  const TxnContext* const ctx_;
  Transaction* const inner_;
  // Commit's operations and the copies of their keys (reused: see Commit).
  std::vector<Op> commit_ops_;
  std::string key_store_;
};

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_FILTERED_TXN_H_
