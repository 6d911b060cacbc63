"""What a warm worker undoes between jobs (zlbench/_worker_reset.py) and which
environment differences it refuses (zlbench/worker.py).

Objects are recognised by class names, as in a real Triton/FlagGems process:
the fakes here are named like the real classes and hold what they hold.
"""
import subprocess
import sys
import types

from conftest import PYTHON, subprocess_env
from zlbench import _worker_reset, worker


class KernelInterface:
    pass


class JITFunction(KernelInterface):
    def __init__(self):
        self.device_caches = {0: "compiled"}


class Autotuner(KernelInterface):
    def __init__(self):
        self.cache = {(1024,): "cfg"}
        self.best_config = "cfg"
        self.__dict__["do_bench"] = lambda: "the previous job's timer"


class LibTuner(Autotuner):
    pass


class LibEntry:
    def __init__(self):
        self.kernel_cache = {0: {"key": "kernel"}}
        self._cpu_cache = {"key": "kernel"}


def test_kernel_caches_are_dropped_as_a_fresh_process_has_none():
    jit, tuner, lib, entry = JITFunction(), Autotuner(), LibTuner(), LibEntry()
    n = _worker_reset.Reset().clear_kernel_caches()
    assert n >= 4
    assert jit.device_caches == {}
    assert tuner.cache == {} and tuner.best_config is None and "do_bench" not in tuner.__dict__
    # LibTuner's choices are FlagGems' database, which a fresh process reads too
    assert lib.cache == {(1024,): "cfg"} and "do_bench" not in lib.__dict__
    assert entry.kernel_cache == {} and entry._cpu_cache == {}


def test_plugins_and_the_benchmark_package_are_imported_afresh_flag_gems_stays():
    names = ["zlbench.timing", "zlbench._state", "benchmark.test_sum", "benchmark.test_FLA.test_x",
             "test_local", "benchmark.conftest", "benchmark.base", "zlbench.worker", "flag_gems"]
    saved = {n: sys.modules.get(n) for n in names}
    try:
        for n in names:
            sys.modules.setdefault(n, types.ModuleType(n))
        gone = set(_worker_reset.Reset().drop_job_modules())
        assert {"zlbench.timing", "zlbench._state", "benchmark.test_sum",
                "benchmark.test_FLA.test_x", "test_local", "benchmark.conftest",
                "benchmark.base"} <= gone
        assert not gone & {"zlbench.worker", "zlbench", "zlbench._worker_reset", "torch",
                           "flag_gems"}
    finally:
        for n, m in saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m


def test_the_next_job_gets_state_modules_of_its_own():
    # `from . import _state` reads the kept package's attribute before
    # sys.modules: a plugin imported afresh must not get the job before's
    # state module (its poisoning, its tallies, its said-once notices) while
    # sys.modules, which the worker reads for poisoning, names none.
    code = """
import sys
from zlbench import _worker_reset
import zlbench.timing as t1
first = t1._state
first.poisoned = "the job before's"
_worker_reset.Reset().drop_job_modules()
import zlbench.timing as t2
assert t2 is not t1
assert t2._state is not first and t2._state.poisoned is None
assert sys.modules["zlbench._state"] is t2._state
print("ok")
"""
    r = subprocess.run([PYTHON, "-c", code], env=subprocess_env(), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_the_environment_may_differ_only_in_what_is_read_at_use():
    first = {"CUDA_VISIBLE_DEVICES": "0", "ZLB_RUN_DIR": "/r/a", "TRITON_CACHE_DIR": "/r/a/t",
             "PYTHONPATH": "/p"}
    assert worker.env_difference(first, dict(first, ZLB_RUN_DIR="/r/b",
                                             TRITON_CACHE_DIR="/r/b/t")) is None
    assert worker.env_difference(first, dict(first, CUDA_VISIBLE_DEVICES="1")) == \
        "CUDA_VISIBLE_DEVICES"
    extra = dict(first, FLAGGEMS_CACHE_DIR="/r/b/tuner")
    assert worker.env_difference(first, extra) == "FLAGGEMS_CACHE_DIR"
    w = worker.Worker.__new__(worker.Worker)
    w.first_env, w.first_cwd = first, "/fg"
    why = w.refusal({"v": 1, "argv": [], "env": extra, "cwd": "/fg"})
    assert "FLAGGEMS_CACHE_DIR (worker: unset, job: '/r/b/tuner')" in why
    assert "one checkout" in w.refusal({"v": 1, "argv": [], "env": first, "cwd": "/other"})
    assert "protocol version" in w.refusal({"v": 2, "argv": [], "env": first, "cwd": "/fg"})


def test_a_global_flag_gems_enable_ends_the_worker():
    saved = sys.modules.get("flag_gems")
    try:
        fg = types.ModuleType("flag_gems")
        sys.modules["flag_gems"] = fg
        r = _worker_reset.Reset()
        assert r.state_left() is None            # use_gems() deletes the global on exit
        fg.current_work_registrar = object()     # enable(): registered for all of torch
        assert "flag_gems.enable()" in r.state_left()
    finally:
        if saved is None:
            sys.modules.pop("flag_gems", None)
        else:
            sys.modules["flag_gems"] = saved


def _switchboard():
    """A torch with the switches a job may leave changed, counting sets."""
    calls = []
    state = {"grad": True, "threads": 8, "tf32": False}
    matmul = types.SimpleNamespace(allow_tf32=False)

    def setter(key):
        def set_(v):
            calls.append(key)
            state[key] = v
        return set_

    t = types.SimpleNamespace(
        is_grad_enabled=lambda: state["grad"], set_grad_enabled=setter("grad"),
        get_num_threads=lambda: state["threads"], set_num_threads=setter("threads"),
        backends=types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=matmul)))
    return t, state, calls


def test_only_the_switches_a_job_changed_are_set_back(monkeypatch):
    # On the H200 setting every switch back cost 4.5 s on a worker's first
    # reset: what a job left as it found it is not touched.
    t, state, calls = _switchboard()
    monkeypatch.setitem(sys.modules, "torch", t)
    r = _worker_reset.Reset()
    r.switches = r._read_switches()
    assert r.switches["grad"] is True and r.switches["threads"] == 8
    r._restore_switches()
    assert calls == []
    state["threads"] = 2
    t.backends.cuda.matmul.allow_tf32 = True
    r._restore_switches()
    assert calls == ["threads"] and state["threads"] == 8
    assert t.backends.cuda.matmul.allow_tf32 is False
