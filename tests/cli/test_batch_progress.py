"""The batch on a terminal: --progress auto goes live on a tty (one line per
device redrawn in place) and stays plain in a pipe."""
import os
import pty
import re
import subprocess

from test_batch import world  # noqa: F401


def run_on_tty(zlb, args, env):
    master, slave = pty.openpty()
    full = dict(zlb.env)
    full.update(env)
    p = subprocess.Popen([zlb.bin, "batch", *args], cwd=zlb.cwd, env=full,
                         stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:              # EIO: the other side closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(timeout=120), out.decode(errors="replace")


def test_live_lines_per_device_on_a_terminal(world, tmp_path):  # noqa: F811
    rc, out = run_on_tty(world, ["--batch-dir", str(tmp_path / "b"), "--devices", "0,1",
                                 "--ops", "b_slow", "b_pass", "b_fail", "add"],
                         {"FAKE_CUDA_DEVICES": "2", "FAKE_BATCH_SLOW": "1.0", "TERM": "xterm"})
    assert rc == 1, out
    assert "\x1b[2Kdevice 0: " in out and "\x1b[2Kdevice 1: " in out, out
    assert " done, " in out and " elapsed, ~" in out
    assert "FAIL    b_fail" in out                   # a failure stays above the block
    # the block is erased before the closing line: nothing of it after the summary
    last = out.rstrip().splitlines()[-1]
    assert re.search(r"\x1b\[2Azlb batch: 3 PASS, 0 SKIP, 1 FAIL, 0 TIMEOUT in \d+s; "
                     + re.escape(f"{tmp_path / 'b' / 'ops_status.csv'}") + "$", last), out


def test_plain_in_a_pipe(world, tmp_path):  # noqa: F811
    r = world.cmd("batch", "--batch-dir", str(tmp_path / "b"), "--ops", "b_pass")
    assert r.rc == 0, r
    assert "\x1b[" not in r.out
    assert "[device 0 1/1] PASS    b_pass" in r.out
