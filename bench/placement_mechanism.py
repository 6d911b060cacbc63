#!/usr/bin/env python3
"""Why does the 8-placement centre read some L2-sized kernels slow?

Issue 12: on an H200 the engine's default (8 graphs of the same K calls, each
captured on its own memory pool, sampled round-robin) read torch.fmin on
[50000] 12.8% and both sides on [1536, 1536] about 8% slower than one graph
and than do_bench_cudagraph. This probe takes the candidates apart inside one
process per kernel, every mode on the same inputs and the same K:

  single     the first graph alone (what one graph measures);
  alone_i    each of the 8 graphs sampled alone, one after another: an
             address effect shows as graphs that are slow even alone;
  robin      the 8 sampled round-robin (the engine's default): slow only here
             means switching or the working set of 8 placements in L2;
  shared     8 graphs captured into the first graph's pool, round-robin: the
             same switching, (nearly) the same addresses;
  ptrs       how many distinct outputs the K calls of each capture wrote to,
             and how much memory each capture reserved: does every call get
             an output of its own?

From the repository root on the GPU machine:
    PYTHONPATH=$PWD/python:$PWD/.carry/FlagGems/src:$PWD/.carry/pylib GEMS_VENDOR=nvidia \\
        python3 bench/placement_mechanism.py --timer-lib build/libzlbtimer.so --out $OUT/mech.json
"""

import json
import os
import statistics
import sys

import _probe

KERNELS = {
    "fmin_50k_torch": "torch.fmin [50000] fp16",
    "fmin_50k_gems": "flag_gems.fmin [50000] fp16",
    "fmin_1536_torch": "torch.fmin [1536, 1536] fp16",
    "fmin_1536_gems": "flag_gems.fmin [1536, 1536] fp16",
    "add_64k_torch": "torch.add [65536] fp16",
    "softmax_1024_torch": "torch.softmax [1024, 1024] fp16",
}
P = 8


def parse(argv):
    p = _probe.parser(__doc__, KERNELS, procs=1, m=2)
    return p.parse_args(argv)


def per_placement_medians(samples, p):
    n = len(samples) // p * p
    return [statistics.median(samples[k:n:p]) for k in range(p)]


def make(torch, name):
    torch.manual_seed(0)
    dev = torch.device("cuda")
    if name.startswith("fmin"):
        shape = (50000,) if "_50k" in name else (1536, 1536)
        a = torch.randn(shape, dtype=torch.float16, device=dev)
        b = torch.randn(shape, dtype=torch.float16, device=dev)
        if name.endswith("gems"):
            import flag_gems
            return lambda: flag_gems.ops.fmin(a, b)
        return lambda: torch.fmin(a, b)
    if name.startswith("add"):
        a = torch.randn(65536, dtype=torch.float16, device=dev)
        b = torch.randn(65536, dtype=torch.float16, device=dev)
        return lambda: torch.add(a, b)
    x = torch.randn(1024, 1024, dtype=torch.float16, device=dev)
    return lambda: torch.softmax(x, dim=-1)


def worker(args):
    import torch
    from zlbench import _graph

    lib, why = _graph.timer_lib(os.path.abspath(args.timer_lib))
    if lib is None:
        raise SystemExit(why)
    rule = _probe.engine_rule(args.timer_lib, placements=1)

    def capture(fn, k, pool=None):
        """K calls of fn into a kept graph; the data_ptr of every output."""
        ptrs = []

        def call():
            out = fn()
            ptrs.append(int(out.data_ptr()))

        g = torch.cuda.CUDAGraph(keep_graph=True)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        before = torch.cuda.memory_reserved()
        with torch.cuda.graph(g, stream=side, pool=pool):
            for _ in range(k):
                call()
        torch.cuda.current_stream().wait_stream(side)
        g.instantiate()
        return g, {"distinct_outputs": len(set(ptrs)), "first_ptr": ptrs[0],
                   "reserved_growth": torch.cuda.memory_reserved() - before}

    def sample(graphs, k):
        st, samples, _ = _graph._replay(torch, lib, graphs[0], k, rule.min_samples,
                                        10000, 100.0, rule.max_wall_ms, rule=rule,
                                        more=graphs[1:])
        return st, samples

    out = {}
    for name in args.kernels.split(","):
        fn = make(torch, name)
        for _ in range(200):
            fn()
        torch.cuda.synchronize()
        est = []
        for n in (1, _graph.PROBE_K):
            g, _ = capture(fn, n)
            st, _ = sample([g], n)
            est.append(st["median_ms"] * n)
            _graph.release(g)
        k = _graph.k_for(_graph.call_cost_ms(est[0], est[1], _graph.PROBE_K),
                         rule.replay_target_ms)
        own, own_info = [], []
        for _ in range(P):
            g, info = capture(fn, k)
            own.append(g)
            own_info.append(info)
        shared, shared_info = [own[0]], [own_info[0]]
        for _ in range(P - 1):
            g, info = capture(fn, k, pool=own[0].pool())
            shared.append(g)
            shared_info.append(info)
        res = {"k": k, "own": own_info, "shared": shared_info, "rounds": []}
        for _ in range(args.m):
            rnd = {}
            rnd["single"] = sample([own[0]], k)[0]["median_ms"]
            rnd["alone"] = [sample([g], k)[0]["median_ms"] for g in own]
            st, s = sample(own, k)
            rnd["robin"] = per_placement_medians(s, P)
            rnd["robin_centre"] = st["centre_ms"]
            st, s = sample(shared, k)
            rnd["shared"] = per_placement_medians(s, P)
            rnd["shared_centre"] = st["centre_ms"]
            rnd["single_end"] = sample([own[0]], k)[0]["median_ms"]
            res["rounds"].append(rnd)
        for g in own + shared[1:]:
            _graph.release(g)
        out[name] = res
    json.dump(out, sys.stdout)


def us(x):
    return "%.4f" % (1e3 * x)


def report(procs, kernels):
    for w in procs:
        for name in kernels:
            if name not in w:
                continue
            r = w[name]
            print("\n== %s (K %d) ==" % (KERNELS.get(name, name), r["k"]))
            print("distinct outputs per capture, own pools: %s; shared pool: %s"
                  % ([i["distinct_outputs"] for i in r["own"]],
                     [i["distinct_outputs"] for i in r["shared"]]))
            print("reserved growth MiB, own: %s" % ["%.1f" % (i["reserved_growth"] / 2**20)
                                                   for i in r["own"]])
            print("first output ptr mod 2 MiB, own: %s" % [i["first_ptr"] % (2 << 20)
                                                           for i in r["own"]])
            for rnd in r["rounds"]:
                one = rnd["single"]
                print("single %s us (end %s); robin centre %+.2f%%, shared centre %+.2f%%"
                      % (us(one), us(rnd["single_end"]),
                         100 * (rnd["robin_centre"] / one - 1),
                         100 * (rnd["shared_centre"] / one - 1)))
                for mode in ("alone", "robin", "shared"):
                    print("  %-7s %s" % (mode, " ".join("%+.2f%%" % (100 * (v / one - 1))
                                                         for v in rnd[mode])))


def main(argv):
    args = parse(argv)
    if args.worker:
        return worker(args)
    procs = _probe.run_workers(os.path.abspath(__file__), argv, args.procs)
    report(procs, args.kernels.split(","))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"procs": procs}, f)
    return 0 if procs else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
