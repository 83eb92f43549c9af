// FilteredDB: the StackableDB that keeps one LiveKeyFilter per opted-in
// column family. See include/rocksdb_cuckoo/filtered_db.h for the contract.
//
// Write protocol (all under write_mu_):
//   1. Plan: for every key the write touches, decide whether it is live
//      before the write (filter "absent" => no; DeleteRange => iterator;
//      otherwise a point read, or the assume_unique_writes promise) and after
//      it (replaying the write's operations in order).
//   2. Insert the keys that become live into the filter.
//   3. Write to the DB.
//   4. Erase the keys that stopped being live (only if the write succeeded).
// At every instant the filter is therefore a superset of the live keys, and
// a reader (which only reads the filter, then the DB) cannot miss a key.
#include "rocksdb_cuckoo/filtered_db.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <new>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "cuckoo/cuckoo_filter.h"  // cuckoo::HashKey
#include "rocksdb/comparator.h"
#include "rocksdb/env.h"
#include "rocksdb/iterator.h"
#include "rocksdb/version.h"
#include "rocksdb/write_batch.h"

// RocksDB 9.0: Get/MultiGet overloads final (see the read entry points).
#define CUCKOO_DB_READS_FINAL (ROCKSDB_MAJOR >= 9)
// RocksDB 10.0: DB::Open takes std::unique_ptr<DB>* (11.0 drops DB**).
#define CUCKOO_DB_OPEN_UNIQUE_PTR (ROCKSDB_MAJOR >= 10)

namespace rocksdb_cuckoo {

namespace {

using ROCKSDB_NAMESPACE::ColumnFamilyDescriptor;
using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::Comparator;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::DBOptions;
using ROCKSDB_NAMESPACE::Env;
using ROCKSDB_NAMESPACE::InfoLogLevel;
using ROCKSDB_NAMESPACE::IngestExternalFileArg;
using ROCKSDB_NAMESPACE::IngestExternalFileOptions;
using ROCKSDB_NAMESPACE::Iterator;
using ROCKSDB_NAMESPACE::Logger;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::PinnableWideColumns;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::SequenceNumber;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WideColumns;
using ROCKSDB_NAMESPACE::WriteBatch;
using ROCKSDB_NAMESPACE::WriteOptions;

using Builder = LiveKeyFilter::Builder;

constexpr char kSnapshotPrefix[] = "CUCKOO_LIVE_FILTER-";

std::string_view View(const Slice& s) {
  return std::string_view(s.data(), s.size());
}

// What an operation does to one key (PutEntity counts as Put, SingleDelete
// as Delete).
enum class OpType : uint8_t { kPut, kMerge, kDelete, kDeleteRange };

bool MakesLive(OpType t) { return t == OpType::kPut || t == OpType::kMerge; }

// Per filtered column family.
struct CfState {
  uint32_t id = 0;
  std::string name;
  ColumnFamilyHandle* handle = nullptr;  // from Open; owned by the caller
  const Comparator* comparator = nullptr;
  std::unique_ptr<LiveKeyFilter> filter;
  std::atomic<bool> dropped{false};

  // DB-side counters (written under write_mu_, read by GetFilterStats).
  std::atomic<uint64_t> maybe_checks{0};
  std::atomic<uint64_t> maybe_checks_live{0};
  std::atomic<uint64_t> check_errors{0};
  std::atomic<uint64_t> assumed_unique{0};
  std::atomic<uint64_t> range_deleted{0};
  std::atomic<uint64_t> keys_scanned{0};
  std::atomic<uint64_t> growths{0};
  bool loaded_from_snapshot = false;  // set at open
  std::string snapshot_status;        // set at open

  // Background rebuild. bg_running: begun and not yet installed/abandoned
  // (write_mu_). bg_ready: the scan ended; result/status under bg_mu.
  std::thread bg_thread;
  std::atomic<bool> bg_running{false};
  std::atomic<bool> bg_ready{false};
  std::atomic<bool> cancel{false};
  std::mutex bg_mu;
  std::condition_variable bg_cv;
  std::unique_ptr<Builder> bg_result;
  Status bg_status;
  int consecutive_failures = 0;  // write_mu_
};

// One operation of a write on a filtered column family.
struct Op {
  CfState* cf;
  OpType type;
  Slice key;
  Slice end;  // DeleteRange only
};

// Collects the operations of a WriteBatch that touch filtered column
// families.
class BatchCollector : public WriteBatch::Handler {
 public:
  BatchCollector(const std::vector<CfState*>* by_id, std::vector<Op>* ops)
      : by_id_(by_id), ops_(ops) {}

  Status PutCF(uint32_t cf, const Slice& key, const Slice&) override {
    return Add(cf, OpType::kPut, key);
  }
  Status PutEntityCF(uint32_t cf, const Slice& key, const Slice&) override {
    return Add(cf, OpType::kPut, key);
  }
  Status DeleteCF(uint32_t cf, const Slice& key) override {
    return Add(cf, OpType::kDelete, key);
  }
  Status SingleDeleteCF(uint32_t cf, const Slice& key) override {
    return Add(cf, OpType::kDelete, key);
  }
  Status MergeCF(uint32_t cf, const Slice& key, const Slice&) override {
    return Add(cf, OpType::kMerge, key);
  }
  Status DeleteRangeCF(uint32_t cf, const Slice& begin,
                       const Slice& end) override {
    return Add(cf, OpType::kDeleteRange, begin, end);
  }
  Status PutBlobIndexCF(uint32_t cf, const Slice& key, const Slice&) override {
    return Add(cf, OpType::kPut, key);
  }
  void LogData(const Slice&) override {}
  Status MarkBeginPrepare(bool) override { return Unsupported(); }
  Status MarkEndPrepare(const Slice&) override { return Unsupported(); }
  Status MarkNoop(bool) override { return Status::OK(); }
  Status MarkRollback(const Slice&) override { return Unsupported(); }
  Status MarkCommit(const Slice&) override { return Unsupported(); }
  Status MarkCommitWithTimestamp(const Slice&, const Slice&) override {
    return Unsupported();
  }

 private:
  static Status Unsupported() {
    return Status::NotSupported(
        "FilteredDB: two-phase-commit markers in a batch");
  }
  Status Add(uint32_t cf, OpType type, const Slice& key,
             const Slice& end = Slice()) {
    if (cf < by_id_->size()) {
      CfState* state = (*by_id_)[cf];
      if (state != nullptr && !state->dropped.load(std::memory_order_relaxed)) {
        ops_->push_back(Op{state, type, key, end});
      }
    }
    return Status::OK();
  }
  const std::vector<CfState*>* by_id_;
  std::vector<Op>* ops_;
};

// The decision for one explicitly written key.
struct KeyPlan {
  CfState* cf;
  Slice key;
  uint64_t hash;
  OpType first_type;
  OpType last_type;
  size_t last_index;  // index in ops of the last point operation on the key
  int before = -1;    // live before the write: -1 unknown, 0 no, 1 yes
};

struct Range {
  size_t index;
  Slice begin;
  Slice end;
};

struct WritePlan {
  std::vector<std::pair<CfState*, uint64_t>> inserts;  // before the write
  std::vector<std::pair<CfState*, uint64_t>> erases;   // after it
};

bool InRange(const Comparator* cmp, const Slice& key, const Slice& begin,
             const Slice& end) {
  return cmp->Compare(begin, key) <= 0 && cmp->Compare(key, end) < 0;
}

// Digest of the DB's on-disk state that a snapshot is bound to: the MANIFEST
// named by CURRENT (name and content) and every WAL file (name and content).
// An ingestion, a flush, a compaction or any open of the DB writes a new
// MANIFEST or changes it; a lost or different unflushed write changes a WAL.
// Computed when the DB is closed (at our Close, before our Open) or while it
// runs (PersistFilterSnapshots: a racing background job only makes the
// digest mismatch later, which is safe). "" if it cannot be computed.
std::string DbStateDigest(Env* env, const std::string& dbname,
                          const std::string& wal_dir) {
  std::string current;
  if (!ROCKSDB_NAMESPACE::ReadFileToString(env, dbname + "/CURRENT", &current)
           .ok())
    return "";
  while (!current.empty() &&
         (current.back() == '\n' || current.back() == '\r')) {
    current.pop_back();
  }
  if (current.empty() || current.find('/') != std::string::npos) return "";
  std::string manifest;
  if (!ROCKSDB_NAMESPACE::ReadFileToString(env, dbname + "/" + current,
                                           &manifest)
           .ok()) {
    return "";
  }
  std::string acc = current + ":" + std::to_string(manifest.size()) + ":" +
                    std::to_string(cuckoo::HashKey(manifest).value);
  const std::string wdir = wal_dir.empty() ? dbname : wal_dir;
  std::vector<std::string> children;
  if (!env->GetChildren(wdir, &children).ok()) return "";
  std::sort(children.begin(), children.end());
  for (const std::string& name : children) {
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".log") != 0)
      continue;
    std::string wal;
    if (!ROCKSDB_NAMESPACE::ReadFileToString(env, wdir + "/" + name, &wal).ok())
      return "";
    acc += ";" + name + ":" + std::to_string(wal.size()) + ":" +
           std::to_string(cuckoo::HashKey(wal).value);
  }
  char hex[17];
  snprintf(hex, sizeof(hex), "%016llx",
           static_cast<unsigned long long>(cuckoo::HashKey(acc).value));
  return current + "/" + hex;
}

class FilteredDBImpl final : public FilteredDB {
 public:
  FilteredDBImpl(DB* db, const FilteredDBOptions& options,
                 std::string open_state)
      : FilteredDB(db), options_(options), open_state_(std::move(open_state)) {}

  ~FilteredDBImpl() override {
    CloseImpl().PermitUncheckedError();
    // A failed Close leaves the DB open; the base destructor closes it. No
    // thread may outlive the states.
    StopBackgroundWork();
  }

  Status Init(const std::vector<ColumnFamilyHandle*>& handles);

  // ------------------------------------------------------------ reads
  // Read entry points. RocksDB 9.0 made every Get/MultiGet overload final
  // except two pure virtual ones, which all others call: the Get with a
  // timestamp output and the multi-column-family batched MultiGet. Before
  // 9.0 the 4-argument Get and the vector and single-family batched
  // MultiGet are the ones callers reach (StackableDB forwards each).
  using StackableDB::Get;
#if CUCKOO_DB_READS_FINAL
  Status Get(const ReadOptions& ro, ColumnFamilyHandle* cf, const Slice& key,
             PinnableSlice* value, std::string* timestamp) override {
    // A timestamp output is the DB's to fill (or refuse): not filtered.
    if (timestamp == nullptr && KnownAbsent(ro, cf, key)) {
      if (value != nullptr) value->Reset();
      return Status::NotFound();
    }
    return db_->Get(ro, cf, key, value, timestamp);
  }
#else
  Status Get(const ReadOptions& ro, ColumnFamilyHandle* cf, const Slice& key,
             PinnableSlice* value) override {
    if (KnownAbsent(ro, cf, key)) {
      if (value != nullptr) value->Reset();
      return Status::NotFound();
    }
    return db_->Get(ro, cf, key, value);
  }
#endif

  using StackableDB::GetEntity;
  Status GetEntity(const ReadOptions& ro, ColumnFamilyHandle* cf,
                   const Slice& key, PinnableWideColumns* columns) override {
    if (KnownAbsent(ro, cf, key)) {
      if (columns != nullptr) columns->Reset();
      return Status::NotFound();
    }
    return db_->GetEntity(ro, cf, key, columns);
  }

  using StackableDB::GetMergeOperands;
  Status GetMergeOperands(const ReadOptions& ro, ColumnFamilyHandle* cf,
                          const Slice& key, PinnableSlice* slices,
                          ROCKSDB_NAMESPACE::GetMergeOperandsOptions* opts,
                          int* count) override {
    if (KnownAbsent(ro, cf, key)) {
      if (count != nullptr) *count = 0;
      return Status::NotFound();
    }
    return db_->GetMergeOperands(ro, cf, key, slices, opts, count);
  }

  using StackableDB::KeyMayExist;
  bool KeyMayExist(const ReadOptions& ro, ColumnFamilyHandle* cf,
                   const Slice& key, std::string* value,
                   bool* value_found) override {
    if (KnownAbsent(ro, cf, key)) {
      if (value_found != nullptr) *value_found = false;
      return false;
    }
    return db_->KeyMayExist(ro, cf, key, value, value_found);
  }

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
             const Slice& value) override {
    CfState* s = WriteState(cf);
    if (s == nullptr) return db_->Put(wo, cf, key, value);
    return WriteOne(wo, s, OpType::kPut, key,
                    [&] { return db_->Put(wo, cf, key, value); });
  }

  using StackableDB::PutEntity;
  Status PutEntity(const WriteOptions& wo, ColumnFamilyHandle* cf,
                   const Slice& key, const WideColumns& columns) override {
    CfState* s = WriteState(cf);
    if (s == nullptr) return db_->PutEntity(wo, cf, key, columns);
    return WriteOne(wo, s, OpType::kPut, key,
                    [&] { return db_->PutEntity(wo, cf, key, columns); });
  }

  using StackableDB::Delete;
  Status Delete(const WriteOptions& wo, ColumnFamilyHandle* cf,
                const Slice& key) override {
    CfState* s = WriteState(cf);
    if (s == nullptr) return db_->Delete(wo, cf, key);
    return WriteOne(wo, s, OpType::kDelete, key,
                    [&] { return db_->Delete(wo, cf, key); });
  }

  using StackableDB::SingleDelete;
  Status SingleDelete(const WriteOptions& wo, ColumnFamilyHandle* cf,
                      const Slice& key) override {
    CfState* s = WriteState(cf);
    if (s == nullptr) return db_->SingleDelete(wo, cf, key);
    return WriteOne(wo, s, OpType::kDelete, key,
                    [&] { return db_->SingleDelete(wo, cf, key); });
  }

  using StackableDB::Merge;
  Status Merge(const WriteOptions& wo, ColumnFamilyHandle* cf, const Slice& key,
               const Slice& value) override {
    CfState* s = WriteState(cf);
    if (s == nullptr) return db_->Merge(wo, cf, key, value);
    return WriteOne(wo, s, OpType::kMerge, key,
                    [&] { return db_->Merge(wo, cf, key, value); });
  }

  using StackableDB::DeleteRange;
  Status DeleteRange(const WriteOptions& wo, ColumnFamilyHandle* cf,
                     const Slice& begin, const Slice& end) override {
    CfState* s = WriteState(cf);
    if (s == nullptr) return db_->DeleteRange(wo, cf, begin, end);
    std::vector<Op> ops{Op{s, OpType::kDeleteRange, begin, end}};
    return WriteFiltered(wo, &ops,
                         [&] { return db_->DeleteRange(wo, cf, begin, end); });
  }

  Status Write(const WriteOptions& wo, WriteBatch* batch) override {
    if (batch == nullptr) return db_->Write(wo, batch);
    std::vector<Op> ops;
    BatchCollector collector(&by_id_, &ops);
    Status s = batch->Iterate(&collector);
    if (!s.ok()) return s;
    if (ops.empty()) return db_->Write(wo, batch);
    return WriteFiltered(wo, &ops, [&] { return db_->Write(wo, batch); });
  }

  // ------------------------------------------------------------ other
  using StackableDB::IngestExternalFile;
  Status IngestExternalFile(ColumnFamilyHandle* cf,
                            const std::vector<std::string>& files,
                            const IngestExternalFileOptions& opts) override {
    IngestExternalFileArg arg;
    arg.column_family = cf;
    arg.external_files = files;
    arg.options = opts;
    return IngestExternalFiles({arg});
  }

  Status IngestExternalFiles(
      const std::vector<IngestExternalFileArg>& args) override;

  Status DropColumnFamily(ColumnFamilyHandle* cf) override {
    return DropColumnFamilies({cf});
  }
  Status DropColumnFamilies(
      const std::vector<ColumnFamilyHandle*>& cfs) override;

  Status Close() override { return CloseImpl(); }

  // ------------------------------------------------------------ FilteredDB
  bool HasFilter(ColumnFamilyHandle* cf) const override {
    return State(cf) != nullptr;
  }
  Status GetFilterStats(ColumnFamilyHandle* cf,
                        LiveKeyFilterStats* stats) const override;
  const LiveKeyFilter* GetLiveKeyFilter(ColumnFamilyHandle* cf) const override {
    const CfState* s = State(cf);
    return s == nullptr ? nullptr : s->filter.get();
  }
  Status PersistFilterSnapshots() override;
  Status RebuildFilter(ColumnFamilyHandle* cf) override;
  void WaitForFilterRebuilds() override;

 private:
  // The state of a filtered, not dropped column family (nullptr = default).
  CfState* State(ColumnFamilyHandle* cf) const {
    const uint32_t id = cf == nullptr ? 0 : cf->GetID();
    if (id >= by_id_.size()) return nullptr;
    CfState* s = by_id_[id];
    return s == nullptr || s->dropped.load(std::memory_order_acquire) ? nullptr
                                                                      : s;
  }
  CfState* WriteState(ColumnFamilyHandle* cf) const { return State(cf); }
  // The state to filter a read with, or nullptr when the read must see the
  // DB directly (snapshots, timestamps, the persisted tier).
  const CfState* ReadState(const ReadOptions& ro,
                           ColumnFamilyHandle* cf) const {
    // Only plain reads of the latest state are answered from the filter: a
    // snapshot or timestamp sees older keys, ignore_range_deletions sees
    // range-deleted ones, and the memtable/block-cache/persisted tiers
    // answer Incomplete or differently where the DB would.
    if (ro.snapshot != nullptr || ro.timestamp != nullptr ||
        ro.iter_start_ts != nullptr || ro.ignore_range_deletions ||
        ro.read_tier != ROCKSDB_NAMESPACE::kReadAllTier) {
      return nullptr;
    }
    return State(cf);
  }
  // True if the read may answer NotFound without the DB: the column family
  // is filtered for this read and its filter rules the key out.
  bool KnownAbsent(const ReadOptions& ro, ColumnFamilyHandle* cf,
                   const Slice& key) const {
    const CfState* s = ReadState(ro, cf);
    return s != nullptr && !s->filter->MayContain(View(key));
  }
  // Batched reads: answers NotFound for the keys that the filters rule out
  // and passes the others, in order (so sorted input stays sorted), to
  // forward(m, cfs, keys, values, statuses). cfs[i] is the family of keys[i].
  template <typename Forward>
  void FilteredMultiGet(const ReadOptions& ro, size_t num_keys,
                        ColumnFamilyHandle* const* cfs, const Slice* keys,
                        PinnableSlice* values, Status* statuses,
                        Forward&& forward);

  template <typename WriteFn>
  Status WriteFiltered(const WriteOptions& wo, std::vector<Op>* ops,
                       WriteFn&& write);
  // The same for a single-key write, without allocations.
  template <typename WriteFn>
  Status WriteOne(const WriteOptions& wo, CfState* s, OpType type,
                  const Slice& key, WriteFn&& write);
  Status PlanLocked(const std::vector<Op>& ops, WritePlan* plan);
  Status ResolveBeforeLocked(KeyPlan* k);
  Status InsertAllLocked(CfState* s, const std::vector<uint64_t>& hashes);
  void AfterWriteLocked(CfState* s);

  // Rebuilds.
  Status ScanInto(CfState* s, Iterator* it, Builder* builder, uint64_t* scanned,
                  bool* overflow);
  Status SyncRebuildLocked(CfState* s, uint64_t capacity,
                           const std::vector<uint64_t>& pending);
  void StartBackgroundRebuildLocked(CfState* s, uint64_t capacity);
  void BackgroundRebuild(CfState* s, std::unique_ptr<Iterator> it,
                         std::unique_ptr<Builder> builder);
  void CommitFinishedRebuildsLocked();
  void CommitIfReadyLocked(CfState* s);
  void WaitAndCommitLocked(CfState* s);
  void StopBackgroundWork();
  void Progress(const CfState* s, uint64_t scanned, bool done);

  Status LoadOrBuild(CfState* s);
  std::string SnapshotPath(const CfState* s) const {
    return options_.snapshot_dir + "/" + kSnapshotPrefix +
           std::to_string(s->id);
  }
  LiveKeyFilter::SnapshotIdentity Identity(const CfState* s, SequenceNumber seq,
                                           const std::string& db_state) const {
    LiveKeyFilter::SnapshotIdentity id;
    id.sequence = seq;
    id.db_state = db_state;
    id.db_id = db_id_;
    id.cf_id = s->id;
    id.cf_name = s->name;
    return id;
  }
  Status WriteSnapshotFile(const std::string& path, const std::string& data);
  // Removes the snapshot files of the given states (all if null) and syncs
  // the directory, so that no later open can use them.
  void RemoveSnapshotFiles(const std::vector<CfState*>* which);
  // Makes every write so far durable (flush of unlogged writes, WAL sync),
  // so that the sequence number recorded next cannot be lost by a crash.
  Status MakeWritesDurableLocked();
  std::string CurrentDbState() const {
    return DbStateDigest(db_->GetEnv(), db_->GetName(),
                         db_->GetDBOptions().wal_dir);
  }
  Status CloseImpl();
  void Info(const char* format, ...) const
      __attribute__((format(printf, 2, 3)));

  const FilteredDBOptions options_;
  const std::string open_state_;  // DbStateDigest before DB::Open
  std::string db_id_;
  std::shared_ptr<Logger> info_log_;
  std::vector<std::unique_ptr<CfState>> states_;
  std::vector<CfState*> by_id_;  // immutable after Init
  std::mutex write_mu_;
  bool unlogged_writes_ = false;  // write_mu_: a disableWAL write happened
  bool initialized_ = false;      // Init succeeded
  bool closed_ = false;
  Status close_status_;
};

// ================================================================== reads

#if !CUCKOO_DB_READS_FINAL
std::vector<Status> FilteredDBImpl::MultiGet(
    const ReadOptions& ro, const std::vector<ColumnFamilyHandle*>& cfs,
    const std::vector<Slice>& keys, std::vector<std::string>* values) {
  const size_t n = keys.size();
  if (cfs.size() != n) return db_->MultiGet(ro, cfs, keys, values);
  std::vector<char> maybe(n, 1);
  size_t absent = 0;
  for (size_t i = 0; i < n; ++i) {
    if (KnownAbsent(ro, cfs[i], keys[i])) {
      maybe[i] = 0;
      ++absent;
    }
  }
  if (absent == 0) return db_->MultiGet(ro, cfs, keys, values);
  std::vector<ColumnFamilyHandle*> sub_cfs;
  std::vector<Slice> sub_keys;
  for (size_t i = 0; i < n; ++i) {
    if (maybe[i]) {
      sub_cfs.push_back(cfs[i]);
      sub_keys.push_back(keys[i]);
    }
  }
  std::vector<std::string> sub_values;
  std::vector<Status> sub_status;
  if (!sub_keys.empty())
    sub_status = db_->MultiGet(ro, sub_cfs, sub_keys, &sub_values);
  std::vector<Status> result(n);
  values->resize(n);
  size_t j = 0;
  for (size_t i = 0; i < n; ++i) {
    if (maybe[i]) {
      result[i] = sub_status[j];
      (*values)[i] = std::move(sub_values[j]);
      ++j;
    } else {
      result[i] = Status::NotFound();
      (*values)[i].clear();
    }
  }
  return result;
}
#endif  // !CUCKOO_DB_READS_FINAL

template <typename Forward>
void FilteredDBImpl::FilteredMultiGet(const ReadOptions& ro, size_t num_keys,
                                      ColumnFamilyHandle* const* cfs,
                                      const Slice* keys, PinnableSlice* values,
                                      Status* statuses, Forward&& forward) {
  // One batched (prefetching) filter probe per run of keys of one family.
  std::unique_ptr<bool[]> maybe(new bool[num_keys]);
  std::vector<uint64_t> hashes;
  size_t candidates = 0;
  for (size_t i = 0; i < num_keys;) {
    size_t j = i + 1;
    while (j < num_keys && cfs[j] == cfs[i]) ++j;
    const CfState* s = ReadState(ro, cfs[i]);
    if (s == nullptr) {
      std::fill(maybe.get() + i, maybe.get() + j, true);
    } else {
      hashes.resize(j - i);
      for (size_t k = i; k < j; ++k)
        hashes[k - i] = LiveKeyFilter::Hash(View(keys[k]));
      s->filter->MayContainHashes(hashes.data(), j - i, maybe.get() + i);
    }
    for (size_t k = i; k < j; ++k) candidates += maybe[k] ? 1 : 0;
    i = j;
  }
  if (candidates == num_keys) {
    forward(num_keys, cfs, keys, values, statuses);
    return;
  }
  std::vector<size_t> index;
  index.reserve(candidates);
  for (size_t i = 0; i < num_keys; ++i) {
    if (maybe[i]) {
      index.push_back(i);
    } else {
      values[i].Reset();
      statuses[i] = Status::NotFound();
    }
  }
  if (index.empty()) return;
  const size_t m = index.size();
  std::vector<ColumnFamilyHandle*> sub_cfs(m);
  std::vector<Slice> sub_keys(m);
  std::unique_ptr<PinnableSlice[]> sub_values(new PinnableSlice[m]);
  std::unique_ptr<Status[]> sub_status(new Status[m]);
  for (size_t j = 0; j < m; ++j) {
    sub_cfs[j] = cfs[index[j]];
    sub_keys[j] = keys[index[j]];
  }
  forward(m, sub_cfs.data(), sub_keys.data(), sub_values.get(),
          sub_status.get());
  for (size_t j = 0; j < m; ++j) {
    // PinSelf copies into the caller's PinnableSlice, which may use a
    // caller-owned std::string buffer (a move would detach it).
    PinnableSlice& out = values[index[j]];
    out.Reset();
    if (sub_status[j].ok()) out.PinSelf(sub_values[j]);
    statuses[index[j]] = sub_status[j];
  }
}

#if CUCKOO_DB_READS_FINAL
void FilteredDBImpl::MultiGet(const ReadOptions& ro, size_t num_keys,
                              ColumnFamilyHandle** cfs, const Slice* keys,
                              PinnableSlice* values, std::string* timestamps,
                              Status* statuses, bool sorted_input) {
  // Timestamp outputs are the DB's to fill (or refuse): not filtered.
  if (timestamps != nullptr || num_keys == 0) {
    return db_->MultiGet(ro, num_keys, cfs, keys, values, timestamps, statuses,
                         sorted_input);
  }
  FilteredMultiGet(ro, num_keys, cfs, keys, values, statuses,
                   [&](size_t m, ColumnFamilyHandle* const* c, const Slice* k,
                       PinnableSlice* v, Status* st) {
                     db_->MultiGet(ro, m, const_cast<ColumnFamilyHandle**>(c),
                                   k, v, nullptr, st, sorted_input);
                   });
}
#else
void FilteredDBImpl::MultiGet(const ReadOptions& ro, ColumnFamilyHandle* cf,
                              size_t num_keys, const Slice* keys,
                              PinnableSlice* values, Status* statuses,
                              bool sorted_input) {
  if (ReadState(ro, cf) == nullptr || num_keys == 0) {
    return db_->MultiGet(ro, cf, num_keys, keys, values, statuses,
                         sorted_input);
  }
  const std::vector<ColumnFamilyHandle*> cfs(num_keys, cf);
  FilteredMultiGet(ro, num_keys, cfs.data(), keys, values, statuses,
                   [&](size_t m, ColumnFamilyHandle* const*, const Slice* k,
                       PinnableSlice* v, Status* st) {
                     db_->MultiGet(ro, cf, m, k, v, st, sorted_input);
                   });
}

void FilteredDBImpl::MultiGet(const ReadOptions& ro, size_t num_keys,
                              ColumnFamilyHandle** cfs, const Slice* keys,
                              PinnableSlice* values, Status* statuses,
                              bool sorted_input) {
  if (num_keys == 0) {
    return db_->MultiGet(ro, num_keys, cfs, keys, values, statuses,
                         sorted_input);
  }
  FilteredMultiGet(ro, num_keys, cfs, keys, values, statuses,
                   [&](size_t m, ColumnFamilyHandle* const* c, const Slice* k,
                       PinnableSlice* v, Status* st) {
                     db_->MultiGet(ro, m, const_cast<ColumnFamilyHandle**>(c),
                                   k, v, st, sorted_input);
                   });
}
#endif

// ================================================================== writes

template <typename WriteFn>
Status FilteredDBImpl::WriteFiltered(const WriteOptions& wo,
                                     std::vector<Op>* ops, WriteFn&& write) {
  std::lock_guard<std::mutex> lock(write_mu_);
  CommitFinishedRebuildsLocked();
  // A column family may have been dropped before we got the lock.
  ops->erase(
      std::remove_if(ops->begin(), ops->end(),
                     [](const Op& op) {
                       return op.cf->dropped.load(std::memory_order_relaxed);
                     }),
      ops->end());
  WritePlan plan;
  Status s = PlanLocked(*ops, &plan);
  if (!s.ok()) return s;

  // 1. Keys that become live: into the filter before the DB write.
  if (!plan.inserts.empty()) {
    std::sort(plan.inserts.begin(),
              plan.inserts.end());  // groups by column family
    size_t i = 0;
    while (i < plan.inserts.size()) {
      CfState* cf = plan.inserts[i].first;
      std::vector<uint64_t> hashes;
      for (; i < plan.inserts.size() && plan.inserts[i].first == cf; ++i) {
        hashes.push_back(plan.inserts[i].second);
      }
      s = InsertAllLocked(cf, hashes);
      if (!s.ok()) return s;
    }
  }
  // 2. The DB write.
  s = write();
  if (wo.disableWAL) unlogged_writes_ = true;
  // 3. Keys that stopped being live: out of the filter after it. A failed
  // write keeps them (the filter stays a superset).
  if (s.ok()) {
    for (const auto& e : plan.erases) e.first->filter->Erase(e.second);
  }
  CfState* last = nullptr;
  for (const Op& op : *ops) {
    if (op.cf != last) AfterWriteLocked(op.cf);
    last = op.cf;
  }
  return s;
}

template <typename WriteFn>
Status FilteredDBImpl::WriteOne(const WriteOptions& wo, CfState* s, OpType type,
                                const Slice& key, WriteFn&& write) {
  std::lock_guard<std::mutex> lock(write_mu_);
  CommitFinishedRebuildsLocked();
  if (s->dropped.load(std::memory_order_relaxed)) return write();
  KeyPlan k{s, key, LiveKeyFilter::Hash(View(key)), type, type, 0, -1};
  Status st = ResolveBeforeLocked(&k);
  if (!st.ok()) return st;
  const bool after = MakesLive(type);
  if (k.before == 0 && after && !s->filter->Insert(k.hash)) {
    st = InsertAllLocked(s, {k.hash});  // grows, then inserts
    if (!st.ok()) return st;
  }
  st = write();
  if (wo.disableWAL) unlogged_writes_ = true;
  if (st.ok() && k.before == 1 && !after) s->filter->Erase(k.hash);
  AfterWriteLocked(s);
  return st;
}

Status FilteredDBImpl::PlanLocked(const std::vector<Op>& ops, WritePlan* plan) {
  // Explicit keys, in order of first appearance.
  std::vector<KeyPlan> keys;
  keys.reserve(ops.size());
  struct KeyRef {
    const CfState* cf;
    std::string_view key;
    bool operator==(const KeyRef& o) const {
      return cf == o.cf && key == o.key;
    }
  };
  struct KeyRefHash {
    size_t operator()(const KeyRef& r) const {
      return std::hash<std::string_view>()(r.key) ^
             reinterpret_cast<uintptr_t>(r.cf);
    }
  };
  std::unordered_map<KeyRef, size_t, KeyRefHash> index;
  const bool use_index = ops.size() > 8;
  auto find = [&](const CfState* cf, const Slice& key) -> KeyPlan* {
    if (use_index) {
      auto it = index.find(KeyRef{cf, View(key)});
      return it == index.end() ? nullptr : &keys[it->second];
    }
    for (KeyPlan& k : keys) {
      if (k.cf == cf && k.key == key) return &k;
    }
    return nullptr;
  };
  std::vector<std::pair<CfState*, Range>> ranges;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.type == OpType::kDeleteRange) {
      ranges.push_back({op.cf, Range{i, op.key, op.end}});
      continue;
    }
    KeyPlan* k = find(op.cf, op.key);
    if (k == nullptr) {
      keys.push_back(KeyPlan{op.cf, op.key, LiveKeyFilter::Hash(View(op.key)),
                             op.type, op.type, i, -1});
      if (use_index)
        index.emplace(KeyRef{op.cf, View(op.key)}, keys.size() - 1);
    } else {
      k->last_type = op.type;
      k->last_index = i;
    }
  }

  // DeleteRange: list the live keys of the union of each column family's
  // ranges. Every listed key was live; explicit keys inside a range that
  // are not listed were not.
  if (!ranges.empty()) {
    std::stable_sort(
        ranges.begin(), ranges.end(),
        [](const auto& a, const auto& b) { return a.first < b.first; });
    size_t r = 0;
    while (r < ranges.size()) {
      CfState* cf = ranges[r].first;
      const Comparator* cmp = cf->comparator;
      std::vector<Range> merged;
      for (; r < ranges.size() && ranges[r].first == cf; ++r) {
        const Range& range = ranges[r].second;
        if (cmp->Compare(range.begin, range.end) < 0) merged.push_back(range);
      }
      std::sort(merged.begin(), merged.end(),
                [cmp](const Range& a, const Range& b) {
                  return cmp->Compare(a.begin, b.begin) < 0;
                });
      std::vector<Range> unioned;
      for (const Range& range : merged) {
        if (!unioned.empty() &&
            cmp->Compare(range.begin, unioned.back().end) <= 0) {
          if (cmp->Compare(range.end, unioned.back().end) > 0) {
            unioned.back().end = range.end;
          }
        } else {
          unioned.push_back(range);
        }
      }
      for (const Range& range : unioned) {
        ReadOptions ro;
        ro.total_order_seek = true;
        ro.fill_cache = false;
        Slice upper = range.end;
        ro.iterate_upper_bound = &upper;
        std::unique_ptr<Iterator> it(db_->NewIterator(ro, cf->handle));
        for (it->Seek(range.begin); it->Valid(); it->Next()) {
          KeyPlan* k = find(cf, it->key());
          if (k != nullptr) {
            k->before = 1;
          } else {
            plan->erases.emplace_back(cf, LiveKeyFilter::Hash(View(it->key())));
            cf->range_deleted.fetch_add(1, std::memory_order_relaxed);
          }
        }
        if (!it->status().ok()) return it->status();
      }
      for (KeyPlan& k : keys) {
        if (k.cf != cf || k.before >= 0) continue;
        for (const Range& range : unioned) {
          if (InRange(cmp, k.key, range.begin, range.end)) {
            k.before = 0;
            break;
          }
        }
      }
    }
  }

  for (KeyPlan& k : keys) {
    // Live after the write: the last point operation makes it live and no
    // later DeleteRange covers it.
    bool after = MakesLive(k.last_type);
    for (const auto& entry : ranges) {
      if (!after) break;
      if (entry.first == k.cf && entry.second.index > k.last_index &&
          InRange(k.cf->comparator, k.key, entry.second.begin,
                  entry.second.end)) {
        after = false;
      }
    }
    if (k.before < 0) {
      Status s = ResolveBeforeLocked(&k);
      if (!s.ok()) return s;
    }
    if (k.before == 0 && after) plan->inserts.emplace_back(k.cf, k.hash);
    if (k.before == 1 && !after) plan->erases.emplace_back(k.cf, k.hash);
  }
  return Status::OK();
}

Status FilteredDBImpl::ResolveBeforeLocked(KeyPlan* k) {
  CfState* cf = k->cf;
  if (!cf->filter->MayContainHash(k->hash)) {
    k->before = 0;  // the filter is a superset: certainly not live
    return Status::OK();
  }
  if (options_.assume_unique_writes && k->first_type != OpType::kMerge) {
    // The application promises Put creates and Delete removes a live key.
    k->before = k->first_type == OpType::kPut ? 0 : 1;
    cf->assumed_unique.fetch_add(1, std::memory_order_relaxed);
    return Status::OK();
  }
  PinnableSlice value;
  const Status s = db_->Get(ReadOptions(), cf->handle, k->key, &value);
  cf->maybe_checks.fetch_add(1, std::memory_order_relaxed);
  if (s.ok()) {
    k->before = 1;
    cf->maybe_checks_live.fetch_add(1, std::memory_order_relaxed);
  } else if (s.IsNotFound()) {
    k->before = 0;
  } else {
    // Unknown. "Not live" is the safe answer: it may add a duplicate copy
    // (if the key becomes live) or keep a stale one (if it is deleted),
    // never lose a live key.
    k->before = 0;
    cf->check_errors.fetch_add(1, std::memory_order_relaxed);
  }
  return Status::OK();
}

Status FilteredDBImpl::InsertAllLocked(CfState* s,
                                       const std::vector<uint64_t>& hashes) {
  for (size_t i = 0; i < hashes.size(); ++i) {
    if (s->filter->Insert(hashes[i])) continue;
    // The table is too full. Hashes [0, i) are in it but not in the DB yet.
    if (s->bg_running.load(std::memory_order_relaxed)) {
      WaitAndCommitLocked(s);  // the delta log holds [0, i)
      if (s->filter->Insert(hashes[i])) continue;
    }
    std::vector<uint64_t> pending(hashes.begin(), hashes.begin() + i);
    s->growths.fetch_add(1, std::memory_order_relaxed);
    Status st = SyncRebuildLocked(s, s->filter->GrowthCapacity(), pending);
    if (!st.ok()) return st;
    if (!s->filter->Insert(hashes[i])) {
      return Status::Aborted("FilteredDB: no room in a freshly grown filter");
    }
  }
  return Status::OK();
}

void FilteredDBImpl::AfterWriteLocked(CfState* s) {
  if (s->bg_running.load(std::memory_order_relaxed) ||
      !s->filter->NeedsGrowth()) {
    return;
  }
  uint64_t capacity = s->filter->GrowthCapacity();
  for (int f = 0; f < s->consecutive_failures && f < 4; ++f) capacity *= 2;
  s->growths.fetch_add(1, std::memory_order_relaxed);
  Info("cuckoo live filter [%s]: load %.3f reached, growing to %llu keys%s",
       s->name.c_str(), s->filter->GetStats().load_factor,
       static_cast<unsigned long long>(capacity),
       options_.background_growth ? " in the background" : "");
  if (options_.background_growth) {
    StartBackgroundRebuildLocked(s, capacity);
  } else {
    Status st = SyncRebuildLocked(s, capacity, {});
    if (!st.ok()) {
      ++s->consecutive_failures;
      Info("cuckoo live filter [%s]: growth failed: %s", s->name.c_str(),
           st.ToString().c_str());
    }
  }
}

// ================================================================== rebuilds

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
    if (s->cancel.load(std::memory_order_relaxed)) {
      return Status::Incomplete("FilteredDB: rebuild cancelled");
    }
    // After an overflow the scan goes on counting, so that the next attempt
    // is sized from the real number of keys, not from an estimate.
    if (!*overflow && !builder->Add(LiveKeyFilter::Hash(View(it->key())))) {
      *overflow = true;
    }
    ++*scanned;
    if (!*overflow) s->keys_scanned.fetch_add(1, std::memory_order_relaxed);
    if (options_.progress_interval_keys != 0 &&
        *scanned % options_.progress_interval_keys == 0) {
      Progress(s, *scanned, false);
    }
  }
  return it->status();
}

// Builders for `capacity` keys; a failed allocation is a Status, not a throw.
Status BeginRebuildChecked(LiveKeyFilter* filter, uint64_t capacity,
                           std::unique_ptr<Builder>* builder) {
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

Status FilteredDBImpl::SyncRebuildLocked(CfState* s, uint64_t capacity,
                                         const std::vector<uint64_t>& pending) {
  // Any background rebuild is superseded by this one.
  if (s->bg_running.load(std::memory_order_relaxed)) WaitAndCommitLocked(s);
  // The largest table: kMaxBuckets buckets of 4 at target_load.
  const uint64_t max_keys = static_cast<uint64_t>(
      double((uint64_t{1} << 32) - 2) * 4 * options_.filter.target_load);
  // No attempt limit: every overflow sizes the next table from the keys
  // actually counted (issue 9, item 5: an estimate of 0 must not fail Open).
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
      if (!builder->Add(h)) {
        overflow = true;
        break;
      }
    }
    uint64_t scanned = 0;
    ReadOptions ro;
    ro.total_order_seek = true;
    ro.fill_cache = false;
    ro.readahead_size = 2 << 20;
    std::unique_ptr<Iterator> it(db_->NewIterator(ro, s->handle));
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
        s->consecutive_failures = 0;
        return Status::OK();
      }
    }
    const uint64_t counted = scanned + pending.size();
    const uint64_t next = std::max<uint64_t>(
        capacity * 2,
        counted + counted / 4 + static_cast<uint64_t>(s->filter->size()));
    Info(
        "cuckoo live filter [%s]: table for %llu keys overflowed (%llu keys "
        "counted), "
        "retrying for %llu",
        s->name.c_str(), static_cast<unsigned long long>(capacity),
        static_cast<unsigned long long>(counted),
        static_cast<unsigned long long>(next));
    capacity = next;
  }
}

void FilteredDBImpl::StartBackgroundRebuildLocked(CfState* s,
                                                  uint64_t capacity) {
  // A previous thread has installed or abandoned its result (bg_running is
  // false) and is exiting: it never blocks on write_mu_.
  if (s->bg_thread.joinable()) s->bg_thread.join();
  std::unique_ptr<Builder> builder;
  if (!BeginRebuildChecked(s->filter.get(), capacity, &builder).ok()) {
    ++s->consecutive_failures;
    Info("cuckoo live filter [%s]: cannot allocate a table for %llu keys",
         s->name.c_str(), static_cast<unsigned long long>(capacity));
    return;
  }
  ReadOptions ro;
  ro.total_order_seek = true;
  ro.fill_cache = false;
  ro.readahead_size = 2 << 20;
  // Created under write_mu_, together with BeginRebuild: the iterator's
  // implicit snapshot and the start of the delta log are the same instant.
  std::unique_ptr<Iterator> it(db_->NewIterator(ro, s->handle));
  s->bg_ready.store(false, std::memory_order_relaxed);
  s->bg_running.store(true, std::memory_order_relaxed);
  s->bg_thread = std::thread(
      [this, s](std::unique_ptr<Iterator> iter, std::unique_ptr<Builder> b) {
        BackgroundRebuild(s, std::move(iter), std::move(b));
      },
      std::move(it), std::move(builder));
}

void FilteredDBImpl::BackgroundRebuild(CfState* s, std::unique_ptr<Iterator> it,
                                       std::unique_ptr<Builder> builder) {
  uint64_t scanned = 0;
  bool overflow = false;
  Status st = ScanInto(s, it.get(), builder.get(), &scanned, &overflow);
  it.reset();
  if (st.ok() && overflow)
    st = Status::Incomplete("FilteredDB: rebuild table overflowed");
  if (st.ok()) Progress(s, scanned, true);
  {
    std::lock_guard<std::mutex> lock(s->bg_mu);
    s->bg_status = st;
    s->bg_result = st.ok() ? std::move(builder) : nullptr;
    s->bg_ready.store(true, std::memory_order_release);
  }
  s->bg_cv.notify_all();
  // Install it as soon as no writer holds the lock (writers also install a
  // ready result when they take it).
  while (!s->cancel.load(std::memory_order_relaxed) &&
         s->bg_ready.load(std::memory_order_acquire)) {
    if (write_mu_.try_lock()) {
      CommitIfReadyLocked(s);
      write_mu_.unlock();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void FilteredDBImpl::CommitIfReadyLocked(CfState* s) {
  if (!s->bg_ready.load(std::memory_order_acquire)) return;
  std::unique_ptr<Builder> builder;
  Status st;
  {
    std::lock_guard<std::mutex> lock(s->bg_mu);
    builder = std::move(s->bg_result);
    st = s->bg_status;
    s->bg_ready.store(false, std::memory_order_release);
  }
  s->bg_running.store(false, std::memory_order_relaxed);
  if (st.ok() && s->filter->Replace(std::move(builder))) {
    s->consecutive_failures = 0;
    Info("cuckoo live filter [%s]: new table installed (%llu keys, load %.3f)",
         s->name.c_str(), static_cast<unsigned long long>(s->filter->size()),
         s->filter->GetStats().load_factor);
    return;
  }
  s->filter->AbortRebuild();
  ++s->consecutive_failures;
  Info("cuckoo live filter [%s]: background rebuild abandoned: %s",
       s->name.c_str(),
       st.ok() ? "overflow while replaying writes" : st.ToString().c_str());
}

void FilteredDBImpl::CommitFinishedRebuildsLocked() {
  for (auto& s : states_) {
    if (s->bg_ready.load(std::memory_order_acquire))
      CommitIfReadyLocked(s.get());
  }
}

void FilteredDBImpl::WaitAndCommitLocked(CfState* s) {
  if (!s->bg_running.load(std::memory_order_relaxed)) return;
  {
    // The scanning thread never takes write_mu_ before bg_ready is set.
    std::unique_lock<std::mutex> lock(s->bg_mu);
    s->bg_cv.wait(lock,
                  [s] { return s->bg_ready.load(std::memory_order_acquire); });
  }
  CommitIfReadyLocked(s);
}

void FilteredDBImpl::WaitForFilterRebuilds() {
  std::lock_guard<std::mutex> lock(write_mu_);
  for (auto& s : states_) WaitAndCommitLocked(s.get());
}

void FilteredDBImpl::StopBackgroundWork() {
  for (auto& s : states_) s->cancel.store(true, std::memory_order_relaxed);
  for (auto& s : states_) {
    if (s->bg_thread.joinable()) s->bg_thread.join();
  }
  std::lock_guard<std::mutex> lock(write_mu_);
  for (auto& s : states_) {
    if (s->bg_running.load(std::memory_order_relaxed)) {
      s->bg_running.store(false, std::memory_order_relaxed);
      s->bg_ready.store(false, std::memory_order_relaxed);
      s->bg_result.reset();
      s->filter->AbortRebuild();
    }
  }
}

Status FilteredDBImpl::RebuildFilter(ColumnFamilyHandle* cf) {
  CfState* s = State(cf);
  if (s == nullptr)
    return Status::NotFound("FilteredDB: column family has no filter");
  std::lock_guard<std::mutex> lock(write_mu_);
  if (s->bg_running.load(std::memory_order_relaxed)) WaitAndCommitLocked(s);
  const uint64_t keys = s->filter->size();
  const uint64_t capacity = std::max<uint64_t>(
      options_.filter.initial_capacity,
      static_cast<uint64_t>(double(keys) * options_.filter.max_load /
                            options_.filter.target_load) +
          1);
  return SyncRebuildLocked(s, capacity, {});
}

// ================================================================== other

Status FilteredDBImpl::IngestExternalFiles(
    const std::vector<IngestExternalFileArg>& args) {
  std::vector<CfState*> touched;
  for (const auto& arg : args) {
    CfState* s = State(arg.column_family);
    if (s != nullptr) touched.push_back(s);
  }
  if (touched.empty()) return db_->IngestExternalFiles(args);
  std::lock_guard<std::mutex> lock(write_mu_);
  // An ingestion need not consume a sequence number: a snapshot written
  // before it must not be loaded after it (issue 9, item 1).
  RemoveSnapshotFiles(&touched);
  for (CfState* s : touched) {
    if (s->bg_running.load(std::memory_order_relaxed)) WaitAndCommitLocked(s);
    // Ingested keys are not in the filter: reads go to the DB until the
    // filter has been rebuilt from it.
    s->filter->SetBypass(true);
  }
  Status result = db_->IngestExternalFiles(args);
  for (CfState* s : touched) {
    uint64_t estimate = 0;
    db_->GetIntProperty(s->handle, "rocksdb.estimate-num-keys", &estimate);
    const uint64_t capacity =
        std::max<uint64_t>({options_.filter.initial_capacity,
                            s->filter->GrowthCapacity(), estimate});
    Status st = SyncRebuildLocked(s, capacity, {});
    if (st.ok()) {
      s->filter->SetBypass(false);
    } else {
      Info(
          "cuckoo live filter [%s]: rebuild after ingestion failed (%s); the "
          "filter "
          "stays bypassed until RebuildFilter succeeds",
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
  std::lock_guard<std::mutex> lock(write_mu_);
  Status st = db_->DropColumnFamilies(cfs);
  if (st.ok()) {
    for (CfState* s : touched) {
      if (s->bg_running.load(std::memory_order_relaxed)) WaitAndCommitLocked(s);
      s->filter->SetBypass(true);
      s->dropped.store(true, std::memory_order_release);
    }
  }
  return st;
}

Status FilteredDBImpl::GetFilterStats(ColumnFamilyHandle* cf,
                                      LiveKeyFilterStats* stats) const {
  const CfState* s = State(cf);
  if (s == nullptr)
    return Status::NotFound("FilteredDB: column family has no filter");
  *stats = s->filter->GetStats();
  stats->maybe_checks = s->maybe_checks.load(std::memory_order_relaxed);
  stats->maybe_checks_live =
      s->maybe_checks_live.load(std::memory_order_relaxed);
  stats->check_errors = s->check_errors.load(std::memory_order_relaxed);
  stats->assumed_unique = s->assumed_unique.load(std::memory_order_relaxed);
  stats->range_deleted = s->range_deleted.load(std::memory_order_relaxed);
  stats->keys_scanned = s->keys_scanned.load(std::memory_order_relaxed);
  stats->growths = s->growths.load(std::memory_order_relaxed);
  stats->loaded_from_snapshot = s->loaded_from_snapshot;
  stats->snapshot_status = s->snapshot_status;
  return Status::OK();
}

void FilteredDBImpl::Info(const char* format, ...) const {
  if (info_log_ == nullptr) return;
  char buf[512];
  va_list ap;
  va_start(ap, format);
  vsnprintf(buf, sizeof(buf), format, ap);
  va_end(ap);
  ROCKSDB_NAMESPACE::Log(InfoLogLevel::INFO_LEVEL, info_log_, "%s", buf);
}

// ================================================================== open/close

Status FilteredDBImpl::Init(const std::vector<ColumnFamilyHandle*>& handles) {
  Status s = db_->GetDbIdentity(db_id_);
  if (!s.ok()) return s;
  info_log_ = db_->GetDBOptions().info_log;
  const auto& wanted = options_.filtered_column_families;
  std::vector<bool> matched(wanted.size(), false);
  uint32_t max_id = 0;
  for (ColumnFamilyHandle* h : handles) {
    const std::string name = h->GetName();
    auto pos = std::find(wanted.begin(), wanted.end(), name);
    if (!wanted.empty() && pos == wanted.end()) continue;
    // A name listed twice is one column family.
    for (size_t i = 0; i < wanted.size(); ++i) {
      if (wanted[i] == name) matched[i] = true;
    }
    if (h->GetComparator()->timestamp_size() != 0) {
      return Status::NotSupported("FilteredDB: column family '" + name +
                                  "' uses user-defined timestamps");
    }
    auto state = std::make_unique<CfState>();
    state->id = h->GetID();
    state->name = name;
    state->handle = h;
    state->comparator = h->GetComparator();
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
  if (options_.snapshot_dir.empty()) {
    s->snapshot_status = "disabled";
  } else {
    std::string data;
    const std::string path = SnapshotPath(s);
    Status st = ROCKSDB_NAMESPACE::ReadFileToString(db_->GetEnv(), path, &data);
    if (st.IsNotFound() || st.IsPathNotFound()) {
      s->snapshot_status = "none";
    } else if (!st.ok()) {
      s->snapshot_status = "ignored: read error: " + st.ToString();
    } else {
      std::string why;
      std::unique_ptr<Builder> builder = LiveKeyFilter::DecodeSnapshot(
          options_.filter, data,
          Identity(s, db_->GetLatestSequenceNumber(), open_state_), &why);
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
      std::vector<CfState*> one{s};
      RemoveSnapshotFiles(&one);
    }
  }
  std::lock_guard<std::mutex> lock(write_mu_);
  if (!s->loaded_from_snapshot) {
    uint64_t estimate = 0;
    db_->GetIntProperty(s->handle, "rocksdb.estimate-num-keys", &estimate);
    // estimate-num-keys undercounts when deletes are pending; the slack
    // avoids an immediate growth in the common case (a growth still fixes
    // any miss).
    const uint64_t capacity = std::max<uint64_t>(
        options_.filter.initial_capacity, estimate + estimate / 4);
    Info("cuckoo live filter [%s]: building from the DB (capacity %llu keys)",
         s->name.c_str(), static_cast<unsigned long long>(capacity));
    Status st = SyncRebuildLocked(s, capacity, {});
    if (!st.ok()) return st;
  }
  AfterWriteLocked(s);  // grows if the DB had more keys than estimated
  return Status::OK();
}

Status FilteredDBImpl::WriteSnapshotFile(const std::string& path,
                                         const std::string& data) {
  Env* env = db_->GetEnv();
  Status s = env->CreateDirIfMissing(options_.snapshot_dir);
  if (!s.ok()) return s;
  const std::string tmp = path + ".tmp";
  s = ROCKSDB_NAMESPACE::WriteStringToFile(env, data, tmp,
                                           /*should_sync=*/true);
  if (s.ok()) s = env->RenameFile(tmp, path);
  return s;
}

Status FilteredDBImpl::PersistFilterSnapshots() {
  if (options_.snapshot_dir.empty()) {
    return Status::InvalidArgument("FilteredDB: no snapshot_dir configured");
  }
  std::lock_guard<std::mutex> lock(write_mu_);
  Status st = MakeWritesDurableLocked();
  if (!st.ok()) return st;
  const SequenceNumber seq = db_->GetLatestSequenceNumber();
  const std::string state = CurrentDbState();
  if (state.empty())
    return Status::IOError(
        "FilteredDB: cannot read the DB's MANIFEST/WAL state");
  for (auto& s : states_) {
    if (s->dropped.load(std::memory_order_relaxed)) continue;
    st = WriteSnapshotFile(
        SnapshotPath(s.get()),
        s->filter->EncodeSnapshot(Identity(s.get(), seq, state)));
    if (!st.ok()) return st;
  }
  return Status::OK();
}

Status FilteredDBImpl::MakeWritesDurableLocked() {
  if (unlogged_writes_) {
    // Writes without WAL would be lost by a crash while the DB keeps its
    // sequence number: make them durable before recording the sequence.
    std::vector<ColumnFamilyHandle*> handles;
    for (auto& s : states_) {
      if (!s->dropped.load(std::memory_order_relaxed))
        handles.push_back(s->handle);
    }
    Status st = db_->Flush(ROCKSDB_NAMESPACE::FlushOptions(), handles);
    if (!st.ok()) return st;
    unlogged_writes_ = false;
  }
  // manual_wal_flush keeps writes in RocksDB's buffer, and the OS may lose
  // unsynced WAL bytes: flush and sync the WAL (issue 9, item 2).
  return db_->FlushWAL(/*sync=*/true);
}

void FilteredDBImpl::RemoveSnapshotFiles(const std::vector<CfState*>* which) {
  if (options_.snapshot_dir.empty()) return;
  Env* env = db_->GetEnv();
  bool removed = false;
  auto remove = [&](const CfState* s) {
    const std::string path = SnapshotPath(s);
    if (env->FileExists(path).ok()) {
      Status st = env->DeleteFile(path);
      if (!st.ok()) {
        Info("cuckoo live filter [%s]: cannot remove snapshot %s: %s",
             s->name.c_str(), path.c_str(), st.ToString().c_str());
      }
      removed = true;
    }
  };
  if (which != nullptr) {
    for (const CfState* s : *which) remove(s);
  } else {
    for (const auto& s : states_) remove(s.get());
  }
  if (removed) {
    std::unique_ptr<ROCKSDB_NAMESPACE::Directory> dir;
    if (env->NewDirectory(options_.snapshot_dir, &dir).ok()) {
      dir->Fsync().PermitUncheckedError();
      dir->Close().PermitUncheckedError();
    }
  }
}

Status FilteredDBImpl::CloseImpl() {
  if (closed_) return close_status_;
  StopBackgroundWork();
  bool persist = false;
  SequenceNumber seq = 0;
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (initialized_ && options_.persist_on_close &&
        !options_.snapshot_dir.empty()) {
      // The sequence recorded must be durable (WAL flushed and synced, or
      // unlogged writes flushed by the close itself).
      const bool durable =
          !unlogged_writes_ || !db_->GetDBOptions().avoid_flush_during_shutdown;
      persist = durable && db_->FlushWAL(/*sync=*/true).ok();
      seq = db_->GetLatestSequenceNumber();
    }
  }
  Status s = db_->Close();
  if (s.IsAborted()) {
    // Nothing was closed (e.g. unreleased snapshots): the DB stays usable,
    // growth may run again, and Close can be retried.
    for (auto& st : states_) st->cancel.store(false, std::memory_order_relaxed);
    return s;
  }
  if (s.ok() && persist) {
    // Written after the DB closed cleanly, bound to the files it left.
    const std::string state = CurrentDbState();
    for (auto& cf : states_) {
      if (state.empty() || cf->dropped.load(std::memory_order_relaxed))
        continue;
      Status st = WriteSnapshotFile(
          SnapshotPath(cf.get()),
          cf->filter->EncodeSnapshot(Identity(cf.get(), seq, state)));
      if (!st.ok() && s.ok()) s = st;
    }
  }
  closed_ = true;
  close_status_ = s;
  return s;
}

}  // namespace

// ================================================================== factories

namespace {

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

}  // namespace

Status FilteredDB::Open(const Options& options, const std::string& name,
                        const FilteredDBOptions& filtered_options,
                        std::unique_ptr<FilteredDB>* db) {
  db->reset();
  const std::string invalid =
      ValidateLiveKeyFilterOptions(filtered_options.filter);
  if (!invalid.empty())
    return Status::InvalidArgument("FilteredDB: " + invalid);
  // Before DB::Open, which rewrites the MANIFEST: the state a snapshot
  // written at the last Close must match.
  std::string open_state =
      filtered_options.snapshot_dir.empty()
          ? std::string()
          : DbStateDigest(options.env, name, options.wal_dir);
  DB* raw = nullptr;
#if CUCKOO_DB_OPEN_UNIQUE_PTR
  std::unique_ptr<DB> opened;
  Status s = DB::Open(options, name, &opened);
  raw = opened.release();
#else
  Status s = DB::Open(options, name, &raw);
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
  const std::string invalid =
      ValidateLiveKeyFilterOptions(filtered_options.filter);
  if (!invalid.empty())
    return Status::InvalidArgument("FilteredDB: " + invalid);
  std::string open_state =
      filtered_options.snapshot_dir.empty()
          ? std::string()
          : DbStateDigest(db_options.env, name, db_options.wal_dir);
  DB* raw = nullptr;
#if CUCKOO_DB_OPEN_UNIQUE_PTR
  std::unique_ptr<DB> opened;
  Status s = DB::Open(db_options, name, column_families, handles, &opened);
  raw = opened.release();
#else
  Status s = DB::Open(db_options, name, column_families, handles, &raw);
#endif
  if (!s.ok()) return s;
  return Wrap(raw, *handles, handles, filtered_options, std::move(open_state),
              db);
}

}  // namespace rocksdb_cuckoo
