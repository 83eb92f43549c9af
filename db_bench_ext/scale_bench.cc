// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// scale_bench: the live-key filter (FilteredDB) at DB scale, against plain
// RocksDB on the same data, in one process.
//
// For each size N of --sizes (keys):
//   build   a DB of N keys (16-hex-digit keys in random order, --value_size
//           bytes of incompressible data) written by random Puts in small
//           WriteBatches without WAL, then flushed; compactions settle, so it
//           is a multi-level LSM (its shape is reported), not one ingested
//           level. Then FilteredDB opens it once (a full rebuild scan) and
//           closes it: the base holds a filter snapshot bound to its files.
//           With --db_dir the base is kept and reused by later runs (each
//           run rewrites its filter snapshot in the current format).
//   Every measurement runs on a clone of the base: a directory whose SST
//   files are hard links to the base's and whose other files (MANIFEST,
//   WAL, OPTIONS, the filter snapshot) are copies, so every clone starts
//   from the same bytes and the page cache is shared.
//   open    clean: DB::Open of a plain clone and FilteredDB::Open (with
//           snapshot_dir, so the snapshot written at the last Close is used)
//           of a filtered clone, alternated --reps times; times until Open
//           returns and their ratio (median of the per-repetition ratios),
//           and until the filter is active (Open loads the snapshot in the
//           background: "clean open -> filter active").
//   rebuild FilteredDB::RebuildFilter on the open filtered clone: the time
//           of a full rebuild scan and keys scanned per second.
//   kill    three clones, one child process each (this binary with
//           --child_mode), each killed with SIGKILL once it reports ready:
//             plain       DB::Open, then W Puts
//             filtered    FilteredDB::Open (loads the snapshot), which
//                         then is deleted, then the same W Puts: no
//                         checkpoint covers the crash (the filter is
//                         rebuilt by a scan: the baseline)
//             checkpoint  FilteredDB::Open, PersistFilterSnapshots(), then
//                         the same W Puts: a checkpoint W writes old (the
//                         reopen replays them from the WAL)
//             ckpt_last   FilteredDB::Open, the same W Puts, then
//                         PersistFilterSnapshots(): a checkpoint with no
//                         write after it (what the automatic checkpoints
//                         give when the writes stop)
//           W = --after_checkpoint_fraction x N. The killed states are
//           equivalent: the same keys and values, one Put each, WAL on (every
//           Put reaches the OS before the child reports), a memtable
//           (--write_buffer_mb) large enough that nothing is flushed before
//           the kill; the tool checks that the three clones have the same
//           WAL bytes and SST files and prints them. Then, in rotating
//           order, DB::Open of the plain state and FilteredDB::Open of each
//           filtered state are timed; for the filtered ones also "kill ->
//           filter active": from the start of Open until the filter answers
//           (stats say neither bypassed nor building, and Gets of absent
//           keys are answered "absent" by the filter; where Open builds the
//           filter before it returns this is Open's time; with
//           background_open, Open returns first and the filter is built
//           in the background, reads going unfiltered meanwhile). Every key
//           written before the kill is then read back (0 false negatives).
//   stall   a writer thread alternating Puts of new keys and Deletes of its
//           own older keys flat out on an open filtered clone, while the
//           main thread calls PersistFilterSnapshots() --checkpoints times,
//           each after --stall_window_ms of plain writing: worst and p99
//           latency of the writes (Puts and Deletes) whose time overlaps a
//           checkpoint vs the others. (A checkpoint that blocks writers
//           blocks the one write in flight: then "during" is one write per
//           checkpoint, and its p99 is its worst.)
//   autostall  the same writer with the automatic checkpoints
//           (FilteredDBOptions::checkpoints) taking one every
//           --autostall_writes writes, for --autostall_s seconds: p99 and
//           worst of the writes during one (windows from on_checkpoint) and
//           outside.
//   memory  bits per live key (stats.bits_per_key: table bits / keys) and
//           memory_bytes right after Open (the table the base's open built
//           from the DB, sized by its key estimate); then new keys are
//           written in batches until the filter grows once (at most
//           --growth_max_fraction x N keys): bits per key and memory after
//           the growth, and the keys the growth scanned from the DB.
//   neg     --neg_gets Gets of never-inserted keys, plain clone vs filtered
//           clone (both open, 8 MiB block cache each by default), in
//           alternating chunks of 10000: ops/s and the speedup; then the
//           same keys by MultiGet of --neg_multiget_batch keys (keys/s).
//   probe   probe vs memory limit: on an open filtered clone, the core's
//           probe timing (db_bench_ext/probe_limit.h, where the tree has
//           it): single MayContain calls in a loop against two independent
//           random loads on an array of the table's size, the same
//           serialized (LFENCE), and batched probes against single ones.
//           Without that header the columns stay empty.
// Output: a table with one column per size (stdout), progress on stderr,
// --csv=<file> with one row per size (columns: kColumns below; an empty
// field means not measured).
//
// Note: Debian's librocksdb is built with assertions on; absolute timings are
// pessimistic, compare the ratios of one run. All files are in the page
// cache (warm opens).
#include <fcntl.h>
#include <gflags/gflags.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "db_bench_util.h"
#include "open_db.h"  // tests/
#include "rocksdb/cache.h"
#include "rocksdb/db.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "rocksdb/version.h"
#include "rocksdb/write_batch.h"
#include "rocksdb_cuckoo/filtered_db.h"

// The core's probe timing (single / serialized / batched probes against
// random loads on the same bytes) where the tree has it.
#if __has_include("probe_limit.h")
#include "probe_limit.h"
#define SCALE_BENCH_PROBE_LIMIT 1
#else
#define SCALE_BENCH_PROBE_LIMIT 0
#endif

DEFINE_string(sizes, "1M,4M,16M", "DB sizes in keys (K/M suffixes)");
DEFINE_bool(smoke, false,
            "tiny sizes and windows (CI): --sizes=80K,160K, --reps=1, "
            "--neg_gets=20000, --checkpoints=2, --stall_window_ms=200, "
            "--autostall_s=1, --autostall_writes=20000, "
            "--probe_queries=65536, --probe_reps=3");
DEFINE_uint64(reps, 3, "repetitions of each open measurement (medians)");
DEFINE_string(db_dir, "",
              "keep the built base DBs here and reuse them in later runs "
              "(default: a temporary directory, removed at the end)");
DEFINE_string(tmpdir, "", "parent of the temporary directory ($TMPDIR, /tmp)");
DEFINE_string(phases, "open,rebuild,kill,stall,autostall,memory,neg,probe",
              "phases to run (see the file comment)");
DEFINE_uint64(value_size, 64, "value bytes");
DEFINE_uint64(write_buffer_mb, 64,
              "memtable size in MiB after the build (opens, children, "
              "writers); must hold the W writes of the kill phase");
DEFINE_uint64(block_cache_mb, 8, "block cache (LRU) size in MiB");
DEFINE_int32(sst_bloom_bits, 10,
             "bits/key of RocksDB's own SST Bloom filter (0 = none)");
DEFINE_double(after_checkpoint_fraction, 0.01,
              "kill phase: writes before the kill, as a fraction of N");
DEFINE_uint64(checkpoints, 3, "stall phase: PersistFilterSnapshots calls");
DEFINE_uint64(autostall_writes, 200000,
              "autostall phase: writes between automatic checkpoints");
DEFINE_double(autostall_s, 6, "autostall phase: seconds of writing");
DEFINE_uint64(stall_window_ms, 1000,
              "stall phase: writing before each checkpoint and after the last");
DEFINE_double(growth_max_fraction, 0.6,
              "memory phase: at most this fraction of N new keys to reach a "
              "growth");
DEFINE_uint64(neg_gets, 200000, "neg phase: Gets of absent keys per DB");
DEFINE_uint64(neg_multiget_batch, 32,
              "neg phase: keys per MultiGet of absent keys (0: no MultiGet)");
DEFINE_uint64(probe_queries, 1 << 20,
              "probe phase: random hashes per loop (probe_limit.h)");
DEFINE_int32(probe_reps, 5, "probe phase: repetitions (medians)");
DEFINE_uint64(seed, 42, "key seed");
DEFINE_string(csv, "", "write the results (one row per size) to this file");
// Internal: the child processes of the kill phase.
DEFINE_string(child_mode, "",
              "internal: plain, filtered, checkpoint or ckpt_last");
DEFINE_string(child_db, "", "internal: DB directory of the child");
DEFINE_uint64(child_keys, 0, "internal: N of the DB (level sizing)");
DEFINE_uint64(child_begin, 0, "internal: first key index the child writes");
DEFINE_uint64(child_count, 0, "internal: keys the child writes");

namespace {

namespace fs = std::filesystem;
using cuckoo_bench::Clock;
using cuckoo_bench::Median;
using cuckoo_bench::Seconds;
using cuckoo_bench::SplitList;
using cuckoo_bench::WaitForBackgroundJobs;
using rocksdb_cuckoo::FilteredDB;
using rocksdb_cuckoo::FilteredDBOptions;
using rocksdb_cuckoo::FilteredDBStats;
using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::DB;
using ROCKSDB_NAMESPACE::Options;
using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WriteOptions;

// Exits with a message on a failed Status (benchmark setup errors).
void Check(const Status& s, const std::string& what) {
  if (!s.ok()) {
    fprintf(stderr, "scale_bench: %s: %s\n", what.c_str(),
            s.ToString().c_str());
    exit(1);
  }
}

[[noreturn]] void Fail(const std::string& what) {
  fprintf(stderr, "scale_bench: %s\n", what.c_str());
  exit(1);
}

bool HasPhase(const char* phase) {
  const auto phases = SplitList(FLAGS_phases);
  return std::find(phases.begin(), phases.end(), phase) != phases.end();
}

// "16M" -> 16000000 (K = 10^3, M = 10^6).
uint64_t ParseSize(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    Fail("bad size '" + text + "'");
  }
  const std::string suffix = text.substr(used);
  if (suffix == "K" || suffix == "k") {
    v *= 1e3;
  } else if (suffix == "M" || suffix == "m") {
    v *= 1e6;
  } else if (!suffix.empty()) {
    Fail("bad size suffix in '" + text + "'");
  }
  if (v < 1000) Fail("sizes must be >= 1000 keys");
  return static_cast<uint64_t>(v);
}

std::string SizeLabel(uint64_t n) {
  if (n % 1000000 == 0) return std::to_string(n / 1000000) + "M";
  if (n % 1000 == 0) return std::to_string(n / 1000) + "K";
  return std::to_string(n);
}

// ---------------------------------------------------------------- keys

// Key spaces: index i in [0, N) is the base DB; the kill writes follow it;
// the growth and stall writers and the absent keys use disjoint ranges.
constexpr uint64_t kGrowthBase = uint64_t{1} << 40;
constexpr uint64_t kStallBase = uint64_t{1} << 41;
constexpr uint64_t kAbsentBase = uint64_t{1} << 62;  // never written

std::string MakeKey(uint64_t i) { return cuckoo_bench::MakeKey(i, FLAGS_seed); }
Slice ValueOf(uint64_t i) { return cuckoo_bench::ValueOf(i, FLAGS_value_size); }

// ---------------------------------------------------------------- options

// The memtable of the build: about 1/32 of the data, 1..8 MiB, so that even
// small DBs get several levels. Level sizes follow it, and every later open
// uses the same level options (only the memtable size differs).
uint64_t BuildWriteBuffer(uint64_t n) {
  const uint64_t data = n * (16 + FLAGS_value_size);
  return std::clamp<uint64_t>(data / 32, uint64_t{1} << 20, uint64_t{8} << 20);
}

Options DbOptions(uint64_t n, uint64_t write_buffer) {
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = write_buffer;
  o.max_background_jobs = 2;
  o.target_file_size_base = BuildWriteBuffer(n);
  o.max_bytes_for_level_base = 8 * BuildWriteBuffer(n);
  ROCKSDB_NAMESPACE::BlockBasedTableOptions t;
  t.block_cache = ROCKSDB_NAMESPACE::NewLRUCache(FLAGS_block_cache_mb << 20);
  if (FLAGS_sst_bloom_bits > 0) {
    t.filter_policy.reset(
        ROCKSDB_NAMESPACE::NewBloomFilterPolicy(FLAGS_sst_bloom_bits));
  }
  o.table_factory.reset(ROCKSDB_NAMESPACE::NewBlockBasedTableFactory(t));
  return o;
}

Options OpenOptions(uint64_t n) {
  return DbOptions(n, FLAGS_write_buffer_mb << 20);
}

// A clone directory: <dir>/db holds the DB, <dir>/snap the filter snapshot.
std::string DbPath(const std::string& dir) { return dir + "/db"; }
std::string SnapPath(const std::string& dir) { return dir + "/snap"; }

FilteredDBOptions FilterOptions(const std::string& dir) {
  FilteredDBOptions f;
  f.snapshot_dir = SnapPath(dir);
  return f;
}

std::unique_ptr<DB> OpenPlain(uint64_t n, const std::string& dir) {
  std::unique_ptr<DB> db;
  Check(cuckoo_test::OpenDB(OpenOptions(n), DbPath(dir), &db), "open " + dir);
  return db;
}

std::unique_ptr<FilteredDB> OpenFiltered(uint64_t n, const std::string& dir) {
  std::unique_ptr<FilteredDB> db;
  Check(FilteredDB::Open(OpenOptions(n), DbPath(dir), FilterOptions(dir), &db),
        "filtered open " + dir);
  return db;
}

// Opens, waits until the filter is built (Open may return before it is:
// FilteredDBOptions::background_open) and closes: the close writes a filter
// snapshot bound to the files it leaves.
void WriteFilterSnapshot(uint64_t n, const std::string& dir) {
  std::unique_ptr<FilteredDB> db = OpenFiltered(n, dir);
  db->WaitForFilterRebuilds();
  Check(db->Close(), "filtered close " + dir);
}

// ---------------------------------------------------------------- files

// Copies a closed DB directory tree: SST and blob files as hard links
// (RocksDB never modifies them), everything else as bytes; not LOCK or the
// info logs.
void CloneDir(const fs::path& src, const fs::path& dst) {
  fs::create_directories(dst);
  for (const auto& e : fs::directory_iterator(src)) {
    const std::string name = e.path().filename().string();
    if (name == "LOCK" || name.rfind("LOG", 0) == 0) continue;
    const fs::path to = dst / name;
    if (e.is_directory()) {
      CloneDir(e.path(), to);
    } else if (e.path().extension() == ".sst" ||
               e.path().extension() == ".blob") {
      fs::create_hard_link(e.path(), to);
    } else {
      fs::copy_file(e.path(), to);
    }
  }
}

// Bytes of the files with this extension in a directory, and their count.
std::pair<uint64_t, uint64_t> FilesWithExtension(const std::string& dir,
                                                 const char* ext) {
  uint64_t bytes = 0, count = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ext) {
      bytes += e.file_size();
      ++count;
    }
  }
  return {bytes, count};
}

// ---------------------------------------------------------------- results

// Columns of the CSV, in order; the printed table has one line per column.
const std::vector<std::string> kColumns = {
    "size", "keys", "value_bytes", "base_reused", "build_s", "levels_files",
    "levels_mb", "sst_mb",
    // open, clean
    "open_clean_plain_s", "open_clean_filtered_s", "open_clean_ratio",
    "open_clean_active_s", "open_clean_active_ratio", "open_clean_snapshot",
    // rebuild
    "rebuild_scan_s", "rebuild_keys_per_s",
    // kill
    "kill_writes", "kill_wal_mb", "open_kill_plain_s", "open_kill_filtered_s",
    "open_kill_ratio", "kill_active_s", "kill_active_ratio",
    "open_ckpt_filtered_s", "open_ckpt_ratio", "ckpt_active_s",
    "ckpt_active_vs_rebuild", "ckpt_snapshot", "ckpt_last_open_s",
    "ckpt_last_active_s", "ckpt_last_active_vs_rebuild", "ckpt_last_snapshot",
    // stall
    "persist_s", "write_worst_during_ms", "write_p99_during_ms",
    "write_worst_outside_ms", "write_p99_outside_ms", "stall_worst_ratio",
    "stall_p99_ratio", "stall_writes",
    // autostall
    "auto_checkpoints", "auto_ckpt_s", "auto_p99_during_ms",
    "auto_p99_outside_ms", "auto_p99_ratio", "auto_worst_during_ms",
    "auto_worst_outside_ms",
    // memory
    "bits_per_key_open", "memory_mb_open", "bits_per_key_grown",
    "memory_mb_grown", "growth_writes", "growth_keys_scanned",
    // negative Gets and probes
    "neg_plain_ops", "neg_filtered_ops", "neg_speedup", "neg_mget_plain_ops",
    "neg_mget_filtered_ops", "neg_mget_speedup", "probe_table_mb",
    "probe_single_ns", "probe_loads_ns", "probe_vs_limit",
    "probe_serial_vs_limit", "probe_batch_vs_single", "errors", "seconds"};

class Row {
 public:
  void Set(const std::string& column, std::string value) {
    if (std::find(kColumns.begin(), kColumns.end(), column) == kColumns.end())
      Fail("internal: unknown column " + column);
    values_[column] = std::move(value);
  }
  void Set(const std::string& column, double v, const char* format) {
    char buf[64];
    snprintf(buf, sizeof(buf), format, v);
    Set(column, std::string(buf));
  }
  std::string Get(const std::string& column) const {
    auto it = values_.find(column);
    return it == values_.end() ? "" : it->second;
  }

 private:
  std::map<std::string, std::string> values_;
};

void PrintTable(const std::vector<Row>& rows) {
  size_t name_width = 0;
  for (const auto& c : kColumns) name_width = std::max(name_width, c.size());
  std::vector<size_t> width(rows.size(), 1);
  for (size_t r = 0; r < rows.size(); ++r) {
    for (const auto& c : kColumns)
      width[r] = std::max(width[r], rows[r].Get(c).size());
  }
  printf("\n== live filter at scale (one column per size)\n");
  for (const auto& c : kColumns) {
    printf("%-*s", int(name_width), c.c_str());
    for (size_t r = 0; r < rows.size(); ++r) {
      const std::string v = rows[r].Get(c);
      printf("  %*s", int(width[r]), v.empty() ? "-" : v.c_str());
    }
    printf("\n");
  }
  fflush(stdout);
}

void WriteCsv(const std::vector<Row>& rows) {
  if (FLAGS_csv.empty()) return;
  FILE* f = fopen(FLAGS_csv.c_str(), "w");
  if (f == nullptr) Fail("cannot write " + FLAGS_csv);
  for (size_t c = 0; c < kColumns.size(); ++c)
    fprintf(f, "%s%s", c ? "," : "", kColumns[c].c_str());
  fprintf(f, "\n");
  for (const auto& r : rows) {
    for (size_t c = 0; c < kColumns.size(); ++c)
      fprintf(f, "%s%s", c ? "," : "", r.Get(kColumns[c]).c_str());
    fprintf(f, "\n");
  }
  fclose(f);
  fprintf(stderr, "wrote %s\n", FLAGS_csv.c_str());
}

// A snapshot status without its details ("ignored: stale snapshot: covers
// sequence 5, DB is at 9" -> "ignored: stale snapshot"); no commas (CSV).
std::string Brief(const std::string& status) {
  std::string out = status.substr(0, status.find(':', status.find(':') + 1));
  std::replace(out.begin(), out.end(), ',', ';');
  return out;
}

// ---------------------------------------------------------------- filter

// FilteredDBStats differs between filter versions: the first live filter
// has `bypassed` (SetBypass) and grows only by rebuilds from the DB
// (counted in `growths`, which 1.0.0 renamed `rescans`); the core v2 filter
// has `building` (not ready: every key "may be present") and doubles by splits
// (`splits`, no DB read). These read whichever fields exist.
#define SCALE_BENCH_HAS_FIELD(field)                                    \
  template <typename S, typename = void>                                \
  struct Has_##field : std::false_type {};                              \
  template <typename S>                                                 \
  struct Has_##field<S, std::void_t<decltype(std::declval<S>().field)>> \
      : std::true_type {};                                              \
  template <typename S>                                                 \
  auto Field_##field(const S& s) {                                      \
    if constexpr (Has_##field<S>::value) {                              \
      return s.field;                                                   \
    } else {                                                            \
      return decltype(s.keys_scanned){0};                               \
    }                                                                   \
  }
SCALE_BENCH_HAS_FIELD(bypassed)
SCALE_BENCH_HAS_FIELD(building)
SCALE_BENCH_HAS_FIELD(splits)
SCALE_BENCH_HAS_FIELD(split_in_progress)
SCALE_BENCH_HAS_FIELD(growths)
SCALE_BENCH_HAS_FIELD(rescans)
#undef SCALE_BENCH_HAS_FIELD

// Growths of the filter so far: rescans (rebuilds from the DB the filter
// asked for) plus splits (where the filter has them).
uint64_t Growths(const FilteredDBStats& s) {
  return uint64_t(Field_growths(s)) + uint64_t(Field_rescans(s)) +
         uint64_t(Field_splits(s));
}

// True once the filter answers reads: stats show it neither bypassed nor
// building (where FilteredDBStats has these fields), and one of a few Gets
// of absent keys was answered "absent" by the filter (stats.absent grew).
bool FilterActive(FilteredDB* db, uint64_t* probe_index) {
  FilteredDBStats before;
  if (!db->GetFilterStats(nullptr, &before).ok()) return false;
  if (Field_bypassed(before) || Field_building(before)) return false;
  PinnableSlice value;
  for (int i = 0; i < 4; ++i) {
    value.Reset();
    db->Get(ReadOptions(), db->DefaultColumnFamily(),
            MakeKey(kAbsentBase + (uint64_t{1} << 40) + (*probe_index)++),
            &value)
        .PermitUncheckedError();
  }
  FilteredDBStats after;
  db->GetFilterStats(nullptr, &after).PermitUncheckedError();
  return after.absent > before.absent;
}

// Polls FilterActive every millisecond (up to 30 minutes); returns the
// time since `start`.
double WaitUntilActive(FilteredDB* db, Clock::time_point start) {
  uint64_t probe = 0;
  const auto deadline = start + std::chrono::minutes(30);
  while (!FilterActive(db, &probe)) {
    if (Clock::now() > deadline) Fail("filter not active after 30 minutes");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return Seconds(start, Clock::now());
}

// Reads keys [begin, end) back (a sample of at most `samples`); counts the
// ones not found: false negatives if the DB has them.
uint64_t MissingKeys(DB* db, uint64_t begin, uint64_t end, uint64_t samples) {
  uint64_t missing = 0;
  const uint64_t step = std::max<uint64_t>(1, (end - begin) / samples);
  PinnableSlice value;
  for (uint64_t i = begin; i < end; i += step) {
    value.Reset();
    missing +=
        !db->Get(ReadOptions(), db->DefaultColumnFamily(), MakeKey(i), &value)
             .ok();
  }
  return missing;
}

// ---------------------------------------------------------------- child

// The child of the kill phase: opens its DB, writes, says "ready" on
// stdout and waits to be killed.
int RunChild() {
  std::unique_ptr<DB> plain;
  std::unique_ptr<FilteredDB> filtered;
  DB* db = nullptr;
  if (FLAGS_child_mode == "plain") {
    plain = OpenPlain(FLAGS_child_keys, FLAGS_child_db);
    db = plain.get();
  } else if (FLAGS_child_mode == "filtered" ||
             FLAGS_child_mode == "checkpoint" ||
             FLAGS_child_mode == "ckpt_last") {
    filtered = OpenFiltered(FLAGS_child_keys, FLAGS_child_db);
    db = filtered.get();
    if (FLAGS_child_mode == "checkpoint")
      Check(filtered->PersistFilterSnapshots(), "child checkpoint");
    if (FLAGS_child_mode == "filtered") {
      // No checkpoint for the reopen: it scans.
      filtered->WaitForFilterRebuilds();
      std::error_code ec;
      fs::remove_all(SnapPath(FLAGS_child_db), ec);
    }
  } else {
    Fail("unknown --child_mode " + FLAGS_child_mode);
  }
  for (uint64_t i = FLAGS_child_begin;
       i < FLAGS_child_begin + FLAGS_child_count; ++i) {
    Check(db->Put(WriteOptions(), MakeKey(i), ValueOf(i)), "child put");
  }
  if (FLAGS_child_mode == "ckpt_last") {
    Check(filtered->PersistFilterSnapshots(), "child checkpoint");
  }
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();
}

// Starts this binary as a kill-phase child, waits until it is ready, kills
// it with SIGKILL.
void RunAndKillChild(const std::string& mode, const std::string& dir,
                     uint64_t n, uint64_t begin, uint64_t count) {
  std::vector<std::string> args = {
      "/proc/self/exe",
      "--child_mode=" + mode,
      "--child_db=" + dir,
      "--child_keys=" + std::to_string(n),
      "--child_begin=" + std::to_string(begin),
      "--child_count=" + std::to_string(count),
      "--value_size=" + std::to_string(FLAGS_value_size),
      "--write_buffer_mb=" + std::to_string(FLAGS_write_buffer_mb),
      "--block_cache_mb=" + std::to_string(FLAGS_block_cache_mb),
      "--sst_bloom_bits=" + std::to_string(FLAGS_sst_bloom_bits),
      "--seed=" + std::to_string(FLAGS_seed)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) Fail("pipe");
  fflush(stdout);
  fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) Fail("fork");
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[256];
  while (out.find('\n') == std::string::npos) {
    const ssize_t got = read(fds[0], buf, sizeof(buf));
    if (got <= 0) break;
    out.append(buf, static_cast<size_t>(got));
  }
  close(fds[0]);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (out.rfind("ready", 0) != 0) {
    Fail("kill child (" + mode + ") failed before it was ready");
  }
}

// ---------------------------------------------------------------- phases

struct SizeRun {
  uint64_t n = 0;
  std::string root;  // <root>/base: the built DB; <root>/work: clones
  Row row;
  uint64_t errors = 0;
  double rebuild_s = 0;

  std::string Base() const { return root + "/base"; }
  // A fresh clone of the base named `name`.
  std::string Clone(const std::string& name) const {
    const std::string dir = root + "/work/" + name;
    fs::remove_all(dir);
    CloneDir(Base(), dir);
    return dir;
  }
  void RemoveClones() const { fs::remove_all(root + "/work"); }
};

// Files and MB per level ("4/3/12", "30/20/80"), trailing empty levels cut.
void LevelShape(DB* db, std::string* files, std::string* mb) {
  std::vector<uint64_t> count, bytes;
  for (int level = 0; level < db->NumberLevels(); ++level) {
    std::string v;
    db->GetProperty("rocksdb.num-files-at-level" + std::to_string(level), &v);
    count.push_back(std::stoull(v.empty() ? "0" : v));
  }
  ROCKSDB_NAMESPACE::ColumnFamilyMetaData meta;
  db->GetColumnFamilyMetaData(&meta);
  bytes.assign(count.size(), 0);
  for (const auto& level : meta.levels) {
    if (level.level >= 0 && size_t(level.level) < bytes.size())
      bytes[level.level] = level.size;
  }
  size_t last = count.size();
  while (last > 1 && count[last - 1] == 0) --last;
  files->clear();
  mb->clear();
  for (size_t l = 0; l < last; ++l) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%.0f", double(bytes[l]) / 1e6);
    *files += (l ? "/" : "") + std::to_string(count[l]);
    *mb += std::string(l ? "/" : "") + buf;
  }
}

// Builds the base DB (or reuses one of --db_dir with the same parameters)
// and records build figures in the row.
void BuildBase(SizeRun* run) {
  const std::string base = run->Base();
  const std::string info_path = base + "/BUILD_INFO";
  std::ostringstream params;
  params << "format=1 keys=" << run->n << " value_size=" << FLAGS_value_size
         << " seed=" << FLAGS_seed << " bloom=" << FLAGS_sst_bloom_bits;
  {
    std::ifstream in(info_path);
    std::string line;
    if (std::getline(in, line) && line == params.str()) {
      std::map<std::string, std::string> kv;
      std::string k, v;
      while (in >> k >> v) kv[k] = v;
      for (const char* c : {"build_s", "levels_files", "levels_mb", "sst_mb"})
        run->row.Set(c, kv[c]);
      run->row.Set("base_reused", "1");
      fprintf(stderr, "[%s] reusing the base DB in %s\n",
              SizeLabel(run->n).c_str(), base.c_str());
      // A fresh filter snapshot in this build's format (the kept one may be
      // from another version of the filter: then this open rebuilds it).
      WriteFilterSnapshot(run->n, base);
      return;
    }
  }
  fs::remove_all(base);
  fs::create_directories(base);
  fprintf(stderr, "[%s] building %" PRIu64 " keys in %s\n",
          SizeLabel(run->n).c_str(), run->n, base.c_str());
  const auto start = Clock::now();
  std::unique_ptr<DB> db;
  Check(cuckoo_test::OpenDB(DbOptions(run->n, BuildWriteBuffer(run->n)),
                            DbPath(base), &db),
        "build open");
  WriteOptions wo;
  wo.disableWAL = true;
  ROCKSDB_NAMESPACE::WriteBatch batch;
  for (uint64_t i = 0; i < run->n; ++i) {
    Check(batch.Put(MakeKey(i), ValueOf(i)), "batch put");
    if (batch.Count() == 100 || i + 1 == run->n) {
      Check(db->Write(wo, &batch), "build write");
      batch.Clear();
    }
    if ((i + 1) % 4000000 == 0)
      fprintf(stderr, "[%s] %" PRIu64 " keys written\n",
              SizeLabel(run->n).c_str(), i + 1);
  }
  Check(db->Flush(ROCKSDB_NAMESPACE::FlushOptions()), "build flush");
  WaitForBackgroundJobs(db.get(), 600);
  const double build_s = Seconds(start, Clock::now());
  std::string files, mb;
  LevelShape(db.get(), &files, &mb);
  uint64_t sst = 0;
  db->GetIntProperty("rocksdb.total-sst-files-size", &sst);
  Check(db->Close(), "build close");
  db.reset();
  // The filter snapshot of the base: FilteredDB builds it from the DB at
  // open and writes it at Close, bound to the files the close leaves.
  WriteFilterSnapshot(run->n, base);
  run->row.Set("base_reused", "0");
  run->row.Set("build_s", build_s, "%.1f");
  run->row.Set("levels_files", files);
  run->row.Set("levels_mb", mb);
  run->row.Set("sst_mb", double(sst) / 1e6, "%.0f");
  std::ofstream out(info_path);
  out << params.str() << "\n";
  for (const char* c : {"build_s", "levels_files", "levels_mb", "sst_mb"})
    out << c << " " << run->row.Get(c) << "\n";
}

// Clean opens (plain vs filtered with a snapshot), then full rebuild scans.
void OpenPhase(SizeRun* run) {
  const uint64_t n = run->n;
  const std::string plain_dir = run->Clone("clean_plain");
  const std::string filtered_dir = run->Clone("clean_filtered");
  std::vector<double> plain_s, filtered_s, ratio, active_s, active_ratio;
  std::string snapshot;
  for (uint64_t rep = 0; rep < FLAGS_reps; ++rep) {
    double p = 0, f = 0, a = 0;
    for (int k = 0; k < 2; ++k) {
      if ((k + rep) % 2 == 0) {
        const auto start = Clock::now();
        std::unique_ptr<DB> db = OpenPlain(n, plain_dir);
        p = Seconds(start, Clock::now());
        Check(db->Close(), "close");
      } else {
        const auto start = Clock::now();
        std::unique_ptr<FilteredDB> db = OpenFiltered(n, filtered_dir);
        f = Seconds(start, Clock::now());
        a = WaitUntilActive(db.get(), start);
        FilteredDBStats stats;
        Check(db->GetFilterStats(nullptr, &stats), "stats");
        snapshot = stats.snapshot_status;
        Check(db->Close(), "filtered close");  // writes the next snapshot
      }
    }
    plain_s.push_back(p);
    filtered_s.push_back(f);
    ratio.push_back(f / p);
    active_s.push_back(a);
    active_ratio.push_back(a / p);
    fprintf(stderr,
            "[%s] clean open rep %" PRIu64
            ": plain %.3f s, "
            "filtered %.3f s, active %.3f s (snapshot %s)\n",
            SizeLabel(n).c_str(), rep, p, f, a, snapshot.c_str());
  }
  run->row.Set("open_clean_active_s", Median(active_s), "%.3f");
  run->row.Set("open_clean_active_ratio", Median(active_ratio), "%.2f");
  run->row.Set("open_clean_plain_s", Median(plain_s), "%.3f");
  run->row.Set("open_clean_filtered_s", Median(filtered_s), "%.3f");
  run->row.Set("open_clean_ratio", Median(ratio), "%.2f");
  run->row.Set("open_clean_snapshot", Brief(snapshot));
}

void RebuildPhase(SizeRun* run) {
  const std::string dir = run->Clone("rebuild");
  std::unique_ptr<FilteredDB> db = OpenFiltered(run->n, dir);
  std::vector<double> secs, rate;
  for (uint64_t rep = 0; rep < FLAGS_reps; ++rep) {
    FilteredDBStats before, after;
    Check(db->GetFilterStats(nullptr, &before), "stats");
    const auto start = Clock::now();
    Check(db->RebuildFilter(nullptr), "rebuild");
    db->WaitForFilterRebuilds();
    const double s = Seconds(start, Clock::now());
    Check(db->GetFilterStats(nullptr, &after), "stats");
    secs.push_back(s);
    rate.push_back(double(after.keys_scanned - before.keys_scanned) / s);
    fprintf(stderr,
            "[%s] rebuild rep %" PRIu64 ": %.3f s, %" PRIu64 " keys scanned\n",
            SizeLabel(run->n).c_str(), rep, s,
            after.keys_scanned - before.keys_scanned);
  }
  run->rebuild_s = Median(secs);
  run->row.Set("rebuild_scan_s", run->rebuild_s, "%.3f");
  run->row.Set("rebuild_keys_per_s", Median(rate), "%.0f");
}

// One killed state per mode (see the file comment), then timed opens.
void KillPhase(SizeRun* run) {
  const uint64_t n = run->n;
  const uint64_t w = std::max<uint64_t>(
      1, static_cast<uint64_t>(double(n) * FLAGS_after_checkpoint_fraction));
  const std::vector<std::string> modes = {"plain", "filtered", "checkpoint",
                                          "ckpt_last"};
  std::map<std::string, std::vector<double>> open_s, active_s, ratio;
  std::string ckpt_snapshot, last_snapshot;
  double wal_mb = 0;
  for (uint64_t rep = 0; rep < FLAGS_reps; ++rep) {
    std::map<std::string, std::string> dirs;
    std::string shape;
    for (const auto& m : modes) {
      dirs[m] = run->Clone("kill_" + m);
      RunAndKillChild(m, dirs[m], n, n, w);
      // Equivalent states: same WAL bytes and SST files in every clone.
      const auto wal = FilesWithExtension(DbPath(dirs[m]), ".log");
      const auto sst = FilesWithExtension(DbPath(dirs[m]), ".sst");
      const std::string this_shape = std::to_string(wal.first) + " WAL B, " +
                                     std::to_string(sst.second) + " SSTs";
      if (shape.empty()) {
        shape = this_shape;
        wal_mb = double(wal.first) / 1e6;
      } else if (this_shape != shape) {
        fprintf(stderr, "[%s] warning: killed states differ: %s vs %s\n",
                SizeLabel(n).c_str(), shape.c_str(), this_shape.c_str());
      }
    }
    std::map<std::string, double> t;
    for (size_t k = 0; k < modes.size(); ++k) {
      const std::string& m = modes[(k + rep) % modes.size()];
      const std::string& dir = dirs[m];
      const auto start = Clock::now();
      if (m == "plain") {
        std::unique_ptr<DB> db = OpenPlain(n, dir);
        t["plain"] = Seconds(start, Clock::now());
        run->errors += MissingKeys(db.get(), n, n + w, 10000);
        Check(db->Close(), "close");
        continue;
      }
      std::unique_ptr<FilteredDB> db = OpenFiltered(n, dir);
      open_s[m].push_back(Seconds(start, Clock::now()));
      active_s[m].push_back(WaitUntilActive(db.get(), start));
      FilteredDBStats stats;
      Check(db->GetFilterStats(nullptr, &stats), "stats");
      if (m == "checkpoint") ckpt_snapshot = stats.snapshot_status;
      if (m == "ckpt_last") last_snapshot = stats.snapshot_status;
      // 0 false negatives: the killed child's writes and the base keys.
      run->errors += MissingKeys(db.get(), n, n + w, 10000) +
                     MissingKeys(db.get(), 0, n, 10000);
      Check(db->Close(), "close");
    }
    for (const auto& m : {"filtered", "checkpoint", "ckpt_last"}) {
      ratio[m].push_back(open_s[m].back() / t["plain"]);
      ratio[std::string(m) + "_active"].push_back(active_s[m].back() /
                                                  t["plain"]);
    }
    open_s["plain"].push_back(t["plain"]);
    fprintf(stderr,
            "[%s] kill rep %" PRIu64
            " (%s): plain %.3f s, filtered "
            "%.3f s (active %.3f s), checkpoint %.3f s (active %.3f s, "
            "snapshot %s), checkpoint last %.3f s (active %.3f s, snapshot "
            "%s)\n",
            SizeLabel(n).c_str(), rep, shape.c_str(), t["plain"],
            open_s["filtered"].back(), active_s["filtered"].back(),
            open_s["checkpoint"].back(), active_s["checkpoint"].back(),
            ckpt_snapshot.c_str(), open_s["ckpt_last"].back(),
            active_s["ckpt_last"].back(), last_snapshot.c_str());
  }
  Row& r = run->row;
  r.Set("kill_writes", std::to_string(w));
  r.Set("kill_wal_mb", wal_mb, "%.1f");
  r.Set("open_kill_plain_s", Median(open_s["plain"]), "%.3f");
  r.Set("open_kill_filtered_s", Median(open_s["filtered"]), "%.3f");
  r.Set("open_kill_ratio", Median(ratio["filtered"]), "%.2f");
  r.Set("kill_active_s", Median(active_s["filtered"]), "%.3f");
  r.Set("kill_active_ratio", Median(ratio["filtered_active"]), "%.2f");
  r.Set("open_ckpt_filtered_s", Median(open_s["checkpoint"]), "%.3f");
  r.Set("open_ckpt_ratio", Median(ratio["checkpoint"]), "%.2f");
  r.Set("ckpt_active_s", Median(active_s["checkpoint"]), "%.3f");
  if (run->rebuild_s > 0) {
    r.Set("ckpt_active_vs_rebuild",
          Median(active_s["checkpoint"]) / run->rebuild_s, "%.3f");
  }
  r.Set("ckpt_snapshot", Brief(ckpt_snapshot));
  r.Set("ckpt_last_open_s", Median(open_s["ckpt_last"]), "%.3f");
  r.Set("ckpt_last_active_s", Median(active_s["ckpt_last"]), "%.3f");
  if (run->rebuild_s > 0) {
    r.Set("ckpt_last_active_vs_rebuild",
          Median(active_s["ckpt_last"]) / run->rebuild_s, "%.3f");
  }
  r.Set("ckpt_last_snapshot", Brief(last_snapshot));
}

// Latency of one write: start and duration (ns since the phase began).
struct WriteSample {
  uint64_t start_ns, ns;
};

double PercentileMs(std::vector<uint64_t>* ns, double q) {
  if (ns->empty()) return 0;
  std::sort(ns->begin(), ns->end());
  const size_t i =
      std::min(ns->size() - 1, static_cast<size_t>(double(ns->size()) * q));
  return double((*ns)[i]) / 1e6;
}

void StallPhase(SizeRun* run) {
  const std::string dir = run->Clone("stall");
  std::unique_ptr<FilteredDB> db = OpenFiltered(run->n, dir);
  const auto t0 = Clock::now();
  auto since = [t0](Clock::time_point t) {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(t - t0).count());
  };
  std::atomic<bool> stop{false};
  std::vector<WriteSample> samples;
  samples.reserve(1 << 22);
  std::thread writer([&] {
    constexpr uint64_t kLag = 1000;  // deletes the key put kLag Puts ago
    for (uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      for (int op = 0; op < 2; ++op) {
        if (op == 1 && i < kLag) continue;
        const auto start = Clock::now();
        const Status st =
            op == 0
                ? db->Put(WriteOptions(), MakeKey(kStallBase + i),
                          ValueOf(kStallBase + i))
                : db->Delete(WriteOptions(), MakeKey(kStallBase + i - kLag));
        const auto end = Clock::now();
        Check(st, "stall write");
        samples.push_back({since(start), since(end) - since(start)});
      }
    }
  });
  const auto window = std::chrono::milliseconds(FLAGS_stall_window_ms);
  std::vector<std::pair<uint64_t, uint64_t>> checkpoints;
  std::vector<double> persist_s;
  for (uint64_t c = 0; c < FLAGS_checkpoints; ++c) {
    std::this_thread::sleep_for(window);
    const auto start = Clock::now();
    Check(db->PersistFilterSnapshots(), "persist");
    const auto end = Clock::now();
    checkpoints.push_back({since(start), since(end)});
    persist_s.push_back(Seconds(start, end));
  }
  std::this_thread::sleep_for(window);
  stop = true;
  writer.join();
  std::vector<uint64_t> during, outside;
  for (const auto& s : samples) {
    bool overlaps = false;
    for (const auto& [a, b] : checkpoints)
      overlaps |= s.start_ns <= b && s.start_ns + s.ns >= a;
    (overlaps ? during : outside).push_back(s.ns);
  }
  Check(db->Close(), "close");
  const double worst_during = PercentileMs(&during, 1.0);
  const double worst_outside = PercentileMs(&outside, 1.0);
  Row& r = run->row;
  r.Set("persist_s", Median(persist_s), "%.3f");
  r.Set("write_worst_during_ms", worst_during, "%.2f");
  r.Set("write_p99_during_ms", PercentileMs(&during, 0.99), "%.3f");
  r.Set("write_worst_outside_ms", worst_outside, "%.2f");
  r.Set("write_p99_outside_ms", PercentileMs(&outside, 0.99), "%.3f");
  if (worst_outside > 0)
    r.Set("stall_worst_ratio", worst_during / worst_outside, "%.1f");
  const double p99_outside = PercentileMs(&outside, 0.99);
  if (p99_outside > 0)
    r.Set("stall_p99_ratio", PercentileMs(&during, 0.99) / p99_outside, "%.2f");
  r.Set("stall_writes", std::to_string(samples.size()));
  fprintf(stderr,
          "[%s] stall: %zu writes (%zu during %zu checkpoints of "
          "median %.3f s): worst %.2f ms during, %.2f ms outside\n",
          SizeLabel(run->n).c_str(), samples.size(), during.size(),
          checkpoints.size(), Median(persist_s), worst_during, worst_outside);
}

// The stall phase's writer with the automatic checkpoints instead of
// explicit calls: each checkpoint's window comes from on_checkpoint (its
// end and duration).
void AutoStallPhase(SizeRun* run) {
  const std::string dir = run->Clone("autostall");
  const auto t0 = Clock::now();
  auto since = [t0](Clock::time_point t) {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(t - t0).count());
  };
  std::mutex mu;
  std::vector<std::pair<uint64_t, uint64_t>> checkpoints;
  FilteredDBOptions f = FilterOptions(dir);
  f.checkpoints.min_writes = FLAGS_autostall_writes;
  f.checkpoints.writes_fraction = 0;
  f.checkpoints.check_interval_ms = 50;
  f.checkpoints.on_checkpoint = [&](uint64_t, uint64_t micros,
                                    const Status& st) {
    Check(st, "automatic checkpoint");
    const uint64_t end = since(Clock::now());
    std::lock_guard<std::mutex> lock(mu);
    checkpoints.push_back({end - micros * 1000, end});
  };
  std::unique_ptr<FilteredDB> db;
  Check(FilteredDB::Open(OpenOptions(run->n), DbPath(dir), f, &db),
        "filtered open " + dir);
  WaitUntilActive(db.get(), Clock::now());
  std::vector<WriteSample> samples;
  samples.reserve(1 << 22);
  const auto until =
      Clock::now() +
      std::chrono::milliseconds(static_cast<int64_t>(FLAGS_autostall_s * 1000));
  constexpr uint64_t kLag = 1000;
  for (uint64_t i = 0; Clock::now() < until; ++i) {
    for (int op = 0; op < 2; ++op) {
      if (op == 1 && i < kLag) continue;
      const uint64_t k = kStallBase + (uint64_t{1} << 36) + i;
      const auto start = Clock::now();
      const Status st = op == 0
                            ? db->Put(WriteOptions(), MakeKey(k), ValueOf(k))
                            : db->Delete(WriteOptions(), MakeKey(k - kLag));
      const auto end = Clock::now();
      Check(st, "autostall write");
      samples.push_back({since(start), since(end) - since(start)});
    }
  }
  Check(db->Close(), "close");
  std::vector<uint64_t> during, outside;
  std::vector<double> ckpt_s;
  for (const auto& [a, b] : checkpoints) ckpt_s.push_back(double(b - a) / 1e9);
  for (const auto& s : samples) {
    bool overlaps = false;
    for (const auto& [a, b] : checkpoints)
      overlaps |= s.start_ns <= b && s.start_ns + s.ns >= a;
    (overlaps ? during : outside).push_back(s.ns);
  }
  Row& r = run->row;
  r.Set("auto_checkpoints", std::to_string(checkpoints.size()));
  if (!ckpt_s.empty()) r.Set("auto_ckpt_s", Median(ckpt_s), "%.3f");
  const double p99_during = PercentileMs(&during, 0.99);
  const double p99_outside = PercentileMs(&outside, 0.99);
  r.Set("auto_p99_during_ms", p99_during, "%.3f");
  r.Set("auto_p99_outside_ms", p99_outside, "%.3f");
  if (p99_outside > 0 && !during.empty())
    r.Set("auto_p99_ratio", p99_during / p99_outside, "%.2f");
  r.Set("auto_worst_during_ms", PercentileMs(&during, 1.0), "%.2f");
  r.Set("auto_worst_outside_ms", PercentileMs(&outside, 1.0), "%.2f");
  fprintf(stderr,
          "[%s] autostall: %zu writes (%zu during %zu automatic checkpoints "
          "of median %.3f s): p99 %.3f ms during, %.3f ms outside\n",
          SizeLabel(run->n).c_str(), samples.size(), during.size(),
          checkpoints.size(), ckpt_s.empty() ? 0.0 : Median(ckpt_s), p99_during,
          p99_outside);
}

// Bits per key right after Open (the table the base's open built from the
// DB, sized by the key estimate, loaded from its snapshot), then new keys
// until the filter grows once.
void MemoryPhase(SizeRun* run) {
  Row& r = run->row;
  const std::string dir = run->Clone("memory");
  std::unique_ptr<FilteredDB> db = OpenFiltered(run->n, dir);
  WaitUntilActive(db.get(), Clock::now());
  FilteredDBStats stats;
  Check(db->GetFilterStats(nullptr, &stats), "stats");
  r.Set("bits_per_key_open", stats.bits_per_key, "%.2f");
  r.Set("memory_mb_open", double(stats.memory_bytes) / 1e6, "%.2f");
  FilteredDBStats before;
  Check(db->GetFilterStats(nullptr, &before), "stats");
  const uint64_t limit =
      static_cast<uint64_t>(double(run->n) * FLAGS_growth_max_fraction);
  uint64_t written = 0;
  ROCKSDB_NAMESPACE::WriteBatch batch;
  FilteredDBStats now = before;
  while (written < limit && Growths(now) == Growths(before)) {
    for (int k = 0; k < 1000 && written < limit; ++k, ++written) {
      Check(batch.Put(MakeKey(kGrowthBase + written),
                      ValueOf(kGrowthBase + written)),
            "batch put");
    }
    Check(db->Write(WriteOptions(), &batch), "growth write");
    batch.Clear();
    Check(db->GetFilterStats(nullptr, &now), "stats");
  }
  // A split publishes the doubled table before it frees the old one: wait
  // until none runs, and a little for the old table's release.
  db->WaitForFilterRebuilds();
  for (int i = 0; i < 10000; ++i) {
    Check(db->GetFilterStats(nullptr, &now), "stats");
    if (!Field_split_in_progress(now)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Check(db->GetFilterStats(nullptr, &now), "stats");
  r.Set("growth_writes", std::to_string(written));
  if (Growths(now) > Growths(before)) {
    r.Set("bits_per_key_grown", now.bits_per_key, "%.2f");
    r.Set("memory_mb_grown", double(now.memory_bytes) / 1e6, "%.2f");
    r.Set("growth_keys_scanned",
          std::to_string(now.keys_scanned - before.keys_scanned));
  }
  run->errors +=
      MissingKeys(db.get(), kGrowthBase, kGrowthBase + written, 10000);
  fprintf(stderr,
          "[%s] memory: %.2f bits/key after open; %" PRIu64
          " keys written, %" PRIu64 " growths, %.2f bits/key after\n",
          SizeLabel(run->n).c_str(), stats.bits_per_key, written,
          Growths(now) - Growths(before), now.bits_per_key);
  Check(db->Close(), "close");
}

void NegPhase(SizeRun* run) {
  const std::string plain_dir = run->Clone("neg_plain");
  const std::string filtered_dir = run->Clone("neg_filtered");
  std::unique_ptr<DB> plain = OpenPlain(run->n, plain_dir);
  std::unique_ptr<FilteredDB> filtered = OpenFiltered(run->n, filtered_dir);
  WaitUntilActive(filtered.get(), Clock::now());
  WaitForBackgroundJobs(plain.get());
  WaitForBackgroundJobs(filtered.get());
  std::mt19937_64 rng(FLAGS_seed + 5);
  std::vector<std::string> keys;
  for (uint64_t q = 0; q < FLAGS_neg_gets; ++q)
    keys.push_back(MakeKey(kAbsentBase + (rng() >> 24)));
  DB* dbs[2] = {plain.get(), filtered.get()};
  const ReadOptions ro;
  PinnableSlice value;
  const size_t chunk = 10000;
  // Alternating chunks of the same keys, plain first in every other one.
  auto time_both = [&](auto&& read_chunk) {
    std::array<double, 2> secs = {0, 0};
    for (size_t begin = 0; begin < keys.size(); begin += chunk) {
      const size_t end = std::min(keys.size(), begin + chunk);
      for (int m = 0; m < 2; ++m) {
        const int d = int((begin / chunk + m) % 2);
        const auto start = Clock::now();
        read_chunk(dbs[d], begin, end);
        secs[d] += Seconds(start, Clock::now());
      }
    }
    return secs;
  };
  const auto secs = time_both([&](DB* db, size_t begin, size_t end) {
    ColumnFamilyHandle* cf = db->DefaultColumnFamily();
    for (size_t q = begin; q < end; ++q) {
      value.Reset();
      run->errors += !db->Get(ro, cf, keys[q], &value).IsNotFound();
    }
  });
  const double plain_ops = double(keys.size()) / secs[0];
  const double filtered_ops = double(keys.size()) / secs[1];
  run->row.Set("neg_plain_ops", plain_ops, "%.0f");
  run->row.Set("neg_filtered_ops", filtered_ops, "%.0f");
  run->row.Set("neg_speedup", filtered_ops / plain_ops, "%.2f");
  fprintf(stderr, "[%s] negative Gets: plain %.0f/s, filtered %.0f/s\n",
          SizeLabel(run->n).c_str(), plain_ops, filtered_ops);
  if (FLAGS_neg_multiget_batch > 0) {
    const size_t batch = FLAGS_neg_multiget_batch;
    const std::vector<Slice> slices(keys.begin(), keys.end());
    std::vector<PinnableSlice> values(batch);
    std::vector<Status> statuses(batch);
    const auto mget = time_both([&](DB* db, size_t begin, size_t end) {
      ColumnFamilyHandle* cf = db->DefaultColumnFamily();
      for (size_t q = begin; q < end; q += batch) {
        const size_t n = std::min(batch, end - q);
        db->MultiGet(ro, cf, n, &slices[q], values.data(), statuses.data(),
                     /*sorted_input=*/false);
        for (size_t i = 0; i < n; ++i) {
          run->errors += !statuses[i].IsNotFound();
          values[i].Reset();
        }
      }
    });
    const double mplain = double(keys.size()) / mget[0];
    const double mfiltered = double(keys.size()) / mget[1];
    run->row.Set("neg_mget_plain_ops", mplain, "%.0f");
    run->row.Set("neg_mget_filtered_ops", mfiltered, "%.0f");
    run->row.Set("neg_mget_speedup", mfiltered / mplain, "%.2f");
    fprintf(stderr,
            "[%s] MultiGet of absent keys (%zu per call): plain %.0f keys/s, "
            "filtered %.0f keys/s\n",
            SizeLabel(run->n).c_str(), batch, mplain, mfiltered);
  }
  run->errors += MissingKeys(filtered.get(), 0, run->n, 10000);
  Check(filtered->Close(), "close");
  Check(plain->Close(), "close");
}

// Probe cost of the open filter against two random loads on an array of
// its table's size (probe_limit.h, no writes meanwhile). Without that header
// the columns stay empty.
void ProbePhase(SizeRun* run) {
#if SCALE_BENCH_PROBE_LIMIT
  const std::string dir = run->Clone("probe");
  std::unique_ptr<FilteredDB> db = OpenFiltered(run->n, dir);
  WaitUntilActive(db.get(), Clock::now());
  const cuckoo::LiveKeyFilter* filter = db->GetLiveKeyFilter(nullptr);
  if (filter == nullptr) Fail("no live filter");
  cuckoo_bench::ProbeLimitOptions options;
  options.queries = FLAGS_probe_queries;
  options.repetitions = FLAGS_probe_reps;
  options.seed = FLAGS_seed;
  const cuckoo_bench::ProbeLimitResult p =
      cuckoo_bench::MeasureProbeLimit(*filter, options);
  Row& r = run->row;
  r.Set("probe_table_mb", double(p.table_bytes) / 1e6, "%.1f");
  r.Set("probe_single_ns", p.single_ns, "%.1f");
  r.Set("probe_loads_ns", p.loads_ns, "%.1f");
  r.Set("probe_vs_limit", p.single_vs_loads(), "%.2f");
  if (p.serialized) r.Set("probe_serial_vs_limit", p.serial_vs_loads(), "%.2f");
  r.Set("probe_batch_vs_single", p.batch_vs_single(), "%.2f");
  fprintf(stderr,
          "[%s] probe: single %.1f ns, batch %.1f ns, serial %.1f "
          "ns; loads %.1f ns, serial loads %.1f ns (%.1f MB table)\n",
          SizeLabel(run->n).c_str(), p.single_ns, p.batch_ns, p.serial_ns,
          p.loads_ns, p.serial_loads_ns, double(p.table_bytes) / 1e6);
  Check(db->Close(), "close");
#else
  fprintf(stderr, "[%s] probe: probe_limit.h is not in this tree, skipped\n",
          SizeLabel(run->n).c_str());
#endif
}

Row RunSize(const std::string& parent, uint64_t n) {
  const auto start = Clock::now();
  SizeRun run;
  run.n = n;
  run.root = parent + "/n" + std::to_string(n);
  run.row.Set("size", SizeLabel(n));
  run.row.Set("keys", std::to_string(n));
  run.row.Set("value_bytes", std::to_string(FLAGS_value_size));
  // Each phase's wall time goes to stderr.
  auto timed = [&run](const char* phase, void (*body)(SizeRun*)) {
    if (std::string(phase) != "build" && !HasPhase(phase)) return;
    const auto t = Clock::now();
    body(&run);
    fprintf(stderr, "[%s] phase %s: %.1f s\n", SizeLabel(run.n).c_str(), phase,
            Seconds(t, Clock::now()));
  };
  timed("build", BuildBase);
  timed("open", OpenPhase);
  timed("rebuild", RebuildPhase);
  timed("kill", KillPhase);
  timed("stall", StallPhase);
  timed("autostall", AutoStallPhase);
  timed("memory", MemoryPhase);
  timed("neg", NegPhase);
  timed("probe", ProbePhase);
  run.RemoveClones();
  run.row.Set("errors", std::to_string(run.errors));
  run.row.Set("seconds", Seconds(start, Clock::now()), "%.0f");
  fprintf(stderr, "[%s] done in %s s\n", SizeLabel(n).c_str(),
          run.row.Get("seconds").c_str());
  return run.row;
}

// Removes the temporary directory at exit (also after a Fail).
std::string g_temp_dir;
void RemoveTempDir() {
  if (!g_temp_dir.empty()) fs::remove_all(g_temp_dir);
}

}  // namespace

int main(int argc, char** argv) {
  cuckoo_bench::ParseFlags(
      &argc, &argv,
      "the live-key filter at DB scale: open, kill recovery, checkpoint "
      "stalls, memory, negative Gets and probes against plain RocksDB",
      __FILE__);
  if (!FLAGS_child_mode.empty()) return RunChild();
  if (FLAGS_smoke) {
    auto set_default = [](const char* flag, const char* value) {
      gflags::CommandLineFlagInfo info;
      if (gflags::GetCommandLineFlagInfo(flag, &info) && info.is_default)
        gflags::SetCommandLineOption(flag, value);
    };
    set_default("sizes", "80K,160K");
    set_default("reps", "1");
    set_default("neg_gets", "20000");
    set_default("checkpoints", "2");
    set_default("stall_window_ms", "200");
    set_default("autostall_s", "1");
    set_default("autostall_writes", "20000");
    set_default("probe_queries", "65536");
    set_default("probe_reps", "3");
  }
  std::vector<uint64_t> sizes;
  for (const auto& s : SplitList(FLAGS_sizes)) sizes.push_back(ParseSize(s));
  if (sizes.empty() || FLAGS_reps == 0) Fail("need --sizes and --reps >= 1");
  std::string parent = FLAGS_db_dir;
  if (parent.empty()) {
    std::string tmp = FLAGS_tmpdir;
    if (tmp.empty()) tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    std::string pattern = tmp + "/scale_bench.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) Fail("mkdtemp in " + tmp);
    parent = g_temp_dir = pattern;
    atexit(RemoveTempDir);
  }
  fs::create_directories(parent);
  printf(
      "scale_bench: sizes %s, value %" PRIu64 " B, %" PRIu64
      " reps, memtable %" PRIu64 " MiB after the build, block cache %" PRIu64
      " MiB, SST Bloom %d bits/key, kill writes %.3g x N, RocksDB %d.%d.%d\n",
      FLAGS_sizes.c_str(), FLAGS_value_size, FLAGS_reps, FLAGS_write_buffer_mb,
      FLAGS_block_cache_mb, FLAGS_sst_bloom_bits,
      FLAGS_after_checkpoint_fraction, ROCKSDB_MAJOR, ROCKSDB_MINOR,
      ROCKSDB_PATCH);
  fflush(stdout);
  std::vector<Row> rows;
  for (uint64_t n : sizes) {
    rows.push_back(RunSize(parent, n));
    WriteCsv(rows);  // partial results survive a later failure
  }
  PrintTable(rows);
  return 0;
}
