// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDBImpl: the StackableDB that keeps one LiveKeyFilter per opted-in
// column family (internal). See include/rocksdb_cuckoo/filtered_db.h for the
// contract. The class is split by concern, as RocksDB's db/db_impl/:
//   filtered_db_read.cc     Get / MultiGet / KeyMayExist answered by filters
//   filtered_db_write.cc    the write protocol (write_plan.h plans it)
//   filtered_db_rebuild.cc  synchronous and background rebuilds (rescans;
//                           rebuilder.h runs the background scan)
//   filtered_db_open.cc     the Open factories, Init, LoadOrBuild
//   filtered_db_persist.cc  PersistFilterSnapshots, Close, snapshot
//                           identities (snapshot_store.h)
//   filtered_db_families.cc ingestion, dropped column families, handles
//   filtered_db_properties.cc  GetFilterStats and the "rocksdb.cuckoo." DB
//                           properties
//
// Write protocol:
//   1. Plan: for every key the write touches, decide whether it is live
//      before the write (filter "absent" => no; DeleteRange => iterator;
//      otherwise a point read, or the assume_unique_writes promise) and after
//      it (replaying the write's operations in order).
//   2. Insert the keys that become live into the filter.
//   3. Write to the DB.
//   4. Erase the keys that stopped being live (only if the write succeeded).
// At every instant the filter is therefore a superset of the live keys, and
// a reader (which only reads the filter, then the DB) cannot miss a key.
//
// Locks, in acquisition order:
//   persist_mu_  PersistFilterSnapshots, Close and ingestions: one snapshot
//       write at a time, and no ingestion while one streams. A persist
//       holds write_mu_ exclusively only to freeze the filters (O(1) each)
//       at a quiescent point (no drain of the delete checks), then syncs the
//       WAL and streams the images to files while writers go on
//       (copy-on-write checkpoints).
//   write_mu_ (WriterLock)  shared: single-key writes (Put, PutEntity,
//       Delete, SingleDelete, Merge) and batches without a DeleteRange,
//       which run concurrently, so RocksDB groups their DB writes.
//       Exclusive (ExclusiveLock): DeleteRange (alone or in a batch), a
//       write whose table needs a rescan first, rescan start, rebuilds,
//       ingestion, drops, snapshots, close; it first drains the deferred
//       delete checks. Exclusive lockers are preferred (writer_lock.h): one
//       waits only for the writes already in flight, however many writers
//       keep coming. Not recursive: no path asks for it while it holds it
//       (the delete checker, the rebuild threads and the inline resolve of a
//       full check queue take filter_mu_ only).
//   stripes of (column family, key) (StripeLock, stripe_lock.h)  every write
//       under the shared lock holds the stripes of all its keys, a batch
//       taking them in ascending order (so writers never deadlock): the
//       writes of one key are serialized, so a point read under the stripe
//       sees every earlier write of the key and no later one (exactness
//       without a global lock). The stripes also guard the key's check
//       snapshot mark (delete_checker.h) and its RecentKeys partition.
//   filter_mu_  the Rebuilder's state and the rebuild calls of the filter
//       (BeginRebuild, Replace, AbortRebuild); held briefly. Insert and
//       Erase need no lock here: LiveKeyFilter serializes its writers. A
//       persist's freeze holds it after write_mu_, so that no install comes
//       between a table's freeze and the read of its unchecked count.
//   effects_mu_  (a leaf) the delete checker's erasures: the WAL record that
//       logs them (effect_log.h), then the erasures, under it; a persist's
//       freeze takes it to record the last of them (erase_generation_).
// Every write logs what it did to the filters in its own WriteBatch, after
// its operations (effect_log.h; docs/recovery_design.md section 4), so that a
// checkpoint plus the WAL after it give the filter after a crash.
// A Delete of a key the filter may contain does not read before its write:
// under the stripe it picks a DB snapshot shared with other deletes
// (CheckSnapshots: one that holds every earlier write of the key), writes,
// and leaves the check to the DeleteChecker (delete_checker.h), which reads
// the queued keys at their snapshots with one MultiGet per snapshot and
// erases the fingerprints of the keys that were live.
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_FILTERED_DB_IMPL_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_FILTERED_DB_IMPL_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cf_state.h"
#include "checkpoint_file.h"
#include "delete_checker.h"
#include "effect_log.h"
#include "recent_keys.h"
#include "rocksdb/version.h"
#include "rocksdb_cuckoo/filtered_db.h"
#include "snapshot_store.h"
#include "stripe_lock.h"
#include "test_hooks.h"
#include "write_plan.h"
#include "writer_lock.h"

// RocksDB 9.0: Get/MultiGet overloads final (see the read entry points).
#define CUCKOO_DB_READS_FINAL (ROCKSDB_MAJOR >= 9)
// RocksDB 10.0: DB::Open takes std::unique_ptr<DB>* (11.0 drops DB**).
#define CUCKOO_DB_OPEN_UNIQUE_PTR (ROCKSDB_MAJOR >= 10)

namespace rocksdb_cuckoo {
namespace live {

// Before DB::Open (FilteredDB::Open, FilteredTransactionDB::Open,
// FilteredOptimisticTransactionDB::Open; filtered_db_open.cc): checks the
// options, reads what the checkpoints are checked against and, unless
// background_open, starts reading and validating the checkpoint images
// (PreOpenFacts::Found::preload).
ROCKSDB_NAMESPACE::Status BeforeOpen(
    const ROCKSDB_NAMESPACE::DBOptions& db_options, const std::string& name,
    const FilteredDBOptions& filtered_options, PreOpenFacts* pre_open);

// Before DB::Open, with the names of the column families the Open opens:
// InvalidArgument if filtered_column_families names a family not among
// them (nothing is opened then).
ROCKSDB_NAMESPACE::Status CheckFamiliesToFilter(
    const std::vector<std::string>& opened,
    const FilteredDBOptions& filtered_options);
ROCKSDB_NAMESPACE::Status CheckFamiliesToFilter(
    const std::vector<ROCKSDB_NAMESPACE::ColumnFamilyDescriptor>& opened,
    const FilteredDBOptions& filtered_options);

// WAL retention (docs/recovery_design.md 3.5): with a snapshot_dir, and
// when the application set neither WAL_ttl_seconds nor WAL_size_limit_MB,
// the options FilteredDB opens the DB with keep flushed WAL files in
// <wal_dir>/archive/ (RocksDB never purges them with this ttl) so that the
// writes after a checkpoint can be replayed; each checkpoint then deletes
// the archived files it no longer needs (FilteredDBImpl::ReleaseArchivedWal).
constexpr uint64_t kRetainWalSeconds = uint64_t{100} * 365 * 24 * 3600;
void RetainWal(const FilteredDBOptions& filtered_options,
               ROCKSDB_NAMESPACE::DBOptions* db_options);

class FilteredDBImpl final : public FilteredDB, private LivenessOracle {
 public:
  using ColumnFamilyHandle = ROCKSDB_NAMESPACE::ColumnFamilyHandle;
  using DB = ROCKSDB_NAMESPACE::DB;
  using Iterator = ROCKSDB_NAMESPACE::Iterator;
  using PinnableSlice = ROCKSDB_NAMESPACE::PinnableSlice;
  using ReadOptions = ROCKSDB_NAMESPACE::ReadOptions;
  using SequenceNumber = ROCKSDB_NAMESPACE::SequenceNumber;
  using Slice = ROCKSDB_NAMESPACE::Slice;
  using Status = ROCKSDB_NAMESPACE::Status;
  using WriteOptions = ROCKSDB_NAMESPACE::WriteOptions;
  using Builder = LiveKeyFilter::Builder;

  FilteredDBImpl(DB* db, const FilteredDBOptions& options,
                 PreOpenFacts pre_open);
  ~FilteredDBImpl() override;

  // Builds or loads the filters of the handles that are opted in.
  Status Init(const std::vector<ColumnFamilyHandle*>& handles);
  // Before Init: whether a checkpoint with writes after it is replayed from
  // the WAL (default) or rebuilt by the scan.
  void SetWalReplay(bool on) { replay_wal_ = on; }

  // ------------------------------------------------------------ reads
  // Read entry points. RocksDB 9.0 made every Get/MultiGet overload final
  // except two pure virtual ones, which all others call: the Get with a
  // timestamp output and the multi-column-family batched MultiGet. Before
  // 9.0 the 4-argument Get and the vector and single-family batched
  // MultiGet are the ones callers reach (StackableDB forwards each).
  using StackableDB::Get;
#if CUCKOO_DB_READS_FINAL
  Status Get(const ReadOptions& ro, ColumnFamilyHandle* cf, const Slice& key,
             PinnableSlice* value, std::string* timestamp) override;
#else
  Status Get(const ReadOptions& ro, ColumnFamilyHandle* cf, const Slice& key,
             PinnableSlice* value) override;
#endif
  using StackableDB::GetEntity;
  Status GetEntity(const ReadOptions& ro, ColumnFamilyHandle* cf,
                   const Slice& key,
                   ROCKSDB_NAMESPACE::PinnableWideColumns* columns) override;
  using StackableDB::GetMergeOperands;
  Status GetMergeOperands(const ReadOptions& ro, ColumnFamilyHandle* cf,
                          const Slice& key, PinnableSlice* slices,
                          ROCKSDB_NAMESPACE::GetMergeOperandsOptions* opts,
                          int* count) override;
  using StackableDB::KeyMayExist;
  bool KeyMayExist(const ReadOptions& ro, ColumnFamilyHandle* cf,
                   const Slice& key, std::string* value,
                   bool* value_found) override;
  using StackableDB::MultiGet;
#if CUCKOO_DB_READS_FINAL
  void MultiGet(const ReadOptions& ro, size_t num_keys,
                ColumnFamilyHandle** cfs, const Slice* keys,
                PinnableSlice* values, std::string* timestamps,
                Status* statuses, bool sorted_input) override;
#else
  std::vector<Status> MultiGet(const ReadOptions& ro,
                               const std::vector<ColumnFamilyHandle*>& cfs,
                               const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override;
  void MultiGet(const ReadOptions& ro, ColumnFamilyHandle* cf, size_t num_keys,
                const Slice* keys, PinnableSlice* values, Status* statuses,
                bool sorted_input) override;
  void MultiGet(const ReadOptions& ro, size_t num_keys,
                ColumnFamilyHandle** cfs, const Slice* keys,
                PinnableSlice* values, Status* statuses,
                bool sorted_input) override;
#endif

  // ------------------------------------------------------------ writes
  using StackableDB::Put;
  Status Put(const WriteOptions& wo, ColumnFamilyHandle* cf, const Slice& key,
             const Slice& value) override;
  using StackableDB::PutEntity;
  Status PutEntity(const WriteOptions& wo, ColumnFamilyHandle* cf,
                   const Slice& key,
                   const ROCKSDB_NAMESPACE::WideColumns& columns) override;
  using StackableDB::Delete;
  Status Delete(const WriteOptions& wo, ColumnFamilyHandle* cf,
                const Slice& key) override;
  using StackableDB::SingleDelete;
  Status SingleDelete(const WriteOptions& wo, ColumnFamilyHandle* cf,
                      const Slice& key) override;
  using StackableDB::Merge;
  Status Merge(const WriteOptions& wo, ColumnFamilyHandle* cf, const Slice& key,
               const Slice& value) override;
  using StackableDB::DeleteRange;
  Status DeleteRange(const WriteOptions& wo, ColumnFamilyHandle* cf,
                     const Slice& begin, const Slice& end) override;
  Status Write(const WriteOptions& wo,
               ROCKSDB_NAMESPACE::WriteBatch* batch) override;

  // ------------------------------------------------------------ other
  using StackableDB::IngestExternalFile;
  Status IngestExternalFile(
      ColumnFamilyHandle* cf, const std::vector<std::string>& files,
      const ROCKSDB_NAMESPACE::IngestExternalFileOptions& opts) override;
  Status IngestExternalFiles(
      const std::vector<ROCKSDB_NAMESPACE::IngestExternalFileArg>& args)
      override;
  Status DropColumnFamily(ColumnFamilyHandle* cf) override {
    return DropColumnFamilies({cf});
  }
  Status DropColumnFamilies(
      const std::vector<ColumnFamilyHandle*>& cfs) override;
  // The handle FilteredDB reads a filtered, not dropped, non-default family
  // through is retired (kept until Close); any other handle is destroyed.
  Status DestroyColumnFamilyHandle(ColumnFamilyHandle* cf) override;
  Status Close() override { return CloseImpl(); }
  // To the root DB: RocksDB 7.8's StackableDB (and so its TransactionDBs)
  // does not forward Resume (DB's default answers NotSupported). The filter
  // needs nothing: a write that failed left at most an extra fingerprint.
  Status Resume() override { return db_->GetRootDB()->Resume(); }

  // Properties (filtered_db_properties.cc): "rocksdb.cuckoo." names are
  // answered here, all others by the DB.
  using StackableDB::GetProperty;
  bool GetProperty(ColumnFamilyHandle* cf, const Slice& property,
                   std::string* value) override;
  using StackableDB::GetMapProperty;
  bool GetMapProperty(ColumnFamilyHandle* cf, const Slice& property,
                      std::map<std::string, std::string>* value) override;
  using StackableDB::GetIntProperty;
  bool GetIntProperty(ColumnFamilyHandle* cf, const Slice& property,
                      uint64_t* value) override;
  using StackableDB::GetAggregatedIntProperty;
  bool GetAggregatedIntProperty(const Slice& property,
                                uint64_t* value) override;

  // ------------------------------------------------------------ FilteredDB
  bool HasFilter(ColumnFamilyHandle* cf) const override {
    return State(cf) != nullptr;
  }
  Status GetFilterStats(ColumnFamilyHandle* cf,
                        FilteredDBStats* stats) const override;
  const LiveKeyFilter* GetLiveKeyFilter(ColumnFamilyHandle* cf) const override {
    const CfState* s = State(cf);
    return s == nullptr ? nullptr : s->filter.get();
  }
  Status PersistFilterSnapshots() override { return Persist(true); }
  Status RebuildFilter(ColumnFamilyHandle* cf) override;
  void WaitForFilterRebuilds() override;
  void WaitForDeleteChecks() override { ExclusiveLock lock(this); }

  // ------------------------------------------------------------ transactions
  // The entry points of FilteredTransactionDB and
  // FilteredOptimisticTransactionDB (filtered_txn*.cc), which put this object
  // over a TransactionDB or an OptimisticTransactionDB.
  //
  // A write of `ops` whose DB part is `write` (a transaction's commit, or a
  // batch whose keys the caller has locked): the protocol of Write(batch),
  // under the same locks. The caller may hold RocksDB key locks (they come
  // before the filter's locks); `write` must not wait for a lock that is
  // held while waiting for a filter lock. If `write` fails with a status for
  // which `unwritten` returns true (nothing reached the WAL or a memtable),
  // the fingerprints inserted for it are erased again. The keys of `ops`
  // must stay valid until the call returns.
  // `write` gets the write's filter effects: its WriteBatch must carry
  // effects.Record(n) right after its n operations (effect_log::
  // WriteWithRecord), or the
  // replay after a crash falls back to a scan.
  Status WriteForTransaction(
      const WriteOptions& wo, std::vector<Op>* ops,
      const std::function<Status(const effect_log::WriteEffects& effects)>&
          write,
      bool (*unwritten)(const Status&));
  // KnownAbsent, for a read of a transaction that found no entry for the
  // key in its own batch.
  bool KnownAbsentForTransaction(const ReadOptions& ro, ColumnFamilyHandle* cf,
                                 const Slice& key, bool multiget) const {
    return KnownAbsent(ro, cf, key,
                       multiget ? ReadKind::kMultiGet : ReadKind::kGet);
  }
  // The filtered families by column family id (null: not filtered), as
  // BatchCollector takes them.
  const std::vector<CfState*>* FamiliesById() const { return &by_id_; }

 private:
  // The state of a filtered, not dropped column family (nullptr = default).
  CfState* State(ColumnFamilyHandle* cf) const;
  // Every figure of one family (GetFilterStats, the properties); lock-free.
  FilteredDBStats StatsOf(const CfState* s) const;
  // The state to filter a read with, or nullptr when the read must see the
  // DB directly (snapshots, timestamps, the persisted tier).
  const CfState* ReadState(const ReadOptions& ro, ColumnFamilyHandle* cf) const;
  // Which RocksDB read counters a read answered by the filter bumps.
  enum class ReadKind { kGet, kMultiGet };
  // True if the read may answer NotFound without the DB: the column family
  // is filtered for this read and its filter rules the key out. Counts the
  // read (ReadCounters, Statistics, PerfContext).
  bool KnownAbsent(const ReadOptions& ro, ColumnFamilyHandle* cf,
                   const Slice& key, ReadKind kind = ReadKind::kGet) const;
  // `keys` reads answered "absent": the user's Statistics tickers and the
  // thread's PerfContext (mapping in filtered_db.h).
  void RecordAbsent(uint64_t keys, ReadKind kind) const;
  // A MultiGet answered whole by the filters (no DB call to count it).
  void RecordMultiGetAnswered() const;
  // Batched reads: answers NotFound for the keys that the filters rule out
  // and passes the others, in order (so sorted input stays sorted), to
  // forward(m, cfs, keys, values, statuses). cfs[i] is the family of keys[i]
  // (cfs null: one_cf is every key's, and forward gets cfs null when it
  // gets every key).
  template <typename Forward>
  void FilteredMultiGet(const ReadOptions& ro, size_t num_keys,
                        ColumnFamilyHandle* const* cfs,
                        ColumnFamilyHandle* one_cf, const Slice* keys,
                        PinnableSlice* values, Status* statuses,
                        Forward&& forward);

  // Writes (filtered_db_write.cc).
  // A write of several operations (a batch, DeleteRange; transactions'
  // commits): under the shared writer lock and the stripes of its keys
  // (WriteOpsShared), or, for a DeleteRange or when a table is too full to
  // take the new keys without a rescan, under the exclusive lock
  // (WriteFiltered). `write` makes the DB write.
  // `unwritten`: see WriteForTransaction (null: never undo).
  template <typename WriteFn>
  Status WriteOps(const WriteOptions& wo, std::vector<Op>* ops, WriteFn&& write,
                  bool (*unwritten)(const Status&) = nullptr);
  // Returns false, having written nothing and left the filters as they
  // were, if an insert needs a rescan.
  template <typename WriteFn>
  bool WriteOpsShared(const WriteOptions& wo, std::vector<Op>* ops,
                      WriteFn& write, Status* status,
                      bool (*unwritten)(const Status&));
  // After a shared write: starts a rescan (or Open's build again) where
  // one is wanted.
  void AfterWriteShared(const std::vector<Op>& ops);
  class StripeLocks;
  // `unwritten`: see WriteForTransaction (null: never undo).
  template <typename WriteFn>
  Status WriteFiltered(const WriteOptions& wo, std::vector<Op>* ops,
                       WriteFn&& write,
                       bool (*unwritten)(const Status&) = nullptr);
  // A single-key write: under the shared writer lock and the key's stripe
  // (WriteOneShared), or, when the table is too full to insert without
  // growing, under the exclusive lock (WriteOneExclusive).
  template <typename WriteFn>
  Status WriteOne(const WriteOptions& wo, CfState* s, OpType type,
                  const Slice& key, WriteFn&& write);
  // Returns false, having written nothing, if the insert needs a rescan.
  template <typename WriteFn>
  // `hash`: the key's (cuckoo::HashKey).
  bool WriteOneShared(const WriteOptions& wo, CfState* s, OpType type,
                      const Slice& key, uint64_t hash, WriteFn&& write,
                      Status* status);
  template <typename WriteFn>
  Status WriteOneExclusive(const WriteOptions& wo, CfState* s, OpType type,
                           const Slice& key, uint64_t hash, WriteFn&& write);
  // The DeleteChecker's resolve function: reads at the snapshots, erases.
  void ResolveDeferredChecks(std::vector<DeleteChecker::Check>* checks);
  // The key's stripe and check-snapshot slot come from this value.
  static uint64_t KeySlot(const CfState* s, uint64_t hash) {
    return hash ^ (uint64_t{s->id} * 0x9e3779b97f4a7c15ULL);
  }
  StripeLock& Stripe(const CfState* s, uint64_t hash) {
    return stripes_[KeySlot(s, hash) % kStripes].mu;
  }
  // LivenessOracle (writer lock held).
  Status ResolveBefore(KeyPlan* k) override;
  Status ResolveBeforeAll(const std::vector<KeyPlan*>& keys) override;
  bool ResolveKnown(KeyPlan* k) override;
  // recent_keys_ after a write of the key under its stripe: live after it
  // (a successful write that leaves it live) or not known to be.
  // A single-key write records a key it makes live before its DB write
  // (UpdateRecentKey(k, true)), still under the stripe, and forgets it
  // again with this when the write failed.
  void UpdateRecentKey(const KeyPlan& k, bool ok);
  void ForgetRecentKey(const KeyPlan& k);

  // Unchecked deletes (FilteredDBOptions::unchecked_delete_ratio): a Delete
  // of a key the filter may contain leaves its fingerprint and reads nothing.
  bool UncheckedDeletes() const { return options_.unchecked_delete_ratio > 0; }
  // The rescan point of fingerprints left by checks lost in crashes when
  // unchecked deletes are off: extra entries up to 1/16 of the keys (false
  // positives up by as much, at most).
  static constexpr double kLostCheckRatio = 1.0 / 16;
  // After a successful write: n of its deletes left their fingerprints.
  void CountUnchecked(CfState* s, uint64_t n) {
    s->counters.Add<&FilteredDBStats::unchecked_deletes>(n);
    s->unchecked.fetch_add(n, std::memory_order_relaxed);
  }
  // Enough of them to rebuild the filter from the DB (AfterWriteLocked):
  // the ratio of the filter's keys, and at least 256. The keys are counted
  // only when the last limit is reached (the table may have split since).
  // With the ratio 0 only crashes add to the count (the deletes whose
  // checks a crash lost: LoadCheckpoint), against 1/16 of the keys.
  bool UncheckedRebuildDue(CfState* s) const {
    const uint64_t n = s->unchecked.load(std::memory_order_relaxed);
    if (n < s->unchecked_limit.load(std::memory_order_relaxed)) return false;
    const double ratio =
        UncheckedDeletes() ? options_.unchecked_delete_ratio : kLostCheckRatio;
    const uint64_t limit = std::max<uint64_t>(
        256,
        static_cast<uint64_t>(static_cast<double>(s->filter->size()) * ratio));
    s->unchecked_limit.store(limit, std::memory_order_relaxed);
    return n >= limit;
  }

  // k->before from the answer of a point read of the key.
  void SetBefore(KeyPlan* k, const Status& read);
  Status ForEachLiveKey(CfState* cf, const Slice& begin, const Slice& end,
                        const std::function<void(const Slice&)>& fn) override;
  Status InsertAllLocked(CfState* s, const std::vector<uint64_t>& hashes);
  // After a write to s: starts a rescan if the filter wants one
  // (RescanWanted), or restarts Open's failed background build.
  void AfterWriteLocked(CfState* s);
  // After a successful Replace: resets the failure count and ends Open's
  // background build.
  void TableInstalledLocked(CfState* s);
  // Streams a frozen filter image, with the owner `identity`, to the
  // family's snapshot file (PersistFilterSnapshots, Close).
  Status WriteSnapshot(const CfState* s, LiveKeyFilter::Checkpoint* checkpoint,
                       const std::string& identity);
  // Starts (again) the background build of a filter Open did not load
  // (CfState::open_build), for CfState::open_capacity keys.
  void StartOpenBuildLocked(CfState* s);
  // The rebuild thread's hand-off: installs a finished scan, and restarts
  // an open build that failed (overflow) under the exclusive lock.
  void InstallFromRebuildThread(CfState* s);
  // After an install: a rescan is wanted or due now (not after a failure).
  bool RescanDueAfterInstall(CfState* s) const;

  // Rebuilds (filtered_db_rebuild.cc).
  Status ScanInto(CfState* s, Iterator* it, Builder* builder, uint64_t* scanned,
                  bool* overflow);
  Status SyncRebuildLocked(CfState* s, uint64_t capacity,
                           const std::vector<uint64_t>& pending);
  void StartBackgroundRebuildLocked(CfState* s, uint64_t capacity);
  std::unique_ptr<Rebuilder> NewRebuilder(CfState* s);
  void CommitFinishedRebuildsLocked();
  void CommitIfReadyLocked(CfState* s);
  void WaitAndCommitLocked(CfState* s);
  void InstallResultLocked(CfState* s, std::unique_ptr<Builder> builder,
                           const Status& scan_status);
  void StopBackgroundWork();
  void Progress(const CfState* s, uint64_t scanned, bool done);

  // Open (filtered_db_open.cc); snapshots and Close
  // (filtered_db_persist.cc); column families (filtered_db_families.cc).
  Status LoadOrBuild(CfState* s);
  // Reads, validates and judges the family's checkpoint
  // (docs/recovery_design.md 3.2); on success *out holds its table, tied to
  // the rebuild `ticket` (0: installed as it is, before any write). A
  // checkpoint that can never be used is removed.
  Status LoadCheckpoint(CfState* s, uint64_t ticket,
                        std::unique_ptr<Builder>* out);
  // Adds this open's MANIFEST to snapshot_dir's list of FilteredDB opens
  // that continue from `checkpoint` (its MANIFEST and WAL binding), with
  // the WAL binding of this open (once per open).
  void AppendOpen(const ChainEntry& checkpoint);
  // The identity of a checkpoint of s at seq whose table keeps `unchecked`
  // fingerprints of deleted keys (binding fields set by the caller).
  CheckpointIdentity Identity(const CfState* s, SequenceNumber seq,
                              uint64_t unchecked) const;
  // Fingerprints the current table may keep for deleted keys (a checkpoint
  // of it stores the count: CheckpointIdentity::unchecked). Stable under
  // filter_mu_ with no write in flight (a write adds to it, an install or a
  // rebuild's start moves it).
  static uint64_t UncheckedOfCurrentTable(const CfState* s);
  // PersistFilterSnapshots; with wait_for_builds false (the automatic
  // checkpoints), a filter Open is still building is skipped silently.
  Status Persist(bool wait_for_builds);
  // After a checkpoint at `seq` of every filtered family: deletes the
  // archived WAL files whose records all precede it (only with the
  // retention RetainWal set up; the file of `keep` stays).
  void ReleaseArchivedWal(SequenceNumber seq, uint64_t keep);
  // Writes a count-0 batch with a checkpoint marker (effect_log.h) to the
  // WAL: the WAL bytes a checkpoint is bound to then exist and are its own.
  Status WriteCheckpointMarker();
  // Waits for Open's background builds and loads (finishing an overflowed
  // build synchronously).
  void WaitForOpenBuilds();
  // The automatic checkpoints (FilteredDBOptions::checkpoints).
  void StartCheckpointThread();
  void StopCheckpointThread();
  void CheckpointLoop();
  // Flushes the filtered families if a write without WAL happened, so that
  // the sequence number recorded next cannot be lost by a crash (the WAL
  // sync, the other half, needs no lock). write_mu_ held exclusively.
  Status FlushUnloggedWritesLocked();
  std::string CurrentDbState() const;
  // Removes the snapshot files of these column families (see SnapshotStore).
  Status RemoveSnapshots(const std::vector<CfState*>& states);
  Status CloseImpl();
  // Destroys the retired handles (background work stopped, the DB still
  // open: RocksDB requires every handle gone before it closes). Returns the
  // states that read through them.
  std::vector<CfState*> DestroyRetiredHandles();
  void Info(const char* format, ...) const
      __attribute__((format(printf, 2, 3)));

  // The exclusive writer lock: write_mu_ exclusively (no single-key writer
  // runs), the deferred delete checks drained, then filter_mu_.
  class ExclusiveLock {
   public:
    explicit ExclusiveLock(FilteredDBImpl* db)
        : write_(db->write_mu_), drained_(Drain(db)), filter_(db->filter_mu_) {}

   private:
    static bool Drain(FilteredDBImpl* db) {
      db->checker_->Drain();
      // Writes under this lock are not marked: no later delete may use the
      // current check snapshot.
      db->check_snapshots_->Reset();
      return true;
    }
    std::unique_lock<WriterLock> write_;
    bool drained_;
    std::unique_lock<std::mutex> filter_;
  };

  static constexpr size_t kStripes = 1024;
  static_assert(CheckSnapshots::kSlots % kStripes == 0,
                "the keys of a check-snapshot slot must share a stripe");
  // Deferred delete checks queued at most; a Delete beyond that resolves
  // the queue itself.
  static constexpr size_t kMaxPendingChecks = 4096;
  struct alignas(64) StripeMutex {
    StripeLock mu;
  };

  const FilteredDBOptions options_;
  PreOpenFacts pre_open_;  // read before DB::Open (preloads: Init)
  // False under a pessimistic TransactionDB (set before Init): a checkpoint
  // with writes after it is not replayed but rebuilt by the scan. RocksDB's
  // WAL iterator asserts (Debian's librocksdb keeps assertions) on a
  // prepared transaction's WAL record past the DB's last sequence.
  bool replay_wal_ = true;
  SequenceNumber open_sequence_ = 0;  // the DB's, right after DB::Open
  std::string open_manifest_;         // CURRENT right after DB::Open
  std::atomic<bool> open_appended_{false};
  // db_->DefaultColumnFamily(), set at construction (lives as long as the
  // DB).
  ColumnFamilyHandle* const default_handle_;
  std::string db_id_;
  std::shared_ptr<ROCKSDB_NAMESPACE::Logger> info_log_;
  std::shared_ptr<ROCKSDB_NAMESPACE::Statistics> statistics_;  // may be null
  std::unique_ptr<SnapshotStore> snapshots_;
  std::vector<std::unique_ptr<CfState>> states_;
  std::vector<CfState*> by_id_;  // immutable after Init
  WriterLock write_mu_;
  std::mutex filter_mu_;
  // Held by PersistFilterSnapshots and Close, before any other lock.
  std::mutex persist_mu_;
  std::unique_ptr<StripeMutex[]> stripes_;
  std::unique_ptr<CheckSnapshots> check_snapshots_;
  // Keys known live after FilteredDB's own writes (recent_keys.h); its
  // partitions are the stripes.
  RecentKeys recent_keys_;
  std::unique_ptr<DeleteChecker> checker_;
  std::mutex retired_mu_;
  // Handles the caller destroyed that CfState::handle still points to.
  std::vector<ColumnFamilyHandle*> retired_;
  std::atomic<bool> unlogged_writes_{false};  // a disableWAL write happened
  // This object's nonce in the delete checker's WAL records, and the
  // generation of the last of them (effects_mu_).
  const uint64_t session_;
  std::mutex effects_mu_;
  uint64_t erase_generation_ = 0;
  // The automatic checkpoints' thread.
  std::thread checkpoint_thread_;
  std::mutex checkpoint_mu_;
  std::condition_variable checkpoint_cv_;
  bool checkpoint_stop_ = false;  // checkpoint_mu_
  // The sequence number of the last checkpoint (or of Open).
  std::atomic<SequenceNumber> last_checkpoint_seq_{0};
  bool initialized_ = false;  // Init succeeded
  bool closed_ = false;
  Status close_status_;
};

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_FILTERED_DB_IMPL_H_
