// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// FilteredDB, a DB with a live-key filter: README.md "Live keys, with
// deletion" and include/rocksdb_cuckoo/filtered_db.h show parts of this
// file. Opens a DB in the directory given as argv[1] (default
// /tmp/rocksdb_cuckoo_example_filtered_db; wiped first, the filter snapshot
// beside it), writes, deletes and reads, and prints the filter's
// properties. Links rocksdb_cuckoo::rocksdb_cuckoo.
#include <cstdio>
#include <memory>
#include <string>

#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb_cuckoo/filtered_db.h"

int main(int argc, char** argv) {
  const std::string path =
      argc > 1 ? argv[1] : "/tmp/rocksdb_cuckoo_example_filtered_db";
  ROCKSDB_NAMESPACE::Options options;
  options.create_if_missing = true;
  ROCKSDB_NAMESPACE::DestroyDB(path, options).PermitUncheckedError();
  std::string value;

  rocksdb_cuckoo::FilteredDBOptions fopts;  // the default column family
  fopts.snapshot_dir = path + "_cuckoo";    // optional: persist at Close
  std::unique_ptr<rocksdb_cuckoo::FilteredDB> db;
  ROCKSDB_NAMESPACE::Status s =
      rocksdb_cuckoo::FilteredDB::Open(options, path, fopts, &db);
  if (!s.ok()) {
    fprintf(stderr, "Open: %s\n", s.ToString().c_str());
    return 1;
  }
  // Open returned before the filter was built from the DB (background_open);
  // until then reads go to the DB. Wait for it here, to see the filter answer.
  db->WaitForFilterRebuilds();
  s = db->Put(ROCKSDB_NAMESPACE::WriteOptions(), "k", "v");
  s = db->Get(ROCKSDB_NAMESPACE::ReadOptions(), "missing", &value);
  // s.IsNotFound(), answered by the filter: no memtable or SST file read
  s = db->Delete(ROCKSDB_NAMESPACE::WriteOptions(), "k");  // erased, exactly

  rocksdb_cuckoo::FilteredDBStats stats;  // bytes, bits/key, load, counters
  s = db->GetFilterStats(db->DefaultColumnFamily(), &stats);
  std::string text;  // the same figures as a DB property
  db->GetProperty("rocksdb.cuckoo.live-filter-stats", &text);
  uint64_t absent = 0;
  db->GetIntProperty("rocksdb.cuckoo.reads-answered-absent", &absent);
  printf("%s", text.c_str());

  s = db->Close();  // writes the snapshot (persist_on_close)
  db.reset();
  ROCKSDB_NAMESPACE::DestroyDB(path, options).PermitUncheckedError();
  const bool ok = s.ok() && absent == 1 && stats.reads_absent == 1;
  printf("filtered_db: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
