"""ZLB_SWEEP_ONLY=1 (a shard of zlb run --parallel-warmup-gpus): an outermost
measurement calls its function once and times nothing; the autotuner's timing
calls made inside that call are timed as in any run."""

import pytest

from zlbench import _env, _state, timing
from test_timing_direct import FakeOriginal


@pytest.fixture
def original(monkeypatch):
    orig = FakeOriginal([3.0], seq=[0.5, 0.2, 0.8])
    monkeypatch.setattr(_state, "original_do_bench", orig)
    monkeypatch.setenv("ZLB_TIMER", "direct")
    monkeypatch.setenv("ZLB_SWEEP_ONLY", "1")
    return orig


def test_a_measurement_is_one_call_and_no_timing(original):
    calls = []
    v = timing.do_bench(lambda: calls.append(1), warmup=25, rep=100, return_mode="median")
    assert v == 1.0 and calls == [1]
    assert original.calls == []              # upstream's do_bench never ran
    (p,) = _state.pending
    assert p["record"]["timer"] == "sweep" and p["record"]["samples_ms"] == []


def test_the_tuners_timing_inside_it_is_measured(original):
    seen = []

    def measured():
        # What an autotuner does on the first call: time each config.
        seen.append(timing.do_bench(lambda: None, quantiles=(0.5, 0.2, 0.8)))

    timing.do_bench(measured, return_mode="median")
    assert seen == [[0.5, 0.2, 0.8]] and len(original.calls) == 1


def test_grad_is_reset_before_the_call(original):
    class T:
        grad = object()

    t = T()
    timing.do_bench(lambda: None, grad_to_none=[t], return_mode="median")
    assert t.grad is None


def test_a_bad_value_is_refused(monkeypatch):
    monkeypatch.setenv("ZLB_SWEEP_ONLY", "yes")
    with pytest.raises(_env.EnvError, match="ZLB_SWEEP_ONLY"):
        _env.sweep_only()
    monkeypatch.setenv("ZLB_SWEEP_ONLY", "0")
    assert _env.sweep_only() is False
