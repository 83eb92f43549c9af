# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# txn_bench: FilteredTransactionDB against plain TransactionDB, commit
# throughput and negative Transaction::Get at scale (see txn_bench.cc).
cuckoo_add_tool(txn_bench
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/txn_bench.cc
  LIBS rocksdb_cuckoo cuckoo_core_internal)
# db_bench_util.h includes tests/open_db.h.
target_include_directories(txn_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests)
# Both benches at tiny sizes (CI): they run, and every check passes.
if(CUCKOO_BUILD_TESTS AND NOT CUCKOO_SANITIZE AND NOT CUCKOO_TSAN)
  add_test(NAME txn_bench_smoke
           COMMAND sh -c "$<TARGET_FILE:txn_bench> --bench=commits --modes=plain,cuckoo,occ_plain,occ_cuckoo --num=4000 --rep_txns=400 --reps=2 --db=${CMAKE_CURRENT_BINARY_DIR}/txn_smoke && $<TARGET_FILE:txn_bench> --bench=neg --neg_keys=20000 --neg_gets=20000 --db_dir=${CMAKE_CURRENT_BINARY_DIR}/txn_smoke_neg")
  set_tests_properties(txn_bench_smoke PROPERTIES TIMEOUT 300 LABELS txn_bench_smoke)
endif()
