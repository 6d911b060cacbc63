"""bench/preload_window.py: the steady rule replayed on a whole preload's
profile; where it stops, and how far that is from the level the preload
ended on, must be that arithmetic."""
import subprocess
import sys

from bench_rounds import write_row
from conftest import REPO

SCRIPT = REPO / "bench" / "preload_window.py"


def profile(levels, ms=25.0):
    return [[ms * (i + 1), level] for i, level in enumerate(levels)]


def write_round(root, sides):
    return write_row(root, "addmm", sides)


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)],
                          capture_output=True, text=True, timeout=60)


# torch: holds 7.57 us for 6 chunks (150 ms), then steps to 7.51 and stays.
# gems: flat from the start. A steady-preloaded row (preload_stop) is left out.
TORCH = [7.60e-3] * 2 + [7.57e-3] * 6 + [7.51e-3] * 32
GEMS = [6.50e-3] * 40


def rounds(tmp_path):
    return write_round(tmp_path / "A", {
        "torch": {"preload_profile": profile(TORCH)},
        "gems": {"preload_profile": profile(GEMS)}}), \
        write_round(tmp_path / "B", {
            "torch": {"preload_profile": profile(TORCH), "preload_stop": "held"}})


def test_a_short_window_stops_on_the_climb_and_a_long_one_after_it(tmp_path):
    a, b = rounds(tmp_path)
    r = run(a, b, "--chunks", "4", "--within", "0.002")
    assert r.returncode == 0, r.stderr
    gems, torch, last = r.stdout.splitlines()
    # four chunks hold on 7.57 at the sixth chunk (150 ms), 0.80% above the end
    assert "stops at   150 ms on 7.570 us; end 7.510 us (+0.80%)" in torch, torch
    assert "stops at   100 ms on 6.500 us; end 6.500 us (+0.00%)" in gems, gems
    assert last == ("2 row-sides, 4 chunks within 0.002: stopped within 0.1% of the end "
                    "level on 1, beyond it on 1, never on 0"), last
    torch = run(a, "--chunks", "8").stdout.splitlines()[1]
    # eight hold only on 7.51: chunks 9-16, at 400 ms
    assert "stops at   400 ms on 7.510 us; end 7.510 us (+0.00%)" in torch, torch


def test_levels_that_never_hold_and_bad_input(tmp_path):
    a = write_round(tmp_path / "A", {
        "torch": {"preload_profile": profile([7.6e-3 * (1 - 0.003 * i) for i in range(12)])}})
    r = run(a, "--chunks", "4")
    assert r.returncode == 0 and "never held in 300 ms" in r.stdout, r
    assert r.stdout.splitlines()[-1].endswith("never on 1")
    assert run(a, "--chunks", "1").returncode != 0
    empty = write_round(tmp_path / "E", {"torch": {"median_ms": 1.0}})
    r = run(empty)
    assert r.returncode != 0 and "no row-side under" in r.stderr, r
