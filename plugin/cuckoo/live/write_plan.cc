// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "write_plan.h"

#include "effect_log.h"

#include <algorithm>
#include <unordered_map>

#include "cf_state.h"

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::Comparator;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

namespace {

struct Range {
  size_t index;  // in ops
  Slice begin;
  Slice end;
};

bool InRange(const Comparator* cmp, const Slice& key, const Slice& begin,
             const Slice& end) {
  return cmp->Compare(begin, key) <= 0 && cmp->Compare(key, end) < 0;
}

// The explicitly written keys, in order of first appearance; a hash index
// only for writes with more than a few operations.
class KeyTable {
 public:
  explicit KeyTable(size_t ops) : use_index_(ops > 8) { keys_.reserve(ops); }

  KeyPlan* Find(const CfState* cf, const Slice& key) {
    if (use_index_) {
      auto it = index_.find(Ref{cf, View(key)});
      return it == index_.end() ? nullptr : &keys_[it->second];
    }
    for (KeyPlan& k : keys_) {
      if (k.cf == cf && k.key == key) return &k;
    }
    return nullptr;
  }
  void Add(const Op& op, size_t i) {
    keys_.push_back(KeyPlan{op.cf, op.key, cuckoo::HashKey(View(op.key)).value,
                            op.type, op.type, i, -1});
    if (use_index_) index_.emplace(Ref{op.cf, View(op.key)}, keys_.size() - 1);
  }
  std::vector<KeyPlan>& keys() { return keys_; }

 private:
  struct Ref {
    const CfState* cf;
    std::string_view key;
    bool operator==(const Ref& o) const { return cf == o.cf && key == o.key; }
  };
  struct RefHash {
    size_t operator()(const Ref& r) const {
      return std::hash<std::string_view>()(r.key) ^
             reinterpret_cast<uintptr_t>(r.cf);
    }
  };
  const bool use_index_;
  std::vector<KeyPlan> keys_;
  std::unordered_map<Ref, size_t, RefHash> index_;
};

// The union of ranges (empty ones dropped), sorted by begin.
std::vector<Range> Union(const Comparator* cmp, std::vector<Range> ranges) {
  ranges.erase(std::remove_if(ranges.begin(), ranges.end(),
                              [cmp](const Range& r) {
                                return cmp->Compare(r.begin, r.end) >= 0;
                              }),
               ranges.end());
  std::sort(ranges.begin(), ranges.end(),
            [cmp](const Range& a, const Range& b) {
              return cmp->Compare(a.begin, b.begin) < 0;
            });
  std::vector<Range> out;
  for (const Range& r : ranges) {
    if (!out.empty() && cmp->Compare(r.begin, out.back().end) <= 0) {
      if (cmp->Compare(r.end, out.back().end) > 0) out.back().end = r.end;
    } else {
      out.push_back(r);
    }
  }
  return out;
}

// DeleteRange: lists the live keys of the union of one column family's
// ranges. Every listed key was live (an explicit one gets before = 1, the
// others are erased after the write); explicit keys inside a range that are
// not listed were not live.
Status PlanRanges(CfState* cf, std::vector<Range> ranges, KeyTable* keys,
                  LivenessOracle* oracle, WritePlan* plan) {
  const Comparator* cmp = cf->comparator;
  const std::vector<Range> unioned = Union(cmp, std::move(ranges));
  for (const Range& range : unioned) {
    Status s =
        oracle->ForEachLiveKey(cf, range.begin, range.end, [&](const Slice& k) {
          KeyPlan* known = keys->Find(cf, k);
          if (known != nullptr) {
            known->before = 1;
          } else {
            plan->erases.emplace_back(cf, cuckoo::HashKey(View(k)).value);
            cf->counters.Add<&FilteredDBStats::range_deleted>();
          }
        });
    if (!s.ok()) return s;
  }
  for (KeyPlan& k : keys->keys()) {
    if (k.cf != cf || k.before >= 0) continue;
    for (const Range& range : unioned) {
      if (InRange(cmp, k.key, range.begin, range.end)) {
        k.before = 0;
        break;
      }
    }
  }
  return Status::OK();
}

// Live after the write: the last point operation makes the key live and no
// later DeleteRange covers it.
bool LiveAfter(const KeyPlan& k,
               const std::vector<std::pair<CfState*, Range>>& ranges) {
  if (!MakesLive(k.last_type)) return false;
  for (const auto& entry : ranges) {
    if (entry.first == k.cf && entry.second.index > k.last_index &&
        InRange(k.cf->comparator, k.key, entry.second.begin,
                entry.second.end)) {
      return false;
    }
  }
  return true;
}

}  // namespace

Status BatchCollector::Unsupported() {
  return Status::NotSupported(
      "FilteredDB: two-phase-commit markers in a batch");
}

void BatchCollector::LogData(const Slice& blob) {
  if (!blob.empty() && static_cast<uint8_t>(blob[0]) == effect_log::kMagic) {
    reserved_log_data_ = true;
  }
}

Status BatchCollector::LogDataStatus() const {
  if (!reserved_log_data_) return Status::OK();
  return Status::InvalidArgument(
      "FilteredDB: LogData blobs whose first byte is 0xC5 are reserved for "
      "the live filter's WAL records");
}

Status BatchCollector::Add(uint32_t cf, OpType type, const Slice& key,
                           const Slice& end) {
  if (cf < by_id_->size()) {
    CfState* state = (*by_id_)[cf];
    if (state != nullptr && !state->dropped.load(std::memory_order_relaxed)) {
      ops_->push_back(Op{state, type, key, end});
    }
  }
  return Status::OK();
}

bool ResolveFromFilter(KeyPlan* k) {
  if (k->cf->filter->MayContain(cuckoo::KeyHash(k->hash))) return false;
  k->before = 0;  // the filter is a superset: certainly not live
  return true;
}

Status PlanWrite(const std::vector<Op>& ops, LivenessOracle* oracle,
                 bool defer_checks, WritePlan* plan) {
  KeyTable keys(ops.size());
  std::vector<std::pair<CfState*, Range>> ranges;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.type == OpType::kDeleteRange) {
      ranges.push_back({op.cf, Range{i, op.key, op.end}});
      continue;
    }
    KeyPlan* k = keys.Find(op.cf, op.key);
    if (k == nullptr) {
      keys.Add(op, i);
    } else {
      k->last_type = op.type;
      k->last_index = i;
    }
  }
  if (!ranges.empty()) {
    std::stable_sort(
        ranges.begin(), ranges.end(),
        [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t r = 0; r < ranges.size();) {
      CfState* cf = ranges[r].first;
      std::vector<Range> of_cf;
      for (; r < ranges.size() && ranges[r].first == cf; ++r) {
        of_cf.push_back(ranges[r].second);
      }
      Status s = PlanRanges(cf, std::move(of_cf), &keys, oracle, plan);
      if (!s.ok()) return s;
    }
  }
  // The keys the filter cannot rule out are resolved together, or, when
  // they are not live after the write and the oracle defers, checked after
  // it.
  std::vector<KeyPlan*> unresolved;
  for (KeyPlan& k : keys.keys()) {
    k.after = LiveAfter(k, ranges);
    if (k.before >= 0 || ResolveFromFilter(&k) || oracle->ResolveKnown(&k)) {
      continue;
    }
    if (defer_checks && !k.after) {
      plan->deferred.push_back(k);
    } else {
      unresolved.push_back(&k);
    }
  }
  if (!unresolved.empty()) {
    Status s = oracle->ResolveBeforeAll(unresolved);
    if (!s.ok()) return s;
  }
  for (KeyPlan& k : keys.keys()) {
    if (k.before == 0 && k.after) plan->inserts.emplace_back(k.cf, k.hash);
    if (k.before == 1 && !k.after) plan->erases.emplace_back(k.cf, k.hash);
  }
  plan->keys = std::move(keys.keys());
  return Status::OK();
}

}  // namespace live
}  // namespace rocksdb_cuckoo
