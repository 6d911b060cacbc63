"""Writing raw facts: results.jsonl rows, events.jsonl events, stdout markers.

One JSON object per line, appended, flushed line by line so that a crash of
the measured process loses at most the line being written. Every line carries
schema_version. Non-finite floats (JSON has none) are written as null, and
objects JSON cannot hold are written as their str().
"""

import json
import math
import os
import sys
import time

from . import SCHEMA_VERSION, _env, _markers, _state

RESULTS = "results.jsonl"
EVENTS = "events.jsonl"


def clean(obj):
    """obj with NaN/inf turned into None and foreign objects into str."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    return str(obj)


def dumps(obj):
    return json.dumps(clean(obj), allow_nan=False, ensure_ascii=False,
                      separators=(", ", ": "))


class Sink:
    """The two files of one run directory, opened for appending."""

    def __init__(self, run_dir):
        self.run_dir = run_dir
        self.results = open(os.path.join(run_dir, RESULTS), "a", buffering=1,
                            encoding="utf-8")
        self.events = open(os.path.join(run_dir, EVENTS), "a", buffering=1,
                           encoding="utf-8")

    @staticmethod
    def _write(f, obj):
        f.write(dumps(obj) + "\n")
        f.flush()

    def row(self, obj):
        line = {"schema_version": SCHEMA_VERSION}
        line.update(obj)
        self._write(self.results, line)

    def event(self, kind, /, **fields):
        line = {"schema_version": SCHEMA_VERSION, "ts": round(time.time(), 6),
                "event": kind}
        line.update(fields)
        self._write(self.events, line)

    def close(self):
        for f in (self.results, self.events):
            try:
                f.close()
            except OSError:
                pass


def sink():
    """The sink of $ZLB_RUN_DIR (opened on first use), or None without one.

    When ZLB_RUN_DIR changes (tests do that), the old files are closed and the
    new directory's opened. OSError propagates: a run directory zlb made and
    the plugins cannot write is not something to carry on quietly from.
    """
    run_dir = _env.run_dir()
    cur = _state.sink
    if cur is not None and cur.run_dir == run_dir:
        return cur
    if cur is not None:
        cur.close()
        _state.sink = None
    if run_dir is None:
        return None
    _state.sink = Sink(run_dir)
    return _state.sink


def active(plugin):
    """True when there is a run directory; otherwise say once, on stderr, that
    the zlbench plugins are inactive, and return False."""
    if _env.run_dir() is not None:
        return True
    if not _state.inactive_said:
        _state.inactive_said = True
        sys.stderr.write("zlbench: ZLB_RUN_DIR is not set: the zlbench plugins "
                         "(%s, ...) are inactive\n" % plugin)
        sys.stderr.flush()
    return False


def require(plugin):
    """For a plugin's pytest_configure: False when inactive (no run
    directory); True once the run directory's files are open. A run
    directory that cannot be written stops pytest with a usage error."""
    if not active(plugin):
        return False
    try:
        sink()
    except OSError as e:
        import pytest

        raise pytest.UsageError("%s: cannot write under ZLB_RUN_DIR=%s: %s"
                                % (plugin, _env.run_dir(), e))
    return True


def close():
    if _state.sink is not None:
        _state.sink.close()
        _state.sink = None


def event(kind, /, **fields):
    s = sink()
    if s is not None:
        s.event(kind, **fields)


def row(obj):
    s = sink()
    if s is not None:
        s.row(obj)


def warning(source, message, **fields):
    """A WARNING event: something the plugins noticed and did not act on."""
    event("WARNING", source=source, message=message, nodeid=_state.nodeid,
          **fields)


def plugin(name, status, detail):
    event(_markers.EVENT_PLUGIN, name=name, status=status, detail=detail)


def marker(line):
    """A marker line on stdout (run.log keeps it for grep)."""
    out = sys.stdout
    out.write(line + "\n")
    out.flush()


def first_line(exc):
    """An exception on one line: its first non-empty line, else its type's name."""
    for line in str(exc).splitlines():
        if line.strip():
            return one_line(line)
    return type(exc).__name__


def one_line(text, limit=400):
    """text on one line: whitespace runs collapsed, cut to limit characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
