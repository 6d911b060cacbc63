"""The preload: untimed back-to-back replays of a measurement's graphs
right before it is sampled (_rule.Rule.preload_ms, zlb --preload; off by default).

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

The load is libzlbtimer's own sampling loop (replays bracketed by events,
in batches, the L2 hot or flushed as the sampling's; no noise target or
clock gate), so that it is the very load the sampling continues; its
samples are thrown away but for their trend and profile.
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
# with a steady rule, preload_steady_ms, the timed GPU ms at which the hold
# was confirmed (the end of the window of chunks that held; the level was
# reached a window earlier), and preload_stop, why the preload ended (STOPS).
KEYS = ("preload_trend", "preload_profile", "preload_steady_ms", "preload_stop")

# Why a steady preload ended: its level held, it reached --preload, it
# reached the row's wall limit, or a chunk gave no time.
STOPS = ("held", "cap", "wall", "no time")

# The steady rule (_rule.Rule.preload_steady, zlb --preload-steady): the preload
# runs in chunks of this much GPU time and stops once the medians of the
# last STEADY_CHUNKS of them lie within the rule's fraction of each other.
# Eight of 25 ms: on the rounds on disk a torch addmm of 1024^3 held one
# level for 167 ms of its sampling before it stepped down 0.9% (r0's D), so
# a level has to hold longer than that to be taken as the one. A row that
# does not climb pays 200 ms: 12 s on issue 28's 60 row-sides.
#
# The loop of chunks runs here, each chunk one libzlbtimer call, while the
# sampling's stopping rules live in libzlbtimer: the rule is an experiment,
# off by default, that no GPU has run, and its window is to be set from
# the profiles of one (bench/preload_window.py). Should it become the
# default it belongs in libzlbtimer's request beside stop_when_capped, one
# call instead of one per 25 ms, and its untimed first replay per chunk
# with it.
STEADY_CHUNK_MS = 25.0
STEADY_CHUNKS = 8

# The most replays one libzlbtimer call of the preload keeps. It stops at
# its min_time_ms unless this comes first: a cold row's replays of one
# call (a few us) reach it in tens of ms, so the whole preload asks again
# until its time is spent.
PRELOAD_MAX_SAMPLES = 10000

# The most chunks a profile cuts the preload into, and the fewest replays
# a chunk's median is taken over: 25 ms apiece for a 1000 ms preload, fine
# enough to replay a rule that stops a preload once its level holds.
PROFILE_CHUNKS = 40
PROFILE_MIN_REPLAYS = 3


def rounds(samples, calls, placements):
    """The replays as [(timed GPU ms, level)], one per whole round of
    placements (libzlbtimer stores a batch's samples round-robin, sample i
    of placement i % placements, whatever order the blocks ran in): the
    round's GPU time and the median ms per call of its samples. A round
    with a replay that gave no time is left out; so is a last partial one."""
    p = max(1, placements)
    xs = list(samples or ())
    out = []
    for lo in range(0, len(xs) - p + 1, p):
        r = xs[lo:lo + p]
        if all(x and x > 0 for x in r):
            out.append((sum(r) * calls, median(r)))
    return out


def trend(samples, placements=1):
    """ln(median of the last third / median of the first third) of the
    rounds' levels (rounds()) in the order they ran; None for fewer than
    six rounds."""
    xs = [level for _, level in rounds(samples, 1, placements)]
    if len(xs) < 6:
        return None
    third = len(xs) // 3
    return math.log(median(xs[-third:]) / median(xs[:third]))


def profile(samples, calls, placements=1):
    """[[timed GPU ms since the preload began at the chunk's end, median ms
    per call of the chunk], ...]: the preload's rounds (rounds()) in the
    order they ran, cut into at most PROFILE_CHUNKS runs of equal length
    (one round apart at most), each of PROFILE_MIN_REPLAYS replays or more;
    None where not even two such runs fit. How long the climb took is what
    sets how long a preload must be: the one figure a trend of thirds
    hides."""
    units = rounds(samples, calls, placements)
    per = -(-PROFILE_MIN_REPLAYS // max(1, placements))     # rounds a chunk at least
    n = min(PROFILE_CHUNKS, len(units) // per)
    if n < 2:
        return None
    bounds = [len(units) * i // n for i in range(n + 1)]
    out, spent = [], 0.0
    for lo, hi in zip(bounds, bounds[1:]):
        spent += sum(ms for ms, _ in units[lo:hi])
        out.append([spent, median([level for _, level in units[lo:hi]])])
    return out


def held(levels, within):
    """Whether the last STEADY_CHUNKS levels (chunk medians, in the order
    taken) lie within the fraction within of each other."""
    last = levels[-STEADY_CHUNKS:]
    return len(last) == STEADY_CHUNKS and max(last) <= min(last) * (1.0 + within)


def run(torch, lib, replay, graphs, k, ms, max_wall_ms, steady=0.0, rule=None):
    """Replay graphs (round-robin, as the sampling will) back to back for ms
    milliseconds of timed GPU time (each call to replay also runs its graphs
    once untimed first), through replay (_graph._replay) under rule (None:
    the bare rule, hot L2; the caller gives the sampling's L2 with no noise
    target or clock gate, so that a cold row's load flushes as its sampling
    will); with steady > 0 in chunks of STEADY_CHUNK_MS, stopping as soon as
    the chunks' levels hold (held()), ms its cap. The record's KEYS;
    nothing with ms <= 0. A load that fails raises as the sampling would
    (CaptureFailure)."""
    if ms <= 0:
        return dict.fromkeys(KEYS)
    p = len(graphs)
    # Not past the row's own wall limit: a slow graph's preload is cut there.
    wall = min(max_wall_ms, 2.0 * ms + 1000.0)
    samples, levels, spent, at, stop = [], [], 0.0, None, "cap"
    start = time.monotonic()
    while spent < ms:
        left = wall - 1e3 * (time.monotonic() - start)
        if left <= 0:
            stop = "wall"
            break
        want = min(STEADY_CHUNK_MS, ms - spent) if steady > 0 else ms - spent
        _stats, chunk, _markers = replay(torch, lib, graphs[0], k, 1, PRELOAD_MAX_SAMPLES,
                                         float(want), left, rule=rule, more=graphs[1:])
        chunk = list(chunk or ())
        units = rounds(chunk, k, p)
        if not units:
            stop = "no time"
            break
        samples += chunk[:len(chunk) - len(chunk) % p]
        spent += sum(gpu for gpu, _ in units)
        if steady > 0:
            levels.append(median([level for _, level in units]))
            if held(levels, steady):
                at, stop = spent, "held"
                break
        elif len(chunk) < PRELOAD_MAX_SAMPLES:
            break                   # one call ran its time (or the wall)
    if steady <= 0:
        at = stop = None            # no rule: nothing held, nothing to say why
    return {"preload_trend": trend(samples, p), "preload_profile": profile(samples, k, p),
            "preload_steady_ms": at, "preload_stop": stop}
