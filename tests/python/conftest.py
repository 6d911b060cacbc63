"""Shared fixtures of the zlbench plugin tests.

The tests run in-process against the stub torch/triton of tests/stubs (put
first on sys.path here) and, for whole runs, in subprocesses against the fake
FlagGems trees. Graph-timing tests need the real libzlbtimer.so and the fake
driver libfakecuda.so, given by CTest as $ZLB_TIMER_LIB and $ZLB_FAKECUDA;
without them those tests skip.
"""

import ctypes
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYDIR = os.path.join(REPO, "python")
STUBS = os.path.join(REPO, "tests", "stubs")
FAKE = os.path.join(REPO, "tests", "fake_flaggems")
FAKE_VLLM = os.path.join(REPO, "tests", "fake_flaggems_vllm")
UPSTREAM = os.path.join(REPO, ".carry", "FlagGems")
PYTHON = sys.executable

for p in (FAKE, os.path.join(FAKE, "src"), STUBS, PYDIR):
    if p not in sys.path:
        sys.path.insert(0, p)

# Read before the autouse fixture clears the ZLB_* environment of each test.
# Made absolute: subprocesses run in other directories.
TIMER_LIB = os.environ.get("ZLB_TIMER_LIB") or None
FAKECUDA = os.environ.get("ZLB_FAKECUDA") or None
TIMER_LIB = os.path.abspath(TIMER_LIB) if TIMER_LIB else None
FAKECUDA = os.path.abspath(FAKECUDA) if FAKECUDA else None


def _engine_env():
    """The ZLB_* settings zlb passes every child (zlb run --print-engine-env):
    the plugins have no defaults of their own, so each test starts with
    zlb's."""
    zlb = os.environ.get("ZLB_BIN") or os.path.join(REPO, "build", "zlb")
    out = subprocess.run([zlb, "run", "--print-engine-env"], capture_output=True,
                         text=True, check=True, env={"PATH": os.environ.get("PATH", "")})
    return dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)


ENGINE_ENV = _engine_env()

FATAL_TEXTS = "\n".join([
    "an illegal memory access was encountered",
    "an illegal instruction was encountered",
    "unspecified launch failure",
    "device-side assert triggered",
    "CUDA out of memory",
])


def pytest_configure(config):
    # The fake benchmark modules carry upstream's per-op marks.
    config.addinivalue_line("filterwarnings", "ignore::pytest.PytestUnknownMarkWarning")


def have_timer():
    return bool(TIMER_LIB and FAKECUDA and os.path.isfile(TIMER_LIB)
                and os.path.isfile(FAKECUDA))


def need_timer():
    if not TIMER_LIB or not FAKECUDA:
        pytest.skip("ZLB_TIMER_LIB and ZLB_FAKECUDA are not both set "
                    "(CTest sets them to the built libzlbtimer.so and libfakecuda.so)")
    for p in (TIMER_LIB, FAKECUDA):
        if not os.path.isfile(p):
            pytest.skip("%s does not exist (build with cmake first)" % p)


def read_jsonl(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def events(run_dir, kind=None):
    evs = read_jsonl(os.path.join(str(run_dir), "events.jsonl"))
    return [e for e in evs if kind is None or e["event"] == kind]


def measure_plain_copy(measure, torch):
    """Measure a same-dtype copy of 1 Mi floats, which captures memcpy nodes
    and no kernel, and check what every timer library must say of it: the
    node counts and both markers. Returns (record, calls per replay)."""
    src = torch.randn(1 << 20, device="cuda")
    dst = torch.empty(1 << 20, device="cuda")
    _, rec = measure(lambda: dst.copy_(src))
    k = rec["calls_per_replay"]
    assert rec["graph"] == {"kernels": 0, "memcpys": k, "memsets": 0, "others": 0}
    # A plain copy captures no kernel: it is not a measurement of an operator.
    assert rec["markers"] == ["GRAPH_MEMCPY_NODES", "GRAPH_NO_KERNELS"]
    return rec, k


def rows(run_dir):
    return read_jsonl(os.path.join(str(run_dir), "results.jsonl"))


@pytest.fixture(autouse=True)
def clean_state(monkeypatch):
    """Each test starts with no ZLB_* environment and fresh plugin state."""
    for k in list(os.environ):
        if k.startswith("ZLB_") or k.startswith("FAKE_") or k.startswith("STUB_TORCH"):
            monkeypatch.delenv(k)
    for k, v in ENGINE_ENV.items():
        monkeypatch.setenv(k, v)
    # The placement probes are timed after the measurement and have tests
    # of their own (test_placement_probes.py); the launch and capture
    # counts the other tests pin are the measurement's.
    monkeypatch.setenv("ZLB_PLACEMENT_PROBES", "0")
    from zlbench import _io, _state

    _state.reset_pending()
    _state.results_written.clear()
    _state.depth = 0
    _state.capturing = False
    _state.nodeid = None
    _state.said.clear()
    _state.inactive_said = False
    _state.original_do_bench = None
    _state.spin_clock = None
    yield
    from zlbench import _spin

    _spin.release()
    if _state.sink is not None:
        _state.sink.close()
        _state.sink = None
    _state.reset_pending()
    _state.capturing = False
    _state.depth = 0
    del _io


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    d = tmp_path / "run"
    d.mkdir()
    monkeypatch.setenv("ZLB_RUN_DIR", str(d))
    return d


@pytest.fixture(scope="session")
def fake_bench():
    """The fake FlagGems benchmark package imported in this process, as pytest
    would after configure: Config set (level core), then base imported."""
    import torch  # noqa: F401  (the stub)

    from benchmark import conftest, consts

    if conftest.Config is None:
        conftest.Config = conftest.BenchConfig()
        conftest.Config.bench_level = consts.BenchLevel.CORE
        conftest.Config.warm_up = 10
        conftest.Config.repetition = 10
    from benchmark import base

    assert base.Config is conftest.Config
    return base


@pytest.fixture
def stub_torch():
    import torch

    torch._stub.reset_counters()
    # Heal the default generators: a test may poison them on purpose.
    for g in torch.cuda.default_generators:
        g._state.capturing = False
    torch.default_generator._state.capturing = False
    torch._stub.capture = None
    return torch


def subprocess_env(extra=None, tree=FAKE):
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("ZLB_") or k.startswith("FAKE_"))}
    env.update(ENGINE_ENV)
    env["PYTHONPATH"] = os.pathsep.join([PYDIR, STUBS, os.path.join(tree, "src")])
    env["PYTHONUNBUFFERED"] = "1"
    # CTest's shared bytecode cache outside the source tree, else none.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if os.environ.get("ZLB_PYCACHE"):
        env["PYTHONPYCACHEPREFIX"] = os.environ["ZLB_PYCACHE"]
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    if extra:
        env.update(extra)
    return env


def run_pytest(args, env_extra=None, tree=FAKE, timeout=300):
    """python -m pytest <args> in tree, as zlb runs it. Returns CompletedProcess."""
    env = subprocess_env(env_extra, tree)
    cmd = [PYTHON, "-m", "pytest", "-p", "no:cacheprovider", "-s"] + list(args)
    return subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True,
                          timeout=timeout)


ALL_PLUGINS = ["-p", "zlbench.results", "-p", "zlbench.seed", "-p", "zlbench.shapes",
               "-p", "zlbench.timing"]


@pytest.fixture
def real(monkeypatch, run_dir, stub_torch):
    """The real libzlbtimer on the fake driver, as the graph timer; returns
    the fake driver (its counters reset)."""
    need_timer()
    monkeypatch.setenv("ZLB_LIBCUDA", FAKECUDA)
    monkeypatch.setenv("ZLB_TIMER", "graph")
    monkeypatch.setenv("ZLB_TIMER_LIB", TIMER_LIB)
    fake = ctypes.CDLL(FAKECUDA)
    fake.fake_cuda_reset()
    fake.fake_cuda_launch_count.restype = ctypes.c_ulonglong
    import triton
    from zlbench import _graph, _state

    monkeypatch.setattr(_state, "original_do_bench", triton.testing.do_bench)
    lib, why = _graph.timer_lib(TIMER_LIB)
    if lib is None or not lib.v2:
        pytest.skip("the library at %s is not ABI version 2 (%s)" % (TIMER_LIB, why))
    return fake
