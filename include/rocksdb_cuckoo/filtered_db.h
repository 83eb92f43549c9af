// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB: a RocksDB StackableDB that keeps a cuckoo::LiveKeyFilter (an
// in-memory cuckoo filter of the live user keys) per opted-in column family and
// answers Get / MultiGet / KeyMayExist for absent keys without descending
// into the memtables and SST files.
//
//   rocksdb_cuckoo::FilteredDBOptions fopts;       // default column family
//   fopts.snapshot_dir = path;                     // optional persistence
//   std::unique_ptr<rocksdb_cuckoo::FilteredDB> db;
//   rocksdb::Status s =
//       rocksdb_cuckoo::FilteredDB::Open(options, path, fopts, &db);
//   db->Put(rocksdb::WriteOptions(), "k", "v");
//   db->Get(rocksdb::ReadOptions(), "missing", &value);   // NotFound, no I/O
//
// Guarantee: a read through FilteredDB never misses a live key (the filter is
// a superset of the live keys at every instant), with any number of
// concurrent readers and writers, provided every write to a filtered column
// family goes through this object (not GetBaseDB()/GetRootDB(), not a second
// DB instance, not a compaction filter that adds keys).
//
// Writes. Keys that become live are inserted into the filter BEFORE the DB
// write, keys that stop being live are erased AFTER it. Single-key writes
// (Put, PutEntity, Delete, SingleDelete, Merge) of different keys run
// concurrently (RocksDB group-commits their DB writes); writes of one key
// are serialized (a lock stripe per key). Batches (Write) and DeleteRange
// run alone: they wait for in-flight single-key writes and block new ones
// (a waiting batch goes before single-key writes that arrive after it, so it
// waits only for those already in flight; the same holds for the other
// exclusive operations: WaitForDeleteChecks, RebuildFilter,
// PersistFilterSnapshots, IngestExternalFile(s), DropColumnFamily, a
// rescan start, Close). Writes to other column families only are not
// serialized.
//
// Exact deletion. A fingerprint is erased only for a key that really was
// live, and a key that is already live is not inserted twice. When the filter
// says "maybe present" for the key of a Put/Merge/Delete, one point read of
// the DB decides (counted in stats.maybe_checks); a key the filter reports
// absent needs no read. For a Delete (defer_delete_checks, the default) the
// read happens after the write, on a background thread, at a DB snapshot
// that holds the key as it was just before the delete (consecutive deletes
// share one snapshot, and their checks one MultiGet); its fingerprint stays
// until then (a transient extra positive). With
// FilteredDBOptions::assume_unique_writes the application promises that
// Put/PutEntity only create keys that are not live and Delete/SingleDelete only
// remove live keys, and the reads are skipped (Merge is still checked).
// Breaking that promise can cause false negatives.
//
// DeleteRange (alone or in a batch) is exact: before the write the live keys
// of the range are listed with a DB iterator (O(keys in range) time, 8 bytes
// of memory per key), and erased after it. Other writes wait meanwhile.
//
// Growth. When a table reaches options.filter.max_load it doubles from its
// own contents in the filter's background thread (a split: no DB read; one
// fingerprint bit fewer, so the false positive rate doubles at equal load;
// see cuckoo/live_key_filter.h). When splits made the fingerprints narrower
// than options.filter.rescan_below_bits (or the table cannot split any
// more), a table is filled from a DB iterator in a background thread while
// writes continue (they are also logged and replayed), then swapped in
// atomically; readers use the old table until the swap. Writes are never
// refused: if the table fills before the new one is ready, the writer waits
// for it (or rebuilds synchronously). The filter never shrinks.
//
// Open and recovery. Each filter is rebuilt from the DB at open with a
// key-only scan (progress in the info log and the progress callback), unless
// snapshot_dir holds a snapshot whose DB identity, column family, sequence
// number AND on-disk state digest (the MANIFEST named by CURRENT and the WAL
// files, name + content, read before DB::Open) equal the DB's, and whose
// checksum and structure validate. Snapshots are written at Close()
// (persist_on_close, after the DB closed, bound to the files it left) and by
// PersistFilterSnapshots() (after FlushWAL + sync). A snapshot file is
// consumed at open (removed whether used or not) and removed before an
// ingestion, so a crash, a lost unsynced write or an ingestion can never make
// an old snapshot match later. A stale or corrupted snapshot is ignored and
// the filter rebuilt; the rebuild grows as needed, whatever the DB's key
// estimate says.
//
// Trust boundary: the snapshot directory is trusted as much as the DB
// directory. The digest detects another open of the DB in between (any
// ingestion, flush or compaction writes the MANIFEST) and byte copies of a
// DB directory that diverged, unless two copies end with byte-identical
// MANIFEST and WAL files and equal sequence numbers but different SST
// contents (not produced by RocksDB itself; e.g. hand-edited SST files).
//
// Reads that bypass the filter (answered by the DB as usual): every read of
// a family whose filter is not ready (being built after Open, see
// FilteredDBOptions::background_open, or after an ingestion); reads with a
// ReadOptions::snapshot, a timestamp, ignore_range_deletions, or any read_tier
// other than kReadAllTier; Get/MultiGet that ask for a timestamp output;
// iterators. Every Get and MultiGet overload is filtered on RocksDB 7.6-8.x
// and 9.0+ alike (from 9.0 through the two overloads the others call).
// Column families created after Open, or dropped, are not filtered.
// IngestExternalFile(s) into a filtered column family rebuilds its filter
// (reads bypass it meanwhile). Column families with user-defined timestamps
// cannot be filtered.
//
// Observability. Reads the filter answers never reach the DB, so FilteredDB
// counts them itself:
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
//       pending-delete-checks (pending_checks), assumed-unique
//     rebuilds: rebuilds (tables replaced: open build, rescan,
//       RebuildFilter, ingestion, snapshot load), rescans (rebuilds from a
//       DB scan the filter asked for), keys-scanned, rebuild-in-progress,
//       rescan-wanted
//     snapshot at open: loaded-from-snapshot, snapshot-status
//   GetAggregatedIntProperty combines an integer property over the filtered
//   families: the sum, except width (the smallest), fingerprint-bits,
//   level and last-split-micros (the largest) and milli-bits-per-key (of
//   all their tables together).
//   Properties are read without a lock (a read counter sums 32 per-thread
//   slots).
// - Statistics (DBOptions::statistics, if set): each key the filter rules
//   out counts as RocksDB counts a read of an absent key that an SST filter
//   rules out: rocksdb.number.keys.read (Get, GetEntity, GetMergeOperands,
//   KeyMayExist) or rocksdb.number.multiget.keys.read (MultiGet),
//   rocksdb.memtable.miss and rocksdb.bloom.filter.useful, +1 each; a
//   MultiGet answered whole adds rocksdb.number.multiget.get (RocksDB counts
//   the calls that reach it). So keys read, memtable hit + miss and
//   useful / keys read keep their meaning. The latency histograms (db.get,
//   db.multiget) only time reads that reach the DB: timing a filtered read
//   would cost about as much as the read.
// - PerfContext: with PerfLevel kEnableCount or higher, each key ruled out
//   adds 1 to bloom_sst_miss_count (RocksDB adds 1 per SST filter that rules
//   a key out).
//
// Limitations: keys are identified by their bytes, so a comparator that
// treats different byte strings as equal is not supported. A compaction
// filter or TTL that removes keys leaves their fingerprints behind (harmless
// extra positives, cleaned by the next rebuild). A failed DB write leaves the
// filter entries it inserted (same). Transactions (TransactionDB) and
// secondary/read-only instances are not covered.
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
  // Options of every filter (sizing, load limits, growth, seed).
  cuckoo::LiveKeyFilterOptions filter;
  // Names of the column families that get a filter; empty means every
  // column family passed to Open.
  std::vector<std::string> filtered_column_families = {
      ROCKSDB_NAMESPACE::kDefaultColumnFamilyName};
  // Skip the point reads of Put/PutEntity/Delete/SingleDelete (see the file
  // comment). Default false: exact in all cases.
  bool assume_unique_writes = false;
  // A Delete of a key the filter may contain is checked after its write, on
  // a background thread, at a DB snapshot holding the key as it was just
  // before the delete (true; shared by consecutive deletes), or by
  // a point read before it, on the writer's thread (false). Deferred, the
  // fingerprint stays until the check erases it (a transient extra positive;
  // WaitForDeleteChecks waits for them).
  bool defer_delete_checks = true;
  // Directory for filter snapshots ("" = no persistence). Files are named
  // CUCKOO_LIVE_FILTER-<column family id>.
  std::string snapshot_dir;
  // Write snapshots in Close() / the destructor (needs snapshot_dir).
  bool persist_on_close = true;
  // Rescan: rebuild from the DB (when the filter asks for it, RescanWanted)
  // in a background thread (true) or synchronously in the writer that notices
  // (false; the write then waits for a full scan).
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
  // progress_callback). 0 disables periodic reports.
  uint64_t progress_interval_keys = uint64_t{1} << 20;
  // Called from the scanning thread: periodically during a rebuild scan
  // (done == false) and once when it ends (done == true).
  std::function<void(const std::string& column_family, uint64_t keys_scanned,
                     bool done)>
      progress_callback;
};

// The figures of one filtered column family: its filter's
// (cuckoo::LiveKeyFilterStats, from cuckoo::LiveKeyFilter::GetStats; "lookups"
// there also counts the writers' checks) plus FilteredDB's own database-side
// counters.
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
  uint64_t pending_checks = 0;     // deferred delete checks not resolved yet
  // Point reads (Get, GetEntity, GetMergeOperands, KeyMayExist, and each
  // key of a MultiGet) of this family that consulted the filter, and those
  // it answered "absent" (NotFound without the DB). Reads that bypass the
  // filter (see the file comment) are not counted.
  uint64_t reads_checked = 0;
  uint64_t reads_absent = 0;
  bool loaded_from_snapshot = false;  // at open
  std::string snapshot_status;        // at open: "used", "none", or why ignored
};

class FilteredDB : public ROCKSDB_NAMESPACE::StackableDB {
 public:
  // Opens the default column family only.
  static ROCKSDB_NAMESPACE::Status Open(
      const ROCKSDB_NAMESPACE::Options& options, const std::string& name,
      const FilteredDBOptions& filtered_options,
      std::unique_ptr<FilteredDB>* db);
  // Opens the given column families (as DB::Open); the handles are owned by
  // the caller and must be destroyed (DestroyColumnFamilyHandle) before the
  // FilteredDB, as with a plain DB. Loads each filter from a usable snapshot
  // before returning (O(filter size)); without one, starts its build from a
  // scan of the DB on a background thread and returns at once
  // (FilteredDBOptions::background_open; false: the scan runs first, O(DB
  // keys)). See DestroyColumnFamilyHandle.
  static ROCKSDB_NAMESPACE::Status Open(
      const ROCKSDB_NAMESPACE::DBOptions& db_options, const std::string& name,
      const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor>&
          column_families,
      std::vector<ROCKSDB_NAMESPACE::ColumnFamilyHandle*>* handles,
      const FilteredDBOptions& filtered_options,
      std::unique_ptr<FilteredDB>* db);

  // SingleDelete (inherited; filtered like Delete). RocksDB defines it only
  // for a key written (Put) at most once since its last deletion, with no
  // Merge. In the undefined case FilteredDB and the DB can disagree: after
  // Put(k, v1), Flush, Put(k, v2), SingleDelete(k), the flush (or a
  // compaction) that meets the SingleDelete cancels it against v2 only, so
  // the older v1 is live again in the DB, while the filter erased k when the
  // SingleDelete found it live: Get(k) answers NotFound through FilteredDB
  // and v1 through GetBaseDB() (seen with RocksDB 7.8.3 after the flush),
  // until a rebuild of the filter (RebuildFilter, a rescan, an open without
  // a usable snapshot) or a new write of k.
  using ROCKSDB_NAMESPACE::StackableDB::SingleDelete;

  // Persists snapshots (if configured), stops background work and closes
  // the DB. Called by the destructor if not called before. As DB::Close,
  // returns Aborted and leaves the DB usable while a snapshot is held.
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
  // the column family has no filter. Thread-safe, lock-free.
  virtual ROCKSDB_NAMESPACE::Status GetFilterStats(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family,
      FilteredDBStats* stats) const = 0;
  // The filter of a column family (nullptr if none), for direct lock-free
  // MayContain queries. Owned by this object.
  virtual const cuckoo::LiveKeyFilter* GetLiveKeyFilter(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family) const = 0;
  // Writes a snapshot of every filter to snapshot_dir now (temporary file,
  // fsync, rename). Writers wait only while the filters are frozen at a
  // quiescent point: in-flight writes finish, unlogged writes are flushed
  // (if any since the last persist) and each filter's image is frozen
  // (O(1)); then, writers going on, the WAL is flushed and synced and the
  // images (the tables' bytes,
  // see GetFilterStats' table_bytes) are then streamed to the files while
  // writers go on, the first write to each 512-bucket chunk not yet
  // written saving a 4 KiB pre-image. One persist at a time (a concurrent
  // call waits). A snapshot is used at open only if the DB is opened in
  // exactly the state it was taken in (see the file comment).
  virtual ROCKSDB_NAMESPACE::Status PersistFilterSnapshots() = 0;
  // Rebuilds a filter from the DB now (synchronously; writers wait, readers
  // bypass the filter meanwhile). Drops stale entries.
  virtual ROCKSDB_NAMESPACE::Status RebuildFilter(
      ROCKSDB_NAMESPACE::ColumnFamilyHandle* column_family) = 0;
  // Waits until no background rebuild is in flight (each finished one is
  // installed or abandoned); also resolves pending delete checks.
  virtual void WaitForFilterRebuilds() = 0;
  // Waits until every deferred delete check of the writes so far is resolved
  // (defer_delete_checks): the filter then holds exactly one fingerprint per
  // live key.
  virtual void WaitForDeleteChecks() = 0;

 protected:
  explicit FilteredDB(ROCKSDB_NAMESPACE::DB* db) : StackableDB(db) {}
};

}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_FILTERED_DB_H_
