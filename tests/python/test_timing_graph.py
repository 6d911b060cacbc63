"""ZLB_TIMER=graph end to end: stub torch captures, the REAL libzlbtimer replays
through the fake CUDA driver, whose clock advances by the graph handle's value
(nanoseconds per replay, the stub's cost model). Skipped without the two
libraries ($ZLB_TIMER_LIB, $ZLB_FAKECUDA)."""

import ctypes
import math
import os
import subprocess
import textwrap

import pytest

from conftest import ENGINE_ENV, FAKECUDA, FATAL_TEXTS, PYDIR, PYTHON, STUBS, TIMER_LIB, events, \
    need_timer

from zlbench import _graph, _stats, _state, timing

ILLEGAL = "operation not permitted when stream is capturing"


@pytest.fixture
def graph(monkeypatch, run_dir, stub_torch):
    need_timer()
    # libzlbtimer reads ZLB_LIBCUDA when it first loads the driver.
    monkeypatch.setenv("ZLB_LIBCUDA", FAKECUDA)
    monkeypatch.setenv("ZLB_TIMER", "graph")
    monkeypatch.setenv("ZLB_TIMER_LIB", TIMER_LIB)
    monkeypatch.setenv("ZLB_CAPTURE_FATAL", FATAL_TEXTS)
    # One placement: these tests count captured calls and replays of one
    # graph; test_placements_* below cover several.
    monkeypatch.setenv("ZLB_PLACEMENTS", "1")
    fake = ctypes.CDLL(FAKECUDA)
    fake.fake_cuda_reset()
    fake.fake_cuda_launch_count.restype = ctypes.c_ulonglong
    import triton

    monkeypatch.setattr(_state, "original_do_bench", triton.testing.do_bench)
    return fake


def measure(fn, warmup=1, rep=1, **kw):
    kw.setdefault("return_mode", "median")
    value = timing.do_bench(fn, warmup=warmup, rep=rep, **kw)
    return value, _state.pending[-1]["record"]


def test_exact_latency_from_the_cost_model(graph, stub_torch):
    op = stub_torch._stub.make_op("op5000", cost_ns=5000)
    launches = graph.fake_cuda_launch_count()
    value, rec = measure(op, rep=40)
    # 512 calls of 5000 ns = 2.56 ms per replay, through the driver's float32
    # elapsed time (as cuEventElapsedTime's): exact to ~1e-7.
    assert value == pytest.approx(0.005, rel=1e-6)
    assert rec["timer"] == "graph"
    assert rec["calls_per_replay"] == 512     # 2 ms / 5 us = 400, rounded up to 2**9
    assert rec["n"] == 16                     # 40 ms of GPU time at 2.56 ms per replay
    assert rec["samples_ms"] == pytest.approx([0.005] * 16, rel=1e-6)
    assert rec["median_ms"] == rec["min_ms"] == rec["max_ms"] == value
    assert rec["mean_ms"] == pytest.approx(value, rel=1e-14)  # 16 identical samples
    assert rec["stdrel"] < 1e-12
    assert rec["markers"] == [] and rec["fallback"] is None
    # Two estimates (graphs of 1 and 8 calls) and the K check of 5 replays,
    # then 16 samples, each after one warm-up replay.
    assert graph.fake_cuda_launch_count() - launches == 3 * (1 + 5) + (1 + 16)
    assert stub_torch._stub.live_graphs == 0          # both graphs released


@pytest.mark.parametrize("cost_ns,k", [
    # 2 ms / cost, rounded up to a power of two, at most 4096
    (5000, 512), (2500, 1024), (1049576, 2), (839660, 4), (400000, 8), (300, 4096),
    (2000000, 1), (3000000, 1),
    # the edges: exactly 2 calls stays 2; 511.9 makes 512, 512.03 makes 1024
    (1000000, 2), (3907, 512), (3906, 1024),
])
def test_calls_per_replay(graph, stub_torch, cost_ns, k):
    op = stub_torch._stub.make_op("op", cost_ns=cost_ns)
    value, rec = measure(op)
    assert rec["calls_per_replay"] == k
    assert value == pytest.approx(cost_ns / 1e6, rel=1e-6)
    # Graphs of 1 and 8 calls to estimate, then K captured calls.
    assert op.captured_calls == 1 + 8 + k


def test_gems_mode_costs_four_fifths(graph, stub_torch):
    op = stub_torch._stub.make_op("op5000", cost_ns=5000)
    with stub_torch._stub.gems():
        value, rec = measure(op)
    assert value == pytest.approx(0.004, rel=1e-6) and rec["calls_per_replay"] == 512


def test_warmup_budget_is_clamped(graph, stub_torch, monkeypatch):
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    monkeypatch.setenv("ZLB_WARMUP_MAX_CALLS", "7")
    _, rec = measure(op, warmup=1000)         # far more than 7 calls' worth
    assert rec["warmup_calls"] == 7
    assert op.eager_calls == 1 + 3 + 7
    op2 = stub_torch._stub.make_op("op", cost_ns=5000)
    _, rec = measure(op2, warmup=0)           # no budget: at least 5
    assert rec["warmup_calls"] == 5 and op2.eager_calls == 1 + 3 + 5


def test_capture_illegal_op_falls_back_to_direct(graph, stub_torch, monkeypatch, capsys,
                                                  run_dir):
    import triton

    monkeypatch.setenv("ZLB_DIRECT_REPEAT", "3")
    op = stub_torch._stub.make_op("sortish", cost_ns=5000, capture_error=ILLEGAL)
    calls = triton.testing.calls
    value, rec = measure(op)
    assert value == pytest.approx(0.005 + 0.05, rel=1e-12)   # the stub's eager timer
    assert triton.testing.calls - calls == 3
    assert rec["timer"] == "direct" and rec["n"] == 3
    assert rec["markers"] == ["BENCHMARK_DIRECT_NO_CUDAGRAPH"]
    assert rec["fallback"] == {"phase": "capture",
                               "reason": "CUDA error: " + ILLEGAL}
    out = capsys.readouterr().out
    assert out == ("BENCHMARK_DIRECT_NO_CUDAGRAPH phase=capture reason=CUDA error: "
                   "%s repeat=3\n" % ILLEGAL)
    (ev,) = events(run_dir, "BENCHMARK_DIRECT_NO_CUDAGRAPH")
    assert ev["phase"] == "capture" and ev["repeat"] == 3
    assert ev["reason"] == "CUDA error: " + ILLEGAL
    assert stub_torch._stub.live_graphs == 0


def test_aborted_capture_leaves_the_cuda_rng_usable(graph, stub_torch):
    torch = stub_torch
    gen = torch.cuda.default_generators[0]
    before = gen.graphsafe_get_state()
    op = torch._stub.make_op("sortish", cost_ns=5000, capture_error=ILLEGAL)
    measure(op)                               # capture aborted, fell back
    assert gen.graphsafe_get_state() is before
    assert before.capturing is False
    t = torch.randn(8, device="cuda")         # would raise if poisoned
    assert t.shape == (8,)
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)


def test_without_the_throwaway_state_the_stub_rng_is_poisoned(graph, stub_torch):
    """The control: the same aborted capture, done directly, poisons the real
    generator state -- so the test above can fail."""
    torch = stub_torch
    op = torch._stub.make_op("sortish", cost_ns=5000, capture_error=ILLEGAL)
    g = torch.cuda.CUDAGraph(keep_graph=True)
    with pytest.raises(RuntimeError):
        with torch.cuda.graph(g, stream=torch.cuda.Stream()):
            op()
    with pytest.raises(RuntimeError, match="Offset increment outside graph capture"):
        torch.randn(8, device="cuda")
    with pytest.raises(RuntimeError, match="Offset increment outside graph capture"):
        torch.manual_seed(0)


def test_fatal_text_is_reraised(graph, stub_torch, capsys, run_dir):
    op = stub_torch._stub.make_op("bad", cost_ns=5000,
                                  capture_error="an illegal memory access was encountered")
    with pytest.raises(RuntimeError, match="an illegal memory access was encountered"):
        timing.do_bench(op, warmup=1, rep=1, return_mode="median")
    assert _state.pending == []
    (ev,) = events(run_dir, "CAPTURE_FATAL")
    assert ev["phase"] == "capture"
    assert ev["matched"] == "an illegal memory access was encountered"
    assert ev["reason"] == "CUDA error: an illegal memory access was encountered"
    assert events(run_dir, "BENCHMARK_DIRECT_NO_CUDAGRAPH") == []
    assert capsys.readouterr().out == ("CAPTURE_FATAL phase=capture reason=CUDA error: "
                                       "an illegal memory access was encountered\n")


def test_torch_dsa_footer_is_not_fatal(graph, stub_torch, run_dir):
    # torch appends "... to enable device-side assertions." to every CUDA error;
    # the fatal text "device-side assert triggered" must not match it.
    text = "Cannot call CUDAGeneratorImpl::current_seed during CUDA graph capture."
    op = stub_torch._stub.make_op("rng", cost_ns=5000, capture_error=text)
    value, rec = measure(op)
    assert rec["timer"] == "direct" and value == pytest.approx(0.055)
    assert events(run_dir, "CAPTURE_FATAL") == []
    (ev,) = events(run_dir, "BENCHMARK_DIRECT_NO_CUDAGRAPH")
    assert ev["reason"] == "CUDA error: " + text


def test_a_loose_fatal_text_would_kill_the_fallback(graph, stub_torch, monkeypatch):
    """The control for the test above: a loose text matches the footer."""
    monkeypatch.setenv("ZLB_CAPTURE_FATAL", "device-side assert")
    op = stub_torch._stub.make_op("rng", cost_ns=5000, capture_error="anything at all")
    with pytest.raises(RuntimeError):
        timing.do_bench(op, warmup=1, rep=1, return_mode="median")


def test_quantiles_call_form_returns_quantiles_of_the_samples(graph, stub_torch,
                                                              monkeypatch):
    monkeypatch.setenv("FAKE_CUDA_NOISE_PPM", "20000")
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    q = timing.do_bench(op, quantiles=(0.5, 0.2, 0.8))
    rec = _state.pending[-1]["record"]
    assert isinstance(q, list) and len(q) == 3
    s = sorted(rec["samples_ms"])
    assert len(set(s)) > 1                      # the noise made them differ

    def linear(p):                              # numpy's default method, by hand
        h = (len(s) - 1) * p
        lo = math.floor(h)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (h - lo) * (s[hi] - s[lo])

    for got, p in zip(q, (0.5, 0.2, 0.8)):
        assert got == pytest.approx(linear(p), rel=1e-12)
    assert q[1] <= q[0] <= q[2]
    assert q[0] == pytest.approx(rec["median_ms"], rel=1e-12)
    one = timing.do_bench(op, quantiles=[0.5])
    assert isinstance(one, float)


def test_return_modes(graph, stub_torch, monkeypatch):
    monkeypatch.setenv("FAKE_CUDA_NOISE_PPM", "20000")
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    samples = timing.do_bench(op, rep=1, return_mode="all")
    rec = _state.pending[-1]["record"]
    assert samples == rec["samples_ms"] and len(samples) == rec["n"]
    for mode in ("min", "max", "mean", "median"):
        v = timing.do_bench(op, rep=1, return_mode=mode)
        assert v == _state.pending[-1]["record"][mode + "_ms"]


def test_warmup_failure_is_phase_warmup(graph, stub_torch, capsys):
    # The eager call succeeds; the second eager call (the first of the
    # warm-up) fails; direct timing afterwards works.
    op = stub_torch._stub.make_op("flaky", cost_ns=5000, eager_error="flaky op",
                                  eager_error_on={2})
    value, rec = measure(op)
    assert rec["fallback"] == {"phase": "warmup", "reason": "flaky op"}
    assert value == pytest.approx(0.055)
    assert "phase=warmup reason=flaky op repeat=1" in capsys.readouterr().out


def test_first_eager_failure_is_the_ops_own(graph, stub_torch, run_dir):
    op = stub_torch._stub.make_op("broken", eager_error="no kernel", eager_error_after=0)
    with pytest.raises(RuntimeError, match="no kernel"):
        timing.do_bench(op, warmup=1, rep=1, return_mode="median")
    assert events(run_dir, "BENCHMARK_DIRECT_NO_CUDAGRAPH") == []
    assert events(run_dir, "CAPTURE_FATAL") == []


def test_replay_failure_fatal_or_fallback(graph, stub_torch, monkeypatch, run_dir):
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    monkeypatch.setenv("FAKE_CUDA_LAUNCH_FAIL_AFTER", "0")
    graph.fake_cuda_reset()
    with pytest.raises(RuntimeError, match="unspecified launch failure"):
        timing.do_bench(op, warmup=1, rep=1, return_mode="median")
    (ev,) = events(run_dir, "CAPTURE_FATAL")
    assert ev["phase"] == "replay" and "cuGraphLaunch" in ev["reason"]
    monkeypatch.setenv("ZLB_CAPTURE_FATAL", "an illegal memory access was encountered")
    value, rec = measure(op)
    assert rec["fallback"]["phase"] == "replay"
    assert "cuGraphLaunch" in rec["fallback"]["reason"]
    assert value == pytest.approx(0.055)
    assert stub_torch._stub.live_graphs == 0


def test_autotuning_inside_the_first_call_is_tune(graph, stub_torch, capsys, run_dir):
    import triton

    kernel = stub_torch._stub.make_op("kernel", cost_ns=2500)
    illegal = stub_torch._stub.make_op("illegal", cost_ns=2500, capture_error=ILLEGAL)
    tuned = []

    def autotune(*args):
        if not tuned:
            bench = triton.runtime.driver.active.get_benchmarker()
            tuned.append(bench(kernel, quantiles=(0.5, 0.2, 0.8)))
            tuned.append(bench(illegal, quantiles=(0.5, 0.2, 0.8)))

    op = stub_torch._stub.make_op("op", cost_ns=5000, body=autotune)
    timing.install()
    try:
        value, rec = measure(op)
    finally:
        timing.uninstall()
    assert value == pytest.approx(0.005, rel=1e-6) and len(_state.pending) == 1
    assert tuned[0] == pytest.approx([0.0025] * 3, rel=1e-6)  # graph-timed
    assert tuned[1] == [pytest.approx(0.0025 + 0.05)] * 3  # fell back, not repeated
    (ev,) = events(run_dir, "BENCHMARK_DIRECT_NO_CUDAGRAPH")
    assert ev["role"] == "tune" and ev["repeat"] == 1
    assert capsys.readouterr().out == ""                    # no marker for tuning


def test_do_bench_inside_our_capture_is_refused(graph, stub_torch):
    def body(*args):
        timing.do_bench(lambda: None, quantiles=(0.5,))

    op = stub_torch._stub.make_op("op", cost_ns=5000, body=body)
    import triton

    _state.original_do_bench = triton.testing.do_bench
    value, rec = measure(op)
    assert rec["fallback"]["phase"] == "capture"
    assert "do_bench called during a CUDA graph capture" in rec["fallback"]["reason"]


def test_grad_to_none_is_cleared_before_every_call(graph, stub_torch):
    torch = stub_torch
    x = torch.randn(4, 4, device="cuda").requires_grad_()
    seen = []

    def body(*args):
        seen.append(x.grad)
        x.grad = "stale"

    op = torch._stub.make_op("bwd", cost_ns=5000, body=body)
    measure(op, grad_to_none=[x])
    assert seen and all(g is None for g in seen)


def test_missing_library_or_device_falls_back(graph, stub_torch, monkeypatch, run_dir):
    monkeypatch.setenv("ZLB_TIMER_LIB", "/nonexistent/libzlbtimer.so")
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    value, rec = measure(op)
    assert rec["timer"] == "direct" and rec["fallback"]["phase"] == "replay"
    assert "cannot be loaded" in rec["fallback"]["reason"]
    monkeypatch.setenv("ZLB_TIMER_LIB", TIMER_LIB)
    monkeypatch.setenv("STUB_TORCH_CUDA", "0")
    value, rec = measure(op)
    assert "torch.cuda.is_available() is False" in rec["fallback"]["reason"]


def test_no_device_every_row_falls_back(tmp_path):
    need_timer()
    script = textwrap.dedent("""
        import os, sys
        import torch
        from zlbench import timing, _state
        import triton
        _state.original_do_bench = triton.testing.do_bench
        op = torch._stub.make_op("op", cost_ns=5000)
        for _ in range(2):
            v = timing.do_bench(op, warmup=1, rep=1, return_mode="median")
        print("VALUE", v)
        print("REASON", _state.pending[-1]["record"]["fallback"]["reason"])
    """)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": PYDIR + os.pathsep + STUBS,
           "ZLB_RUN_DIR": str(tmp_path), "ZLB_TIMER": "graph", "ZLB_TIMER_LIB": TIMER_LIB,
           "ZLB_LIBCUDA": FAKECUDA, "FAKE_CUDA_DEVICES": "0", **ENGINE_ENV}
    r = subprocess.run([PYTHON, "-c", script], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "VALUE 0.055" in r.stdout
    assert r.stdout.count("BENCHMARK_DIRECT_NO_CUDAGRAPH phase=replay reason=libzlbtimer: "
                          "no device") == 2
    evs = events(tmp_path, "PLUGIN")
    assert len(evs) == 1 and "no device" in evs[0]["detail"]


def test_libzlbtimer_summarize_agrees_with_python(graph):
    lib, why = _graph.timer_lib(TIMER_LIB)
    assert lib is not None, why
    for samples in ([1.0], [3.0, 1.0, 2.0, 9.0, 5.0], [0.1, 0.2, 0.3, 0.4],
                    [0.005] * 7, [1e-3 * i ** 1.5 for i in range(1, 40)]):
        assert lib.summarize(samples) == _stats.summarize(samples)


def test_rng_swap_initialises_cuda_first():
    """torch.cuda.default_generators is () until CUDA's lazy init (as on the
    H200 with torch 2.11): the swap must not silently find no generator."""
    script = textwrap.dedent("""
        import torch
        from zlbench import _graph
        assert torch.cuda.default_generators == ()
        restore, how = _graph.rng_swap(torch)
        gen = torch.cuda.default_generators[0]
        swapped = gen.graphsafe_get_state()
        restore()
        print(how, swapped is not gen.graphsafe_get_state())
    """)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": PYDIR + os.pathsep + STUBS}
    r = subprocess.run([PYTHON, "-c", script], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["graphsafe", "True"]


def test_phase_ms_says_where_a_measurements_wall_time_went(graph, stub_torch):
    import time

    slow_first = []

    def compile_once(*args):
        if not slow_first:
            slow_first.append(1)
            time.sleep(0.2)          # a first call that compiles

    op = stub_torch._stub.make_op("op", cost_ns=5000, body=compile_once)
    t0 = time.perf_counter()
    _, rec = measure(op, rep=40)
    wall_ms = (time.perf_counter() - t0) * 1e3
    phases = rec["phase_ms"]
    assert list(phases) == ["first_call", "warmup", "settle", "capture", "sample", "release"]
    assert phases["first_call"] >= 200
    assert all(v < 200 for k, v in phases.items() if k != "first_call")
    assert sum(phases.values()) <= wall_ms


def test_phase_ms_counts_the_placement_probes(graph, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_PLACEMENT_PROBES", "3")
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    _, rec = measure(op, rep=40)
    assert rec["placement_probes"] == 3
    assert "probes" in rec["phase_ms"] and rec["phase_ms"]["probes"] > 0
