"""scale(x): a plain @triton.autotune kernel under LibEntry, with a
@triton.heuristics in between (the common FlagGems stack).

Configs BLOCK 64 (4 warps, 2 stages), 128 (4, 3), 256 (8, 3); key ["N"].
The fastest: BLOCK 64 for N <= 4096, else 256; with $FAKE_TUNE_BIAS, 128.
"""

import torch
import triton
import triton.language as tl

import flag_gems
from flag_gems.utils import libentry

from ._cost import biased, penalty

CONFIGS = [triton.Config({"BLOCK": 64}, num_warps=4, num_stages=2),
           triton.Config({"BLOCK": 128}, num_warps=4, num_stages=3),
           triton.Config({"BLOCK": 256}, num_warps=8, num_stages=3)]


def ideal_block(n):
    if biased():
        return 128
    return 64 if n <= 4096 else 256


@libentry()
@triton.autotune(configs=CONFIGS, key=["N"])
@triton.heuristics({"EVEN": lambda a: a["N"] % a["BLOCK"] == 0})
@triton.jit
def scale_kernel(out_ptr, x_ptr, N, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    return torch._stub.tensor_cost(x_ptr) + penalty(BLOCK, ideal_block(N))


def scale(x):
    out = torch.empty_like(x)
    n = x.numel()
    with flag_gems.use_gems():
        scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](out, x, n)
    return out
