"""bench/sampling_steps.py: where inside its sampling a row's time settled,
read from its samples in the order they ran, and the preload a row had."""
import subprocess
import sys

from bench_rounds import write_row
from conftest import REPO

SCRIPT = REPO / "bench" / "sampling_steps.py"


def write_round(root, sides):
    """sides: {side: measurement dict} of one addmm row."""
    return write_row(root, "addmm", sides)


def run(*args):
    r = subprocess.run([sys.executable, str(SCRIPT), *map(str, args)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_a_step_is_placed_in_time_and_a_preload_is_named(tmp_path):
    # 10 samples at 7.60 us, then 20 at 7.51; 512 calls a replay: a sample of
    # 7.6e-3 ms per call is 3.89 ms of GPU time
    steps = [7.60e-3] * 10 + [7.51e-3] * 20
    flat = [6.50e-3] * 30
    root = write_round(tmp_path / "A", {
        "torch": {"samples_ms": steps, "median_ms": 7.51e-3, "calls_per_replay": 512,
                  "power_duty": 1.0},
        "gems": {"samples_ms": flat, "median_ms": 6.50e-3, "calls_per_replay": 512,
                 "power_duty": 1.0, "phase_ms": {"preload": 1000.4},
                 "preload_trend": -0.0123, "preload_stop": "held", "preload_steady_ms": 212.4,
                 "preload_profile": [[250.2, 6.58e-3], [1000.1, 6.501e-3]]}})
    gems, torch = run("--op", "addmm", root)
    assert "start     7.600  last     7.510" in torch, torch
    # the running median (width 5) leaves 7.60 at sample 10: 10 samples of 3.89 ms
    settled = 10 * 7.60e-3 * 512
    assert "settled after %5.0f of" % settled in torch, torch
    assert "trend -1.19%" in torch and "preload" not in torch, torch
    assert "settled after     0 of" in gems and "trend +0.00%" in gems, gems
    assert gems.endswith("preload 1000 ms, trend -1.23%, stopped: held at 212 GPU ms, "
                         "us per call by GPU ms: 6.580@250 6.501@1000"), gems


def test_other_operators_and_short_rows_are_left_out(tmp_path):
    root = write_round(tmp_path / "A", {
        "torch": {"samples_ms": [7.5e-3] * 9, "median_ms": 7.5e-3, "calls_per_replay": 1}})
    assert run("--op", "addmm", root) == []
    assert run("--op", "gelu", root) == []
