// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// CuckooStatistics: RocksDB Statistics that also report the counters of the
// cuckoo SST filter policies (CuckooFilterPolicyStats in filter_policy.h),
// for tools that take nothing but a Statistics object, such as db_bench:
//
//   LD_PRELOAD=librocksdb_cuckoo.so db_bench
//       --options_file=examples/db_bench_options.ini
//       --statistics_string=CuckooStatistics ...
// That OPTIONS file sets stats_dump_period_sec=10: the counters appear in
// the DB's info LOG every 10 s (see below). examples/db_bench.sh runs this;
// in C++, examples/sst_filter_policy.cc sets options.statistics =
// NewCuckooStatistics().
//
// Everything RocksDB records goes to an ordinary CreateDBStatistics() object
// (tickers, histograms, stats levels as usual). ToString() and getTickerMap()
// add one entry per counter, in RocksDB's ticker format:
//   rocksdb.cuckoo.sst.filters.built           filters built
//   rocksdb.cuckoo.sst.keys.added              distinct keys in them
//   rocksdb.cuckoo.sst.filter.bytes            their bytes (with trailer)
//   rocksdb.cuckoo.sst.build.retries           extra attempts with a new seed
//   rocksdb.cuckoo.sst.filters.grown           filters built above the budget
//   rocksdb.cuckoo.sst.construction.corruptions checksum/post-verify failures
//   rocksdb.cuckoo.sst.readers.created         filter readers created
//   rocksdb.cuckoo.sst.invalid.blocks          blocks rejected: read as "may
//                                              match" (no filtering)
// A filter policy does not know the DB it serves, so these are the counters
// of every cuckoo policy of the process (GetGlobalCuckooFilterPolicyStats),
// counted from the creation of the Statistics object or its last Reset().
// They are not tickers: getTickerCount() does not know them.
//
// Where db_bench shows them: db_bench prints a Statistics object at the end
// only for --statistics, which cannot be combined with --statistics_string;
// the DB writes Statistics::ToString() to its info LOG (under
// "STATISTICS:") every DBOptions::stats_dump_period_sec, which db_bench
// takes from the OPTIONS file when it is given --options_file (its
// --stats_dump_period_sec flag then does not apply). An application calls
// ToString() or getTickerMap() itself, or GetGlobalCuckooFilterPolicyStats()
// directly.
//
// Thread safety: as RocksDB's Statistics (any thread, any time).
#ifndef ROCKSDB_CUCKOO_STATISTICS_H_
#define ROCKSDB_CUCKOO_STATISTICS_H_

#include <memory>
#include <string>

#include "rocksdb/statistics.h"
#include "rocksdb/utilities/object_registry.h"

namespace rocksdb_cuckoo {

// The name of the Statistics factory: Statistics::CreateFromString(config,
// "CuckooStatistics", &stats) once registered (below).
constexpr char kCuckooStatisticsName[] = "CuckooStatistics";

// A new CuckooStatistics object (no registration needed).
std::shared_ptr<ROCKSDB_NAMESPACE::Statistics> NewCuckooStatistics();

// Registers the "CuckooStatistics" Statistics factory in `library`; returns
// the number of factories added (1). librocksdb_cuckoo.so and the in-tree
// plugin's registrar do so; a program linked to the static library calls
// it once (ObjectLibrary::Default() for the default registry).
int RegisterCuckooStatistics(ROCKSDB_NAMESPACE::ObjectLibrary& library,
                             const std::string& arg);

}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_STATISTICS_H_
