import pytest
import torch

from . import base, consts


class UpsampleBilinear2dAaBackwardBenchmark(base.Benchmark):
    # Like upstream: configs in __init__, inputs built by hand.
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._cfgs = [
            (4, 16, 4, 4, 1, 1, False, "tiny 4x down"),
            (1, 1, 64, 64, 128, 128, False, "C=1 2x up"),
        ]

    def get_input_iter(self, dtype):
        for N, C, Hi, Wi, Ho, Wo, ac, _label in self._cfgs:
            grad = torch.randn([N, C, Ho, Wo], device=self.device, dtype=dtype)
            yield grad, [Ho, Wo], [N, C, Hi, Wi], ac, None, None


@pytest.mark.upsample_bilinear2d_aa_backward
def test_upsample_bilinear2d_aa_backward():
    bench = UpsampleBilinear2dAaBackwardBenchmark(
        op_name="upsample_bilinear2d_aa_backward",
        torch_op=torch.ops.aten._upsample_bilinear2d_aa_backward,
        dtypes=consts.FLOAT_DTYPES,
    )
    bench.run()
