// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB reads: Get, GetEntity, GetMergeOperands, KeyMayExist and
// MultiGet answer NotFound for keys the filter rules out and pass every other
// read to the DB.
#include <algorithm>
#include <memory>

#include "filtered_db_impl.h"
#include "rocksdb/perf_context.h"
#include "rocksdb/perf_level.h"
#include "rocksdb/statistics.h"

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::PinnableWideColumns;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

CfState* FilteredDBImpl::State(ColumnFamilyHandle* cf) const {
  // The DB's own default handle (what DefaultColumnFamily() returns) needs
  // no call into RocksDB.
  const uint32_t id = cf == nullptr || cf == default_handle_ ? 0 : cf->GetID();
  if (id >= by_id_.size()) return nullptr;
  CfState* s = by_id_[id];
  return s == nullptr || s->dropped.load(std::memory_order_acquire) ? nullptr
                                                                    : s;
}

const CfState* FilteredDBImpl::ReadState(const ReadOptions& ro,
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

bool FilteredDBImpl::KnownAbsent(const ReadOptions& ro, ColumnFamilyHandle* cf,
                                 const Slice& key, ReadKind kind) const {
  const CfState* s = ReadState(ro, cf);
  if (s == nullptr) return false;
  // One probe tells the answer and whether it consulted a table: a read of
  // a filter that is not ready bypasses it and is not counted.
  using Answer = cuckoo::LiveKeyFilter::Answer;
  const Answer answer = s->filter->Probe(View(key));
  if (answer == Answer::kNotReady) return false;
  const bool absent = answer == Answer::kAbsent;
  s->reads.Add(1, absent ? 1 : 0);
  if (absent) RecordAbsent(1, kind);
  return absent;
}

void FilteredDBImpl::RecordAbsent(uint64_t keys, ReadKind kind) const {
  // The tickers RocksDB bumps for a read of an absent key that an SST
  // filter rules out (measured with 7.8.3: keys read, memtable miss, one
  // "useful" per filter that said no), so that per-read ratios keep their
  // meaning; see the mapping in filtered_db.h.
  if (statistics_ != nullptr) {
    statistics_->recordTick(kind == ReadKind::kGet
                                ? ROCKSDB_NAMESPACE::NUMBER_KEYS_READ
                                : ROCKSDB_NAMESPACE::NUMBER_MULTIGET_KEYS_READ,
                            keys);
    statistics_->recordTick(ROCKSDB_NAMESPACE::MEMTABLE_MISS, keys);
    statistics_->recordTick(ROCKSDB_NAMESPACE::BLOOM_FILTER_USEFUL, keys);
  }
  if (ROCKSDB_NAMESPACE::GetPerfLevel() >=
      ROCKSDB_NAMESPACE::PerfLevel::kEnableCount) {
    ROCKSDB_NAMESPACE::get_perf_context()->bloom_sst_miss_count += keys;
  }
}

void FilteredDBImpl::RecordMultiGetAnswered() const {
  // RocksDB counts a MultiGet call when it reaches the DB; one the filter
  // answered whole does not.
  if (statistics_ != nullptr) {
    statistics_->recordTick(ROCKSDB_NAMESPACE::NUMBER_MULTIGET_CALLS, 1);
  }
}

#if CUCKOO_DB_READS_FINAL
Status FilteredDBImpl::Get(const ReadOptions& ro, ColumnFamilyHandle* cf,
                           const Slice& key, PinnableSlice* value,
                           std::string* timestamp) {
  // A timestamp output is the DB's to fill (or refuse): not filtered.
  if (timestamp == nullptr && KnownAbsent(ro, cf, key)) {
    if (value != nullptr) value->Reset();
    return Status::NotFound();
  }
  return db_->Get(ro, cf, key, value, timestamp);
}
#else
Status FilteredDBImpl::Get(const ReadOptions& ro, ColumnFamilyHandle* cf,
                           const Slice& key, PinnableSlice* value) {
  if (KnownAbsent(ro, cf, key)) {
    if (value != nullptr) value->Reset();
    return Status::NotFound();
  }
  return db_->Get(ro, cf, key, value);
}
#endif

Status FilteredDBImpl::GetEntity(const ReadOptions& ro, ColumnFamilyHandle* cf,
                                 const Slice& key,
                                 PinnableWideColumns* columns) {
  if (KnownAbsent(ro, cf, key)) {
    if (columns != nullptr) columns->Reset();
    return Status::NotFound();
  }
  return db_->GetEntity(ro, cf, key, columns);
}

Status FilteredDBImpl::GetMergeOperands(
    const ReadOptions& ro, ColumnFamilyHandle* cf, const Slice& key,
    PinnableSlice* slices, ROCKSDB_NAMESPACE::GetMergeOperandsOptions* opts,
    int* count) {
  if (KnownAbsent(ro, cf, key)) {
    if (count != nullptr) *count = 0;
    return Status::NotFound();
  }
  return db_->GetMergeOperands(ro, cf, key, slices, opts, count);
}

bool FilteredDBImpl::KeyMayExist(const ReadOptions& ro, ColumnFamilyHandle* cf,
                                 const Slice& key, std::string* value,
                                 bool* value_found) {
  if (KnownAbsent(ro, cf, key)) {
    if (value_found != nullptr) *value_found = false;
    return false;
  }
  return db_->KeyMayExist(ro, cf, key, value, value_found);
}

#if !CUCKOO_DB_READS_FINAL
std::vector<Status> FilteredDBImpl::MultiGet(
    const ReadOptions& ro, const std::vector<ColumnFamilyHandle*>& cfs,
    const std::vector<Slice>& keys, std::vector<std::string>* values) {
  const size_t n = keys.size();
  if (cfs.size() != n) return db_->MultiGet(ro, cfs, keys, values);
  std::vector<char> maybe(n, 1);
  size_t absent = 0;
  for (size_t i = 0; i < n; ++i) {
    if (KnownAbsent(ro, cfs[i], keys[i], ReadKind::kMultiGet)) {
      maybe[i] = 0;
      ++absent;
    }
  }
  if (absent == 0) return db_->MultiGet(ro, cfs, keys, values);
  if (absent == n) RecordMultiGetAnswered();
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

namespace {

// Scratch space of one batched read: on the stack up to kInline elements
// (no allocation for the usual MultiGet sizes), on the heap beyond.
template <typename T, size_t kInline>
class Scratch {
 public:
  explicit Scratch(size_t n)
      : data_(n <= kInline ? inline_
                           : (heap_ = std::make_unique<T[]>(n)).get()) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  T* get() { return data_; }
  T& operator[](size_t i) { return data_[i]; }

 private:
  T inline_[kInline];
  std::unique_ptr<T[]> heap_;
  T* const data_;
};

// Keys hashed and probed together (MayContainBatch keeps 16 in flight).
constexpr size_t kProbeChunk = 64;

}  // namespace

template <typename Forward>
void FilteredDBImpl::FilteredMultiGet(const ReadOptions& ro, size_t num_keys,
                                      ColumnFamilyHandle* const* cfs,
                                      ColumnFamilyHandle* one_cf,
                                      const Slice* keys, PinnableSlice* values,
                                      Status* statuses, Forward&& forward) {
  // The family of key i: cfs[i], or one_cf for every key.
  auto cf_of = [&](size_t i) { return cfs != nullptr ? cfs[i] : one_cf; };
  // One batched (prefetching) filter probe per chunk of a run of keys of
  // one family; nothing allocated unless more than 256 keys or some key
  // goes to the DB.
  Scratch<bool, 256> maybe(num_keys);
  size_t candidates = 0;
  for (size_t i = 0; i < num_keys;) {
    size_t j = i + 1;
    while (j < num_keys && cf_of(j) == cf_of(i)) ++j;
    const CfState* s = ReadState(ro, cf_of(i));
    if (s == nullptr) {
      std::fill(maybe.get() + i, maybe.get() + j, true);
    } else {
      cuckoo::KeyHash hashes[kProbeChunk];
      // Keys of chunks probed while the filter was ready (a chunk of a
      // filter that is not ready bypasses it: all true, not counted).
      uint64_t checked = 0;
      for (size_t c = i; c < j; c += kProbeChunk) {
        const size_t len = std::min(kProbeChunk, j - c);
        for (size_t k = 0; k < len; ++k)
          hashes[k] = cuckoo::HashKey(View(keys[c + k]));
        if (s->filter->MayContainBatch(hashes, len, maybe.get() + c))
          checked += len;
      }
      const uint64_t absent = static_cast<uint64_t>(
          std::count(maybe.get() + i, maybe.get() + j, false));
      if (checked != 0) s->reads.Add(checked, absent);
      if (absent != 0) RecordAbsent(absent, ReadKind::kMultiGet);
    }
    for (size_t k = i; k < j; ++k) candidates += maybe[k] ? 1 : 0;
    i = j;
  }
  if (candidates == num_keys) {
    forward(num_keys, cfs, keys, values, statuses);
    return;
  }
  if (candidates == 0) RecordMultiGetAnswered();
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
  // Some keys go to the DB (a read of microseconds): plain vectors.
  const size_t m = index.size();
  std::vector<ColumnFamilyHandle*> sub_cfs(m);
  std::vector<Slice> sub_keys(m);
  std::unique_ptr<PinnableSlice[]> sub_values(new PinnableSlice[m]);
  std::unique_ptr<Status[]> sub_status(new Status[m]);
  for (size_t j = 0; j < m; ++j) {
    sub_cfs[j] = cf_of(index[j]);
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
  FilteredMultiGet(ro, num_keys, cfs, nullptr, keys, values, statuses,
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
  FilteredMultiGet(ro, num_keys, nullptr, cf, keys, values, statuses,
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
  FilteredMultiGet(ro, num_keys, cfs, nullptr, keys, values, statuses,
                   [&](size_t m, ColumnFamilyHandle* const* c, const Slice* k,
                       PinnableSlice* v, Status* st) {
                     db_->MultiGet(ro, m, const_cast<ColumnFamilyHandle**>(c),
                                   k, v, st, sorted_input);
                   });
}
#endif

}  // namespace live
}  // namespace rocksdb_cuckoo
