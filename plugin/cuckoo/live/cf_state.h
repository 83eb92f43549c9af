// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The per-column-family state of FilteredDB (internal).
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_CF_STATE_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_CF_STATE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "cuckoo/live_key_filter.h"
#include "read_counters.h"
#include "rebuilder.h"
#include "rocksdb/comparator.h"
#include "rocksdb/db.h"
#include "rocksdb_cuckoo/filtered_db.h"
#include "util/relaxed_counters.h"

namespace rocksdb_cuckoo {
namespace live {

// FilteredDB's database-side counters of one column family (added to by the
// writers and the rebuild scans, read lock-free by GetFilterStats through
// CopyTo): e.g. counters.Add<&FilteredDBStats::maybe_checks>().
using CfCounters = cuckoo::internal::RelaxedCounters<
    FilteredDBStats, &FilteredDBStats::maybe_checks,
    &FilteredDBStats::maybe_checks_live, &FilteredDBStats::deferred_checks,
    &FilteredDBStats::check_errors, &FilteredDBStats::assumed_unique,
    &FilteredDBStats::range_deleted, &FilteredDBStats::keys_scanned,
    &FilteredDBStats::rescans, &FilteredDBStats::pending_checks,
    &FilteredDBStats::checkpoints, &FilteredDBStats::recent_key_hits,
    &FilteredDBStats::unchecked_deletes>;  // pending: queued or being resolved

// One filtered column family.
struct CfState {
  uint32_t id = 0;
  std::string name;
  // The handle FilteredDB reads the family through (checks, scans, flushes):
  // DefaultColumnFamily() for the default family (owned by the DB), else
  // the caller's handle from Open, which DestroyColumnFamilyHandle keeps
  // alive until Close (retired) once the caller destroys it.
  ROCKSDB_NAMESPACE::ColumnFamilyHandle* handle = nullptr;
  const ROCKSDB_NAMESPACE::Comparator* comparator = nullptr;
  std::unique_ptr<LiveKeyFilter> filter;
  std::atomic<bool> dropped{false};
  CfCounters counters;
  mutable ReadCounters reads;  // point reads that consulted the filter
  // How Open got the filter (FilteredDBStats::loaded_from_snapshot and
  // snapshot_status); set at open and by the background load.
  void SetSnapshotStatus(std::string status, bool loaded) {
    std::lock_guard<std::mutex> lock(status_mu);
    snapshot_status = std::move(status);
    loaded_from_snapshot = loaded;
  }
  void GetSnapshotStatus(std::string* status, bool* loaded) const {
    std::lock_guard<std::mutex> lock(status_mu);
    *status = snapshot_status;
    *loaded = loaded_from_snapshot;
  }
  std::unique_ptr<Rebuilder> rebuilder;
  int consecutive_failures = 0;  // writer lock
  // Deletes that left their fingerprint (unchecked_delete_ratio) since the
  // last rebuild started, and the count at which the ratio of the filter's
  // keys is checked next (UncheckedRebuildDue). Relaxed: they only decide
  // when to rebuild.
  std::atomic<uint64_t> unchecked{0};
  std::atomic<uint64_t> unchecked_limit{256};
  // While a background rebuild runs: the count of the table it will replace
  // (what a checkpoint of that table stores with it). Dropped when the
  // rebuild is installed or fails; added back to `unchecked` when it is
  // abandoned unfinished (StopBackgroundWork).
  std::atomic<uint64_t> unchecked_superseded{0};
  // The build of a filter that Open did not load from a snapshot, while it
  // is not installed (FilteredDBOptions::background_open); written under
  // filter_mu_, read anywhere.
  std::atomic<bool> open_build{false};
  uint64_t open_capacity = 0;  // the next attempt's table (keys); filter_mu_
  // Keys the last background scan counted (to size a retry after overflow).
  std::atomic<uint64_t> last_scan_keys{0};
  // The open build is the load of a checkpoint (then a scan if it fails).
  std::atomic<bool> open_load{false};
  // The last background build overflowed its table (set by the scan).
  std::atomic<bool> last_build_overflowed{false};
  // filter_mu_: the failed open build is started again at once (an
  // overflow, or a checkpoint that could not be used), not at the next
  // write; and after other failures (e.g. a read error of the scan) not
  // before this time (steady clock, microseconds).
  bool open_retry_now = false;
  uint64_t open_retry_after_micros = 0;
  uint64_t open_retry_backoff_micros = 0;

 private:
  mutable std::mutex status_mu;
  bool loaded_from_snapshot = false;
  std::string snapshot_status;
};

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_CF_STATE_H_
