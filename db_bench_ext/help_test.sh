#!/bin/sh
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# Every benchmark's --help lists its own flags (db_bench_util.h ParseFlags),
# not those of gflags or of Debian's librocksdb (its trace analyzer tools).
# usage: help_test.sh <benchmark binary>...
set -eu
for bench in "$@"; do
  name=$(basename "$bench")
  out=$("$bench" --help 2>&1) || { echo "FAIL: $name --help exited $?"; exit 1; }
  case "$out" in
    *"Flags from"*|*"-flagfile ("*|*"-helpfull ("*)
      echo "FAIL: $name --help lists other flags:"; echo "$out"; exit 1 ;;
  esac
  echo "$out" | grep -q '^    -seed ' || { echo "FAIL: $name --help lacks -seed:"; echo "$out"; exit 1; }
  echo "ok: $name --help, $(echo "$out" | grep -c '^    -') flags"
done
