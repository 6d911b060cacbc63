"""What a warm worker (worker.py) undoes between two jobs, so that the second
compiles, tunes and imports its plugins as a process of its own would.

Kept apart from worker.py because it is what knows the libraries: Triton's
JIT and autotuner caches, FlagGems' LibEntry, torch's global switches. Like
_autotune.py it recognises objects by the names of their classes, so vendor
forks that subclass them are covered, and it imports nothing it does not find
already imported.
"""

import gc
import os
import sys
import time


def class_names(tp):
    """The names of tp and its bases (a copy of _autotune's: that module is
    imported afresh for each job, this one lives as long as the worker)."""
    try:
        return frozenset(c.__name__ for c in tp.__mro__)
    except Exception:
        return frozenset()

# Modules a job imports that must be imported afresh by the next: zlb's own
# plugins (their state is per run) and the whole benchmark package of the
# checkout, conftest, base and test modules (a fresh process runs their
# module-level code again, and zlb's plugins wrap their classes and
# functions: a wrapper left from the job before reads that job's shapes and
# writes into its state). flag_gems, torch and triton stay: that is the
# import paid once. The worker itself stays.
_KEEP = frozenset(("zlbench", "zlbench.worker", "zlbench._worker_reset"))


def _is_job_module(name):
    if name.startswith("zlbench.") or name == "zlbench":
        return name not in _KEEP
    return (name == "benchmark" or name.startswith("benchmark.") or name == "conftest" or
            (name.startswith("test_") and "." not in name))


def _torch():
    return sys.modules.get("torch")


class Reset:
    def __init__(self):
        self.switches = {}

    def warm_up(self):
        """Import what every job imports and that does not touch the device.

        torch and triton import without initialising CUDA (checked on the
        H200); flag_gems initialises it at import (vendor detection), so it
        is left to the first job, which runs with its device's visibility.
        """
        for name in ("pytest", "torch", "triton", "triton.testing", "yaml", "numpy"):
            try:
                __import__(name)
            except Exception:
                pass
        self.switches = self._read_switches()

    def _read_switches(self):
        t = _torch()
        out = {}
        if t is None:
            return out
        probes = {
            "grad": lambda: t.is_grad_enabled(),
            "default_dtype": lambda: t.get_default_dtype(),
            "deterministic": lambda: t.are_deterministic_algorithms_enabled(),
            "matmul_tf32": lambda: t.backends.cuda.matmul.allow_tf32,
            "cudnn_tf32": lambda: t.backends.cudnn.allow_tf32,
            "cudnn_benchmark": lambda: t.backends.cudnn.benchmark,
            "threads": lambda: t.get_num_threads(),
        }
        for k, f in probes.items():
            try:
                out[k] = f()
            except Exception:
                pass
        return out

    def _restore_switches(self):
        t = _torch()
        s = self.switches
        if t is None or not s:
            return
        setters = {
            "grad": lambda v: t.set_grad_enabled(v),
            "default_dtype": lambda v: t.set_default_dtype(v),
            "deterministic": lambda v: t.use_deterministic_algorithms(v),
            "matmul_tf32": lambda v: setattr(t.backends.cuda.matmul, "allow_tf32", v),
            "cudnn_tf32": lambda v: setattr(t.backends.cudnn, "allow_tf32", v),
            "cudnn_benchmark": lambda v: setattr(t.backends.cudnn, "benchmark", v),
            "threads": lambda v: t.set_num_threads(v),
        }
        now = self._read_switches()
        for k, v in s.items():
            # Only what a job changed: a setter is not free (on the H200 the
            # first reset that set them all took 4.5 s, later ones nothing).
            if k in now and now[k] == v:
                continue
            try:
                setters[k](v)
            except Exception:
                pass

    def drop_job_modules(self):
        gone = [n for n in list(sys.modules) if _is_job_module(n)]
        for n in gone:
            mod = sys.modules.pop(n, None)
            # And off the package that stays (zlbench): `from . import _state`
            # takes a package's attribute before sys.modules, so the next job
            # would share this job's state module (its said-once notices,
            # its poisoning) while sys.modules no longer names it.
            parent, _, child = n.rpartition(".")
            pkg = sys.modules.get(parent)
            if pkg is not None and mod is not None and getattr(pkg, child, None) is mod:
                delattr(pkg, child)
        return gone

    def clear_kernel_caches(self):
        """Compiled kernels, autotuner choices and dispatch caches: gone.

        A fresh process compiles every kernel (into the run's own Triton
        cache) and tunes every plain autotuner again; LibTuner's choices live
        in FlagGems' database, which a fresh process reads too, so they stay.
        Returns how many objects were cleared.
        """
        n = 0
        kinds = {}   # type -> its class names when it is a kernel's, else None
        for obj in gc.get_objects():
            tp = type(obj)
            names = kinds.get(tp, 0)
            if names == 0:
                names = class_names(tp)
                if "KernelInterface" not in names and "LibEntry" not in names:
                    names = None
                kinds[tp] = names
            if names is None:
                continue
            d = getattr(obj, "__dict__", None)
            if d is None:
                continue
            touched = False
            caches = d.get("device_caches")
            if hasattr(caches, "clear"):      # JITFunction: compiled kernels per device
                caches.clear()
                touched = True
            if "Autotuner" in names and "LibTuner" not in names:
                cache = d.get("cache")
                if hasattr(cache, "clear"):
                    cache.clear()
                    touched = True
            if "Autotuner" in names or "LibTuner" in names:
                # cached_property: the benchmarker bound at its first tuning,
                # which would be the previous job's (patched) timer.
                if d.pop("do_bench", None) is not None:
                    touched = True
                if "best_config" in d:
                    d["best_config"] = None
            if "LibEntry" in names:
                for attr in ("kernel_cache", "_cpu_cache"):
                    c = d.get(attr)
                    if hasattr(c, "clear"):
                        c.clear()
                        touched = True
            n += touched
        return n

    def between_jobs(self):
        """Undo the last job. Returns the seconds each step took (the
        worker logs them: the reset is the price of a warm process)."""
        steps = (("modules", self.drop_job_modules), ("caches", self.clear_kernel_caches),
                 ("switches", self._restore_switches), ("gc", gc.collect),
                 ("device", self._empty_device_cache))
        took = {}
        for name, step in steps:
            t0 = time.monotonic()
            step()
            took[name] = time.monotonic() - t0
        return took

    def _empty_device_cache(self):
        t = _torch()
        try:
            if t is not None and t.cuda.is_initialized():
                t.cuda.empty_cache()
        except Exception:
            pass

    def state_left(self):
        """What a job left in the process that the next job must not inherit, or None.

        flag_gems.enable() registers FlagGems' kernels for every later torch
        call of the process (its module-level aten library): the next job's
        torch side would measure FlagGems. use_gems() undoes itself on exit.
        """
        fg = sys.modules.get("flag_gems")
        if fg is not None and getattr(fg, "current_work_registrar", None) is not None:
            return "flag_gems.enable() left FlagGems' kernels registered for all of torch"
        return None

    def device_unusable(self):
        """Why the device context cannot serve another job, or None: a
        capture failure the backend calls poisoning (zlbench._state.poisoned,
        read from the job's own module), or a device that no longer syncs."""
        st = sys.modules.get("zlbench._state")
        if st is not None and getattr(st, "poisoned", None):
            return st.poisoned
        t = _torch()
        try:
            name = os.environ.get("ZLB_TORCH_MODULE") or "cuda"
            dev = getattr(t, name, None) if t is not None else None
            if dev is None or not dev.is_initialized():
                return None
            dev.synchronize()
        except Exception as e:
            return "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
        return None
