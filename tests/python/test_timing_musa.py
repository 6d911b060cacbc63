"""The graph timer on MUSA (stub torch_musa, tests/stubs/torch_musa): capture
through torch.musa.MUSAGraph, replays timed between torch.musa events
(ZLB_GRAPH_REPLAY=events, _eventtimer.py), and the three kinds of capture
failure with MUSA's texts, which must mean nothing to CUDA. No libzlbtimer is
involved: the stub's events read its GPU clock, so the times are exact."""

import sys

import pytest

from conftest import events

from zlbench import _eventtimer, _state, _worker_reset, timing

MUSA_FATAL = "\n".join(["an illegal memory access was encountered",
                        "unspecified launch failure", "MUSA out of memory"])
MUSA_POISON = "MUSA error: unknown error"
ILLEGAL = "operation not permitted when stream is capturing"


@pytest.fixture
def musa(monkeypatch, run_dir, stub_torch):
    monkeypatch.setenv("ZLB_TIMER", "graph")
    monkeypatch.setenv("ZLB_BACKEND", "musa")
    monkeypatch.setenv("ZLB_TORCH_MODULE", "musa")
    monkeypatch.setenv("ZLB_GRAPH_REPLAY", "events")
    monkeypatch.setenv("ZLB_CAPTURE_FATAL", MUSA_FATAL)
    monkeypatch.setenv("ZLB_CAPTURE_POISON", MUSA_POISON)
    monkeypatch.setenv("ZLB_CAPTURE_DENY", "unique2")
    monkeypatch.setenv("ZLB_PLACEMENTS", "1")
    # No libzlbtimer: a driver-replayed graph could not be timed at all.
    monkeypatch.delenv("ZLB_TIMER_LIB", raising=False)
    import triton

    monkeypatch.setattr(_state, "original_do_bench", triton.testing.do_bench)
    monkeypatch.setattr(_state, "poisoned", None)
    return stub_torch


def measure(fn, **kw):
    kw.setdefault("return_mode", "median")
    value = timing.do_bench(fn, warmup=1, rep=kw.pop("rep", 1), **kw)
    return value, _state.pending[-1]["record"]


def test_torch_musa_is_imported_through_torch_musa(musa):
    # Real torch has no torch.musa until `import torch_musa`: the device
    # module is found through the extension.
    torch = musa
    sys.modules.pop("torch_musa", None)
    sys.modules.pop("torch.musa", None)
    if hasattr(torch, "musa"):
        delattr(torch, "musa")
    from zlbench import _device

    mod = _device.module(torch, "musa")
    assert mod is torch.musa and _device.graph_class(mod).__name__ == "MUSAGraph"


def test_graph_timed_by_musa_events(musa):
    op = musa._stub.make_op("op5000", cost_ns=5000)
    value, rec = measure(op, rep=40)
    assert rec["timer"] == "graph"
    assert value == pytest.approx(0.005, rel=1e-12)          # the stub's events are exact
    assert rec["calls_per_replay"] == 512
    assert rec["n"] >= 16 and rec["samples_ms"] == pytest.approx([0.005] * rec["n"])
    assert rec["markers"] == [] and rec["fallback"] is None
    # What the events timer cannot do, the record says.
    assert rec["l2"] == "hot" and rec["graph"] is None
    assert rec["clock_floor"] is None and rec["clock_mhz"] is None
    assert musa._stub.live_graphs == 0
    assert musa._stub.replays > 0


def test_musa_capture_refusal_falls_back(musa, run_dir):
    op = musa._stub.make_op("sortish", cost_ns=5000, capture_error=ILLEGAL)
    value, rec = measure(op)
    assert rec["timer"] == "direct" and rec["fallback"]["phase"] == "capture"
    assert events(run_dir, "CAPTURE_POISONED") == []


def test_musa_unknown_error_poisons_the_process(musa, run_dir, capsys):
    op = musa._stub.make_op("bad", cost_ns=5000, capture_error=MUSA_POISON)
    with pytest.raises(RuntimeError, match="MUSA error: unknown error"):
        timing.do_bench(op, warmup=1, rep=1, return_mode="median")
    (ev,) = events(run_dir, "CAPTURE_POISONED")
    assert ev["matched"] == MUSA_POISON and ev["phase"] == "capture"
    assert events(run_dir, "CAPTURE_FATAL") == []
    assert "CAPTURE_POISONED phase=capture" in capsys.readouterr().out
    # The rest of the process does not measure, not even a harmless op...
    good = musa._stub.make_op("good", cost_ns=5000)
    with pytest.raises(RuntimeError, match="not measured: the device context was poisoned"):
        timing.do_bench(good, warmup=1, rep=1, return_mode="median")
    assert good.calls == 0
    # ...and a warm worker hands no further job to this process.
    assert "poisoned" in _worker_reset.Reset().device_unusable()


def test_musa_poison_text_means_nothing_on_cuda(musa, run_dir, monkeypatch):
    """The same words under CUDA's texts: an ordinary refusal."""
    monkeypatch.setenv("ZLB_CAPTURE_POISON", "")
    monkeypatch.setenv("ZLB_CAPTURE_FATAL", "an illegal memory access was encountered")
    op = musa._stub.make_op("bad", cost_ns=5000, capture_error=MUSA_POISON)
    value, rec = measure(op)
    assert rec["timer"] == "direct"
    assert _state.poisoned is None
    assert events(run_dir, "CAPTURE_POISONED") == []


def test_musa_fatal_is_not_poison(musa, run_dir):
    op = musa._stub.make_op("bad", cost_ns=5000,
                            capture_error="an illegal memory access was encountered")
    with pytest.raises(RuntimeError):
        timing.do_bench(op, warmup=1, rep=1, return_mode="median")
    assert len(events(run_dir, "CAPTURE_FATAL")) == 1
    assert _state.poisoned is None


def test_denied_test_is_direct_timed(musa, run_dir, monkeypatch):
    monkeypatch.setattr(_state, "nodeid", "benchmark/test_unique.py::test_unique2[x]")
    op = musa._stub.make_op("unique", cost_ns=5000)
    value, rec = measure(op)
    assert rec["timer"] == "direct"
    assert rec["fallback"]["phase"] == "deny"
    assert "unique2" in rec["fallback"]["reason"]
    assert musa._stub.captures_begun == 0
    # Another test of the same file is captured.
    monkeypatch.setattr(_state, "nodeid", "benchmark/test_unique.py::test_unique_other")
    value, rec = measure(op)
    assert rec["timer"] == "graph"


def test_deny_key_written_as_the_file_is_said(musa, run_dir, monkeypatch):
    monkeypatch.setenv("ZLB_CAPTURE_DENY", "unique")
    timing.pytest_runtest_logstart("benchmark/test_unique.py::test_unique2", None)
    (w,) = events(run_dir, "WARNING")
    assert "'unique' names the benchmark file test_unique.py" in w["message"]
    assert "'unique2'" in w["message"]
    op = musa._stub.make_op("unique", cost_ns=5000)
    assert measure(op)[1]["timer"] == "graph"       # it denied nothing
    # Said once per key, not per test.
    timing.pytest_runtest_logstart("benchmark/test_unique.py::test_unique2", None)
    assert len(events(run_dir, "WARNING")) == 1


def test_event_timer_stopping_rule(musa):
    """The rule alone (min samples and GPU time), the noise target, the wall
    limit, each on a graph whose replays cost a known time."""
    torch = musa
    op = torch._stub.make_op("op", cost_ns=1000)
    g = torch.musa.MUSAGraph()
    with torch.musa.graph(g):
        for _ in range(4):
            op()
    t = _eventtimer.EventTimer(torch.musa)
    rc, st, samples, err = t.time_graph(g, 0, 4, 10, 1000, 0.1, 10000.0)
    # 0.1 ms of GPU time at 4 us a replay: 25 replays, in batches of 8.
    assert rc == 0 and st["stop_reason"] == "rule" and st["n"] == 32
    assert st["median_ms"] == pytest.approx(0.001)
    rc, st, samples, err = t.time_graph(g, 0, 4, 3, 1000, 0.0, 10000.0, noise_target=0.01)
    assert st["stop_reason"] == "noise" and st["noise"] == 0.0
    rc, st, samples, err = t.time_graph(g, 0, 4, 5, 7, 0.0, 10000.0)
    assert st["stop_reason"] == "rule" and st["n"] == 7     # one batch, capped
    rc, st, samples, err = t.time_graph(g, 0, 4, 2000, 5000, 0.0, 0.0)
    assert rc == _eventtimer.ZLBT_ETIMEOUT and 0 < st["n"] < 2000
    assert "wall limit" in err
    g.reset()
