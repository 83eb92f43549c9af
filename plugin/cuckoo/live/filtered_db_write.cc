// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB writes: every write touching a filtered column family is
// planned (write_plan.h), then the filter is updated around the DB write
// (protocol and locks in filtered_db_impl.h).
#include <algorithm>
#include <shared_mutex>

#include "filtered_db_impl.h"
#include "rocksdb/iterator.h"
#include "rocksdb/write_batch.h"

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::Iterator;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WideColumns;
using ROCKSDB_NAMESPACE::WriteBatch;
using ROCKSDB_NAMESPACE::WriteOptions;

// ------------------------------------------------------------ entry points

namespace {

using effect_log::OpEffect;

// A write of one operation (added by `add`) with its filter effect record
// (effect_log::OneOp, or a WriteRecord for a DeleteRange) in the same
// WriteBatch: DB::Put and the others build that batch too (same
// reservation, one allocation), without the bytes of the record.
template <typename AddOp>
Status WriteOpWithRecord(DB* db, const WriteOptions& wo, size_t reserve,
                         const Slice& record, AddOp&& add) {
  WriteBatch batch(reserve, 0 /* max_bytes */, wo.protection_bytes_per_key,
                   0 /* default_cf_ts_sz */);
  Status s = add(&batch);
  if (!s.ok()) return s;
  s = batch.PutLogData(record);
  if (!s.ok()) return s;
  return db->Write(wo, &batch);
}

// Reserved bytes: as DB::Put (header 12, type, cf, lengths), plus the
// record (tag, length, 3 bytes).
constexpr size_t kOneOpReserve = 24 + 5;

}  // namespace

Status FilteredDBImpl::Put(const WriteOptions& wo, ColumnFamilyHandle* cf,
                           const Slice& key, const Slice& value) {
  CfState* s = State(cf);
  if (s == nullptr) return db_->Put(wo, cf, key, value);
  return WriteOne(wo, s, OpType::kPut, key, [&](OpEffect e) {
    return WriteOpWithRecord(db_, wo, key.size() + value.size() + kOneOpReserve,
                             effect_log::OneOp(e), [&](WriteBatch* b) {
                               return b->Put(cf, key, value);
                             });
  });
}

Status FilteredDBImpl::PutEntity(const WriteOptions& wo, ColumnFamilyHandle* cf,
                                 const Slice& key, const WideColumns& columns) {
  CfState* s = State(cf);
  if (s == nullptr) return db_->PutEntity(wo, cf, key, columns);
  return WriteOne(wo, s, OpType::kPut, key, [&](OpEffect e) {
    return WriteOpWithRecord(
        db_, wo, 0, effect_log::OneOp(e),
        [&](WriteBatch* b) { return b->PutEntity(cf, key, columns); });
  });
}

Status FilteredDBImpl::Delete(const WriteOptions& wo, ColumnFamilyHandle* cf,
                              const Slice& key) {
  CfState* s = State(cf);
  if (s == nullptr) return db_->Delete(wo, cf, key);
  return WriteOne(wo, s, OpType::kDelete, key, [&](OpEffect e) {
    return WriteOpWithRecord(db_, wo, key.size() + kOneOpReserve,
                             effect_log::OneOp(e),
                             [&](WriteBatch* b) { return b->Delete(cf, key); });
  });
}

Status FilteredDBImpl::SingleDelete(const WriteOptions& wo,
                                    ColumnFamilyHandle* cf, const Slice& key) {
  CfState* s = State(cf);
  if (s == nullptr) return db_->SingleDelete(wo, cf, key);
  return WriteOne(wo, s, OpType::kDelete, key, [&](OpEffect e) {
    return WriteOpWithRecord(
        db_, wo, key.size() + kOneOpReserve, effect_log::OneOp(e),
        [&](WriteBatch* b) { return b->SingleDelete(cf, key); });
  });
}

Status FilteredDBImpl::Merge(const WriteOptions& wo, ColumnFamilyHandle* cf,
                             const Slice& key, const Slice& value) {
  CfState* s = State(cf);
  if (s == nullptr) return db_->Merge(wo, cf, key, value);
  return WriteOne(wo, s, OpType::kMerge, key, [&](OpEffect e) {
    return WriteOpWithRecord(db_, wo, key.size() + value.size() + kOneOpReserve,
                             effect_log::OneOp(e), [&](WriteBatch* b) {
                               return b->Merge(cf, key, value);
                             });
  });
}

Status FilteredDBImpl::DeleteRange(const WriteOptions& wo,
                                   ColumnFamilyHandle* cf, const Slice& begin,
                                   const Slice& end) {
  CfState* s = State(cf);
  if (s == nullptr) return db_->DeleteRange(wo, cf, begin, end);
  std::vector<Op> ops{Op{s, OpType::kDeleteRange, begin, end}};
  return WriteFiltered(wo, &ops, [&](const effect_log::WriteEffects& e) {
    return WriteOpWithRecord(db_, wo, 0, e.Record(1), [&](WriteBatch* b) {
      return b->DeleteRange(cf, begin, end);
    });
  });
}

Status FilteredDBImpl::Write(const WriteOptions& wo, WriteBatch* batch) {
  if (batch == nullptr) return db_->Write(wo, batch);
  std::vector<Op> ops;
  BatchCollector collector(&by_id_, &ops);
  Status s = batch->Iterate(&collector);
  if (s.ok()) s = collector.LogDataStatus();
  if (!s.ok()) return s;
  if (ops.empty()) return db_->Write(wo, batch);
  return WriteOps(wo, &ops, [&](const effect_log::WriteEffects& e) {
    return effect_log::WriteWithRecord(
        *batch, e.Record(batch->Count()),
        [&](WriteBatch* b) { return db_->Write(wo, b); });
  });
}

// ------------------------------------------------------------ protocol

Status FilteredDBImpl::WriteForTransaction(
    const WriteOptions& wo, std::vector<Op>* ops,
    const std::function<Status(const effect_log::WriteEffects&)>& write,
    bool (*unwritten)(const Status&)) {
  return WriteOps(wo, ops, write, unwritten);
}

template <typename WriteFn>
Status FilteredDBImpl::WriteOps(const WriteOptions& wo, std::vector<Op>* ops,
                                WriteFn&& write,
                                bool (*unwritten)(const Status&)) {
  const bool ranges = std::any_of(ops->begin(), ops->end(), [](const Op& op) {
    return op.type == OpType::kDeleteRange;
  });
  if (!ranges) {
    Status st;
    if (WriteOpsShared(wo, ops, write, &st, unwritten)) {
      AfterWriteShared(*ops);
      return st;
    }
  }
  return WriteFiltered(wo, ops, write, unwritten);
}

namespace {

// The record of a write of several operations: every filtered family the
// write touches (listed even without effects: a replay accepts an
// operation as covered only if the record names its family, so a family
// this open does not filter stays uncovered), with the plan's inserts and
// its erases after the write.
effect_log::WriteEffects EffectsOf(
    const std::vector<Op>& ops,
    const std::vector<std::pair<CfState*, uint64_t>>& inserts,
    const std::vector<std::pair<CfState*, uint64_t>>& erases) {
  effect_log::WriteEffects e;
  for (const Op& op : ops) e.Family(op.cf->id);
  for (const auto& [cf, hash] : inserts)
    e.Family(cf->id).inserts.push_back(hash);
  for (const auto& [cf, hash] : erases) e.Family(cf->id).erases.push_back(hash);
  return e;
}

}  // namespace

// Locks stripes in ascending index order (so that writers of several keys
// never deadlock with each other or with single-key writers) and unlocks
// them when destroyed.
class FilteredDBImpl::StripeLocks {
 public:
  StripeLocks(FilteredDBImpl* db, std::vector<uint32_t>* stripes) : db_(db) {
    std::sort(stripes->begin(), stripes->end());
    stripes->erase(std::unique(stripes->begin(), stripes->end()),
                   stripes->end());
    stripes_.swap(*stripes);
    for (uint32_t i : stripes_) db_->stripes_[i].mu.lock();
  }
  ~StripeLocks() {
    for (auto it = stripes_.rbegin(); it != stripes_.rend(); ++it) {
      db_->stripes_[*it].mu.unlock();
    }
  }
  StripeLocks(const StripeLocks&) = delete;
  StripeLocks& operator=(const StripeLocks&) = delete;

 private:
  FilteredDBImpl* db_;
  std::vector<uint32_t> stripes_;
};

template <typename WriteFn>
bool FilteredDBImpl::WriteOpsShared(const WriteOptions& wo,
                                    std::vector<Op>* ops, WriteFn& write,
                                    Status* status,
                                    bool (*unwritten)(const Status&)) {
  std::shared_lock<WriterLock> shared(write_mu_);
  // Drops take the exclusive lock: a family not dropped now stays so.
  ops->erase(
      std::remove_if(ops->begin(), ops->end(),
                     [](const Op& op) {
                       return op.cf->dropped.load(std::memory_order_relaxed);
                     }),
      ops->end());
  if (ops->empty()) {
    *status = write(effect_log::WriteEffects());
    return true;
  }
  // Every key's stripe, so that the point reads below see every earlier
  // write of the keys and no later one (as a single-key write).
  std::vector<uint64_t> slots;
  std::vector<uint32_t> stripes;
  slots.reserve(ops->size());
  stripes.reserve(ops->size());
  for (const Op& op : *ops) {
    const uint64_t slot = KeySlot(op.cf, cuckoo::HashKey(View(op.key)).value);
    slots.push_back(slot);
    stripes.push_back(static_cast<uint32_t>(slot % kStripes));
  }
  StripeLocks locked(this, &stripes);
  CfState* last = nullptr;
  for (const Op& op : *ops) {
    if (op.cf != last && op.cf->rebuilder->ready()) {
      std::lock_guard<std::mutex> lock(filter_mu_);
      CommitIfReadyLocked(op.cf);
    }
    last = op.cf;
  }
  // Deletes are checked after the write (deferred checks) unless the
  // options ask for reads before it.
  const bool unchecked = UncheckedDeletes();
  const bool defer = unchecked || (options_.defer_delete_checks &&
                                   !options_.assume_unique_writes);
  WritePlan plan;
  Status s = PlanWrite(*ops, this, defer, &plan);
  if (!s.ok()) {
    *status = s;
    return true;
  }
  // Unchecked deletes (unchecked_delete_ratio): the keys the planner left to
  // a check keep their fingerprints, and nothing reads them.
  std::vector<KeyPlan> unchecked_keys;
  if (unchecked) unchecked_keys.swap(plan.deferred);
  // Deletes whose check is deferred: a snapshot of the state before the
  // write for each (the stripes are held), as for a single-key Delete.
  // Without one (the DB gives none), the key is read now.
  std::vector<SharedSnapshot*> deferred(plan.deferred.size());
  std::vector<KeyPlan*> check_now;
  for (size_t i = 0; i < plan.deferred.size(); ++i) {
    deferred[i] = check_snapshots_->Acquire(
        KeySlot(plan.deferred[i].cf, plan.deferred[i].hash));
    if (deferred[i] == nullptr) check_now.push_back(&plan.deferred[i]);
  }
  auto release_deferred = [&] {
    for (SharedSnapshot* snapshot : deferred) {
      if (snapshot != nullptr) check_snapshots_->Release(snapshot);
    }
  };
  if (!check_now.empty()) {
    s = ResolveBeforeAll(check_now);
    if (!s.ok()) {
      release_deferred();
      *status = s;
      return true;
    }
    for (const KeyPlan* k : check_now) {
      if (k->before == 1) plan.erases.emplace_back(k->cf, k->hash);
    }
  }
  // 1. Keys that become live: into the filters before the DB write. A table
  // too full to take one without a rescan: the copies added so far are taken
  // out again (each is there: copies of one hash are interchangeable) and
  // the write goes to the exclusive path.
  for (size_t i = 0; i < plan.inserts.size(); ++i) {
    const auto& [cf, hash] = plan.inserts[i];
    if (!cf->filter->Insert(cuckoo::KeyHash(hash))) {
      for (size_t j = 0; j < i; ++j) {
        plan.inserts[j].first->filter->Erase(
            cuckoo::KeyHash(plan.inserts[j].second));
      }
      release_deferred();
      return false;
    }
  }
  // 2. The DB write, with its effects (the deferred checks' erasures are the
  // checker's); then every key's slot is marked (check snapshots).
  TestHook("WriteOpsShared:BeforeWrite");
  *status = write(EffectsOf(*ops, plan.inserts, plan.erases));
  for (uint64_t slot : slots) check_snapshots_->MarkWritten(slot);
  if (wo.disableWAL) unlogged_writes_ = true;
  // 3. Keys that stopped being live: out after a successful write, now or
  // once their deferred check found them live before it.
  for (const KeyPlan& k : plan.keys) UpdateRecentKey(k, status->ok());
  if (!status->ok()) {
    release_deferred();  // nothing deleted: every fingerprint stays
    if (unwritten != nullptr && unwritten(*status)) {
      // Nothing was written: the copies inserted for it go again.
      for (const auto& [cf, hash] : plan.inserts) {
        cf->filter->Erase(cuckoo::KeyHash(hash));
      }
    }
    return true;
  }
  for (const auto& [cf, hash] : plan.erases) {
    cf->filter->Erase(cuckoo::KeyHash(hash));
  }
  for (const KeyPlan& k : unchecked_keys) CountUnchecked(k.cf, 1);
  for (size_t i = 0; i < plan.deferred.size(); ++i) {
    if (deferred[i] == nullptr) continue;  // checked before the write
    const KeyPlan& k = plan.deferred[i];
    k.cf->counters.Add<&FilteredDBStats::pending_checks>();
    checker_->Add({k.cf, k.key.ToString(), k.hash, deferred[i]});
  }
  return true;
}

void FilteredDBImpl::AfterWriteShared(const std::vector<Op>& ops) {
  CfState* last = nullptr;
  for (const Op& op : ops) {
    CfState* s = op.cf;
    if (s == last) continue;
    last = s;
    if (!s->rebuilder->running() &&
        (s->filter->RescanWanted() || s->open_build.load() ||
         UncheckedRebuildDue(s))) {
      ExclusiveLock lock(this);
      if (!s->dropped.load(std::memory_order_relaxed)) AfterWriteLocked(s);
    }
  }
}

template <typename WriteFn>
Status FilteredDBImpl::WriteFiltered(const WriteOptions& wo,
                                     std::vector<Op>* ops, WriteFn&& write,
                                     bool (*unwritten)(const Status&)) {
  ExclusiveLock lock(this);
  CommitFinishedRebuildsLocked();
  recent_keys_.Clear();  // not kept up to date under the exclusive lock
  // A column family may have been dropped before we got the lock.
  ops->erase(
      std::remove_if(ops->begin(), ops->end(),
                     [](const Op& op) {
                       return op.cf->dropped.load(std::memory_order_relaxed);
                     }),
      ops->end());
  WritePlan plan;
  Status s = PlanWrite(*ops, this, /*defer_checks=*/false, &plan);
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
  // 2. The DB write, with its effects.
  s = write(EffectsOf(*ops, plan.inserts, plan.erases));
  if (wo.disableWAL) unlogged_writes_ = true;
  // 3. Keys that stopped being live: out of the filter after it. A failed
  // write keeps them (the filter stays a superset).
  if (s.ok()) {
    for (const auto& e : plan.erases) {
      e.first->filter->Erase(cuckoo::KeyHash(e.second));
    }
  } else if (unwritten != nullptr && unwritten(s)) {
    // Nothing was written: the copies inserted for it go again (copies of a
    // fingerprint are interchangeable), leaving the filter as it was.
    for (const auto& e : plan.inserts) {
      e.first->filter->Erase(cuckoo::KeyHash(e.second));
    }
  }
  CfState* last = nullptr;
  for (const Op& op : *ops) {
    if (op.cf != last) AfterWriteLocked(op.cf);
    last = op.cf;
  }
  return s;
}

namespace {
std::atomic<TestHookFn> test_hook{nullptr};
}  // namespace

void SetTestHook(TestHookFn hook) { test_hook.store(hook); }

void TestHook(const char* point) {
  TestHookFn hook = test_hook.load(std::memory_order_relaxed);
  if (hook != nullptr) hook(point);
}

template <typename WriteFn>
Status FilteredDBImpl::WriteOne(const WriteOptions& wo, CfState* s, OpType type,
                                const Slice& key, WriteFn&& write) {
  // The key's hash and slot before any lock, and the cache lines that the
  // write touches after its DB write (the key's check-snapshot mark and
  // recent-keys partition) and its stripe: their loads overlap with the
  // lock, the filter's work and the DB write instead of following it.
  const uint64_t hash = cuckoo::HashKey(View(key)).value;
  const uint64_t slot = KeySlot(s, hash);
  __builtin_prefetch(&Stripe(s, hash), 1);
  check_snapshots_->Prefetch(slot);
  recent_keys_.Prefetch(slot);
  Status st;
  if (!WriteOneShared(wo, s, type, key, hash, write, &st)) {
    st = WriteOneExclusive(wo, s, type, key, hash, write);
  }
  // Only a write that makes a key live can raise the load; only a delete
  // can leave a fingerprint unchecked.
  if (!s->rebuilder->running() &&
      (MakesLive(type) ? s->filter->RescanWanted() || s->open_build.load()
                       : UncheckedRebuildDue(s))) {
    ExclusiveLock lock(this);
    if (!s->dropped.load(std::memory_order_relaxed)) AfterWriteLocked(s);
  }
  return st;
}

template <typename WriteFn>
bool FilteredDBImpl::WriteOneShared(const WriteOptions& wo, CfState* s,
                                    OpType type, const Slice& key,
                                    uint64_t hash, WriteFn&& write,
                                    Status* status) {
  std::shared_lock<WriterLock> shared(write_mu_);
  if (s->dropped.load(std::memory_order_relaxed)) {
    *status = write(effect_log::OpEffect::kNone);
    return true;
  }
  KeyPlan k{s, key, hash, type, type, 0, -1};
  k.after = MakesLive(type);
  const bool after = k.after;
  std::lock_guard<StripeLock> stripe(Stripe(s, k.hash));
  const uint64_t slot = KeySlot(s, k.hash);
  if (s->rebuilder->ready()) {
    std::lock_guard<std::mutex> lock(filter_mu_);
    CommitIfReadyLocked(s);
  }
  SharedSnapshot* deferred = nullptr;
  bool unchecked = false;
  if (!ResolveFromFilter(&k) && !ResolveKnown(&k)) {
    if (!after && UncheckedDeletes()) {
      // The fingerprint stays (an extra positive until the next rebuild):
      // nothing to read.
      k.before = 0;
      unchecked = true;
    } else if (!after && options_.defer_delete_checks &&
               !options_.assume_unique_writes) {
      // Decided after the write, at a snapshot of the state before it.
      deferred = check_snapshots_->Acquire(slot);
    }
    if (deferred == nullptr && !unchecked) {
      Status st = ResolveBefore(&k);
      if (!st.ok()) {
        *status = st;
        return true;
      }
    }
  }
  // The recent-keys entry a key made live is recorded in (below): its load
  // overlaps with the filter insert's work (the partition is stable: the
  // stripe is held; its hashes were prefetched before the locks, and have
  // had the probe's time to arrive).
  if (after) recent_keys_.PrefetchAddTarget(slot);
  // The filter's writer calls synchronize on the filter's own mutex.
  if (k.before == 0 && after && !s->filter->Insert(cuckoo::KeyHash(k.hash))) {
    return false;  // needs a rebuild from the DB
  }
  // The write's effect, in its WAL record (effect_log.h): what this writer
  // does to the filter around it.
  effect_log::OpEffect effect = effect_log::OpEffect::kNone;
  if (deferred != nullptr || unchecked) {
    // The fingerprint stays for now (a replay counts it: wal_replay.h,
    // ReplaySink::deferred).
    effect = effect_log::OpEffect::kDeferred;
  } else if (k.before == 0 && after) {
    effect = effect_log::OpEffect::kInsert;
  } else if (k.before == 1 && !after) {
    effect = effect_log::OpEffect::kErase;
  }
  // A key the write makes live is recorded before the DB write, while the
  // partition's lines are in the cache (the DB write evicts them): only a
  // holder of the key's stripe (or of the exclusive lock, which waits for
  // this writer) reads the partition, and this writer holds the stripe
  // until it has forgotten the key again if the write failed, so no one
  // sees the record before the write's outcome.
  if (after) UpdateRecentKey(k, /*ok=*/true);
  TestHook("WriteOneShared:BeforeWrite");
  *status = write(effect);
  // After the write, whatever its outcome: a later delete of the key must
  // not use a check snapshot taken before this write.
  check_snapshots_->MarkWritten(slot);
  if (wo.disableWAL) unlogged_writes_ = true;
  if (status->ok() && k.before == 1 && !after) {
    s->filter->Erase(cuckoo::KeyHash(k.hash));
  }
  if (!after) {
    UpdateRecentKey(k, status->ok());
  } else if (!status->ok()) {
    ForgetRecentKey(k);  // recorded before the write
  }
  if (unchecked && status->ok()) CountUnchecked(s, 1);
  if (deferred != nullptr) {
    if (!status->ok()) {
      check_snapshots_->Release(deferred);  // nothing deleted: keep the entry
    } else {
      s->counters.Add<&FilteredDBStats::pending_checks>();
      checker_->Add({s, key.ToString(), k.hash, deferred});
    }
  }
  return true;
}

template <typename WriteFn>
Status FilteredDBImpl::WriteOneExclusive(const WriteOptions& wo, CfState* s,
                                         OpType type, const Slice& key,
                                         uint64_t hash, WriteFn&& write) {
  ExclusiveLock lock(this);
  CommitFinishedRebuildsLocked();
  recent_keys_.Clear();  // not kept up to date under the exclusive lock
  if (s->dropped.load(std::memory_order_relaxed)) {
    return write(effect_log::OpEffect::kNone);
  }
  KeyPlan k{s, key, hash, type, type, 0, -1};
  if (!ResolveFromFilter(&k)) {
    Status st = ResolveBefore(&k);
    if (!st.ok()) return st;
  }
  const bool after = MakesLive(type);
  if (k.before == 0 && after && !s->filter->Insert(cuckoo::KeyHash(k.hash))) {
    Status st = InsertAllLocked(s, {k.hash});  // grows, then inserts
    if (!st.ok()) return st;
  }
  Status st = write(k.before == 0 && after    ? effect_log::OpEffect::kInsert
                    : k.before == 1 && !after ? effect_log::OpEffect::kErase
                                              : effect_log::OpEffect::kNone);
  if (wo.disableWAL) unlogged_writes_ = true;
  if (st.ok() && k.before == 1 && !after) {
    s->filter->Erase(cuckoo::KeyHash(k.hash));
  }
  AfterWriteLocked(s);
  return st;
}

void FilteredDBImpl::ResolveDeferredChecks(
    std::vector<DeleteChecker::Check>* checks) {
  TestHook("ResolveDeferredChecks:BeforeRead");
  // One MultiGet per snapshot (checks of one snapshot are usually adjacent;
  // the stable sort keeps the order within one).
  std::stable_sort(
      checks->begin(), checks->end(),
      [](const DeleteChecker::Check& a, const DeleteChecker::Check& b) {
        return a.snapshot->generation < b.snapshot->generation;
      });
  const size_t n = checks->size();
  std::vector<ColumnFamilyHandle*> cfs(n);
  std::vector<Slice> keys(n);
  std::vector<PinnableSlice> values(n);
  std::vector<Status> statuses(n);
  for (size_t i = 0; i < n; ++i) {
    cfs[i] = (*checks)[i].cf->handle;
    keys[i] = (*checks)[i].key;
  }
  // Each run of checks sharing a snapshot: one MultiGet, then the run's
  // references are dropped (the erases below need only the answers).
  for (size_t begin = 0, end; begin < n; begin = end) {
    SharedSnapshot* snapshot = (*checks)[begin].snapshot;
    for (end = begin + 1; end < n && (*checks)[end].snapshot == snapshot;)
      ++end;
    ReadOptions ro;
    ro.snapshot = snapshot->snapshot;
    ro.fill_cache = false;  // a deleted key: its block is not read again
    db_->MultiGet(ro, end - begin, &cfs[begin], &keys[begin], &values[begin],
                  &statuses[begin], /*sorted_input=*/false);
    check_snapshots_->Release(snapshot, end - begin);
  }
  std::vector<char> live(n, 0);
  for (size_t i = 0; i < n; ++i) {
    CfCounters& c = (*checks)[i].cf->counters;
    c.Add<&FilteredDBStats::maybe_checks>();
    c.Add<&FilteredDBStats::deferred_checks>();
    if (statuses[i].ok()) {
      live[i] = 1;
      c.Add<&FilteredDBStats::maybe_checks_live>();
    } else if (!statuses[i].IsNotFound()) {
      c.Add<&FilteredDBStats::check_errors>();  // unknown: keep the fingerprint
    }
  }
  // The erasures are logged first, in a count-0 WAL record of their own
  // (effect_log::CheckerRecord; docs/recovery_design.md 4.2), then made,
  // both under effects_mu_: a persist's freeze sees either all of a run's
  // erasures (its generation is recorded in the checkpoint) or none. A run
  // whose record cannot be written keeps its fingerprints (extra positives
  // until the next rebuild, as a failed check).
  effect_log::WriteEffects erased;
  for (size_t i = 0; i < n; ++i) {
    if (live[i]) {
      erased.Family((*checks)[i].cf->id).erases.push_back((*checks)[i].hash);
    }
  }
  if (!erased.cfs.empty()) {
    std::lock_guard<std::mutex> lock(effects_mu_);
    WriteBatch record;
    Status st = record.PutLogData(effect_log::CheckerRecord(
        session_, erase_generation_ + 1, open_sequence_, erased.cfs));
    if (st.ok()) {
      TestHook("ResolveDeferredChecks:BeforeRecord");
      st = db_->Write(WriteOptions(), &record);
    }
    if (st.ok()) {
      ++erase_generation_;
      for (size_t i = 0; i < n; ++i) {
        if (live[i])
          (*checks)[i].cf->filter->Erase(cuckoo::KeyHash((*checks)[i].hash));
      }
    }
  }
  for (const DeleteChecker::Check& check : *checks) {
    check.cf->counters.Sub<&FilteredDBStats::pending_checks>();
  }
  checks->clear();
}

Status FilteredDBImpl::ResolveBeforeAll(const std::vector<KeyPlan*>& keys) {
  std::vector<KeyPlan*> read;
  for (KeyPlan* k : keys) {
    if (options_.assume_unique_writes && k->first_type != OpType::kMerge) {
      Status s = ResolveBefore(k);  // the promise; no read
      if (!s.ok()) return s;
    } else {
      read.push_back(k);
    }
  }
  if (read.size() <= 1) {
    return read.empty() ? Status::OK() : ResolveBefore(read[0]);
  }
  // One MultiGet (shared index, filter and data block lookups).
  const size_t n = read.size();
  std::vector<ColumnFamilyHandle*> cfs(n);
  std::vector<Slice> keys_read(n);
  std::vector<PinnableSlice> values(n);
  std::vector<Status> statuses(n);
  for (size_t i = 0; i < n; ++i) {
    cfs[i] = read[i]->cf->handle;
    keys_read[i] = read[i]->key;
  }
  db_->MultiGet(ReadOptions(), n, cfs.data(), keys_read.data(), values.data(),
                statuses.data(), /*sorted_input=*/false);
  for (size_t i = 0; i < n; ++i) SetBefore(read[i], statuses[i]);
  return Status::OK();
}

void FilteredDBImpl::SetBefore(KeyPlan* k, const Status& read) {
  CfCounters& c = k->cf->counters;
  c.Add<&FilteredDBStats::maybe_checks>();
  if (read.ok()) {
    k->before = 1;
    c.Add<&FilteredDBStats::maybe_checks_live>();
  } else if (read.IsNotFound()) {
    k->before = 0;
  } else {
    // Unknown. "Not live" is the safe answer: it may add a duplicate copy
    // (if the key becomes live) or keep a stale one (if it is deleted),
    // never lose a live key.
    k->before = 0;
    c.Add<&FilteredDBStats::check_errors>();
  }
}

bool FilteredDBImpl::ResolveKnown(KeyPlan* k) {
  if (!recent_keys_.enabled() ||
      !recent_keys_.Contains(KeySlot(k->cf, k->hash), k->cf->id, k->hash,
                             View(k->key))) {
    return false;
  }
  k->before = 1;
  k->cf->counters.Add<&FilteredDBStats::recent_key_hits>();
  return true;
}

void FilteredDBImpl::UpdateRecentKey(const KeyPlan& k, bool ok) {
  if (!recent_keys_.enabled()) return;
  const uint64_t slot = KeySlot(k.cf, k.hash);
  if (ok && k.after) {
    recent_keys_.Add(slot, k.cf->id, k.hash, View(k.key));
  } else if (k.before != 0) {
    // Not live after the write, or unknown (a failed write). A key the
    // filter ruled out before the write (before 0) was not recorded.
    recent_keys_.Remove(slot, k.cf->id, k.hash, View(k.key));
  }
}

void FilteredDBImpl::ForgetRecentKey(const KeyPlan& k) {
  if (!recent_keys_.enabled()) return;
  recent_keys_.Remove(KeySlot(k.cf, k.hash), k.cf->id, k.hash, View(k.key));
}

Status FilteredDBImpl::ResolveBefore(KeyPlan* k) {
  CfState* cf = k->cf;
  CfCounters& c = cf->counters;
  if (options_.assume_unique_writes && k->first_type != OpType::kMerge) {
    // The application promises Put creates and Delete removes a live key.
    k->before = k->first_type == OpType::kPut ? 0 : 1;
    c.Add<&FilteredDBStats::assumed_unique>();
    return Status::OK();
  }
  PinnableSlice value;
  SetBefore(k, db_->Get(ReadOptions(), cf->handle, k->key, &value));
  return Status::OK();
}

Status FilteredDBImpl::ForEachLiveKey(
    CfState* cf, const Slice& begin, const Slice& end,
    const std::function<void(const Slice&)>& fn) {
  ReadOptions ro;
  ro.total_order_seek = true;
  ro.fill_cache = false;
  Slice upper = end;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<Iterator> it(db_->NewIterator(ro, cf->handle));
  for (it->Seek(begin); it->Valid(); it->Next()) fn(it->key());
  return it->status();
}

Status FilteredDBImpl::InsertAllLocked(CfState* s,
                                       const std::vector<uint64_t>& hashes) {
  for (size_t i = 0; i < hashes.size(); ++i) {
    if (s->filter->Insert(cuckoo::KeyHash(hashes[i]))) continue;
    // The table is full and cannot split. Hashes [0, i) are in it but not
    // in the DB yet.
    if (s->rebuilder->running()) {
      WaitAndCommitLocked(s);  // the delta log holds [0, i)
      if (s->filter->Insert(cuckoo::KeyHash(hashes[i]))) continue;
    }
    std::vector<uint64_t> pending(hashes.begin(), hashes.begin() + i);
    s->counters.Add<&FilteredDBStats::rescans>();
    // Room for the hashes still to come too (a batch may hold many times
    // the filter's keys).
    const uint64_t rest = hashes.size() - i;
    Status st = SyncRebuildLocked(
        s, s->filter->RescanCapacity() + rest + rest / 8, pending);
    if (!st.ok()) return st;
    if (!s->filter->Insert(cuckoo::KeyHash(hashes[i]))) {
      return Status::Aborted("FilteredDB: no room in a freshly grown filter");
    }
  }
  return Status::OK();
}

void FilteredDBImpl::AfterWriteLocked(CfState* s) {
  if (s->rebuilder->running()) return;
  if (s->open_build) {
    // Open's background build (background_open) is not installed: it failed
    // (overflow) and starts again, larger (any installed table clears
    // open_build: TableInstalledLocked).
    StartOpenBuildLocked(s);
    return;
  }
  // The filter doubles by itself (splits); a rebuild from the DB restores
  // the fingerprint width once splits made it narrow (RescanWanted), and
  // drops the fingerprints that unchecked deletes left.
  if (!s->filter->RescanWanted() && !UncheckedRebuildDue(s)) return;
  uint64_t capacity = s->filter->RescanCapacity();
  for (int f = 0; f < s->consecutive_failures && f < 4; ++f) capacity *= 2;
  s->counters.Add<&FilteredDBStats::rescans>();
  Info(
      "cuckoo live filter [%s]: rescan wanted (width %d bits, load %.3f), "
      "rebuilding from the DB for %llu keys%s",
      s->name.c_str(), s->filter->GetStats().width,
      s->filter->GetStats().load_factor,
      static_cast<unsigned long long>(capacity),
      options_.background_rescan ? " in the background" : "");
  if (options_.background_rescan) {
    StartBackgroundRebuildLocked(s, capacity);
  } else {
    Status st = SyncRebuildLocked(s, capacity, {});
    if (!st.ok()) {
      ++s->consecutive_failures;
      Info("cuckoo live filter [%s]: rescan failed: %s", s->name.c_str(),
           st.ToString().c_str());
    }
  }
}

}  // namespace live
}  // namespace rocksdb_cuckoo
