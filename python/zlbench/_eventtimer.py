"""The graph timer of backends whose torch hands out no raw graph exec
(ZLB_GRAPH_REPLAY=events: torch_musa's MUSAGraph has replay() and nothing
lower). It stands in for libzlbtimer (_timerlib.TimerLib) with the same
time_graph() answer, but replays the graph object itself, each replay between
two of the device module's timing events, under the same stopping rule:

- one untimed replay first (warmup_replays), then batches of replays, one
  event pair each, read after a synchronize per batch;
- at least min_samples samples and min_time_ms of GPU time; then, with a
  noise target, until the median's relative noise (half its distribution-free
  95% interval over the median, as zlbt_summarize computes it) is at most the
  target; never more than max_samples samples nor max_wall_ms of wall time
  (ZLBT_ETIMEOUT when the wall limit came before min_samples);
- a sample is one replay's elapsed time over its calls_per_replay calls.

What it cannot do, and says through its attributes: flush L2 (no_l2_flush:
the graph module measures hot and records l2 "hot"), check the SM clock (no
NVML: clock_mhz None, nothing discarded), inspect the graph's nodes (no raw
graph), sample several placements (v3 False: one graph per measurement; the
placement probes still run).
"""

import time

from . import _device, _stats
from ._timerlib import STATUS, ZLBT_EINVAL, ZLBT_ETIMEOUT, ZLBT_OK  # noqa: F401

STOP_RULE, STOP_NOISE, STOP_MAX, STOP_WALL = "rule", "noise", "max_samples", "wall"
# Replays between two reads of the events: small enough that the wall limit
# is checked often, large enough that the synchronize is not per sample.
BATCH = 8


class EventTimer:
    """time_graph(graph, ...) on torch's own events. mod: the device module
    (torch.musa); the stream argument of time_graph is ignored, the
    module's current stream is used (where the graph was captured for)."""

    replays_graphs = True      # time_graph takes graph objects, not exec handles
    has_graph_info = False
    checks_clock = False
    flushes_l2 = False
    abi = 2
    lib_abi = 2
    v2 = True                  # noise target and stop reasons
    v3 = False                 # one placement
    v4 = False

    def __init__(self, mod):
        self.mod = mod
        self.path = "torch.%s events" % _device.name_of(mod)

    def graph_info(self, graph):
        return None, "%s: the graph exposes no raw graph to inspect" % self.path

    def time_graph(self, graph, stream, calls_per_replay, min_samples, max_samples,
                   min_time_ms, max_wall_ms, warmup_replays=0, noise_target=0.0,
                   l2_mode=0, clock_check=0, clock_floor=0.0, more_placements=()):
        """(status, stats, samples, sentence), as TimerLib.time_graph."""
        if more_placements:
            raise ValueError("%s samples one placement" % self.path)
        calls = max(1, int(calls_per_replay))
        if min_samples < 1 or max_samples < min_samples:
            return ZLBT_EINVAL, _empty(), [], "min_samples %d, max_samples %d" % (
                min_samples, max_samples)
        mod = self.mod
        t0 = time.perf_counter()
        for _ in range(max(0, int(warmup_replays))):
            graph.replay()
        samples, total, stop = [], 0.0, None
        while stop is None:
            pairs = []
            for _ in range(min(BATCH, max_samples - len(samples))):
                start = mod.Event(enable_timing=True)
                end = mod.Event(enable_timing=True)
                start.record()
                graph.replay()
                end.record()
                pairs.append((start, end))
            mod.synchronize()
            for start, end in pairs:
                ms = float(start.elapsed_time(end))
                total += ms
                samples.append(ms / calls)
            stop = _stop(samples, total, min_samples, max_samples, min_time_ms,
                         noise_target, (time.perf_counter() - t0) * 1e3, max_wall_ms)
        stats = _stats.summarize(samples) or _empty()
        stats.update({"stop_reason": stop, "discarded": 0, "clock_mhz": None,
                      "clock_min_mhz": None, "l2_flush_bytes": 0, "placements": 1,
                      "placement_spread": 0.0, "centre_ms": stats.get("median_ms"),
                      "placement_noise": None, "clock_reasons": None, "clock_max_mhz": None,
                      "total_gpu_ms": total,
                      "wall_ms": (time.perf_counter() - t0) * 1e3})
        if stop == STOP_WALL and len(samples) < min_samples:
            return ZLBT_ETIMEOUT, stats, samples, (
                "wall limit of %g ms reached after %d of %d samples" % (
                    max_wall_ms, len(samples), min_samples))
        return ZLBT_OK, stats, samples, ""


def _stop(samples, total_ms, min_samples, max_samples, min_time_ms, noise_target,
          wall_ms, max_wall_ms):
    """Why sampling stops now, or None to go on."""
    n = len(samples)
    if n >= min_samples and total_ms >= min_time_ms:
        if not noise_target:
            return STOP_RULE
        noise = _stats.noise_sorted(sorted(samples))
        if noise <= noise_target:
            return STOP_NOISE
    if n >= max_samples:
        return STOP_MAX
    if wall_ms >= max_wall_ms:
        return STOP_WALL
    return None


def _empty():
    return {"n": 0, "median_ms": None, "mean_ms": None, "min_ms": None, "max_ms": None,
            "q1_ms": None, "q3_ms": None, "stdrel": None, "noise": None}
