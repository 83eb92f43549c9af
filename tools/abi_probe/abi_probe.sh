#!/usr/bin/env bash
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# abi_probe.sh: checks this project's FilterBitsBuilder / FilterBitsReader
# declaration (filter_bits_abi.h) against the real vtable layout of a RocksDB
# source tree. It compiles one small probe program twice (against the tree's
# table/block_based/filter_policy_internal.h, and against filter_bits_abi.h
# with only the tree's include/ directory), runs both and compares the slot
# of every virtual. It never builds RocksDB: only headers are used.
#
# Usage: tools/abi_probe/abi_probe.sh <rocksdb-source-tree> [options]
#   --abi-header DIR   directory holding filter_bits_abi.h
#                      (default: plugin/cuckoo/sst of this repository)
#   --cxx COMPILER     C++ compiler (default: $CXX or g++)
#   --std c++17|c++20  language standard (default: c++20 from RocksDB 10.7,
#                      else c++17, like the project's CMake)
#   --keep DIR         keep the probe binaries and outputs in DIR
# Exit status: 0 the layouts match; 1 they differ or the probe is incomplete
# (a virtual the probe does not know); 2 filter_bits_abi.h refuses this
# version (add the layout after checking it, see the header's comment);
# 3 usage or compile error.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
tree="" abi_dir="$repo/plugin/cuckoo/sst" cxx="${CXX:-g++}" std="" keep=""
while (($#)); do
  case "$1" in
    --abi-header) abi_dir="$2"; shift 2 ;;
    --cxx) cxx="$2"; shift 2 ;;
    --std) std="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "abi_probe: unknown option $1" >&2; exit 3 ;;
    *) tree="$1"; shift ;;
  esac
done
if [[ -z "$tree" ]]; then sed -n '2,20p' "$0" >&2; exit 3; fi
tree="$(cd "$tree" && pwd)"
internal="$tree/table/block_based/filter_policy_internal.h"
version_h="$tree/include/rocksdb/version.h"
for f in "$internal" "$version_h" "$abi_dir/filter_bits_abi.h"; do
  [[ -f "$f" ]] || { echo "abi_probe: missing $f" >&2; exit 3; }
done

major=$(awk '/#define ROCKSDB_MAJOR/ {print $3}' "$version_h")
minor=$(awk '/#define ROCKSDB_MINOR/ {print $3}' "$version_h")
patch=$(awk '/#define ROCKSDB_PATCH/ {print $3}' "$version_h")
if [[ -z "$std" ]]; then
  if ((major > 10 || (major == 10 && minor >= 7))); then std=c++20; else std=c++17; fi
fi

work="${keep:-$(mktemp -d)}"
mkdir -p "$work"
[[ -n "$keep" ]] || trap 'rm -rf "$work"' EXIT
flags=(-std="$std" -O0 -w -DROCKSDB_PLATFORM_POSIX -DOS_LINUX)

echo "RocksDB $major.$minor.$patch ($tree), $cxx -std=$std"

# 1. The real layout.
if ! "$cxx" "${flags[@]}" -DCUCKOO_PROBE_REAL=1 -I"$tree" -I"$tree/include" \
    "$here/vtable_probe.cc" -o "$work/probe_real" 2>"$work/real.err"; then
  cat "$work/real.err" >&2
  echo "abi_probe: cannot compile against the tree's internal header" >&2
  exit 3
fi
"$work/probe_real" >"$work/real.txt"

# 2. Completeness: how many virtuals do the real classes have? The probe only
# knows the signatures listed in vtable_probe.cc; a new virtual anywhere in
# the class must make this check fail. With GCC the compiler's own vtable dump
# is used; otherwise the class bodies are scanned for `virtual`.
count_known() {  # class -> number of slots the probe found + 2 (destructor)
  echo $(( $(grep -c "^$1	.*	slot " "$work/real.txt") + 2 ))
}
count_real() {  # class -> number of vtable slots (after the address point)
  local cls="$1" n=""
  if "$cxx" --version 2>/dev/null | grep -qi 'gcc\|g++\|free software'; then
    if (cd "$work" && "$cxx" "${flags[@]}" -DCUCKOO_PROBE_REAL=1 -I"$tree" \
          -I"$tree/include" -fdump-lang-class -c "$here/vtable_probe.cc" \
          -o dump.o 2>/dev/null); then
      local dump
      dump=$(ls "$work"/*.class 2>/dev/null | head -1 || true)
      if [[ -n "$dump" ]]; then
        # "<ns>::<cls>::_ZTV...: N entries"; 2 entries precede the address point
        n=$(grep -E "::${cls}::_ZTV[^:]*: [0-9]+ entries" "$dump" | head -1 |
            sed -E 's/.*: ([0-9]+) entries/\1/')
        [[ -n "$n" ]] && n=$((n - 2))
      fi
    fi
  fi
  if [[ -z "$n" ]]; then
    # Header scan: the class body, comments stripped, count `virtual`; the
    # destructor counts twice in the vtable.
    n=$(awk -v c="$cls" '
      $0 ~ "^class " c " *\\{" {inb=1; next}
      inb && /^};/ {inb=0}
      inb {sub(/\/\/.*/, ""); print}' "$internal" |
      grep -o '\bvirtual\b' | wc -l)
    n=$((n + 1))
  fi
  echo "$n"
}
status=0
for cls in FilterBitsBuilder FilterBitsReader; do
  known=$(count_known "$cls")
  real=$(count_real "$cls")
  if [[ "$known" != "$real" ]]; then
    echo "INCOMPLETE: $cls has $real vtable slots, the probe names only $known" \
         "(dtor included); add the new virtual to vtable_probe.cc"
    status=1
  fi
done

# 3. Our declaration, out-of-tree mode (no tree root on the include path, so
# filter_bits_abi.h cannot find the internal header).
if "$cxx" "${flags[@]}" -I"$abi_dir" -I"$tree/include" \
    "$here/vtable_probe.cc" -o "$work/probe_ours" 2>"$work/ours.err"; then
  "$work/probe_ours" >"$work/ours.txt"
else
  if grep -q '#error' "$work/ours.err"; then
    echo "REFUSED: filter_bits_abi.h does not accept RocksDB $major.$minor:"
    grep -m1 'error' "$work/ours.err" | sed 's/^/  /'
    echo "Real layout:"; sed 's/^/  /' "$work/real.txt"
    exit 2
  fi
  cat "$work/ours.err" >&2
  echo "abi_probe: cannot compile filter_bits_abi.h" >&2
  exit 3
fi

printf '  %-56s %-10s %s\n' "virtual" "real" "filter_bits_abi.h"
paste "$work/real.txt" "$work/ours.txt" | tail -n +2 |
  awk -F'\t' '{ mark = ($1 == $4 && $2 == $5 && $3 == $6) ? "" : "   <-- differs";
                 printf "  %-56s %-10s %s%s\n", $1 "::" $2, $3, $6, mark }'
if ! diff -q "$work/real.txt" "$work/ours.txt" >/dev/null; then
  echo "MISMATCH: filter_bits_abi.h declares a different layout for $major.$minor"
  exit 1
fi
if ((status)); then exit 1; fi
echo "MATCH: filter_bits_abi.h agrees with RocksDB $major.$minor.$patch"
