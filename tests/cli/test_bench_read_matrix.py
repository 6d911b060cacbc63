"""bench/read_matrix.sh: one matrix's rounds.tgz read by every off-GPU tool
into one file; refusals before anything is written over."""
import subprocess
import tarfile

from bench_rounds import write_row
from conftest import REPO

SCRIPT = REPO / "bench" / "read_matrix.sh"


def run(*args):
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, timeout=120)


def pack(tmp_path, rounds):
    src = tmp_path / "src"
    for b in rounds:
        for i, op in enumerate(("addmm", "gelu")):
            write_row(src / b, op, {"torch": {"centre_ms": 0.0075 + i,
                                              "placement_probe_draws": [0.001, 0.002],
                                              "placement_probe_pool_mib": [0.0, 0.0, 8.0]}})
    tgz = tmp_path / "rounds.tgz"
    with tarfile.open(tgz, "w:gz") as t:
        for b in rounds:
            t.add(src / b, arcname=b)
    return tgz


def test_every_reading_lands_in_one_file(tmp_path):
    tgz = pack(tmp_path, ["REC", "A", "B", "C", "D"])
    r = run(tgz, tmp_path / "w")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "w" / "readings.txt").read_text()
    heads = [l for l in text.splitlines() if l.startswith("== ")]
    assert heads == ["== single pairs, rows not SAME", "== two rounds a side",
                     "== addmm: the samplings and preloads",
                     "== where the steady rule would have stopped",
                     "== P against the centres, with each round's new memory",
                     "== two rounds with P from the probes placed as the measured graph"], heads
    # the probe columns read the rounds' new memory, like_placed nulled probe 2
    assert "new MiB 0/0/8 0/0/8 0/0/8 0/0/8" in text
    assert "nulled probe 2" in text


def test_refusals_write_nothing(tmp_path):
    r = run(tmp_path / "none.tgz", tmp_path / "w")
    assert r.returncode == 2 and "is not a file" in r.stderr, r
    tgz = pack(tmp_path, ["REC", "A", "B", "C"])
    r = run(tgz, tmp_path / "w")
    assert r.returncode == 2 and "holds no round D" in r.stderr, r
    assert not (tmp_path / "w").exists()
    (tmp_path / "w2").mkdir()
    r = run(tgz, tmp_path / "w2")
    assert r.returncode == 2 and "exists; give a new directory" in r.stderr, r
    assert list((tmp_path / "w2").iterdir()) == []
