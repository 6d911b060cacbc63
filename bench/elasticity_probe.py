#!/usr/bin/env python3
"""Can one process measure how a row's time follows the SM clock (issue 28)?

Between zlb's processes the SM clock settles 1940-1970 MHz on an H100 and
the rows follow it, each with an elasticity s (ln time = c - s ln clock)
that bench/clock_elasticity.py found the same on four matrices, three
machines: torch gelu 2048^2 about 0.85, torch cumsum 4096x16384 0.7, torch
amax 0.5, cross_entropy 0.3-0.5, mul and index_select 0, gems amax and
cumsum 0. Known, s would let zlb compare correct a row for its sides'
clocks instead of widening its interval by the whole clock difference.

This probe tries to measure s inside one process: it runs a burn (a graph
of fp16 matmuls 8192^3 that holds the board at its power cap, its SM clock
well below the boost clock), then, queued right behind it, replays the
row's graph between replays of a spin graph (torch.cuda._sleep, a fixed
count of SM cycles) while the clock climbs back, each replay timed with
CUDA events. A spin's cycles over its time is the clock at that moment; a
row replay gets the geometric mean of the spins on either side of it.
Before each burn the row is read the same way at its steady clock. Over
--cycles such bursts it fits s by least squares of ln time on ln clock, and
prints s, its standard error, the clock range it covered and the pairs'
median time in clock bins (does the time follow the clock on a line?).

If the s it prints matches clock_elasticity.py's between-process s row by
row, the engine can measure s per row in about a second; if it does not,
the clock during a recovery is not the clock between processes (another
clock domain moves with it, or the board's voltage), and that is the answer.

    python3 bench/elasticity_probe.py [--gems] [--cycles 4] --out $OUT/elasticity.json

--gems measures each row again with flag_gems.enable() (FlagGems on the
Python path). Nothing here asserts; it prints what it read.
"""

import argparse
import math
import os
import statistics
import sys
import time

import _probe

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from zlbench import _elasticity  # noqa: E402

ROWS = [
    ("gelu", (2048, 2048)), ("gelu", (4096, 4096)), ("gelu", (8192, 8192)),
    ("silu", (2048, 2048)), ("mul", (8192, 8192)), ("amax", (4096, 8192)),
    ("log_softmax", (2048, 4096)), ("log_softmax", (8192, 8192)),
    ("cumsum", (4096, 4096)), ("cumsum", (4096, 16384)),
    ("cross_entropy_loss", (4096, 32000)), ("index_select", (8192, 16384)),
    ("addmm", (1024, 1024, 1024)),
]

SPIN_CYCLES = _elasticity.SPIN_CYCLES
SPIN_NODES = _elasticity.SPIN_NODES
ROW_REPLAY_MS = 0.3       # calls per row graph: about this long a replay (_probe.k_for)
BURN_N = 8192             # the burn's matmul size
BURN_CALLS = 4            # matmuls per burn graph replay
BURN_MS = 400.0           # how long a burn holds the cap
RECOVER_PAIRS = 500       # spin/row pairs read behind each burn
STEADY_PAIRS = 100        # and before it, at the steady clock


def make_call(torch, op, shape):
    """A closure running op once on fp16 inputs of shape (made here)."""
    dev, h = "cuda", torch.float16
    F = torch.nn.functional
    if op == "addmm":
        m, n, k = shape
        bias = torch.randn(m, n, device=dev, dtype=h)
        p, q = torch.randn(m, k, device=dev, dtype=h), torch.randn(k, n, device=dev, dtype=h)
        return lambda: torch.addmm(bias, p, q)
    x = torch.randn(shape, device=dev, dtype=h)
    if op in ("gelu", "silu"):
        f = getattr(F, op)
        return lambda: f(x)
    if op == "mul":
        y = torch.randn(shape, device=dev, dtype=h)
        return lambda: torch.mul(x, y)
    if op == "amax":
        return lambda: torch.amax(x, dim=1)
    if op == "log_softmax":
        return lambda: torch.log_softmax(x, dim=-1)
    if op == "cumsum":
        return lambda: torch.cumsum(x, dim=1)
    if op == "cross_entropy_loss":
        t = torch.randint(0, shape[1], (shape[0],), device=dev)
        return lambda: F.cross_entropy(x, t)
    if op == "index_select":
        idx = torch.randint(0, shape[0], (shape[0],), device=dev)
        return lambda: torch.index_select(x, 0, idx)
    raise ValueError("no call for %s" % op)


def read_pairs(torch, spin, row, pairs):
    """[(clock MHz, row replay ms)] of pairs x (spin, row) replays: the
    engine's own reading (zlbench._elasticity), with its spin graph shape."""
    return _elasticity._pairs(torch.cuda, spin, row, pairs)


def fit(pairs):
    """s, its standard error, by least squares of ln t on ln f."""
    xs = [math.log(f) for f, _ in pairs]
    ys = [math.log(t) for _, t in pairs]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx <= 0 or len(pairs) < 3:
        return math.nan, math.nan
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    res = sum((y - my - b * (x - mx)) ** 2 for x, y in zip(xs, ys))
    se = math.sqrt(res / (len(pairs) - 2) / sxx)
    return -b, se


def bins(pairs, k=6):
    """The pairs' median clock and median time in k bins of clock."""
    ps = sorted(pairs)
    out = []
    for j in range(k):
        part = ps[j * len(ps) // k:(j + 1) * len(ps) // k]
        if part:
            out.append((statistics.median(f for f, _ in part),
                        statistics.median(t for _, t in part)))
    return out


def measure_row(torch, spin, burn, burn_ms, fn, cycles):
    k = min(256, _probe.k_for(_probe.per_call_ms(torch, fn), ROW_REPLAY_MS))
    row = _probe.capture(torch, fn, k)
    steady, recover = [], []
    for _ in range(cycles):
        steady += read_pairs(torch, spin, row, STEADY_PAIRS)
        for _ in range(max(1, round(BURN_MS / burn_ms))):
            burn.replay()
        recover += read_pairs(torch, spin, row, RECOVER_PAIRS)
    del row
    pairs = [(f, t / k) for f, t in steady + recover]
    s, se = fit(pairs)
    s_steady, se_steady = fit([(f, t / k) for f, t in steady])
    fs = sorted(f for f, _ in pairs)
    return {"k": k, "n": len(pairs), "s": s, "se": se, "s_steady": s_steady,
            "se_steady": se_steady,
            "mhz_p5": fs[len(fs) // 20], "mhz_p95": fs[-1 - len(fs) // 20],
            "steady_mhz": statistics.median(f for f, _ in steady),
            "steady_us": 1e3 * statistics.median(t / k for _, t in steady),
            "bins": [(f, 1e3 * t) for f, t in bins(pairs)]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gems", action="store_true")
    ap.add_argument("--cycles", type=int, default=4)
    ap.add_argument("--ops", nargs="*", help="only these operators")
    ap.add_argument("--out")
    a = ap.parse_args()
    import torch

    gems = None
    if a.gems:
        import flag_gems as gems
    # Each called once before its capture: cuBLAS makes its handle at the
    # first call, which a capture refuses.
    torch.cuda._sleep(SPIN_CYCLES)
    spin = _probe.capture(torch, lambda: torch.cuda._sleep(SPIN_CYCLES), SPIN_NODES)
    w = torch.randn(BURN_N, BURN_N, device="cuda", dtype=torch.float16)
    torch.mm(w, w)
    burn_ms = BURN_CALLS * _probe.per_call_ms(torch, lambda: torch.mm(w, w), k=2, n=3)
    burn = _probe.capture(torch, lambda: torch.mm(w, w), BURN_CALLS)
    doc = {"gpu": torch.cuda.get_device_name(), "rows": []}
    print("%-5s %-18s %-12s %6s %7s %6s %7s %13s %9s  %s" % (
        "side", "op", "shape", "s", "se", "s_st", "se_st", "MHz p5-p95", "steady", "bins MHz:us"),
        flush=True)
    # torch's rows first: flag_gems.enable() then sends every later call to
    # FlagGems (a use_gems() around each call would time its registration).
    for side in ("torch", "gems") if gems else ("torch",):
        if side == "gems":
            gems.enable()
        for op, shape in ROWS:
            if a.ops and op not in a.ops:
                continue
            t0 = time.time()
            try:
                fn = make_call(torch, op, shape)
                fn()
                r = measure_row(torch, spin, burn, burn_ms, fn, a.cycles)
            except Exception as e:            # one row's failure is one row's
                print("%-5s %-18s %-12s failed: %s" % (side, op, "x".join(map(str, shape)),
                                                       str(e).splitlines()[0][:160]), flush=True)
                continue
            r.update(op=op, shape=list(shape), side=side, seconds=time.time() - t0)
            doc["rows"].append(r)
            print("%-5s %-18s %-12s %6.3f %7.3f %6.2f %7.2f %6.0f-%6.0f %9.3f  %s" % (
                side, op, "x".join(map(str, shape)), r["s"], r["se"], r["s_steady"],
                r["se_steady"], r["mhz_p5"], r["mhz_p95"], r["steady_us"],
                " ".join("%.0f:%.3f" % b for b in r["bins"])), flush=True)
            _probe.write_json(a.out, doc)
    return 0 if doc["rows"] else 1


if __name__ == "__main__":
    sys.exit(main())
