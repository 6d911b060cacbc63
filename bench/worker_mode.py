#!/usr/bin/env python3
"""Per-operator processes vs warm workers vs FlagGems' own harness (issue 14).

On a GPU machine with real FlagGems, for the same operators and dtypes:

  worker    zlb batch --isolation worker    (one warm Python per device)
  harness   python -m pytest NODES --mode kernel, one process for all the
            operators' test nodes (as `zlb inventory` resolves them)
  process   zlb batch --isolation process   (one Python per operator)

then `zlb compare` of the worker batch against the process batch (A/A across
the two modes: 0 FASTER/SLOWER expected). It prints, operator by operator,
the seconds each mode spent on it, the ratios measured side by side, and the
projected time of the whole suite (--suite-size functions) on 1 and 8 GPUs.

Caches, so that no mode is measured on another's leftovers:
  * FlagGems' tuner database (FLAGGEMS_CACHE_DIR): the first mode run
    starts from an empty one and tunes; every later mode starts from a copy
    of what the first left (--tuner-from). With the default order the worker
    pays every LibTuner tuning and the others find it done, so the figures
    are conservative for the worker. --tuner-from none starts every mode
    from an empty one: each pays its own tuning, as a first screen does.
  * Triton's compile cache: zlb gives every run its own (caliber
    compile_cache=own); the harness gets an empty one of its own too, so every
    mode compiles every kernel once.

A mode can be limited to the first N operators (--limit process=20) and to a
wall budget (--budget worker=360); a batch stopped at its budget keeps what it
finished (its other operators stay PENDING), and the ratios are taken over the
operators every compared mode finished. Modes run in one call or several with
the same --work (the state lives there).

--repeat N runs the modes N times, every other pass in the reverse order
(worker, harness, then harness, worker: ABBA), and prints each pass's
worker/harness ratio and their mean: one pass read 1.07x, 1.12x and 1.17x
on the same H100 build, the mode that ran second slower by up to 17%, so a
single pass cannot tell 1.1x from either side of it. It needs both modes
and --tuner-from none (reversed, a mode that copies another's tuner
database would run before it). The last pass's figures are the ones
reported in full; `passes` in the state holds this call's passes.

--zlb-opt gives both zlb batches one more option: --zlb-opt=--tune-rule=budget
measures the worker against the harness with the autotuners timed as Triton's
do_bench times them (the harness has no other way).

Usage (repo root, GPU machine):
  PYTHONPATH=$PWD/.carry/pylib GEMS_VENDOR=nvidia python3 bench/worker_mode.py \\
    --flaggems-dir .carry/FlagGems --ops sum softmax ... --out $OUT/worker_mode.json
"""
import argparse
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from _suite_args import add_suite_args

REPO = Path(__file__).resolve().parents[1]
ZLB_MODES = ("process", "worker")


def run(cmd, log, env=None, cwd=None, budget=None):
    """(rc, wall seconds). At the budget the command gets SIGTERM (zlb batch
    stops its operators and keeps its state), then SIGKILL 30 s later."""
    t0 = time.monotonic()
    with open(log, "w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        try:
            rc = p.wait(timeout=budget)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGTERM)
            try:
                rc = p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = p.wait()
    return rc, time.monotonic() - t0


def statuses(bdir):
    with open(Path(bdir) / "ops_status.csv", newline="") as f:
        return list(csv.DictReader(f))


def run_split(bdir, row):
    """Where an operator's seconds went, from its run's identity: the pytest
    process (or worker job), and of that the autotuners' timing of configs
    (outcome.tuning, which makes no row)."""
    try:
        ident = json.loads((Path(bdir) / row["run_dir"] / "run_identity.json").read_text())
    except (OSError, ValueError, TypeError):
        return {}
    out = ident.get("outcome") or {}
    tuning = out.get("tuning") or {}
    return {"pytest_s": out.get("pytest_wall_s"), "tune_s": tuning.get("seconds"),
            "tune_calls": tuning.get("calls"),
            "phase_s": phase_seconds(Path(bdir) / row["run_dir"] / "results.jsonl")}


def phase_seconds(results):
    """phase -> seconds, summed over every graph-timed side of every row in
    a run's results.jsonl (the engine's phase_ms), or None when no row has it."""
    total = {}
    try:
        lines = results.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("kind") != "row":
            continue
        for side in rec.values():
            if isinstance(side, dict) and isinstance(side.get("phase_ms"), dict):
                for phase, ms in side["phase_ms"].items():
                    total[phase] = total.get(phase, 0.0) + ms / 1e3
    return total or None


def nodes_for(zlb, fg, ops, work):
    """op -> pytest node, from the inventory's static scan."""
    inv = work / "inventory"
    subprocess.run([zlb, "inventory", "--flaggems-dir", fg, "--no-verify", "--out", str(inv)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    with open(inv / "inventory_main.csv", newline="") as f:
        by_op = {r["op"]: r["node"] for r in csv.DictReader(f)}
    return {op: by_op[op] for op in ops if op in by_op}


def harness_times(times):
    """node -> (seconds pytest spent in it: setup, call, teardown; status), from
    what bench/_harness_times.py appended as each test ended. A node whose
    teardown never came (the harness stopped at its budget) is not finished."""
    out, ended = {}, set()
    with open(times, encoding="utf-8") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue            # a line cut short by the budget's kill
            secs, status = out.get(r["node"], (0.0, "PASS"))
            if r["outcome"] == "skipped":
                status = "SKIP"
            elif r["outcome"] == "failed":
                status = "FAIL"
            out[r["node"]] = (secs + float(r["duration"]), status)
            if r["when"] == "teardown":
                ended.add(r["node"])
    return {node: v for node, v in out.items() if node in ended}


def tuner_dir(work, mode, source):
    """A fresh FLAGGEMS_CACHE_DIR for mode: empty, or a copy of source's."""
    d = work / ("%s.fgcache" % mode)
    shutil.rmtree(d, ignore_errors=True)
    if source and (work / ("%s.fgcache" % source)).is_dir():
        shutil.copytree(work / ("%s.fgcache" % source), d)
    else:
        d.mkdir(parents=True)
    return d


def main():
    ap = argparse.ArgumentParser()
    add_suite_args(ap, work="/tmp/worker_mode")
    ap.add_argument("--modes", default="worker,harness,process")
    ap.add_argument("--tuner-from", default="worker",
                    help="mode whose tuner database the later modes start from")
    ap.add_argument("--limit", action="append", default=[], metavar="MODE=N")
    ap.add_argument("--budget", action="append", default=[], metavar="MODE=SECONDS")
    ap.add_argument("--op-timeout", default="150")
    ap.add_argument("--suite-size", type=int, default=1119)
    ap.add_argument("--zlb-opt", action="append", default=[], metavar="--OPTION=VALUE",
                    help="given to both zlb batches (e.g. --zlb-opt=--tune-rule=budget); "
                         "recorded with the results")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="run the modes N times, every other pass in reverse order, and "
                         "report each pass's worker/harness ratio and their mean")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.repeat < 1:
        ap.error("--repeat must be at least 1 (got %d)" % a.repeat)
    if a.repeat > 1 and not {"worker", "harness"} <= set(a.modes.split(",")):
        ap.error("--repeat %d compares the worker with the harness pass by pass: give "
                 "--modes with both" % a.repeat)
    if a.repeat > 1 and a.tuner_from != "none":
        # reversed, the mode that copies a tuner database would run before
        # the one it copies, and take the previous pass's or none at all
        ap.error("--repeat %d reverses the modes' order every other pass: give --tuner-from "
                 "none, so that each mode tunes from an empty database every pass" % a.repeat)
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    fg = str(Path(a.flaggems_dir).resolve())
    limits = {k: int(v) for k, v in (x.split("=") for x in a.limit)}
    budgets = {k: float(v) for k, v in (x.split("=") for x in a.budget)}
    state = work / "worker_mode.json"
    res = json.loads(state.read_text()) if state.exists() else {"modes": {}}
    res.update({"ops": a.ops, "dtypes": a.dtypes, "zlb_opts": a.zlb_opt})

    def save():
        state.write_text(json.dumps(res, indent=1))
        if a.out:
            shutil.copyfile(state, a.out)

    nodes = nodes_for(a.zlb, fg, a.ops, work)
    modes = a.modes.split(",")
    res["passes"] = []          # this call's: a later call with the same --work starts anew
    for n in range(a.repeat):
        order = modes if n % 2 == 0 else modes[::-1]
        for mode in order:
            run_mode(a, mode, ops_for(a, limits, mode), fg, nodes, work, budgets, res)
            save()
        # this pass's modes only: the state file may hold others from earlier calls
        res["passes"].append({"order": order,
                              "per_op_s": per_operator({m: res["modes"][m] for m in order}, a.ops),
                              "wall_s": {m: res["modes"][m]["wall_s"] for m in order}})
        save()

    if all((work / m / "ops_status.csv").exists() for m in ZLB_MODES):
        rc, _ = run([a.zlb, "compare", str(work / "process"), str(work / "worker"),
                     "--out", str(work / "compare"), "--allow-caliber-mismatch"],
                    work / "compare.log")
        text = (work / "compare.log").read_text()
        res["compare"] = {"rc": rc, "tail": text[-3000:]}
        save()
        print(text[-1500:])
    report(res, a.suite_size)
    if len(res["passes"]) > 1:
        passes_report(res["passes"])
    save()


def ops_for(a, limits, mode):
    """The operators mode runs: the first N with --limit MODE=N."""
    return a.ops[:limits.get(mode, len(a.ops))]


def run_mode(a, mode, ops, fg, nodes, work, budgets, res):
    """Run one mode over ops and put what it took into res["modes"][mode]."""
    source = None if mode == a.tuner_from else a.tuner_from
    env = dict(os.environ)
    env["FLAGGEMS_CACHE_DIR"] = str(tuner_dir(work, mode, source))
    if mode in ZLB_MODES:
        bdir = work / mode
        shutil.rmtree(bdir, ignore_errors=True)
        rc, wall = run([a.zlb, "batch", "--batch-dir", str(bdir), "--flaggems-dir", fg,
                        "--dtypes", a.dtypes, "--isolation", mode, "--progress", "plain",
                        "--op-timeout", a.op_timeout, *a.zlb_opt, "--ops", *ops],
                       work / (mode + ".log"), env=env, budget=budgets.get(mode))
        per_op = {r["op"]: dict({"seconds": float(r["seconds"] or 0), "status": r["status"],
                                 "attempts": int(r["attempts"] or 0),
                                 "remarks": r["remarks"]}, **run_split(bdir, r))
                  for r in statuses(bdir)}
    elif mode == "harness":
        hn = [nodes[op] for op in ops if op in nodes]
        triton = work / "harness.triton"
        shutil.rmtree(triton, ignore_errors=True)
        env["TRITON_CACHE_DIR"] = str(triton)
        times_file = work / "harness.times.jsonl"
        times_file.unlink(missing_ok=True)
        env["ZLB_BENCH_TIMES"] = str(times_file)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (env.get("PYTHONPATH"), str(REPO / "bench")) if p)
        rc, wall = run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-s",
                        "-p", "_harness_times", *hn, "--level", "core",
                        "--mode", "kernel", "--dtypes", a.dtypes],
                       work / "harness.log", env=env, cwd=fg, budget=budgets.get(mode))
        times = harness_times(times_file) if times_file.exists() else {}
        per_op = {}
        for op in ops:
            t = times.get(nodes.get(op))
            per_op[op] = ({"seconds": t[0], "status": t[1]} if t
                          else {"seconds": 0.0, "status": "PENDING"})
    else:
        sys.exit("unknown mode %r" % mode)
    done = [op for op, v in per_op.items() if v["status"] != "PENDING"]
    res["modes"][mode] = {"rc": rc, "wall_s": wall, "ops": len(ops), "finished": len(done),
                          "per_op_s": wall / max(1, len(done)), "op": per_op}
    print("%-8s rc=%s wall %7.1f s  %d of %d operators finished  %6.2f s per operator"
          % (mode, rc, wall, len(done), len(ops), wall / max(1, len(done))), flush=True)


# The engine's phases in the order they run; a phase the rows have and this
# list lacks is reported after them, never folded into "outside the engine".
PHASES = ("first_call", "warmup", "settle", "capture", "spin", "preload", "sample",
          "power_settle", "duty", "probes", "elasticity", "release")


def phase_report(ops):
    """Where the operators' pytest seconds went: the engine's phases summed
    over their rows (first_call holds compilation and autotuning), and the
    rest (collection, inputs, the test's own code, direct-timed rows)."""
    have = [v for v in ops.values() if v.get("phase_s") and v.get("pytest_s")]
    if not have:
        return None
    seen = {p for v in have for p in v["phase_s"]}
    names = [p for p in PHASES if p in seen] + sorted(seen - set(PHASES))
    total = {p: sum(v["phase_s"].get(p, 0.0) for v in have) for p in names}
    pytest_s = sum(v["pytest_s"] for v in have)
    rest = pytest_s - sum(total.values())
    return "of %.1f s in pytest over %d operators: %s, outside the engine %.1f s" % (
        pytest_s, len(have), ", ".join("%s %.1f s" % (p, total[p]) for p in names),
        rest)


def common_ops(ms, ops):
    """The operators every mode in ms finished, in ops' order."""
    finished = lambda m, op: ms[m]["op"].get(op, {}).get("status", "PENDING") != "PENDING"
    return [op for op in ops if all(finished(m, op) for m in ms)]


def per_operator(ms, ops):
    """mode -> wall seconds per operator over the operators every mode
    finished: the mode's own seconds for them, plus its fixed cost (wall
    less the sum of its operators' seconds: imports, collection, worker
    starts) spread evenly. {} when no operator was finished by all."""
    common = common_ops(ms, ops)
    if not common:
        return {}
    per = {}
    for m in ms:
        own = sum(v["seconds"] for v in ms[m]["op"].values() if v["status"] != "PENDING")
        fixed = max(0.0, ms[m]["wall_s"] - own) / max(1, ms[m]["finished"])
        per[m] = sum(ms[m]["op"][op]["seconds"] for op in common) / len(common) + fixed
    return per


def passes_report(passes):
    """Each pass's worker/harness ratio in the order it ran, and their mean:
    the mode that runs second on a warm board may read slower, so the
    passes alternate and the mean is the figure."""
    ratios = []
    for i, p in enumerate(passes, 1):
        per = p["per_op_s"]
        if "worker" in per and "harness" in per:
            ratios.append(per["worker"] / per["harness"])
            print("pass %d (%s): worker %.2f s, harness %.2f s per operator, %.2fx" % (
                i, ", ".join(p["order"]), per["worker"], per["harness"], ratios[-1]))
    if ratios:
        print("worker vs FlagGems' one-process harness over %d passes: mean %.2fx "
              "(%.2f-%.2fx)" % (len(ratios), sum(ratios) / len(ratios), min(ratios),
                                 max(ratios)))


def report(res, suite_size):
    ms = res["modes"]
    names = [m for m in ("process", "worker", "harness") if m in ms]
    common = common_ops(ms, res["ops"])
    print("\n%-34s" % "operator" + "".join("%18s" % m for m in names))
    for op in res["ops"]:
        cells = []
        for m in names:
            v = ms[m]["op"].get(op)
            cells.append("%18s" % ("%.1f %s" % (v["seconds"], v["status"]) if v else "-"))
        print("%-34s" % op + "".join(cells))
    for m in ("process", "worker"):
        split = [v for v in ms.get(m, {}).get("op", {}).values() if v.get("tune_s") is not None]
        if split:
            tune = sum(v["tune_s"] for v in split)
            own = sum(v["seconds"] for v in split)
            print("%s: of %.1f s over %d operators, %.1f s (%.0f%%) was autotuners timing "
                  "%d configs; the slowest in tuning: %s" % (
                      m, own, len(split), tune, 100 * tune / max(own, 1e-9),
                      sum(v.get("tune_calls") or 0 for v in split),
                      ", ".join("%s %.1f s" % (op, v["tune_s"]) for op, v in sorted(
                          ms[m]["op"].items(), key=lambda kv: -(kv[1].get("tune_s") or 0))[:5])))
    for m in ("process", "worker"):
        where = phase_report(ms.get(m, {}).get("op", {}))
        if where:
            print("%s: %s" % (m, where))
    if not common:
        return
    per = per_operator(ms, res["ops"])
    res["common"] = {"ops": common, "per_op_s": per}
    print("\nover the %d operators every mode finished, wall per operator (one GPU, so "
          "GPU-seconds too):" % len(common))
    for m in names:
        print("  %-8s %7.2f s" % (m, per[m]))
    if "process" in per and "worker" in per:
        print("worker vs process: %.2fx faster per operator" % (per["process"] / per["worker"]))
    if "harness" in per and "worker" in per:
        print("worker vs FlagGems' one-process harness: %.2fx its time" % (
            per["worker"] / per["harness"]))
    for gpus in (1, 8):
        print("suite of %d functions on %d GPU(s): %s" % (suite_size, gpus, ", ".join(
            "%s %.1f h" % (m, per[m] * suite_size / gpus / 3600) for m in names)))


if __name__ == "__main__":
    main()
