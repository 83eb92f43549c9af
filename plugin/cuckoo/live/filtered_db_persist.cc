// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB persistence: PersistFilterSnapshots (freeze at a quiescent
// point, then sync the WAL and stream the images while writers go on), the
// automatic checkpoints (FilteredDBOptions::checkpoints), Close
// (persist_on_close: the checkpoints written after the DB closed, bound to
// the files it left), and what a checkpoint is bound to
// (checkpoint_file.h; docs/recovery_design.md).
#include <chrono>
#include <random>
#include <vector>

#ifdef __linux__
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "effect_log.h"
#include "filtered_db_impl.h"
#include "rocksdb/transaction_log.h"
#include "rocksdb/write_batch.h"

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::Env;
using ROCKSDB_NAMESPACE::SequenceNumber;
using ROCKSDB_NAMESPACE::Status;

namespace {

// A WAL file name as RocksDB writes it: decimal digits, ".log".
bool ParseWalName(const std::string& name, uint64_t* number) {
  constexpr size_t kSuffix = 4;
  if (name.size() <= kSuffix ||
      name.compare(name.size() - kSuffix, kSuffix, ".log") != 0 ||
      name.size() - kSuffix > 19) {
    return false;
  }
  uint64_t n = 0;
  for (size_t i = 0; i + kSuffix < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    n = n * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  *number = n;
  return true;
}

}  // namespace

CheckpointIdentity FilteredDBImpl::Identity(const CfState* s,
                                            SequenceNumber seq,
                                            uint64_t unchecked) const {
  CheckpointIdentity id;
  id.sequence = seq;
  id.db_id = db_id_;
  id.cf_id = s->id;
  id.cf_name = s->name;
  id.session = session_;
  id.unchecked = unchecked;
  return id;
}

uint64_t FilteredDBImpl::UncheckedOfCurrentTable(const CfState* s) {
  // A running rebuild's table is not the current one: its count is the
  // superseded one until it is installed (hostile review 9: a checkpoint
  // taken during a rescan stored 0).
  return s->unchecked.load(std::memory_order_relaxed) +
         s->unchecked_superseded.load(std::memory_order_relaxed);
}

std::string FilteredDBImpl::CurrentDbState() const {
  return DbStateDigest(db_->GetEnv(), db_->GetName(),
                       db_->GetDBOptions().wal_dir);
}

Status FilteredDBImpl::RemoveSnapshots(const std::vector<CfState*>& states) {
  std::vector<uint32_t> ids;
  for (const CfState* s : states) ids.push_back(s->id);
  return snapshots_->Remove(ids);
}

void FilteredDBImpl::ReleaseArchivedWal(SequenceNumber seq, uint64_t keep) {
  const ROCKSDB_NAMESPACE::DBOptions o = db_->GetDBOptions();
  if (o.WAL_ttl_seconds != kRetainWalSeconds || o.WAL_size_limit_MB != 0) {
    return;  // the application's retention: its files
  }
  ROCKSDB_NAMESPACE::VectorLogPtr files;
  if (!db_->GetSortedWalFiles(files).ok()) return;
  const std::string dir = o.wal_dir.empty() ? db_->GetName() : o.wal_dir;
  // File i holds no record after `seq` when file i + 1 starts at or before
  // it (WAL files are in sequence order; an empty file starts at 0).
  for (size_t i = 0; i + 1 < files.size(); ++i) {
    const ROCKSDB_NAMESPACE::SequenceNumber next =
        files[i + 1]->StartSequence();
    if (next == 0 || next > seq) break;
    if (files[i]->Type() != ROCKSDB_NAMESPACE::kArchivedLogFile ||
        files[i]->LogNumber() == keep) {
      continue;
    }
    const Status st = db_->GetEnv()->DeleteFile(dir + files[i]->PathName());
    if (!st.ok() && !st.IsNotFound()) {
      Info("cuckoo live filter: cannot delete archived WAL %s: %s",
           files[i]->PathName().c_str(), st.ToString().c_str());
    }
  }
  // Empty files: GetSortedWalFiles does not list them. Each open of the DB
  // (FilteredDB's or not) makes a WAL file, left empty if nothing is written
  // to it; RocksDB (7.8.3; from 8.3 at the next open) archives it at the
  // next flush, where the 100 years of WAL_ttl_seconds would keep it. An
  // archived file is never written again, and an empty one holds no record
  // to replay (a binding is never to an empty file).
  Env* env = db_->GetEnv();
  std::vector<std::string> archived;
  if (!env->GetChildren(dir + "/archive", &archived).ok()) return;
  for (const std::string& name : archived) {
    uint64_t number = 0;
    if (!ParseWalName(name, &number) || number == keep) continue;
    const std::string path = dir + "/archive/" + name;
    uint64_t size = 0;
    if (!env->GetFileSize(path, &size).ok() || size != 0) continue;
    const Status st = env->DeleteFile(path);
    if (!st.ok() && !st.IsNotFound()) {
      Info("cuckoo live filter: cannot delete empty archived WAL %s: %s",
           name.c_str(), st.ToString().c_str());
    }
  }
}

Status FilteredDBImpl::WriteCheckpointMarker() {
  ROCKSDB_NAMESPACE::WriteBatch marker;
  Status st = marker.PutLogData(effect_log::CheckpointRecord(
      (uint64_t{std::random_device()()} << 32) ^ std::random_device()() ^
      static_cast<uint64_t>(
          std::chrono::steady_clock::now().time_since_epoch().count())));
  if (!st.ok()) return st;
  return db_->Write(ROCKSDB_NAMESPACE::WriteOptions(), &marker);
}

void FilteredDBImpl::WaitForOpenBuilds() {
  ExclusiveLock lock(this);
  for (auto& s : states_) {
    if (!s->open_build || s->dropped.load(std::memory_order_relaxed)) continue;
    WaitAndCommitLocked(s.get());
    if (s->open_build) {
      // The load or the scan failed: the build is finished here (a
      // synchronous rebuild sizes itself from the keys it counts).
      Status st = SyncRebuildLocked(s.get(), s->open_capacity, {});
      if (!st.ok()) {
        Info("cuckoo live filter [%s]: build failed: %s", s->name.c_str(),
             st.ToString().c_str());
      }
    }
  }
}

Status FilteredDBImpl::Persist(bool wait_for_builds) {
  if (!snapshots_->enabled()) {
    return Status::InvalidArgument("FilteredDB: no snapshot_dir configured");
  }
  // One persist at a time (a filter has at most one Checkpoint, and a later
  // persist must not be overwritten by an earlier one finishing late).
  std::lock_guard<std::mutex> persisting(persist_mu_);
  Status st = snapshots_->Prepare();
  if (!st.ok()) return st;
  // A filter Open is still building or loading has no image yet: the
  // persist waits for it rather than skip it silently.
  if (wait_for_builds) WaitForOpenBuilds();
  struct Frozen {
    CfState* state;
    std::unique_ptr<cuckoo::LiveKeyFilter::Checkpoint> checkpoint;
    uint64_t unchecked;  // the frozen table's count, read with the freeze
  };
  TestHook("PersistFilterSnapshots:BeforeFreeze");
  std::vector<Frozen> frozen;
  std::string not_ready;
  SequenceNumber seq = 0;
  uint64_t erase_generation = 0;
  {
    // The quiescent point: no write runs (in-flight single-key writes
    // finish; the delete checker may go on: it only erases keys deleted
    // before this point), and every write so far is in the filters. Each
    // filter's image is frozen there (O(1) per filter) and streamed after
    // the lock is released, while writers go on (copy-on-write; see
    // LiveKeyFilter::Checkpoint).
    std::unique_lock<WriterLock> lock(write_mu_);
    st = FlushUnloggedWritesLocked();
    if (!st.ok()) return st;
    // No table installed between a freeze and the read of its count (the
    // rebuild threads install under filter_mu_ only, and the install resets
    // the count): the identity, written after the lock, must count the
    // frozen table's extra fingerprints, not the new table's.
    std::lock_guard<std::mutex> tables(filter_mu_);
    // The delete checker's erasures up to this generation are in the
    // images, the later ones are not (their WAL records follow `seq`:
    // docs/recovery_design.md 4.3).
    std::lock_guard<std::mutex> effects(effects_mu_);
    erase_generation = erase_generation_;
    seq = db_->GetLatestSequenceNumber();
    for (auto& s : states_) {
      if (s->dropped.load(std::memory_order_relaxed)) continue;
      // Not ready (a failed rebuild or build): no trustworthy table.
      if (!s->filter->ready()) {
        not_ready += (not_ready.empty() ? "'" : ", '") + s->name + "'";
        continue;
      }
      std::unique_ptr<cuckoo::LiveKeyFilter::Checkpoint> checkpoint =
          s->filter->Freeze();
      if (checkpoint == nullptr) {
        return Status::Busy("FilteredDB: a filter checkpoint is in progress");
      }
      frozen.push_back(Frozen{s.get(), std::move(checkpoint),
                              UncheckedOfCurrentTable(s.get())});
    }
  }
  TestHook("PersistFilterSnapshots:AfterFreeze");
  if (!frozen.empty()) {
    // Outside the lock: the WAL sync (the writes up to `seq` become durable;
    // a later sync covers them too: manual_wal_flush keeps writes in
    // RocksDB's buffer, and the OS may lose unsynced WAL bytes), then what
    // the checkpoint is bound to: the MANIFEST CURRENT names and a prefix of
    // the WAL that holds every write up to `seq` and ends with this
    // checkpoint's own marker (a random nonce; read after the sync).
    st = WriteCheckpointMarker();
    if (!st.ok()) return st;
    st = db_->FlushWAL(/*sync=*/true);
    if (!st.ok()) return st;
    WalBinding wal;
    st = ComputeWalBinding(db_, &wal);
    if (!st.ok()) return st;
    const std::string manifest = CurrentManifest(db_->GetEnv(), db_->GetName());
    if (manifest.empty()) {
      return Status::IOError("FilteredDB: cannot read the DB's CURRENT file");
    }
    for (Frozen& f : frozen) {
      CheckpointIdentity id = Identity(f.state, seq, f.unchecked);
      id.erase_generation = erase_generation;
      id.manifest = manifest;
      id.wal = wal;
      st = WriteSnapshot(f.state, f.checkpoint.get(), id.Encode());
      if (!st.ok()) return st;
      f.state->counters.Add<&FilteredDBStats::checkpoints>();
    }
    // A new chain of opens starts at this checkpoint's MANIFEST.
    st = snapshots_->WriteOpens(FormatChain({ChainEntry{manifest, wal}}));
    if (!st.ok()) return st;
    last_checkpoint_seq_.store(seq, std::memory_order_relaxed);
    // Every family's checkpoint is at `seq` now (a family without a filter
    // ready keeps an older one: then nothing is released).
    if (not_ready.empty()) ReleaseArchivedWal(seq, wal.number);
  }
  if (!not_ready.empty()) {
    return Status::Incomplete(
        "FilteredDB: no snapshot written for column family " + not_ready +
        ": its filter is not ready");
  }
  return Status::OK();
}

void FilteredDBImpl::StartCheckpointThread() {
  if (!snapshots_->enabled() || !options_.checkpoints.automatic ||
      checkpoint_thread_.joinable()) {
    return;
  }
  {
    std::lock_guard<std::mutex> lock(checkpoint_mu_);
    checkpoint_stop_ = false;
  }
  checkpoint_thread_ = std::thread([this] { CheckpointLoop(); });
}

void FilteredDBImpl::StopCheckpointThread() {
  {
    std::lock_guard<std::mutex> lock(checkpoint_mu_);
    checkpoint_stop_ = true;
  }
  checkpoint_cv_.notify_all();
  if (checkpoint_thread_.joinable()) checkpoint_thread_.join();
}

void FilteredDBImpl::CheckpointLoop() {
#ifdef __linux__
  // The image is streamed at the lowest priority: writers keep their CPU.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
  pthread_setname_np(pthread_self(), "cuckoo:ckpt");
#endif
  const FilteredDBOptions::CheckpointPolicy& policy = options_.checkpoints;
  const auto interval = std::chrono::milliseconds(
      std::max<uint64_t>(1, policy.check_interval_ms));
  std::unique_lock<std::mutex> lock(checkpoint_mu_);
  while (!checkpoint_stop_) {
    checkpoint_cv_.wait_for(lock, interval, [&] { return checkpoint_stop_; });
    if (checkpoint_stop_) break;
    lock.unlock();
    uint64_t keys = 0;
    bool all_ready = true;
    for (auto& s : states_) {
      if (s->dropped.load(std::memory_order_relaxed)) continue;
      all_ready &= s->filter->ready();
      keys += s->filter->size();
    }
    const SequenceNumber seq = db_->GetLatestSequenceNumber();
    const uint64_t due = std::max<uint64_t>(
        policy.min_writes,
        static_cast<uint64_t>(policy.writes_fraction * double(keys)));
    const SequenceNumber last =
        last_checkpoint_seq_.load(std::memory_order_relaxed);
    if (all_ready && seq >= last + due) {
      const auto start = std::chrono::steady_clock::now();
      const Status st = Persist(/*wait_for_builds=*/false);
      const uint64_t micros = static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(
              std::chrono::steady_clock::now() - start)
              .count());
      if (!st.ok()) {
        Info("cuckoo live filter: automatic checkpoint failed: %s",
             st.ToString().c_str());
      }
      if (policy.on_checkpoint) {
        policy.on_checkpoint(last_checkpoint_seq_.load(), micros, st);
      }
    }
    lock.lock();
  }
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
  StopCheckpointThread();
  std::lock_guard<std::mutex> persisting(persist_mu_);
  {
    // A checkpoint Open is loading is waited for (it is bounded by reading
    // the file) and persisted again below; a build from a scan is cancelled
    // by StopBackgroundWork (no usable checkpoint existed: the next Open
    // scans, as this one did).
    ExclusiveLock lock(this);
    for (auto& st : states_) {
      if (st->open_load && st->rebuilder->running()) {
        WaitAndCommitLocked(st.get());
      }
    }
  }
  StopBackgroundWork();
  bool persist = false;
  SequenceNumber seq = 0;
  WalBinding wal;
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
      persist = !unlogged_writes_ && WriteCheckpointMarker().ok() &&
                db_->FlushWAL(/*sync=*/true).ok();
      seq = db_->GetLatestSequenceNumber();
      if (persist && !ComputeWalBinding(db_, &wal).ok()) wal = WalBinding();
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
    {
      // What StopBackgroundWork cancelled starts again if still wanted (an
      // open build, a rescan that is due), rather than at the next write.
      ExclusiveLock lock(this);
      for (auto& st : states_) {
        if (!st->dropped.load(std::memory_order_relaxed)) {
          AfterWriteLocked(st.get());
        }
      }
    }
    StartCheckpointThread();
    return s;
  }
  if (s.ok() && persist) {
    // Written after the DB closed cleanly, bound to the files it left (the
    // state digest) and to the WAL prefix and MANIFEST of the close.
    const std::string state = CurrentDbState();
    const std::string manifest = CurrentManifest(db_->GetEnv(), db_->GetName());
    bool written = false;
    for (auto& cf : states_) {
      if (state.empty() || cf->dropped.load(std::memory_order_relaxed) ||
          !cf->filter->ready())
        continue;
      // No writer is left: the image is the table; streamed, not copied.
      std::unique_ptr<LiveKeyFilter::Checkpoint> checkpoint =
          cf->filter->Freeze();
      if (checkpoint == nullptr) continue;  // ready, and no persist runs
      CheckpointIdentity id =
          Identity(cf.get(), seq, UncheckedOfCurrentTable(cf.get()));
      {
        std::lock_guard<std::mutex> effects(effects_mu_);
        id.erase_generation = erase_generation_;
      }
      id.db_state = state;
      id.manifest = manifest;
      id.wal = wal;
      Status st = WriteSnapshot(cf.get(), checkpoint.get(), id.Encode());
      if (!st.ok() && s.ok()) s = st;
      written |= st.ok();
    }
    if (written && !manifest.empty()) {
      Status st =
          snapshots_->WriteOpens(FormatChain({ChainEntry{manifest, wal}}));
      if (!st.ok() && s.ok()) s = st;
    }
  }
  closed_ = true;
  close_status_ = s;
  return s;
}

}  // namespace live
}  // namespace rocksdb_cuckoo
