"""triton.knobs of the stub: the hooks of Triton 3.6 that zlbench.ir uses.

- compilation.listener: None or f(*, src, metadata, metadata_group, times,
  cache_hit), called by the stub JIT (triton/_jit.py) once per compiled
  specialization in this process, cache_hit=True when the variant's files
  were already in the cache directory;
- runtime.launch_enter_hook / launch_exit_hook / kernel_load_start_hook /
  kernel_load_end_hook: HookChains (.add(f), .remove(f)), as in 3.6;
- cache.dir: $TRITON_CACHE_DIR, read at each access, else a per-user folder
  under the system temp directory (never ~/.triton).

Older Tritons are simulated with FAKE_TRITON_KNOBS (read at import):
"none": there is no triton.knobs at all (importing it raises ImportError);
"nolistener": knobs exist, compilation has no listener attribute.
"""

import os
import tempfile
from dataclasses import dataclass

_MODE = os.environ.get("FAKE_TRITON_KNOBS", "")
if _MODE == "none":
    raise ImportError("FAKE_TRITON_KNOBS=none: this stub Triton predates triton.knobs")


@dataclass(frozen=True)
class CompileTimes:
    """Microseconds, as in Triton 3.6."""
    ir_initialization: int
    lowering_stages: list
    store_results: int

    @property
    def total_lowering(self):
        return sum(s[1] for s in self.lowering_stages)

    @property
    def total(self):
        return self.ir_initialization + self.total_lowering + self.store_results


class HookChain:
    """Hooks of one kind called in order (reversed=True: last added first)."""

    def __init__(self, reversed=False):
        self.calls = []
        self.reversed = reversed

    def add(self, func):
        if func not in self.calls:
            self.calls.append(func)

    def remove(self, func):
        if func in self.calls:
            self.calls.remove(func)

    def __call__(self, *args, **kwargs):
        for call in (reversed(self.calls) if self.reversed else list(self.calls)):
            call(*args, **kwargs)


class compilation_knobs:
    always_compile = False

    def __init__(self):
        if _MODE != "nolistener":
            self.listener = None


class runtime_knobs:
    def __init__(self):
        self.launch_enter_hook = HookChain()
        self.launch_exit_hook = HookChain(reversed=True)
        self.kernel_load_start_hook = HookChain()
        self.kernel_load_end_hook = HookChain(reversed=True)
        self.jit_cache_hook = None
        self.jit_post_compile_hook = None


def _default_cache_dir():
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return os.path.join(tempfile.gettempdir(), "zlb-stub-triton-%d" % uid, "cache")


class cache_knobs:
    @property
    def dir(self):
        return os.environ.get("TRITON_CACHE_DIR") or _default_cache_dir()


compilation = compilation_knobs()
runtime = runtime_knobs()
cache = cache_knobs()
