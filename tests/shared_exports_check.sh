#!/bin/sh
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
#
# shared_exports_check.sh <librocksdb_cuckoo.so>: fails if the library
# exports a function of RocksDB's own namespace (an inline function of
# RocksDB's headers that the plugin compiled out of line). Exported, such a
# copy takes over librocksdb's own calls to that function in every process
# that preloads the plugin (ELF interposition: db_bench, ldb and sst_dump
# with LD_PRELOAD), and would be an ODR violation if the headers it was
# built with differ from the loaded librocksdb.
set -eu
lib=$1
command -v nm >/dev/null || { echo "nm not found" >&2; exit 1; }
# nm alone first: in a pipeline its failure (no such file, not an ELF
# object) would go unseen, and the check would pass on nothing.
symbols=$(nm -D --defined-only "$lib")
found=$(echo "$symbols" | awk '{ print $3 }' |
  grep -E '^_ZNK?7rocksdb' || true)
if [ -n "$found" ]; then
  echo "$lib exports RocksDB's own functions:" >&2
  echo "$found" | c++filt | head -20 >&2
  echo "($(echo "$found" | wc -l) in all)" >&2
  exit 1
fi
echo "$lib: no function of namespace rocksdb exported"
