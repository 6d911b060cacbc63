"""triton.runtime of the stub: driver.active.get_benchmarker() returns
triton.testing.do_bench as it is at call time (as Triton's does), and the
classes Triton exports here (Autotuner, Config, Heuristics, JITFunction,
KernelInterface, OutOfResources) from the stub JIT (_jit.py)."""

from ._jit import (Autotuner, Config, Heuristics, JITFunction,  # noqa: F401
                   KernelInterface, OutOfResources)


class _Active:
    def get_benchmarker(self):
        from triton.testing import do_bench

        return do_bench


class _Driver:
    active = _Active()


driver = _Driver()
