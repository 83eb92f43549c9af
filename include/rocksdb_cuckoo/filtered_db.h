// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB: a RocksDB StackableDB that keeps an in-memory cuckoo filter of
// the live keys (cuckoo::LiveKeyFilter) of each opted-in column family, and
// answers point reads of absent keys (Get, MultiGet, GetEntity,
// GetMergeOperands, KeyMayExist) with NotFound without reading memtables or
// SST files. How it works: docs/live_filter.md; measured costs and gains:
// docs/sample_report/report.md (sections 3 and 4).
//
// Example (examples/filtered_db.cc):
//   rocksdb_cuckoo::FilteredDBOptions fopts;  // the default column family
//   fopts.snapshot_dir = path + "_cuckoo";    // optional: persist at Close
//   std::unique_ptr<rocksdb_cuckoo::FilteredDB> db;
//   ROCKSDB_NAMESPACE::Status s =
//       rocksdb_cuckoo::FilteredDB::Open(options, path, fopts, &db);
//   s = db->Put(ROCKSDB_NAMESPACE::WriteOptions(), "k", "v");
//   s = db->Get(ROCKSDB_NAMESPACE::ReadOptions(), "missing", &value);
//   // s.IsNotFound(), answered by the filter: no memtable or SST file read
//
// Contract:
// - No false negative: a read through FilteredDB finds every key the DB
//   holds, with any number of concurrent readers and writers, provided every
//   write to a filtered column family goes through this object (not
//   GetBaseDB()/GetRootDB(), a second DB instance, a compaction filter
//   that adds keys, or rocksdb::DeleteFilesInRange, which can bring older
//   values back: call RebuildFilter after it).
// - False positives: a read of an absent key reaches the DB with about the
//   filter's expected_fpr (FilteredDBStats; about 0.23% when built from the
//   keys with the default options, up to 4x that after splits).
// - Reads that bypass the filter (answered by the DB as usual): reads of a
//   family whose filter is not ready (being built after Open or an
//   ingestion), reads with a ReadOptions::snapshot, a timestamp,
//   ignore_range_deletions or a read_tier other than kReadAllTier, reads
//   asking for a timestamp output, and iterators.
// - Costs: a filtered read costs one filter probe (O(1), no lock). A write
//   of a key that becomes live inserts a fingerprint; one that the filter
//   says may be live costs one point read of the DB (deferred to a
//   background thread for a Delete; none for a key in recent_keys; one
//   MultiGet for the keys of a batch); DeleteRange lists the live keys of
//   its range first (O(keys in it)). Memory: about 14 bits per live key
//   after a build from the keys (default options), up to twice that after
//   a split, plus recent_keys; see GetFilterStats. Measured costs per
//   operation: docs/live_filter.md ("What each operation costs").
// - Thread safety: every method may be called from any thread, concurrently.
//   Writes (single keys and batches) run concurrently; the writes of one key
//   are serialized by a lock on the key (a batch holds its keys' locks for
//   its DB write; a writer with WriteOptions::no_slowdown may wait for it).
//   DeleteRange (alone or in a batch), ingestion, drops, RebuildFilter,
//   PersistFilterSnapshots, WaitForDeleteChecks and Close run alone (they
//   wait only for the writes already in flight).
// - Open and after a crash: a filter comes from its checkpoint in
//   snapshot_dir (the filter's image at a sequence number X, written by
//   PersistFilterSnapshots, the automatic checkpoints and Close), loaded on
//   a background thread while Open returns at once (reads unfiltered, writes
//   logged and replayed into it, until it is in), if the checkpoint is bound
//   to this DB: its identity and family; the state digest of the Close, or,
//   for a checkpoint written while the DB ran, no open by anything but
//   FilteredDB since (the MANIFEST chain in snapshot_dir/CUCKOO_LIVE_OPENS)
//   and the same WAL bytes up to X (64 KiB before the offset it recorded).
//   Writes after X (a crash, or a Close without persist_on_close) are
//   replayed onto the image from the WAL: every FilteredDB write carries
//   what it did to the filter in its own WriteBatch (a LogData record of 5
//   bytes per single-key write, 8 bytes per fingerprint of a batch; the
//   delete checks log their erasures in WAL records of their own), so the
//   load reads only the WAL after X: O(writes since the checkpoint), not
//   O(DB keys) (stats.snapshot_status "used, N writes replayed"). Where the
//   WAL cannot cover the writes after X (a write with disableWAL, a write
//   through GetBaseDB() or by another program, an ingestion, two-phase
//   commit markers, WAL files deleted) the checkpoint is removed
//   (stats.snapshot_status says why) and the filter is rebuilt from the DB,
//   also in the background. An ingestion into a family through FilteredDB
//   (filtered in this open or not) and a drop remove its checkpoint first.
//   LogData blobs whose first byte is 0xC5 are reserved for these records:
//   Write() and transaction commits refuse them (InvalidArgument).
//   The filter is never wrong, only rebuilt. Cost of a clean Open: reading
//   CURRENT, the checkpoint headers and 64 KiB of WAL before DB::Open,
//   then the image (table_bytes) and the WAL since X after it, in the
//   background (docs/recovery_design.md).
// - What stays on disk: with snapshot_dir, and when the application set
//   neither WAL_ttl_seconds nor WAL_size_limit_MB, Open sets
//   WAL_ttl_seconds (100 years) so that RocksDB moves flushed WAL files to
//   <wal_dir>/archive/ instead of deleting them (which also turns
//   recycle_log_file_num off), and each checkpoint deletes the archived
//   files whose writes all precede it: the archive holds the WAL written
//   since the last checkpoint plus one file (about the checkpoint interval,
//   e.g. 1/16 of the keys' writes with the default policy). With automatic
//   checkpoints off it grows until PersistFilterSnapshots. An application
//   that sets either option keeps its own retention (FilteredDB deletes
//   nothing; a checkpoint older than the WAL kept is rebuilt).
// - Not supported: comparators that treat different bytes as equal,
//   column families with user-defined timestamps, a TransactionDB under
//   FilteredDB (use FilteredTransactionDB, filtered_transaction_db.h),
//   secondary and read-only instances. Column families created after Open are
//   not filtered. Keys removed by a compaction filter or TTL leave harmless
//   extra positives until the next rebuild.
//
// Observability:
// - DB properties, per filtered column family (GetProperty, GetIntProperty,
//   GetMapProperty with a handle or the default family; false for a family
//   without a filter and for unknown "rocksdb.cuckoo." names; every other
//   name goes to the DB as usual):
//     rocksdb.cuckoo.live-filter-stats   text: every figure below, one line
//                                        per group; as a map property, the
//                                        figures by name (the names below)
//   Every integer figure (flags are 0 or 1) is also the integer property
//   rocksdb.cuckoo.<name> (a decimal string through GetProperty); the
//   others (load-factor, bits-per-key, expected-fpr, snapshot-status) are
//   in the map and the text only. The figures, by FilteredDBStats field:
//     table: num-keys (num_keys: fingerprints stored), capacity (slots),
//       num-buckets, load-factor, table-bytes, bits-per-key,
//       milli-bits-per-key (table bits per stored key x 1000, 0 when
//       empty), memory-bytes (all memory of the filter), expected-fpr
//     width: fingerprint-bits (f), width (w = f - level: bits compared),
//       level (splits since the table was built from keys)
//     reads: reads-checked (point reads that consulted the filter),
//       reads-answered-absent (reads_absent: answered NotFound by it),
//       not-ready (building: 1 while reads go to the DB unfiltered),
//       filter-lookups (lookups: reads' and writes'), filter-absent
//       (absent), read-retries
//     writes: inserts, erases, erase-misses, insert-failures, relocations,
//       range-deleted
//     splits: splits, insert-waits (inserts that waited for a split),
//       split-micros, last-split-micros, split-in-progress
//     checks: maybe-checks (point reads of writes that resolved a
//       "maybe"), maybe-checks-live, deferred-checks, check-errors,
//       pending-delete-checks (pending_checks), assumed-unique,
//       recent-key-hits, unchecked-deletes
//     rebuilds: rebuilds (tables replaced: open build, rescan,
//       RebuildFilter, ingestion, snapshot load), rescans (rebuilds from a
//       DB scan the filter asked for, or the unchecked deletes and the
//       delete checks lost in crashes), keys-scanned,
//       rebuild-in-progress,
//       rescan-wanted
//     snapshot at open: loaded-from-snapshot, snapshot-status,
//       checkpoints (written of the family since Open)
//   GetAggregatedIntProperty combines an integer property over the filtered
//   families: the sum, except width (the smallest), fingerprint-bits,
//   level and last-split-micros (the largest) and milli-bits-per-key (of
//   all their tables together).
//   Properties are read without a lock.
// - Statistics (DBOptions::statistics): each key the filter rules out adds 1
//   to rocksdb.bloom.filter.useful, rocksdb.memtable.miss and
//   rocksdb.number.keys.read (Get, GetEntity, GetMergeOperands,
//   KeyMayExist) or rocksdb.number.multiget.keys.read (MultiGet); a MultiGet
//   answered whole adds 1 to rocksdb.number.multiget.get. The latency
//   histograms time only reads that reach the DB.
// - PerfContext (PerfLevel kEnableCount or higher): each key ruled out adds
//   1 to bloom_sst_miss_count.
#ifndef ROCKSDB_CUCKOO_FILTERED_DB_H_
#define ROCKSDB_CUCKOO_FILTERED_DB_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuckoo/live_key_filter.h"
#include "rocksdb/db.h"
#include "rocksdb/utilities/stackable_db.h"

namespace rocksdb_cuckoo {

struct FilteredDBOptions {
  // Options of every filter: fingerprint bits, initial capacity, loads,
  // when to rescan (see cuckoo/live_key_filter.h). Checked by Open
  // (InvalidArgument).
  cuckoo::LiveKeyFilterOptions filter;
  // Names of the column families that get a filter (default: the default
  // family); empty means every column family passed to Open. A listed name
  // that Open is not given is InvalidArgument, before the DB is opened.
  std::vector<std::string> filtered_column_families = {
      ROCKSDB_NAMESPACE::kDefaultColumnFamilyName};
  // The application promises that Put/PutEntity only create keys that are
  // not live and Delete/SingleDelete only remove live keys, so writes skip
  // their point reads (Merge is still checked). Breaking the promise can
  // cause false negatives. Default false: exact in all cases.
  bool assume_unique_writes = false;
  // A Delete of a key the filter may contain is checked after its write, on
  // a background thread, at a DB snapshot holding the key as it was just
  // before the delete (true; shared by consecutive deletes), or by
  // a point read before it, on the writer's thread (false). Deferred, the
  // fingerprint stays until the check erases it (a transient extra positive;
  // WaitForDeleteChecks waits for them).
  bool defer_delete_checks = true;
  // Keys FilteredDB remembers as live after its own writes (a Put or Merge
  // it planned), so that a later Delete of one erases its fingerprint with
  // no read and no deferred check, and an overwrite reads nothing. Exact
  // (the keys' bytes are kept); the oldest are forgotten first, and writes
  // that take the exclusive writer lock (DeleteRange, ingestion, drops, a
  // write that needs a rescan) forget them all. About 48 bytes per key
  // (plus the key bytes beyond 24), allocated at Open. 0 disables it; more
  // than 2^24 (16,777,216) fails Open with InvalidArgument.
  uint64_t recent_keys = 65536;
  // Deletes without a liveness check (0, the default: off). A Delete (or
  // SingleDelete) of a key that the filter may contain and recent_keys does
  // not know costs a point read of the DB (deferred, see above), because a
  // fingerprint may be erased only for a key that was live. With a ratio
  // r > 0 such a Delete reads nothing and leaves the fingerprint: an extra
  // positive (reads of the deleted key go to the DB, and a later Put of it
  // reads the DB once) until the filter is rebuilt from the DB. That
  // rebuild (a background scan of the family, as a rescan;
  // background_rescan) starts once the unchecked deletes since the last one
  // reach r times the filter's keys (and at least 256). Trades a point read
  // per Delete for one scan of the family per r x keys deletes, and up to
  // r x keys extra entries (memory, false positives) between scans. Valid:
  // 0 to 16. Deferred delete checks that a crash loses (pending when the
  // process died) leave fingerprints too: the next open counts them (from
  // the WAL after its checkpoint; the checkpoint carries the count of
  // earlier ones) toward the same rescan, at r x keys, or at 1/16 of the
  // keys when r is 0 (at least 256 either way); one due then starts as the
  // open installs the filter, before any write.
  double unchecked_delete_ratio = 0;
  // Directory for filter snapshots (checkpoints; default "": none, every
  // Open then builds the filters from the DB). Created if missing, its last
  // component only (as RocksDB creates the DB directory): Open fails, before
  // the DB opens, with the IOError if its parent does not exist, and with
  // InvalidArgument if the path is not a directory. Files are
  // named CUCKOO_LIVE_FILTER-<column family id>, one per filtered family,
  // about GetFilterStats' table_bytes each, and CUCKOO_LIVE_OPENS (a few
  // lines). Trusted as much as the DB directory.
  std::string snapshot_dir;
  // Automatic checkpoints (with snapshot_dir; on by default): a background
  // thread writes one when the DB's sequence number moved by at least
  // max(min_writes, writes_fraction x the keys of the filters) since the
  // last, checking every check_interval_ms; never while a filter is not
  // ready. Each is a PersistFilterSnapshots (writers wait only for the
  // freeze, O(1)); on Linux the thread runs at nice 19. Valid: min_writes
  // >= 1, writes_fraction in [0, 1024], check_interval_ms in [1, 86400000]
  // (else Open returns InvalidArgument and opens nothing).
  struct CheckpointPolicy {
    bool automatic = true;
    uint64_t min_writes = 65536;
    double writes_fraction = 1.0 / 16;
    uint64_t check_interval_ms = 1000;
    // Called on the checkpoint thread after each automatic checkpoint: the
    // sequence number the newest checkpoint covers, this one's duration and
    // status. Default: none.
    std::function<void(uint64_t sequence, uint64_t micros,
                       const ROCKSDB_NAMESPACE::Status& status)>
        on_checkpoint;
  };
  CheckpointPolicy checkpoints;
  // Write snapshots in Close() / the destructor (needs snapshot_dir).
  bool persist_on_close = true;
  // A rescan (a rebuild from a scan of the DB, when the filter asks for it:
  // RescanWanted) runs in a background thread while writes go on (true), or
  // in the writer that notices (false; that write waits for a full scan,
  // O(keys in the family)). Called background_growth before 1.0.0.
  bool background_rescan = true;
  // Open without a usable snapshot: build each filter from the DB on a
  // background thread and return at once (true), or scan the DB before Open
  // returns (false). Until a filter is ready (stats.building false,
  // property rocksdb.cuckoo.not-ready 0) its reads go to the DB unfiltered,
  // and every Put/PutEntity/Merge reads its key first (the writes made
  // meanwhile are logged and replayed into the new table). A table that
  // overflows (more keys than the DB's estimate) is rebuilt larger, again in
  // the background. WaitForFilterRebuilds waits for the build.
  bool background_open = true;
  // Report rebuild progress every this many keys scanned (info log and
  // progress_callback; default 2^20). 0 disables periodic reports.
  uint64_t progress_interval_keys = uint64_t{1} << 20;
  // Called from the scanning thread (keep it short; it must not call into
  // this FilteredDB): periodically during a rebuild scan (done == false) and
  // once when it ends (done == true). Default: none.
  std::function<void(const std::string& column_family, uint64_t keys_scanned,
                     bool done)>
      progress_callback;
};

// The figures of one filtered column family: its filter's
// (cuckoo::LiveKeyFilterStats; "lookups" there also counts the writers'
// checks) plus FilteredDB's own database-side counters, since Open. Each
// field is read atomically; the fields are not one consistent snapshot.
struct FilteredDBStats : cuckoo::LiveKeyFilterStats {
  uint64_t maybe_checks = 0;       // point reads that resolved a "maybe"
  uint64_t maybe_checks_live = 0;  // ... that found the key live
  uint64_t deferred_checks = 0;    // ... made after a Delete, at a snapshot
  uint64_t check_errors = 0;       // ... that failed (resolved conservatively)
  uint64_t assumed_unique = 0;     // checks skipped (assume_unique_writes)
  uint64_t range_deleted = 0;      // live keys erased by DeleteRange
  uint64_t keys_scanned = 0;       // keys read by rebuild scans
  uint64_t rescans = 0;            // rebuilds from a DB scan the filter
                                   // asked for (RescanWanted, full table)
                                   // or the unchecked deletes (and the
                                   // delete checks lost in crashes)
                                   // started
  uint64_t pending_checks = 0;     // deferred delete checks not resolved yet
  uint64_t recent_key_hits = 0;    // writes of keys known live from
                                   // recent_keys: no point read, no check
  uint64_t unchecked_deletes = 0;  // deletes that left their fingerprint
                                   // (unchecked_delete_ratio)
  // Point reads (Get, GetEntity, GetMergeOperands, KeyMayExist, and each
  // key of a MultiGet) of this family that consulted the filter, and those
  // it answered "absent" (NotFound without the DB). Reads that bypass the
  // filter (see the file comment) are not counted.
  uint64_t reads_checked = 0;
  uint64_t reads_absent = 0;
  uint64_t checkpoints = 0;           // checkpoints written of this family
  bool loaded_from_snapshot = false;  // at open
  // How Open got the filter: "disabled" (no snapshot_dir), "none",
  // "loading" (background load), "used", "used, N writes replayed" (the
  // writes after the checkpoint, from the WAL), or "ignored: <why not>".
  std::string snapshot_status;
};

class FilteredDB : public ROCKSDB_NAMESPACE::StackableDB {
 public:
  // Opens the default column family only. Returns the DB::Open status, or
  // InvalidArgument for invalid FilteredDBOptions (nothing opened), or
  // NotSupported for a family with user-defined timestamps.
  static ROCKSDB_NAMESPACE::Status Open(
      const ROCKSDB_NAMESPACE::Options& options, const std::string& name,
      const FilteredDBOptions& filtered_options,
      std::unique_ptr<FilteredDB>* db);
  // Opens the given column families (as DB::Open); the handles are owned by
  // the caller and must be destroyed (DestroyColumnFamilyHandle) before the
  // FilteredDB, as with a plain DB. Starts loading each filter from its
  // checkpoint, or building it from a scan of the DB without a usable one,
  // on a background thread and returns at once
  // (FilteredDBOptions::background_open; false: the load, O(filter size),
  // or the scan, O(DB keys), runs first). Before DB::Open it reads CURRENT,
  // the checkpoint files' headers and 64 KiB of one WAL file per checkpoint
  // (and, for one written at Close, the MANIFEST and WAL files). See
  // DestroyColumnFamilyHandle.
  static ROCKSDB_NAMESPACE::Status Open(
      const ROCKSDB_NAMESPACE::DBOptions& db_options, const std::string& name,
      const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor>&
          column_families,
      std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*>* handles,
      const FilteredDBOptions& filtered_options,
      std::unique_ptr<FilteredDB>* db);

  // SingleDelete (inherited; filtered like Delete) keeps RocksDB's contract:
  // a key written (Put) at most once since its last deletion, no Merge.
  // Outside it FilteredDB and the DB can disagree until the filter is
  // rebuilt or the key written again (docs/live_filter.md, SingleDelete).
  using ROCKSDB_NAMESPACE::StackableDB::SingleDelete;

  // Stops background work, closes the DB, then writes the snapshots
  // (snapshot_dir and persist_on_close), bound to the files the DB left;
  // none after a write without WAL since the last PersistFilterSnapshots.
  // A checkpoint Open is still loading is waited for first; a build from a
  // scan is cancelled, and that family gets no snapshot (the next Open
  // scans, as this one did). Called by the destructor if not called before.
  // As DB::Close, returns Aborted and leaves the DB usable while a DB
  // snapshot is held.
  ROCKSDB_NAMESPACE::Status Close() override = 0;

  // Destroys a column family handle, as DB::DestroyColumnFamilyHandle, and
  // with the same freedom: any handle from Open or CreateColumnFamily, at
  // any time it is no longer in use, including the default family's handle
  // from Open (DefaultColumnFamily() stays valid; destroying that one is
  // refused with InvalidArgument). FilteredDB reads filtered families on its
  // own (delete checks, rebuild scans, flushes of unlogged writes): the
  // default family through DefaultColumnFamily(), the others through the
  // handle Open returned, which this call therefore keeps alive until Close
  // instead of destroying it (the caller must not use it any more).
  // Handles of filtered families must therefore be destroyed through this
  // method, as RocksDB asks for every handle: `delete handle` or
  // GetBaseDB()->DestroyColumnFamilyHandle would free a handle FilteredDB
  // still reads through.
  ROCKSDB_NAMESPACE::Status DestroyColumnFamilyHandle(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family) override = 0;

  // True if the column family (nullptr = default) has an active filter.
  virtual bool HasFilter(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family) const = 0;
  // Filter and DB-side counters of a filtered column family; NotFound if
  // the column family has no filter. Lock-free, O(1).
  virtual ROCKSDB_NAMESPACE::Status GetFilterStats(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family,
      FilteredDBStats* stats) const = 0;
  // The filter of a column family (nullptr if none), for direct lock-free
  // MayContain queries. Owned by this object.
  virtual const cuckoo::LiveKeyFilter* GetLiveKeyFilter(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family) const = 0;
  // Writes a snapshot (checkpoint) of every filter to snapshot_dir now
  // (temporary file, fsync, rename; InvalidArgument without snapshot_dir or
  // if it is not a directory). A filter Open is still loading or building
  // is waited for first; one not ready after that (a failed build, or after
  // a failed rebuild of an ingestion) gets none, and the result is
  // Incomplete, naming it. Writers wait only while each filter is frozen,
  // O(1) (and while writes made without WAL since the last persist are
  // flushed); the WAL sync and the streaming of the images (about
  // table_bytes each) run while writers go on. One persist at a time: a
  // concurrent call waits. Then deletes the archived WAL files older than
  // it (see the file comment); a later Open uses it with the writes made
  // after it replayed from the WAL.
  virtual ROCKSDB_NAMESPACE::Status PersistFilterSnapshots() = 0;
  // Rebuilds a filter from a scan of the DB now, O(keys in the family):
  // drops stale entries (e.g. of keys a compaction filter removed) and
  // restores the full fingerprint width. Writers wait; readers use the
  // current table until the new one is installed. NotFound if the family
  // has no filter.
  virtual ROCKSDB_NAMESPACE::Status RebuildFilter(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family) = 0;
  // Waits until no background rebuild (Open's build, a rescan) is in flight:
  // each finished one is installed or abandoned, and a rescan that the
  // installed table makes due (e.g. after a crash: unchecked_delete_ratio)
  // is started and waited for too. Writes wait meanwhile (it holds
  // FilteredDB's writer lock), for up to a scan of the family. Also
  // resolves pending delete checks.
  virtual void WaitForFilterRebuilds() = 0;
  // Waits until every deferred delete check of the writes so far is resolved
  // (defer_delete_checks): the filter then holds exactly one fingerprint per
  // live key, except fingerprints of deleted keys that an earlier crash left:
  // checks pending at the crash, checks a checkpoint's WAL replay does not
  // apply (those of a session opened before the checkpoint; those logged
  // after the DB's last write, until a later write follows them). Extra
  // positives, never a missing key, until the next rebuild: RebuildFilter,
  // or the rescan that the lost checks start once they reach 1/16 of the
  // keys (see unchecked_delete_ratio).
  virtual void WaitForDeleteChecks() = 0;

 protected:
  explicit FilteredDB(ROCKSDB_NAMESPACE::DB* db) : StackableDB(db) {}
};

}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_FILTERED_DB_H_
