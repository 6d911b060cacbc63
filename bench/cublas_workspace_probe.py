#!/usr/bin/env python3
"""Does a cuBLAS row's process-to-process shift come from its workspace?

On an H100 (issue 28, rounds A10-C10) torch's 1024^3 addmm read 7.54, 7.59
and 7.65 us in three processes, every round at 1980 MHz, while each round's
placement probes drew only 0.07-0.13% (placement_sd). The probes capture the
same calls again on memory of their own: the outputs move, the inputs and
cuBLAS's workspace do not. torch keeps one workspace per (handle, stream),
allocated at the first cuBLAS call on a stream, so every graph captured on
torch's capture stream shares the one the process drew first.

Each process here captures, for each kernel, the measured graph (G0) and two
kinds of probes of the same K calls: three on torch's capture stream (same
workspace, what zlb's probes are) and three each on a stream of its own (a
workspace of its own, allocated inside the probe's capture). Every graph is
timed in interleaved single replays, each after an untimed one of its own.
Then, over the processes: the spread of G0's median against the spread the
probes of each kind drew inside one process. If the stream probes draw what
the processes show and the plain ones do not, the workspace is the cause.

    python3 bench/cublas_workspace_probe.py --procs 8 --out $OUT/ws.json
"""

import argparse
import json
import os
import sys

import _probe

KERNELS = {
    "addmm_1024": (1024, 1024, 1024),
    "addmm_2048": (2048, 2048, 2048),
}


def one_process(rounds, target_ms):
    import torch

    torch.manual_seed(os.getpid())
    out = {}
    for name, (m, n, k) in KERNELS.items():
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        c = torch.randn(m, n, device="cuda", dtype=torch.float16)

        def fn():
            return torch.addmm(c, a, b)

        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(20):
            fn()
        e1.record()
        torch.cuda.synchronize()
        calls = max(1, int(target_ms / (e0.elapsed_time(e1) / 20)))

        def capture(stream=None):
            g = torch.cuda.CUDAGraph()
            before = torch.cuda.memory_reserved()
            kw = {"stream": stream} if stream is not None else {}
            with torch.cuda.graph(g, **kw):
                for _ in range(calls):
                    fn()
            torch.cuda.synchronize()
            return g, torch.cuda.memory_reserved() - before

        graphs, grew = {}, {}
        streams = []
        graphs["G0"], grew["G0"] = capture()
        for i in range(1, 4):
            graphs["G%d" % i], grew["G%d" % i] = capture()
        for i in range(1, 4):
            s = torch.cuda.Stream()
            streams.append(s)
            graphs["S%d" % i], grew["S%d" % i] = capture(s)
        med = _probe.interleaved_medians(torch, graphs, dict.fromkeys(graphs, calls), rounds)
        out[name] = {"calls": calls, "median_us": med, "reserved_growth": grew}
        del graphs
        torch.cuda.synchronize()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--target-ms", type=float, default=2.0)
    ap.add_argument("--out")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        print(json.dumps(one_process(a.rounds, a.target_ms)))
        return 0
    procs = _probe.run_workers(os.path.abspath(__file__),
                               ["--rounds", str(a.rounds), "--target-ms", str(a.target_ms)],
                               a.procs)
    if len(procs) < a.procs:
        return 1
    report = {}
    for name in KERNELS:
        g0 = [p[name]["median_us"]["G0"] for p in procs]
        plain = [_probe.sd_pct([p[name]["median_us"]["G%d" % i] for i in range(4)]) for p in procs]
        stream = [_probe.sd_pct([p[name]["median_us"][k] for k in ("G0", "S1", "S2", "S3")])
                  for p in procs]
        report[name] = {"g0_us": g0, "between_processes_sd_pct": _probe.sd_pct(g0),
                        "plain_probe_sd_pct": plain, "stream_probe_sd_pct": stream,
                        "growth_mib": [{k: v / 2**20 for k, v in p[name]["reserved_growth"].items()}
                                       for p in procs[:2]]}
        print("%s: G0 over %d processes %s us: sd %.2f%%" % (
            name, len(g0), " ".join("%.3f" % v for v in g0), _probe.sd_pct(g0)))
        print("  inside each process, sd over G0 and 3 probes: capture stream %s" %
              " ".join("%.2f" % v for v in plain))
        print("                                    streams of their own %s" %
              " ".join("%.2f" % v for v in stream))
        print("  MiB each capture reserved (first process): %s" % json.dumps(
            {k: round(v) for k, v in report[name]["growth_mib"][0].items()}))
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"report": report, "processes": procs}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
