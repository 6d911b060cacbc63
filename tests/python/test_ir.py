"""zlbench.ir in-process, against the stub Triton's JIT (tests/stubs/triton/
_jit.py): the compile listener's records, launch attribution by the timing
plugin, staging of the launched variants' files, and the inactive cases."""

import hashlib
import os
import subprocess
import sys
import types

import pytest

from conftest import PYDIR, PYTHON, events, need_timer, read_jsonl

from zlbench import _ircap, _irsrc, _state, ir, timing


# --- fixtures and helpers -----------------------------------------------------------

@pytest.fixture
def knobs():
    """The stub's knobs, restored afterwards; in-process JIT caches emptied."""
    import triton

    kn = triton.knobs
    saved = (kn.compilation.listener, list(kn.runtime.launch_enter_hook.calls),
             list(kn.runtime.kernel_load_end_hook.calls), triton.compiler.LAUNCH_DATA_HASH)
    triton._jit.reset()
    yield kn
    ir.finish()
    timing.uninstall()
    _state.original_do_bench = None
    kn.compilation.listener = saved[0]
    kn.runtime.launch_enter_hook.calls[:] = saved[1]
    kn.runtime.kernel_load_end_hook.calls[:] = saved[2]
    triton.compiler.LAUNCH_DATA_HASH = saved[3]
    triton._jit.reset()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "triton-cache"
    monkeypatch.setenv("TRITON_CACHE_DIR", str(d))
    return d


@pytest.fixture
def active(run_dir, cache, knobs, stub_torch, monkeypatch):
    """zlbench.ir configured (ZLB_IR=1), timing's do_bench in place (direct)."""
    monkeypatch.setenv("ZLB_IR", "1")
    ir.pytest_configure(None)
    assert _state.ir is not None
    timing.install()
    _state.nodeid = "benchmark/test_x.py::test_x"
    return run_dir


def compiles(run_dir):
    return read_jsonl(os.path.join(str(run_dir), "ir", "compiles.jsonl"))


def staged(run_dir):
    return read_jsonl(os.path.join(str(run_dir), "ir", "staged.jsonl"))


def variants(kernel):
    """{constexpr/option tuple: CompiledKernel} of a stub JIT kernel."""
    return list(kernel.kernels.values())


def measure(fn, **kw):
    kw.setdefault("return_mode", "median")
    timing.do_bench(fn, warmup=1, rep=1, **kw)
    return _state.pending[-1]["record"]


def kernels():
    """Two stub kernels defined fresh (each test its own JIT objects)."""
    import triton
    import triton.language as tl

    @triton.jit
    def scale_kernel(out_ptr, x_ptr, M, N, BLOCK: tl.constexpr, EVEN: tl.constexpr):
        return None

    @triton.jit
    def bias_kernel(out_ptr, x_ptr, N, BLOCK: tl.constexpr):
        return 1500

    return scale_kernel, bias_kernel


def tuned_kernel():
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=4, num_stages=2),
                              triton.Config({"BLOCK": 64}, num_warps=8, num_stages=3),
                              triton.Config({"BLOCK": 128}, num_warps=8, num_stages=4)],
                     key=["N"])
    @triton.jit
    def tuned_kernel(out_ptr, x_ptr, N, BLOCK: tl.constexpr):
        # BLOCK=64 is the fastest
        return {32: 3000, 64: 1000, 128: 2000}[BLOCK]

    return tuned_kernel


# --- the compile listener ---------------------------------------------------------------

def test_listener_records_every_compile(active, stub_torch, cache):
    scale, _ = kernels()
    x = stub_torch.randn(64, 48, dtype=stub_torch.float16, device="cuda")
    scale[(1,)](x, x, 64, 48, BLOCK=64, EVEN=False, num_warps=2, num_stages=4)
    scale[(1,)](x, x, 1, 48, BLOCK=64, EVEN=False)           # M == 1: another variant
    scale[(1,)](x, x, 64, 48, BLOCK=64, EVEN=False, num_warps=2, num_stages=4)  # cached
    lines = compiles(active)
    assert len(lines) == 2
    v1, v2 = variants(scale)
    a, b = lines
    assert a["schema_version"] == 1 and isinstance(a["ts"], float)
    assert a["hash"] == v1.hash and b["hash"] == v2.hash and a["hash"] != b["hash"]
    assert (a["kernel"], a["name"]) == ("scale_kernel", "scale_kernel")
    assert (a["num_warps"], a["num_stages"], a["num_ctas"]) == (2, 4, 1)
    assert (b["num_warps"], b["num_stages"]) == (4, 3)
    assert a["constexprs"] == {"BLOCK": 64, "EVEN": False}
    assert a["signature"] == {"out_ptr": "*fp16", "x_ptr": "*fp16", "M": "i32", "N": "i32"}
    assert a["specialization"] == {"div16": ["out_ptr", "x_ptr", "M", "N"], "equal1": []}
    # M == 1 is specialised (a "constexpr" in 3.6's layout): equal1, not a
    # constexpr, not in the signature.
    assert b["constexprs"] == {"BLOCK": 64, "EVEN": False}
    assert b["signature"] == {"out_ptr": "*fp16", "x_ptr": "*fp16", "N": "i32"}
    assert b["specialization"] == {"div16": ["out_ptr", "x_ptr", "N"], "equal1": ["M"]}
    assert a["cache_hit"] is False
    assert a["nodeid"] == "benchmark/test_x.py::test_x" and a["during"] == "other"
    assert list(a["stages"]) == ["source", "ttir", "ttgir", "llir", "ptx", "cubin", "json"]
    for stage, path in a["stages"].items():
        assert os.path.isabs(path) and path.startswith(str(cache))
        assert path == v1.metadata_group["scale_kernel." + stage]
        assert os.path.isfile(path)
    # No launch was attributed (no measurement): nothing to stage.
    ir.finish()
    assert staged(active) == []
    assert not os.path.exists(os.path.join(str(active), "ir", "files"))


def test_a_disk_cache_hit_is_recorded_too(active, stub_torch):
    import triton

    scale, _ = kernels()
    x = stub_torch.randn(32, 32, dtype=stub_torch.float32, device="cuda")
    scale[(1,)](x, x, 32, 32, BLOCK=32, EVEN=True)
    triton._jit.reset()                            # a new process, same cache dir
    scale[(1,)](x, x, 32, 32, BLOCK=32, EVEN=True)
    a, b = compiles(active)
    assert (a["cache_hit"], b["cache_hit"]) == (False, True)
    assert a["hash"] == b["hash"] and a["stages"] == b["stages"]
    assert a["signature"]["x_ptr"] == "*fp32"


def test_listener_is_chained_and_restored(run_dir, cache, knobs, stub_torch, monkeypatch):
    seen = []

    def theirs(**kw):
        seen.append((kw["src"].name, kw["metadata"]["hash"], kw["cache_hit"],
                     sorted(kw["metadata_group"]), type(kw["times"]).__name__))

    knobs.compilation.listener = theirs
    monkeypatch.setenv("ZLB_IR", "1")
    ir.pytest_configure(None)
    assert knobs.compilation.listener is not theirs
    scale, _ = kernels()
    x = stub_torch.randn(16, 16, device="cuda")
    scale[(1,)](x, x, 16, 16, BLOCK=16, EVEN=True)
    (v,) = variants(scale)
    assert seen == [("scale_kernel", v.hash, False, sorted(v.metadata_group),
                     "CompileTimes")]
    assert [c["hash"] for c in compiles(run_dir)] == [v.hash]
    ir.pytest_unconfigure(None)
    assert knobs.compilation.listener is theirs
    assert knobs.runtime.kernel_load_end_hook.calls == []
    assert _state.ir is None


def test_a_failing_listener_record_never_breaks_the_compile(active, stub_torch, monkeypatch):
    def boom(*a, **k):
        raise ValueError("describe exploded")

    monkeypatch.setattr(_irsrc, "describe", boom)
    scale, _ = kernels()
    x = stub_torch.randn(16, 16, device="cuda")
    scale[(1,)](x, x, 16, 16, BLOCK=16, EVEN=True)
    scale[(1,)](x, x, 16, 24, BLOCK=16, EVEN=True)
    assert len(variants(scale)) == 2                # both compiled and ran
    (w,) = events(active, "WARNING")               # said once
    assert w["source"] == "zlbench.ir" and "describe exploded" in w["message"]


# --- attribution --------------------------------------------------------------------------

def test_attribution_per_measurement_direct(active, stub_torch):
    import triton

    scale, bias = kernels()
    x = stub_torch.randn(64, 64, dtype=stub_torch.float16, device="cuda")

    def op():
        scale[(4,)](x, x, 64, 64, BLOCK=64, EVEN=True)
        bias[(4,)](x, x, 4096, BLOCK=128)
        scale[(4,)](x, x, 64, 64, BLOCK=64, EVEN=True)

    rec = measure(op)
    (s,), (b,) = variants(scale), variants(bias)
    assert rec["launches"] == [{"hash": s.hash, "kernel": "scale_kernel", "count": 2},
                               {"hash": b.hash, "kernel": "bias_kernel", "count": 1}]
    assert rec["timer"] == "direct"
    # One attributed eager call, then upstream's do_bench called op once more
    # without the hook.
    assert triton._jit.stats["launches"] == 6
    assert triton._jit.stats["hooked_launches"] == 3
    assert triton.knobs.runtime.launch_enter_hook.calls == []
    # Each measurement is attributed on its own.
    rec2 = measure(lambda: bias[(1,)](x, x, 4096, BLOCK=128))
    assert rec2["launches"] == [{"hash": b.hash, "kernel": "bias_kernel", "count": 1}]
    assert [c["during"] for c in compiles(active)] == ["eager", "eager"]
    # A measurement launching no Triton kernel: an empty list.
    assert measure(lambda: stub_torch.exp(x))["launches"] == []


def test_no_launch_hook_during_warmup_and_timing_graph(active, stub_torch, monkeypatch):
    """Graph timing: the kernel is launched by the first eager call, the
    probes, the warm-up and three captures; only the first call had the hook."""
    import ctypes

    import triton
    from conftest import FAKECUDA, FATAL_TEXTS, TIMER_LIB

    need_timer()
    monkeypatch.setenv("ZLB_LIBCUDA", FAKECUDA)
    monkeypatch.setenv("ZLB_TIMER", "graph")
    monkeypatch.setenv("ZLB_TIMER_LIB", TIMER_LIB)
    monkeypatch.setenv("ZLB_CAPTURE_FATAL", FATAL_TEXTS)
    ctypes.CDLL(FAKECUDA).fake_cuda_reset()
    _, bias = kernels()
    x = stub_torch.randn(64, 64, device="cuda")
    rec = measure(lambda: bias[(1,)](x, x, 4096, BLOCK=128))
    (b,) = variants(bias)
    assert rec["timer"] == "graph"
    assert rec["launches"] == [{"hash": b.hash, "kernel": "bias_kernel", "count": 1}]
    assert rec["median_ms"] == pytest.approx(1500 / 1e6, rel=1e-6)
    log = triton._jit.launch_log
    assert len(log) > 20                          # warm-up and captured calls
    assert [hooked for _, _, hooked in log] == [True] + [False] * (len(log) - 1)
    assert triton.knobs.runtime.launch_enter_hook.calls == []


def test_graph_fallback_keeps_the_first_calls_launches(active, stub_torch, monkeypatch):
    """A capture refused after the first eager call: direct timing, same
    launches (not a second attributed call)."""
    import triton
    from conftest import FAKECUDA, TIMER_LIB

    need_timer()
    monkeypatch.setenv("ZLB_LIBCUDA", FAKECUDA)
    monkeypatch.setenv("ZLB_TIMER", "graph")
    monkeypatch.setenv("ZLB_TIMER_LIB", TIMER_LIB)
    _, bias = kernels()
    x = stub_torch.randn(64, 64, device="cuda")

    def op():
        bias[(1,)](x, x, 4096, BLOCK=128)
        x.item()                                    # a host sync: capture-illegal

    rec = measure(op)
    (b,) = variants(bias)
    assert rec["timer"] == "direct" and rec["fallback"]["phase"] == "capture"
    assert rec["launches"] == [{"hash": b.hash, "kernel": "bias_kernel", "count": 1}]
    assert triton._jit.stats["hooked_launches"] == 1


def test_autotune_sweep_is_tune_and_only_the_winner_is_attributed(active, stub_torch):
    import triton

    k = tuned_kernel()
    x = stub_torch.randn(64, 64, dtype=stub_torch.float16, device="cuda")
    rec = measure(lambda: k[(1,)](x, x, 4096))
    by_block = {c["constexprs"]["BLOCK"]: c for c in compiles(active)}
    assert sorted(by_block) == [32, 64, 128]
    assert {c["during"] for c in by_block.values()} == {"tune"}
    winner = by_block[64]
    assert rec["launches"] == [{"hash": winner["hash"], "kernel": "tuned_kernel",
                                "count": 1}]
    # The sweep's timing calls are nested do_bench calls: no measurement of
    # their own, and they ran with the hook off.
    assert k.fn.launches == 3 + 1 + 1     # 3 configs timed, the winner, upstream's call
    assert triton._jit.stats["hooked_launches"] == 1
    ir.finish()
    (line,) = staged(active)
    assert line["hash"] == winner["hash"]
    files = os.listdir(os.path.join(str(active), "ir", "files"))
    assert files == [winner["hash"]]               # the two losers are not copied


def test_a_tuner_bound_to_upstreams_timer_is_not_attributed(active, stub_torch):
    """FlagGems' LibTuner times configs with triton.testing.do_bench_cudagraph
    bound at import, not through our do_bench: its launches inside the first
    eager call are still not counted, its compiles are "tune"."""
    import triton

    scale, _ = kernels()
    upstream_timer = triton.testing.do_bench_cudagraph
    x = stub_torch.randn(64, 64, device="cuda")

    def op():
        for block in (16, 32):
            upstream_timer(lambda b=block: scale[(1,)](x, x, 64, 64, BLOCK=b, EVEN=True),
                           quantiles=(0.5, 0.2, 0.8))
        scale[(1,)](x, x, 64, 64, BLOCK=32, EVEN=True)

    rec = measure(op)
    by_block = {c["constexprs"]["BLOCK"]: c for c in compiles(active)}
    assert {b: c["during"] for b, c in by_block.items()} == {16: "tune", 32: "tune"}
    assert rec["launches"] == [{"hash": by_block[32]["hash"], "kernel": "scale_kernel",
                                "count": 1}]


def test_quantiles_form_outermost_is_tune_and_unattributed(active, stub_torch):
    scale, _ = kernels()
    x = stub_torch.randn(64, 64, device="cuda")
    timing.do_bench(lambda: scale[(1,)](x, x, 64, 64, BLOCK=8, EVEN=True),
                    quantiles=(0.5, 0.2, 0.8))
    assert _state.pending[-1]["record"]["launches"] is None
    assert [c["during"] for c in compiles(active)] == ["tune"]


def test_launch_hash_from_the_hook_data_or_the_kernel_name(active, stub_torch):
    import triton

    scale, bias = kernels()
    x = stub_torch.randn(64, 64, device="cuda")
    triton.compiler.LAUNCH_DATA_HASH = True        # a build that puts it there
    rec = measure(lambda: bias[(1,)](x, x, 4096, BLOCK=128))
    (b,) = variants(bias)
    assert rec["launches"][0]["hash"] == b.hash
    triton.compiler.LAUNCH_DATA_HASH = False
    # Without kernel handles (no kernel_load_end_hook seen), a kernel name that
    # was compiled once stands for its hash; an ambiguous one gives null.
    _state.ir.by_function.clear()
    assert measure(lambda: bias[(1,)](x, x, 4096, BLOCK=128))["launches"][0]["hash"] == b.hash
    scale[(1,)](x, x, 64, 64, BLOCK=8, EVEN=True)
    scale[(1,)](x, x, 64, 64, BLOCK=16, EVEN=True)
    _state.ir.by_function.clear()
    rec = measure(lambda: scale[(1,)](x, x, 64, 64, BLOCK=8, EVEN=True))
    assert rec["launches"] == [{"hash": None, "kernel": "scale_kernel", "count": 1}]


def test_inactive_ir_leaves_timing_records_alone(run_dir, knobs, stub_torch):
    _, bias = kernels()
    x = stub_torch.randn(64, 64, device="cuda")
    rec = measure(lambda: bias[(1,)](x, x, 4096, BLOCK=128))
    assert "launches" not in rec
    import triton

    assert triton._jit.stats["launches"] == 1          # no extra eager call
    assert triton._jit.stats["hooked_launches"] == 0


# --- staging -------------------------------------------------------------------------------

def test_launched_variants_are_copied_byte_identical(active, stub_torch):
    scale, bias = kernels()
    x = stub_torch.randn(64, 64, dtype=stub_torch.bfloat16, device="cuda")
    measure(lambda: scale[(1,)](x, x, 64, 64, BLOCK=64, EVEN=True))
    measure(lambda: bias[(1,)](x, x, 64, BLOCK=64))
    scale[(1,)](x, x, 64, 64, BLOCK=8, EVEN=True)        # compiled, never attributed
    ir.pytest_unconfigure(None)
    lines = staged(active)
    by_hash = {v.hash: v for v in variants(scale) + variants(bias)}
    assert len(by_hash) == 3
    launched = [c["hash"] for c in compiles(active) if c["constexprs"]["BLOCK"] == 64]
    assert [ln["hash"] for ln in lines] == launched and len(launched) == 2
    irdir = os.path.join(str(active), "ir")
    for ln in lines:
        v = by_hash[ln["hash"]]
        assert ln["schema_version"] == 1 and ln["missing"] == {}
        assert (ln["kernel"], ln["name"]) == (v.name, v.name)
        assert sorted(ln["files"]) == sorted(["source", "ttir", "ttgir", "llir", "ptx",
                                              "cubin", "json"])
        for stage, rel in ln["files"].items():
            assert rel == "files/%s/%s.%s" % (v.hash, v.name, stage)
            with open(os.path.join(irdir, rel), "rb") as f, \
                    open(v.metadata_group["%s.%s" % (v.name, stage)], "rb") as g:
                assert f.read() == g.read()
    assert sorted(os.listdir(os.path.join(irdir, "files"))) == sorted(x["hash"] for x in lines)
    # pytest_unconfigure, then the atexit handler: nothing twice.
    ir.at_exit()
    assert staged(active) == lines


def test_a_vanished_cache_file_is_listed_as_missing(active, stub_torch):
    _, bias = kernels()
    x = stub_torch.randn(64, 64, device="cuda")
    measure(lambda: bias[(1,)](x, x, 64, BLOCK=64))
    (b,) = variants(bias)
    gone = b.metadata_group["bias_kernel.ttgir"]
    os.unlink(gone)
    ir.finish()
    (ln,) = staged(active)
    assert ln["missing"] == {"ttgir": gone}
    assert "ttgir" not in ln["files"] and "ptx" in ln["files"]
    assert not any(n.endswith(".tmp.%d" % os.getpid()) for n in
                   os.listdir(os.path.join(str(active), "ir", "files", b.hash)))


def test_a_failing_op_still_gets_its_variant_staged(active, stub_torch):
    """A CUDA error after the launch: the launch was attributed before the
    error, so the kernel's IR is there for the post-mortem."""
    _, bias = kernels()
    x = stub_torch.randn(64, 64, device="cuda")

    def op():
        bias[(1,)](x, x, 64, BLOCK=64)
        raise stub_torch._stub.cuda_error("an illegal memory access was encountered")

    with pytest.raises(RuntimeError, match="illegal memory access"):
        measure(op)
    assert _state.ir_during is None and _state.ir_launches is None
    import triton

    assert triton.knobs.runtime.launch_enter_hook.calls == []
    ir.finish()
    (b,) = variants(bias)
    assert [ln["hash"] for ln in staged(active)] == [b.hash]


def test_unsafe_hash_and_names_become_safe_paths(active, stub_torch):
    cap = _state.ir
    h = "../../etc/passwd"
    cap.variants[h] = {"kernel": "k", "name": "../we ird/name",
                       "stages": {"ttgir": __file__, "../x": __file__}}
    cap.launched[h] = True
    ir.finish()
    (ln,) = staged(active)
    sub = hashlib.sha256(h.encode()).hexdigest()
    assert ln["hash"] == h
    assert ln["files"] == {"ttgir": "files/%s/_._we_ird_name.ttgir" % sub,
                           "../x": "files/%s/_._we_ird_name._._x" % sub}
    for rel in ln["files"].values():
        p = os.path.realpath(os.path.join(str(active), "ir", rel))
        assert p.startswith(os.path.realpath(os.path.join(str(active), "ir", "files")) + "/")


def test_safe_hash_and_name():
    hexh = "ab" * 32
    assert _ircap.safe_hash(hexh) == hexh
    assert _ircap.safe_hash("KPEL7AMRZ72EEC2NX4QK") == "KPEL7AMRZ72EEC2NX4QK"
    for bad in ("", "a/b", "..", "x" * 129, None, "ab cd"):
        out = _ircap.safe_hash(bad)
        assert len(out) == 64 and all(c in "0123456789abcdef" for c in out)
    assert _ircap.safe_name("softmax_kernel_inner") == "softmax_kernel_inner"
    assert _ircap.safe_name("@fn") == "_fn"
    assert _ircap.safe_name("..") == "kernel" and _ircap.safe_name(None) == "kernel"
    assert _ircap.safe_name(".hidden") == "_hidden"
    assert len(_ircap.safe_name("k" * 400)) == 150


# --- the inactive cases -----------------------------------------------------------------

@pytest.mark.parametrize("value", [None, "", "0"])
def test_inactive_without_zlb_ir(run_dir, knobs, monkeypatch, value):
    if value is not None:
        monkeypatch.setenv("ZLB_IR", value)
    ir.pytest_configure(None)
    (p,) = events(run_dir, "PLUGIN")
    assert (p["name"], p["status"]) == ("zlbench.ir", "inactive")
    assert p["detail"] == "ZLB_IR is not 1: no IR capture"
    assert _state.ir is None and knobs.compilation.listener is None
    assert not os.path.exists(os.path.join(str(run_dir), "ir"))


def test_a_bad_zlb_ir_is_a_usage_error(run_dir, knobs, monkeypatch):
    monkeypatch.setenv("ZLB_IR", "yes")
    with pytest.raises(pytest.UsageError, match="ZLB_IR='yes' is neither '1' nor '0'"):
        ir.pytest_configure(None)
    assert _state.ir is None


def test_inactive_without_run_dir(knobs, monkeypatch, capsys):
    monkeypatch.setenv("ZLB_IR", "1")
    ir.pytest_configure(None)
    assert _state.ir is None and knobs.compilation.listener is None
    assert "ZLB_RUN_DIR is not set" in capsys.readouterr().err


def test_inactive_on_a_triton_without_the_listener(run_dir, knobs, monkeypatch):
    monkeypatch.setenv("ZLB_IR", "1")
    monkeypatch.setattr(knobs, "compilation", types.SimpleNamespace(always_compile=False))
    ir.pytest_configure(None)
    (p,) = events(run_dir, "PLUGIN")
    assert p["status"] == "inactive"
    assert p["detail"] == ("triton 0.0-stub has no knobs.compilation.listener: "
                           "no IR capture")
    assert _state.ir is None and knobs.runtime.kernel_load_end_hook.calls == []


def test_inactive_on_a_triton_without_knobs(run_dir, knobs, monkeypatch):
    import triton

    monkeypatch.setenv("ZLB_IR", "1")
    monkeypatch.delattr(triton, "knobs")
    monkeypatch.setitem(sys.modules, "triton.knobs", None)     # import fails
    ir.pytest_configure(None)
    (p,) = events(run_dir, "PLUGIN")
    assert p["status"] == "inactive"
    assert p["detail"] == ("triton 0.0-stub has no triton.knobs (it predates the compile "
                           "listener): no IR capture")


def test_imports_without_torch_or_triton():
    code = ("import sys; import zlbench.ir, zlbench._ircap, zlbench._irsrc, zlbench.timing; "
            "assert 'torch' not in sys.modules and 'triton' not in sys.modules; "
            "sys.modules['triton'] = None; "          # not importable, installed or not
            "import zlbench.ir as m; print(m.find_knobs()[1])")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZLB_")}
    env["PYTHONPATH"] = PYDIR                      # no stubs: no torch, no triton
    r = subprocess.run([PYTHON, "-c", code], env=env, capture_output=True, text=True,
                       cwd="/")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("triton cannot be imported (")
    assert r.stdout.rstrip().endswith("): no IR capture")


# --- reading ASTSource in its several layouts ------------------------------------------------

def _fn(names, constexprs=None):
    return types.SimpleNamespace(__name__="kern", arg_names=names, constexprs=constexprs)


META = {"hash": "ab12", "name": "kern", "num_warps": 8, "num_stages": 2, "num_ctas": 1}
GROUP = {"kern.ttgir": "/c/kern.ttgir", "kern.json": "/c/kern.json"}


def test_describe_triton_36_layout_with_tuple_paths():
    src = types.SimpleNamespace(
        fn=_fn(["x", "pair", "M", "B"], constexprs=[3]),
        signature={"x": "*bf16", "pair": "[*fp32,i32]", "M": "constexpr", "B": "constexpr"},
        constants={(3,): 128, (2,): 1, (1, 1): 1},
        attrs={(0,): [["tt.divisibility", 16]], (1, 0): [["tt.divisibility", 16]]})
    d = _irsrc.describe(src, META, GROUP)
    assert d["constexprs"] == {"B": 128}
    assert d["specialization"] == {"div16": ["x", "pair[0]"], "equal1": ["pair[1]", "M"]}
    assert d["signature"] == {"x": "*bf16", "pair": "[*fp32,i32]"}
    assert d["stages"] == {"ttgir": "/c/kern.ttgir", "json": "/c/kern.json"}
    assert (d["hash"], d["kernel"], d["name"], d["num_warps"]) == ("ab12", "kern", "kern", 8)


def test_describe_triton_32_attrs_descriptor():
    attrs = types.SimpleNamespace(arg_properties={"tt.divisibility": [0, 2], "tt.equal_to": [1]},
                                  property_values={"tt.divisibility": 16, "tt.equal_to": 1})
    src = types.SimpleNamespace(fn=_fn(["x", "M", "N", "BLOCK"], constexprs=[3]),
                                signature={"x": "*fp16", "M": "i32", "N": "i32",
                                           "BLOCK": "constexpr"},
                                constants={"BLOCK": 64, "M": 1}, attrs=attrs)
    d = _irsrc.describe(src, META, GROUP)
    assert d["constexprs"] == {"BLOCK": 64}
    assert d["specialization"] == {"div16": ["x", "N"], "equal1": ["M"]}
    assert d["signature"] == {"x": "*fp16", "N": "i32"}


def test_describe_triton_30_index_keys():
    attrs = types.SimpleNamespace(divisible_by_16={2, 0}, equal_to_1={1})
    fn = types.SimpleNamespace(__name__="kern", arg_names=["x", "M", "N", "BLOCK"],
                               params=[types.SimpleNamespace(name=n, is_constexpr=n == "BLOCK")
                                       for n in ("x", "M", "N", "BLOCK")])
    src = types.SimpleNamespace(fn=fn, signature={0: "*fp16", 1: "i32", 2: "i32"},
                                constants={3: 256}, attrs=attrs)
    md = types.SimpleNamespace(hash="cd34", name="kern", num_warps=4, num_stages=3, num_ctas=1)
    d = _irsrc.describe(src, md, None)
    assert d["constexprs"] == {"BLOCK": 256}
    assert d["specialization"] == {"div16": ["x", "N"], "equal1": ["M"]}
    assert d["signature"] == {"x": "*fp16", "N": "i32"}
    assert (d["hash"], d["num_warps"], d["stages"]) == ("cd34", 4, {})


def test_describe_survives_a_bare_source():
    d = _irsrc.describe(object(), None, {"noext": "/p"})
    assert d["kernel"] is None and d["hash"] is None and d["constexprs"] == {}
    assert d["specialization"] == {"div16": [], "equal1": []} and d["stages"] == {"noext": "/p"}


def test_hook_on_a_plain_attribute_chains_and_restores():
    """Before HookChain, launch_enter_hook was a single callable (or None)."""
    seen = []
    rt = types.SimpleNamespace(launch_enter_hook=None)
    h = _ircap.Hook(rt, "launch_enter_hook", lambda md: seen.append(("ours", md)))
    assert not h.chain
    h.on()
    rt.launch_enter_hook("m1")
    h.off()
    assert rt.launch_enter_hook is None and seen == [("ours", "m1")]

    def theirs(md):
        seen.append(("theirs", md))

    rt.launch_enter_hook = theirs
    h.on()
    rt.launch_enter_hook("m2")
    h.off()
    assert rt.launch_enter_hook is theirs
    assert seen[1:] == [("theirs", "m2"), ("ours", "m2")]
    # Somebody wrapped ours meanwhile: ours is disabled, theirs stays.
    h.on()
    inner = rt.launch_enter_hook
    rt.launch_enter_hook = lambda md: inner(md)
    h.off()
    rt.launch_enter_hook("m3")
    assert seen[3:] == [("theirs", "m3")]
