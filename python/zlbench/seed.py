"""zlbench.seed: seeds random, numpy (if importable), torch and torch.cuda
with ZLB_SEED (default 0) right before each test's call phase.

FlagGems builds a benchmark's inputs lazily inside Benchmark.run(), so seeding
at the start of the call makes them byte-identical across runs.
"""

import importlib.util
import random

import pytest

from . import _env, _io

NAME = "zlbench.seed"


def pytest_configure(config):
    if not _io.require(NAME):
        return
    try:
        seed = _env.seed()
    except _env.EnvError as e:
        raise pytest.UsageError("%s: %s" % (NAME, e))
    has_numpy = importlib.util.find_spec("numpy") is not None
    _io.plugin(NAME, "ready", "seed=%d before each test's call: random, %storch, "
               "torch.cuda" % (seed, "numpy, " if has_numpy else "(no numpy) "))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    if _io.active(NAME):
        seed_all(_env.seed())


def seed_all(seed):
    """Seed every generator there is; returns the names of those seeded."""
    done = ["random"]
    random.seed(seed)
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is not None:
        numpy.random.seed(seed % (2 ** 32))
        done.append("numpy")
    try:
        import torch
    except ImportError:
        return done
    torch.manual_seed(seed)
    done.append("torch")
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and cuda.is_available():
        cuda.manual_seed_all(seed)
        done.append("torch.cuda")
    return done
