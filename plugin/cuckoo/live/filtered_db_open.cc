// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB open: the Open factories (options check, the DB state a
// snapshot must match, DB::Open), Init (which column families get a filter)
// and LoadOrBuild (each filter from a usable snapshot or from a DB scan).
// Persist and Close: filtered_db_persist.cc.
#include <algorithm>
#include <cstdarg>
#include <new>

#include "../info_log.h"
#include "filtered_db_impl.h"

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::InfoLogLevel;
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

void FilteredDBImpl::Info(const char* format, ...) const {
  va_list ap;
  va_start(ap, format);
  rocksdb_cuckoo::internal::LogV(info_log_.get(), InfoLogLevel::INFO_LEVEL, "",
                                 format, ap);
  va_end(ap);
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
