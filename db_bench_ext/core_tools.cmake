# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# Tools of the core filter (included by db_bench_ext/CMakeLists.txt).
#
# filter_bench: space, FPR, construction and lookup throughput of the cuckoo
# filter per configuration; --csv writes a tidy CSV (columns documented at
# the top of filter_bench.cc). Example:
#   build/db_bench_ext/filter_bench --num=10000000 --csv=filter_bench.csv
cuckoo_add_tool(filter_bench
  SOURCES filter_bench.cc
  LIBS cuckoo_core cuckoo_core_internal)

# live_bench: the live-key filter without a database: probe cost against the
# memory limit (probe_limit.h), fill limits, growth by splits, FPR per level.
#   build/db_bench_ext/live_bench --bench=probe --sizes=1048576,16777216
cuckoo_add_tool(live_bench
  SOURCES live_bench.cc
  LIBS cuckoo_core cuckoo_core_internal)
