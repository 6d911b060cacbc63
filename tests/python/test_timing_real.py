"""libzlbtimer ABI 2 and later, the real library through the fake driver
(tests/fakecuda): the stopping rule, placements, cold L2, graph inspection,
the clock check and its reasons, and the power duty, as the Python side
drives them. Skipped without $ZLB_TIMER_LIB and $ZLB_FAKECUDA. What the
Python side asks of a library (a spy in its place) is test_timing_v2's."""

import ctypes
import json
import math
import os
import random
import subprocess
import textwrap

import pytest

from conftest import (ENGINE_ENV, FAKECUDA, PYDIR, PYTHON, STUBS, TIMER_LIB, events,
                      measure_plain_copy)

from zlbench import _env, _graph, _stats, _state, timing


def measure(fn, warmup=1, rep=1, **kw):
    kw.setdefault("return_mode", "median")
    value = timing.do_bench(fn, warmup=warmup, rep=rep, **kw)
    return value, _state.pending[-1]["record"]


# The real fixture (libzlbtimer on the fake driver) is conftest's.


def test_real_default_rule(real, stub_torch):
    # K = 512 calls of 5 us: 2.56 ms per replay (float32 elapsed time: 1e-7 off),
    # so rep=40 ms takes 16 samples, more than min_samples, on one graph.
    value, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000), rep=40)
    assert value == pytest.approx(0.005, rel=1e-6) and rec["n"] == 16
    assert rec["placements"] == 1
    assert rec["calls_per_replay"] == 512
    assert rec["noise"] == 0.0 and rec["stop_reason"] == "noise"
    assert rec["discarded"] == 0 and rec["l2"] == "hot" and rec["l2_flush_bytes"] == 0
    assert rec["graph"] == {"kernels": 512, "memcpys": 0, "memsets": 0, "others": 0}


def test_real_noise_target_off_is_the_version_1_rule(real, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_PLACEMENTS", "8")
    monkeypatch.setenv("ZLB_NOISE_TARGET", "0")
    monkeypatch.setenv("ZLB_MIN_SAMPLES", "25")
    _, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000), rep=1)
    # 25 made whole rounds of the 8 placements.
    assert rec["n"] == 32 and rec["stop_reason"] == "rule"
    assert rec["placements"] == 8


def test_real_noise_target_keeps_sampling(real, stub_torch, monkeypatch):
    monkeypatch.setenv("FAKE_CUDA_NOISE_PPM", "20000")
    monkeypatch.setenv("ZLB_NOISE_TARGET", "0.002")
    monkeypatch.setenv("ZLB_PLACEMENTS", "1")
    _, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000), rep=1)
    assert rec["stop_reason"] == "noise"
    assert rec["n"] > 50 and rec["noise"] <= 0.002
    # The record's noise is the noise of its samples, computed the same way.
    assert rec["noise"] == _stats.summarize(rec["samples_ms"])["noise"]


def test_real_noise_target_with_placements_is_per_placement(real, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_PLACEMENTS", "8")
    monkeypatch.setenv("FAKE_CUDA_NOISE_PPM", "20000")
    monkeypatch.setenv("ZLB_NOISE_TARGET", "0.002")
    _, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000), rep=1)
    assert rec["stop_reason"] == "noise" and rec["placements"] == 8
    assert rec["n"] % 8 == 0 and rec["noise"] <= 0.002
    # sqrt(sum of (noise_i m_i)^2) / sum of m_i over each placement's samples
    # (sample i ran placement i % 8).
    per = [_stats.summarize(rec["samples_ms"][k::8]) for k in range(8)]
    want = math.sqrt(sum((p["noise"] * p["median_ms"]) ** 2 for p in per)) / sum(
        p["median_ms"] for p in per)
    assert rec["noise"] == pytest.approx(want, rel=1e-9)


def test_real_wall_limit(real, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_MIN_SAMPLES", "100000")
    monkeypatch.setenv("ZLB_MAX_WALL_MS", "1")
    _, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000), rep=1)
    assert rec["timer"] == "graph" and 0 < rec["n"] < 100000
    assert "TIMER_WALL_LIMIT" in rec["markers"] and rec["stop_reason"] == "wall"


def test_real_cold_l2(real, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_L2", "cold")
    real.fake_cuda_memset_count.restype = ctypes.c_ulonglong
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    before = real.fake_cuda_memset_count()
    value, rec = measure(op, rep=1)
    # The flush is outside the event pair (float32 elapsed time: 1e-7 off).
    assert value == pytest.approx(0.005, rel=1e-6)
    assert rec["calls_per_replay"] == 1 and rec["l2"] == "cold"
    assert rec["l2_flush_bytes"] == 60 << 20
    assert op.captured_calls == 1 and rec["placements"] == 1   # one graph of one call
    assert real.fake_cuda_memset_count() - before >= rec["n"]


def test_real_eight_placements(real, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_PLACEMENTS", "8")
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    value, rec = measure(op, rep=40)
    assert value == pytest.approx(0.005, rel=1e-6)
    # The estimates (1 and 8 calls), then 8 placements of K = 512 calls.
    assert op.captured_calls == 1 + 8 + 8 * 512
    assert rec["placements"] == 8 and rec["placement_spread"] == 0.0
    assert rec["n"] % 8 == 0 and rec["n"] >= 16
    assert stub_torch._stub.live_graphs == 0          # every placement released


def scatter_placements(stub, extra_ns, which):
    """A body for make_op: captures whose placement index (0 = the first
    graph after the 1- and 8-call estimates) satisfies which(index) cost
    extra_ns more per call. Returns (body, the captures seen)."""
    seen = []

    def body(*args):
        cap = stub.capture
        if cap is None:
            return
        if not hasattr(cap, "_test_index"):
            cap._test_index = len(seen)
            seen.append(cap)
        if cap._test_index >= 2 and which(cap._test_index - 2):
            stub.charge(extra_ns)

    return body, seen


def test_real_placements_are_sampled_alike(real, stub_torch, monkeypatch):
    """Placements that differ (here: every other captured graph costs 2% more
    per call) each weigh the same in the centre, and the spread says so."""
    monkeypatch.setenv("ZLB_PLACEMENTS", "8")
    stub = stub_torch._stub
    body, seen = scatter_placements(stub, 100, lambda i: i % 2)
    op = stub.make_op("op", cost_ns=5000, body=body)
    value, rec = measure(op, rep=40)
    assert len(seen) == 2 + 8 and rec["placements"] == 8
    samples = rec["samples_ms"]
    # Round-robin: sample i ran placement i % 8, so even and odd alternate.
    assert samples[0::2] == pytest.approx([0.005] * (len(samples) // 2), rel=1e-6)
    assert samples[1::2] == pytest.approx([0.0051] * (len(samples) // 2), rel=1e-6)
    assert value == pytest.approx(0.00505, rel=1e-6)
    assert rec["centre_ms"] == value
    assert rec["placement_spread"] == pytest.approx(0.0001 / 0.00505, rel=1e-4)
    # The t interval of the mean of 8 placements, 4 at each level:
    # 2.364624 (7 df) x sd / sqrt(8) over the mean.
    sd = 0.00005 * math.sqrt(8 / 7)
    assert rec["placement_noise"] == pytest.approx(
        2.3646242510102993 * sd / math.sqrt(8) / 0.00505, rel=1e-4)


def test_real_a_version_3_library_reports_the_pooled_median(real, stub_torch, monkeypatch):
    """Before ABI 4 there is no centre of the placements and no placement
    noise: the pooled median is the value."""
    monkeypatch.setenv("ZLB_PLACEMENTS", "8")
    monkeypatch.setitem(_graph._libs, TIMER_LIB, (_graph.TimerLib(TIMER_LIB, max_abi=3), None))
    stub = stub_torch._stub
    body, seen = scatter_placements(stub, 100, lambda i: i < 5)
    value, rec = measure(stub.make_op("op", cost_ns=5000, body=body), rep=40)
    assert rec["placements"] == 8 and len(seen) == 2 + 8
    assert value == rec["median_ms"] == rec["centre_ms"]
    assert value == pytest.approx(0.0051, rel=1e-6)      # 5 of 8 slow: their cluster
    assert rec["placement_noise"] is None


def test_real_one_placement(real, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_PLACEMENTS", "1")
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    _, rec = measure(op, rep=40)
    assert op.captured_calls == 1 + 8 + 512
    assert rec["placements"] == 1 and rec["placement_spread"] == 0.0


@pytest.mark.parametrize("pool_mib,want,captures", [
    (512, 3, 3),        # 1 GiB of extra placements: 1 + 2
    (4096, 1, 2),       # more than the budget: the probing second graph is let go
    (0, 8, 8),          # nothing new reserved (reused cached blocks): no cap
])
def test_real_placements_capped_by_their_memory(real, stub_torch, monkeypatch, pool_mib,
                                                want, captures):
    """Each live graph holds pool_mib of reserved memory, as a private pool would."""
    monkeypatch.setenv("ZLB_PLACEMENTS", "8")
    stub = stub_torch._stub
    monkeypatch.setattr(stub_torch.cuda, "memory_reserved",
                        lambda *a: stub.live_graphs * (pool_mib << 20), raising=False)
    monkeypatch.setattr(stub_torch.cuda, "mem_get_info",
                        lambda *a: (80 << 30, 141 << 30), raising=False)
    op = stub.make_op("op", cost_ns=5000)
    _, rec = measure(op, rep=40)
    assert rec["placements"] == want
    assert op.captured_calls == 1 + 8 + captures * 512
    assert stub.live_graphs == 0


def test_real_graph_inspection_and_markers(real, stub_torch, capsys, run_dir):
    _, k = measure_plain_copy(measure, stub_torch)
    out = capsys.readouterr().out
    assert "GRAPH_MEMCPY_NODES count=%d role=null\n" % k in out
    assert "GRAPH_NO_KERNELS nodes=%d role=null\n" % k in out
    assert len(events(run_dir, "GRAPH_MEMCPY_NODES")) == 1
    assert len(events(run_dir, "GRAPH_NO_KERNELS")) == 1


def test_real_library_driven_as_version_1(real, stub_torch, monkeypatch, run_dir):
    lib = _graph.TimerLib(TIMER_LIB, max_abi=1)
    assert lib.abi == 1 and lib.lib_abi >= 2 and not lib.v2
    assert lib.open()[0] == _graph.ZLBT_OK
    monkeypatch.setitem(_graph._libs, TIMER_LIB, (lib, None))
    # 2.56 ms per replay: 16 samples for rep=40 ms (float32 elapsed time: 1e-7 off).
    value, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000), rep=40)
    assert value == pytest.approx(0.005, rel=1e-6)
    assert rec["n"] == 16 and rec["calls_per_replay"] == 512
    assert rec["noise"] is None and rec["stop_reason"] is None and rec["graph"] is None
    assert any("ABI version 1" in e["detail"] for e in events(run_dir, "PLUGIN"))
    assert lib.summarize([1.0, 2.0, 3.0])["noise"] is None


def test_real_summarize_noise_agrees_with_python(real):
    lib, _ = _graph.timer_lib(TIMER_LIB)
    rng = random.Random(7)
    for n in list(range(1, 70)) + [100, 999, 2048]:
        samples = [rng.lognormvariate(0, 0.05) for _ in range(n)]
        assert lib.summarize(samples) == _stats.summarize(samples), n
    for samples in ([0.005] * 9, [2.0, 2.0, 2.0, 3.0, 2.0, 2.0, 2.0], [-1.0, 0.0, 1.0] * 3):
        assert lib.summarize(samples) == _stats.summarize(samples)


@pytest.mark.parametrize("floor", ["0", "1", "0.5"])
def test_real_clock_floor_values_are_accepted(real, stub_torch, monkeypatch, floor):
    monkeypatch.setenv("ZLB_CLOCK_FLOOR", floor)
    value, rec = measure(stub_torch._stub.make_op("op", cost_ns=5000))
    assert rec["timer"] == "graph" and value == pytest.approx(0.005, rel=1e-6)
    assert rec["clock_floor"] == float(floor)


def _fake_nvml():
    path = os.path.join(os.path.dirname(FAKECUDA), "libfakenvml.so")
    if not os.path.isfile(path):
        pytest.skip("no libfakenvml.so beside %s" % FAKECUDA)
    return path


def _measure_in_child(tmp_path, env_extra, rep=1, replay=None):
    """One graph measurement in a fresh process (libzlbtimer loads NVML once
    per process, so $ZLB_LIBNVML must be there from the start). replay: the
    (k, placements, power_duty) of the recording's graph plan entry, for a
    measurement that replays one."""
    script = textwrap.dedent("""
        import json
        import torch, triton
        from zlbench import timing, _graph, _state
        _state.original_do_bench = triton.testing.do_bench
        if %r is not None:
            timing._planned_shape = lambda ctx: _graph.GraphShape(*%r)
        op = torch._stub.make_op("op", cost_ns=5000)
        timing.do_bench(op, warmup=1, rep=%r, return_mode="median")
        print("RECORD", json.dumps(_state.pending[-1]["record"]))
    """ % (replay, replay, rep))
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": PYDIR + os.pathsep + STUBS,
           "ZLB_TIMER": "graph", "ZLB_TIMER_LIB": TIMER_LIB, "ZLB_LIBCUDA": FAKECUDA,
           "ZLB_LIBNVML": _fake_nvml()}
    env.update(ENGINE_ENV)
    env.update(env_extra)
    r = subprocess.run([PYTHON, "-c", script], env=env, capture_output=True, text=True,
                       cwd=str(tmp_path), timeout=120)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("RECORD "))
    return json.loads(line[len("RECORD "):])


def test_real_clock_is_read_and_recorded(real, tmp_path):
    rec = _measure_in_child(tmp_path, {"FAKE_NVML_SM_CLOCKS": "1980"})
    assert rec["timer"] == "graph"
    assert rec["clock_mhz"] == 1980.0 and rec["clock_min_mhz"] == 1980.0
    assert rec["discarded"] == 0 and rec["clock_floor"] == 0.97


def test_real_clock_check_off_reads_nothing(real, tmp_path):
    rec = _measure_in_child(tmp_path, {"FAKE_NVML_SM_CLOCKS": "1980",
                                       "ZLB_CLOCK_FLOOR": "0"})
    assert rec["clock_mhz"] is None and rec["discarded"] == 0


def test_real_low_clock_samples_are_discarded(real, tmp_path):
    rec = _measure_in_child(tmp_path, {"FAKE_NVML_SM_CLOCKS": "1980,1980,1980,1500,1980",
                                       "ZLB_NOISE_TARGET": "0"})
    assert rec["clock_min_mhz"] == 1500.0 and rec["clock_mhz"] == 1980.0
    assert rec["discarded"] >= 1 and rec["n"] >= 10


def test_real_clock_reasons_name_what_held_the_clock(real, tmp_path):
    """The SW power cap seen while batches ran is on the record; the idle
    bit (the GPU waiting for the host between batches) is not."""
    rec = _measure_in_child(tmp_path, {"FAKE_NVML_REASONS": "0x5"})
    assert rec["clock_reasons"] == ["sw_power_cap"]
    rec = _measure_in_child(tmp_path, {"FAKE_NVML_REASONS": "0x1"})
    assert rec["clock_reasons"] == []


def test_real_clock_reasons_are_those_of_the_kept_samples(real, tmp_path):
    """A batch dropped for its low clock takes its reasons with it; one kept
    keeps them. The second batch reads 1500 MHz (dropped) in both runs;
    each batch reads the reasons twice, as it reads its clock."""
    clocks = {"FAKE_NVML_SM_CLOCKS": "1980,1980,1980,1500,1980", "ZLB_NOISE_TARGET": "0"}
    rec = _measure_in_child(tmp_path, dict(clocks, FAKE_NVML_REASONS="0,0,0x4,0x4,0"))
    assert rec["discarded"] >= 1 and rec["clock_reasons"] == []
    rec = _measure_in_child(tmp_path, dict(clocks, FAKE_NVML_REASONS="0,0,0x4,0,0,0x20,0"))
    assert rec["clock_reasons"] == ["sw_thermal_slowdown"]
    # a bit seen only at a kept batch's end counts (and, the power cap's,
    # has the measurement sampled again unless --power-duty is 0)
    rec = _measure_in_child(tmp_path, dict(clocks, FAKE_NVML_REASONS="0,0x4,0",
                                           ZLB_POWER_DUTY="0"))
    assert rec["clock_reasons"] == ["sw_power_cap"] and rec["power_duty"] == 1.0


def test_real_clock_reasons_unknown_without_clock_reads(real, tmp_path):
    rec = _measure_in_child(tmp_path, {"FAKE_NVML_REASONS": "0x4", "ZLB_CLOCK_FLOOR": "0"})
    assert rec["clock_reasons"] is None


def test_reason_names_keep_unknown_bits_in_hex():
    from zlbench import _timerlib
    assert _timerlib.clock_reason_names(0x4 | 0x40) == ["sw_power_cap", "hw_thermal_slowdown"]
    assert _timerlib.clock_reason_names(0x1) == []
    assert _timerlib.clock_reason_names(0x1000 | 0x2) == ["app_clocks_setting", "0x1000"]


def test_real_power_capped_measurement_is_sampled_again_at_the_duty(real, tmp_path):
    """NVML said the SW power cap held the clock: the row's samples are those
    of a second sampling with the GPU idle half the time, and the record
    says what the first read."""
    rec = _measure_in_child(tmp_path, {"FAKE_NVML_REASONS": "0x4"})
    assert rec["power_duty"] == 0.5
    first = rec["power_duty_from"]
    assert first["clock_reasons"] == ["sw_power_cap"] and first["n"] >= 10
    assert first["why"] == "power_cap"
    # it stopped at min_samples once the cap showed (ABI 10): those samples
    # were to be thrown away
    assert first["stop_reason"] == "capped" and first["n"] == rec["min_samples"]
    assert first["median_ms"] == pytest.approx(0.005, rel=1e-6)
    assert rec["n"] >= 10 and rec["median_ms"] == pytest.approx(0.005, rel=1e-6)
    assert rec["phase_ms"]["duty"] > 0
    # its probes were read at the duty too, and all of them kept
    assert rec["placement_probes"] == 2 and rec["placement_probe_error"] is None


@pytest.mark.parametrize("env", [{"FAKE_NVML_REASONS": "0x20"},
                                 {"FAKE_NVML_REASONS": "0x4", "ZLB_POWER_DUTY": "0"}],
                         ids=["thermal-not-power", "duty-off"])
def test_real_measurement_is_not_sampled_again(real, tmp_path, env):
    rec = _measure_in_child(tmp_path, env)
    assert rec["power_duty"] == 1.0 and rec["power_duty_from"] is None
    assert "duty" not in rec["phase_ms"]


@pytest.mark.parametrize("recorded,env,why", [
    (0.5, {}, "recording"),                                 # no bit caught here
    (1.0, {"FAKE_NVML_REASONS": "0x4"}, "power_cap"),       # caught here only
    (None, {"FAKE_NVML_REASONS": "0x4"}, "power_cap"),
], ids=["recording-at-duty", "capped-here", "recording-did-not-say"])
def test_real_replay_samples_at_the_duty_its_recording_ran(real, tmp_path, recorded, env, why):
    """A replay whose recording sampled the row at the duty does too, though
    NVML named no reason in its own process: the cap's bit is caught or
    missed by chance, and both sides of an A/B must run one protocol."""
    rec = _measure_in_child(tmp_path, env, replay=(512, 1, recorded))
    assert rec["graph_shape"] == "replayed" and rec["calls_per_replay"] == 512
    assert rec["power_duty"] == 0.5 and rec["power_duty_from"]["why"] == why
    assert rec["phase_ms"]["duty"] > 0 and rec["n"] >= 10
    # sampled back to back first all the same (_graph._sample says why)
    assert rec["phase_ms"]["sample"] > 0 and rec["power_duty_from"]["n"] >= 10


@pytest.mark.parametrize("settle_ms", [0, 300])
def test_real_power_settle_idles_before_the_duty(real, tmp_path, settle_ms):
    """--power-settle idles the GPU between the capped sampling and the
    duty's, so every process starts the duty from the same power state;
    0 goes to the duty at once."""
    rec = _measure_in_child(tmp_path, {"FAKE_NVML_REASONS": "0x4",
                                       "ZLB_POWER_SETTLE_MS": str(settle_ms)})
    assert rec["power_duty"] == 0.5 and rec["power_duty_from"]["why"] == "power_cap"
    laps = list(rec["phase_ms"])
    if settle_ms:
        assert rec["phase_ms"]["power_settle"] >= settle_ms * 0.95
        assert laps.index("sample") < laps.index("power_settle") < laps.index("duty")
    else:
        assert "power_settle" not in laps


def test_power_settle_outside_its_range_is_refused(monkeypatch):
    from zlbench import _env
    monkeypatch.setenv("ZLB_POWER_SETTLE_MS", "-1")
    with pytest.raises(_env.EnvError, match="ZLB_POWER_SETTLE_MS"):
        _env.power_settle_ms()


@pytest.mark.parametrize("recorded", [1.0, None])
def test_real_replay_of_a_back_to_back_recording_stays_back_to_back(real, tmp_path, recorded):
    rec = _measure_in_child(tmp_path, {"FAKE_NVML_REASONS": "0"}, replay=(512, 1, recorded))
    assert rec["graph_shape"] == "replayed"
    assert rec["power_duty"] == 1.0 and rec["power_duty_from"] is None


def test_real_replay_at_duty_off_is_never_sampled_again(real, tmp_path):
    # --power-duty 0 is caliber: a replay under it never pauses, whatever A did
    rec = _measure_in_child(tmp_path, {"ZLB_POWER_DUTY": "0"}, replay=(512, 1, 0.5))
    assert rec["power_duty"] == 1.0 and rec["power_duty_from"] is None


def test_real_record_says_the_board_s_top_clock(real, tmp_path):
    rec = _measure_in_child(tmp_path, {"FAKE_NVML_MAX_CLOCK": "1755", "FAKE_NVML_SM_CLOCKS": "1755"})
    assert rec["clock_max_mhz"] == 1755 and rec["power_duty"] == 1.0


def test_real_clock_held_below_the_top_with_no_reason_is_sampled_again(real, tmp_path):
    """The cap's bit can be missed at every read (an H100's 4096^3 addmm at
    1665 MHz with none): a clock below the floor of the board's top, with
    NVML naming no reason, is taken for the cap."""
    rec = _measure_in_child(tmp_path, {"FAKE_NVML_SM_CLOCKS": "1500", "FAKE_NVML_REASONS": "0"})
    assert rec["power_duty"] == 0.5
    first = rec["power_duty_from"]
    assert first["clock_reasons"] == [] and first["clock_mhz"] == 1500
    assert first["clock_max_mhz"] == 1980 and first["why"] == "clock_held"


@pytest.mark.parametrize("env", [
    # 1930 MHz is within the floor (0.97) of 1980
    {"FAKE_NVML_SM_CLOCKS": "1930", "FAKE_NVML_REASONS": "0"},
    # a thermal slowdown held it: pauses do not lift it
    {"FAKE_NVML_SM_CLOCKS": "1500", "FAKE_NVML_REASONS": "0x20"},
    # nvidia-smi -ac 1500: the clock is the user's choice
    {"FAKE_NVML_SM_CLOCKS": "1500", "FAKE_NVML_REASONS": "0", "FAKE_NVML_APP_CLOCK": "1500",
     "FAKE_NVML_DEFAULT_APP_CLOCK": "1980"},
], ids=["within-floor", "thermal", "app-clocks-set"])
def test_real_clock_below_the_top_for_a_named_reason_is_not_sampled_again(real, tmp_path, env):
    rec = _measure_in_child(tmp_path, env)
    assert rec["power_duty"] == 1.0 and rec["power_duty_from"] is None
    if "FAKE_NVML_APP_CLOCK" in env:
        assert rec["clock_max_mhz"] is None


def test_clock_held_needs_every_reading():
    held = {"clock_max_mhz": 1980, "clock_mhz": 1500.0, "clock_reasons": []}
    assert _graph.clock_held(held, 0.97)
    for key in held:
        assert not _graph.clock_held(dict(held, **{key: None}), 0.97)
    assert not _graph.clock_held(held, 0.0)      # the clock check is off


def test_power_duty_outside_its_range_is_refused(monkeypatch):
    from conftest import ENGINE_ENV
    for k, v in ENGINE_ENV.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("ZLB_POWER_DUTY", "1")
    with pytest.raises(_env.EnvError, match="ZLB_POWER_DUTY"):
        timing._settings()
