import pytest
import torch

from . import base, consts


@pytest.mark.skipped
@pytest.mark.skipif(True, reason="fake: skipped on purpose")
def test_skipped():
    bench = base.GenericBenchmark2DOnly(
        input_fn=base.unary_input_fn,
        op_name="skipped",
        torch_op=torch.exp,
        dtypes=consts.FLOAT_DTYPES,
    )
    bench.run()
