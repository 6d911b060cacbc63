"""bench/timer_quality.py without a GPU: its pure parts (drift statistics,
verdicts, bandwidth, table formatting, argument parsing, aggregation and the
report) and, with the fake driver, the whole script end to end against the
stub torch/triton (every section must report, and a failing one must not
stop the others)."""

import importlib.util
import json
import os
import subprocess
import textwrap

import pytest

from conftest import FAKECUDA, PYDIR, PYTHON, REPO, STUBS, TIMER_LIB, need_timer

SCRIPT = os.path.join(REPO, "bench", "timer_quality.py")


def _load():
    spec = importlib.util.spec_from_file_location("timer_quality", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


tq = _load()


def test_imports_without_torch_triton_flag_gems():
    blocker = textwrap.dedent("""
        import sys, importlib.util
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "triton", "flag_gems", "numpy",
                                          "zlbench"):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        spec = importlib.util.spec_from_file_location("tq", %r)
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        a = m.parse_args([])
        print("OK", a.procs, m.drift([1.0, 1.0])["worst"])
    """ % SCRIPT)
    r = subprocess.run([PYTHON, "-c", blocker], capture_output=True, text=True,
                       env={"PATH": os.environ.get("PATH", "")})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["OK", "5", "0.0"]


# --- statistics --------------------------------------------------------------------------

def test_rel_diff_is_over_the_smaller():
    assert tq.rel_diff(1.0, 1.25) == 0.25
    assert tq.rel_diff(1.25, 1.0) == 0.25
    assert tq.rel_diff(0.0, 1.0) is None and tq.rel_diff(None, 1.0) is None
    assert tq.rel_diff(float("nan"), 1.0) is None


def test_drift_pairs_median_and_worst():
    d = tq.drift([1.0, 1.01, 0.99])
    assert d["n"] == 3 and d["pairs"] == 3
    pairs = sorted([0.01, 0.01 / 0.99, 0.02 / 0.99])
    assert d["median"] == pytest.approx(pairs[1])
    assert d["worst"] == pytest.approx(pairs[2])
    d5 = tq.drift([2.0, 2.0, 2.0, 2.0, 2.2])
    assert d5["pairs"] == 10
    assert d5["median"] == 0.0 and d5["worst"] == pytest.approx(0.1)


def test_drift_leaves_out_failed_processes():
    assert tq.drift([1.0, None, 1.1])["n"] == 2
    assert tq.drift([1.0, None]) is None
    assert tq.drift([]) is None
    assert tq.drift([1.0, 0.0, float("inf"), 1.0])["n"] == 2


def test_median_interpolates():
    assert tq.median([3, 1, 2]) == 2
    assert tq.median([4, 1, 2, 3]) == 2.5
    assert tq.median([]) is None


@pytest.mark.parametrize("cls,med,worst,want", [
    ("5us", 0.001, 0.005, "PASS"), ("5us", 0.0011, 0.001, "FAIL"),
    ("5us", 0.0001, 0.0051, "FAIL"), ("1us", 0.009, 0.01, "PASS"),
    ("1us", 0.0001, 0.0101, "FAIL"),
])
def test_drift_verdicts(cls, med, worst, want):
    assert tq.drift_verdict(cls, {"median": med, "worst": worst}) == want
    assert tq.drift_verdict(cls, None) == "n/a"


def test_peak_and_bandwidth():
    # An H200-like HBM3e: 3201 MHz x 6144 bit x 2 = 4.92 TB/s.
    assert tq.peak_bandwidth(3201000, 6144) == pytest.approx(4.917e12, rel=1e-3)
    assert tq.peak_bandwidth(None, 6144) is None and tq.peak_bandwidth(1, 0) is None
    # 1 GiB copied (2 GiB moved) in 0.509 ms is 4.2 TB/s.
    assert tq.bandwidth(2 << 30, 0.509) == pytest.approx(4.219e12, rel=1e-3)
    assert tq.bandwidth(1, 0) is None and tq.bandwidth(None, 1.0) is None


def test_kernel_bytes_count_read_and_write():
    a = tq.parse_args([])
    assert tq.kernel_bytes("copy_1gib", a) == 2 << 30
    assert tq.kernel_bytes("softmax_250us", a) == 2 * 8192 * 8192 * 2
    assert tq.kernel_bytes("add_1us", a) == 3 * 65536 * 2
    assert tq.kernel_label("softmax_250us", a) == "softmax 8192x8192 fp16 (~250 us)"
    assert tq.kernel_label("copy_1gib", a) == "Triton copy 1 GiB (kernel)"


# --- formatting ---------------------------------------------------------------------------

def test_format_table_aligns():
    t = tq.format_table(["kernel", "us", "note"],
                        [["add", "1.19", "PASS"], ["softmax 1k", "4.70", None]])
    lines = t.splitlines()
    assert lines[0] == "kernel        us  note"
    assert lines[1] == "----------  ----  ----"
    assert lines[2] == "add         1.19  PASS"
    assert lines[3] == "softmax 1k  4.70     -"
    with pytest.raises(ValueError):
        tq.format_table(["a", "b"], [["1"]])


def test_format_helpers():
    assert tq.fmt_pct(0.00123) == "0.123%"
    assert tq.fmt_pct(None) == "-"
    assert tq.fmt_us(0.00119) == "1.1900"
    assert tq.fmt_us(0.25) == "250.00"
    assert tq.fmt_tbs(4.2e12) == "4.200"


def test_marker_lines():
    out = ("hello\nGRAPH_MEMCPY_NODES count=2 role=null\nBENCHMARK_DIRECT_NO_CUDAGRAPH "
           "phase=capture reason=x repeat=1\nGRAPH_MEMCPY_NODESX\n")
    assert tq.marker_lines(out) == ["GRAPH_MEMCPY_NODES count=2 role=null",
                                    "BENCHMARK_DIRECT_NO_CUDAGRAPH phase=capture "
                                    "reason=x repeat=1"]


# --- arguments ----------------------------------------------------------------------------

def test_defaults():
    a = tq.parse_args([])
    assert a.procs == 5 and a.timers == tq.DEFAULT_TIMERS and a.kernels == tq.KERNEL_NAMES
    assert "zlbt_p1" not in a.timers and "zlbt_p1" in tq.TIMERS     # opt in
    assert (a.warmup_ms, a.rep_ms, a.spin_us) == (1000.0, 100.0, 20.0)
    assert a.copy_bytes == 1 << 30 and a.big_softmax == (8192, 8192)
    assert a.timer_lib.endswith(os.path.join("build", "libzlbtimer.so"))
    assert a.worker is None


def test_subsets_keep_the_canonical_order():
    a = tq.parse_args(["--timers", "cudagraph,zlbt", "--kernels", "copy_1gib,add_1us"])
    assert a.timers == ("zlbt", "cudagraph")
    assert a.kernels == ("add_1us", "copy_1gib")


def test_one_placement_column_is_opt_in():
    a = tq.parse_args(["--timers", "zlbt_p1,zlbt"])
    assert a.timers == ("zlbt", "zlbt_p1")
    assert "1 placement" in tq.TIMER_LABELS["zlbt_p1"] and "zlbt_p1" in tq.TIMER_NOTES
    assert tq.mean([1.0, 2.0, 6.0]) == 3.0


def test_environ_sets_and_restores(monkeypatch):
    monkeypatch.setenv("ZLB_L2", "hot")
    monkeypatch.delenv("ZLB_PLACEMENTS", raising=False)
    with tq._environ({"ZLB_L2": "cold", "ZLB_PLACEMENTS": "1", "ZLB_X": None}):
        assert os.environ["ZLB_L2"] == "cold" and os.environ["ZLB_PLACEMENTS"] == "1"
        assert "ZLB_X" not in os.environ
    assert os.environ["ZLB_L2"] == "hot" and "ZLB_PLACEMENTS" not in os.environ


def test_no_flaggems_drops_the_pair():
    a = tq.parse_args(["--no-flaggems"])
    assert not any(k.startswith("fg_") for k in a.kernels)


@pytest.mark.parametrize("argv", [
    ["--procs", "1"], ["--timers", "zlbt,nvbench"], ["--kernels", ""],
    ["--copy-bytes", "0.5B"], ["--copy-bytes", "6"], ["--big-softmax", "8192"],
    ["--big-softmax", "axb"], ["--copy-block", "1000"], ["--worker", "aa"],
])
def test_bad_arguments_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as e:
        tq.parse_args(argv)
    assert e.value.code == 2


def test_sizes():
    assert tq.parse_size("1GiB") == 1 << 30
    assert tq.parse_size("512MiB") == 512 << 20
    assert tq.parse_size("4096") == 4096
    assert tq.parse_size("0.5GiB") == 512 << 20


def test_worker_command_line_round_trips():
    a = tq.parse_args(["--procs", "3", "--timers", "zlbt,do_bench", "--rep-ms", "50",
                       "--big-softmax", "4096x8192", "--copy-bytes", "256MiB",
                       "--no-flaggems", "--timer-lib", "/x/lib.so"])
    argv = tq.worker_argv(a, "aa", 2, "/tmp/w.json")
    assert argv[1] == os.path.abspath(SCRIPT)
    w = tq.parse_args(argv[2:])
    assert (w.worker, w.worker_index, w.worker_out) == ("aa", 2, "/tmp/w.json")
    for k in ("procs", "timers", "kernels", "rep_ms", "warmup_ms", "big_softmax",
              "copy_bytes", "copy_block", "copy_warps", "timer_lib", "no_flaggems",
              "spin_us", "device"):
        assert getattr(w, k) == getattr(a, k), k


# --- aggregation and the report -----------------------------------------------------------

def _worker(values, walls=None, rec=None):
    res = {}
    for kernel, per_timer in values.items():
        res[kernel] = {}
        for t, v in per_timer.items():
            if isinstance(v, str):
                res[kernel][t] = {"error": v}
            else:
                res[kernel][t] = {"ms": v, "wall_s": (walls or {}).get(t, 0.5),
                                  "error": None,
                                  "record": rec if t == "zlbt" else None}
    return {"results": res, "env": {"device": "NVIDIA H200", "l2_bytes": 60 << 20,
                                    "peak_bw_bps": 4.8e12, "peak_how": "test"}}


def _synthetic(args):
    rec = {"timer": "graph", "n": 120, "calls_per_replay": 841, "noise": 0.0004,
           "stop_reason": "noise", "discarded": 0, "clock_mhz": 1980.0, "markers": []}
    workers = []
    for i in range(5):
        j = 1 + 0.0002 * i
        workers.append(_worker({
            "add_1us": {"zlbt": 0.00119 * j, "do_bench": 0.005 * (1 + 0.2 * i),
                        "cudagraph": 0.00119, "cudagraph_fg": 0.00119},
            "add_1us_spin": {"zlbt": 0.00119 * j * 1.001, "do_bench": 0.021,
                             "cudagraph": 0.0012, "cudagraph_fg": 0.0012},
            "copy_1gib": {"zlbt": 0.53 * j, "do_bench": 0.54, "cudagraph": 0.40,
                          "cudagraph_fg": "RuntimeError: boom"},
            "softmax_5us": {"zlbt": 0.0047 * (1 + 0.01 * i), "do_bench": 0.009,
                            "cudagraph": 0.0047, "cudagraph_fg": 0.0047},
            "fg_softmax_torch": {"zlbt": 0.06, "do_bench": 0.07, "cudagraph": 0.06,
                                 "cudagraph_fg": 0.06 * (1 + 0.001 * i)},
            "fg_softmax_gems": {"zlbt": 0.05, "do_bench": 0.06, "cudagraph": 0.05,
                                "cudagraph_fg": 0.05},
        }, walls={"zlbt": 0.2, "cudagraph_fg": 0.35}, rec=rec))
    workers.append({"error": "aa worker 5: exit 1, no output"})
    extras = {"env": workers[0]["env"],
              "memcpy_eager": {"ms": 0.509, "bytes": 2 << 30},
              "caliber": {"timer": "graph", "ms": 0.79, "bytes": 2 << 30,
                          "graph": {"kernels": 0, "memcpys": 2, "memsets": 0, "others": 0},
                          "markers": ["GRAPH_MEMCPY_NODES"],
                          "stdout_marker": "GRAPH_MEMCPY_NODES count=2 role=null"},
              "cold_l2": {"hot_ms": [0.0047, 0.0047], "cold_ms": [0.0061, 0.0060],
                          "cold_l2": "cold", "l2_flush_bytes": 62914560}}
    return workers, extras


def test_aggregate_and_verdicts():
    a = tq.parse_args(["--kernels", "add_1us,add_1us_spin,copy_1gib,softmax_5us,"
                       "fg_softmax_torch,fg_softmax_gems"])
    workers, extras = _synthetic(a)
    s = tq.aggregate(a, workers, extras)
    assert s["procs_ok"] == 5 and len(s["worker_errors"]) == 1
    k = s["kernels"]
    assert k["add_1us"]["timers"]["zlbt"]["verdict"] == "PASS"
    assert k["softmax_5us"]["timers"]["zlbt"]["verdict"] == "FAIL"    # 4% worst
    assert k["add_1us"]["timers"]["do_bench"]["drift"]["worst"] == pytest.approx(0.8)
    assert "verdict" not in k["add_1us"]["timers"]["do_bench"]
    assert k["copy_1gib"]["timers"]["cudagraph_fg"]["errors"] == ["RuntimeError: boom"] * 5
    assert k["copy_1gib"]["timers"]["cudagraph_fg"]["drift"] is None
    assert k["add_1us"]["timers"]["zlbt"]["zlbt"]["stop"] == {"noise": 5}
    # Launch overhead: zlbt moved 0.1%, do_bench 3x.
    assert s["launch"]["zlbt"]["verdict"] == "PASS"
    assert s["launch"]["do_bench"]["ratio"] == pytest.approx(3.0)   # 0.021 / median 0.007
    # Physical: the cudagraph copy (0.40 ms = 5.37 TB/s) is beyond the 4.8 TB/s peak
    # and is the best "bandwidth"; zlbt's 4.05 TB/s is 75% of it.
    p = s["physical"]
    assert [o["timer"] for o in p["beyond_peak"]] == ["cudagraph"]
    assert p["peak_verdict"] == "PASS"
    assert p["best_bps"] == pytest.approx((2 << 30) / 0.40e-3)
    assert p["zlbt_verdict"] == "FAIL"
    # Cost: zlbt 0.4 s per pair vs 0.7 s, drift 0 vs 0.4%.
    c = s["cost"]["fg_softmax"]
    assert c["zlbt"]["pair_wall_s"] == pytest.approx(0.4)
    assert c["cudagraph_fg"]["pair_wall_s"] == pytest.approx(0.7)
    assert c["verdict"] == "PASS"
    assert s["caliber"]["verdict"] == "PASS"
    assert s["cold_l2"]["verdict"] == "PASS"
    names = dict(s["verdicts"])
    assert names["graph caliber trap"] == "PASS" and names["drift softmax_5us"] == "FAIL"
    text = tq.render(a, s, "python3 bench/timer_quality.py")
    for part in ("NVIDIA H200", "A/A drift", "Launch-overhead", "Physical limit",
                 "BEYOND PEAK: copy_1gib under cudagraph", "Cost", "caliber trap",
                 "Cold L2", "Summary", "worker error: aa worker 5"):
        assert part in text, part


def test_aggregate_with_nothing_survives():
    a = tq.parse_args([])
    s = tq.aggregate(a, [{"error": "x"}, {"error": "y"}], None)
    assert s["procs_ok"] == 0 and s["verdicts"] == []
    text = tq.render(a, s, "cmd")
    assert "nothing was judged" in text and "not run" in text


def test_caliber_without_the_stdout_line_fails():
    a = tq.parse_args(["--kernels", "add_1us"])
    workers, extras = _synthetic(a)
    extras["caliber"]["stdout_marker"] = None
    assert tq.aggregate(a, workers[:2], extras)["caliber"]["verdict"] == "FAIL"
    extras["cold_l2"]["cold_ms"] = [0.0046, 0.0046]
    assert tq.aggregate(a, workers[:2], extras)["cold_l2"]["verdict"] == "FAIL"


# --- end to end on the stubs --------------------------------------------------------------

def test_whole_script_on_the_stubs(tmp_path):
    need_timer()
    out = tmp_path / "tq.json"
    env = {"PATH": os.environ.get("PATH", ""),
           "PYTHONPATH": os.pathsep.join([PYDIR, STUBS]),
           "ZLB_LIBCUDA": FAKECUDA}
    r = subprocess.run([PYTHON, SCRIPT, "--timer-lib", TIMER_LIB, "--out", str(out),
                        "--procs", "2", "--warmup-ms", "1", "--rep-ms", "1",
                        "--copy-bytes", "1MiB", "--big-softmax", "64x64"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "command: " in r.stdout and "== Summary ==" in r.stdout
    rep = json.loads(out.read_text())
    s = rep["summary"]
    assert s["procs_ok"] == 2
    # The stub triton has no triton.language: the copy kernel fails to build,
    # flag_gems is absent; both are reported and the rest goes on.
    copy = s["kernels"]["copy_1gib"]["timers"]["zlbt"]
    assert copy["errors"] and "build failed" in copy["errors"][0]
    assert "flag_gems not importable" in s["kernels"]["fg_softmax_gems"]["timers"]["zlbt"][
        "errors"][0]
    add = s["kernels"]["add_1us"]["timers"]["zlbt"]
    assert add["zlbt"]["timers"] == ["graph"] and add["verdict"] == "PASS"
    assert s["launch"]["zlbt"]["verdict"] == "PASS"
    assert s["caliber"]["verdict"] == "PASS", s["caliber"]
    assert s["caliber"]["graph"]["memcpys"] >= 1
    assert s["cold_l2"]["verdict"] == "PASS" and s["cold_l2"]["cold_l2"] == "cold"
    assert rep["extras"]["marker_lines"][0].startswith("GRAPH_MEMCPY_NODES count=")


def test_copy_config_is_fixed_for_every_process():
    a = tq.parse_args([])
    tq.pick_copy_config(a, {"copy_config": {"best": [8192, 8]}})
    assert (a.copy_block, a.copy_warps, a.copy_how) == (8192, 8, "fastest of the sweep")
    argv = tq.worker_argv(a, "aa", 0, "/tmp/x.json")
    w = tq.parse_args(argv[2:])
    assert (w.copy_block, w.copy_warps) == (8192, 8)
    b = tq.parse_args([])
    tq.pick_copy_config(b, {"copy_config": {"error": "no triton"}})
    assert (b.copy_block, b.copy_warps, b.copy_how) == tq.DEFAULT_COPY + ("default",)
    c = tq.parse_args(["--copy-block", "2048", "--copy-warps", "4"])
    tq.pick_copy_config(c, {"copy_config": {"best": [8192, 8]}})
    assert (c.copy_block, c.copy_warps, c.copy_how) == (2048, 4, "given")
    with pytest.raises(SystemExit):
        tq.parse_args(["--copy-warps", "3"])


def test_the_one_placement_engine_gets_its_own_drift_column():
    a = tq.parse_args(["--kernels", "softmax_5us", "--timers", "zlbt,zlbt_p1"])
    workers = [{"env": {"device": "NVIDIA H200"}, "section_errors": [],
                "results": {"softmax_5us": {
                    "zlbt": {"ms": 0.0020 * (1 + d / 4), "wall_s": 0.3, "record": None,
                             "error": None},
                    "zlbt_p1": {"ms": 0.0020 * (1 + d), "wall_s": 0.2, "record": None,
                                "error": None}}}}
               for d in (0.0, 0.004, -0.004, 0.002, 0.0)]
    s = tq.aggregate(a, workers, {"env": workers[0]["env"]})
    t = s["kernels"]["softmax_5us"]["timers"]
    assert t["zlbt"]["drift"]["worst"] < t["zlbt_p1"]["drift"]["worst"]
    assert "verdict" not in t["zlbt_p1"]                # measured, not judged
    text = tq.render(a, s, "python3 bench/timer_quality.py --timers zlbt,zlbt_p1")
    assert tq.TIMER_LABELS["zlbt_p1"] in text
