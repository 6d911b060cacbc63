"""Reading the placement probes' pairs (_graph._probe_placements times them):
the order each pair is timed in, one probe's draw from its pairs, the spread
of the draws, and the sentence for probes left out for their clock. Pure
functions of the times; nothing here touches the GPU."""

import math

from . import _stats

# How each probe is timed against the measured graph (docs/protocol.md
# section 3); files without the key used "bracketed" (blocks of 9 replays in
# the order 0 1 0 2 ... 0 n 0).
PROBE_PROTOCOL = "paired"
# Pairs per probe: half with the measured graph timed first, half second.
# Four: on an H100 the probes took 19.4 s of the worker's 115.5 s over the
# issue-28 operators (six pairs), the one phase FlagGems' harness has
# nothing like, while the rows' single-round intervals were set by what
# differs between processes (the clock level, bench/README.md), which no
# number of pairs inside one process reaches. Two pairs an order still
# give each order's median.
PROBE_PAIRS = 4


def probe_pair_order(pairs):
    """Which graph of each pair is timed first: the measured one (0) on even
    pairs, the probe (1) on odd ones, so that a clock that moves within a
    pair moves the two orders' differences by the same amount either way."""
    return [(0, 1) if j % 2 == 0 else (1, 0) for j in range(pairs)]


def _median(values):
    """_stats.median, None for no value (a probe whose pairs all fell out)."""
    return _stats.median(values) if values else None


def probe_pair_draw(pairs, clock_floor):
    """One probe's read of its pairs: {"draw": ln offset of the probe from the
    measured graph, None when no pair is left, "off": 1 when every pair with
    times was left out for its clock, "probe_ms", "ref_ms", "mhz": medians
    over the kept pairs}. pairs: (which was timed first: 0 the measured
    graph, 1 the probe; (ms, MHz) of the measured graph; (ms, MHz) of the
    probe), ms None where a replay gave no time, MHz None where no clock was
    read.

    A pair whose two clocks differ by more than 1 - clock_floor is left out:
    the clock moved between its replays. The draw is the mean of the
    median ln(probe / measured) of the pairs timed in each order: a clock
    that rises or falls over a pair moves the two orders' differences by
    the same amount in opposite directions, and the mean takes it out
    (with one order left, its median)."""
    band = 1.0 - clock_floor
    by_order = {0: [], 1: []}
    probe_ms, ref_ms, mhz = [], [], []
    timed = 0
    for first, (r, rc), (p, pc) in pairs:
        if not r or r <= 0 or not p or p <= 0:
            continue
        timed += 1
        if clock_floor > 0 and rc and pc and abs(pc / rc - 1) > band:
            continue
        by_order[first].append(math.log(p) - math.log(r))
        probe_ms.append(p)
        ref_ms.append(r)
        mhz += [c for c in (rc, pc) if c]
    medians = [_median(d) for d in by_order.values() if d]
    return {"draw": sum(medians) / len(medians) if medians else None,
            "off": 1 if timed and not medians else 0,
            "probe_ms": _median(probe_ms), "ref_ms": _median(ref_ms), "mhz": _median(mhz)}


def probe_pairs_record(pairs):
    """One probe's pairs as the record keeps them (placement_probe_pairs):
    [first, measured ms, measured MHz, probe ms, probe MHz] each, in the
    order timed (first: 0 the measured graph was timed first, 1 the probe);
    null where a replay gave no time or no clock was read."""
    return [[first, r, rc, p, pc] for first, (r, rc), (p, pc) in pairs]


def probe_spread(draws):
    """(sd of ln placement over the measured graph and the probes kept, how
    many probes were kept): the spread of the kept draws (None: left out)
    and the measured graph's 0; (None, 0) with no probe kept."""
    kept_draws = [0.0] + [d for d in draws if d is not None]
    kept = len(kept_draws) - 1
    if kept < 1:
        return None, 0
    mean = sum(kept_draws) / len(kept_draws)
    return math.sqrt(sum((x - mean) ** 2 for x in kept_draws) / kept), kept


def clock_sentence(off, probes, clock_floor):
    """Why probes are missing for their clock, or None."""
    if not off:
        return None
    return "clock: %d of %d probe%s left out, the clock moving by more than %g%% within each " \
        "of %s pairs" % (off, probes, "" if probes == 1 else "s", 100 * (1.0 - clock_floor),
                         "its" if off == 1 else "their")


def log_sd(values):
    """Sample standard deviation of ln(values); None for fewer than two."""
    if len(values) < 2:
        return None
    logs = [math.log(v) for v in values]
    mean = sum(logs) / len(logs)
    return math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
