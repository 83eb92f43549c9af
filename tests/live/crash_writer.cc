// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Test helper process: opens a FilteredDB, writes, and exits WITHOUT closing
// the DB (no flush, no snapshot: the on-disk state a crash leaves behind).
//
//   live_crash_writer <db> <snapshot_dir|-> <put_begin> <put_end> <del_begin>
//   <del_end> [flags]
//
// Puts Key(i) = "value<i>" for i in [put_begin, put_end), then deletes
// Key(i) for i in [del_begin, del_end). Prints "snapshot=<status>" first.
// flags (comma-separated): manual_wal (options.manual_wal_flush: writes stay
// in RocksDB's buffer, so dying loses them), flushwal (FlushWAL(true) after
// the writes), flush (Flush() after the writes), persist
// (PersistFilterSnapshots() after those), compact (CompactRange of the
// whole key space after that), flush_after (Flush() after that),
// background (background_open), auto (automatic checkpoints every 1000
// writes, checked every 20 ms), forever (then random Puts and Deletes of
// keys in [0, put_end) and a PersistFilterSnapshots every 5000 of them until
// killed; "ready" is printed after the first 2000), hold (after everything,
// sleep until killed: a kill during Open's background work), norecent
// (recent_keys 0: deletes of this session's keys are checked by the delete
// checker), checks (WaitForDeleteChecks() after the deletes: the checker's
// erasure record is the WAL's last record), stallchecks (the delete checker
// stops before its first read: every deferred check is still pending when
// the process ends), unchecked (unchecked_delete_ratio 16: deletes are not
// checked).
// Exit status 0 on success, 1 on any error.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "../../plugin/cuckoo/live/test_hooks.h"
#include "test_util.h"

#if defined(__SANITIZE_THREAD__)
// Exiting with a background thread running is the point of this program.
extern "C" const char* __tsan_default_options() {
  return "report_thread_leaks=0";
}
#endif

int main(int argc, char** argv) {
  using rocksdb_cuckoo::FilteredDB;
  using rocksdb_cuckoo::test::Key;
  if (argc != 7 && argc != 8) {
    fprintf(stderr,
            "usage: %s db snapshot_dir put_begin put_end del_begin del_end "
            "[flags]\n",
            argv[0]);
    return 1;
  }
  rocksdb_cuckoo::FilteredDBOptions fopts =
      rocksdb_cuckoo::test::SmallFilterOptions();
  if (std::string(argv[2]) != "-") fopts.snapshot_dir = argv[2];
  std::unique_ptr<FilteredDB> db;
  const std::string flags = argc == 8 ? argv[7] : "";
  auto has = [&](const char* f) {
    return ("," + flags + ",").find(std::string(",") + f + ",") !=
           std::string::npos;
  };
  fopts.background_open = has("background");
  if (has("norecent")) fopts.recent_keys = 0;
  if (has("unchecked")) fopts.unchecked_delete_ratio = 16;
  if (has("stallchecks")) {
    rocksdb_cuckoo::live::SetTestHook([](const char* point) {
      if (std::string(point) == "ResolveDeferredChecks:BeforeRead") {
        for (;;) pause();  // until the process ends
      }
    });
  }
  fopts.checkpoints.automatic = has("auto");
  fopts.checkpoints.min_writes = 1000;
  fopts.checkpoints.writes_fraction = 0;
  fopts.checkpoints.check_interval_ms = 20;
  ROCKSDB_NAMESPACE::Options options = rocksdb_cuckoo::test::TestOptions();
  options.manual_wal_flush = has("manual_wal");
  ROCKSDB_NAMESPACE::Status s = FilteredDB::Open(options, argv[1], fopts, &db);
  if (!s.ok()) {
    fprintf(stderr, "open: %s\n", s.ToString().c_str());
    return 1;
  }
  rocksdb_cuckoo::FilteredDBStats stats;
  db->GetFilterStats(nullptr, &stats);
  printf("snapshot=%s\n", stats.snapshot_status.c_str());
  fflush(stdout);
  const int put_begin = atoi(argv[3]), put_end = atoi(argv[4]);
  const int del_begin = atoi(argv[5]), del_end = atoi(argv[6]);
  ROCKSDB_NAMESPACE::WriteOptions wo;
  for (int i = put_begin; i < put_end; ++i) {
    s = db->Put(wo, Key(i), "value" + std::to_string(i));
    if (!s.ok()) return 1;
  }
  for (int i = del_begin; i < del_end; ++i) {
    s = db->Delete(wo, Key(i));
    if (!s.ok()) return 1;
  }
  if (has("checks")) db->WaitForDeleteChecks();
  if (has("flushwal") && !db->FlushWAL(true).ok()) return 1;
  if (has("flush") && !db->Flush(ROCKSDB_NAMESPACE::FlushOptions()).ok()) {
    return 1;
  }
  if (has("persist")) {
    s = db->PersistFilterSnapshots();
    if (!s.ok()) {
      fprintf(stderr, "persist: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  if (has("compact") &&
      !db->CompactRange(ROCKSDB_NAMESPACE::CompactRangeOptions(), nullptr,
                        nullptr)
           .ok()) {
    return 1;
  }
  if (has("flush_after") &&
      !db->Flush(ROCKSDB_NAMESPACE::FlushOptions()).ok()) {
    return 1;
  }
  if (has("forever")) {
    std::mt19937_64 rng(static_cast<uint64_t>(getpid()));
    const int n = std::max(put_end, 1);
    for (uint64_t op = 1;; ++op) {
      const std::string k = Key(static_cast<int>(rng() % n));
      s = rng() % 3 == 0 ? db->Delete(wo, k) : db->Put(wo, k, "v");
      if (!s.ok()) return 1;
      if (op % 5000 == 0) {
        s = db->PersistFilterSnapshots();
        if (!s.ok() && !s.IsIncomplete()) return 1;
      }
      if (op == 2000) {
        printf("ready\n");
        fflush(stdout);
      }
    }
  }
  if (has("hold")) {
    printf("ready\n");
    fflush(stdout);
    for (;;) pause();
  }
  // No Close, no destructors: the WAL (written to the OS on every write) is
  // all that survives.
  _exit(0);
}
