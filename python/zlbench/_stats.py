"""Summary statistics in Python, computed exactly as libzlbtimer's
zlbt_summarize does (src/timer/stats.c), so that direct-timed rows and
graph-timed rows are summarised the same way even where the library is not
loaded (direct timing on a backend without it).
"""

import math


def quantile_sorted(s, q):
    """Linear interpolation between closest ranks (numpy's default)."""
    n = len(s)
    if q <= 0 or n == 1:
        return s[0]
    if q >= 1:
        return s[n - 1]
    h = (n - 1) * q
    lo = int(h)
    frac = h - lo
    if lo + 1 >= n:
        return s[n - 1]
    # a + frac * (b - a): equal neighbours give exactly that value back.
    return s[lo] + frac * (s[lo + 1] - s[lo])


def quantiles(samples, qs):
    s = sorted(float(v) for v in samples)
    return [quantile_sorted(s, float(q)) for q in qs]


def median(values):
    return quantile_sorted(sorted(float(v) for v in values), 0.5)


def summarize(samples):
    """Dict of n, median, mean, min, max, q1, q3, stdrel (None for no samples
    or a non-finite one, as zlbt_summarize refuses those)."""
    v = [float(x) for x in samples]
    if not v or not all(math.isfinite(x) for x in v):
        return None
    total = 0.0
    for x in v:
        total += x
    n = len(v)
    s = sorted(v)
    mean = total / n
    ss = 0.0
    for x in s:
        ss += (x - mean) * (x - mean)
    stdrel = 0.0
    if n > 1 and mean != 0:
        stdrel = math.sqrt(ss / (n - 1)) / abs(mean)
    return {
        "n": n,
        "median_ms": quantile_sorted(s, 0.5),
        "mean_ms": mean,
        "min_ms": s[0],
        "max_ms": s[-1],
        "q1_ms": quantile_sorted(s, 0.25),
        "q3_ms": quantile_sorted(s, 0.75),
        "stdrel": stdrel,
    }
