import pytest

from . import base

vendor_name = "nvidia"


@pytest.mark.softmax
@pytest.mark.skipif(
    vendor_name == "tsingmicro", reason="Issue #4131: not working"
)
def test_softmax():
    bench = base.UnaryReductionBenchmark(op_name="softmax", torch_op=None)
    bench.run()


@pytest.mark.softmax_backward
def test_softmax_backward():
    bench = base.UnaryReductionBenchmark(
        op_name="softmax",
        torch_op=None,
        is_backward=True,
    )
    bench.run()


def helper_not_a_test():
    pass
