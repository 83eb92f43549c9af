// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Write planning of FilteredDB (internal): for every key a write touches,
// whether it is live before the write and after it, hence which fingerprints
// go into the filter before the DB write and which come out after it.
//
// Liveness before the write: a key the filter reports absent is not live; a
// key inside a DeleteRange of the write is live exactly if an iterator over
// the range lists it; any other key is resolved by the caller's
// LivenessOracle (a point read, or the assume_unique_writes promise).
// Liveness after the write: replay of the write's operations in order.
#ifndef ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_WRITE_PLAN_H_
#define ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_WRITE_PLAN_H_

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "rocksdb/slice.h"
#include "rocksdb/status.h"
#include "rocksdb/write_batch.h"

namespace rocksdb_cuckoo {
namespace live {

struct CfState;

inline std::string_view View(const ROCKSDB_NAMESPACE::Slice& s) {
  return std::string_view(s.data(), s.size());
}

// What an operation does to one key (PutEntity counts as Put, SingleDelete
// as Delete).
enum class OpType : uint8_t { kPut, kMerge, kDelete, kDeleteRange };

inline bool MakesLive(OpType t) {
  return t == OpType::kPut || t == OpType::kMerge;
}

// One operation of a write on a filtered column family.
struct Op {
  CfState* cf;
  OpType type;
  ROCKSDB_NAMESPACE::Slice key;
  ROCKSDB_NAMESPACE::Slice end;  // DeleteRange only
};

// Collects the operations of a WriteBatch that touch filtered, not dropped
// column families (by_id[column family id], null when not filtered).
class BatchCollector : public ROCKSDB_NAMESPACE::WriteBatch::Handler {
 public:
  using Status = ROCKSDB_NAMESPACE::Status;
  using Slice = ROCKSDB_NAMESPACE::Slice;
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
  // LogData blobs starting with effect_log::kMagic are the live filter's
  // records: an application's would be read as filter effects by a replay.
  void LogData(const Slice& blob) override;
  // After Iterate: InvalidArgument if the batch holds a reserved LogData
  // blob (nothing is written then).
  Status LogDataStatus() const;
  Status MarkBeginPrepare(bool) override { return Unsupported(); }
  Status MarkEndPrepare(const Slice&) override { return Unsupported(); }
  Status MarkNoop(bool) override { return Status::OK(); }
  Status MarkRollback(const Slice&) override { return Unsupported(); }
  Status MarkCommit(const Slice&) override { return Unsupported(); }
  Status MarkCommitWithTimestamp(const Slice&, const Slice&) override {
    return Unsupported();
  }

 private:
  static Status Unsupported();
  Status Add(uint32_t cf, OpType type, const Slice& key,
             const Slice& end = Slice());
  const std::vector<CfState*>* by_id_;
  std::vector<Op>* ops_;
  bool reserved_log_data_ = false;
};

// The decision for one explicitly written key.
struct KeyPlan {
  CfState* cf;
  ROCKSDB_NAMESPACE::Slice key;
  uint64_t hash;
  OpType first_type;
  OpType last_type;
  size_t last_index;   // index in ops of the last point operation on the key
  int before = -1;     // live before the write: -1 unknown, 0 no, 1 yes
  bool after = false;  // live after the write (set by PlanWrite)
};

struct WritePlan {
  std::vector<std::pair<CfState*, uint64_t>> inserts;  // before the write
  std::vector<std::pair<CfState*, uint64_t>> erases;   // after it
  // Keys not live after the write whose liveness before it was left to a
  // check after the write, at a snapshot of the state before it
  // (PlanWrite's defer_checks): erased then if they were live.
  std::vector<KeyPlan> deferred;
  // Every explicitly written key (not those only in a DeleteRange), with
  // `after` set.
  std::vector<KeyPlan> keys;
};

// What the planner asks the database.
class LivenessOracle {
 public:
  virtual ~LivenessOracle() = default;
  // Sets k->before (0 or 1) for a key the filter may contain.
  virtual ROCKSDB_NAMESPACE::Status ResolveBefore(KeyPlan* k) = 0;
  // Sets k->before = 1 and returns true if the key is known live without a
  // read (FilteredDB's record of recent writes).
  virtual bool ResolveKnown(KeyPlan*) { return false; }
  // The same for several keys at once (e.g. one MultiGet); by default one
  // ResolveBefore each.
  virtual ROCKSDB_NAMESPACE::Status ResolveBeforeAll(
      const std::vector<KeyPlan*>& keys) {
    for (KeyPlan* k : keys) {
      ROCKSDB_NAMESPACE::Status s = ResolveBefore(k);
      if (!s.ok()) return s;
    }
    return ROCKSDB_NAMESPACE::Status::OK();
  }
  // Calls fn for every live key of [begin, end) of the column family, in
  // order.
  virtual ROCKSDB_NAMESPACE::Status ForEachLiveKey(
      CfState* cf, const ROCKSDB_NAMESPACE::Slice& begin,
      const ROCKSDB_NAMESPACE::Slice& end,
      const std::function<void(const ROCKSDB_NAMESPACE::Slice&)>& fn) = 0;
};

// Resolves k->before from the filter alone when it can (absent => not
// live); returns false when the oracle must decide.
bool ResolveFromFilter(KeyPlan* k);

// Plans a write of `ops` (every op's column family filtered and not
// dropped). Must run under the writer lock (or the stripes of every key).
// With defer_checks, a key the filter may contain that is not live after
// the write goes to plan->deferred instead of to the oracle.
ROCKSDB_NAMESPACE::Status PlanWrite(const std::vector<Op>& ops,
                                    LivenessOracle* oracle, bool defer_checks,
                                    WritePlan* plan);

}  // namespace live
}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_PLUGIN_CUCKOO_LIVE_WRITE_PLAN_H_
