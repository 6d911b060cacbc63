"""A stand-in for triton: testing.do_bench (the "original" timer the
zlbench timing plugin replaces) and runtime.driver.active.get_benchmarker(),
which, like Triton's, looks triton.testing.do_bench up at call time."""

__version__ = "0.0-stub"

from . import testing  # noqa: E402,F401
from . import runtime  # noqa: E402,F401
