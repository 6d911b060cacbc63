"""The row's clock elasticity (_elasticity): the fit near the steady clock,
and the phase that reads it only when zlb asks (ZLB_CLOCK_ELASTICITY)."""

import math
import random

import pytest

from zlbench import _elasticity, _state, timing


def pairs_on(s, mhz, noise=0.001, seed=1):
    """[(MHz, ms)] of a kernel whose time goes as clock^-s."""
    rng = random.Random(seed)
    return [(f, 0.005 * (1900.0 / f) ** s * math.exp(rng.gauss(0, noise))) for f in mhz]


def test_the_fit_reads_back_a_known_elasticity():
    rng = random.Random(3)
    for s in (0.0, 0.45, 0.9):
        got, se, n = _elasticity.fit(pairs_on(s, [1850 + 80 * rng.random() for _ in range(150)]))
        assert n == 150
        assert got == pytest.approx(s, abs=4 * se + 1e-9) and se < 0.03


def test_a_replay_something_else_delayed_does_not_move_the_fit():
    p = pairs_on(0.8, [1850 + i for i in range(80)])
    clean, _, _ = _elasticity.fit(p)
    p[10] = (p[10][0], p[10][1] * 1.2)      # one replay 20% late
    got, _, n = _elasticity.fit(p)
    assert n == 79 and got == pytest.approx(clean, abs=0.02)


def test_no_spread_of_clock_or_too_few_pairs_read_no_elasticity():
    assert _elasticity.fit(pairs_on(0.8, [1900.0] * 60))[0] is None
    s, se, n = _elasticity.fit(pairs_on(0.8, [1850 + i for i in range(_elasticity.MIN_PAIRS - 1)]))
    assert s is None and se is None and n == _elasticity.MIN_PAIRS - 1
    assert _elasticity.fit([(0, 1.0), (float("nan"), 1.0), (1900, -1)])[0] is None


def test_the_window_keeps_the_pairs_near_the_steady_clock():
    # A row 0.5-elastic near the top and 1-elastic deep in the climb (time =
    # memory + cycles / clock bends): the window reads the top's.
    top = pairs_on(0.5, [1840 + i for i in range(0, 90, 2)])
    deep = [(f, top[0][1] * (1840.0 / f)) for f in range(1500, 1800, 10)]
    kept = _elasticity.window(top + deep, 1925.0)
    assert kept == [p for p in top if p[0] >= 0.96 * 1925.0]
    assert _elasticity.fit(kept)[0] == pytest.approx(0.5, abs=0.1)
    assert _elasticity.fit(top + deep)[0] > 0.7


def test_fields_of_a_record():
    f = _elasticity.fields(0.812345, 0.012345, 77, [1850.0, 1925.0])
    assert f == {"clock_elasticity": 0.8123, "clock_elasticity_se": 0.0123,
                 "clock_elasticity_pairs": 77, "clock_elasticity_mhz": [1850.0, 1925.0],
                 "clock_elasticity_why": None}
    assert set(f) == set(_elasticity.KEYS)
    assert _elasticity.fields(why="x")["clock_elasticity_pairs"] == 0


def measure(fn):
    timing.do_bench(fn, warmup=1, rep=40, return_mode="median")
    return _state.pending[-1]["record"]


def test_the_phase_runs_only_when_zlb_asks(real, stub_torch, monkeypatch):
    from test_spin_clock import spin_kernel

    spin_kernel(stub_torch, monkeypatch, 1975.0)
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    monkeypatch.setenv("ZLB_CLOCK_ELASTICITY", "0")
    rec = measure(op)
    assert "elasticity" not in rec["phase_ms"]
    assert {k: rec[k] for k in _elasticity.KEYS} == dict.fromkeys(_elasticity.KEYS)
    monkeypatch.setenv("ZLB_CLOCK_ELASTICITY", "1")
    rec = measure(op)
    # It runs after the row's number, which it leaves alone; the stub's
    # spin kernels take no GPU time, so it says why it read no s.
    assert list(rec["phase_ms"])[-2:] == ["elasticity", "release"]
    assert rec["clock_elasticity"] is None and rec["clock_elasticity_why"]
    _elasticity.release()
