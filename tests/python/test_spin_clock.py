"""The effective SM clock of a measurement (_spin): a graph of spin kernels
read just before and just after the row's sampling. Each spin kernel of the
stub costs SPIN_CYCLES / MHz of GPU time, as torch.cuda._sleep does on a GPU
clocked at MHz; the fake driver replays the graph at the sum of its nodes."""

import pytest

from zlbench import _spin, _state, timing


def spin_kernel(stub_torch, monkeypatch, mhz):
    """Give the stub's torch.cuda a _sleep that runs at mhz; returns its op."""
    ns = _spin.SPIN_CYCLES * 1000.0 / mhz
    op = stub_torch._stub.make_op("spin", cost_ns=ns)
    monkeypatch.setattr(stub_torch.cuda, "_sleep", lambda cycles: op(), raising=False)
    return op


def measure(fn):
    value = timing.do_bench(fn, warmup=1, rep=40, return_mode="median")
    return value, _state.pending[-1]["record"]


def test_each_row_reads_the_clock_its_spin_graph_runs_at(real, stub_torch, monkeypatch):
    spin = spin_kernel(stub_torch, monkeypatch, 1975.0)
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    value, rec = measure(op)
    value2, rec2 = measure(op)
    # The row's own number is untouched by the spin beside it.
    assert value == pytest.approx(0.005, rel=1e-6) and value2 == pytest.approx(0.005, rel=1e-6)
    for r in (rec, rec2):
        assert r["effective_mhz"] == pytest.approx(1975.0, rel=1e-4)
        assert r["effective_mhz_reads"] == pytest.approx([1975.0, 1975.0], rel=1e-4)
        assert r["effective_mhz_error"] is None
    # Its readings are a phase of their own, between capture and sample.
    assert list(rec2["phase_ms"])[3:6] == ["capture", "spin", "sample"]
    # One spin graph for the run, captured at the first row: SPIN_NODES calls
    # once, and no eager call of it.
    assert spin.captured_calls == _spin.SPIN_NODES
    assert spin.eager_calls == 0
    # Let go at the end of the run, the row's own graphs long before.
    assert stub_torch._stub.live_graphs == 1
    _spin.release()
    assert stub_torch._stub.live_graphs == 0


def test_a_backend_without_a_spin_kernel_says_so_and_measures_as_before(real, stub_torch,
                                                                          monkeypatch):
    monkeypatch.delattr(stub_torch.cuda, "_sleep", raising=False)
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    value, rec = measure(op)
    assert value == pytest.approx(0.005, rel=1e-6)
    assert rec["effective_mhz"] is None and rec["effective_mhz_reads"] is None
    assert "no _sleep spin kernel" in rec["effective_mhz_error"]


def test_a_spin_that_cannot_be_captured_is_said_once_and_leaves_the_row(real, stub_torch,
                                                                          monkeypatch):
    bad = stub_torch._stub.make_op("spin", capture_error="operation not permitted when "
                                   "stream is capturing")
    monkeypatch.setattr(stub_torch.cuda, "_sleep", lambda cycles: bad(), raising=False)
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    value, rec = measure(op)
    _, rec2 = measure(op)
    assert value == pytest.approx(0.005, rel=1e-6)
    assert rec["effective_mhz"] is None
    assert "not permitted" in rec["effective_mhz_error"]
    # Tried once for the run, not again for each row.
    assert bad.captured_calls == 1 and rec2["effective_mhz_error"] == rec["effective_mhz_error"]


def test_fields_are_the_geometric_mean_of_both_reads_or_none():
    f = _spin.fields([1960.0, 1975.0], None)
    assert f["effective_mhz"] == pytest.approx((1960.0 * 1975.0) ** 0.5)
    assert f["effective_mhz_reads"] == [1960.0, 1975.0] and f["effective_mhz_error"] is None
    half = _spin.fields([1960.0, None], "RuntimeError: gone")
    assert half["effective_mhz"] is None and half["effective_mhz_reads"] == [1960.0, None]
    assert half["effective_mhz_error"] == "RuntimeError: gone"
    none = _spin.fields([None, None], None)
    assert none == {"effective_mhz": None, "effective_mhz_reads": None,
                    "effective_mhz_error": "not read"}


def test_an_autotuners_config_is_timed_without_the_spin(real, stub_torch, monkeypatch):
    # The quantiles form is how plain @triton.autotune times a config: its
    # time only ranks the config, so nothing is spent on the clock.
    spin = spin_kernel(stub_torch, monkeypatch, 1975.0)
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    timing.do_bench(op, warmup=1, rep=40, quantiles=[0.5])
    rec = _state.pending[-1]["record"]
    assert rec["effective_mhz"] is None
    assert rec["effective_mhz_error"] == "an autotuner's config"
    assert spin.calls == 0
    # and the row measured after it reads the clock as ever
    _, row = measure(op)
    assert row["effective_mhz"] == pytest.approx(1975.0, rel=1e-4)


def test_a_row_pays_two_readings_of_the_spin(real, stub_torch, monkeypatch):
    # Each reading is one untimed and SPIN_SAMPLES timed replays of the
    # spin graph, before and after the sampling: nothing more per row.
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    monkeypatch.delattr(stub_torch.cuda, "_sleep", raising=False)
    measure(op)
    before = real.fake_cuda_launch_count()
    measure(op)
    without = real.fake_cuda_launch_count() - before
    _state.spin_clock = None
    spin_kernel(stub_torch, monkeypatch, 1960.0)
    measure(op)                       # the first row also captures the graph
    before = real.fake_cuda_launch_count()
    _, rec = measure(op)
    assert rec["effective_mhz"] == pytest.approx(1960.0, rel=1e-4)
    assert real.fake_cuda_launch_count() - before - without == 2 * (1 + _spin.SPIN_SAMPLES)
