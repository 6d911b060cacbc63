"""Autotuned gems operators of the fake, one per tuner kind that autotune
record/replay (zlbench.autotune) meets in FlagGems:

| module | op | stack | key (as the tuner's cache holds it) |
|---|---|---|---|
| scale.py | scale(x) | @libentry() @triton.autotune @triton.heuristics @triton.jit | (N, dtype(out), dtype(x)) |
| rowsum.py | rowsum(x) | @libentry() @libtuner(strategy=[default, align32]) @triton.jit | (M, align32(N), dtype(out), dtype(x)) |
| hooked.py | hooked_copy(x) | bare @triton.autotune whose configs carry a pre_hook | (N, dtype(out), dtype(x)) |

The winner depends on the shape and on $FAKE_TUNE_BIAS (read at each launch):
set to 1 it stands for another compiler build or timing noise that makes live
tuning choose differently, which is what replay must override.
"""

from . import hooked, rowsum, scale  # noqa: F401
