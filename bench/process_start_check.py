#!/usr/bin/env python3
"""Do a process's first seconds read memory-bound kernels slower?

In the issue-28 matrix on an H100 (2026-12-07, build 64d31f2) gelu, the
first operator of every batch's worker, read 0.5% slower in three of five
processes on all six rows (torch and gems, 2048^2 to 8192^2), while silu,
the second operator of the same processes and the same kind of kernel, read
alike in all five to 0.05%. So the offset went with the moment in the
process, not with the process as a whole. One candidate: the driver scrubs
the memory a process that just exited gave back, in the background, and
that traffic takes memory bandwidth from the next process's first kernels.

Each process here times graphs of torch's gelu (8192^2: 128 MiB in and out,
and 2048^2) in short windows every half second for --seconds, from the moment
its CUDA context exists; before exiting it takes and touches --hog-gib GiB,
as a worker that ran large shapes would have, and frees it by exiting. The
processes run one after another, the first --back-to-back of them with no
pause between, the rest with --gap seconds of idle GPU before each. Per
process: the first windows' median against the last windows'.

    python3 bench/process_start_check.py --out $OUT/start.json
"""

import json
import os
import subprocess
import sys
import time

import _probe


def window(torch, graphs, calls, replays):
    """Median us per call of each graph over replays single replays."""
    out = {}
    for name, g in graphs.items():
        got = sorted(_probe.timed_replays(torch, g, replays))
        out[name] = got[len(got) // 2] * 1e3 / calls[name]
    return out


def one_process(seconds, hog_gib):
    import torch

    t0 = time.monotonic()
    torch.cuda.init()
    torch.manual_seed(0)
    f16 = torch.float16
    ins = {"gelu_8192": torch.randn(8192, 8192, device="cuda", dtype=f16),
           "gelu_2048": torch.randn(2048, 2048, device="cuda", dtype=f16)}
    graphs, calls = {}, {}
    for name, x in ins.items():
        fn = lambda x=x: torch.nn.functional.gelu(x)  # noqa: E731
        k = _probe.k_for(_probe.per_call_ms(torch, fn))
        graphs[name], calls[name] = _probe.capture(torch, fn, k), k
    rows = []
    while time.monotonic() - t0 < seconds:
        t = time.monotonic() - t0
        rows.append({"t": t, "us": window(torch, graphs, calls, 7)})
        time.sleep(max(0.0, 0.5 - (time.monotonic() - t0 - t)))
    if hog_gib > 0:
        hog = torch.empty(int(hog_gib * (1 << 30)), dtype=torch.uint8, device="cuda")
        hog.fill_(1)
        torch.cuda.synchronize()
    return {"windows": rows, "calls": calls}


def main(argv=None):
    ap = _probe.worker_parser(__doc__, 6)
    ap.add_argument("--back-to-back", type=int, default=3)
    ap.add_argument("--gap", type=float, default=10.0)
    ap.add_argument("--seconds", type=float, default=16.0)
    ap.add_argument("--hog-gib", type=float, default=20.0)
    a = ap.parse_args(argv)
    if a.worker:
        print(json.dumps(one_process(a.seconds, a.hog_gib)))
        return 0
    procs = []
    for i in range(a.procs):
        gap = 0.0 if i < a.back_to_back else a.gap
        time.sleep(gap)
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker",
                            "--seconds", str(a.seconds), "--hog-gib", str(a.hog_gib)],
                           capture_output=True, text=True)
        if r.returncode:
            print("process %d failed: %s" % (i, r.stderr[-1500:]))
            continue
        p = json.loads(r.stdout)
        p["gap_s"] = gap
        procs.append(p)
        w = p["windows"]
        for name in w[0]["us"]:
            series = [x["us"][name] for x in w]
            first = sorted(series[:4])[2]
            last = sorted(series[-8:])[4]
            print("process %d (gap %4.1f s) %-10s first 2 s %9.3f us, last 4 s %9.3f us: %+.2f%%"
                  "   | %s" % (i, gap, name, first, last, 100 * (first / last - 1),
                               " ".join("%.2f" % (100 * (v / last - 1)) for v in series)),
                  flush=True)
    _probe.write_json(a.out, procs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
