import pytest
import torch

from . import base


@pytest.mark.only_fp32
def test_only_fp32():
    bench = base.GenericBenchmark2DOnly(
        input_fn=base.unary_input_fn,
        op_name="only_fp32",
        torch_op=torch.exp,
        dtypes=[torch.float32],
    )
    bench.run()
