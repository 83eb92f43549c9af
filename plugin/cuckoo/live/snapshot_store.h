// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Filter snapshot (checkpoint) files of FilteredDB (internal): where they
// live, how they are written (temporary file, fsync, rename) and removed
// (then the directory is synced), the list of FilteredDB opens since the
// newest checkpoint, and the digest of the DB's on-disk state a checkpoint
// written at Close is bound to (what the rest is bound to:
// checkpoint_file.h).
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_SNAPSHOT_STORE_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_SNAPSHOT_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rocksdb/env.h"
#include "rocksdb/status.h"

namespace rocksdb_cuckoo {
namespace live {

// Digest of the DB's on-disk state that a snapshot is bound to: the MANIFEST
// named by CURRENT (name and content) and every WAL file (name and content).
// An ingestion, a flush, a compaction or any open of the DB writes a new
// MANIFEST or changes it; a lost or different unflushed write changes a WAL.
// Computed when the DB is closed (at Close, before Open) or while it runs
// (PersistFilterSnapshots: a racing background job only makes the digest
// mismatch later, which is safe). "" if it cannot be computed.
std::string DbStateDigest(ROCKSDB_NAMESPACE::Env* env,
                          const std::string& dbname,
                          const std::string& wal_dir);

// The snapshot files of one FilteredDB: <dir>/CUCKOO_LIVE_FILTER-<cf id>.
class SnapshotStore {
 public:
  SnapshotStore(ROCKSDB_NAMESPACE::Env* env, std::string dir,
                std::shared_ptr<ROCKSDB_NAMESPACE::Logger> info_log)
      : env_(env), dir_(std::move(dir)), info_log_(std::move(info_log)) {}

  bool enabled() const { return !dir_.empty(); }
  // Creates the directory if it is missing; InvalidArgument if the path
  // exists and is not a directory.
  ROCKSDB_NAMESPACE::Status Prepare() const;
  std::string Path(uint32_t cf_id) const;
  // The column family ids of the snapshot files present.
  std::vector<uint32_t> List() const;
  // NotFound / PathNotFound when there is no snapshot.
  ROCKSDB_NAMESPACE::Status Read(uint32_t cf_id, std::string* data) const;
  // Receives the pieces of a snapshot; false stops the write.
  using Sink = std::function<bool(std::string_view piece)>;
  // Writes the snapshot `produce` streams into the sink it is given (no
  // copy of the whole snapshot in memory): temporary file, fsync, rename.
  // `produce` returns false when it stopped early (the sink's false, or its
  // own failure); then nothing is renamed and the result is not OK.
  ROCKSDB_NAMESPACE::Status WriteStream(
      uint32_t cf_id, const std::function<bool(const Sink&)>& produce) const;
  // Removes the snapshots of these column families and syncs the directory,
  // so that no later open can use them (failures are logged, and the first
  // is returned).
  ROCKSDB_NAMESPACE::Status Remove(const std::vector<uint32_t>& cf_ids) const;

  // <dir>/CUCKOO_LIVE_OPENS: the MANIFESTs of the FilteredDB opens since the
  // newest checkpoint, in order, the checkpoint's own first
  // (docs/recovery_design.md 3.1). Empty if missing or unreadable.
  std::vector<std::string> ReadOpens() const;
  // Replaces the list (temporary file, fsync, rename).
  ROCKSDB_NAMESPACE::Status WriteOpens(
      const std::vector<std::string>& manifests) const;

 private:
  ROCKSDB_NAMESPACE::Env* const env_;
  const std::string dir_;
  const std::shared_ptr<ROCKSDB_NAMESPACE::Logger> info_log_;
};

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_SNAPSHOT_STORE_H_
