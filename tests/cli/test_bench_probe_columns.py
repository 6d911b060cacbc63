"""bench/probe_columns.py: each row's aligned placement sd (as zlb compare
computes it) against the sd of its measured graph's centre over the rounds
and each probe column's own sd; the numbers it prints must be that
arithmetic on what the rounds hold."""
import math
import statistics
import subprocess
import sys

from bench_rounds import write_row
from conftest import REPO

SCRIPT = REPO / "bench" / "probe_columns.py"


def write_round(root, rows):
    """rows: [(op, side, centre_ms, draws)] as one batch, shape [2048]."""
    by_op = {}
    for op, side, ms, draws in rows:
        by_op.setdefault(op, {})[side] = {"centre_ms": ms, "placement_probe_draws": draws}
    for op, sides in by_op.items():
        write_row(root, op, sides, shape="[2048]")
    return root


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)],
                          capture_output=True, text=True, timeout=60)


# rms: the measured graph steady (centres 0.1% apart), probe 1 always -7%,
# probe 2 anywhere: the aligned sd far over the centres'. gelu: its probes
# repeat each other while the process moves the centre by 0.5%.
RMS = [(0.0750, [-0.070, -0.010]), (0.07508, [-0.071, -0.060]),
       (0.07492, [-0.069, -0.030]), (0.07500, [-0.070, -0.045])]
GELU = [(0.0069, [0.001, 0.0005]), (0.006935, [0.001, 0.0005]),
        (0.006865, [0.0011, 0.0005]), (0.0069, [0.001, 0.0006])]


def rounds(tmp_path):
    return [write_round(tmp_path / ("r%d" % i), [
        ("rms_norm", "torch", RMS[i][0], RMS[i][1]),
        ("gelu", "gems", GELU[i][0], GELU[i][1]),
        ("tiny", "gems", 0.002, [0.0, 0.01]),
        ("noprobe", "gems", 0.01, None)]) for i in range(4)]


def aligned(table):
    p, c = len(table), len(table[0])
    g = sum(map(sum, table)) / (p * c)
    row = [sum(r) / c for r in table]
    col = [sum(t[j] for t in table) / p for j in range(c)]
    ss = sum((table[i][j] - row[i] - col[j] + g) ** 2 for i in range(p) for j in range(c))
    return math.sqrt(ss / ((p - 1) * (c - 1)))


def test_each_rows_numbers_are_the_rounds_arithmetic(tmp_path):
    r = run(*rounds(tmp_path), "--all")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    (rms,) = [l for l in lines if l.startswith("torch rms_norm")]
    cells = rms.split()
    p = aligned([[0.0] + d for _, d in RMS])
    c = statistics.stdev([math.log(ms) for ms, _ in RMS])
    assert cells[3:6] == ["%.3f" % (100 * p), "%.3f" % (100 * c), "%.2f" % (p / c)], rms
    assert cells[6:] == ["%.3f" % (100 * statistics.stdev([d[j] for _, d in RMS]))
                         for j in range(2)], rms
    assert p / c > 2
    # rows under --min-us and rows without probes in every round are left out
    assert not any("tiny" in l or "noprobe" in l for l in lines), lines
    assert lines[-1] == ("4 rounds, 2 rows >= 5 us with probes in each: P over 2x the "
                         "centres' sd on 1, under 1/2 on 1"), lines


def test_without_all_only_the_far_rows_are_listed_in_falling_ratio(tmp_path):
    dirs = rounds(tmp_path)
    lines = run(*dirs).stdout.splitlines()
    assert [l.split()[1] for l in lines[1:-1]] == ["rms_norm", "gelu"], lines
    # with the floor at 1 us the 2 us row joins (its centre never moved: ratio inf)
    lines = run(*dirs, "--min-us", "1").stdout.splitlines()
    assert lines[1].split()[1] == "tiny" and lines[1].split()[5] == "inf", lines
    # (its refusals of too few rounds, or an empty one, are tested with
    # process_spread.py's: test_bench_process_spread.py)


def test_each_rounds_new_memory_is_shown_beside_the_columns(tmp_path):
    # Which graphs took new memory from the driver, round by round: the
    # column that lands anywhere should be the one that did.
    pools = [[0.0, 0.0, 256.0], [0.0, 0.0, 256.0], [0.0, 256.0, 256.0], None]
    dirs = []
    for i in range(4):
        m = {"centre_ms": RMS[i][0], "placement_probe_draws": RMS[i][1]}
        if pools[i] is not None:
            m["placement_probe_pool_mib"] = pools[i]
        dirs.append(write_row(tmp_path / ("r%d" % i), "rms_norm", {"torch": m}, shape="[2048]"))
    r = run(*dirs, "--all")
    assert r.returncode == 0, r.stderr
    (rms,) = [l for l in r.stdout.splitlines() if l.startswith("torch rms_norm")]
    assert rms.endswith("  new MiB 0/0/256 0/0/256 0/256/256 -"), rms
    # rounds that never recorded it print the columns alone (the first test)
