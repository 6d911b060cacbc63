#!/usr/bin/env python3
"""Is gelu's two-mode process offset the SM clock, or something FlagGems' import brings?

In zlb's batches on an H100 (2026-12-07) torch's and FlagGems' gelu of 8192^2
read 93.05 / 102.57 us in some processes and 93.30 / 102.95 in others, the
order of the jobs in a worker aside, while silu of the same sizes read alike
in every process and NVML said 1980 MHz throughout. A bare torch process
(process_start_check.py) read gelu at 92.83-92.85 us in six processes.

Each process here times, in interleaved single replays, graphs of torch's
gelu and silu of 8192^2 and a spin: torch.cuda._sleep, which waits a number
of SM clock cycles, so its time is cycles / effective clock, read to about
0.01% (where NVML moves in 15 MHz steps, 0.75%). The same graphs are timed
after each step of what a zlb process imports (torch alone, `import
triton`, Triton's driver made active, `import flag_gems`), then new graphs.
Over the processes and steps: does gelu split into modes, and does the
spin's clock split with it? Run it with nvidia-smi logging the SM clock
beside it to see whether NVML shows the levels.

    PYTHONPATH=$PWD/.carry/FlagGems/src:$PWD/.carry/pylib GEMS_VENDOR=nvidia \
      python3 bench/gelu_mode_check.py --procs 8 --out $OUT/gelu_mode.json
"""

import json
import os
import sys
import time

import _probe

SPIN_CYCLES = 200000
SPINS = 8


def graphs(torch, x):
    gelu = lambda: torch.nn.functional.gelu(x)  # noqa: E731
    silu = lambda: torch.nn.functional.silu(x)  # noqa: E731
    spin = lambda: torch.cuda._sleep(SPIN_CYCLES)  # noqa: E731
    for f in (gelu, silu, spin):
        for _ in range(10):
            f()
    torch.cuda.synchronize()
    return ({"gelu": _probe.capture(torch, gelu, 32), "silu": _probe.capture(torch, silu, 32),
             "spin": _probe.capture(torch, spin, SPINS)},
            {"gelu": 32, "silu": 32, "spin": SPINS})


def mhz(us_per_spin):
    return SPIN_CYCLES / us_per_spin


STAGES = ("torch", "import triton", "triton driver", "import flag_gems")


def one_process(rounds):
    """The same graphs timed after each step of what a zlb process imports:
    torch alone, `import triton`, Triton's driver made active (what its first
    launch does), `import flag_gems`; and new graphs after the last."""
    import torch

    torch.manual_seed(0)
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    g1, calls = graphs(torch, x)
    out = {}
    for stage in STAGES:
        if stage == "import triton":
            import triton  # noqa: F401
        elif stage == "triton driver":
            from triton.runtime.driver import driver
            driver.active.get_current_device()
            driver.active.utils  # noqa: B018  (loads its C helper)
        elif stage == "import flag_gems":
            import flag_gems  # noqa: F401  (its import only: nothing of it enabled)
        t0 = time.time()
        out[stage] = _probe.interleaved_medians(torch, g1, calls, rounds)
        out[stage]["t"] = (t0, time.time())
    g2, _ = graphs(torch, x)
    t0 = time.time()
    out["new graphs"] = _probe.interleaved_medians(torch, g2, calls, rounds)
    out["new graphs"]["t"] = (t0, time.time())
    return out


def main(argv=None):
    ap = _probe.worker_parser(__doc__, 8)
    ap.add_argument("--rounds", type=int, default=15)
    a = ap.parse_args(argv)
    if a.worker:
        print(json.dumps(one_process(a.rounds)))
        return 0
    os.environ.setdefault("GEMS_VENDOR", "nvidia")
    procs = _probe.run_workers(os.path.abspath(__file__), ["--rounds", str(a.rounds)], a.procs)
    print("process | " + " | ".join("%s: gelu, silu us, spin MHz" % st
                                      for st in STAGES + ("new graphs",)))
    for i, p in enumerate(procs):
        print("%7d | %s" % (i, " | ".join("%8.3f %8.3f %8.2f" % (
            p[st]["gelu"], p[st]["silu"], mhz(p[st]["spin"]))
            for st in STAGES + ("new graphs",))), flush=True)
    for st in STAGES + ("new graphs",):
        print("%-16s between processes: gelu sd %.3f%%, spin sd %.3f%%" % (
            st, _probe.sd_pct([p[st]["gelu"] for p in procs]),
            _probe.sd_pct([p[st]["spin"] for p in procs])))
    _probe.write_json(a.out, procs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
