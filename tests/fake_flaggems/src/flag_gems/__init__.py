"""A fake flag_gems. use_gems() switches the stub torch's cost model to the
gems variants (4/5 of the torch cost), which is all the fake benchmark suite
needs to tell the two sides apart, and puts the gems softmax (ops.py: a stub
Triton kernel, same cost) in place of torch.softmax while it is entered."""

import os

import torch

from . import ops, runtime, utils  # noqa: F401
from . import tuned  # noqa: F401  (after utils: its kernels use utils.libentry)

__version__ = "0.0-fake"

vendor_name = (os.environ.get("GEMS_VENDOR") or os.environ.get("FLAGGEMS_VENDOR")
               or "nvidia").lower()
device = "cuda"


# torch functions replaced by gems operators while use_gems() is entered.
_OVERRIDES = {"softmax": ops.softmax}
_saved = {}
_depth = 0


class use_gems:
    def __init__(self, exclude=None, include=None, record=False, once=False, path=None):
        self.lib = torch.library.Library("aten", "IMPL")
        self.exclude = exclude
        self.include = include
        self._mode = torch._stub.gems()

    def __enter__(self):
        global _depth
        self._mode.__enter__()
        if _depth == 0:
            for name, fn in _OVERRIDES.items():
                if name not in (self.exclude or ()):
                    _saved[name] = getattr(torch, name)
                    setattr(torch, name, fn)
        _depth += 1
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        global _depth
        _depth -= 1
        if _depth == 0:
            for name, fn in _saved.items():
                setattr(torch, name, fn)
            _saved.clear()
        self._mode.__exit__(exc_type, exc_val, exc_tb)
        self.lib._destroy()
        return False


def enable(lib=None, unused=None, registrar=None, record=False, once=False, path=None):
    pass


def gems_variant(fn):
    """fn run in gems mode: a stand-in for a FlagGems kernel wrapper."""
    def wrapper(*args, **kwargs):
        with torch._stub.gems():
            return fn(*args, **kwargs)

    wrapper.__name__ = "gems_" + getattr(fn, "__name__", "op")
    return wrapper
