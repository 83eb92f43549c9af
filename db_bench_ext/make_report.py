#!/usr/bin/env python3
# Copyright (c) 2026 the rocksdb-cuckoo authors
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

"""make_report.py: turns the CSV files of one comparison run into report.md
and PNG plots (gnuplot), and checks that every table has every row.

    make_report.py --out=DIR [--check] [--meta=KEY=VALUE ...]

Inputs in DIR (written by run_comparison.sh; columns are documented at the
top of each tool's source):
  filter_bench.csv        db_bench_ext/filter_bench.cc (tidy: table,metric,value)
  filter_bench_dram.csv   the same at DRAM scale (tables larger than the caches)
  policy_dram.csv         db_bench_ext/policy_bench.cc at DRAM scale, many filters
  policy_dram_single.csv  the same, one large filter
  table3.csv              db_bench_ext/policy_bench.cc at equal memory
  fpr_curve.csv           db_bench_ext/policy_bench.cc over a bits/key sweep
  sst_db_bench.csv        db_bench_ext/run_stock_db_bench.sh
  churn_summary.csv, churn_timeline.csv, churn_counting_bloom.csv
                          db_bench_ext/churn_bench.cc
  scale.csv               db_bench_ext/scale_bench.cc (one row per DB size)
Outputs in DIR: report.md, plot data files (*.dat) and *.png.

Every number in the report is read from these files; the only constants are
the paper's figures, printed in a column labelled as such, and the 1.0.0
targets for the live filter at scale, in a column labelled "target".
"""
import argparse
import csv
import math
import os
import statistics
import subprocess
import sys

# The paper's Table 3 (CoNEXT 2014, 192 MB filters, 2014 hardware): only
# printed in a column labelled "paper".
PAPER = {
    "cuckoo_plain": "12.60 bits, 0.19%, 5.00 Mkeys/s",
    "cuckoo": "12.58 bits, 0.09%, 3.13 Mkeys/s",
}

POLICY_LABEL = {
    "bloom": "RocksDB Bloom (format 5)",
    "ribbon": "RocksDB Ribbon",
    "cuckoo": "cuckoo, semi-sorted (b=4)",
    "cuckoo_plain": "cuckoo (b=4)",
    "cuckoo_blocked": "cuckoo, blocked (one 64-byte block)",
}
TABLE3_POLICIES = ["cuckoo_plain", "cuckoo", "bloom", "ribbon"]
CURVE_POLICIES = ["bloom", "ribbon", "cuckoo", "cuckoo_plain"]
SST_POLICIES = ["bloom", "ribbon", "cuckoo", "cuckoo_plain", "cuckoo_blocked"]
CHURN_MODES = ["plain", "bloom", "bloom_norebuild", "cuckoo", "cuckoo_unique"]
CORE_CONFIGS = ["f12b4", "ss13b4"]
DRAM_POLICIES = ["bloom", "cuckoo", "cuckoo_plain", "cuckoo_blocked"]


class Problems:
    def __init__(self):
        self.items = []

    def add(self, msg):
        self.items.append(msg)


def read_csv(path, problems):
    if not os.path.exists(path):
        problems.add(f"missing file {os.path.basename(path)}")
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(value, default=float("nan")):
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def fmt(value, digits=2):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float):
        if value != 0 and abs(value) < 10 ** -digits:
            return f"{value:.{digits}g}"
        return f"{value:,.{digits}f}"
    return str(value)


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def gnuplot(out_dir, name, script, problems):
    path = os.path.join(out_dir, name + ".gp")
    with open(path, "w") as f:
        f.write(script)
    try:
        subprocess.run(["gnuplot", path], cwd=out_dir, check=True,
                       capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        problems.add(f"gnuplot failed for {name}: {e}")
        return
    if not os.path.exists(os.path.join(out_dir, name + ".png")):
        problems.add(f"plot {name}.png was not written")


def write_dat(out_dir, name, columns, rows):
    with open(os.path.join(out_dir, name), "w") as f:
        f.write("# " + " ".join(columns) + "\n")
        for r in rows:
            f.write(" ".join(str(c) for c in r) + "\n")


PNG_HEADER = ('set terminal pngcairo size 900,560 font "sans,10" noenhanced\n'
              'set grid\nset key top right\n')


# ----------------------------------------------------------------- phase 1

def core_summary(rows, problems, source="filter_bench"):
    """filter_bench summary rows -> {config: {metric: value}}."""
    out = {}
    for r in rows:
        if r.get("table") == "summary":
            out.setdefault(r["config"], {})[r["metric"]] = num(r["value"])
    for c in CORE_CONFIGS:
        if c not in out:
            problems.add(f"{source}: no summary for {c}")
    return out


def policy_rows(rows, policies, source, problems):
    """(policy, row) of policy_bench rows in the order of `policies`; a
    missing policy is a problem."""
    by_policy = {r["policy"]: r for r in rows}
    for p in policies:
        if p not in by_policy:
            problems.add(f"{source}: no row for {p}")
        else:
            yield p, by_policy[p]


def core_lookups(rows):
    """(config, mode, found) -> {metric: value} for the lookup table."""
    out = {}
    for r in rows:
        if r.get("table") == "lookup":
            key = (r["config"], r["mode"], num(r["x"]))
            out.setdefault(key, {})[r["metric"]] = num(r["value"])
    return out


def section_filter_level(out_dir, fb_rows, t3_rows, curve_rows, problems):
    lines = ["## 1. Filter level", ""]

    # Table 3 at equal memory, through RocksDB's FilterBitsBuilder/Reader.
    table = []
    for p, r in policy_rows(t3_rows, TABLE3_POLICIES, "table3", problems):
        build_ns = num(r["build_ns"])
        paper = PAPER.get(p)
        table.append([
            POLICY_LABEL[p], r["name"], fmt(num(r["bits_per_key"])),
            fmt(num(r["fpr_percent"]), 3),
            fmt(1000.0 / build_ns if build_ns > 0 else float("nan")),
            fmt(1000.0 / num(r["pos_ns"])), fmt(1000.0 / num(r["neg_ns"])),
            fmt(1000.0 / num(r["batch_pos_ns"])),
            fmt(1000.0 / num(r["batch_neg_ns"])),
            paper or "-",
        ])
    keys = t3_rows[0]["keys"] if t3_rows else "?"
    lines += [
        "### 1a. The paper's Table 3, on this machine",
        "",
        f"The same {keys} keys through RocksDB's FilterBitsBuilder/Reader "
        "interface (key hashing included) at equal memory: every policy got "
        f"the bits/key of the plain f=12 b=4 cuckoo filter at 95% load "
        f"(12/0.95); Ribbon, whose argument is a Bloom-equivalent accuracy, "
        f"got the argument that makes its measured size match. "
        "Construction = AddKey for every key + Finish. Lookups in Mops/s "
        "(single MayMatch and batched MayMatch as MultiGet uses it).",
        "",
        md_table(["filter", "policy name", "bits/item", "FPR %",
                  "construction Mkeys/s", "pos Mops/s", "neg Mops/s",
                  "batched pos Mops/s", "batched neg Mops/s",
                  "paper (Table 3, 2014 hardware)"], table),
        "",
    ]

    # Core filter alone (no RocksDB): filter_bench.
    summ = core_summary(fb_rows, problems)
    look = core_lookups(fb_rows)
    core_table = []
    for c in sorted(summ, key=lambda c: (c not in CORE_CONFIGS, c)):
        s = summ[c]
        single0 = look.get((c, "single", 0.0), {}).get("ns_per_op")
        batch0 = [v.get("ns_per_op") for (cc, m, x), v in look.items()
                  if cc == c and x == 0.0 and m.startswith("batch")]
        single1 = look.get((c, "single", 1.0), {}).get("ns_per_op")
        best_batch0 = min(batch0) if batch0 else float("nan")
        core_table.append([
            c, fmt(s.get("load_factor", float("nan")) * 100, 1),
            fmt(s.get("bits_per_item")), fmt(s.get("fpr_measured", float("nan")) * 100, 4),
            fmt(s.get("fpr_expected", float("nan")) * 100, 4),
            fmt(s.get("construct_mkeys_per_s")),
            fmt(single0, 1), fmt(single1, 1), fmt(best_batch0, 1),
            fmt(single0 / best_batch0 if single0 and best_batch0 else float("nan")),
        ])
    n_items = fb_rows[0]["num"] if fb_rows else "?"
    lines += [
        "### 1b. The core filter alone",
        "",
        f"db_bench_ext/filter_bench, {n_items} items per filter (hashes are "
        "pre-computed; medians of the repetitions).",
        "",
        md_table(["config", "load %", "bits/item", "FPR %", "expected FPR %",
                  "construction Mkeys/s", "single neg ns", "single pos ns",
                  "batched neg ns", "batched/single speedup (neg)"], core_table),
        "",
    ]

    # FPR versus bits/key.
    curve = {}
    for r in curve_rows:
        curve.setdefault(r["policy"], {})[num(r["bits_per_key_arg"])] = r
    bits_values = sorted({b for p in curve.values() for b in p})
    for p in CURVE_POLICIES:
        for b in bits_values:
            if b not in curve.get(p, {}):
                problems.add(f"fpr_curve: no row for {p} at {b} bits/key")
    rows = []
    for b in bits_values:
        row = [fmt(b, 0)]
        for p in CURVE_POLICIES:
            r = curve.get(p, {}).get(b)
            row.append(fmt(num(r["fpr_percent"]), 4) if r else "n/a")
            if p != "bloom":
                row.append(fmt(num(r["bits_per_key"])) if r else "n/a")
        rows.append(row)
    write_dat(out_dir, "fpr_curve.dat",
              ["bits"] + [f"{p}_fpr {p}_bits" for p in CURVE_POLICIES],
              [[b] + [x for p in CURVE_POLICIES for x in (
                  num(curve.get(p, {}).get(b, {}).get("fpr_percent")),
                  num(curve.get(p, {}).get(b, {}).get("bits_per_key")))]
               for b in bits_values])
    plot = PNG_HEADER + (
        'set output "fpr_vs_bits.png"\nset logscale y\n'
        'set xlabel "filter size, bits per key (measured)"\n'
        'set ylabel "false positive rate, % (log)"\n'
        'set title "FPR versus space"\n'
        'plot ' + ", ".join(
            f'"fpr_curve.dat" using {3 + 2 * i}:{2 + 2 * i} with linespoints '
            f'title "{POLICY_LABEL[p]}"' for i, p in enumerate(CURVE_POLICIES)) + "\n")
    gnuplot(out_dir, "fpr_vs_bits", plot, problems)

    crossover = crossover_point(curve)
    lines += [
        "### 1c. False positive rate versus bits/key",
        "",
        "Same key set, each policy given the bits/key of the first column "
        "(its measured size is next to its FPR). ![FPR vs bits/key](fpr_vs_bits.png)",
        "",
        md_table(["bits/key given", "Bloom FPR %", "Ribbon FPR %",
                  "Ribbon bits/key", "semi-sorted cuckoo FPR %",
                  "semi-sorted cuckoo bits/key", "cuckoo FPR %",
                  "cuckoo bits/key"], rows),
        "",
    ]
    if crossover:
        lines.append(
            f"**Crossover**: from {fmt(crossover['bits'], 0)} bits/key on, the "
            f"semi-sorted cuckoo filter has a lower FPR than Bloom at the same "
            f"size (at {fmt(crossover['bits'], 0)} bits/key: Bloom "
            f"{fmt(crossover['bloom_fpr'], 2)}%, cuckoo "
            f"{fmt(crossover['cuckoo_fpr'], 2)}%). Interpolating between the "
            f"measured points, the curves cross near "
            f"{fmt(crossover['crossing_bits'], 1)} bits/key, where Bloom's FPR "
            f"is about {fmt(crossover['crossing_fpr'], 2)}%: below that FPR the "
            f"semi-sorted cuckoo filter is the smaller filter, above it Bloom "
            f"is. The paper puts the crossover near 3%. Fingerprints take "
            f"every width from 4 to 32 bits (semi-sorted up to 16, plain "
            f"packed buckets above), so every added bit per key keeps "
            f"lowering the cuckoo FPR.")
    else:
        lines.append("**Crossover**: the semi-sorted cuckoo filter never beat "
                     "Bloom's FPR in the measured range.")
    lines.append("")

    # Occupancy sweeps from filter_bench.
    lines += occupancy_plots(out_dir, fb_rows, problems)
    return "\n".join(lines), crossover


def crossover_point(curve):
    """Where the semi-sorted cuckoo filter's FPR curve crosses Bloom's: the
    last bits/key at which cuckoo is not better, the first from which it stays
    better, and Bloom's FPR at the crossing (log-linear interpolation)."""
    bloom, ss = curve.get("bloom", {}), curve.get("cuckoo", {})
    common = sorted(set(bloom) & set(ss))
    wins = [num(ss[b]["fpr_percent"]) < num(bloom[b]["fpr_percent"]) for b in common]
    if not common or not wins[-1]:
        return None
    first = len(common) - 1
    while first > 0 and wins[first - 1]:
        first -= 1
    b1 = common[first]
    point = {"bits": b1, "bloom_fpr": num(bloom[b1]["fpr_percent"]),
             "cuckoo_fpr": num(ss[b1]["fpr_percent"])}
    if first == 0:
        point["crossing_fpr"] = point["bloom_fpr"]
        point["crossing_bits"] = b1
        return point
    b0 = common[first - 1]
    # d(b) = log(cuckoo/bloom): >= 0 at b0, < 0 at b1.
    d0 = math.log(num(ss[b0]["fpr_percent"]) / num(bloom[b0]["fpr_percent"]))
    d1 = math.log(point["cuckoo_fpr"] / point["bloom_fpr"])
    t = d0 / (d0 - d1) if d0 != d1 else 1.0
    lb0, lb1 = math.log(num(bloom[b0]["fpr_percent"])), math.log(point["bloom_fpr"])
    point["crossing_bits"] = b0 + t * (b1 - b0)
    point["crossing_fpr"] = math.exp(lb0 + t * (lb1 - lb0))
    return point


def occupancy_plots(out_dir, fb_rows, problems):
    configs = sorted({r["config"] for r in fb_rows})
    ins, look = {}, {}
    for r in fb_rows:
        if r.get("table") == "insert_band" and r["metric"] == "mops":
            ins.setdefault(r["config"], []).append((num(r["x"]), num(r["value"])))
        if r.get("table") == "lookup_occupancy" and r["metric"] == "mops":
            look.setdefault((r["config"], r["mode"]), []).append(
                (num(r["x"]), num(r["value"])))
    for c in CORE_CONFIGS:
        if c not in ins:
            problems.add(f"filter_bench: no insert_band rows for {c}")
        if not any(k[0] == c for k in look):
            problems.add(f"filter_bench: no lookup_occupancy rows for {c}")
    series_ins, series_look = [], []
    for c in configs:
        if c in ins:
            name = f"insert_{c}.dat"
            write_dat(out_dir, name, ["occupancy", "mops"], sorted(ins[c]))
            series_ins.append(f'"{name}" using ($1*100):2 with linespoints title "{c}"')
    for (c, mode) in sorted(look):
        if c not in CORE_CONFIGS:
            continue
        name = f"lookup_{c}_{mode.replace('/', '_')}.dat"
        write_dat(out_dir, name, ["occupancy", "mops"], sorted(look[(c, mode)]))
        series_look.append(
            f'"{name}" using ($1*100):2 with linespoints title "{c} {mode}"')
    if series_ins:
        gnuplot(out_dir, "insert_vs_occupancy", PNG_HEADER + (
            'set output "insert_vs_occupancy.png"\n'
            'set xlabel "occupancy at the end of the band, %"\n'
            'set ylabel "insert throughput, Mkeys/s"\n'
            'set title "Insert speed as the filter fills"\n'
            'plot ' + ", ".join(series_ins) + "\n"), problems)
    if series_look:
        gnuplot(out_dir, "lookup_vs_occupancy", PNG_HEADER + (
            'set output "lookup_vs_occupancy.png"\nset key outside right\n'
            'set xlabel "occupancy, %"\nset ylabel "lookup throughput, Mops/s"\n'
            'set title "Lookup speed versus occupancy"\n'
            'plot ' + ", ".join(series_look) + "\n"), problems)
    return ["### 1d. Speed versus occupancy", "",
            "From filter_bench's fill sweep: a filter filled until its first "
            "failed insert, insert throughput per 10% band, and lookup "
            "throughput (single and batched, absent and present keys) at the "
            "end of each band.", "",
            "![insert throughput vs occupancy](insert_vs_occupancy.png)", "",
            "![lookup throughput vs occupancy](lookup_vs_occupancy.png)", ""]


# ----------------------------------------------------------------- phase 2

# Read ratios against Bloom within this band count as "as fast as Bloom".
READ_TIE = 0.03
SST_CUCKOO = [p for p in SST_POLICIES if p.startswith("cuckoo")]
READ_BENCHES = [("readmissing", "readmissing_vs_bloom"),
                ("readrandom", "readrandom_vs_bloom"),
                ("multiread", "multireadrandom_vs_bloom")]


def speed_words(lo, hi):
    """How read-throughput ratios lo..hi against Bloom compare, in words."""
    if hi < 1 - READ_TIE:
        return "slower than Bloom"
    if lo > 1 + READ_TIE:
        return "faster than Bloom"
    if lo >= 1 - READ_TIE and hi <= 1 + READ_TIE:
        return f"as fast as Bloom (within {READ_TIE * 100:.0f}%)"
    return "slower than Bloom in some benchmarks and not in others"


def sst_verdict(by, bits_values, t3_rows):
    """The verdict of section 2, every claim computed from the run's rows."""
    verdict = []
    all_ratios = []
    fpr_not_lower = []  # cuckoo policies whose FPR is not below Bloom's
    for b in bits_values:
        bl = by.get((b, "bloom"))
        cuckoos = [(p, by[(b, p)]) for p in SST_CUCKOO if (b, p) in by]
        if not (bl and cuckoos):
            continue
        fpr_not_lower += [
            POLICY_LABEL[p] for p, r in cuckoos
            if not num(r["measured_fpr_percent"]) <
            num(bl["measured_fpr_percent"]) and
            POLICY_LABEL[p] not in fpr_not_lower]
        ratios = [num(r[col]) for _, r in cuckoos for _, col in READ_BENCHES]
        ratios = [x for x in ratios if not math.isnan(x)]
        if not ratios:
            continue
        all_ratios += ratios
        lo, hi = min(ratios), max(ratios)
        per_policy = ", ".join(
            f"{POLICY_LABEL[p]} " + " / ".join(
                fmt(num(r[col])) for _, col in READ_BENCHES) +
            f"x at FPR {fmt(num(r['measured_fpr_percent']), 3)}%"
            for p, r in cuckoos)
        verdict.append(
            f"at {fmt(b, 0)} bits/key the cuckoo policies read at "
            f"{fmt(lo)}-{fmt(hi)}x Bloom's ops/s, **{speed_words(lo, hi)}** "
            f"({' / '.join(n for n, _ in READ_BENCHES)}: {per_policy}; "
            f"Bloom's FPR {fmt(num(bl['measured_fpr_percent']), 3)}%)")
    for b in bits_values:
        bl, ri = by.get((b, "bloom")), by.get((b, "ribbon"))
        if bl and ri:
            verdict.append(
                f"Ribbon reached Bloom's {fmt(b, 0)}-bit FPR "
                f"({fmt(num(ri['measured_fpr_percent']), 3)}% vs "
                f"{fmt(num(bl['measured_fpr_percent']), 3)}%) with "
                f"{fmt(num(ri['filter_bits_per_key']))} bits/key")
    t3 = {r["policy"]: r for r in t3_rows}
    builds = {p: 1000 / num(r["build_ns"]) for p, r in t3.items()
              if num(r["build_ns"]) > 0}
    if "ribbon" in t3 and "cuckoo" in t3:
        verdict.append(
            f"at equal memory (Table 3) Ribbon's FPR is "
            f"{fmt(num(t3['ribbon']['fpr_percent']), 3)}% against "
            f"{fmt(num(t3['cuckoo']['fpr_percent']), 3)}% for semi-sorted "
            f"cuckoo, and it builds at "
            f"{fmt(builds.get('ribbon', float('nan')))} Mkeys/s against "
            f"{fmt(builds.get('cuckoo', float('nan')))} and "
            f"{fmt(builds.get('bloom', float('nan')))} (Bloom)")
    if not verdict:
        return []
    text = ("**Verdict for the immutable case**: " + "; ".join(verdict) +
            ". SST filters are built once and never deleted from, so "
            "cuckoo's deletability buys nothing here.")
    if all_ratios:
        lo, hi = min(all_ratios), max(all_ratios)
        if lo < 1 - READ_TIE and hi <= 1 + READ_TIE:
            text += (f" The cuckoo policies read more slowly than Bloom in "
                     f"this run (down to {fmt(lo)}x): a lower FPR than "
                     f"Bloom's at the same size pays only where a false "
                     f"positive costs more than the slower probe, e.g. a "
                     f"read from disk.")
        elif lo >= 1 - READ_TIE:
            text += (" The cuckoo policies read at least as fast as Bloom in "
                     "this run, so a lower FPR than Bloom's at the same "
                     "size is a gain.")
        else:
            text += (f" The cuckoo policies' read throughput ranges from "
                     f"{fmt(lo)}x to {fmt(hi)}x Bloom's in this run.")
    if fpr_not_lower:
        text += (f" Not below Bloom's FPR at some bits/key: "
                 f"{', '.join(fpr_not_lower)}.")
    if builds:
        fastest = max(builds, key=builds.get)
        text += (f" The cheapest filter to build here is "
                 f"{POLICY_LABEL.get(fastest, fastest)} (Table 3)")
        ribbon = [(b, by[(b, "ribbon")], by.get((b, "bloom")))
                  for b in bits_values if (b, "ribbon") in by]
        if ribbon and all(
                bl and num(r["filter_bits_per_key"]) < b and
                num(r["measured_fpr_percent"]) <=
                1.1 * num(bl["measured_fpr_percent"])
                for b, r, bl in ribbon):
            text += "; Ribbon is the smallest filter for Bloom's FPR"
        text += "."
    return [text]


def section_sst(rows, t3_rows, problems):
    lines = ["## 2. Immutable case: SST filter blocks (stock db_bench)", ""]
    by = {}
    for r in rows:
        by[(num(r["bits_per_key"]), r["policy"])] = r
    bits_values = sorted({b for b, _ in by})
    for b in bits_values:
        for p in SST_POLICIES:
            if (b, p) not in by:
                problems.add(f"sst_db_bench: no row for {p} at {b} bits/key")
    if not rows:
        problems.add("sst_db_bench: no rows")
    table = []
    for b in bits_values:
        for p in SST_POLICIES:
            r = by.get((b, p))
            if r is None:
                continue
            useful, pos = num(r["useful"], 0), num(r["full_positive"], 0)
            checked = useful + pos
            table.append([
                fmt(b, 0), POLICY_LABEL[p], fmt(num(r["fillrandom_ops"]), 0),
                fmt(num(r["readrandom_ops"]), 0), fmt(num(r["readmissing_ops"]), 0),
                fmt(num(r["multireadrandom_ops"]), 0),
                fmt(num(r["filter_bits_per_key"])),
                fmt(useful / checked * 100 if checked else float("nan"), 1),
                fmt(num(r["measured_fpr_percent"]), 3),
                fmt(num(r["readrandom_vs_bloom"])), fmt(num(r["readmissing_vs_bloom"])),
                fmt(num(r["multireadrandom_vs_bloom"])),
            ])
    lines += [
        "Debian's stock `db_bench` (assertions enabled: absolute numbers are "
        "pessimistic, compare the ratios), one fresh DB per policy, the "
        "cuckoo policy loaded with `LD_PRELOAD=librocksdb_cuckoo.so` and an "
        "OPTIONS file. Ops/s; filter bits/key from sst_dump; useful = share "
        "of filter checks answered \"absent\".",
        "",
        md_table(["bits/key", "policy", "fillrandom", "readrandom",
                  "readmissing", "multireadrandom", "filter bits/key",
                  "useful %", "FPR %", "readrandom vs Bloom",
                  "readmissing vs Bloom", "multiread vs Bloom"], table),
        "",
    ]
    lines += sst_verdict(by, bits_values, t3_rows)
    lines.append("")
    return "\n".join(lines)


# ----------------------------------------------------------------- phase 3

def section_churn(out_dir, summary, timeline, counting, problems):
    lines = ["## 3. Mutable case: live keys under churn", ""]
    by = {r["mode"]: r for r in summary}
    for m in CHURN_MODES:
        if m not in by and not (m == "bloom_norebuild"):
            problems.add(f"churn_summary: no row for {m}")
    table = []
    for m in CHURN_MODES:
        r = by.get(m)
        if r is None:
            continue
        filtered = m != "plain"
        pct = lambda key: fmt(num(r[key]) * 100, 3) if filtered else "no filter"
        table.append([
            m, fmt(num(r["writes_per_sec"]), 0), fmt(num(r["write_ratio_vs_plain"])),
            fmt(num(r["maybe_checks_per_write"]), 3),
            fmt(num(r["neg_gets_per_sec"]), 0), fmt(num(r["neg_get_p50_ns"]), 0),
            fmt(num(r["neg_get_p99_ns"]), 0), fmt(num(r["neg_speedup_vs_plain"])),
            pct("fpr_after_fill"), pct("fpr_after_churn"), pct("fpr_max"),
            fmt(num(r["bits_per_live_key"])) if filtered else "-",
            r.get("errors", "n/a"),
        ])
    lines += [
        "db_bench_ext/churn_bench: a sliding window of live keys (insert a "
        "new key, delete the oldest), all modes in one process on the same "
        "key sequence. Negative Gets ask for deleted and never-inserted keys.",
        "",
        md_table(["mode", "writes/s", "write ratio vs plain",
                  "maybe-checks/write", "neg Gets/s", "neg p50 ns",
                  "neg p99 ns", "neg speedup vs plain", "FPR after fill %",
                  "FPR after churn %", "max FPR %", "bits/live key",
                  "errors"], table),
        "",
    ]
    # Counting Bloom.
    sel = [r for r in counting if r.get("selected") in ("1", "true", "yes")]
    if not counting:
        problems.add("churn_counting_bloom: no rows")
    if sel:
        r = sel[0]
        lines += [
            f"Counting Bloom filter (4-bit counters, deletable) at the cuckoo "
            f"filter's FPR ({fmt(num(r['cuckoo_fpr']) * 100, 3)}%): "
            f"{fmt(num(r['bits_per_key']))} bits/key measured FPR "
            f"{fmt(num(r['fpr_never_inserted']) * 100, 3)}%, vs the cuckoo "
            f"filter's {fmt(num(r['cuckoo_bits_per_key']))} bits/key: "
            f"**{fmt(num(r['ratio_bits_vs_cuckoo']))}x** the space.", ""]
    # FPR over time plot.
    series = []
    modes = sorted({r["mode"] for r in timeline})
    for m in modes:
        if m == "plain":
            continue
        pts = [(num(r["writes_done"]), num(r["fpr_never_inserted"]) * 100)
               for r in timeline if r["mode"] == m]
        name = f"churn_fpr_{m}.dat"
        write_dat(out_dir, name, ["writes_done", "fpr_percent"], sorted(pts))
        series.append(f'"{name}" using 1:2 with linespoints title "{m}"')
    if not series:
        problems.add("churn_timeline: no filtered mode rows")
    else:
        gnuplot(out_dir, "fpr_over_time", PNG_HEADER + (
            'set output "fpr_over_time.png"\nset logscale y\n'
            'set xlabel "writes (after the initial fill)"\n'
            'set ylabel "FPR on never-inserted keys, % (log)"\n'
            'set title "Front-filter FPR under churn"\n'
            'plot ' + ", ".join(series) + "\n"), problems)
    lines += ["![FPR over time under churn](fpr_over_time.png)", ""]
    cu, pl = by.get("cuckoo"), by.get("plain")
    norebuild = sorted((num(r["writes_done"]), num(r["fpr_never_inserted"]))
                       for r in timeline if r["mode"] == "bloom_norebuild")
    if cu and pl:
        v = (f"**Verdict for the mutable case**: the cuckoo live-key filter "
             f"answers negative Gets {fmt(num(cu['neg_speedup_vs_plain']))}x "
             f"faster than plain RocksDB; its FPR moved "
             f"{fmt(num(cu['fpr_change_pct']), 1)}% over the churn at "
             f"{fmt(num(cu['bits_per_live_key']))} bits per live key")
        if norebuild:
            v += (f", while the same Bloom filter never rebuilt went from "
                  f"{fmt(norebuild[0][1] * 100, 3)}% to "
                  f"{fmt(norebuild[-1][1] * 100, 3)}%")
        if sel:
            v += (f"; a deletable counting Bloom filter needs "
                  f"{fmt(num(sel[0]['ratio_bits_vs_cuckoo']))}x its space for "
                  f"the same FPR")
        bl = by.get("bloom")
        if bl:
            v += (f". A Bloom front filter rebuilt from the DB answers about "
                  f"as fast ({fmt(num(bl['neg_speedup_vs_plain']))}x) at the "
                  f"same bits/key, but only by scanning the DB "
                  f"{fmt(num(bl['rebuilds']), 0)} times "
                  f"({fmt(num(bl['rebuild_seconds']))} s), and its FPR "
                  f"reaches {fmt(num(bl['fpr_max']) * 100, 3)}% before each "
                  f"rebuild against the cuckoo filter's maximum of "
                  f"{fmt(num(cu['fpr_max']) * 100, 3)}%")
        ub = by.get("cuckoo_unique")
        v += (f". Writes run at {fmt(num(cu['write_ratio_vs_plain']))}x of "
              f"plain RocksDB with exact maybe-checks")
        if ub:
            v += (f" and {fmt(num(ub['write_ratio_vs_plain']))}x with "
                  f"assume_unique_writes")
        lines += [v + ".", ""]
    return "\n".join(lines)


# ----------------------------------------------------------------- phase 4

# (label, scale.csv column, digits, 1.0.0 target or ""); a label starting
# with "**" opens a group of rows.
SCALE_ROWS = [
    ("**DB**", None, 0, ""),
    ("keys", "keys", 0, ""),
    ("SST files per level (L0/L1/...)", "levels_files", None, ""),
    ("MB per level", "levels_mb", None, ""),
    ("build by random Puts, s", "build_s", 1, ""),
    ("**Open after a clean close**", None, 0, ""),
    ("plain DB::Open, s", "open_clean_plain_s", 3, ""),
    ("FilteredDB::Open (snapshot), s", "open_clean_filtered_s", 3, ""),
    ("ratio filtered / plain", "open_clean_ratio", 2, ""),
    ("snapshot at open", "open_clean_snapshot", None, ""),
    ("**Open after a kill**", None, 0, ""),
    ("writes before the kill (WAL MB)", "kill_writes", 0, ""),
    ("plain DB::Open, s", "open_kill_plain_s", 3, ""),
    ("FilteredDB::Open, no checkpoint, s", "open_kill_filtered_s", 3, ""),
    ("ratio filtered / plain", "open_kill_ratio", 2, "≤ 1.5"),
    ("kill → filter active, no checkpoint, s", "kill_active_s", 3, ""),
    ("FilteredDB::Open, checkpoint before the writes, s",
     "open_ckpt_filtered_s", 3, ""),
    ("ratio filtered / plain", "open_ckpt_ratio", 2, "≤ 1.5"),
    ("kill → filter active, checkpoint before the writes, s",
     "ckpt_active_s", 3, ""),
    ("... ÷ a full rebuild scan", "ckpt_active_vs_rebuild", 3, "≤ 0.1 at 16M"),
    ("checkpoint at open", "ckpt_snapshot", None, ""),
    ("full rebuild scan (RebuildFilter), s", "rebuild_scan_s", 3, ""),
    ("keys scanned per second", "rebuild_keys_per_s", 0, ""),
    ("**Checkpoint stall (PersistFilterSnapshots, one writer)**", None, 0, ""),
    ("checkpoint, s", "persist_s", 3, ""),
    ("worst write during a checkpoint, ms", "write_worst_during_ms", 2, ""),
    ("worst write outside, ms", "write_worst_outside_ms", 2, ""),
    ("ratio worst during / worst outside", "stall_worst_ratio", 1, "≤ 2"),
    ("p99 write during / outside, ms", "write_p99_during_ms", 3, ""),
    ("**Memory**", None, 0, ""),
    ("bits per live key after Open", "bits_per_key_open", 2, "≤ 14"),
    ("filter memory after Open, MB", "memory_mb_open", 2, ""),
    ("bits per live key after a growth", "bits_per_key_grown", 2, ""),
    ("keys the growth read from the DB", "growth_keys_scanned", 0, "0"),
    ("**Negative Gets (8 MB block cache)**", None, 0, ""),
    ("plain Gets/s", "neg_plain_ops", 0, ""),
    ("FilteredDB Gets/s", "neg_filtered_ops", 0, ""),
    ("speedup", "neg_speedup", 2, "≥ 10 at 16M"),
    ("plain MultiGet, keys/s", "neg_mget_plain_ops", 0, ""),
    ("FilteredDB MultiGet, keys/s", "neg_mget_filtered_ops", 0, ""),
    ("MultiGet speedup", "neg_mget_speedup", 2, "≥ 10 at 16M"),
    ("**Probe vs memory limit (probe_limit.h)**", None, 0, ""),
    ("filter table, MB", "probe_table_mb", 1, ""),
    ("single MayContain in a loop, ns", "probe_single_ns", 1, ""),
    ("two independent random loads, ns", "probe_loads_ns", 1, ""),
    ("single ÷ two random loads", "probe_vs_limit", 2, "≤ 2 at 16M"),
    ("serialized (LFENCE) ÷ serialized loads", "probe_serial_vs_limit", 2,
     "≤ 1.2 at 16M"),
    ("batched ÷ single", "probe_batch_vs_single", 2, "≤ 1"),
    ("**Checks**", None, 0, ""),
    ("keys missed by reads (false negatives)", "errors", 0, "0"),
    ("time for this size, s", "seconds", 0, ""),
]
# The probe columns stay empty where scale_bench was built without the probe
# timing header (then for every size); the serialized probe needs x86-64.
SCALE_PROBE = {"probe_table_mb", "probe_single_ns", "probe_loads_ns",
               "probe_vs_limit", "probe_batch_vs_single"}
SCALE_OPTIONAL = {"probe_serial_vs_limit"}


def scale_cell(r, column, digits):
    value = r.get(column, "")
    if column == "kill_writes" and value:
        return f"{fmt(num(value), 0)} ({r.get('kill_wal_mb', '?')})"
    if column == "write_p99_during_ms" and value:
        return (f"{fmt(num(value), 3)} / "
                f"{fmt(num(r.get('write_p99_outside_ms')), 3)}")
    if value == "":
        return "n/a"
    return value if digits is None else fmt(num(value), digits)


def section_scale(rows, problems):
    lines = ["## 4. The live filter at scale", ""]
    if not rows:
        problems.add("scale: no rows")
        return "\n".join(lines)
    probed = any(r.get("probe_vs_limit") for r in rows)
    optional = SCALE_OPTIONAL | (set() if probed else SCALE_PROBE)
    for r in rows:
        for _, column, _, _ in SCALE_ROWS:
            if column and column not in optional and not r.get(column):
                problems.add(f"scale: no {column} at {r.get('size', '?')}")
        if r.get("errors") not in (None, "", "0"):
            problems.add(f"scale: {r['errors']} missed keys at {r['size']}")
    table = []
    for label, column, digits, target in SCALE_ROWS:
        if column is None:
            table.append([label] + [""] * (len(rows) + 1))
        else:
            table.append([label] + [scale_cell(r, column, digits)
                                    for r in rows] + [target or "-"])
    value_bytes = rows[0].get("value_bytes", "?")
    lines += [
        "db_bench_ext/scale_bench: FilteredDB against plain RocksDB on the "
        f"same DB, one DB per size built by random Puts (16-byte keys, "
        f"{value_bytes}-byte values, a multi-level LSM), every measurement on "
        "a fresh clone of it (hard-linked SST files), both sides in one "
        "process, medians of the repetitions. The target column holds the "
        "goals set for 1.0.0; a figure beside a target it does not meet "
        "missed it.",
        "",
        md_table(["figure"] + [r.get("size", "?") for r in rows] +
                 ["target"], table),
        "",
        "How to read it. *Open* ratios compare the time until Open returns. "
        "*After a kill*: a child process writes 1% of N keys (one Put each, "
        "WAL on) and is killed with SIGKILL; the plain and filtered states "
        "hold the same keys, WAL bytes and SST files (checked). With no "
        "checkpoint the filter must be rebuilt from the whole DB; with a "
        "checkpoint (PersistFilterSnapshots before the writes) a recovery "
        "could start from it and replay only the writes after it, which is "
        "what *÷ a full rebuild scan* measures. *Kill → filter active* runs "
        "from the start of Open until reads are answered by the filter "
        "(Open's time where Open builds the filter before it returns; with "
        "background_open Open returns first and reads go to the DB "
        "unfiltered until the filter is built). The *checkpoint stall* compares the slowest write that "
        "overlapped a checkpoint with the slowest one outside. *Bits per "
        "live key* is the filter table's size over the keys it holds, after "
        "Open and right after the first growth (new keys written until the "
        "filter grows); *keys the growth read from the DB* is 0 for a "
        "filter that doubles from its own contents. *Negative Gets* ask for "
        "never-written keys (plain RocksDB answers them with its SST Bloom "
        "filters). *Probe vs memory limit* times MayContain on the open "
        "filter against two random loads from an array of the table's size "
        "(the least any two-bucket lookup costs).",
        "",
    ]
    if not probed:
        lines += ["*Probe vs memory limit*: not measured (scale_bench was "
                  "built without db_bench_ext/probe_limit.h, the core's "
                  "probe timing: single / serialized / batched probes "
                  "against random loads on the same bytes).", ""]
    big = max(rows, key=lambda r: num(r.get("keys"), 0))
    lines += [
        f"**At {big.get('size')} keys**: Open after a kill takes "
        f"{fmt(num(big.get('open_kill_ratio')))}x plain RocksDB's; the "
        f"filter is back {fmt(num(big.get('ckpt_active_s')))} s after a "
        f"kill that followed a checkpoint, "
        f"{fmt(num(big.get('ckpt_active_vs_rebuild')))}x a full rebuild scan; "
        f"the worst write during a checkpoint took "
        f"{fmt(num(big.get('write_worst_during_ms')))} ms against "
        f"{fmt(num(big.get('write_worst_outside_ms')))} ms outside; the "
        f"filter stores {fmt(num(big.get('bits_per_key_open')))} bits per "
        f"live key after Open; negative Gets run "
        f"{fmt(num(big.get('neg_speedup')))}x plain" +
        (f"; a probe costs {fmt(num(big.get('probe_vs_limit')))}x two "
         f"random loads." if probed else "."),
        "",
    ]
    return "\n".join(lines)


# ----------------------------------------------------------------- main

def section_dram(fb_rows, policy_dram, policy_single, problems):
    """Section 1e: filter_bench and policy_bench on tables beyond the caches."""
    lines = ["### 1e. DRAM scale", ""]
    summ = core_summary(fb_rows, problems, "filter_bench_dram")
    look = core_lookups(fb_rows)
    table = []
    for c in [c for c in CORE_CONFIGS if c in summ]:
        s = summ[c]
        single = {x: look.get((c, "single", x), {}).get("ns_per_op")
                  for x in (0.0, 1.0)}
        batch = {x: min([v.get("ns_per_op") for (cc, m, xx), v in look.items()
                         if cc == c and xx == x and m.startswith("batch")]
                        or [float("nan")]) for x in (0.0, 1.0)}
        for x in (0.0, 1.0):
            if single[x] is None:
                problems.add(f"filter_bench_dram: no single lookups for {c} "
                             f"at found={x:g}")
        table.append([
            c, fmt(s.get("table_bytes", float("nan")) / 1e6, 1),
            fmt(s.get("load_factor", float("nan")) * 100, 1),
            fmt(s.get("bits_per_item")),
            fmt(s.get("fpr_measured", float("nan")) * 100, 4),
            fmt(s.get("construct_mkeys_per_s")),
            fmt(single[0.0], 1), fmt(single[1.0], 1),
            fmt(batch[0.0], 1), fmt(batch[1.0], 1),
        ])
    n_items = fb_rows[0]["num"] if fb_rows else "?"
    lines += [
        f"The figures above fit this machine's caches. Here the same core "
        f"filters hold {n_items} items: at the default size (--dram_num) "
        "their tables are several times the L3 cache, as the filters of a "
        "whole DB are together, so nearly every lookup misses the caches. "
        "db_bench_ext/filter_bench, construction through InsertUnordered, "
        "lookups as ns/op (single = a loop of independent Contains calls; "
        "batched = ContainsBatch of 1024 keys).",
        "",
        md_table(["config", "table MB", "load %", "bits/item", "FPR %",
                  "construction Mkeys/s", "single neg ns", "single pos ns",
                  "batched neg ns", "batched pos ns"], table),
        "",
    ]
    ptable = []
    shapes = []  # (label, rows) of each shape present
    for source, rows in (("policy_dram", policy_dram),
                         ("policy_dram_single", policy_single)):
        if not rows:
            problems.add(f"{source}: no rows")
            continue
        filters, keys = int(num(rows[0]["filters"])), int(num(rows[0]["keys"]))
        label = f"{filters} x {keys / filters / 1e6:g}M keys"
        by = dict(policy_rows(rows, DRAM_POLICIES, source, problems))
        shapes.append((label, filters, keys, rows[0]["bits_per_key_arg"], by))
        for p, r in by.items():
            ptable.append([
                label, POLICY_LABEL[p], fmt(num(r["filter_bytes"]) / 1e6, 1),
                fmt(num(r["bits_per_key"])), fmt(num(r["fpr_percent"]), 3),
                fmt(1000.0 / num(r["build_ns"])),
                fmt(num(r.get("build_vs_bloom")), 2),
                fmt(num(r["neg_ns"]), 1), fmt(num(r["pos_ns"]), 1),
                fmt(num(r["batch_neg_ns"]), 1), fmt(num(r["batch_pos_ns"]), 1),
                fmt(num(r.get("neg_vs_bloom")), 2),
                fmt(num(r.get("batch_neg_vs_bloom")), 2),
                fmt(num(r.get("serial_neg_ns")), 1),
                fmt(num(r.get("serial_neg_vs_bloom")), 2),
            ])
    described = [f"{f} filters of {k // f:,} keys" if f > 1 else
                 f"one filter of {k:,} keys" for _, f, k, _, _ in shapes]
    bits = shapes[0][3] if shapes else "?"
    lines += [
        "The SST reader at the same scale, through RocksDB's "
        "FilterBitsBuilder/Reader (db_bench_ext/policy_bench; key hashing "
        f"included), at {bits} bits/key, in two shapes: first a DB's, many "
        "SST-sized filters that together exceed the caches, where a single "
        "query asks a random filter and a batch (a MultiGet's) asks one "
        "filter; then one large filter. " + "; ".join(described) +
        " per policy. Builds are timed once, a fresh builder per filter; "
        "query times are medians of 3 runs, in ns per key. The ratio "
        "columns are the time over Bloom's (below 1: faster than Bloom). "
        "neg is a loop of independent calls, which overlap as many lookups "
        "as the core's out-of-order window holds; serialized neg waits for "
        "each lookup to complete before the next (LFENCE; x86-64 only), "
        "which is what the filter probe of a point Get costs, whose probes "
        "are far apart.",
        "",
        md_table(["shape", "filter", "filter MB", "bits/key", "FPR %",
                  "construction Mkeys/s", "build time / Bloom", "neg ns",
                  "pos ns", "batched neg ns", "batched pos ns",
                  "neg / Bloom", "batched neg / Bloom", "serialized neg ns",
                  "serialized neg / Bloom"], ptable),
        "",
    ]
    blocked = [(label, by["cuckoo_blocked"]) for label, _, _, _, by in shapes
               if "cuckoo_blocked" in by]
    if blocked:
        lines += [
            "The blocked layout against Bloom: " + "; ".join(
                f"{label}: build {fmt(num(r.get('build_vs_bloom')))}x "
                f"Bloom's time, batched negatives "
                f"{fmt(num(r.get('batch_neg_vs_bloom')))}x, batched "
                f"positives {fmt(num(r.get('batch_pos_vs_bloom')))}x, "
                f"serialized negatives "
                f"{fmt(num(r.get('serial_neg_vs_bloom')))}x"
                for label, r in blocked) + ".", ""]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if any table misses a row or a plot is missing")
    ap.add_argument("--meta", action="append", default=[],
                    help="KEY=VALUE lines for the report header")
    args = ap.parse_args()
    out = args.out
    problems = Problems()
    p = lambda name: os.path.join(out, name)

    fb = read_csv(p("filter_bench.csv"), problems)
    fb_dram = read_csv(p("filter_bench_dram.csv"), problems)
    policy_dram = read_csv(p("policy_dram.csv"), problems)
    policy_single = read_csv(p("policy_dram_single.csv"), problems)
    t3 = read_csv(p("table3.csv"), problems)
    curve = read_csv(p("fpr_curve.csv"), problems)
    sst = read_csv(p("sst_db_bench.csv"), problems)
    cs = read_csv(p("churn_summary.csv"), problems)
    ct = read_csv(p("churn_timeline.csv"), problems)
    cc = read_csv(p("churn_counting_bloom.csv"), problems)
    scale = read_csv(p("scale.csv"), problems)

    filt, crossover = section_filter_level(out, fb, t3, curve, problems)
    filt += "\n" + "\n".join(section_dram(fb_dram, policy_dram, policy_single,
                                             problems))
    sst_md = section_sst(sst, t3, problems)
    churn_md = section_churn(out, cs, ct, cc, problems)
    scale_md = section_scale(scale, problems)

    x = fmt(crossover["crossing_fpr"], 1) if crossover else "n/a"
    header = ["# rocksdb-cuckoo: where Bloom wins and where cuckoo wins", ""]
    header += [f"- {m.replace('=', ': ', 1)}" for m in args.meta]
    header += [
        "",
        "## Decision rule (measured in this run)",
        "",
        f"- **Dynamic set (keys are deleted) and target FPR below {x}%** → "
        "cuckoo: it deletes in place, keeps its FPR under churn, and is "
        "smaller than Bloom at the same FPR below the crossover of section 1c.",
        f"- **Immutable set (SST files) or FPR above {x}%** → Bloom, or "
        "Ribbon when memory matters more than build CPU: no deletions to "
        "support, one cache line per probe, and at loose FPR Bloom is "
        "smaller.",
        "",
        "Each figure below was measured in this run; the only numbers not "
        "measured here are in columns labelled *paper*.",
        "",
    ]
    report = ("\n".join(header) + "\n" + filt + "\n" + sst_md + "\n" +
              churn_md + "\n" + scale_md)
    if problems.items:
        report += "\n## Missing data\n\n" + "\n".join(
            f"- {m}" for m in problems.items) + "\n"
    with open(p("report.md"), "w") as f:
        f.write(report)
    print(f"make_report: wrote {p('report.md')}", file=sys.stderr)
    if problems.items:
        for m in problems.items:
            print(f"make_report: {m}", file=sys.stderr)
        if args.check:
            sys.exit(1)


if __name__ == "__main__":
    main()
