import os
import time

import pytest
import torch

from . import base, consts


def hang_op(x):
    if os.environ.get("FAKE_HANG") == "1":
        print("FAKE_HANG: started, sleeping forever", flush=True)
        while True:
            time.sleep(3600)
    return torch.exp(x)


@pytest.mark.hang
def test_hang():
    bench = base.GenericBenchmark2DOnly(
        input_fn=base.unary_input_fn,
        op_name="hang",
        torch_op=hang_op,
        dtypes=consts.FLOAT_DTYPES,
    )
    bench.run()
