"""Input builders for FlagGems benchmark classes whose get_input_iter both
hard-codes its shapes and builds inputs by hand (not through self.input_fn),
so that the generic replacement (iterate the file's shapes through input_fn)
would be wrong.

    REGISTRY = {class name: Builder(layout, build)}

build(bench, shape, dtype) yields the same input tuples the class's own
get_input_iter yields, for ONE shape tuple taken from the shape file; layout
says what that tuple holds. The shapes plugin uses a builder only when the
shape file has a key for the benchmark (op_name, or a class name along the
class chain up to the class that hard-codes); otherwise upstream's own inputs
are used.

Found by scanning flagos-ai/FlagGems' benchmark/ for get_input_iter overrides
that read neither self.shapes nor self.input_fn (nor super()). Among them:
test_upsample_bilinear2d_aa_backward.py, test_upsample_bicubic2d_aa.py
(a list of configs in __init__), test_linalg_lu_factor.py (a module list),
test_cutlass_scaled_mm.py, test_flash_mla_*.py, test_amp_update_scale_.py
(random or non-shape parameters: no builder).
"""

import sys


class Builder:
    def __init__(self, cls_name, layout, build):
        self.cls_name = cls_name
        self.layout = layout
        self.build = build


REGISTRY = {}


def register(cls_name, layout):
    def deco(fn):
        REGISTRY[cls_name] = Builder(cls_name, layout, fn)
        return fn
    return deco


def get(cls_name):
    return REGISTRY.get(cls_name)


def _ints(shape, n, what):
    if len(shape) < n:
        raise ValueError("%s needs a shape of at least %d numbers (%s), got %r"
                         % (what, n, REGISTRY[what].layout, tuple(shape)))
    return [int(x) for x in shape[:n]]


def _aa_backward(bench, shape, dtype, what):
    import torch

    n, c, h_in, w_in, h_out, w_out = _ints(shape, 6, what)
    align_corners = bool(shape[6]) if len(shape) > 6 else False
    grad = torch.randn([n, c, h_out, w_out], device=bench.device, dtype=dtype)
    yield grad, [h_out, w_out], [n, c, h_in, w_in], align_corners, None, None


_AA_LAYOUT = ("(N, C, H_in, W_in, H_out, W_out[, align_corners]): grad_output is "
              "(N, C, H_out, W_out), input size (N, C, H_in, W_in); align_corners "
              "defaults to False; scales are None")


@register("UpsampleBilinear2dAaBackwardBenchmark", _AA_LAYOUT)
def _upsample_bilinear2d_aa_backward(bench, shape, dtype):
    return _aa_backward(bench, shape, dtype, "UpsampleBilinear2dAaBackwardBenchmark")


@register("UpsampleBicubic2dAaBackwardBenchmark", _AA_LAYOUT)
def _upsample_bicubic2d_aa_backward(bench, shape, dtype):
    return _aa_backward(bench, shape, dtype, "UpsampleBicubic2dAaBackwardBenchmark")


@register("LinalgLuFactorBenchmark",
          "(*batch, M, N): the input matrix shape (at least 2 numbers); each shape "
          "runs once per pivot value the test module uses (_PIVOT_VALUES, else True)")
def _linalg_lu_factor(bench, shape, dtype):
    import torch

    dims = tuple(int(x) for x in shape)
    if len(dims) < 2:
        raise ValueError("LinalgLuFactorBenchmark needs (*batch, M, N), got %r" % (dims,))
    module = sys.modules.get(type(bench).__module__)
    pivots = getattr(module, "_PIVOT_VALUES", None) or [True]
    for pivot in pivots:
        inp = torch.randn(dims, dtype=dtype, device=bench.device)
        yield inp, {"pivot": pivot}
