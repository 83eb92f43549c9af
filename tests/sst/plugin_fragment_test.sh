#!/usr/bin/env bash
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# Checks the in-tree plugin files that RocksDB's own build reads and that no
# build of this repository exercises directly:
#   - the root CMakeLists.txt, add_subdirectory()'d by a stand-in parent
#     project named "rocksdb" with ROCKSDB_PLUGINS set (as RocksDB's CMake
#     does), exports cuckoo_SOURCES / _HEADERS / _INCLUDE_PATHS / _LIBS / _FUNC;
#   - cuckoo.mk (read by RocksDB's Makefile) lists exactly the same sources
#     and headers, and every one exists;
#   - cuckoo_FUNC is the same in both, on one line in cuckoo.mk (RocksDB's
#     CMake reads it with a regular expression), no line of cuckoo.mk matches
#     RocksDB's "SOURCES = " expression, and the shared library exports the
#     registrar as an extern "C" function.
# Usage: plugin_fragment_test.sh <repository root> <librocksdb_cuckoo.so>
set -euo pipefail
dir=$1 lib=$2
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. The CMake side, as RocksDB's CMakeLists.txt reads it.
mkdir -p "$tmp/parent"
cat >"$tmp/parent/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(rocksdb NONE)
set(ROCKSDB_PLUGINS cuckoo)
add_subdirectory("$dir" plugin_cuckoo)
foreach(v SOURCES HEADERS INCLUDE_PATHS LIBS FUNC)
  string(REPLACE ";" " " _value "\${cuckoo_\${v}}")
  file(APPEND "$tmp/vars" "\${v}=\${_value}\n")
endforeach()
CMAKE
cmake -S "$tmp/parent" -B "$tmp/parent/build" >"$tmp/cmake.log" 2>&1 ||
  { echo "FAIL: in-tree CMake mode did not configure:"; cat "$tmp/cmake.log"; exit 1; }
var() { sed -n "s/^$1=//p" "$tmp/vars"; }
cm_sources=$(var SOURCES) cm_headers=$(var HEADERS) cm_func=$(var FUNC)
cm_includes=$(var INCLUDE_PATHS) cm_libs=$(var LIBS)
[ -n "$cm_sources" ] || { echo "FAIL: in-tree CMake mode set no cuckoo_SOURCES"; fail=1; }
for inc in $cm_includes; do
  [ -d "$inc" ] || { echo "FAIL: cuckoo_INCLUDE_PATHS entry $inc is not a directory"; fail=1; }
done
[ "$cm_libs" = xxhash ] || { echo "FAIL: cuckoo_LIBS is '$cm_libs'"; fail=1; }

# 2. The Makefile side.
mkvar() {
  make -s -f - -C "$dir" <<MK
include cuckoo.mk
all: ; @echo \$($1)
MK
}
mk_sources=$(mkvar cuckoo_SOURCES) mk_headers=$(mkvar cuckoo_HEADERS) mk_func=$(mkvar cuckoo_FUNC)
same() {  # <what> <list a> <list b>
  local a b
  a=$(tr ' ' '\n' <<<"$2" | grep . | sort) b=$(tr ' ' '\n' <<<"$3" | grep . | sort)
  if [ "$a" != "$b" ]; then
    echo "FAIL: cuckoo.mk and CMakeLists.txt list different $1:"; diff <(echo "$a") <(echo "$b") || true
    fail=1
  fi
}
same sources "$mk_sources" "$cm_sources"
same headers "$mk_headers" "$cm_headers"
for f in $mk_sources $mk_headers; do
  [ -f "$dir/$f" ] || { echo "FAIL: $f (listed in cuckoo.mk) does not exist"; fail=1; }
done
# Every .cc under plugin/ is in the list (except the shared-library initializer).
for f in $(cd "$dir" && find plugin -name '*.cc' | sort); do
  [ "$f" = plugin/cuckoo/shared_library_init.cc ] && continue
  grep -qw -- "$f" <<<"$mk_sources" || { echo "FAIL: $f is not listed in cuckoo.mk"; fail=1; }
done
if [ -z "$mk_func" ] || [ "$mk_func" != "$cm_func" ]; then
  echo "FAIL: cuckoo_FUNC differs: cuckoo.mk '$mk_func', CMakeLists.txt '$cm_func'"; fail=1
fi
# RocksDB's CMake: string(REGEX MATCH "_FUNC = ([^\n]*)") etc. on the .mk
# text, i.e. the rest of the FIRST line that contains the expression.
first_match() { grep -o -m1 -- "$1.*" "$dir/cuckoo.mk" | head -1 | sed "s/^$1//"; }
[ "$(first_match '_FUNC = ')" = "$mk_func" ] ||
  { echo "FAIL: RocksDB's CMake would read cuckoo_FUNC as '$(first_match '_FUNC = ')'"; fail=1; }
[ "$(first_match '_LIBS = ')" = "$cm_libs" ] ||
  { echo "FAIL: RocksDB's CMake would read cuckoo_LIBS as '$(first_match '_LIBS = ')'"; fail=1; }
if grep -q 'SOURCES = ' "$dir/cuckoo.mk"; then
  echo "FAIL: a line of cuckoo.mk matches RocksDB's CMake expression 'SOURCES = '"; fail=1
fi
nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | grep -qx "$mk_func" ||
  { echo "FAIL: $lib does not export extern \"C\" $mk_func"; fail=1; }
[ "$fail" = 0 ] && echo "plugin fragment OK: $(wc -w <<<"$mk_sources") sources, $(wc -w <<<"$mk_headers") headers, FUNC $mk_func"
exit "$fail"
