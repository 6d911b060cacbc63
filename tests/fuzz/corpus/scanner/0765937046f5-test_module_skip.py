import pytest

from . import base

pytestmark = pytest.mark.skip(reason="whole module disabled")


def test_disabled():
    base.GenericBenchmark(op_name="disabled").run()
