"""zlbench.shapes: the shape file wins over hard-coded shapes, with upstream's
lookup chain (op_name -> class names -> upstream behaviour)."""

import sys
import textwrap

import pytest

from conftest import events

from zlbench import _bespoke, shapes


@pytest.fixture
def shape_file(tmp_path, monkeypatch, run_dir, fake_bench):
    """write(yaml text) -> path, set as ZLB_SHAPE_FILE and Config.shape_file."""
    from benchmark import conftest as bconf

    def write(text):
        p = tmp_path / ("shapes%d.yaml" % len(list(tmp_path.glob("shapes*.yaml"))))
        p.write_text(textwrap.dedent(text))
        monkeypatch.setenv("ZLB_SHAPE_FILE", str(p))
        monkeypatch.setattr(bconf.Config, "shape_file", str(p))
        return p

    shapes.install(fake_bench.Benchmark)
    return write


def dims_of(bench, dtype):
    """The shape of the first tensor of each input the benchmark yields."""
    import torch

    out = []
    for inp in bench.get_input_iter(dtype):
        t = next(x for x in inp if isinstance(x, torch.Tensor))
        out.append(tuple(t.shape))
    return out


def injected(run_dir):
    return [(e["cls"], e["via"], e["key"], e["count"])
            for e in events(run_dir, "SHAPES_INJECTED")]


# --- plain classes: upstream's chain, untouched ------------------------------------

def test_plain_class_is_left_to_upstream(fake_bench, shape_file, run_dir, stub_torch):
    shape_file("""
        softmax: {shapes: [[8, 8]]}
        UnaryReductionBenchmark: {shapes: [[16, 16]]}
    """)
    b = fake_bench.UnaryReductionBenchmark(op_name="softmax", torch_op=None)
    b.init_user_config()
    assert b.shapes == [(8, 8)]                      # op key beats class key
    b2 = fake_bench.UnaryReductionBenchmark(op_name="other", torch_op=None)
    b2.init_user_config()
    assert b2.shapes == [(16, 16)]                   # class key when no op key
    assert shapes.process(fake_bench.UnaryReductionBenchmark) == 0
    assert "get_input_iter" not in fake_bench.UnaryReductionBenchmark.get_input_iter.__dict__
    assert not getattr(fake_bench.UnaryReductionBenchmark.get_input_iter, "_zlb_wrapped",
                       False)
    assert injected(run_dir) == []


# --- (a) set_shapes overridden with a hard-coded list ----------------------------------

def _adaptive():
    from benchmark.test_adaptive_max_pool2d import AdaptiveMaxPool2dBenchmark

    shapes.install_all()
    return AdaptiveMaxPool2dBenchmark


HARD_A = [(4, 3, 32, 32, 7, 7), (8, 64, 56, 56, 7, 7)]


def test_set_shapes_override_takes_the_op_key(fake_bench, shape_file, run_dir):
    cls = _adaptive()
    shape_file("""
        adaptive_max_pool2d: {shapes: [[1, 2, 16, 16, 4, 4], [2, 2, 8, 8, 2, 2]],
                              shape_desc: "N, C, H, W, OH, OW"}
        AdaptiveMaxPool2dBenchmark: {shapes: [[9, 9, 9, 9, 3, 3]]}
    """)
    b = cls(op_name="adaptive_max_pool2d", torch_op=None)
    b.init_user_config()
    assert b.shapes == [(1, 2, 16, 16, 4, 4), (2, 2, 8, 8, 2, 2)]
    assert b.shape_desc == "N, C, H, W, OH, OW"
    assert injected(run_dir) == [("AdaptiveMaxPool2dBenchmark", "set_shapes",
                                  "adaptive_max_pool2d", 2)]


def test_set_shapes_override_takes_its_class_key(fake_bench, shape_file, run_dir):
    cls = _adaptive()
    shape_file("""
        AdaptiveMaxPool2dBenchmark: {shapes: [[9, 9, 9, 9, 3, 3]]}
    """)
    b = cls(op_name="adaptive_max_pool2d", torch_op=None)
    b.init_user_config()
    assert b.shapes == [(9, 9, 9, 9, 3, 3)]
    assert injected(run_dir) == [("AdaptiveMaxPool2dBenchmark", "set_shapes",
                                  "AdaptiveMaxPool2dBenchmark", 1)]


def test_set_shapes_override_without_key_keeps_upstream(fake_bench, shape_file, run_dir):
    cls = _adaptive()
    # Keys of the classes above the hard-coding one describe other layouts.
    shape_file("""
        Benchmark: {shapes: [[64, 64]]}
        softmax: {shapes: [[8, 8]]}
    """)
    b = cls(op_name="adaptive_max_pool2d", torch_op=None)
    b.init_user_config()
    assert b.shapes == HARD_A
    assert injected(run_dir) == [("AdaptiveMaxPool2dBenchmark", "set_shapes", None, 0)]


def test_set_shapes_override_that_calls_the_base_is_left_alone(fake_bench, shape_file,
                                                              run_dir):
    class FilteringBenchmark(fake_bench.GenericBenchmark):
        def set_shapes(self, shape_file_path=None):
            super().set_shapes(shape_file_path)
            self.shapes = [s for s in self.shapes if s[0] < 100]

    shape_file("""
        filtering: {shapes: [[8, 8], [128, 8]]}
    """)
    b = FilteringBenchmark(op_name="filtering", torch_op=None, input_fn=None)
    b.init_user_config()
    assert b.shapes == [(8, 8)]                      # the filter still applies
    assert injected(run_dir) == []


def test_vllm_style_moe_override(fake_bench, shape_file, run_dir):
    class FusedMarlinMoEBenchmark(fake_bench.Benchmark):
        def set_shapes(self, shape_file_path=None):
            self.shapes = [(1, 8, 4096, 14336, 2)]

    shape_file("""
        fused_marlin_moe: {shapes: [[16, 8, 1024, 2048, 2]]}
    """)
    b = FusedMarlinMoEBenchmark(op_name="fused_marlin_moe", torch_op=None)
    b.init_user_config()                             # class made after install:
    assert b.shapes == [(16, 8, 1024, 2048, 2)]      # hooked by __init_subclass__


# --- (b) get_input_iter hard-codes shapes, builds through input_fn ---------------------------

def _avg_pool():
    from benchmark.test_avg_pool2d import AvgPool2dBenchmark, avg_pool2d_input_fn

    shapes.install_all()
    return AvgPool2dBenchmark, avg_pool2d_input_fn


UPSTREAM_POOL = [(4, 3, 224, 224), (16, 64, 56, 56), (128, 512, 7, 7)]


def test_iter_override_takes_the_op_key(fake_bench, shape_file, run_dir, stub_torch):
    cls, fn = _avg_pool()
    shape_file("""
        avg_pool2d: {shapes: [[2, 3, 32, 32], [1, 1, 8, 8]]}
        AvgPool2dBenchmark: {shapes: [[5, 5, 5, 5]]}
    """)
    b = cls(op_name="avg_pool2d", torch_op=None, input_fn=fn)
    b.init_user_config()
    assert dims_of(b, stub_torch.float16) == [(2, 3, 32, 32), (1, 1, 8, 8)]
    assert dims_of(b, stub_torch.float32) == [(2, 3, 32, 32), (1, 1, 8, 8)]
    assert injected(run_dir) == [("AvgPool2dBenchmark", "get_input_iter", "avg_pool2d", 2)]


def test_iter_override_takes_its_class_key_not_a_base_key(fake_bench, shape_file, run_dir,
                                                         stub_torch):
    cls, fn = _avg_pool()
    shape_file("""
        AvgPool2dBenchmark: {shapes: [[5, 5, 5, 5]]}
        GenericBenchmark: {shapes: [[64, 64]]}
    """)
    b = cls(op_name="avg_pool2d", torch_op=None, input_fn=fn)
    b.init_user_config()
    assert dims_of(b, stub_torch.float16) == [(5, 5, 5, 5)]
    shape_file("""
        GenericBenchmark: {shapes: [[64, 64]]}
        Benchmark: {shapes: [[64, 64]]}
    """)
    b = cls(op_name="avg_pool2d", torch_op=None, input_fn=fn)
    b.init_user_config()
    assert dims_of(b, stub_torch.float16) == UPSTREAM_POOL
    assert injected(run_dir)[-1] == ("AvgPool2dBenchmark", "get_input_iter", None, 0)


def test_without_a_shape_file_nothing_changes(fake_bench, shape_file, run_dir, stub_torch,
                                             monkeypatch):
    cls, fn = _avg_pool()
    shape_file("avg_pool2d: {shapes: [[2, 3, 32, 32]]}\n")
    monkeypatch.delenv("ZLB_SHAPE_FILE")
    b = cls(op_name="avg_pool2d", torch_op=None, input_fn=fn)
    b.init_user_config()
    assert dims_of(b, stub_torch.float16) == UPSTREAM_POOL
    assert injected(run_dir) == []


def test_iter_override_that_calls_super_is_not_hard_coding(fake_bench, shape_file,
                                                           stub_torch):
    class VarDimBenchmark(fake_bench.UnaryReductionBenchmark):
        def get_input_iter(self, cur_dtype):
            for args in super().get_input_iter(cur_dtype):
                yield args[0], 0

    assert not getattr(VarDimBenchmark.get_input_iter, "_zlb_wrapped", False)
    assert shapes.hard_codes_iter(VarDimBenchmark.__dict__["get_input_iter"]) is False

    class HardBenchmark(fake_bench.GenericBenchmark):
        def get_input_iter(self, dtype):
            for shape in [(1, 2)]:
                yield from self.input_fn(shape, dtype, self.device)

    assert shapes.hard_codes_iter(HardBenchmark.__dict__["get_input_iter"].__wrapped__)
    assert HardBenchmark.get_input_iter._zlb_wrapped


# --- (c) bespoke builders ------------------------------------------------------------

def test_bespoke_upsample_builder(fake_bench, shape_file, run_dir, stub_torch):
    from benchmark.test_upsample_bilinear2d_aa_backward import \
        UpsampleBilinear2dAaBackwardBenchmark as cls

    shapes.install_all()
    shape_file("""
        upsample_bilinear2d_aa_backward:
          shapes: [[2, 3, 16, 16, 8, 8], [1, 1, 4, 4, 8, 8, true]]
    """)
    b = cls(op_name="upsample_bilinear2d_aa_backward", torch_op=None)
    b.init_user_config()
    got = list(b.get_input_iter(stub_torch.float16))
    assert [(tuple(g[0].shape), g[1:]) for g in got] == [
        ((2, 3, 8, 8), ([8, 8], [2, 3, 16, 16], False, None, None)),
        ((1, 1, 8, 8), ([8, 8], [1, 1, 4, 4], True, None, None)),
    ]
    assert got[0][0].dtype is stub_torch.float16
    assert injected(run_dir) == [("UpsampleBilinear2dAaBackwardBenchmark", "bespoke",
                                  "upsample_bilinear2d_aa_backward", 2)]
    # No key: the class's own configs.
    shape_file("softmax: {shapes: [[8, 8]]}\n")
    b = cls(op_name="upsample_bilinear2d_aa_backward", torch_op=None)
    b.init_user_config()
    assert [tuple(g[0].shape) for g in b.get_input_iter(stub_torch.float16)] == \
        [(4, 16, 1, 1), (1, 1, 128, 128)]


def test_bespoke_lu_factor_builder_uses_the_modules_pivots(fake_bench, shape_file,
                                                           run_dir, stub_torch):
    mod = type(sys)("fake_lu_module")
    mod._PIVOT_VALUES = [True, False]
    sys.modules["fake_lu_module"] = mod
    ns = {"base": fake_bench, "torch": stub_torch, "__name__": "fake_lu_module"}
    exec(textwrap.dedent("""
        LINALG_LU_FACTOR_SHAPE = [[16, 16], [32, 32]]
        class LinalgLuFactorBenchmark(base.Benchmark):
            def get_input_iter(self, dtype):
                for inp_shape in LINALG_LU_FACTOR_SHAPE:
                    yield torch.randn(tuple(inp_shape), dtype=dtype, device=self.device), {}
    """), ns)
    cls = ns["LinalgLuFactorBenchmark"]
    shape_file("linalg_lu_factor: {shapes: [[4, 64, 64]]}\n")
    b = cls(op_name="linalg_lu_factor", torch_op=None)
    b.init_user_config()
    got = list(b.get_input_iter(stub_torch.float32))
    assert [(tuple(t.shape), kw) for t, kw in got] == [
        ((4, 64, 64), {"pivot": True}), ((4, 64, 64), {"pivot": False})]
    assert injected(run_dir)[-1] == ("LinalgLuFactorBenchmark", "bespoke",
                                     "linalg_lu_factor", 1)


def test_hard_coding_by_hand_without_a_builder_is_reported(fake_bench, shape_file,
                                                           run_dir, stub_torch):
    class HandMadeBenchmark(fake_bench.Benchmark):
        def get_input_iter(self, dtype):
            for n in (3, 5):
                yield torch_randn(n),

    def torch_randn(n):
        return stub_torch.randn(n, device="cuda")

    shape_file("hand_made: {shapes: [[7]]}\n")
    b = HandMadeBenchmark(op_name="hand_made", torch_op=None)
    b.init_user_config()
    assert dims_of(b, stub_torch.float16) == [(3,), (5,)]
    (e,) = events(run_dir, "SHAPES_INJECTED")
    assert e["key"] is None and e["via"] is None
    assert "no bespoke builder" in e["detail"]
    # Said where the user looks (the run's summary lists WARNING events), once.
    (w,) = events(run_dir, "WARNING")
    assert "names HandMadeBenchmark (key hand_made)" in w["message"]
    assert "its own hard-coded shapes are measured" in w["message"]
    b = HandMadeBenchmark(op_name="hand_made", torch_op=None)
    b.init_user_config()
    list(b.get_input_iter(stub_torch.float16))
    assert len(events(run_dir, "WARNING")) == 1


def _module(name, source, fake_bench, stub_torch):
    """Execute source as benchmark module `name` (its classes' __module__)."""
    mod = type(sys)(name)
    mod.__dict__.update({"base": fake_bench, "torch": stub_torch})
    sys.modules[name] = mod
    exec(textwrap.dedent(source), mod.__dict__)
    return mod


CUTLASS = """
    from math import ceil

    converted = []

    def to_int8(t):
        converted.append("int8")
        return t.to(dtype=torch.int8)

    def to_fp8(t):
        converted.append("fp8")
        return t.to(dtype=torch.float8_e4m3fn)

    class CutlassScaledMMPerfKit:
        @staticmethod
        def get_scale_shape(M, N, K, category, is_a_scale=True):
            if category == "scalar":
                return (1,)
            if category == "vector":
                return (M,) if is_a_scale else (N,)
            return (M, ceil(K / 128)) if is_a_scale else (ceil(K / 128), ceil(N / 128))

    class CutlassScaledMMBenchmark(base.Benchmark):
        def __init__(self):
            super().__init__("cutlass_scaled_mm", None,
                             ["scalar_only", "vector_only", "scalar_and_vector", "block"])
            self.kit = CutlassScaledMMPerfKit

        def set_shapes(self, shape_file_path=None):
            self.shapes = []

        def get_input_iter(self, dtype):
            for p in getattr(self.kit, "%s_params" % dtype, []):
                yield p
"""


def test_bespoke_cutlass_scaled_mm_builder(fake_bench, shape_file, run_dir, stub_torch):
    mod = _module("fake_cutlass_module", CUTLASS, fake_bench, stub_torch)
    shape_file("cutlass_scaled_mm: {shapes: [[16, 256, 512], [32, 384, 128, 1, 1]]}\n")
    b = mod.CutlassScaledMMBenchmark()
    b.init_user_config()
    got = list(b.get_input_iter("vector_only"))
    # (c, a, b, scale_a, scale_b, bias): int8 -> float16 by default, fp8 -> bfloat16.
    assert [(tuple(c.shape), tuple(a.shape), tuple(w.shape), tuple(sa.shape), tuple(sb.shape),
             bias is not None) for c, a, w, sa, sb, bias in got] == [
        ((16, 256), (16, 512), (512, 256), (16,), (256,), False),
        ((32, 384), (32, 128), (128, 384), (32,), (384,), True)]
    assert [g[0].dtype for g in got] == [stub_torch.float16, stub_torch.bfloat16]
    assert [g[1].dtype for g in got] == [stub_torch.int8, stub_torch.float8_e4m3fn]
    assert mod.converted == ["int8", "int8", "fp8", "fp8"]    # the module's own converters
    # block scales: the matrix shapes of upstream's kit; its constraints enforced.
    (c, a, w, sa, sb, bias) = next(b.get_input_iter("block"))
    assert (tuple(sa.shape), tuple(sb.shape)) == ((16, 4), (4, 2))
    shape_file("cutlass_scaled_mm: {shapes: [[18, 256, 512]]}\n")
    b = mod.CutlassScaledMMBenchmark()
    b.init_user_config()
    with pytest.raises(ValueError, match="block scales need M % 4 == 0"):
        list(b.get_input_iter("block"))
    assert ("CutlassScaledMMBenchmark", "bespoke", "cutlass_scaled_mm", 2) in injected(run_dir)


FLASH_MLA = """
    import dataclasses

    made = []

    @dataclasses.dataclass
    class TestParam:
        __test__ = False
        s_q: int
        s_kv: int
        topk: int
        h_q: int = 128
        h_kv: int = 1
        d_qk: int = 512
        have_attn_sink: bool = False

    class FlashmlaSparseBenchmark(base.Benchmark):
        def __init__(self):
            super().__init__("flash_mla_sparse_fwd", None, [torch.bfloat16])

        def set_shapes(self, shape_file_path=None):
            self.shapes = []

        def get_input_iter(self, dtype):
            for param in [TestParam(4096, 8192, 2048, have_attn_sink=True)]:
                yield from FlashmlaSparseBenchmark.make_input_flashmla(param)

        @staticmethod
        def make_input_flashmla(param):
            made.append(param)
            q = torch.randn((param.s_q, param.h_q, param.d_qk), device="cuda")
            kv = torch.randn((param.s_kv, param.h_kv, param.d_qk), device="cuda")
            yield (q, kv, None, 0.5, 512, None, None)
"""


def test_bespoke_flash_mla_sparse_builder(fake_bench, shape_file, run_dir, stub_torch):
    mod = _module("fake_flash_mla_module", FLASH_MLA, fake_bench, stub_torch)
    shape_file("flash_mla_sparse_fwd: {shapes: [[64, 1024, 128], [32, 512, 64, 64, 576, 0]]}\n")
    b = mod.FlashmlaSparseBenchmark()
    b.init_user_config()
    got = list(b.get_input_iter(stub_torch.bfloat16))
    assert [(tuple(q.shape), tuple(kv.shape)) for q, kv, *_ in got] == [
        ((64, 128, 512), (1024, 1, 512)), ((32, 64, 576), (512, 1, 576))]
    # The module's own TestParam and make_input built them, from the file's numbers.
    assert [(p.s_q, p.s_kv, p.topk, p.h_q, p.d_qk, p.have_attn_sink) for p in mod.made] == [
        (64, 1024, 128, 128, 512, True), (32, 512, 64, 64, 576, False)]
    assert injected(run_dir)[-1] == ("FlashmlaSparseBenchmark", "bespoke",
                                     "flash_mla_sparse_fwd", 2)


def test_flash_mla_with_kvcache_builder_maps_the_layout(stub_torch):
    made = []

    class TestParam:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    class Bench:
        device = "cuda"

        def make_input(self, param):
            made.append(param.__dict__)
            yield ("input",)

    mod = type(sys)("fake_kvcache_module")
    mod.TestParam = TestParam
    sys.modules["fake_kvcache_module"] = mod
    Bench.__module__ = "fake_kvcache_module"
    build = _bespoke.get("FlashMLAWithKVCacheBenchmark").build
    assert list(build(Bench(), (128, 512, 0), stub_torch.bfloat16)) == [("input",)]
    assert list(build(Bench(), (64, 0, 2048, 64, 512), stub_torch.bfloat16)) == [("input",)]
    assert made == [
        {"batch": 128, "topk": 512, "seqlen": 0, "h_q": 128, "d_qk": 576, "is_fp8": True,
         "have_attn_sink": True},
        {"batch": 64, "topk": 0, "seqlen": 2048, "h_q": 64, "d_qk": 512, "is_fp8": False,
         "have_attn_sink": False}]
    with pytest.raises(ValueError, match="a dense case needs seqlen > 0"):
        list(build(Bench(), (8, 0, 0), stub_torch.bfloat16))


def test_every_builder_documents_its_tuple_layout():
    assert len(_bespoke.REGISTRY) >= 6
    for cls in ("CutlassScaledMMBenchmark", "FlashmlaSparseBenchmark",
                "FlashMLAWithKVCacheBenchmark"):
        assert cls in _bespoke.REGISTRY
    for name, b in _bespoke.REGISTRY.items():
        assert name.endswith("Benchmark") and b.layout and "(" in b.layout


def test_bad_shape_file_is_refused_at_configure(tmp_path):
    import subprocess

    from conftest import PYTHON, subprocess_env

    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("softmax: [unclosed\n")
    env = subprocess_env({"ZLB_RUN_DIR": str(tmp_path), "ZLB_SHAPE_FILE": str(bad)})
    r = subprocess.run([PYTHON, "-m", "pytest", "-p", "no:cacheprovider", "-p",
                        "zlbench.results", "-p", "zlbench.shapes", "test_x.py"],
                       cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 4 and "cannot be read" in r.stderr
