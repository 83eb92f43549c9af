// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB and column families: ingestion into a filtered family (its
// filter is rebuilt from the DB), drops, and the handles FilteredDB reads
// through (DestroyColumnFamilyHandle keeps them until Close).
#include <algorithm>
#include <vector>

#include "filtered_db_impl.h"
#include "rocksdb/write_batch.h"

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::IngestExternalFileArg;
using ROCKSDB_NAMESPACE::IngestExternalFileOptions;
using ROCKSDB_NAMESPACE::Status;

Status FilteredDBImpl::IngestExternalFile(
    ColumnFamilyHandle* cf, const std::vector<std::string>& files,
    const IngestExternalFileOptions& opts) {
  IngestExternalFileArg arg;
  arg.column_family = cf;
  arg.external_files = files;
  arg.options = opts;
  return IngestExternalFiles({arg});
}

Status FilteredDBImpl::IngestExternalFiles(
    const std::vector<IngestExternalFileArg>& args) {
  std::vector<CfState*> touched;
  // Every ingested family, filtered now or not: an ingestion need not
  // consume a sequence number, so a checkpoint written before it (by this
  // open or an earlier one that filtered the family) must not be loaded
  // after it. Removed before the files go in; if one cannot be removed,
  // nothing is ingested.
  std::vector<uint32_t> ids;
  for (const auto& arg : args) {
    CfState* s = State(arg.column_family);
    if (s != nullptr) touched.push_back(s);
    ids.push_back(arg.column_family == nullptr ? 0
                                               : arg.column_family->GetID());
  }
  // An ingestion marker in the WAL too: a replay never crosses it, should
  // an old checkpoint file be put back (effect_log.h, kind 4).
  auto mark = [&] {
    ROCKSDB_NAMESPACE::WriteBatch marker;
    Status st = marker.PutLogData(effect_log::IngestionRecord(ids));
    if (st.ok()) st = db_->Write(ROCKSDB_NAMESPACE::WriteOptions(), &marker);
    return st;
  };
  if (touched.empty()) {
    Status st = snapshots_->Remove(ids);
    if (st.ok()) st = mark();
    if (!st.ok()) return st;
    return db_->IngestExternalFiles(args);
  }
  // Not while a persist streams: an ingestion consumes no sequence number,
  // so a snapshot frozen before it and written after it (with a digest of
  // the state after it) would match the DB and miss the ingested keys.
  std::lock_guard<std::mutex> persisting(persist_mu_);
  ExclusiveLock lock(this);
  Status removed = snapshots_->Remove(ids);
  if (removed.ok()) removed = mark();
  if (!removed.ok()) return removed;
  recent_keys_.Clear();  // ingested files may delete keys
  for (CfState* s : touched) {
    WaitAndCommitLocked(s);
    // Ingested keys are not in the filter: reads go to the DB until the
    // filter has been rebuilt from it (only a successful rebuild makes it
    // ready again).
    s->filter->MarkNotReady();
  }
  Status result = db_->IngestExternalFiles(args);
  for (CfState* s : touched) {
    uint64_t estimate = 0;
    db_->GetIntProperty(s->handle, "rocksdb.estimate-num-keys", &estimate);
    const uint64_t capacity =
        std::max<uint64_t>({options_.filter.initial_capacity,
                            s->filter->RescanCapacity(), estimate});
    Status st = SyncRebuildLocked(s, capacity, {});
    if (!st.ok()) {
      Info(
          "cuckoo live filter [%s]: rebuild after ingestion failed (%s); the "
          "filter "
          "stays not ready until RebuildFilter succeeds",
          s->name.c_str(), st.ToString().c_str());
      if (result.ok()) result = st;
    }
  }
  return result;
}

Status FilteredDBImpl::DropColumnFamilies(
    const std::vector<ColumnFamilyHandle*>& cfs) {
  // RocksDB refuses to drop the default family before it changes anything:
  // so does FilteredDB (the family stays filtered).
  if (cfs.size() == 1 && cfs[0] != nullptr &&
      cfs[0]->GetID() == db_->DefaultColumnFamily()->GetID()) {
    return db_->DropColumnFamilies(cfs);
  }
  std::vector<CfState*> touched;
  for (ColumnFamilyHandle* cf : cfs) {
    CfState* s = State(cf);
    if (s != nullptr) touched.push_back(s);
  }
  // Before any other lock (as a persist): no checkpoint of a touched family
  // is written after the removal below.
  std::lock_guard<std::mutex> persisting(persist_mu_);
  ExclusiveLock lock(this);
  recent_keys_.Clear();
  Status st = db_->DropColumnFamilies(cfs);
  // RocksDB drops the families in order and stops at the first it cannot
  // drop; a failure may also come after a drop (the OPTIONS file). So on
  // any failure the touched families may be dropped, and FilteredDB stops
  // filtering all of them (reads and writes go to the DB directly: always
  // exact; the filter of a family that was not dropped returns at the next
  // Open).
  for (CfState* s : touched) {
    if (!st.ok()) {
      Info(
          "cuckoo live filter [%s]: DropColumnFamilies failed (%s); the "
          "family is no longer filtered",
          s->name.c_str(), st.ToString().c_str());
    }
    WaitAndCommitLocked(s);
    s->filter->MarkNotReady();
    s->dropped.store(true, std::memory_order_release);
  }
  // A family that stops being filtered loses its checkpoint: the writes and
  // ingestions that follow are not tracked (a family that was not dropped
  // is rebuilt from the DB at the next open; an ingestion removes it too).
  RemoveSnapshots(touched).PermitUncheckedError();
  return st;
}

Status FilteredDBImpl::DestroyColumnFamilyHandle(ColumnFamilyHandle* cf) {
  if (cf != nullptr && cf != db_->DefaultColumnFamily()) {
    const uint32_t id = cf->GetID();
    CfState* s = id < by_id_.size() ? by_id_[id] : nullptr;
    if (s != nullptr && s->handle == cf) {
      std::lock_guard<std::mutex> lock(retired_mu_);
      if (!s->dropped.load(std::memory_order_acquire)) {
        retired_.push_back(cf);
        return Status::OK();
      }
      // Dropped: read no more (the drop drained its checks and waited for
      // its rebuild), so the handle can go now.
      s->handle = nullptr;
    }
  }
  return db_->DestroyColumnFamilyHandle(cf);
}

std::vector<CfState*> FilteredDBImpl::DestroyRetiredHandles() {
  std::vector<ColumnFamilyHandle*> retired;
  {
    std::lock_guard<std::mutex> lock(retired_mu_);
    retired.swap(retired_);
  }
  std::vector<CfState*> states;
  for (ColumnFamilyHandle* h : retired) {
    for (auto& s : states_) {
      if (s->handle == h) states.push_back(s.get());
    }
    db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  }
  return states;
}

}  // namespace live
}  // namespace rocksdb_cuckoo
