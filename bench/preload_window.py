#!/usr/bin/env python3
"""Where would a steady preload have stopped? Replayed off the GPU from the
profiles of a whole preload (issue 28, the small GEMMs' climb).

    python3 bench/preload_window.py ROUND... [--op addmm] [--chunks 8] [--within 0.002]

For each row-side of the rounds (zlb run or batch directories) measured
with a whole preload (`--preload MS`, no `--preload-steady`), its
preload_profile is the level by GPU time into the preload in at most 40
chunks (25 ms each for 1000 ms, the steady rule's own chunk). This applies
the steady rule to those levels, as python/zlbench/_preload.py's held()
does: the first chunk after which the last CHUNKS levels lie within WITHIN
of each other. It prints, per row-side, when that was (GPU ms), the level
there, the level the preload ended on (the median of its last four
chunks), and how far apart the two are: a rule that stops where the gap is
more than the rows' noise stops on the climb, not after it. "never" where
the levels never held. The last line counts the row-sides the rule
stopped within 0.1% of the end level, beyond it, and never. Nothing is
timed here; python/zlbench/_preload.py is not imported, so that a window
can be tried before the engine's is changed.
"""
import argparse
import statistics
import sys

from _results import rows_under

END_CHUNKS = 4          # the end level: the median of the profile's last chunks
CLOSE = 0.001           # a stop within this of the end level is on it


def stop(levels, chunks, within):
    """Index of the first chunk after which the last `chunks` levels lie
    within `within` of each other, or None."""
    for i in range(chunks - 1, len(levels)):
        last = levels[i - chunks + 1:i + 1]
        if max(last) <= min(last) * (1.0 + within):
            return i
    return None


def profiles(round_dir, op):
    """(op, shape, side, [[gpu ms, ms per call], ...]) of each row-side
    with a whole preload's profile."""
    for rec in rows_under(round_dir):
        if op and rec.get("op") != op:
            continue
        for side in ("gems", "torch"):
            m = rec.get(side)
            if not isinstance(m, dict) or m.get("preload_stop"):
                continue
            prof = m.get("preload_profile")
            if prof and len(prof) > END_CHUNKS:
                yield rec.get("op"), str(rec.get("shape_detail")), side, prof


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rounds", nargs="+", help="batch or run directories")
    ap.add_argument("--op", help="only this operator's rows")
    ap.add_argument("--chunks", type=int, default=8, help="levels that must hold (8)")
    ap.add_argument("--within", type=float, default=0.002, help="as a fraction (0.002)")
    a = ap.parse_args(argv)
    if a.chunks < 2 or not 0 < a.within < 0.05:
        sys.exit("preload_window.py: --chunks must be 2 or more and --within in (0, 0.05)")
    on, off, never, n = 0, 0, 0, 0
    for r in a.rounds:
        for op, shape, side, prof in profiles(r, a.op):
            n += 1
            levels = [level for _, level in prof]
            end = statistics.median(levels[-END_CHUNKS:])
            i = stop(levels, a.chunks, a.within)
            if i is None:
                never += 1
                print("%-20.20s %-24.24s %-5s %-20.20s never held in %.0f ms; end %.3f us" % (
                    op, shape, side, r, prof[-1][0], 1e3 * end))
                continue
            gap = levels[i] / end - 1.0
            on += abs(gap) <= CLOSE
            off += abs(gap) > CLOSE
            print("%-20.20s %-24.24s %-5s %-20.20s stops at %5.0f ms on %.3f us; end %.3f us "
                  "(%+.2f%%)" % (op, shape, side, r, prof[i][0], 1e3 * levels[i], 1e3 * end,
                                 100 * gap))
    if not n:
        sys.exit("preload_window.py: no row-side under %s has a whole preload's profile "
                 "(run with --preload MS and no --preload-steady)" % " ".join(a.rounds))
    print("%d row-sides, %d chunks within %g: stopped within %g%% of the end level on %d, "
          "beyond it on %d, never on %d" % (n, a.chunks, a.within, 100 * CLOSE, on, off, never))
    return 0


if __name__ == "__main__":
    sys.exit(main())
