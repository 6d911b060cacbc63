"""Nothing a run starts outlives it, whatever it does with its process group,
its session or its output (issue 16, rows 1-3).

The fake operators (tests/fake_flaggems_batch): b_setsid leaves a grandchild
in a session of its own, which no signal to pytest's group reaches; b_daemon
double-forks a daemon that ignores SIGTERM and keeps the test's stdout, which
is zlb run's pipe, so the pipe never closes by itself. zlb run is a subreaper:
both come back to it when their parents exit, and it ends them; a batch ends
what is left of a job it kills.
"""
from test_batch import alive, batch, recorded, status, world  # noqa: F401 (fixture)


def pids(zlb, name):
    return [pid for n, pid, _ in recorded(zlb) if n.split(".")[0] == name]


def test_run_ends_a_grandchild_that_left_the_session(world):
    r = world.run("b_setsid")
    assert r.rc == 0, r
    child, = pids(world, "b_setsid_child")
    assert not alive(child), r
    assert "zlb: ended 1 process(es) the test left running" in r.out
    assert r.identity()["status"] == "completed"


def test_run_returns_while_a_daemon_holds_its_output(world):
    # The daemon sleeps 120 s on the pipe: zlb run waited for it (timeout 60 here).
    r = world.run("b_daemon", timeout=60)
    assert r.rc == 0, r
    daemon, = pids(world, "b_daemon_child")
    assert not alive(daemon), r
    assert "1 passed" in r.out and "zlb: completed, exit 0" in r.out
    assert r.identity()["status"] == "completed"


def test_batch_leaves_nothing_behind(world):
    r = batch(world, "--ops", "b_setsid", "b_daemon", "b_pass", "--op-timeout", "40",
              "--grace", "1", timeout=100)
    assert r.rc == 0, r
    st = status(world.bdir)
    assert [st[op]["status"] for op in ("b_setsid", "b_daemon", "b_pass")] == ["PASS"] * 3
    left = [(n, pid) for n, pid, _ in recorded(world) if alive(pid)]
    assert not left, left


def test_a_deadline_holds_while_the_run_is_stuck_on_its_pipe(world):
    # zlb run waits 2+2 s for the daemon after pytest ends; a short deadline
    # may fall in that wait, where SIGTERM leaves zlb run: SIGKILL must come
    # (it never did: the wait for it became infinite). Whichever stage the
    # deadline meets, the batch ends and leaves nothing behind.
    r = batch(world, "--ops", "b_daemon", "--op-timeout", "3", "--grace", "1",
              "--retries", "0", timeout=60)
    assert r.rc in (0, 1), r
    assert status(world.bdir)["b_daemon"]["status"] in ("TIMEOUT", "PASS"), r
    left = [(n, pid) for n, pid, _ in recorded(world) if alive(pid)]
    assert not left, left
