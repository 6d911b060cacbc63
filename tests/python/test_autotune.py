"""zlbench.autotune in-process (protocol §7), against the stub Triton's
Autotuner (tests/stubs/triton/_jit.py) and the fake FlagGems' LibEntry /
LibTuner with its persistent JSON config DB (tests/fake_flaggems/src/
flag_gems/utils/libentry.py).

Each test builds a module flag_gems._zlbt_kernels holding fresh tuners:

- scale_kernel: @libentry() @triton.autotune(BLOCK 64/128/256, key N) @triton.jit
- rowsum_kernel: @libentry() @libtuner(BLOCK_N 32/64/128, BLOCK_N 64 with a
  pre_hook, key M, N with strategies default/align32) @triton.jit
- hooked_kernel: bare @triton.autotune whose configs carry a pre_hook

Building it again (same source, new objects, same module name) is what a
second process sees: side B of an A/B. COST[(kernel, block)] adds ns to a
launch, which is how a test decides what live tuning would choose.
"""

import contextlib
import importlib
import json
import os
import subprocess
import sys
import textwrap
import types

import pytest

from conftest import PYDIR, PYTHON, events

from zlbench import _autotune, _env, _io, _state, autotune

MOD = "flag_gems._zlbt_kernels"
COST = {}
HOOK_CALLS = []
MARKER = "AUTOTUNE_REPLAY_FALLBACK"


def _extra(kernel, block):
    return COST.get((kernel, block), 0)


def _hook(nargs):
    HOOK_CALLS.append(("rowsum", nargs.get("BLOCK_N")))


def _plain_hook(nargs):
    HOOK_CALLS.append(("hooked", nargs.get("BLOCK")))


def build():
    """The module of fresh tuners (see the module docstring)."""
    import triton
    import triton.language as tl

    le = importlib.import_module("flag_gems.utils.libentry")
    C = triton.Config

    @le.libentry()
    @triton.autotune(configs=[C({"BLOCK": 64}, num_warps=4, num_stages=2),
                              C({"BLOCK": 128}, num_warps=4, num_stages=3),
                              C({"BLOCK": 256}, num_warps=8, num_stages=3)], key=["N"])
    @triton.jit
    def scale_kernel(out_ptr, x_ptr, N, BLOCK: tl.constexpr):
        return 1000 + _extra("scale", BLOCK)

    @le.libentry()
    @le.libtuner(configs=[C({"BLOCK_N": 32}, num_warps=4, num_stages=2),
                          C({"BLOCK_N": 64}, num_warps=4, num_stages=2, pre_hook=_hook),
                          C({"BLOCK_N": 128}, num_warps=8, num_stages=3)],
                 key=["M", "N"], strategy=["default", "align32"])
    @triton.jit
    def rowsum_kernel(out_ptr, x_ptr, M, N, BLOCK_N: tl.constexpr):
        return 1000 + _extra("rowsum", BLOCK_N)

    @triton.autotune(configs=[C({"BLOCK": 32}, num_warps=4, num_stages=2, pre_hook=_plain_hook),
                              C({"BLOCK": 64}, num_warps=4, num_stages=3, pre_hook=_plain_hook)],
                     key=["N"])
    @triton.jit
    def hooked_kernel(out_ptr, x_ptr, N, BLOCK: tl.constexpr):
        return 1000 + _extra("hooked", BLOCK)

    mod = types.ModuleType(MOD)
    mod.scale_kernel = scale_kernel
    mod.rowsum_kernel = rowsum_kernel
    mod.hooked_kernel = hooked_kernel
    mod.alias = scale_kernel                      # a second path to the same tuner
    sys.modules[MOD] = mod
    return mod


def scale(mod, n):
    import torch

    x = torch.randn(n, dtype=torch.float16, device="cuda")
    mod.scale_kernel[(1,)](x, x, n)
    return mod.scale_kernel.fn.best_config


def rowsum(mod, m, n):
    import torch

    x = torch.randn(m, n, dtype=torch.float16, device="cuda")
    out = torch.empty(m, dtype=torch.float16, device="cuda")
    mod.rowsum_kernel[(m,)](out, x, m, n)
    return mod.rowsum_kernel.fn.best_config


def hooked(mod, n):
    import torch

    x = torch.randn(n, dtype=torch.float16, device="cuda")
    mod.hooked_kernel[(1,)](x, x, n)
    return mod.hooked_kernel.best_config


def libentry_mod():
    return importlib.import_module("flag_gems.utils.libentry")


@pytest.fixture
def gems(tmp_path, monkeypatch, stub_torch):
    """flag_gems imported, a private config DB, the fake's tuners reset."""
    import triton

    import flag_gems  # noqa: F401

    monkeypatch.setenv("FLAGGEMS_CACHE_DIR", str(tmp_path / "fgcache"))
    monkeypatch.setenv("ZLB_PACKAGE", "flag_gems")
    monkeypatch.setenv("ZLB_BACKEND", "cuda")
    triton._jit.reset()
    COST.clear()
    del HOOK_CALLS[:]
    yield tmp_path
    try:
        autotune.finish()
    except Exception:
        pass
    _io.close()
    sys.modules.pop(MOD, None)
    del triton._jit.fail_compile[:]
    triton._jit.reset()


@contextlib.contextmanager
def session(monkeypatch, run_dir, mode="record", replay_from=None,
            nodeid="benchmark/test_x.py::test_x"):
    """One pytest session of the plugin, hooks called as pytest would."""
    run_dir.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("ZLB_RUN_DIR", str(run_dir))
    monkeypatch.setenv("ZLB_OP", "x")
    monkeypatch.setenv("ZLB_AUTOTUNE_MODE", mode)
    if replay_from is None:
        monkeypatch.delenv("ZLB_REPLAY_FROM", raising=False)
    else:
        monkeypatch.setenv("ZLB_REPLAY_FROM", str(replay_from))
    autotune.pytest_configure(None)
    autotune.pytest_collection_finish(None)
    autotune.pytest_runtest_logstart(nodeid, None)
    autotune.pytest_runtest_setup(types.SimpleNamespace(nodeid=nodeid))
    autotune.pytest_runtest_call(types.SimpleNamespace(nodeid=nodeid))
    yield
    autotune.pytest_runtest_logfinish(nodeid, None)
    autotune.pytest_unconfigure(None)
    _io.close()


def records(run_dir, op="x"):
    d = os.path.join(str(run_dir), "autotune_records")
    with open(os.path.join(d, op + ".json")) as f:
        doc = json.load(f)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    return doc, meta


def kernel(doc, name):
    (k,) = [k for k in doc["kernels"] if k["kernel"] == name]
    return k


def cfg(kwargs, num_warps, num_stages):
    return {"kwargs": kwargs, "num_warps": num_warps, "num_stages": num_stages,
            "num_ctas": 1, "maxnreg": None}


F16 = "torch.float16"


def record_a(monkeypatch, run_a):
    """Side A: scale N=4096 -> BLOCK 128, N=1024 -> BLOCK 128; rowsum (8, 100)
    -> BLOCK_N 64 (the pre_hook config), (4, 32) -> BLOCK_N 128."""
    COST.update({("scale", 64): 500, ("scale", 256): 500,
                 ("rowsum", 32): 500, ("rowsum", 128): 100})
    mod = build()
    with session(monkeypatch, run_a):
        scale(mod, 4096)
        scale(mod, 1024)
        rowsum(mod, 8, 100)
        COST[("rowsum", 128)] = 0
        COST[("rowsum", 64)] = 700
        rowsum(mod, 4, 32)
    COST.clear()
    return mod


A_SCALE = {(4096, F16, F16): cfg({"BLOCK": 128}, 4, 3), (1024, F16, F16): cfg({"BLOCK": 128}, 4, 3)}
A_ROWSUM = {(8, 128, F16, F16): cfg({"BLOCK_N": 64}, 4, 2), (4, 32, F16, F16): cfg({"BLOCK_N": 128}, 8, 3)}


def entries_of(k):
    return {tuple(e["key"]): e["config"] for e in k["entries"]}


# --- the environment -------------------------------------------------------------------------

def test_env_knobs(monkeypatch):
    assert _env.autotune_mode() == "record" and _env.replay_from() is None
    assert _env.backend() is None and _env.use_flagtune() is False
    monkeypatch.setenv("ZLB_AUTOTUNE_MODE", "replay")
    with pytest.raises(_env.EnvError, match="needs ZLB_REPLAY_FROM"):
        _env.replay_from()
    monkeypatch.setenv("ZLB_REPLAY_FROM", "runs/a")
    with pytest.raises(_env.EnvError, match="is not an absolute path"):
        _env.replay_from()
    monkeypatch.setenv("ZLB_REPLAY_FROM", "/runs/a")
    assert _env.replay_from() == "/runs/a"
    monkeypatch.setenv("ZLB_AUTOTUNE_MODE", "record")
    with pytest.raises(_env.EnvError, match="a run either records or replays"):
        _env.replay_from()
    monkeypatch.setenv("ZLB_AUTOTUNE_MODE", "Replay")
    with pytest.raises(_env.EnvError, match="neither 'record' nor 'replay'"):
        _env.autotune_mode()
    monkeypatch.setenv("ZLB_BACKEND", "cuda")
    assert _env.backend() == "cuda"
    monkeypatch.setenv("ZLB_BACKEND", "cu da")
    with pytest.raises(_env.EnvError, match="is not a backend name"):
        _env.backend()
    for raw, want in (("0", False), ("1", True)):
        monkeypatch.setenv("ZLB_USE_FLAGTUNE", raw)
        assert _env.use_flagtune() is want
    monkeypatch.setenv("ZLB_USE_FLAGTUNE", "yes")
    with pytest.raises(_env.EnvError, match="neither '0' nor '1'"):
        _env.use_flagtune()


def test_bad_environment_is_a_usage_error(run_dir, monkeypatch):
    monkeypatch.setenv("ZLB_USE_FLAGTUNE", "2")
    with pytest.raises(pytest.UsageError, match="zlbench.autotune: ZLB_USE_FLAGTUNE='2'"):
        autotune.pytest_configure(None)
    monkeypatch.setenv("ZLB_USE_FLAGTUNE", "0")
    monkeypatch.setenv("ZLB_AUTOTUNE_MODE", "replay")
    with pytest.raises(pytest.UsageError, match="needs ZLB_REPLAY_FROM"):
        autotune.pytest_configure(None)


def test_without_run_dir_the_plugin_does_nothing(capsys):
    autotune.pytest_configure(None)
    assert autotune._active is None
    assert "ZLB_RUN_DIR is not set" in capsys.readouterr().err


def test_imports_without_torch_triton_flag_gems():
    code = textwrap.dedent("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "triton", "flag_gems", "flaggems_vllm"):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        import zlbench.autotune, zlbench._autotune, zlbench._autotune_record
        import zlbench._autotune_replay
        print(zlbench._autotune.walk(["flag_gems"]))
    """)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": PYDIR}
    r = subprocess.run([PYTHON, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "({}, {})"


# --- the stub tuners behave as the real ones where it matters ----------------------------------

def test_fake_config_db_persists_never_overwrites_and_cannot_delete(gems):
    import triton

    le = libentry_mod()
    cache = le.libcache["t_table"]
    key = (64, "torch.float16")
    assert key not in cache
    with pytest.raises(KeyError):
        cache[key]
    cache[key] = triton.Config({"B": 1}, num_warps=2, num_stages=1)
    cache[key] = triton.Config({"B": 2}, num_warps=8, num_stages=4)      # no overwrite
    got = cache[key]
    assert (got.kwargs, got.num_warps, got.num_stages, got.pre_hook) == ({"B": 1}, 2, 1, None)
    with pytest.raises((TypeError, AttributeError)):
        del cache[key]
    # another process: a fresh model reading the same file
    other = le.ConfigCache("t_table", le.JsonPersistantModel())
    assert other[key].kwargs == {"B": 1}
    assert os.path.isfile(le.db_path()) and le.db_path().startswith(str(gems))


def test_libtuner_warm_db_takes_the_cached_branch_and_reattaches_pre_hook(gems):
    mod = build()
    COST.update({("rowsum", 32): 500, ("rowsum", 128): 500})      # BLOCK_N 64 wins
    best = rowsum(mod, 8, 100)
    t = mod.rowsum_kernel.fn
    assert t.tunings == 1 and best.kwargs == {"BLOCK_N": 64}
    assert best is t.configs[1] and best.pre_hook is _hook          # re-attached
    mod2 = build()                                                  # "another process"
    best2 = rowsum(mod2, 8, 100)
    t2 = mod2.rowsum_kernel.fn
    assert t2.tunings == 0 and t2.db_hits == 1 and best2 is t2.configs[1]
    # LibEntry: later calls for that entry never reach the tuner
    rowsum(mod2, 8, 100)
    assert t2.db_hits == 1 and mod2.rowsum_kernel.dispatch_hits == 1
    libentry_mod().clear_libentry_dispatch_cache(mod2.rowsum_kernel)
    rowsum(mod2, 8, 100)
    assert t2.db_hits == 2


def test_plain_autotuner_caches_key_values_and_dtypes(gems):
    mod = build()
    COST.update({("scale", 64): 10})
    best = scale(mod, 4096)
    t = mod.scale_kernel.fn
    assert list(t.cache) == [(4096, F16, F16)] and t.cache[(4096, F16, F16)] is best
    assert best.kwargs == {"BLOCK": 128} and t.tunings == 1 and t.benchmarks == 3


def test_a_config_that_cannot_compile_times_as_inf_and_raises_when_launched(gems):
    import triton

    mod = build()
    triton._jit.fail_compile.append(("scale_kernel", {"BLOCK": 64}))
    assert scale(mod, 4096).kwargs == {"BLOCK": 128}               # 64 timed as inf
    with pytest.raises(triton.OutOfResources, match="out of resource: shared memory"):
        mod.scale_kernel.fn.fn.run(None, None, 8, BLOCK=64, grid=(1,))


# --- finding the tuners ----------------------------------------------------------------------

def test_walk_finds_each_tuner_once_with_a_stable_name(gems):
    mod = build()
    found, entries = _autotune.walk(["flag_gems"])
    mine = {f.kernel: f for f in found.values() if any(p.startswith(MOD) for p in f.paths)}
    assert set(mine) == {"scale_kernel", "rowsum_kernel", "hooked_kernel"}
    s = mine["scale_kernel"]
    assert s.obj is mod.scale_kernel.fn and s.kind == "autotuner"
    assert s.paths == [MOD + ":alias.fn", MOD + ":scale_kernel.fn"]
    assert s.where == MOD + ":alias.fn" and s.key_names == ["N"]
    assert s.entries == [mod.scale_kernel]
    r = mine["rowsum_kernel"]
    assert r.kind == "libtuner" and r.where == MOD + ":rowsum_kernel.fn"
    assert r.key_names == ["M", "N"]
    assert mine["hooked_kernel"].where == MOD + ":hooked_kernel"
    assert id(mod.rowsum_kernel) in entries
    # the fake tree's own tuners are found too, under their defining modules
    wheres = {f.where for f in found.values()}
    assert {"flag_gems.tuned.scale:scale_kernel.fn", "flag_gems.tuned.rowsum:rowsum_kernel.fn",
            "flag_gems.tuned.hooked:hooked_copy_kernel"} <= wheres


def test_walk_finds_vendor_modules_imported_by_top_level_names(gems):
    """FlagGems imports its vendor code (runtime/backend/_nvidia/hopper/ops/mm.py)
    as the top-level module `hopper.ops.mm`: its tuners belong to flag_gems by
    their file, and are named by that import name. A module of the same shape
    outside the package is not walked."""
    import flag_gems

    mod = build()
    root = os.path.realpath(flag_gems.__path__[0])
    vendor = types.ModuleType("zlbt_hopper.ops.mm")
    vendor.__file__ = os.path.join(root, "runtime", "backend", "_nvidia", "zlbt_hopper",
                                   "ops", "mm.py")
    vendor.mm_kernel_general = mod.rowsum_kernel
    stranger = types.ModuleType("zlbt_elsewhere")
    stranger.__file__ = os.path.join(os.path.dirname(root) + "_not_it", "elsewhere.py")
    stranger.other = mod.scale_kernel
    sys.modules["zlbt_hopper.ops.mm"] = vendor
    sys.modules["zlbt_elsewhere"] = stranger
    try:
        found, _ = _autotune.walk(["flag_gems"])
        paths = {p for f in found.values() for p in f.paths}
        assert "zlbt_hopper.ops.mm:mm_kernel_general.fn" in paths
        assert not any(p.startswith("zlbt_elsewhere:") for p in paths)
        assert "zlbt_hopper.ops.mm" in _autotune.package_modules(["flag_gems"])
        # without the module under flag_gems/ it would not have been found at all
        del sys.modules[MOD]
        found, _ = _autotune.walk(["flag_gems"])
        rowsum = [f for f in found.values() if f.obj is mod.rowsum_kernel.fn]
        assert [f.paths for f in rowsum] == [["zlbt_hopper.ops.mm:mm_kernel_general.fn"]]
    finally:
        sys.modules.pop("zlbt_hopper.ops.mm", None)
        sys.modules.pop("zlbt_elsewhere", None)


# --- record --------------------------------------------------------------------------------------

def test_record_cold_layout_and_event(gems, monkeypatch):
    run_a = gems / "a"
    mod = record_a(monkeypatch, run_a)
    doc, meta = records(run_a)
    assert meta == {"schema_version": 1, "op": "x", "backend": "cuda", "use_flagtune": False,
                    "package": "flag_gems", "tuners": 2, "entries": 4}
    assert doc["schema_version"] == 1 and doc["op"] == "x"
    assert [k["kernel"] for k in doc["kernels"]] == ["scale_kernel", "rowsum_kernel"]  # by where
    s, r = kernel(doc, "scale_kernel"), kernel(doc, "rowsum_kernel")
    assert s == {"tuner": "autotuner", "kernel": "scale_kernel", "where": MOD + ":alias.fn",
                 "key_names": ["N"], "entries": [
                     {"key": [4096, F16, F16], "config": cfg({"BLOCK": 128}, 4, 3)},
                     {"key": [1024, F16, F16], "config": cfg({"BLOCK": 128}, 4, 3)}],
                 "unrecordable": []}
    assert r["tuner"] == "libtuner" and r["where"] == MOD + ":rowsum_kernel.fn"
    assert entries_of(r) == A_ROWSUM           # the align32 key, as the DB holds it
    assert [e["key"] for e in r["entries"]] == [[8, 128, F16, F16], [4, 32, F16, F16]]
    (ev,) = events(run_a, "AUTOTUNE_RECORDED")
    assert (ev["tuners"], ev["entries"], ev["unrecordable"]) == (2, 4, 0)
    (p,) = [e for e in events(run_a, "PLUGIN") if e["name"] == "zlbench.autotune"]
    assert p["status"] == "ready" and p["detail"].startswith("record: ")
    assert mod.rowsum_kernel.fn.tunings == 2
    # the wrappers are gone once the session ends
    assert "run" not in vars(mod.rowsum_kernel.fn)
    assert not [n for n in os.listdir(run_a / "autotune_records") if ".tmp." in n]


def test_record_on_a_warm_db_records_the_same_entries(gems, monkeypatch):
    record_a(monkeypatch, gems / "a")
    # B: another process (new objects), the same DB, and live tuning that would
    # now prefer other configs: the LibTuner answers from the DB.
    COST.update({("rowsum", 32): 0, ("rowsum", 64): 900, ("rowsum", 128): 900})
    mod = build()
    t = mod.rowsum_kernel.fn
    assert (8, 128, F16, F16) in t.cache            # warm before the run
    with session(monkeypatch, gems / "b"):
        rowsum(mod, 8, 100)
        rowsum(mod, 4, 32)
    assert t.tunings == 0 and t.db_hits == 2        # nothing new was written
    doc, meta = records(gems / "b")
    assert entries_of(kernel(doc, "rowsum_kernel")) == A_ROWSUM
    assert meta["tuners"] == 1 and meta["entries"] == 2


def test_pre_hook_configs_of_a_plain_autotuner_are_unrecordable(gems, monkeypatch):
    mod = build()
    with session(monkeypatch, gems / "a"):
        hooked(mod, 4096)
        hooked(mod, 64)
    doc, meta = records(gems / "a")
    h = kernel(doc, "hooked_kernel")
    assert h["entries"] == []
    assert h["unrecordable"] == [
        {"key": [4096, F16, F16], "reason": "pre_hook on a plain Autotuner config"},
        {"key": [64, F16, F16], "reason": "pre_hook on a plain Autotuner config"}]
    assert meta["tuners"] == 1 and meta["entries"] == 0
    (ev,) = events(gems / "a", "AUTOTUNE_RECORDED")
    assert (ev["tuners"], ev["entries"], ev["unrecordable"]) == (1, 0, 2)


def test_records_are_written_after_each_test(gems, monkeypatch):
    mod = build()
    with session(monkeypatch, gems / "a"):
        scale(mod, 4096)
        autotune.pytest_runtest_logfinish("benchmark/test_x.py::test_x", None)
        doc, _ = records(gems / "a")          # already there mid-session
        assert entries_of(kernel(doc, "scale_kernel")) == {(4096, F16, F16): cfg(
            {"BLOCK": 64}, 4, 2)}
        assert events(gems / "a", "AUTOTUNE_RECORDED") == []
        scale(mod, 64)
    doc, _ = records(gems / "a")
    assert len(kernel(doc, "scale_kernel")["entries"]) == 2


def test_a_key_element_json_cannot_hold_is_its_repr(gems, monkeypatch):
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"B": 1}), triton.Config({"B": 2})],
                     key=["MODE", "N"])
    @triton.jit
    def mode_kernel(out_ptr, N, MODE: tl.constexpr, B: tl.constexpr):
        return 1000 + (0 if B == 2 else 9)

    mod = build()
    mod.mode_kernel = mode_kernel
    with session(monkeypatch, gems / "a"):
        mode_kernel[(1,)](None, 64, MODE=("rows", 2))
    doc, _ = records(gems / "a")
    (e,) = kernel(doc, "mode_kernel")["entries"]
    assert e == {"key": ["('rows', 2)", 64], "key_repr": True,
                 "config": cfg({"B": 2}, 4, 3)}
    # replayed by matching the repr, at the call
    COST.clear()

    @triton.autotune(configs=[triton.Config({"B": 1}), triton.Config({"B": 2})],
                     key=["MODE", "N"])
    @triton.jit
    def mode_kernel(out_ptr, N, MODE: tl.constexpr, B: tl.constexpr):  # noqa: F811
        return 1000 + (0 if B == 1 else 9)                 # B would now choose 1

    mod.mode_kernel = mode_kernel
    with session(monkeypatch, gems / "b", "replay", gems / "a"):
        mode_kernel[(1,)](None, 64, MODE=("rows", 2))
    assert mode_kernel.best_config.kwargs == {"B": 2} and mode_kernel.tunings == 0


def test_a_libentry_that_ran_unwatched_is_cleared_so_its_keys_are_recorded(gems, monkeypatch):
    mod = build()
    rowsum(mod, 8, 100)                          # before the plugin: dispatched, unwatched
    assert any(mod.rowsum_kernel.kernel_cache)
    with session(monkeypatch, gems / "a"):
        assert not any(mod.rowsum_kernel.kernel_cache)      # cleared at first sight
        rowsum(mod, 8, 100)                      # re-enters the tuner: DB hit, recorded
    doc, _ = records(gems / "a")
    assert [e["key"] for e in kernel(doc, "rowsum_kernel")["entries"]] == [[8, 128, F16, F16]]
    assert mod.rowsum_kernel.fn.tunings == 1
    (w,) = events(gems / "a", "WARNING")
    assert "ran before zlbench.autotune could watch it" in w["message"]


# --- replay ---------------------------------------------------------------------------------------

def fallbacks(run_dir):
    return [(e["reason"], e["kernel"], e["key"]) for e in events(run_dir, MARKER)]


def test_replay_injects_and_the_tuners_never_benchmark(gems, monkeypatch, capsys):
    import triton

    record_a(monkeypatch, gems / "a")
    del HOOK_CALLS[:]
    monkeypatch.setenv("FLAGGEMS_CACHE_DIR", str(gems / "cold"))     # B's DB is cold
    # live tuning in B would choose other configs everywhere
    COST.update({("scale", 128): 900, ("rowsum", 64): 900, ("rowsum", 128): 900})
    mod = build()
    triton._jit.stats["tunings"] = triton._jit.stats["benchmarks"] = 0
    capsys.readouterr()
    with session(monkeypatch, gems / "b", "replay", gems / "a"):
        got_scale = {(4096, F16, F16): scale(mod, 4096), (1024, F16, F16): scale(mod, 1024)}
        got_rowsum = {(8, 128, F16, F16): rowsum(mod, 8, 100),
                      (4, 32, F16, F16): rowsum(mod, 4, 32)}
    assert triton._jit.stats["tunings"] == 0 and triton._jit.stats["benchmarks"] == 0
    assert {k: _autotune.config_json(c) for k, c in got_scale.items()} == A_SCALE
    assert {k: _autotune.config_json(c) for k, c in got_rowsum.items()} == A_ROWSUM
    t = mod.rowsum_kernel.fn
    # the injected LibTuner config is the tuner's own object: its pre_hook ran
    assert got_rowsum[(8, 128, F16, F16)] is t.configs[1] and ("rowsum", 64) in HOOK_CALLS
    # the cold DB was neither benchmarked nor written
    assert (8, 128, F16, F16) not in t.cache and t.tunings == 0
    assert fallbacks(gems / "b") == []
    assert MARKER not in capsys.readouterr().out
    (ev,) = events(gems / "b", "AUTOTUNE_REPLAYED")
    assert (ev["injected"], ev["tuners"]) == (4, 2)
    assert not (gems / "b" / "autotune_records").exists()       # a replay records nothing
    (p,) = [e for e in events(gems / "b", "PLUGIN") if e["name"] == "zlbench.autotune"]
    assert p["detail"] == "replay: 4 entries of 2 tuner(s) from %s" % (gems / "a")
    assert type(t.cache).__name__ == "ConfigCache"               # the overlay is gone


def test_replay_overrides_a_warm_db_holding_another_winner(gems, monkeypatch):
    record_a(monkeypatch, gems / "a")
    monkeypatch.setenv("FLAGGEMS_CACHE_DIR", str(gems / "warm"))
    COST.update({("rowsum", 64): 900, ("rowsum", 128): 900})       # BLOCK_N 32 wins live
    warm = build()
    rowsum(warm, 8, 100)
    le = libentry_mod()
    table = warm.rowsum_kernel.fn.config_table_name
    assert le.libcache[table][(8, 128, F16, F16)].kwargs == {"BLOCK_N": 32}
    mod = build()
    with session(monkeypatch, gems / "b", "replay", gems / "a"):
        best = rowsum(mod, 8, 100)
    assert best.kwargs == {"BLOCK_N": 64} and best.pre_hook is _hook
    assert mod.rowsum_kernel.fn.tunings == 0
    # the DB still holds its own winner: replay never writes it
    assert le.libcache[table][(8, 128, F16, F16)].kwargs == {"BLOCK_N": 32}
    assert fallbacks(gems / "b") == []


def test_key_missing_tunes_live_and_says_so(gems, monkeypatch, capsys):
    record_a(monkeypatch, gems / "a")
    mod = build()
    capsys.readouterr()
    with session(monkeypatch, gems / "b", "replay", gems / "a"):
        scale(mod, 4096)
        scale(mod, 512)                          # not recorded
        rowsum(mod, 2, 2000)                     # not recorded
        hooked(mod, 64)                          # a tuner A never used
    assert mod.scale_kernel.fn.tunings == 1 and mod.rowsum_kernel.fn.tunings == 1
    assert mod.hooked_kernel.tunings == 1
    assert fallbacks(gems / "b") == [
        ("key_missing", "scale_kernel", [512, F16, F16]),
        ("key_missing", "rowsum_kernel", [2, 2016, F16, F16]),
        ("key_missing", "hooked_kernel", [64, F16, F16])]
    out = capsys.readouterr().out
    assert out.count("AUTOTUNE_REPLAY_FALLBACK reason=key_missing kernel=scale_kernel\n") == 1
    assert out.count("AUTOTUNE_REPLAY_FALLBACK reason=key_missing kernel=rowsum_kernel\n") == 1
    ev = events(gems / "b", MARKER)[0]
    assert ev["where"] == MOD + ":alias.fn" and ev["nodeid"] == "benchmark/test_x.py::test_x"
    (rep,) = events(gems / "b", "AUTOTUNE_REPLAYED")
    assert rep["injected"] == 4 and rep["tuners"] == 2    # hooked_kernel was not recorded


def test_unrecordable_points_replay_as_key_missing(gems, monkeypatch):
    mod = build()
    with session(monkeypatch, gems / "a"):
        hooked(mod, 4096)
    mod = build()
    with session(monkeypatch, gems / "b", "replay", gems / "a"):
        hooked(mod, 4096)
    assert fallbacks(gems / "b") == [("key_missing", "hooked_kernel", [4096, F16, F16])]


def test_config_missing(gems, monkeypatch, capsys):
    record_a(monkeypatch, gems / "a")
    path = gems / "a" / "autotune_records" / "x.json"
    doc = json.loads(path.read_text())
    kernel(doc, "scale_kernel")["entries"][0]["config"]["kwargs"] = {"BLOCK": 512}
    kernel(doc, "rowsum_kernel")["entries"][0]["config"]["num_warps"] = 2
    path.write_text(json.dumps(doc))
    monkeypatch.setenv("FLAGGEMS_CACHE_DIR", str(gems / "cold"))
    mod = build()
    with session(monkeypatch, gems / "b", "replay", gems / "a"):
        assert scale(mod, 4096).kwargs == {"BLOCK": 64}        # live: all equal, first
        assert rowsum(mod, 8, 100).kwargs == {"BLOCK_N": 32}
    assert fallbacks(gems / "b") == [
        ("config_missing", "scale_kernel", [4096, F16, F16]),
        ("config_missing", "rowsum_kernel", [8, 128, F16, F16])]
    assert mod.scale_kernel.fn.tunings == 1 and mod.rowsum_kernel.fn.tunings == 1
    ev = events(gems / "b", MARKER)[0]
    assert "matches none of the tuner's 3 configs" in ev["detail"]
    assert "AUTOTUNE_REPLAY_FALLBACK reason=config_missing kernel=scale_kernel" in \
        capsys.readouterr().out


def test_compile_failed_evicts_a_plain_autotuner_entry_and_retunes(gems, monkeypatch, capsys):
    import triton

    record_a(monkeypatch, gems / "a")
    mod = build()
    triton._jit.fail_compile.append(("scale_kernel", {"BLOCK": 128}))   # B cannot build it
    COST.update({("scale", 64): 50})
    with session(monkeypatch, gems / "b", "replay", gems / "a"):
        best = scale(mod, 4096)
        assert best.kwargs == {"BLOCK": 256}             # live: 128 is inf, 64 is slower
        assert mod.scale_kernel.fn.cache[(4096, F16, F16)] is best
    assert mod.scale_kernel.fn.tunings == 1
    assert fallbacks(gems / "b") == [("compile_failed", "scale_kernel", [4096, F16, F16])]
    ev = events(gems / "b", MARKER)[0]
    assert ev["detail"].startswith("OutOfResources: out of resource: shared memory")
    assert "AUTOTUNE_REPLAY_FALLBACK reason=compile_failed kernel=scale_kernel\n" in \
        capsys.readouterr().out


def test_compile_failed_on_a_libtuner_with_a_cold_db_tunes_live(gems, monkeypatch):
    import triton

    record_a(monkeypatch, gems / "a")
    monkeypatch.setenv("FLAGGEMS_CACHE_DIR", str(gems / "cold"))
    mod = build()
    triton._jit.fail_compile.append(("rowsum_kernel", {"BLOCK_N": 64}))
    with session(monkeypatch, gems / "b", "replay", gems / "a"):
        best = rowsum(mod, 8, 100)
    assert best.kwargs == {"BLOCK_N": 32} and mod.rowsum_kernel.fn.tunings == 1
    assert fallbacks(gems / "b") == [("compile_failed", "rowsum_kernel", [8, 128, F16, F16])]
    assert mod.rowsum_kernel.fn.cache[(8, 128, F16, F16)].kwargs == {"BLOCK_N": 32}


def test_compile_failed_on_a_warm_libtuner_db_is_no_evict(gems, monkeypatch, capsys):
    import triton

    record_a(monkeypatch, gems / "a")
    monkeypatch.setenv("FLAGGEMS_CACHE_DIR", str(gems / "warm"))
    COST.update({("rowsum", 64): 900, ("rowsum", 128): 900})
    rowsum(build(), 8, 100)                      # the DB's winner: BLOCK_N 32
    COST.clear()
    mod = build()
    triton._jit.fail_compile.append(("rowsum_kernel", {"BLOCK_N": 64}))
    capsys.readouterr()
    with session(monkeypatch, gems / "b", "replay", gems / "a"):
        best = rowsum(mod, 8, 100)
    assert best.kwargs == {"BLOCK_N": 32}         # the DB's, not A's, and not retuned
    assert mod.rowsum_kernel.fn.tunings == 0
    assert fallbacks(gems / "b") == [
        ("compile_failed_no_evict", "rowsum_kernel", [8, 128, F16, F16])]
    ev = events(gems / "b", MARKER)[0]
    assert "has no delete" in ev["detail"] and "unverified" in ev["detail"]
    assert "AUTOTUNE_REPLAY_FALLBACK reason=compile_failed_no_evict kernel=rowsum_kernel\n" \
        in capsys.readouterr().out


def test_an_error_after_the_config_ran_is_not_a_replay_fallback(gems, monkeypatch):
    record_a(monkeypatch, gems / "a")
    mod = build()
    with session(monkeypatch, gems / "b", "replay", gems / "a"):
        scale(mod, 4096)                          # verified
        libentry_mod().clear_libentry_dispatch_cache(mod.scale_kernel)
        COST[("scale", 128)] = "not a number"     # the kernel itself now fails
        with pytest.raises(TypeError):
            scale(mod, 4096)
        COST.clear()
    assert fallbacks(gems / "b") == []


def test_tuner_missing(gems, monkeypatch, capsys):
    record_a(monkeypatch, gems / "a")
    mod = build()
    del mod.rowsum_kernel                         # B's code has no such tuner
    with session(monkeypatch, gems / "b", "replay", gems / "a"):
        scale(mod, 4096)
    assert fallbacks(gems / "b") == [("tuner_missing", "rowsum_kernel", None)]
    ev = events(gems / "b", MARKER)[0]
    assert ev["where"] == MOD + ":rowsum_kernel.fn"
    # the whole run's, not the last test's (its session ends after that test)
    assert ev["nodeid"] is None and ev["measured"] is False
    assert "its 2 recorded entries were not replayed" in ev["detail"]
    assert "AUTOTUNE_REPLAY_FALLBACK reason=tuner_missing kernel=rowsum_kernel\n" in \
        capsys.readouterr().out
    (rep,) = events(gems / "b", "AUTOTUNE_REPLAYED")
    assert rep["tuners"] == 1


def test_a_libentry_that_ran_before_replay_is_cleared(gems, monkeypatch):
    record_a(monkeypatch, gems / "a")
    monkeypatch.setenv("FLAGGEMS_CACHE_DIR", str(gems / "cold"))
    COST.update({("scale", 128): 900})
    mod = build()
    assert scale(mod, 4096).kwargs == {"BLOCK": 64}          # live, before replay
    with session(monkeypatch, gems / "b", "replay", gems / "a"):
        assert not any(mod.scale_kernel.kernel_cache)
        assert scale(mod, 4096).kwargs == {"BLOCK": 128}     # A's, overwritten
    (w,) = events(gems / "b", "WARNING")
    assert "had already tuned 1 recorded key(s) before replay could inject" in w["message"]


def _write_recording(d, meta, doc=None):
    rec = d / "autotune_records"
    rec.mkdir(parents=True)
    (rec / "meta.json").write_text(json.dumps(meta))
    (rec / "x.json").write_text(json.dumps(doc or {"schema_version": 1, "op": "x",
                                                   "kernels": []}))


@pytest.mark.parametrize("meta,env,needle", [
    ({"backend": "rocm", "use_flagtune": False}, {},
     "was recorded on backend 'rocm' and this run is on 'cuda': configs replay on the "
     "backend that chose them only"),
    ({"backend": "cuda", "use_flagtune": True}, {},
     "was recorded with USE_FLAGTUNE=1 and this run has 0: the config spaces differ"),
    ({"backend": "cuda", "use_flagtune": False}, {"ZLB_USE_FLAGTUNE": "1"},
     "was recorded with USE_FLAGTUNE=0 and this run has 1"),
    ({"backend": "cuda", "use_flagtune": False, "schema_version": 2}, {},
     "has schema_version 2; this zlbench reads 1"),
])
def test_a_recording_of_other_terms_is_refused(gems, monkeypatch, meta, env, needle):
    meta = dict({"schema_version": 1, "op": "x", "package": "flag_gems", "tuners": 0,
                 "entries": 0}, **meta)
    _write_recording(gems / "a", meta)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(pytest.UsageError) as e:
        with session(monkeypatch, gems / "b", "replay", gems / "a"):
            pass
    assert str(e.value).startswith("zlbench.autotune: ")
    assert needle in str(e.value)
    assert not (gems / "b" / "autotune_records").exists()


def test_a_directory_that_is_not_a_recording_is_refused(gems, monkeypatch):
    (gems / "a").mkdir()
    with pytest.raises(pytest.UsageError, match="has no autotune_records/: it is "
                       "not a recording run"):
        with session(monkeypatch, gems / "b", "replay", gems / "a"):
            pass
    _write_recording(gems / "c", {"schema_version": 1, "backend": "cuda",
                                  "use_flagtune": False}, {"kernels": "?"})
    with pytest.raises(pytest.UsageError, match="is not an autotune record of schema_version 1"):
        with session(monkeypatch, gems / "b", "replay", gems / "c"):
            pass


def test_a_recording_without_meta_json_replays_with_a_warning(gems, monkeypatch):
    """Recordings made before meta.json existed: their records replay, and
    what meta.json would have let us check is said."""
    record_a(monkeypatch, gems / "a")
    (gems / "a" / "autotune_records" / "meta.json").unlink()
    mod = build()
    with session(monkeypatch, gems / "b", "replay", gems / "a"):
        assert scale(mod, 4096).kwargs == {"BLOCK": 128}
    (w,) = [e for e in events(gems / "b", "WARNING")
            if "no autotune_records/meta.json" in e["message"]]
    assert "backend and USE_FLAGTUNE are not checked" in w["message"]
    (rep,) = events(gems / "b", "AUTOTUNE_REPLAYED")
    assert rep["injected"] > 0 and rep["recorded"] == 2
    assert fallbacks(gems / "b") == []


def test_replay_of_a_recording_made_without_tuners(gems, monkeypatch):
    _write_recording(gems / "a", {"schema_version": 1, "op": "x", "backend": "cuda",
                                  "use_flagtune": False, "package": "flag_gems",
                                  "tuners": 0, "entries": 0})
    mod = build()
    with session(monkeypatch, gems / "b", "replay", gems / "a"):
        scale(mod, 64)
    assert fallbacks(gems / "b") == [("key_missing", "scale_kernel", [64, F16, F16])]
    (rep,) = events(gems / "b", "AUTOTUNE_REPLAYED")
    assert (rep["injected"], rep["tuners"]) == (0, 0)


def test_nodeid_is_carried_by_fallback_events(gems, monkeypatch):
    record_a(monkeypatch, gems / "a")
    mod = build()
    with session(monkeypatch, gems / "b", "replay", gems / "a", nodeid="benchmark/t.py::t"):
        scale(mod, 8)
    assert [e["nodeid"] for e in events(gems / "b", MARKER)] == ["benchmark/t.py::t"]
    assert _state.nodeid == "benchmark/t.py::t"


def test_a_fallback_inside_a_measurement_lands_on_that_record(gems, monkeypatch):
    # A tuner chooses at its first call with a new key, which is inside the
    # measurement (timing.do_bench): that measurement's record says which
    # points fell back; the one before it and the one after it stay clean.
    import triton.testing as tt

    from zlbench import timing

    record_a(monkeypatch, gems / "a")
    mod = build()
    monkeypatch.setenv("ZLB_TIMER", "direct")
    monkeypatch.setenv("ZLB_DIRECT_REPEAT", "1")
    monkeypatch.setattr(_state, "original_do_bench", tt.do_bench)

    def new_shapes():
        scale(mod, 512)                           # not recorded
        scale(mod, 256)                           # nor this: the same point, once
        rowsum(mod, 2, 2000)                      # nor this

    with session(monkeypatch, gems / "b", "replay", gems / "a"):
        timing.do_bench(lambda: scale(mod, 4096), return_mode="median")     # A's config
        timing.do_bench(new_shapes, return_mode="median")
        scale(mod, 64)                            # outside any measurement
        timing.do_bench(lambda: scale(mod, 64), return_mode="median")       # tuned already
        assert _state.measure_fallbacks is None
    first, new, after = [p["record"] for p in _state.pending]
    assert first["markers"] == [] and "replay_fallbacks" not in first
    assert new["markers"] == [MARKER]
    assert new["replay_fallbacks"] == [{"reason": "key_missing", "kernel": "scale_kernel"},
                                       {"reason": "key_missing", "kernel": "rowsum_kernel"}]
    assert after["markers"] == [] and "replay_fallbacks" not in after
    evs = events(gems / "b", MARKER)
    assert [(e["kernel"], e["key"][0], e["measured"]) for e in evs] == [
        ("scale_kernel", 512, True), ("scale_kernel", 256, True), ("rowsum_kernel", 2, True),
        ("scale_kernel", 64, False)]
    assert {e["nodeid"] for e in evs} == {"benchmark/test_x.py::test_x"}
