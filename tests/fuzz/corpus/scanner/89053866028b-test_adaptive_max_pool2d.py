import pytest
import torch

from . import base, consts


class AdaptiveMaxPool2dBenchmark(base.Benchmark):
    # Like upstream: set_shapes ignores the shape file.
    def set_shapes(self, shape_file_path=None):
        self.shapes = [
            (4, 3, 32, 32, 7, 7),
            (8, 64, 56, 56, 7, 7),
        ]
        self.shape_desc = "N, C, H, W, OUT_H, OUT_W"

    def get_input_iter(self, cur_dtype):
        for n, c, h, w, out_h, out_w in self.shapes:
            inp = torch.randn((n, c, h, w), dtype=cur_dtype, device=self.device)
            yield inp, (out_h, out_w)


@pytest.mark.adaptive_max_pool2d
def test_adaptive_max_pool2d():
    bench = AdaptiveMaxPool2dBenchmark(
        op_name="adaptive_max_pool2d",
        torch_op=torch.nn.functional.adaptive_max_pool2d,
        dtypes=consts.FLOAT_DTYPES,
    )
    bench.run()
