#!/usr/bin/env bash
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

# RocksDB's own stress and crash tests (db_stress, tools/db_crashtest.py) with
# the cuckoo filter policy, on a RocksDB source tree that the user provides
# (a checkout of a release tag; nothing of it enters this repository).
#
#   tools/run_db_crashtest.sh [options] <rocksdb-source-dir> <step>...
#
# Steps (run in the order given):
#   install   copy this repository's tracked and unignored files into
#             <rocksdb>/plugin/cuckoo (only the files whose contents differ,
#             so that make rebuilds only what changed)
#   patch     a local, never committed change of <rocksdb>/db_stress_tool:
#             when the environment variable CUCKOO_STRESS_FILTER_POLICY is
#             set, db_stress makes its filter policy from that string
#             (FilterPolicy::CreateFromString; it exits if the result is not
#             a cuckoo policy) instead of from --bloom_bits, and, on tags
#             whose SetOptions switches filter policies, switches between
#             that policy and no filter. Without the variable db_stress is
#             unchanged. db_crashtest.py needs it: it randomizes the flags
#             that make the table options, so an OPTIONS file would replace
#             every one of them.
#   build     build db_stress (DEBUG_LEVEL=1: assertions on, as RocksDB's
#             crash tests run), one of two ways (--link):
#               intree  make ROCKSDB_PLUGINS=cuckoo db_stress in the tree
#                       (after install): the whole RocksDB library is built
#                       with the plugin registered by cuckoo_RegisterPlugin
#               shared  only db_stress_tool/*.cc of the tree, linked to an
#                       installed shared librocksdb of the same version that
#                       has RocksDB's test utilities (Debian's librocksdb
#                       does) and to this repository's librocksdb_cuckoo.so
#                       built against it (--plugin_lib), whose static
#                       initializer registers the policy
#   stress    db_stress runs of --duration seconds per layout, the policy
#             given by an OPTIONS file (--options_file): a plain run, and
#             runs with read/write/sync fault injection where the tag has
#             the flags
#   whitebox  python3 tools/db_crashtest.py whitebox, per layout
#   blackbox  python3 tools/db_crashtest.py blackbox, per layout
#
# Options:
#   --link=intree|shared   (default intree)
#   --libdir=DIR           shared: where librocksdb.so is
#                          (default /usr/lib/x86_64-linux-gnu)
#   --plugin_lib=FILE      shared: librocksdb_cuckoo.so
#                          (default <repo>/build/release/librocksdb_cuckoo.so);
#                          given without the build step, the runs load it
#                          (LD_LIBRARY_PATH, ahead of the RUNPATH of the
#                          db_stress built before)
#   --jobs=N               make / compile jobs (default 1)
#   --duration=S           seconds per run and layout (default 1200)
#   --layouts=L,...        of plain, semisorted, blocked (default all three)
#   --bits=B               bits per key of the policy (default 10)
#   --work=DIR             logs, OPTIONS files, DBs (default /tmp/cuckoo_crashtest)
#   --nice=N               nice level of the build and the runs (default 19)
#   --make_args=S          extra make arguments (default DISABLE_WARNING_AS_ERROR=1)
#   --extra=S              extra arguments for db_stress / db_crashtest.py
#   --stress_bin=FILE      the db_stress to run (default: the one built)
#   CXX in the environment selects the compiler (default g++).
#
# Layouts: plain = cuckoofilter:<bits>:<f>:4:0 (f = floor(0.95 * bits)),
# semisorted = cuckoofilter:<bits> (the default layout), blocked =
# cuckoofilter:<bits>:blocked.
#
# Each run's tag, command, duration and result go to <work>/results.tsv and
# its output to <work>/<step>-<layout>[-<variant>].log. A run passes when its
# command exits 0, its log has no verification failure, and it used the
# cuckoo policy: the run's RocksDB LOG names the policy (a filter_policy
# string whose factory is not registered would load as no filter without
# an error, and the run would test nothing of this repository).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
link=intree
libdir=/usr/lib/x86_64-linux-gnu
plugin_lib=$here/build/release/librocksdb_cuckoo.so
jobs=1
duration=1200
layouts=plain,semisorted,blocked
bits=10
work=/tmp/cuckoo_crashtest
nice_level=19
make_args=DISABLE_WARNING_AS_ERROR=1
extra=
stress_bin=
plugin_lib_given=

usage() {
  sed -n '5,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

args=()
for a in "$@"; do
  case "$a" in
    --link=*) link=${a#*=} ;;
    --libdir=*) libdir=${a#*=} ;;
    --plugin_lib=*) plugin_lib=${a#*=}; plugin_lib_given=1 ;;
    --jobs=*) jobs=${a#*=} ;;
    --duration=*) duration=${a#*=} ;;
    --layouts=*) layouts=${a#*=} ;;
    --bits=*) bits=${a#*=} ;;
    --work=*) work=${a#*=} ;;
    --nice=*) nice_level=${a#*=} ;;
    --make_args=*) make_args=${a#*=} ;;
    --extra=*) extra=${a#*=} ;;
    --stress_bin=*) stress_bin=${a#*=} ;;
    -h|--help) usage ;;
    --*) echo "unknown option $a" >&2; usage ;;
    *) args+=("$a") ;;
  esac
done
[ ${#args[@]} -ge 2 ] || usage
rocksdb=$(cd "${args[0]}" && pwd)
steps=("${args[@]:1}")
[ -f "$rocksdb/db_stress_tool/db_stress.cc" ] ||
  { echo "$rocksdb is not a RocksDB source tree" >&2; exit 2; }
case "$link" in intree|shared) ;; *) echo "--link=intree|shared" >&2; exit 2 ;; esac
mkdir -p "$work"
work=$(cd "$work" && pwd)

version() {  # the tree's version from include/rocksdb/version.h
  local f="$rocksdb/include/rocksdb/version.h" v=()
  for k in MAJOR MINOR PATCH; do
    v+=("$(sed -n "s/^#define ROCKSDB_$k \([0-9]*\).*/\1/p" "$f")")
  done
  echo "${v[0]}.${v[1]}.${v[2]}"
}
tag=$(version)
if [ -z "$stress_bin" ] && [ "$link" = intree ]; then
  stress_bin=$rocksdb/db_stress
elif [ -z "$stress_bin" ]; then
  stress_bin=$work/db_stress-$tag
fi

policy_of() {  # <layout> -> the filter_policy string
  case "$1" in
    plain) echo "cuckoofilter:$bits:$(awk -v b="$bits" \
             'BEGIN { f = int(0.95 * b + 1e-9); if (f > 32) f = 32; print f }'):4:0" ;;
    semisorted) echo "cuckoofilter:$bits" ;;
    blocked) echo "cuckoofilter:$bits:blocked" ;;
    *) echo "unknown layout $1" >&2; exit 2 ;;
  esac
}

# --- install ----------------------------------------------------------------
install_plugin() {
  local dest="$rocksdb/plugin/cuckoo" n=0 f
  mkdir -p "$dest"
  while IFS= read -r -d '' f; do
    [ -f "$here/$f" ] || continue
    if ! cmp -s "$here/$f" "$dest/$f"; then
      mkdir -p "$dest/$(dirname "$f")"
      cp -p "$here/$f" "$dest/$f"
      n=$((n + 1))
    fi
  done < <(git -C "$here" ls-files -z --cached --others --exclude-standard)
  echo "install: $n file(s) updated in $dest"
}

# --- patch ------------------------------------------------------------------
patch_db_stress() {
  python3 - "$rocksdb/db_stress_tool/db_stress_test_base.cc" <<'EOF'
import re, sys
path = sys.argv[1]
src = open(path).read()
marker = "CUCKOO_STRESS_FILTER_POLICY"
if marker in src:
    print("patch: already applied")
    sys.exit(0)
helper = r'''
// Local change for rocksdb-cuckoo's tools/run_db_crashtest.sh (not part of
// RocksDB): the filter policy from $CUCKOO_STRESS_FILTER_POLICY.
__attribute__((unused)) const char* CuckooStressPolicyString() {
  return getenv("CUCKOO_STRESS_FILTER_POLICY");
}
__attribute__((unused)) std::shared_ptr<const FilterPolicy>
CuckooStressPolicy() {
  std::shared_ptr<const FilterPolicy> policy;
  ConfigOptions config;
  Status s = FilterPolicy::CreateFromString(config,
                                            CuckooStressPolicyString(),
                                            &policy);
  if (!s.ok() || !policy ||
      std::string(policy->Name()).rfind("cuckoofilter", 0) != 0) {
    fprintf(stderr, "CUCKOO_STRESS_FILTER_POLICY=%s: %s\n",
            CuckooStressPolicyString(),
            s.ok() ? "not a cuckoo policy (plugin not registered?)"
                   : s.ToString().c_str());
    exit(1);
  }
  fprintf(stdout, "filter policy: %s\n", policy->Name());
  return policy;
}
__attribute__((unused)) std::string CuckooStressFilterOption(
    const char* option) {
  if (CuckooStressPolicyString() == nullptr ||
      std::string(option) == "{filter_policy=nullptr}") {
    return option;
  }
  return std::string("{filter_policy=") + CuckooStressPolicyString() + "}";
}

'''
decl = "std::shared_ptr<const FilterPolicy> CreateFilterPolicy() {"
if decl not in src:
    sys.exit("patch: CreateFilterPolicy() not found; use the OPTIONS file steps")
# SetOptions' table (newer tags): filter policy switches stay cuckoo.
src = re.sub(r'"(\{filter_policy=[^"]*\})"', r'CuckooStressFilterOption("\1")', src)
src = src.replace(decl, helper + decl + "\n  if (CuckooStressPolicyString() != nullptr) return CuckooStressPolicy();", 1)
src = src.replace(
    "bool keepRibbonFilterPolicyOnly = FLAGS_bloom_before_level != INT_MAX;",
    "bool keepRibbonFilterPolicyOnly = FLAGS_bloom_before_level != INT_MAX &&\n"
    "                                    CuckooStressPolicyString() == nullptr;")
if "#include <cstdlib>" not in src:
    src = "#include <cstdlib>\n" + src
open(path, "w").write(src)
print("patch: applied to " + path)
EOF
}

# --- build ------------------------------------------------------------------
build_intree() {
  local start=$SECONDS
  # shellcheck disable=SC2086
  (cd "$rocksdb" &&
    nice -n "$nice_level" make -j"$jobs" CXX="${CXX:-g++}" \
      ROCKSDB_PLUGINS=cuckoo $make_args db_stress)
  echo "build: $stress_bin in $((SECONDS - start)) s"
}

build_shared() {
  local start=$SECONDS objdir="$work/obj-$tag" srcs objs=() f o have soname
  have=$(sed -n 's/^#define ROCKSDB_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' \
           /usr/include/rocksdb/version.h 2>/dev/null | paste -sd.)
  [ "$have" = "$tag" ] ||
    echo "build: warning: installed RocksDB headers are ${have:-absent}, the tree is $tag" >&2
  [ -f "$plugin_lib" ] ||
    { echo "build: $plugin_lib missing (build this repository first)" >&2; exit 1; }
  mkdir -p "$objdir"
  srcs=$(sed -n '/^STRESS_LIB_SOURCES *=/,/^$/p' "$rocksdb/src.mk" |
           grep -o 'db_stress_tool/[a-z_]*\.cc')
  local cxxflags=(-std=c++17 -O2 -g -fno-omit-frame-pointer -fPIC
    -DROCKSDB_PLATFORM_POSIX -DROCKSDB_LIB_IO_POSIX -DOS_LINUX -DGFLAGS=1
    -DROCKSDB_USE_RTTI -I"$rocksdb" -I"$rocksdb/include")
  for f in $srcs db_stress_tool/db_stress.cc; do
    o="$objdir/$(basename "${f%.cc}").o"
    objs+=("$o")
    if [ ! -f "$o" ] || [ "$rocksdb/$f" -nt "$o" ]; then
      echo "  CXX $f"
      nice -n "$nice_level" "${CXX:-g++}" "${cxxflags[@]}" -c "$rocksdb/$f" -o "$o" &
      while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    fi
  done
  wait
  # The plugin library is copied under its soname next to the binary, so
  # that later builds of this repository do not change what the runs load.
  soname=$(objdump -p "$plugin_lib" | awk '/SONAME/ { print $2 }')
  mkdir -p "$work/lib"
  cp "$(readlink -f "$plugin_lib")" "$work/lib/${soname:-librocksdb_cuckoo.so}"
  nice -n "$nice_level" "${CXX:-g++}" -o "$stress_bin" "${objs[@]}" \
    -L"$libdir" -Wl,-rpath,"$libdir" -lrocksdb \
    -Wl,--no-as-needed "$work/lib/${soname:-librocksdb_cuckoo.so}" \
    -Wl,-rpath,"$work/lib" -Wl,--as-needed -lgflags -lpthread
  echo "build: $stress_bin in $((SECONDS - start)) s"
}

# --- runs -------------------------------------------------------------------
# Records a run: <step> <layout> <variant> <seconds> <exit status> <log> <cmd>
record() {
  local step=$1 layout=$2 variant=$3 secs=$4 rc=$5 log=$6 cmd=$7 result=pass
  local failures used
  # Lines that report a failure (the command lines db_crashtest.py echoes
  # name flags such as --verify_checksum: skipped).
  failures=$(grep -v -E "^Running" "$log" |
    grep -c -E "Verification failed|verification failed|Corruption:|Assertion .* failed|assertion .*failed|Segmentation fault|AddressSanitizer|false negative" || true)
  used=$(grep -l -r "cuckoofilter" "$work"/db-"$step"-"$layout"* 2>/dev/null | head -1 || true)
  if [ "$rc" != 0 ]; then result="FAIL (exit $rc)"; fi
  if [ "$failures" != 0 ] && [ "$result" = pass ]; then result="FAIL ($failures suspicious lines)"; fi
  if [ -z "$used" ] && ! grep -q "filter policy: cuckoofilter" "$log"; then
    result="$result; cuckoo policy NOT seen"
  fi
  [ -f "$work/results.tsv" ] ||
    printf 'date\ttag\tstep\tlayout\tvariant\tseconds\tresult\tlog\tcommand\n' >"$work/results.tsv"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$tag" \
    "$step" "$layout" "$variant" "$secs" "$result" "$log" "$cmd" >>"$work/results.tsv"
  echo "$step $layout $variant: $result in ${secs}s ($log)"
}

write_options_file() {  # <layout> <file>: an OPTIONS file naming the policy
  cat >"$2" <<EOF
[Version]
  rocksdb_version=$tag
  options_file_version=1.1

[DBOptions]
  create_if_missing=true
  create_missing_column_families=true

[CFOptions "default"]
  write_buffer_size=4194304
  target_file_size_base=2097152
  max_bytes_for_level_base=10485760

[TableOptions/BlockBasedTable "default"]
  filter_policy=$(policy_of "$1")
  detect_filter_construct_corruption=true
EOF
}

stress_help=
has_flag() {  # <flag>: true if db_stress has --<flag>
  [ -n "$stress_help" ] || stress_help=$("$stress_bin" --help 2>&1 || true)
  grep -q -E "^ +-$1 " <<<"$stress_help"
}

stress() {
  local layout variant dir log opts start rc flags iter
  for layout in ${layouts//,/ }; do
    opts="$work/OPTIONS-$layout"
    write_options_file "$layout" "$opts"
    for variant in plain faults; do
      flags=()
      if [ "$variant" = faults ]; then
        has_flag read_fault_one_in && flags+=(--read_fault_one_in=1000)
        has_flag write_fault_one_in && flags+=(--write_fault_one_in=1000)
        has_flag sync_fault_injection && flags+=(--sync_fault_injection=1)
        [ ${#flags[@]} -gt 0 ] || continue
      else
        # 7.x reads with faults by default: the plain run has none.
        has_flag read_fault_one_in && flags+=(--read_fault_one_in=0)
      fi
      dir="$work/db-stress-$layout-$variant"
      log="$work/stress-$layout-$variant.log"
      rm -rf "$dir" "$dir-exp"
      mkdir -p "$dir-exp"
      # shellcheck disable=SC2206
      local cmd=("$stress_bin" --options_file="$opts" --db="$dir"
        --expected_values_dir="$dir-exp" --threads=4 --max_key=100000
        --reopen=5 --statistics=1
        "${flags[@]}" $extra)
      # 11.8.1's db_stress aborts with --verify_before_write=1 in its first
      # seconds (Assertion `ExpectedValue::IsValueBaseValid(value_base)' in
      # its "Pre-Put Get verification"), with RocksDB's own Bloom filter and
      # without an OPTIONS file too: RocksDB's, so 11.x runs go without it.
      [ "${tag%%.*}" -lt 11 ] && cmd+=(--verify_before_write=1)
      # Needed with --expected_values_dir (7.x checks it).
      has_flag clear_column_family_one_in &&
        cmd+=(--clear_column_family_one_in=0)
      # 11.8.1's db_stress runs compactions through its own remote-compaction
      # worker threads by default (2); a reopen that waits for a compaction
      # holds the test's shared mutex, which those workers need. With faults
      # the runs hung at about 10000 operations per thread (every thread
      # asleep: the reopen in DBImpl::WaitForCompact, the compaction in
      # DbStressCompactionService::Wait, the workers in
      # RemoteCompactionWorkerThread's MutexLock): a wait among db_stress's
      # own threads, no filter code on any stack. Compactions stay local.
      has_flag remote_compaction_worker_threads &&
        cmd+=(--remote_compaction_worker_threads=0)
      start=$SECONDS
      rc=0
      : >"$log"
      if has_flag duration; then
        cmd+=(--duration="$duration" --ops_per_thread=100000000)
        nice -n "$nice_level" "${cmd[@]}" >>"$log" 2>&1 || rc=$?
      else
        # No --duration (7.x): runs of 50000 operations per thread on the
        # same DB and expected state (each verifies the DB when it opens it)
        # until the time is up.
        cmd+=(--ops_per_thread=50000)
        iter=0
        while [ $((SECONDS - start)) -lt "$duration" ] && [ "$rc" = 0 ]; do
          echo "=== run $iter" >>"$log"
          nice -n "$nice_level" "${cmd[@]}" \
            --destroy_db_initially="$([ "$iter" = 0 ] && echo 1 || echo 0)" \
            >>"$log" 2>&1 || rc=$?
          iter=$((iter + 1))
        done
        cmd+=("(repeated $iter times, --destroy_db_initially=1 only the first)")
      fi
      record stress "$layout" "$variant" $((SECONDS - start)) "$rc" "$log" "${cmd[*]}"
    done
  done
}

crashtest() {  # <whitebox|blackbox>
  local mode=$1 layout dir log start rc cmd wrapper
  for layout in ${layouts//,/ }; do
    dir="$work/db-$mode-$layout"
    log="$work/$mode-$layout.log"
    rm -rf "$dir" "$dir-options"
    mkdir -p "$dir" "$dir-options"
    # db_crashtest.py removes the DB after a passing run and, in blackbox
    # mode, prints no db_stress output: a wrapper keeps the OPTIONS files
    # that each db_stress run finds in the DB (written by the run before),
    # as evidence of the policy the runs used.
    wrapper="$work/stress-$mode-$layout.sh"
    cat >"$wrapper" <<EOF
#!/bin/sh
for a in "\$@"; do case "\$a" in --db=*) db="\${a#--db=}" ;; esac; done
[ -n "\$db" ] && cp "\$db"/OPTIONS-* "$dir-options/" 2>/dev/null
exec "$stress_bin" "\$@"
EOF
    chmod +x "$wrapper"
    # shellcheck disable=SC2206
    cmd=(python3 "$rocksdb/tools/db_crashtest.py" "$mode"
      --stress_cmd="$wrapper" --duration="$duration" $extra)
    start=$SECONDS
    rc=0
    (cd "$rocksdb" && TEST_TMPDIR="$dir" \
      CUCKOO_STRESS_FILTER_POLICY="$(policy_of "$layout")" \
      nice -n "$nice_level" "${cmd[@]}") >"$log" 2>&1 || rc=$?
    record "$mode" "$layout" "-" $((SECONDS - start)) "$rc" "$log" \
      "TEST_TMPDIR=$dir CUCKOO_STRESS_FILTER_POLICY=$(policy_of "$layout") ${cmd[*]}"
  done
}

# A --plugin_lib for runs without the build step: a copy under its SONAME
# in a directory of its own, searched before the RUNPATH.
if [ "$link" = shared ] && [ -n "$plugin_lib_given" ] &&
  [[ " ${steps[*]} " != *" build "* ]]; then
  [ -f "$plugin_lib" ] || { echo "$plugin_lib missing" >&2; exit 2; }
  run_soname=$(objdump -p "$plugin_lib" | awk '/SONAME/ { print $2 }')
  mkdir -p "$work/lib-run"
  cp "$(readlink -f "$plugin_lib")" \
    "$work/lib-run/${run_soname:-librocksdb_cuckoo.so}"
  export LD_LIBRARY_PATH="$work/lib-run${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "runs load $plugin_lib (LD_LIBRARY_PATH=$work/lib-run)"
fi

for step in "${steps[@]}"; do
  case "$step" in
    install) install_plugin ;;
    patch) patch_db_stress ;;
    build) if [ "$link" = intree ]; then build_intree; else build_shared; fi ;;
    stress) stress ;;
    whitebox|blackbox) crashtest "$step" ;;
    *) echo "unknown step $step" >&2; usage ;;
  esac
done
