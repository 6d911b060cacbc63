"""zlb run end to end against the fake FlagGems checkout.

The stub torch's cost model (tests/stubs/torch/_stub.py) and the fake CUDA
driver agree that an op over a tensor of nbytes costs 1000 + nbytes // 2 ns
(gems: 4/5 of it), so a graph-timed latency is known exactly.

One file over 700 lines: these are the run command's end-to-end paths that
share the zlb fixture's world; narrower subjects have files of their own
(test_run_*.py).
"""
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import FAKE_MAIN, FAKE_VLLM


def cost_ms(numel, elsize=2, gems=False):
    ns = 1000 + numel * elsize // 2
    if gems:
        ns = ns * 4 // 5
    return ns / 1e6


SOFTMAX_SHAPES = [(1024, 1024), (4096, 4096), (16384, 8192)]


def test_default_run_measures_softmax_on_builtin_shapes(zlb):
    r = zlb.run("--dtypes", "float16")
    assert r.rc == 0, r
    d = r.run_dir
    assert re.fullmatch(r"softmax_\d{8}-\d{6}", d.name), d.name
    for f in ("run.log", "run_identity.json", "shapes.yaml", "results.jsonl", "events.jsonl"):
        assert (d / f).is_file(), f

    rows = r.rows()
    assert [row["shape_detail"] for row in rows] == [
        "[torch.Size([%d, %d]), 1]" % s for s in SOFTMAX_SHAPES]
    for row, (m, n) in zip(rows, SOFTMAX_SHAPES):
        assert row["status"] == "SUCCESS" and row["dtype"] == "torch.float16"
        assert row["torch"]["timer"] == "graph" and row["gems"]["timer"] == "graph"
        # Exact through stub capture -> ctypes -> libzlbtimer -> fake driver.
        assert row["latency_base_ms"] == pytest.approx(cost_ms(m * n), rel=1e-6)
        assert row["latency_ms"] == pytest.approx(cost_ms(m * n, gems=True), rel=1e-6)
        assert row["gems"]["calls_per_replay"] >= 1
        assert len(row["gems"]["samples_ms"]) == row["gems"]["n"] >= 10

    ident = r.identity()
    assert ident["schema_version"] == 1 and ident["status"] == "completed"
    cal = ident["caliber"]
    for field in ("backend", "device", "timer", "bench_level", "shape_mode", "tuner_cache",
                  "direct_repeat", "autotune_mode"):
        assert field in cal, field
    assert cal["backend"] == "cuda" and cal["timer"] == "graph"
    assert cal["device"] == "Fake H200 (zlbench test driver)"
    assert cal["shape_mode"] == "inline" and cal["bench_level"] == "core"
    assert cal["autotune_mode"] == "record" and cal["direct_repeat"] == 1
    assert cal["tuner_cache"].startswith("shared(")
    assert cal["dtypes"] == ["float16"]
    # The stopping rule, L2 mode and clock gate are caliber too.
    assert (cal["min_samples"], cal["min_time_ms"], cal["noise_target"], cal["max_wall_ms"],
            cal["l2_mode"], cal["clock_floor"]) == (10, 5, 0.001, 2000, "hot", 0.97)
    # So are the placements (one graph by default), what the latency is made
    # of, what a sample is, the warm-up cap and the run's own compile cache.
    assert cal["placements"] == 1 and cal["centre"] == "mean_of_placement_medians"
    assert (cal["replay_target_ms"], cal["warmup_max_calls"]) == (2.0, 200)
    assert cal["compile_cache"] == "own"
    prov = ident["provenance"]
    assert prov["gpu_uuid"].startswith("GPU-facec0da")
    assert prov["command_line"][:2] == ["run", "--dtypes"]
    assert prov["runtime"]["torch"] == "0.0-stub"
    assert prov["flaggems_package"] == "flag_gems"
    assert ident["outcome"]["rows"] == 3 and ident["outcome"]["rows_graph"] == 3

    # The archive is the exact built-in text behind a comment header.
    archived = (d / "shapes.yaml").read_text()
    assert archived.startswith("# zlbench: op=softmax bench_level=core shape_mode=inline")
    assert "- [16384, 8192]" in archived


def test_run_log_is_ansi_free_and_keeps_upstream_rows(zlb):
    r = zlb.run("softmax", "--dtypes", "float16", env={"FLAGGEMS_PERF_COLOR": "always"})
    assert r.rc == 0, r
    log = (r.run_dir / "run.log").read_text()
    assert "\x1b" not in log
    # Upstream's fixed-width row, verbatim, for grep.
    assert re.search(r"^SUCCESS {15}1\.049576 {12}0\.839660 {15}1\.250 {10}"
                     r"\[torch\.Size\(\[1024, 1024\]\), 1\]$", log, re.M), log
    # The terminal got the coloured, folded rendering.
    assert "\x1b[32mSUCCESS" in r.out
    assert "same in every row: #2=1" in re.sub(r"\x1b\[[0-9;]*m", "", r.out)


def test_color_never_and_no_color(zlb):
    r = zlb.run("softmax", "--dtypes", "float16", "--color", "never")
    assert r.rc == 0 and "\x1b" not in r.out, r
    r = zlb.run("softmax", "--dtypes", "float16", env={"FLAGGEMS_PERF_COLOR": None,
                                                       "NO_COLOR": "1"})
    assert r.rc == 0 and "\x1b" not in r.out, r


def test_env_habits_of_the_seed_tool(zlb, shapes):
    f = shapes("softmax:\n  shapes:\n    - [64, 512]\n")
    r = zlb.run(env={"OP": "softmax", "OP_FILE": "softmax", "SHAPE_FILE": str(f),
                     "DTYPES": "bfloat16 float16"})
    assert r.rc == 0, r
    rows = r.rows()
    assert [(row["dtype"], row["shape_detail"]) for row in rows] == [
        ("torch.bfloat16", "[torch.Size([64, 512]), 1]"),
        ("torch.float16", "[torch.Size([64, 512]), 1]")]
    ident = r.identity()
    assert ident["caliber"]["shape_mode"] == "file"
    assert ident["caliber"]["dtypes"] == ["bfloat16", "float16"]
    assert (r.run_dir / "shapes.yaml").read_text().endswith(f.read_text())


def test_test_node_defaults_to_upstream_shapes(zlb):
    node = f"{FAKE_MAIN}/benchmark/test_softmax.py::test_softmax"
    r = zlb.run("--test-node", node, "--dtypes", "float16", env={"FLAGGEMS_DIR": None})
    assert r.rc == 0, r
    ident = r.identity()
    assert ident["caliber"]["shape_mode"] == "upstream"
    assert ident["provenance"]["test_node"] == "benchmark/test_softmax.py::test_softmax"
    assert "zlbench.shapes" not in ident["provenance"]["plugins"]
    assert "--shape_file" not in ident["provenance"]["pytest_command"]
    assert "copy of" in (r.run_dir / "shapes.yaml").read_text().splitlines()[1]


def test_second_upstream_repo(zlb):
    r = zlb.run("fused_marlin_moe", env={"FLAGGEMS_DIR": str(FAKE_VLLM)})
    assert r.rc == 0, r
    ident = r.identity()
    assert ident["provenance"]["flaggems_package"] == "flaggems_vllm"
    assert ident["provenance"]["runtime"]["package"] == "flaggems_vllm"
    assert r.rows(), "no rows measured"


def test_class_key_fallback_is_announced(zlb, shapes):
    f = shapes("BlasBenchmark:\n  shapes:\n    - [1, 64, 64, 64]\n")
    r = zlb.run("mm", "--shapes", str(f), "--dtypes", "float16")
    assert r.rc == 0, r
    assert "no 'mm' key; FlagGems will use the class entry 'BlasBenchmark'" in r.out
    rows = r.rows()
    assert len(rows) == 1
    assert rows[0]["latency_base_ms"] == pytest.approx((1000 + 64 * 64 * 64 // 512) / 1e6)


def test_capture_refusal_falls_back_per_row(zlb):
    r = zlb.run("sort", "--dtypes", "float16", "--direct-repeat", "3",
                "--shape-mode", "upstream")
    assert r.rc == 0, r
    rows = r.rows()
    assert rows and all(row["gems"]["timer"] == "direct" for row in rows)
    assert all(row["gems"]["n"] == 3 for row in rows)
    log = (r.run_dir / "run.log").read_text()
    # Each marker starts its own line, even the one pytest -v's unfinished
    # "path::test " line was waiting for.
    starts = re.findall(r"^BENCHMARK_DIRECT_NO_CUDAGRAPH phase=capture .* repeat=3$", log, re.M)
    assert re.search(r"^benchmark/test_sort.py::test_sort$", log, re.M), log
    ident = r.identity()
    assert ident["caliber"]["timer"] in ("direct", "graph+direct")
    assert len(starts) == ident["outcome"]["markers"]["BENCHMARK_DIRECT_NO_CUDAGRAPH"]
    assert len(starts) >= len(rows), log
    assert "not graph-timed" in r.out


def test_stopping_rule_options_reach_the_plugin_and_the_identity(zlb):
    r = zlb.run("softmax", "--dtypes", "float16", "--min-samples", "25", "--noise-target",
                "0", "--max-wall", "700", "--l2", "cold", "--clock-floor", "0",
                "--power-settle", "500", "--preload", "40", "--preload-steady", "0.002")
    assert r.rc == 0, r
    cal = r.identity()["caliber"]
    assert (cal["min_samples"], cal["noise_target"], cal["max_wall_ms"], cal["l2_mode"],
            cal["clock_floor"], cal["power_settle_ms"], cal["preload_ms"],
            cal["preload_steady"]) == (25, 0.0, 700, "cold", 0.0, 500, 40, 0.002)
    for row in r.rows():
        assert row["gems"]["n"] >= 25
        # the preload ran before the sampling (the fake driver's time is not the wall's)
        laps = list(row["gems"]["phase_ms"])
        assert laps.index("preload") < laps.index("sample")
        assert "preload_trend" in row["gems"] and "preload_profile" in row["gems"]
        assert "preload_steady_ms" in row["gems"]


def test_a_steady_rule_without_a_preload_is_refused(zlb):
    # it would do nothing, yet be a caliber apart from plain --preload 0
    r = zlb.run("softmax", "--dtypes", "float16", "--preload-steady", "0.002")
    assert r.rc == 2, r
    assert "--preload-steady 0.002 stops a preload early, and --preload (ZL_PRELOAD) is 0" \
        in r.err, r
    assert not (zlb.cwd / "runs").exists() or not any((zlb.cwd / "runs").iterdir())
    # from the environment, it says so
    r = zlb.run("softmax", "--dtypes", "float16", env={"ZL_PRELOAD_STEADY": "0.002"})
    assert r.rc == 2 and "ZL_PRELOAD_STEADY=0.002 (the environment) stops" in r.err, r
    r = zlb.run("softmax", "--dtypes", "float16", "--preload-steady", "0")
    assert r.rc == 0, r
    assert r.identity()["caliber"]["preload_steady"] == 0


def test_replay_target_and_warmup_cap_reach_the_plugin_and_the_identity(zlb):
    r = zlb.run("softmax", "--dtypes", "float16", "--replay-target", "0.5",
                "--warmup-max-calls", "7")
    assert r.rc == 0, r
    cal = r.identity()["caliber"]
    assert (cal["replay_target_ms"], cal["warmup_max_calls"]) == (0.5, 7)
    for row in r.rows():
        for side in ("torch", "gems"):
            assert row[side]["replay_target_ms"] == 0.5
            assert row[side]["warmup_calls"] <= 7
    # A value outside zlb's range is refused before anything starts.
    bad = zlb.run("softmax", "--replay-target", "0")
    assert bad.rc == 2 and "replay-target" in bad.err and len(bad.run_dirs) == 1


def test_print_engine_env_is_what_the_child_gets(zlb):
    r = zlb.run("--print-engine-env", "--placements", "3", env={"ZL_WARMUP_MAX_CALLS": "9"})
    assert r.rc == 0 and not r.run_dirs
    env = dict(line.split("=", 1) for line in r.out.splitlines())
    assert env["ZLB_PLACEMENTS"] == "3" and env["ZLB_WARMUP_MAX_CALLS"] == "9"
    assert env["ZLB_REPLAY_TARGET_MS"] == "2" and env["ZLB_MIN_SAMPLES"] == "10"
    assert env["ZLB_POWER_SETTLE_MS"] == "0" and env["ZLB_PRELOAD_MS"] == "0"
    assert env["ZLB_PRELOAD_STEADY"] == "0"


def _cache_files(d):
    return sorted(p.name for p in (d / "triton_cache").rglob("__grp__*.json"))


def test_each_run_compiles_into_its_own_triton_cache(zlb):
    # Kept on request: the run's Triton kernels were compiled there, not in
    # the user's cache, and a second run compiles again into its own.
    runs = []
    for _ in range(2):
        seen = set(zlb.runs.iterdir()) if zlb.runs.exists() else set()
        r = zlb.run("softmax", "--dtypes", "float16", "--keep-compile-cache",
                    env={"TRITON_CACHE_DIR": str(zlb.cwd / "user_cache")})
        assert r.rc == 0, r
        (d,) = set(r.run_dirs) - seen
        runs.append(d)
        prov = r.identity(d)["provenance"]
        assert prov["compile_cache_dir"] == str(d / "triton_cache")
        assert prov["compile_cache_kept"] is True
    a, b = runs
    assert _cache_files(a) and _cache_files(a) == _cache_files(b)
    assert not (zlb.cwd / "user_cache").exists()
    # By default it is dropped with the run; the caliber says it was the run's own.
    seen = set(r.run_dirs)
    r = zlb.run("softmax", "--dtypes", "float16")
    (d,) = set(r.run_dirs) - seen
    assert r.rc == 0 and not (d / "triton_cache").exists()
    assert r.identity(d)["caliber"]["compile_cache"] == "own"


def test_device_state_at_start_and_end_and_a_shared_card(zlb):
    r = zlb.run("softmax", "--dtypes", "float16",
                env={"FAKE_NVML_PIDS": "4242,4343", "FAKE_NVML_REASONS": "0x4"})
    assert r.rc == 0, r
    prov = r.identity()["provenance"]
    start, end = prov["device_start"], prov["device_end"]
    assert start["sm_clock_mhz"] == 1980 and end["sm_max_mhz"] == 1980
    assert start["processes"] == [4242, 4343] and prov["device_shared_at_start"] is True
    assert start["clock_limit_reasons"] == "sw_power_cap"
    assert "2 other process(es) use this device (pid 4242, 4343)" in r.out
    # Without NVML the snapshot says why instead of inventing numbers.
    r = zlb.run("softmax", "--dtypes", "float16",
                env={"ZLB_LIBNVML": str(zlb.cwd / "absent.so")}, cwd=zlb.cwd)
    prov = r.identity(r.run_dirs[-1])["provenance"]
    assert "unavailable" in prov["device_start"] and prov["device_shared_at_start"] is False


def test_timer_direct_on_request(zlb):
    r = zlb.run("softmax", "--dtypes", "float16", "--timer", "direct")
    assert r.rc == 0, r
    assert {row["gems"]["timer"] for row in r.rows()} == {"direct"}
    assert r.identity()["caliber"]["timer"] == "direct"


def test_isolated_tuner_cache_is_recorded_and_dropped(zlb):
    r = zlb.run("softmax", "--dtypes", "float16", "--isolate-tuner-cache")
    assert r.rc == 0, r
    assert r.identity()["caliber"]["tuner_cache"] == "isolated"
    assert not (r.run_dir / "tuner_cache").exists()


def test_device_mapping_honours_inherited_visibility(zlb):
    r = zlb.run("softmax", "--dtypes", "float16", "--device", "1",
                env={"FAKE_CUDA_DEVICES": "2", "CUDA_VISIBLE_DEVICES": "6,7"})
    assert r.rc == 0, r
    assert r.identity()["provenance"]["device_visible_as"] == "7"
    assert "CUDA_VISIBLE_DEVICES=7" in r.out


def test_two_runs_in_the_same_second_get_distinct_directories(zlb):
    procs = [zlb.popen("softmax", "--dtypes", "float16") for _ in range(3)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    dirs = sorted((zlb.runs).iterdir())
    assert len(dirs) == 3
    for d in dirs:
        rows = [json.loads(l) for l in (d / "results.jsonl").read_text().splitlines()]
        assert len(rows) == 3, d


def test_path_with_spaces(zlb, tmp_path):
    f = tmp_path / "my shapes" / "a file.yaml"
    f.parent.mkdir()
    f.write_text("softmax:\n  shapes:\n    - [256, 256]\n")
    runs = tmp_path / "run dir"
    r = zlb.run("softmax", "--shapes", str(f), "--dtypes", "float16",
                "--runs-dir", str(runs))
    assert r.rc == 0, r
    d = next(runs.iterdir())
    assert json.loads((d / "results.jsonl").read_text().splitlines()[0])[
        "shape_detail"] == "[torch.Size([256, 256]), 1]"


def test_failed_test_exit_1(zlb):
    r = zlb.run("broken", "--shape-mode", "upstream", "--dtypes", "float16")
    assert r.rc == 1, r
    ident = r.identity()
    assert ident["status"] == "failed" and ident["outcome"]["tests"]["failed"] == 1


def test_what_the_terminal_shows_by_default_quiet_and_verbose(zlb):
    # by default: zlb's lines, the tables, the summary; pytest's own lines stay in run.log
    r = zlb.run("softmax", "--dtypes", "float16")
    assert r.rc == 0, r
    assert "zlb 0.1.0: run softmax" in r.out and "Gems Speedup" in r.out
    assert "zlb: completed, exit 0" in r.out
    assert "test session starts" not in r.out and "PASSED" not in r.out, r.out
    log = (r.run_dir / "run.log").read_text()
    assert "test session starts" in log and "PASSED" in log
    # -v: everything, as it comes
    r = zlb.run("softmax", "--dtypes", "float16", "-v", "--runs-dir", "v")
    assert r.rc == 0 and "test session starts" in r.out and "Gems Speedup" in r.out, r
    # -q: the result line alone
    r = zlb.run("softmax", "--dtypes", "float16", "--quiet", "--runs-dir", "q")
    assert r.rc == 0, r
    assert r.out.splitlines() == [f"zlb: completed, exit 0; run directory "
                                  f"{next((zlb.cwd / 'q').iterdir())}"], r.out
    r = zlb.run("softmax", "-q", "-v", "--runs-dir", "qv")
    assert r.rc == 2 and "--quiet and --verbose contradict each other" in r.err, r


def test_a_failure_shows_by_default_and_quietly(zlb):
    r = zlb.run("broken", "--shape-mode", "upstream", "--dtypes", "float16")
    assert r.rc == 1, r
    assert re.search(r"^FAILED .*test_broken", r.out, re.M), r.out    # pytest's summary line
    assert "Traceback" not in r.out and "run.log; -v shows it as it comes" in r.out
    r = zlb.run("broken", "--shape-mode", "upstream", "--dtypes", "float16", "-q",
                "--runs-dir", "q")
    assert r.rc == 1, r
    assert re.search(r"^FAILED .*test_broken", r.out, re.M), r.out
    assert "zlb 0.1.0: run" not in r.out and r.out.splitlines()[-1].startswith("zlb: ")


def test_skipped_test_is_reported(zlb):
    r = zlb.run("skipped", "--shape-mode", "upstream")
    assert r.rc == 0, r
    assert r.identity()["outcome"]["tests"]["skipped"] == 1
    assert "skipped:" in r.out


def test_unsupported_dtype_is_a_failure_with_upstream_wording(zlb):
    r = zlb.run("only_fp32", "--shape-mode", "upstream", "--dtypes", "float16")
    assert r.rc == 1, r
    assert "can't be supported by this op" in (r.run_dir / "run.log").read_text()


def test_crash_by_signal_keeps_rows_written_so_far(zlb):
    r = zlb.run("crash", "--shape-mode", "upstream", env={"FAKE_CRASH": "late"})
    assert r.rc == 128 + signal.SIGSEGV, r
    ident = r.identity()
    assert ident["status"] == "crashed"
    assert "SIGSEGV" in ident["outcome"]["pytest_end"]
    assert r.rows() and all(row["dtype"] == "torch.float16" for row in r.rows())


def test_ctrl_c_stops_the_group_and_marks_the_run(zlb):
    # -v: pytest's own lines (the fake test says when it hangs) reach the terminal
    p = zlb.popen("hang", "--shape-mode", "upstream", "-v", env={"FAKE_HANG": "1"})
    seen = ""
    deadline = time.time() + 60
    while "FAKE_HANG: started" not in seen and time.time() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        seen += line
    assert "FAKE_HANG: started" in seen, seen
    p.send_signal(signal.SIGINT)
    out = seen + p.communicate(timeout=60)[0]
    assert p.returncode == 130, out
    d = next(zlb.runs.iterdir())
    ident = json.loads((d / "run_identity.json").read_text())
    assert ident["status"] == "interrupted" and ident["outcome"]["interrupted"]
    assert "interrupted" in (d / "run.log").read_text()
    # Nothing of pytest's process group is left.
    left = subprocess.run(["pgrep", "-f", "test_hang.py::test_hang"], capture_output=True,
                          text=True)
    assert left.stdout.strip() == "", left.stdout


# --- bad input: a sentence, a documented code, nothing lost ------------------

@pytest.mark.parametrize("args,env,needle", [
    (["--level", "fast"], {}, "--level fast: 'fast' is not one of core, comprehensive"),
    ([], {"BENCH_LEVEL": "fast"}, "BENCH_LEVEL=fast (the default of --level)"),
    ([], {"DTYPES": "Float16"}, "'Float16' is not a dtype name"),
    (["--color", "sometimes"], {}, "'sometimes' is not one of auto, always, never"),
    (["--backend", "tpu"], {}, "unknown backend 'tpu'"),
    ([], {"ZL_DIRECT_REPEAT": "0"}, "0 is outside 1..1000"),
    (["--noise-target", "lots"], {}, "'lots' is not a number"),
    ([], {"ZL_NOISE_TARGET": "0.9"}, "0.9 is outside 0..0.5"),
    (["--l2", "warm"], {}, "'warm' is not one of hot, cold"),
    ([], {"ZL_CLOCK_FLOOR": "1.5"}, "1.5 is outside 0..1"),
    (["a/b"], {}, "'a/b' is not an operator name"),
    ([".."], {}, "'..' is not an operator name"),
    (["softmax", "add"], {}, "one operator per run"),
    (["--bogus"], {}, "unknown option '--bogus'"),
])
def test_bad_options_exit_2_and_create_nothing(zlb, args, env, needle):
    r = zlb.run(*args, env=env)
    assert r.rc == 2, r
    assert needle in r.err, r
    assert not zlb.runs.exists()


def preflight(r, check):
    assert r.rc == 3, r
    assert f"PREFLIGHT_FAILED check={check}" in r.err, r
    assert "fix:" in r.err


def test_unknown_op_names_close_ones(zlb):
    r = zlb.run("sofmax")
    preflight(r, "benchmark_file")
    assert "close names: softmax" in r.err
    assert not zlb.runs.exists()


def test_missing_and_garbled_shape_files(zlb, shapes, tmp_path):
    preflight(zlb.run("softmax", "--shapes", str(tmp_path / "nope.yaml")), "shape_file")
    bad = shapes("softmax:\n  shapes: [[1, 2]\n", name="bad.yaml")
    r = zlb.run("softmax", "--shapes", str(bad))
    preflight(r, "shape_file")
    assert "not valid YAML" in r.err and "line" in r.err
    malformed = shapes("softmax:\n  shapes: [1024, 1024]\n", name="flat.yaml")
    r = zlb.run("softmax", "--shapes", str(malformed))
    preflight(r, "shape_file")
    assert "item 1 is not a non-empty list" in r.err
    assert not zlb.runs.exists()


def test_shape_key_for_the_wrong_class(zlb, shapes):
    f = shapes("BlasBenchmark:\n  shapes:\n    - [1, 64, 64, 64]\n")
    r = zlb.run("softmax", "--shapes", str(f))
    preflight(r, "shape_file")
    assert "'BlasBenchmark' are not in softmax's class chain" in r.err
    assert "DEFAULT_SHAPES" in r.err


def test_parallel_warmup_below_two_is_the_serial_sweep(zlb, tmp_path):
    # 1 (and the default 0) mean serial: no sweep said, caliber 1.
    r = zlb.run("softmax", "--dtypes", "float16", env={"PARALLEL_WARMUP_GPUS": "1"})
    assert r.rc == 0, r
    assert "zlb: sweep:" not in r.out, r
    ident = r.identity()
    assert ident["caliber"]["parallel_warmup_gpus"] == 1
    assert "parallel_sweep" not in ident["provenance"]
    r = zlb.run("softmax", env={"PARALLEL_WARMUP_GPUS": "two"})
    assert r.rc == 2 and "PARALLEL_WARMUP_GPUS" in r.err, r


def test_replay_needs_a_recording_of_the_same_terms(zlb, tmp_path):
    # A directory that is not a recording (a replay run records nothing).
    r = zlb.run("softmax", env={"REPLAY_FROM": str(tmp_path)})
    preflight(r, "replay_dir")
    assert "it is not a recording run" in r.err
    rec = tmp_path / "rec" / "autotune_records"
    rec.mkdir(parents=True)
    (rec / "softmax.json").write_text('{"schema_version": 1, "op": "softmax", "kernels": []}')
    for meta, needle in (
            ({"backend": "rocm", "use_flagtune": False, "op": "softmax"}, "recorded on backend 'rocm'"),
            ({"backend": "cuda", "use_flagtune": True, "op": "softmax"}, "USE_FLAGTUNE=1"),
    ):
        (rec / "meta.json").write_text(json.dumps(dict(meta, schema_version=1)))
        r = zlb.run("softmax", env={"REPLAY_FROM": str(rec.parent)})
        preflight(r, "replay_dir")
        assert needle in r.err, r
    (rec / "meta.json").write_text(json.dumps(
        {"schema_version": 1, "backend": "cuda", "use_flagtune": False, "op": "softmax"}))
    r = zlb.run("add", env={"REPLAY_FROM": str(rec.parent)})
    preflight(r, "replay_dir")
    assert "holds no records for add" in r.err
    assert not zlb.runs.exists()


def test_replay_from_a_file_is_refused(zlb, tmp_path):
    f = tmp_path / "not_a_dir"
    f.write_text("x")
    r = zlb.run("softmax", env={"REPLAY_FROM": str(f)})
    preflight(r, "replay_dir")
    assert "is a file, not a run directory" in r.err


def test_no_device(zlb):
    preflight(zlb.run("softmax", env={"FAKE_CUDA_DEVICES": "0"}), "device")
    r = zlb.run("softmax", "--device", "3")
    preflight(r, "device")
    assert "only 1 cuda device(s) are visible" in r.err


def test_missing_checkout_says_where_it_looked(zlb):
    r = zlb.run("softmax", env={"FLAGGEMS_DIR": None})
    preflight(r, "flaggems_dir")
    assert "looked in:" in r.err and "FlagGems" in r.err
    r = zlb.run("softmax", env={"FLAGGEMS_DIR": str(zlb.cwd / "nowhere")})
    preflight(r, "flaggems_dir")


def test_checkout_found_from_inside_it(zlb):
    r = zlb.run("softmax", "--dtypes", "float16", "--runs-dir", str(zlb.runs),
                env={"FLAGGEMS_DIR": None}, cwd=FAKE_MAIN)
    assert r.rc == 0, r
    assert r.identity(next(zlb.runs.iterdir()))["provenance"]["flaggems_dir"] == str(FAKE_MAIN)


def test_python_without_pytest(zlb, tmp_path):
    preflight(zlb.run("softmax", "--python", str(tmp_path / "nopython")), "python")


def test_help_and_unknown_command(zlb):
    r = zlb.cmd("help")
    assert r.rc == 0 and "run" in r.out
    r = zlb.run("--help")
    assert r.rc == 0 and "BENCH_LEVEL" in r.out and "exit codes" in r.out
    r = zlb.cmd("help", "run")
    assert r.rc == 0 and "--test-node" in r.out
    r = zlb.cmd("frobnicate")
    assert r.rc == 2 and "not a zlb command" in r.err


def test_record_then_replay_reproduces_the_configs(zlb):
    # A tunes for itself and records; B replays A while live tuning would pick
    # other configs (FAKE_TUNE_BIAS), so only replay can give B A's choices.
    a = zlb.run("tuned_rowsum", "--shape-mode", "upstream", "--dtypes", "float16",
                "--isolate-tuner-cache")
    assert a.rc == 0, a
    a_dir = a.run_dir
    rec = json.loads((a_dir / "autotune_records" / "tuned_rowsum.json").read_text())
    meta = json.loads((a_dir / "autotune_records" / "meta.json").read_text())
    assert meta["backend"] == "cuda" and meta["op"] == "tuned_rowsum" and meta["entries"] > 0
    a_entries = {json.dumps(e["key"]): e["config"] for k in rec["kernels"] for e in k["entries"]}
    assert a_entries
    assert a.identity(a_dir)["caliber"]["autotune_mode"] == "record"
    # Where a tuned operator's time went: its configs' timing, summed from the
    # plugin's TUNE_TIMING events into the identity and said on the terminal.
    tuning = a.identity(a_dir)["outcome"]["tuning"]
    timed = [e for e in map(json.loads, (a_dir / "events.jsonl").read_text().splitlines())
             if e["event"] == "TUNE_TIMING"]
    assert timed and tuning["calls"] == sum(e["calls"] for e in timed) > 0
    assert tuning["seconds"] == pytest.approx(sum(e["seconds"] for e in timed), abs=1e-6)
    assert re.search(r"autotuning: %d config timing call\(s\), [0-9.]+ s of the run"
                     % tuning["calls"], a.out), a.out

    b = zlb.run("tuned_rowsum", "--shape-mode", "upstream", "--dtypes", "float16",
                "--isolate-tuner-cache", "--replay-from", str(a_dir),
                env={"FAKE_TUNE_BIAS": "1"})
    assert b.rc == 0, b
    b_dir = [d for d in b.run_dirs if d != a_dir][0]
    ident = b.identity(b_dir)
    assert ident["caliber"]["autotune_mode"] == "replay"
    assert ident["provenance"]["replay_from"] == str(a_dir)
    assert ident["outcome"]["autotune"]["replayed"]["injected"] == len(a_entries)
    assert "AUTOTUNE_REPLAY_FALLBACK" not in ident["outcome"]["markers"]
    assert not (b_dir / "autotune_records").exists()      # a replay records nothing
    assert ident["outcome"]["tuning"] == {"calls": 0, "seconds": 0.0}   # nor tunes
    assert "autotuning:" not in b.out
    # And a replay of that replay is refused: it is not a recording.
    c = zlb.run("tuned_rowsum", "--shape-mode", "upstream", "--replay-from", str(b_dir))
    preflight(c, "replay_dir")
    assert "not a recording run" in c.err


def _shapes(run, d):
    return [(row["shape_detail"], side, row[side]["calls_per_replay"], row[side]["placements"],
             row[side].get("graph_shape")) for row in run.rows(d) for side in ("torch", "gems")]


def test_a_replay_captures_the_recordings_graphs(zlb):
    # A sizes its replays for 0.5 ms on 2 placements; B, left to itself,
    # would size them for 2 ms on 1 graph (the control run shows it), but a
    # replay of A captures A's K and placements, row by row.
    a = zlb.run("softmax", "--dtypes", "float16", "--replay-target", "0.5",
                "--placements", "2")
    assert a.rc == 0, a
    a_dir = a.run_dir
    own = zlb.run("softmax", "--dtypes", "float16")
    own_dir = [d for d in own.run_dirs if d != a_dir][0]
    b = zlb.run("softmax", "--dtypes", "float16", "--replay-from", str(a_dir))
    assert b.rc == 0, b
    b_dir = [d for d in b.run_dirs if d not in (a_dir, own_dir)][0]
    ka = [x[:4] for x in _shapes(a, a_dir)]
    assert [x[:4] for x in _shapes(own, own_dir)] != ka
    assert [x[:4] for x in _shapes(b, b_dir)] == ka
    assert {x[4] for x in _shapes(b, b_dir)} == {"replayed"}
    assert {x[4] for x in _shapes(a, a_dir)} == {"settled"}
    plan = json.loads((b_dir / "graph_plan.json").read_text())
    assert plan["schema_version"] == 2 and plan["kind"] == "graph_plan"
    assert plan["replay_from"] == str(a_dir) and len(plan["measurements"]) == len(ka)
    # each entry carries the duty the recording's samples ran at
    duties = [row[side]["power_duty"] for row in a.rows(a_dir) for side in ("torch", "gems")]
    assert [m["power_duty"] for m in plan["measurements"]] == duties
    assert set(duties) == {1.0}
    # and the K it captured first, which B captured first too
    firsts = [row[side]["calls_first"] for row in a.rows(a_dir) for side in ("torch", "gems")]
    assert [m["calls_first"] for m in plan["measurements"]] == firsts
    assert [row[side]["calls_first"] for row in b.rows(b_dir)
            for side in ("torch", "gems")] == firsts and min(firsts) >= 1
    assert b.identity(b_dir)["provenance"]["graph_plan"] == len(ka)
    assert not [e for e in b.events(b_dir) if e.get("event") == "GRAPH_SHAPE_NOT_REPLAYED"]


# ---- ZLB_PYTHON_PROBED: a probe handed down by the parent (zlb batch) ------------

TOKEN_FACTS = {"python": "3.99.0", "executable": "/x/python", "pytest": "99.0",
               "zlbench": "/x/zlbench/__init__.py", "flag_gems": None, "flaggems_vllm": None}


def proc_start(pid):
    """Start time of pid in clock ticks since boot (/proc/<pid>/stat field 22)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


def file_identity(path):
    st = os.stat(path)
    return f"{st.st_dev}:{st.st_ino}:{st.st_mtime_ns}:{st.st_size}:{st.st_ctime_ns}"


def probed_value(python, identity=None, pid=None, start=None, facts=None):
    """ZLB_PYTHON_PROBED as zlb batch writes it; this test process is zlb run's parent."""
    pid = os.getpid() if pid is None else pid
    return "\t".join([str(python), identity or file_identity(python),
                      f"{pid}:{proc_start(pid) if start is None else start}",
                      json.dumps(TOKEN_FACTS if facts is None else facts)])


def test_handed_down_probe_is_trusted_only_when_it_matches(zlb, logging_python, tmp_path):
    py = logging_python()
    other = logging_python("python-other")
    runs = iter(range(100))

    def run(value):
        before = py.probes()
        d = tmp_path / f"r{next(runs)}"
        env = {"ZLB_PYTHON_PROBED": value} if value is not None else {}
        r = zlb.run("softmax", "--dtypes", "float16", "--python", str(py.path),
                    "--run-dir", str(d), env=env)
        assert r.rc == 0, r
        return py.probes() - before, r.identity(d)["provenance"], (d / "run.log").read_text()

    # The positive control: a value naming this interpreter, file and parent.
    probes, prov, log = run(probed_value(py.path))
    assert probes == 0, py.lines()
    assert (prov["python_check"], prov["python_version"], prov["pytest_version"]) == \
        ("batch", "3.99.0", "99.0")
    assert f"python:   {py.path} (Python 3.99.0, pytest 99.0): ok (checked by the batch)" in log
    assert not [l for l in py.lines() if "token" in l], py.lines()   # pytest never sees it

    ino = os.stat(py.path).st_ino
    link = tmp_path / "python-link"
    link.symlink_to(py.path)
    stale = {
        "unset": None,
        "empty": "",
        "garbage": "x",
        "other file": probed_value(other.path),
        "same file, other name": probed_value(link),
        "other inode": probed_value(py.path, identity=file_identity(py.path).replace(
            f":{ino}:", f":{ino + 1}:", 1)),
        "not our parent": probed_value(py.path, pid=os.getppid()),
        "pid reused": probed_value(py.path, start=proc_start(os.getpid()) + 1),
        "facts not an object": probed_value(py.path, facts=[1]),
        "a field too many": probed_value(py.path) + "\tmore",
    }
    for name, value in stale.items():
        probes, prov, log = run(value)
        assert probes == 1, (name, py.lines())
        assert (prov["python_check"], prov["python_version"]) != ("batch", "3.99.0"), name
        assert prov["python_check"] == "probed", name
        assert "): ok (probed)" in log, name

    # Same path, the file changed since the value was made.
    value = probed_value(py.path)
    st = os.stat(py.path)
    os.utime(py.path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))      # mtime
    assert run(value)[0] == 1
    value = probed_value(py.path)
    time.sleep(0.05)   # file times tick with the kernel's clock (a few ms)
    st = os.stat(py.path)
    os.utime(py.path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    os.utime(py.path, ns=(st.st_atime_ns, st.st_mtime_ns))          # mtime put back: ctime
    assert run(value)[0] == 1
    value = probed_value(py.path)
    py.path.write_text(py.path.read_text())                         # rewritten in place
    assert run(value)[0] == 1
    # ... and a fresh value for the changed file is trusted again.
    assert run(probed_value(py.path))[0] == 0


def test_handed_down_facts_pass_the_same_checks(zlb, logging_python):
    py = logging_python()
    value = probed_value(py.path, facts=dict(TOKEN_FACTS, pytest=None,
                                             pytest_error="ModuleNotFoundError: no pytest"))
    r = zlb.run("softmax", "--python", str(py.path), env={"ZLB_PYTHON_PROBED": value})
    preflight(r, "python")
    assert "cannot import pytest (ModuleNotFoundError: no pytest)" in r.err, r
    assert py.probes() == 0


def test_preset_screen_sets_defaults_that_a_given_knob_still_beats(zlb):
    r = zlb.run("softmax", "--preset", "screen", "--warmup", "3", env={"ZL_WARMUP_MS": None,
                                                                       "ZL_ITER_MS": None})
    assert r.rc == 0, r
    cal = r.identity()["caliber"]
    assert cal["preset"] == "screen"
    assert cal["warmup_ms"] == 3                      # given: wins over the preset
    assert cal["min_time_ms"] == 25 and cal["max_wall_ms"] == 500   # the preset's
    assert cal["noise_target"] == 0.005 and cal["tune_rule"] == "budget"
    first = r.run_dir
    r = zlb.run("softmax", env={"ZL_WARMUP_MS": None, "ZL_ITER_MS": None})
    cal = r.identity(next(d for d in r.run_dirs if d != first))["caliber"]
    assert cal["preset"] == "full" and cal["min_time_ms"] == 100 and cal["max_wall_ms"] == 2000
    assert cal["tune_rule"] == "rows"


@pytest.mark.parametrize("op,rows", [("addr_benchmark", 2), ("convert_weight_to_int4pack", 5)])
def test_a_benchmark_with_a_run_of_its_own_gets_its_rows(zlb, op, rows):
    # Upstream's test_blas_perf_parallel.py hands its results only to to_json,
    # test_convert_weight_to_int4pack.py to an update_result it imported
    # itself: on the H200 both passed with 0 rows and their measurements dropped.
    r = zlb.run(op, "--dtypes", "float16")
    assert r.rc == 0, r
    got = r.rows()
    assert len(got) == rows and all(x["torch"] and x["gems"] for x in got), got
    assert [e for e in r.events() if e["event"] == "WARNING"] == []
    assert "zlb: %d rows: %d graph-timed" % (rows, rows) in r.out, r
