#!/usr/bin/env python3
"""Two --tune-rule values side by side (issue 14's lever on tuning time).

An autotuner's timing of a config makes no row: it only ranks configs. Under
`--tune-rule rows` (the default) each config is timed by zlb's engine and
sampled until its median's noise meets --noise-target, as a row is; under
`budget` zlb's engine gives it the tuner's own rep of GPU time and
--min-samples; under `triton` Triton's own do_bench takes it, as in FlagGems'
harness. The H200 (stop 26) showed budget saving nothing on layer_norm (42
configs: 18.46 s against 18.56 s): what a config costs is the engine around
it. Before another rule may become the default, a GPU must show that it
picks the same configs and that the rows read the same, and what it saves.

For each operator, on one GPU, in this order: a run under each of the two
rules (--rules BASE,OTHER; default rows,triton), each from an empty FlagGems
tuner database of its own (--isolate-tuner-cache) and its own Triton cache,
so that each tunes. Then:
  * the wall of each run and the autotuners' share of it (outcome.tuning,
    from the plugin's TUNE_TIMING events);
  * the winners: each autotune record entry (kernel, key) of one run against
    the other's (same config, other config, or only in one);
  * `zlb compare BASE OTHER --allow-caliber-mismatch` (one round a side: the
    rows' placement probes give the single round's drift): gems and torch
    verdict counts. A row whose winner differs may differ in time for that
    reason alone; one whose winner is the same should not.

Usage (repo root, GPU machine, real FlagGems):
  PYTHONPATH=$PWD/.carry/pylib GEMS_VENDOR=nvidia python3 bench/tune_rule.py \\
    --flaggems-dir .carry/FlagGems --ops layer_norm mm --out $OUT/tune_rule.json
Operators worth it are those whose TUNE_TIMING shows many configs timed
through zlb's do_bench (plain @triton.autotune; LibTuner's do_bench_cudagraph
is FlagGems' own timer and no rule of zlb's touches it).
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from _suite_args import add_suite_args

RULES = ("rows", "budget", "triton")


def zlb_run(zlb, fg, op, rule, dtypes, run_dir, log):
    t0 = time.monotonic()
    with open(log, "w") as f:
        rc = subprocess.run([zlb, "run", op, "--flaggems-dir", fg, "--dtypes", dtypes,
                             "--tune-rule", rule, "--isolate-tuner-cache",
                             "--run-dir", str(run_dir), "--color", "never"],
                            stdout=f, stderr=subprocess.STDOUT).returncode
    return rc, time.monotonic() - t0


def why_failed(log):
    """Why zlb run failed, from its log: a PREFLIGHT_FAILED line with the
    sentence after it, else its last line about itself (zlb run: ...), else
    its last line."""
    try:
        lines = [l.strip() for l in Path(log).read_text(errors="replace").splitlines() if l.strip()]
    except OSError:
        return None
    for i, line in enumerate(lines):
        if line.startswith("PREFLIGHT_FAILED"):
            return " ".join(lines[i:i + 2])
    own = [l for l in lines if l.startswith("zlb run:")]
    return (own or lines or [None])[-1]


def winners(run_dir, op):
    """(kernel, key) -> config, from the run's autotune record."""
    path = Path(run_dir) / "autotune_records" / ("%s.json" % op)
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {(k.get("kernel"), json.dumps(e.get("key"))): json.dumps(e.get("config"),
                                                                   sort_keys=True)
            for k in rec.get("kernels", []) for e in k.get("entries", [])}


def tuning(run_dir):
    try:
        ident = json.loads((Path(run_dir) / "run_identity.json").read_text())
    except (OSError, ValueError):
        return None, None
    t = (ident.get("outcome") or {}).get("tuning") or {}
    return t.get("calls"), t.get("seconds")


def verdicts(zlb, a, b, out):
    r = subprocess.run([zlb, "compare", str(a), str(b), "--out", str(out),
                        "--allow-caliber-mismatch", "--color", "never"],
                       capture_output=True, text=True)
    try:
        rows = json.loads((Path(out) / "compare.json").read_text()).get("rows", [])
    except (OSError, ValueError):
        return r.returncode, {}, r.stdout[-800:] + r.stderr[-800:]
    count = {}
    for row in rows:
        for side in ("gems", "torch"):
            v = (row.get(side) or {}).get("verdict")
            if v:
                count["%s %s" % (side, v)] = count.get("%s %s" % (side, v), 0) + 1
    return r.returncode, count, r.stdout[-800:]


def main():
    ap = argparse.ArgumentParser()
    add_suite_args(ap, work="/tmp/zlb-tune-rule")
    ap.add_argument("--rules", default="rows,triton", metavar="BASE,OTHER")
    ap.add_argument("--out")
    a = ap.parse_args()
    rules = tuple(a.rules.split(","))
    if len(rules) != 2 or rules[0] == rules[1] or not set(rules) <= set(RULES):
        ap.error("--rules takes two different rules of %s, as BASE,OTHER" % ", ".join(RULES))
    base, other_rule = rules
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    fg = str(Path(a.flaggems_dir).resolve())
    res = {"rules": list(rules), "ops": {}}

    def save():
        if a.out:
            Path(a.out).write_text(json.dumps(res, indent=1))

    for op in a.ops:
        entry = res["ops"][op] = {}
        for rule in rules:
            d = work / rule / op
            log = work / ("%s.%s.log" % (op, rule))
            rc, wall = zlb_run(a.zlb, fg, op, rule, a.dtypes, d, log)
            calls, secs = tuning(d)
            entry[rule] = {"rc": rc, "wall_s": wall, "tune_calls": calls, "tune_s": secs,
                           "why": why_failed(log) if rc else None}
            print("%-20s %-6s rc=%d wall %6.1f s  tuning %s configs in %s s" % (
                op, rule, rc, wall, calls, secs), flush=True)
            if rc:
                print("    why: %s" % entry[rule]["why"], flush=True)
            save()
        wa, wb = winners(work / base / op, op), winners(work / other_rule / op, op)
        same = sum(1 for k in wa if k in wb and wa[k] == wb[k])
        other = sorted("%s %s: %s -> %s" % (k[0], k[1], wa[k], wb[k])
                       for k in wa if k in wb and wa[k] != wb[k])
        entry["winners"] = {"same": same, "other": other,
                            "only_base": len(set(wa) - set(wb)),
                            "only_other": len(set(wb) - set(wa))}
        rc, count, tail = verdicts(a.zlb, work / base / op, work / other_rule / op,
                                   work / "compare" / op)
        entry["compare"] = {"rc": rc, "verdicts": count, "tail": tail}
        print("%-20s winners: %d same, %d other, %d/%d in one run only; compare rc=%d %s" % (
            op, same, len(other), entry["winners"]["only_base"],
            entry["winners"]["only_other"], rc,
            ", ".join("%s %d" % kv for kv in sorted(count.items()))), flush=True)
        for line in other[:10]:
            print("    other winner: " + line)
        save()

    done = [e for e in res["ops"].values() if all(
        e.get(r, {}).get("tune_s") is not None for r in rules)]
    if done:
        t = {r: sum(e[r]["tune_s"] for e in done) for r in rules}
        w = {r: sum(e[r]["wall_s"] for e in done) for r in rules}
        print("\nover %d operator(s): tuning %s %.1f s, %s %.1f s (%.2fx); "
              "wall %s %.1f s, %s %.1f s (%.2fx)" % (
                  len(done), base, t[base], other_rule, t[other_rule],
                  t[base] / max(t[other_rule], 1e-9), base, w[base], other_rule,
                  w[other_rule], w[base] / max(w[other_rule], 1e-9)))
    save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
