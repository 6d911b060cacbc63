"""zlbench.mm_cluster_fix on a stand-in for FlagGems' Hopper mm module: the
gate that sends fp16 GEMMs to the cluster kernel answers False once the
plugin is in, the calls it would have taken are counted per test, and
uninstall puts the gate back."""

import sys
import types

import pytest

from conftest import events

from zlbench import _state, mm_cluster_fix

MOD = "flag_gems.runtime.backend._nvidia.hopper.ops.mm"


@pytest.fixture
def hopper_mm(monkeypatch):
    mod = types.ModuleType(MOD)
    mod.paths = []

    def cluster_remote_mm_scenario(a, b, c, M, N, K):
        # FlagGems' rule, as far as shapes go: M >= 64, N >= 256, K >= 64.
        return M >= 64 and N >= 256 and K >= 64

    def mm(M, N, K):
        path = "cluster" if mod.cluster_remote_mm_scenario(None, None, None, M, N, K) \
            else "general"
        mod.paths.append(path)
        return path

    mod.cluster_remote_mm_scenario = cluster_remote_mm_scenario
    mod.mm = mm
    monkeypatch.setitem(sys.modules, MOD, mod)
    yield mod
    mm_cluster_fix.uninstall()
    mm_cluster_fix._avoided.clear()


def test_gate_closed_and_counted(hopper_mm, run_dir, monkeypatch):
    assert hopper_mm.mm(128, 512, 128) == "cluster"          # without the plugin
    assert mm_cluster_fix.install() == 1
    assert mm_cluster_fix.install() == 0                     # idempotent
    monkeypatch.setattr(_state, "nodeid", "benchmark/test_mm.py::test_mm")
    assert hopper_mm.mm(128, 512, 128) == "general"
    assert hopper_mm.mm(4096, 4096, 4096) == "general"
    assert hopper_mm.mm(32, 512, 128) == "general"           # never a cluster call
    report = types.SimpleNamespace(when="call", nodeid="benchmark/test_mm.py::test_mm")
    mm_cluster_fix.pytest_runtest_logreport(report)
    (ev,) = events(run_dir, "MM_CLUSTER_AVOIDED")
    assert ev["calls"] == 2 and ev["shapes"] == ["128x512x128", "4096x4096x4096"]
    mm_cluster_fix.uninstall()
    assert hopper_mm.mm(128, 512, 128) == "cluster"


def test_found_under_the_name_flag_gems_arch_loader_gives_it(run_dir, monkeypatch, tmp_path):
    # FlagGems imports the arch package by its bare name ("hopper", with
    # runtime/backend/_nvidia on sys.path): on an H200 the module is
    # hopper.ops.mm, known by its file only.
    mod = types.ModuleType("hopper.ops.mm")
    mod.__file__ = str(tmp_path / "flag_gems" / "runtime" / "backend" / "_nvidia" / "hopper"
                       / "ops" / "mm.py")
    mod.cluster_remote_mm_scenario = lambda a, b, c, M, N, K: True
    monkeypatch.setitem(sys.modules, "hopper.ops.mm", mod)
    other = types.ModuleType("ampere.ops.mm")     # another arch's mm: not ours
    other.__file__ = str(tmp_path / "_nvidia" / "ampere" / "ops" / "mm.py")
    other.cluster_remote_mm_scenario = lambda a, b, c, M, N, K: True
    monkeypatch.setitem(sys.modules, "ampere.ops.mm", other)
    try:
        mm_cluster_fix.pytest_collection_finish(None)
        assert mod.cluster_remote_mm_scenario(None, None, None, 128, 512, 128) is False
        assert other.cluster_remote_mm_scenario(None, None, None, 128, 512, 128) is True
        (p,) = [e for e in events(run_dir, "PLUGIN") if e["name"] == "zlbench.mm_cluster_fix"]
        assert p["status"] == "ready" and "hopper.ops.mm" in p["detail"]
    finally:
        mm_cluster_fix.uninstall()
    assert mod.cluster_remote_mm_scenario(None, None, None, 128, 512, 128) is True


def test_nothing_to_patch_is_said(run_dir):
    mm_cluster_fix.pytest_collection_finish(None)
    (p,) = [e for e in events(run_dir, "PLUGIN") if e["name"] == "zlbench.mm_cluster_fix"]
    assert p["status"] == "inactive" and "no Hopper mm module" in p["detail"]
