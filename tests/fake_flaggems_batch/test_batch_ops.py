"""Operators with chosen behaviours for the zlb batch tests (see README.md)."""
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from . import base


def _note(op, pid=None):
    d = os.environ.get("FAKE_BATCH_PIDS")
    if not d:
        return
    pid = pid or os.getpid()
    name = "%s.%d" % (op, pid)
    # Whole or not at all: the tests read the folder while operators run
    # (one read an empty file between this open and its write, on two busy
    # cores); a name with a leading dot is not yet a note.
    tmp = os.path.join(d, "." + name)
    with open(tmp, "w") as f:
        f.write("%d %d\n" % (pid, os.getpgid(pid)))
    os.rename(tmp, os.path.join(d, name))


def _bench(name, dtypes):
    return base.GenericBenchmark2DOnly(input_fn=base.unary_input_fn, op_name=name,
                                       torch_op=torch.exp, dtypes=dtypes)


@pytest.mark.b_pass
def test_b_pass():
    _note("b_pass")
    _bench("b_pass", [torch.float16, torch.float32]).run()


@pytest.mark.b_fp32only
def test_b_fp32only():
    _note("b_fp32only")
    _bench("b_fp32only", [torch.float32]).run()


@pytest.mark.b_fail
def test_b_fail():
    _note("b_fail")
    pytest.fail("fake: fails every time")


@pytest.mark.b_segv
def test_b_segv():
    _note("b_segv")
    os.kill(os.getpid(), signal.SIGSEGV)


@pytest.mark.b_flaky
def test_b_flaky():
    _note("b_flaky")
    path = os.path.join(os.environ["FAKE_BATCH_STATE"], "b_flaky.count")
    n = int(open(path).read()) if os.path.exists(path) else 0
    with open(path, "w") as f:
        f.write(str(n + 1))
    if n == 0:
        pytest.fail("fake: flaky, first call fails")
    _bench("b_flaky", [torch.float32]).run()


@pytest.mark.b_hang
def test_b_hang():
    _note("b_hang")
    print("FAKE: b_hang sleeping forever", flush=True)
    while True:
        time.sleep(3600)


@pytest.mark.b_stubborn
def test_b_stubborn():
    _note("b_stubborn")
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    print("FAKE: b_stubborn ignores SIGINT and SIGTERM", flush=True)
    while True:
        time.sleep(3600)


@pytest.mark.b_orphan
def test_b_orphan():
    _note("b_orphan")
    code = ("import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "time.sleep(300)")
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _note("b_orphan_child", p.pid)
    _bench("b_orphan", [torch.float32]).run()


@pytest.mark.b_setsid
def test_b_setsid():
    """A grandchild in a session of its own: no signal to pytest's group reaches it."""
    _note("b_setsid")
    code = "import time; time.sleep(300)"
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    _note("b_setsid_child", p.pid)
    _bench("b_setsid", [torch.float32]).run()


@pytest.mark.b_daemon
def test_b_daemon():
    """A double-forked daemon that ignores SIGTERM and keeps the test's stdout."""
    _note("b_daemon")
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                _note("b_daemon_child")
                time.sleep(120)
            os._exit(0)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    _bench("b_daemon", [torch.float32]).run()


@pytest.mark.b_skipif
def test_b_skipif():
    _note("b_skipif")
    pytest.skip("fake: not on this device")


@pytest.mark.b_xfail
@pytest.mark.xfail(reason="fake: known upstream bug")
def test_b_xfail():
    _note("b_xfail")
    raise RuntimeError("fake: fails as expected")


@pytest.mark.b_slow
def test_b_slow():
    _note("b_slow")
    time.sleep(float(os.environ.get("FAKE_BATCH_SLOW", "0")))
    _bench("b_slow", [torch.float32]).run()


@pytest.mark.b_trivial
def test_b_trivial():
    pass


@pytest.mark.skip(reason="fake: benchmark fails upstream (issue #1)")
def test_b_skipmarked():
    raise AssertionError("an unconditionally skipped test must never run")


@pytest.mark.b_poison
def test_b_poison():
    """Passes, and leaves the process broken for whatever runs after it in it."""
    _note("b_poison")

    def broken(*a, **k):
        raise RuntimeError("fake: torch.exp was broken by an earlier test in this process")
    torch.exp = broken
