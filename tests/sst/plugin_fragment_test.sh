#!/usr/bin/env bash
# Checks the in-tree plugin files that RocksDB's own build reads and that no
# build of this repository exercises directly:
#   - cuckoo.mk (read by RocksDB's Makefile) lists exactly the sources of the
#     CMake fragment plugin/cuckoo/CMakeLists.txt, and every one exists;
#   - cuckoo_FUNC is the same in both, on one line in cuckoo.mk (RocksDB's
#     CMake reads it with a regular expression), and the shared library
#     exports it as an extern "C" function.
# Usage: plugin_fragment_test.sh <plugin/cuckoo dir> <librocksdb_cuckoo.so>
#                                <cmake sources (comma-separated)> <cmake FUNC>
set -euo pipefail
dir=$1 lib=$2 cmake_sources=$3 cmake_func=$4
fail=0

mk_sources=$(make -s -f - -C "$dir" <<'MK'
include cuckoo.mk
all: ; @echo $(cuckoo_SOURCES)
MK
)
mk_func=$(make -s -f - -C "$dir" <<'MK'
include cuckoo.mk
all: ; @echo $(cuckoo_FUNC)
MK
)
a=$(tr ' ' '\n' <<<"$mk_sources" | grep . | sort)
b=$(tr ',' '\n' <<<"$cmake_sources" | grep . | sort)
if [ "$a" != "$b" ]; then
  echo "FAIL: cuckoo.mk and CMakeLists.txt list different sources:"; diff <(echo "$a") <(echo "$b") || true
  fail=1
fi
for src in $a; do
  [ -f "$dir/$src" ] || { echo "FAIL: $src (listed in cuckoo.mk) does not exist"; fail=1; }
done
if [ -z "$mk_func" ] || [ "$mk_func" != "$cmake_func" ]; then
  echo "FAIL: cuckoo_FUNC differs: cuckoo.mk '$mk_func', CMakeLists.txt '$cmake_func'"; fail=1
fi
# RocksDB's CMake: string(REGEX MATCH "_FUNC = ([^\n]*)") on the .mk text.
grep -Eq "^cuckoo_FUNC = $mk_func\$" "$dir/cuckoo.mk" ||
  { echo "FAIL: cuckoo_FUNC is not a one-line 'cuckoo_FUNC = name' in cuckoo.mk"; fail=1; }
nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | grep -qx "$mk_func" ||
  { echo "FAIL: $lib does not export extern \"C\" $mk_func"; fail=1; }
[ "$fail" = 0 ] && echo "plugin fragment OK: $(wc -w <<<"$mk_sources") sources, FUNC $mk_func"
exit "$fail"
