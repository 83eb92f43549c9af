// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB open, close and everything around the filters' lifetime: Init
// (load a snapshot or build from the DB), Close (persist), snapshots,
// ingestion, dropped column families, stats, and the Open factories.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <new>

#include "../info_log.h"
#include "filtered_db_impl.h"
#include "rocksdb/env.h"

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::InfoLogLevel;
using ROCKSDB_NAMESPACE::IngestExternalFileArg;
using ROCKSDB_NAMESPACE::IngestExternalFileOptions;
using ROCKSDB_NAMESPACE::SequenceNumber;
using ROCKSDB_NAMESPACE::Status;

FilteredDBImpl::FilteredDBImpl(DB* db, const FilteredDBOptions& options,
                               std::string open_state)
    : FilteredDB(db),
      options_(options),
      open_state_(std::move(open_state)),
      stripes_(new StripeMutex[kStripes]),
      check_snapshots_(std::make_unique<CheckSnapshots>(db)),
      checker_(std::make_unique<DeleteChecker>(
          [this](std::vector<DeleteChecker::Check>* checks) {
            ResolveDeferredChecks(checks);
          },
          kMaxPendingChecks)) {}

FilteredDBImpl::~FilteredDBImpl() {
  CloseImpl().PermitUncheckedError();
  // A failed Close leaves the DB open; the base destructor closes it. No
  // thread may outlive the states, and no handle the DB.
  StopBackgroundWork();
  DestroyRetiredHandles();
}

Status FilteredDBImpl::Init(const std::vector<ColumnFamilyHandle*>& handles) {
  Status s = db_->GetDbIdentity(db_id_);
  if (!s.ok()) return s;
  {
    const ROCKSDB_NAMESPACE::DBOptions db_options = db_->GetDBOptions();
    info_log_ = db_options.info_log;
    statistics_ = db_options.statistics;
  }
  snapshots_ = std::make_unique<SnapshotStore>(
      db_->GetEnv(), options_.snapshot_dir, info_log_);
  const auto& wanted = options_.filtered_column_families;
  std::vector<bool> matched(wanted.size(), false);
  uint32_t max_id = 0;
  for (ColumnFamilyHandle* h : handles) {
    const std::string name = h->GetName();
    auto pos = std::find(wanted.begin(), wanted.end(), name);
    if (!wanted.empty() && pos == wanted.end()) continue;
    // A family opened twice (two descriptors) is filtered once, through
    // its first handle.
    const uint32_t id = h->GetID();
    if (std::any_of(states_.begin(), states_.end(),
                    [id](const auto& state) { return state->id == id; })) {
      continue;
    }
    // A name listed twice is one column family.
    for (size_t i = 0; i < wanted.size(); ++i) {
      if (wanted[i] == name) matched[i] = true;
    }
    if (h->GetComparator()->timestamp_size() != 0) {
      return Status::NotSupported("FilteredDB: column family '" + name +
                                  "' uses user-defined timestamps");
    }
    auto state = std::make_unique<CfState>();
    state->id = id;
    state->name = name;
    // Not the caller's default handle: DefaultColumnFamily() outlives it.
    state->handle = id == db_->DefaultColumnFamily()->GetID()
                        ? db_->DefaultColumnFamily()
                        : h;
    state->comparator = h->GetComparator();
    state->rebuilder = NewRebuilder(state.get());
    max_id = std::max(max_id, state->id);
    states_.push_back(std::move(state));
  }
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (!matched[i]) {
      return Status::InvalidArgument("FilteredDB: column family '" + wanted[i] +
                                     "' to filter was not opened");
    }
  }
  by_id_.assign(states_.empty() ? 0 : max_id + 1, nullptr);
  for (auto& state : states_) by_id_[state->id] = state.get();
  for (auto& state : states_) {
    s = LoadOrBuild(state.get());
    if (!s.ok()) return s;
  }
  initialized_ = true;
  return Status::OK();
}

Status FilteredDBImpl::LoadOrBuild(CfState* s) {
  try {
    s->filter = std::make_unique<LiveKeyFilter>(options_.filter, 1);
  } catch (const std::bad_alloc&) {
    return Status::MemoryLimit("FilteredDB: cannot allocate a filter");
  }
  if (!snapshots_->enabled()) {
    s->snapshot_status = "disabled";
  } else {
    std::string data;
    const std::string path = snapshots_->Path(s->id);
    Status st = snapshots_->Read(s->id, &data);
    if (st.IsNotFound() || st.IsPathNotFound()) {
      s->snapshot_status = "none";
    } else if (!st.ok()) {
      s->snapshot_status = "ignored: read error: " + st.ToString();
    } else {
      std::string why, stored;
      std::unique_ptr<Builder> builder =
          LiveKeyFilter::DecodeSnapshot(options_.filter, data, &stored, &why);
      if (builder != nullptr &&
          !Identity(s, db_->GetLatestSequenceNumber(), open_state_)
               .Matches(stored, &why)) {
        builder.reset();
      }
      if (builder != nullptr && s->filter->Replace(std::move(builder))) {
        s->snapshot_status = "used";
        s->loaded_from_snapshot = true;
      } else {
        s->snapshot_status = "ignored: " + why;
      }
    }
    Info("cuckoo live filter [%s]: snapshot %s: %s", s->name.c_str(),
         path.c_str(), s->snapshot_status.c_str());
    // Used or not, the file is consumed: from now on the DB moves on without
    // it (a crash, a lost unsynced write, an ingestion), so no later open may
    // match it by accident. A fresh one is written by Close / Persist.
    if (!st.IsNotFound() && !st.IsPathNotFound()) {
      snapshots_->Remove({s->id});
    }
  }
  ExclusiveLock lock(this);
  if (!s->loaded_from_snapshot) {
    uint64_t estimate = 0;
    db_->GetIntProperty(s->handle, "rocksdb.estimate-num-keys", &estimate);
    // Sized for the DB's estimate plus 1/64: a table built at the target
    // load (0.93 at f = 12) then stores about 14 bits per key. More keys
    // than that (an undercounting estimate, e.g. deletes of absent keys, or
    // writes during a background build) make the table split once, in the
    // background: twice the memory and the false positive rate until a
    // rebuild (a rescan, RebuildFilter, the next open without a snapshot).
    const uint64_t capacity = std::max<uint64_t>(
        options_.filter.initial_capacity, estimate + estimate / 64);
    Info(
        "cuckoo live filter [%s]: building from the DB%s (capacity %llu "
        "keys)",
        s->name.c_str(), options_.background_open ? " in the background" : "",
        static_cast<unsigned long long>(capacity));
    if (options_.background_open) {
      // Not ready (reads go to the DB) until the build is installed.
      s->filter->MarkNotReady();
      s->open_build = true;
      s->open_capacity = capacity;
      StartOpenBuildLocked(s);
      return Status::OK();
    }
    Status st = SyncRebuildLocked(s, capacity, {});
    if (!st.ok()) return st;
  }
  AfterWriteLocked(s);  // rescans if the DB had more keys than estimated
  return Status::OK();
}

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
  for (const auto& arg : args) {
    CfState* s = State(arg.column_family);
    if (s != nullptr) touched.push_back(s);
  }
  if (touched.empty()) return db_->IngestExternalFiles(args);
  // Not while a persist streams: an ingestion consumes no sequence number,
  // so a snapshot frozen before it and written after it (with a digest of
  // the state after it) would match the DB and miss the ingested keys.
  std::lock_guard<std::mutex> persisting(persist_mu_);
  ExclusiveLock lock(this);
  // An ingestion need not consume a sequence number: a snapshot written
  // before it must not be loaded after it (issue 9, item 1).
  RemoveSnapshots(touched);
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
  std::vector<CfState*> touched;
  for (ColumnFamilyHandle* cf : cfs) {
    CfState* s = State(cf);
    if (s != nullptr) touched.push_back(s);
  }
  ExclusiveLock lock(this);
  Status st = db_->DropColumnFamilies(cfs);
  if (st.ok()) {
    for (CfState* s : touched) {
      WaitAndCommitLocked(s);
      s->filter->MarkNotReady();
      s->dropped.store(true, std::memory_order_release);
    }
  }
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

Status FilteredDBImpl::GetFilterStats(ColumnFamilyHandle* cf,
                                      FilteredDBStats* stats) const {
  const CfState* s = State(cf);
  if (s == nullptr)
    return Status::NotFound("FilteredDB: column family has no filter");
  *stats = StatsOf(s);
  return Status::OK();
}

FilteredDBStats FilteredDBImpl::StatsOf(const CfState* s) const {
  FilteredDBStats stats;
  static_cast<LiveKeyFilterStats&>(stats) = s->filter->GetStats();
  s->counters.CopyTo(&stats);
  stats.reads_checked = s->reads.checked();
  stats.reads_absent = s->reads.absent();
  stats.loaded_from_snapshot = s->loaded_from_snapshot;
  stats.snapshot_status = s->snapshot_status;
  return stats;
}

void FilteredDBImpl::Info(const char* format, ...) const {
  va_list ap;
  va_start(ap, format);
  rocksdb_cuckoo::internal::LogV(info_log_.get(), InfoLogLevel::INFO_LEVEL, "",
                                 format, ap);
  va_end(ap);
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
      // The sequence recorded must be durable (WAL flushed and synced, or
      // unlogged writes flushed by the close itself).
      const bool durable =
          !unlogged_writes_ || !db_->GetDBOptions().avoid_flush_during_shutdown;
      persist = durable && db_->FlushWAL(/*sync=*/true).ok();
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

namespace {

using live::FilteredDBImpl;
using ROCKSDB_NAMESPACE::ColumnFamilyDescriptor;
using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::DBOptions;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::Status;

// Wraps an open DB; on failure closes it (and destroys `handles`).
Status Wrap(DB* raw, const std::vector<ColumnFamilyHandle*>& filter_handles,
            std::vector<ColumnFamilyHandle*>* caller_handles,
            const FilteredDBOptions& filtered_options, std::string open_state,
            std::unique_ptr<FilteredDB>* db) {
  std::unique_ptr<FilteredDBImpl> impl(
      new FilteredDBImpl(raw, filtered_options, std::move(open_state)));
  Status s = impl->Init(filter_handles);
  if (!s.ok()) {
    if (caller_handles != nullptr) {
      for (ColumnFamilyHandle* h : *caller_handles) {
        raw->DestroyColumnFamilyHandle(h).PermitUncheckedError();
      }
      caller_handles->clear();
    }
    return s;  // impl's destructor closes the DB
  }
  *db = std::move(impl);
  return Status::OK();
}

// Checks the options and, before DB::Open rewrites the MANIFEST, records
// the DB state that a snapshot written at the last Close must match.
Status BeforeOpen(const DBOptions& db_options, const std::string& name,
                  const FilteredDBOptions& filtered_options,
                  std::string* open_state) {
  const std::string invalid =
      ValidateLiveKeyFilterOptions(filtered_options.filter);
  if (!invalid.empty()) {
    return Status::InvalidArgument("FilteredDB: " + invalid);
  }
  open_state->clear();
  if (!filtered_options.snapshot_dir.empty()) {
    *open_state = live::DbStateDigest(db_options.env, name, db_options.wal_dir);
  }
  return Status::OK();
}

}  // namespace

Status FilteredDB::Open(const Options& options, const std::string& name,
                        const FilteredDBOptions& filtered_options,
                        std::unique_ptr<FilteredDB>* db) {
  db->reset();
  std::string open_state;
  Status s = BeforeOpen(options, name, filtered_options, &open_state);
  if (!s.ok()) return s;
  DB* raw = nullptr;
#if CUCKOO_DB_OPEN_UNIQUE_PTR
  std::unique_ptr<DB> opened;
  s = DB::Open(options, name, &opened);
  raw = opened.release();
#else
  s = DB::Open(options, name, &raw);
#endif
  if (!s.ok()) return s;
  return Wrap(raw, {raw->DefaultColumnFamily()}, nullptr, filtered_options,
              std::move(open_state), db);
}

Status FilteredDB::Open(
    const DBOptions& db_options, const std::string& name,
    const std::vector<ColumnFamilyDescriptor>& column_families,
    std::vector<ColumnFamilyHandle*>* handles,
    const FilteredDBOptions& filtered_options,
    std::unique_ptr<FilteredDB>* db) {
  db->reset();
  std::string open_state;
  Status s = BeforeOpen(db_options, name, filtered_options, &open_state);
  if (!s.ok()) return s;
  DB* raw = nullptr;
#if CUCKOO_DB_OPEN_UNIQUE_PTR
  std::unique_ptr<DB> opened;
  s = DB::Open(db_options, name, column_families, handles, &opened);
  raw = opened.release();
#else
  s = DB::Open(db_options, name, column_families, handles, &raw);
#endif
  if (!s.ok()) return s;
  return Wrap(raw, *handles, handles, filtered_options, std::move(open_state),
              db);
}

}  // namespace rocksdb_cuckoo
