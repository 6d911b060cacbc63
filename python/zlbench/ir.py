"""zlbench.ir: IR capture (docs/protocol.md §6). Observes and copies; C names,
indexes, diffs and fingerprints.

Active when ZLB_IR=1 and ZLB_RUN_DIR is set (ZLB_IR unset, empty or 0: a
PLUGIN "inactive" event says so; any other value stops pytest with a usage
error, like every other ZLB_* variable outside its domain). It also needs a
Triton with knobs.compilation.listener (3.4 and later); an older one, or none
at all, makes the plugin inactive with the reason in a PLUGIN event.

While active (see _ircap.Capture):

- <run>/ir/compiles.jsonl: one line per compile-listener call, chained in
  front of any listener already set;
- the timing plugin's first eager call of each torch/gems measurement runs
  with a launch hook on knobs.runtime.launch_enter_hook (removed before
  warm-up and timing); its launches become the measurement's "launches";
- at pytest_unconfigure, and from an atexit handler when the session ends
  without reaching it (an exception out of pytest, a CUDA error), the stage
  files of every variant launched in such a call are copied to
  <run>/ir/files/<hash>/<name>.<stage> and listed in <run>/ir/staged.jsonl.
  Both are idempotent; sweep losers (never launched there) are not copied.
"""

import atexit
import importlib
import os

import pytest

from . import _env, _io, _ircap, _state

NAME = "zlbench.ir"

_capture = None
_atexit_registered = False


def wanted():
    """ZLB_IR: True for "1", False unset/empty/"0"; EnvError otherwise."""
    raw = os.environ.get("ZLB_IR")
    if raw is None or raw.strip() in ("", "0"):
        return False
    if raw.strip() == "1":
        return True
    raise _env.EnvError("ZLB_IR=%r is neither '1' nor '0'" % raw)


def find_knobs():
    """(triton.knobs, None) when it has a compile listener, else (None, why)."""
    try:
        import triton
    except Exception as e:
        return None, "triton cannot be imported (%s): no IR capture" % _io.one_line(e)
    version = getattr(triton, "__version__", "?")
    knobs = getattr(triton, "knobs", None)
    if knobs is None:
        try:
            knobs = importlib.import_module("triton.knobs")
        except Exception:
            knobs = None
    if knobs is None:
        return None, ("triton %s has no triton.knobs (it predates the compile listener): "
                      "no IR capture" % version)
    comp = getattr(knobs, "compilation", None)
    if comp is None or not hasattr(comp, "listener"):
        return None, "triton %s has no knobs.compilation.listener: no IR capture" % version
    return knobs, None


def pytest_configure(config):
    global _capture, _atexit_registered
    if not _io.require(NAME):
        return
    try:
        on = wanted()
    except _env.EnvError as e:
        raise pytest.UsageError("%s: %s" % (NAME, e))
    if not on:
        _io.plugin(NAME, "inactive", "ZLB_IR is not 1: no IR capture")
        return
    knobs, why = find_knobs()
    if knobs is None:
        _io.plugin(NAME, "inactive", why)
        return
    if _capture is not None:              # configured twice in one process
        _capture.finish()
        _capture = None
    try:
        cap = _ircap.Capture(_io.sink().run_dir, knobs)
    except OSError as e:
        raise pytest.UsageError("%s: cannot write under %s: %s"
                                % (NAME, os.path.join(_env.run_dir(), "ir"), e))
    cap.install()
    _capture = cap
    _state.ir = cap
    _state.ir_during = None
    _state.ir_launches = None
    if not _atexit_registered:
        atexit.register(at_exit)
        _atexit_registered = True
    _io.plugin(NAME, "ready", cap.describe())


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logstart(nodeid, location):
    if _capture is None:
        return
    _state.nodeid = nodeid
    _state.ir_during = None
    _state.ir_launches = None


def pytest_unconfigure(config):
    finish()


def finish():
    """Stage the launched variants, take the hooks off, forget the capture."""
    global _capture
    cap = _capture
    _capture = None
    if _state.ir is cap:
        _state.ir = None
    _state.ir_during = None
    _state.ir_launches = None
    if cap is not None:
        cap.finish()


def at_exit():
    """The session ended without pytest_unconfigure: stage what was launched.
    Never raises (the interpreter is going away)."""
    try:
        finish()
    except Exception:
        pass
