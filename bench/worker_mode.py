#!/usr/bin/env python3
"""Per-operator processes vs warm workers vs FlagGems' own harness (issue 14).

On a GPU machine with real FlagGems, for the same operators and dtypes:

  process   zlb batch --isolation process   (one Python per operator)
  worker    zlb batch --isolation worker    (one warm Python per device)
  harness   python -m pytest NODES --mode kernel, one process for all the
            operators' test nodes (the nodes the zlb runs resolved)

and then `zlb compare` of the worker batch against the process batch (A/A
across the two modes: 0 FASTER/SLOWER expected). It prints wall per operator
for each, the ratios measured side by side in this one run, and the projected
time of the whole suite (--suite-size functions) on 1 and on 8 GPUs.

Usage (repo root, GPU machine):
  PYTHONPATH=$PWD/.carry/pylib GEMS_VENDOR=nvidia python3 bench/worker_mode.py \\
    --flaggems-dir .carry/FlagGems --ops sum softmax ... --out $OUT/worker_mode.json
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(cmd, log, env=None, cwd=None, timeout=None):
    t0 = time.monotonic()
    with open(log, "w") as f:
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                           timeout=timeout)
    return p.returncode, time.monotonic() - t0


def statuses(bdir):
    with open(Path(bdir) / "ops_status.csv", newline="") as f:
        return list(csv.DictReader(f))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zlb", default=str(REPO / "build" / "zlb"))
    ap.add_argument("--flaggems-dir", required=True)
    ap.add_argument("--ops", nargs="+", required=True)
    ap.add_argument("--dtypes", default="float16")
    ap.add_argument("--work", default="/tmp/worker_mode")
    ap.add_argument("--modes", default="process,worker,harness")
    ap.add_argument("--suite-size", type=int, default=1119)
    ap.add_argument("--out")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    fg = str(Path(a.flaggems_dir).resolve())
    res = {"ops": a.ops, "dtypes": a.dtypes, "modes": {}}

    def save():
        if a.out:
            Path(a.out).write_text(json.dumps(res, indent=1))

    nodes = []
    for mode in a.modes.split(","):
        if mode in ("process", "worker"):
            bdir = work / mode
            rc, wall = run([a.zlb, "batch", "--batch-dir", str(bdir), "--flaggems-dir", fg,
                            "--dtypes", a.dtypes, "--isolation", mode, "--progress", "plain",
                            "--ops", *a.ops], work / (mode + ".log"))
            rows = statuses(bdir)
            res["modes"][mode] = {
                "rc": rc, "wall_s": wall, "per_op_s": wall / len(a.ops),
                "status": {r["spec"]: r["status"] for r in rows},
                "op_seconds": {r["spec"]: float(r["seconds"] or 0) for r in rows},
            }
            if not nodes:
                for r in rows:
                    idf = bdir / r["run_dir"] / "run_identity.json" if r["run_dir"] else None
                    if idf and idf.exists():
                        nodes.append(json.loads(idf.read_text())["provenance"]["test_node"])
        elif mode == "harness":
            for prev in ("worker", "process"):   # an earlier call's batch (same --work)
                if not nodes and (work / prev / "ops_status.csv").exists():
                    for r in statuses(work / prev):
                        idf = work / prev / r["run_dir"] / "run_identity.json"
                        if r["run_dir"] and idf.exists():
                            nodes.append(json.loads(idf.read_text())["provenance"]["test_node"])
            if not nodes:
                print("harness: no nodes known (run a zlb mode first)", file=sys.stderr)
                continue
            env = dict(os.environ)
            env["PYTHONPATH"] = env.get("PYTHONPATH", "")
            rc, wall = run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-s",
                            *nodes, "--level", "core", "--mode", "kernel", "--dtypes", a.dtypes],
                           work / "harness.log", env=env, cwd=fg)
            res["modes"]["harness"] = {"rc": rc, "wall_s": wall, "per_op_s": wall / len(nodes),
                                       "nodes": nodes}
        save()
        m = res["modes"].get(mode)
        if m:
            print("%-8s rc=%s wall %7.1f s  per operator %6.2f s" % (
                mode, m["rc"], m["wall_s"], m["per_op_s"]), flush=True)

    if all((work / m / "ops_status.csv").exists() for m in ("process", "worker")):
        rc, _ = run([a.zlb, "compare", str(work / "process"), str(work / "worker"),
                     "--out", str(work), "--allow-caliber-mismatch"],
                    work / "compare.log")
        text = (work / "compare.log").read_text()
        res["compare"] = {"rc": rc, "tail": text[-3000:]}
        try:
            cj = json.loads((work / "compare.json").read_text())
            res["compare"]["verdicts"] = cj.get("summary", {}).get("verdicts") or cj.get("verdicts")
        except (OSError, ValueError):
            pass
        save()
        print(text[-1500:])
    ms = res["modes"]
    if "process" in ms and "worker" in ms:
        p, w = ms["process"]["per_op_s"], ms["worker"]["per_op_s"]
        print("worker vs process: %.2fx faster per operator" % (p / w))
        for gpus in (1, 8):
            print("suite of %d functions on %d GPU(s): process %.1f h, worker %.1f h" % (
                a.suite_size, gpus, p * a.suite_size / gpus / 3600,
                w * a.suite_size / gpus / 3600))
    if "harness" in ms and "worker" in ms:
        print("worker vs FlagGems' one-process harness: %.2fx its time" % (
            ms["worker"]["per_op_s"] / ms["harness"]["per_op_s"]))
    save()


if __name__ == "__main__":
    main()
