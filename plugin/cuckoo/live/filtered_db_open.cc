// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB open: the Open factories (options check, what the checkpoints
// are checked against before DB::Open, DB::Open), Init (which column
// families get a filter) and LoadOrBuild (each filter from a usable
// checkpoint, loaded in the background, or from a DB scan; design in
// docs/recovery_design.md). Persist and Close: filtered_db_persist.cc.
#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <new>
#include <random>

#include "../info_log.h"
#include "filtered_db_impl.h"

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::InfoLogLevel;
using ROCKSDB_NAMESPACE::Status;

namespace {

// A random nonce per FilteredDB object (never 0): the session of its delete
// checker's WAL records (effect_log::CheckerRecord).
uint64_t NewSession() {
  std::random_device rd;
  const uint64_t session =
      (uint64_t{rd()} << 32) ^ rd() ^
      static_cast<uint64_t>(
          std::chrono::steady_clock::now().time_since_epoch().count());
  return session == 0 ? 1 : session;
}

}  // namespace

FilteredDBImpl::FilteredDBImpl(DB* db, const FilteredDBOptions& options,
                               PreOpenFacts pre_open)
    : FilteredDB(db),
      options_(options),
      pre_open_(std::move(pre_open)),
      default_handle_(db->DefaultColumnFamily()),
      stripes_(new StripeMutex[kStripes]),
      check_snapshots_(std::make_unique<CheckSnapshots>(db)),
      recent_keys_(kStripes, options.recent_keys),
      checker_(std::make_unique<DeleteChecker>(
          [this](std::vector<DeleteChecker::Check>* checks) {
            ResolveDeferredChecks(checks);
          },
          kMaxPendingChecks)),
      session_(NewSession()) {}

FilteredDBImpl::~FilteredDBImpl() {
  CloseImpl().PermitUncheckedError();
  // A failed Close leaves the DB open; the base destructor closes it. No
  // thread may outlive the states, and no handle the DB.
  StopBackgroundWork();
  DestroyRetiredHandles();
}

Status FilteredDBImpl::Init(const std::vector<ColumnFamilyHandle*>& handles) {
  if (recent_keys_.allocation_failed()) {
    return Status::MemoryLimit("FilteredDB: cannot allocate recent_keys");
  }
  Status s = db_->GetDbIdentity(db_id_);
  if (!s.ok()) return s;
  // No write went through this object yet: the DB's sequence and MANIFEST
  // as DB::Open left them.
  open_sequence_ = db_->GetLatestSequenceNumber();
  last_checkpoint_seq_ = open_sequence_;
  open_manifest_ = CurrentManifest(db_->GetEnv(), db_->GetName());
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
  // Checkpoint files of families not filtered now: their preloads are
  // waited for and dropped here (LoadOrBuild takes the others').
  for (auto& [cf, found] : pre_open_.checkpoints) {
    if (cf >= by_id_.size() || by_id_[cf] == nullptr) found.preload.reset();
  }
  for (auto& state : states_) {
    s = LoadOrBuild(state.get());
    if (!s.ok()) return s;
  }
  initialized_ = true;
  StartCheckpointThread();
  return Status::OK();
}

Status FilteredDBImpl::LoadOrBuild(CfState* s) {
  try {
    s->filter = std::make_unique<LiveKeyFilter>(options_.filter, 1);
  } catch (const std::bad_alloc&) {
    return Status::MemoryLimit("FilteredDB: cannot allocate a filter");
  }
  uint64_t estimate = 0;
  db_->GetIntProperty(s->handle, "rocksdb.estimate-num-keys", &estimate);
  // Sized for the DB's estimate plus 1/64: a table built at the target
  // load (0.93 at f = 12) then stores about 14 bits per key. More keys
  // than that (an undercounting estimate, e.g. deletes of absent keys, or
  // writes during a background build) make the table split once, in the
  // background: twice the memory and the false positive rate until a
  // rebuild (a rescan, RebuildFilter, the next open without a snapshot).
  const uint64_t capacity = std::max<uint64_t>(options_.filter.initial_capacity,
                                               estimate + estimate / 64);
  bool loaded = false;
  if (!snapshots_->enabled()) {
    s->SetSnapshotStatus("disabled", false);
  } else if (pre_open_.checkpoints.count(s->id) == 0) {
    s->SetSnapshotStatus("none", false);
  } else if (options_.background_open) {
    // Loaded on the family's rebuild thread; until it is installed reads go
    // to the DB, and the writes made meanwhile are logged (BeginRebuildLog)
    // and replayed into it by Replace. If it cannot be used, the scan build
    // starts from there (InstallResultLocked).
    ExclusiveLock lock(this);
    s->filter->MarkNotReady();
    const uint64_t ticket = s->filter->BeginRebuildLog();
    s->open_build = true;
    s->open_load = true;
    s->open_capacity = capacity;
    s->SetSnapshotStatus("loading", false);
    s->rebuilder->StartJob([this, s, ticket](std::unique_ptr<Builder>* out) {
      return LoadCheckpoint(s, ticket, out);
    });
    return Status::OK();
  } else {
    std::unique_ptr<Builder> builder;
    if (LoadCheckpoint(s, /*ticket=*/0, &builder).ok()) {
      loaded = s->filter->Replace(std::move(builder));
      if (!loaded) s->SetSnapshotStatus("ignored: cannot install it", false);
    }
  }
  ExclusiveLock lock(this);
  if (!loaded) {
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

Status FilteredDBImpl::LoadCheckpoint(CfState* s, uint64_t ticket,
                                      std::unique_ptr<Builder>* out) {
  TestHook("LoadCheckpoint:Begin");
  const std::string path = snapshots_->Path(s->id);
  auto refuse = [&](const std::string& why, bool remove) {
    s->SetSnapshotStatus("ignored: " + why, false);
    Info("cuckoo live filter [%s]: checkpoint %s not used: %s%s",
         s->name.c_str(), path.c_str(), why.c_str(),
         remove ? " (removed)" : "");
    // Never usable for this DB: gone, so that no later open trips on it.
    if (remove) snapshots_->Remove({s->id}).PermitUncheckedError();
    return Status::Incomplete("FilteredDB: checkpoint not used: " + why);
  };
  const auto found = pre_open_.checkpoints.find(s->id);
  auto opening = [&] {
    OpeningDb db;
    db.db_id = db_id_;
    db.cf_id = s->id;
    db.cf_name = s->name;
    db.sequence = open_sequence_;
    db.db_state = pre_open_.db_state;
    db.manifest = pre_open_.manifest;
    db.opens = found->second.chain;
    db.wal_error = found->second.wal_error;
    return db;
  };
  // The identity peeked before DB::Open is judged once, here: the image
  // read below is used only if the identity it holds is those same bytes
  // (a file replaced since the peek is refused), and the judgement is a
  // function of the identity and of what this open read before DB::Open.
  if (found == pre_open_.checkpoints.end()) {
    return refuse("the checkpoint file changed while the DB was opened", false);
  }
  CheckpointIdentity id;
  std::string undecodable;
  const bool decoded =
      CheckpointIdentity::Decode(found->second.identity, &id, &undecodable);
  Judgement j;
  if (decoded) j = JudgeCheckpoint(id, opening());
  const bool usable =
      decoded && (j.verdict == Verdict::kUse ||
                  (j.verdict == Verdict::kReplay && replay_wal_));
  // This open continues the checkpoint's chain as soon as the identity is
  // judged usable, before the image is read (a crash during the read or
  // the decode, tens of ms per million keys, then leaves the next open the
  // same checkpoint; before the replay too, which may take a while). If the
  // image is not used after all, the extra entry only makes the next open
  // reject the checkpoint.
  if (usable) AppendOpen(ChainEntry{id.manifest, id.wal});
  TestHook("LoadCheckpoint:BeforeRead");
  // Read and validated here, or while DB::Open ran (an Open that waits for
  // the load started it: BeforeOpen).
  DecodedCheckpoint d;
  if (found->second.preload && found->second.preload->valid()) {
    d = found->second.preload->get();
  } else {
    d = ReadCheckpoint(db_->GetEnv(), path, options_.filter);
  }
  if (!d.read.ok()) return refuse("read error: " + d.read.ToString(), false);
  if (s->rebuilder->cancelled()) {
    return Status::Incomplete("FilteredDB: checkpoint load cancelled");
  }
  std::unique_ptr<Builder> builder = std::move(d.builder);
  if (builder == nullptr) return refuse(d.why, true);
  if (found->second.identity != d.identity) {
    return refuse("the checkpoint file changed while the DB was opened", false);
  }
  if (!decoded) return refuse(undecodable, true);
  if (j.verdict == Verdict::kReject) return refuse(j.why, true);
  if (!usable) {
    return refuse(
        "stale: " + std::to_string(open_sequence_ - id.sequence) +
            " sequence numbers written after it (the WAL of a TransactionDB "
            "is not replayed: its prepare records)",
        true);
  }
  std::string used = "used";
  uint64_t lost = 0;  // deletes after X whose fingerprints the replay keeps
  if (j.verdict == Verdict::kReplay) {
    // The writes after X: their filter effects, read back from the WAL
    // (docs/recovery_design.md 3.4), applied to the image. Those after
    // open_sequence_ are in the delta log that Replace replays.
    bool room = true;
    uint64_t misses = 0;
    ReplaySink sink;
    sink.insert = [&](uint32_t, uint64_t hash) {
      if (room && !builder->Add(cuckoo::KeyHash(hash))) room = false;
    };
    sink.erase = [&](uint32_t, uint64_t hash) {
      if (!builder->Erase(cuckoo::KeyHash(hash))) ++misses;
    };
    // A delete left to a check or unchecked, whose fingerprint the filter
    // holds at that point: it may be left there (a check lost in a crash).
    // One the filter rules out (a batch's delete of a key that was not
    // live, mostly) left nothing.
    uint64_t deferred_held = 0;
    sink.deferred = [&](uint32_t, uint64_t hash) {
      if (builder->MayContain(cuckoo::KeyHash(hash))) ++deferred_held;
    };
    TestHook("LoadCheckpoint:BeforeReplay");
    const ReplayResult r = ReplayWal(
        db_,
        {ReplayTarget{s->id, id.sequence, id.session, id.erase_generation}},
        open_sequence_, session_, sink,
        [s] { return s->rebuilder->cancelled(); });
    if (r.failure == ReplayFailure::kCancelled) {
      return Status::Incomplete("FilteredDB: checkpoint load cancelled");
    }
    if (!r.ok()) {
      return refuse(std::string("cannot replay the WAL after it (") +
                        ReplayFailureName(r.failure) + "): " + r.reason,
                    true);
    }
    if (!room) return refuse("no room for the replayed writes", true);
    if (misses != 0) {
      // Every logged erasure is of a key whose fingerprint the filter
      // held: a miss means the image and the log disagree.
      return refuse("the replayed writes erase " + std::to_string(misses) +
                        " fingerprints the checkpoint does not hold",
                    true);
    }
    used = "used, " + std::to_string(r.stats.ops) + " writes replayed";
    Info(
        "cuckoo live filter [%s]: replayed %llu writes after the checkpoint "
        "(%llu WAL records, %llu bytes; %llu inserts, %llu erases, %llu by "
        "delete checks, %llu of sessions opened before it skipped)",
        s->name.c_str(), static_cast<unsigned long long>(r.stats.ops),
        static_cast<unsigned long long>(r.stats.records),
        static_cast<unsigned long long>(r.stats.bytes),
        static_cast<unsigned long long>(r.stats.inserts),
        static_cast<unsigned long long>(r.stats.erases),
        static_cast<unsigned long long>(r.stats.checker_erases),
        static_cast<unsigned long long>(r.stats.checker_skipped));
    if (deferred_held > r.stats.checker_erases) {
      lost = deferred_held - r.stats.checker_erases;
    }
  }
  // The fingerprints the image and the replay may keep for deleted keys
  // (the image's count, and deletes whose checks a crash lost or that were
  // unchecked): they count toward the next rescan (UncheckedRebuildDue).
  if (id.unchecked + lost > 0) {
    s->unchecked.fetch_add(id.unchecked + lost, std::memory_order_relaxed);
    Info(
        "cuckoo live filter [%s]: up to %llu fingerprints of deleted keys "
        "counted toward a rescan (%llu from the checkpoint, %llu deletes "
        "after it left unchecked or their checks lost in a crash)",
        s->name.c_str(), static_cast<unsigned long long>(id.unchecked + lost),
        static_cast<unsigned long long>(id.unchecked),
        static_cast<unsigned long long>(lost));
  }
  if (ticket != 0) LiveKeyFilter::AdoptRebuild(builder.get(), ticket);
  s->SetSnapshotStatus(used, true);
  Info(
      "cuckoo live filter [%s]: checkpoint %s %s (sequence %llu, %llu "
      "keys)",
      s->name.c_str(), path.c_str(), used.c_str(),
      static_cast<unsigned long long>(id.sequence),
      static_cast<unsigned long long>(builder->size()));
  *out = std::move(builder);
  return Status::OK();
}

void FilteredDBImpl::AppendOpen(const ChainEntry& checkpoint) {
  // Once per open, on the first usable checkpoint. No persist can reset the
  // list before: the automatic checkpoints skip while a filter loads, and
  // PersistFilterSnapshots waits for the loads.
  if (open_manifest_.empty() || open_appended_.exchange(true)) return;
  std::vector<ChainEntry> chain = pre_open_.opens;
  if (chain.empty() || !(chain.front() == checkpoint)) chain = {checkpoint};
  // This open's own WAL prefix (DB::Open may have released the WAL files
  // the previous entry was bound to): its marker, synced.
  ChainEntry self{open_manifest_, WalBinding()};
  Status st = WriteCheckpointMarker();
  if (st.ok()) st = db_->FlushWAL(/*sync=*/true);
  if (st.ok()) st = ComputeWalBinding(db_, &self.wal);
  if (st.ok()) {
    if (chain.back().manifest == self.manifest) chain.pop_back();
    chain.push_back(self);
    st = snapshots_->WriteOpens(FormatChain(chain));
  }
  if (!st.ok()) {
    Info("cuckoo live filter: cannot record this open in %s: %s",
         options_.snapshot_dir.c_str(), st.ToString().c_str());
  }
}

void FilteredDBImpl::Info(const char* format, ...) const {
  va_list ap;
  va_start(ap, format);
  rocksdb_cuckoo::internal::LogV(info_log_.get(), InfoLogLevel::INFO_LEVEL, "",
                                 format, ap);
  va_end(ap);
}

}  // namespace live

namespace live {

// A day: longer intervals are surely a unit mistake.
constexpr uint64_t kMaxCheckIntervalMs = 24 * 3600 * 1000;

Status CheckFamiliesToFilter(const std::vector<std::string>& opened,
                             const FilteredDBOptions& filtered_options) {
  for (const std::string& name : filtered_options.filtered_column_families) {
    if (std::find(opened.begin(), opened.end(), name) == opened.end()) {
      return Status::InvalidArgument("FilteredDB: column family '" + name +
                                     "' to filter is not opened");
    }
  }
  return Status::OK();
}

Status CheckFamiliesToFilter(
    const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor>& opened,
    const FilteredDBOptions& filtered_options) {
  std::vector<std::string> names;
  for (const auto& d : opened) names.push_back(d.name);
  return CheckFamiliesToFilter(names, filtered_options);
}

// Declared in filtered_db_impl.h (also used by filtered_txn_db.cc).
void RetainWal(const FilteredDBOptions& filtered_options,
               ROCKSDB_NAMESPACE::DBOptions* db_options) {
  if (filtered_options.snapshot_dir.empty() ||
      db_options->WAL_ttl_seconds != 0 || db_options->WAL_size_limit_MB != 0) {
    return;
  }
  db_options->WAL_ttl_seconds = kRetainWalSeconds;
}

// Declared in filtered_db_impl.h (also used by filtered_txn_db.cc).
// Checks the options (snapshot_dir must be a directory or creatable) and,
// before DB::Open writes a new MANIFEST and releases WAL files, reads what
// the checkpoints are checked against (checkpoint_file.h).
Status BeforeOpen(const ROCKSDB_NAMESPACE::DBOptions& db_options,
                  const std::string& name,
                  const FilteredDBOptions& filtered_options,
                  PreOpenFacts* pre_open) {
  const std::string invalid =
      ValidateLiveKeyFilterOptions(filtered_options.filter);
  if (!invalid.empty()) {
    return Status::InvalidArgument("FilteredDB: " + invalid);
  }
  if (!(filtered_options.unchecked_delete_ratio >= 0 &&
        filtered_options.unchecked_delete_ratio <= 16)) {
    return Status::InvalidArgument(
        "FilteredDB: unchecked_delete_ratio must be in [0, 16]");
  }
  if (filtered_options.recent_keys > RecentKeys::kMaxKeys) {
    return Status::InvalidArgument("FilteredDB: recent_keys above " +
                                   std::to_string(RecentKeys::kMaxKeys));
  }
  const FilteredDBOptions::CheckpointPolicy& policy =
      filtered_options.checkpoints;
  if (!(policy.writes_fraction >= 0 && policy.writes_fraction <= 1024)) {
    return Status::InvalidArgument(
        "FilteredDB: checkpoints.writes_fraction must be in [0, 1024]");
  }
  if (policy.min_writes == 0) {
    return Status::InvalidArgument(
        "FilteredDB: checkpoints.min_writes must be at least 1");
  }
  if (policy.check_interval_ms == 0 ||
      policy.check_interval_ms > kMaxCheckIntervalMs) {
    return Status::InvalidArgument(
        "FilteredDB: checkpoints.check_interval_ms must be in [1, " +
        std::to_string(kMaxCheckIntervalMs) + "]");
  }
  *pre_open = PreOpenFacts();
  if (filtered_options.snapshot_dir.empty()) return Status::OK();
  const SnapshotStore store(db_options.env, filtered_options.snapshot_dir,
                            nullptr);
  Status s = GatherPreOpenFacts(db_options.env, name, db_options.wal_dir, store,
                                pre_open);
  if (!s.ok()) return s;
  // With background_open the images are read and validated by the loads
  // after DB::Open: a preload would compete with DB::Open for the CPU while
  // Open does not wait for it anyway (at 16M keys, 28 MB read and decoded,
  // the process used 2.1x the CPU time of a plain DB::Open until Open
  // returned; without it 1.04x). An Open that waits for the loads starts
  // them here, to run while DB::Open does, except for an image whose
  // identity is unreadable or whose WAL binding does not hold (never used:
  // its load after Open reports why).
  if (filtered_options.background_open) return Status::OK();
  for (auto& [cf, found] : pre_open->checkpoints) {
    if (found.identity.empty() || !found.wal_error.empty()) continue;
    found.preload = PreloadCheckpoint(db_options.env, store.Path(cf),
                                      filtered_options.filter);
  }
  return Status::OK();
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
            const FilteredDBOptions& filtered_options,
            live::PreOpenFacts pre_open, std::unique_ptr<FilteredDB>* db) {
  std::unique_ptr<FilteredDBImpl> impl(
      new FilteredDBImpl(raw, filtered_options, std::move(pre_open)));
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

}  // namespace

Status FilteredDB::Open(const Options& options, const std::string& name,
                        const FilteredDBOptions& filtered_options,
                        std::unique_ptr<FilteredDB>* db) {
  db->reset();
  Status s = live::CheckFamiliesToFilter(
      {ROCKSDB_NAMESPACE::kDefaultColumnFamilyName}, filtered_options);
  if (!s.ok()) return s;
  live::PreOpenFacts pre_open;
  s = live::BeforeOpen(options, name, filtered_options, &pre_open);
  if (!s.ok()) return s;
  Options retaining = options;
  live::RetainWal(filtered_options, &retaining);
  DB* raw = nullptr;
#if CUCKOO_DB_OPEN_UNIQUE_PTR
  std::unique_ptr<DB> opened;
  s = DB::Open(retaining, name, &opened);
  raw = opened.release();
#else
  s = DB::Open(retaining, name, &raw);
#endif
  if (!s.ok()) return s;
  return Wrap(raw, {raw->DefaultColumnFamily()}, nullptr, filtered_options,
              std::move(pre_open), db);
}

Status FilteredDB::Open(
    const DBOptions& db_options, const std::string& name,
    const std::vector<ColumnFamilyDescriptor>& column_families,
    std::vector<ColumnFamilyHandle*>* handles,
    const FilteredDBOptions& filtered_options,
    std::unique_ptr<FilteredDB>* db) {
  db->reset();
  Status s = live::CheckFamiliesToFilter(column_families, filtered_options);
  if (!s.ok()) return s;
  live::PreOpenFacts pre_open;
  s = live::BeforeOpen(db_options, name, filtered_options, &pre_open);
  if (!s.ok()) return s;
  DBOptions retaining = db_options;
  live::RetainWal(filtered_options, &retaining);
  DB* raw = nullptr;
#if CUCKOO_DB_OPEN_UNIQUE_PTR
  std::unique_ptr<DB> opened;
  s = DB::Open(retaining, name, column_families, handles, &opened);
  raw = opened.release();
#else
  s = DB::Open(retaining, name, column_families, handles, &raw);
#endif
  if (!s.ok()) return s;
  return Wrap(raw, *handles, handles, filtered_options, std::move(pre_open),
              db);
}

}  // namespace rocksdb_cuckoo
