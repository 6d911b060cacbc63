"""Gems operators of the fake that go through stub Triton kernels
(tests/stubs/triton/_jit.py), so that IR capture has compiles, launches and
files to see. Their GPU cost is the stub torch's for the same op, so the
measured latencies do not change.

- softmax (what use_gems() puts in place of torch.softmax): one launch of
  softmax_kernel_inner(output_ptr, input_ptr, M, N, TILE_N, ONE_TILE_PER_CTA)
  per call. N is the last dimension (a 1-D input: M = 1, N = numel),
  TILE_N = min(next_power_of_2(N), 8192), ONE_TILE_PER_CTA = TILE_N >= N,
  num_warps 4 up to TILE_N 1024, 8 up to 4096, else 16; num_stages 1.
  One variant per (dtype, TILE_N, ONE_TILE_PER_CTA, num_warps, M == 1,
  M % 16 == 0, N % 16 == 0).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel_inner(output_ptr, input_ptr, M, N, TILE_N: tl.constexpr,
                         ONE_TILE_PER_CTA: tl.constexpr):
    # The stub JIT runs this body at launch: it returns the launch's base GPU
    # cost in ns (the stub torch's softmax cost).
    return torch._stub.tensor_cost(input_ptr)


def softmax_config(shape):
    """(M, N, TILE_N, ONE_TILE_PER_CTA, num_warps) for an input shape."""
    shape = tuple(shape)
    if len(shape) <= 1:
        m, n = 1, (shape[0] if shape else 1)
    else:
        m, n = 1, shape[-1]
        for d in shape[:-1]:
            m *= d
    tile_n = min(triton.next_power_of_2(n), 8192)
    num_warps = 4 if tile_n <= 1024 else (8 if tile_n <= 4096 else 16)
    return m, n, tile_n, tile_n >= n, num_warps


def softmax(input, dim=None, dtype=None, _stacklevel=3):
    m, n, tile_n, one_tile, num_warps = softmax_config(input.shape)
    out = torch.empty_like(input)
    softmax_kernel_inner[(m, 1, 1)](out, input, m, n, TILE_N=tile_n,
                                    ONE_TILE_PER_CTA=one_tile, num_warps=num_warps,
                                    num_stages=1)
    return torch._derive(input, "softmax", [input], dtype=dtype)
