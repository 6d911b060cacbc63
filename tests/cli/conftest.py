"""Fixtures for the zlb command-line tests.

These run the real build/zlb end to end against a fake FlagGems checkout
(tests/fake_flaggems) whose pytest suite prints upstream-format tables, with
stub torch/triton (tests/stubs) and a fake CUDA driver (libfakecuda.so), so
the whole path - preflight, spawn, plugins, libzlbtimer, tee, identity - runs
in CI without a GPU. CTest passes ZLB_BIN, ZLB_FAKECUDA and ZLB_TIMER_LIB.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FAKE_MAIN = REPO / "tests" / "fake_flaggems"
FAKE_VLLM = REPO / "tests" / "fake_flaggems_vllm"
STUBS = REPO / "tests" / "stubs"


def _required(name):
    value = os.environ.get(name)
    if not value or not Path(value).exists():
        pytest.skip(f"{name} is not set to a built file (run through ctest)")
    return value


def bytecode_env():
    """Where the Pythons a test starts keep compiled bytecode: CTest's shared
    cache outside the source tree (ZLB_PYCACHE), else nowhere."""
    cache = os.environ.get("ZLB_PYCACHE")
    if cache:
        return {"PYTHONPYCACHEPREFIX": cache}
    return {"PYTHONDONTWRITEBYTECODE": "1"}


class Zlb:
    """Runs build/zlb with a controlled environment inside a temp cwd."""

    def __init__(self, tmp_path):
        self.bin = _required("ZLB_BIN")
        self.cwd = tmp_path
        self.runs = tmp_path / "runs"
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path / "home"),
            "LANG": "C.UTF-8",
            "ZLB_PYTHON": "/usr/bin/python3",
            "PYTHONPATH": str(STUBS),
            **bytecode_env(),
            "ZLB_LIBCUDA": _required("ZLB_FAKECUDA"),
            "ZLB_TIMER_LIB": _required("ZLB_TIMER_LIB"),
            # Never the real NVML of the machine running the tests.
            "ZLB_LIBNVML": _required("ZLB_FAKENVML"),
            "FAKE_CUDA_DEVICES": "1",
            "FLAGGEMS_DIR": str(FAKE_MAIN),
            "FLAGGEMS_PERF_COLOR": "never",
            "ZL_WARMUP_MS": "5",
            "ZL_ITER_MS": "5",
        }

    def run(self, *args, **kw):
        """`zlb run ARGS`."""
        return self.cmd("run", *args, **kw)

    def cmd(self, *args, env=None, timeout=120, cwd=None):
        """`zlb ARGS`."""
        full_env = dict(self.env)
        for k, v in (env or {}).items():
            if v is None:
                full_env.pop(k, None)
            else:
                full_env[k] = v
        proc = subprocess.run([self.bin, *args], cwd=cwd or self.cwd, env=full_env,
                              capture_output=True, text=True, timeout=timeout)
        return Result(proc, self.runs if cwd is None else Path(cwd) / "runs")

    def popen(self, *args, env=None):
        full_env = dict(self.env)
        full_env.update({k: v for k, v in (env or {}).items() if v is not None})
        return subprocess.Popen([self.bin, "run", *args], cwd=self.cwd, env=full_env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)


class Result:
    def __init__(self, proc, runs):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr
        self.runs = runs

    @property
    def run_dirs(self):
        return sorted(p for p in self.runs.iterdir() if p.is_dir()) if self.runs.exists() else []

    @property
    def run_dir(self):
        dirs = self.run_dirs
        assert len(dirs) == 1, f"expected one run directory, got {dirs}\n{self}"
        return dirs[0]

    def identity(self, run_dir=None):
        return json.loads((run_dir or self.run_dir).joinpath("run_identity.json").read_text())

    def rows(self, run_dir=None):
        path = (run_dir or self.run_dir) / "results.jsonl"
        return [json.loads(l) for l in path.read_text().splitlines() if l.strip()]

    def events(self, run_dir=None):
        path = (run_dir or self.run_dir) / "events.jsonl"
        if not path.exists():
            return []
        return [json.loads(l) for l in path.read_text().splitlines() if l.strip()]

    def __str__(self):
        return f"rc={self.rc}\n--- stdout ---\n{self.out}\n--- stderr ---\n{self.err}"

    __repr__ = __str__


@pytest.fixture
def zlb(tmp_path):
    (tmp_path / "home").mkdir()
    return Zlb(tmp_path)


@pytest.fixture
def shapes(tmp_path):
    """Write a shape file (dict -> YAML) and return its path."""
    def write(text, name="shapes.yaml"):
        path = tmp_path / name
        path.write_text(text)
        return path
    return write


class LoggingPython:
    """An interpreter that logs each start, then execs /usr/bin/python3.

    One line per start: its first argument ("-c" for preflight's probe, "-m"
    for pytest) and "token" when ZLB_PYTHON_PROBED reached it. With
    WRAP_TOUCH set, a pytest start touches the script (a new mtime and
    ctime: the interpreter changed under a running batch).
    """

    def __init__(self, path, broken=False):
        self.path = path
        self.log = path.with_name(path.name + ".log")
        tail = "exit 1" if broken else 'exec /usr/bin/python3 "$@"'
        path.write_text(
            "#!/bin/sh\n"
            f'echo "$1 ${{ZLB_PYTHON_PROBED:+token}}" >> "{self.log}"\n'
            '[ -n "$WRAP_TOUCH" ] && [ "$1" = -m ] && touch "$0"\n'
            f"{tail}\n")
        path.chmod(0o755)

    def lines(self):
        return self.log.read_text().splitlines() if self.log.exists() else []

    def probes(self):
        return sum(1 for l in self.lines() if l.split()[0] == "-c")

    def starts(self, arg):
        return sum(1 for l in self.lines() if l.split()[0] == arg)


@pytest.fixture
def logging_python(tmp_path):
    """Make a LoggingPython in tmp_path (broken=True: it logs and exits 1)."""
    def make(name="python-logged", broken=False):
        return LoggingPython(tmp_path / name, broken=broken)
    return make
