#!/bin/sh
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# Stock db_bench with LD_PRELOAD=librocksdb_cuckoo.so and
# --statistics_string=CuckooStatistics: the DB's info LOG shows the SST
# policy's counters (rocksdb.cuckoo.sst.*) every stats_dump_period_sec, set
# in the OPTIONS file (db_bench ignores --stats_dump_period_sec with
# --options_file).
#
# usage: stock_db_bench_statistics_test.sh <db_bench> <librocksdb_cuckoo.so>
set -eu
DB_BENCH=$1
PLUGIN=$2
WORK=$(mktemp -d "${TEST_TMPDIR:-/tmp}/cuckoo_stock_db_bench_stats.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

cat > "$WORK/options.ini" <<'OPTIONS'
[Version]
  rocksdb_version=7.8.3
  options_file_version=1.1

[DBOptions]
  create_if_missing=true
  stats_dump_period_sec=1

[CFOptions "default"]
  write_buffer_size=4194304

[TableOptions/BlockBasedTable "default"]
  filter_policy=cuckoofilter:10
OPTIONS

# readmissing runs for 3 s (--duration): the LOG gets a few dumps.
LD_PRELOAD="$PLUGIN" "$DB_BENCH" --db="$WORK/db" --options_file="$WORK/options.ini" \
  --benchmarks=fillrandom,compact,readmissing --num=50000 --duration=3 \
  --statistics_string=CuckooStatistics > "$WORK/out.txt" 2>&1 ||
  { cat "$WORK/out.txt"; exit 1; }

fail() { echo "FAIL: $*"; cat "$WORK/out.txt"; exit 1; }
count() {  # the last value of a counter in the LOG
  sed -n "s/^$1 COUNT : \([0-9]*\).*/\1/p" "$WORK/db/LOG" | tail -1
}
built=$(count rocksdb.cuckoo.sst.filters.built)
invalid=$(count rocksdb.cuckoo.sst.invalid.blocks)
[ -n "$built" ] || fail "no rocksdb.cuckoo.sst.filters.built in the LOG"
[ "$built" -ge 1 ] || fail "rocksdb.cuckoo.sst.filters.built is $built"
[ "$invalid" = 0 ] || fail "rocksdb.cuckoo.sst.invalid.blocks is $invalid"
grep -q '^rocksdb.bloom.filter.useful COUNT' "$WORK/db/LOG" ||
  fail "RocksDB's own tickers are missing from the LOG"
echo "ok: LOG shows $built cuckoo filters built, $invalid invalid blocks"
