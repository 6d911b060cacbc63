"""libzlbtimer ABI version 2 from the Python side: the stopping-rule knobs
(ZLB_MIN_SAMPLES, ZLB_NOISE_TARGET, ZLB_MAX_WALL_MS, ZLB_L2, ZLB_CLOCK_FLOOR),
cold L2, graph inspection and its caliber markers, the new measurement
fields, and a version 1 library driven the version 1 way.

Against a Python spy standing in for the library (run everywhere): what the
Python side asks for and records. The real libzlbtimer with the fake driver
is test_timing_real's."""

import math
import subprocess

import pytest

from conftest import PYTHON, events, measure_plain_copy, subprocess_env

from zlbench import _env, _graph, _preload, _stats, _state, timing

SPY_PATH = "/spy/libzlbtimer.so"


# --- the environment -----------------------------------------------------------------

ENGINE_KNOBS = ("ZLB_DIRECT_REPEAT", "ZLB_MIN_SAMPLES", "ZLB_NOISE_TARGET", "ZLB_MAX_WALL_MS",
                "ZLB_L2", "ZLB_CLOCK_FLOOR", "ZLB_POWER_DUTY", "ZLB_POWER_SETTLE_MS",
                "ZLB_PRELOAD_MS", "ZLB_PRELOAD_STEADY", "ZLB_PLACEMENTS",
                "ZLB_REPLAY_TARGET_MS",
                "ZLB_WARMUP_MAX_CALLS", "ZLB_PLACEMENT_PROBES", "ZLB_TUNE_PLACEMENT_PROBES",
                "ZLB_TUNE_RULE", "ZLB_SEED", "ZLB_USE_FLAGTUNE", "ZLB_CLOCK_ELASTICITY")


def test_knobs_come_from_zlb(monkeypatch):
    # zlb's option table is the one source: what it prints is what the
    # plugins read, and one graph is the default (issue 12).
    from conftest import ENGINE_ENV
    assert set(ENGINE_ENV) == set(ENGINE_KNOBS)
    for k, v in ENGINE_ENV.items():
        monkeypatch.setenv(k, v)    # zlb's own, the probes too
    s = timing._settings()
    r = s["rule"]
    assert (r.min_samples, r.noise_target, r.max_wall_ms, r.l2, r.clock_floor, r.power_duty,
            r.power_settle_ms, r.preload_ms, r.preload_steady, r.placements,
            r.replay_target_ms, r.placement_probes, r.clock_elasticity) == (
                10, 0.001, 2000.0, "hot", 0.97, 0.5, 0.0, 0.0, 0.0, 1, 2.0, 2, False)
    assert (s["repeat"], s["max_warm"]) == (1, 200)
    assert s["tune_probes"] == 0
    assert s["tune_rule"] == "rows"


# Who reads each knob: the timing plugin's settings, or the seed and
# autotune plugins' own readers.
OWN_READER = {"ZLB_SEED": _env.seed, "ZLB_USE_FLAGTUNE": _env.use_flagtune}


@pytest.mark.parametrize("name", ENGINE_KNOBS)
def test_a_knob_zlb_did_not_pass_is_refused(monkeypatch, name):
    monkeypatch.delenv(name)
    with pytest.raises(_env.EnvError, match="%s is not set: zlb passes" % name):
        OWN_READER.get(name, timing._settings)()


@pytest.mark.parametrize("name,raw,want", [
    ("ZLB_MIN_SAMPLES", "25", 25), ("ZLB_MIN_SAMPLES", " 1 ", 1),
    ("ZLB_NOISE_TARGET", "0", 0.0), ("ZLB_NOISE_TARGET", "0.0005", 0.0005),
    ("ZLB_NOISE_TARGET", "0.5", 0.5),
    ("ZLB_MAX_WALL_MS", "700", 700.0), ("ZLB_MAX_WALL_MS", "600000", 600000.0),
    ("ZLB_REPLAY_TARGET_MS", "0.5", 0.5), ("ZLB_WARMUP_MAX_CALLS", "7", 7),
    ("ZLB_L2", "cold", "cold"), ("ZLB_L2", "hot", "hot"),
    ("ZLB_CLOCK_FLOOR", "0", 0.0), ("ZLB_CLOCK_FLOOR", "1", 1.0),
    ("ZLB_CLOCK_FLOOR", "0.9", 0.9),
    ("ZLB_PLACEMENTS", "1", 1), ("ZLB_PLACEMENTS", "64", 64),
    ("ZLB_PLACEMENT_PROBES", "0", 0), ("ZLB_PLACEMENT_PROBES", "16", 16),
])
def test_knob_values(monkeypatch, name, raw, want):
    monkeypatch.setenv(name, raw)
    fn = {"ZLB_MIN_SAMPLES": _env.min_samples, "ZLB_NOISE_TARGET": _env.noise_target,
          "ZLB_MAX_WALL_MS": _env.max_wall_ms, "ZLB_L2": _env.l2,
          "ZLB_CLOCK_FLOOR": _env.clock_floor, "ZLB_PLACEMENTS": _env.placements,
          "ZLB_REPLAY_TARGET_MS": _env.replay_target_ms,
          "ZLB_WARMUP_MAX_CALLS": _env.warmup_max_calls,
          "ZLB_PLACEMENT_PROBES": _env.placement_probes}[name]
    assert fn() == want


@pytest.mark.parametrize("name,raw,why", [
    ("ZLB_MIN_SAMPLES", "0", "at least 1"), ("ZLB_MIN_SAMPLES", "ten", "not an integer"),
    ("ZLB_MIN_SAMPLES", "2.5", "not an integer"),
    ("ZLB_MIN_SAMPLES", "100001", "at most 100000"),
    ("ZLB_NOISE_TARGET", "lots", "not a number"), ("ZLB_NOISE_TARGET", "-0.1", "outside"),
    ("ZLB_NOISE_TARGET", "0.9", "outside"), ("ZLB_NOISE_TARGET", "nan", "not a finite"),
    # The ranges are zlb's (--max-wall: an integer 1..600000).
    ("ZLB_MAX_WALL_MS", "0", "at least 1"), ("ZLB_MAX_WALL_MS", "-5", "at least 1"),
    ("ZLB_MAX_WALL_MS", "600001", "at most 600000"),
    ("ZLB_MAX_WALL_MS", "2.5", "not an integer"), ("ZLB_MAX_WALL_MS", "2s", "not an integer"),
    ("ZLB_REPLAY_TARGET_MS", "0", "outside"), ("ZLB_REPLAY_TARGET_MS", "1e9", "outside"),
    ("ZLB_WARMUP_MAX_CALLS", "0", "at least 1"), ("ZLB_DIRECT_REPEAT", "1001", "at most 1000"),
    ("ZLB_L2", "warm", "neither 'hot' nor 'cold'"), ("ZLB_L2", "COLD", "neither"),
    ("ZLB_CLOCK_FLOOR", "1.5", "outside"), ("ZLB_CLOCK_FLOOR", "-1", "outside"),
    ("ZLB_CLOCK_FLOOR", "97%", "not a number"),
    ("ZLB_PLACEMENTS", "0", "at least 1"), ("ZLB_PLACEMENTS", "65", "at most 64"),
    ("ZLB_PLACEMENT_PROBES", "-1", "at least 0"), ("ZLB_PLACEMENT_PROBES", "17", "at most 16"),
    ("ZLB_TUNE_RULE", "fast", "not one of 'rows', 'budget', 'triton'"),
])
def test_knob_garbage_is_refused(monkeypatch, name, raw, why):
    monkeypatch.setenv(name, raw)
    with pytest.raises(_env.EnvError, match=name) as e:
        timing._settings()
    assert why in str(e.value)


@pytest.mark.parametrize("name,raw", [("ZLB_NOISE_TARGET", "lots"), ("ZLB_L2", "warm"),
                                      ("ZLB_MIN_SAMPLES", "0"), ("ZLB_CLOCK_FLOOR", "2"),
                                      ("ZLB_MAX_WALL_MS", "never")])
def test_knob_garbage_stops_pytest_at_configure(tmp_path, name, raw):
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    env = subprocess_env({"ZLB_RUN_DIR": str(tmp_path), name: raw})
    r = subprocess.run([PYTHON, "-m", "pytest", "-p", "no:cacheprovider", "-p",
                        "zlbench.results", "-p", "zlbench.timing", "test_x.py"],
                       cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 4, r.stdout + r.stderr          # pytest's usage error
    assert name in r.stderr


def test_plugin_event_states_the_rule(run_dir, monkeypatch):
    monkeypatch.setenv("ZLB_TIMER", "graph")
    monkeypatch.setenv("ZLB_MIN_SAMPLES", "30")
    monkeypatch.setenv("ZLB_L2", "cold")
    try:
        timing.pytest_configure(None)
    finally:
        timing.uninstall()
    (ev,) = [e for e in events(run_dir, "PLUGIN") if e["name"] == "zlbench.timing"]
    assert ev["status"] == "ready"
    for part in ("min_samples=30", "noise_target=0.001", "max_wall_ms=2000", "l2=cold",
                 "clock_floor=0.97", "placements=1", "replay_target_ms=2"):
        assert part in ev["detail"]


# --- a spy in place of the library ---------------------------------------------------

class SpyLib:
    """Duck-types _graph.TimerLib: records requests and inspections, answers
    from the stub's cost model (the handle is the replay's nanoseconds)."""

    path = SPY_PATH

    def __init__(self, abi=2, graph_error=None, stop=2):
        self.abi = self.lib_abi = abi
        self.v2 = abi >= 2
        self.v3 = abi >= 3
        self.v4 = abi >= 4
        self.has_graph_info = self.v2
        self.requests = []
        self.inspected = []
        self.graph_error = graph_error
        self.stop = stop

    def time_graph(self, graph_exec, stream, calls_per_replay, min_samples, max_samples,
                   min_time_ms, max_wall_ms, warmup_replays=0, **v2):
        req = dict(graph_exec=graph_exec, calls=calls_per_replay, min_samples=min_samples,
                   max_samples=max_samples, min_time_ms=min_time_ms,
                   max_wall_ms=max_wall_ms, warmup_replays=warmup_replays)
        req.update(v2)
        self.requests.append(req)
        per_call = graph_exec / calls_per_replay / 1e6
        n = min_samples
        samples = [per_call] * n
        stats = _stats.summarize(samples)
        del stats["noise"]
        stats["total_gpu_ms"] = per_call * calls_per_replay * n
        stats["wall_ms"] = 1.0
        if self.v2:
            stats.update(noise=0.0, stop_reason=_graph.STOP_REASONS[self.stop], discarded=3,
                         clock_mhz=1980.0, clock_min_mhz=1965.0,
                         l2_flush_bytes=62914560 if v2.get("l2_mode") else 0)
        else:
            stats.update(dict.fromkeys(_graph.V2_RESULT_KEYS))
        return _graph.ZLBT_OK, stats, samples, ""

    def graph_info(self, raw):
        self.inspected.append(raw)
        if self.graph_error:
            return None, self.graph_error
        counts = {k: (raw >> shift) & 0xFFFF for k, shift in
                  (("kernels", 0), ("memcpys", 16), ("memsets", 32), ("others", 48))}
        counts["nodes"] = sum(counts.values())
        return counts, None


@pytest.fixture
def spy(monkeypatch, stub_torch, run_dir):
    import triton

    lib = SpyLib()
    monkeypatch.setitem(_graph._libs, SPY_PATH, (lib, None))
    monkeypatch.setenv("ZLB_TIMER", "graph")
    monkeypatch.setenv("ZLB_TIMER_LIB", SPY_PATH)
    monkeypatch.setattr(_state, "original_do_bench", triton.testing.do_bench)
    return lib


def use(monkeypatch, lib):
    monkeypatch.setitem(_graph._libs, SPY_PATH, (lib, None))
    return lib


def measure(fn, warmup=1, rep=1, **kw):
    kw.setdefault("return_mode", "median")
    value = timing.do_bench(fn, warmup=warmup, rep=rep, **kw)
    return value, _state.pending[-1]["record"]


def test_defaults_reach_the_request(spy, stub_torch):
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    value, rec = measure(op, rep=20)
    assert value == 0.005
    est1, est8, check, main = spy.requests
    # The estimates, graphs of 1 and 8 calls, and the check of K on the K-call
    # graph: bare rule, 5 samples, no minimum time, no noise target, L2 hot,
    # no clock check.
    for est, n in ((est1, 1), (est8, 8), (check, 512)):
        assert (est["graph_exec"], est["calls"], est["min_samples"],
                est["max_samples"]) == (n * 5000, n, 5, 5)
        assert (est["min_time_ms"], est["max_wall_ms"], est["warmup_replays"]) == (
            0.0, 2000.0, 1)
        assert est.get("noise_target", 0) == 0 and est.get("l2_mode", 0) == 0
        assert est.get("clock_check", 0) == 0
    # K: 2 ms / 5 us = 400, rounded up to a power of two.
    assert main == dict(graph_exec=512 * 5000, calls=512, min_samples=10, max_samples=10000,
                        min_time_ms=20.0, max_wall_ms=2000.0, warmup_replays=1,
                        noise_target=0.001, l2_mode=_graph.ZLBT_L2_HOT,
                        clock_check=_graph.ZLBT_CLOCK_CHECK, clock_floor=0.97)


class OverheadSpy(SpyLib):
    """A spy whose replays take replay_ns(graph_exec, calls) instead of the
    handle's nanoseconds (a fixed cost per replay, or noise)."""

    def __init__(self, replay_ns):
        SpyLib.__init__(self)
        self.replay_ns = replay_ns

    def time_graph(self, graph_exec, stream, calls_per_replay, *args, **kw):
        ns = self.replay_ns(graph_exec, calls_per_replay)
        rc, stats, samples, err = SpyLib.time_graph(self, ns, stream, calls_per_replay,
                                                    *args, **kw)
        self.requests[-1]["graph_exec"] = graph_exec
        return rc, stats, samples, err


@pytest.mark.parametrize("replay_ns,k", [
    # A fixed 3 us per replay is left out: the slope (34248 - 6906) / 7 = 3906 ns
    # makes 512.03 -> 1024 (6906 ns alone would make 512, 34248 / 8 too).
    (lambda h, calls: h + 3000, 1024),
    # The 8-call graph no slower than the 1-call one (noise): its average,
    # 8000 / 8 = 1000 ns, stands in: 2000 -> 2048.
    (lambda h, calls: 10000 if calls == 1 else 8000 if calls == 8 else h, 2048),
], ids=["fixed_cost", "no_slope"])
def test_k_comes_from_the_slope_between_the_estimates(spy, stub_torch, monkeypatch,
                                                       replay_ns, k):
    lib = use(monkeypatch, OverheadSpy(replay_ns))
    op = stub_torch._stub.make_op("op", cost_ns=3906)
    measure(op)
    # The probes' K is the one first captured and checked.
    assert [r["calls"] for r in lib.requests][:3] == [1, 8, k]


@pytest.mark.parametrize("replay_ns,probe_k,k", [
    # The probes say 1024; the 1024-call graph measures (1024 * 3906 + 3000) /
    # 1024 = 3908.9 ns a call: 511.6 -> 512, recaptured.
    (lambda h, calls: h + 3000, 1024, 512),
    # The probes say 2048; the graph measures 3906 ns a call: 512.03 -> 1024.
    (lambda h, calls: 10000 if calls == 1 else 8000 if calls == 8 else h, 2048, 1024),
], ids=["fixed_cost", "no_slope"])
def test_k_is_settled_by_the_k_call_graph(spy, stub_torch, monkeypatch, replay_ns,
                                           probe_k, k):
    lib = use(monkeypatch, OverheadSpy(replay_ns))
    op = stub_torch._stub.make_op("op", cost_ns=3906)
    _, rec = measure(op)
    assert [r["calls"] for r in lib.requests] == [1, 8, probe_k, k]
    assert [r["min_samples"] for r in lib.requests][:3] == [5, 5, 5]
    assert rec["calls_per_replay"] == k and rec["calls_first"] == probe_k
    assert op.captured_calls == 1 + 8 + probe_k + k
    assert stub_torch._stub.live_graphs == 0


def test_a_replay_checks_and_recaptures_as_its_recording_did(spy, stub_torch, monkeypatch):
    """The recording captured 1024 calls first and settled on 512: its
    replay captures and replays the 1024-call graph the same five times and
    then captures 512, though it knows K, so that the measured graph lands
    after the same allocations as the recording's."""
    monkeypatch.setattr(timing, "_planned_shape",
                        lambda ctx: _graph.GraphShape(512, 1, None, 1024))
    op = stub_torch._stub.make_op("op", cost_ns=3906)
    _, rec = measure(op)
    assert [r["calls"] for r in spy.requests] == [1, 8, 1024, 512]
    assert [r["min_samples"] for r in spy.requests][:3] == [1, 1, 5]
    assert spy.requests[2]["max_samples"] == 5
    assert (rec["calls_per_replay"], rec["calls_first"], rec["graph_shape"]) == \
        (512, 1024, "replayed")
    assert op.captured_calls == 1 + 8 + 1024 + 512
    assert stub_torch._stub.live_graphs == 0


def test_k_agreeing_with_its_graph_is_not_recaptured(spy, stub_torch):
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    _, rec = measure(op)
    assert [r["calls"] for r in spy.requests] == [1, 8, 512, 512]
    assert op.captured_calls == 1 + 8 + 512


def test_a_replay_captures_the_recordings_estimate_graphs_before_its_own(
        spy, stub_torch, monkeypatch):
    """K comes from the recording, yet the replay captures (and releases) the
    graphs of 1 and 8 calls the recording estimated K with, in its order, so
    that its measured graph lands after the same allocations; their one
    replay each is not a measurement (one sample, bare rule)."""
    record_op = stub_torch._stub.make_op("op", cost_ns=5000)
    measure(record_op)
    recorded = [r["calls"] for r in spy.requests]
    assert recorded == [1, 8, 512, 512]
    spy.requests.clear()
    monkeypatch.setattr(timing, "_planned_shape", lambda ctx: _graph.GraphShape(512, 1))
    replay_op = stub_torch._stub.make_op("op2", cost_ns=5000)
    _, rec = measure(replay_op)
    est1, est8, check, main = spy.requests
    # the plan did not say what K came first (an older recording): K itself
    assert [r["calls"] for r in spy.requests] == recorded
    for est in (est1, est8):
        assert (est["min_samples"], est["max_samples"], est["min_time_ms"]) == (1, 1, 0.0)
        assert est.get("noise_target", 0) == 0 and est.get("clock_check", 0) == 0
    # the recording's check of its K, replayed alike though its answer is not used
    assert (check["min_samples"], check["max_samples"], check["min_time_ms"]) == (5, 5, 0.0)
    assert main["min_samples"] == 10 and main["noise_target"] == 0.001
    assert rec["graph_shape"] == "replayed" and rec["calls_per_replay"] == 512
    assert rec["calls_first"] == 512
    assert replay_op.captured_calls == record_op.captured_calls == 1 + 8 + 512
    assert stub_torch._stub.live_graphs == 0


@pytest.mark.parametrize("k_first", [None, 1, 512])
def test_a_cold_replay_mirrors_no_estimate(spy, stub_torch, monkeypatch, k_first):
    # A cold recording settles no K (one call per replay): nothing to mirror,
    # and a first K the plan names (a hot recording's) is not captured.
    monkeypatch.setenv("ZLB_L2", "cold")
    monkeypatch.setattr(timing, "_planned_shape",
                        lambda ctx: _graph.GraphShape(1, 1, None, k_first))
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    _, rec = measure(op)
    assert [r["calls"] for r in spy.requests] == [1] and op.captured_calls == 1
    assert rec["calls_first"] == 1


def test_knobs_reach_the_request(spy, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_MIN_SAMPLES", "25")
    monkeypatch.setenv("ZLB_NOISE_TARGET", "0.002")
    monkeypatch.setenv("ZLB_MAX_WALL_MS", "750")
    monkeypatch.setenv("ZLB_CLOCK_FLOOR", "0.9")
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    _, rec = measure(op, rep=7)
    main = spy.requests[-1]
    assert (main["min_samples"], main["max_samples"], main["min_time_ms"],
            main["max_wall_ms"], main["noise_target"], main["clock_check"],
            main["clock_floor"]) == (25, 10000, 7.0, 750.0, 0.002,
                                     _graph.ZLBT_CLOCK_CHECK, 0.9)
    assert len(spy.requests) == 4          # two probes, the K check, the measurement
    assert all(r["max_wall_ms"] == 750.0 for r in spy.requests)
    assert (rec["min_samples"], rec["noise_target"], rec["max_wall_ms"], rec["min_time_ms"],
            rec["clock_floor"]) == (25, 0.002, 750.0, 7.0, 0.9)


class RampSpy(SpyLib):
    """A spy whose preload (the request for 50 ms) reads a kernel that sped
    up while it ran: nine replays, 1.0 down to 0.96 of its time."""

    def time_graph(self, graph_exec, stream, calls_per_replay, min_samples, *args, **kw):
        rc, stats, samples, err = SpyLib.time_graph(self, graph_exec, stream,
                                                    calls_per_replay, min_samples, *args, **kw)
        if self.requests[-1]["min_time_ms"] == 50.0:
            samples = [samples[0] * f for f in (1.0, 1.0, 1.0, .98, .98, .98, .96, .96, .96)]
        return rc, stats, samples, err


def test_the_preload_runs_the_graph_back_to_back_right_before_the_sampling(
        spy, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_PRELOAD_MS", "50")
    lib = use(monkeypatch, RampSpy())
    value, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000), rep=20)
    *_, preload, main = lib.requests
    # The measured graph itself, for 50 ms of GPU time: the sampling's L2, no
    # noise target, no clock gate.
    assert (preload["graph_exec"], preload["calls"], preload["min_time_ms"]) == (
        512 * 5000, 512, 50.0)
    assert preload.get("noise_target", 0) == 0 and preload.get("clock_check", 0) == 0
    assert preload.get("l2_mode", _graph.ZLBT_L2_HOT) == _graph.ZLBT_L2_HOT
    assert (main["min_time_ms"], main["noise_target"]) == (20.0, 0.001)
    assert value == 0.005
    assert rec["preload_trend"] == pytest.approx(math.log(0.96))
    # nine replays of 512 calls: three chunks of three, each at its GPU time so far
    assert rec["preload_profile"] == [pytest.approx(x) for x in (
        [3 * 0.005 * 512, 0.005], [3 * 0.0099 * 512, 0.0049], [3 * 0.0147 * 512, 0.0048])]
    laps = list(rec["phase_ms"])
    assert laps.index("capture") < laps.index("preload") < laps.index("sample")


def test_a_cold_rows_preload_flushes_as_its_sampling_will(spy, stub_torch, monkeypatch):
    # the load the sampling continues: one call a replay, L2 flushed before each
    monkeypatch.setenv("ZLB_PRELOAD_MS", "50")
    monkeypatch.setenv("ZLB_L2", "cold")
    lib = use(monkeypatch, RampSpy())
    measure(stub_torch._stub.make_op("op", cost_ns=5000), rep=20)
    *_, preload, main = lib.requests
    assert (preload["calls"], preload["min_time_ms"]) == (1, 50.0)
    assert preload["l2_mode"] == main["l2_mode"] == _graph.ZLBT_L2_COLD
    assert preload["noise_target"] == 0 and preload["clock_check"] == _graph.ZLBT_CLOCK_OFF
    assert main["clock_check"] == _graph.ZLBT_CLOCK_CHECK


class CapSpy(SpyLib):
    """A spy whose preload requests (one replay and more, no noise target)
    end on their max_samples, as a cold row's replays of a few us do."""

    def time_graph(self, graph_exec, stream, calls_per_replay, min_samples, *args, **kw):
        rc, stats, samples, err = SpyLib.time_graph(self, graph_exec, stream,
                                                    calls_per_replay, min_samples, *args, **kw)
        req = self.requests[-1]
        if req["min_samples"] == 1 and not req.get("noise_target"):
            samples = [samples[0]] * req["max_samples"]
        return rc, stats, samples, err


def test_a_preload_capped_by_its_samples_asks_again_until_its_time_is_spent(
        spy, stub_torch, monkeypatch):
    # Five replays of 512 x 5 us a call are 12.8 ms: a 50 ms preload takes
    # four calls, each for what is left of it.
    monkeypatch.setenv("ZLB_PRELOAD_MS", "50")
    monkeypatch.setattr(_preload, "PRELOAD_MAX_SAMPLES", 5)
    lib = use(monkeypatch, CapSpy())
    _, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000), rep=20)
    loads = [r for r in lib.requests if r["min_samples"] == 1 and r["max_samples"] == 5]
    assert [r["min_time_ms"] for r in loads] == [pytest.approx(50.0 - 12.8 * i)
                                                 for i in range(4)]
    assert rec["preload_profile"][-1][0] == pytest.approx(4 * 12.8)
    assert rec["preload_stop"] is None


class StepSpy(SpyLib):
    """A spy whose preload chunks (requests of 25 ms for one replay and
    more) read a kernel that steps down through three levels and then
    holds 1.0 of its time, or levels given; every chunk is five replays."""

    def __init__(self, levels=(1.02, 1.01, 1.005), abi=2):
        SpyLib.__init__(self, abi=abi)
        self.levels = list(levels)
        self.chunks = 0

    def time_graph(self, graph_exec, stream, calls_per_replay, min_samples, *args, **kw):
        rc, stats, samples, err = SpyLib.time_graph(self, graph_exec, stream,
                                                    calls_per_replay, min_samples, *args, **kw)
        req = self.requests[-1]
        if req["min_time_ms"] <= 25.0 and req["min_samples"] == 1:
            level = self.levels[self.chunks] if self.chunks < len(self.levels) else 1.0
            self.chunks += 1
            samples = [samples[0] * level] * 5
        return rc, stats, samples, err


def test_the_steady_rule_stops_the_preload_once_eight_chunks_hold(spy, stub_torch,
                                                                   monkeypatch):
    monkeypatch.setenv("ZLB_PRELOAD_MS", "1000")
    monkeypatch.setenv("ZLB_PRELOAD_STEADY", "0.001")
    lib = use(monkeypatch, StepSpy())
    _, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000), rep=20)
    chunks = [r for r in lib.requests if r["min_time_ms"] == 25.0]
    # three chunks on the way down, then eight at the level: eleven, not the
    # 1000 ms cap's seventy-odd
    assert len(chunks) == 11 == _preload.STEADY_CHUNKS + 3
    assert all(r["graph_exec"] == 512 * 5000 and r.get("noise_target", 0) == 0 for r in chunks)
    assert rec["preload_steady_ms"] == pytest.approx(
        5 * 512 * 0.005 * (1.02 + 1.01 + 1.005 + 8 * 1.0))
    assert rec["preload_stop"] == "held"
    # 55 replays: the first third's median is the second chunk's level
    assert rec["preload_trend"] == pytest.approx(math.log(1.0 / 1.01))
    assert lib.requests[-1]["min_time_ms"] == 20.0          # then the sampling


def test_a_level_that_never_holds_runs_the_preload_to_its_cap(spy, stub_torch, monkeypatch):
    # every chunk 0.2% below the one before: four never lie within 0.1%
    monkeypatch.setenv("ZLB_PRELOAD_MS", "100")
    monkeypatch.setenv("ZLB_PRELOAD_STEADY", "0.001")
    lib = use(monkeypatch, StepSpy(levels=[1.0 - 0.002 * i for i in range(100)]))
    _, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000), rep=20)
    chunks = [r for r in lib.requests if r["min_samples"] == 1 and r["calls"] == 512]
    # about 12.8 ms of GPU time a chunk: eight reach the 100 ms cap, each
    # asking for 25 ms or what is left of the cap
    assert len(chunks) == lib.chunks == 8
    spent, want = 0.0, []
    for level in lib.levels[:8]:
        want.append(min(25.0, 100.0 - spent))
        spent += 5 * 512 * 0.005 * level
    assert [r["min_time_ms"] for r in chunks] == [pytest.approx(w) for w in want]
    assert want[5] == 25.0 and want[-1] < 25.0
    assert rec["preload_steady_ms"] is None and rec["preload_stop"] == "cap"
    assert len(rec["preload_profile"]) == 40 // 3 and rec["preload_profile"][-1][0] > 100.0


def test_every_steady_chunk_replays_every_placement_in_whole_rounds(spy, stub_torch,
                                                                     monkeypatch):
    monkeypatch.setenv("ZLB_PLACEMENTS", "2")
    monkeypatch.setenv("ZLB_PRELOAD_MS", "1000")
    monkeypatch.setenv("ZLB_PRELOAD_STEADY", "0.001")
    lib = use(monkeypatch, StepSpy(abi=3))
    _, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000), rep=20)
    chunks = [r for r in lib.requests if r["min_time_ms"] == 25.0]
    assert len(chunks) == 11 and all(len(r["more_placements"]) == 1 for r in chunks)
    # five samples a chunk are two whole rounds of the two placements: four count
    assert rec["preload_steady_ms"] == pytest.approx(
        4 * 512 * 0.005 * (1.02 + 1.01 + 1.005 + 8 * 1.0))
    assert rec["preload_stop"] == "held"


def test_a_steady_preload_stops_at_the_rows_wall_limit(spy, stub_torch, monkeypatch):
    # the row's wall limit (500 ms) bounds the preload; each chunk here
    # takes 150 ms of the preload's clock
    monkeypatch.setenv("ZLB_MAX_WALL_MS", "500")
    monkeypatch.setenv("ZLB_PRELOAD_MS", "1000")
    monkeypatch.setenv("ZLB_PRELOAD_STEADY", "0.001")
    ticks = iter(range(0, 10 ** 6, 150))
    monkeypatch.setattr(_preload, "time", type("Clock", (), {
        "monotonic": staticmethod(lambda: next(ticks) / 1e3)}))
    lib = use(monkeypatch, StepSpy(levels=[1.0 - 0.002 * i for i in range(100)]))
    _, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000), rep=20)
    chunks = [r for r in lib.requests if r["min_time_ms"] == 25.0]
    # the clock reads 0 at the start, then 150 more at each look: three
    # chunks, each with what was left of the 500 ms, then none
    assert [r["max_wall_ms"] for r in chunks] == pytest.approx([350.0, 200.0, 50.0])
    assert rec["preload_stop"] == "wall" and rec["preload_steady_ms"] is None


def test_a_chunk_without_time_ends_the_steady_preload(spy, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_PRELOAD_MS", "1000")
    monkeypatch.setenv("ZLB_PRELOAD_STEADY", "0.001")
    lib = use(monkeypatch, StepSpy(levels=[1.0, 1.0, 0.0]))
    _, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000), rep=20)
    assert lib.chunks == 3
    assert rec["preload_stop"] == "no time" and rec["preload_steady_ms"] is None
    assert rec["n"] > 0                                    # the row is still sampled


def test_the_steady_rule_reads_the_last_eight_levels():
    eight = [1.0, 1.0, 1.0, 1.0005, 1.0009, 1.0, 1.0003, 1.0]
    assert not _preload.held(eight[1:], 0.001)                 # fewer than eight
    assert _preload.held([2.0] + eight, 0.001)
    assert not _preload.held(eight[:-1] + [1.0011], 0.001)


def test_rounds_keep_whole_rounds_of_placements():
    # two placements, stored round-robin: a round is two samples; a round
    # with a replay that gave no time, and a last partial one, are left out
    units = _preload.rounds([1.0, 3.0, 2.0, 0.0, 1.0, 1.0, 5.0], 10, 2)
    assert units == [(40.0, 2.0), (20.0, 1.0)]
    assert _preload.trend([1.0, 3.0] * 6, 2) == 0.0
    # six rounds of 40 GPU ms; a chunk takes two (three replays at least)
    assert _preload.profile([1.0, 3.0] * 6, 10, 2) == [[80.0, 2.0], [160.0, 2.0], [240.0, 2.0]]


def test_the_preload_trend_needs_six_replays_and_reads_thirds():
    assert _preload.trend([1.0] * 5) is None and _preload.trend(None) is None
    assert _preload.trend([1.0] * 6) == 0.0
    # the middle third does not count; a zero (no time) is left out
    assert _preload.trend([2.0, 2.0, 9.0, 9.0, 0.0, 1.0, 1.0]) == pytest.approx(math.log(0.5))


def test_the_preload_profile_cuts_equal_chunks_and_needs_two():
    # 400 replays of 2 calls, the first half at 2 ms a call, the second at 1:
    # 40 chunks of 10
    prof = _preload.profile([2.0] * 200 + [1.0] * 200, 2)
    assert [m for _, m in prof] == [2.0] * 20 + [1.0] * 20
    assert [t for t, _ in prof][:2] == [40.0, 80.0] and prof[19][0] == 800.0
    assert prof[20][0] == 820.0 and prof[-1][0] == 1200.0
    # 25 replays: 8 chunks of 3 or 4 (25 // 3), the last the longer
    prof = _preload.profile([1.0] * 25, 1)
    assert len(prof) == 8 and prof[-1][0] == 25.0 and prof[0][0] == 3.0
    # fewer than two chunks of three, or no time at all: no profile
    assert _preload.profile([1.0] * 5, 1) is None and _preload.profile(None, 1) is None
    assert _preload.profile([0.0, None] + [1.0] * 6, 1) == [[3.0, 1.0], [6.0, 1.0]]


def test_no_preload_by_default(spy, stub_torch):
    _, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000), rep=20)
    assert rec["preload_trend"] is None and "preload" not in rec["phase_ms"]
    assert rec["preload_profile"] is None and rec["preload_steady_ms"] is None
    assert not any(r["min_time_ms"] == 0.0 and r["calls"] == 512 and r["max_samples"] == 10000
                   for r in spy.requests)


def test_clock_floor_zero_turns_the_check_off(spy, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_CLOCK_FLOOR", "0")
    measure(stub_torch._stub.make_op("op", cost_ns=5000))
    assert spy.requests[-1]["clock_check"] == _graph.ZLBT_CLOCK_OFF


def test_more_min_samples_than_the_cap_raise_the_cap(spy, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_MIN_SAMPLES", "20000")
    measure(stub_torch._stub.make_op("op", cost_ns=5000))
    assert spy.requests[-1]["min_samples"] == spy.requests[-1]["max_samples"] == 20000


def test_cold_l2_is_one_call_per_replay_and_no_estimate(spy, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_L2", "cold")
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    value, rec = measure(op)
    (req,) = spy.requests                     # no estimate replays
    assert req["calls"] == 1 and req["l2_mode"] == _graph.ZLBT_L2_COLD
    assert op.captured_calls == 1
    assert rec["calls_per_replay"] == 1 and rec["l2"] == "cold"
    assert rec["l2_flush_bytes"] == 62914560 and value == 0.005
    assert rec["graph"] == {"kernels": 1, "memcpys": 0, "memsets": 0, "others": 0}


def test_record_carries_the_version_2_fields(spy, stub_torch):
    _, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000))
    assert rec["timer"] == "graph"
    assert (rec["noise"], rec["stop_reason"], rec["discarded"], rec["clock_mhz"],
            rec["clock_min_mhz"], rec["l2"], rec["l2_flush_bytes"]) == (
        0.0, "noise", 3, 1980.0, 1965.0, "hot", 0)
    assert rec["graph"] == {"kernels": 512, "memcpys": 0, "memsets": 0, "others": 0}
    assert rec["markers"] == []
    for key in ("min_samples", "noise_target", "max_wall_ms"):
        assert key in rec


@pytest.mark.parametrize("code,name", [(1, "rule"), (2, "noise"), (3, "max_samples"),
                                       (4, "wall")])
def test_stop_reasons_by_name(spy, stub_torch, monkeypatch, code, name):
    use(monkeypatch, SpyLib(stop=code))
    _, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000))
    assert rec["stop_reason"] == name


def test_measured_graph_is_inspected_after_capture_before_instantiation(
        spy, stub_torch, monkeypatch):
    seen = []
    real = stub_torch.cuda.CUDAGraph.raw_cuda_graph

    def spying(self):
        seen.append(self._status)
        return real(self)

    monkeypatch.setattr(stub_torch.cuda.CUDAGraph, "raw_cuda_graph", spying)
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    _, rec = measure(op)
    assert seen == ["captured"]               # once: the measured graph, not the estimates'
    assert spy.inspected == [stub_torch._stub.graph_handle({"kernel": 512})]
    assert op.captured_calls == 1 + 8 + 512


def test_memcpy_nodes_mark_the_measurement(spy, stub_torch, capsys, run_dir):
    _, k = measure_plain_copy(measure, stub_torch)
    assert capsys.readouterr().out == ("GRAPH_MEMCPY_NODES count=%d role=null\n"
                                       "GRAPH_NO_KERNELS nodes=%d role=null\n" % (k, k))
    (ev,) = events(run_dir, "GRAPH_MEMCPY_NODES")
    assert ev["count"] == k and ev["calls_per_replay"] == k and ev["role"] is None
    for key in ("op", "op_name", "dtype", "nodeid"):
        assert key in ev
    (ev,) = events(run_dir, "GRAPH_NO_KERNELS")
    assert (ev["nodes"], ev["memcpys"], ev["memsets"], ev["others"]) == (k, k, 0, 0)


def test_a_graph_without_nodes_is_not_a_measurement(spy, stub_torch, capsys, run_dir):
    # torch.conj is a view: its captured graph holds no node at all, and its
    # replays time nothing but the launch (0.4 ns a call on an H200).
    x = stub_torch.randn(1024, device="cuda")
    _, rec = measure(lambda: x)
    k = rec["calls_per_replay"]
    assert rec["graph"] == {"kernels": 0, "memcpys": 0, "memsets": 0, "others": 0}
    assert rec["markers"] == ["GRAPH_NO_KERNELS"]
    assert capsys.readouterr().out == "GRAPH_NO_KERNELS nodes=0 role=null\n"
    (ev,) = events(run_dir, "GRAPH_NO_KERNELS")
    assert (ev["nodes"], ev["memcpys"], ev["memsets"], ev["others"]) == (0, 0, 0, 0)
    assert ev["calls_per_replay"] == k and ev["role"] is None
    for key in ("op", "op_name", "dtype", "nodeid"):
        assert key in ev


def test_a_memset_only_graph_has_no_kernels(spy, stub_torch, capsys, run_dir):
    fill = stub_torch._stub.make_op("fill", cost_ns=2000, node="memset")
    x = stub_torch.randn(1024, device="cuda")
    _, rec = measure(lambda: fill(x))
    k = rec["calls_per_replay"]
    assert rec["graph"] == {"kernels": 0, "memcpys": 0, "memsets": k, "others": 0}
    assert rec["markers"] == ["GRAPH_MEMSET_NODES", "GRAPH_NO_KERNELS"]
    assert capsys.readouterr().out == ("GRAPH_MEMSET_NODES count=%d role=null\n"
                                       "GRAPH_NO_KERNELS nodes=%d role=null\n" % (k, k))
    assert len(events(run_dir, "GRAPH_MEMSET_NODES")) == 1
    (ev,) = events(run_dir, "GRAPH_NO_KERNELS")
    assert (ev["nodes"], ev["memsets"]) == (k, k)


def test_a_converting_copy_is_a_kernel(spy, stub_torch, capsys):
    torch = stub_torch
    src = torch.randn(1 << 20, device="cuda")
    dst = torch.empty(1 << 20, dtype=torch.float16, device="cuda")
    _, rec = measure(lambda: dst.copy_(src))
    assert rec["graph"]["memcpys"] == 0 and rec["graph"]["kernels"] > 0
    assert rec["markers"] == [] and capsys.readouterr().out == ""


def test_memset_and_mixed_graphs(spy, stub_torch, capsys, run_dir):
    torch = stub_torch
    fill = torch._stub.make_op("memset", cost_ns=1000, node="memset")
    x = torch.randn(1024, device="cuda")

    def body(*args):
        fill(x)
        torch.add(x, x)

    op = torch._stub.make_op("op", cost_ns=3000, body=body, node="other")
    _, rec = measure(op)
    k = rec["calls_per_replay"]
    assert rec["graph"] == {"kernels": k, "memcpys": 0, "memsets": k, "others": k}
    assert rec["markers"] == ["GRAPH_MEMSET_NODES"]
    assert capsys.readouterr().out == "GRAPH_MEMSET_NODES count=%d role=null\n" % k
    assert len(events(run_dir, "GRAPH_MEMSET_NODES")) == 1
    assert events(run_dir, "GRAPH_MEMCPY_NODES") == []


def test_tuning_calls_get_the_event_but_no_stdout_line(spy, stub_torch, capsys, run_dir):
    torch = stub_torch
    src = torch.randn(4096, device="cuda")
    dst = torch.empty(4096, device="cuda")
    copy = lambda: dst.copy_(src)            # noqa: E731
    tuned = []

    def autotune(*args):
        if not tuned:
            tuned.append(timing.do_bench(copy, quantiles=(0.5, 0.2, 0.8)))

    op = torch._stub.make_op("op", cost_ns=5000, body=autotune)
    _, rec = measure(op)
    assert rec["markers"] == []                       # the measured op has no memcpy
    (ev,) = events(run_dir, "GRAPH_MEMCPY_NODES")
    assert ev["role"] == "tune"
    assert capsys.readouterr().out == ""


def test_inspection_failure_is_a_warning_not_a_failure(spy, stub_torch, monkeypatch,
                                                       run_dir):
    use(monkeypatch, SpyLib(graph_error="zlbt_graph_info ZLBT_EDRIVER: boom"))
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    value, rec = measure(op)
    measure(op)
    assert value == 0.005 and rec["timer"] == "graph" and rec["graph"] is None
    (w,) = events(run_dir, "WARNING")                  # once per process
    assert "boom" in w["message"]


def test_torch_without_keep_graph_is_not_inspected(spy, stub_torch, monkeypatch, run_dir):
    monkeypatch.setattr(_graph, "_new_graph",
                        lambda torch: (torch.cuda.CUDAGraph(), False))
    value, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000))
    assert value == 0.005 and rec["graph"] is None and spy.inspected == []
    (w,) = events(run_dir, "WARNING")
    assert "keep_graph" in w["message"]


def test_a_version_1_library_gets_the_version_1_rule(stub_torch, spy, monkeypatch,
                                                     run_dir):
    lib = use(monkeypatch, SpyLib(abi=1))
    monkeypatch.setenv("ZLB_L2", "cold")
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    value, rec = measure(op)
    measure(op)
    assert value == 0.005
    est1, est8, check, main = lib.requests[:4]       # two measurements of four
    assert len(lib.requests) == 8 and check["calls"] == 512
    # Cold is not honoured: both estimates, then K as for hot.
    assert (est1["calls"], est8["calls"]) == (1, 8)
    assert "noise_target" not in main and "l2_mode" not in main
    assert main["calls"] == 512
    for key in ("noise", "stop_reason", "discarded", "clock_mhz", "clock_min_mhz",
                "l2_flush_bytes", "graph", "noise_target", "clock_floor"):
        assert rec[key] is None, key
    assert rec["l2"] == "hot" and rec["min_samples"] == 10
    assert lib.inspected == []
    plugin = [e for e in events(run_dir, "PLUGIN") if "ABI version 1" in e["detail"]]
    assert len(plugin) == 1
    assert "ZLB_L2=cold is not honoured" in plugin[0]["detail"]
    assert events(run_dir, "WARNING") == []


# --- direct timing ---------------------------------------------------------------------

def test_direct_records_noise_and_nulls(monkeypatch, stub_torch):
    vals = iter([3.0, 1.0, 2.0, 9.0, 5.0, 4.0, 4.5] * 3)
    monkeypatch.setattr(_state, "original_do_bench", lambda fn, **kw: next(vals))
    monkeypatch.setenv("ZLB_TIMER", "direct")
    monkeypatch.setenv("ZLB_DIRECT_REPEAT", "7")
    timing.do_bench(lambda: None, return_mode="median")
    rec = _state.pending[-1]["record"]
    s = sorted([3.0, 1.0, 2.0, 9.0, 5.0, 4.0, 4.5])
    assert rec["noise"] == pytest.approx((s[6] - s[0]) / 2 / 4.0)   # n < 10: whole range
    for key in ("stop_reason", "discarded", "clock_mhz", "clock_min_mhz", "l2",
                "l2_flush_bytes", "graph", "min_samples", "noise_target", "max_wall_ms"):
        assert key in rec and rec[key] is None, key
    monkeypatch.setenv("ZLB_DIRECT_REPEAT", "1")
    timing.do_bench(lambda: None, return_mode="median")
    assert _state.pending[-1]["record"]["noise"] is None             # n == 1


def test_median_ci_ranks_exact_binomial():
    from math import comb

    for n in list(range(1, 80)) + [100, 257, 1000, 4099]:
        lo, hi = _stats.median_ci_ranks(n)
        assert 1 <= lo <= hi == n + 1 - lo <= n
        tail = lambda r: sum(comb(n, i) for i in range(r)) / 2 ** n   # noqa: E731
        if n >= 6:
            assert tail(lo) <= 0.025 < tail(lo + 1), n
        else:
            assert lo == 1


def test_noise_of_identical_and_zero_samples():
    assert _stats.summarize([0.005] * 30)["noise"] == 0.0
    assert _stats.summarize([1.0])["noise"] == 0.0
    assert _stats.summarize([-1.0, 0.0, 1.0] * 3)["noise"] is None     # median 0: inf


# --- placements the spy is asked for ------------------------------------------------

@pytest.mark.parametrize("asked,pool,free,want", [
    (8, 0, None, 8),                       # nothing allocated: nothing to cap
    (8, 1 << 20, 80 << 30, 8),             # 8 MiB in all
    (8, 512 << 20, 80 << 30, 3),           # 1 GiB cap: 1 + 2
    (8, 512 << 20, 1 << 30, 1),            # a quarter of 1 GiB free: 1 + 0
    (8, 4 << 30, 80 << 30, 1),             # one placement never refused
    (1, 1 << 20, 80 << 30, 1),
    (64, 1 << 10, None, 64),
])
def test_placements_for_caps_memory(asked, pool, free, want):
    assert _graph.placements_for(asked, pool, free) == want


def test_a_version_2_library_gets_one_placement(spy, stub_torch):
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    _, rec = measure(op, rep=20)
    assert op.captured_calls == 1 + 8 + 512
    assert "more_placements" not in spy.requests[-1]
    assert rec["placements"] is None or rec["placements"] == 1
