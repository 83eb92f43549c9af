#!/usr/bin/env bash
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# Installs the Debian packages rocksdb-cuckoo builds and runs with, when any
# is missing. Nothing is vendored or downloaded outside apt.
set -euo pipefail

packages=(
  g++ cmake make ninja-build pkg-config
  librocksdb-dev rocksdb-tools      # RocksDB 7.8.3 library and stock db_bench/ldb/sst_dump
  libgtest-dev libgflags-dev libsnappy-dev libxxhash-dev
  gnuplot-nox python3               # report plots and tables
  clang-format                      # tests/format_check.sh (Debian 12: 14)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install_deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install_deps: need root or sudo for apt-get" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
