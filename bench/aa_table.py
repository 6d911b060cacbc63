#!/usr/bin/env python3
"""A/A verdict table: how often `zlb compare` says SAME where nothing changed.

    bench/aa_table.py --zlb build/zlb A3 B3 C3 D3 [--two-rounds] [--min-us 5]

Every pair of the given batch (or run) directories is compared with
`zlb compare X Y --format json`; with --two-rounds, also every split of four
of them into two rounds a side (X1 X2 -- Y1 Y2). For each comparison and
each of gems and torch it prints, over the rows whose A latency is at least
--min-us: how many are SAME, and how many got a false verdict (SLOWER or
FASTER, which in an A/A is always false). With --rows, the rows that were
not SAME, with their interval, the compare model's placement sd, the
sides the power cap held (clock_reasons) or that were sampled again with the
GPU idle part of the time (power_duty < 1), and the effective clocks (the
engine's spin graph) where their difference widened the interval.

With --coverage, a line under each comparison says whether the UNSURE rows
come from intervals too wide or from rounds that really differ: on how many
rows the interval holds 1.0 (an A/A's true ratio; a 95% interval that
misses it on far more than 5% of rows is too narrow for what processes
draw), and the median half-width against the +-1% band.

--without-effective compares copies of the directories whose measurements
lack the engine's effective clock (effective_mhz): the same rounds on NVML's
clock alone, as compare read them before the engine read its spin graph.
Run with and without it, the two tables say what the effective clock turned
from a false verdict into UNSURE, and what SAME it cost.

--elasticity-from DIR passes zlb compare's flag on: rounds that read no
clock elasticity take the s of the runs under DIR (a calibration run made
with --clock-elasticity on the same GPU).

--allow-caliber-mismatch passes zlb compare's flag on: an A/A across a
caliber axis (a worker batch against a process one: `isolation`) is refused
without it, and says what it measures with it.

Issue 28's bar: one round SAME on >= 80% of rows >= 5 us, two rounds on
>= 90%, no false verdict. Nothing is timed here: it reads what the
directories hold.
"""

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile

# What a copy for --without-effective leaves out: the rounds' bulk, which
# compare does not read.
BULK = shutil.ignore_patterns("ir", "ttgir", "triton_cache", "tuner_cache", "*.tgz")


def compare(zlb, a_dirs, b_dirs, extra=()):
    argv = [zlb, "compare", "--format", "json", *extra, *a_dirs, "--", *b_dirs]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        sys.exit("zlb compare %s -- %s: exit %d\n%s" % (" ".join(a_dirs), " ".join(b_dirs),
                                                           p.returncode, p.stderr))
    return json.loads(p.stdout)


def measured_rows(doc, kind, min_ms):
    """The paired rows whose A latency of kind is at least min_ms."""
    return [r for r in doc["rows"] if r.get("paired") and isinstance(r.get(kind), dict)
            and (r[kind].get("a_ms") or 0) >= min_ms]


def tally(doc, kind, min_ms):
    rows = measured_rows(doc, kind, min_ms)
    same = [r for r in rows if r[kind]["verdict"] == "SAME"]
    false = [r for r in rows if r[kind]["verdict"] in ("SLOWER", "FASTER")]
    other = [r for r in rows if r[kind]["verdict"] != "SAME"]
    return len(rows), len(same), len(false), other


def coverage(doc, kind, min_ms):
    """(rows, rows whose interval holds 1.0, median half-width as a fraction)."""
    rows = [r[kind] for r in measured_rows(doc, kind, min_ms)]
    rows = [c for c in rows if c.get("ci_low") is not None and c.get("ci_high") is not None]
    held = sum(c["ci_low"] <= 1.0 <= c["ci_high"] for c in rows)
    widths = sorted((c["ci_high"] - c["ci_low"]) / 2 for c in rows)
    return len(rows), held, widths[len(widths) // 2] if widths else None


def coverage_line(doc, min_ms):
    parts = []
    for kind in ("gems", "torch"):
        n, held, width = coverage(doc, kind, min_ms)
        parts.append("%s holds 1.0 on %d/%d (%.0f%%), median half-width %s" % (
            kind, held, n, 100.0 * held / n if n else 0,
            "%.2f%%" % (100 * width) if width is not None else "-"))
    return "  coverage: " + "; ".join(parts)


def sides(a, b):
    """"A,B", "A", "B" or "" for which sides a note holds on."""
    return ",".join(x for x, on in (("A", a), ("B", b)) if on)


def describe(r, kind):
    c = r[kind]
    place = c.get("placement_sd_a")
    notes = ""
    capped = sides(*("sw_power_cap" in (c.get("clock_reasons_" + x) or ()) for x in "ab"))
    if capped:
        notes += "  power cap " + capped
    duty = sides(*((c.get("power_duty_" + x) or 1) < 1 for x in "ab"))
    if duty:
        notes += "  duty<1 " + duty
    eff = [v for x in "ab" for v in (c.get("effective_mhz_" + x) or ()) if v]
    if eff and c.get("clock_shift"):
        # the sides' spin graphs read clocks apart, which widened the interval
        notes += "  eff %.0f-%.0f MHz, shift %+.2f%%" % (min(eff), max(eff),
                                                       100 * c["clock_shift"])
    return "    %-20s %-32s %-7s B/A %.4f [%.4f, %.4f]%s%s" % (
        r["op_name"], r["shape_detail"][:32], c["verdict"], c["ratio"], c["ci_low"],
        c["ci_high"], "  place sd %.2f%%" % (100 * place) if place else "", notes)


def without_effective(dirs, tmp):
    """{dir: a copy of it under tmp whose measurements have no effective_mhz}."""
    out = {}
    for i, d in enumerate(dirs):
        dst = os.path.join(tmp, "r%d" % i, os.path.basename(os.path.normpath(d)))
        shutil.copytree(d, dst, symlinks=True, ignore=BULK)
        for root, _, files in os.walk(dst):
            if "results.jsonl" not in files:
                continue
            path = os.path.join(root, "results.jsonl")
            with open(path) as f:
                lines = f.read().splitlines()
            with open(path, "w") as f:
                for line in lines:
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        f.write(line + "\n")
                        continue
                    for side in ("gems", "torch"):
                        m = rec.get(side) if isinstance(rec, dict) else None
                        if isinstance(m, dict):
                            for key in ("effective_mhz", "effective_mhz_reads"):
                                m.pop(key, None)
                    f.write(json.dumps(rec) + "\n")
        out[d] = dst
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", help="batch or run directories, one round each")
    ap.add_argument("--zlb", default="build/zlb")
    ap.add_argument("--min-us", type=float, default=5.0)
    ap.add_argument("--two-rounds", action="store_true",
                    help="also every split of four directories into two rounds a side")
    ap.add_argument("--rows", action="store_true", help="list the rows that were not SAME")
    ap.add_argument("--coverage", action="store_true",
                    help="say how often the intervals hold 1.0, and their median half-width")
    ap.add_argument("--allow-caliber-mismatch", action="store_true",
                    help="compare across a caliber axis (zlb compare's flag)")
    ap.add_argument("--without-effective", action="store_true",
                    help="compare copies without the effective clock (NVML's alone)")
    ap.add_argument("--elasticity-from", metavar="DIR",
                    help="rounds without a clock elasticity take DIR's (zlb compare's flag)")
    args = ap.parse_args()
    min_ms = args.min_us / 1000.0
    where = {d: d for d in args.dirs}
    tmp = None
    if args.without_effective:
        tmp = tempfile.mkdtemp(prefix="aa_table-")
        where = without_effective(args.dirs, tmp)
        print("(copies without effective_mhz: NVML's clock alone)")
    try:
        run(args, where, min_ms)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def run(args, where, min_ms):

    cases = [([a], [b]) for a, b in itertools.combinations(args.dirs, 2)]
    if args.two_rounds:
        for four in itertools.combinations(args.dirs, 4):
            first = four[0]
            for mate in four[1:]:
                rest = [d for d in four[1:] if d != mate]
                cases.append(([first, mate], rest))
    extra = ["--allow-caliber-mismatch"] if args.allow_caliber_mismatch else []
    if args.elasticity_from:
        extra += ["--elasticity-from", args.elasticity_from]
    names = ["%s -- %s" % (" ".join(a), " ".join(b)) for a, b in cases]
    width = max(40, *map(len, names))
    print("%-*s %-18s %-6s %-18s %-6s" % (width, "comparison", "gems SAME", "false",
                                          "torch SAME", "false"))
    for (a, b), name in zip(cases, names):
        doc = compare(args.zlb, [where[d] for d in a], [where[d] for d in b], extra)
        cells, others = [], []
        for kind in ("gems", "torch"):
            n, same, false, other = tally(doc, kind, min_ms)
            # one decimal: 26/29 is 89.7%, short of a 90% bar that "90%" would hide
            cells += ["%d/%d (%.1f%%)" % (same, n, 100.0 * same / n if n else 0), str(false)]
            others += [(kind, r) for r in other]
        print("%-*s %-18s %-6s %-18s %-6s" % (width, name, *cells))
        if args.coverage:
            print(coverage_line(doc, min_ms))
        if args.rows:
            for kind, r in others:
                print(kind[0], describe(r, kind))


if __name__ == "__main__":
    main()
