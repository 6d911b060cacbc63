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
test_cutlass_scaled_mm.py (random samples of a parameter grid),
test_flash_mla_sparse_fwd.py and test_flash_mla_with_kvcache.py (lists of
TestParam cases), test_amp_update_scale_.py (non-shape parameters: no
builder). test_flash_mla.py goes through input_fn (its shape's first number
is the sequence length) and needs no builder.

The flash_mla and cutlass builders take only the numbers from the shape
file: the inputs are made by the benchmark module's own code (its TestParam
and make_input*, its to_int8/to_fp8 and scale shapes), so a FlagGems change
to how inputs are built reaches zlb's rows as it reaches upstream's.
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


def _module_of(bench):
    return sys.modules.get(type(bench).__module__)


def _need(module, names, what):
    missing = [n for n in names if not hasattr(module, n)]
    if module is None or missing:
        raise ValueError("%s: the benchmark module lacks %s (FlagGems changed it; the "
                         "builder needs updating)" % (what, ", ".join(missing) or "itself"))


# --- cutlass_scaled_mm ----------------------------------------------------------------

# The extended "dtype" of CutlassScaledMMBenchmark: which scales a and b get.
_SCALE_CATEGORIES = {
    "scalar_only": ("scalar", "scalar"),
    "vector_only": ("vector", "vector"),
    "scalar_and_vector": ("scalar", "vector"),
    "block": ("matrix", "matrix"),
}


@register("CutlassScaledMMBenchmark",
          "(M, N, K[, use_bias[, fp8]]): a is (M, K), b is (K, N) column-major, c is "
          "(M, N); use_bias 0/1 (default 0); fp8 0: int8 inputs, float16 out (default), "
          "1: float8_e4m3fn inputs, bfloat16 out. The 'dtype' (scalar_only, vector_only, "
          "scalar_and_vector, block) picks the scales, as upstream; block needs M % 4 == 0 "
          "and no bias")
def _cutlass_scaled_mm(bench, shape, dtype):
    import torch

    what = "CutlassScaledMMBenchmark"
    m, n, k = _ints(shape, 3, what)
    use_bias = bool(shape[3]) if len(shape) > 3 else False
    fp8 = bool(shape[4]) if len(shape) > 4 else False
    cats = _SCALE_CATEGORIES.get(str(dtype))
    if cats is None:
        raise ValueError("%s: unknown scale kind %r (one of %s)"
                         % (what, dtype, ", ".join(_SCALE_CATEGORIES)))
    if cats[0] == "matrix" and (use_bias or m % 4):
        raise ValueError("%s: block scales need M %% 4 == 0 and no bias, got M=%d bias=%d"
                         % (what, m, use_bias))
    mod = _module_of(bench)
    _need(mod, ("to_int8", "to_fp8"), what)
    kit = getattr(bench, "kit", None)
    if kit is None or not hasattr(kit, "get_scale_shape"):
        raise ValueError("%s: the benchmark has no kit.get_scale_shape (FlagGems changed it)"
                         % what)
    dev = getattr(bench, "device", None) or "cuda"
    out_dtype = torch.bfloat16 if fp8 else torch.float16
    conv = mod.to_fp8 if fp8 else mod.to_int8
    a = conv(torch.randn((m, k), device=dev))
    b = conv(torch.randn((k, n), device=dev).t().contiguous().t() * (1 if fp8 else 5))
    scale_a = torch.randn(kit.get_scale_shape(m, n, k, cats[0]), device=dev,
                          dtype=torch.float32).contiguous()
    scale_b = torch.randn(kit.get_scale_shape(m, n, k, cats[1], False), device=dev,
                          dtype=torch.float32).t().contiguous().t()
    bias = torch.randn((n,), device=dev, dtype=out_dtype) if use_bias else None
    c = torch.empty((m, n), device=dev, dtype=out_dtype)
    yield (c, a, b, scale_a, scale_b, bias)


# --- flash_mla --------------------------------------------------------------------------

@register("FlashmlaSparseBenchmark",
          "(s_q, s_kv, topk[, h_q[, d_qk[, attn_sink]]]): one sparse MLA prefill case, "
          "h_q 128, d_qk 512 and attn_sink 1 by default (upstream's cases use d_qk 512 or "
          "576); built by the module's TestParam and make_input_flashmla")
def _flash_mla_sparse(bench, shape, dtype):
    what = "FlashmlaSparseBenchmark"
    s_q, s_kv, topk = _ints(shape, 3, what)
    h_q = int(shape[3]) if len(shape) > 3 else 128
    d_qk = int(shape[4]) if len(shape) > 4 else 512
    sink = bool(shape[5]) if len(shape) > 5 else True
    mod = _module_of(bench)
    _need(mod, ("TestParam",), what)
    param = mod.TestParam(s_q, s_kv, topk, h_q=h_q, d_qk=d_qk, have_attn_sink=sink)
    yield from type(bench).make_input_flashmla(param)


@register("FlashMLAWithKVCacheBenchmark",
          "(batch, topk, seqlen[, h_q[, d_qk]]): topk > 0 is a sparse FP8 decode (d_qk 576: "
          "the V32 cache, 512: the MODEL1 cache; attention sink on), topk 0 a dense bf16 "
          "decode over seqlen; h_q 128 and d_qk 576 by default; built by the module's "
          "TestParam and make_input")
def _flash_mla_with_kvcache(bench, shape, dtype):
    what = "FlashMLAWithKVCacheBenchmark"
    batch, topk, seqlen = _ints(shape, 3, what)
    h_q = int(shape[3]) if len(shape) > 3 else 128
    d_qk = int(shape[4]) if len(shape) > 4 else 576
    if topk <= 0 and seqlen <= 0:
        raise ValueError("%s: a dense case needs seqlen > 0 (topk 0), got %r"
                         % (what, tuple(shape)))
    mod = _module_of(bench)
    _need(mod, ("TestParam",), what)
    sparse = topk > 0
    param = mod.TestParam(batch=batch, topk=topk if sparse else 0,
                          seqlen=0 if sparse else seqlen, h_q=h_q, d_qk=d_qk,
                          is_fp8=sparse, have_attn_sink=sparse)
    yield from bench.make_input(param)
