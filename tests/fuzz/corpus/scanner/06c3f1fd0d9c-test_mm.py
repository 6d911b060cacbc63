import pytest
import torch

from . import base, consts


def mm_input_fn(b, m, n, k, dtype, device, b_column_major):
    inp1 = torch.randn([m, k], dtype=dtype, device=device)
    if b_column_major:
        inp2 = torch.randn([n, k], dtype=dtype, device=device).t()
    else:
        inp2 = torch.randn([k, n], dtype=dtype, device=device)
    yield inp1, inp2


@pytest.mark.mm
def test_mm():
    bench = base.BlasBenchmark(
        input_fn=mm_input_fn,
        op_name="mm",
        torch_op=torch.Tensor.mm,
        dtypes=consts.FLOAT_DTYPES,
    )
    bench.run()
