"""Rows: update_result wrapped, metrics paired with measurements in order."""

import importlib.util
import os
import sys
from dataclasses import asdict

import pytest

from conftest import UPSTREAM, events, rows

from zlbench import _state, results


def rec(tag):
    return {"timer": "direct", "tag": tag}


def pend(value, tag, role=None):
    _state.pending.append({"value": value, "record": rec(tag), "role_hint": role,
                           "op_name": "x", "dtype": "torch.float16"})


def result(fake_bench, metrics, op_name="softmax"):
    from benchmark.consts import BenchmarkResult

    return BenchmarkResult(op_name=op_name, dtype="torch.float16", mode="kernel",
                           level="core", result=metrics)


def metric(**kw):
    from benchmark.consts import BenchmarkMetrics

    return BenchmarkMetrics(**kw)


@pytest.fixture
def wrapped(fake_bench, run_dir):
    calls = []
    fn = results.wrap_update_result(lambda op, data: calls.append((op, data)))
    return fn, calls


def test_rows_pair_torch_then_gems_in_order(fake_bench, wrapped, run_dir, stub_torch):
    fn, calls = wrapped
    torch = stub_torch
    pend(0.5, "t0", "torch")
    pend(0.25, "g0", "gems")
    pend(2.0, "t1", "torch")
    pend(1.0, "g1", "gems")
    r = result(fake_bench, [
        metric(shape_detail=[torch.Size([1024, 1024]), 1], latency_base=0.5,
               latency=0.25, speedup=2.0),
        metric(shape_detail=[torch.Size([4096, 4096]), 1], latency_base=2.0,
               latency=1.0, speedup=2.0, gbps=3.5, gbps_base=1.75),
    ])
    data = asdict(r)
    fn("softmax", data)
    assert calls == [("softmax", data)]              # the original is always called
    r0, r1 = rows(run_dir)
    assert r0["torch"] == rec("t0") and r0["gems"] == rec("g0")
    assert r1["torch"] == rec("t1") and r1["gems"] == rec("g1")
    assert [r0["index"], r1["index"]] == [0, 1]
    assert r0["shape_detail"] == "[torch.Size([1024, 1024]), 1]"
    assert r1["latency_base_ms"] == 2.0 and r1["latency_ms"] == 1.0
    assert r1["gbps"] == 3.5 and r1["gbps_base"] == 1.75 and r1["tflops"] is None
    assert r0["status"] == "SUCCESS" and r0["error"] is None
    assert (r0["op_name"], r0["dtype"], r0["mode"], r0["level"]) == \
        ("softmax", "torch.float16", "kernel", "core")
    assert r0["kind"] == "row" and r0["schema_version"] == 1
    assert _state.pending == []
    assert events(run_dir, "WARNING") == []


def test_only_measured_sides_are_paired(fake_bench, wrapped, run_dir):
    fn, _ = wrapped
    pend(0.25, "g0")
    fn("softmax", asdict(result(fake_bench, [metric(latency=0.25)])))
    (r,) = rows(run_dir)
    assert r["torch"] is None and r["gems"] == rec("g0")


def test_a_mismatch_is_null_and_a_warning_not_a_misattribution(fake_bench, wrapped,
                                                              run_dir):
    fn, _ = wrapped
    pend(0.5, "t0")
    pend(0.3, "g0")                                   # not what gems returned
    fn("softmax", asdict(result(fake_bench, [metric(latency_base=0.5, latency=0.25)])))
    (r,) = rows(run_dir)
    assert r["torch"] == rec("t0")
    assert r["gems"] is None
    (w,) = events(run_dir, "WARNING")
    assert "no measurement returned the gems latency 0.25" in w["message"]
    assert [p["record"]["tag"] for p in _state.pending] == ["g0"]   # left, not used


def test_stray_measurements_are_skipped_with_a_warning(fake_bench, wrapped, run_dir):
    fn, _ = wrapped
    pend(9.0, "stray")
    pend(0.5, "t0")
    pend(0.25, "g0")
    fn("softmax", asdict(result(fake_bench, [metric(latency_base=0.5, latency=0.25)])))
    (r,) = rows(run_dir)
    assert r["torch"] == rec("t0") and r["gems"] == rec("g0")
    (w,) = events(run_dir, "WARNING")
    assert "matched no metric" in w["message"]


def test_role_hint_disagreement_is_reported(fake_bench, wrapped, run_dir):
    fn, _ = wrapped
    pend(0.5, "t0", "gems")
    fn("softmax", asdict(result(fake_bench, [metric(latency_base=0.5)])))
    (r,) = rows(run_dir)
    assert r["torch"] == rec("t0")
    (w,) = events(run_dir, "WARNING")
    assert w["role"] == "torch" and w["role_hint"] == "gems"


def test_failed_metric_row(fake_bench, wrapped, run_dir):
    fn, _ = wrapped
    fn("softmax", asdict(result(fake_bench, [metric(error_msg="boom")])))
    (r,) = rows(run_dir)
    assert r["status"] == "FAILED" and r["error"] == "boom"
    assert r["shape_detail"] == "N/A"


def _upstream_consts():
    """FlagGems' own benchmark/consts.py, loaded against the stub torch."""
    path = os.path.join(UPSTREAM, "benchmark", "consts.py")
    if not os.path.isfile(path):
        pytest.skip("no FlagGems checkout at %s" % UPSTREAM)
    import flag_gems  # noqa: F401  (the fake: consts reads flag_gems.device)

    spec = importlib.util.spec_from_file_location("upstream_consts", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["upstream_consts"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("detail", [
    "[S([1024, 1024]), 1]",
    "([S([2, 3, 32, 32])], {'kernel_size': 3, 'stride': 2, 'divisor_override': None})",
    "[S([64, 64]), S([64, 64])]",
    "[S([4, 16, 64, 4]), [16, 64, 4], S([16, 64, 4]), S([16, 64, 4])]",
    "[S([256, 256]), -1, False, torch.float16, {'out': S([256])}]",
])
def test_shape_detail_is_the_text_of_upstreams_table(fake_bench, wrapped, run_dir,
                                                     stub_torch, detail):
    """The row's shape_detail equals what upstream's table prints after its ten
    spaces: checked against the fake tree's table and, where the FlagGems
    checkout is present, against upstream's own BenchmarkResult.__str__."""
    torch = stub_torch
    value = eval(detail, {"S": torch.Size, "torch": torch})
    fn, _ = wrapped
    pend(0.5, "t")
    pend(0.25, "g")
    from benchmark import consts as fake_consts

    tables = [fake_consts]
    up = None
    if os.path.isdir(UPSTREAM):
        up = _upstream_consts()
        tables.append(up)
    for mod in tables:
        m = mod.BenchmarkMetrics(shape_detail=value, latency_base=0.5, latency=0.25,
                                 speedup=2.0)
        r = mod.BenchmarkResult(op_name="softmax", dtype="torch.float16", mode="kernel",
                                level="core", result=[m])
        line = str(r).splitlines()[-1]
        assert line.startswith("SUCCESS")
        printed = line[10 + 3 * 20 + 10:]
        if mod is fake_consts:
            fn("softmax", asdict(r))
            (row,) = rows(run_dir)
            assert row["shape_detail"] == printed
        else:
            assert printed == rows(run_dir)[0]["shape_detail"]
            # and the whole table is the same text as the fake tree's
            fm = fake_consts.BenchmarkMetrics(shape_detail=value, latency_base=0.5,
                                              latency=0.25, speedup=2.0)
            fr = fake_consts.BenchmarkResult(op_name="softmax", dtype="torch.float16",
                                             mode="kernel", level="core", result=[fm])
            assert str(fr) == str(r)


def test_upstream_table_with_gbps_and_tflops_columns_matches(fake_bench, stub_torch):
    up = _upstream_consts()
    from benchmark import consts as fake_consts

    def table(mod, **kw):
        ms = [mod.BenchmarkMetrics(shape_detail=[stub_torch.Size([8, 8])], latency_base=0.5,
                                   latency=0.25, speedup=2.0, **kw),
              mod.BenchmarkMetrics(shape_detail=None, error_msg="x", **kw)]
        return str(mod.BenchmarkResult(op_name="op", dtype="torch.float16",
                                       mode="kernel", level="core", result=ms))

    for kw in ({}, {"gbps": 1.5, "gbps_base": 3.0}, {"tflops": 12.25},
               {"tflops": 0.0, "gbps": 2.0}):
        assert table(fake_consts, **kw) == table(up, **kw)


def test_patch_finds_benchmark_base_once(fake_bench, run_dir):
    import benchmark.base as base
    import benchmark.conftest as bconftest
    import benchmark.consts as consts
    import benchmark.test_convert_weight_to_int4pack as int4pack

    orig, to_json = base.update_result, consts.BenchmarkResult.to_json
    try:
        # base's global, conftest's own, the name int4pack imported itself, and
        # to_json on the class
        assert results.patch_result_sinks() == 4
        assert base.update_result.__wrapped__ is orig
        assert int4pack.update_result is base.update_result is bconftest.update_result
        assert consts.BenchmarkResult.to_json.__wrapped__ is to_json
        assert results.patch_result_sinks() == 0
    finally:
        base.update_result = int4pack.update_result = bconftest.update_result = orig
        consts.BenchmarkResult.to_json = to_json


def _sinks(fake_bench):
    """update_result and to_json wrapped, as patch_result_sinks leaves them."""
    calls = []
    update = results.wrap_update_result(lambda op, data: calls.append((op, data)))
    to_json = results.wrap_to_json(type(result(fake_bench, [])).to_json)
    return update, to_json, calls


def test_base_run_hands_a_result_on_twice_and_gets_one_row(fake_bench, run_dir):
    update, to_json, calls = _sinks(fake_bench)
    pend(0.5, "t0")
    pend(0.25, "g0")
    r = result(fake_bench, [metric(shape_detail=[1024], latency_base=0.5, latency=0.25)])
    update("softmax", asdict(r))                     # base.py: update_result, then
    to_json(r)                                       # emit_record_logger(to_json())
    (row,) = rows(run_dir)
    assert row["torch"] == rec("t0") and row["gems"] == rec("g0")
    assert len(calls) == 1 and events(run_dir, "WARNING") == []


def test_a_result_that_only_goes_to_json_gets_its_rows(fake_bench, run_dir, stub_torch):
    _, to_json, _ = _sinks(fake_bench)               # test_blas_perf_parallel.py's run()
    pend(0.5, "t0")
    pend(0.25, "g0")
    r = result(fake_bench, [metric(shape_detail=[stub_torch.Size([16, 1024])],
                                   latency_base=0.5, latency=0.25)], op_name="addr")
    assert to_json(r) == r.to_json()                 # the class's own, unwrapped here
    (row,) = rows(run_dir)
    assert row["op_name"] == "addr" and row["gems"] == rec("g0")
    assert row["shape_detail"] == "[torch.Size([16, 1024])]"   # as the table prints it


def test_update_result_given_json_after_to_json_writes_once(fake_bench, run_dir):
    update, to_json, calls = _sinks(fake_bench)      # test_convert_weight_to_int4pack.py
    pend(0.5, "t0")
    pend(0.25, "g0")
    pend(2.0, "t1")
    pend(1.0, "g1")
    r = result(fake_bench, [metric(shape_detail=[8], latency_base=0.5, latency=0.25),
                            metric(shape_detail=[9], latency_base=2.0, latency=1.0)])
    update("softmax", to_json(r))
    assert [x["gems"] for x in rows(run_dir)] == [rec("g0"), rec("g1")]
    assert calls and isinstance(calls[0][1], str)    # the original got the string


def test_update_result_given_json_alone_writes_rows(fake_bench, run_dir):
    update, _, _ = _sinks(fake_bench)
    pend(0.5, "t0")
    pend(0.25, "g0")
    r = result(fake_bench, [metric(shape_detail=[8], latency_base=0.5, latency=0.25)])
    update("softmax", type(r).to_json(r))
    (row,) = rows(run_dir)
    assert row["torch"] == rec("t0") and row["shape_detail"] == "[8]"


def test_the_next_test_writes_the_same_result_again(fake_bench, run_dir):
    update, _, _ = _sinks(fake_bench)
    r = result(fake_bench, [metric(shape_detail=[8], latency_base=0.5, latency=0.25)])
    for _ in range(2):
        results.pytest_runtest_logstart("t::x", None)
        pend(0.5, "t0")
        pend(0.25, "g0")
        update("softmax", asdict(r))
    assert len(rows(run_dir)) == 2
