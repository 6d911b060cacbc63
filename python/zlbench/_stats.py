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


CI_TAIL = 0.025        # each side of the two-sided 95% interval
CI_MIN_N = 6           # below this even [min, max] covers less than 95%


def median_ci_ranks(n):
    """1-based (lo, hi) ranks of the order statistics bounding the
    distribution-free 95% confidence interval of the median of n >= 1
    samples, as src/timer/stats.c's stats_median_ci_ranks computes them:
    with B ~ binomial(n, 1/2), lo is the largest rank with
    P(B <= lo - 1) <= 0.025 (exact binomial, summed upwards from 8 standard
    deviations below the mean), at least 1; hi = n + 1 - lo. For n < 6 that
    is the whole sample range."""
    sd = math.sqrt(n) / 2
    k0 = math.floor(n / 2 - 8 * sd)
    start = int(k0) if k0 > 0 else 0
    lp = (math.lgamma(n + 1) - math.lgamma(start + 1) - math.lgamma(n - start + 1)
          - n * math.log(2.0))
    cdf = 0.0
    lo = 0
    k = start
    while k <= n // 2:
        term = math.exp(lp)
        if cdf + term > CI_TAIL:
            break
        cdf += term
        lo = k + 1
        lp += math.log(n - k) - math.log(k + 1)
        k += 1
    lo = max(lo, 1)
    return lo, n + 1 - lo


def noise_sorted(s, median=None):
    """Relative noise of the median of ascending s (stats_median_noise_sorted):
    half the width of its 95% interval over |median|; 0 when the interval has
    no width (n == 1, identical values), inf when the median is 0."""
    lo, hi = median_ci_ranks(len(s))
    half = (s[hi - 1] - s[lo - 1]) / 2
    m = quantile_sorted(s, 0.5) if median is None else median
    if half == 0:
        return 0.0
    if m == 0:
        return math.inf
    return half / abs(m)


def quantiles(samples, qs):
    s = sorted(float(v) for v in samples)
    return [quantile_sorted(s, float(q)) for q in qs]


def median(values):
    return quantile_sorted(sorted(float(v) for v in values), 0.5)


def summarize(samples):
    """Dict of n, median, mean, min, max, q1, q3, stdrel, noise (None for no
    samples or a non-finite one, as zlbt_summarize refuses those; noise None
    where it is infinite, as the Python side reads libzlbtimer's)."""
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
    med = quantile_sorted(s, 0.5)
    noise = noise_sorted(s, med)
    return {
        "n": n,
        "median_ms": med,
        "mean_ms": mean,
        "min_ms": s[0],
        "max_ms": s[-1],
        "q1_ms": quantile_sorted(s, 0.25),
        "q3_ms": quantile_sorted(s, 0.75),
        "stdrel": stdrel,
        "noise": noise if math.isfinite(noise) else None,
    }
