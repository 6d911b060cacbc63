"""A stand-in for triton: testing.do_bench (the "original" timer the
zlbench timing plugin replaces), runtime.driver.active.get_benchmarker()
(which, like Triton's, looks triton.testing.do_bench up at call time), and
a stub JIT with Triton 3.6's compile listener and launch hooks (knobs,
_jit.py): @triton.jit kernels that "compile" into a cache directory and
"launch" by charging the stub torch's cost model, @triton.heuristics and
@triton.autotune (runtime.Autotuner: configs, keys, the cache dict, run())."""

__version__ = "0.0-stub"

from . import testing  # noqa: E402,F401
from . import runtime  # noqa: E402,F401
from . import compiler, language  # noqa: E402,F401
from ._jit import Config, JITFunction, KernelInterface, Autotuner, Heuristics, \
    OutOfResources, autotune, cdiv, heuristics, jit, next_power_of_2  # noqa: E402,F401

try:
    from . import knobs  # noqa: E402,F401
except ImportError:      # FAKE_TRITON_KNOBS=none: an older Triton
    pass
