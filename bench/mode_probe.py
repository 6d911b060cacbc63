#!/usr/bin/env python3
"""Is a kernel's process-to-process shift a state of the process or of the hour?

bench/input_probe_check.py found, on an H100, kernels whose measured graph
read in two modes across six processes (torch's 1024^3 addmm 7.50 or 7.58
us, FlagGems' gelu of 4096x4096 28.14 or 28.27 us) while every probe of the
same process, outputs and inputs moved, read with its measured graph: the
whole process was in one mode for that kernel. Either something fixed when
the process started (where the kernel's code was loaded, a handle's state)
or the device's state over seconds (clocks, memory refresh) decides it.

Each process here captures one graph per kernel, then times every graph in
PASSES passes, each pass a few interleaved single replays per graph, with a
pause between passes, and captures one fresh graph per kernel per pass as
well. If a graph's median moves between passes as much as between
processes, the mode is the device's state over time, and a row measured at
two moments would see it; if it holds within a process and moves only
between processes, no measurement inside one process can.

    PYTHONPATH=$PWD/python:$PWD/.carry/FlagGems/src:$PWD/.carry/pylib GEMS_VENDOR=nvidia \\
      python3 bench/mode_probe.py --procs 4 --gems --out $OUT/modes.json
"""

import argparse
import json
import math
import os
import sys
import time

import _probe
import input_probe_check


def one_process(passes, pause_s, rounds, target_ms, gems):
    import torch

    torch.manual_seed(0)
    ks = input_probe_check.kernels(torch)
    fns = {"torch " + n: input_probe_check.closure(op, args) for n, (op, args) in ks.items()}
    ctx = None
    if gems:
        os.environ.setdefault("GEMS_VENDOR", "nvidia")
        import flag_gems

        ctx = flag_gems.use_gems     # a fresh context each time: it is single-use
    out = {}
    graphs, calls = {}, {}

    def capture(f, k):
        return _probe.capture(torch, f, k)

    def per_call_k(f):
        for _ in range(30):
            f()
        g = capture(f, 64)
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t = []
        for _ in range(5):
            g.replay()
            e0.record()
            g.replay()
            e1.record()
            torch.cuda.synchronize()
            t.append(e0.elapsed_time(e1) / 64)
        return max(1, 2 ** math.ceil(math.log2(max(1.0, target_ms / min(t)))))

    names = list(fns) + (["gems " + n for n in ks] if gems else [])
    for name in names:
        f = fns.get(name) or input_probe_check.closure(*ks[name[5:]])
        if name.startswith("gems"):
            with ctx():
                calls[name] = per_call_k(f)
                graphs[name] = capture(f, calls[name])
        else:
            calls[name] = per_call_k(f)
            graphs[name] = capture(f, calls[name])
        fns[name] = f
        out[name] = {"k": calls[name], "kept": [], "fresh": [], "t": []}
    t0 = time.time()
    for p in range(passes):
        fresh = {}
        for name in names:
            if name.startswith("gems"):
                with ctx():
                    fresh[name] = capture(fns[name], calls[name])
            else:
                fresh[name] = capture(fns[name], calls[name])
        both = {}
        for name in names:
            both[name + "|kept"] = graphs[name]
            both[name + "|fresh"] = fresh[name]
        med = _probe.interleaved_medians(torch, both, {k: calls[k.split("|")[0]] for k in both},
                                         rounds)
        for name in names:
            out[name]["kept"].append(med[name + "|kept"])
            out[name]["fresh"].append(med[name + "|fresh"])
            out[name]["t"].append(time.time() - t0)
        del fresh, both
        time.sleep(pause_s)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=4)
    ap.add_argument("--passes", type=int, default=8)
    ap.add_argument("--pause", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--target-ms", type=float, default=2.0)
    ap.add_argument("--gems", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        print(json.dumps(one_process(a.passes, a.pause, a.rounds, a.target_ms, a.gems)))
        return 0
    wargs = ["--passes", str(a.passes), "--pause", str(a.pause), "--rounds", str(a.rounds),
             "--target-ms", str(a.target_ms)] + (["--gems"] if a.gems else [])
    procs = _probe.run_workers(os.path.abspath(__file__), wargs, a.procs)
    if len(procs) < 2:
        return 1
    report = {}
    for name in procs[0]:
        kept = [p[name]["kept"] for p in procs]
        within = [_probe.sd_pct(v) for v in kept]
        means = [sum(v) / len(v) for v in kept]
        report[name] = {"within_sd_pct": within, "between_sd_pct": _probe.sd_pct(means),
                        "kept": kept, "fresh": [p[name]["fresh"] for p in procs]}
        print("%-28s between processes %.2f%% | one graph over %d passes, sd per process: %s"
              % (name, _probe.sd_pct(means), len(kept[0]),
                 " ".join("%.2f" % v for v in within)))
        for p, v in enumerate(kept):
            fr = procs[p][name]["fresh"]
            print("    proc %d kept  %s" % (p, " ".join("%.3f" % x for x in v)))
            print("           fresh %s" % " ".join("%.3f" % x for x in fr))
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"report": report, "processes": procs}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
