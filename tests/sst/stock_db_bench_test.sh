#!/bin/sh
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# Stock db_bench (dynamically linked to librocksdb) with
# LD_PRELOAD=librocksdb_cuckoo.so and an OPTIONS file naming the cuckoo
# policy must build and use cuckoo filters. Guards the silent no-filter trap:
# an unregistered filter_policy loads as "no filter" with an OK status.
#
# usage: stock_db_bench_test.sh <db_bench> <librocksdb_cuckoo.so>
set -eu
DB_BENCH=$1
PLUGIN=$2
WORK=$(mktemp -d "${TEST_TMPDIR:-/tmp}/cuckoo_stock_db_bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

cat > "$WORK/options.ini" <<'OPTIONS'
[Version]
  rocksdb_version=7.8.3
  options_file_version=1.1

[DBOptions]
  create_if_missing=true

[CFOptions "default"]
  write_buffer_size=4194304

[TableOptions/BlockBasedTable "default"]
  filter_policy=cuckoofilter:10
OPTIONS

LD_PRELOAD="$PLUGIN" "$DB_BENCH" --db="$WORK/db" --options_file="$WORK/options.ini" \
  --benchmarks=fillrandom,compact,readmissing --num=50000 --statistics \
  > "$WORK/out.txt" 2>&1 || { cat "$WORK/out.txt"; exit 1; }

fail() { echo "FAIL: $*"; cat "$WORK/out.txt"; exit 1; }

# The DB re-serialized its options: the policy was created, not nullptr.
grep -q 'filter_policy=cuckoofilter:10' "$WORK"/db/OPTIONS-* ||
  fail "OPTIONS file of the DB does not name the cuckoo policy"
useful=$(sed -n 's/^rocksdb.bloom.filter.useful COUNT : \([0-9]*\).*/\1/p' "$WORK/out.txt")
[ -n "$useful" ] || fail "no rocksdb.bloom.filter.useful ticker"
# readmissing: 50000 absent keys; expected FPR 0.7%, ask for >= 95% rejected.
[ "$useful" -ge 47500 ] || fail "filter rejected only $useful of 50000 absent keys"
echo "ok: cuckoo filter rejected $useful of 50000 absent keys in stock db_bench"
