"""zlb batch end to end against a fake FlagGems (no GPU).

The fake checkout is tests/fake_flaggems copied to a temporary directory with
tests/fake_flaggems_batch/test_batch_ops.py added: one test function per
behaviour (pass, fail, SIGSEGV, flaky, hang, ignore SIGTERM, orphaned
grandchild, skip, xfail, slow). Each records its pid and process group under
$FAKE_BATCH_PIDS so the tests can prove that nothing survives.
"""
import csv
import json
import re
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import FAKE_MAIN, REPO

OPS_FILE = REPO / "tests" / "fake_flaggems_batch" / "test_batch_ops.py"
COLUMNS = ["repo", "op", "spec", "status", "seconds", "attempts", "rows", "remarks",
           "backend", "device", "gpu", "gpu_uuid", "timer", "exit_code", "run_dir", "job"]
# What the fake driver (tests/fakes/fake_libcuda.c) calls its devices.
FAKE_GPU = "Fake H200 (zlbench test driver)"


def fake_uuid(index):
    """The uuid fake_libcuda.c gives device index (its last byte)."""
    return f"GPU-facec0da-0000-4000-8000-{int(index):012x}"


@pytest.fixture
def world(zlb, tmp_path):
    fg = tmp_path / "FlagGems"
    shutil.copytree(FAKE_MAIN, fg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(OPS_FILE, fg / "benchmark" / "test_batch_ops.py")
    pids = tmp_path / "pids"
    state = tmp_path / "state"
    pids.mkdir()
    state.mkdir()
    zlb.env.update({"FLAGGEMS_DIR": str(fg), "FAKE_BATCH_PIDS": str(pids),
                    "FAKE_BATCH_STATE": str(state), "ZL_IR": "off"})
    zlb.pids = pids
    zlb.bdir = tmp_path / "b"
    return zlb


def batch(zlb, *args, env=None, timeout=120):
    return zlb.cmd("batch", "--batch-dir", str(zlb.bdir), "--progress", "plain", *args,
                   env=env, timeout=timeout)


def status(bdir):
    with open(bdir / "ops_status.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == COLUMNS
    return {r[2]: dict(zip(COLUMNS, r)) for r in rows[1:]}


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def recorded(zlb):
    out = []
    for p in zlb.pids.iterdir():
        if p.name.startswith("."):      # still being written (_note)
            continue
        pid, pgid = map(int, p.read_text().split())
        out.append((p.name, pid, pgid))
    return out


def group_members(pgid):
    members = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(d.name))
    return members


def assert_nothing_left(zlb, wait=10):
    deadline = time.time() + wait
    while True:
        left = [(n, pid) for n, pid, pgid in recorded(zlb)
                if alive(pid) or group_members(pgid)]
        if not left or time.time() > deadline:
            break
        time.sleep(0.1)
    assert not left, f"processes survived: {left}"


def test_help_lists_every_option_with_its_env(zlb):
    r = zlb.cmd("batch", "--help")
    assert r.rc == 0, r
    for flag, env in [("--all", None), ("--ops-file", "ZLB_OPS_FILE"),
                      ("--devices", "ZLB_DEVICES"), ("--op-timeout", "ZLB_OP_TIMEOUT"),
                      ("--grace", "ZLB_KILL_GRACE"), ("--retries", "ZLB_RETRIES"),
                      ("--dtypes", "DTYPES"), ("--shape-file", "SHAPE_FILE"),
                      ("--replay-root", "ZLB_REPLAY_ROOT"), ("--batch-dir", "ZLB_BATCH_DIR"),
                      ("--resume", None), ("--vllm-dir", "FLAGGEMS_VLLM_DIR"),
                      ("--progress", "ZLB_PROGRESS"), ("--ops", None)]:
        assert flag in r.out
        if env:
            assert f"env: {env}" in r.out
    assert "also --gpus" in r.out


@pytest.mark.parametrize("args,env,text", [
    (["--ops", "b_pass", "--devices", "0", "--gpus", "0"], None, "--devices and --gpus"),
    ([], None, "which operators"),
    (["--ops", "bad/op"], None, "not an operator spec"),
    (["--ops", "x:softmax"], None, "unknown repository"),
    (["--all", "--ops-dir", "nowhere"], None, "run `zlb inventory` first"),
    (["--ops", "vllm:fused"], None, "--vllm-dir"),
    (["--ops", "b_pass"], {"REPLAY_FROM": "/x"}, "REPLAY_FROM"),
    (["--ops", "b_pass", "--devices", "3"], None, "not a visible device"),
    (["--ops", "b_pass", "--device", "1"], None, "set by zlb batch"),
    (["--ops", "b_pass", "--level", "nope"], None, "--level"),
    (["--resume"], None, "--batch-dir"),
])
def test_usage_errors(world, args, env, text):
    r = world.cmd("batch", "--progress", "plain", *args, env=env)
    assert r.rc == 2, r
    assert text in r.err, r
    assert not world.bdir.exists()


def test_every_status_retry_cutoff_and_csv(world):
    # A process per operator: the attempts and remarks of its own (a warm
    # worker's fresh_worker reruns: test_batch_worker.py).
    r = batch(world, "--isolation", "process", "--ops", "b_pass", "b_fail", "b_segv",
              "b_flaky", "b_skipif", "b_xfail", "b_hang", "--op-timeout", "8", "--grace", "1")
    assert r.rc == 1, r
    st = status(world.bdir)
    assert list(st) == ["b_pass", "b_fail", "b_segv", "b_flaky", "b_skipif", "b_xfail",
                        "b_hang"]
    exp = {  # status, attempts, remarks, exit code
        "b_pass": ("PASS", "1", "", "0"),
        "b_fail": ("FAIL", "2", "retries=1", "1"),       # same rc twice: deterministic
        "b_segv": ("FAIL", "2", "retries=1;signal=11", "139"),
        "b_flaky": ("PASS", "2", "retries=1", "0"),
        "b_skipif": ("SKIP", "1", "skipped=1", "0"),
        "b_xfail": ("SKIP", "1", "xfail=1", "0"),
        "b_hang": ("TIMEOUT", "1", "timeout", "130"),
    }
    for op, (s, att, rem, code) in exp.items():
        row = st[op]
        assert (row["status"], row["attempts"], row["remarks"], row["exit_code"]) == \
            (s, att, rem, code), (op, row)
        assert row["repo"] == "main" and row["op"] == op and row["backend"] == "cuda"
        assert row["device"] == "0" and row["run_dir"] == f"main/{op}"
        complete = world.bdir / "main" / op / ".complete"
        assert complete.exists() == (s in ("PASS", "SKIP")), op
    assert int(st["b_pass"]["rows"]) > 0 and st["b_pass"]["timer"] == "graph"
    assert float(st["b_hang"]["seconds"]) >= 8
    # earlier attempts are kept aside, the final one is the run directory
    att = sorted(p.name for p in (world.bdir / ".attempts" / "main").iterdir())
    assert att == ["b_fail.1", "b_fail.1.log", "b_flaky.1", "b_flaky.1.log",
                   "b_segv.1", "b_segv.1.log"]
    ident = json.loads((world.bdir / "main/b_flaky/run_identity.json").read_text())
    assert ident["status"] == "completed"
    assert ident["outcome"]["pytest_wall_s"] > 0
    bj = json.loads((world.bdir / "batch.json").read_text())
    assert bj["schema_version"] == 3 and bj["status"] == "completed" and bj["exit_code"] == 1
    assert [o["spec"] for o in bj["ops"]] == list(st)
    assert bj["tables"] == {"ops_status": 3, "complete": 2}
    assert bj["counts"] == {"PASS": 2, "FAIL": 2, "SKIP": 2, "TIMEOUT": 1}
    c = json.loads((world.bdir / "main/b_pass/.complete").read_text())
    assert c["schema_version"] == 2 and c["spec"] == "b_pass" and c["status"] == "PASS"
    assert (c["gpu"], c["gpu_uuid"]) == (FAKE_GPU, fake_uuid(0))
    assert_nothing_left(world)


def test_a_pass_that_measured_nothing_says_no_rows(world):
    # b_trivial passes without a measurement; b_pass measures. On the H200 a
    # pass whose rows were lost said nothing on its batch line.
    r = batch(world, "--ops", "b_pass", "b_trivial")
    assert r.rc == 0, r
    st = status(world.bdir)
    assert (st["b_trivial"]["status"], st["b_trivial"]["rows"], st["b_trivial"]["remarks"]) == \
        ("PASS", "0", "no_rows")
    assert st["b_pass"]["status"] == "PASS" and int(st["b_pass"]["rows"]) > 0
    assert st["b_pass"]["remarks"] == ""
    assert re.search(r"PASS +b_trivial [0-9.]+s no_rows", r.out + r.err), r


def test_dtype_fallback_and_rescue(world):
    r = batch(world, "--isolation", "process", "--ops", "b_fp32only", "b_fail", "b_pass",
              "--dtypes", "float16")
    assert r.rc == 1, r
    st = status(world.bdir)
    assert (st["b_fp32only"]["status"], st["b_fp32only"]["attempts"],
            st["b_fp32only"]["remarks"]) == ("PASS", "2", "dtype_fallback")
    assert "can't be supported by this op" in \
        (world.bdir / ".attempts/main/b_fp32only.1/run.log").read_text()
    ident = json.loads((world.bdir / "main/b_fp32only/run_identity.json").read_text())
    assert ident["caliber"]["dtypes"] == "upstream"
    # rc 1 twice, then one last try without the restriction, retried once too
    assert (st["b_fail"]["status"], st["b_fail"]["attempts"], st["b_fail"]["remarks"]) == \
        ("FAIL", "4", "dtype_rescue;retries=2")
    assert st["b_pass"]["status"] == "PASS" and int(st["b_pass"]["rows"]) > 0


def test_timeout_escalation_leaves_no_process(world):
    r = batch(world, "--ops", "b_stubborn", "b_orphan", "--op-timeout", "6", "--grace", "1.5")
    assert r.rc == 1, r
    st = status(world.bdir)
    assert st["b_stubborn"]["status"] == "TIMEOUT"
    assert st["b_orphan"]["status"] == "PASS"
    names = {n.split(".")[0] for n, _, _ in recorded(world)}
    assert {"b_stubborn", "b_orphan", "b_orphan_child"} <= names
    assert_nothing_left(world, wait=2)


def test_two_devices_in_parallel(world):
    ops = ["b_slow", "b_pass", "b_flaky", "b_skipif", "b_xfail", "b_fail"]
    r = batch(world, "--ops", *ops, "--devices", "0,1",
              env={"FAKE_CUDA_DEVICES": "2", "FAKE_BATCH_SLOW": "1.5"})
    assert r.rc == 1, r
    st = status(world.bdir)
    devs = {op: st[op]["device"] for op in ops}
    assert set(devs.values()) == {"0", "1"}, devs
    spans = {}
    for op in ops:
        ident = json.loads((world.bdir / "main" / op / "run_identity.json").read_text())
        assert ident["provenance"]["device_visible_as"] == devs[op]
        # the card each operator's last attempt met, as its run recorded it
        assert st[op]["gpu_uuid"] == fake_uuid(devs[op]) == ident["provenance"]["gpu_uuid"]
        assert st[op]["gpu"] == FAKE_GPU == ident["provenance"]["gpu_name"]
        spans[op] = (ident["provenance"]["started_at"], ident["provenance"]["finished_at"])
    # the slow op overlaps in time with an op of the other device
    slow = spans["b_slow"]
    other = [spans[o] for o in ops if devs[o] != devs["b_slow"]]
    assert any(s < slow[1] and slow[0] < e for s, e in other), spans
    # with --pin the sharding is stable: the same list gives the same devices
    # (without it, one queue: tests/cli/test_batch_worker.py)
    pinned = []
    for k in ("2", "3"):
        world.cmd("batch", "--batch-dir", str(world.bdir) + k, "--progress", "plain", "--pin",
                  "--ops", *ops, "--devices", "0,1", env={"FAKE_CUDA_DEVICES": "2"})
        pinned.append({op: status(Path(str(world.bdir) + k))[op]["device"] for op in ops})
    assert pinned[0] == pinned[1] and set(pinned[0].values()) == {"0", "1"}, pinned


def wait_for(pred, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False


def popen_batch(zlb, *args, env=None):
    full = dict(zlb.env)
    full.update(env or {})
    return subprocess.Popen([zlb.bin, "batch", "--batch-dir", str(zlb.bdir), "--progress",
                             "plain", *args], cwd=zlb.cwd, env=full,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_resume_after_kill9_loses_and_duplicates_nothing(world):
    ops = ["b_pass", "b_skipif", "b_slow", "b_fail"]
    p = popen_batch(world, "--ops", *ops, env={"FAKE_BATCH_SLOW": "30"})
    assert wait_for(lambda: any(n.startswith("b_slow.") for n, _, _ in recorded(world))), \
        p.communicate()
    p.send_signal(signal.SIGKILL)
    p.communicate()
    assert_nothing_left(world)
    st = status(world.bdir)
    assert st["b_pass"]["status"] == "PASS" and st["b_slow"]["status"] == "RUNNING"
    assert not (world.bdir / "main/b_slow/.complete").exists()

    r = batch(world, "--resume", env={"FAKE_BATCH_SLOW": "0"})
    assert r.rc == 1, r
    assert "2 operator(s) already PASS/SKIP are kept" in r.out
    st = status(world.bdir)
    assert {op: st[op]["status"] for op in ops} == \
        {"b_pass": "PASS", "b_skipif": "SKIP", "b_slow": "PASS", "b_fail": "FAIL"}
    runs = [n.split(".")[0] for n, _, _ in recorded(world)]
    assert runs.count("b_pass") == 1 and runs.count("b_skipif") == 1   # not rerun
    assert runs.count("b_slow") == 2 and runs.count("b_fail") == 2
    assert (world.bdir / ".attempts/main/b_slow.1").is_dir()   # the killed attempt, kept
    assert sorted(p.name for p in (world.bdir / "main").iterdir()) == sorted(ops)
    for op in ("b_pass", "b_skipif", "b_slow"):
        assert (world.bdir / "main" / op / ".complete").exists()
    bj = json.loads((world.bdir / "batch.json").read_text())
    assert [s["status"] for s in bj["sessions"]] == ["killed", "completed"]
    assert_nothing_left(world)


def test_lock_and_interrupt(world):
    p = popen_batch(world, "--ops", "b_hang", "b_pass", "--op-timeout", "60", "--grace", "1")
    assert wait_for(lambda: any(n.startswith("b_hang.") for n, _, _ in recorded(world)))
    r = batch(world, "--resume")
    assert r.rc == 2 and "another zlb batch (pid" in r.err, r
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=30)
    assert p.returncode == 130, out
    assert "2 not run (interrupted; --resume continues)" in out, out
    st = status(world.bdir)
    assert (st["b_hang"]["status"], st["b_hang"]["remarks"]) == ("PENDING", "interrupted")
    assert st["b_pass"]["status"] == "PENDING"
    bj = json.loads((world.bdir / "batch.json").read_text())
    assert bj["status"] == "interrupted" and bj["exit_code"] == 130
    assert_nothing_left(world)
    r = batch(world, "--ops", "b_pass")
    assert r.rc == 2 and "--resume" in r.err, r


def test_replay_root_and_ops_file(world, tmp_path):
    lst = tmp_path / "ops.txt"
    lst.write_text("# a comment\nb_pass@batch_ops\n\nb_flaky   # trailing\nb_pass@batch_ops\n")
    r = batch(world, "--ops-file", str(lst))
    assert r.rc == 0, r
    assert "listed twice" in r.err
    st = status(world.bdir)
    assert st["b_pass@batch_ops"]["run_dir"] == "main/b_pass@batch_ops"
    second = tmp_path / "b2"
    r = world.cmd("batch", "--batch-dir", str(second), "--progress", "plain", "--ops",
                  "b_pass@batch_ops", "b_skipif", "--replay-root", str(world.bdir))
    assert r.rc == 1, r
    st2 = status(second)
    assert st2["b_pass@batch_ops"]["status"] == "PASS"
    ident = json.loads((second / "main/b_pass@batch_ops/run_identity.json").read_text())
    assert ident["caliber"]["autotune_mode"] == "replay"
    assert ident["provenance"]["replay_from"] == str(world.bdir / "main/b_pass@batch_ops")
    assert (st2["b_skipif"]["status"], st2["b_skipif"]["remarks"]) == ("FAIL", "replay_missing")


def test_shape_file_without_entry_falls_back(world, shapes):
    f = shapes("b_pass:\n  shapes:\n    - [64, 64]\n")
    r = batch(world, "--ops", "b_pass", "softmax", "--shape-file", str(f))
    assert r.rc == 0, r
    st = status(world.bdir)
    assert st["b_pass"]["remarks"] == "" and int(st["b_pass"]["rows"]) > 0
    # zlb run's preflight refuses the file for softmax: rerun on its default shapes
    assert (st["softmax"]["status"], st["softmax"]["attempts"], st["softmax"]["remarks"]) == \
        ("PASS", "2", "shapes_default")
    assert "check=shape_file" in (world.bdir / ".attempts/main/softmax.1.log").read_text()


def test_run_dir_option(zlb, tmp_path):
    target = tmp_path / "deep" / "here"
    r = zlb.run("softmax", "--dtypes", "float16", "--run-dir", str(target))
    assert r.rc == 0, r
    assert (target / "run_identity.json").exists() and not zlb.runs.exists()
    r = zlb.run("softmax", "--dtypes", "float16", "--run-dir", str(target))
    assert r.rc == 3 and "check=run_dir" in r.err, r


# ---- one probe of the interpreter per batch ----------------------------------

def real_python_version():
    return subprocess.run(["/usr/bin/python3", "-c", "import sys; print(sys.version.split()[0])"],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.parametrize("isolation", ["process", "worker"])
def test_children_trust_the_batch_probe(world, logging_python, isolation):
    py = logging_python()
    ops = ["b_pass", "b_skipif", "b_flaky"]
    # An inherited value must not reach the children: the batch replaces it.
    r = batch(world, "--isolation", isolation, "--ops", *ops, "--python", str(py.path),
              env={"ZLB_PYTHON_PROBED": "stale\tvalue"})
    assert r.rc == 0, r
    # The batch's probe, then none in any child (b_flaky's retry included):
    # one pytest start per attempt (in workers, a client's), and each worker's.
    workers = len(list((world.bdir / ".logs" / "workers").glob("lane*.log")))
    assert workers == (0 if isolation == "process" else 2)   # b_flaky's retry: a fresh one
    assert py.probes() == 1, py.lines()
    assert py.starts("-m") == 4 + workers, py.lines()
    # The value vouches for zlb run alone, never for what it starts.
    assert not [l for l in py.lines() if "token" in l], py.lines()
    version = real_python_version()
    for op in ops:
        prov = json.loads((world.bdir / "main" / op / "run_identity.json").read_text())[
            "provenance"]
        assert (prov["python"], prov["python_check"], prov["python_version"]) == \
            (str(py.path), "batch", version), op
        assert prov["pytest_version"]
        log = (world.bdir / "main" / op / "run.log").read_text()
        assert f"python:   {py.path} (Python {version}, pytest " in log
        assert "): ok (checked by the batch)" in log


def test_a_python_changed_under_the_batch_is_probed_again(world, logging_python):
    py = logging_python()
    # b_pass's pytest touches the interpreter file (WRAP_TOUCH): b_skipif's
    # child no longer trusts the batch's probe of it and probes itself.
    # (a process per operator: each pytest start is an operator's)
    r = batch(world, "--isolation", "process", "--ops", "b_pass", "b_skipif",
              "--python", str(py.path), env={"WRAP_TOUCH": "1"})
    assert r.rc == 0, r
    assert [l.split()[0] for l in py.lines()] == ["-c", "-m", "-c", "-m"], py.lines()
    checks = [json.loads((world.bdir / "main" / op / "run_identity.json").read_text())[
        "provenance"]["python_check"] for op in ("b_pass", "b_skipif")]
    assert checks == ["batch", "probed"]
    assert "): ok (probed)" in (world.bdir / "main/b_skipif/run.log").read_text()


@pytest.mark.parametrize("isolation", ["process", "worker"])
@pytest.mark.parametrize("kind", ["exits_1", "missing"])
def test_broken_python_stops_the_batch_before_any_operator(world, logging_python, kind,
                                                           isolation):
    py = logging_python(broken=True)
    path = py.path if kind == "exits_1" else py.path.with_name("nopython")
    r = batch(world, "--isolation", isolation, "--ops", "b_pass", "b_skipif", "b_flaky",
              env={"ZLB_PYTHON": str(path)})
    assert r.rc == 3, r
    assert r.err.count("PREFLIGHT_FAILED check=python") == 1, r
    assert ("could not be probed (exit 1)" if kind == "exits_1" else
            f"Python interpreter '{path}' was not found") in r.err, r
    assert "\n  fix: " in r.err, r
    assert py.probes() == (1 if kind == "exits_1" else 0), py.lines()
    assert not world.bdir.exists()        # nothing started: no batch directory
    assert not recorded(world)            # no operator's pytest ran
