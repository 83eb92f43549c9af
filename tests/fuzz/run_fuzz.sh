#!/usr/bin/env bash
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# tests/fuzz/run_fuzz.sh <build-dir> [seconds]
# Builds tests/fuzz/parse_fuzzer.cc with clang's libFuzzer (+ ASan, UBSan)
# against the core sources and runs it for a bounded time (default 30 s) from
# the seeds in tests/fuzz/corpus/parse (new inputs go to <build-dir>/corpus,
# not into the repository). Exits 0 with a message when clang++ or libFuzzer
# is not available (the CI step is then skipped).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:?usage: run_fuzz.sh <build-dir> [seconds]}
seconds=${2:-30}
cxx=${CUCKOO_FUZZ_CXX:-clang++}
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "=== [fuzz] skipped: $cxx not found (install clang to run the Parse fuzzer)" >&2
  exit 0
fi
mkdir -p "$dir/corpus"
flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -I"$root/include" -I"$root/plugin/core")
probe="$dir/probe.cc"
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe"
if ! "$cxx" -fsanitize=fuzzer "$probe" -o "$dir/probe" >/dev/null 2>&1; then
  echo "=== [fuzz] skipped: $cxx cannot link -fsanitize=fuzzer (libFuzzer missing)" >&2
  exit 0
fi
core=(blocked/blocked_filter.cc filter/cuckoo_filter.cc filter/filter_format.cc filter/table_ops.cc util/key_hash.cc)
sources=()
for f in "${core[@]}"; do sources+=("$root/plugin/core/$f"); done
echo "=== [fuzz] build $dir/parse_fuzzer" >&2
# The sources compiled at the same time (table_ops.cc, every layout's table
# code, is most of the build; one compile after the other left a core idle),
# then linked.
sanitize=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
mkdir -p "$dir/obj"
objects=() pids=()
for src in "$root/tests/fuzz/parse_fuzzer.cc" "${sources[@]}"; do
  obj="$dir/obj/$(basename "${src%.cc}").o"
  objects+=("$obj")
  # table_ops.cc (the table code of every layout) compiles at -O0: at -O1 it
  # took 130 s of CPU, the stage's whole critical path, at -O0 33 s; an
  # input runs only a few lookups.
  opt=()
  [ "$(basename "$src")" = table_ops.cc ] && opt=(-O0)
  "$cxx" "${flags[@]}" "${opt[@]}" "${sanitize[@]}" -c "$src" -o "$obj" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
"$cxx" "${sanitize[@]}" "${objects[@]}" -lxxhash -o "$dir/parse_fuzzer"
echo "=== [fuzz] run for $seconds s" >&2
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$dir/parse_fuzzer" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
  "$dir/corpus" "$root/tests/fuzz/corpus/parse"
