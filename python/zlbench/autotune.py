"""zlbench.autotune: autotune record and replay (docs/protocol.md §7).

Two runs of the same code can differ by about 10% because autotuning chose
different configs; so side A records what its tuners chose and side B replays
it, leaving the compiler as the one difference.

ZLB_AUTOTUNE_MODE (default record), ZLB_REPLAY_FROM (replay only),
ZLB_BACKEND and ZLB_USE_FLAGTUNE are checked at configure: a value outside its
domain, or a recording made on another backend or with another USE_FLAGTUNE,
stops pytest with a usage error.

The tuners are those reachable from module globals of the FlagGems package
(ZLB_PACKAGE, else flag_gems / flaggems_vllm as imported): LibEntry objects
and Triton Autotuner / FlagGems LibTuner objects, followed through `.fn`.
They are looked for after collection (the benchmark modules have imported the
package by then) and again before each test's setup and call (modules
imported later); each is named "<module>:<attribute path>" plus its kernel
name, which another process running the same code finds again (_autotune.py).

- record (_autotune_record.py): after each test, and at the end of the
  session (or from an atexit handler when it dies), the configs chosen in this
  process are written to <run>/autotune_records/<op>.json and meta.json;
  AUTOTUNE_RECORDED {tuners, entries, unrecordable} once at the end.
- replay (_autotune_replay.py): the recording's configs are put in place
  before first use; each point that cannot be replayed prints
  `AUTOTUNE_REPLAY_FALLBACK reason=<r> kernel=<k>` and writes that event;
  AUTOTUNE_REPLAYED {injected, tuners} at the end. A replay run writes no
  autotune_records/.
"""

import atexit

import pytest

from . import _env, _io, _state

NAME = "zlbench.autotune"

_active = None          # the Recorder or Replayer of this session
_atexit_registered = False
_op = None


def _settings():
    mode = _env.autotune_mode()
    return {"mode": mode, "replay_from": _env.replay_from(), "backend": _env.backend(),
            "use_flagtune": _env.use_flagtune()}


def pytest_configure(config):
    global _active, _atexit_registered, _op
    if not _io.require(NAME):
        return
    try:
        s = _settings()
    except _env.EnvError as e:
        raise pytest.UsageError("%s: %s" % (NAME, e))
    if _active is not None:                 # configured twice in one process
        finish()
    _op = None
    if s["mode"] == "replay":
        from . import _autotune_replay

        try:
            meta, records = _autotune_replay.load(s["replay_from"], s["backend"],
                                                  s["use_flagtune"])
        except _autotune_replay.ReplayError as e:
            raise pytest.UsageError("%s: %s" % (NAME, e))
        _active = _autotune_replay.Replayer(s["replay_from"], meta, records)
    else:
        from . import _autotune_record

        _active = _autotune_record.Recorder(_io.sink().run_dir, s["backend"],
                                            s["use_flagtune"])
    if not _atexit_registered:
        atexit.register(at_exit)
        _atexit_registered = True
    _io.plugin(NAME, "ready", _active.describe())


def scan():
    """Find the tuners (again) and bind / watch the new ones."""
    if _active is None:
        return
    try:
        _active.scan()
    except Exception as e:  # bookkeeping must not break the benchmark
        tag = ("scan", type(e).__name__, str(e))
        if tag not in _state.said:
            _state.said.add(tag)
            _io.warning(NAME, "looking for tuners failed: %s: %s"
                        % (type(e).__name__, _io.one_line(e)))


def pytest_collection_finish(session):
    scan()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logstart(nodeid, location):
    if _active is not None:
        _state.nodeid = nodeid


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _note_op(item.nodeid)
    scan()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    scan()


def pytest_runtest_logfinish(nodeid, location):
    """Record: write what this test chose (a later crash keeps it)."""
    if _active is None or not hasattr(_active, "write"):
        return
    try:
        _active.write(op())
    except OSError as e:
        _io.warning(NAME, "cannot write %s: %s" % (_active.dir, e))


def pytest_unconfigure(config):
    finish()


def _note_op(nodeid):
    global _op
    if _op is None:
        name = (nodeid or "").split("::")[-1].split("[")[0]
        _op = name[5:] if name.startswith("test_") else (name or None)


def op():
    """The operator: ZLB_OP, else the first test's function name without test_."""
    return _env.op() or _op or "unknown"


def finish():
    """Record: final read-back, files and AUTOTUNE_RECORDED; replay:
    tuner_missing and AUTOTUNE_REPLAYED. Tuners are given back their run."""
    global _active
    cur = _active
    _active = None
    if cur is None:
        return
    if hasattr(cur, "write"):
        cur.finish(op())
    else:
        cur.finish()


def at_exit():
    """The session ended without pytest_unconfigure. Never raises."""
    try:
        finish()
    except Exception:
        pass
