"""zlbench.compat_musa: FlagGems benchmark skip guards that only hold on CUDA,
dropped on Moore Threads. The MUSA backend's compat plugin (backend table,
src/backends/musa.c), planned first: it rewrites collection-time markers, so
nothing may read the item list before it.

Some FlagGems benchmarks guard themselves with
`@pytest.mark.skipif(not torch.cuda.is_available(), reason=...)` although the
code under test dispatches through flag_gems.device (the inputs are built on
it, the gems op is FlagGems' own Triton kernel, the torch baseline is plain
torch). On MThreads torch.cuda is unavailable and the guard turns a working
operator into "not measured": test_fft.py was skipped whole, and unskipped on
an S5000 it produced 25 rows.

Each override is pinned to one benchmark file and one exact skip reason
(OVERRIDES); a guard with any other reason, in any other file, or a condition
that is not a plain True stays. The plugin acts only when flag_gems has
dispatched to the mthreads vendor (its vendor_name, as flag_gems itself
decided it) on the musa backend (ZLB_BACKEND); otherwise it says it is
inactive and touches nothing. A pinned file collected without its guard is a
WARNING: upstream changed the file, and the pin should be looked at.

Left in place on purpose (their guard is true on MUSA for a reason):
test_top_k_per_row_prefill.py ("CUDA device required": its baseline is vLLM's
CUDA op), test_embedding_dense_backward.py (also requires
flag_gems.device == "cuda"), test_apply_repetition_penalties.py (vLLM custom
ops; mthreads is in its own unsupported list) and the flash-attention,
fp8 and DeepSeek-V4 files (CUDA-only baselines or capabilities). A guard
added here needs a device run that shows the test passing on MUSA.
"""

import os
import sys

import pytest

from . import _env, _io, _markers

NAME = "zlbench.compat_musa"
VENDOR = "mthreads"
BACKEND = "musa"

# (benchmark file, exact skip reason): guards written as
# `not torch.cuda.is_available()` where the test dispatches through
# flag_gems.device.
OVERRIDES = (
    ("test_fft.py", "CUDA is not available"),
    ("test_scaled_dot_product_attention_math.py", "CUDA is not available"),
)


def _vendor():
    """(vendor_name of the FlagGems package in this process, package name),
    or (None, name) when it is not imported."""
    pkg = _env.package() or "flag_gems"
    mod = sys.modules.get(pkg)
    if mod is None:
        return None, pkg
    return str(getattr(mod, "vendor_name", "") or "").lower() or None, pkg


def active():
    """(True, None) when the overrides apply here, else (False, why not)."""
    backend = _env.backend()
    if backend != BACKEND:
        return False, "backend %s, not %s" % (backend or "unknown", BACKEND)
    vendor, pkg = _vendor()
    if vendor is None:
        return False, "%s is not imported (or has no vendor_name)" % pkg
    if vendor != VENDOR:
        return False, "%s dispatched to vendor %s, not %s" % (pkg, vendor, VENDOR)
    return True, None


def _guard(mark, reason):
    """Is mark a skipif whose condition is a plain True and whose reason is
    exactly reason?"""
    if mark.name != "skipif" or mark.kwargs.get("reason") != reason:
        return False
    cond = mark.args[0] if mark.args else mark.kwargs.get("condition")
    return cond is True


def _drop(node, reason):
    """Remove node's own matching guards: (how many, whether a skipif with
    that reason was there at all, whatever its condition)."""
    present = any(m.name == "skipif" and m.kwargs.get("reason") == reason
                  for m in node.own_markers)
    keep = [m for m in node.own_markers if not _guard(m, reason)]
    n = len(node.own_markers) - len(keep)
    node.own_markers[:] = keep
    return n, present


def _item_file(item):
    path = getattr(item, "path", None) or getattr(item, "fspath", None)
    return os.path.basename(str(path)) if path is not None else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    if not _io.require(NAME):
        return
    ok, why = active()
    if not ok:
        _io.plugin(NAME, "inactive", why)
        return
    pins = dict(OVERRIDES)
    dropped, hit = 0, {}
    for item in items:
        base = _item_file(item)
        reason = pins.get(base)
        if reason is None:
            continue
        n, present = _drop(item, reason)
        module = item.getparent(pytest.Module)
        if module is not None:
            m, also = _drop(module, reason)    # a module-level pytestmark
            n, present = n + m, present or also
        hit[base] = hit.get(base, False) or present or n > 0
        if n:
            dropped += n
            _io.event(_markers.EVENT_COMPAT_UNSKIP, plugin=NAME, file=base, reason=reason,
                      nodeid=item.nodeid, guards=n)
    for base in sorted(b for b, found in hit.items() if not found):
        _io.warning(NAME, "the pinned skip guard of %s (reason %r) is not in the file any "
                    "more: upstream changed it; review the pin" % (base, pins[base]))
    _io.plugin(NAME, "ready", "vendor %s: %d skip guard(s) dropped (%s)" % (
        VENDOR, dropped, "; ".join("%s: %r" % kv for kv in OVERRIDES)))
