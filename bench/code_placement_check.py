#!/usr/bin/env python3
"""Does where a kernel's code was loaded draw what processes show?

On an H100 (issue 28) FlagGems' addmm of 1024^3 read 6.51 us in some
processes and 6.63 in others, gelu of 4096^2 28.14 against 28.28, while in
one process every graph of the kernel read alike: the measured graph, probes
on fresh output pools, probes on moved inputs (input_probe_check.py), at the
same SM clock as far as a clock64 spin can tell. One thing every graph of a
process shares is the kernel's code: Triton loads each compiled kernel once
per process (cuModuleLoadData), so all its graphs run the same copy.

Each process here builds FlagGems' benchmark closures and, for each kernel,
captures the measured graph M, one probe F on a fresh pool (the control), and
C1-C3: captures made after every compiled Triton kernel of the process was
loaded again as a new module, so they run a new copy of the same cubin. It
also replays M on a stream of its own, S (a different hardware channel).
All graphs are timed in interleaved single replays. Over the processes: the
spread of M between processes against the spread of {M, C1-C3} inside one.
If the copies draw what processes show and F does not, where the code lies
is the process state, and a probe can draw it by loading the code anew.

    PYTHONPATH=$PWD/python:$PWD/.carry/FlagGems/src:$PWD/.carry/pylib GEMS_VENDOR=nvidia \
      python3 bench/code_placement_check.py --procs 6 --out $OUT/code.json
"""

import gc
import json
import os
import sys

import _probe


def kernels(torch):
    """input_probe_check.py's kernels (FlagGems-sized inputs, made once per
    process), and gelu of 8192^2, one far past L2."""
    import input_probe_check

    ks = input_probe_check.kernels(torch)
    ks["gelu_8192x8192"] = (torch.nn.functional.gelu,
                            (torch.randn(8192, 8192, device="cuda", dtype=torch.float16),))
    return ks


def loaded_kernels():
    """Every Triton kernel of this process whose code is loaded."""
    from triton.compiler.compiler import CompiledKernel

    return [o for o in gc.get_objects()
            if isinstance(o, CompiledKernel) and getattr(o, "function", None)]


def load_again(compiled, keep):
    """Point each compiled kernel at a new copy of its code: a module loaded
    anew from the same cubin. Returns the functions to restore."""
    from triton.runtime.driver import driver

    device = driver.active.get_current_device()
    old = []
    for k in compiled:
        got = driver.active.utils.load_binary(k.name, k.kernel, k.metadata.shared, device)
        keep.append(got[0])
        old.append((k, k.function))
        k.function = got[1]
    return old


def measure_one(torch, op, args, rounds, target_ms, keep):
    fn = lambda: op(*args)  # noqa: E731  (FlagGems' benchmark closure)
    for _ in range(50):
        fn()
    torch.cuda.synchronize()

    k = _probe.k_for(_probe.per_call_ms(torch, fn), target_ms)
    graphs = {"M": _probe.capture(torch, fn, k), "F": _probe.capture(torch, fn, k)}
    compiled = loaded_kernels()
    for i in range(1, 4):
        old = load_again(compiled, keep)
        graphs["C%d" % i] = _probe.capture(torch, fn, k)
        for kern, f in old:
            kern.function = f
    graphs["S"] = graphs["M"]
    med = _probe.interleaved_medians(torch, graphs, dict.fromkeys(graphs, k), rounds,
                                     {"S": torch.cuda.Stream()})
    del graphs
    torch.cuda.synchronize()
    return {"k": k, "median_us": med, "compiled_kernels": len(compiled)}


def one_process(rounds, target_ms):
    import torch
    import flag_gems

    torch.manual_seed(0)
    keep = []
    out = {}
    ks = kernels(torch)
    with flag_gems.use_gems():
        for name, (op, args) in ks.items():
            out["gems " + name] = measure_one(torch, op, args, rounds, target_ms, keep)
    return out


def main(argv=None):
    ap = _probe.worker_parser(__doc__, 6)
    ap.add_argument("--rounds", type=int, default=13)
    ap.add_argument("--target-ms", type=float, default=2.0)
    a = ap.parse_args(argv)
    if a.worker:
        print(json.dumps(one_process(a.rounds, a.target_ms)))
        return 0
    os.environ.setdefault("GEMS_VENDOR", "nvidia")
    procs = _probe.run_workers(os.path.abspath(__file__),
                               ["--rounds", str(a.rounds), "--target-ms", str(a.target_ms)],
                               a.procs)
    if len(procs) < 2:
        return 1
    report = {}
    for name in procs[0]:
        rows = [p[name] for p in procs]
        m = [q["median_us"]["M"] for q in rows]
        code = _probe.spread_pct(rows, ("M", "C1", "C2", "C3"))
        rms = _probe.rms(code)
        report[name] = {"k": rows[0]["k"], "measured_us": m,
                        "between_sd_pct": _probe.sd_pct(m), "code_sd_pct": code,
                        "code_rms": rms}
        print("%-28s K %4d  M %8.3f us  between %.2f%%  | inside, code loaded anew: rms %.2f%%"
              % (name, rows[0]["k"], sum(m) / len(m), _probe.sd_pct(m), rms), flush=True)
        for i, q in enumerate(rows):
            med = q["median_us"]
            print("%-28s   process %d: M %.3f  F %+.2f%%  C %s  S %+.2f%%  (%d kernels)" % (
                "", i, med["M"], 100 * (med["F"] / med["M"] - 1),
                " ".join("%+.2f%%" % (100 * (med[c] / med["M"] - 1))
                         for c in ("C1", "C2", "C3")),
                100 * (med["S"] / med["M"] - 1), q["compiled_kernels"]), flush=True)
    _probe.write_json(a.out, {"report": report, "processes": procs})
    return 0


if __name__ == "__main__":
    sys.exit(main())
