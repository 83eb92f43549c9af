// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB stats and properties: GetFilterStats, and the "rocksdb.cuckoo."
// names of GetProperty, GetIntProperty, GetMapProperty and
// GetAggregatedIntProperty (list and units in filtered_db.h), answered from
// FilteredDBStats; every other name goes to the DB.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "filtered_db_impl.h"

namespace rocksdb_cuckoo {
namespace live {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

namespace {

constexpr char kPrefix[] = "rocksdb.cuckoo.";
constexpr char kStatsName[] = "rocksdb.cuckoo.live-filter-stats";

bool IsCuckooProperty(const Slice& name) { return name.starts_with(kPrefix); }

// Thousandths of a bit per stored key (0 for an empty table).
uint64_t MilliBitsPerKey(uint64_t table_bytes, uint64_t keys) {
  return keys == 0 ? 0
                   : static_cast<uint64_t>(std::llround(double(table_bytes) *
                                                        8000 / double(keys)));
}

// The integer properties: suffix after kPrefix, and the value.
struct IntProperty {
  const char* suffix;
  uint64_t (*get)(const FilteredDBStats&);
};

constexpr size_t kMilliBitsPerKey = 4;  // index below: not a sum
constexpr IntProperty kIntProperties[] = {
    {"num-keys", [](const FilteredDBStats& s) { return s.num_keys; }},
    {"capacity", [](const FilteredDBStats& s) { return s.capacity; }},
    {"table-bytes", [](const FilteredDBStats& s) { return s.table_bytes; }},
    {"memory-bytes", [](const FilteredDBStats& s) { return s.memory_bytes; }},
    {"milli-bits-per-key",
     [](const FilteredDBStats& s) {
       return MilliBitsPerKey(s.table_bytes, s.num_keys);
     }},
    {"reads-checked", [](const FilteredDBStats& s) { return s.reads_checked; }},
    {"reads-answered-absent",
     [](const FilteredDBStats& s) { return s.reads_absent; }},
    {"pending-delete-checks",
     [](const FilteredDBStats& s) { return s.pending_checks; }},
    {"maybe-checks", [](const FilteredDBStats& s) { return s.maybe_checks; }},
    {"rebuild-in-progress",
     [](const FilteredDBStats& s) -> uint64_t {
       return s.rebuild_in_progress ? 1 : 0;
     }},
    {"not-ready",
     [](const FilteredDBStats& s) -> uint64_t { return s.building ? 1 : 0; }},
    {"rebuilds", [](const FilteredDBStats& s) { return s.rebuilds; }},
    {"rescans", [](const FilteredDBStats& s) { return s.rescans; }},
};

const IntProperty* FindIntProperty(const Slice& name) {
  if (!IsCuckooProperty(name)) return nullptr;
  const Slice suffix(name.data() + sizeof(kPrefix) - 1,
                     name.size() - (sizeof(kPrefix) - 1));
  for (const IntProperty& p : kIntProperties) {
    if (suffix == Slice(p.suffix)) return &p;
  }
  return nullptr;
}

std::string U(uint64_t v) { return std::to_string(v); }

std::string F(const char* format, double v) {
  char buf[64];
  snprintf(buf, sizeof(buf), format, v);
  return buf;
}

// Every figure of FilteredDBStats, by name (the map property).
std::map<std::string, std::string> StatsMap(const FilteredDBStats& s) {
  std::map<std::string, std::string> m;
  for (const IntProperty& p : kIntProperties) m[p.suffix] = U(p.get(s));
  m["num-buckets"] = U(s.num_buckets);
  m["bits-per-key"] = F("%.3f", s.bits_per_key);
  m["load-factor"] = F("%.4f", s.load_factor);
  m["expected-fpr"] = F("%.3g", s.expected_fpr);
  m["inserts"] = U(s.inserts);
  m["erases"] = U(s.erases);
  m["erase-misses"] = U(s.erase_misses);
  m["insert-failures"] = U(s.insert_failures);
  m["insert-waits"] = U(s.insert_waits);
  m["splits"] = U(s.splits);
  m["fingerprint-bits"] = U(uint64_t(s.fingerprint_bits));
  m["width"] = U(uint64_t(s.width));
  m["relocations"] = U(s.relocations);
  m["filter-lookups"] = U(s.lookups);
  m["filter-absent"] = U(s.absent);
  m["read-retries"] = U(s.read_retries);
  m["maybe-checks-live"] = U(s.maybe_checks_live);
  m["deferred-checks"] = U(s.deferred_checks);
  m["check-errors"] = U(s.check_errors);
  m["assumed-unique"] = U(s.assumed_unique);
  m["range-deleted"] = U(s.range_deleted);
  m["keys-scanned"] = U(s.keys_scanned);
  m["loaded-from-snapshot"] = U(s.loaded_from_snapshot ? 1 : 0);
  m["snapshot-status"] = s.snapshot_status;
  return m;
}

double Percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * double(part) / double(whole);
}

// The text property: FilteredDBStats of one family, a few lines.
std::string StatsText(const std::string& name, const FilteredDBStats& s) {
  char buf[2048];
  snprintf(buf, sizeof(buf),
           "** Cuckoo live-key filter [%s] **\n"
           "Table: %" PRIu64 " keys in %" PRIu64 " slots (load %.4f), %" PRIu64
           " table bytes (%.3f bits/key), %" PRIu64
           " bytes in all, expected FPR %.3g\n"
           "Reads: %" PRIu64 " checked, %" PRIu64
           " answered absent (%.1f%%), %s\n"
           "Writes: %" PRIu64 " inserts, %" PRIu64 " erases (%" PRIu64
           " missed), %" PRIu64 " inserts without room, %" PRIu64
           " relocations, %" PRIu64
           " range-deleted keys\n"
           "Checks: %" PRIu64 " maybe checks (%" PRIu64 " live, %" PRIu64
           " deferred, %" PRIu64 " errors), %" PRIu64 " pending, %" PRIu64
           " skipped (assume_unique_writes)\n"
           "Rebuilds: %" PRIu64 " tables replaced, %" PRIu64
           " rescans, %" PRIu64
           " keys scanned, %s\n"
           "Snapshot at open: %s\n",
           name.c_str(), s.num_keys, s.capacity, s.load_factor, s.table_bytes,
           s.bits_per_key, s.memory_bytes, s.expected_fpr, s.reads_checked,
           s.reads_absent, Percent(s.reads_absent, s.reads_checked),
           s.building ? "NOT READY (reads go to the DB)" : "filter ready",
           s.inserts, s.erases, s.erase_misses, s.insert_failures,
           s.relocations, s.range_deleted, s.maybe_checks, s.maybe_checks_live,
           s.deferred_checks, s.check_errors, s.pending_checks,
           s.assumed_unique, s.rebuilds, s.rescans, s.keys_scanned,
           s.rebuild_in_progress ? "rebuild in progress" : "no rebuild running",
           s.snapshot_status.c_str());
  return buf;
}

}  // namespace

Status FilteredDBImpl::GetFilterStats(ColumnFamilyHandle* cf,
                                      FilteredDBStats* stats) const {
  const CfState* s = State(cf);
  if (s == nullptr)
    return Status::NotFound("FilteredDB: column family has no filter");
  *stats = StatsOf(s);
  return Status::OK();
}

FilteredDBStats FilteredDBImpl::StatsOf(const CfState* s) const {
  FilteredDBStats stats;
  static_cast<LiveKeyFilterStats&>(stats) = s->filter->GetStats();
  s->counters.CopyTo(&stats);
  stats.reads_checked = s->reads.checked();
  stats.reads_absent = s->reads.absent();
  stats.loaded_from_snapshot = s->loaded_from_snapshot;
  stats.snapshot_status = s->snapshot_status;
  return stats;
}

bool FilteredDBImpl::GetProperty(ColumnFamilyHandle* cf, const Slice& property,
                                 std::string* value) {
  if (!IsCuckooProperty(property)) return db_->GetProperty(cf, property, value);
  const CfState* s = State(cf);
  if (s == nullptr) return false;
  if (property == Slice(kStatsName)) {
    *value = StatsText(s->name, StatsOf(s));
    return true;
  }
  const IntProperty* p = FindIntProperty(property);
  if (p == nullptr) return false;
  *value = U(p->get(StatsOf(s)));
  return true;
}

bool FilteredDBImpl::GetMapProperty(ColumnFamilyHandle* cf,
                                    const Slice& property,
                                    std::map<std::string, std::string>* value) {
  if (!IsCuckooProperty(property)) {
    return db_->GetMapProperty(cf, property, value);
  }
  const CfState* s = State(cf);
  if (s == nullptr || property != Slice(kStatsName)) return false;
  *value = StatsMap(StatsOf(s));
  return true;
}

bool FilteredDBImpl::GetIntProperty(ColumnFamilyHandle* cf,
                                    const Slice& property, uint64_t* value) {
  if (!IsCuckooProperty(property)) {
    return db_->GetIntProperty(cf, property, value);
  }
  const IntProperty* p = FindIntProperty(property);
  const CfState* s = State(cf);
  if (p == nullptr || s == nullptr) return false;
  *value = p->get(StatsOf(s));
  return true;
}

bool FilteredDBImpl::GetAggregatedIntProperty(const Slice& property,
                                              uint64_t* value) {
  if (!IsCuckooProperty(property)) {
    return db_->GetAggregatedIntProperty(property, value);
  }
  const IntProperty* p = FindIntProperty(property);
  if (p == nullptr) return false;
  // Summed over the filtered families; bits per key of all tables together.
  uint64_t sum = 0, keys = 0, table_bytes = 0;
  for (const auto& s : states_) {
    if (s->dropped.load(std::memory_order_acquire)) continue;
    const FilteredDBStats stats = StatsOf(s.get());
    sum += p->get(stats);
    keys += stats.num_keys;
    table_bytes += stats.table_bytes;
  }
  *value = p == &kIntProperties[kMilliBitsPerKey]
               ? MilliBitsPerKey(table_bytes, keys)
               : sum;
  return true;
}

}  // namespace live
}  // namespace rocksdb_cuckoo
