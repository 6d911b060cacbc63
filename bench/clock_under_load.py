#!/usr/bin/env python3
"""The SM clock while a load runs, read by a one-thread kernel beside it.

In the issue-28 matrix on an H100 (2026-12-07) the gems addmm 1024^3 row,
sampled with the GPU idle half the time (power duty 0.5), read 6.574 and
6.567 us in two processes and 6.469 and 6.481 in two others, while NVML said
1980 MHz in all four and the engine's spin graph (read just before and after
the sampling, at a spin's low power) read the same clock in all four. The
two slow processes were those whose full-duty sampling of the row had hit
the power cap a moment before. Does the SM clock drop under a load by more
than NVML shows, and does it depend on what the GPU ran just before?

A clock reader (Triton, one warp) reads %clock64 and %globaltimer, spins for
--reader-cycles cycles, and reads both again: cycles over nanoseconds is the
clock its SM ran at meanwhile, whatever kept it from starting. Launched on a
side stream with each replay of a load's graph (a torch graph of calls
lasting about 2 ms), it runs beside the load on a spare SM slot.

For each load (torch mul 8192^2, memory-bound; torch addmm 1024^3 and
4096^3; with --gems, FlagGems' addmm 1024^3): the load's per-call time
alone, then with the readers beside it (what they cost the load), then at
duty 0.5. Then the history test: 2 s of addmm 4096^3 back to back (as a
capped first sampling leaves the board), then 0 to 4 s of idle, then the
1024^3 addmm at duty 0.5: how long a settle makes its time the same, twice.
Run with nvidia-smi sampling the clock every 50 ms beside it.

    python3 bench/clock_under_load.py [--gems] --out $OUT/clock_under_load.json
"""

import argparse
import statistics
import time

import _probe


def reader_kernel():
    """The Triton clock reader: out[0] = cycles spun, out[1] = ns taken."""
    import triton
    import triton.language as tl

    @triton.jit
    def clock_reader(out_ptr, cycles):
        t0 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64,
                                       is_pure=False, pack=1)
        c0 = tl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l", [], dtype=tl.int64,
                                       is_pure=False, pack=1)
        c = c0
        while c - c0 < cycles:
            c = tl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l", [], dtype=tl.int64,
                                          is_pure=False, pack=1)
        t1 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64,
                                       is_pure=False, pack=1)
        tl.store(out_ptr, c - c0)
        tl.store(out_ptr + 1, t1 - t0)

    return clock_reader


class Readers:
    """Clock readings launched on a side stream, collected after a sync."""

    def __init__(self, torch, kernel, cycles, slots=4096):
        self.torch, self.kernel, self.cycles = torch, kernel, int(cycles)
        self.out = torch.zeros(slots, 2, dtype=torch.int64, device="cuda")
        self.stream = torch.cuda.Stream()
        self.n = 0

    def launch(self):
        if self.n >= self.out.shape[0]:
            return
        with self.torch.cuda.stream(self.stream):
            self.kernel[(1,)](self.out[self.n], self.cycles, num_warps=1)
        self.n += 1

    def take(self):
        """MHz of each reading since the last take."""
        self.torch.cuda.synchronize()
        got = self.out[:self.n].cpu().tolist()
        self.n = 0
        return [round(c / ns * 1e3, 1) for c, ns in got if ns > 0]


def run_load(torch, g, calls, seconds, duty, readers=None):
    """Replay g for about seconds, each replay timed between events (and,
    with readers, one reading launched beside it); with duty, each replay
    synchronised and followed by as long idle. Per-call us of each replay."""
    marks = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        if readers is not None:
            readers.launch()
        marks.append((e0, e1))
        if duty:
            t = time.perf_counter()
            torch.cuda.synchronize()
            time.sleep(time.perf_counter() - t)
        elif len(marks) % 64 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return [e0.elapsed_time(e1) * 1e3 / calls for e0, e1 in marks]


def summary(us, mhz):
    """Median per-call us and reader MHz (with their spread) of one phase."""
    def q(v, f):
        v = sorted(v)
        return v[min(len(v) - 1, int(f * len(v)))] if v else None
    return {"replays": len(us), "median_us": round(statistics.median(us), 4) if us else None,
            "readings": len(mhz), "median_mhz": q(mhz, 0.5), "p10_mhz": q(mhz, 0.1),
            "p90_mhz": q(mhz, 0.9)}


def line(name, phase, s):
    return "%-16s %-14s %6d replays  %9s us/call  reader %s MHz (p10 %s, p90 %s, n %d)" % (
        name, phase, s["replays"], s["median_us"], s["median_mhz"], s["p10_mhz"], s["p90_mhz"],
        s["readings"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load-s", type=float, default=1.0)
    ap.add_argument("--reader-cycles", type=int, default=1000000,
                    help="cycles a reading spins (about 0.5 ms at 2 GHz)")
    ap.add_argument("--gems", action="store_true", help="also FlagGems' addmm 1024^3")
    ap.add_argument("--out")
    a = ap.parse_args()
    import torch

    kernel = reader_kernel()
    readers = Readers(torch, kernel, a.reader_cycles)
    for _ in range(3):
        readers.launch()
    readers.take()
    doc = {"reader_cycles": a.reader_cycles, "rows": [], "history": []}
    time.sleep(1.0)
    for _ in range(20):
        readers.launch()
        torch.cuda.synchronize()
    idle = readers.take()
    doc["idle_mhz"] = idle
    print("idle reader: median %s MHz, min %s, max %s" % (
        statistics.median(idle), min(idle), max(idle)), flush=True)

    loads = {}
    m = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    loads["mul 8192^2"] = lambda: torch.mul(m, m)
    xs = {n: torch.randn(n, n, device="cuda", dtype=torch.float16) for n in (1024, 4096)}
    loads["addmm 1024^3"] = lambda: torch.addmm(xs[1024], xs[1024], xs[1024])
    loads["addmm 4096^3"] = lambda: torch.addmm(xs[4096], xs[4096], xs[4096])
    if a.gems:
        import flag_gems

        gems_addmm = flag_gems.ops.addmm
        loads["gems addmm 1024^3"] = lambda: gems_addmm(xs[1024], xs[1024], xs[1024])
    graphs = {}
    for name, fn in loads.items():
        fn()
        torch.cuda.synchronize()
        k = _probe.k_for(_probe.per_call_ms(torch, fn))
        graphs[name] = (_probe.capture(torch, fn, k), k)

    for name, (g, k) in graphs.items():
        for phase, duty, rd in (("alone", False, None), ("with readers", False, readers),
                                ("duty 0.5", True, readers)):
            time.sleep(1.0)
            us = run_load(torch, g, k, a.load_s, duty, rd)
            mhz = readers.take() if rd is not None else []
            s = dict(summary(us, mhz), load=name, phase=phase, calls=k)
            doc["rows"].append(s)
            print(line(name, phase, s), flush=True)
        _probe.write_json(a.out, doc)

    small = "gems addmm 1024^3" if a.gems else "addmm 1024^3"
    g, k = graphs[small]
    hot_g, hot_k = graphs["addmm 4096^3"]
    for rep in range(2):
        for settle in (0.0, 0.25, 0.5, 1.0, 2.0, 4.0):
            # heat: 2 s of the 4096^3 addmm back to back, as a capped
            # sampling leaves the board; then settle idle, then the duty
            run_load(torch, hot_g, hot_k, 2.0, False)
            time.sleep(settle)
            us = run_load(torch, g, k, a.load_s, True, readers)
            s = dict(summary(us, readers.take()), load=small, settle_s=settle, rep=rep,
                     phase="hot, %.2f s idle, duty 0.5" % settle,
                     first50_us=round(statistics.median(us[:50]), 4) if us else None,
                     us=[round(x, 4) for x in us])
            doc["history"].append(s)
            print(line(small, s["phase"], s), " first 50: %s us" % s["first50_us"], flush=True)
        time.sleep(4.0)
        us = run_load(torch, g, k, a.load_s, False, readers)
        s = dict(summary(us, readers.take()), load=small, settle_s=4.0, rep=rep,
                 phase="4 s idle, back to back", us=[round(x, 4) for x in us])
        doc["history"].append(s)
        print(line(small, s["phase"], s), flush=True)
        _probe.write_json(a.out, doc)

if __name__ == "__main__":
    main()
