"""Gems ops whose kernels autotune inside flag_gems (src/flag_gems/tuned/),
for autotune record/replay (zlbench.autotune):

- tuned_scale: a plain @triton.autotune under LibEntry (key N and dtypes);
- tuned_rowsum: a @libtuner under LibEntry, whose winners persist in the
  fake's config DB under $FLAGGEMS_CACHE_DIR (key M, align32(N), dtypes);
- tuned_hooked: a bare @triton.autotune whose configs carry a pre_hook
  (unrecordable).

$FAKE_TUNE_BIAS=1 makes live tuning choose other configs (see tuned/__init__.py).
"""

import pytest
import torch

from flag_gems.tuned import hooked, rowsum, scale

from . import base, consts


def torch_rowsum(x):
    return torch.sum(x, dim=-1)


@pytest.mark.tuned_scale
def test_tuned_scale():
    bench = base.GenericBenchmark2DOnly(
        input_fn=base.unary_input_fn, op_name="tuned_scale", torch_op=torch.exp,
        gems_op=scale.scale, dtypes=consts.FLOAT_DTYPES)
    bench.run()


@pytest.mark.tuned_rowsum
def test_tuned_rowsum():
    bench = base.GenericBenchmark2DOnly(
        input_fn=base.unary_input_fn, op_name="tuned_rowsum", torch_op=torch_rowsum,
        gems_op=rowsum.rowsum, dtypes=consts.FLOAT_DTYPES)
    bench.run()


@pytest.mark.tuned_hooked
def test_tuned_hooked():
    bench = base.GenericBenchmark2DOnly(
        input_fn=base.unary_input_fn, op_name="tuned_hooked", torch_op=torch.exp,
        gems_op=hooked.hooked_copy, dtypes=consts.FLOAT_DTYPES)
    bench.run()
