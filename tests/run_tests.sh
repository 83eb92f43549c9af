#!/usr/bin/env bash
# The test command (README, .ci/run): installs missing Debian packages, then
# builds and runs every test suite twice, in Release and with ASan+UBSan.
#   tests/run_tests.sh            both builds
#   tests/run_tests.sh release    Release only
#   tests/run_tests.sh asan       ASan+UBSan only
# Build trees go to $CUCKOO_BUILD_ROOT (default: ./build).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}
out=${CUCKOO_BUILD_ROOT:-$root/build}

"$root/scripts/install_deps.sh"

run_suite() {  # <name> <cmake args...>
  local name=$1; shift
  local dir="$out/$name"
  local start=$SECONDS
  echo "=== [$name] build" >&2
  "$root/scripts/build.sh" "$dir" "$@"
  echo "=== [$name] test" >&2
  ctest --test-dir "$dir" --output-on-failure --no-tests=error -j 2 --timeout 900
  echo "=== [$name] passed in $((SECONDS - start)) s" >&2
}

case "$what" in
  all|release|asan) ;;
  *) echo "usage: $0 [all|release|asan]" >&2; exit 2 ;;
esac
if [ "$what" != asan ]; then
  run_suite release
fi
if [ "$what" != release ]; then
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_suite asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUCKOO_SANITIZE=ON -DCUCKOO_BUILD_BENCH=OFF
fi
