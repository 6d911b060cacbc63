"""The batch on a terminal: --progress auto goes live on a tty (one line per
device redrawn in place) and stays plain in a pipe."""
import fcntl
import os
import pty
import re
import struct
import subprocess
import termios

from test_batch import world  # noqa: F401


def run_on_tty(zlb, args, env, columns=None):
    master, slave = pty.openpty()
    if columns:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
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


def drawn_lines(out):
    """What each redraw put on a line: the text after ESC [2K, up to its end."""
    return re.findall(r"\x1b\[2K([^\r\n\x1b]*)", out)


def test_live_lines_never_wider_than_the_terminal(world, tmp_path):  # noqa: F811
    # a 40-column terminal: a line of 41 would wrap, and every redraw would
    # leave a copy of it behind (the block is moved up by its count of lines)
    rc, out = run_on_tty(world, ["--batch-dir", str(tmp_path / "b"), "--devices", "0,1",
                                 "--ops", "b_slow", "b_pass", "add"],
                         {"FAKE_CUDA_DEVICES": "2", "FAKE_BATCH_SLOW": "1.0", "TERM": "xterm",
                          "COLUMNS": "200"}, columns=40)
    assert rc == 0, out
    drawn = [l for l in drawn_lines(out) if l]
    assert drawn, out
    assert all(len(l) <= 39 for l in drawn), [l for l in drawn if len(l) > 39]
    assert any(l.startswith("dev 0 ") for l in drawn), drawn   # said in short


def test_verbose_shows_every_operator_under_the_live_block(world, tmp_path):  # noqa: F811
    args = ["--batch-dir", str(tmp_path / "b"), "--ops", "b_pass", "add"]
    rc, out = run_on_tty(world, args, {"TERM": "xterm"})
    assert rc == 0 and "PASS    b_pass" not in out, out
    rc, out = run_on_tty(world, ["--batch-dir", str(tmp_path / "v"), "--ops", "b_pass", "add",
                                 "-v"], {"TERM": "xterm"})
    assert rc == 0 and "PASS    b_pass" in out and "PASS    add" in out, out
