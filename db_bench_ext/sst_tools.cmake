# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# Benchmarks of the SST filter policy. Included by
# db_bench_ext/CMakeLists.txt, which defines cuckoo_add_tool().
#
#   policy_bench   Bloom / Ribbon / cuckoo through FilterBitsBuilder/Reader
#   run_stock_db_bench.sh (script, not built) drives /usr/bin/db_bench with
#                  LD_PRELOAD=librocksdb_cuckoo.so
cuckoo_add_tool(policy_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/policy_bench.cc
  LIBS rocksdb_cuckoo cuckoo_core_internal)
target_include_directories(policy_bench PRIVATE ${PROJECT_SOURCE_DIR}/plugin/cuckoo/sst)
