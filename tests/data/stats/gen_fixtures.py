#!/usr/bin/python3
"""Reference values for zlb's statistics (tests/unit/test_stats_*.c).

Run once with Debian's python3-scipy (not needed to build or test zlb):

    /usr/bin/python3 tests/data/stats/gen_fixtures.py > tests/data/stats/fixtures.json

Every value here comes from scipy / numpy, never from zlb's C code, so the C
tests check zlb against an independent implementation. The inputs are drawn
from numpy's legacy RandomState with fixed seeds, so re-running the script
with the same scipy/numpy reproduces the file byte for byte. The versions
used are recorded in the file.
"""
import itertools
import json
import sys

import numpy as np
import scipy
from scipy import special, stats


def fl(x):
    return [float(v) for v in x]


def mwu_cases(rs):
    cases = []
    shapes = [(5, 7), (12, 9), (30, 30), (40, 25), (200, 180), (3, 1), (1, 1)]
    for i, (nx, ny) in enumerate(shapes):
        x = rs.lognormal(0.0, 0.05, nx) * 4.0
        y = rs.lognormal(0.02 * (i % 3), 0.05, ny) * 4.0
        if i % 2 == 0:
            # timings are quantised: round so that ties occur within and across
            x = np.round(x, 2)
            y = np.round(y, 2)
        cases.append((x, y))
    # heavy ties: few distinct values
    cases.append((np.array([1.0, 1.0, 2.0, 2.0, 2.0, 3.0]), np.array([2.0, 2.0, 3.0, 3.0, 4.0])))
    # a clear shift, larger samples (small p-value)
    cases.append((rs.normal(10, 0.1, 150), rs.normal(10.1, 0.1, 150)))
    out = []
    for x, y in cases:
        r = stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic")
        out.append({"x": fl(x), "y": fl(y), "u1": float(r.statistic), "p": float(r.pvalue)})
    return out


def welch_cases(rs):
    out = []
    for nx, ny, sx, sy, shift in [(3, 3, 0.003, 0.002, 0.0), (3, 3, 0.003, 0.003, 0.02),
                                  (2, 4, 0.001, 0.004, 0.01), (5, 3, 0.01, 0.001, -0.005),
                                  (10, 12, 1.0, 2.0, 0.7), (30, 25, 0.5, 0.5, 0.4),
                                  (4, 4, 0.002, 0.002, 0.03)]:
        x = rs.normal(0.0, sx, nx)
        y = rs.normal(shift, sy, ny)
        r = stats.ttest_ind(x, y, equal_var=False)
        vx, vy = x.var(ddof=1) / nx, y.var(ddof=1) / ny
        df = (vx + vy) ** 2 / (vx ** 2 / (nx - 1) + vy ** 2 / (ny - 1))
        # the 95% interval of mean(x) - mean(y), from scipy's t quantile
        half = float(stats.t.ppf(0.975, df)) * float(np.sqrt(vx + vy))
        diff = float(x.mean() - y.mean())
        out.append({"x": fl(x), "y": fl(y), "t": float(r.statistic), "p": float(r.pvalue),
                    "df": float(df), "ci95": [diff - half, diff + half]})
    return out


def bh_ref(p):
    """Benjamini-Hochberg adjusted p-values, written out from the definition."""
    p = np.asarray(p, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="mergesort")
    ranked = p[order] * m / np.arange(1, m + 1)
    q = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(q, 1.0)
    return out


def boot_median_exact(x):
    """Law of ln(median of a resample) by enumerating all n^n resamples."""
    x = np.sort(np.asarray(x, dtype=float))
    n = len(x)
    idx = np.array(list(itertools.product(range(n), repeat=n)))
    med = np.median(x[idx], axis=1)
    v = np.log(med)
    return float(v.mean()), float(v.var())


def main():
    rs = np.random.RandomState(20261129)
    fx = {
        "generated_by": "tests/data/stats/gen_fixtures.py",
        "scipy_version": scipy.__version__,
        "numpy_version": np.__version__,
        "python": sys.version.split()[0],
    }
    ps = [1e-300, 1e-20, 1e-10, 1e-6, 0.001, 0.0025, 0.025, 0.05, 0.1, 0.3, 0.5, 0.7, 0.975,
          0.999, 1 - 1e-9]
    fx["norm_ppf"] = [[p, float(stats.norm.ppf(p))] for p in ps]
    fx["norm_sf"] = [[z, float(stats.norm.sf(z))] for z in [-5, -1.5, 0, 0.3, 1.96, 4, 8, 12, 30]]
    tdf = [(0.0, 3), (0.5, 1), (1.2, 2), (2.776, 4), (-2.0, 4.3), (3.5, 2.17), (5.0, 7.9),
           (10.0, 4), (40.0, 3.3), (1e-4, 10), (2.0, 30), (2.5, 150.5), (3.0, 1e6), (60.0, 60),
           (0.3, 0.7)]
    fx["t_sf"] = [[t, df, float(stats.t.sf(t, df))] for t, df in tdf]
    pdf = [(0.975, 1), (0.975, 2), (0.975, 4), (0.975, 3.37), (0.9875, 4), (0.999, 2.5),
           (0.025, 4), (0.5, 3), (0.6, 9.2), (0.975, 100), (0.975, 1e5), (1e-8, 5), (0.9999, 1.5)]
    fx["t_ppf"] = [[p, df, float(stats.t.ppf(p, df))] for p, df in pdf]
    bx = [(0.5, 1, 1), (0.1, 2, 3), (0.9, 2, 3), (0.3, 0.5, 0.5), (0.99, 50, 0.5),
          (0.01, 0.5, 50), (0.5, 200, 201), (0.52, 500, 501), (0.45, 500, 501), (0.2, 10, 2),
          (0.999, 3, 700), (1e-5, 2, 2)]
    fx["betainc"] = [[x, a, b, float(special.betainc(a, b, x))] for x, a, b in bx]
    bn = [(1, 1, 0.5), (3, 5, 0.2), (3, 5, 0.6), (50, 99, 0.5), (50, 99, 47 / 99),
          (200, 400, 0.45), (201, 400, 0.55), (20, 40, 0.1), (2, 2, 1.0), (1, 10, 0.0)]
    fx["binom_sf_ge"] = [[k, n, p, float(stats.binom.sf(k - 1, n, p))] for k, n, p in bn]
    fx["mwu"] = mwu_cases(rs)
    fx["welch"] = welch_cases(rs)
    qs = [0.0, 0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975, 1.0]
    fx["quantile"] = []
    for n in [1, 2, 5, 10, 37, 400]:
        x = rs.lognormal(0, 0.2, n)
        fx["quantile"].append({"x": fl(x), "q": qs, "v": fl(np.quantile(x, qs)),
                               "median": float(np.median(x))})
    fx["bh"] = []
    for p in [[0.01, 0.04, 0.03, 0.005, 0.5],
              [0.001, 0.001, 0.2, 0.04, 0.04, 0.9, 1.0],
              list(rs.uniform(0, 1, 20)),
              list(np.concatenate([rs.uniform(0, 0.002, 5), rs.uniform(0, 1, 15)]))]:
        fx["bh"].append({"p": fl(p), "q": fl(bh_ref(p))})
    fx["boot_median"] = []
    for n in [1, 2, 3, 4, 5, 6, 7]:
        x = rs.lognormal(0, 0.1, n)
        mean, var = boot_median_exact(x)
        fx["boot_median"].append({"x": fl(x), "mean": mean, "var": var})
    json.dump(fx, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
