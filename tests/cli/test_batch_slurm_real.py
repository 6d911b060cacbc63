"""zlb batch --executor slurm against a real single-node Slurm (tools/slurm_ci.sh).

CI starts Slurm 22.05 with two fake GPUs as GRES and sets ZLB_REAL_SLURM=1;
without it these tests skip (the fake Slurm of test_batch_slurm.py still
runs). What a fake cannot show: that Slurm itself queues, throttles and runs
the array, gives each task one of the node's GPUs (CUDA_VISIBLE_DEVICES),
reports a user's scancel and its own time limit in its own words, and that
the statuses equal the local executor's.

Set ZLB_SLOW_TESTS=1 for the time-limit test (Slurm checks limits every
30 s: it costs 60-90 s).
"""
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from test_batch import batch, status, world  # noqa: F401

pytestmark = pytest.mark.skipif(os.environ.get("ZLB_REAL_SLURM") != "1" or
                                not shutil.which("sbatch"),
                                reason="no real Slurm here (tools/slurm_ci.sh start)")

PARTITION = os.environ.get("ZLB_SLURM_PARTITION", "ci")
# The partition's MaxTime is 30 minutes: the default --op-timeout (1800 s)
# asks for more, and is refused (the last test).
CLUSTER = ["--executor", "slurm", "--partition", PARTITION, "--op-timeout", "120"]
OPS = ["b_pass", "b_skipif", "b_fail", "b_xfail", "add", "softmax", "mm", "layer_norm",
       "sort", "avg_pool2d", "b_trivial", "adaptive_max_pool2d"]


@pytest.fixture
def cluster(world):  # noqa: F811
    world.env["FAKE_CUDA_DEVICES"] = "2"
    world.env["PATH"] = os.environ["PATH"]                  # the real sbatch
    return world


def outcome(st, drop=()):
    return {op: (row["status"], row["attempts"], row["rows"],
                 ";".join(r for r in row["remarks"].split(";") if r not in drop))
            for op, row in st.items()}


def driver(zlb, *args, env=None):
    """zlb batch in the background (Popen), for what happens while it follows."""
    e = dict(zlb.env, **(env or {}))
    return subprocess.Popen([zlb.bin, "batch", "--batch-dir", str(zlb.bdir), "--progress",
                             "plain", *args], cwd=zlb.cwd, env=e, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def the_job(zlb, timeout=60):
    """The array id of the batch's last round, once the driver has recorded it."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            rounds = json.loads((zlb.bdir / "batch.json").read_text())["cluster"]["rounds"]
            if rounds and rounds[-1]["job"]:
                return rounds[-1]["job"]
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    raise AssertionError("no array was recorded")


def wait_task_state(job, index, state, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        out = subprocess.run(["squeue", "-h", "-r", "-t", "all", "-j", job, "-o", "%i %T"],
                             capture_output=True, text=True).stdout
        if f"{job}_{index} {state}" in out:
            return
        time.sleep(0.2)
    raise AssertionError(f"task {job}_{index} never {state}: {out}")


@pytest.mark.parametrize("isolation", ["process", "worker"])
def test_an_array_of_twelve_operators_on_two_gpus_agrees_with_local(cluster, isolation):
    r = batch(cluster, *CLUSTER, "--isolation", isolation, "--task-ops", "3",
              "--max-parallel", "2", "--ops", *OPS, timeout=300)
    assert r.rc == 1, r                                      # b_fail fails
    on_slurm = status(cluster.bdir)
    bj = json.loads((cluster.bdir / "batch.json").read_text())
    (rnd,) = bj["cluster"]["rounds"]
    assert len(rnd["tasks"]) == 4 and rnd["max_parallel"] == 2
    assert {t["state"] for t in rnd["tasks"]} == {"ENDED"}
    seen = set()
    for op, row in on_slurm.items():
        assert row["job"].startswith(rnd["job"] + "_"), row
        if not row["run_dir"]:
            continue
        ident = json.loads((cluster.bdir / row["run_dir"] / "run_identity.json").read_text())
        assert ident["provenance"]["cluster_job"] == row["job"]
        assert ident["caliber"]["isolation"] == isolation
        seen.add(ident["provenance"]["device_visible_as"])
    assert seen and seen <= {"0", "1"}, seen                 # Slurm's GRES, one GPU each
    cluster.bdir = cluster.bdir.parent / "local"
    r = batch(cluster, "--isolation", isolation, "--ops", *OPS, "--devices", "0,1",
              timeout=300)
    assert r.rc == 1, r
    # fresh_worker says an operator failed after others in its worker: where
    # it fell in a task's share and in the local queue is the schedule's.
    drop = ("fresh_worker",)
    assert outcome(status(cluster.bdir), drop) == outcome(on_slurm, drop)


def test_a_users_scancel_is_cancelled_not_retried(cluster):
    p = driver(cluster, *CLUSTER, "--task-ops", "1", "--ops", "b_slow", "b_pass",
               env={"FAKE_BATCH_SLOW": "60"})
    job = the_job(cluster)
    wait_task_state(job, 0, "RUNNING")
    time.sleep(2)                                         # b_slow under way
    subprocess.run(["scancel", f"{job}_0"], check=True)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 1, (out, err)
    st = status(cluster.bdir)
    assert st["b_slow"]["status"] == "CANCELLED" and st["b_slow"]["remarks"] == "cancelled", st
    assert st["b_pass"]["status"] == "PASS"
    assert "1 CANCELLED" in out and "CANCELLED b_slow" in out
    # --resume keeps a user's cancel: nothing is submitted
    r = batch(cluster, "--resume", timeout=120)
    assert r.rc == 1, r
    assert len(json.loads((cluster.bdir / "batch.json").read_text())["cluster"]["rounds"]) == 1
    # unless asked
    r = batch(cluster, "--resume", "--retry-cancelled", env={"FAKE_BATCH_SLOW": "0"},
              timeout=120)
    assert r.rc == 0, r
    assert status(cluster.bdir)["b_slow"]["status"] == "PASS"


def test_time_pending_in_the_queue_is_not_an_operators(cluster):
    # One task at a time: the operators behind the slow one wait in the queue,
    # the last of them longer than --op-timeout, and all pass. Timestamps have
    # whole seconds, so the queue is made long enough to leave a margin.
    ops = ["b_slow", "b_trivial", "b_pass", "add", "softmax"]
    r = batch(cluster, "--executor", "slurm", "--partition", PARTITION, "--op-timeout", "6",
              "--task-ops", "1", "--max-parallel", "1", "--ops", *ops,
              env={"FAKE_BATCH_SLOW": "4"}, timeout=240)
    assert r.rc == 0, r
    st = status(cluster.bdir)
    assert {row["status"] for row in st.values()} == {"PASS"}, st
    bj = json.loads((cluster.bdir / "batch.json").read_text())
    submitted = bj["cluster"]["rounds"][0]["submitted_at"]

    def seconds(stamp):
        return time.mktime(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))

    started = max(json.loads((cluster.bdir / "main" / op / "run_identity.json").read_text())
                  ["provenance"]["started_at"] for op in ops)
    waited = seconds(started) - seconds(submitted)
    assert waited > 6, (submitted, started)                # it really waited that long


def test_a_driver_killed_while_it_follows_is_resumed(cluster):
    p = driver(cluster, *CLUSTER, "--task-ops", "2", "--ops", "b_slow", "b_pass", "add",
               "softmax", env={"FAKE_BATCH_SLOW": "8"})
    job = the_job(cluster)
    wait_task_state(job, 0, "RUNNING")
    p.kill()                                              # SIGKILL: nothing said, nothing ended
    p.communicate()
    r = batch(cluster, "--resume", env={"FAKE_BATCH_SLOW": "8"}, timeout=180)
    assert r.rc == 0, r
    assert "following the array an earlier session submitted" in r.out
    assert {row["status"] for row in status(cluster.bdir).values()} == {"PASS"}
    bj = json.loads((cluster.bdir / "batch.json").read_text())
    assert len(bj["cluster"]["rounds"]) == 1              # followed, not submitted again
    assert [s["status"] for s in bj["sessions"]] == ["killed", "completed"]


def test_no_follow_then_status_then_resume(cluster):
    r = batch(cluster, *CLUSTER, "--no-follow", "--ops", "b_slow", "b_pass",
              env={"FAKE_BATCH_SLOW": "5"})
    assert r.rc == 0, r
    assert "not following (--no-follow)" in r.out
    job = the_job(cluster)
    r = cluster.cmd("batch", "--batch-dir", str(cluster.bdir), "--status")
    assert r.rc == 0, r
    assert f"slurm job {job}: 1 task(s)" in r.out and "2 operator(s)" in r.out, r.out
    r = batch(cluster, "--resume", timeout=120)
    assert r.rc == 0, r
    assert {row["status"] for row in status(cluster.bdir).values()} == {"PASS"}


def test_ctrl_c_cancels_what_zlb_submitted(cluster):
    p = driver(cluster, *CLUSTER, "--task-ops", "1", "--ops", "b_slow", "b_pass",
               env={"FAKE_BATCH_SLOW": "60"})
    job = the_job(cluster)
    wait_task_state(job, 0, "RUNNING")
    p.send_signal(signal.SIGINT)                         # nobody at a terminal: cancel
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, (out, err)
    assert "cancelled what zlb submitted" in out
    st = status(cluster.bdir)
    assert st["b_slow"]["status"] == "PENDING" and st["b_slow"]["remarks"] == "interrupted"
    gone = subprocess.run(["squeue", "-h", "-j", job], capture_output=True, text=True).stdout
    assert not gone.strip(), gone


def test_the_driver_inside_sbatch_runs_on_its_allocation(cluster, tmp_path):
    out = tmp_path / "inside.out"
    cmd = " ".join([cluster.bin, "batch", "--batch-dir", str(cluster.bdir), "--progress",
                    "plain", "--executor", "slurm", "--ops", "b_pass", "add"])
    job = subprocess.run(["sbatch", "--parsable", "--gres=gpu:1", "--partition", PARTITION,
                          "--output", str(out), "--wrap", cmd], env=cluster.env,
                         capture_output=True, text=True, check=True).stdout.strip()
    deadline = time.time() + 120
    while time.time() < deadline:
        if not subprocess.run(["squeue", "-h", "-j", job], capture_output=True,
                              text=True).stdout.strip():
            break
        time.sleep(0.5)
    text = out.read_text()
    assert f"inside slurm allocation {job}" in text, text
    st = status(cluster.bdir)
    assert {row["status"] for row in st.values()} == {"PASS"}, (st, text)
    assert {row["job"] for row in st.values()} == {job}


@pytest.mark.skipif(os.environ.get("ZLB_SLOW_TESTS") != "1",
                    reason="Slurm kills at its time limit within 30 s of it: 60-90 s; "
                           "ZLB_SLOW_TESTS=1 runs it")
def test_a_task_over_its_slurm_time_limit(cluster):
    r = batch(cluster, "--executor", "slurm", "--partition", PARTITION, "--time", "1",
              "--op-timeout", "400", "--grace", "5", "--task-ops", "2",
              "--ops", "b_slow", "b_pass", env={"FAKE_BATCH_SLOW": "300"}, timeout=400)
    st = status(cluster.bdir)
    assert st["b_slow"]["status"] == "TIMEOUT" and st["b_slow"]["remarks"] == \
        "cluster_time_limit", st
    assert st["b_slow"]["run_dir"] == "main/b_slow" and st["b_slow"]["attempts"] == "1"
    assert "TIMEOUT b_slow" in r.out
    assert st["b_pass"]["status"] == "PASS", st           # requeued, then run
    rounds = json.loads((cluster.bdir / "batch.json").read_text())["cluster"]["rounds"]
    assert rounds[0]["tasks"][0]["state"] == "TIMEOUT" and len(rounds) == 2
    assert r.rc == 1, r


def test_a_task_the_partition_could_never_start_is_refused_not_left_pending(cluster):
    r = batch(cluster, "--executor", "slurm", "--ops", "b_pass", "b_fail", timeout=60)
    assert r.rc == 3 and "PartitionTimeLimit" in r.err, r
    assert all(row["status"] == "PENDING" for row in status(cluster.bdir).values())
