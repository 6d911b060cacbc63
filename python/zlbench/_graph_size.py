"""How big a measurement's graphs are: calls per replay (K) from the
estimates' times, how many placements fit in memory, how many warm-up
calls, how many calls a probe's captured unit holds. Pure arithmetic;
_graph captures what it says."""

import math

# The most calls one graph holds (K).
MAX_K = 4096
# A ppm of slack when turning t1 into K: t1 comes back through a float32
# elapsed time, and 2 ms / 0.004999999888 ms must still make 400 (then 512).
K_SLACK = 1e-6


def call_cost_ms(t1_ms, tn_ms, n):
    """GPU time of one call from replays of a 1-call and an n-call graph.

    A replay's time includes a fixed cost (the graph launch and the event
    pair: ~3 us on an H200) that a 1-call estimate would charge to the call,
    making K several times too small for microsecond kernels. The slope
    between the two graphs leaves it out. Noise can make the slope
    meaningless for tiny calls; then the n-call average stands in.
    """
    slope = (tn_ms - t1_ms) / (n - 1)
    if slope > 0 and math.isfinite(slope):
        return slope
    return tn_ms / n


def k_for(call_ms, target_ms):
    """Calls per replay so that one replay takes at least target_ms.

    Rounded up to a power of two: processes whose estimates differ by a few
    percent then capture the same graph, which keeps the graph itself from
    being a source of process-to-process drift.
    """
    if not (call_ms > 0) or not math.isfinite(call_ms):
        return MAX_K
    k = math.ceil(target_ms / call_ms * (1 - K_SLACK))
    k = 1 << max(0, (k - 1).bit_length())
    return max(1, min(MAX_K, k))


# What the extra placements' graphs may hold at most, together.
PLACEMENT_MEM_BYTES = 1 << 30


def placements_for(asked, pool_bytes, free_bytes):
    """How many placements to capture: asked, unless their graphs' memory
    would pass PLACEMENT_MEM_BYTES or a quarter of what the device has free.

    pool_bytes is what one more graph's capture reserved (its private pool:
    the outputs the placements move). Kernels that need much memory
    per call are long and DRAM-bound, where placement moves little; they
    get fewer placements rather than an out-of-memory failure. The result
    says how many were sampled (stats["placements"])."""
    asked = max(1, int(asked))
    if asked == 1 or pool_bytes <= 0:
        return asked
    budget = PLACEMENT_MEM_BYTES
    if free_bytes is not None:
        budget = min(budget, free_bytes // 4)
    return max(1, min(asked, 1 + int(budget // pool_bytes)))


def warmup_calls_for(warmup_ms, per_call_ms, max_warm):
    lo = min(5, max_warm)
    if not (per_call_ms > 0):
        return max_warm
    n = math.ceil(float(warmup_ms) / per_call_ms)
    return max(lo, min(max_warm, n))


# A probe of K calls is built from a capture of PROBE_UNIT calls repeated
# K / PROBE_UNIT times (zlbt_graph_repeat) where K is a larger multiple:
# capturing costs the host what as many eager calls do (130-400 us a call
# for FlagGems' small kernels on an H100: 17 s of the 30 s three probes
# took over ten operators), replaying a copy nothing more. The unit's
# buffers are the K-call capture's: each call's output is freed inside the
# capture and the next call takes the same block back.
PROBE_UNIT = 8


def probe_unit(k):
    """Calls in a probe's captured unit: the largest power of two of at most
    PROBE_UNIT that divides k; 0 when k is no larger (capture all k)."""
    unit = PROBE_UNIT
    while unit > 1 and k % unit:
        unit //= 2
    return unit if k > unit else 0
