// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB stats and properties: GetFilterStats, and the "rocksdb.cuckoo."
// names of GetProperty, GetIntProperty, GetMapProperty and
// GetAggregatedIntProperty (list and units in filtered_db.h), answered from
// FilteredDBStats; every other name goes to the DB.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
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

// One figure of FilteredDBStats: an integer (a flag is an integer, 0 or 1),
// a real number with its printf format, or a text.
struct Value {
  enum Kind { kInteger, kReal, kText } kind = kInteger;
  uint64_t integer = 0;
  bool flag = false;  // kInteger: a yes/no figure
  double real = 0;
  const char* format = nullptr;  // kReal
  std::string text;              // kText

  std::string ToString() const {
    if (kind == kText) return text;
    if (kind == kInteger) return std::to_string(integer);
    char buf[64];
    snprintf(buf, sizeof(buf), format, real);
    return buf;
  }
  // In the text form: flags read "yes" or "no".
  std::string ToText() const {
    return flag ? (integer != 0 ? "yes" : "no") : ToString();
  }
};
Value Integer(uint64_t v) {
  Value value;
  value.integer = v;
  return value;
}
Value Flag(bool v) {
  Value value = Integer(v ? 1 : 0);
  value.flag = true;
  return value;
}
Value Real(const char* format, double v) {
  Value value;
  value.kind = Value::kReal;
  value.real = v;
  value.format = format;
  return value;
}
Value Text(const std::string& v) {
  Value value;
  value.kind = Value::kText;
  value.text = v;
  return value;
}

// How GetAggregatedIntProperty combines an integer figure over the families.
enum class Aggregate {
  kSum,
  kMin,
  kMax,
  kMilliBitsPerKey,  // of all tables together
};

// The lines of the text form, in order.
enum class Line {
  kTable,
  kWidth,
  kReads,
  kWrites,
  kSplits,
  kChecks,
  kRebuilds,
  kSnapshot
};
constexpr const char* kLineTitles[] = {"Table",    "Width",           "Reads",
                                       "Writes",   "Splits",          "Checks",
                                       "Rebuilds", "Snapshot at open"};

// The one table of the properties. Each row is a figure: its name (the map
// key of rocksdb.cuckoo.live-filter-stats; for an integer figure also the
// integer property rocksdb.cuckoo.<name>), the line and label of the text
// form (the label's %s is the value; nullptr: not in the text), and how
// GetAggregatedIntProperty combines it. filtered_db.h lists the same names
// (tests/live/filtered_db_properties_test.cc checks both ways).
struct Figure {
  const char* name;
  Line line;
  const char* label;
  Value (*get)(const FilteredDBStats&);
  Aggregate aggregate = Aggregate::kSum;
};

using S = FilteredDBStats;
const Figure kFigures[] = {
    // The table.
    {"num-keys", Line::kTable, "%s keys",
     [](const S& s) { return Integer(s.num_keys); }},
    {"capacity", Line::kTable, "%s slots",
     [](const S& s) { return Integer(s.capacity); }},
    {"num-buckets", Line::kTable, "%s buckets",
     [](const S& s) { return Integer(s.num_buckets); }},
    {"load-factor", Line::kTable, "load %s",
     [](const S& s) { return Real("%.4f", s.load_factor); }},
    {"table-bytes", Line::kTable, "%s table bytes",
     [](const S& s) { return Integer(s.table_bytes); }},
    {"bits-per-key", Line::kTable, "%s bits/key",
     [](const S& s) { return Real("%.3f", s.bits_per_key); }},
    {"milli-bits-per-key", Line::kTable, nullptr,
     [](const S& s) {
       return Integer(MilliBitsPerKey(s.table_bytes, s.num_keys));
     },
     Aggregate::kMilliBitsPerKey},
    {"memory-bytes", Line::kTable, "%s bytes in all",
     [](const S& s) { return Integer(s.memory_bytes); }},
    {"expected-fpr", Line::kTable, "expected FPR %s",
     [](const S& s) { return Real("%.3g", s.expected_fpr); }},
    // Fingerprint width: f bits stored, w = f - level compared.
    {"fingerprint-bits", Line::kWidth, "%s fingerprint bits",
     [](const S& s) { return Integer(uint64_t(s.fingerprint_bits)); },
     Aggregate::kMax},
    {"width", Line::kWidth, "width %s",
     [](const S& s) { return Integer(uint64_t(s.width)); }, Aggregate::kMin},
    {"level", Line::kWidth, "level %s",
     [](const S& s) { return Integer(uint64_t(s.level)); }, Aggregate::kMax},
    // Reads.
    {"reads-checked", Line::kReads, "%s checked",
     [](const S& s) { return Integer(s.reads_checked); }},
    {"reads-answered-absent", Line::kReads, "%s answered absent",
     [](const S& s) { return Integer(s.reads_absent); }},
    {"not-ready", Line::kReads, "not ready: %s",
     [](const S& s) { return Flag(s.building); }},
    {"filter-lookups", Line::kReads, "%s filter lookups (reads and writes)",
     [](const S& s) { return Integer(s.lookups); }},
    {"filter-absent", Line::kReads, "%s absent",
     [](const S& s) { return Integer(s.absent); }},
    {"read-retries", Line::kReads, "%s read retries",
     [](const S& s) { return Integer(s.read_retries); }},
    // Writes.
    {"inserts", Line::kWrites, "%s inserts",
     [](const S& s) { return Integer(s.inserts); }},
    {"erases", Line::kWrites, "%s erases",
     [](const S& s) { return Integer(s.erases); }},
    {"erase-misses", Line::kWrites, "%s erases missed",
     [](const S& s) { return Integer(s.erase_misses); }},
    {"insert-failures", Line::kWrites, "%s inserts without room",
     [](const S& s) { return Integer(s.insert_failures); }},
    {"relocations", Line::kWrites, "%s relocations",
     [](const S& s) { return Integer(s.relocations); }},
    {"range-deleted", Line::kWrites, "%s range-deleted keys",
     [](const S& s) { return Integer(s.range_deleted); }},
    // Splits.
    {"splits", Line::kSplits, "%s splits",
     [](const S& s) { return Integer(s.splits); }},
    {"insert-waits", Line::kSplits, "%s inserts waited for a split",
     [](const S& s) { return Integer(s.insert_waits); }},
    {"split-micros", Line::kSplits, "%s us in all",
     [](const S& s) { return Integer(s.split_micros); }},
    {"last-split-micros", Line::kSplits, "%s us the last",
     [](const S& s) { return Integer(s.last_split_micros); }, Aggregate::kMax},
    {"split-in-progress", Line::kSplits, "in progress: %s",
     [](const S& s) { return Flag(s.split_in_progress); }},
    // Checks of writes.
    {"maybe-checks", Line::kChecks, "%s maybe checks",
     [](const S& s) { return Integer(s.maybe_checks); }},
    {"maybe-checks-live", Line::kChecks, "%s live",
     [](const S& s) { return Integer(s.maybe_checks_live); }},
    {"deferred-checks", Line::kChecks, "%s deferred",
     [](const S& s) { return Integer(s.deferred_checks); }},
    {"check-errors", Line::kChecks, "%s errors",
     [](const S& s) { return Integer(s.check_errors); }},
    {"pending-delete-checks", Line::kChecks, "%s pending",
     [](const S& s) { return Integer(s.pending_checks); }},
    {"assumed-unique", Line::kChecks, "%s skipped (assume_unique_writes)",
     [](const S& s) { return Integer(s.assumed_unique); }},
    {"recent-key-hits", Line::kChecks, "%s known live (recent_keys)",
     [](const S& s) { return Integer(s.recent_key_hits); }},
    {"unchecked-deletes", Line::kChecks,
     "%s deletes unchecked (unchecked_delete_ratio)",
     [](const S& s) { return Integer(s.unchecked_deletes); }},
    // Rebuilds.
    {"rebuilds", Line::kRebuilds, "%s tables replaced",
     [](const S& s) { return Integer(s.rebuilds); }},
    {"rescans", Line::kRebuilds, "%s rescans",
     [](const S& s) { return Integer(s.rescans); }},
    {"keys-scanned", Line::kRebuilds, "%s keys scanned",
     [](const S& s) { return Integer(s.keys_scanned); }},
    {"rebuild-in-progress", Line::kRebuilds, "in progress: %s",
     [](const S& s) { return Flag(s.rebuild_in_progress); }},
    {"rescan-wanted", Line::kRebuilds, "rescan wanted: %s",
     [](const S& s) { return Flag(s.rescan_wanted); }},
    // The snapshot at open.
    {"loaded-from-snapshot", Line::kSnapshot, "loaded: %s",
     [](const S& s) { return Flag(s.loaded_from_snapshot); }},
    {"snapshot-status", Line::kSnapshot, "%s",
     [](const S& s) { return Text(s.snapshot_status); }},
    {"checkpoints", Line::kSnapshot, "%s checkpoints written",
     [](const S& s) { return Integer(s.checkpoints); }},
};

// The integer figure named by a "rocksdb.cuckoo." property, or nullptr.
const Figure* FindIntProperty(const Slice& name) {
  if (!IsCuckooProperty(name)) return nullptr;
  const Slice suffix(name.data() + sizeof(kPrefix) - 1,
                     name.size() - (sizeof(kPrefix) - 1));
  for (const Figure& f : kFigures) {
    if (suffix == Slice(f.name)) {
      // A row's kind does not depend on the figures.
      return f.get(FilteredDBStats()).kind == Value::kInteger ? &f : nullptr;
    }
  }
  return nullptr;
}

// The map property: every figure by name.
std::map<std::string, std::string> StatsMap(const FilteredDBStats& s) {
  std::map<std::string, std::string> m;
  for (const Figure& f : kFigures) m[f.name] = f.get(s).ToString();
  return m;
}

// The text property: one line per Line, the labelled figures in table
// order.
std::string StatsText(const std::string& name, const FilteredDBStats& s) {
  std::string out = "** Cuckoo live-key filter [" + name + "] **\n";
  for (size_t line = 0; line < std::size(kLineTitles); ++line) {
    std::string text;
    for (const Figure& f : kFigures) {
      if (static_cast<size_t>(f.line) != line || f.label == nullptr) continue;
      char buf[512];
      snprintf(buf, sizeof(buf), f.label, f.get(s).ToText().c_str());
      text += text.empty() ? "" : ", ";
      text += buf;
    }
    out += std::string(kLineTitles[line]) + ": " + text + "\n";
  }
  return out;
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
  s->GetSnapshotStatus(&stats.snapshot_status, &stats.loaded_from_snapshot);
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
  const Figure* f = FindIntProperty(property);
  if (f == nullptr) return false;
  *value = f->get(StatsOf(s)).ToString();
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
  const CfState* s = State(cf);
  if (s == nullptr) return false;
  const Figure* f = FindIntProperty(property);
  if (f == nullptr) return false;
  *value = f->get(StatsOf(s)).integer;
  return true;
}

bool FilteredDBImpl::GetAggregatedIntProperty(const Slice& property,
                                              uint64_t* value) {
  if (!IsCuckooProperty(property)) {
    return db_->GetAggregatedIntProperty(property, value);
  }
  // Over the filtered families (none: 0); bits per key of all tables
  // together.
  const Figure* f = FindIntProperty(property);
  if (f == nullptr) return false;
  uint64_t result = 0, keys = 0, table_bytes = 0;
  bool first = true;
  for (const auto& s : states_) {
    if (s->dropped.load(std::memory_order_acquire)) continue;
    const FilteredDBStats stats = StatsOf(s.get());
    const uint64_t v = f->get(stats).integer;
    switch (f->aggregate) {
      case Aggregate::kSum:
        result += v;
        break;
      case Aggregate::kMin:
        result = first ? v : std::min(result, v);
        break;
      case Aggregate::kMax:
        result = std::max(result, v);
        break;
      case Aggregate::kMilliBitsPerKey:
        keys += stats.num_keys;
        table_bytes += stats.table_bytes;
        break;
    }
    first = false;
  }
  *value = f->aggregate == Aggregate::kMilliBitsPerKey
               ? MilliBitsPerKey(table_bytes, keys)
               : result;
  return true;
}

}  // namespace live
}  // namespace rocksdb_cuckoo
