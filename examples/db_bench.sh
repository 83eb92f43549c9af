#!/bin/sh
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# README.md's two db_bench commands with examples/db_bench_options.ini, at a
# smaller size (--num), on the stock db_bench with LD_PRELOAD:
#   1. --statistics: the filter rules out the absent keys of readmissing
#      (rocksdb.bloom.filter.useful) and the DB's OPTIONS file names the
#      cuckoo policy;
#   2. --statistics_string=CuckooStatistics: the DB's LOG shows the policy's
#      counters (rocksdb.cuckoo.sst.*); run for 3 s with the dump period
#      shortened to 1 s (the file says 10).
# usage: db_bench.sh <db_bench> <librocksdb_cuckoo.so> <scratch directory>
set -eu
DB_BENCH=$1
PLUGIN=$2
WORK=$3
OPTIONS_FILE=$(cd "$(dirname "$0")" && pwd)/db_bench_options.ini
rm -rf "$WORK"
mkdir -p "$WORK"
fail() { echo "FAIL: $*"; cat "$WORK/out.txt"; exit 1; }

# 1.
LD_PRELOAD="$PLUGIN" "$DB_BENCH" --db="$WORK/db1" --options_file="$OPTIONS_FILE" \
  --benchmarks=fillrandom,compact,readmissing --num=50000 --statistics \
  > "$WORK/out.txt" 2>&1 || fail "db_bench exited $?"
grep -q 'filter_policy=cuckoofilter:10' "$WORK"/db1/OPTIONS-* ||
  fail "the DB's OPTIONS file does not name the cuckoo policy"
useful=$(sed -n 's/^rocksdb.bloom.filter.useful COUNT : \([0-9]*\).*/\1/p' "$WORK/out.txt")
[ "${useful:-0}" -ge 47500 ] || fail "the filter ruled out only ${useful:-0} of 50000 absent keys"
echo "ok: --statistics: $useful of 50000 absent keys ruled out by the cuckoo filter"

# 2.
sed 's/stats_dump_period_sec=10/stats_dump_period_sec=1/' "$OPTIONS_FILE" > "$WORK/options.ini"
LD_PRELOAD="$PLUGIN" "$DB_BENCH" --db="$WORK/db2" --options_file="$WORK/options.ini" \
  --benchmarks=fillrandom,compact,readmissing --num=50000 --duration=3 \
  --statistics_string=CuckooStatistics > "$WORK/out.txt" 2>&1 || fail "db_bench exited $?"
built=$(sed -n 's/^rocksdb.cuckoo.sst.filters.built COUNT : \([0-9]*\).*/\1/p' "$WORK/db2/LOG" | tail -1)
[ "${built:-0}" -ge 1 ] || fail "no rocksdb.cuckoo.sst.filters.built in the LOG"
echo "ok: --statistics_string=CuckooStatistics: the LOG shows $built filters built"
rm -rf "$WORK"
