#!/usr/bin/env python3
"""Recording against replay: does a row read differently in the runs that
recorded it than in the runs that replayed them?

    bench/kind_offsets.py DIR... [--min-us 5] [--flag 2] [--all]

DIR: batch or run directories (every results.jsonl below each is read). A
graph measurement is a recording's when its graph_shape is "settled" (it
sized its own graph) and a replay's when it is "replayed" (it captured the
recording's). For every row and side measured by at least one of each kind,
with a centre of at least --min-us: the centres by directory, R or P after
each for its kind, and three figures in %:

- offset: the mean ln centre of the recordings less that of the replays;
- probes: the same for the median of each measurement's placement probes,
  which zlb captures after the measured graph: an offset of the centre that
  the probes do not share moved the measured graph alone;
- within: the spread inside a kind (the root mean square of each kind's
  sample sd, over the kinds with two directories or more; empty without).

A row whose |offset| passes --flag times max(within, 0.1%) is marked `<<`:
the kind moved it, not the process (bench/README.md, "A replay's measured
graph landed elsewhere than its recording's"). --all prints every row, not
only the marked ones. Nothing is timed here: it reads what the directories
hold. Exit 2 when no row was measured by both kinds.
"""

import argparse
import math
import os
import statistics
import sys

from _results import rows_under

KINDS = {"settled": "R", "replayed": "P"}


def collect(dirs):
    """{(op, dtype, shape_detail, side): {dir: (kind, centre_ms, probe_ms)}}."""
    table = {}
    for d in dirs:
        for rec in rows_under(d):
                for side in ("torch", "gems"):
                    m = rec.get(side)
                    if not isinstance(m, dict):
                        continue
                    kind = KINDS.get(m.get("graph_shape"))
                    centre = m.get("centre_ms") or m.get("median_ms")
                    if kind is None or not isinstance(centre, (int, float)) or centre <= 0:
                        continue
                    probes = [p for p in (m.get("placement_probe_ms") or [])
                              if isinstance(p, (int, float)) and p > 0]
                    key = (rec.get("op_name") or rec.get("op"), rec.get("dtype"),
                           rec.get("shape_detail"), side)
                    table.setdefault(key, {})[d] = (
                        kind, centre, statistics.median(probes) if probes else None)
    return table


def mean_log(values):
    return sum(math.log(v) for v in values) / len(values)


def figures(by_dir):
    """(offset, probes offset or None, within or None), in ln units; None
    when one kind is missing."""
    kinds = {"R": [], "P": []}
    probes = {"R": [], "P": []}
    for kind, centre, probe in by_dir.values():
        kinds[kind].append(centre)
        if probe is not None:
            probes[kind].append(probe)
    if not kinds["R"] or not kinds["P"]:
        return None
    offset = mean_log(kinds["R"]) - mean_log(kinds["P"])
    probe_offset = (mean_log(probes["R"]) - mean_log(probes["P"])
                    if probes["R"] and probes["P"] else None)
    sds = [statistics.stdev([math.log(v) for v in vals]) for vals in kinds.values()
           if len(vals) >= 2]
    within = math.sqrt(sum(s * s for s in sds) / len(sds)) if sds else None
    return offset, probe_offset, within


def pct(x):
    return "" if x is None else "%+.2f" % (100 * x)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--min-us", type=float, default=5.0)
    ap.add_argument("--flag", type=float, default=2.0)
    ap.add_argument("--all", action="store_true")
    a = ap.parse_args(argv)
    for d in a.dirs:
        if not os.path.isdir(d):
            sys.exit("kind_offsets.py: %s is not a directory" % d)
    names = {d: os.path.basename(os.path.normpath(d)) or d for d in a.dirs}
    shown = marked = compared = 0
    for key, by_dir in sorted(collect(a.dirs).items(), key=lambda kv: tuple(map(str, kv[0]))):
        f = figures(by_dir)
        centres = [c for _, c, _ in by_dir.values()]
        if f is None or min(centres) * 1e3 < a.min_us:
            continue
        compared += 1
        offset, probe_offset, within = f
        mark = abs(offset) > a.flag * max(within or 0.0, 0.001)
        marked += mark
        if not (mark or a.all):
            continue
        shown += 1
        op, dtype, shape, side = key
        cells = " ".join("%s %.3f%s" % (names[d], by_dir[d][1] * 1e3, by_dir[d][0])
                         for d in a.dirs if d in by_dir)
        print("%-5s %-18s %-14s %-34s offset %6s%%  probes %6s%%  within %5s%%  %s%s" % (
            side, op, dtype, (shape or "")[:34], pct(offset), pct(probe_offset),
            "" if within is None else "%.2f" % (100 * within), cells, "  <<" if mark else ""))
    if not compared:
        print("kind_offsets.py: no row of at least %g us was measured by both a recording "
              "(graph_shape settled) and a replay (replayed)" % a.min_us, file=sys.stderr)
        return 2
    print("%d of %d rows moved with the kind (|offset| > %g x max(within, 0.1%%))" % (
        marked, compared, a.flag))
    return 0


if __name__ == "__main__":
    sys.exit(main())
