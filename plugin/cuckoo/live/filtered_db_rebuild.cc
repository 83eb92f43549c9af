// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB rebuilds: a new table filled from a DB iterator, synchronously
// (open, ingestion, RebuildFilter, a full table) or on a background thread
// (when the filter asks for a rescan; rebuilder.h), then installed under
// filter_mu_.
#include <algorithm>
#include <chrono>
#include <new>

#include "filtered_db_impl.h"
#include "rocksdb/iterator.h"

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::Iterator;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Status;

namespace {

// Builders for `capacity` keys; a failed allocation is a Status, not a throw.
Status BeginRebuildChecked(LiveKeyFilter* filter, uint64_t capacity,
                           std::unique_ptr<LiveKeyFilter::Builder>* builder) {
  try {
    *builder = filter->BeginRebuild(capacity);
  } catch (const std::bad_alloc&) {
    filter->AbortRebuild();
    return Status::MemoryLimit(
        "FilteredDB: cannot allocate a filter table for " +
        std::to_string(capacity) + " keys");
  }
  return Status::OK();
}

ReadOptions ScanOptions() {
  ReadOptions ro;
  ro.total_order_seek = true;
  ro.fill_cache = false;
  ro.readahead_size = 2 << 20;
  return ro;
}

}  // namespace

void FilteredDBImpl::Progress(const CfState* s, uint64_t scanned, bool done) {
  if (done || (options_.progress_interval_keys != 0 &&
               scanned % options_.progress_interval_keys == 0)) {
    Info("cuckoo live filter [%s]: rebuild scan %s%llu keys", s->name.c_str(),
         done ? "finished, " : "", static_cast<unsigned long long>(scanned));
    if (options_.progress_callback)
      options_.progress_callback(s->name, scanned, done);
  }
}

Status FilteredDBImpl::ScanInto(CfState* s, Iterator* it, Builder* builder,
                                uint64_t* scanned, bool* overflow) {
  *scanned = 0;
  *overflow = false;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (s->rebuilder->cancelled()) {
      return Status::Incomplete("FilteredDB: rebuild cancelled");
    }
    // After an overflow the scan goes on counting, so that the next attempt
    // is sized from the real number of keys, not from an estimate.
    if (!*overflow && !builder->Add(cuckoo::HashKey(View(it->key())))) {
      *overflow = true;
    }
    ++*scanned;
    if (!*overflow) s->counters.Add<&FilteredDBStats::keys_scanned>();
    if (options_.progress_interval_keys != 0 &&
        *scanned % options_.progress_interval_keys == 0) {
      Progress(s, *scanned, false);
    }
  }
  return it->status();
}

Status FilteredDBImpl::SyncRebuildLocked(CfState* s, uint64_t capacity,
                                         const std::vector<uint64_t>& pending) {
  // Any background rebuild is superseded by this one.
  if (s->rebuilder->running()) WaitAndCommitLocked(s);
  // A recorded key may have left the DB without a FilteredDB write (a
  // compaction filter, a TTL): the new table has no copy for it, and a Delete
  // trusting the record would erase a colliding key's copy.
  recent_keys_.Clear();
  // The scan drops what unchecked deletes left before now (a failed one
  // forgets the count too, as a background one does: no rescan storm).
  s->unchecked.store(0, std::memory_order_relaxed);
  const uint64_t max_keys = s->filter->max_capacity();
  // No attempt limit: every overflow sizes the next table from the keys
  // actually counted (an estimate of 0 must not fail Open).
  for (;;) {
    capacity = std::max<uint64_t>(capacity, pending.size() + 1);
    if (capacity > max_keys) {
      return Status::Aborted(
          "FilteredDB: more keys than the largest filter table holds");
    }
    std::unique_ptr<Builder> builder;
    Status st = BeginRebuildChecked(s->filter.get(), capacity, &builder);
    if (!st.ok()) return st;
    bool overflow = false;
    for (uint64_t h : pending) {
      if (!builder->Add(cuckoo::KeyHash(h))) {
        overflow = true;
        break;
      }
    }
    uint64_t scanned = 0;
    std::unique_ptr<Iterator> it(db_->NewIterator(ScanOptions(), s->handle));
    bool scan_overflow = false;
    st = ScanInto(s, it.get(), builder.get(), &scanned, &scan_overflow);
    if (!st.ok()) {
      s->filter->AbortRebuild();
      return st;
    }
    overflow |= scan_overflow;
    if (!overflow) {
      Progress(s, scanned, true);
      if (s->filter->Replace(std::move(builder))) {
        TableInstalledLocked(s);
        return Status::OK();
      }
    }
    const uint64_t counted = scanned + pending.size();
    const uint64_t next = std::max<uint64_t>(
        capacity * 2,
        counted + counted / 4 + static_cast<uint64_t>(s->filter->size()));
    Info(
        "cuckoo live filter [%s]: table for %llu keys overflowed (%llu keys "
        "counted), retrying for %llu",
        s->name.c_str(), static_cast<unsigned long long>(capacity),
        static_cast<unsigned long long>(counted),
        static_cast<unsigned long long>(next));
    capacity = next;
  }
}

std::unique_ptr<Rebuilder> FilteredDBImpl::NewRebuilder(CfState* s) {
  return std::make_unique<Rebuilder>(
      [this, s](Iterator* it, Builder* builder) {
        TestHook("BackgroundRebuild:BeforeScan");
        uint64_t scanned = 0;
        bool overflow = false;
        Status st = TestFail("BackgroundRebuild:Scan")
                        ? Status::IOError("FilteredDB: injected scan error")
                        : ScanInto(s, it, builder, &scanned, &overflow);
        s->last_scan_keys.store(scanned, std::memory_order_relaxed);
        s->last_build_overflowed.store(overflow, std::memory_order_relaxed);
        if (st.ok() && overflow)
          st = Status::Incomplete("FilteredDB: rebuild table overflowed");
        if (st.ok()) Progress(s, scanned, true);
        return st;
      },
      [this, s] { InstallFromRebuildThread(s); });
}

bool FilteredDBImpl::RescanDueAfterInstall(CfState* s) const {
  // Not after a failed rebuild (a later write retries, with a back-off).
  return !s->rebuilder->running() && !s->open_build &&
         s->consecutive_failures == 0 &&
         (s->filter->RescanWanted() || UncheckedRebuildDue(s));
}

void FilteredDBImpl::InstallFromRebuildThread(CfState* s) {
  bool start = false;
  {
    std::lock_guard<std::mutex> lock(filter_mu_);
    CommitIfReadyLocked(s);
    const bool retry =
        s->open_build && !s->rebuilder->running() && s->open_retry_now;
    if (retry) s->open_retry_now = false;
    start = retry || RescanDueAfterInstall(s);
  }
  if (!start) return;
  // An open build that overflowed, or a checkpoint load that could not be
  // used: started again at once (a scan, larger after an overflow), so that
  // reads do not stay unfiltered until the next write. Other failures (a
  // read error of the scan) wait for a later write and a back-off
  // (InstallResultLocked). And a rescan due once a table is installed: a
  // checkpoint whose load counted enough deletes whose checks a crash lost
  // (LoadCheckpoint), rather than at the next delete. Under the exclusive
  // lock, as every start; not once Close began (cancelled:
  // StopBackgroundWork sets it before it takes the lock).
  ExclusiveLock lock(this);
  if (s->rebuilder->cancelled() || s->dropped.load(std::memory_order_relaxed))
    return;
  AfterWriteLocked(s);
}

void FilteredDBImpl::TableInstalledLocked(CfState* s) {
  s->consecutive_failures = 0;
  s->unchecked_superseded.store(0, std::memory_order_relaxed);
  // Every table FilteredDB installs after Open (the two Replace calls of
  // this file) ends Open's background build: open_build implies not ready.
  s->open_build = false;
  s->open_load = false;
  s->open_retry_now = false;
  s->open_retry_after_micros = 0;
  s->open_retry_backoff_micros = 0;
}

namespace {
uint64_t SteadyMicros() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}
}  // namespace

void FilteredDBImpl::StartOpenBuildLocked(CfState* s) {
  // After a failure other than an overflow, not before the back-off ends.
  if (s->open_retry_after_micros != 0 &&
      SteadyMicros() < s->open_retry_after_micros) {
    return;
  }
  s->open_load = false;
  const uint64_t counted = s->last_scan_keys.load(std::memory_order_relaxed);
  s->open_capacity =
      std::max<uint64_t>({s->open_capacity, counted + counted / 4,
                          options_.filter.initial_capacity});
  StartBackgroundRebuildLocked(s, s->open_capacity);
}

void FilteredDBImpl::StartBackgroundRebuildLocked(CfState* s,
                                                  uint64_t capacity) {
  recent_keys_.Clear();  // as in SyncRebuildLocked
  std::unique_ptr<Builder> builder;
  if (!BeginRebuildChecked(s->filter.get(), capacity, &builder).ok()) {
    ++s->consecutive_failures;
    Info("cuckoo live filter [%s]: cannot allocate a table for %llu keys",
         s->name.c_str(), static_cast<unsigned long long>(capacity));
    return;
  }
  // The new table drops what unchecked deletes left before now; the count
  // stays with the current table until the new one is installed (a
  // checkpoint taken meanwhile stores the current table: Identity).
  s->unchecked_superseded.fetch_add(
      s->unchecked.exchange(0, std::memory_order_relaxed),
      std::memory_order_relaxed);
  // Created under the exclusive lock (no write in flight), together with
  // BeginRebuild: the iterator's implicit snapshot and the start of the
  // delta log are the same instant.
  std::unique_ptr<Iterator> it(db_->NewIterator(ScanOptions(), s->handle));
  s->rebuilder->Start(std::move(it), std::move(builder));
}

void FilteredDBImpl::InstallResultLocked(CfState* s,
                                         std::unique_ptr<Builder> builder,
                                         const Status& scan_status) {
  if (scan_status.ok() && s->filter->Replace(std::move(builder))) {
    TableInstalledLocked(s);
    Info("cuckoo live filter [%s]: new table installed (%llu keys, load %.3f)",
         s->name.c_str(), static_cast<unsigned long long>(s->filter->size()),
         s->filter->GetStats().load_factor);
    return;
  }
  s->filter->AbortRebuild();
  ++s->consecutive_failures;
  // The current table stays. Its count before the rebuild is forgotten, as
  // it was before checkpoints stored it: adding it back would start the
  // next rescan at the next delete, one after another while rebuilds fail.
  s->unchecked_superseded.store(0, std::memory_order_relaxed);
  if (s->open_build) {
    // Open's build failed. A checkpoint that could not be loaded or
    // installed, and an overflow (then with twice the table), start a scan
    // at once (InstallFromRebuildThread); any other failure (a read error)
    // is retried by a later write, after a back-off of 1 s doubling up to
    // 60 s, with the same table.
    const bool load = s->open_load.exchange(false);
    if (load && scan_status.ok()) {
      s->SetSnapshotStatus("ignored: cannot install it", false);
    }
    const bool overflow =
        !load && (scan_status.ok() || s->last_build_overflowed.load());
    if (load || overflow) {
      s->open_retry_now = true;
      if (overflow) s->open_capacity *= 2;
    } else {
      s->open_retry_now = false;
      s->open_retry_backoff_micros = std::min<uint64_t>(
          60000000,
          std::max<uint64_t>(1000000, 2 * s->open_retry_backoff_micros));
      s->open_retry_after_micros =
          SteadyMicros() + s->open_retry_backoff_micros;
    }
  }
  Info("cuckoo live filter [%s]: background rebuild abandoned: %s",
       s->name.c_str(),
       scan_status.ok() ? "overflow while replaying writes"
                        : scan_status.ToString().c_str());
}

void FilteredDBImpl::CommitIfReadyLocked(CfState* s) {
  std::unique_ptr<Builder> builder;
  Status st;
  if (s->rebuilder->running() && s->rebuilder->TakeResult(&builder, &st)) {
    InstallResultLocked(s, std::move(builder), st);
  }
}

void FilteredDBImpl::CommitFinishedRebuildsLocked() {
  for (auto& s : states_) {
    if (s->rebuilder->ready()) CommitIfReadyLocked(s.get());
  }
}

void FilteredDBImpl::WaitAndCommitLocked(CfState* s) {
  if (!s->rebuilder->running()) return;
  std::unique_ptr<Builder> builder;
  Status st;
  s->rebuilder->WaitResult(&builder, &st);
  InstallResultLocked(s, std::move(builder), st);
}

void FilteredDBImpl::WaitForFilterRebuilds() {
  ExclusiveLock lock(this);
  for (auto& s : states_) {
    WaitAndCommitLocked(s.get());
    if (!s->dropped.load(std::memory_order_relaxed) &&
        RescanDueAfterInstall(s.get())) {
      // The rescan the installed table wants (InstallFromRebuildThread
      // would start it after this lock), waited for too.
      AfterWriteLocked(s.get());
      WaitAndCommitLocked(s.get());
    }
    if (s->open_build && !s->dropped.load(std::memory_order_relaxed)) {
      // The open build overflowed: finished here (a synchronous rebuild
      // sizes itself from the keys it counts).
      Status st = SyncRebuildLocked(s.get(), s->open_capacity, {});
      if (!st.ok()) {
        Info("cuckoo live filter [%s]: build failed: %s", s->name.c_str(),
             st.ToString().c_str());
      }
    }
  }
}

void FilteredDBImpl::StopBackgroundWork() {
  for (auto& s : states_) s->rebuilder->Stop();
  checker_->Stop();  // resolves what is queued, releases the snapshots
  {
    ExclusiveLock lock(this);
    for (auto& s : states_) {
      if (s->rebuilder->Abandon()) {
        s->filter->AbortRebuild();
        // The fingerprints the rebuild would have dropped stay with the
        // current table, and count again toward a rescan (a Close that
        // RocksDB refuses keeps the DB open: hostile review 10).
        s->unchecked.fetch_add(
            s->unchecked_superseded.exchange(0, std::memory_order_relaxed),
            std::memory_order_relaxed);
      }
    }
  }
  // A rebuild thread that restarted an open build under the lock just
  // before the first Stop cancelled it (InstallFromRebuildThread): no start
  // can follow the lock above, and this joins that last scan.
  for (auto& s : states_) s->rebuilder->Stop();
}

Status FilteredDBImpl::RebuildFilter(ColumnFamilyHandle* cf) {
  CfState* s = State(cf);
  if (s == nullptr)
    return Status::NotFound("FilteredDB: column family has no filter");
  ExclusiveLock lock(this);
  WaitAndCommitLocked(s);
  return SyncRebuildLocked(s, s->filter->RescanCapacity(), {});
}

}  // namespace live
}  // namespace rocksdb_cuckoo
