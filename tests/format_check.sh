#!/usr/bin/env bash
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# Checks that every C++ file git tracks (plus untracked ones it does not
# ignore) is formatted by the repository's .clang-format, with the
# clang-format of Debian 12's package (14; other versions format some
# constructs differently). Prints each file that differs and fails if one
# does; skips with a message when no clang-format is installed.
#   format_check.sh <repository root>
#   format_check.sh --self-test    the check fails on a badly formatted file
set -uo pipefail

find_clang_format() {
  local c
  for c in clang-format-14 clang-format; do
    command -v "$c" >/dev/null && { echo "$c"; return 0; }
  done
  return 1
}

check() {  # <root>
  local root=$1 cf bad=0 n=0 f
  cf=$(find_clang_format) || { echo "format_check: no clang-format, skipped"; return 0; }
  while IFS= read -r f; do
    [ -f "$root/$f" ] || continue
    case "$f" in build*/*|tests/fuzz/corpus/*) continue ;; esac
    n=$((n + 1))
    if ! (cd "$root" && "$cf" --style=file "$f" | cmp -s - "$f"); then
      echo "not formatted: $f (clang-format -i $f)"
      bad=1
    fi
  done < <(git -C "$root" ls-files --cached --others --exclude-standard -- '*.h' '*.cc')
  echo "format_check: $n files, $($cf --version | head -1)"
  return $bad
}

if [ "${1:-}" = --self-test ]; then
  cf=$(find_clang_format) || { echo "format_check: no clang-format, skipped"; exit 0; }
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  here=$(cd "$(dirname "$0")/.." && pwd)
  cp "$here/.clang-format" "$tmp/"
  git -C "$tmp" init -q
  printf 'int  f( int x ){return x;}\n' > "$tmp/bad.cc"
  if check "$tmp" >/dev/null; then echo "self-test: badly formatted file passed"; exit 1; fi
  "$cf" -i "$tmp/bad.cc"
  check "$tmp" >/dev/null || { echo "self-test: formatted file failed"; exit 1; }
  echo "format_check self-test passed"
  exit 0
fi
check "${1:?usage: format_check.sh <root> | --self-test}"
