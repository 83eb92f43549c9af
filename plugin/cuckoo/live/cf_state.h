// The per-column-family state of FilteredDB (internal).
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_CF_STATE_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_CF_STATE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "cuckoo/live_key_filter.h"
#include "read_counters.h"
#include "rebuilder.h"
#include "rocksdb/comparator.h"
#include "rocksdb/db.h"
#include "rocksdb_cuckoo/filtered_db.h"

namespace rocksdb_cuckoo {
namespace live {

// FilteredDB's database-side counters of one column family (written by the
// writers and the rebuild scans, read lock-free by GetFilterStats).
struct CfCounters {
  std::atomic<uint64_t> maybe_checks{0};
  std::atomic<uint64_t> maybe_checks_live{0};
  std::atomic<uint64_t> deferred_checks{0};
  std::atomic<uint64_t> check_errors{0};
  std::atomic<uint64_t> assumed_unique{0};
  std::atomic<uint64_t> range_deleted{0};
  std::atomic<uint64_t> keys_scanned{0};
  std::atomic<uint64_t> growths{0};
  std::atomic<uint64_t> pending_checks{0};  // queued or being resolved

  void Add(std::atomic<uint64_t>* counter, uint64_t n = 1) {
    counter->fetch_add(n, std::memory_order_relaxed);
  }
  // Copies the counters into the FilteredDB-specific fields of *stats.
  void CopyTo(FilteredDBStats* stats) const;
};

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
  bool loaded_from_snapshot = false;  // set at open
  std::string snapshot_status;        // set at open
  std::unique_ptr<Rebuilder> rebuilder;
  int consecutive_failures = 0;  // writer lock
  // The build of a filter that Open did not load from a snapshot, while it
  // is not installed (FilteredDBOptions::background_open); written under
  // filter_mu_, read anywhere.
  std::atomic<bool> open_build{false};
  uint64_t open_capacity = 0;  // the next attempt's table (keys); filter_mu_
  // Keys the last background scan counted (to size a retry after overflow).
  std::atomic<uint64_t> last_scan_keys{0};
};

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_CF_STATE_H_
