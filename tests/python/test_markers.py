"""The marker and event names C reads (src/rundir/markers.h) and the ones
the plugins write (zlbench._markers) are the same set with the same values,
and no plugin module spells one out instead of naming the constant."""

import os
import re

from conftest import PYDIR, REPO
from zlbench import _markers

HEADER = os.path.join(REPO, "src", "rundir", "markers.h")
DEFINE = re.compile(r'^#define\s+((?:MARKER|EVENT)_[A-Z0-9_]+)\s+"([^"]+)"', re.M)


def c_names():
    with open(HEADER, encoding="utf-8") as f:
        return dict(DEFINE.findall(f.read()))


def py_names():
    return {k: v for k, v in vars(_markers).items() if k.startswith(("MARKER_", "EVENT_"))}


def test_c_and_python_say_the_same():
    c, py = c_names(), py_names()
    assert len(c) >= 14
    assert c == py


def test_no_plugin_spells_a_name_out():
    values = set(c_names().values())
    found = []
    pkg = os.path.join(PYDIR, "zlbench")
    for f in sorted(os.listdir(pkg)):
        if not f.endswith(".py") or f == "_markers.py":
            continue
        with open(os.path.join(pkg, f), encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                for v in re.findall(r'"([A-Z][A-Z0-9_]+)"', line):
                    if v in values:
                        found.append("%s:%d: %s" % (f, n, v))
    assert not found, found


def test_no_c_file_spells_a_name_out():
    values = set(c_names().values())
    found = []
    for dp, _, files in os.walk(os.path.join(REPO, "src")):
        for f in sorted(files):
            p = os.path.join(dp, f)
            if not f.endswith((".c", ".h")) or p == HEADER:
                continue
            with open(p, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    for v in re.findall(r'"([A-Z][A-Z0-9_]+)"', line):
                        if v in values:
                            found.append("%s:%d: %s" % (os.path.relpath(p, REPO), n, v))
    assert not found, found
