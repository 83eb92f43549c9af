// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredTransaction: the filtered reads and the commit of a transaction
// (see filtered_txn.h).
#include "filtered_txn.h"

#include <cstring>
#include <utility>

#include "filtered_db_impl.h"

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::Transaction;
using ROCKSDB_NAMESPACE::WBWIIterator;
using ROCKSDB_NAMESPACE::WriteBatch;
using ROCKSDB_NAMESPACE::WriteBatchWithIndex;
#if CUCKOO_TXN_ENTITY
using ROCKSDB_NAMESPACE::PinnableWideColumns;
#endif

// ------------------------------------------------------------ registry

void TxnRegistry::Add(Transaction* inner, FilteredTransaction* outer) {
  std::lock_guard<std::mutex> lock(mu_);
  map_[inner] = outer;
}

void TxnRegistry::Remove(Transaction* inner) {
  std::lock_guard<std::mutex> lock(mu_);
  map_.erase(inner);
}

FilteredTransaction* TxnRegistry::Find(Transaction* inner) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.find(inner);
  return it == map_.end() ? nullptr : it->second;
}

bool CommitNotWritten(const Status& s) {
  // Busy / TryAgain: an optimistic transaction's validation failed (before
  // the write, or in the write thread's callback, which then skips the
  // batch). Expired: a pessimistic transaction past its expiration (checked
  // first). TxnNotPrepared: skip_prepare is false and Prepare was not
  // called. None of them is produced by RocksDB's write path itself.
  return s.IsBusy() || s.IsTryAgain() || s.IsExpired() || s.IsTxnNotPrepared();
}

// ------------------------------------------------------------ life cycle

FilteredTransaction::FilteredTransaction(const TxnContext* ctx,
                                         Transaction* inner)
    : ctx_(ctx), inner_(inner) {
  if (ctx_->registry != nullptr) ctx_->registry->Add(inner_, this);
  SyncState();
}

FilteredTransaction::~FilteredTransaction() {
  if (ctx_->registry != nullptr) ctx_->registry->Remove(inner_);
  delete inner_;
}

void FilteredTransaction::Reinitialized() {
  id_ = 0;
  SyncState();
}

void FilteredTransaction::SyncState() {
  SetState(inner_->GetState());
  id_ = inner_->GetId();
  log_number_ = inner_->GetLogNumber();
  name_ = inner_->GetName();
}

Status FilteredTransaction::SetName(const TransactionName& name) {
  Status s = inner_->SetName(name);
  SyncState();
  return s;
}

Status FilteredTransaction::Prepare() {
  // A prepared transaction's writes are not live (WRITE_COMMITTED writes
  // them to the WAL only): nothing for the filter. Its batch reaches the
  // WAL now, so reserved LogData is refused here.
  Status s = CheckLogData(inner_->GetWriteBatch()->GetWriteBatch());
  if (!s.ok()) return s;
  s = inner_->Prepare();
  SyncState();
  return s;
}

Status FilteredTransaction::Rollback() {
  // Also for a prepared transaction: its writes never became live.
  Status s = inner_->Rollback();
  SyncState();
  return s;
}

Status FilteredTransaction::RollbackToSavePoint() {
  // Truncates the batch: the commit only sees what remains.
  Status s = inner_->RollbackToSavePoint();
  SyncState();
  return s;
}

Status FilteredTransaction::Commit() {
  const bool prepared =
      !ctx_->optimistic && inner_->GetState() == Transaction::PREPARED;
  WriteBatch* batch = inner_->GetWriteBatch()->GetWriteBatch();
  WriteBatch* commit_time = inner_->GetCommitTimeWriteBatch();
  const bool has_commit_time =
      !ctx_->optimistic && commit_time != nullptr && commit_time->Count() > 0;
  // What the commit writes into the memtables: a prepared WRITE_COMMITTED
  // transaction its commit-time batch, then its batch (WriteCommittedTxn::
  // CommitInternal); any other commit its batch only (a commit-time batch
  // then makes it fail with InvalidArgument before writing).
  if ((batch->Count() == 0 && !(prepared && has_commit_time)) ||
      (!prepared && has_commit_time)) {
    // No operation, but LogData still reaches the WAL (also that of a
    // prepared transaction's commit-time batch).
    Status s = CheckLogData(batch);
    if (s.ok() && prepared) s = CheckLogData(commit_time);
    if (!s.ok()) return s;
    s = inner_->Commit();
    SyncState();
    return s;
  }
  // The operations, their keys copied into key_store_ (the commit clears
  // the batches; the engine uses the keys after the write). Both buffers are
  // the transaction's and keep their capacity, so that a reused transaction
  // (BeginTransaction's old_txn) commits without allocating here.
  std::vector<Op>& ops = commit_ops_;
  ops.clear();
  CommitCollector collector(ctx_->engine->FamiliesById(), &ops);
  if (prepared && commit_time != nullptr) {
    // Also without operations: its LogData is committed.
    Status s = commit_time->Iterate(&collector);
    if (!s.ok()) return s;
  }
  Status s = batch->Iterate(&collector);
  if (s.ok()) s = collector.LogDataStatus();
  if (!s.ok()) return s;
  CopyKeys(&ops);
  if (ops.empty()) {
    s = inner_->Commit();  // no filtered family
  } else {
    // The filter effects go into the committed batch (not for a prepared
    // transaction: its WAL has transaction markers, which a replay after
    // a crash does not cross).
    s = ctx_->engine->WriteForTransaction(
        *inner_->GetWriteOptions(), &ops,
        [this, prepared, batch](const live::effect_log::WriteEffects& e) {
          if (!prepared) AppendEffectRecord(inner_, e.Record(batch->Count()));
          return inner_->Commit();
        },
        &CommitNotWritten);
  }
  SyncState();
  return s;
}

void AppendEffectRecord(Transaction* txn, const Slice& record) {
  // The same append as Transaction::PutLogData (its WriteBatchWithIndex
  // only forwards LogData to its batch), with the status kept: a batch over
  // its max_bytes is left as it was.
  txn->GetWriteBatch()
      ->GetWriteBatch()
      ->PutLogData(record)
      .PermitUncheckedError();
}

Status FilteredTransaction::CheckLogData(WriteBatch* b) {
  if (b == nullptr) return Status::OK();
  commit_ops_.clear();
  CommitCollector collector(ctx_->engine->FamiliesById(), &commit_ops_);
  Status s = b->Iterate(&collector);
  commit_ops_.clear();
  return s.ok() ? collector.LogDataStatus() : s;
}

void FilteredTransaction::CopyKeys(std::vector<Op>* ops) {
  size_t bytes = 0;
  for (const Op& op : *ops) bytes += op.key.size() + op.end.size();
  // Sized once, then written: the slices into it stay valid.
  key_store_.resize(bytes);
  char* out = key_store_.data();
  auto copy = [&out](Slice* slice) {
    if (slice->size() > 0) memcpy(out, slice->data(), slice->size());
    *slice = Slice(out, slice->size());
    out += slice->size();
  };
  for (Op& op : *ops) {
    copy(&op.key);
    copy(&op.end);
  }
}

// ------------------------------------------------------------ reads

bool FilteredTransaction::Filterable(const ReadOptions& options,
                                     ColumnFamilyHandle* column_family) const {
  return ctx_->engine->HasFilter(column_family) &&
         options.snapshot == nullptr && options.timestamp == nullptr &&
         options.read_tier == ROCKSDB_NAMESPACE::kReadAllTier;
}

bool FilteredTransaction::InBatch(ColumnFamilyHandle* column_family,
                                  const Slice& key) {
  WriteBatchWithIndex* wbwi = inner_->GetWriteBatch();
  if (wbwi->GetWriteBatch()->Count() == 0) return false;
  std::unique_ptr<WBWIIterator> it(column_family == nullptr
                                       ? wbwi->NewIterator()
                                       : wbwi->NewIterator(column_family));
  it->Seek(key);
  if (!it->Valid()) return false;
  const ROCKSDB_NAMESPACE::Comparator* cmp =
      column_family == nullptr ? ROCKSDB_NAMESPACE::BytewiseComparator()
                               : column_family->GetComparator();
  return cmp->Compare(it->Entry().key, key) == 0;
}

bool FilteredTransaction::KnownAbsent(const ReadOptions& options,
                                      ColumnFamilyHandle* column_family,
                                      const Slice& key, bool multiget) {
  // A family or read the filter cannot answer first (cheap), then the batch
  // (nothing for an empty one), so that the filter's counters count only
  // the reads it answers.
  if (!Filterable(options, column_family)) return false;
  if (InBatch(column_family, key)) return false;
  return ctx_->engine->KnownAbsentForTransaction(options, column_family, key,
                                                 multiget);
}

Status FilteredTransaction::Get(const ReadOptions& options,
                                ColumnFamilyHandle* column_family,
                                const Slice& key, std::string* value) {
  if (KnownAbsent(options, column_family, key, false)) {
    if (value != nullptr) value->clear();
    return Status::NotFound();
  }
  return inner_->Get(options, column_family, key, value);
}

Status FilteredTransaction::Get(const ReadOptions& options,
                                ColumnFamilyHandle* column_family,
                                const Slice& key, PinnableSlice* pinnable_val) {
  if (KnownAbsent(options, column_family, key, false)) {
    if (pinnable_val != nullptr) pinnable_val->Reset();
    return Status::NotFound();
  }
  return inner_->Get(options, column_family, key, pinnable_val);
}

Status FilteredTransaction::Get(const ReadOptions& options, const Slice& key,
                                std::string* value) {
  if (KnownAbsent(options, nullptr, key, false)) {
    if (value != nullptr) value->clear();
    return Status::NotFound();
  }
  return inner_->Get(options, key, value);
}

Status FilteredTransaction::Get(const ReadOptions& options, const Slice& key,
                                PinnableSlice* pinnable_val) {
  if (KnownAbsent(options, nullptr, key, false)) {
    if (pinnable_val != nullptr) pinnable_val->Reset();
    return Status::NotFound();
  }
  return inner_->Get(options, key, pinnable_val);
}

#if CUCKOO_TXN_ENTITY
Status FilteredTransaction::GetEntity(const ReadOptions& options,
                                      ColumnFamilyHandle* column_family,
                                      const Slice& key,
                                      PinnableWideColumns* columns) {
  if (column_family != nullptr && columns != nullptr &&
      KnownAbsent(options, column_family, key, false)) {
    columns->Reset();
    return Status::NotFound();
  }
  return inner_->GetEntity(options, column_family, key, columns);
}
#endif

namespace {

// The keys of a batched read the filter answers (absent[i]); the others are
// passed, in order, to `read(indexes)`.
template <typename Read>
void ReadRest(const std::vector<char>& absent, Read&& read) {
  std::vector<size_t> rest;
  for (size_t i = 0; i < absent.size(); ++i) {
    if (!absent[i]) rest.push_back(i);
  }
  if (!rest.empty()) read(rest);
}

}  // namespace

std::vector<Status> FilteredTransaction::MultiGet(
    const ReadOptions& options,
    const std::vector<ColumnFamilyHandle*>& column_family,
    const std::vector<Slice>& keys, std::vector<std::string>* values) {
  const size_t n = keys.size();
  if (column_family.size() != n) {
    return inner_->MultiGet(options, column_family, keys, values);
  }
  std::vector<char> absent(n, 0);
  size_t answered = 0;
  for (size_t i = 0; i < n; ++i) {
    if (KnownAbsent(options, column_family[i], keys[i], true)) {
      absent[i] = 1;
      ++answered;
    }
  }
  if (answered == 0)
    return inner_->MultiGet(options, column_family, keys, values);
  std::vector<Status> result(n, Status::NotFound());
  values->assign(n, std::string());
  ReadRest(absent, [&](const std::vector<size_t>& rest) {
    std::vector<ColumnFamilyHandle*> sub_cfs;
    std::vector<Slice> sub_keys;
    for (size_t i : rest) {
      sub_cfs.push_back(column_family[i]);
      sub_keys.push_back(keys[i]);
    }
    std::vector<std::string> sub_values;
    std::vector<Status> sub =
        inner_->MultiGet(options, sub_cfs, sub_keys, &sub_values);
    for (size_t j = 0; j < rest.size(); ++j) {
      result[rest[j]] = sub[j];
      (*values)[rest[j]] = std::move(sub_values[j]);
    }
  });
  return result;
}

std::vector<Status> FilteredTransaction::MultiGet(
    const ReadOptions& options, const std::vector<Slice>& keys,
    std::vector<std::string>* values) {
  const size_t n = keys.size();
  std::vector<char> absent(n, 0);
  size_t answered = 0;
  for (size_t i = 0; i < n; ++i) {
    if (KnownAbsent(options, nullptr, keys[i], true)) {
      absent[i] = 1;
      ++answered;
    }
  }
  if (answered == 0) return inner_->MultiGet(options, keys, values);
  std::vector<Status> result(n, Status::NotFound());
  values->assign(n, std::string());
  ReadRest(absent, [&](const std::vector<size_t>& rest) {
    std::vector<Slice> sub_keys;
    for (size_t i : rest) sub_keys.push_back(keys[i]);
    std::vector<std::string> sub_values;
    std::vector<Status> sub = inner_->MultiGet(options, sub_keys, &sub_values);
    for (size_t j = 0; j < rest.size(); ++j) {
      result[rest[j]] = sub[j];
      (*values)[rest[j]] = std::move(sub_values[j]);
    }
  });
  return result;
}

void FilteredTransaction::MultiGet(const ReadOptions& options,
                                   ColumnFamilyHandle* column_family,
                                   const size_t num_keys, const Slice* keys,
                                   PinnableSlice* values, Status* statuses,
                                   const bool sorted_input) {
  std::vector<char> absent(num_keys, 0);
  size_t answered = 0;
  if (Filterable(options, column_family)) {
    for (size_t i = 0; i < num_keys; ++i) {
      if (KnownAbsent(options, column_family, keys[i], true)) {
        absent[i] = 1;
        ++answered;
      }
    }
  }
  if (answered == 0) {
    return inner_->MultiGet(options, column_family, num_keys, keys, values,
                            statuses, sorted_input);
  }
  for (size_t i = 0; i < num_keys; ++i) {
    if (absent[i]) {
      values[i].Reset();
      statuses[i] = Status::NotFound();
    }
  }
  ReadRest(absent, [&](const std::vector<size_t>& rest) {
    const size_t m = rest.size();
    std::vector<Slice> sub_keys(m);
    std::unique_ptr<PinnableSlice[]> sub_values(new PinnableSlice[m]);
    std::unique_ptr<Status[]> sub_status(new Status[m]);
    for (size_t j = 0; j < m; ++j) sub_keys[j] = keys[rest[j]];
    inner_->MultiGet(options, column_family, m, sub_keys.data(),
                     sub_values.get(), sub_status.get(), sorted_input);
    for (size_t j = 0; j < m; ++j) {
      // PinSelf copies into the caller's PinnableSlice, which may use a
      // caller-owned std::string buffer (a move would detach it).
      PinnableSlice& out = values[rest[j]];
      out.Reset();
      if (sub_status[j].ok()) out.PinSelf(sub_values[j]);
      statuses[rest[j]] = sub_status[j];
    }
  });
}

#if CUCKOO_TXN_ENTITY
void FilteredTransaction::MultiGetEntity(const ReadOptions& options,
                                         ColumnFamilyHandle* column_family,
                                         size_t num_keys, const Slice* keys,
                                         PinnableWideColumns* results,
                                         Status* statuses, bool sorted_input) {
  std::vector<char> absent(num_keys, 0);
  size_t answered = 0;
  if (column_family != nullptr && results != nullptr &&
      Filterable(options, column_family)) {
    for (size_t i = 0; i < num_keys; ++i) {
      if (KnownAbsent(options, column_family, keys[i], true)) {
        absent[i] = 1;
        ++answered;
      }
    }
  }
  if (answered == 0) {
    return inner_->MultiGetEntity(options, column_family, num_keys, keys,
                                  results, statuses, sorted_input);
  }
  for (size_t i = 0; i < num_keys; ++i) {
    if (absent[i]) {
      results[i].Reset();
      statuses[i] = Status::NotFound();
    }
  }
  ReadRest(absent, [&](const std::vector<size_t>& rest) {
    const size_t m = rest.size();
    std::vector<Slice> sub_keys(m);
    std::unique_ptr<PinnableWideColumns[]> sub_results(
        new PinnableWideColumns[m]);
    std::unique_ptr<Status[]> sub_status(new Status[m]);
    for (size_t j = 0; j < m; ++j) sub_keys[j] = keys[rest[j]];
    inner_->MultiGetEntity(options, column_family, m, sub_keys.data(),
                           sub_results.get(), sub_status.get(), sorted_input);
    for (size_t j = 0; j < m; ++j) {
      results[rest[j]] = std::move(sub_results[j]);
      statuses[rest[j]] = sub_status[j];
    }
  });
}
#endif

// ------------------------------------------------------------ reads for update

Status FilteredTransaction::LockForRead(const ReadOptions& options,
                                        ColumnFamilyHandle* column_family,
                                        const Slice& key, bool exclusive,
                                        bool do_validate) {
  // GetForUpdate without a value locks (pessimistic) or tracks (optimistic)
  // the key, validates it against the transaction's snapshot, and reads
  // nothing (TransactionBaseImpl::GetForUpdate, WriteCommittedTxn::
  // GetForUpdate for a family without timestamps).
  return inner_->GetForUpdate(options, column_family, key,
                              static_cast<std::string*>(nullptr), exclusive,
                              do_validate);
}

Status FilteredTransaction::GetForUpdate(const ReadOptions& options,
                                         ColumnFamilyHandle* column_family,
                                         const Slice& key, std::string* value,
                                         bool exclusive,
                                         const bool do_validate) {
  if (value == nullptr || !Filterable(options, column_family)) {
    return inner_->GetForUpdate(options, column_family, key, value, exclusive,
                                do_validate);
  }
  // Lock first, read second: the answer is never older than the lock.
  Status s = LockForRead(options, column_family, key, exclusive, do_validate);
  if (!s.ok()) return s;
  return Get(options, column_family, key, value);
}

Status FilteredTransaction::GetForUpdate(const ReadOptions& options,
                                         ColumnFamilyHandle* column_family,
                                         const Slice& key,
                                         PinnableSlice* pinnable_val,
                                         bool exclusive,
                                         const bool do_validate) {
  if (pinnable_val == nullptr || !Filterable(options, column_family)) {
    return inner_->GetForUpdate(options, column_family, key, pinnable_val,
                                exclusive, do_validate);
  }
  Status s = LockForRead(options, column_family, key, exclusive, do_validate);
  if (!s.ok()) return s;
  return Get(options, column_family, key, pinnable_val);
}

Status FilteredTransaction::GetForUpdate(const ReadOptions& options,
                                         const Slice& key, std::string* value,
                                         bool exclusive,
                                         const bool do_validate) {
  if (value == nullptr || !Filterable(options, nullptr)) {
    return inner_->GetForUpdate(options, key, value, exclusive, do_validate);
  }
  Status s = inner_->GetForUpdate(
      options, key, static_cast<std::string*>(nullptr), exclusive, do_validate);
  if (!s.ok()) return s;
  return Get(options, key, value);
}

#if CUCKOO_TXN_GET_FOR_UPDATE_PINNABLE_DEFAULT
Status FilteredTransaction::GetForUpdate(const ReadOptions& options,
                                         const Slice& key,
                                         PinnableSlice* pinnable_val,
                                         bool exclusive,
                                         const bool do_validate) {
  if (pinnable_val == nullptr || !Filterable(options, nullptr)) {
    return inner_->GetForUpdate(options, key, pinnable_val, exclusive,
                                do_validate);
  }
  Status s = inner_->GetForUpdate(
      options, key, static_cast<std::string*>(nullptr), exclusive, do_validate);
  if (!s.ok()) return s;
  return Get(options, key, pinnable_val);
}
#endif

#if CUCKOO_TXN_ENTITY_FOR_UPDATE
Status FilteredTransaction::GetEntityForUpdate(
    const ReadOptions& read_options, ColumnFamilyHandle* column_family,
    const Slice& key, PinnableWideColumns* columns, bool exclusive,
    bool do_validate) {
  if (column_family == nullptr || columns == nullptr ||
      !Filterable(read_options, column_family)) {
    return inner_->GetEntityForUpdate(read_options, column_family, key, columns,
                                      exclusive, do_validate);
  }
  Status s =
      LockForRead(read_options, column_family, key, exclusive, do_validate);
  if (!s.ok()) return s;
  return GetEntity(read_options, column_family, key, columns);
}
#endif

std::vector<Status> FilteredTransaction::MultiGetForUpdate(
    const ReadOptions& options,
    const std::vector<ColumnFamilyHandle*>& column_family,
    const std::vector<Slice>& keys, std::vector<std::string>* values) {
  const size_t n = keys.size();
  bool any = false;
  for (size_t i = 0; i < n && i < column_family.size() && !any; ++i) {
    any = Filterable(options, column_family[i]);
  }
  if (!any || column_family.size() != n) {
    return inner_->MultiGetForUpdate(options, column_family, keys, values);
  }
  // As TransactionBaseImpl::MultiGetForUpdate: every key locked (exclusive),
  // in order, or the whole read fails with the first failure; then read.
  for (size_t i = 0; i < n; ++i) {
    Status s = LockForRead(options, column_family[i], keys[i], true, true);
    if (!s.ok()) {
      values->resize(n);
      return std::vector<Status>(n, s);
    }
  }
  return MultiGet(options, column_family, keys, values);
}

std::vector<Status> FilteredTransaction::MultiGetForUpdate(
    const ReadOptions& options, const std::vector<Slice>& keys,
    std::vector<std::string>* values) {
  if (!Filterable(options, nullptr)) {
    return inner_->MultiGetForUpdate(options, keys, values);
  }
  const size_t n = keys.size();
  for (size_t i = 0; i < n; ++i) {
    Status s = inner_->GetForUpdate(
        options, keys[i], static_cast<std::string*>(nullptr), true, true);
    if (!s.ok()) {
      values->resize(n);
      return std::vector<Status>(n, s);
    }
  }
  return MultiGet(options, keys, values);
}

}  // namespace live
}  // namespace rocksdb_cuckoo
