#!/usr/bin/env bash
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# run_stock_db_bench.sh: Debian's stock db_bench (/usr/bin/db_bench, linked
# to librocksdb) with Bloom, Ribbon and cuckoo filter policies, each set
# through an OPTIONS file; the cuckoo policy comes from
# LD_PRELOAD=librocksdb_cuckoo.so, whose static initializer registers the
# "cuckoofilter" factories.
#
# For every bits/key value and policy: a fresh DB, then
#   fillrandom, compact, readrandom, readmissing, multireadrandom
# (--statistics, --multiread_batched), and sst_dump for the filter sizes.
# Prints a table with ops/s ratios against Bloom at the same bits/key, run
# back to back on the same machine (Debian's db_bench is built with
# assertions enabled, so absolute numbers are pessimistic: compare ratios).
#
# Usage: db_bench_ext/run_stock_db_bench.sh [options]
#   --plugin=<path>        librocksdb_cuckoo.so (default: build/release/librocksdb_cuckoo.so);
#                          "builtin" for a db_bench whose RocksDB was built with
#                          the plugin in-tree (ROCKSDB_PLUGINS=cuckoo): no LD_PRELOAD
#   --db_bench=<path>      default: /usr/bin/db_bench
#   --sst_dump=<path>      default: sst_dump on PATH (use the one of the same
#                          RocksDB build as db_bench for newer table formats)
#   --num=<n>              keys (default 1000000)
#   --reads=<n>            reads per read benchmark (default 500000)
#   --bits=<list>          bits/key values, comma separated (default 10,16)
#   --policies=<list>      bloom,ribbon,cuckoo,cuckoo_plain,cuckoo_blocked
#                          (default bloom,cuckoo)
#   --repeats=<n>          runs per (bits, policy), best ops/s kept (default 1);
#                          runs alternate between policies
#   --median               keep the median ops/s of the repeats instead of the
#                          best (per benchmark; the lower middle one of an
#                          even count)
#   --cache_size=<bytes>   block cache (default 536870912: reads measure CPU)
#   --workdir=<dir>        scratch space (default: a new directory under /tmp)
#   --csv=<file>           also write the table as CSV
#   --keep                 keep the DBs and logs
#
# CSV columns (stable; new ones only at the end):
#   bits_per_key, policy, filter_policy, fillrandom_ops, readrandom_ops,
#   readmissing_ops, multireadrandom_ops, filter_bytes, filter_entries,
#   filter_bits_per_key, useful, full_positive, full_true_positive,
#   measured_fpr_percent, readrandom_vs_bloom, readmissing_vs_bloom,
#   multireadrandom_vs_bloom
# measured_fpr_percent = (full_positive - full_true_positive) /
#   (useful + full_positive - full_true_positive), over all reads of the run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
plugin="$here/../build/release/librocksdb_cuckoo.so"
db_bench=/usr/bin/db_bench
sst_dump=sst_dump
num=1000000
reads=500000
bits_list=10,16
policies=bloom,cuckoo
repeats=1
median=0
cache_size=536870912
workdir=""
csv=""
keep=0
for arg in "$@"; do
  case "$arg" in
    --plugin=*) plugin=${arg#*=} ;;
    --db_bench=*) db_bench=${arg#*=} ;;
    --sst_dump=*) sst_dump=${arg#*=} ;;
    --num=*) num=${arg#*=} ;;
    --reads=*) reads=${arg#*=} ;;
    --bits=*) bits_list=${arg#*=} ;;
    --policies=*) policies=${arg#*=} ;;
    --repeats=*) repeats=${arg#*=} ;;
    --median) median=1 ;;
    --cache_size=*) cache_size=${arg#*=} ;;
    --workdir=*) workdir=${arg#*=} ;;
    --csv=*) csv=${arg#*=} ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/!p}' "$0"; exit 0 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done

[ -x "$db_bench" ] || { echo "no db_bench at $db_bench" >&2; exit 1; }
if [ "$plugin" != builtin ]; then
  [ -f "$plugin" ] || { echo "no plugin at $plugin (build it first)" >&2; exit 1; }
  plugin=$(cd "$(dirname "$plugin")" && pwd)/$(basename "$plugin")
fi
if [ -z "$workdir" ]; then
  workdir=$(mktemp -d /tmp/cuckoo_stock_db_bench.XXXXXX)
fi
mkdir -p "$workdir"
if [ "$keep" = 0 ]; then trap 'rm -rf "$workdir"/db_*' EXIT; fi

policy_string() {  # policy bits
  case "$1" in
    bloom) echo "bloomfilter:$2:false" ;;
    ribbon) echo "ribbonfilter:$2:-1" ;;   # Ribbon at every level
    cuckoo) echo "cuckoofilter:$2" ;;   # semi-sorted buckets of 4
    cuckoo_plain)  # buckets of 4, not semi-sorted: largest f <= 32 with f/0.95 <= bits
      awk -v b="$2" 'BEGIN { f = int(0.95 * b + 1e-9); if (f > 32) f = 32;
                            printf "cuckoofilter:%s:%d:4:0\n", b, f }' ;;
    cuckoo_blocked) echo "cuckoofilter:$2:blocked" ;;  # one 64-byte block per key
    *) echo "unknown policy $1" >&2; exit 2 ;;
  esac
}

write_options() {  # file filter_policy
  cat > "$1" <<EOF
[Version]
  rocksdb_version=7.8.3
  options_file_version=1.1

[DBOptions]
  create_if_missing=true

[CFOptions "default"]
  write_buffer_size=67108864

[TableOptions/BlockBasedTable "default"]
  filter_policy=$2
EOF
}

ops_of() {  # log benchmark
  awk -v b="$2" '$1 == b && $2 == ":" { for (i = 1; i <= NF; ++i) if ($i == "ops/sec") print $(i - 1) }' "$1" | tail -1
}
ticker_of() {  # log name
  awk -v t="rocksdb.$2" '$1 == t && $2 == "COUNT" { print $4 }' "$1" | tail -1
}

run_one() {  # policy bits repeat -> appends a result line to $workdir/results
  local policy=$1 bits=$2 rep=$3
  local fp; fp=$(policy_string "$policy" "$bits")
  local tag="${policy}_${bits}_${rep}"
  local db="$workdir/db_$tag" log="$workdir/log_$tag.txt" opts="$workdir/options_$tag.ini"
  rm -rf "$db"
  write_options "$opts" "$fp"
  local preload=""
  case "$policy" in cuckoo*) [ "$plugin" = builtin ] || preload="$plugin" ;; esac
  LD_PRELOAD="$preload" "$db_bench" --db="$db" --options_file="$opts" \
    --benchmarks=fillrandom,compact,readrandom,readmissing,multireadrandom \
    --num="$num" --reads="$reads" --multiread_batched --batch_size=32 \
    --statistics --cache_size="$cache_size" --seed=1 > "$log" 2>&1 ||
    { echo "db_bench failed, see $log" >&2; tail -20 "$log" >&2; exit 1; }
  # The silent no-filter trap: the DB must have re-serialized the policy.
  if ! grep -q "filter_policy=$fp" "$db"/OPTIONS-*; then
    echo "FAIL: $db does not use $fp:" >&2
    grep filter_policy "$db"/OPTIONS-* >&2 || true
    exit 1
  fi
  local filter_bytes=0 filter_entries=0
  for sst in "$db"/*.sst; do
    [ -e "$sst" ] || continue
    local props; props=$("$sst_dump" --file="$sst" --show_properties 2>/dev/null)
    filter_bytes=$((filter_bytes + $(echo "$props" | awk -F': ' '/^ *filter block size:/ {print $2; exit}')))
    filter_entries=$((filter_entries + $(echo "$props" | awk -F': ' '/# entries for filter:/ {print $2; exit}')))
  done
  echo "$bits $policy $fp $(ops_of "$log" fillrandom) $(ops_of "$log" readrandom)" \
       "$(ops_of "$log" readmissing) $(ops_of "$log" multireadrandom) $filter_bytes" \
       "$filter_entries $(ticker_of "$log" bloom.filter.useful)" \
       "$(ticker_of "$log" bloom.filter.full.positive)" \
       "$(ticker_of "$log" bloom.filter.full.true.positive)" >> "$workdir/results"
  [ "$keep" = 1 ] || rm -rf "$db"
}

: > "$workdir/results"
IFS=, read -r -a bits_arr <<< "$bits_list"
IFS=, read -r -a pol_arr <<< "$policies"
echo "stock db_bench: $db_bench, plugin $plugin, $num keys, $reads reads, cache $cache_size, $repeats repeat(s)"
for bits in "${bits_arr[@]}"; do
  for ((rep = 0; rep < repeats; ++rep)); do
    for policy in "${pol_arr[@]}"; do
      echo "  running $policy at $bits bits/key (repeat $((rep + 1)))..." >&2
      run_one "$policy" "$bits" "$rep"
    done
  done
done

# With --median: one line per (bits, policy) whose ops/s (fields 4-7) are
# the medians of its repeats; the table below then keeps that line.
summary="$workdir/results"
if [ "$median" = 1 ]; then
  summary="$workdir/results.median"
  awk '
  {
    key = $1 " " $2
    if (!(key in cnt)) { order[n++] = key; line[key] = $0 }
    c = ++cnt[key]
    for (f = 4; f <= 7; ++f) v[key, f, c] = $f
  }
  END {
    for (i = 0; i < n; ++i) {
      key = order[i]; m = cnt[key]
      nf = split(line[key], out, " ")
      for (f = 4; f <= 7; ++f) {
        for (a = 1; a <= m; ++a) s[a] = v[key, f, a] + 0
        for (a = 2; a <= m; ++a) {  # insertion sort
          x = s[a]; b = a - 1
          while (b >= 1 && s[b] > x) { s[b + 1] = s[b]; --b }
          s[b + 1] = x
        }
        out[f] = s[int((m + 1) / 2)]
      }
      row = out[1]
      for (f = 2; f <= nf; ++f) row = row " " out[f]
      print row
    }
  }' "$workdir/results" > "$summary"
fi

# Best (or, with --median, median) ops/s per (bits, policy) over repeats,
# then ratios against Bloom.
awk -v csv="$csv" '
{
  key = $1 " " $2
  if (!(key in fp)) { order[n++] = key }
  fp[key] = $3
  if ($4 > fill[key]) fill[key] = $4
  if ($5 > rr[key]) rr[key] = $5
  if ($6 > rm[key]) rm[key] = $6
  if ($7 > mr[key]) mr[key] = $7
  fb[key] = $8; fe[key] = $9; us[key] = $10; pos[key] = $11; tp[key] = $12
}
function ratio(a, b) { return (b > 0) ? sprintf("%.3f", a / b) : "" }
END {
  printf "%-5s %-14s %-24s %10s %10s %10s %10s %8s %8s | %7s %7s %7s\n", "bits", "policy", "filter_policy", "fillrnd", "readrnd", "readmiss", "multiread", "bits/key", "fpr%", "rr/B", "rm/B", "mr/B"
  if (csv != "") print "bits_per_key,policy,filter_policy,fillrandom_ops,readrandom_ops,readmissing_ops,multireadrandom_ops,filter_bytes,filter_entries,filter_bits_per_key,useful,full_positive,full_true_positive,measured_fpr_percent,readrandom_vs_bloom,readmissing_vs_bloom,multireadrandom_vs_bloom" > csv
  for (i = 0; i < n; ++i) {
    key = order[i]; split(key, kb, " ")
    b = kb[1] " bloom"
    bpk = (fe[key] > 0) ? fb[key] * 8 / fe[key] : 0
    fpos = pos[key] - tp[key]
    fpr = (us[key] + fpos > 0) ? 100 * fpos / (us[key] + fpos) : 0
    r1 = (b in rr) ? ratio(rr[key], rr[b]) : ""
    r2 = (b in rm) ? ratio(rm[key], rm[b]) : ""
    r3 = (b in mr) ? ratio(mr[key], mr[b]) : ""
    printf "%-5s %-14s %-24s %10d %10d %10d %10d %8.3f %8.4f | %7s %7s %7s\n", kb[1], kb[2], fp[key], fill[key], rr[key], rm[key], mr[key], bpk, fpr, r1, r2, r3
    if (csv != "") printf "%s,%s,%s,%d,%d,%d,%d,%d,%d,%.4f,%d,%d,%d,%.5f,%s,%s,%s\n", kb[1], kb[2], fp[key], fill[key], rr[key], rm[key], mr[key], fb[key], fe[key], bpk, us[key], pos[key], tp[key], fpr, r1, r2, r3 >> csv
  }
}' "$summary"
echo "logs: $workdir"
