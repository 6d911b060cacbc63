#!/usr/bin/env python3
"""Where does a small kernel's process-to-process drift come from?

Issue 3's A/A drift of a ~5 us softmax (a few tenths of a percent between
fresh processes) is far above libzlbtimer's within-run noise (~0.01%). This
probe separates the candidates inside each process, interleaving the modes
so that a slow drift of the device hits all of them alike:

  replay     one captured graph, re-sampled M times: the timer's repeatability;
  recapture  the same inputs, a new graph each time (each capture gets its own
             memory pool, so the output moves; old graphs are kept alive);
  realloc    new inputs behind a random 1-64 MiB spacer and a new graph each
             time (inputs and output move; everything is kept alive).

Then it compares the per-process means of each mode across processes. If
the spread of `recapture` or `realloc` inside one process is as large as the
spread of `replay` between processes, placement is the cause and averaging
several placements inside one process cuts the drift by about sqrt(count).

From the repository root on the GPU machine:
    PYTHONPATH=$PWD/python python3 bench/placement_probe.py \
        --timer-lib build/libzlbtimer.so --procs 4 --out $OUT/placement.json
"""

import json
import math
import os
import random
import sys
import time

import _probe

MODES = ("replay", "recapture", "realloc")
KERNELS = {"softmax_5us": "softmax 1024x1024 fp16", "add_1us": "add 64k fp16"}


def parse(argv):
    return _probe.parser(__doc__, KERNELS, procs=4, m=12).parse_args(argv)


def rel_spread(values):
    """(relative standard deviation, (max-min)/min), both in percent."""
    n = len(values)
    if n < 2:
        return None, None
    m = sum(values) / n
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    return 100.0 * sd / m, 100.0 * (max(values) - min(values)) / min(values)


def worker(args):
    import torch
    from zlbench import _graph

    lib, why = _graph.timer_lib(os.path.abspath(args.timer_lib))
    if lib is None:
        raise SystemExit(why)
    dev = torch.device("cuda")
    rng = random.Random(os.getpid() ^ time.time_ns())
    rule = _probe.engine_rule(args.timer_lib, placements=1)
    keep = []

    def make(name):
        if name == "softmax_5us":
            x = torch.randn(1024, 1024, dtype=torch.float16, device=dev)
            return (lambda: torch.softmax(x, dim=-1)), x
        x = torch.randn(65536, dtype=torch.float16, device=dev)
        y = torch.randn(65536, dtype=torch.float16, device=dev)
        return (lambda: torch.add(x, y)), x

    def sample(g, k):
        st, _, _ = _graph._replay(torch, lib, g, k, rule.min_samples, 10000, 100.0,
                                  rule.max_wall_ms, rule=rule)
        return st["median_ms"] / 1.0

    out = {}
    for name in args.kernels.split(","):
        fn, x = make(name)
        for _ in range(200):
            fn()
        torch.cuda.synchronize()
        # Same K as the engine would choose, fixed for every mode.
        est = []
        for n in (1, _graph.PROBE_K):
            g = _graph.capture(torch, fn, n)
            st, _, _ = _graph._replay(torch, lib, g, n, 5, 5, 0.0, 2000.0)
            est.append(st["median_ms"] * n)
            _graph.release(g)
        k = _graph.k_for(_graph.call_cost_ms(est[0], est[1], _graph.PROBE_K),
                         rule.replay_target_ms)
        base = _graph.capture(torch, fn, k)
        keep.append(base)
        sample(base, k)                       # settle first-capture effects
        res = {m: [] for m in MODES}
        ptrs = []
        for _ in range(args.m):
            res["replay"].append(sample(base, k))
            g = _graph.capture(torch, fn, k)
            keep.append(g)
            res["recapture"].append(sample(g, k))
            keep.append(torch.empty(rng.randint(1, 64) << 20, dtype=torch.uint8, device=dev))
            f2, x2 = make(name)
            keep.append(x2)
            for _ in range(20):
                f2()
            torch.cuda.synchronize()
            g = _graph.capture(torch, f2, k)
            keep.append(g)
            res["realloc"].append(sample(g, k))
            ptrs.append(x2.data_ptr())
        out[name] = {"k": k, "ms": res, "input_ptrs": ptrs}
    json.dump(out, sys.stdout)


def main(argv):
    args = parse(argv)
    if args.worker:
        return worker(args)
    procs = _probe.run_workers(os.path.abspath(__file__), argv, args.procs)
    report = {"procs": procs}
    for name in args.kernels.split(","):
        print("\n== %s ==" % KERNELS.get(name, name))
        print("%-10s  %-34s  %-22s" % ("mode", "within one process: sd% / range%",
                                       "between processes: mean of each, range%"))
        for mode in MODES:
            within = [rel_spread(p[name]["ms"][mode]) for p in procs]
            means = [sum(p[name]["ms"][mode]) / len(p[name]["ms"][mode]) for p in procs]
            firsts = [p[name]["ms"][mode][0] for p in procs]
            sds = ", ".join("%.3f/%.3f" % w for w in within if w[0] is not None)
            print("%-10s  %-34s  means %s us: %.3f%%; first-only %.3f%%"
                  % (mode, sds, " ".join("%.4f" % (1e3 * m) for m in means),
                     rel_spread(means)[1] or 0.0, rel_spread(firsts)[1] or 0.0))
        report[name] = {"k": [p[name]["k"] for p in procs]}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
