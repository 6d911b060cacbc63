"""tools/check_layers.py on small trees: a downward include passes, an
upward one, a bare one and a room without a rule fail, naming file and line."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(REPO, "tools", "check_layers.py")


def tree(root, files):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def check(src):
    return subprocess.run([sys.executable, TOOL, str(src)], capture_output=True, text=True)


def test_downward_includes_pass(tmp_path):
    src = tree(tmp_path / "src", {
        "lib/strbuf.h": "#include <stdio.h>\n",
        "rundir/identity.c": '#include "lib/strbuf.h"\n#include "rundir/identity.h"\n',
        "compare/compare.c": '#include "rundir/identity.h"\n',
        "cli/main.c": '#include "compare/compare.h"\n#include "ab/ab.h"\n',
        "timer/zlbtimer.c": '#include "backends/cuda_driver.h"\n#include "lib/stats_dist.h"\n',
    })
    r = check(src)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == ""


def test_upward_bare_and_unruled_fail(tmp_path):
    src = tree(tmp_path / "src", {
        "lib/paths.c": '#include "lib/strbuf.h"\n\n#include "run/runner.h"\n',
        "compare/compare.c": '#include "ab/ab.h"\n',
        "run/tee.c": '#include "table.h"\n',
        "timer/zlbtimer.c": '#include "lib/strbuf.h"\n',
        "misc/x.c": "",
    })
    r = check(src)
    assert r.returncode == 1
    out = r.stdout
    assert '%s:3: lib/ may not include "run/runner.h" (lib/ may include: lib)' % (
        src / "lib" / "paths.c") in out
    assert '%s:1: compare/ may not include "ab/ab.h"' % (src / "compare" / "compare.c") in out
    assert '%s:1: #include "table.h" does not name its room' % (src / "run" / "tee.c") in out
    assert ('timer/ may not include "lib/strbuf.h" (timer/ may include: timer, '
            'backends/cuda_driver.h, backends/dlload.h, backends/nvml.h, lib/stats_dist.h)') in out
    assert "%s/: a room with no rule" % (src / "misc") in out
    assert out.rstrip().endswith("check_layers: 5 includes against the layering "
                                 "(docs/architecture.md)")


def test_usage(tmp_path):
    assert check(tmp_path / "nope").returncode == 2
