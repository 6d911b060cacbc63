"""A fake flaggems_vllm (FlagGems-vllm): no kernels. use_gems() switches the stub torch's cost
model to the gems variants (4/5 of the torch cost), which is all the fake
benchmark suite needs to tell the two sides apart."""

import os

import torch

from . import runtime, utils  # noqa: F401

__version__ = "0.0-fake-vllm"

vendor_name = (os.environ.get("GEMS_VENDOR") or os.environ.get("FLAGGEMS_VENDOR")
               or "nvidia").lower()
device = "cuda"


class use_gems:
    def __init__(self, exclude=None, include=None, record=False, once=False, path=None):
        self.lib = torch.library.Library("aten", "IMPL")
        self.exclude = exclude
        self.include = include
        self._mode = torch._stub.gems()

    def __enter__(self):
        self._mode.__enter__()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
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
