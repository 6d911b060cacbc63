"""The batch directory's own files: what zlb batch does with a directory it did
not make, or one that was tampered with (issue 16 rows 8 and 10).

A .lock planted as a link is not followed (its target was truncated and
given a pid); a --batch-dir that is a file, or on a read-only file system,
is a state zlb cannot write: exit 7 as documented (it was 2); a held lock
names the process that holds it, asked of the kernel, not the pid a
previous session left in the file.
"""
import fcntl
import os
import subprocess

import pytest

from test_batch import batch, world  # noqa: F401 (fixture)


def test_a_lock_file_that_is_a_link_is_not_followed(world, tmp_path):
    r = batch(world, "--ops", "b_pass", "--dtypes", "float32")
    assert r.rc == 0, r
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    lock = world.bdir / ".lock"
    lock.unlink()
    lock.symlink_to(victim)
    r = batch(world, "--resume")
    assert r.rc == 7, r
    assert ".lock is a symbolic link" in r.err and "remove it" in r.err, r
    assert victim.read_text() == "precious\n"
    lock.unlink()
    r = batch(world, "--resume")
    assert r.rc == 0, r


def test_a_batch_dir_that_is_a_file_is_not_writable_state(world, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    r = world.cmd("batch", "--batch-dir", str(afile), "--ops", "b_pass")
    assert r.rc == 7, r
    assert "a file of that name is in the way" in r.err, r
    assert afile.read_text() == "x"


@pytest.fixture
def read_only_dir(tmp_path):
    """An empty directory zlb cannot write in: a read-only tmpfs as root, mode 0555 otherwise."""
    d = tmp_path / "ro"
    d.mkdir()
    if os.geteuid() != 0:
        d.chmod(0o555)
        yield d
        d.chmod(0o755)
        return
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "zlb-test-ro", str(d)],
                       capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"root cannot mount a read-only tmpfs here ({r.stderr.strip()}); "
                    "mode bits do not stop root")
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", str(d)], capture_output=True)


def test_a_read_only_batch_dir_is_not_writable_state(world, read_only_dir):
    r = world.cmd("batch", "--batch-dir", str(read_only_dir), "--ops", "b_pass")
    assert r.rc == 7, r
    assert "cannot open the lock file" in r.err, r


def test_a_held_lock_names_its_holder_not_the_pid_in_the_file(world):
    r = batch(world, "--ops", "b_pass", "--dtypes", "float32")
    assert r.rc == 0, r
    lock = world.bdir / ".lock"
    lock.write_text("999999\n")   # what an earlier session left
    with open(lock) as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        r = batch(world, "--resume")
    assert r.rc == 2, r
    assert f"another zlb batch (pid {os.getpid()}) is working on" in r.err, r
    assert "999999" not in r.err
