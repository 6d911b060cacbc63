import pytest
import torch

from . import base, consts


def sort_input_fn(shape, dtype, device):
    inp = base.generate_tensor_input(shape, dtype, device)
    yield inp, -1


# The stub's torch.sort synchronizes with the host: it cannot be captured in a
# CUDA graph, so graph timing falls back to direct timing for every row.
@pytest.mark.sort
def test_sort():
    bench = base.GenericBenchmark2DOnly(
        input_fn=sort_input_fn,
        op_name="sort",
        torch_op=torch.sort,
        dtypes=consts.FLOAT_DTYPES,
    )
    bench.run()
