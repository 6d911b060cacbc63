#!/usr/bin/env python3
"""What would P be from the probes placed as the measured graph was?

    bench/like_placed.py ROUND... --out DIR [--new-mib 1]
    python3 bench/aa_table.py DIR/* --two-rounds      # then, on the copies

On the H100 matrices one probe of torch's rms_norm 4096x8192 landed anywhere
between processes while the measured graph and the other probe each landed
in one place, so zlb compare's aligned placement variance P, the mean of
the columns' variances, was 2-5 times what the measured graph did (bench/
README.md, "what the probes' P is made of"). One explanation: the wild probe
is the graph whose capture took new memory from the driver, where the
others reused blocks the allocator had cached. Rows record that since
0ae6721 (placement_probe_pool_mib: the reserved memory's growth while the
measured graphs, then each probe, were captured).

This copies each round (batch or run directory; its IR, compile and tuner
caches left out) into DIR/<its name>, and in every row side that recorded
the growth nulls the draw of each probe whose capture was not of the
measured graph's kind: "new" (grew by more than --new-mib) against
"cached". zlb compare drops a probe column from its aligned fit when any
process has no draw in it, so the copies' P is drawn from the columns
placed like the measured graph in every process (and falls back to the
rows' own placement_sd, wild probe and all, where no column is left: such
rows are marked). It prints, for each row side, the rounds' kinds
(measured/probe 1/probe 2, N for new, C for cached, ? for no reading) and
the columns it nulled. A results.jsonl that is a link is replaced by a
file in the copy (the round it came from is never written); a linked
directory is copied as a link and not rewritten. Nothing is timed.
"""
import argparse
import json
import os
import shutil
import sys

SKIP = ("ir", "ttgir", "triton_cache", "tuner_cache")


def kind(mib, new_mib):
    """'N' for a graph that took new memory, 'C' for one that did not, '?' unread."""
    if mib is None:
        return "?"
    return "N" if mib > new_mib else "C"


def rewrite_side(meas, new_mib):
    """Null, in meas, the draws of probes placed otherwise than the measured
    graph. Returns (kinds text, nulled probe indexes) or None where the side
    recorded no growth or no draws."""
    pools, draws = meas.get("placement_probe_pool_mib"), meas.get("placement_probe_draws")
    if not isinstance(pools, list) or not isinstance(draws, list) or not pools:
        return None
    kinds = [kind(x, new_mib) for x in pools]
    nulled = []
    for j in range(len(draws)):
        probe = kinds[j + 1] if j + 1 < len(kinds) else "?"
        # a graph without a reading tells nothing: its draw stays
        if draws[j] is not None and "?" not in (kinds[0], probe) and probe != kinds[0]:
            draws[j] = None
            nulled.append(j + 1)
    return "/".join(kinds), nulled


def rewrite_results(path, new_mib, seen):
    """Rewrite one results.jsonl in place (a copy), noting each row side in seen."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    out = []
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if isinstance(rec, dict) and rec.get("kind") == "row":
            for side in ("gems", "torch"):
                meas = rec.get(side)
                if isinstance(meas, dict):
                    got = rewrite_side(meas, new_mib)
                    if got:
                        key = (side, rec.get("op"), str(rec.get("shape_detail")),
                               str(rec.get("dtype")))
                        seen.setdefault(key, []).append(got)
            line = json.dumps(rec)
        out.append(line)
    # a new file, never through a link copied from the round
    os.unlink(path)
    with open(path, "x", encoding="utf-8") as f:
        f.write("\n".join(out) + ("\n" if out else ""))


def copy_round(src, dst, new_mib, seen):
    shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(*SKIP, "*.tgz"))
    for root, _dirs, files in os.walk(dst):
        if "results.jsonl" in files:
            rewrite_results(os.path.join(root, "results.jsonl"), new_mib, seen)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rounds", nargs="+", help="batch or run directories, one process each")
    ap.add_argument("--out", required=True, help="a directory that does not exist yet")
    ap.add_argument("--new-mib", type=float, default=1.0,
                    help="growth above which a graph took new memory (MiB; default 1)")
    a = ap.parse_args(argv)
    if os.path.exists(a.out):
        sys.exit("like_placed.py: %s exists; give a new directory (nothing is "
                 "written over)" % a.out)
    names = [os.path.basename(os.path.normpath(r)) for r in a.rounds]
    if len(set(names)) != len(names):
        sys.exit("like_placed.py: two rounds share the name %s; their copies would "
                 "collide" % next(n for n in names if names.count(n) > 1))
    for r in a.rounds:
        if not os.path.isdir(r):
            sys.exit("like_placed.py: %s is not a directory" % r)
    os.makedirs(a.out)
    seen = {}
    for r, n in zip(a.rounds, names):
        copy_round(r, os.path.join(a.out, n), a.new_mib, seen)
    if not seen:
        print("no row recorded placement_probe_pool_mib: the copies are the rounds as "
              "they were")
        return 0
    for (side, op, shape, dtype), got in sorted(seen.items()):
        dropped = sorted({j for _, nulled in got for j in nulled})
        probes = max(len(k.split("/")) - 1 for k, _ in got)
        print("%-5s %-20s %-28s %-14s %s  nulled probe %s%s" % (
            side, op, shape[:28], dtype.replace("torch.", "")[:14],
            " ".join(k for k, _ in got), ",".join(map(str, dropped)) if dropped else "none",
            "  (no column left: compare takes placement_sd)" if probes and
            len(dropped) >= probes else ""))
    print("%d row sides; the copies are in %s" % (len(seen), a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
