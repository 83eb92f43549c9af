#!/usr/bin/env bash
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# run_comparison.sh: the project's main job. Shows, in one run on this
# machine, where Bloom/Ribbon win (immutable SST filters, loose FPR) and where
# the cuckoo filter wins (a mutable set with deletions, tight FPR).
#
# Installs missing Debian packages, builds Release, then runs
#   1. filter level   filter_bench (core cuckoo filter) and policy_bench
#                     (Bloom / Ribbon / cuckoo / semi-sorted cuckoo through
#                     RocksDB's FilterBitsBuilder/Reader): the paper's Table 3
#                     at equal memory and FPR versus 6..24 bits/key; and
#                     both again at DRAM scale (tables several times the L3
#                     cache: --dram_num items; SST filters in a DB's shape,
#                     --dram_filters filters of --dram_filter_keys keys, and
#                     one filter of --dram_keys keys);
#   2. immutable SST  stock db_bench (fillrandom, readrandom, readmissing,
#                     multireadrandom, --statistics) once per policy;
#   3. mutable        churn_bench: live-key filter vs rebuilt Bloom vs
#                     counting Bloom vs no front filter;
#   4. scale          scale_bench: FilteredDB vs plain RocksDB on DBs of
#                     1M/4M/16M keys (open after a clean close and after a
#                     kill, checkpoint stalls, bits/key, negative Gets);
# and writes OUT/report.md, one CSV per table and PNG plots (gnuplot).
# Databases go to a temporary directory that is removed at the end.
#
# Usage: db_bench_ext/run_comparison.sh [options]
#   --out=DIR          report directory (default: ./out)
#   --build_dir=DIR    build tree (default: ./build/release)
#   --no_build         use an existing build, install nothing
#   --smoke            tiny sizes (CI: under 2 minutes) and --check
#   --check            fail if a table misses a row or a plot is missing
#   --scale=X          multiply every default size by X (e.g. 4)
#   --phases=LIST      subset of filter,sst,churn,scale (default: all four)
#   --sst_bits=LIST    bits/key values for the db_bench phase (default: 10,16)
#   --tmpdir=DIR       where the temporary DBs go (default: $TMPDIR or /tmp)
#   --dram_num=N       items of the DRAM-scale filter_bench run (default
#                      64000000: 97 MB tables; not multiplied by --scale)
#   --dram_filters=N   SST filters of the DRAM-scale policy_bench run in a
#                      DB's shape (default 128: 160 MB of filters at 10
#                      bits/key, 5x a 32 MiB L3)
#   --dram_filter_keys=N  keys per filter of that run (default 1000000, an
#                      SST file's worth)
#   --dram_keys=N      keys of the one large filter of the DRAM-scale
#                      policy_bench run (default 100000000: 125 MB at 10
#                      bits/key)
#   --scale_sizes=LIST DB sizes of the scale phase (default 1M,4M,16M: about
#                      5 minutes: 1M 15 s, 4M 45 s, 16M 1 minute to build
#                      the DB and 2 to measure; not multiplied by --scale)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=$PWD/out
build_dir=$root/build/release
do_build=1
smoke=0
check=0
scale=1
phases=filter,sst,churn,scale
sst_bits=10,16
tmp_parent=${TMPDIR:-/tmp}
dram_num=
dram_keys=
scale_sizes=
dram_filters=
dram_filter_keys=
for arg in "$@"; do
  case "$arg" in
    --out=*) out=${arg#*=} ;;
    --build_dir=*) build_dir=${arg#*=} ;;
    --no_build) do_build=0 ;;
    --smoke) smoke=1; check=1 ;;
    --check) check=1 ;;
    --scale=*) scale=${arg#*=} ;;
    --phases=*) phases=${arg#*=} ;;
    --sst_bits=*) sst_bits=${arg#*=} ;;
    --tmpdir=*) tmp_parent=${arg#*=} ;;
    --dram_num=*) dram_num=${arg#*=} ;;
    --dram_keys=*) dram_keys=${arg#*=} ;;
    --scale_sizes=*) scale_sizes=${arg#*=} ;;
    --dram_filters=*) dram_filters=${arg#*=} ;;
    --dram_filter_keys=*) dram_filter_keys=${arg#*=} ;;
    -h|--help) sed -n '2,50p' "$0"; exit 0 ;;
    *) echo "run_comparison: unknown argument $arg" >&2; exit 2 ;;
  esac
done

start=$SECONDS
phase_no=0
phase_total=$(tr ',' '\n' <<<"$phases" | grep -c .)
progress() {  # message
  printf '[run_comparison %4ds] %s\n' $((SECONDS - start)) "$*" >&2
}
begin_phase() {  # name
  phase_no=$((phase_no + 1))
  progress "phase $phase_no/$phase_total ($((100 * (phase_no - 1) / phase_total))% done): $1"
}
has_phase() { [[ ",$phases," == *",$1,"* ]]; }
sz() {  # default-size scaled: sz <n>
  awk -v n="$1" -v s="$scale" 'BEGIN { v = int(n * s); if (v < 1) v = 1; print v }'
}

if [ "$do_build" = 1 ]; then
  progress "installing missing packages and building Release in $build_dir"
  "$root/scripts/install_deps.sh"
  "$root/scripts/build.sh" "$build_dir"
fi
tools=$build_dir/db_bench_ext
for t in filter_bench policy_bench churn_bench scale_bench; do
  [ -x "$tools/$t" ] || { echo "run_comparison: $tools/$t is missing (build first)" >&2; exit 1; }
done
plugin=$build_dir/librocksdb_cuckoo.so

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/*.csv "$out"/*.png "$out"/*.dat "$out"/*.gp "$out"/report.md
work=$(mktemp -d "$tmp_parent/rocksdb_cuckoo_comparison.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Sizes: defaults finish in about 10 minutes on 2 cores; --smoke is tiny.
if [ "$smoke" = 1 ]; then
  fb_num=200000; fb_queries=200000; fb_repeats=1
  t3_keys=100000; t3_queries=200000; repeats=1
  curve_keys=50000; curve_queries=200000; curve_bits=6,10,14,20,24
  sst_num=30000; sst_reads=10000; sst_repeats=1; sst_bits=10
  churn_num=3000; churn_ops=30000; churn_probes=100000; churn_queries=600; churn_neg=3000
  churn_checkpoints=3
  dram_num=${dram_num:-300000}; dram_queries=200000; dram_repeats=1
  dram_keys=${dram_keys:-200000}; dram_sst_queries=200000
  scale_flags=(--smoke ${scale_sizes:+--sizes=$scale_sizes})
  dram_filters=${dram_filters:-4}; dram_filter_keys=${dram_filter_keys:-50000}
else
  fb_num=$(sz 10000000); fb_queries=$(sz 10000000); fb_repeats=3
  t3_keys=$(sz 10000000); t3_queries=$(sz 2000000); repeats=3
  curve_keys=$(sz 1000000); curve_queries=$(sz 10000000)
  curve_bits=6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24
  sst_num=$(sz 1000000); sst_reads=$(sz 1000000); sst_repeats=3
  churn_num=$(sz 300000); churn_ops=$((10 * churn_num)); churn_probes=4000000
  churn_queries=6000; churn_neg=$(sz 200000); churn_checkpoints=10
  # DRAM scale (fixed sizes, about 2.5 minutes): what a DB's filters, far
  # larger than the caches together, see.
  dram_num=${dram_num:-64000000}; dram_queries=10000000; dram_repeats=1
  dram_keys=${dram_keys:-100000000}; dram_sst_queries=4000000
  scale_flags=(--sizes="${scale_sizes:-1M,4M,16M}")
  dram_filters=${dram_filters:-128}; dram_filter_keys=${dram_filter_keys:-1000000}
fi

# The commit the report was measured at ("-dirty" with uncommitted changes
# to tracked files; "unknown" outside a git checkout).
commit_of_tree() {
  local root c
  root=$(cd "$(dirname "$0")/.." && pwd)
  c=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null) || { echo unknown; return; }
  git -C "$root" diff --quiet HEAD -- 2>/dev/null || c="$c-dirty"
  echo "$c ($(git -C "$root" log -1 --format=%cd --date=format:%Y-%m-%d HEAD 2>/dev/null))"
}

meta=(
  "--meta=date=$(date -u '+%Y-%m-%d %H:%M UTC')"
  "--meta=commit=$(commit_of_tree)"
  "--meta=machine=$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
  "--meta=RocksDB=$(dpkg-query -W -f='${Version}' librocksdb-dev 2>/dev/null || echo unknown) (Debian, assertions enabled)"
  "--meta=command=db_bench_ext/run_comparison.sh $*"
)

if has_phase filter; then
  begin_phase "filter level: core filter_bench, $fb_num items"
  "$tools/filter_bench" --num="$fb_num" --queries="$fb_queries" \
    --repeats="$fb_repeats" --occupancy_queries=$((fb_queries / 4)) \
    --csv="$out/filter_bench.csv" >"$out/filter_bench.txt"
  # Equal memory: the bits/item of a plain f=12 b=4 filter at 95% load.
  t3_bits=$(awk 'BEGIN { printf "%.4f", 12 / 0.95 }')
  progress "filter level: Table 3 at $t3_bits bits/key, $t3_keys keys"
  "$tools/policy_bench" --keys="$t3_keys" --queries="$t3_queries" \
    --bits_per_key="$t3_bits" --policies=bloom,cuckoo,cuckoo_plain,ribbon \
    --repeats="$repeats" --csv="$work/table3_first.csv" >"$out/table3.txt"
  # Ribbon's argument is a Bloom-equivalent FPR target (it stores ~30% less):
  # rerun it with the argument scaled until its measured size matches (two
  # proportional steps; the size is not quite linear in the argument).
  ribbon_csv="$work/table3_first.csv"
  for step in 1 2; do
    ribbon_bits=$(awk -F, -v want="$t3_bits" 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i }
      NR > 1 && $c["policy"] == "ribbon" { printf "%.4f", $c["bits_per_key_arg"] * want / $c["bits_per_key"] }' \
      "$ribbon_csv")
    progress "filter level: Table 3, Ribbon at argument $ribbon_bits for equal memory (step $step)"
    ribbon_csv="$work/table3_ribbon_$step.csv"
    "$tools/policy_bench" --keys="$t3_keys" --queries="$t3_queries" \
      --bits_per_key="$ribbon_bits" --policies=ribbon --repeats="$repeats" \
      --csv="$ribbon_csv" >>"$out/table3.txt"
  done
  { awk -F, 'NR == 1 || $1 != "ribbon"' "$work/table3_first.csv"
    tail -n +2 "$ribbon_csv"; } >"$out/table3.csv"
  progress "filter level: DRAM scale, filter_bench with $dram_num items"
  "$tools/filter_bench" --num="$dram_num" --configs=f12b4,ss13b4 \
    --queries="$dram_queries" --repeats="$dram_repeats" --found=0,1 \
    --batch_sizes=1024 --dependent_queries=0 --sweep=false \
    --csv="$out/filter_bench_dram.csv" >"$out/filter_bench_dram.txt"
  # SST filters at DRAM scale, in a DB's shape (many SST-sized filters, a
  # batch of queries per filter) and as one large filter. Each policy's
  # filters are built once; the queries run 3 times, medians kept.
  progress "filter level: DRAM scale, policy_bench with $dram_filters filters of $dram_filter_keys keys at 10 bits/key"
  dram_policies=bloom,cuckoo,cuckoo_plain,cuckoo_blocked
  "$tools/policy_bench" --filters="$dram_filters" --keys="$dram_filter_keys" \
    --queries="$dram_sst_queries" --bits_per_key=10 --policies="$dram_policies" \
    --repeats=3 --median --csv="$out/policy_dram.csv" >"$out/policy_dram.txt"
  progress "filter level: DRAM scale, policy_bench with one filter of $dram_keys keys at 10 bits/key"
  "$tools/policy_bench" --filters=1 --keys="$dram_keys" \
    --queries="$dram_sst_queries" --bits_per_key=10 --policies="$dram_policies" \
    --repeats=3 --median --csv="$out/policy_dram_single.csv" \
    >>"$out/policy_dram.txt"
  progress "filter level: FPR vs bits/key ($curve_bits), $curve_keys keys"
  "$tools/policy_bench" --keys="$curve_keys" --queries="$curve_queries" \
    --bits_per_key="$curve_bits" --policies=bloom,ribbon,cuckoo,cuckoo_plain \
    --repeats=1 --csv="$out/fpr_curve.csv" >"$out/fpr_curve.txt"
fi

if has_phase sst; then
  begin_phase "immutable SST case: stock db_bench, $sst_num keys, bits/key $sst_bits"
  "$root/db_bench_ext/run_stock_db_bench.sh" --plugin="$plugin" \
    --num="$sst_num" --reads="$sst_reads" --bits="$sst_bits" \
    --policies=bloom,ribbon,cuckoo,cuckoo_plain,cuckoo_blocked \
    --repeats="$sst_repeats" \
    --workdir="$work/sst" \
    --csv="$out/sst_db_bench.csv" >"$out/sst_db_bench.txt"
fi

if has_phase churn; then
  begin_phase "mutable case: churn_bench, $churn_num live keys, $churn_ops writes"
  "$tools/churn_bench" --num="$churn_num" --churn_ops="$churn_ops" \
    --checkpoints="$churn_checkpoints" --fpr_probes="$churn_probes" \
    --queries="$churn_queries" --neg_gets="$churn_neg" --db="$work/churn" \
    --csv_prefix="$out/churn" >"$out/churn.txt"
fi

if has_phase scale; then
  begin_phase "live filter at scale: scale_bench, ${scale_flags[*]}"
  "$tools/scale_bench" "${scale_flags[@]}" --tmpdir="$work" \
    --csv="$out/scale.csv" >"$out/scale.txt"
fi

progress "writing the report"
check_flag=()
[ "$check" = 1 ] && check_flag=(--check)
python3 "$root/db_bench_ext/make_report.py" --out="$out" "${meta[@]}" "${check_flag[@]}"
progress "done (100%): $out/report.md"
