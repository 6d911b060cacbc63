"""ZLB_TIMER=direct: the median of ZLB_DIRECT_REPEAT calls of the original do_bench."""

import pytest

from zlbench import _env, _state, timing


class FakeOriginal:
    """An "original" do_bench returning a fixed cycle of values; records calls."""

    def __init__(self, values, seq=None):
        self.values = values
        self.seq = seq
        self.calls = []

    def __call__(self, fn, **kwargs):
        self.calls.append(kwargs)
        if kwargs.get("quantiles") is not None or kwargs.get("return_mode") == "all":
            return self.seq
        return self.values[(len(self.calls) - 1) % len(self.values)]


@pytest.fixture
def original(monkeypatch):
    orig = FakeOriginal([3.0, 1.0, 2.0, 9.0, 5.0], seq=[0.5, 0.2, 0.8])
    monkeypatch.setattr(_state, "original_do_bench", orig)
    monkeypatch.setenv("ZLB_TIMER", "direct")
    return orig


def test_median_over_repeated_calls(original, monkeypatch):
    monkeypatch.setenv("ZLB_DIRECT_REPEAT", "5")
    assert timing.do_bench(lambda: None, warmup=7, rep=11, return_mode="median") == 3.0
    assert len(original.calls) == 5
    (p,) = _state.pending
    rec = p["record"]
    assert p["value"] == 3.0
    assert rec["timer"] == "direct" and rec["n"] == 5
    assert rec["samples_ms"] == [3.0, 1.0, 2.0, 9.0, 5.0]
    assert rec["median_ms"] == 3.0 and rec["min_ms"] == 1.0 and rec["max_ms"] == 9.0
    assert rec["mean_ms"] == pytest.approx(4.0)
    assert rec["q1_ms"] == 2.0 and rec["q3_ms"] == 5.0
    assert rec["calls_per_replay"] is None and rec["markers"] == []
    assert rec["fallback"] is None


def test_even_repeat_interpolates_like_the_c_side(original, monkeypatch):
    monkeypatch.setenv("ZLB_DIRECT_REPEAT", "4")
    assert timing.do_bench(lambda: None, return_mode="median") == 2.5   # 1 2 | 3 9


def test_default_is_one_call_returning_upstreams_value_as_is(original):
    v = timing.do_bench(lambda: None, warmup=25, rep=100, return_mode="median")
    assert v == 3.0 and len(original.calls) == 1


def test_arguments_reach_the_original_unchanged(original, monkeypatch):
    monkeypatch.setenv("ZLB_DIRECT_REPEAT", "2")
    g = [object()]
    timing.do_bench(lambda: None, warmup=13, rep=17, grad_to_none=g,
                    return_mode="median")
    for kw in original.calls:
        assert kw == {"warmup": 13, "rep": 17, "grad_to_none": g, "quantiles": None,
                      "return_mode": "median"}


def test_quantiles_and_all_are_not_repeated(original, monkeypatch):
    monkeypatch.setenv("ZLB_DIRECT_REPEAT", "5")
    assert timing.do_bench(lambda: None, quantiles=(0.5, 0.2, 0.8)) == [0.5, 0.2, 0.8]
    assert len(original.calls) == 1
    assert original.calls[0]["quantiles"] == (0.5, 0.2, 0.8)
    assert timing.do_bench(lambda: None, return_mode="all") == [0.5, 0.2, 0.8]
    assert len(original.calls) == 2
    assert [p["record"]["n"] for p in _state.pending] == [1, 1]


def test_garbage_repeat_is_refused_not_guessed(original, monkeypatch):
    monkeypatch.setenv("ZLB_DIRECT_REPEAT", "abc")
    with pytest.raises(_env.EnvError, match="not an integer"):
        timing.do_bench(lambda: None, return_mode="median")
    assert original.calls == []


def test_unknown_return_mode_is_an_error(original):
    with pytest.raises(ValueError, match="return_mode"):
        timing.do_bench(lambda: None, return_mode="p99")


def test_nested_calls_are_tune_and_not_recorded(original, monkeypatch):
    inner = []

    def fn():
        # Autotuning inside the measured call, as Triton's autotuner does.
        inner.append(timing.do_bench(lambda: None, quantiles=(0.5, 0.2, 0.8)))

    def outer_original(f, **kwargs):
        f()
        return 4.25

    monkeypatch.setattr(_state, "original_do_bench", outer_original)
    assert timing.do_bench(fn, return_mode="median") == 4.25
    assert len(_state.pending) == 1 and _state.pending[0]["value"] == 4.25
    assert _state.depth == 0
    assert inner and inner[0] is not None


def test_stub_triton_original_follows_the_cost_model(stub_torch):
    """The real stub do_bench: eager cost + 0.05 ms, one call per repeat."""
    import triton

    timing.install()
    try:
        assert triton.testing.do_bench is timing.do_bench
        op = stub_torch._stub.make_op("op5000", cost_ns=5000)
        before = triton.testing.calls
        v = triton.testing.do_bench(op, warmup=1, rep=1, return_mode="median")
        assert v == pytest.approx(0.005 + 0.05, rel=1e-12)
        assert triton.testing.calls == before + 1
        with stub_torch._stub.gems():
            v = triton.testing.do_bench(op, return_mode="median")
        assert v == pytest.approx(0.004 + 0.05, rel=1e-12)
    finally:
        timing.uninstall()
    assert triton.testing.do_bench is _state.original_do_bench


class Cycle:
    """Garbage only the collector frees: it refers to itself."""

    def __init__(self, freed):
        self.me = self
        self.freed = freed

    def __del__(self):
        self.freed.append(True)


def test_collection_freezes_the_imports_and_unconfigure_thaws_them(original):
    # What lived at the end of collection is frozen for the session, so
    # FlagGems' gc.collect() after each shape does not walk it; garbage made
    # later is still collected, and unconfigure gives the frozen objects back
    # to the collector (a warm worker's reset collects an operator's leftovers).
    import gc
    assert gc.get_freeze_count() == 0
    freed_early, freed_late = [], []
    early = Cycle(freed_early)
    timing.pytest_collection_finish(None)
    try:
        assert gc.get_freeze_count() > 0
        late = Cycle(freed_late)
        del early, late
        gc.collect()
        assert freed_late and not freed_early
    finally:
        timing.pytest_unconfigure(None)
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert freed_early


def test_nothing_is_frozen_when_the_plugin_is_not_in_place(monkeypatch):
    import gc
    monkeypatch.setattr(_state, "original_do_bench", None)
    timing.pytest_collection_finish(None)
    assert gc.get_freeze_count() == 0
