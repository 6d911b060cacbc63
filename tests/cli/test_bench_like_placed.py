"""bench/like_placed.py: copies of rounds whose probes placed otherwise than
the measured graph (new memory against cached blocks) have no draw, so that
zlb compare's aligned fit leaves their columns out; the rounds themselves
stay as they were."""
import json
import subprocess
import sys

from bench_rounds import write_row
from conftest import REPO

SCRIPT = REPO / "bench" / "like_placed.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def side(draws, pools):
    m = {"centre_ms": 0.075, "placement_probe_draws": draws}
    if pools is not None:
        m["placement_probe_pool_mib"] = pools
    return m


def rounds(tmp_path):
    # rms: probe 2 took new memory in every round, probe 1 in one round;
    # gelu: no reading of the measured graph; old: written before the key
    pools = [[0.0, 0.0, 64.0], [0.0, 64.0, 64.0], [0.0, 0.0, 64.0]]
    dirs = []
    for i in range(3):
        root = tmp_path / ("r%d" % i)
        write_row(root, "rms_norm", {"torch": side([-0.07, -0.01 * i], pools[i])})
        write_row(root, "gelu", {"gems": side([0.001, 0.002], [None, 0.0, 64.0])})
        write_row(root, "old", {"gems": side([0.003, 0.004], None)})
        (root / "main" / "rms_norm" / "ir").mkdir()
        (root / "main" / "rms_norm" / "ir" / "big.bin").write_bytes(b"x" * 10)
        dirs.append(root)
    return dirs


def draws_of(root, op, kind):
    (line,) = (root / "main" / op / "results.jsonl").read_text().splitlines()
    return json.loads(line)[kind]["placement_probe_draws"]


def test_probes_placed_otherwise_lose_their_draws_in_the_copies(tmp_path):
    dirs = rounds(tmp_path)
    out = tmp_path / "like"
    r = run(*dirs, "--out", out)
    assert r.returncode == 0, r.stderr
    copies = [out / d.name for d in dirs]
    # rms_norm: probe 2 (new) nulled everywhere, probe 1 where it took new memory
    assert [draws_of(c, "rms_norm", "torch") for c in copies] == [
        [-0.07, None], [None, None], [-0.07, None]]
    # no reading of the measured graph: nothing to go by, nothing nulled
    assert all(draws_of(c, "gelu", "gems") == [0.001, 0.002] for c in copies)
    assert all(draws_of(c, "old", "gems") == [0.003, 0.004] for c in copies)
    # the rounds themselves are untouched, and the copies carry no IR
    assert draws_of(dirs[1], "rms_norm", "torch") == [-0.07, -0.01]
    assert not (copies[0] / "main" / "rms_norm" / "ir").exists()
    lines = r.stdout.splitlines()
    assert any(l.startswith("torch rms_norm") and "float16" in l and
               l.endswith("C/C/N C/N/N C/C/N  nulled probe 1,2  (no column left: compare "
                          "takes placement_sd)") for l in lines), lines
    assert any(l.startswith("gems  gelu") and l.endswith("nulled probe none") for l in lines)
    assert lines[-1] == "2 row sides; the copies are in %s" % out


def test_a_linked_results_file_is_replaced_in_the_copy_not_written_through(tmp_path):
    dirs = rounds(tmp_path)
    real = tmp_path / "elsewhere.jsonl"
    res = dirs[0] / "main" / "rms_norm" / "results.jsonl"
    real.write_text(res.read_text())
    res.unlink()
    res.symlink_to(real)
    before = real.read_text()
    r = run(*dirs, "--out", tmp_path / "like")
    assert r.returncode == 0, r.stderr
    assert real.read_text() == before
    copy = tmp_path / "like" / "r0" / "main" / "rms_norm" / "results.jsonl"
    assert not copy.is_symlink() and draws_of(tmp_path / "like" / "r0", "rms_norm",
                                              "torch") == [-0.07, None]


def test_it_writes_over_nothing(tmp_path):
    dirs = rounds(tmp_path)
    out = tmp_path / "like"
    out.mkdir()
    r = run(*dirs, "--out", out)
    assert r.returncode == 1 and "exists; give a new directory" in r.stderr, r
    assert list(out.iterdir()) == []
    twin = tmp_path / "x" / dirs[0].name
    twin.mkdir(parents=True)
    r = run(dirs[0], twin, "--out", tmp_path / "like2")
    assert r.returncode == 1 and "share the name r0" in r.stderr, r
    assert not (tmp_path / "like2").exists()
