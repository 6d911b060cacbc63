#!/usr/bin/env python3
"""timer_quality: does libzlbtimer deliver what zlbench promises, on this GPU?

One command, one run, the SAME kernels under four timers:

  zlbt          libzlbtimer through zlbench (timing.do_bench -> _graph.measure:
                exactly the timing plugin's path), FlagGems' arguments
                warmup=1000, rep=100, return_mode="median"; the ZLB_* knobs
                of the environment apply (docs/protocol.md §1)
  do_bench      triton.testing.do_bench(warmup=1000, rep=100, median):
                FlagGems' stock kernel mode
  cudagraph     triton.testing.do_bench_cudagraph(median), its default rep=20
  cudagraph_fg  do_bench_cudagraph(rep=100, median): FlagGems' cudagraph mode

Kernels: add of 64k fp16 (~1 us), softmax 1024x1024 fp16 (~5 us), softmax
8192x8192 fp16 (~250 us), a 1 GiB copy done by a Triton kernel (not memcpy),
torch vs flag_gems softmax 4096x4096 fp16 (a FlagGems row: torch+gems pair),
and the add again with a 20 us host busy-wait inside the callable.

Sections (each guarded: a failure is reported and the rest goes on):
  A/A drift     every measurement in N fresh processes (this script re-run as
                a worker, one process at a time); pairwise |a-b|/min(a,b) of
                the reported centre: median and worst
  launch        add + 20 us host spin vs add: ratio of reported GPU time
  physical      1 GiB kernel copy vs the best copy bandwidth of the run
                (eager D2D memcpy timed with events, the kernel under each
                timer); nothing may exceed the DRAM peak (memory clock x bus
                width x 2, read from the device); bytes = read + write
  cost          wall seconds per measurement (per torch+gems pair for the
                FlagGems row)
  caliber trap  a captured 1 GiB same-dtype copy_ is a memcpy node: the zlbt
                path must report it (graph counts, marker, stdout line)
  cold L2       softmax 1024x1024 under ZLB_L2=cold vs hot: cold >= hot

Usage (from the repository root, on the GPU machine):

  PYTHONPATH=python:.carry/FlagGems/src:.carry/pylib \\
      python3 bench/timer_quality.py --timer-lib build/libzlbtimer.so \\
      --out $OUT/timer_quality.json

This module imports without torch/triton (its pure parts are unit-tested in
tests/python/test_timer_quality.py); the GPU work happens in worker processes.
"""

import argparse
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

TIMERS = ("zlbt", "do_bench", "cudagraph", "cudagraph_fg", "zlbt_p1")
# zlbt_p1 (libzlbtimer on one placement, as before ABI 3) runs only when asked.
DEFAULT_TIMERS = ("zlbt", "do_bench", "cudagraph", "cudagraph_fg")
TIMER_LABELS = {
    "zlbt_p1": "libzlbtimer 1 placement",
    "zlbt": "libzlbtimer",
    "do_bench": "do_bench",
    "cudagraph": "do_bench_cudagraph",
    "cudagraph_fg": "cudagraph rep=100",
}
TIMER_NOTES = {
    "zlbt": "zlbench timing.do_bench -> _graph.measure (warmup=1000, rep=100, median; "
            "$ZLB_PLACEMENTS placements, default 1 (zlb's); over several the centre is "
            "the mean of their medians)",
    "do_bench": "triton.testing.do_bench(warmup=1000, rep=100, median): FlagGems kernel mode",
    "cudagraph": "triton.testing.do_bench_cudagraph(median), default rep=20",
    "cudagraph_fg": "do_bench_cudagraph(rep=100, median): FlagGems cudagraph mode",
    "zlbt_p1": "libzlbtimer with ZLB_PLACEMENTS=1: one captured graph, as the engine "
               "sampled before placements (ABI 2)",
}

# cls "1us": worst drift <= 1%; cls "5us": median <= 0.1% and worst <= 0.5%.
KERNELS = (
    {"name": "add_1us", "label": "add 64k fp16 (~1 us)", "cls": "1us"},
    {"name": "softmax_5us", "label": "softmax 1024x1024 fp16 (~5 us)", "cls": "5us"},
    {"name": "softmax_250us", "label": "softmax %s fp16 (~250 us)", "cls": "5us"},
    {"name": "copy_1gib", "label": "Triton copy %s (kernel)", "cls": "5us"},
    {"name": "fg_softmax_torch", "label": "softmax 4096x4096 fp16: torch", "cls": "5us",
     "pair": "fg_softmax"},
    {"name": "fg_softmax_gems", "label": "softmax 4096x4096 fp16: flag_gems", "cls": "5us",
     "pair": "fg_softmax"},
    {"name": "add_1us_spin", "label": "add 64k fp16 + 20 us host spin", "cls": "1us"},
)
KERNEL_NAMES = tuple(k["name"] for k in KERNELS)
PAIRS = {"fg_softmax": ("fg_softmax_torch", "fg_softmax_gems")}

GOALS = {
    "drift_5us_median": 0.001,
    "drift_5us_worst": 0.005,
    "drift_1us_worst": 0.01,
    "launch_ratio": 0.01,
    "copy_fraction": 0.90,
}
REFERENCES = ("FlagGems stock do_bench: 25% median A/A; do_bench_cudagraph: 0.2% median, "
              "4.3% worst (shared/gpu/README.md, 18 rows, 2 processes)")

CALIBER_MARKER = "GRAPH_MEMCPY_NODES"

# The Triton copy kernel's (elements per program, num_warps): the default and
# the sweep the extras process picks the fastest of (by eager events), so
# that every A/A process runs the same, good, kernel.
DEFAULT_COPY = (4096, 4)
COPY_SWEEP = ((2048, 4), (4096, 4), (4096, 8), (8192, 8), (16384, 16))


# --- pure helpers (unit-tested without a GPU) -------------------------------------------

def rel_diff(a, b):
    """|a - b| / min(a, b) for two positive values (None otherwise)."""
    if a is None or b is None:
        return None
    a, b = float(a), float(b)
    if not (a > 0 and b > 0) or not (math.isfinite(a) and math.isfinite(b)):
        return None
    return abs(a - b) / min(a, b)


def median(values):
    v = sorted(float(x) for x in values)
    if not v:
        return None
    n = len(v)
    h = (n - 1) * 0.5
    lo = int(h)
    if lo + 1 >= n:
        return v[lo]
    return v[lo] + (h - lo) * (v[lo + 1] - v[lo])


def drift(values):
    """A/A drift of one measurement repeated in several processes: every
    pair's |a-b|/min(a,b). None entries (failed processes) are left out.
    Returns {n, pairs, median, worst} or None with fewer than two values."""
    v = [float(x) for x in values if x is not None and float(x) > 0
         and math.isfinite(float(x))]
    if len(v) < 2:
        return None
    d = [rel_diff(v[i], v[j]) for i in range(len(v)) for j in range(i + 1, len(v))]
    return {"n": len(v), "pairs": len(d), "median": median(d), "worst": max(d)}


def drift_verdict(cls, d):
    """PASS/FAIL of a drift summary against the goals of its kernel class."""
    if d is None:
        return "n/a"
    if cls == "1us":
        return "PASS" if d["worst"] <= GOALS["drift_1us_worst"] else "FAIL"
    ok = d["median"] <= GOALS["drift_5us_median"] and d["worst"] <= GOALS["drift_5us_worst"]
    return "PASS" if ok else "FAIL"


def peak_bandwidth(mem_clock_khz, bus_width_bits):
    """DRAM peak in bytes/s: memory clock x bus width x 2 (double data rate)."""
    if not mem_clock_khz or not bus_width_bits:
        return None
    return float(mem_clock_khz) * 1e3 * 2.0 * float(bus_width_bits) / 8.0


def bandwidth(nbytes, ms):
    """bytes/s moved when nbytes take ms milliseconds (None where unknown)."""
    if not nbytes or ms is None or not (ms > 0) or not math.isfinite(ms):
        return None
    return float(nbytes) / (float(ms) * 1e-3)


def fmt_pct(x, digits=3):
    return "-" if x is None else "%.*f%%" % (digits, 100.0 * x)


def fmt_us(ms):
    return "-" if ms is None else ("%.4f" % (ms * 1e3) if ms < 0.01 else "%.2f" % (ms * 1e3))


def fmt_s(s):
    return "-" if s is None else "%.3f" % s


def fmt_tbs(bps):
    return "-" if bps is None else "%.3f" % (bps / 1e12)


def format_table(headers, rows, right=None):
    """A plain-text table: headers, a rule, rows (cells str()'d; None is '-').
    right: the column indexes to right-align (default: all but the first)."""
    cells = [[("-" if c is None else str(c)) for c in r] for r in rows]
    ncol = len(headers)
    for r in cells:
        if len(r) != ncol:
            raise ValueError("row %r has %d cells, the header %d" % (r, len(r), ncol))
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    right = set(range(1, ncol)) if right is None else set(right)

    def line(r):
        out = []
        for i, c in enumerate(r):
            out.append(c.rjust(widths[i]) if i in right else c.ljust(widths[i]))
        return "  ".join(out).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] +
                     [line(r) for r in cells])


def parse_size(text):
    """'1GiB' / '512MiB' / '1073741824' -> bytes."""
    t = str(text).strip()
    units = (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("G", 1 << 30),
             ("M", 1 << 20), ("K", 1 << 10), ("B", 1))
    for suffix, mul in units:
        if t.endswith(suffix):
            num = t[: -len(suffix)].strip()
            break
    else:
        num, mul = t, 1
    try:
        value = float(num) * mul
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a size (e.g. 1GiB)" % text) from None
    if value <= 0 or value != int(value):
        raise argparse.ArgumentTypeError("%r is not a positive whole number of bytes" % text)
    return int(value)


def parse_shape(text):
    """'8192x8192' -> (8192, 8192)."""
    try:
        dims = tuple(int(x) for x in str(text).lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a shape like 8192x8192" % text) from None
    if len(dims) != 2 or min(dims) <= 0:
        raise argparse.ArgumentTypeError("%r is not a 2-d shape like 8192x8192" % text)
    return dims


def parse_list(choices, what):
    def parse(text):
        items = [x.strip() for x in str(text).split(",") if x.strip()]
        bad = [x for x in items if x not in choices]
        if bad or not items:
            raise argparse.ArgumentTypeError("%s: %s is not among %s" % (
                what, ",".join(bad) or "(empty)", ",".join(choices)))
        return tuple(x for x in choices if x in items)
    return parse


def build_parser():
    p = argparse.ArgumentParser(
        prog="timer_quality.py",
        description="Compare libzlbtimer with triton's do_bench and do_bench_cudagraph "
                    "on the same kernels: A/A drift over fresh processes, launch-overhead "
                    "immunity, physical limits, cost, graph caliber and cold L2.")
    p.add_argument("--timer-lib", default=os.path.join(REPO, "build", "libzlbtimer.so"),
                   help="libzlbtimer.so to measure with (default: build/libzlbtimer.so)")
    p.add_argument("--out", default=None,
                   help="write the full JSON report here (default: timer_quality.json "
                        "in the current directory)")
    p.add_argument("--procs", type=int, default=5,
                   help="fresh processes for the A/A drift (default 5, at least 2)")
    p.add_argument("--timers", type=parse_list(TIMERS, "--timers"), default=DEFAULT_TIMERS,
                   help="comma-separated subset of %s (default: all but zlbt_p1, "
                        "the one-placement engine)" % ",".join(TIMERS))
    p.add_argument("--kernels", type=parse_list(KERNEL_NAMES, "--kernels"),
                   default=KERNEL_NAMES,
                   help="comma-separated subset of %s" % ",".join(KERNEL_NAMES))
    p.add_argument("--no-flaggems", action="store_true",
                   help="leave out the FlagGems row (and the 10 s flag_gems import)")
    p.add_argument("--no-extras", action="store_true",
                   help="leave out the eager memcpy, caliber-trap and cold-L2 process")
    p.add_argument("--warmup-ms", type=float, default=1000.0,
                   help="warmup= of zlbt and do_bench (FlagGems' default 1000)")
    p.add_argument("--rep-ms", type=float, default=100.0,
                   help="rep= of zlbt and do_bench (FlagGems' default 100); "
                        "cudagraph_fg always uses 100, cudagraph triton's default 20")
    p.add_argument("--spin-us", type=float, default=20.0,
                   help="host busy-wait inside the add_1us_spin callable (default 20)")
    p.add_argument("--big-softmax", type=parse_shape, default=(8192, 8192),
                   help="shape of the ~250 us softmax (default 8192x8192)")
    p.add_argument("--copy-bytes", type=parse_size, default=1 << 30,
                   help="bytes copied by the copy kernel (default 1GiB; read+write "
                        "is twice that)")
    p.add_argument("--copy-block", type=int, default=None,
                   help="elements (int32) per program of the Triton copy kernel "
                        "(default: the fastest of a small sweep in the extras process, "
                        "else %d)" % DEFAULT_COPY[0])
    p.add_argument("--copy-warps", type=int, default=None,
                   help="num_warps of the Triton copy kernel (default: as --copy-block)")
    p.add_argument("--device", type=int, default=0, help="CUDA device index (default 0)")
    p.add_argument("--worker-timeout", type=float, default=240.0,
                   help="seconds before a worker process is killed (default 240)")
    p.add_argument("--deadline", type=float, default=540.0,
                   help="start no further worker once this many seconds have passed "
                        "or the next one would likely pass them (default 540)")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when a goal is not met (default: exit 0 once the "
                        "report is written)")
    # Internal: this script re-run as a worker.
    p.add_argument("--worker", choices=("aa", "extras"), help=argparse.SUPPRESS)
    p.add_argument("--worker-index", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--worker-out", help=argparse.SUPPRESS)
    return p


def parse_args(argv):
    p = build_parser()
    a = p.parse_args(argv)
    if a.procs < 2:
        p.error("--procs must be at least 2 (drift compares processes)")
    if a.worker and not a.worker_out:
        p.error("--worker needs --worker-out")
    if a.copy_block is not None and (a.copy_block <= 0 or a.copy_block & (a.copy_block - 1)):
        p.error("--copy-block must be a power of two")
    if a.copy_warps is not None and a.copy_warps not in (1, 2, 4, 8, 16, 32):
        p.error("--copy-warps must be a power of two up to 32")
    if a.copy_bytes % 4:
        p.error("--copy-bytes must be a multiple of 4 (int32 elements)")
    if a.no_flaggems:
        a.kernels = tuple(k for k in a.kernels if not k.startswith("fg_"))
    return a


def worker_argv(args, mode, index, out):
    """The command line of one worker: this script with the same options."""
    argv = [sys.executable, os.path.abspath(__file__),
            "--timer-lib", args.timer_lib,
            "--timers", ",".join(args.timers), "--kernels", ",".join(args.kernels),
            "--warmup-ms", repr(args.warmup_ms), "--rep-ms", repr(args.rep_ms),
            "--spin-us", repr(args.spin_us),
            "--big-softmax", "%dx%d" % tuple(args.big_softmax),
            "--copy-bytes", str(args.copy_bytes), "--device", str(args.device),
            "--procs", str(args.procs),
            "--worker", mode, "--worker-index", str(index), "--worker-out", out]
    if args.copy_block is not None:
        argv += ["--copy-block", str(args.copy_block)]
    if args.copy_warps is not None:
        argv += ["--copy-warps", str(args.copy_warps)]
    if args.no_flaggems:
        argv.append("--no-flaggems")
    return argv


def kernel_label(name, args=None):
    spec = next(k for k in KERNELS if k["name"] == name)
    label = spec["label"]
    if "%s" in label:
        if name == "softmax_250us":
            shape = args.big_softmax if args is not None else (8192, 8192)
            label = label % ("%dx%d" % tuple(shape))
        else:
            nbytes = args.copy_bytes if args is not None else 1 << 30
            label = label % (("%g GiB" % (nbytes / float(1 << 30))) if nbytes >= 1 << 30
                             else "%g MiB" % (nbytes / float(1 << 20)))
    return label


def kernel_bytes(name, args):
    """DRAM bytes a call moves if nothing is L2-resident: read + write."""
    if name in ("add_1us", "add_1us_spin"):
        return 3 * 65536 * 2
    if name == "softmax_5us":
        return 2 * 1024 * 1024 * 2
    if name == "softmax_250us":
        r, c = args.big_softmax
        return 2 * r * c * 2
    if name == "copy_1gib":
        return 2 * args.copy_bytes
    if name.startswith("fg_softmax"):
        return 2 * 4096 * 4096 * 2
    return None


# --- aggregation and the report (pure) ---------------------------------------------------

def _values(workers, kernel, timer, key="ms"):
    out = []
    for w in workers:
        r = ((w.get("results") or {}).get(kernel) or {}).get(timer) or {}
        out.append(r.get(key) if r.get("error") is None else None)
    return out


def aggregate(args, workers, extras):
    """Everything the report says, from the workers' JSON. workers: the A/A
    processes' results (a failed one may be {"error": ...}); extras: the
    extras process's, or None."""
    env = extras.get("env") if extras and extras.get("env") else None
    if env is None:
        env = next((w.get("env") for w in workers if w.get("env")), None) or {}
    ok_workers = [w for w in workers if w.get("results") is not None]
    s = {"env": env, "procs_asked": args.procs, "procs_ok": len(ok_workers),
         "worker_errors": [w.get("error") for w in workers if w.get("error")],
         "kernels": {}, "verdicts": []}
    peak = env.get("peak_bw_bps")
    l2 = env.get("l2_bytes") or 0

    for name in args.kernels:
        spec = next(k for k in KERNELS if k["name"] == name)
        nbytes = kernel_bytes(name, args)
        kd = {"label": kernel_label(name, args), "cls": spec["cls"], "bytes": nbytes,
              "timers": {}}
        for t in args.timers:
            vals = _values(ok_workers, name, t)
            walls = _values(ok_workers, name, t, "wall_s")
            errs = [(((w.get("results") or {}).get(name) or {}).get(t) or {}).get("error")
                    for w in ok_workers]
            centre = median([v for v in vals if v is not None])
            td = {"values_ms": vals, "centre_ms": centre,
                  "drift": drift(vals),
                  "wall_s": median([x for x in walls if x is not None]),
                  "errors": [e for e in errs if e],
                  "bw_bps": bandwidth(nbytes, centre)}
            td["beyond_peak"] = bool(peak and td["bw_bps"] and nbytes and
                                     nbytes > 4 * l2 and td["bw_bps"] > peak)
            if t == "zlbt":
                td["verdict"] = drift_verdict(spec["cls"], td["drift"])
                recs = [((((w.get("results") or {}).get(name) or {}).get(t) or {})
                         .get("record") or {}) for w in ok_workers]
                td["zlbt"] = _zlbt_digest(recs)
                if td["zlbt"] and td["zlbt"]["timers"] != ["graph"]:
                    # A fallback to direct timing is not libzlbtimer's number.
                    td["verdict"] = "FAIL"
            kd["timers"][t] = td
        s["kernels"][name] = kd

    # Launch-overhead immunity.
    lo = {}
    if "add_1us" in s["kernels"] and "add_1us_spin" in s["kernels"]:
        for t in args.timers:
            a = s["kernels"]["add_1us"]["timers"][t]["centre_ms"]
            b = s["kernels"]["add_1us_spin"]["timers"][t]["centre_ms"]
            ratio = (b / a) if (a and b) else None
            lo[t] = {"plain_ms": a, "spin_ms": b, "ratio": ratio}
        if "zlbt" in lo and lo["zlbt"]["ratio"] is not None:
            lo["zlbt"]["verdict"] = ("PASS" if abs(lo["zlbt"]["ratio"] - 1.0)
                                     < GOALS["launch_ratio"] else "FAIL")
    s["launch"] = lo

    # Physical limit.
    phys = {"peak_bps": peak, "peak_how": env.get("peak_how"), "candidates": {}}
    memcpy = (extras or {}).get("memcpy_eager") or {}
    if memcpy.get("ms"):
        phys["candidates"]["eager memcpy (events)"] = bandwidth(memcpy.get("bytes"),
                                                                memcpy["ms"])
    if "copy_1gib" in s["kernels"]:
        for t, td in s["kernels"]["copy_1gib"]["timers"].items():
            if td["bw_bps"]:
                phys["candidates"]["kernel copy, %s" % TIMER_LABELS[t]] = td["bw_bps"]
        cands = [v for v in phys["candidates"].values() if v]
        best = max(cands) if cands else None
        phys["best_bps"] = best
        z = s["kernels"]["copy_1gib"]["timers"].get("zlbt")
        if z and z["bw_bps"] and best:
            phys["zlbt_fraction"] = z["bw_bps"] / best
            phys["zlbt_verdict"] = ("PASS" if phys["zlbt_fraction"] >= GOALS["copy_fraction"]
                                    else "FAIL")
    over = []
    for name, kd in s["kernels"].items():
        for t, td in kd["timers"].items():
            if td["beyond_peak"]:
                over.append({"kernel": name, "timer": t, "bw_bps": td["bw_bps"]})
    for label, bps in phys["candidates"].items():
        if peak and bps and bps > peak and label.startswith("eager"):
            over.append({"kernel": "memcpy", "timer": label, "bw_bps": bps})
    phys["beyond_peak"] = over
    phys["peak_verdict"] = ("n/a" if not peak else
                            "FAIL" if any(o["timer"] == "zlbt" for o in over) else "PASS")
    s["physical"] = phys

    # Cost: per measurement; per torch+gems pair for the FlagGems row.
    cost = {}
    for pair, (a, b) in PAIRS.items():
        if a in s["kernels"] and b in s["kernels"]:
            row = {}
            for t in args.timers:
                wa = s["kernels"][a]["timers"][t]["wall_s"]
                wb = s["kernels"][b]["timers"][t]["wall_s"]
                da = s["kernels"][a]["timers"][t]["drift"]
                db = s["kernels"][b]["timers"][t]["drift"]
                row[t] = {"pair_wall_s": (wa + wb) if (wa is not None and wb is not None)
                          else None,
                          "drift_median": max(da["median"], db["median"]) if da and db
                          else None,
                          "drift_worst": max(da["worst"], db["worst"]) if da and db
                          else None}
            if all(v["pair_wall_s"] is None for v in row.values()):
                continue                  # the pair was not measured (no flag_gems)
            z, f = row.get("zlbt"), row.get("cudagraph_fg")
            if z and f and z["pair_wall_s"] is not None and f["pair_wall_s"] is not None \
                    and z["drift_worst"] is not None and f["drift_worst"] is not None:
                ok = (z["pair_wall_s"] <= f["pair_wall_s"] and
                      z["drift_median"] <= f["drift_median"] and
                      z["drift_worst"] <= f["drift_worst"])
                row["verdict"] = "PASS" if ok else "FAIL"
            cost[pair] = row
    s["cost"] = cost

    # Caliber trap and cold L2 (the extras process).
    cal = (extras or {}).get("caliber")
    if cal:
        graph = cal.get("graph") or {}
        ok = (cal.get("timer") == "graph" and (graph.get("memcpys") or 0) >= 1 and
              CALIBER_MARKER in (cal.get("markers") or []) and
              bool(cal.get("stdout_marker")))
        cal = dict(cal)
        cal["bw_bps"] = bandwidth(cal.get("bytes"), cal.get("ms"))
        cal["verdict"] = "PASS" if ok else "FAIL"
    s["caliber"] = cal
    cold = (extras or {}).get("cold_l2")
    if cold:
        cold = dict(cold)
        h, c = median(cold.get("hot_ms") or []), median(cold.get("cold_ms") or [])
        cold["hot_centre_ms"], cold["cold_centre_ms"] = h, c
        cold["verdict"] = ("n/a" if h is None or c is None else
                           "PASS" if c >= h and cold.get("cold_l2") == "cold" else "FAIL")
    s["cold_l2"] = cold

    verdicts = []
    for name, kd in s["kernels"].items():
        z = kd["timers"].get("zlbt")
        if z and z.get("verdict") in ("PASS", "FAIL"):
            verdicts.append(("drift %s" % name, z["verdict"]))
    if lo.get("zlbt", {}).get("verdict"):
        verdicts.append(("launch-overhead immunity", lo["zlbt"]["verdict"]))
    if phys.get("zlbt_verdict"):
        verdicts.append(("copy >= 90% of best bandwidth", phys["zlbt_verdict"]))
    if phys.get("peak_verdict") in ("PASS", "FAIL"):
        verdicts.append(("nothing beyond DRAM peak (zlbt)", phys["peak_verdict"]))
    for pair, row in cost.items():
        if row.get("verdict"):
            verdicts.append(("cost %s pair vs FlagGems cudagraph" % pair, row["verdict"]))
    if cal:
        verdicts.append(("graph caliber trap", cal["verdict"]))
    if cold and cold["verdict"] in ("PASS", "FAIL"):
        verdicts.append(("cold L2 >= hot", cold["verdict"]))
    s["verdicts"] = verdicts
    return s


def _zlbt_digest(recs):
    """What libzlbtimer said about its own measurements, across processes."""
    recs = [r for r in recs if r]
    if not recs:
        return None
    stops = {}
    for r in recs:
        k = str(r.get("stop_reason"))
        stops[k] = stops.get(k, 0) + 1
    noises = [r.get("noise") for r in recs if r.get("noise") is not None]
    clocks = [r.get("clock_mhz") for r in recs if r.get("clock_mhz")]
    spreads = [r.get("placement_spread") for r in recs
               if r.get("placement_spread") is not None]
    pnoises = [r.get("placement_noise") for r in recs
               if r.get("placement_noise") is not None]
    return {"placements": median([r.get("placements") or 1 for r in recs]),
            "placements_range": [min(r.get("placements") or 1 for r in recs),
                                 max(r.get("placements") or 1 for r in recs)],
            "placement_spread": median(spreads) if spreads else None,
            "placement_noise": median(pnoises) if pnoises else None,
            "timers": sorted(set(str(r.get("timer")) for r in recs)),
            "n": median([r.get("n") or 0 for r in recs]),
            "k": median([r.get("calls_per_replay") or 0 for r in recs]),
            "noise": median(noises) if noises else None,
            "stop": stops,
            "discarded": sum(r.get("discarded") or 0 for r in recs),
            "clock_mhz": median(clocks) if clocks else None,
            "markers": sorted(set(m for r in recs for m in (r.get("markers") or [])))}


def render(args, s, command):
    """The report, as text."""
    out = []
    env = s["env"] or {}
    out.append("timer_quality: libzlbtimer vs triton do_bench / do_bench_cudagraph")
    out.append("command: %s" % command)
    for k in ("device", "capability", "driver", "torch", "torch_cuda", "triton",
              "flag_gems", "python", "host", "zlbt_abi", "zlbt_rule"):
        if env.get(k) is not None:
            out.append("  %-11s %s" % (k, env[k]))
    if env.get("peak_bw_bps"):
        out.append("  %-11s %s TB/s (%s)" % ("DRAM peak", fmt_tbs(env["peak_bw_bps"]),
                                            env.get("peak_how")))
    out.append("processes: %d of %d A/A workers succeeded" % (s["procs_ok"],
                                                            s["procs_asked"]))
    for e in s["worker_errors"]:
        out.append("  worker error: %s" % e)
    out.append("timers: " + "; ".join("%s = %s" % (TIMER_LABELS[t], TIMER_NOTES[t])
                                      for t in args.timers))
    if getattr(args, "copy_block", None):
        out.append("copy kernel: Triton, int32, BLOCK=%s num_warps=%s (%s)" % (
            args.copy_block, args.copy_warps, getattr(args, "copy_how", "given")))
    out.append("")

    out.append("== A/A drift over fresh processes (pairwise |a-b|/min(a,b) of the centre) ==")
    out.append("goals (libzlbtimer): kernels >= 5 us: median <= 0.1%, worst <= 0.5%; "
               "~1 us: worst <= 1%")
    out.append("references: " + REFERENCES)
    rows = []
    for name, kd in s["kernels"].items():
        first = True
        for t, td in kd["timers"].items():
            d = td["drift"] or {}
            note = td.get("verdict", "")
            if td["errors"]:
                note = (note + " errors: " + "; ".join(sorted(set(td["errors"])))[:80]).strip()
            z = td.get("zlbt")
            if z and z.get("timers") and z["timers"] != ["graph"]:
                note += " TIMER=%s" % "/".join(z["timers"])
            rows.append([kd["label"] if first else "", TIMER_LABELS[t],
                         fmt_us(td["centre_ms"]), fmt_pct(d.get("median")),
                         fmt_pct(d.get("worst")), d.get("n"), fmt_s(td["wall_s"]),
                         fmt_tbs(td["bw_bps"]), note])
            first = False
    out.append(format_table(["kernel", "timer", "centre us", "drift med", "drift worst",
                             "procs", "wall s", "TB/s", "verdict"], rows,
                            right=(2, 3, 4, 5, 6, 7)))
    zrows = []
    for name, kd in s["kernels"].items():
        z = (kd["timers"].get("zlbt") or {}).get("zlbt")
        if z:
            lo, hi = z.get("placements_range") or (z.get("placements", 1),) * 2
            zrows.append([kd["label"], z["n"], z["k"],
                          "%d" % lo if lo == hi else "%d-%d" % (lo, hi),
                          fmt_pct(z.get("placement_spread"), 3),
                          fmt_pct(z.get("placement_noise"), 3), fmt_pct(z["noise"], 4),
                          ",".join("%s:%d" % kv for kv in sorted(z["stop"].items())),
                          z["discarded"], z["clock_mhz"], " ".join(z["markers"])])
    if zrows:
        out.append("")
        out.append("libzlbtimer's own account (medians over processes):")
        out.append(format_table(["kernel", "samples", "K", "placements", "spread",
                                 "pl. noise", "noise", "stop", "discarded", "SM MHz",
                                 "markers"], zrows,
                                right=(1, 2, 3, 4, 5, 6, 8, 9)))
    out.append("")

    out.append("== Launch-overhead immunity (add 64k + %g us host spin in the callable) =="
               % args.spin_us)
    if s["launch"]:
        rows = [[TIMER_LABELS[t], fmt_us(v["plain_ms"]), fmt_us(v["spin_ms"]),
                 "-" if v["ratio"] is None else "%.4f" % v["ratio"], v.get("verdict", "")]
                for t, v in s["launch"].items()]
        out.append("goal (libzlbtimer): reported GPU time moves < 1%")
        out.append(format_table(["timer", "add us", "add+spin us", "ratio", "verdict"],
                                rows))
    else:
        out.append("not measured (add_1us and add_1us_spin both needed)")
    out.append("")

    out.append("== Physical limit (bytes = read + write) ==")
    p = s["physical"]
    out.append("DRAM peak: %s TB/s (%s)" % (fmt_tbs(p.get("peak_bps")),
                                          p.get("peak_how") or "unknown"))
    for label, bps in p["candidates"].items():
        out.append("  %-40s %s TB/s" % (label, fmt_tbs(bps)))
    if p.get("best_bps"):
        out.append("best copy bandwidth of this run: %s TB/s" % fmt_tbs(p["best_bps"]))
    if p.get("zlbt_fraction") is not None:
        out.append("libzlbtimer kernel copy: %.1f%% of the best (goal >= %d%%): %s"
                   % (100 * p["zlbt_fraction"], 100 * GOALS["copy_fraction"],
                      p["zlbt_verdict"]))
    if p["beyond_peak"]:
        for o in p["beyond_peak"]:
            out.append("  BEYOND PEAK: %s under %s implies %s TB/s" % (
                o["kernel"], o["timer"], fmt_tbs(o["bw_bps"])))
    if any(o["timer"].startswith("eager") for o in p["beyond_peak"]):
        out.append("  (the eager memcpy, timed by plain events, beats the computed peak: "
                   "the peak figure itself is suspect)")
    out.append("no reported time implies more than the DRAM peak (libzlbtimer, working "
               "sets > 4x L2): %s" % p.get("peak_verdict"))
    out.append("")

    out.append("== Cost (wall seconds per measurement; per torch+gems pair) ==")
    for pair, row in s["cost"].items():
        rows = [[TIMER_LABELS[t], fmt_s(v["pair_wall_s"]), fmt_pct(v["drift_median"]),
                 fmt_pct(v["drift_worst"])]
                for t, v in row.items() if t != "verdict"]
        out.append("%s (drift: the worse of the two rows)" % pair)
        out.append(format_table(["timer", "pair wall s", "drift med", "drift worst"], rows))
        if row.get("verdict"):
            out.append("goal: libzlbtimer pair wall <= FlagGems cudagraph mode's at equal or "
                       "better drift: %s" % row["verdict"])
    if not s["cost"]:
        out.append("no FlagGems pair measured")
    out.append("")

    out.append("== Graph caliber trap (captured same-dtype copy_ is a memcpy node) ==")
    cal = s["caliber"]
    if cal:
        if cal.get("error"):
            out.append("error: %s" % cal["error"])
        out.append("timer=%s graph=%s markers=%s stdout line=%s" % (
            cal.get("timer"), cal.get("graph"), cal.get("markers"),
            cal.get("stdout_marker") or "-"))
        out.append("captured copy_: %s us = %s TB/s (eager memcpy: %s TB/s): %s" % (
            fmt_us(cal.get("ms")), fmt_tbs(cal.get("bw_bps")),
            fmt_tbs(p["candidates"].get("eager memcpy (events)")), cal["verdict"]))
    else:
        out.append("not run")
    out.append("")

    out.append("== Cold L2 (softmax 1024x1024 fp16 under libzlbtimer) ==")
    cold = s["cold_l2"]
    if cold:
        if cold.get("error"):
            out.append("error: %s" % cold["error"])
        out.append("hot %s us, cold %s us (flush %s bytes, l2=%s): cold >= hot: %s" % (
            fmt_us(cold.get("hot_centre_ms")), fmt_us(cold.get("cold_centre_ms")),
            cold.get("l2_flush_bytes"), cold.get("cold_l2"), cold["verdict"]))
    else:
        out.append("not run")
    out.append("")

    out.append("== Summary ==")
    for what, v in s["verdicts"]:
        out.append("  %-44s %s" % (what, v))
    if not s["verdicts"]:
        out.append("  nothing was judged")
    return "\n".join(out)


# --- the parent: runs the workers, writes the report ------------------------------------

MARKERS = ("GRAPH_MEMCPY_NODES", "GRAPH_MEMSET_NODES", "BENCHMARK_DIRECT_NO_CUDAGRAPH",
           "CAPTURE_FATAL")


def marker_lines(stdout):
    """The zlbench marker lines of a worker's stdout (what run.log greps find)."""
    return [line.strip() for line in (stdout or "").splitlines()
            if line.strip().split(" ", 1)[0] in MARKERS]


def _abs_pythonpath():
    parts = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
             if p]
    for extra in (os.path.join(REPO, "python"),
                  os.path.join(REPO, ".carry", "FlagGems", "src"),
                  os.path.join(REPO, ".carry", "pylib")):
        if os.path.isdir(extra) and extra not in parts:
            parts.append(extra)
    return os.pathsep.join(parts)


def pick_copy_config(args, extras):
    """Fix the copy kernel's configuration for every A/A process: the user's,
    else the extras process's fastest, else DEFAULT_COPY."""
    if args.copy_block is not None and args.copy_warps is not None:
        args.copy_how = "given"
        return
    best = ((extras or {}).get("copy_config") or {}).get("best")
    if best:
        # The sweep kept to what was given, so its best agrees with it.
        args.copy_block, args.copy_warps = int(best[0]), int(best[1])
        args.copy_how = "fastest of the sweep"
        return
    if args.copy_block is None:
        args.copy_block = DEFAULT_COPY[0]
    if args.copy_warps is None:
        args.copy_warps = DEFAULT_COPY[1]
    args.copy_how = "default"


def run_worker(args, mode, index, tmpdir, timeout):
    out = os.path.join(tmpdir, "%s-%d.json" % (mode, index))
    argv = worker_argv(args, mode, index, out)
    env = dict(os.environ)
    env["PYTHONPATH"] = _abs_pythonpath()
    env.setdefault("GEMS_VENDOR", "nvidia")
    env["PYTHONUNBUFFERED"] = "1"
    t0 = time.time()
    try:
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
        rc, stdout, stderr = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        rc = "timeout"
        stdout = e.stdout.decode("utf-8", "replace") if isinstance(e.stdout, bytes) \
            else (e.stdout or "")
        stderr = e.stderr.decode("utf-8", "replace") if isinstance(e.stderr, bytes) \
            else (e.stderr or "")
    wall = time.time() - t0
    data = None
    if os.path.exists(out):
        try:
            with open(out, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            data = {"error": "worker output unreadable: %s" % e}
    if data is None:
        data = {"error": "%s worker %d: exit %s, no output; stderr tail: %s" % (
            mode, index, rc, " | ".join(stderr.strip().splitlines()[-5:]))}
    elif rc != 0 and not data.get("error"):
        data["error"] = "%s worker %d: exit %s" % (mode, index, rc)
    data["wall_s"] = wall
    data["rc"] = rc
    data["marker_lines"] = marker_lines(stdout)
    cal = data.get("caliber")
    if isinstance(cal, dict):
        cal["stdout_marker"] = next((m for m in data["marker_lines"]
                                     if m.startswith(CALIBER_MARKER + " ")), None)
    data["stdout_tail"] = stdout[-4000:]
    data["stderr_tail"] = stderr[-4000:]
    return data


def parent(args, argv):
    command = " ".join(shlex.quote(x) for x in [sys.executable, sys.argv[0]] + list(argv))
    knobs = {k: v for k, v in sorted(os.environ.items())
             if k.startswith("ZLB_") or k in ("PYTHONPATH", "CUDA_VISIBLE_DEVICES",
                                               "GEMS_VENDOR")}
    print("command: %s" % command, flush=True)
    print("environment: %s" % " ".join("%s=%s" % kv for kv in knobs.items()), flush=True)
    args.timer_lib = os.path.abspath(args.timer_lib)
    if not os.path.isfile(args.timer_lib):
        print("WARNING: %s does not exist: every zlbt measurement will fall back to "
              "direct timing" % args.timer_lib, flush=True)
    out_path = args.out or os.path.join(os.getcwd(), "timer_quality.json")
    t_start = time.time()
    extras = None
    workers = []
    with tempfile.TemporaryDirectory(prefix="timer_quality.") as tmp:
        if not args.no_extras:
            print("[extras] eager memcpy, caliber trap, cold L2 ...", flush=True)
            extras = run_worker(args, "extras", 0, tmp, args.worker_timeout)
            _progress("extras", extras)
        pick_copy_config(args, extras)
        print("[copy kernel] BLOCK=%d num_warps=%d (%s)" % (
            args.copy_block, args.copy_warps, args.copy_how), flush=True)
        longest = 0.0
        for i in range(args.procs):
            elapsed = time.time() - t_start
            if i >= 2 and elapsed + longest > args.deadline:
                print("[aa] deadline: %.0f s spent, the next worker would take ~%.0f s: "
                      "stopping at %d processes" % (elapsed, longest, i), flush=True)
                break
            print("[aa %d/%d] measuring ..." % (i + 1, args.procs), flush=True)
            w = run_worker(args, "aa", i, tmp, args.worker_timeout)
            longest = max(longest, w["wall_s"])
            workers.append(w)
            _progress("aa %d/%d" % (i + 1, args.procs), w)
    s = aggregate(args, workers, extras)
    text = render(args, s, command)
    print("", flush=True)
    print(text, flush=True)
    print("\ntotal wall: %.1f s" % (time.time() - t_start), flush=True)
    report = {"command": command, "environment": knobs, "args": _jsonable(vars(args)),
              "goals": GOALS, "summary": s, "workers": workers, "extras": extras,
              "total_wall_s": time.time() - t_start, "text": text}
    try:
        d = os.path.dirname(os.path.abspath(out_path))
        os.makedirs(d, exist_ok=True)
        with open(out_path, "w", encoding="utf-8") as f:
            json.dump(_jsonable(report), f, indent=1, allow_nan=False)
        print("report: %s" % out_path, flush=True)
    except (OSError, ValueError) as e:
        print("could not write %s: %s" % (out_path, e), flush=True)
        return 2
    if args.strict and any(v == "FAIL" for _, v in s["verdicts"]):
        return 1
    return 0


def _progress(tag, w):
    if w.get("error"):
        print("[%s] FAILED after %.1f s: %s" % (tag, w["wall_s"], w["error"]), flush=True)
        tail = (w.get("stderr_tail") or "").strip().splitlines()[-8:]
        for line in tail:
            print("    | %s" % line, flush=True)
    else:
        errs = w.get("section_errors") or []
        print("[%s] done in %.1f s%s" % (tag, w["wall_s"], "" if not errs else
                                         " (%d section errors)" % len(errs)), flush=True)
        for e in errs:
            print("    section error: %s" % e, flush=True)


def _jsonable(obj):
    if obj is None or isinstance(obj, (bool, str, int)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return str(obj)


# --- the workers (GPU) --------------------------------------------------------------------

def _short(e):
    text = str(e).strip().splitlines()
    return "%s: %s" % (type(e).__name__, text[0] if text else "")[:300]


class Worker:
    """The GPU side: imports torch/triton/zlbench lazily."""

    def __init__(self, args):
        self.args = args
        self.section_errors = []
        import torch

        self.torch = torch
        torch.cuda.set_device(args.device)
        self.dev = "cuda:%d" % args.device
        os.environ.setdefault("ZLB_TIMER", "graph")
        os.environ["ZLB_TIMER"] = "graph"
        os.environ["ZLB_TIMER_LIB"] = os.path.abspath(args.timer_lib)
        if HERE not in sys.path:
            sys.path.insert(0, HERE)
        import _probe

        _probe.engine_env(args.timer_lib)
        import triton
        import triton.testing

        self.triton = triton
        from zlbench import _env, _graph, _state, timing

        self.zl_env, self.zl_graph, self.zl_state, self.zl_timing = _env, _graph, _state, timing
        self.flag_gems = None

    # -- environment --
    def env(self):
        torch, a = self.torch, self.args
        e = {"python": sys.version.split()[0], "host": platform.node(),
             "torch": str(torch.__version__), "torch_cuda": torch.version.cuda,
             "triton": str(getattr(self.triton, "__version__", None))}
        try:
            p = torch.cuda.get_device_properties(a.device)
            e["device"] = str(p.name)
            e["capability"] = "%d.%d" % (p.major, p.minor)
            e["sm_count"] = getattr(p, "multi_processor_count", None)
            e["l2_bytes"] = getattr(p, "L2_cache_size", None)
            e["total_memory"] = getattr(p, "total_memory", None)
            clk = getattr(p, "memory_clock_rate", None)
            bus = getattr(p, "memory_bus_width", None)
            how = "torch device properties"
        except Exception as ex:
            self.section_errors.append("device properties: %s" % _short(ex))
            clk = bus = None
            how = None
        drv, c2, b2 = _driver_facts(a.device)
        e["driver"] = drv
        if not clk or not bus:
            clk, bus, how = c2, b2, "cuDeviceGetAttribute(36, 37)"
        if not clk or not bus:
            try:
                uuid = "GPU-" + str(torch.cuda.get_device_properties(a.device).uuid)
            except Exception:
                uuid = None
            c3, b3 = _nvml_memory_facts(uuid)
            if c3 and b3:
                clk, bus, how = c3, b3, "NVML max memory clock and bus width"
        e["memory_clock_khz"], e["bus_width_bits"] = clk, bus
        e["peak_bw_bps"] = peak_bandwidth(clk, bus)
        e["peak_how"] = ("%s: %s kHz x %s bit x 2" % (how, clk, bus)) if e["peak_bw_bps"] \
            else None
        try:
            lib, why = self.zl_graph.timer_lib(os.environ["ZLB_TIMER_LIB"])
            e["zlbt_abi"] = ("%d (%s)" % (lib.lib_abi, lib.path)) if lib else why
        except Exception as ex:
            e["zlbt_abi"] = _short(ex)
        try:
            r = self.zl_timing._settings()["rule"]
            e["zlbt_rule"] = "min_samples=%d noise_target=%g max_wall_ms=%g l2=%s " \
                             "clock_floor=%g (min GPU time = rep)" % (
                                 r.min_samples, r.noise_target, r.max_wall_ms, r.l2,
                                 r.clock_floor)
        except Exception as ex:
            e["zlbt_rule"] = _short(ex)
        if self.flag_gems is not None:
            e["flag_gems"] = str(getattr(self.flag_gems, "__version__", "?"))
        return e

    # -- kernels --
    def build(self, name):
        """fn() for one kernel (a callable with no arguments), or raises."""
        torch, a = self.torch, self.args
        if name in ("add_1us", "add_1us_spin"):
            x = torch.randn(65536, dtype=torch.float16, device=self.dev)
            y = torch.randn(65536, dtype=torch.float16, device=self.dev)
            if name == "add_1us":
                return lambda: torch.add(x, y)
            spin = a.spin_us * 1e-6
            clock = time.perf_counter

            def spun():
                end = clock() + spin
                while clock() < end:
                    pass
                return torch.add(x, y)
            return spun
        if name in ("softmax_5us", "softmax_250us", "fg_softmax_torch", "fg_softmax_gems"):
            shape = {"softmax_5us": (1024, 1024), "softmax_250us": tuple(a.big_softmax)}.get(
                name, (4096, 4096))
            x = torch.randn(*shape, dtype=torch.float16, device=self.dev)
            return lambda: torch.softmax(x, dim=-1)
        if name == "copy_1gib":
            src, dst = self._copy_buffers()
            return self.copy_fn(src, dst, a.copy_block or DEFAULT_COPY[0],
                                a.copy_warps or DEFAULT_COPY[1])
        raise ValueError("unknown kernel %s" % name)

    def copy_fn(self, src, dst, block, warps):
        kernel = _copy_kernel()
        n = src.numel()
        grid = ((n + block - 1) // block,)
        even = n % block == 0
        return lambda: kernel[grid](src, dst, n, BLOCK=block, EVEN=even, num_warps=warps)

    def _copy_buffers(self):
        if not hasattr(self, "_bufs"):
            torch = self.torch
            n = self.args.copy_bytes // 4
            src = torch.randint(-2 ** 31, 2 ** 31 - 1, (n,), dtype=torch.int32,
                                device=self.dev)
            dst = torch.empty_like(src)
            self._bufs = (src, dst)
        return self._bufs

    def import_flag_gems(self):
        os.environ.setdefault("GEMS_VENDOR", "nvidia")
        import flag_gems

        self.flag_gems = flag_gems
        return flag_gems

    def context(self, name):
        if name == "fg_softmax_gems":
            # As FlagGems' Benchmark.run does for a gems row: do_bench's L2
            # flush (zero_) stays torch's.
            return self.flag_gems.use_gems(exclude=["zero_"])
        return _Nothing()

    # -- timers --
    def time_one(self, timer, fn, l2=None):
        """(value ms, wall s, zlbt record or None)."""
        a, tt = self.args, self.triton.testing
        rec = None
        t0 = time.perf_counter()
        if timer in ("zlbt", "zlbt_p1"):
            knobs = {"ZLB_L2": l2}
            if timer == "zlbt_p1":
                knobs["ZLB_PLACEMENTS"] = "1"
            with _environ(knobs):
                del self.zl_state.pending[:]
                v = self.zl_timing.do_bench(fn, warmup=a.warmup_ms, rep=a.rep_ms,
                                            return_mode="median")
                rec = self.zl_state.pending.pop()["record"] if self.zl_state.pending \
                    else None
        elif timer == "do_bench":
            v = tt.do_bench(fn, warmup=a.warmup_ms, rep=a.rep_ms, return_mode="median")
        elif timer == "cudagraph":
            v = tt.do_bench_cudagraph(fn, return_mode="median")
        elif timer == "cudagraph_fg":
            v = tt.do_bench_cudagraph(fn, rep=100, return_mode="median")
        else:
            raise ValueError(timer)
        self.torch.cuda.synchronize()
        return float(v), time.perf_counter() - t0, rec

class _environ:
    """Set the knobs that are not None for the duration of a with block."""

    def __init__(self, knobs):
        self.knobs = {k: v for k, v in knobs.items() if v is not None}
        self.saved = {}

    def __enter__(self):
        for k, v in self.knobs.items():
            self.saved[k] = os.environ.get(k)
            os.environ[k] = v
        return self

    def __exit__(self, *exc):
        for k, old in self.saved.items():
            if old is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = old
        return False


def mean(values):
    return sum(values) / len(values)


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _record_digest(rec):
    if rec is None:
        return None
    keep = ("timer", "n", "median_ms", "noise", "stop_reason", "discarded", "clock_mhz",
            "clock_min_mhz", "l2", "l2_flush_bytes", "graph", "calls_per_replay",
            "warmup_calls", "markers", "fallback", "min_samples", "noise_target",
            "max_wall_ms", "stdrel", "placements", "placement_spread", "centre_ms",
            "placement_noise")
    return {k: rec.get(k) for k in keep}


def _driver_facts(device):
    """(driver version text, memory clock kHz, bus width bits) through
    libcuda.so.1; Nones where it cannot say."""
    import ctypes

    try:
        cu = ctypes.CDLL(os.environ.get("ZLB_LIBCUDA") or "libcuda.so.1")
    except OSError:
        return None, None, None
    drv = clk = bus = None
    try:
        v = ctypes.c_int(0)
        if cu.cuDriverGetVersion(ctypes.byref(v)) == 0:
            drv = "%d.%d (CUDA driver API %d)" % (v.value // 1000, (v.value % 1000) // 10,
                                                  v.value)
        if cu.cuInit(0) == 0:
            d = ctypes.c_int(0)
            if cu.cuDeviceGet(ctypes.byref(d), int(device)) == 0:
                c, b = ctypes.c_int(0), ctypes.c_int(0)
                if cu.cuDeviceGetAttribute(ctypes.byref(c), 36, d) == 0:
                    clk = c.value or None
                if cu.cuDeviceGetAttribute(ctypes.byref(b), 37, d) == 0:
                    bus = b.value or None
    except Exception:
        pass
    return drv, clk, bus


def _nvml_memory_facts(uuid):
    """(max memory clock kHz, bus width bits) from NVML for the device of
    this uuid ("GPU-..."); Nones where it cannot say."""
    import ctypes

    if not uuid:
        return None, None
    try:
        nv = ctypes.CDLL(os.environ.get("ZLB_LIBNVML") or "libnvidia-ml.so.1")
        if nv.nvmlInit_v2() != 0:
            return None, None
        h = ctypes.c_void_p()
        if nv.nvmlDeviceGetHandleByUUID(uuid.encode(), ctypes.byref(h)) != 0:
            return None, None
        mhz, bits = ctypes.c_uint(0), ctypes.c_uint(0)
        if nv.nvmlDeviceGetMaxClockInfo(h, 2, ctypes.byref(mhz)) != 0:   # NVML_CLOCK_MEM
            return None, None
        if nv.nvmlDeviceGetMemoryBusWidth(h, ctypes.byref(bits)) != 0:
            return None, None
        return (mhz.value * 1000 or None), (bits.value or None)
    except Exception:
        return None, None


def _copy_kernel():
    """A Triton copy kernel (loads and stores on the SMs, not the copy engine)."""
    global triton, tl
    import triton
    import triton.language as tl

    @triton.jit
    def zlb_copy_kernel(src, dst, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        if EVEN:
            tl.store(dst + offs, tl.load(src + offs))
        else:
            mask = offs < n
            tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)

    return zlb_copy_kernel


def worker_aa(args):
    """Every kernel under every timer, once, in this fresh process."""
    res = {"mode": "aa", "index": args.worker_index, "results": {}, "section_errors": []}
    w = Worker(args)
    res["section_errors"] = w.section_errors
    if any(k.startswith("fg_") for k in args.kernels):
        try:
            w.import_flag_gems()
        except Exception as e:
            w.section_errors.append("flag_gems cannot be imported, FlagGems row skipped: %s"
                                    % _short(e))
    res["env"] = w.env()
    fns = {}
    for name in args.kernels:
        if name.startswith("fg_") and w.flag_gems is None:
            res["results"][name] = {t: {"error": "flag_gems not importable"}
                                    for t in args.timers}
            continue
        try:
            fn = w.build(name)
            with w.context(name):
                for _ in range(3):       # compile, autotune, allocate: not timed
                    fn()
            w.torch.cuda.synchronize()
            fns[name] = fn
        except Exception as e:
            w.section_errors.append("%s: build failed: %s" % (name, _short(e)))
            res["results"][name] = {t: {"error": "build failed: %s" % _short(e)}
                                    for t in args.timers}
    # The first graphs captured in a process get placements the later ones
    # never see: on the H200 the first one or two captures of a 64k add ran
    # ~17% faster whatever the callable (plain 1.03 us, then 1.21 us for
    # every later graph, host spin or not). Settle that with one unrecorded
    # measurement per timer, so the rows compare like with like and the
    # launch-overhead pair is not confounded by which came first.
    if fns:
        settle = next(iter(fns.values()))
        for t in args.timers:
            try:
                with w.context("settle"):
                    w.time_one(t, settle)
            except Exception:
                pass
    for name, fn in fns.items():
        row = res["results"].setdefault(name, {})
        for t in args.timers:
            try:
                with w.context(name):
                    v, wall, rec = w.time_one(t, fn)
                row[t] = {"ms": v, "wall_s": wall, "record": _record_digest(rec),
                          "error": None}
            except Exception as e:
                row[t] = {"error": _short(e)}
                try:
                    w.torch.cuda.synchronize()
                except Exception:
                    pass
    return res


def worker_extras(args):
    """Eager memcpy bandwidth, the caliber trap, cold vs hot L2."""
    res = {"mode": "extras", "section_errors": []}
    w = Worker(args)
    res["section_errors"] = w.section_errors
    res["env"] = w.env()
    torch = w.torch

    # Eager D2D memcpy (same dtype: torch calls cudaMemcpyAsync), events.
    try:
        src, dst = w._copy_buffers()
        for _ in range(3):
            dst.copy_(src)
        torch.cuda.synchronize()
        times = []
        for _ in range(20):
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            dst.copy_(src)
            e1.record()
            e1.synchronize()
            times.append(float(e0.elapsed_time(e1)))
        good = [t for t in times if t > 0]
        res["memcpy_eager"] = {"ms": median(good) if good else None, "samples_ms": times,
                               "bytes": 2 * src.numel() * src.element_size()}
    except Exception as e:
        res["memcpy_eager"] = {"error": _short(e)}
        w.section_errors.append("eager memcpy: %s" % _short(e))

    # The copy kernel's configuration: the fastest of a small sweep.
    try:
        src, dst = w._copy_buffers()
        sweep = []
        for block, warps in COPY_SWEEP:
            if args.copy_block not in (None, block) or args.copy_warps not in (None, warps):
                continue
            try:
                fn = w.copy_fn(src, dst, block, warps)
                for _ in range(2):
                    fn()
                torch.cuda.synchronize()
                e0 = torch.cuda.Event(enable_timing=True)
                e1 = torch.cuda.Event(enable_timing=True)
                e0.record()
                for _ in range(10):
                    fn()
                e1.record()
                e1.synchronize()
                ms = float(e0.elapsed_time(e1)) / 10
                sweep.append({"block": block, "warps": warps, "ms": ms})
            except Exception as e:
                sweep.append({"block": block, "warps": warps, "error": _short(e)})
        good = [x for x in sweep if x.get("ms")]
        best = min(good, key=lambda x: x["ms"]) if good else None
        res["copy_config"] = {"sweep": sweep,
                              "best": [best["block"], best["warps"]] if best else None}
    except Exception as e:
        res["copy_config"] = {"error": _short(e)}
        w.section_errors.append("copy kernel sweep: %s" % _short(e))

    # The caliber trap: a captured same-dtype copy_ is a memcpy node.
    try:
        src, dst = w._copy_buffers()
        v, wall, rec = w.time_one("zlbt", lambda: dst.copy_(src))
        d = _record_digest(rec) or {}
        d.update({"ms": v, "wall_s": wall, "bytes": 2 * src.numel() * src.element_size()})
        res["caliber"] = d
    except Exception as e:
        res["caliber"] = {"error": _short(e)}
        w.section_errors.append("caliber trap: %s" % _short(e))

    # Cold vs hot L2 on the ~5 us softmax, interleaved.
    try:
        fn = w.build("softmax_5us")
        fn()
        torch.cuda.synchronize()
        hot, cold, recs = [], [], []
        for _ in range(2):
            v, _, r = w.time_one("zlbt", fn, l2="hot")
            hot.append(v)
            v, _, rc = w.time_one("zlbt", fn, l2="cold")
            cold.append(v)
            recs.append(_record_digest(rc))
        last = recs[-1] or {}
        res["cold_l2"] = {"hot_ms": hot, "cold_ms": cold, "cold_l2": last.get("l2"),
                          "l2_flush_bytes": last.get("l2_flush_bytes"),
                          "cold_records": recs}
    except Exception as e:
        res["cold_l2"] = {"error": _short(e)}
        w.section_errors.append("cold L2: %s" % _short(e))
    return res


def worker_main(args):
    t0 = time.time()
    try:
        res = worker_aa(args) if args.worker == "aa" else worker_extras(args)
    except Exception as e:
        import traceback

        traceback.print_exc()
        res = {"mode": args.worker, "error": "%s worker %d: %s" % (
            args.worker, args.worker_index, _short(e))}
    res["worker_wall_s"] = time.time() - t0
    with open(args.worker_out, "w", encoding="utf-8") as f:
        json.dump(_jsonable(res), f, allow_nan=False)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    if args.worker:
        # Found without PYTHONPATH too: zlbench lives in python/ beside bench/.
        py = os.path.join(REPO, "python")
        if py not in sys.path:
            sys.path.append(py)
        return worker_main(args)
    return parent(args, argv)


if __name__ == "__main__":
    sys.exit(main())
