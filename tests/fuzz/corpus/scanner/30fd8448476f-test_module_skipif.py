import pytest

from . import base

pytestmark = [
    pytest.mark.skipif(
        True,
        reason="module condition",
    ),
    pytest.mark.filterwarnings("ignore"),
]


def test_cond_one():
    base.GenericBenchmark(op_name="cond_one").run()


def test_cond_two():
    base.GenericBenchmark(op_name="cond_two").run()
