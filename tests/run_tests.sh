#!/usr/bin/env bash
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# The test command (README, .ci/run): installs missing Debian packages, then
# builds and runs every test suite twice, in Release and with ASan+UBSan,
# and the concurrent live-key filter suites a third time under TSan.
#   tests/run_tests.sh            all three
#   tests/run_tests.sh release    Release only, C++17, -Werror (includes the
#                                 comparison smoke run, the examples/ programs
#                                 and their check against README.md and the
#                                 public headers, the tests/consumer builds,
#                                 one of them the C++20 -Werror build of the
#                                 libraries and examples, and a 30 s Parse
#                                 fuzzer run when clang is present)
#   tests/run_tests.sh asan       ASan+UBSan only
#   tests/run_tests.sh tsan       TSan, live-key filter suites only
# Build trees go to $CUCKOO_BUILD_ROOT (default: ./build).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}
out=${CUCKOO_BUILD_ROOT:-$root/build}

"$root/scripts/install_deps.sh"

# New build trees use Ninja (a tree configured before keeps its generator):
# it compiles the objects of a target while the libraries it links are still
# compiling, which make does not (the release build of the two libraries:
# 131 s against 150 s, the same CPU).
export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}

# The targets of build tree <dir> whose names match the extended regex
# ("... name" lines of make's help, "name: rule" lines of Ninja's).
targets_matching() {  # <dir> <regex>
  cmake --build "$1" --target help |
    sed -n -e 's/^\.\.\. \([A-Za-z0-9_]*\).*/\1/p' -e 's/^\([A-Za-z0-9_]*\): .*/\1/p' |
    { grep -E "$2" || true; } | sort -u | tr '\n' ' '
}

# With a label regex, only the targets whose names match it are built (a
# test's label is its binary's name; add_dependencies brings their helpers).
run_suite() {  # <name> <ctest label regex or ""> <cmake args...>
  local name=$1 labels=$2; shift 2
  local dir="$out/$name"
  local start=$SECONDS
  echo "=== [$name] build" >&2
  if [ -n "$labels" ]; then
    cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
    local targets
    targets=$(targets_matching "$dir" "^($labels)")
    [ -n "$targets" ] || { echo "=== [$name] no target matches $labels" >&2; exit 1; }
    # shellcheck disable=SC2086
    cmake --build "$dir" -j "$(nproc)" --target $targets
  else
    "$root/scripts/build.sh" "$dir" "$@"
  fi
  echo "=== [$name] test" >&2
  local select=()
  [ -n "$labels" ] && select=(-L "$labels")
  ctest --test-dir "$dir" --output-on-failure --no-tests=error -j 2 --timeout 900 "${select[@]}"
  echo "=== [$name] passed in $((SECONDS - start)) s" >&2
}

# tests/consumer built both ways a dependent project would: find_package()
# after `cmake --install` of the release build into a temporary prefix, and
# add_subdirectory() of this tree; each run opens a real DB with the policy.
# The add_subdirectory() build is also the C++20 -Werror build of the
# libraries, the shared library and the examples (the release stage is the
# C++17 one): RocksDB 10.7+ headers force C++20 on users.
run_consumer() {
  local start=$SECONDS prefix="$out/consumer/prefix"
  echo "=== [consumer] install + find_package" >&2
  rm -rf "$out/consumer"
  cmake --install "$out/release" --prefix "$prefix" >/dev/null
  cmake -S "$root/tests/consumer" -B "$out/consumer/package" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$out/consumer/package" -j "$(nproc)"
  "$out/consumer/package/cuckoo_consumer"
  # The package version file refuses the next major version.
  local next_major=$(( $(sed -n 's/^#define ROCKSDB_CUCKOO_VERSION_MAJOR //p' \
                         "$root/include/rocksdb_cuckoo/version.h") + 1 ))
  if cmake -S "$root/tests/consumer" -B "$out/consumer/next_major" \
       -DCMAKE_PREFIX_PATH="$prefix" -DCUCKOO_CONSUMER_VERSION="$next_major.0" \
       >"$out/consumer/next_major.log" 2>&1; then
    echo "=== [consumer] FAILED: find_package(rocksdb_cuckoo $next_major.0) succeeded" >&2
    exit 1
  fi
  echo "=== [consumer] add_subdirectory, C++20 -Werror (with the shared library and the examples)" >&2
  # At -O0: the release stage is the optimized -Werror build; this one checks
  # the C++20 front end (a quarter of the compile CPU: cuckoo_filter_policy.cc
  # 18 s against 75 s at -O3).
  local dir="$out/consumer/subdirectory"
  cmake -S "$root/tests/consumer" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
        "-DCMAKE_CXX_FLAGS_RELEASE=-O0 -DNDEBUG" \
        -DCUCKOO_CONSUMER_SOURCE_DIR="$root" -DCMAKE_CXX_STANDARD=20 \
        -DCUCKOO_WERROR=ON -DCUCKOO_BUILD_EXAMPLES=ON >/dev/null
  local examples
  examples=$(targets_matching "$dir" "^example_")
  [ -n "$examples" ] || { echo "=== [consumer] no example target" >&2; exit 1; }
  # shellcheck disable=SC2086
  cmake --build "$dir" -j "$(nproc)" --target cuckoo_consumer rocksdb_cuckoo_shared $examples
  "$dir/cuckoo_consumer"
  echo "=== [consumer] passed in $((SECONDS - start)) s" >&2
}

case "$what" in
  all|release|asan|tsan) ;;
  *) echo "usage: $0 [all|release|asan|tsan]" >&2; exit 2 ;;
esac
if [ "$what" = all ] || [ "$what" = release ]; then
  run_suite release "" -DCUCKOO_WERROR=ON
  run_consumer
  # libFuzzer on CuckooFilterView::Parse / Deserialize for 30 s (skipped with
  # a message when clang++ or libFuzzer is missing).
  mkdir -p "$out/fuzz"
  if "$root/tests/fuzz/run_fuzz.sh" "$out/fuzz" 30 >"$out/fuzz/log" 2>&1; then
    grep -E '^=== |^Done ' "$out/fuzz/log" >&2
  else
    cat "$out/fuzz/log" >&2; echo "=== [fuzz] FAILED" >&2; exit 1
  fi
fi
# Sanitizer builds with line tables only (-g1): reports keep their files and
# lines, the build takes about a third less time than with -g. The TSan
# stage builds only the targets it runs (the libraries and the live-key
# filter suites), in C++17: in C++20 libstdc++ no longer declares
# std::string's explicit instantiations, so the test binary's instrumented
# copies interpose on librocksdb's and TSan reports races inside RocksDB's
# own (uninstrumented) write group.
# Both sanitizer stages compile at -O1. With ASan+UBSan, files took 0.45-0.69x
# the compile CPU of -O2 (table_ops.cc 114 s against 169 s, internals_test.cc
# 157 s against 260 s). The TSan stage took 694 s at -O1 against 790 s at -O2
# (build 357 s against 459 s, tests 337 s against 331 s). Exceptions at -O0,
# set in CMake: the FilteredDB suites' own sources (tests/live/CMakeLists.txt)
# and, under TSan, the sources no live suite runs (CMakeLists.txt).
sanitizer_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUCKOO_SANITIZE_DEBUG_FLAG=-g1
                 "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
if [ "$what" = all ] || [ "$what" = asan ]; then
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_suite asan "" "${sanitizer_flags[@]}" -DCUCKOO_SANITIZE=ON -DCUCKOO_BUILD_BENCH=OFF
fi
if [ "$what" = all ] || [ "$what" = tsan ]; then
  # Debian's librocksdb is not built with TSan: tests/live/tsan_suppressions.cc
  # silences its internals; races in this project's code are still reported.
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    run_suite tsan "live_table|filtered_db" "${sanitizer_flags[@]}" -DCUCKOO_TSAN=ON -DCUCKOO_BUILD_BENCH=OFF
fi
