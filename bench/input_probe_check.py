#!/usr/bin/env python3
"""Do placement probes that also move the inputs draw what processes show?

zlb's probes (docs/protocol.md section 3) capture the measured graph's K
calls again on memory of their own: the outputs move, the inputs do not.
On an H100 (issue 28) torch's amax of 4096x8192, log_softmax of 4096x8192
and cumsum of 4096x16384 moved 0.5% between processes while their probes
drew 0.02-0.1% (bench/short_probe_check.py measured the same gap on four
kernels). These kernels read far more than they write.

Each process here builds, for each kernel, FlagGems' benchmark closure
(`lambda: op(*args)`) and captures from it: the measured graph M, three
probes F1-F3 as zlb takes them (same inputs, a fresh pool each) and three
probes I1-I3 on clones of the inputs (made in this process, a fresh pool
each). Every graph is timed in interleaved single replays, each after
an untimed one of its own. Then, over the processes: the spread of M's
median against the spread each kind of probe draws inside one process. If
the I probes draw what the processes show and the F probes do not, where
the inputs' pages fall is the cause, and probes should move them. After
each kernel a process also reads its effective SM clock (_probe.effective_mhz,
a clock64 spin): a process slow on a compute-bound kernel at a lower spin
clock is slow by its clock, which NVML's 15 MHz steps hide.

    PYTHONPATH=$PWD/python:$PWD/.carry/FlagGems/src:$PWD/.carry/pylib GEMS_VENDOR=nvidia \
      python3 bench/input_probe_check.py --procs 6 --gems --out $OUT/inputs.json
"""

import json
import os
import sys

import _probe


def kernels(torch):
    """name -> (op, args): FlagGems-sized inputs, made once per process."""
    f16 = torch.float16

    def r(*shape):
        return torch.randn(*shape, device="cuda", dtype=f16)

    a, b, c = r(1024, 1024), r(1024, 1024), r(1024, 1024)
    y = r(4096, 8192)
    w = r(4096, 16384)
    g = r(4096, 4096)
    s = r(1024, 1024)
    return {
        "addmm_1024": (torch.addmm, (c, a, b)),
        "amax_4096x8192": (lambda x: torch.amax(x, dim=-1), (y,)),
        "log_softmax_4096x8192": (lambda x: torch.log_softmax(x, dim=-1), (y,)),
        "cumsum_4096x16384": (lambda x: torch.cumsum(x, dim=-1), (w,)),
        "gelu_4096x4096": (torch.nn.functional.gelu, (g,)),
        "softmax_1024": (lambda x: torch.softmax(x, dim=-1), (s,)),
    }


def closure(op, args):
    return lambda: op(*args)


def measure_one(torch, op, args, rounds, target_ms):
    fn = closure(op, args)
    for _ in range(50):
        fn()
    torch.cuda.synchronize()

    k = _probe.k_for(_probe.per_call_ms(torch, fn, k=64), target_ms)
    graphs = {"M": _probe.capture(torch, fn, k)}
    for i in range(1, 4):
        graphs["F%d" % i] = _probe.capture(torch, fn, k)
    keep = []
    for i in range(1, 4):
        # the clones live on memory of their own, in segments this process
        # had not touched: pages, channels and alignment drawn anew
        clones = tuple(a.clone() for a in args)
        keep.append(clones)
        graphs["I%d" % i] = _probe.capture(torch, closure(op, clones), k)
    med = _probe.interleaved_medians(torch, graphs, dict.fromkeys(graphs, k), rounds)
    out = {"k": k, "median_us": med,
           "moved_bytes": sum(a.untyped_storage().nbytes() for a in keep[0]),
           "effective_mhz": _probe.effective_mhz(torch)}
    del graphs, keep
    torch.cuda.synchronize()
    return out


def one_process(rounds, target_ms, gems):
    import torch

    torch.manual_seed(0)
    out = {}
    ks = kernels(torch)
    for name, (op, args) in ks.items():
        out["torch " + name] = measure_one(torch, op, args, rounds, target_ms)
    if gems:
        os.environ.setdefault("GEMS_VENDOR", "nvidia")
        import flag_gems

        with flag_gems.use_gems():
            for name, (op, args) in ks.items():
                out["gems " + name] = measure_one(torch, op, args, rounds, target_ms)
    return out


def main(argv=None):
    ap = _probe.worker_parser(__doc__, 6)
    ap.add_argument("--rounds", type=int, default=13)
    ap.add_argument("--target-ms", type=float, default=2.0)
    ap.add_argument("--gems", action="store_true", help="FlagGems' kernels too")
    a = ap.parse_args(argv)
    wargs = ["--rounds", str(a.rounds), "--target-ms", str(a.target_ms)]
    if a.gems:
        wargs.append("--gems")
    if a.worker:
        print(json.dumps(one_process(a.rounds, a.target_ms, a.gems)))
        return 0
    procs = _probe.run_workers(os.path.abspath(__file__), wargs, a.procs)
    if len(procs) < 2:
        return 1
    report = {}
    for name in procs[0]:
        rows = [p[name] for p in procs]
        m = [q["median_us"]["M"] for q in rows]
        full = _probe.spread_pct(rows, ("M", "F1", "F2", "F3"))
        moved = _probe.spread_pct(rows, ("M", "I1", "I2", "I3"))
        mhz = [q.get("effective_mhz") for q in rows]
        report[name] = {"k": rows[0]["k"], "moved_mib": rows[0]["moved_bytes"] / 2 ** 20,
                        "measured_us": m, "effective_mhz": mhz,
                        "between_sd_pct": _probe.sd_pct(m),
                        "full_probe_sd_pct": full, "moved_probe_sd_pct": moved,
                        "full_rms": _probe.rms(full), "moved_rms": _probe.rms(moved)}
        print("%-28s K %4d  M %8.3f us  between %.2f%%  | inside, outputs moved: rms %.2f%% "
              "(%s)  | inputs moved too: rms %.2f%% (%s)" % (
                  name, rows[0]["k"], sum(m) / len(m), _probe.sd_pct(m), _probe.rms(full),
                  " ".join("%.2f" % v for v in full), _probe.rms(moved),
                  " ".join("%.2f" % v for v in moved)), flush=True)
        print("%-28s   by process: M %s us at %s MHz (spin)" % (
            "", " ".join("%.3f" % v for v in m),
            " ".join("%.1f" % v if v else "-" for v in mhz)), flush=True)
    _probe.write_json(a.out, {"report": report, "processes": procs})
    return 0


if __name__ == "__main__":
    sys.exit(main())
