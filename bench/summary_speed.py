#!/usr/bin/env python3
"""summary_speed: how long does `zlb summary` take over a large batch?

The goal (issue 6): 1000 operators x 10 rows in under 1 s on a 2-core machine.

It builds a synthetic batch directory in a temporary directory, shaped like
what `zlb batch` writes: ops_status.csv, batch.json and, per operator,
<batch>/main/<op>/ with run_identity.json, results.jsonl and events.jsonl.
The rows are copies of real rows written by `zlb run` on an NVIDIA H200
(bench/data/h200_rows.jsonl: a graph-timed softmax row with its raw samples,
and a nonzero row that fell back to direct timing), with op, dtype, shape,
index and latencies varied and the samples jittered, so every line has the
size and the structure of a real one (the raw samples are ~90% of the bytes).
events.jsonl is the real run's events (bench/data/h200_events.jsonl); one
operator in 20 gets AUTOTUNE_REPLAY_FALLBACK events and one row in 25 is the
direct-timed template, so every path of the reader runs.

Then `zlb summary BATCH` runs --repeat times (default 5); the script prints
each wall and CPU time (user + system: on a machine shared with other work
the wall time includes waiting for a core), the median wall time and its
ratio to the 1 s budget, checks that
summary.csv has one line per row, and removes the batch (unless --keep).

  /usr/bin/python3 bench/summary_speed.py --zlb build/zlb

Only the standard library; a benchmark, not a test.
"""

import argparse
import csv
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data")
BUDGET_S = 1.0
DTYPES = ("torch.float16", "torch.bfloat16", "torch.float32")


def load_templates():
    with open(os.path.join(DATA, "h200_rows.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    graph = next(r for r in rows if r["gems"]["timer"] == "graph")
    direct = next(r for r in rows if r["gems"]["timer"] == "direct")
    with open(os.path.join(DATA, "h200_events.jsonl")) as f:
        events = [json.loads(line) for line in f if line.strip()]
    return graph, direct, events


def vary_measurement(meas, scale, rng):
    if not meas:
        return meas
    m = dict(meas)
    for key in ("median_ms", "mean_ms", "min_ms", "max_ms", "q1_ms", "q3_ms"):
        if isinstance(m.get(key), (int, float)):
            m[key] = m[key] * scale
    if m.get("samples_ms"):
        m["samples_ms"] = [s * scale * (1 + rng.uniform(-1e-3, 1e-3)) for s in m["samples_ms"]]
    return m


def make_row(template, op, index, rng):
    row = json.loads(json.dumps(template))      # a deep copy
    test = f"test_{op}"
    row["nodeid"] = f"benchmark/{test}.py::{test}"
    row["op"] = row["op_name"] = op
    row["dtype"] = DTYPES[index % len(DTYPES)]
    row["index"] = index
    m, n = 2 ** (6 + index % 8), 2 ** (6 + (index * 3) % 9)
    row["shape_detail"] = f"[torch.Size([{m}, {n}]), 1]"
    st, sg = rng.uniform(0.5, 50), rng.uniform(0.5, 50)
    row["torch"] = vary_measurement(row["torch"], st, rng)
    row["gems"] = vary_measurement(row["gems"], sg, rng)
    row["latency_base_ms"] = row["torch"]["median_ms"]
    row["latency_ms"] = row["gems"]["median_ms"]
    row["speedup"] = row["latency_base_ms"] / row["latency_ms"]
    return row


def write_batch(root, nops, nrows, seed):
    rng = random.Random(seed)
    graph, direct, events = load_templates()
    status_lines = [["repo", "op", "spec", "status", "seconds", "attempts", "rows", "remarks",
                     "backend", "device", "timer", "exit_code", "run_dir"]]
    total = 0
    for i in range(nops):
        op = f"op{i:04d}"
        run = os.path.join(root, "main", op)
        os.makedirs(run)
        identity = {"schema_version": 1, "status": "completed", "op": op,
                    "caliber": {"backend": "cuda", "device": "NVIDIA H200", "timer": "graph",
                                "bench_level": "core", "autotune_mode": "record"}}
        with open(os.path.join(run, "run_identity.json"), "w") as f:
            json.dump(identity, f, indent=2)
        lines = []
        for j in range(nrows):
            template = direct if (i * nrows + j) % 25 == 24 else graph
            lines.append(json.dumps(make_row(template, op, j, rng)) + "\n")
        with open(os.path.join(run, "results.jsonl"), "w") as f:
            f.writelines(lines)
            total += sum(len(x) for x in lines)
        evs = list(events)
        if i % 20 == 7:
            evs.append({"schema_version": 1, "ts": 1795940850.0,
                        "event": "AUTOTUNE_REPLAY_FALLBACK", "reason": "key_missing",
                        "kernel": f"{op}_kernel", "where": f"flag_gems.ops.{op}:{op}_kernel",
                        "key": [1024, "torch.float16"], "detail": "not recorded",
                        "nodeid": f"benchmark/test_{op}.py::test_{op}"})
        with open(os.path.join(run, "events.jsonl"), "w") as f:
            f.writelines(json.dumps(e) + "\n" for e in evs)
        status_lines.append(["main", op, op, "PASS", "10.0", "1", str(nrows), "", "cuda", "0",
                             "graph", "0", f"main/{op}"])
    with open(os.path.join(root, "ops_status.csv"), "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(status_lines)
    with open(os.path.join(root, "batch.json"), "w") as f:
        json.dump({"schema_version": 1, "ops": nops}, f)
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zlb", default=os.path.join(REPO, "build", "zlb"))
    ap.add_argument("--ops", type=int, default=1000)
    ap.add_argument("--rows", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the synthetic batch")
    args = ap.parse_args()
    if not os.access(args.zlb, os.X_OK):
        sys.exit(f"summary_speed: no zlb at {args.zlb} (build it, or pass --zlb)")

    tmp = tempfile.mkdtemp(prefix="zlb-summary-speed-")
    batch = os.path.join(tmp, "batch")
    os.makedirs(batch)
    try:
        t0 = time.perf_counter()
        nbytes = write_batch(batch, args.ops, args.rows, args.seed)
        print(f"batch: {args.ops} operators x {args.rows} rows, results.jsonl {nbytes / 1e6:.1f} MB "
              f"in all, written in {time.perf_counter() - t0:.1f} s ({batch})")
        walls, cpus = [], []
        for k in range(args.repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            proc = subprocess.run([args.zlb, "summary", batch, "--color", "never"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            walls.append(time.perf_counter() - t)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            # CPU time too: on a shared machine the wall time includes waiting for a core
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            if proc.returncode != 0:
                sys.exit(f"summary_speed: zlb summary exited {proc.returncode}\n{proc.stderr}")
            print(f"  run {k + 1}: {walls[-1]:.3f} s wall, {cpus[-1]:.3f} s CPU")
        with open(os.path.join(batch, "summary.csv")) as f:
            lines = sum(1 for _ in csv.reader(f)) - 1
        if lines != args.ops * args.rows:
            sys.exit(f"summary_speed: summary.csv has {lines} rows, expected "
                     f"{args.ops * args.rows}")
        med = statistics.median(walls)
        print(f"zlb summary, {args.ops} x {args.rows} rows on {os.cpu_count()} CPUs: median "
              f"{med:.3f} s wall over {args.repeat} runs = {med / BUDGET_S:.2f} x the "
              f"{BUDGET_S:.0f} s budget ({'within' if med < BUDGET_S else 'OVER'}); median CPU "
              f"{statistics.median(cpus):.3f} s")
    finally:
        if args.keep:
            print(f"kept {batch}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
