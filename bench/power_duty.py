#!/usr/bin/env python3
"""Does a compute-bound kernel keep its clock when the replays leave the GPU idle between them?

On an H100 (700 W) the issue-28 matrix timed every addmm row under the SW
power cap (NVML clocks event reason 0x4): steady SM clocks of 1155-1710 MHz
where every other row read 1980, different in every process, so each addmm
row came out UNSURE with intervals of +-9 to +-20% (bench/README.md). The
power controller caps an average; a measurement that runs the graph for a
fraction d of the time (a host sleep after each replay) draws less on
average. If at some duty d the clock holds its maximum and the time per
call holds still, a duty-cycled caliber measures a GEMM at a known clock
instead of at whatever clock the cap settles on.

For each kernel: one graph of K calls (about --replay-ms of GPU time), then
phases of --phase-s seconds at each duty in --duties, in that order; within a
phase each replay is timed by a pair of events and followed by a sync, an
NVML read of the SM clock and power, and a sleep of replay * (1/d - 1).
Printed per phase: median time per call over the phase's second half, its
spread, the SM clock (median, min) and power over the same replays, and the
clocks event reasons seen.

    python3 bench/power_duty.py --out $OUT/duty.json            # torch's addmm
    PYTHONPATH=.carry/FlagGems/src:.carry/pylib GEMS_VENDOR=nvidia \\
      python3 bench/power_duty.py --gems --out $OUT/duty.json    # and FlagGems'
"""

import argparse
import ctypes
import json
import statistics
import time

import _probe


class Nvml:
    """The SM clock, power and clocks event reasons of device 0."""

    def __init__(self):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        if self.lib.nvmlInit_v2():
            raise RuntimeError("nvmlInit_v2 failed")
        self.dev = ctypes.c_void_p()
        if self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.dev)):
            raise RuntimeError("nvmlDeviceGetHandleByIndex_v2 failed")

    def read(self):
        mhz, mw, bits = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_ulonglong()
        self.lib.nvmlDeviceGetClockInfo(self.dev, 1, ctypes.byref(mhz))     # NVML_CLOCK_SM
        self.lib.nvmlDeviceGetPowerUsage(self.dev, ctypes.byref(mw))
        self.lib.nvmlDeviceGetCurrentClocksEventReasons(self.dev, ctypes.byref(bits))
        return mhz.value, mw.value / 1000.0, bits.value


def graph_of(torch, fn, replay_ms):
    """A graph of K calls of fn, K chosen for about replay_ms of GPU time."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(20):
        fn()
    e.record()
    e.synchronize()
    per_call = s.elapsed_time(e) / 20
    k = max(1, int(round(replay_ms / per_call)))
    return _probe.capture(torch, fn, k), k


def phase(torch, nvml, g, k, duty, seconds):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    rows = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        s.record()
        g.replay()
        e.record()
        e.synchronize()
        ms = s.elapsed_time(e)
        mhz, watts, bits = nvml.read()
        rows.append((ms / k, mhz, watts, bits))
        if duty < 1:
            time.sleep(ms / 1000.0 * (1.0 / duty - 1.0))
    half = rows[len(rows) // 2:]
    per_call = [r[0] for r in half]
    med = statistics.median(per_call)
    reasons = 0
    for r in half:
        reasons |= r[3]
    return {"duty": duty, "replays": len(rows), "us": 1000 * med,
            "spread_pct": 100 * (max(per_call) - min(per_call)) / med,
            "iqr_pct": 100 * (statistics.quantiles(per_call, n=4)[2]
                              - statistics.quantiles(per_call, n=4)[0]) / med
            if len(per_call) >= 4 else None,
            "mhz_median": statistics.median(r[1] for r in half),
            "mhz_min": min(r[1] for r in half),
            "watts_median": statistics.median(r[2] for r in half),
            "reasons": hex(reasons)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1024,2048,4096")
    ap.add_argument("--duties", default="1,0.5,0.33,0.2,1,0.5")
    ap.add_argument("--phase-s", type=float, default=3.0)
    ap.add_argument("--replay-ms", type=float, default=2.0)
    ap.add_argument("--gems", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    import torch

    torch.manual_seed(0)
    nvml = Nvml()
    sides = [("torch", None)]
    if a.gems:
        import flag_gems

        sides.append(("gems", flag_gems.use_gems))
    duties = [float(x) for x in a.duties.split(",")]
    report = []
    for n in (int(x) for x in a.sizes.split(",")):
        x, y, b = (torch.randn(n, n, device="cuda", dtype=torch.float16) for _ in range(3))
        for side, ctx in sides:
            def fn():
                return torch.addmm(b, x, y)
            if ctx is not None:
                with ctx():
                    g, k = graph_of(torch, fn, a.replay_ms)
            else:
                g, k = graph_of(torch, fn, a.replay_ms)
            for d in duties:
                r = phase(torch, nvml, g, k, d, a.phase_s)
                r.update(kernel="%s addmm %d^3" % (side, n), k=k)
                report.append(r)
                print("%-18s K %4d duty %.2f  %8.3f us  iqr %.2f%% range %.2f%%  SM %4d MHz "
                      "(min %4d)  %5.0f W  reasons %s  (%d replays)" % (
                          r["kernel"], k, d, r["us"], r["iqr_pct"] or 0, r["spread_pct"],
                          r["mhz_median"], r["mhz_min"], r["watts_median"], r["reasons"],
                          r["replays"]), flush=True)
            del g
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
