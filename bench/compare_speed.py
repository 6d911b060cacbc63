#!/usr/bin/env python3
"""How long `zlb compare` takes on two whole-suite batches (issue 14: < 5 s).

Writes two synthetic batch directories of N operators x 10 rows (5 shapes x
2 dtypes, gems and torch, S samples each, placement probes on every
measurement as zlb run writes them; B replays A's operator runs), then times
`zlb compare A B` with each zlb given, side by side in this one run, and
checks that they print the same verdicts.

Usage (repo root, after a build):
  /usr/bin/python3 bench/compare_speed.py [--zlb build/zlb [--zlb other/zlb]] [--ops 1100]
"""
import argparse
import json
import math
import random
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CALIBER = {
    "backend": "cuda", "device": "NVIDIA H200", "timer": "graph", "mode": "kernel",
    "bench_level": "core", "shape_mode": "inline", "tuner_cache": "isolated",
    "direct_repeat": 1, "use_flagtune": False, "dtypes": ["float16", "bfloat16"], "seed": 0,
    "warmup_ms": 1000, "min_samples": 10, "min_time_ms": 100, "noise_target": 0.001,
    "max_wall_ms": 2000, "l2_mode": "hot", "clock_floor": 0.97,
}
SHAPES = ["[torch.Size([%d, %d]), 1]" % (m, m) for m in (256, 512, 1024, 2048, 4096)]
DTYPES = ["torch.float16", "torch.bfloat16"]


def write_run(path, op, rng, mode, replay_from, samples, shift):
    path.mkdir(parents=True)
    cal = dict(CALIBER, autotune_mode=mode)
    (path / "run_identity.json").write_text(json.dumps({
        "schema_version": 1, "status": "completed", "op": op, "caliber": cal,
        "provenance": {"replay_from": str(replay_from) if replay_from else None}}))
    lines = []
    for i, (shape, dt) in enumerate((s, d) for s in SHAPES for d in DTYPES):
        row = {"schema_version": 1, "kind": "row", "op": op, "op_name": op,
               "nodeid": "benchmark/test_%s.py::test_%s" % (op, op), "dtype": dt,
               "status": "SUCCESS", "shape_detail": shape, "index": i}
        for side, centre in (("gems", 0.002 * 2 ** (i // 2) * (1 + shift)),
                             ("torch", 0.004 * 2 ** (i // 2))):
            c = centre * math.exp(rng.gauss(0, 0.002))
            x = [round(c * math.exp(rng.gauss(0, 0.01)), 9) for _ in range(samples)]
            row[side] = {"timer": "graph", "median_ms": sorted(x)[samples // 2], "n": samples,
                         "markers": [], "fallback": None, "samples_ms": x,
                         "placement_sd": 0.004, "placement_probes": 3}
        row["latency_ms"] = row["gems"]["median_ms"]
        row["latency_base_ms"] = row["torch"]["median_ms"]
        lines.append(json.dumps(row))
    (path / "results.jsonl").write_text("\n".join(lines) + "\n")


def make_batches(root, n_ops, samples):
    rng = random.Random(1)
    for k in range(n_ops):
        op = "op%04d" % k
        a = root / "A" / "main" / op
        write_run(a, op, rng, "record", None, samples, 0.0)
        # a few real differences, so that the verdicts are not all SAME
        write_run(root / "B" / "main" / op, op, rng, "replay", a, samples,
                  0.05 if k % 50 == 0 else 0.0)


def verdicts(out):
    doc = json.loads((out / "compare.json").read_text())
    return doc["summary"].get("counts") or doc["summary"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zlb", action="append")
    ap.add_argument("--ops", type=int, default=1100)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    zlbs = a.zlb or [str(REPO / "build" / "zlb")]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.monotonic()
        make_batches(root, a.ops, a.samples)
        print("wrote 2 x %d operators x 10 rows (%d samples a measurement) in %.1f s" % (
            a.ops, a.samples, time.monotonic() - t0))
        seen = {}
        for rep in range(a.repeat):
            for z in zlbs:
                out = root / ("out_%d_%d" % (zlbs.index(z), rep))
                t0 = time.monotonic()
                p = subprocess.run([z, "compare", str(root / "A"), str(root / "B"), "--out",
                                    str(out), "--color", "never"], capture_output=True, text=True)
                wall = time.monotonic() - t0
                v = verdicts(out) if (out / "compare.json").exists() else None
                print("%-40s rc=%d  %6.2f s   %s" % (z, p.returncode, wall, json.dumps(v)[:150]))
                seen.setdefault(z, []).append((wall, v))
        if len(zlbs) > 1:
            base = min(w for w, _ in seen[zlbs[0]])
            for z in zlbs[1:]:
                best = min(w for w, _ in seen[z])
                print("%s vs %s: %.2fx" % (z, zlbs[0], base / best))
            same = len({json.dumps(v) for z in zlbs for _, v in seen[z]}) == 1
            print("same verdicts: %s" % same)


if __name__ == "__main__":
    main()
