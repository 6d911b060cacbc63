#!/usr/bin/env python3
"""Does a probe built as copies of a short capture draw what a whole capture does?

zlb's placement probes (docs/protocol.md section 3) were whole captures of
the measured graph's K calls; capturing costs the host what K eager calls
do, which for FlagGems' small kernels was 17 s of the warm worker's 30 s
of probes over ten operators (H100, bench/README.md). Since ABI 5 a probe
is a capture of 8 calls that libzlbtimer repeats K/8 times as child graphs
(zlbt_graph_repeat). That is the same work only if (a) the 8-call capture
takes the blocks the K-call one would (each call's output is freed inside
the capture and the next call takes it back) and (b) a chain of child
graphs replays like one long chain of kernels.

Probe i of one process lands where probe i of another does when their
allocation histories agree (bench/README.md, issue 28). So the processes
here alternate between the two builds with the same history: the measured
graph M (K calls), then three probes, whole captures (W) in even
processes, repeats (R) in odd ones. If the builds are equivalent, R's draw
i (ln probe/M) matches W's draw i as closely as two W processes match each
other, and the first output's address inside each probe's capture is the
same. Each process also times RM, a repeat of M's own graph once (one
child node: the wrapper's cost, on M's buffers), and the host time each
build took.

    PYTHONPATH=$PWD/python:$PWD/.carry/FlagGems/src:$PWD/.carry/pylib GEMS_VENDOR=nvidia \\
      python3 bench/probe_repeat_check.py --timer-lib build/libzlbtimer.so --procs 6 --gems \\
      --out $OUT/repeat.json
"""

import argparse
import ctypes
import json
import math
import os
import sys
import time

import _probe
import input_probe_check

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

UNIT = 8
PROBES = 3


class Launched:
    """An exec handle replayed with cuGraphLaunch on torch's current stream,
    as _probe.interleaved_medians replays a CUDAGraph."""

    def __init__(self, torch, cuda, exec_handle):
        self.torch, self.cuda, self.exec = torch, cuda, exec_handle

    def replay(self):
        stream = self.torch.cuda.current_stream().cuda_stream
        rc = self.cuda.cuGraphLaunch(ctypes.c_uint64(self.exec), ctypes.c_void_p(stream))
        if rc:
            raise RuntimeError("cuGraphLaunch: CUresult %d" % rc)


def measure_one(torch, lib, cuda, fn, build, rounds, target_ms, ctx):
    ptrs = []

    def call():
        out = fn()
        if len(ptrs) < 1 and hasattr(out, "data_ptr"):
            ptrs.append(out.data_ptr())

    def capture(k, keep=False):
        with ctx():
            for _ in range(20):
                fn()
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph(keep_graph=keep)
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            del ptrs[:]
            with torch.cuda.graph(g, stream=side):
                for _ in range(k):
                    call()
            torch.cuda.current_stream().wait_stream(side)
            if keep:
                g.instantiate()
            torch.cuda.synchronize()
        return g, (ptrs[0] if ptrs else None)

    with ctx():
        for _ in range(50):
            fn()
    g64, _ = capture(64)
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(5):
        g64.replay()
        e0.record()
        g64.replay()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) / 64)
    del g64
    k = max(UNIT * 2, 2 ** math.ceil(math.log2(max(1.0, target_ms / min(times)))))
    m, m_ptr = capture(k, keep=True)
    graphs = {"M": m}
    out = {"k": k, "build": build, "ptr": {"M": m_ptr}, "build_s": []}
    keep = []
    for i in range(1, PROBES + 1):
        t0 = time.perf_counter()
        if build == "W":
            g, ptr = capture(k)
            graphs["P%d" % i] = g
        else:
            u, ptr = capture(UNIT, keep=True)
            exec_handle, built = lib.graph_repeat(int(u.raw_cuda_graph()), k // UNIT)
            keep.append((u, exec_handle, built))
            graphs["P%d" % i] = Launched(torch, cuda, exec_handle)
        out["build_s"].append(time.perf_counter() - t0)
        out["ptr"]["P%d" % i] = ptr
    rm_exec, rm_built = lib.graph_repeat(int(m.raw_cuda_graph()), 1)
    graphs["RM"] = Launched(torch, cuda, rm_exec)
    med = _probe.interleaved_medians(torch, graphs, dict.fromkeys(graphs, k), rounds)
    out["median_us"] = med
    out["draws"] = [math.log(med["P%d" % i] / med["M"]) for i in range(1, PROBES + 1)]
    out["rm_over_m"] = med["RM"] / med["M"]
    lib.graph_repeat_release(rm_exec, rm_built)
    for u, exec_handle, built in keep:
        lib.graph_repeat_release(exec_handle, built)
    del graphs, keep
    torch.cuda.synchronize()
    return out


def one_process(timer_lib, build, rounds, target_ms, gems):
    import contextlib

    import torch

    from zlbench import _timerlib

    lib, why = _timerlib.timer_lib(timer_lib)
    if lib is None or not lib.has_graph_repeat:
        raise SystemExit("no zlbt_graph_repeat: %s" % why)
    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuGraphLaunch.restype = ctypes.c_int
    torch.manual_seed(0)
    ks = input_probe_check.kernels(torch)
    out = {}
    for name, (op, args) in ks.items():
        out["torch " + name] = measure_one(torch, lib, cuda, input_probe_check.closure(op, args),
                                           build, rounds, target_ms, contextlib.nullcontext)
    if gems:
        os.environ.setdefault("GEMS_VENDOR", "nvidia")
        import flag_gems

        for name, (op, args) in ks.items():
            out["gems " + name] = measure_one(torch, lib, cuda,
                                              input_probe_check.closure(op, args), build,
                                              rounds, target_ms, flag_gems.use_gems)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timer-lib", required=True)
    ap.add_argument("--procs", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=13)
    ap.add_argument("--target-ms", type=float, default=2.0)
    ap.add_argument("--gems", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--report", metavar="JSON",
                    help="print the report of an earlier --out instead of measuring")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--build", choices=("W", "R"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.report:
        with open(a.report) as f:
            return report(json.load(f)["processes"], None)
    common = ["--timer-lib", a.timer_lib, "--rounds", str(a.rounds),
              "--target-ms", str(a.target_ms)] + (["--gems"] if a.gems else [])
    if a.worker:
        print(json.dumps(one_process(a.timer_lib, a.build, a.rounds, a.target_ms, a.gems)))
        return 0
    procs = []
    for i in range(a.procs):
        build = "W" if i % 2 == 0 else "R"
        got = _probe.run_workers(os.path.abspath(__file__), common + ["--build", build], 1)
        procs += got
    return report(procs, a.out)


def offsets(p):
    """Each probe's first output's offset from the measured graph's."""
    return [p["ptr"]["P%d" % j] - p["ptr"]["M"] for j in range(1, PROBES + 1)]


def report(procs, out_path):
    ws = [p for p in procs if next(iter(p.values()))["build"] == "W"]
    rs = [p for p in procs if next(iter(p.values()))["build"] == "R"]
    if not ws or not rs:
        print("need processes of both builds")
        return 1
    report = {}
    for name in procs[0]:
        w = [p[name]["draws"] for p in ws]
        r = [p[name]["draws"] for p in rs]
        mean = lambda rows, j: sum(x[j] for x in rows) / len(rows)  # noqa: E731
        dw = [100 * mean(w, j) for j in range(PROBES)]
        dr = [100 * mean(r, j) for j in range(PROBES)]
        same_ptr = all(offsets(p[name]) == offsets(ws[0][name]) for p in procs)
        bw = sum(sum(p[name]["build_s"]) for p in ws) / len(ws)
        br = sum(sum(p[name]["build_s"]) for p in rs) / len(rs)
        rm = [100 * (p[name]["rm_over_m"] - 1) for p in procs]
        # how far two processes of the same build draw apart, by index
        w_range = max(100 * (max(x[j] for x in w) - min(x[j] for x in w))
                      for j in range(PROBES))
        report[name] = {"k": procs[0][name]["k"], "whole_draws_pct": dw, "repeat_draws_pct": dr,
                        "same_offsets": same_ptr, "whole_build_s": bw, "repeat_build_s": br,
                        "rm_over_m_pct": rm, "whole_range_pct": w_range}
        print("%-28s K %4d  draws %%, whole: %s (range %.2f)  repeat: %s  "
              "| same offsets %s | build %.3f s -> %.3f s | RM/M-1 %s%%" % (
                  name, procs[0][name]["k"], " ".join("%+.2f" % v for v in dw), w_range,
                  " ".join("%+.2f" % v for v in dr), "yes" if same_ptr else "NO", bw, br,
                  " ".join("%+.2f" % v for v in rm)), flush=True)
    if out_path:
        with open(out_path, "w") as f:
            json.dump({"report": report, "processes": procs}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
