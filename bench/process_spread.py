#!/usr/bin/env python3
"""Between processes against within one: does each row's interval know what
a second process draws?

    bench/process_spread.py A B C D [--min-us 5] [--all]

Reads the results.jsonl of three or more rounds (batch or run directories,
one process each, nothing changed between them) and, for each row and side
(gems, torch) measured in every round at least --min-us long, prints:
  between   the sd of the row's median over the rounds, in % of their mean
  engine    the sd one process's median carries by the engine's own account,
            sqrt(placement_sd^2 + noise^2) averaged over the rounds: the
            placement probes' spread and the sampling noise, what zlb
            compare builds a single round's interval from
  ratio     between / engine
and, where the rounds read their effective SM clock (the engine's spin
graph, effective_mhz), a line with each round's median and clock: a row
whose slow rounds are its low-clock ones moved with the clock, which
zlb compare then covers (clock_shift).
The rows are printed in falling ratio (--all: every row; else the ones over
2), then how many rows are over 2 and over 4. From four rounds the between
sd has 3 degrees of freedom: a ratio of 2 on one row is weak evidence, the
count over many rows is not. A row whose between is far over its engine sd
reads differently in a second process for a reason one process cannot see
(issue 28: gems addmm 1024^3 and gelu on the H100), and a single-round
compare of it gives false verdicts. Nothing is timed here.
"""
import argparse
import math
import statistics
import sys

from _results import rounds_or_exit, rows_under


def round_rows(round_dir):
    """(op, shape_detail, dtype, side) -> (median_ms, engine relative sd,
    effective_mhz or None)."""
    out = {}
    for rec in rows_under(round_dir):
        for side in ("gems", "torch"):
            s = rec.get(side)
            if not isinstance(s, dict) or not isinstance(s.get("median_ms"), (int, float)):
                continue
            sd = math.hypot(s.get("placement_sd") or 0.0, s.get("noise") or 0.0)
            eff = s.get("effective_mhz")
            out[(rec.get("op"), rec.get("shape_detail"), rec.get("dtype"), side)] = (
                s["median_ms"], sd, eff if isinstance(eff, (int, float)) else None)
    return out


def spread(rounds, min_ms):
    """[(key, mean_ms, between, engine)], relative sds, for the rows every
    round has and whose mean is at least min_ms."""
    common = set(rounds[0]).intersection(*rounds[1:])
    out = []
    for key in common:
        ms = [r[key][0] for r in rounds]
        mean = statistics.mean(ms)
        if mean < min_ms or mean <= 0:
            continue
        between = statistics.stdev(ms) / mean
        engine = statistics.mean(r[key][1] for r in rounds)
        out.append((key, mean, between, engine))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+", help="three or more rounds, one process each")
    ap.add_argument("--min-us", type=float, default=5.0)
    ap.add_argument("--all", action="store_true", help="print every row, not only ratio > 2")
    a = ap.parse_args()
    rounds = rounds_or_exit("process_spread.py", a.dirs, round_rows,
                            "two give one degree of freedom per row, too few to tell a spread")
    got = spread(rounds, a.min_us / 1000.0)
    if not got:
        sys.exit("process_spread.py: no row is in every round at least %g us long" % a.min_us)
    ratio = lambda g: g[2] / g[3] if g[3] > 0 else math.inf
    got.sort(key=lambda g: (-ratio(g), g[0]))
    print("%-5s %-18s %-34s %10s %9s %9s %7s" % ("side", "op", "shape", "us", "between%",
                                                "engine%", "ratio"))
    for g in got:
        if a.all or ratio(g) > 2:
            (op, shape, _, side), mean, between, engine = g
            print("%-5s %-18s %-34s %10.3f %9.3f %9.3f %7.1f" % (
                side, (op or "")[:18], (shape or "")[:34], mean * 1000, 100 * between,
                100 * engine, ratio(g)))
            per = [r[g[0]] for r in rounds]
            if all(p[2] for p in per):
                print("      per round: %s" % "  ".join(
                    "%.3f us @ %.1f MHz" % (p[0] * 1000, p[2]) for p in per))
    over2 = sum(ratio(g) > 2 for g in got)
    over4 = sum(ratio(g) > 4 for g in got)
    print("%d rounds, %d rows >= %g us: between > 2x engine on %d, > 4x on %d" % (
        len(rounds), len(got), a.min_us, over2, over4))


if __name__ == "__main__":
    main()
