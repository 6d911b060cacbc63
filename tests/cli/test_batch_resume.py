"""zlb batch --resume continues the batch that was started (issue 14).

A bare --resume restores every option from batch.json; an option given again
with another value is refused with both values named, or, with --override,
changes for the rest of the batch and is recorded with the session.
"""
import json
import signal

from test_batch import (alive, assert_nothing_left, batch, popen_batch, recorded, status,
                        wait_for, world)  # noqa: F401 (fixture)


def ident(zlb, op):
    return json.loads((zlb.bdir / "main" / op / "run_identity.json").read_text())


STARTED = ["--dtypes", "float32", "--retries", "0", "--op-timeout", "240", "--warmup", "7"]


def test_a_bare_resume_continues_with_every_option_it_started_with(world):
    r = batch(world, "--ops", "b_pass", "b_fail", *STARTED)
    assert r.rc == 1, r
    first = json.loads((world.bdir / "batch.json").read_text())
    r = batch(world, "--resume")
    assert r.rc == 1, r
    bj = json.loads((world.bdir / "batch.json").read_text())
    assert bj["options"] == first["options"] and bj["resume"] == first["resume"]
    assert bj["options"]["dtypes"] == ["float32"] and bj["options"]["retries"] == 0
    assert bj["options"]["op_timeout_s"] == 240
    # The rerun operator ran as the first session's did: its warm-up, its dtypes
    # (on its first attempt: the last one, dtype_rescue, runs without them), no retry.
    cmd = ident(world, "b_fail")["provenance"]["pytest_command"]
    assert cmd[cmd.index("--warmup") + 1] == "7" and "--dtypes" not in cmd
    aside = sorted((world.bdir / ".attempts" / "main").glob("b_fail.*/run_identity.json"),
                   key=lambda p: int(p.parent.name.rsplit(".", 1)[1]))
    cmd = json.loads(aside[-1].read_text())["provenance"]["pytest_command"]
    assert cmd[cmd.index("--dtypes") + 1] == "float32"
    row = status(world.bdir)["b_fail"]
    assert row["attempts"] == "2" and row["remarks"] == "dtype_rescue", row
    assert [s["overrides"] for s in bj["sessions"]] == [[], []]


def test_an_option_given_again_differently_is_refused_and_nothing_changes(world):
    r = batch(world, "--ops", "b_pass", "b_fail", *STARTED)
    assert r.rc == 1, r
    before = (world.bdir / "batch.json").read_bytes()
    table = (world.bdir / "ops_status.csv").read_bytes()
    r = batch(world, "--resume", "--retries", "3", "--dtypes", "float16")
    assert r.rc == 2, r
    assert "--retries: batch.json has '0', given '3' (by --retries)" in r.err, r
    assert "--dtypes: batch.json has 'float32', given 'float16'" in r.err, r
    assert "--override" in r.err
    assert (world.bdir / "batch.json").read_bytes() == before
    assert (world.bdir / "ops_status.csv").read_bytes() == table
    # A variable set since does not change a batch under way: it is named, not used.
    r = batch(world, "--resume", env={"ZL_ITER_MS": "9"})
    assert r.rc == 1, r
    assert "ZL_ITER_MS=9 is not used: batch.json has --iter 5" in r.err, r
    assert "ZL_WARMUP_MS" not in r.err    # as it was when the batch started: no news
    cmd = ident(world, "b_fail")["provenance"]["pytest_command"]
    assert cmd[cmd.index("--iter") + 1] == "5"
    # The same value again is no conflict.
    r = batch(world, "--resume", "--retries", "0")
    assert r.rc == 1, r


def test_override_changes_the_rest_of_the_batch_and_says_so(world):
    r = batch(world, "--ops", "b_pass", "b_fail", *STARTED)
    assert r.rc == 1, r
    r = batch(world, "--resume", "--override", "--retries", "2")
    assert r.rc == 1, r
    bj = json.loads((world.bdir / "batch.json").read_text())
    assert bj["options"]["retries"] == 2 and bj["resume"]["batch"]["retries"] == "2"
    assert bj["sessions"][0]["overrides"] == []
    assert bj["sessions"][1]["overrides"] == [
        "--retries: batch.json has '0', given '2' (by --retries)"]
    r = batch(world, "--override", "--ops", "b_pass")
    assert r.rc == 2 and "--override is for --resume" in r.err, r


def test_another_operator_list_is_a_conflict(world):
    assert batch(world, "--ops", "b_pass", "b_trivial").rc == 0
    r = batch(world, "--resume", "--ops", "b_pass")
    assert r.rc == 2 and "the operator list" in r.err, r
    r = batch(world, "--resume", "--ops", "b_pass", "b_trivial")
    assert r.rc == 0, r


def test_a_worker_batch_killed_resumes_in_workers(world):
    ops = ["b_pass", "b_slow", "b_trivial"]
    p = popen_batch(world, "--isolation", "worker", "--ops", *ops,
                    env={"FAKE_BATCH_SLOW": "30"})
    assert wait_for(lambda: any(n.startswith("b_slow.") for n, _, _ in recorded(world))), \
        p.communicate()
    workers = {pid for n, pid, _ in recorded(world)}
    p.send_signal(signal.SIGKILL)
    p.communicate()
    # The worker (which ran b_pass and b_slow) does not outlive its batch.
    assert wait_for(lambda: not any(alive(w) for w in workers), timeout=15)
    r = batch(world, "--resume", env={"FAKE_BATCH_SLOW": "0"})
    assert r.rc == 0, r
    st = status(world.bdir)
    assert {o: st[o]["status"] for o in ops} == {"b_pass": "PASS", "b_slow": "PASS",
                                                  "b_trivial": "PASS"}
    assert ident(world, "b_slow")["caliber"]["isolation"] == "worker"
    bj = json.loads((world.bdir / "batch.json").read_text())
    assert bj["options"]["isolation"] == "worker"
    assert [s["status"] for s in bj["sessions"]] == ["killed", "completed"]
    runs = [n.split(".")[0] for n, _, _ in recorded(world)]
    assert runs.count("b_pass") == 1 and runs.count("b_slow") == 2


def test_a_batch_of_ops_status_v2_resumes_into_v3(world):
    """A batch an older zlb started (ops_status v2, .complete v1) resumes:
    what passed is kept and gains its card from its run's identity, the
    rest reruns, and the table is rewritten as version 3."""
    import csv

    from test_batch import COLUMNS, FAKE_GPU, fake_uuid

    env = {"FAKE_CUDA_DEVICES": "2"}
    # A process per operator, as the zlb of ops_status v2 ran them by default:
    # each operator's pytest runs once per session (no fresh_worker rerun).
    r = batch(world, "--isolation", "process", "--ops", "b_pass", "b_trivial", "b_fail",
              "--retries", "0", "--devices", "0,1", env=env)
    assert r.rc == 1, r
    first = status(world.bdir)
    kept = {op: ident(world, op) for op in ("b_pass", "b_trivial")}
    # Back to what the zlb of ops_status v2 wrote: no gpu columns, v1 markers.
    old_cols = [c for c in COLUMNS if c not in ("gpu", "gpu_uuid")]
    with open(world.bdir / "ops_status.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(old_cols)
        for row in first.values():
            w.writerow([row[c] for c in old_cols])
    for op in ("b_pass", "b_trivial"):
        marker = world.bdir / "main" / op / ".complete"
        c = json.loads(marker.read_text())
        del c["gpu"], c["gpu_uuid"]
        c["schema_version"] = 1
        marker.write_text(json.dumps(c))
    bj = json.loads((world.bdir / "batch.json").read_text())
    bj["tables"] = {"ops_status": 2, "complete": 1}
    (world.bdir / "batch.json").write_text(json.dumps(bj))

    r = batch(world, "--resume", env=env)
    assert r.rc == 1, r
    st = status(world.bdir)     # asserts the v3 header
    runs = [n.split(".")[0] for n, _, _ in recorded(world)]
    assert runs.count("b_pass") == 1 and runs.count("b_fail") == 2, runs  # kept, rerun
    assert {op: ident(world, op) for op in kept} == kept
    for op in ("b_pass", "b_trivial", "b_fail"):
        dev = st[op]["device"]
        assert dev in ("0", "1"), st[op]
        assert (st[op]["gpu"], st[op]["gpu_uuid"]) == (FAKE_GPU, fake_uuid(dev)), st[op]
        assert ident(world, op)["provenance"]["gpu_uuid"] == fake_uuid(dev)
    assert st["b_pass"]["status"] == "PASS" and st["b_fail"]["status"] == "FAIL"
    assert json.loads((world.bdir / "batch.json").read_text())["tables"] == \
        {"ops_status": 3, "complete": 2}


def test_a_batch_recorded_before_isolation_continues_in_processes(world):
    """A record that does not name --isolation is of a zlb whose batches all
    ran a process per operator: it continues so, whatever today's default,
    and a worker asked for is refused with a sentence (or --override)."""
    r = batch(world, "--isolation", "process", "--ops", "b_pass", "b_fail", "--retries", "0")
    assert r.rc == 1, r
    bj = json.loads((world.bdir / "batch.json").read_text())
    del bj["resume"]["batch"]["isolation"], bj["options"]["isolation"]
    (world.bdir / "batch.json").write_text(json.dumps(bj))
    before = (world.bdir / "batch.json").read_bytes()

    r = batch(world, "--resume", "--isolation", "worker")
    assert r.rc == 2, r
    assert "--isolation: batch.json has 'process' (written before the option was " \
           "recorded: its sessions ran so), given 'worker' (by --isolation)" in r.err, r
    assert (world.bdir / "batch.json").read_bytes() == before
    r = batch(world, "--resume", env={"ZLB_ISOLATION": "worker"})
    assert r.rc == 1, r
    assert "ZLB_ISOLATION=worker is not used: batch.json has --isolation process" in r.err, r
    assert ident(world, "b_fail")["caliber"]["isolation"] == "process"
    assert ident(world, "b_pass")["caliber"]["isolation"] == "process"   # kept
    bj = json.loads((world.bdir / "batch.json").read_text())
    assert bj["options"]["isolation"] == "process"
    assert bj["resume"]["batch"]["isolation"] == "process"    # said from now on
    assert not (world.bdir / ".logs" / "workers").exists() or \
        not list((world.bdir / ".logs" / "workers").iterdir())
    runs = [n.split(".")[0] for n, _, _ in recorded(world)]
    assert runs.count("b_pass") == 1 and runs.count("b_fail") == 2, runs
    r = batch(world, "--resume")
    assert r.rc == 1, r
    assert "is not used" not in r.err, r
    assert ident(world, "b_fail")["caliber"]["isolation"] == "process"
