"""The placement probes (ZLB_PLACEMENT_PROBES): after a one-graph
measurement, more graphs of the same K calls on memory of their own, timed
briefly; their spread is the row's placement_sd, which zlb compare takes as
a single round's drift. They must leave the measured number alone.

Placement is modelled by the stub op's capture_cost_ns: a call captured
into the op's i-th graph costs what that graph's buffers would. The
measurement captures graphs 0 and 1 (the 1- and 8-call estimates) and 2
(K calls); the probes are graphs 3, 4, 5, each a capture of
_graph.PROBE_UNIT calls that libzlbtimer repeats K / PROBE_UNIT times
(zlbt_graph_repeat) on the fake driver.
"""

import ctypes
import math
import os

import pytest

from zlbench import _graph, _state, _timerlib, timing


@pytest.fixture(autouse=True)
def repeats_read_their_unit(monkeypatch):
    """The fake driver replays a copied graph's kernels in
    $FAKE_CUDA_KERNEL_NS each (read when the copy is made); set it to what
    a call of the unit being repeated costs, so that a repeated probe reads
    what its capture modelled, as a whole capture of it would."""
    real_repeat = _timerlib.TimerLib.graph_repeat

    def graph_repeat(self, graph, copies):
        import torch

        unit = torch._stub.last_graph
        monkeypatch.setenv("FAKE_CUDA_KERNEL_NS", str(unit.cost_ns // unit.nodes["kernel"]))
        return real_repeat(self, graph, copies)
    monkeypatch.setattr(_timerlib.TimerLib, "graph_repeat", graph_repeat)


def live_built(fake):
    """(graphs, execs) libzlbtimer built on the fake driver and not destroyed."""
    fake.fake_cuda_live_graphs.restype = ctypes.c_long
    fake.fake_cuda_live_execs.restype = ctypes.c_long
    return fake.fake_cuda_live_graphs(), fake.fake_cuda_live_execs()


def measure(fn, rep=40):
    value = timing.do_bench(fn, warmup=1, rep=rep, return_mode="median")
    return value, _state.pending[-1]["record"]


def by_graph(costs, base=5000):
    return lambda i: costs[i - 3] if i >= 3 else base


def test_probes_measure_the_spread_and_leave_the_number(real, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_PLACEMENT_PROBES", "3")
    probes = [5100, 4900, 5300]
    op = stub_torch._stub.make_op("op", capture_cost_ns=by_graph(probes))
    launches = real.fake_cuda_launch_count()
    value, rec = measure(op)
    # The row is the measured graph's: 5 us, K = 512, as without probes.
    assert value == pytest.approx(0.005, rel=1e-6)
    assert rec["centre_ms"] == pytest.approx(0.005, rel=1e-6)
    assert rec["calls_per_replay"] == 512 and rec["placements"] == 1
    assert rec["placement_probes"] == 3 and rec["placement_probe_error"] is None
    assert rec["placement_sd"] == pytest.approx(_graph.log_sd([5000] + probes), rel=1e-4)
    assert rec["placement_probe_ms"] == pytest.approx([c / 1e6 for c in probes], rel=1e-5)
    assert rec["placement_probe_ref_ms"] == pytest.approx([0.005] * 3, rel=1e-5)
    assert rec["placement_probe_draws"] == pytest.approx([math.log(c / 5000) for c in probes],
                                                         abs=1e-4)
    assert rec["placement_probe_protocol"] == "paired"
    assert rec["placement_probe_build"] == "repeat"
    # The pairs as timed, both orders, each probe against the measured graph.
    pairs = rec["placement_probe_pairs"]
    assert [len(p) for p in pairs] == [_graph.PROBE_PAIRS] * 3
    for probe, cost in zip(pairs, probes):
        assert {first for first, *_ in probe} == {0, 1}
        for first, ref_ms, ref_mhz, probe_ms, probe_mhz in probe:
            assert (ref_ms, probe_ms) == pytest.approx((0.005, cost / 1e6), rel=1e-4)
            assert ref_mhz is None and probe_mhz is None    # no NVML under the fake driver
    # Three more graphs of K calls, each a captured unit of 8 repeated 64
    # times; then each probe and the measured graph in PROBE_PAIRS pairs of
    # one untimed and one timed replay each.
    assert len(op.graphs) == 6
    assert op.captured_calls == 1 + 8 + 512 + 3 * _graph.PROBE_UNIT
    assert real.fake_cuda_launch_count() - launches == \
        3 * (1 + 5) + (1 + 16) + 3 * _graph.PROBE_PAIRS * 2 * (1 + 1)
    assert stub_torch._stub.live_graphs == 0
    assert live_built(real) == (0, 0)


def test_a_refused_repeat_falls_back_to_whole_captures(real, stub_torch, monkeypatch):
    # The driver cannot build the repeat (cuGraphCreate fails): the first
    # probe's unit is let go and K calls captured instead, and the other
    # probes go straight to whole captures. The draws are the same; the
    # record says how they were built, and why.
    monkeypatch.setenv("ZLB_PLACEMENT_PROBES", "3")
    monkeypatch.setenv("FAKE_CUDA_GRAPH_CREATE_FAIL", "1")
    probes = [5100, 4900, 5300]
    costs = [5000, 5000, 5000, 5100, 5100, 4900, 5300]     # graph 3: the unit let go
    op = stub_torch._stub.make_op("op", capture_cost_ns=lambda i: costs[i])
    value, rec = measure(op)
    assert value == pytest.approx(0.005, rel=1e-6)
    assert rec["placement_probes"] == 3 and rec["placement_probe_error"] is None
    assert rec["placement_probe_draws"] == pytest.approx([math.log(c / 5000) for c in probes],
                                                         abs=1e-4)
    assert rec["placement_probe_build"].startswith("capture: zlbt_graph_repeat ")
    assert "cuGraphCreate" in rec["placement_probe_build"]
    assert len(op.graphs) == 7
    assert op.captured_calls == 1 + 8 + 512 + _graph.PROBE_UNIT + 3 * 512
    assert stub_torch._stub.live_graphs == 0
    assert live_built(real) == (0, 0)


def test_a_library_without_repeat_captures_whole(real, stub_torch, monkeypatch):
    # ABI 4 (zlb's libzlbtimer before zlbt_graph_repeat): whole captures,
    # no reason given, since nothing failed.
    monkeypatch.setenv("ZLB_PLACEMENT_PROBES", "2")
    lib, _ = _timerlib.timer_lib(os.environ["ZLB_TIMER_LIB"])
    monkeypatch.setattr(lib, "has_graph_repeat", False)
    op = stub_torch._stub.make_op("op", capture_cost_ns=by_graph([5100, 4900]))
    _, rec = measure(op)
    assert rec["placement_probe_build"] == "capture"
    assert rec["placement_probe_draws"] == pytest.approx(
        [math.log(5100 / 5000), math.log(4900 / 5000)], abs=1e-4)
    assert op.captured_calls == 1 + 8 + 3 * 512


@pytest.mark.parametrize("k,unit", [(4096, 8), (512, 8), (16, 8), (12, 4), (6, 2), (7, 1),
                                    (8, 0), (4, 0), (1, 0)])
def test_probe_unit_divides_k(k, unit):
    assert _graph._probe_unit(k) == unit


def test_no_probes_asked(real, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_PLACEMENT_PROBES", "0")
    op = stub_torch._stub.make_op("op", capture_cost_ns=by_graph([9000, 9000, 9000]))
    value, rec = measure(op)
    assert value == pytest.approx(0.005, rel=1e-6)
    assert (rec["placement_probes"], rec["placement_sd"]) == (0, None)
    assert rec["placement_probe_ms"] is None and rec["placement_probe_error"] is None
    assert len(op.graphs) == 3


def test_several_placements_are_not_probed(real, stub_torch, monkeypatch):
    # Their own spread is in the samples (strata), which zlb compare reads.
    monkeypatch.setenv("ZLB_PLACEMENT_PROBES", "3")
    monkeypatch.setenv("ZLB_PLACEMENTS", "4")
    op = stub_torch._stub.make_op("op", cost_ns=5000)
    _, rec = measure(op)
    assert rec["placements"] == 4
    assert (rec["placement_probes"], rec["placement_sd"]) == (0, None)


def test_a_failing_probe_keeps_the_measurement(real, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_PLACEMENT_PROBES", "3")

    def cost(i):
        if i == 4:
            raise stub_torch._stub.cuda_error("out of memory")
        return 5000 if i < 3 else 5200
    op = stub_torch._stub.make_op("op", capture_cost_ns=cost)
    value, rec = measure(op)
    assert value == pytest.approx(0.005, rel=1e-6)
    assert rec["timer"] == "graph" and rec["markers"] == []
    # Graph 3 was captured, graph 4 failed: nothing was timed.
    assert rec["placement_probes"] == 0 and rec["placement_sd"] is None
    assert rec["placement_probe_error"].startswith("capture: ")
    assert "out of memory" in rec["placement_probe_error"]
    assert rec["placement_probe_ms"] is None
    assert stub_torch._stub.live_graphs == 0


def test_probes_capped_by_their_memory(real, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_PLACEMENT_PROBES", "3")
    stub = stub_torch._stub
    monkeypatch.setattr(stub_torch.cuda, "memory_reserved",
                        lambda *a: stub.live_graphs * (512 << 20), raising=False)
    monkeypatch.setattr(stub_torch.cuda, "mem_get_info",
                        lambda *a: (80 << 30, 141 << 30), raising=False)
    op = stub.make_op("op", capture_cost_ns=by_graph([5100, 4900, 5300]))
    _, rec = measure(op)
    # 1 GiB for the probes' graphs: two of them.
    assert rec["placement_probes"] == 2
    assert rec["placement_probe_error"] == "memory: a graph reserves 512 MiB, room for 2 probes of 3"
    assert rec["placement_sd"] == pytest.approx(_graph.log_sd([5000, 5100, 4900]), rel=1e-4)


def test_each_graph_says_whether_it_took_new_memory(real, stub_torch, monkeypatch):
    # The allocator grows by what a graph's capture could not take from its
    # cache: here the measured graph (graph 2) takes 6 MiB of new memory,
    # the first probe reuses cached blocks, the second gets 256 MiB.
    monkeypatch.setenv("ZLB_PLACEMENT_PROBES", "2")
    stub = stub_torch._stub
    op = stub.make_op("op", capture_cost_ns=by_graph([5100, 4900]))
    grows = {0: 2 << 20, 1: 2 << 20, 2: 6 << 20, 3: 0, 4: 256 << 20}
    monkeypatch.setattr(stub_torch.cuda, "memory_reserved",
                        lambda *a: sum(grows[i] for i in range(len(op.graphs))), raising=False)
    monkeypatch.setattr(stub_torch.cuda, "mem_get_info",
                        lambda *a: (80 << 30, 141 << 30), raising=False)
    _, rec = measure(op)
    assert len(op.graphs) == 5 and rec["placement_probes"] == 2
    assert rec["placement_probe_pool_mib"] == [6.0, 0.0, 256.0]
    # An allocator that cannot say is no reading, not "nothing new".
    monkeypatch.delattr(stub_torch.cuda, "memory_reserved")
    _, rec = measure(stub.make_op("op2", capture_cost_ns=by_graph([5100, 4900])))
    assert rec["placement_probes"] == 2
    assert rec["placement_probe_pool_mib"] == [None, None, None]
    # No probe, no growth to tell of.
    monkeypatch.setenv("ZLB_PLACEMENT_PROBES", "0")
    _, rec = measure(stub.make_op("op3"))
    assert rec["placement_probe_pool_mib"] is None


def test_cold_l2_probes_flush_too(real, stub_torch, monkeypatch):
    monkeypatch.setenv("ZLB_PLACEMENT_PROBES", "2")
    monkeypatch.setenv("ZLB_L2", "cold")
    op = stub_torch._stub.make_op("op", capture_cost_ns=lambda i: 5000 if i == 0 else 6000)
    value, rec = measure(op, rep=1)
    # Cold: one graph of one call, no estimate; probes are graphs 1 and 2.
    assert value == pytest.approx(0.005, rel=1e-6) and rec["l2"] == "cold"
    assert rec["placement_probes"] == 2
    assert rec["placement_sd"] == pytest.approx(_graph.log_sd([5000, 6000, 6000]), rel=1e-4)


def test_log_sd():
    assert _graph.log_sd([]) is None and _graph.log_sd([1.0]) is None
    assert _graph.log_sd([2.0, 2.0]) == 0.0
    assert _graph.log_sd([1.0, math.e]) == pytest.approx(math.sqrt(0.5))


def pair(first, ref_ms, probe_ms, ref_mhz=1980.0, probe_mhz=1980.0):
    return (first, (ref_ms, ref_mhz), (probe_ms, probe_mhz))


def test_pair_order_alternates():
    assert _graph.probe_pair_order(4) == [(0, 1), (1, 0), (0, 1), (1, 0)]


def test_a_clock_moving_within_pairs_is_not_placement():
    # At a power cap the clock falls over the pairs: whichever graph is
    # timed second reads 1% slower than the first. Taken in both orders
    # that is no offset of the probe's placement; one order alone would
    # read +1% or -1%.
    pairs = [pair(0, 0.010, 0.0101), pair(1, 0.0101, 0.010)] * 3
    got = _graph.probe_pair_draw(pairs, 0.97)
    assert got["draw"] == pytest.approx(0.0, abs=1e-12) and got["off"] == 0
    assert _graph.probe_pair_draw(pairs[0::2], 0.97)["draw"] == pytest.approx(math.log(1.01))
    # a probe 2% slower than the measured graph in every pair: a placement
    # that a second process could draw
    slow = [pair(f, r, p * 1.02) for f, (r, _), (p, _) in pairs]
    assert _graph.probe_pair_draw(slow, 0.97)["draw"] == pytest.approx(math.log(1.02),
                                                                       abs=1e-12)


def test_a_pair_whose_clock_moved_is_left_out():
    # the second pair's clock fell 4.1% between its replays; the third
    # rose 5%: both left out, the draw is the other pairs'
    pairs = [pair(0, 0.010, 0.0101, 1530.0, 1530.0),
             pair(1, 0.010, 0.0130, 1530.0, 1467.0),
             pair(0, 0.010, 0.0080, 1500.0, 1575.0),
             pair(1, 0.010, 0.0101, 1515.0, 1515.0)]
    got = _graph.probe_pair_draw(pairs, 0.97)
    assert got["draw"] == pytest.approx(math.log(1.01)) and got["off"] == 0
    assert got["probe_ms"] == pytest.approx(0.0101) and got["mhz"] == pytest.approx(1522.5)
    # no clock check, or no clock known: every pair counts
    assert _graph.probe_pair_draw(pairs, 0.0)["draw"] != pytest.approx(math.log(1.01))
    nock = [pair(f, r, p, None, None) for f, (r, _), (p, _) in pairs]
    assert _graph.probe_pair_draw(nock, 0.97)["draw"] != pytest.approx(math.log(1.01))
    # every pair left out: no draw, and the probe counts as off for its clock
    got = _graph.probe_pair_draw(pairs[1:3], 0.97)
    assert got["draw"] is None and got["off"] == 1
    # a replay without a time is no pair, and not a clock
    got = _graph.probe_pair_draw([pair(0, None, 0.01)], 0.97)
    assert got["draw"] is None and got["off"] == 0


def test_spread_keeps_holes_out_and_says_why():
    sd, kept = _graph.probe_spread([math.log(1.01), None, math.log(0.98)])
    assert kept == 2 and sd == pytest.approx(_graph.log_sd([1.0, 1.01, 0.98]), rel=1e-9)
    assert _graph.probe_spread([None, None]) == (None, 0)
    assert _graph.clock_sentence(0, 3, 0.97) is None
    assert _graph.clock_sentence(2, 3, 0.97) == (
        "clock: 2 of 3 probes left out, the clock moving by more than 3% within each of "
        "their pairs")


def _tuned_then_measured(stub_torch):
    """An op whose first eager call tunes: a nested do_bench of a config,
    as an autotuner's benchmarker does. Returns (op, config)."""
    config = stub_torch._stub.make_op("config", cost_ns=4000)
    tuned = []

    def first_call_tunes(*args):
        if not tuned:
            tuned.append(timing.do_bench(config, warmup=1, rep=40,
                                         quantiles=(0.5, 0.2, 0.8)))
    op = stub_torch._stub.make_op("op", capture_cost_ns=by_graph([5100, 4900, 5300]),
                                  body=first_call_tunes)
    return op, config


def test_a_tuning_measurement_is_not_probed(real, stub_torch, monkeypatch):
    # A config's time makes no row: no probes there (ZLB_TUNE_PLACEMENT_PROBES
    # 0, zlb's default), while the row measured around it keeps its own.
    monkeypatch.setenv("ZLB_PLACEMENT_PROBES", "3")
    monkeypatch.setenv("ZLB_TUNE_PLACEMENT_PROBES", "0")
    op, config = _tuned_then_measured(stub_torch)
    _, rec = measure(op)
    assert rec["placement_probes"] == 3
    assert len(op.graphs) == 6
    # the config: 1- and 8-call estimates and K = 512 calls, no probe
    assert config.captured_calls == 1 + 8 + 512
    assert len(_state.pending) == 1     # the config's time is no row


def _noise_targets(monkeypatch):
    """The noise target of each graph measurement as it starts: the row,
    then the config its first call tunes."""
    seen = []
    inner = _graph.measure

    def spy(*args, rule=None, **kwargs):
        seen.append(rule.noise_target)
        return inner(*args, rule=rule, **kwargs)

    monkeypatch.setattr(_graph, "measure", spy)
    return seen


@pytest.mark.parametrize("tune_rule,config_target", [("rows", 0.001), ("budget", 0.0)])
def test_the_tune_rule_stops_a_config_and_leaves_the_row(real, stub_torch, monkeypatch,
                                                         tune_rule, config_target):
    # --tune-rule budget: the tuner's rep and the minimum samples for a
    # config, no noise target; the row measured around it keeps the rows' rule.
    monkeypatch.setenv("ZLB_NOISE_TARGET", "0.001")
    monkeypatch.setenv("ZLB_TUNE_RULE", tune_rule)
    seen = _noise_targets(monkeypatch)
    op, _ = _tuned_then_measured(stub_torch)
    _, rec = measure(op)
    assert seen == [0.001, config_target]      # the row, then the config inside it
    assert rec["noise_target"] == 0.001


def test_a_config_gets_neither_the_preload_nor_the_elasticity_phase(real, stub_torch,
                                                                    monkeypatch):
    # The rows' --preload and --clock-elasticity are for rows: a config timed
    # with them would cost a second of replays, or a burn, apiece.
    monkeypatch.setenv("ZLB_PRELOAD_MS", "50")
    monkeypatch.setenv("ZLB_CLOCK_ELASTICITY", "1")
    seen = []
    inner = _graph.measure

    def spy(*args, rule=None, **kwargs):
        seen.append((rule.preload_ms, rule.clock_elasticity))
        return inner(*args, rule=rule, **kwargs)

    monkeypatch.setattr(_graph, "measure", spy)
    op, _ = _tuned_then_measured(stub_torch)
    _, rec = measure(op)
    assert seen == [(50.0, True), (0.0, False)]     # the row, then the config inside it
    assert "preload" in rec["phase_ms"]


def test_tune_rule_triton_hands_a_config_to_tritons_own_do_bench(real, stub_torch,
                                                                  monkeypatch):
    # --tune-rule triton: the H200 showed budget saving nothing (42 configs in
    # 18.46 s against 18.56 s): a config's cost is zlb's engine around it. Under
    # "triton" the config is Triton's do_bench's, as in FlagGems' harness; the
    # row measured around it keeps zlb's timer and rule, and the tally counts it.
    import triton.testing as tt

    monkeypatch.setenv("ZLB_TUNE_RULE", "triton")
    seen = _noise_targets(monkeypatch)
    before = tt.calls
    _state.tune_calls, _state.tune_s = 0, 0.0
    op, config = _tuned_then_measured(stub_torch)
    _, rec = measure(op)
    assert seen == [rec["noise_target"]]       # zlb's engine measured the row only
    assert tt.calls == before + 1              # the config went to Triton's do_bench
    assert config.captured_calls == 0          # and was never captured
    assert rec["timer"] == "graph"
    assert len(_state.pending) == 1            # the config's time is no row
    assert _state.tune_calls == 1 and _state.depth == 0


def test_tuning_probes_as_asked(real, stub_torch, monkeypatch):
    # --tune-placement-probes 3: how runs before the knob tuned.
    monkeypatch.setenv("ZLB_PLACEMENT_PROBES", "3")
    monkeypatch.setenv("ZLB_TUNE_PLACEMENT_PROBES", "3")
    op, config = _tuned_then_measured(stub_torch)
    measure(op)
    assert config.captured_calls == 1 + 8 + 512 + 3 * _graph.PROBE_UNIT


@pytest.mark.parametrize("duty,want", [(0.5, 1 / 3), (0.25, 0.25 / 1.75), (0.0, 0.0), (1.0, 0.0)])
def test_a_single_read_leaves_the_gpu_busy_the_measurement_s_duty(duty, want):
    # ABI 7: one untimed replay, one timed, then (1/d - 1) timed replays of
    # pause: busy 2 of 2 + (1/d - 1) replays = the measurement's duty
    class Abi7:
        v8 = False
    d = _graph.single_read_duty(Abi7, duty)
    assert d == pytest.approx(want)
    if d:
        assert 2 / (2 + (1 / d - 1)) == pytest.approx(duty)


@pytest.mark.parametrize("duty,want", [(0.5, 0.5), (0.25, 0.25), (0.0, 0.0), (1.0, 0.0)])
def test_from_abi_8_the_library_counts_the_untimed_replay_itself(duty, want):
    class Abi8:
        v8 = True
    assert _graph.single_read_duty(Abi8, duty) == want
