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

# The modes zlb's C side creates files and folders with (less the umask):
# Python's own defaults (0666, 0777) would make a run's files group- and
# world-writable under umask 000.
FILE_MODE = 0o644
DIR_MODE = 0o755


def makedirs(path):
    """mkdir -p with DIR_MODE at every level (os.makedirs gives the
    intermediate levels 0777 less the umask)."""
    path = os.path.abspath(path)
    if os.path.isdir(path):
        return
    makedirs(os.path.dirname(path))
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        if not os.path.isdir(path):
            raise


def open_append(path):
    """path for appending text, line-buffered; created FILE_MODE; never through a
    link planted under the name (O_NOFOLLOW)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                 FILE_MODE)
    return os.fdopen(fd, "a", buffering=1, encoding="utf-8")


def create_beside(path):
    """(fd, name) of a new file beside path for an atomic write: an unpredictable
    name created exclusively (O_EXCL also refuses a planted link), FILE_MODE, as
    the C side's write_file_atomic(); tempfile.mkstemp would give 0600."""
    for _ in range(64):
        tmp = "%s.tmp.%s" % (path, os.urandom(6).hex())
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW |
                         os.O_CLOEXEC, FILE_MODE)
        except FileExistsError:
            continue
        return fd, tmp
    raise FileExistsError("no free temporary name beside %s" % path)


def write_atomic(path, data):
    """bytes data to path: a temporary file beside it, fsync, rename."""
    fd, tmp = create_beside(path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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
        self.results = open_append(os.path.join(run_dir, RESULTS))
        self.events = open_append(os.path.join(run_dir, EVENTS))

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
