"""zlb batch --executor slurm against a real single-node Slurm (tools/slurm_ci.sh).

CI starts Slurm 22.05 with two fake GPUs as GRES and sets ZLB_REAL_SLURM=1;
without it these tests skip (the fake srun of test_batch_slurm.py still
runs). What a fake cannot show: that Slurm itself runs each job, gives it
one of the node's GPUs (CUDA_VISIBLE_DEVICES), and that the statuses equal
the local executor's.
"""
import json
import os
import shutil

import pytest

from test_batch import batch, status, world  # noqa: F401

pytestmark = pytest.mark.skipif(os.environ.get("ZLB_REAL_SLURM") != "1" or
                                not shutil.which("srun"),
                                reason="no real Slurm here (tools/slurm_ci.sh start)")

OPS = ["b_pass", "b_skipif", "b_fail", "b_xfail", "add", "softmax"]


def outcome(st):
    return {op: (row["status"], row["attempts"], row["rows"], row["remarks"])
            for op, row in st.items()}


def test_slurm_runs_every_operator_on_a_gpu_it_gave_and_agrees_with_local(world):
    world.env["FAKE_CUDA_DEVICES"] = "2"
    world.env["PATH"] = os.environ["PATH"]                  # the real srun
    r = batch(world, "--executor", "slurm", "--devices", "0,1", "--ops", *OPS,
              "--op-timeout", "120", "--slurm-args",
              "--partition=" + os.environ.get("ZLB_SLURM_PARTITION", "ci"), timeout=300)
    assert r.rc == 1, r                                      # b_fail fails
    on_slurm = status(world.bdir)
    seen = set()
    for op, row in on_slurm.items():
        if not row["run_dir"]:
            continue
        ident = json.loads((world.bdir / row["run_dir"] / "run_identity.json").read_text())
        seen.add(ident["provenance"]["device_visible_as"])
    assert seen and seen <= {"0", "1"}, seen                 # Slurm's GRES, one GPU each
    bj = json.loads((world.bdir / "batch.json").read_text())
    assert bj["options"]["executor"] == "slurm"
    world.bdir = world.bdir.parent / "local"
    r = batch(world, "--ops", *OPS, "--devices", "0,1", timeout=300)
    assert r.rc == 1, r
    assert outcome(status(world.bdir)) == outcome(on_slurm)


def test_a_slurm_batch_resumes_on_slurm(world):
    world.env["FAKE_CUDA_DEVICES"] = "2"
    world.env["PATH"] = os.environ["PATH"]
    # The partition's MaxTime is 30 minutes: the default --op-timeout (1800 s) asks
    # for a --time of 32, and such a job pends for ever (PartitionTimeLimit).
    args = ["--executor", "slurm", "--devices", "0,1", "--op-timeout", "120", "--slurm-args",
            "--partition=" + os.environ.get("ZLB_SLURM_PARTITION", "ci")]
    assert batch(world, *args, "--ops", "b_pass", "b_fail", timeout=300).rc == 1
    r = batch(world, "--resume", timeout=300)
    assert r.rc == 1, r
    bj = json.loads((world.bdir / "batch.json").read_text())
    assert bj["options"]["executor"] == "slurm" and len(bj["sessions"]) == 2


def test_a_job_the_partition_could_never_start_is_refused_not_left_pending(world):
    world.env["FAKE_CUDA_DEVICES"] = "2"
    world.env["PATH"] = os.environ["PATH"]
    r = batch(world, "--executor", "slurm", "--devices", "0,1", "--ops", "b_pass", "b_fail",
              timeout=60)                                  # --op-timeout 1800: 32 minutes
    assert r.rc == 3 and "PartitionTimeLimit" in r.err, r
    assert all(row["status"] == "PENDING" for row in status(world.bdir).values())
