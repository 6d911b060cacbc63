import os
import signal

import pytest
import torch

from . import base

# FAKE_CRASH=1: the process kills itself with SIGSEGV at the first op call.
# FAKE_CRASH=late: at the first op call of the second dtype, so the rows of
# the first dtype are already in results.jsonl. Otherwise the test passes.


def crash_op(x):
    mode = os.environ.get("FAKE_CRASH")
    if mode == "1" or (mode == "late" and x.dtype is torch.float32):
        print("FAKE_CRASH: SIGSEGV now", flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
    return torch.exp(x)


@pytest.mark.crash
def test_crash():
    bench = base.GenericBenchmark2DOnly(
        input_fn=base.unary_input_fn,
        op_name="crash",
        torch_op=crash_op,
        dtypes=[torch.float16, torch.float32],
    )
    bench.run()
