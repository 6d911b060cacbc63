#!/usr/bin/env python3
"""How closely each row follows the SM clock between processes, and whether
that is a property of the kernel (issue 28).

    bench/clock_elasticity.py MATRIX [MATRIX ...] [--rounds A B C D] [--min-us 5]

Each MATRIX is a directory of rounds (by default A B C D, as
bench/issue28_rounds.sh leaves them): processes that measured the same rows
with nothing changed between them. For every row and side (gems, torch)
that every round of at least two matrices measured with an effective SM
clock (the engine's spin graph, effective_mhz), it fits, matrix by matrix,
the elasticity s in

    ln(time) = const - s ln(effective clock)

(s = 1: the row's time is all SM cycles; s = 0: it follows no SM clock, as
a row bound by memory bandwidth would), by least squares over that
matrix's rounds. Then s is fitted again from the other matrices alone
(cross-validated, "cv", and held to [0, 1]) and each matrix's
between-process sd of ln(time) is printed before and after removing cv
times the clock's part: a row whose sd falls by the correction follows the clock with an s that another matrix,
another day or another machine, predicted.

The last lines count, over every pair of rounds of every matrix (single
A/A pairs, as zlb compare reads them), the pairs whose two medians are more
than --gap apart, as measured and after the cross-validated correction:
what knowing each row's s would do to single-round verdicts. Nothing is
timed here; the inputs are the rounds' results.jsonl.
"""
import argparse
import itertools
import math
import statistics
import sys

from process_spread import round_rows


def round_points(round_dir):
    """(op, shape_detail, dtype, side) -> (ln median, ln effective clock,
    median ms), for the rows measured with an effective clock
    (process_spread.round_rows)."""
    return {key: (math.log(ms), math.log(mhz), ms)
            for key, (ms, _, mhz) in round_rows(round_dir).items()
            if ms > 0 and mhz and mhz > 0}


def centred(points):
    """([y - mean y], [-(x - mean x)]): time against the clock's inverse."""
    ys = [p[0] for p in points]
    xs = [p[1] for p in points]
    my, mx = statistics.mean(ys), statistics.mean(xs)
    return [y - my for y in ys], [mx - x for x in xs]


def slope(ys, xs):
    sxx = sum(x * x for x in xs)
    return sum(x * y for x, y in zip(xs, ys)) / sxx if sxx > 0 else math.nan


def quantile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def analyse(mats, min_us, gap_pct):
    """mats: per matrix, its rounds as round_points() dicts. Returns
    (rows, sds, pairs, apart_raw, apart_cor): rows [(key, [(matrix index,
    s, cv s, between sd, sd after cv)])], sds [(between sd, after)] over
    every row-matrix, and the single pairs of rounds counted: all, more than
    gap_pct apart as measured, and after the cv correction."""
    keys = set()
    for rounds in mats:
        keys |= set.intersection(*(set(r) for r in rounds))
    gap = math.log1p(gap_pct / 100.0)
    rows, sds = [], []
    pairs = apart_raw = apart_cor = 0
    for key in sorted(keys, key=str):
        fits = []
        for i, rounds in enumerate(mats):
            if not all(key in r for r in rounds):
                continue
            if min(r[key][2] for r in rounds) * 1000 < min_us:
                continue
            ys, xs = centred([r[key] for r in rounds])
            fits.append((i, ys, xs))
        if len(fits) < 2:
            continue
        cells = []
        for i, ys, xs in fits:
            others_y = [y for j, yy, _ in fits if j != i for y in yy]
            others_x = [x for j, _, xx in fits if j != i for x in xx]
            cv = slope(others_y, others_x)
            if math.isnan(cv):
                continue
            # A time cannot fall faster than the clock rises, nor rise with
            # it: a fit outside [0, 1] is a placement lottery's noise.
            cv = min(1.0, max(0.0, cv))
            cor = [y - cv * x for y, x in zip(ys, xs)]
            raw_sd, cor_sd = statistics.stdev(ys), statistics.stdev(cor)
            sds.append((raw_sd, cor_sd))
            cells.append((i, slope(ys, xs), cv, raw_sd, cor_sd))
            for p, q in itertools.combinations(range(len(ys)), 2):
                pairs += 1
                apart_raw += abs(ys[p] - ys[q]) > gap
                apart_cor += abs(cor[p] - cor[q]) > gap
        if cells:
            rows.append((key, cells))
    return rows, sds, pairs, apart_raw, apart_cor


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("matrices", nargs="+", help="directories of rounds, two or more")
    ap.add_argument("--rounds", nargs="+", default=["A", "B", "C", "D"])
    ap.add_argument("--min-us", type=float, default=5.0)
    ap.add_argument("--gap", type=float, default=0.5,
                    help="a single pair's medians this many %% apart count as apart")
    a = ap.parse_args()
    if len(a.matrices) < 2:
        sys.exit("clock_elasticity.py: give two or more matrices (s is cross-validated "
                 "between them)")
    if len(a.rounds) < 3:
        sys.exit("clock_elasticity.py: give three or more rounds a matrix")
    mats = []
    for m in a.matrices:
        rounds = [round_points("%s/%s" % (m, r)) for r in a.rounds]
        if not all(rounds):
            sys.exit("clock_elasticity.py: %s lacks a round with effective clocks (%s)"
                     % (m, " ".join(a.rounds)))
        mats.append(rounds)
    rows, sds, pairs, apart_raw, apart_cor = analyse(mats, a.min_us, a.gap)
    if not sds:
        sys.exit("clock_elasticity.py: no row is in every round of two matrices")
    print("%-5s %-18s %-28s %s" % ("side", "op", "shape",
                                   "per matrix: s, cv s, between sd % -> after cv"))
    for (op, shape, _, side), cells in rows:
        print("%-5s %-18s %-28s %s" % (side, (op or "")[:18], (shape or "")[:28], "  ".join(
            "m%d %+.2f %+.2f %.2f->%.2f" % (i + 1, s, cv, 100 * raw, 100 * cor)
            for i, s, cv, raw, cor in cells)))
    print("between-process sd over %d row-matrices, as measured -> after the cv "
          "correction: median %.3f%% -> %.3f%%, 90th percentile %.3f%% -> %.3f%%" % (
              len(sds), 100 * statistics.median(r for r, _ in sds),
              100 * statistics.median(c for _, c in sds),
              100 * quantile([r for r, _ in sds], 0.9), 100 * quantile([c for _, c in sds], 0.9)))
    print("single pairs more than %g%% apart: %d of %d as measured, %d after the cv "
          "correction" % (a.gap, apart_raw, pairs, apart_cor))


if __name__ == "__main__":
    main()
