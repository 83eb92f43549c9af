#!/usr/bin/env bash
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# Checks that every source, header, script, CMake, make and Python file of the
# repository starts with the licence lines (after a "#!" line, if any):
#   <comment> Copyright (c) <year> the rocksdb-cuckoo authors
#   <comment> SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# with <comment> "//" in C/C++ files and "#" elsewhere. Files: those git
# tracks, plus untracked ones it does not ignore (every file outside a git
# checkout); the fuzz corpus and docs/ are data. Prints each file that lacks
# the lines and fails if there is one.
#   spdx_check.sh <repository root>
#   spdx_check.sh --self-test     the check fails on a file without the lines
#                                 and passes on files with them
set -uo pipefail

readonly spdx='SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only'
readonly copyright_re='Copyright \(c\) [0-9]{4} the rocksdb-cuckoo authors'

check() {  # <root>: prints offenders, returns 1 if any
  local root=$1 files f comment first bad=0 n=0
  if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git -C "$root" ls-files --cached --others --exclude-standard)
  else
    files=$(cd "$root" && find . -type f | sed 's|^\./||')
  fi
  while IFS= read -r f; do
    [ -n "$f" ] && [ -f "$root/$f" ] || continue
    case "$f" in
      tests/fuzz/corpus/*|docs/*|build*/*) continue ;;
      *.cc|*.h|*.c|*.cpp|*.hpp) comment='//' ;;
      *.sh|*.py|*.cmake|*.in|*.mk|CMakeLists.txt|*/CMakeLists.txt) comment='#' ;;
      *)
        # Scripts without an extension (e.g. .ci/run).
        head -c 2 "$root/$f" | grep -q '^#!' || continue
        comment='#' ;;
    esac
    n=$((n + 1))
    first=1
    head -n 1 "$root/$f" | grep -q '^#!' && first=2
    if ! sed -n "${first}p" "$root/$f" | grep -Eqx "$comment $copyright_re" ||
       ! sed -n "$((first + 1))p" "$root/$f" | grep -Fqx "$comment $spdx"; then
      echo "missing licence lines: $f"
      bad=1
    fi
  done <<<"$files"
  [ "$bad" = 0 ] && echo "spdx_check: $n files carry the licence lines"
  return $bad
}

self_test() {
  local tmp ok=1
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  printf '// Copyright (c) 2026 the rocksdb-cuckoo authors\n// %s\n\nint x;\n' \
    "$spdx" >"$tmp/good.cc"
  printf '#!/bin/sh\n# Copyright (c) 2027 the rocksdb-cuckoo authors\n# %s\n' \
    "$spdx" >"$tmp/good.sh"
  printf 'int y;\n' >"$tmp/data.txt"  # not a source: not checked
  check "$tmp" >/dev/null || { echo "self-test: good files rejected"; ok=0; }
  printf '// A header without the lines.\n#pragma once\n' >"$tmp/bad.h"
  local out
  out=$(check "$tmp") && { echo "self-test: bad.h accepted"; ok=0; }
  grep -qx 'missing licence lines: bad.h' <<<"$out" ||
    { echo "self-test: bad.h not reported"; ok=0; }
  rm "$tmp/bad.h"
  printf '# %s\n# Copyright (c) 2026 the rocksdb-cuckoo authors\n' "$spdx" \
    >"$tmp/CMakeLists.txt"  # lines swapped
  check "$tmp" >/dev/null && { echo "self-test: swapped lines accepted"; ok=0; }
  [ "$ok" = 1 ] && echo "spdx_check self-test: ok"
  [ "$ok" = 1 ]
}

case "${1:-}" in
  --self-test) self_test ;;
  "") echo "usage: $0 <repository root> | --self-test" >&2; exit 2 ;;
  *) check "$1" ;;
esac
