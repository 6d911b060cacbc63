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

  batch layer  = (batch wall - sum child wall) / N   zlb batch itself
  harness      = (batch wall - sum pytest wall) / N  zlb batch + zlb run around pytest
                 (zlb run's preflight spawns one Python probe: reported apart)

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
    bdir = tmp / "batch"
    t0 = time.monotonic()
    p = subprocess.run([a.zlb, "batch", "--batch-dir", str(bdir), "--progress", "plain",
                        "--ops", *ops], cwd=tmp, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"zlb batch failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    with open(bdir / "ops_status.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    child = sum(float(r["seconds"]) for r in rows)
    pytest_wall = 0.0
    for r in rows:
        ident = json.loads((bdir / r["run_dir"] / "run_identity.json").read_text())
        pytest_wall += ident["outcome"]["pytest_wall_s"]
    # zlb run's preflight probe alone: one `python3 -c` like the probe, timed here.
    t1 = time.monotonic()
    for _ in range(10):
        subprocess.run(["/usr/bin/python3", "-c", "import pytest, sys"], env=env,
                       capture_output=True)
    probe = (time.monotonic() - t1) / 10
    n = len(rows)
    layer = (wall - child) / n * 1000
    harness = (wall - pytest_wall) / n * 1000
    print(f"zlb batch over {n} trivial operators, 1 device ({tmp})")
    print(f"  batch wall            {wall:8.3f} s")
    print(f"  sum child (zlb run)   {child:8.3f} s")
    print(f"  sum pytest wall       {pytest_wall:8.3f} s")
    print(f"  {'per operator':<22}{'ms':>9}   {'budget':>7}   ratio")
    print(f"  {'batch layer':<22}{layer:9.2f}   {BUDGET_MS:7.0f}   {layer / BUDGET_MS:.3f}")
    print(f"  {'batch + zlb run':<22}{harness:9.2f}   {BUDGET_MS:7.0f}   "
          f"{harness / BUDGET_MS:.3f}")
    print(f"  {'  of it: python probe':<22}{probe * 1000:9.2f}   (preflight's Python/pytest "
          f"import check, inside the child)")
    print(f"  {'batch + zlb run - probe':<22}{harness - probe * 1000:9.2f}   {BUDGET_MS:7.0f}   "
          f"{(harness - probe * 1000) / BUDGET_MS:.3f}")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
