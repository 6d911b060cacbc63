#!/usr/bin/env python3
"""What should the centre of a measurement on several placements be, and
would copies of the inputs help?

libzlbtimer samples 8 placements (captures of the same K calls, each with
its output on memory of its own) round-robin. Their medians scatter by a few
tenths of a percent. This probe measures, in fresh processes, for a 55 us
and a 5 us softmax and a 1 us add:

  placed   the engine's measurement (_graph, 8 placements), m times per
           process on the process's one set of inputs; from each, four
           centres of the same samples: the pooled median, the mean of the
           placements' medians (the engine's centre since ABI 4), their
           median, and the pooled mean;
  copies   the same K calls captured 8 times, each placement on its own
           copy of the inputs (clone()), sampled round-robin by libzlbtimer.

It prints, per kernel, the drift between processes (pairwise |a-b|/min of
the first measurement of each process, median and worst), the same over
every measurement (each against every other), and the spread of one
process's m measurements. A centre or a mode that is steadier shows it in
all three.

From the repository root on the GPU machine:
    PYTHONPATH=$PWD/python python3 bench/centre_probe.py \
        --timer-lib build/libzlbtimer.so --procs 8 --m 3 --out $OUT/centre.json
"""

import json
import os
import statistics
import sys

import _probe

KERNELS = {"softmax_55us": "softmax 4096x4096 fp16", "softmax_5us": "softmax 1024x1024 fp16",
           "add_1us": "add 64k fp16"}
PLACEMENTS = 8


def parse(argv):
    return _probe.parser(__doc__, KERNELS, procs=8, m=3).parse_args(argv)


def centres(samples, p):
    """The candidate centres of samples taken round-robin on p placements."""
    n = len(samples) // p * p
    per = [statistics.median(samples[k:n:p]) for k in range(p)]
    return {"pooled_median": statistics.median(samples[:n]),
            "mean_of_medians": sum(per) / p,
            "median_of_medians": statistics.median(per),
            "pooled_mean": sum(samples[:n]) / n}


def drift(values):
    """(median, worst) of the pairwise |a-b|/min(a,b), in percent."""
    d = [abs(a - b) / min(a, b) * 100 for i, a in enumerate(values) for b in values[i + 1:]]
    return (statistics.median(d), max(d)) if d else (None, None)


def worker(args):
    import torch
    from zlbench import _graph

    lib, why = _graph.timer_lib(os.path.abspath(args.timer_lib))
    if lib is None:
        raise SystemExit(why)
    torch.manual_seed(0)
    dev = torch.device("cuda")
    rule = _probe.engine_rule(args.timer_lib, placements=PLACEMENTS)

    def make(name):
        if name == "add_1us":
            a = torch.randn(65536, dtype=torch.float16, device=dev)
            return torch.add, (a, torch.randn_like(a))
        side = 4096 if name == "softmax_55us" else 1024
        return torch.softmax, (torch.randn(side, side, dtype=torch.float16, device=dev), -1)

    out = {}
    for name in args.kernels.split(","):
        op, inputs = make(name)
        call = lambda: op(*inputs)          # noqa: E731 (the shape FlagGems times)
        call()
        torch.cuda.synchronize()
        placed, copies = [], []
        for _ in range(args.m):
            r = _graph._measure_warm(torch, lib, call, 100, 100, 200, None, rule)
            placed.append({"samples": r["samples"], "p": r["stats"]["placements"]})
            graphs = []
            try:
                for _ in range(PLACEMENTS):
                    mine = tuple(t.clone() if torch.is_tensor(t) else t for t in inputs)
                    g = _graph._capture_or_fail(torch, lambda mine=mine: op(*mine), r["k"],
                                                None)
                    graphs.append((g, mine))
                st, samples, _ = _graph._replay(torch, lib, graphs[0][0], r["k"],
                                                rule.min_samples, 10000, 100.0,
                                                rule.max_wall_ms, rule=rule,
                                                more=[g for g, _ in graphs[1:]])
                copies.append({"samples": samples, "p": PLACEMENTS})
            finally:
                for g, _ in graphs:
                    _graph.release(g)
        out[name] = {"placed": placed, "copies": copies}
    json.dump(out, sys.stdout)


def report(procs, kernels, m):
    for name in kernels:
        print("\n== %s ==" % KERNELS.get(name, name))
        print("%-26s %-24s %-24s %s" % ("centre", "between processes (1st)",
                                        "every measurement", "within a process (sd)"))
        rows = [("placed", c) for c in centres([1.0] * PLACEMENTS, PLACEMENTS)]
        rows.append(("copies", "mean_of_medians"))
        for mode, c in rows:
            per_proc = [[centres(rec["samples"], rec["p"])[c] for rec in w[name][mode]]
                        for w in procs]
            first = drift([v[0] for v in per_proc])
            every = drift([x for v in per_proc for x in v])
            sds = [statistics.stdev(v) / statistics.mean(v) * 100 for v in per_proc
                   if len(v) > 1]
            print("%-26s %-24s %-24s %s" % (
                "%s %s" % (mode, c), "%.3f%% / %.3f%%" % first, "%.3f%% / %.3f%%" % every,
                "%.3f%%" % statistics.mean(sds) if sds else "-"))


def main(argv):
    args = parse(argv)
    if args.worker:
        return worker(args)
    procs = _probe.run_workers(os.path.abspath(__file__), argv, args.procs)
    if len(procs) < 2:
        print("fewer than two workers succeeded: nothing to compare")
        return 1
    report(procs, args.kernels.split(","), args.m)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"procs": procs}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
