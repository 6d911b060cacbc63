#!/usr/bin/env python3
"""Do the rounds `zlb compare` plans for an UNSURE row settle it on the GPU?

    bench/plan_check.py --zlb build/zlb S1 S2 S3 ... S2N [--min-us 5]

S1..S2N are replays of one recording (batch or run directories), taken
alternately for the two sides of an A/A: A = S1 S3 S5 ..., B = S2 S4 S6 ....
The plan comes from the last pair alone (S2N-1 against S2N: one round a
side, rounds_needed in compare.json); the rounds that judge it are the
first k pairs (k = 1 .. N-1), which the plan never saw. For each row it
prints the plan and the verdict with 1, 2, ... N-1 rounds a side, and then,
over the rows whose plan is at most N-1: how many read SAME at the planned
rounds (the promise: about 9 in 10, README "Comparing runs") and how many
at a third of them. An A/A has no true change, so any SLOWER or FASTER is
false and is counted.

Nothing is timed here: it reads what the directories hold (bench/
plan_rounds.sh makes them on a GPU machine).
"""

import argparse
import json
import subprocess
import sys


def compare(zlb, a_dirs, b_dirs):
    argv = [zlb, "compare", "--format", "json", *a_dirs, "--", *b_dirs]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        sys.exit("zlb compare %s -- %s: exit %d\n%s" % (" ".join(a_dirs), " ".join(b_dirs),
                                                           p.returncode, p.stderr))
    return json.loads(p.stdout)


def row_key(r):
    return (r["op"], r.get("dtype") or "", r.get("shape_detail") or "")


def rows_of(doc, kind, min_ms):
    """{row key: that kind's comparison} over paired rows of at least min_ms."""
    return {row_key(r): r[kind] for r in doc["rows"]
            if r.get("paired") and isinstance(r.get(kind), dict)
            and (r[kind].get("a_ms") or 0) >= min_ms}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", help="replays S1 .. S2N, the sides alternating")
    ap.add_argument("--zlb", default="build/zlb")
    ap.add_argument("--min-us", type=float, default=5.0,
                    help="leave out rows faster than this on side A (default 5)")
    ap.add_argument("--kinds", default="gems,torch")
    args = ap.parse_args()
    if len(args.dirs) < 4 or len(args.dirs) % 2:
        sys.exit("plan_check.py: give an even number of replays, at least 4 (S1 .. S2N)")
    a_all, b_all = args.dirs[0::2], args.dirs[1::2]
    n = len(a_all)
    min_ms = args.min_us / 1000.0
    plan_doc = compare(args.zlb, [a_all[-1]], [b_all[-1]])
    judged = {k: compare(args.zlb, a_all[:k], b_all[:k]) for k in range(1, n)}
    for kind in args.kinds.split(","):
        plans = rows_of(plan_doc, kind, min_ms)
        at = {k: rows_of(doc, kind, min_ms) for k, doc in judged.items()}
        print("%s: plan from %s -- %s; judged by the first 1..%d pairs" %
              (kind, a_all[-1], b_all[-1], n - 1))
        print("  %-22s %-34s %-7s %5s  %s" % ("op", "shape", "pair", "need",
                                              " ".join("k=%d" % k for k in range(1, n))))
        kept = same_at = same_third = thirds = false = 0
        for key, c in sorted(plans.items()):
            need = c.get("rounds_needed")
            verdicts = [at[k].get(key, {}).get("verdict", "-") for k in range(1, n)]
            false += sum(v in ("SLOWER", "FASTER") for v in verdicts)
            print("  %-22s %-34s %-7s %5s  %s" % (key[0], key[2][:34], c["verdict"],
                                                  need if need is not None else "-",
                                                  " ".join("%-6s" % v for v in verdicts)))
            if c["verdict"] != "UNSURE" or not need or need < 2 or need > n - 1:
                continue
            kept += 1
            same_at += verdicts[need - 1] == "SAME"
            third = max(1, (need + 2) // 3)
            if third < need:
                thirds += 1
                same_third += verdicts[third - 1] == "SAME"
        print("  UNSURE rows planned 2..%d rounds: %d; SAME at the planned rounds %d, "
              "at a third of them %d of %d; false verdicts at any k %d" %
              (n - 1, kept, same_at, same_third, thirds, false))


if __name__ == "__main__":
    main()
