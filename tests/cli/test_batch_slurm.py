"""zlb batch --executor slurm against a fake srun (tests/fakes/slurm/srun).

The fake takes srun's options, logs them with the command, sets what an
allocation of one GPU sets (CUDA_VISIBLE_DEVICES, SLURM_JOB_ID) and execs
the command, as srun runs it on a node. What is checked: one srun job per
attempt with zlb's own options first and --slurm-args after them, the job
told --device 0 (it sees only its GPU), statuses and retries as with the
local executor, deadlines through srun, and the refusals.
"""
import json
import math
import sys

import pytest

from conftest import REPO
from test_batch import assert_nothing_left, batch, status, world  # noqa: F401

FAKE_SRUN_DIR = REPO / "tests" / "fakes" / "slurm"


@pytest.fixture
def slurm(world, tmp_path):  # noqa: F811
    world.env["PATH"] = f"{FAKE_SRUN_DIR}:{world.env['PATH']}"
    world.env["FAKE_SRUN_LOG"] = str(tmp_path / "srun.log")
    world.env["FAKE_CUDA_DEVICES"] = "2"
    world.env["FAKE_SRUN_GPU"] = "1"          # Slurm gave every job physical GPU 1
    world.srun_log = tmp_path / "srun.log"
    return world


def jobs(zlb):
    return [json.loads(l) for l in zlb.srun_log.read_text().splitlines()]


def test_one_srun_job_per_attempt_with_the_gpu_slurm_gave(slurm):
    r = batch(slurm, "--executor", "slurm", "--devices", "0,1", "--ops", "b_pass", "b_skipif",
              "b_fail", "--op-timeout", "100", "--grace", "3",
              "--slurm-args", "--partition=gpu --account=perf")
    assert r.rc == 1, r
    st = status(slurm.bdir)
    assert [st[o]["status"] for o in ("b_pass", "b_skipif", "b_fail")] == ["PASS", "SKIP", "FAIL"]
    assert st["b_fail"]["attempts"] == "2"       # retried once, then the same rc: cut off
    js = jobs(slurm)
    assert len(js) == 4                          # 1 + 1 + 2 attempts, one job each
    minutes = math.ceil((100 + 3) / 60) + 1
    own = ["--job-name=zlb", "--nodes=1", "--ntasks=1", "--gres=gpu:1",
           "--kill-on-bad-exit=1", "--quiet", f"--time={minutes}"]
    for j in js:
        assert j["opts"] == own + ["--partition=gpu", "--account=perf"], j
        argv = j["argv"]
        assert argv[1] == "run" and argv[argv.index("--device") + 1] == "0"
    ran = sorted(j["argv"][j["argv"].index("--op") + 1] for j in js)
    assert ran == ["b_fail", "b_fail", "b_pass", "b_skipif"]
    # the run used the GPU the allocation exposed (CUDA_VISIBLE_DEVICES=1)
    ident = json.loads((slurm.bdir / "main" / "b_pass" / "run_identity.json").read_text())
    assert ident["provenance"]["device_visible_as"] == "1"
    # the device column numbers the parallel slots
    assert {st[o]["device"] for o in st} <= {"0", "1"}
    doc = json.loads((slurm.bdir / "batch.json").read_text())
    assert json.dumps(doc).count('"slurm"') >= 1


def test_a_deadline_reaches_the_job_through_srun(slurm):
    r = batch(slurm, "--executor", "slurm", "--devices", "0", "--ops", "b_stubborn",
              "--op-timeout", "2", "--grace", "1.5")
    assert r.rc == 1, r
    assert status(slurm.bdir)["b_stubborn"]["status"] == "TIMEOUT"
    assert [j["opts"][-1] for j in jobs(slurm)] == ["--time=2"]   # ceil(3.5/60) + 1
    assert_nothing_left(slurm, wait=3)


def test_no_local_gpu_needed(slurm):
    # The machine that runs the batch (a login node) has no device at all.
    r = batch(slurm, "--executor", "slurm", "--devices", "0", "--ops", "b_pass",
              env={"FAKE_CUDA_DEVICES": "0", "FAKE_SRUN_NODE_ENV": "FAKE_CUDA_DEVICES=2"})
    assert r.rc == 0, r
    assert status(slurm.bdir)["b_pass"]["status"] == "PASS"


@pytest.mark.parametrize("args,needle", [
    (["--executor", "slurm", "--ops", "b_pass"], "give --devices with one number per job"),
    (["--ops", "b_pass", "--slurm-args", "--partition=x"], "--slurm-args is for --executor slurm"),
    (["--executor", "slurm", "--devices", "0", "--ops", "b_pass", "--slurm-args", "-p gpu"],
     "'gpu' is not an srun option"),
])
def test_usage(slurm, args, needle):
    r = batch(slurm, *args)
    assert r.rc == 2, r
    assert needle in r.err
    assert not slurm.bdir.exists()


def test_without_srun_nothing_starts(world, tmp_path):  # noqa: F811
    # A PATH of its own, holding the interpreter and nothing else: the
    # machine's PATH may have a real srun (a Slurm host, CI's own).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    world.env["PATH"] = str(bin_dir)
    r = batch(world, "--executor", "slurm", "--devices", "0", "--ops", "b_pass")
    assert r.rc == 3, r
    assert "PREFLIGHT_FAILED check=executor" in r.err
    assert "srun was not found on PATH" in r.err
    assert not world.bdir.exists()


@pytest.mark.parametrize("sinfo,extra,refused", [
    ("gpu* 30:00", [], True),                       # the default 1800 s asks for 32 minutes
    ("gpu* 1-00:00:00", [], False),
    ("gpu* 30:00;long 2-00", ["--slurm-args", "--partition=long"], False),
    ("gpu* 30:00", ["--op-timeout", "120"], False),  # 4 minutes fit
    ("gpu* 30:00", ["--slurm-args", "--time=20"], False),   # the user's --time wins: theirs
])
def test_a_deadline_the_partition_cannot_grant_stops_the_batch_at_once(slurm, sinfo, extra,
                                                                        refused):
    slurm.env["FAKE_SINFO"] = sinfo
    r = batch(slurm, "--executor", "slurm", "--devices", "0,1", "--ops", "b_pass", "b_trivial",
              *extra)
    st = status(slurm.bdir)
    if refused:
        assert r.rc == 3, r
        assert "asks Slurm for --time=32 minutes and partition gpu allows 30" in r.err, r
        assert "PartitionTimeLimit" in r.err
        assert all(row["status"] == "PENDING" for row in st.values()), st
        assert not slurm.srun_log.exists()           # nothing was submitted
    else:
        assert r.rc == 0, r
        assert all(row["status"] == "PASS" for row in st.values()), st
