import pytest

from . import base


@pytest.mark.skip(reason="No support to non-boolean outputs: issue #2687")
@pytest.mark.isneginf_out
def test_isneginf_out():
    base.GenericBenchmark(op_name="isneginf_out").run()


@pytest.mark.skip
def test_bare_skip():
    base.GenericBenchmark(op_name="bare_skip").run()


# The mark's name merely starts with "skip": not a skip mark.
@pytest.mark.skip_layer_norm
@pytest.mark.skipif(False, reason="never")
def test_skip_layernorm():
    base.GenericBenchmark(op_name="skip_layernorm").run()


# @pytest.mark.skip(reason="commented out: does not count")
def test_abs():
    base.GenericBenchmark(op_name="abs").run()
