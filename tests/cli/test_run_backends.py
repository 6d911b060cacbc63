"""zlb run on the other backends and with what the backend table decides:
MUSA's graph timer (torch.musa graphs timed by torch.musa events, stub
torch_musa), its capture deny list and compat plugin, device enumeration of
MUSA, ROCm and Ascend through a fake vendor runtime (libfakevendor.so), a
user's own FlagGems vendor, the CUDA-only mm cluster fix; and the original's
habits: OP and TEST_NODE both set, a recording without meta.json."""
import os
import shutil
import textwrap

import pytest

from conftest import FAKE_MAIN


def fakevendor():
    v = os.environ.get("ZLB_FAKEVENDOR")
    if not v or not os.path.exists(v):
        pytest.skip("ZLB_FAKEVENDOR is not set to the built libfakevendor.so (run through ctest)")
    return v


def musa_env(**more):
    env = {"ZL_BACKEND": "musa", "ZLB_LIBMUSA": fakevendor(),
           # The events timer needs no libzlbtimer: prove it.
           "ZLB_TIMER_LIB": None}
    env.update(more)
    return env


def preflight(r, check):
    assert r.rc == 3, r
    assert f"PREFLIGHT_FAILED check={check}" in r.err, r


def cost_ms(numel, elsize=2, gems=False):
    ns = 1000 + numel * elsize // 2
    return (ns * 4 // 5 if gems else ns) / 1e6


def test_musa_graph_timer_on_musa_events(zlb, shapes):
    f = shapes("softmax:\n  shapes:\n    - [64, 512]\n")
    r = zlb.run("softmax", "--shapes", str(f), "--dtypes", "float16", env=musa_env())
    assert r.rc == 0, r
    (row,) = r.rows()
    assert row["torch"]["timer"] == "graph" and row["gems"]["timer"] == "graph"
    # The stub's events read its GPU clock: exact, as libzlbtimer is on CUDA.
    assert row["latency_base_ms"] == pytest.approx(cost_ms(64 * 512), rel=1e-9)
    assert row["latency_ms"] == pytest.approx(cost_ms(64 * 512, gems=True), rel=1e-9)
    ident = r.identity()
    cal, prov = ident["caliber"], ident["provenance"]
    assert (cal["backend"], cal["device"], cal["timer"]) == ("musa", "Fake MTT S5000 0", "graph")
    assert prov["graph_replay"] == "events" and prov["torch_module"] == "musa"
    assert prov["flaggems_vendor"] == "mthreads" and prov["flaggems_vendor_from"] == "backend"
    assert prov["driver_version"] == "40100"
    # The compat plugin is planned first; it found flag_gems on mthreads.
    assert prov["plugins"][0] == "zlbench.compat_musa"
    (p,) = [e for e in r.events() if e["event"] == "PLUGIN" and
            e["name"] == "zlbench.compat_musa"]
    assert p["status"] == "ready"
    assert "device:   musa 0 -> MUSA_VISIBLE_DEVICES=0, Fake MTT S5000 0" in r.out


def _tree_with_unique(tmp_path):
    tree = tmp_path / "FlagGems"
    shutil.copytree(FAKE_MAIN, tree)
    (tree / "benchmark" / "test_unique.py").write_text(textwrap.dedent("""
        import pytest
        import torch

        from . import base


        @pytest.mark.unique
        def test_unique2():
            bench = base.UnaryReductionBenchmark(op_name="unique2", torch_op=torch.softmax)
            bench.run()
    """))
    return tree


def test_musa_capture_deny_list(zlb, shapes, tmp_path):
    tree = _tree_with_unique(tmp_path)
    f = shapes("unique2:\n  shapes:\n    - [64, 512]\n")
    r = zlb.run("unique2", "--shapes", str(f), "--dtypes", "float16",
                env=musa_env(FLAGGEMS_DIR=str(tree)))
    assert r.rc == 0, r
    assert "the musa backend never captures unique2 (capture deny list)" in r.out
    (row,) = r.rows()
    assert row["torch"]["timer"] == "direct" and row["gems"]["timer"] == "direct"
    assert row["gems"]["fallback"]["phase"] == "deny"
    assert "BENCHMARK_DIRECT_NO_CUDAGRAPH phase=deny" in (r.run_dir / "run.log").read_text()
    # The same test on CUDA is captured: the list is MUSA's alone.
    r = zlb.run("unique2", "--shapes", str(f), "--dtypes", "float16",
                env={"FLAGGEMS_DIR": str(tree)})
    assert r.rc == 0, r
    assert "never captures" not in r.out
    assert all(row["gems"]["timer"] == "graph" for row in r.rows(r.run_dirs[-1]))


def test_users_flaggems_vendor_is_kept(zlb, shapes):
    f = shapes("softmax:\n  shapes:\n    - [64, 512]\n")
    r = zlb.run("softmax", "--shapes", str(f), "--dtypes", "float16",
                env=musa_env(FLAGGEMS_VENDOR="mycorp"))
    assert r.rc == 0, r
    prov = r.identity()["provenance"]
    assert prov["flaggems_vendor"] == "mycorp"
    assert prov["flaggems_vendor_from"] == "FLAGGEMS_VENDOR"
    assert "warning: FLAGGEMS_VENDOR=mycorp is yours and kept" in r.out
    # flag_gems saw it (GEMS_VENDOR was not set over it): the compat plugin
    # found the package on that vendor and stayed out.
    (p,) = [e for e in r.events() if e["event"] == "PLUGIN" and
            e["name"] == "zlbench.compat_musa"]
    assert p["status"] == "inactive" and "vendor mycorp, not mthreads" in p["detail"]
    assert "plugin stayed inactive: zlbench.compat_musa: flag_gems dispatched to vendor " \
        "mycorp" in r.out
    # The backend's own vendor given by the user: a plain note.
    r = zlb.run("softmax", "--shapes", str(f), "--dtypes", "float16",
                env=musa_env(GEMS_VENDOR="mthreads"))
    assert r.rc == 0 and "note: FlagGems vendor mthreads from your GEMS_VENDOR (kept)" in r.out


@pytest.mark.parametrize("backend,env_key,device,visible", [
    ("rocm", "ZLB_LIBHIP", "Fake AMD MI300X 1", "HIP_VISIBLE_DEVICES=1"),
    ("ascend", "ZLB_LIBASCENDCL", "device 1", "ASCEND_RT_VISIBLE_DEVICES=1"),
])
def test_other_backends_enumerate_their_runtime(zlb, shapes, backend, env_key, device,
                                                visible):
    f = shapes("softmax:\n  shapes:\n    - [64, 512]\n")
    r = zlb.run("softmax", "--shapes", str(f), "--dtypes", "float16", "--device", "1",
                env={"ZL_BACKEND": backend, env_key: fakevendor()})
    assert r.rc == 0, r
    cal = r.identity()["caliber"]
    assert (cal["backend"], cal["device"], cal["timer"]) == (backend, device, "direct")
    assert visible in r.out
    # Without the runtime: no device, said by preflight.
    r = zlb.run("softmax", env={"ZL_BACKEND": backend, env_key: "/nonexistent/lib.so"})
    preflight(r, "device")
    assert env_key in r.err


def test_mm_cluster_fix_is_cuda_only_and_caliber(zlb, shapes):
    f = shapes("softmax:\n  shapes:\n    - [64, 512]\n")
    r = zlb.run("softmax", "--mm-cluster-fix", env=musa_env())
    preflight(r, "backend")
    assert "exists only on CUDA; this run is on musa" in r.err
    r = zlb.run("softmax", "--shapes", str(f), "--dtypes", "float16",
                env={"ZL_MM_CLUSTER_FIX": "1"})
    assert r.rc == 0, r
    ident = r.identity()
    assert ident["caliber"]["mm_cluster_fix"] is True
    assert "zlbench.mm_cluster_fix" in ident["provenance"]["plugins"]
    # No Hopper mm module in the fake checkout: said on the terminal.
    assert "plugin stayed inactive: zlbench.mm_cluster_fix: no Hopper mm module" in r.out


def test_op_and_test_node_both_in_the_environment(zlb):
    node = f"{FAKE_MAIN}/benchmark/test_softmax.py::test_softmax"
    r = zlb.run("--dtypes", "float16", env={"OP": "add", "OP_FILE": "add",
                                            "TEST_NODE": node})
    assert r.rc == 0, r
    assert r.identity()["op"] == "softmax"
    assert "note: OP=add and TEST_NODE are both set; the test node wins" in r.out
    # Both on the command line is still a contradiction.
    r = zlb.run("add", "--test-node", node)
    assert r.rc == 2 and "not both" in r.err


def test_recording_without_meta_json_replays_with_a_warning(zlb):
    r = zlb.run("tuned_rowsum", "--dtypes", "float16")
    assert r.rc == 0, r
    rec = r.run_dir
    assert "zlb:   autotune record: 1 kernel(s)" in r.out
    (rec / "autotune_records" / "meta.json").unlink()
    r = zlb.run("tuned_rowsum", "--dtypes", "float16", env={"REPLAY_FROM": str(rec)})
    assert r.rc == 0, r
    assert "has no autotune_records/meta.json (a recording made before it existed)" in r.out
    assert "zlb:   autotune replay:" in r.out and "of the 1 recorded kernel(s)" in r.out
    warn = [e for e in r.events(r.run_dirs[-1]) if e["event"] == "WARNING"]
    assert any("no autotune_records/meta.json" in e["message"] for e in warn)
    assert not [e for e in r.events(r.run_dirs[-1])
                if e["event"] == "AUTOTUNE_REPLAY_FALLBACK"]
    # A directory with neither is still not a recording.
    shutil.rmtree(rec / "autotune_records")
    r = zlb.run("tuned_rowsum", env={"REPLAY_FROM": str(rec)})
    preflight(r, "replay_dir")
    assert "not a recording run" in r.err


def test_dtypes_are_the_checkouts_own(zlb, shapes, tmp_path):
    """DTYPES takes what the checkout's --dtypes accepts, read from its
    conftest: a name it lacks stops in preflight with the list; a fork that
    accepts more is taken at its word."""
    r = zlb.run("softmax", env={"DTYPES": "float64"})
    preflight(r, "dtypes")
    assert "'float64' is not a dtype FlagGems' --dtypes accepts" in r.err
    assert "(it accepts: float16, float32, bfloat16, int16, int32, bool, complex64)" in r.err
    assert not zlb.runs.exists()
    tree = tmp_path / "FlagGems"
    shutil.copytree(FAKE_MAIN, tree)
    conftest = tree / "benchmark" / "conftest.py"
    conftest.write_text(conftest.read_text().replace("+ [torch.cfloat]",
                                                     "+ [torch.cfloat, torch.double]"))
    f = shapes("softmax:\n  shapes:\n    - [64, 512]\n")
    r = zlb.run("softmax", "--shapes", str(f), env={"DTYPES": "float64",
                                                     "FLAGGEMS_DIR": str(tree)})
    # The fork's argument parser took it (no "invalid choice"); the operator
    # itself refuses it in upstream's words, as FlagGems would.
    log = (r.run_dir / "run.log").read_text()
    assert "invalid choice" not in log
    assert r.rc == 1 and "can't be supported by this op 'softmax'" in log, r
