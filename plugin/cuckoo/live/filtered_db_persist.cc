// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB persistence: PersistFilterSnapshots (freeze at a quiescent
// point, then sync the WAL and stream the images while writers go on),
// Close (persist_on_close: the snapshots written after the DB closed, bound
// to the files it left), and the snapshot identity (snapshot_store.h).
#include <vector>

#include "filtered_db_impl.h"

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::SequenceNumber;
using ROCKSDB_NAMESPACE::Status;

SnapshotIdentity FilteredDBImpl::Identity(const CfState* s, SequenceNumber seq,
                                          const std::string& db_state) const {
  SnapshotIdentity id;
  id.sequence = seq;
  id.db_state = db_state;
  id.db_id = db_id_;
  id.cf_id = s->id;
  id.cf_name = s->name;
  return id;
}

std::string FilteredDBImpl::CurrentDbState() const {
  return DbStateDigest(db_->GetEnv(), db_->GetName(),
                       db_->GetDBOptions().wal_dir);
}

void FilteredDBImpl::RemoveSnapshots(const std::vector<CfState*>& states) {
  std::vector<uint32_t> ids;
  for (const CfState* s : states) ids.push_back(s->id);
  snapshots_->Remove(ids);
}

Status FilteredDBImpl::PersistFilterSnapshots() {
  if (options_.snapshot_dir.empty()) {
    return Status::InvalidArgument("FilteredDB: no snapshot_dir configured");
  }
  // One persist at a time (a filter has at most one Checkpoint, and a later
  // persist must not be overwritten by an earlier one finishing late).
  std::lock_guard<std::mutex> persisting(persist_mu_);
  struct Frozen {
    CfState* state;
    std::unique_ptr<cuckoo::LiveKeyFilter::Checkpoint> checkpoint;
    std::string identity;
  };
  std::vector<Frozen> frozen;
  SequenceNumber seq = 0;
  {
    // The quiescent point: no write runs (in-flight single-key writes
    // finish; the delete checker may go on: it only erases keys deleted
    // before this point), and every write so far is in the filters. Each
    // filter's image is frozen there (O(1) per filter) and streamed after
    // the lock is released, while writers go on (copy-on-write; see
    // LiveKeyFilter::Checkpoint).
    std::unique_lock<WriterLock> lock(write_mu_);
    Status st = FlushUnloggedWritesLocked();
    if (!st.ok()) return st;
    seq = db_->GetLatestSequenceNumber();
    for (auto& s : states_) {
      // A filter that is not ready (a failed rebuild) has no trustworthy
      // table.
      if (s->dropped.load(std::memory_order_relaxed) || !s->filter->ready())
        continue;
      std::unique_ptr<cuckoo::LiveKeyFilter::Checkpoint> checkpoint =
          s->filter->Freeze();
      if (checkpoint == nullptr) {
        return Status::Busy("FilteredDB: a filter checkpoint is in progress");
      }
      frozen.push_back(Frozen{s.get(), std::move(checkpoint), ""});
    }
  }
  TestHook("PersistFilterSnapshots:AfterFreeze");
  // Outside the lock: the WAL sync (the writes up to `seq` become durable;
  // a later sync covers them too: manual_wal_flush keeps writes in RocksDB's
  // buffer, and the OS may lose unsynced WAL bytes) and the digest of the
  // on-disk state. A digest that already includes later writes never
  // matches a DB at `seq` (the sequence number is compared too), and one
  // without writes that later reached the DB never matches it either: the
  // snapshot is then ignored, never wrong.
  Status st = db_->FlushWAL(/*sync=*/true);
  if (!st.ok()) return st;
  const std::string state = CurrentDbState();
  if (state.empty())
    return Status::IOError(
        "FilteredDB: cannot read the DB's MANIFEST/WAL state");
  for (Frozen& f : frozen) {
    f.identity = Identity(f.state, seq, state).Encode();
  }
  for (Frozen& f : frozen) {
    st = WriteSnapshot(f.state, f.checkpoint.get(), f.identity);
    if (!st.ok()) return st;
  }
  return Status::OK();
}

Status FilteredDBImpl::WriteSnapshot(const CfState* s,
                                     LiveKeyFilter::Checkpoint* checkpoint,
                                     const std::string& identity) {
  return snapshots_->WriteStream(s->id, [&](const SnapshotStore::Sink& sink) {
    return checkpoint->Encode(identity, sink);
  });
}

Status FilteredDBImpl::FlushUnloggedWritesLocked() {
  if (!unlogged_writes_) return Status::OK();
  // Writes without WAL would be lost by a crash while the DB keeps its
  // sequence number: make them durable before recording the sequence.
  std::vector<ColumnFamilyHandle*> handles;
  for (auto& s : states_) {
    if (!s->dropped.load(std::memory_order_relaxed) && s->handle != nullptr)
      handles.push_back(s->handle);
  }
  Status st = db_->Flush(ROCKSDB_NAMESPACE::FlushOptions(), handles);
  if (!st.ok()) return st;
  unlogged_writes_ = false;
  return Status::OK();
}

Status FilteredDBImpl::CloseImpl() {
  if (closed_) return close_status_;
  std::lock_guard<std::mutex> persisting(persist_mu_);
  StopBackgroundWork();
  bool persist = false;
  SequenceNumber seq = 0;
  {
    ExclusiveLock lock(this);
    if (initialized_ && options_.persist_on_close && snapshots_->enabled()) {
      // The sequence recorded must be durable: the WAL flushed and synced,
      // and no write without WAL since the last flush of the filtered
      // families. RocksDB's Close flushes only non-empty mutable memtables:
      // a switched-out memtable whose flush is queued (or paused) is
      // dropped, and with it an unlogged write, while a later logged write
      // keeps the recovered sequence number. So after an unlogged write no
      // snapshot is written at Close (PersistFilterSnapshots flushes first
      // and writes one).
      persist = !unlogged_writes_ && db_->FlushWAL(/*sync=*/true).ok();
      seq = db_->GetLatestSequenceNumber();
    }
  }
  // RocksDB refuses to close while snapshots are held (Aborted, the DB
  // stays usable); the retired handles must be gone before it closes, and
  // must stay while it is usable, so the refusal is checked first.
  uint64_t snapshots = 0;
  Status s;
  {
    std::lock_guard<std::mutex> lock(retired_mu_);
    if (!retired_.empty() &&
        db_->GetIntProperty(db_->DefaultColumnFamily(), "rocksdb.num-snapshots",
                            &snapshots) &&
        snapshots != 0) {
      s = Status::Aborted("Cannot close DB with unreleased snapshot.");
    }
  }
  std::vector<CfState*> unreadable;
  if (s.ok()) {
    unreadable = DestroyRetiredHandles();
    s = db_->Close();
  }
  if (s.IsAborted()) {
    // Nothing was closed (e.g. unreleased snapshots): the DB stays usable,
    // rescans may run again, and Close can be retried. A family whose
    // retired handle is gone (a snapshot taken during Close) can no longer
    // be read by FilteredDB: it is no longer filtered, as if dropped.
    for (CfState* st : unreadable) {
      st->filter->MarkNotReady();
      st->dropped.store(true, std::memory_order_release);
    }
    for (auto& st : states_) st->rebuilder->Resume();
    return s;
  }
  if (s.ok() && persist) {
    // Written after the DB closed cleanly, bound to the files it left.
    const std::string state = CurrentDbState();
    for (auto& cf : states_) {
      if (state.empty() || cf->dropped.load(std::memory_order_relaxed) ||
          !cf->filter->ready())
        continue;
      // No writer is left: the image is the table; streamed, not copied.
      std::unique_ptr<LiveKeyFilter::Checkpoint> checkpoint =
          cf->filter->Freeze();
      if (checkpoint == nullptr) continue;  // ready, and no persist runs
      Status st = WriteSnapshot(cf.get(), checkpoint.get(),
                                Identity(cf.get(), seq, state).Encode());
      if (!st.ok() && s.ok()) s = st;
    }
  }
  closed_ = true;
  close_status_ = s;
  return s;
}

}  // namespace live
}  // namespace rocksdb_cuckoo
