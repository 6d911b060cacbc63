"""zlb run --parallel-warmup-gpus N: the autotune sweep sharded over fake devices.

The fake driver shows FAKE_CUDA_DEVICES cards (and honours an inherited
CUDA_VISIBLE_DEVICES); the fake tuned_scale kernel autotunes on each new N
and dtype, and the stub Triton logs every tuner call to $FAKE_TUNE_LOG with
the card it saw and whether it ran in a shard (ZLB_SWEEP_ONLY). Fakes of
the fake FlagGems: FAKE_TUNE_BIAS_CARD (live tuning picks other configs on
that card), FAKE_BROKEN_CARD (SIGSEGV on that card), FAKE_TUNE_SLEEP.
"""
import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from conftest import FAKE_MAIN

# Five shapes, five keys (N = numel): 4096, 4096, 16384, 32768, 64.
FIVE = "tuned_scale:\n  shapes:\n    - [64, 64]\n    - [16, 256]\n" \
       "    - [128, 128]\n    - [32, 1024]\n    - [8, 8]\n"
WARNING = ("config key(s) got different winners across shards \u2014 parallel "
           "interference reached the sweep")


def run(zlb, shapes_file, *args, devices=2, env=None, log=None):
    e = {"FAKE_CUDA_DEVICES": str(devices)}
    if log is not None:
        e["FAKE_TUNE_LOG"] = str(log)
    e.update(env or {})
    return zlb.run("tuned_scale", "--shapes", str(shapes_file), "--dtypes", "float16",
                   "--run-dir", str(zlb.runs / ("r%d" % time.monotonic_ns())), *args, env=e)


def last(zlb):
    """The newest run directory (run() names them by a monotonic clock)."""
    return max(zlb.runs.iterdir(), key=lambda p: int(p.name[1:]))


def records(run_dir):
    """{(where, kernel): {key text: config}} of a run's autotune_records."""
    doc = json.loads((Path(run_dir) / "autotune_records" / "tuned_scale.json").read_text())
    out = {}
    for k in doc["kernels"]:
        out[(k["where"], k["kernel"])] = {json.dumps(e["key"]): e["config"]
                                          for e in k["entries"]}
    return out


def tune_log(path):
    return [json.loads(l) for l in Path(path).read_text().splitlines()] \
        if Path(path).exists() else []


def sweep_of(r):
    return r.identity()["provenance"]["parallel_sweep"]


@pytest.mark.parametrize("n", [2, 4])
def test_shards_choose_what_the_serial_sweep_chooses(zlb, shapes, tmp_path, n):
    f = shapes(FIVE)
    serial = run(zlb, f, devices=n)
    assert serial.rc == 0, serial
    log = tmp_path / "tune.jsonl"
    r = run(zlb, f, "--parallel-warmup-gpus", str(n), devices=n, log=log)
    assert r.rc == 0, r
    d = last(zlb)
    # The same choices, by content, as the serial sweep's record.
    assert records(d) == records(serial.run_dirs[0]), (d, serial)
    assert len(records(d)[("flag_gems.tuned.scale:scale_kernel.fn", "scale_kernel")]) == 4
    assert records(d) != {}
    meta = json.loads((d / "autotune_records" / "meta.json").read_text())
    assert meta["entries"] == 4 and meta["tuners"] == 1 and meta["backend"] == "cuda"
    ident = json.loads((d / "run_identity.json").read_text())
    assert ident["caliber"]["parallel_warmup_gpus"] == n
    assert ident["caliber"]["sweep_conflicts"] == 0
    # The header's caliber line came before the sweep: the terminal is told what it became.
    assert "parallel_warmup_gpus=1 sweep_conflicts=0" in r.out
    assert ("caliber:  parallel_warmup_gpus=%d sweep_conflicts=0 (set by the sweep" % n) in r.out
    sw = ident["provenance"]["parallel_sweep"]
    assert sw["state"] == "merged" and sw["shape_key"] == "tuned_scale"
    assert [s["visible_as"] for s in sw["shards"]] == [str(k) for k in range(n)]
    assert sum(s["shapes"] for s in sw["shards"]) == 5
    assert all(s["end"] == "exit 0" for s in sw["shards"])
    # Every card swept; the measurement only replayed (it benchmarked no config).
    calls = tune_log(log)
    swept = {c["visible"] for c in calls if c["sweep_only"] == "1" and c["benchmarked"]}
    assert swept == {str(k) for k in range(n)}, calls
    assert not [c for c in calls if c["sweep_only"] is None and c["benchmarked"]], calls
    assert "resolved to 'tuned_scale' (5)" in r.out
    # The measured table is whole, and the shards' work is gone.
    rows = [json.loads(l) for l in (d / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 5
    assert not (d / "sweep_shards").exists()
    assert "AUTOTUNE_REPLAY_FALLBACK" not in (d / "run.log").read_text()


def test_an_inherited_device_list_is_honoured(zlb, shapes, tmp_path):
    log = tmp_path / "tune.jsonl"
    r = run(zlb, shapes(FIVE), "--parallel-warmup-gpus", "2", devices=8, log=log,
            env={"CUDA_VISIBLE_DEVICES": "6,7"})
    assert r.rc == 0, r
    sw = sweep_of(r)
    assert sw["state"] == "merged", r
    assert [s["visible_as"] for s in sw["shards"]] == ["6", "7"]
    calls = tune_log(log)
    assert {c["visible"] for c in calls if c["sweep_only"] == "1"} == {"6", "7"}, calls
    # The measurement itself stays on the first card chosen.
    assert {c["visible"] for c in calls if c["sweep_only"] is None} <= {"6"}
    assert r.identity()["provenance"]["device_visible_as"] == "6"


def test_a_dying_shard_discards_the_whole_sweep(zlb, shapes, tmp_path):
    log = tmp_path / "tune.jsonl"
    r = run(zlb, shapes(FIVE), "--parallel-warmup-gpus", "2", log=log,
            env={"FAKE_BROKEN_CARD": "1"})
    assert r.rc == 0, r
    assert "shard 1 (device 1) ended with killed by SIGSEGV" in r.out, r
    assert "falling back to the serial sweep" in r.out
    sw = sweep_of(r)
    assert sw["state"] == "fallback" and "discarded" in sw["why"]
    ident = r.identity()
    assert ident["caliber"]["parallel_warmup_gpus"] == 1
    assert "(set by the sweep" not in r.out          # the header's 1 stands
    # Logs kept, shard work removed.
    kept = sorted(p.name for p in (r.run_dir / "sweep_shards").iterdir())
    assert kept == ["shard0.log", "shard1.log"], kept
    # The serial sweep recorded every key itself, in the measured process.
    assert len(records(r.run_dir)[("flag_gems.tuned.scale:scale_kernel.fn",
                                   "scale_kernel")]) == 4
    assert [c for c in tune_log(log) if c["sweep_only"] is None and c["benchmarked"]]
    assert "falling back to the serial sweep" in (r.run_dir / "run.log").read_text()


def test_comprehensive_level_is_refused_for_the_sweep(zlb, shapes, tmp_path):
    log = tmp_path / "tune.jsonl"
    r = run(zlb, shapes(FIVE), "--parallel-warmup-gpus", "2", "--level", "comprehensive",
            log=log)
    assert r.rc == 0, r
    assert "--level comprehensive" in r.out and "falling back to the serial sweep" in r.out
    sw = sweep_of(r)
    assert sw["state"] == "fallback" and sw["shards"] == []
    assert not [c for c in tune_log(log) if c["sweep_only"] == "1"]
    assert r.identity()["caliber"]["parallel_warmup_gpus"] == 1


def test_different_winners_across_shards_are_counted(zlb, shapes):
    # N=4096 lands on both shards; card 1 is "hot" and picks BLOCK 128 there.
    f = shapes("tuned_scale:\n  shapes:\n    - [64, 64]\n    - [16, 256]\n"
               "    - [8, 8]\n    - [4, 4]\n")
    r = run(zlb, f, "--parallel-warmup-gpus", "2", env={"FAKE_TUNE_BIAS_CARD": "1"})
    assert r.rc == 0, r
    assert "WARNING 1 " + WARNING in r.out, r
    assert "WARNING 1 " + WARNING in (r.run_dir / "run.log").read_text()
    ident = r.identity()
    assert ident["caliber"]["sweep_conflicts"] == 1
    assert ident["provenance"]["parallel_sweep"]["conflicts"] == 1
    chosen = records(r.run_dir)[("flag_gems.tuned.scale:scale_kernel.fn", "scale_kernel")]
    # The first shard's winner is kept for the contested key.
    assert chosen[json.dumps([4096, "torch.float16", "torch.float16"])]["kwargs"] == \
        {"BLOCK": 64}


def test_no_conflict_no_warning(zlb, shapes):
    r = run(zlb, shapes(FIVE), "--parallel-warmup-gpus", "2")
    assert r.rc == 0 and WARNING not in r.out, r


def test_skipped_when_replaying_or_on_one_device(zlb, shapes, tmp_path):
    f = shapes(FIVE)
    rec = run(zlb, f)
    assert rec.rc == 0, rec
    src = rec.run_dirs[0]
    log = tmp_path / "tune.jsonl"
    r = run(zlb, f, "--parallel-warmup-gpus", "2", log=log, env={"REPLAY_FROM": str(src)})
    assert r.rc == 0, r
    assert "parallel sweep skipped (the run replays" in r.out, r
    d = last(zlb)
    ident = json.loads((d / "run_identity.json").read_text())
    assert ident["provenance"]["parallel_sweep"]["state"] == "skipped"
    assert ident["caliber"]["parallel_warmup_gpus"] == 1
    r = run(zlb, f, "--parallel-warmup-gpus", "4", devices=1, log=log)
    assert r.rc == 0, r
    assert "parallel sweep skipped (1 device visible, at least 2 are needed)" in r.out, r
    assert not [c for c in tune_log(log) if c["sweep_only"] == "1"]


def _shard_pids(runs):
    """Processes whose environment says they are a shard of a run under runs."""
    pids = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            env = (p / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"ZLB_SWEEP_ONLY=1" in env and any(
                e.startswith(b"ZLB_RUN_DIR=" + str(runs).encode()) for e in env):
            pids.append(int(p.name))
    return pids


def _alive(pid):
    try:
        state = Path("/proc/%d/stat" % pid).read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_ctrl_c_ends_every_shard(zlb, shapes):
    f = shapes(FIVE)
    p = zlb.popen("tuned_scale", "--shapes", str(f), "--dtypes", "float16",
                  "--parallel-warmup-gpus", "4",
                  env={"FAKE_CUDA_DEVICES": "4", "FAKE_TUNE_SLEEP": "60"})
    deadline = time.time() + 60
    pids = []
    while len(pids) < 4 and time.time() < deadline:
        time.sleep(0.2)
        pids = _shard_pids(zlb.runs)
    assert len(pids) == 4, pids
    time.sleep(1.0)         # well inside their sleeping launches
    p.send_signal(signal.SIGINT)
    out = p.communicate(timeout=60)[0]
    assert p.returncode == 130, out
    assert not [pid for pid in pids if _alive(pid)], out
    assert not _shard_pids(zlb.runs)
    d = next(zlb.runs.iterdir())
    ident = json.loads((d / "run_identity.json").read_text())
    assert ident["status"] == "interrupted"
    assert ident["provenance"]["parallel_sweep"]["state"] == "interrupted"
    # No shard's work is left behind; nothing was merged or measured.
    assert not [x for x in (d / "sweep_shards").iterdir() if x.is_dir()]
    assert not (d / "autotune_records").exists()
    assert not (d / "results.jsonl").exists() or not (d / "results.jsonl").read_text()


def test_compare_refuses_a_sweep_against_a_serial_run(zlb, shapes):
    f = shapes(FIVE)
    serial = run(zlb, f)
    assert serial.rc == 0, serial
    a_serial = last(zlb)
    assert run(zlb, f, "--parallel-warmup-gpus", "2").rc == 0
    a_sweep = last(zlb)
    # B replays the sharded A: its configs were chosen by A's sweep, and it says so.
    assert run(zlb, f, env={"REPLAY_FROM": str(a_sweep)}).rc == 0
    b = last(zlb)
    cal = json.loads((b / "run_identity.json").read_text())["caliber"]
    assert cal["parallel_warmup_gpus"] == 2 and cal["autotune_mode"] == "replay"
    r = zlb.cmd("compare", str(a_sweep), str(b))
    assert r.rc == 0, r
    r = zlb.cmd("compare", str(a_serial), str(b))
    assert r.rc == 4, r
    assert "parallel_warmup_gpus" in r.out + r.err, r
    # A run recorded before the option existed swept serially.
    ident = json.loads((a_serial / "run_identity.json").read_text())
    for k in ("parallel_warmup_gpus", "sweep_conflicts"):
        del ident["caliber"][k]
    (a_serial / "run_identity.json").write_text(json.dumps(ident))
    assert run(zlb, f, env={"REPLAY_FROM": str(a_serial)}).rc == 0
    c = last(zlb)
    assert json.loads((c / "run_identity.json").read_text())["caliber"][
        "parallel_warmup_gpus"] == 1
    r = zlb.cmd("compare", str(a_serial), str(c))
    assert r.rc == 0, r


def test_blas_shapes_are_found_under_their_class_key(zlb):
    # Upstream mode: FlagGems' core_shapes.yaml keeps mm's shapes under BlasBenchmark.
    r = zlb.run("mm", "--shape-mode", "upstream", "--dtypes", "float16",
                "--parallel-warmup-gpus", "2", env={"FAKE_CUDA_DEVICES": "2"})
    assert r.rc == 0, r
    assert "shapes resolved to 'BlasBenchmark'" in r.out, r
    assert "looked up along 'mm', 'BlasBenchmark'" in r.out, r
    sw = r.identity()["provenance"]["parallel_sweep"]
    assert sw["state"] == "merged" and sw["shape_key"] == "BlasBenchmark"
    # Each shard got its own part of the class entry, and nothing else.
    assert sum(s["shapes"] for s in sw["shards"]) >= 2
    assert all(s["shapes"] >= 1 for s in sw["shards"])


def test_a_total_miss_names_every_key_looked_for_and_sweeps_serially(zlb, tmp_path):
    # Upstream mode on a checkout whose core_shapes.yaml holds no key of the chain:
    # the sweep cannot know the shapes FlagGems will use, says what it looked for,
    # and leaves the sweep to the serial run (which takes FlagGems' own defaults).
    fg = tmp_path / "flaggems"
    shutil.copytree(FAKE_MAIN, fg, ignore=shutil.ignore_patterns("__pycache__"))
    (fg / "benchmark" / "core_shapes.yaml").write_text("add:\n  shapes:\n    - [64, 64]\n")
    r = zlb.run("tuned_scale", "--shape-mode", "upstream", "--dtypes", "float16",
                "--parallel-warmup-gpus", "2",
                env={"FAKE_CUDA_DEVICES": "2", "FLAGGEMS_DIR": str(fg)})
    assert r.rc == 0, r
    assert "no usable shape entry in" in r.out, r
    assert ("looked for 'tuned_scale', 'GenericBenchmark2DOnly', 'GenericBenchmark', "
            "'Benchmark'") in r.out, r
    assert "falling back to the serial sweep" in r.out, r
    sw = r.identity()["provenance"]["parallel_sweep"]
    assert sw["state"] == "fallback" and "'GenericBenchmark'" in sw["why"], sw
    assert r.identity()["caliber"]["parallel_warmup_gpus"] == 1
    assert not (r.run_dir / "sweep_shards").exists() or \
        not list((r.run_dir / "sweep_shards").iterdir())      # no shard was started
