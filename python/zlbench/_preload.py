"""The preload: untimed back-to-back replays of a measurement's graphs
right before it is sampled (Rule.preload_ms, zlb --preload; off by default).

Why: between a row's warm-up and its sampling the GPU idles through the
capture (40-100 ms), and a tensor-core kernel restarted after such an idle
does not start on the level it settles at. On an H100 torch's fp16 addmm of
1024^3 stepped down through levels while it was sampled (7.60, 7.585, 7.54,
7.51 us), each step 0.4-1.7%, 23 to 167 ms into the sampling, at another
moment in each process; where the noise rule stopped decided the median,
and four processes read 7.511-7.585 us. No other operator of that matrix
trended by 0.3% (bench/README.md, "the sampling's steps, and --preload").
A sampling that starts after the load has run long enough should start on
the settled level; whether that level is then the same in every process
(on another H100 rounds without any step still ended 0.9% apart) is for
the GPU to show (bench/preload_control.sh).

The load is libzlbtimer's own sampling loop under the bare rule (replays
bracketed by events, in batches), so that it is the very load the sampling
continues; its samples are thrown away but for their trend and profile.
With a steady rule (--preload-steady) it runs in chunks and stops once
their levels hold, --preload its cap: a kernel that does not climb pays
STEADY_CHUNKS chunks, one that does what it needs."""

import math
import time

from ._stats import median

# What a graph measurement's record gets, each None without a preload:
# preload_trend, ln(median of the preload's last third of replays / median
# of its first third), negative where the kernel sped up while it ran (the
# ramp the preload took); preload_profile, where that ramp went (profile());
# preload_steady_ms, with a steady rule, the GPU ms after which the level
# held (None: it ran to its cap).
KEYS = ("preload_trend", "preload_profile", "preload_steady_ms")

# The steady rule (Rule.preload_steady, zlb --preload-steady): the preload
# runs in chunks of this much GPU time and stops once the medians of the
# last STEADY_CHUNKS of them lie within the rule's fraction of each other.
# Four of 25 ms: the rounds on disk stepped 23-167 ms into their sampling,
# so a level has to hold for about that long before it is taken as the one.
STEADY_CHUNK_MS = 25.0
STEADY_CHUNKS = 4

# The most chunks a profile cuts the preload into, and the fewest replays
# a chunk's median is taken over: 25 ms apiece for a 1000 ms preload, fine
# enough to replay a rule that stops a preload once its level holds.
PROFILE_CHUNKS = 40
PROFILE_MIN_REPLAYS = 3


def trend(samples):
    """ln(median of the last third / median of the first third) of the
    replays in the order they ran; None for fewer than six."""
    xs = [x for x in samples or () if x and x > 0]
    if len(xs) < 6:
        return None
    third = len(xs) // 3
    return math.log(median(xs[-third:]) / median(xs[:third]))


def profile(samples, calls):
    """[[GPU ms since the preload began at the chunk's end, median ms per
    call of the chunk], ...]: the preload's replays (ms per call, calls a
    replay, in the order they ran) cut into at most PROFILE_CHUNKS runs of
    equal length (one replay apart at most), each of PROFILE_MIN_REPLAYS or
    more; None where not even two such runs fit. How long the climb took is
    what sets how long a preload must be: the one figure a trend of thirds
    hides."""
    xs = [x for x in samples or () if x and x > 0]
    n = min(PROFILE_CHUNKS, len(xs) // PROFILE_MIN_REPLAYS)
    if n < 2:
        return None
    bounds = [len(xs) * i // n for i in range(n + 1)]
    out, spent = [], 0.0
    for lo, hi in zip(bounds, bounds[1:]):
        spent += sum(xs[lo:hi]) * calls
        out.append([spent, median(xs[lo:hi])])
    return out


def held(levels, within):
    """Whether the last STEADY_CHUNKS levels (chunk medians, in the order
    taken) lie within the fraction within of each other."""
    last = levels[-STEADY_CHUNKS:]
    return len(last) == STEADY_CHUNKS and max(last) <= min(last) * (1.0 + within)


def run(torch, lib, replay, graphs, k, ms, max_wall_ms, steady=0.0):
    """Replay graphs (round-robin, as the sampling will) back to back for ms
    milliseconds of GPU time, through replay (_graph._replay) under the bare
    rule; with steady > 0 in chunks of STEADY_CHUNK_MS, stopping as soon as
    the chunks' levels hold (held()), ms its cap. {"preload_trend": ...,
    "preload_profile": ..., "preload_steady_ms": ...}; nothing with ms <= 0.
    A load that fails raises as the sampling would (CaptureFailure)."""
    if ms <= 0:
        return dict.fromkeys(KEYS)
    # Not past the row's own wall limit: a slow graph's preload is cut there.
    wall = min(max_wall_ms, 2.0 * ms + 1000.0)
    if steady <= 0:
        _stats, samples, _markers = replay(torch, lib, graphs[0], k, 1, 10000, float(ms),
                                           wall, more=graphs[1:])
        return {"preload_trend": trend(samples), "preload_profile": profile(samples, k),
                "preload_steady_ms": None}
    samples, levels, spent, at = [], [], 0.0, None
    start = time.monotonic()
    while spent < ms:
        left = wall - 1e3 * (time.monotonic() - start)
        if left <= 0:
            break
        _stats, chunk, _markers = replay(torch, lib, graphs[0], k, 1, 10000,
                                         min(STEADY_CHUNK_MS, ms - spent), left,
                                         more=graphs[1:])
        chunk = [x for x in chunk or () if x and x > 0]
        if not chunk:
            break
        samples += chunk
        spent += sum(chunk) * k
        levels.append(median(chunk))
        if held(levels, steady):
            at = spent
            break
    return {"preload_trend": trend(samples), "preload_profile": profile(samples, k),
            "preload_steady_ms": at}
