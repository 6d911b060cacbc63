#!/usr/bin/env python3
"""Where inside its sampling did a row's time settle? (issue 28, the small GEMMs)

For each row-side of OP in each round (a zlb run or batch directory), from
its samples_ms in the order they ran: the level it started at (a 5-sample
running median), the level of its last fifth, the milliseconds of sampling
after which the running median stayed within TOL of that last level (0: it
never left it), its trend (ln of the last third's median over the first
third's), and its median; where the row was preloaded (`--preload`), the
milliseconds it took, its preload_trend (the same ratio over the
preload's replays), its preload_profile (the level by GPU time into the
preload) and, with `--preload-steady`, why and when it stopped. A step
that comes late in a short sampling is what moves the median between
processes.

    python3 bench/sampling_steps.py --op addmm runs/r0/A runs/r0/B ...
"""

import argparse
import glob
import json
import math
import os
import statistics


def running_median(xs, i, width=5):
    return statistics.median(xs[max(0, i - width // 2):i + width // 2 + 1])


def settle(samples, calls, tol):
    """(start level, last level, ms after which it stayed within tol, trend)."""
    last = statistics.median(samples[-max(5, len(samples) // 5):])
    levels = [running_median(samples, i) for i in range(len(samples))]
    off = [i for i, v in enumerate(levels) if abs(v / last - 1) > tol]
    after = sum(samples[:off[-1] + 1]) * calls if off else 0.0
    third = len(samples) // 3
    trend = math.log(statistics.median(samples[-third:]) / statistics.median(samples[:third]))
    return levels[0], last, after, trend


def preload(m):
    """'  preload MS ms, trend T%[, stopped: WHY at T GPU ms][, us per call by
    GPU ms: L@T ...]' for a preloaded row, else ''."""
    ms = (m.get("phase_ms") or {}).get("preload")
    trend = m.get("preload_trend")
    if not ms:
        return ""
    out = "  preload %.0f ms, trend %s" % (
        ms, "%+.2f%%" % (100 * trend) if trend is not None else "-")
    if m.get("preload_stop"):
        at = m.get("preload_steady_ms")
        out += ", stopped: %s%s" % (m["preload_stop"], " at %.0f GPU ms" % at if at else "")
    prof = m.get("preload_profile")
    if prof:
        out += ", us per call by GPU ms: " + " ".join(
            "%.3f@%.0f" % (1e3 * level, t) for t, level in prof)
    return out


def rows(round_dir, op):
    for path in sorted(glob.glob(os.path.join(round_dir, "**", "results.jsonl"),
                                 recursive=True)):
        with open(path, encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                if d.get("kind") == "row" and d.get("op") == op:
                    yield d


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rounds", nargs="+")
    ap.add_argument("--op", default="addmm")
    ap.add_argument("--tol", type=float, default=0.003)
    a = ap.parse_args()
    out = []
    for r in a.rounds:
        for d in rows(r, a.op):
            for side in ("torch", "gems"):
                m = d.get(side) or {}
                s = m.get("samples_ms") or []
                if len(s) < 10:
                    continue
                start, last, after, trend = settle(s, m.get("calls_per_replay") or 1, a.tol)
                out.append((d["shape_detail"], side, r, m["median_ms"] * 1e3, start * 1e3,
                            last * 1e3, after, sum(s) * (m.get("calls_per_replay") or 1),
                            100 * trend, m.get("power_duty"), preload(m)))
    for o in sorted(out, key=lambda o: (o[0], o[1])):
        print("%-34.34s %-5s %-24.24s median %9.3f  start %9.3f  last %9.3f  settled after "
              "%5.0f of %5.0f ms  trend %+.2f%%  duty %s%s" % o)


if __name__ == "__main__":
    main()
