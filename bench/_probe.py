"""What the probes in bench/ share: one command line, and the measuring done
in fresh worker processes (the script re-run with --worker), each printing
one JSON document on stdout."""

import argparse
import json
import math
import subprocess
import sys
import time


def parser(doc, kernels, procs, m):
    """The probes' command line: --timer-lib, --procs, --m, --kernels, --out."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--timer-lib", required=True)
    p.add_argument("--procs", type=int, default=procs)
    p.add_argument("--m", type=int, default=m, help="measurements per mode and process")
    p.add_argument("--kernels", default=",".join(kernels))
    p.add_argument("--out")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return p


def worker_parser(doc, procs):
    """The command line of a probe that re-runs itself in fresh processes:
    --procs, --out and the hidden --worker; the probe adds its own."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--procs", type=int, default=procs)
    p.add_argument("--out")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return p


def write_json(path, doc):
    """doc to path (indented), when a path was given."""
    if path:
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)


def run_workers(script, argv, procs):
    """Run script --worker argv in procs fresh processes, one after another;
    the JSON each printed, for those that succeeded (failures are reported)."""
    out = []
    for i in range(procs):
        t0 = time.time()
        r = subprocess.run([sys.executable, script, "--worker"] + list(argv),
                           capture_output=True, text=True)
        if r.returncode != 0:
            print("worker %d failed (rc %d): %s" % (i, r.returncode, r.stderr[-2000:]))
            continue
        out.append(json.loads(r.stdout))
        print("worker %d: %.1f s" % (i, time.time() - t0), flush=True)
    return out


def engine_env(timer_lib, zlb=None):
    """Put zlb's engine settings (zlb run --print-engine-env: the stopping
    rule, the replay target, the warm-up cap, ...) into os.environ where the
    caller has not set them: the plugins have no defaults of their own.
    zlb defaults to the one built beside timer_lib."""
    import os

    zlb = zlb or os.path.join(os.path.dirname(os.path.abspath(timer_lib)), "zlb")
    out = subprocess.run([zlb, "run", "--print-engine-env"], capture_output=True,
                         text=True, check=True)
    for line in out.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.startswith("ZLB_"):
            os.environ.setdefault(key, value)


def engine_rule(timer_lib, **changes):
    """The engine's Rule as zlb run would pass it (engine_env), with changes."""
    engine_env(timer_lib)
    from zlbench import timing

    return timing._settings()["rule"].but(**changes)


def rms(values):
    """Root mean square of values (sds in %, say)."""
    return math.sqrt(sum(x * x for x in values) / len(values))


def spread_pct(rows, keys):
    """Per process (rows: each one's {"median_us": {graph: us}}), the
    sd_pct of its medians over the graphs named in keys."""
    return [sd_pct([q["median_us"][k] for k in keys]) for q in rows]


def sd_pct(values):
    """Sample standard deviation over the mean, in percent (None for fewer
    than two values)."""
    n = len(values)
    if n < 2:
        return None
    m = sum(values) / n
    return 100.0 * (sum((v - m) ** 2 for v in values) / (n - 1)) ** 0.5 / m


def capture(torch, fn, k):
    """A CUDA graph of k calls of fn, captured on a side stream as zlb does
    (torch's own pool), the device synchronised after."""
    g = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.graph(g, stream=side):
        for _ in range(k):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    return g


def k_for(per_call_ms, target_ms=2.0):
    """Calls per replay for a replay of about target_ms: a power of two, as
    zlb's engine rounds it, so processes with close estimates agree."""
    return max(1, 2 ** math.ceil(math.log2(max(1.0, target_ms / per_call_ms))))


def timed_replays(torch, g, n):
    """n single replays of graph g timed between CUDA events, each after an
    untimed replay of its own (which warms its L2): ms each."""
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    got = []
    for _ in range(n):
        g.replay()
        e0.record()
        g.replay()
        e1.record()
        torch.cuda.synchronize()
        got.append(e0.elapsed_time(e1))
    return got


def per_call_ms(torch, fn, k=8, n=5):
    """What one call of fn costs on the GPU: the fastest of n single replays
    of a graph of k calls (each after an untimed one), over k."""
    g = capture(torch, fn, k)
    got = timed_replays(torch, g, n)
    del g
    return min(got) / k


def interleaved_medians(torch, graphs, calls, rounds, streams=None):
    """Median us per call of each graph (name -> torch CUDAGraph, calls[name]
    calls in it), timed in single replays between CUDA events, each after an
    untimed replay of its own, the graphs taken in turn and the starting one
    rotated each round so that a drift of the device hits them alike.
    streams: name -> the stream a graph is replayed on (the current one for
    a graph it does not name)."""
    order = list(graphs)
    times = {key: [] for key in order}
    streams = streams or {}
    for r in range(rounds):
        for key in order[r % len(order):] + order[:r % len(order)]:
            g = graphs[key]
            with torch.cuda.stream(streams.get(key, torch.cuda.current_stream())):
                ms = timed_replays(torch, g, 1)[0]
            times[key].append(ms * 1e3 / calls[key])
    return {key: sorted(v)[len(v) // 2] for key, v in times.items()}


SPIN_CYCLES = 1000000


def effective_mhz(torch, n=9):
    """The SM clock kernels really run at now: torch.cuda._sleep spins for
    SPIN_CYCLES clock64() cycles, so its time is SPIN_CYCLES / f (median of
    n). NVML's reading, what the engine records, moves in 15 MHz steps, 0.75%
    at the H100's top clock: an offset inside one step is invisible to it and
    not to a compute-bound kernel."""
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    got = []
    for _ in range(n):
        e0.record()
        torch.cuda._sleep(SPIN_CYCLES)
        e1.record()
        torch.cuda.synchronize()
        got.append(SPIN_CYCLES / (e0.elapsed_time(e1) * 1e3))
    return sorted(got)[len(got) // 2]
