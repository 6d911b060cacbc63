import pytest

from . import base, consts


def broken_op(x):
    raise RuntimeError("fake: broken_op has no kernel for this input")


@pytest.mark.broken
def test_broken():
    bench = base.GenericBenchmark2DOnly(
        input_fn=base.unary_input_fn,
        op_name="broken",
        torch_op=broken_op,
        dtypes=consts.FLOAT_DTYPES,
    )
    bench.run()
