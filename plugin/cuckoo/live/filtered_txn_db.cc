// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredTransactionDB and FilteredOptimisticTransactionDB (contract in
// include/rocksdb_cuckoo/filtered_transaction_db.h). Each is a StackableDB
// over a FilteredDBImpl (the engine: filters, reads, the write protocol),
// itself over RocksDB's TransactionDB or OptimisticTransactionDB:
//
//   Filtered[Optimistic]TransactionDB  transactions (FilteredTransaction),
//        |                             non-transactional writes (pessimistic)
//   FilteredDBImpl                     reads, filters, WriteForTransaction
//        |
//   [Optimistic]TransactionDB          key locks / validation, commits
//        |
//   DBImpl
//
// Reads and everything else reach the engine by StackableDB's forwarding.
// Non-transactional writes of the optimistic DB go to the engine as
// FilteredDB writes (RocksDB takes no lock for them either). Those of the
// pessimistic DB first lock their keys through an internal RocksDB
// transaction, as PessimisticTransactionDB does, and only then enter the
// engine: key locks before filter locks (see filtered_txn.h).
#include <map>
#include <set>
#include <type_traits>
#include <unordered_map>

#include "filtered_db_impl.h"
#include "filtered_txn.h"
#include "rocksdb_cuckoo/filtered_transaction_db.h"

namespace rocksdb_cuckoo {
namespace live {
namespace {

using ROCKSDB_NAMESPACE::ColumnFamilyDescriptor;
using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::ColumnFamilyOptions;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::DBOptions;
using ROCKSDB_NAMESPACE::DeadlockPath;
using ROCKSDB_NAMESPACE::KeyLockInfo;
using ROCKSDB_NAMESPACE::OptimisticTransactionDB;
using ROCKSDB_NAMESPACE::OptimisticTransactionDBOptions;
using ROCKSDB_NAMESPACE::OptimisticTransactionOptions;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Snapshot;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::Transaction;
using ROCKSDB_NAMESPACE::TransactionDB;
using ROCKSDB_NAMESPACE::TransactionDBOptions;
using ROCKSDB_NAMESPACE::TransactionDBWriteOptimizations;
using ROCKSDB_NAMESPACE::TransactionName;
using ROCKSDB_NAMESPACE::TransactionOptions;
using ROCKSDB_NAMESPACE::TxnTimestamp;
using ROCKSDB_NAMESPACE::WriteBatch;
using ROCKSDB_NAMESPACE::WriteOptions;

// The FilteredDB extras of both wrappers, answered by the engine (the
// StackableDB's db_, which owns the RocksDB transaction DB).
template <typename Base>
class WithEngine : public Base {
 public:
  explicit WithEngine(FilteredDBImpl* engine) : Base(engine), engine_(engine) {}

  bool HasFilter(ColumnFamilyHandle* cf) const override {
    return engine_->HasFilter(cf);
  }
  Status GetFilterStats(ColumnFamilyHandle* cf,
                        FilteredDBStats* stats) const override {
    return engine_->GetFilterStats(cf, stats);
  }
  const cuckoo::LiveKeyFilter* GetLiveKeyFilter(
      ColumnFamilyHandle* cf) const override {
    return engine_->GetLiveKeyFilter(cf);
  }
  Status PersistFilterSnapshots() override {
    return engine_->PersistFilterSnapshots();
  }
  Status RebuildFilter(ColumnFamilyHandle* cf) override {
    return engine_->RebuildFilter(cf);
  }
  void WaitForFilterRebuilds() override { engine_->WaitForFilterRebuilds(); }
  void WaitForDeleteChecks() override { engine_->WaitForDeleteChecks(); }
  // Not forwarded by RocksDB 7.8's StackableDB.
  Status Resume() override { return engine_->Resume(); }

 protected:
  // The filtered, not dropped family of a handle, or null.
  CfState* StateOf(ColumnFamilyHandle* cf) const {
    const std::vector<CfState*>& by_id = *engine_->FamiliesById();
    const uint32_t id = cf == nullptr ? 0 : cf->GetID();
    CfState* s = id < by_id.size() ? by_id[id] : nullptr;
    return s == nullptr || s->dropped.load(std::memory_order_acquire) ? nullptr
                                                                      : s;
  }

  FilteredDBImpl* const engine_;
};

// Column family handles by id, for the key locks of Write(batch): a batch
// names its families by id, and RocksDB locks keys through handles.
class HandleMap {
 public:
  void Add(ColumnFamilyHandle* h) {
    if (h == nullptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    map_[h->GetID()] = h;
  }
  void Remove(ColumnFamilyHandle* h) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(h->GetID());
    if (it != map_.end() && it->second == h) map_.erase(it);
  }
  ColumnFamilyHandle* Find(uint32_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(id);
    return it == map_.end() ? nullptr : it->second;
  }

 private:
  std::mutex mu_;
  std::unordered_map<uint32_t, ColumnFamilyHandle*> map_;
};

// The keys of a batch to lock, per column family, in the order
// PessimisticTransaction::LockBatch locks them (so that concurrent batches
// cannot deadlock with each other). A batch operation RocksDB's
// transactions do not lock (DeleteRange, ...) fails the iteration, as it
// makes TransactionDB::Write fail.
class LockKeys : public WriteBatch::Handler {
 public:
  Status PutCF(uint32_t cf, const Slice& key, const Slice&) override {
    return Add(cf, key);
  }
  Status PutEntityCF(uint32_t cf, const Slice& key, const Slice&) override {
    return Add(cf, key);
  }
  Status MergeCF(uint32_t cf, const Slice& key, const Slice&) override {
    return Add(cf, key);
  }
  Status DeleteCF(uint32_t cf, const Slice& key) override {
    return Add(cf, key);
  }
  Status SingleDeleteCF(uint32_t cf, const Slice& key) override {
    return Add(cf, key);
  }
  void LogData(const Slice&) override {}

  std::map<uint32_t, std::set<std::string>> keys;

 private:
  Status Add(uint32_t cf, const Slice& key) {
    keys[cf].insert(key.ToString());
    return Status::OK();
  }
};

class FilteredTxnDBImpl final : public WithEngine<FilteredTransactionDB> {
 public:
  FilteredTxnDBImpl(FilteredDBImpl* engine, TransactionDB* txn_db,
                    const TransactionDBOptions& txn_db_options,
                    const std::vector<ColumnFamilyHandle*>& handles)
      : WithEngine(engine),
        txn_db_(txn_db),
        default_lock_timeout_(txn_db_options.default_lock_timeout),
        skip_concurrency_control_(txn_db_options.skip_concurrency_control) {
    ctx_.engine = engine;
    ctx_.optimistic = false;
    ctx_.registry = &registry_;
    for (ColumnFamilyHandle* h : handles) handles_.Add(h);
  }

  // ---------------------------------------------------------- transactions
  Transaction* BeginTransaction(const WriteOptions& wo,
                                const TransactionOptions& txn_options,
                                Transaction* old_txn) override {
    if (old_txn != nullptr) {
      // RocksDB reinitializes the same object in place.
      auto* old = static_cast<FilteredTransaction*>(old_txn);
      txn_db_->BeginTransaction(wo, txn_options, old->inner());
      old->Reinitialized();
      return old;
    }
    Transaction* inner = txn_db_->BeginTransaction(wo, txn_options, nullptr);
    return inner == nullptr ? nullptr : new FilteredTransaction(&ctx_, inner);
  }
  Transaction* GetTransactionByName(const TransactionName& name) override {
    Transaction* inner = txn_db_->GetTransactionByName(name);
    return inner == nullptr ? nullptr : Wrap(inner);
  }
  void GetAllPreparedTransactions(std::vector<Transaction*>* trans) override {
    txn_db_->GetAllPreparedTransactions(trans);
    for (Transaction*& t : *trans) t = Wrap(t);
  }
  std::unordered_multimap<uint32_t, KeyLockInfo> GetLockStatusData() override {
    return txn_db_->GetLockStatusData();
  }
  std::vector<DeadlockPath> GetDeadlockInfoBuffer() override {
    return txn_db_->GetDeadlockInfoBuffer();
  }
  void SetDeadlockInfoBufferSize(uint32_t target_size) override {
    txn_db_->SetDeadlockInfoBufferSize(target_size);
  }
  std::pair<Status, std::shared_ptr<const Snapshot>> CreateTimestampedSnapshot(
      TxnTimestamp ts) override {
    return txn_db_->CreateTimestampedSnapshot(ts);
  }
  std::shared_ptr<const Snapshot> GetTimestampedSnapshot(
      TxnTimestamp ts) const override {
    return txn_db_->GetTimestampedSnapshot(ts);
  }
  void ReleaseTimestampedSnapshotsOlderThan(TxnTimestamp ts) override {
    txn_db_->ReleaseTimestampedSnapshotsOlderThan(ts);
  }
  Status GetTimestampedSnapshots(TxnTimestamp ts_lb, TxnTimestamp ts_ub,
                                 std::vector<std::shared_ptr<const Snapshot>>&
                                     timestamped_snapshots) const override {
    return txn_db_->GetTimestampedSnapshots(ts_lb, ts_ub,
                                            timestamped_snapshots);
  }

  // ---------------------------------------------------------- writes
  // As PessimisticTransactionDB: an internal transaction (the DB's default
  // lock timeout) locks the key, then commits, here through the engine.
  using FilteredTransactionDB::Put;
  Status Put(const WriteOptions& wo, ColumnFamilyHandle* cf, const Slice& key,
             const Slice& value) override {
    return WriteKey(wo, cf, OpType::kPut, key, [&](Transaction* t) {
      return t->PutUntracked(cf, key, value);
    });
  }
  using FilteredTransactionDB::PutEntity;
#if CUCKOO_TXN_ENTITY
  // From 9.3 (before, RocksDB's TransactionDB writes PutEntity without
  // locking, as the engine then does too).
  Status PutEntity(const WriteOptions& wo, ColumnFamilyHandle* cf,
                   const Slice& key,
                   const ROCKSDB_NAMESPACE::WideColumns& columns) override {
    return WriteKey(wo, cf, OpType::kPut, key, [&](Transaction* t) {
      return t->PutEntityUntracked(cf, key, columns);
    });
  }
#endif
#if CUCKOO_ROCKSDB_AT_LEAST(8, 9) && !CUCKOO_TXN_ENTITY
  // Attribute groups (several families at once), 8.9 to 9.2: RocksDB's
  // TransactionDB writes them without locking (from 9.3 it refuses them,
  // and so does this DB, by forwarding); here through the engine too.
  Status PutEntity(
      const WriteOptions& wo, const Slice& key,
      const ROCKSDB_NAMESPACE::AttributeGroups& attribute_groups) override {
    WriteBatch batch;
    Status s = batch.PutEntity(key, attribute_groups);
    if (!s.ok()) return s;
    TransactionDBWriteOptimizations unlocked;
    unlocked.skip_concurrency_control = true;
    return WriteUnlocked(wo, &batch, [&](WriteBatch* b) {
      return txn_db_->Write(wo, unlocked, b);
    });
  }
#endif
  using FilteredTransactionDB::Delete;
  Status Delete(const WriteOptions& wo, ColumnFamilyHandle* cf,
                const Slice& key) override {
    return WriteKey(wo, cf, OpType::kDelete, key, [&](Transaction* t) {
      return t->DeleteUntracked(cf, key);
    });
  }
  using FilteredTransactionDB::SingleDelete;
  Status SingleDelete(const WriteOptions& wo, ColumnFamilyHandle* cf,
                      const Slice& key) override {
    return WriteKey(wo, cf, OpType::kDelete, key, [&](Transaction* t) {
      return t->SingleDeleteUntracked(cf, key);
    });
  }
  using FilteredTransactionDB::Merge;
  Status Merge(const WriteOptions& wo, ColumnFamilyHandle* cf, const Slice& key,
               const Slice& value) override {
    return WriteKey(wo, cf, OpType::kMerge, key, [&](Transaction* t) {
      return t->MergeUntracked(cf, key, value);
    });
  }
  using FilteredTransactionDB::Write;
  Status Write(const WriteOptions& wo, WriteBatch* batch) override {
    if (skip_concurrency_control_) {
      return WriteUnlocked(
          wo, batch, [&](WriteBatch* b) { return txn_db_->Write(wo, b); });
    }
    return WriteLocked(wo, batch);
  }
  Status Write(const WriteOptions& wo,
               const TransactionDBWriteOptimizations& optimizations,
               WriteBatch* batch) override {
    if (optimizations.skip_concurrency_control || skip_concurrency_control_) {
      return WriteUnlocked(wo, batch, [&](WriteBatch* b) {
        return txn_db_->Write(wo, optimizations, b);
      });
    }
    return WriteLocked(wo, batch);
  }

  // ---------------------------------------------------------- handles
  using FilteredTransactionDB::CreateColumnFamily;
  Status CreateColumnFamily(const ColumnFamilyOptions& options,
                            const std::string& name,
                            ColumnFamilyHandle** handle) override {
    Status s = engine_->CreateColumnFamily(options, name, handle);
    if (s.ok()) handles_.Add(*handle);
    return s;
  }
  using FilteredTransactionDB::CreateColumnFamilies;
  Status CreateColumnFamilies(
      const ColumnFamilyOptions& options, const std::vector<std::string>& names,
      std::vector<ColumnFamilyHandle*>* handles) override {
    Status s = engine_->CreateColumnFamilies(options, names, handles);
    for (ColumnFamilyHandle* h : *handles) handles_.Add(h);
    return s;
  }
  Status CreateColumnFamilies(
      const std::vector<ColumnFamilyDescriptor>& families,
      std::vector<ColumnFamilyHandle*>* handles) override {
    Status s = engine_->CreateColumnFamilies(families, handles);
    for (ColumnFamilyHandle* h : *handles) handles_.Add(h);
    return s;
  }
  Status DestroyColumnFamilyHandle(ColumnFamilyHandle* cf) override {
    if (cf != nullptr) handles_.Remove(cf);
    return engine_->DestroyColumnFamilyHandle(cf);
  }

 private:
  Transaction* BeginInternal(const WriteOptions& wo) {
    Transaction* t = txn_db_->BeginTransaction(wo, TransactionOptions());
    t->SetLockTimeout(default_lock_timeout_);
    return t;
  }

  // The wrapper of a transaction RocksDB returned by name: the
  // application's, or a new one for a transaction recovered at Open.
  Transaction* Wrap(Transaction* inner) {
    std::lock_guard<std::mutex> lock(wrap_mu_);
    FilteredTransaction* outer = registry_.Find(inner);
    return outer != nullptr ? outer : new FilteredTransaction(&ctx_, inner);
  }

  template <typename WriteFn>
  Status WriteKey(const WriteOptions& wo, ColumnFamilyHandle* cf, OpType type,
                  const Slice& key, WriteFn&& write) {
    std::unique_ptr<Transaction> t(BeginInternal(wo));
    t->DisableIndexing();
    // Locks the key (untracked: no validation), into the batch.
    Status s = write(t.get());
    if (!s.ok()) return s;
    CfState* state = StateOf(cf);
    if (state == nullptr) return t->Commit();
    std::vector<Op> ops{Op{state, type, key, Slice()}};
    return engine_->WriteForTransaction(
        wo, &ops,
        [&](const effect_log::WriteEffects& e) {
          AppendEffectRecord(
              t.get(), e.Record(t->GetWriteBatch()->GetWriteBatch()->Count()));
          return t->Commit();
        },
        &CommitNotWritten);
  }

  // A batch whose keys RocksDB does not lock (skip_concurrency_control):
  // the engine's protocol around `write`.
  template <typename WriteFn>
  Status WriteUnlocked(const WriteOptions& wo, WriteBatch* batch,
                       WriteFn&& write) {
    if (batch == nullptr) return write(batch);
    std::vector<Op> ops;
    BatchCollector collector(engine_->FamiliesById(), &ops);
    Status s = batch->Iterate(&collector);
    if (s.ok()) s = collector.LogDataStatus();
    if (!s.ok()) return s;
    if (ops.empty()) return write(batch);
    return engine_->WriteForTransaction(
        wo, &ops,
        [&](const effect_log::WriteEffects& e) {
          return effect_log::WriteWithRecord(*batch, e.Record(batch->Count()),
                                             write);
        },
        nullptr);
  }

  // A batch with concurrency control, as PessimisticTransactionDB::Write:
  // every key locked in sorted order by an internal transaction, the batch
  // written as it is (here through the engine), the locks released.
  Status WriteLocked(const WriteOptions& wo, WriteBatch* batch) {
    if (batch == nullptr) return txn_db_->Write(wo, batch);
    std::vector<Op> ops;
    BatchCollector collector(engine_->FamiliesById(), &ops);
    Status s = batch->Iterate(&collector);
    if (s.ok()) s = collector.LogDataStatus();
    if (!s.ok()) return s;
    if (ops.empty()) return txn_db_->Write(wo, batch);  // RocksDB locks
    LockKeys lock_keys;
    s = batch->Iterate(&lock_keys);
    if (!s.ok()) return s;
    std::unique_ptr<Transaction> t(BeginInternal(wo));
    for (const auto& family : lock_keys.keys) {
      ColumnFamilyHandle* h = HandleOf(family.first);
      if (h == nullptr) {
        return Status::InvalidArgument(
            "FilteredTransactionDB::Write: no handle of column family " +
            std::to_string(family.first) + " to lock its keys with");
      }
      for (const std::string& key : family.second) {
        s = t->GetForUpdate(ReadOptions(), h, key,
                            static_cast<std::string*>(nullptr),
                            /*exclusive=*/true, /*do_validate=*/false);
        if (!s.ok()) return s;  // t's destructor releases the locks
      }
    }
    TransactionDBWriteOptimizations locked;
    locked.skip_concurrency_control = true;
    return engine_->WriteForTransaction(
        wo, &ops,
        [&](const effect_log::WriteEffects& e) {
          return effect_log::WriteWithRecord(
              *batch, e.Record(batch->Count()),
              [&](WriteBatch* b) { return txn_db_->Write(wo, locked, b); });
        },
        nullptr);
  }

  ColumnFamilyHandle* HandleOf(uint32_t id) {
    const std::vector<CfState*>& by_id = *engine_->FamiliesById();
    if (id < by_id.size() && by_id[id] != nullptr &&
        !by_id[id]->dropped.load(std::memory_order_acquire) &&
        by_id[id]->handle != nullptr) {
      return by_id[id]->handle;  // kept alive by the engine until Close
    }
    if (id == txn_db_->DefaultColumnFamily()->GetID()) {
      return txn_db_->DefaultColumnFamily();
    }
    return handles_.Find(id);
  }

  TransactionDB* const txn_db_;  // owned by the engine
  const int64_t default_lock_timeout_;
  const bool skip_concurrency_control_;
  TxnRegistry registry_;
  std::mutex wrap_mu_;
  HandleMap handles_;
  TxnContext ctx_;
};

class FilteredOccDBImpl final
    : public WithEngine<FilteredOptimisticTransactionDB> {
 public:
  FilteredOccDBImpl(FilteredDBImpl* engine, OptimisticTransactionDB* occ_db)
      : WithEngine(engine), occ_db_(occ_db) {
    ctx_.engine = engine;
    ctx_.optimistic = true;
  }

#if CUCKOO_ROCKSDB_AT_LEAST(8, 9)
  // Attribute groups (several families at once, from 8.9): as a batch, so
  // that the engine sees the writes (StackableDB would forward them to the
  // DB directly).
  using FilteredOptimisticTransactionDB::PutEntity;
  Status PutEntity(
      const WriteOptions& wo, const Slice& key,
      const ROCKSDB_NAMESPACE::AttributeGroups& attribute_groups) override {
    WriteBatch batch;
    Status s = batch.PutEntity(key, attribute_groups);
    if (!s.ok()) return s;
    return engine_->Write(wo, &batch);
  }
#endif

  Transaction* BeginTransaction(const WriteOptions& wo,
                                const OptimisticTransactionOptions& txn_options,
                                Transaction* old_txn) override {
    if (old_txn != nullptr) {
      auto* old = static_cast<FilteredTransaction*>(old_txn);
      occ_db_->BeginTransaction(wo, txn_options, old->inner());
      old->Reinitialized();
      return old;
    }
    Transaction* inner = occ_db_->BeginTransaction(wo, txn_options, nullptr);
    return inner == nullptr ? nullptr : new FilteredTransaction(&ctx_, inner);
  }

 private:
  OptimisticTransactionDB* const occ_db_;  // owned by the engine
  TxnContext ctx_;
};

// ------------------------------------------------------------ Open

Status CheckWritePolicy(const TransactionDBOptions& options) {
  switch (options.write_policy) {
    case ROCKSDB_NAMESPACE::WRITE_COMMITTED:
      return Status::OK();
    case ROCKSDB_NAMESPACE::WRITE_PREPARED:
      return Status::NotSupported(
          "FilteredTransactionDB: write_policy WRITE_PREPARED is not "
          "supported (only WRITE_COMMITTED)");
    case ROCKSDB_NAMESPACE::WRITE_UNPREPARED:
      return Status::NotSupported(
          "FilteredTransactionDB: write_policy WRITE_UNPREPARED is not "
          "supported (only WRITE_COMMITTED)");
  }
  return Status::NotSupported("FilteredTransactionDB: unknown write_policy");
}

// Puts the engine over an open transaction DB; on failure closes it and
// destroys the caller's handles. filter_handles: the handles Init filters
// (the caller's, or the DB's default).
template <typename Raw>
Status NewEngine(Raw* raw,
                 const std::vector<ColumnFamilyHandle*>& filter_handles,
                 std::vector<ColumnFamilyHandle*>* caller_handles,
                 const FilteredDBOptions& filtered_options,
                 PreOpenFacts pre_open,
                 std::unique_ptr<FilteredDBImpl>* engine) {
  engine->reset(new FilteredDBImpl(raw, filtered_options, std::move(pre_open)));
  // A pessimistic TransactionDB's WAL may hold prepared transactions:
  // no replay (FilteredDBImpl::replay_wal_).
  (*engine)->SetWalReplay(
      !std::is_base_of_v<ROCKSDB_NAMESPACE::TransactionDB, Raw>);
  Status s = (*engine)->Init(filter_handles);
  if (!s.ok()) {
    if (caller_handles != nullptr) {
      for (ColumnFamilyHandle* h : *caller_handles) {
        raw->DestroyColumnFamilyHandle(h).PermitUncheckedError();
      }
      caller_handles->clear();
    }
    engine->reset();  // closes and deletes raw
  }
  return s;
}

}  // namespace
}  // namespace live

using live::FilteredDBImpl;
using ROCKSDB_NAMESPACE::ColumnFamilyDescriptor;
using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::ColumnFamilyOptions;
using ROCKSDB_NAMESPACE::DBOptions;
using ROCKSDB_NAMESPACE::OptimisticTransactionDB;
using ROCKSDB_NAMESPACE::OptimisticTransactionDBOptions;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::TransactionDB;
using ROCKSDB_NAMESPACE::TransactionDBOptions;

Status FilteredTransactionDB::Open(const Options& options,
                                   const TransactionDBOptions& txn_db_options,
                                   const std::string& name,
                                   const FilteredDBOptions& filtered_options,
                                   std::unique_ptr<FilteredTransactionDB>* db) {
  db->reset();
  Status s = live::CheckWritePolicy(txn_db_options);
  if (!s.ok()) return s;
  s = live::CheckFamiliesToFilter({ROCKSDB_NAMESPACE::kDefaultColumnFamilyName},
                                  filtered_options);
  if (!s.ok()) return s;
  live::PreOpenFacts pre_open;
  s = live::BeforeOpen(options, name, filtered_options, &pre_open);
  if (!s.ok()) return s;
  Options retaining = options;  // WAL kept for the replay after a crash
  live::RetainWal(filtered_options, &retaining);
  TransactionDB* raw = nullptr;
  s = TransactionDB::Open(retaining, txn_db_options, name, &raw);
  if (!s.ok()) return s;
  std::unique_ptr<FilteredDBImpl> engine;
  s = live::NewEngine(raw, {raw->DefaultColumnFamily()}, nullptr,
                      filtered_options, std::move(pre_open), &engine);
  if (!s.ok()) return s;
  db->reset(
      new live::FilteredTxnDBImpl(engine.release(), raw, txn_db_options, {}));
  return Status::OK();
}

Status FilteredTransactionDB::Open(
    const DBOptions& db_options, const TransactionDBOptions& txn_db_options,
    const std::string& name,
    const std::vector<ColumnFamilyDescriptor>& column_families,
    std::vector<ColumnFamilyHandle*>* handles,
    const FilteredDBOptions& filtered_options,
    std::unique_ptr<FilteredTransactionDB>* db) {
  db->reset();
  Status s = live::CheckWritePolicy(txn_db_options);
  if (!s.ok()) return s;
  s = live::CheckFamiliesToFilter(column_families, filtered_options);
  if (!s.ok()) return s;
  live::PreOpenFacts pre_open;
  s = live::BeforeOpen(db_options, name, filtered_options, &pre_open);
  if (!s.ok()) return s;
  DBOptions retaining = db_options;  // WAL kept for the replay after a crash
  live::RetainWal(filtered_options, &retaining);
  TransactionDB* raw = nullptr;
  s = TransactionDB::Open(retaining, txn_db_options, name, column_families,
                          handles, &raw);
  if (!s.ok()) return s;
  std::unique_ptr<FilteredDBImpl> engine;
  s = live::NewEngine(raw, *handles, handles, filtered_options,
                      std::move(pre_open), &engine);
  if (!s.ok()) return s;
  db->reset(new live::FilteredTxnDBImpl(engine.release(), raw, txn_db_options,
                                        *handles));
  return Status::OK();
}

Status FilteredOptimisticTransactionDB::Open(
    const Options& options, const OptimisticTransactionDBOptions& occ_options,
    const std::string& name, const FilteredDBOptions& filtered_options,
    std::unique_ptr<FilteredOptimisticTransactionDB>* db) {
  // RocksDB 7.8 has no single-family Open with options: open the default
  // family by descriptor; the engine reads it through DefaultColumnFamily().
  std::vector<ColumnFamilyDescriptor> families = {
      {ROCKSDB_NAMESPACE::kDefaultColumnFamilyName,
       ColumnFamilyOptions(options)}};
  std::vector<ColumnFamilyHandle*> handles;
  Status s = Open(DBOptions(options), occ_options, name, families, &handles,
                  filtered_options, db);
  if (!s.ok()) return s;
  for (ColumnFamilyHandle* h : handles) {
    s = (*db)->DestroyColumnFamilyHandle(h);
    if (!s.ok()) {
      db->reset();
      return s;
    }
  }
  return Status::OK();
}

Status FilteredOptimisticTransactionDB::Open(
    const DBOptions& db_options,
    const OptimisticTransactionDBOptions& occ_options, const std::string& name,
    const std::vector<ColumnFamilyDescriptor>& column_families,
    std::vector<ColumnFamilyHandle*>* handles,
    const FilteredDBOptions& filtered_options,
    std::unique_ptr<FilteredOptimisticTransactionDB>* db) {
  db->reset();
  Status s = live::CheckFamiliesToFilter(column_families, filtered_options);
  if (!s.ok()) return s;
  live::PreOpenFacts pre_open;
  s = live::BeforeOpen(db_options, name, filtered_options, &pre_open);
  if (!s.ok()) return s;
  DBOptions retaining = db_options;  // WAL kept for the replay after a crash
  live::RetainWal(filtered_options, &retaining);
  OptimisticTransactionDB* raw = nullptr;
  s = OptimisticTransactionDB::Open(retaining, occ_options, name,
                                    column_families, handles, &raw);
  if (!s.ok()) return s;
  std::unique_ptr<FilteredDBImpl> engine;
  s = live::NewEngine(raw, *handles, handles, filtered_options,
                      std::move(pre_open), &engine);
  if (!s.ok()) return s;
  db->reset(new live::FilteredOccDBImpl(engine.release(), raw));
  return Status::OK();
}

}  // namespace rocksdb_cuckoo
