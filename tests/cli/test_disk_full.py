"""A full disk during zlb run, zlb batch and zlb compare (issue 16, fault
injection): each ends with a documented exit code (7: zlb could not write its
files), files that say the same (no identity left at "running"), and nothing
written before the disk filled lost.

The disk is a small tmpfs mounted for the test (root, or wherever mounting is
allowed); elsewhere these tests skip and say why.
"""
import csv
import json
import subprocess

import pytest

from test_batch import recorded, world  # noqa: F401 (fixture)
from test_compare import make_sides


@pytest.fixture
def small_fs(tmp_path):
    mounts = []

    def make(size_kb, name="fs"):
        d = tmp_path / name
        d.mkdir()
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "zlb-test-full",
                            str(d)], capture_output=True, text=True)
        if r.returncode:
            pytest.skip("a small tmpfs cannot be mounted here (%s): the disk-full tests need "
                        "one (run them as root)" % (r.stderr.strip() or f"rc {r.returncode}"))
        mounts.append(d)
        return d

    def grow(d, size_kb):
        subprocess.run(["mount", "-o", f"remount,size={size_kb}k", str(d)], check=True)

    make.grow = grow
    yield make
    for d in mounts:
        subprocess.run(["umount", "-l", str(d)], capture_output=True)


def json_lines(path, filled):
    """The lines of a .jsonl file: all whole, but where the file system filled
    (filled) perhaps a last one cut short. The cut falls where the last page
    the file system had ends, which can be right before the newline: the
    fragment then parses, and is still no line. Where nothing filled, every
    line ends with its newline."""
    lines = path.read_text().split("\n") if path.exists() else []
    whole = [json.loads(l) for l in lines[:-1] if l.strip()]
    if lines and lines[-1]:
        assert filled, "%s ends without a newline: %r" % (path, lines[-1][-200:])
    return whole


def test_a_run_that_fills_its_disk_ends_with_exit_7_and_a_final_identity(zlb, small_fs):
    codes = []
    for size in (150, 200, 300, 4000):
        runs = small_fs(size, f"fs{size}")
        r = zlb.run("softmax", "--runs-dir", str(runs), timeout=120)
        codes.append(r.rc)
        run = next(runs.iterdir())
        ident = json.loads((run / "run_identity.json").read_text())
        assert ident["outcome"]["exit_code"] == r.rc, r
        assert r.out.rstrip().splitlines()[-1].startswith(
            f"zlb: {ident['status']}, exit {r.rc}; run directory"), r
        if r.rc == 7:
            assert ident["status"] == "failed" and ident["outcome"]["io_error"], ident
            assert "the file system of the run filled up while it ran" in r.out, r
        else:
            assert r.rc == 0 and ident["status"] == "completed", r
        rows = json_lines(run / "results.jsonl", r.rc == 7)
        json_lines(run / "events.jsonl", r.rc == 7)
        if r.rc == 0:
            assert rows and all(row["status"] == "SUCCESS" for row in rows)
        assert not (run / ".zlb-reserve").exists()
    assert 7 in codes and codes[-1] == 0, codes


def test_a_disk_too_full_to_start_a_run_is_said_at_once(zlb, small_fs):
    runs = small_fs(48)
    r = zlb.run("softmax", "--runs-dir", str(runs))
    assert r.rc == 7, r
    assert "has less than 64 KB free" in r.err, r
    assert list(runs.iterdir()) == []


@pytest.mark.parametrize("isolation", ["process", "worker"])
def test_a_batch_on_a_full_disk_stops_resumably_and_loses_nothing(world, small_fs, isolation):
    fs = small_fs(300)
    bdir = fs / "b"
    ops = ["b_pass", "b_fp32only", "b_slow", "softmax", "add", "b_xfail"]
    r = world.cmd("batch", "--batch-dir", str(bdir), "--progress", "plain",
                  "--isolation", isolation, "--ops", *ops)
    assert r.rc == 7, r
    assert "stopped by the environment" in r.err + r.out, r
    with open(bdir / "ops_status.csv", newline="") as f:
        st = {row["op"]: row for row in csv.DictReader(f)}
    assert set(st) == set(ops)
    done = {op for op, row in st.items() if row["status"] in ("PASS", "SKIP")}
    assert done and any(row["status"] == "PENDING" for row in st.values()), st
    assert not any(row["status"] in ("FAIL", "TIMEOUT") for row in st.values()), st
    for op in done:
        json.loads((bdir / "main" / op / ".complete").read_text())
    assert json.loads((bdir / "batch.json").read_text())["status"] == "environment"

    small_fs.grow(fs, 8000)
    r = world.cmd("batch", "--batch-dir", str(bdir), "--progress", "plain", "--resume")
    assert r.rc == 0, r
    with open(bdir / "ops_status.csv", newline="") as f:
        st2 = {row["op"]: row for row in csv.DictReader(f)}
    assert all(row["status"] in ("PASS", "SKIP") for row in st2.values()), st2
    runs = [n.split(".")[0] for n, _, _ in recorded(world)]
    for op in done:           # kept, not run again
        assert runs.count(op) == 1, (op, runs)


def test_compare_that_cannot_write_its_report_exits_7(zlb, small_fs, tmp_path):
    a, b = make_sides(tmp_path / "sides", rounds=1)
    out = small_fs(64)
    (out / "fill").write_bytes(b"\0" * 60 * 1024)
    r = zlb.cmd("compare", str(a), str(b), "--out", str(out / "report"), "--bootstrap", "0")
    assert r.rc == 7, r
    assert "No space left on device" in r.err, r
    for name in ("compare.json", "compare.csv"):
        p = out / "report" / name
        if p.exists():
            if name.endswith(".json"):
                json.loads(p.read_text())
    assert not [p for p in (out / "report").iterdir() if ".tmp." in p.name]
