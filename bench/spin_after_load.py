#!/usr/bin/env python3
"""What does the engine's spin graph read right after a row's sampling?

In the issue-28 matrix on an H100 (2026-12-07) the effective clock the
engine reads after a row's sampling (_spin.py: a graph of 8
torch.cuda._sleep(200000) kernels) was within a step of the one before it on
219 of 240 measurements, but after the addmm rows it read 1557 MHz before
and 1955 after (4096^3, power cap) or 1954 before and 2053-2071 after
(1024^3), above the 1980 MHz NVML said. Is the after-reading the clock the
GPU sits at once a load stops (a controller's overshoot, a boost NVML does
not report), or something of the spin's own timing?

For each load (none; torch addmm 1024^3 and 4096^3, fp16; torch mul 8192^2,
memory-bound), after a second of idle: the spin read in three single
replays, then the load's graph replayed back to back for --load-s (or, with
--duty, each replay followed by as long idle), then the spin read in single
replays one after another for the first 40 ms and every 50 ms to 1 s. Each
single replay is its own reading, untimed warm-up left out on purpose: the
first ones after the load are what the engine's after-reading sees. Run
with nvidia-smi sampling the SM clock every 50 ms beside it.

    python3 bench/spin_after_load.py --out $OUT/spin_after_load.json
"""

import argparse
import time

import _probe

SPIN_CYCLES = 200000        # as python/zlbench/_spin.py
SPIN_NODES = 8


def spin_reads(torch, spin, n, gap_s=0.0):
    """n readings of the spin graph (MHz), each one timed replay, gap_s
    apart; with the seconds since the first."""
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    got, t0 = [], time.perf_counter()
    for _ in range(n):
        e0.record()
        spin.replay()
        e1.record()
        torch.cuda.synchronize()
        got.append((round(time.perf_counter() - t0, 4),
                    round(SPIN_CYCLES * SPIN_NODES / (e0.elapsed_time(e1) * 1e3), 1)))
        if gap_s:
            time.sleep(gap_s)
    return got


def run_load(torch, g, seconds, duty):
    """Replay g for about seconds; with duty, idle after each replay as
    long as it took."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t = time.perf_counter()
        g.replay()
        if duty:
            torch.cuda.synchronize()
            time.sleep(time.perf_counter() - t)
    torch.cuda.synchronize()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load-s", type=float, default=0.5)
    ap.add_argument("--duty", action="store_true", help="also each load at duty 0.5")
    ap.add_argument("--out")
    a = ap.parse_args()
    import torch

    dev = "cuda"
    spin = _probe.capture(torch, lambda: torch.cuda._sleep(SPIN_CYCLES), SPIN_NODES)
    loads = {"none": None}
    for n in (1024, 4096):
        x = torch.randn(n, n, device=dev, dtype=torch.float16)
        fn = (lambda x=x: torch.addmm(x, x, x))
        # cuBLAS makes its handle at the first call, which a capture refuses
        # (CUBLAS_STATUS_NOT_INITIALIZED on the H100): one call eagerly first
        fn()
        torch.cuda.synchronize()
        loads["addmm %d^3" % n] = (fn, _probe.k_for(_probe.per_call_ms(torch, fn)))
    m = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
    fn = (lambda: torch.mul(m, m))
    loads["mul 8192^2"] = (fn, _probe.k_for(_probe.per_call_ms(torch, fn)))
    doc = []
    for name, load in loads.items():
        for duty in ((False, True) if a.duty and load else (False,)):
            g = _probe.capture(torch, load[0], load[1]) if load else None
            time.sleep(1.0)
            before = spin_reads(torch, spin, 3)
            if g is not None:
                run_load(torch, g, a.load_s, duty)
            after = spin_reads(torch, spin, 40) + spin_reads(torch, spin, 20, 0.05)
            row = {"load": name, "duty": 0.5 if duty else 1.0, "before": before, "after": after}
            doc.append(row)
            first = [mhz for _, mhz in after[:5]]
            late = sorted(mhz for _, mhz in after[-10:])
            print("%-12s duty %.1f  before %s  first after %s  last 10 median %.1f MHz" % (
                name, row["duty"], [mhz for _, mhz in before], first, late[len(late) // 2]),
                flush=True)
            del g
    _probe.write_json(a.out, {"rows": doc})


if __name__ == "__main__":
    main()
