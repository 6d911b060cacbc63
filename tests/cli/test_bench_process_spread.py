"""bench/process_spread.py: between-process spread of each row against the
engine's own account of one process (placement_sd and noise), from rounds'
results.jsonl; the rows it prints and counts must be the arithmetic of what
the rounds hold."""
import json
import subprocess
import sys

import pytest

from bench_rounds import write_row
from conftest import REPO

SCRIPT = REPO / "bench" / "process_spread.py"


def write_round(root, rows):
    """rows: [(op, shape, side, median_ms, placement_sd, noise)] as one batch."""
    by_row = {}
    for op, shape, side, ms, psd, noise in rows:
        by_row.setdefault((op, shape), {})[side] = {"median_ms": ms, "placement_sd": psd,
                                                    "noise": noise}
    for (op, shape), sides in by_row.items():
        write_row(root, op, sides, shape=shape)
    return root


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def rounds(tmp_path, wobble):
    """Three rounds: addmm's gems median moves by wobble between them with an
    engine sd of 0.1%; gelu stays put; a 2 us row is under the floor."""
    out = []
    for i, w in enumerate((0.0, wobble, -wobble)):
        out.append(write_round(tmp_path / ("r%d" % i), [
            ("addmm", "[1024]", "gems", 0.0066 * (1 + w), 0.001, 0.0),
            ("addmm", "[1024]", "torch", 0.0076, 0.001, 0.0005),
            ("gelu", "[2048]", "gems", 0.0069 * (1 + w / 100), 0.0005, 0.0),
            ("tiny", "[8]", "gems", 0.002 * (1 + 5 * w), 0.0001, 0.0)]))
    return out


def test_a_row_that_moves_between_processes_is_named_and_counted(tmp_path):
    r = run(*rounds(tmp_path, 0.01))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # between: sd of (1, 1.01, 0.99) = 1% of the mean; engine 0.1%: ratio 10
    (row,) = [l for l in lines if l.startswith("gems  addmm")]
    cells = row.split()
    assert cells[-3:] == ["1.000", "0.100", "10.0"], row
    assert not any(l.startswith("gems  gelu") or "tiny" in l for l in lines), lines
    # rows >= 5 us: addmm gems and torch, gelu gems; only addmm gems is over 2x (and 4x)
    assert lines[-1] == "3 rounds, 3 rows >= 5 us: between > 2x engine on 1, > 4x on 1", lines


def test_all_prints_every_row_and_the_floor_moves(tmp_path):
    dirs = rounds(tmp_path, 0.01)
    lines = run(*dirs, "--all").stdout.splitlines()
    assert [l.split()[1] for l in lines[1:-1]] == ["addmm", "gelu", "addmm"], lines
    # torch addmm never moved: between 0, engine hypot(0.1%, 0.05%)
    assert lines[3].split()[-3:] == ["0.000", "0.112", "0.0"], lines[3]
    lines = run(*dirs, "--min-us", "1", "--all").stdout.splitlines()
    assert any("tiny" in l for l in lines) and lines[-1].startswith("3 rounds, 4 rows >= 1 us")


@pytest.mark.parametrize("script", ["process_spread.py", "probe_columns.py"])
def test_too_few_rounds_or_an_empty_one_is_refused(tmp_path, script):
    # both read their rounds through _results.rounds_or_exit
    dirs = rounds(tmp_path, 0.01)

    def script_run(*args):
        return subprocess.run([sys.executable, str(REPO / "bench" / script), *map(str, args)],
                              capture_output=True, text=True, timeout=60)
    r = script_run(*dirs[:2])
    assert r.returncode != 0 and "%s: give three or more rounds" % script in r.stderr, r
    empty = tmp_path / "empty"
    empty.mkdir()
    r = script_run(*dirs[:2], empty)
    assert r.returncode != 0 and "holds no measured rows" in r.stderr and str(empty) in r.stderr


def test_rounds_that_read_their_clock_show_it_beside_the_row(tmp_path):
    dirs = rounds(tmp_path, 0.01)
    for d, mhz in zip(dirs, (1964.3, 1970.1, 1951.8)):
        f = d / "main" / "addmm" / "results.jsonl"
        rec = json.loads(f.read_text())
        rec["gems"]["effective_mhz"] = mhz
        f.write_text(json.dumps(rec) + "\n")
    lines = run(*dirs).stdout.splitlines()
    i = next(i for i, l in enumerate(lines) if l.startswith("gems  addmm"))
    assert lines[i + 1] == ("      per round: 6.600 us @ 1964.3 MHz  6.666 us @ 1970.1 MHz  "
                            "6.534 us @ 1951.8 MHz"), lines
    # torch's rounds read none: no such line under it
    assert not any("per round" in l for l in lines[i + 2:]), lines
