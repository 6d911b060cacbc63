#!/usr/bin/env python3
"""Does a row's placement variance describe its measured graph?

    bench/probe_columns.py A B C D [--min-us 5] [--all]

zlb compare's "aligned" placement variance P (stats_compare.h) is the
residual variance of an additive fit (process + probe index) to the table of
the rounds' probe draws, column 0 being the measured graph. It stands for how
far the measured graphs of two processes land apart, and is right when every
column of the table scatters alike between processes. When one probe lands
anywhere and the measured graph always in one place, P is the mean of the
columns' variances and overstates the measured graph's; the other way round
it understates it.

For each row and side measured in every round (three or more: batch or run
directories, nothing changed between them), at least --min-us long, with the
same probes kept in each, this prints:
  P         the aligned residual sd over all the rounds, in %
  centres   the sd of ln(centre) over the rounds, in %: what the measured
            graph really did between processes (its placement, and whatever
            else moves a process, such as the clock)
  columns   each probe column's sd of its draw over the rounds, in %
  P/centres their ratio
  new MiB   where the rounds recorded it (placement_probe_pool_mib), each
            round's growth of the allocator's reserved memory while its
            measured graph / each probe was captured: 0 where a graph took
            cached blocks, more where it took new memory from the driver,
            to see whether the column that lands anywhere is the one that
            took new memory
The rows are printed in falling P/centres (--all: every row; else those over
2 or under 1/2), then how many rows are over 2 and under 1/2. From four
rounds each sd has 3 degrees of freedom, so one row's ratio is weak
evidence; a row over 2 in matrix after matrix is not. Nothing is timed here.
"""
import argparse
import math
import statistics
import sys

from _results import rounds_or_exit, rows_under


def round_rows(round_dir):
    """(op, shape_detail, dtype, side) -> (centre_ms, probe draws or None,
    pool growths in MiB or None)."""
    out = {}
    for rec in rows_under(round_dir):
        for side in ("gems", "torch"):
            m = rec.get(side)
            if not isinstance(m, dict):
                continue
            centre = m.get("centre_ms") or m.get("median_ms")
            if not centre or centre <= 0:
                continue
            key = (rec.get("op"), str(rec.get("shape_detail")), rec.get("dtype"), side)
            out[key] = (centre, m.get("placement_probe_draws"),
                        m.get("placement_probe_pool_mib"))
    return out


def aligned_sd(table):
    """The residual sd of the additive fit to table[p][j] (processes x
    columns), as stats_compare.c's placement_aligned computes it: on r0's
    four rounds it equalled `zlb compare A -- B C D`'s placement_sd_a on
    all 60 row-sides. Computed here rather than asked of zlb compare so
    that the script reads any rounds, a compare's pairing or not, beside
    the columns compare does not report."""
    np_, nc = len(table), len(table[0])
    grand = sum(map(sum, table)) / (np_ * nc)
    row = [sum(r) / nc for r in table]
    col = [sum(table[p][j] for p in range(np_)) / np_ for j in range(nc)]
    ss = sum((table[p][j] - row[p] - col[j] + grand) ** 2
             for p in range(np_) for j in range(nc))
    return math.sqrt(ss / ((np_ - 1) * (nc - 1)))


def columns(rounds, min_us):
    """[(key, P sd, centres sd, [column sds], [each round's pool growths or
    None])] over the rows every round measured with the same probes kept
    (sds as fractions)."""
    keys = set(rounds[0])
    for r in rounds[1:]:
        keys &= set(r)
    out = []
    for key in sorted(keys, key=str):
        got = [r[key] for r in rounds]
        if got[0][0] * 1e3 < min_us:
            continue
        draws = [d for _, d, _ in got]
        if any(not d or any(x is None for x in d) or len(d) != len(draws[0]) for d in draws):
            continue
        table = [[0.0] + list(d) for d in draws]
        cols = [statistics.stdev([d[j] for d in draws]) for j in range(len(draws[0]))]
        centres = statistics.stdev([math.log(c) for c, _, _ in got])
        out.append((key, aligned_sd(table), centres, cols, [g for _, _, g in got]))
    return out


def pools_text(pools):
    """'  new MiB 0/0/256 ...', a round's growths joined by '/' ('-' for a
    round without them, '?' for a graph without a reading); '' when no
    round has them."""
    if not any(pools):
        return ""
    cell = lambda g: "/".join("?" if x is None else "%g" % round(x, 1) for x in g) if g else "-"
    return "  new MiB " + " ".join(cell(g) for g in pools)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rounds", nargs="+", help="batch or run directories, one process each")
    ap.add_argument("--min-us", type=float, default=5.0)
    ap.add_argument("--all", action="store_true", help="every row, not only the far ones")
    a = ap.parse_args(argv)
    rounds = rounds_or_exit("probe_columns.py", a.rounds, round_rows,
                            "each sd needs two degrees of freedom at least")
    rows = columns(rounds, a.min_us)
    ratio = [(p / c if c > 0 else math.inf, key, p, c, cols, pools)
             for key, p, c, cols, pools in rows]
    ratio.sort(key=lambda t: -t[0])
    print("%-5s %-20s %-28s %7s %7s %9s  %s" % ("side", "op", "shape", "P %", "centres",
                                                 "P/centres", "columns %"))
    for r, (op, shape, _, side), p, c, cols, pools in ratio:
        if a.all or r > 2 or r < 0.5:
            print("%-5s %-20s %-28s %7.3f %7.3f %9.2f  %s%s" % (
                side, op, shape[:28], 100 * p, 100 * c, r,
                " ".join("%.3f" % (100 * s) for s in cols), pools_text(pools)))
    print("%d rounds, %d rows >= %g us with probes in each: P over 2x the centres' sd on %d, "
          "under 1/2 on %d" % (len(rounds), len(rows), a.min_us,
                               sum(1 for t in ratio if t[0] > 2),
                               sum(1 for t in ratio if t[0] < 0.5)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
