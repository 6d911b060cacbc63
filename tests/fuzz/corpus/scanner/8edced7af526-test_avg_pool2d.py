import pytest
import torch

from . import base, consts, utils


class AvgPool2dBenchmark(base.GenericBenchmark):
    # Like upstream: the shapes are a local list, inputs come from input_fn.
    def get_input_iter(self, dtype):
        shapes_4d = [
            (4, 3, 224, 224),
            (16, 64, 56, 56),
            (128, 512, 7, 7),
        ]
        for shape in shapes_4d:
            yield from self.input_fn(shape, dtype, self.device)


def avg_pool2d_input_fn(shape, dtype, device):
    inp = utils.generate_tensor_input(shape, dtype, device)
    yield inp, {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": False,
                "count_include_pad": True, "divisor_override": None}


@pytest.mark.avg_pool2d
def test_avg_pool2d():
    bench = AvgPool2dBenchmark(
        input_fn=avg_pool2d_input_fn,
        op_name="avg_pool2d",
        torch_op=torch.nn.functional.avg_pool2d,
        dtypes=consts.FLOAT_DTYPES,
    )
    bench.run()
