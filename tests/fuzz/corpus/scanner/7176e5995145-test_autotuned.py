import pytest
import torch
import triton
import triton.language as tl

import flag_gems

from . import base, consts


@triton.autotune(configs=[triton.Config({"BLOCK": 1}, num_warps=4, num_stages=2),
                          triton.Config({"BLOCK": 2}, num_warps=8, num_stages=3)],
                 key=["N"])
@triton.jit
def autotuned_exp_kernel(out_ptr, x_ptr, N, BLOCK: tl.constexpr):
    # The stub JIT runs this body at launch and charges what it returns (ns):
    # BLOCK=2 costs exactly torch.exp's, BLOCK=1 1 us more, so BLOCK=2 wins.
    return torch._stub.tensor_cost(x_ptr) + (1000 if BLOCK == 1 else 0)


def gems_autotuned_exp(x):
    """A gems op whose kernel autotunes on its first call for a key (N and
    the dtype), as a Triton @autotune kernel does: each config compiles and
    is timed through triton's benchmarker (the quantiles form of do_bench),
    then only the winner launches -- the loser is a sweep loser."""
    out = torch.empty_like(x)
    n = x.numel()
    with flag_gems.use_gems():
        autotuned_exp_kernel[(triton.cdiv(n, 1024),)](out, x, n)
    return out


@pytest.mark.autotuned_exp
def test_autotuned_exp():
    bench = base.GenericBenchmark2DOnly(
        input_fn=base.unary_input_fn,
        op_name="autotuned_exp",
        torch_op=torch.exp,
        gems_op=gems_autotuned_exp,
        dtypes=consts.FLOAT_DTYPES,
    )
    bench.run()
