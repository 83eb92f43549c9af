# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# churn_bench: plain RocksDB vs Bloom front filter vs cuckoo live-key filter
# under a sliding-window churn workload (see the header of churn_bench.cc).
cuckoo_add_tool(churn_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/churn_bench.cc
  LIBS rocksdb_cuckoo cuckoo_core_internal cuckoo_xxhash)
# db_bench_util.h includes tests/open_db.h.
target_include_directories(churn_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests)
# scale_bench: FilteredDB against plain RocksDB at 1M/4M/16M keys: open after
# a clean close and after a kill, kill -> filter active, checkpoint stalls,
# bits/key, negative Gets (see the header of scale_bench.cc).
cuckoo_add_tool(scale_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/scale_bench.cc
  LIBS rocksdb_cuckoo cuckoo_core_internal)
target_include_directories(scale_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests)
