"""zlbench.mm_cluster_fix: keep FlagGems' Hopper fp16 mm off its cluster
kernel (zlb run --mm-cluster-fix, CUDA only; the original's
_mm_cluster_fix_plugin, opt-in for measuring fp16 mm where that kernel
crashes).

The cluster path (runtime/backend/_nvidia/hopper/ops/mm.py, FlagGems
ed2508bc): mm() and mm_out() call cluster_remote_mm() when
cluster_remote_mm_scenario(a, b, c, M, N, K) holds: Triton has TLE
(`triton.experimental.tle`, FlagTree builds only) with device meshes, the
capability is 9.x or newer, a, b and c are fp16 CUDA tensors, a and b are
contiguous, and M >= 64, N >= 256, K >= 64. _cluster_remote_gemm_kernel then
runs two CTAs per cluster (device mesh "cluster_x" of 2): rank 0 loads each
64x64 tile of A into its shared memory (two slots), rank 1 reads it remotely
(tle remote on distributed shared memory), and each rank computes one
64x256 tile of C, the two ranks' tiles side by side in N. Out of bounds lies:
- the rank-1 CTA of the last cluster when cdiv(N, 256) is odd: its pid_n is
  cdiv(N, 256), one tile past N, so its B loads and C stores fall wholly
  outside B and C; only USE_MASK (set because the tile count is odd) keeps
  them in bounds;
- every tile edge when M % 64, N % 256 or K % 64 is not 0, again guarded by
  USE_MASK alone;
- rank 1's remote reads of rank 0's shared memory, valid only while rank 0
  is resident, which the distributed barrier ending each K step keeps so.
A kernel whose masks or barriers miscompile (a FlagTree change under test)
therefore reads and writes past the tensors or a CTA's shared memory, and
the process dies with an illegal memory access (a fatal capture text: the
row stops, the run fails).

The fix: cluster_remote_mm_scenario answers False, so mm takes the path it
takes without TLE (split-K for small M and N with K >= 4096, else the
general TMA kernel). That is another kernel than FlagTree-with-TLE runs by
default: the switch is caliber (mm_cluster_fix). Each call that the cluster
path would have taken is counted, and said once per test as an
MM_CLUSTER_AVOIDED event (calls, shapes), so a run shows whether the fix
changed anything at all.

On stock Triton (no TLE, as on the H200 with triton 3.6) the gate is already
False and nothing changes: no MM_CLUSTER_AVOIDED event appears (and PLUGIN
says inactive when the Hopper mm module is not loaded at all).

FlagGems' backend loader imports the arch package by its bare name (it puts
runtime/backend/_nvidia on sys.path and imports "hopper"), so on an H200 the
module is sys.modules["hopper.ops.mm"], not the dotted path under flag_gems:
it is found by its file (.../_nvidia/hopper/ops/mm.py) as well as by name.
"""

import os
import sys

import pytest

from . import _io, _markers, _state

NAME = "zlbench.mm_cluster_fix"
# The module holding the gate, under either FlagGems package, or by its file
# under whatever name the arch loader gave it.
SUFFIX = ".runtime.backend._nvidia.hopper.ops.mm"
FILE_TAIL = ("_nvidia", "hopper", "ops", "mm.py")
GATE = "cluster_remote_mm_scenario"

_avoided = {}      # nodeid -> [calls, {shape text}]
_patched = []      # modules whose gate is ours


def _is_hopper_mm(name, mod):
    if name.endswith(SUFFIX):
        return True
    path = getattr(mod, "__file__", None)
    if not isinstance(path, str):
        return False
    return tuple(os.path.normpath(path).split(os.sep)[-len(FILE_TAIL):]) == FILE_TAIL


def _modules():
    out = []
    for name, m in list(sys.modules.items()):
        if m is not None and m not in out and hasattr(m, GATE) and _is_hopper_mm(name, m):
            out.append(m)
    return out


def install():
    """Replace the gate in every loaded Hopper mm module; how many now."""
    n = 0
    for mod in _modules():
        orig = getattr(mod, GATE)
        if getattr(orig, "_zlb_wrapped", False):
            continue

        def gate(a, b, c, M, N, K, _orig=orig):
            if _orig(a, b, c, M, N, K):
                rec = _avoided.setdefault(_state.nodeid, [0, set()])
                rec[0] += 1
                rec[1].add("%sx%sx%s" % (M, N, K))
            return False

        gate._zlb_wrapped = True
        gate.__wrapped__ = orig
        setattr(mod, GATE, gate)
        _patched.append(mod)
        n += 1
    return n


def uninstall():
    for mod in _patched:
        g = getattr(mod, GATE, None)
        if getattr(g, "_zlb_wrapped", False):
            setattr(mod, GATE, g.__wrapped__)
    del _patched[:]


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    if not _io.require(NAME):
        return
    install()


def pytest_collection_finish(session):
    if not _io.active(NAME):
        return
    install()
    if _patched:
        _io.plugin(NAME, "ready", "%s gate replaced in %s" % (
            GATE, ", ".join(m.__name__ for m in _patched)))
    else:
        _io.plugin(NAME, "inactive", "no Hopper mm module (*%s or %s, with %s) is "
                   "loaded: not a Hopper device, or this FlagGems has no cluster path" % (
                       SUFFIX, os.path.join(*FILE_TAIL), GATE))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    if _io.active(NAME):
        install()


def pytest_runtest_logreport(report):
    if report.when != "call":
        return
    rec = _avoided.pop(report.nodeid, None)
    if rec and _io.active(NAME):
        _io.event(_markers.EVENT_MM_CLUSTER_AVOIDED, nodeid=report.nodeid, calls=rec[0],
                  shapes=sorted(rec[1]))


def pytest_unconfigure(config):
    uninstall()
