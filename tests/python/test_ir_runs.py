"""zlbench.ir in whole runs of the fake FlagGems tree (as `zlb run` spawns
pytest, with ZLB_IR=1 and -p zlbench.ir): softmax's gems path launches the
stub Triton kernel softmax_kernel_inner (one variant per shape and dtype),
autotuned_exp's kernel sweeps two configs and launches the winner."""

import json
import os
import textwrap

import pytest

from conftest import ALL_PLUGINS, FAKECUDA, FATAL_TEXTS, TIMER_LIB, events, need_timer, \
    read_jsonl, rows, run_pytest

IR_PLUGINS = ALL_PLUGINS + ["-p", "zlbench.ir"]


def cost(numel, element_size=2):
    return 1000 + numel * element_size // 2


def gems(ns):
    return ns * 4 // 5


def setup_run(tmp_path, shapes):
    run = tmp_path / "run"
    run.mkdir(parents=True)
    f = run / "shapes.yaml"
    f.write_text(textwrap.dedent(shapes))
    return run, f


def env_for(run, shape_file, cache, **extra):
    env = {"ZLB_RUN_DIR": str(run), "ZLB_SHAPE_FILE": str(shape_file),
           "ZLB_SHAPE_MODE": "file", "ZLB_SEED": "0", "ZLB_PACKAGE": "flag_gems",
           "ZLB_TIMER": "direct", "ZLB_DIRECT_REPEAT": "1", "GEMS_VENDOR": "nvidia",
           "ZLB_IR": "1", "TRITON_CACHE_DIR": str(cache)}
    env.update(extra)
    return env


def args_for(nodes, shape_file, dtypes=("float16",), plugins=IR_PLUGINS):
    a = list(nodes) + ["--level", "core", "--mode", "kernel", "--warmup", "5", "--iter", "5",
                       "--shape_file", str(shape_file)]
    for d in dtypes:
        a += ["--dtypes", d]
    return a + plugins


def ir_files(run, name):
    return read_jsonl(os.path.join(str(run), "ir", name))


def check_staged_copies(run, comp_by_hash):
    """Every staged file is a byte copy of the cache file compiles.jsonl named."""
    irdir = os.path.join(str(run), "ir")
    st = ir_files(run, "staged.jsonl")
    for line in st:
        c = comp_by_hash[line["hash"]]
        assert line["missing"] == {}
        assert sorted(line["files"]) == sorted(c["stages"])
        for stage, rel in line["files"].items():
            assert rel == "files/%s/%s.%s" % (line["hash"], c["name"], stage)
            with open(os.path.join(irdir, rel), "rb") as a, \
                    open(c["stages"][stage], "rb") as b:
                assert a.read() == b.read()
    return st


SHAPES = """
    softmax: {shapes: [[64, 64], [1024, 1024]]}
    GenericBenchmark2DOnly: {shapes: [[32, 32], [64, 64]]}
"""


def test_graph_run_attributes_each_row_and_copies_only_winners(tmp_path):
    need_timer()
    run, shapes = setup_run(tmp_path, SHAPES)
    cache = tmp_path / "cache"
    nodes = ["benchmark/test_softmax.py::test_softmax", "benchmark/test_autotuned.py"]
    r = run_pytest(args_for(nodes, shapes, dtypes=("float16", "float32")),
                   env_for(run, shapes, cache, ZLB_TIMER="graph", ZLB_TIMER_LIB=TIMER_LIB,
                           ZLB_LIBCUDA=FAKECUDA, ZLB_CAPTURE_FATAL=FATAL_TEXTS,
                           ZLB_WARMUP_MAX_CALLS="20"))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert events(run, "WARNING") == []
    (p,) = [e for e in events(run, "PLUGIN") if e["name"] == "zlbench.ir"]
    assert p["status"] == "ready"

    comp = ir_files(run, "compiles.jsonl")
    by_hash = {c["hash"]: c for c in comp}
    assert len(by_hash) == len(comp)                 # one compile per variant
    sm = [c for c in comp if c["kernel"] == "softmax_kernel_inner"]
    tuned = [c for c in comp if c["kernel"] == "autotuned_exp_kernel"]
    assert len(sm) == 4 and len(tuned) == 4 and len(comp) == 8
    assert {c["during"] for c in sm} == {"eager"}
    assert {c["during"] for c in tuned} == {"tune"}
    assert {c["nodeid"] for c in sm} == {"benchmark/test_softmax.py::test_softmax"}
    assert not any(c["cache_hit"] for c in comp)

    rs = rows(run)
    smr = [x for x in rs if x["op_name"] == "softmax"]
    assert len(smr) == 4
    for row, (dtype, numel, tile) in zip(smr, [("float16", 64 * 64, 64),
                                               ("float16", 1024 * 1024, 1024),
                                               ("float32", 64 * 64, 64),
                                               ("float32", 1024 * 1024, 1024)]):
        assert row["dtype"] == "torch." + dtype
        assert row["torch"]["launches"] == []        # torch's softmax is no Triton kernel
        (launch,) = row["gems"]["launches"]
        assert launch["kernel"] == "softmax_kernel_inner" and launch["count"] == 1
        c = by_hash[launch["hash"]]
        assert c["constexprs"] == {"TILE_N": tile, "ONE_TILE_PER_CTA": True}
        ptr = "*fp16" if dtype == "float16" else "*fp32"
        assert c["signature"]["input_ptr"] == ptr
        # IR capture does not change what is measured.
        size = 2 if dtype == "float16" else 4
        assert row["latency_ms"] == pytest.approx(gems(cost(numel, size)) / 1e6, rel=1e-6)
        assert row["gems"]["timer"] == "graph"
    assert len({x["gems"]["launches"][0]["hash"] for x in smr}) == 4

    tr = [x for x in rs if x["op_name"] == "autotuned_exp"]
    winners = {c["hash"] for c in tuned if c["constexprs"] == {"BLOCK": 2}}
    losers = {c["hash"] for c in tuned if c["constexprs"] == {"BLOCK": 1}}
    assert len(tr) == 4 and len(winners) == 2 and len(losers) == 2
    for row in tr:
        (launch,) = row["gems"]["launches"]
        assert launch["hash"] in winners and launch["kernel"] == "autotuned_exp_kernel"
        assert launch["count"] == 1 and row["torch"]["launches"] == []

    st = check_staged_copies(run, by_hash)
    staged_hashes = [x["hash"] for x in st]
    assert len(staged_hashes) == len(set(staged_hashes)) == 6
    assert set(staged_hashes) == {c["hash"] for c in sm} | winners
    assert not losers & set(os.listdir(os.path.join(str(run), "ir", "files")))
    assert set(os.listdir(os.path.join(str(run), "ir", "files"))) == set(staged_hashes)


def test_direct_run_attributes_rows_too_and_a_rerun_hits_the_cache(tmp_path):
    run, shapes = setup_run(tmp_path, "softmax: {shapes: [[64, 64], [32, 40]]}\n")
    cache = tmp_path / "cache"
    node = ["benchmark/test_softmax.py::test_softmax"]
    r = run_pytest(args_for(node, shapes), env_for(run, shapes, cache))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    rs = rows(run)
    comp = {c["hash"]: c for c in ir_files(run, "compiles.jsonl")}
    assert len(rs) == 2 and len(comp) == 2
    for row, numel, n, tile in zip(rs, (64 * 64, 32 * 40), (64, 40), (64, 64)):
        assert row["gems"]["timer"] == "direct"
        # the stub do_bench: eager cost + 0.05 ms, unchanged by the extra call
        assert row["latency_ms"] == pytest.approx(gems(cost(numel)) / 1e6 + 0.05)
        (launch,) = row["gems"]["launches"]
        c = comp[launch["hash"]]
        assert c["constexprs"] == {"TILE_N": tile, "ONE_TILE_PER_CTA": True}
        assert ("N" in c["specialization"]["div16"]) == (n % 16 == 0)
    first = check_staged_copies(run, comp)

    run2 = tmp_path / "run2"
    run2.mkdir()
    r = run_pytest(args_for(node, shapes), env_for(run2, shapes, cache))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    comp2 = {c["hash"]: c for c in ir_files(run2, "compiles.jsonl")}
    assert set(comp2) == set(comp) and all(c["cache_hit"] for c in comp2.values())
    second = check_staged_copies(run2, comp2)
    assert [(x["hash"], x["files"]) for x in second] == [(x["hash"], x["files"])
                                                         for x in first]


def test_another_compiler_build_gives_other_variants(tmp_path):
    """FAKE_TRITON_BUILD stands for a second Triton build: same variants
    (constexprs, options), other hashes, another line in the IR text."""
    shapes_text = "softmax: {shapes: [[64, 64]]}\n"
    out = {}
    for build in ("", "B"):
        run, shapes = setup_run(tmp_path / ("b" + build), shapes_text)
        r = run_pytest(args_for(["benchmark/test_softmax.py::test_softmax"], shapes),
                       env_for(run, shapes, tmp_path / "cache", FAKE_TRITON_BUILD=build))
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        (c,) = ir_files(run, "compiles.jsonl")
        (s,) = ir_files(run, "staged.jsonl")
        with open(os.path.join(str(run), "ir", s["files"]["ttgir"])) as f:
            out[build] = (c, f.read())
    (a, ta), (b, tb) = out[""], out["B"]
    assert a["hash"] != b["hash"] and not b["cache_hit"]
    for k in ("kernel", "constexprs", "signature", "specialization", "num_warps"):
        assert a[k] == b[k]
    assert "stub triton build: B" in tb and "stub triton build" not in ta


def _dying_session(tmp_path, name, extra_plugins):
    """A run whose pytest_unconfigure dies first with a CUDA error: ours (and
    the results plugin's) never runs."""
    import subprocess

    import conftest

    run, shapes = setup_run(tmp_path / name, "softmax: {shapes: [[64, 64]]}\n")
    plug = tmp_path / "plug"
    plug.mkdir(exist_ok=True)
    (plug / "dying_plugin.py").write_text(textwrap.dedent("""
        import pytest

        @pytest.hookimpl(tryfirst=True)
        def pytest_unconfigure(config):
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
    """))
    (plug / "no_atexit.py").write_text("import atexit\natexit.register = lambda *a, **k: None\n")
    env = conftest.subprocess_env(env_for(run, shapes, tmp_path / "cache"))
    env["PYTHONPATH"] = os.pathsep.join([str(plug), env["PYTHONPATH"]])
    r = subprocess.run([conftest.PYTHON, "-m", "pytest", "-p", "no:cacheprovider", "-s"]
                       + extra_plugins + ["-p", "dying_plugin"]
                       + args_for(["benchmark/test_softmax.py::test_softmax"], shapes),
                       cwd=conftest.FAKE, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode != 0
    assert "an illegal memory access was encountered" in r.stderr + r.stdout
    return run


def test_atexit_stages_when_the_session_dies_by_an_exception(tmp_path):
    run = _dying_session(tmp_path, "a", [])
    (row,) = rows(run)
    (launch,) = row["gems"]["launches"]
    comp = {c["hash"]: c for c in ir_files(run, "compiles.jsonl")}
    (st,) = check_staged_copies(run, comp)
    assert st["hash"] == launch["hash"]
    # The control: with atexit handlers disabled, nothing gets staged -- it
    # was the atexit handler that did it above.
    run = _dying_session(tmp_path, "b", ["-p", "no_atexit"])
    assert len(ir_files(run, "compiles.jsonl")) == 1
    assert not os.path.exists(os.path.join(str(run), "ir", "staged.jsonl"))


@pytest.mark.parametrize("mode,detail", [
    ("none", "triton 0.0-stub has no triton.knobs (it predates the compile listener): "
             "no IR capture"),
    ("nolistener", "triton 0.0-stub has no knobs.compilation.listener: no IR capture"),
])
def test_an_older_triton_leaves_the_plugin_inactive(tmp_path, mode, detail):
    run, shapes = setup_run(tmp_path, "softmax: {shapes: [[64, 64]]}\n")
    r = run_pytest(args_for(["benchmark/test_softmax.py::test_softmax"], shapes),
                   env_for(run, shapes, tmp_path / "cache", FAKE_TRITON_KNOBS=mode))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (p,) = [e for e in events(run, "PLUGIN") if e["name"] == "zlbench.ir"]
    assert (p["status"], p["detail"]) == ("inactive", detail)
    assert not os.path.exists(os.path.join(str(run), "ir"))
    (row,) = rows(run)
    assert "launches" not in row["gems"]


def test_ir_off_changes_nothing(tmp_path):
    run, shapes = setup_run(tmp_path, "softmax: {shapes: [[64, 64]]}\n")
    r = run_pytest(args_for(["benchmark/test_softmax.py::test_softmax"], shapes),
                   env_for(run, shapes, tmp_path / "cache", ZLB_IR="0"))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (p,) = [e for e in events(run, "PLUGIN") if e["name"] == "zlbench.ir"]
    assert (p["status"], p["detail"]) == ("inactive", "ZLB_IR is not 1: no IR capture")
    (row,) = rows(run)
    assert "launches" not in row["gems"] and "launches" not in row["torch"]
    assert not os.path.exists(os.path.join(str(run), "ir"))
    assert json.dumps(row)                           # still plain JSON
