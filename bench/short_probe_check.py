#!/usr/bin/env python3
"""Could a placement probe capture fewer calls than the measured graph?

zlb's probes (docs/protocol.md section 3) capture the measured graph's K
calls again on memory of their own: for a small FlagGems kernel that costs
K eager calls of host time each (130-400 us), and on an H100 the probes
were 30 of the warm worker's 152 s against FlagGems' harness's 118. A probe
of K/4 calls would cost a quarter, but it must be read against a reference
of K/4 calls that sits where the measured graph's buffers sit, or its
per-call time carries another share of the replay's fixed cost.

The candidate reference: K/4 calls captured into the measured graph's own
memory pool (torch.cuda.graph(pool=...)): the pool's free blocks are those
the measured graph's calls used, and the caching allocator hands them out
in the same order. This checks, in each of several processes and for a
few kernels:
  - whether the reference's outputs land at the measured graph's addresses
    (their data_ptr() inside the captures);
  - the draws of three full probes (K calls each, what zlb does) against
    the measured graph, and of three short ones (K/4) against the
    reference, in interleaved single replays each after an untimed one;
  - across processes, the spread of the measured graph against the spread
    each kind of probe draws inside one process.

    python3 bench/short_probe_check.py --procs 6 --out $OUT/short.json
"""

import argparse
import json
import math
import os
import sys

import _probe


def kernels(torch):
    f16 = torch.float16
    x = torch.randn(1024, 1024, device="cuda", dtype=f16)
    a = torch.randn(1024, 1024, device="cuda", dtype=f16)
    b = torch.randn(1024, 1024, device="cuda", dtype=f16)
    c = torch.randn(1024, 1024, device="cuda", dtype=f16)
    y = torch.randn(4096, 8192, device="cuda", dtype=f16)
    z = torch.randn(65536, device="cuda", dtype=f16)
    return {
        "softmax_1024": lambda: torch.softmax(x, dim=-1),
        "addmm_1024": lambda: torch.addmm(c, a, b),
        "amax_4096x8192": lambda: torch.amax(y, dim=-1),
        "add_64k": lambda: z + z,
    }


def one_process(rounds, target_ms):
    import torch

    torch.manual_seed(os.getpid())
    out = {}
    for name, fn in kernels(torch).items():
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        # per-call GPU time from graphs of 1 and 64 calls, as zlb settles K
        def capture(k, pool=None, ptrs=None):
            g = torch.cuda.CUDAGraph()
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            kw = {"stream": side}
            if pool is not None:
                kw["pool"] = pool
            with torch.cuda.graph(g, **kw):
                for _ in range(k):
                    r = fn()
                    if ptrs is not None:
                        ptrs.append(r.data_ptr())
                    del r
            torch.cuda.current_stream().wait_stream(side)
            torch.cuda.synchronize()
            return g

        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

        def time_one(g):
            g.replay()
            e0.record()
            g.replay()
            e1.record()
            torch.cuda.synchronize()
            return e0.elapsed_time(e1) * 1e3

        g64 = capture(64)
        per_call = min(time_one(g64) for _ in range(5)) / 64
        del g64
        k = max(4, int(target_ms * 1e3 / per_call))
        ks = max(1, k // 4)
        m_ptrs, r_ptrs = [], []
        graphs = {"M": capture(k, ptrs=m_ptrs)}
        graphs["R"] = capture(ks, pool=graphs["M"].pool(), ptrs=r_ptrs)
        for i in range(1, 4):
            graphs["F%d" % i] = capture(k)
        for i in range(1, 4):
            graphs["S%d" % i] = capture(ks)
        calls = {key: (k if key[0] in "MF" else ks) for key in graphs}
        med = _probe.interleaved_medians(torch, graphs, calls, rounds)
        out[name] = {"k": k, "k_short": ks, "median_us": med,
                     "ref_at_measured_addresses": sorted(set(r_ptrs)) == sorted(set(m_ptrs)),
                     "measured_ptrs": sorted(set(m_ptrs)), "ref_ptrs": sorted(set(r_ptrs))}
        del graphs
        torch.cuda.synchronize()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=13)
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
    for name in procs[0]:
        rows = [p[name] for p in procs]
        m = [q["median_us"]["M"] for q in rows]
        ref = [q["median_us"]["R"] for q in rows]
        full = [_probe.sd_pct([q["median_us"][k] for k in ("M", "F1", "F2", "F3")]) for q in rows]
        short = [_probe.sd_pct([q["median_us"][k] for k in ("R", "S1", "S2", "S3")]) for q in rows]
        offset = [100.0 * (math.log(q["median_us"]["R"]) - math.log(q["median_us"]["M"]))
                  for q in rows]
        same = [q["ref_at_measured_addresses"] for q in rows]
        report[name] = {"k": rows[0]["k"], "k_short": rows[0]["k_short"], "measured_us": m,
                        "ref_us": ref, "between_sd_pct": _probe.sd_pct(m),
                        "ref_between_sd_pct": _probe.sd_pct(ref),
                        "full_probe_sd_pct": full, "short_probe_sd_pct": short,
                        "ref_minus_measured_pct": offset, "ref_at_measured_addresses": same}
        print("%s (K %d, short %d): measured over %d processes sd %.2f%%, "
              "the reference's %.2f%%" % (name, rows[0]["k"], rows[0]["k_short"], len(m),
                                          _probe.sd_pct(m), _probe.sd_pct(ref)))
        print("  ref at the measured graph's addresses: %s" %
              " ".join("yes" if s else "NO" for s in same))
        print("  ref - measured, per call: %s %%" % " ".join("%+.2f" % v for v in offset))
        print("  sd inside a process, full probes:  %s" % " ".join("%.2f" % v for v in full))
        print("  sd inside a process, short probes: %s" % " ".join("%.2f" % v for v in short))
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"report": report, "processes": procs}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
