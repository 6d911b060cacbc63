"""hooked_copy(x): a bare plain @triton.autotune kernel whose configs carry a
pre_hook. Triton's Autotuner has no way to give a pre_hook back to a config
that was not its own object, so such choices are unrecordable.

Configs BLOCK 32 and 64 (both with the pre_hook), key ["N"]; BLOCK 64 wins.
"""

import torch
import triton
import triton.language as tl

import flag_gems

PRE_HOOK_CALLS = []


def zero_out_pre_hook(nargs):
    PRE_HOOK_CALLS.append(nargs.get("BLOCK"))


CONFIGS = [triton.Config({"BLOCK": 32}, num_warps=4, num_stages=2, pre_hook=zero_out_pre_hook),
           triton.Config({"BLOCK": 64}, num_warps=4, num_stages=3, pre_hook=zero_out_pre_hook)]


@triton.autotune(configs=CONFIGS, key=["N"])
@triton.jit
def hooked_copy_kernel(out_ptr, x_ptr, N, BLOCK: tl.constexpr):
    return torch._stub.tensor_cost(x_ptr) + (0 if BLOCK == 64 else 500)


def hooked_copy(x):
    out = torch.empty_like(x)
    n = x.numel()
    with flag_gems.use_gems():
        hooked_copy_kernel[(triton.cdiv(n, 64),)](out, x, n)
    return out
