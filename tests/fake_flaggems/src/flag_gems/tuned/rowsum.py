"""rowsum(x): a @libtuner kernel under LibEntry (FlagGems' persistent
sqlite-backed tuner; here the JSON DB of flag_gems.utils.libentry).

Configs BLOCK_N 32 (4 warps, 2 stages), 64 (4, 2, with a pre_hook, as hopper
mm's TMA configs carry one), 128 (8, 3); key ["M", "N"] with strategies
default and align32. The fastest: 32 for N <= 64, 64 for N <= 1024, else 128;
with $FAKE_TUNE_BIAS, 32 -> 64, 64 -> 128, 128 -> 32. PRE_HOOK_CALLS counts
the pre_hook's calls (a replayed BLOCK_N 64 must get it back).
"""

import torch
import triton
import triton.language as tl

import flag_gems
from flag_gems.utils import libentry, libtuner

from ._cost import biased, penalty

PRE_HOOK_CALLS = []


def block_n_64_pre_hook(nargs):
    PRE_HOOK_CALLS.append(nargs.get("BLOCK_N"))


CONFIGS = [triton.Config({"BLOCK_N": 32}, num_warps=4, num_stages=2),
           triton.Config({"BLOCK_N": 64}, num_warps=4, num_stages=2,
                         pre_hook=block_n_64_pre_hook),
           triton.Config({"BLOCK_N": 128}, num_warps=8, num_stages=3)]


def ideal_block(n):
    best = 32 if n <= 64 else (64 if n <= 1024 else 128)
    return {32: 64, 64: 128, 128: 32}[best] if biased() else best


@libentry()
@libtuner(configs=CONFIGS, key=["M", "N"], strategy=["default", "align32"])
@triton.jit
def rowsum_kernel(out_ptr, x_ptr, M, N, BLOCK_N: tl.constexpr):
    return torch._stub.tensor_cost(x_ptr) + penalty(BLOCK_N, ideal_block(N))


def rowsum(x):
    n = x.shape[-1]
    m = x.numel() // n if n else 0
    out = torch.empty(m, dtype=x.dtype, device=x.device)
    with flag_gems.use_gems():
        rowsum_kernel[(m,)](out, x, m, n)
    return out
