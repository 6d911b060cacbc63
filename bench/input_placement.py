#!/usr/bin/env python3
"""Does where a benchmark's *inputs* land move a kernel more than the
placement probes can see?

The engine's placement probes (python/zlbench/_graph.py, _probe_placements)
capture more graphs of the same calls on memory of their own: the outputs
and temporaries move, the inputs the benchmark made do not. On the H100
(issue 28, 2026-12-07) gems addmm 1024^3 read 6.518 us in one process and
6.63-6.68 us in four others, while each process's two probes read within
0.1% of its measured graph, at the top clock: an offset of the process
that the probes did not draw.

In one process, for each case, this times graphs of the same K calls on
  out   the same inputs, a new graph (what a probe varies), and
  in    inputs copied to fresh memory behind a spacer, a new graph,
each against the first graph in the same round (ratios, so clock drift
cancels), replays spaced so the GPU is idle about half the time. If the
spread of "in" is much wider than that of "out", the cross-process offset
is the inputs' placement, and a probe that re-places inputs would see it.
Run in several processes and --combine their files: the spread of the
first graph's time between processes beside the two spreads within one,
and each process's effective SM clock after each case (a clock64 spin,
effective_mhz): an offset of the whole process that tracks it is the
clock, not a placement (gelu on the H100 moved 0.5% between processes at
a reported 1980 MHz, torch's and FlagGems' alike).

  export PYTHONPATH=.carry/FlagGems/src:.carry/pylib GEMS_VENDOR=nvidia
  for i in 1 2 3; do python3 bench/input_placement.py --out $OUT/ip$i.json; done
  python3 bench/input_placement.py --combine $OUT/ip1.json $OUT/ip2.json $OUT/ip3.json
"""
import argparse
import json
import random
import statistics
import time


def cases(torch):
    f16 = torch.float16
    dev = "cuda"

    def addmm(n):
        def make():
            return (torch.randn(n, device=dev, dtype=f16), torch.randn(n, n, device=dev, dtype=f16),
                    torch.randn(n, n, device=dev, dtype=f16))
        return ("addmm %d^3" % n, make, lambda b, x, y: torch.addmm(b, x, y))

    def unary(name, shape, fn):
        return ("%s %s" % (name, "x".join(map(str, shape))),
                lambda: (torch.randn(*shape, device=dev, dtype=f16),), fn)

    return [addmm(1024), addmm(2048),
            unary("gelu", (2048, 2048), torch.nn.functional.gelu),
            unary("gelu", (8192, 8192), torch.nn.functional.gelu),
            unary("log_softmax", (2048, 4096), lambda x: torch.log_softmax(x, dim=-1)),
            ("mul 4096x4096", lambda: (torch.randn(4096, 4096, device=dev, dtype=f16),
                                       torch.randn(4096, 4096, device=dev, dtype=f16)),
             lambda x, y: torch.mul(x, y))]


def per_call_ms(torch, fn, args, n=20):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(n):
        fn(*args)
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / n


def capture(torch, fn, args, k):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(k):
            fn(*args)
    torch.cuda.synchronize()
    return g


def time_replay(torch, g):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    g.replay()                      # untimed: the graph's own buffers in L2
    s.record()
    g.replay()
    e.record()
    e.synchronize()
    return s.elapsed_time(e)


SPIN_CYCLES = 1000000


def effective_mhz(torch, n=9):
    """The SM clock a kernel really ran at: torch.cuda._sleep spins for
    SPIN_CYCLES clock64() cycles, so its time is SPIN_CYCLES / f. NVML's
    clock reading (what the engine records) comes in steps of 15 MHz, 0.75%
    at the top clock: an offset below one step is invisible to it and not
    to a compute-bound kernel. Median of n."""
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    got = []
    for _ in range(n):
        s.record()
        torch.cuda._sleep(SPIN_CYCLES)
        e.record()
        e.synchronize()
        got.append(SPIN_CYCLES / (s.elapsed_time(e) * 1000.0))
    return statistics.median(got)


def one_case(torch, name, make, fn, n_out, n_in, rounds, target_ms, rng):
    torch.manual_seed(0)
    base = make()
    for _ in range(3):
        fn(*base)                   # compile and tune before any capture
    torch.cuda.synchronize()
    c = per_call_ms(torch, fn, base)
    k = max(1, round(target_ms / c))
    placements = [("out", base, capture(torch, fn, base, k)) for _ in range(1 + n_out)]
    keep = []
    for _ in range(n_in):
        keep.append(torch.empty(rng.randrange(1, 64) << 20, dtype=torch.uint8, device="cuda"))
        moved = tuple(a.clone() for a in base)
        placements.append(("in", moved, capture(torch, fn, moved, k)))
    ratios = [[] for _ in placements]
    us = [[] for _ in placements]
    for _ in range(rounds):
        order = list(range(len(placements)))
        rng.shuffle(order)
        got = {}
        for i in order:
            ms = time_replay(torch, placements[i][2])
            got[i] = ms
            time.sleep(2 * ms / 1000.0)   # idle about half the time, as a duty 0.5 sampling
        for i in order:
            ratios[i].append(got[i] / got[0])
            us[i].append(got[i] * 1000.0 / k)
    rows = [{"kind": placements[i][0], "ratio": statistics.median(ratios[i]),
             "us": statistics.median(us[i])} for i in range(len(placements))]

    def spread(kind):
        r = [x["ratio"] for x in rows[1:] if x["kind"] == kind]
        return {"n": len(r), "min": min(r), "max": max(r),
                "sd_pct": 100 * statistics.stdev(r) if len(r) > 1 else None}

    return {"case": name, "k": k, "per_call_us": c * 1000, "rows": rows,
            "out": spread("out"), "in": spread("in")}


def combine(files):
    runs = [json.load(open(f))["results"] for f in files]
    print("%-5s %-20s %9s %9s %9s %9s" % ("side", "case", "us", "between%", "in sd%",
                                          "out sd%"))
    for i, r in enumerate(runs[0]):
        same = [run[i] for run in runs if i < len(run) and run[i]["case"] == r["case"]
                and run[i]["side"] == r["side"]]
        us = [x["rows"][0]["us"] for x in same]
        between = 100 * statistics.stdev(us) / statistics.mean(us) if len(us) > 1 else None
        ins = statistics.mean(x["in"]["sd_pct"] for x in same)
        outs = statistics.mean(x["out"]["sd_pct"] for x in same)
        mhz = [x.get("effective_mhz") for x in same]
        print("%-5s %-20s %9.3f %9s %9.2f %9.2f   %s   MHz %s" % (
            r["side"], r["case"], statistics.mean(us),
            "%.2f" % between if between is not None else "-", ins, outs,
            " ".join("%.3f" % u for u in us),
            " ".join("%.1f" % m if m else "-" for m in mhz)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--combine", nargs="+", metavar="FILE",
                    help="print the between-process spread of runs' files and stop")
    ap.add_argument("--sides", default="gems,torch")
    ap.add_argument("--out-placements", type=int, default=4)
    ap.add_argument("--in-placements", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--target-ms", type=float, default=2.0)
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.combine:
        combine(a.combine)
        return
    import torch
    import flag_gems
    rng = random.Random(28)
    results = []
    for side in a.sides.split(","):
        for name, make, fn in cases(torch):
            if side == "gems":
                with flag_gems.use_gems():
                    r = one_case(torch, name, make, fn, a.out_placements, a.in_placements,
                                 a.rounds, a.target_ms, rng)
            else:
                r = one_case(torch, name, make, fn, a.out_placements, a.in_placements,
                             a.rounds, a.target_ms, rng)
            r["side"] = side
            r["effective_mhz"] = effective_mhz(torch)
            results.append(r)
            print("%-5s %-20s %7.3f us  out: %.4f..%.4f sd %.2f%%   in: %.4f..%.4f sd %.2f%%"
                  "   spin %.1f MHz" % (
                      side, name, r["rows"][0]["us"], r["out"]["min"], r["out"]["max"],
                      r["out"]["sd_pct"] or 0, r["in"]["min"], r["in"]["max"],
                      r["in"]["sd_pct"] or 0, r["effective_mhz"]), flush=True)
            if a.out:
                with open(a.out, "w") as f:
                    json.dump({"version": 1, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
