#!/usr/bin/env python3
"""Harness overhead of `zlb batch` per operator (budget: 50 ms).

Runs `zlb batch` on one (fake) device over N operators whose child work is
trivial (a fake FlagGems test function that passes without measuring), on
the stub torch/triton and fake libcuda of the CLI tests, and splits the wall
time of the batch:

  batch wall                 time.monotonic() around `zlb batch` (this script)
  sum of child wall          ops_status.csv `seconds`: each `zlb run` child, spawn
                             to reap, as the batch measured it
  sum of pytest wall         run_identity.json outcome.pytest_wall_s: the pytest
                             process inside each child, spawn to reap

  batch layer  = (batch wall - sum child wall) / N   zlb batch itself, with the one
                                                     probe of the interpreter it makes
  harness      = (batch wall - sum pytest wall) / N  zlb batch + zlb run around pytest

The Python probe (spawn the interpreter, import pytest: ~120 ms) runs once per
batch: the children trust the batch's (ZLB_PYTHON_PROBED, run/preflight.h),
which the script checks in each identity (provenance.python_check "batch").
It is timed apart, for what one child would add if it probed again.

Usage (from the repo root, after a build):
  /usr/bin/python3 bench/batch_overhead.py [--zlb build/zlb] [--n 100]
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUDGET_MS = 50.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zlb", default=str(REPO / "build" / "zlb"))
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--isolation", default="process", choices=("process", "worker", "both"),
                    help="zlb batch --isolation; both: the two side by side")
    a = ap.parse_args()
    a.zlb = str(Path(a.zlb).resolve())
    build = Path(a.zlb).resolve().parent
    tmp = Path(tempfile.mkdtemp(prefix="zlb-batch-bench-"))
    fg = tmp / "FlagGems"
    shutil.copytree(REPO / "tests" / "fake_flaggems", fg,
                    ignore=shutil.ignore_patterns("__pycache__"))
    body = ["import pytest", ""]
    for i in range(a.n):
        body += [f"@pytest.mark.t{i:03d}", f"def test_t{i:03d}():", "    pass", ""]
    (fg / "benchmark" / "test_trivial_many.py").write_text("\n".join(body))
    (tmp / "home").mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp / "home"),
        "LANG": "C.UTF-8", "ZLB_PYTHON": "/usr/bin/python3",
        "PYTHONPATH": str(REPO / "tests" / "stubs"), "PYTHONDONTWRITEBYTECODE": "1",
        "ZLB_LIBCUDA": str(build / "tests" / "libfakecuda.so"),
        "ZLB_LIBNVML": str(build / "tests" / "libfakenvml.so"),
        "ZLB_TIMER_LIB": str(build / "libzlbtimer.so"), "FAKE_CUDA_DEVICES": "1",
        "FLAGGEMS_DIR": str(fg), "ZL_IR": "off",
    }
    ops = [f"t{i:03d}" for i in range(a.n)]
    walls = {}
    for mode in (("process", "worker") if a.isolation == "both" else (a.isolation,)):
        walls[mode] = one_batch(a, tmp, env, ops, mode)
    if len(walls) == 2:
        print("wall per operator: process %.1f ms, worker %.1f ms: worker %.2fx faster "
              "(trivial operators on the stub torch: what remains is the Python start and "
              "pytest's own start, which a real flag_gems import multiplies)" % (
                  walls["process"] / a.n * 1000, walls["worker"] / a.n * 1000,
                  walls["process"] / walls["worker"]))
    shutil.rmtree(tmp)


def one_batch(a, tmp, env, ops, mode):
    bdir = tmp / ("batch_" + mode)
    t0 = time.monotonic()
    p = subprocess.run([a.zlb, "batch", "--batch-dir", str(bdir), "--progress", "plain",
                        "--isolation", mode, "--ops", *ops], cwd=tmp, env=env,
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"zlb batch failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    with open(bdir / "ops_status.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    child = sum(float(r["seconds"]) for r in rows)
    pytest_wall = 0.0
    trusted = 0
    for r in rows:
        ident = json.loads((bdir / r["run_dir"] / "run_identity.json").read_text())
        pytest_wall += ident["outcome"]["pytest_wall_s"]
        trusted += ident["provenance"].get("python_check") == "batch"
    # The probe alone: one `python3 -c` like preflight's, timed here.
    t1 = time.monotonic()
    for _ in range(10):
        subprocess.run(["/usr/bin/python3", "-c", "import pytest, sys"], env=env,
                       capture_output=True)
    probe = (time.monotonic() - t1) / 10 * 1000
    n = len(rows)
    layer = (wall - child) / n * 1000
    harness = (wall - pytest_wall) / n * 1000
    print(f"zlb batch --isolation {mode} over {n} trivial operators, 1 device ({tmp})")
    print(f"  batch wall            {wall:8.3f} s")
    print(f"  sum child (zlb run)   {child:8.3f} s")
    print(f"  sum pytest wall       {pytest_wall:8.3f} s")
    print(f"  python probe          {probe / 1000:8.3f} s   once, by the batch; "
          f"{trusted} of {n} children trusted it")
    print(f"  {'per operator':<22}{'ms':>9}   {'budget':>7}   ratio")
    print(f"  {'batch layer':<22}{layer:9.2f}   {BUDGET_MS:7.0f}   {layer / BUDGET_MS:.3f}"
          f"   (of it the batch's probe: {probe / n:.2f})")
    print(f"  {'batch + zlb run':<22}{harness:9.2f}   {BUDGET_MS:7.0f}   "
          f"{harness / BUDGET_MS:.3f}")
    print(f"  {'a child that probes':<22}{probe:+9.2f}   {BUDGET_MS:7.0f}   "
          f"{probe / BUDGET_MS:+.3f}   (what each child would add without the hand-down)")
    if trusted < n:
        print(f"  warning: {n - trusted} child(ren) probed the interpreter themselves")
    return wall


if __name__ == "__main__":
    main()
