"""zlb batch --executor slurm against fake Slurm commands (tests/fakes/slurm).

A real single-node Slurm runs the main paths in test_batch_slurm_real.py.
These show what one cannot show without a broken cluster: a task lost to a
node failure (requeued once, then FAIL), Slurm's memory of a job gone
(sacct where accounting exists), the batch directory on a file system the
nodes cannot see, an allocation of several nodes, sbatch refusing, the
partition's time limit, and the command lines zlb gives sbatch. The fake
sbatch runs every task before it answers, each as a node would: the task
script's #! line starts `zlb task` in the batch directory.
"""
import json
import sys

import pytest

from conftest import REPO
from test_batch import batch, status, world  # noqa: F401

FAKE_SLURM_DIR = REPO / "tests" / "fakes" / "slurm"


@pytest.fixture
def slurm(world, tmp_path):  # noqa: F811
    world.env["PATH"] = f"{FAKE_SLURM_DIR}:{world.env['PATH']}"
    world.env["FAKE_SLURM_STATE"] = str(tmp_path / "slurm.json")
    world.env["FAKE_SLURM_LOG"] = str(tmp_path / "slurm.log")
    world.env["FAKE_CUDA_DEVICES"] = "2"
    world.env["FAKE_SLURM_GPU"] = "1"          # Slurm gave every task physical GPU 1
    world.slurm_log = tmp_path / "slurm.log"
    return world


def calls(zlb):
    return [json.loads(l) for l in zlb.slurm_log.read_text().splitlines()]


def sbatch_calls(zlb):
    return [c for c in calls(zlb) if c and c[0] != "scancel"]


def test_one_array_of_tasks_with_zlbs_options_then_the_users(slurm):
    r = batch(slurm, "--executor", "slurm", "--ops", "b_pass", "b_skipif", "b_fail", "add",
              "softmax", "--op-timeout", "100", "--grace", "3", "--task-ops", "2",
              "--max-parallel", "2", "--partition", "gpu", "--account", "perf",
              "--slurm-args", "--constraint=h200")
    assert r.rc == 1, r
    st = status(slurm.bdir)
    assert [st[o]["status"] for o in ("b_pass", "b_skipif", "b_fail", "add", "softmax")] == \
        ["PASS", "SKIP", "FAIL", "PASS", "PASS"], st
    assert st["b_fail"]["attempts"] == "2"       # the task retried it as a local batch does
    (args,) = sbatch_calls(slurm)
    bdir = str(slurm.bdir)
    assert args[:2] == ["--parsable", "--array=0-2%2"], args
    assert "--job-name=zlb:b" in args and f"--chdir={bdir}" in args
    assert f"--output={bdir}/.cluster/%A_%a.out" in args
    # two operators of 103 s each and 5 minutes to start: 9 minutes
    assert "--time=9" in args and "--gres=gpu:1" in args
    i = args.index         # zlb's own first, then the cluster options, then --slurm-args
    assert i("--gres=gpu:1") < i("--partition=gpu") < i("--account=perf") < \
        i("--constraint=h200")
    assert args[-1] == f"{bdir}/.cluster/task"
    script = (slurm.bdir / ".cluster" / "task").read_text()
    assert script.startswith("#!" + slurm.bin + " task\n"), script
    # each operator's job column and run identity name the task that ran it
    bj = json.loads((slurm.bdir / "batch.json").read_text())
    (rnd,) = bj["cluster"]["rounds"]
    job = rnd["job"]
    assert [t["ops"] for t in rnd["tasks"]] == [["b_pass", "add"], ["b_skipif", "softmax"],
                                               ["b_fail"]]
    for k, t in enumerate(rnd["tasks"]):
        for op in t["ops"]:
            assert st[op]["job"] == f"{job}_{k}", st[op]
            ident = json.loads((slurm.bdir / st[op]["run_dir"] / "run_identity.json").read_text())
            assert ident["provenance"]["cluster_job"] == f"{job}_{k}"
            assert ident["provenance"]["device_visible_as"] == "1"   # the GPU Slurm gave
    assert [t["state"] for t in rnd["tasks"]] == ["ENDED", "ENDED", "ENDED"]
    assert rnd["tasks"][2]["exit_code"] == 1 and rnd["ended_at"]
    assert bj["schema_version"] == 3 and bj["tables"]["ops_status"] == 3


def test_a_task_lost_to_a_node_is_requeued_once(slurm):
    slurm.env["FAKE_SLURM_LOST"] = "0:NODE_FAIL"          # the first array's task 0
    r = batch(slurm, "--executor", "slurm", "--op-timeout", "100", "--task-ops", "1",
              "--ops", "b_pass", "add")
    assert r.rc == 0, r
    st = status(slurm.bdir)
    assert st["b_pass"]["status"] == "PASS" and st["add"]["status"] == "PASS", st
    bj = json.loads((slurm.bdir / "batch.json").read_text())
    rounds = bj["cluster"]["rounds"]
    assert len(rounds) == 2
    assert rounds[0]["tasks"][0]["state"] == "LOST"
    assert rounds[0]["tasks"][0]["detail"].startswith("NODE_FAIL")
    assert [t["ops"] for t in rounds[1]["tasks"]] == [["b_pass"]]
    assert st["b_pass"]["job"] == rounds[1]["job"] + "_0"
    assert "requeued" in r.out or "submitted 1 operator(s)" in r.out


def test_a_task_lost_twice_fails_its_operators(slurm):
    slurm.env["FAKE_SLURM_LOST"] = "*:PREEMPTED"
    r = batch(slurm, "--executor", "slurm", "--op-timeout", "100", "--ops", "b_pass")
    assert r.rc == 1, r
    row = status(slurm.bdir)["b_pass"]
    assert row["status"] == "FAIL" and row["remarks"] == "lost_twice=PREEMPTED", row
    assert len(sbatch_calls(slurm)) == 2


def test_a_job_slurmctld_forgot_is_read_from_accounting(slurm):
    slurm.env["FAKE_SLURM_PURGED"] = "1"                  # MinJobAge passed
    slurm.env["FAKE_SLURM_SACCT"] = "1"
    slurm.env["FAKE_SLURM_LOST"] = "0:NODE_FAIL"
    r = batch(slurm, "--executor", "slurm", "--op-timeout", "100", "--ops", "b_pass")
    assert r.rc == 0, r
    bj = json.loads((slurm.bdir / "batch.json").read_text())
    assert bj["cluster"]["rounds"][0]["tasks"][0]["state"] == "LOST"   # sacct said so
    assert status(slurm.bdir)["b_pass"]["status"] == "PASS"


def test_the_environment_on_the_node_stops_the_batch_once(slurm):
    # Every task's node lacks the checkout: one failure, every operator PENDING.
    slurm.env["FLAGGEMS_DIR"] = str(slurm.cwd / "no-such-checkout")
    r = batch(slurm, "--executor", "slurm", "--op-timeout", "100", "--task-ops", "1",
              "--ops", "b_pass", "add", "softmax")
    assert r.rc == 3, r
    assert "stopped by the environment" in r.err and "flaggems_dir" in r.err, r.err
    st = status(slurm.bdir)
    assert all(row["status"] == "PENDING" for row in st.values()), st
    assert len(sbatch_calls(slurm)) == 1                 # no second array for it


def test_a_batch_directory_the_nodes_cannot_see_is_refused(slurm):
    slurm.env["FAKE_SINFO_NODES"] = "gpu-node-1 gpu-node-2"
    r = batch(slurm, "--executor", "slurm", "--ops", "b_pass", "--op-timeout", "100")
    assert r.rc == 3, r
    assert "file system local to this machine" in r.err and "gpu-node-1" in r.err, r.err
    assert not slurm.slurm_log.exists()                   # nothing was submitted
    assert status(slurm.bdir)["b_pass"]["status"] == "PENDING"


def test_sbatch_refusing_is_said_with_its_words(slurm):
    slurm.env["FAKE_SLURM_REFUSE"] = "Invalid account or account/partition combination"
    r = batch(slurm, "--executor", "slurm", "--ops", "b_pass", "--op-timeout", "100")
    assert r.rc == 3, r
    assert "sbatch refused the array (exit 1)" in r.err
    assert "Invalid account" in r.err


@pytest.mark.parametrize("sinfo,extra,refused", [
    ("gpu* 30:00", [], True),                       # 1800 + 10 s and 5 min: 36 minutes
    ("gpu* 1-00:00:00", [], False),
    ("gpu* 30:00;long 2-00", ["--partition", "long"], False),
    ("gpu* 30:00", ["--op-timeout", "120"], False),
    ("gpu* 30:00", ["--time", "20"], False),        # the user's --time wins: theirs
])
def test_a_deadline_the_partition_cannot_grant_stops_the_batch_at_once(slurm, sinfo, extra,
                                                                        refused):
    slurm.env["FAKE_SINFO"] = sinfo
    r = batch(slurm, "--executor", "slurm", "--ops", "b_pass", "b_trivial", *extra)
    st = status(slurm.bdir)
    if refused:
        assert r.rc == 3, r
        assert "asks the cluster for 36 minutes and partition gpu allows 30" in r.err, r
        assert "PartitionTimeLimit" in r.err
        assert all(row["status"] == "PENDING" for row in st.values()), st
        assert not slurm.slurm_log.exists()
    else:
        assert r.rc == 0, r
        assert all(row["status"] == "PASS" for row in st.values()), st


def test_the_partition_limit_cuts_the_tasks_smaller(slurm):
    # Operators of 410 s (--op-timeout and --grace): 16 would need 114 minutes;
    # in 30, after 5 for the start, 3 fit.
    slurm.env["FAKE_SINFO"] = "gpu* 30:00"
    ops = ["b_pass", "b_trivial", "add", "softmax", "b_skipif", "b_xfail"]
    r = batch(slurm, "--executor", "slurm", "--op-timeout", "400", "--task-ops", "16",
              "--ops", *ops)
    assert r.rc == 0, r
    (args,) = sbatch_calls(slurm)
    assert "--array=0-1%8" in args or "--array=0-1" in args, args
    assert "--time=30" in args, args
    bj = json.loads((slurm.bdir / "batch.json").read_text())
    assert [len(t["ops"]) for t in bj["cluster"]["rounds"][0]["tasks"]] == [3, 3]


def test_inside_an_allocation_of_one_node_it_runs_here(slurm):
    r = batch(slurm, "--executor", "slurm", "--ops", "b_pass",
              env={"SLURM_JOB_ID": "4242", "SLURM_JOB_NUM_NODES": "1", "SLURM_JOB_GPUS": "0",
                   "CUDA_VISIBLE_DEVICES": "0"})
    assert r.rc == 0, r
    assert "inside slurm allocation 4242" in r.out
    assert not slurm.slurm_log.exists()
    row = status(slurm.bdir)["b_pass"]
    assert row["status"] == "PASS" and row["job"] == "4242"


def test_inside_an_allocation_of_several_nodes_it_refuses(slurm):
    r = batch(slurm, "--executor", "slurm", "--ops", "b_pass",
              env={"SLURM_JOB_ID": "4242", "SLURM_JOB_NUM_NODES": "2"})
    assert r.rc == 3, r
    assert "allocation 4242" in r.err and "this node only" in r.err, r.err
    assert not slurm.bdir.exists()


@pytest.mark.parametrize("args,needle", [
    (["--ops", "b_pass", "--slurm-args", "--partition=x"], "--slurm-args is for --executor slurm"),
    (["--ops", "b_pass", "--partition", "x"], "--partition is for a cluster executor"),
    (["--executor", "slurm", "--ops", "b_pass", "--slurm-args", "-p gpu"],
     "'gpu' is not an sbatch option"),
    (["--executor", "slurm", "--devices", "0", "--ops", "b_pass"],
     "each task uses the GPUs the cluster gave it"),
    (["--status"], "--status needs --batch-dir"),
])
def test_usage(slurm, args, needle):
    r = slurm.cmd("batch", "--progress", "plain", *args)
    assert r.rc == 2, r
    assert needle in r.err


def test_without_sbatch_nothing_starts(world, tmp_path):  # noqa: F811
    # A PATH of its own, holding the interpreter and nothing else: the
    # machine's PATH may have a real Slurm (a Slurm host, CI's own).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    world.env["PATH"] = str(bin_dir)
    r = batch(world, "--executor", "slurm", "--ops", "b_pass")
    assert r.rc == 3, r
    assert "PREFLIGHT_FAILED check=executor" in r.err
    assert "sbatch was not found on PATH" in r.err
    assert not world.bdir.exists()


def test_zlb_task_outside_a_task_says_what_it_is(slurm, tmp_path):
    r = slurm.cmd("task", "script", cwd=tmp_path)
    assert r.rc == 2 and "holds no batch started for a cluster executor" in r.err, r
    assert slurm.cmd("task", "--help").out.startswith("usage: zlb task SCRIPT")
