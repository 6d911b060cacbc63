"""Whole runs of the fake FlagGems trees under pytest with all four plugins,
as `zlb run` spawns them, checked through results.jsonl and events.jsonl."""

import json
import os
import signal
import subprocess
import textwrap

import pytest

from conftest import ALL_PLUGINS, FAKE, FAKE_VLLM, FAKECUDA, FATAL_TEXTS, PYTHON, \
    TIMER_LIB, events, need_timer, rows, run_pytest, subprocess_env

CAPTURE_ILLEGAL = "operation not permitted when stream is capturing"


def cost(numel, element_size=2):
    return 1000 + numel * element_size // 2


def gems(ns):
    return ns * 4 // 5


def direct_ms(ns):
    return ns / 1e6 + 0.05            # the stub triton's do_bench


def zlb_env(run_dir, shape_file, **extra):
    env = {"ZLB_RUN_DIR": str(run_dir), "ZLB_SHAPE_FILE": str(shape_file),
           "ZLB_SHAPE_MODE": "file", "ZLB_SEED": "0", "ZLB_PACKAGE": "flag_gems",
           "ZLB_TIMER": "direct", "ZLB_DIRECT_REPEAT": "1", "GEMS_VENDOR": "nvidia"}
    env.update(extra)
    return env


def zlb_args(nodes, shape_file, dtypes=("float16",), warmup="5"):
    args = list(nodes) + ["--level", "core", "--mode", "kernel", "--warmup", warmup,
                          "--iter", "5", "--shape_file", str(shape_file)]
    for d in dtypes:
        args += ["--dtypes", d]
    return args + ALL_PLUGINS


def write(path, text):
    path.write_text(textwrap.dedent(text))
    return path


def by_op(rs):
    out = {}
    for r in rs:
        out.setdefault(r["op_name"], []).append(r)
    return out


def check_json_lines(run_dir):
    for name in ("results.jsonl", "events.jsonl"):
        with open(os.path.join(str(run_dir), name)) as f:
            for line in f:
                obj = json.loads(line)
                assert obj["schema_version"] == 1


def test_direct_run_of_the_fake_tree(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    shapes = write(run / "shapes.yaml", """
        softmax: {shapes: [[1024, 1024], [64, 64]]}
        avg_pool2d: {shapes: [[2, 3, 32, 32]]}
        adaptive_max_pool2d: {shapes: [[1, 2, 16, 16, 4, 4]]}
        upsample_bilinear2d_aa_backward: {shapes: [[2, 3, 16, 16, 8, 8]]}
        BlasBenchmark: {shapes: [[2, 64, 64, 64]]}
        Benchmark: {shapes: [[64, 64]]}
    """)
    nodes = ["benchmark/test_softmax.py::test_softmax", "benchmark/test_add.py::test_add",
             "benchmark/test_mm.py::test_mm", "benchmark/test_avg_pool2d.py",
             "benchmark/test_adaptive_max_pool2d.py",
             "benchmark/test_upsample_bilinear2d_aa_backward.py",
             "benchmark/test_only_fp32.py", "benchmark/test_broken.py",
             "benchmark/test_skipped.py"]
    r = run_pytest(zlb_args(nodes, shapes), zlb_env(run, shapes, ZLB_DIRECT_REPEAT="3"))
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    check_json_lines(run)
    ops = by_op(rows(run))
    assert sorted(ops) == ["adaptive_max_pool2d", "add", "avg_pool2d", "mm", "softmax",
                           "upsample_bilinear2d_aa_backward"]

    sm = ops["softmax"]
    assert [x["shape_detail"] for x in sm] == ["[torch.Size([1024, 1024]), 1]",
                                              "[torch.Size([64, 64]), 1]"]
    for row, numel in zip(sm, (1024 * 1024, 64 * 64)):
        assert row["latency_base_ms"] == direct_ms(cost(numel))
        assert row["latency_ms"] == direct_ms(gems(cost(numel)))
        assert row["speedup"] == pytest.approx(row["latency_base_ms"] / row["latency_ms"])
        for side in ("torch", "gems"):
            m = row[side]
            assert m["timer"] == "direct" and m["n"] == 3 and len(m["samples_ms"]) == 3
            assert m["markers"] == [] and m["calls_per_replay"] is None
        assert row["torch"]["median_ms"] == row["latency_base_ms"]
        assert row["gems"]["median_ms"] == row["latency_ms"]
        assert (row["op"], row["dtype"], row["mode"], row["level"], row["status"]) == \
            ("softmax", "torch.float16", "kernel", "core", "SUCCESS")
        assert row["nodeid"] == "benchmark/test_softmax.py::test_softmax"
    assert [x["index"] for x in sm] == [0, 1]

    (add,) = ops["add"]                          # Benchmark key via the class chain
    assert add["shape_detail"] == "[torch.Size([64, 64]), torch.Size([64, 64])]"
    assert add["tflops"] is not None
    (mm,) = ops["mm"]                            # BlasBenchmark key, 4-tuple
    assert mm["shape_detail"] == "[torch.Size([64, 64]), torch.Size([64, 64])]"
    (pool,) = ops["avg_pool2d"]
    assert pool["shape_detail"].startswith("([torch.Size([2, 3, 32, 32])], {'kernel_size'")
    (amp,) = ops["adaptive_max_pool2d"]
    assert amp["shape_detail"] == "[torch.Size([1, 2, 16, 16]), [4, 4]]"
    (up,) = ops["upsample_bilinear2d_aa_backward"]
    assert up["shape_detail"] == \
        "[torch.Size([2, 3, 8, 8]), [8, 8], [2, 3, 16, 16], False, None, None]"

    # The table FlagGems printed carries the same shape text.
    assert "          [torch.Size([1024, 1024]), 1]\n" in r.stdout

    inj = {(e["cls"], e["via"], e["key"], e["count"])
           for e in events(run, "SHAPES_INJECTED")}
    assert inj == {("AvgPool2dBenchmark", "get_input_iter", "avg_pool2d", 1),
                   ("AdaptiveMaxPool2dBenchmark", "set_shapes", "adaptive_max_pool2d", 1),
                   ("UpsampleBilinear2dAaBackwardBenchmark", "bespoke",
                    "upsample_bilinear2d_aa_backward", 1)}

    outcomes = {(e["nodeid"].split("::")[-1], e["when"]): e
                for e in events(run, "TEST_OUTCOME")}
    assert outcomes[("test_softmax", "call")]["outcome"] == "passed"
    fp32 = outcomes[("test_only_fp32", "call")]
    assert fp32["outcome"] == "failed"
    assert "Given dtype(s) 'torch.float16'can't be supported by this op 'only_fp32'" \
        in fp32["reason"]
    broken = outcomes[("test_broken", "call")]
    assert broken["outcome"] == "failed" and "fake: broken_op has no kernel" in \
        broken["reason"]
    sk = outcomes[("test_skipped", "setup")]
    assert sk["outcome"] == "skipped" and sk["reason"] == "fake: skipped on purpose"
    assert all(isinstance(e["duration_s"], float) and e["xfail"] is False
               for e in outcomes.values())

    (prov,) = events(run, "PROVENANCE")
    assert prov["package"] == "flag_gems" and prov["package_version"] == "0.0-fake"
    assert prov["torch"] == "0.0-stub" and prov["triton"] == "0.0-stub"
    assert prov["torch_cuda"] == "13.0" and prov["triton_path"].endswith("triton")
    assert prov["gpu_name"] == "Fake H200 (zlbench test driver)"
    assert prov["gpu_uuid"] == "GPU-facec0da-0000-4000-8000-000000000000"
    assert prov["capability"] == "9.0" and prov["device_count"] == 1
    assert prov["python"].count(".") == 2

    plugins = {(e["name"], e["status"]) for e in events(run, "PLUGIN")}
    assert plugins == {("zlbench.results", "ready"), ("zlbench.seed", "ready"),
                       ("zlbench.shapes", "ready"), ("zlbench.timing", "ready")}
    assert events(run, "WARNING") == []
    assert "BENCHMARK_DIRECT_NO_CUDAGRAPH" not in r.stdout


def test_graph_run_of_the_fake_tree(tmp_path):
    need_timer()
    run = tmp_path / "run"
    run.mkdir()
    shapes = write(run / "shapes.yaml", """
        softmax: {shapes: [[64, 64], [1024, 1024]]}
        softmax_backward: {shapes: [[64, 64]]}
        sort: {shapes: [[64, 64], [128, 128]]}
        GenericBenchmark2DOnly: {shapes: [[32, 32], [64, 64]]}
    """)
    nodes = ["benchmark/test_softmax.py", "benchmark/test_sort.py",
             "benchmark/test_autotuned.py"]
    env = zlb_env(run, shapes, ZLB_TIMER="graph", ZLB_TIMER_LIB=TIMER_LIB,
                  ZLB_LIBCUDA=FAKECUDA, ZLB_CAPTURE_FATAL=FATAL_TEXTS,
                  ZLB_WARMUP_MAX_CALLS="20")
    # A warm-up budget far beyond what 20 calls take on any machine: the
    # count comes from the wall time of three eager calls, and with 5 ms a
    # loaded CI core made it 5 (ZLB_WARMUP_MAX_CALLS's cap, 20, is the check).
    r = run_pytest(zlb_args(nodes, shapes, warmup="1000"), env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    check_json_lines(run)
    ops = by_op(rows(run))

    sm = ops["softmax"]
    # K: 2 ms / cost, rounded up to a power of two. torch: 5096 ns -> 392.5 -> 512,
    # 1049576 ns -> 1.9 -> 2; gems (4/5 the cost): 4076 ns -> 490.7 -> 512,
    # 839660 ns -> 2.4 -> 4.
    for row, numel, k, kg in zip(sm, (64 * 64, 1024 * 1024), (512, 2), (512, 4)):
        t, g = row["torch"], row["gems"]
        assert t["timer"] == g["timer"] == "graph"
        assert row["latency_base_ms"] == pytest.approx(cost(numel) / 1e6, rel=1e-6)
        assert row["latency_ms"] == pytest.approx(gems(cost(numel)) / 1e6, rel=1e-6)
        assert t["calls_per_replay"] == k and t["warmup_calls"] == 20
        assert g["calls_per_replay"] == kg
        assert t["n"] >= 10 and len(t["samples_ms"]) == t["n"]
        assert t["median_ms"] == row["latency_base_ms"]
    (bwd,) = ops["softmax_backward"]
    assert bwd["latency_base_ms"] == pytest.approx(2 * cost(64 * 64) / 1e6, rel=1e-6)
    assert bwd["torch"]["timer"] == "graph"

    srt = ops["sort"]
    assert len(srt) == 2
    for row, numel in zip(srt, (64 * 64, 128 * 128)):
        for side in ("torch", "gems"):
            m = row[side]
            assert m["timer"] == "direct" and m["markers"] == ["BENCHMARK_DIRECT_NO_CUDAGRAPH"]
            assert m["fallback"] == {"phase": "capture",
                                     "reason": "CUDA error: " + CAPTURE_ILLEGAL}
        assert row["latency_base_ms"] == direct_ms(cost(numel))
    marker = ("BENCHMARK_DIRECT_NO_CUDAGRAPH phase=capture reason=CUDA error: %s repeat=1"
              % CAPTURE_ILLEGAL)
    assert r.stdout.count(marker) == 4
    fallbacks = events(run, "BENCHMARK_DIRECT_NO_CUDAGRAPH")
    assert [(e["op"], e["op_name"], e["dtype"], e["role"]) for e in fallbacks] == \
        [("sort", "sort", "torch.float16", role) for role in ("torch", "gems") * 2]

    tuned = ops["autotuned_exp"]
    assert [x["shape_detail"] for x in tuned] == ["[torch.Size([32, 32])]",
                                                 "[torch.Size([64, 64])]"]
    assert all(x["gems"]["timer"] == "graph" for x in tuned)
    assert tuned[1]["latency_ms"] == pytest.approx(gems(cost(64 * 64)) / 1e6, rel=1e-6)
    assert events(run, "WARNING") == []
    assert events(run, "CAPTURE_FATAL") == []


def test_a_crash_keeps_the_rows_already_written(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    shapes = write(run / "shapes.yaml", "Benchmark: {shapes: [[64, 64], [8, 8]]}\n")
    r = run_pytest(zlb_args(["benchmark/test_crash.py"], shapes, dtypes=()),
                   zlb_env(run, shapes, FAKE_CRASH="late"))
    assert r.returncode == -signal.SIGSEGV, r.stdout[-2000:] + r.stderr[-2000:]
    assert "FAKE_CRASH: SIGSEGV now" in r.stdout
    rs = rows(run)                                # every line parses
    assert [(x["dtype"], x["shape_detail"]) for x in rs] == [
        ("torch.float16", "[torch.Size([64, 64])]"), ("torch.float16", "[torch.Size([8, 8])]")]
    check_json_lines(run)


def test_vllm_tree_moe_shapes_from_the_file(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    shapes = write(run / "shapes.yaml", """
        fused_marlin_moe: {shapes: [[16, 8, 1024, 2048, 2]]}
        Benchmark: {shapes: [[64, 64]]}
    """)
    r = run_pytest(zlb_args(["benchmark/test_fused_marlin_moe.py::test_fused_marlin_moe"],
                            shapes, dtypes=("bfloat16",)),
                   zlb_env(run, shapes, ZLB_PACKAGE="flaggems_vllm"), tree=FAKE_VLLM)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (row,) = rows(run)
    assert row["op_name"] == "fused_marlin_moe" and row["dtype"] == "torch.bfloat16"
    assert row["shape_detail"] == (
        "[torch.Size([16, 1024]), torch.Size([8, 4096, 1024]), torch.Size([8, 1024, 2048]),"
        " torch.Size([16, 2]), torch.Size([16, 2])]")
    assert row["torch"]["timer"] == row["gems"]["timer"] == "direct"
    assert row["latency_ms"] < row["latency_base_ms"]
    (inj,) = events(run, "SHAPES_INJECTED")
    assert (inj["cls"], inj["via"], inj["key"], inj["count"]) == \
        ("FusedMarlinMoEBenchmark", "set_shapes", "fused_marlin_moe", 1)
    (prov,) = events(run, "PROVENANCE")
    assert prov["package"] == "flaggems_vllm" and prov["package_version"] == "0.0-fake-vllm"
    assert events(run, "WARNING") == []


def test_without_run_dir_everything_is_upstream(tmp_path):
    r = run_pytest(["benchmark/test_softmax.py::test_softmax", "--level", "core",
                    "--warmup", "5", "--iter", "5", "--dtypes", "float16"] + ALL_PLUGINS,
                   {"ZLB_TIMER": "graph"})
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert r.stderr.count("ZLB_RUN_DIR is not set") == 1
    # upstream's own timer ran: the stub's eager cost + launch overhead
    assert "%20s" % ("%.6f" % direct_ms(cost(1048576))) in r.stdout


def test_hang_prints_before_sleeping(tmp_path):
    env = subprocess_env({"FAKE_HANG": "1"})
    p = subprocess.Popen([PYTHON, "-m", "pytest", "-p", "no:cacheprovider", "-s",
                          "benchmark/test_hang.py", "--level", "core", "--dtypes",
                          "float16"], cwd=FAKE, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        for line in p.stdout:
            if "FAKE_HANG: started" in line:
                break
        assert p.poll() is None
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
