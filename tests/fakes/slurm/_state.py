"""The fake Slurm's memory: one JSON file ($FAKE_SLURM_STATE) that sbatch
writes and scontrol, squeue, scancel and sacct read, so the fakes agree
with each other as a cluster's commands do. Shared by the fake programs
beside it (not a test helper)."""
import fcntl
import json
import os
from contextlib import contextmanager

PATH = os.environ.get("FAKE_SLURM_STATE", "/nonexistent/fake-slurm-state.json")


@contextmanager
def state():
    """The state, locked, written back when the block ends."""
    fd = os.open(PATH, os.O_RDWR | os.O_CREAT, 0o644)
    with os.fdopen(fd, "r+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        text = f.read()
        st = json.loads(text) if text.strip() else {"next_job": 100, "jobs": {}}
        yield st
        f.seek(0)
        f.truncate()
        f.write(json.dumps(st))
