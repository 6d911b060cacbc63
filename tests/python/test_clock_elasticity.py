"""bench/clock_elasticity.py's arithmetic: the per-row elasticity fitted in
each matrix, cross-validated from the others, and what correcting by it does
to single pairs (the GPU rounds it reads come from bench/issue28_rounds.sh)."""

import importlib.util
import json
import math
import os
import sys

import pytest

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "bench"))
_spec = importlib.util.spec_from_file_location(
    "clock_elasticity", os.path.join(REPO, "bench", "clock_elasticity.py"))
ce = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ce)

CLOCKS = [[1943.0, 1948.0, 1969.0, 1956.0], [1950.0, 1969.0, 1959.0, 1946.0]]


def matrix(rows, clocks, wobble=None):
    """Rounds as round_points() gives them: each row's time t0 x
    (1980 / clock)^s, times a per-round wobble factor."""
    rounds = []
    for r, mhz in enumerate(clocks):
        d = {}
        for key, (t0_ms, s) in rows.items():
            ms = t0_ms * (1980.0 / mhz) ** s * (wobble[key][r] if wobble and key in wobble else 1)
            d[key] = (math.log(ms), math.log(mhz), ms)
        rounds.append(d)
    return rounds


GELU = ("gelu", "[2048, 2048]", "float16", "gems")
MUL = ("mul", "[8192, 8192]", "float16", "torch")
ROWS = {GELU: (0.0069, 0.8), MUL: (0.95, 0.0)}


def test_an_elasticity_the_other_matrices_predict_removes_the_clocks_spread():
    mats = [matrix(ROWS, c) for c in CLOCKS]
    rows, sds, pairs, apart_raw, apart_cor = ce.analyse(mats, 5.0, 0.5)
    got = dict(rows)
    for i, s, cv, raw, cor in got[GELU]:
        assert s == pytest.approx(0.8) and cv == pytest.approx(0.8)
        assert raw > 0.004 and cor == pytest.approx(0.0, abs=1e-12)
    for i, s, cv, raw, cor in got[MUL]:
        assert s == pytest.approx(0.0, abs=1e-12) and raw == pytest.approx(0.0, abs=1e-12)
    # 2 rows x 2 matrices x 6 pairs; gelu's pairs 13 MHz or more apart read
    # more than 0.5% apart as measured (0.8 x ln(1956/1943) = 0.53%): 4 in
    # the first matrix, 3 in the second; none once corrected.
    assert pairs == 24
    assert apart_raw == 7 and apart_cor == 0


def test_a_placement_lottery_gets_an_elasticity_held_to_the_unit_range():
    lottery = {GELU: [1.0, 1.03, 0.97, 1.0]}      # scatter that happens to track the clock
    mats = [matrix(ROWS, CLOCKS[0], lottery), matrix(ROWS, CLOCKS[1]),
            matrix(ROWS, CLOCKS[0], lottery)]
    rows, _, _, _, _ = ce.analyse(mats, 5.0, 0.5)
    for _, s, cv, _, _ in dict(rows)[GELU]:
        assert 0.0 <= cv <= 1.0
    assert any(abs(s) > 1 for _, s, _, _, _ in dict(rows)[GELU])


def test_short_rows_and_rows_of_one_matrix_are_left_out():
    mats = [matrix(ROWS, c) for c in CLOCKS]
    rows, _, _, _, _ = ce.analyse(mats, 10.0, 0.5)       # gelu's 7 us are under 10
    assert [k for k, _ in rows] == [MUL]
    del mats[1][2][MUL]                                   # one round of matrix 2 lacks it
    rows, _, _, _, _ = ce.analyse(mats, 5.0, 0.5)
    assert [k for k, _ in rows] == [GELU]                 # one matrix cannot cross-validate


def test_round_points_reads_the_rows_that_carry_an_effective_clock(tmp_path):
    recs = [
        {"kind": "row", "op": "gelu", "shape_detail": "[2048, 2048]", "dtype": "float16",
         "gems": {"median_ms": 0.0069, "effective_mhz": 1950.0},
         "torch": {"median_ms": 0.0058, "effective_mhz": None}},
        {"kind": "header"},
    ]
    (tmp_path / "op").mkdir()
    (tmp_path / "op" / "results.jsonl").write_text("\n".join(json.dumps(r) for r in recs))
    got = ce.round_points(str(tmp_path))
    assert list(got) == [GELU]
    assert got[GELU][1] == pytest.approx(math.log(1950.0))


_pspec = importlib.util.spec_from_file_location(
    "elasticity_probe", os.path.join(REPO, "bench", "elasticity_probe.py"))
probe = importlib.util.module_from_spec(_pspec)
_pspec.loader.exec_module(probe)


def test_the_probe_fits_the_slope_of_time_on_clock_and_bins_it():
    # A recovery from 1500 to 1980 MHz of a row with s = 0.7, plus a steady
    # stretch: the fit reads 0.7 back with a tiny error, the bins run from
    # the slow low clocks to the fast high ones.
    pairs = [(f, 0.3 * (1980.0 / f) ** 0.7) for f in range(1500, 1981, 4)]
    pairs += [(1980.0, 0.3)] * 50
    s, se = probe.fit(pairs)
    assert s == pytest.approx(0.7) and se < 1e-9
    b = probe.bins(pairs, k=4)
    assert len(b) == 4
    assert [f for f, _ in b] == sorted(f for f, _ in b)
    assert b[0][1] > b[-1][1] == pytest.approx(0.3)
    # No spread of clock, or too few pairs: no slope to read.
    assert math.isnan(probe.fit([(1980.0, 0.3)] * 10)[0])
    assert math.isnan(probe.fit(pairs[:2])[0])
