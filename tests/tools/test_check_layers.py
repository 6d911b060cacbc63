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
            'backends/cuda_driver.h, backends/dlload.h, backends/nvml.h, lib/errbuf.h, '
            'lib/stats_dist.h)') in out
    assert "%s/: a room with no rule" % (src / "misc") in out
    assert out.rstrip().endswith("check_layers: 5 problems against the layering "
                                 "(docs/architecture.md)")


def test_usage(tmp_path):
    assert check(tmp_path / "nope").returncode == 2


def test_only_cli_prints_exits_or_sets_the_error_routine(tmp_path):
    src = tree(tmp_path / "src", {
        "cli/main.c": 'int main(void) { printf("hi\\n"); exit(0); }\n',
        "lib/error.c": "void set_error_routine(void *fn) {}\n",
        "lib/fine.c": ('/* printf(x) in a comment, exit(1) too */\n'
                       'static const char *s = "printf(\\"no\\") exit(2)";\n'
                       'int f(char *b) { snprintf(b, 4, "x"); fprintf(stderr, "y"); '
                       '_exit(127); }\n'),
        "batch/batch.c": 'void g(void)\n{\n\tprintf("done\\n");\n\tfflush(stdout);\n}\n',
        "ab/ab_run.c": "void h(void) { set_error_routine(0); exit(3); }\n",
    })
    r = check(src)
    assert r.returncode == 1
    out = r.stdout.splitlines()
    assert "%s:3: prints to stdout; only cli/ may" % (src / "batch" / "batch.c") in r.stdout
    assert "%s:4: writes to stdout" % (src / "batch" / "batch.c") in r.stdout
    assert "%s:1: exits" % (src / "ab" / "ab_run.c") in r.stdout
    assert "%s:1: sets the error routine" % (src / "ab" / "ab_run.c") in r.stdout
    assert not any("fine.c" in l or "cli/main.c" in l or "lib/error.c" in l for l in out)
    assert out[-1] == "check_layers: 4 problems against the layering (docs/architecture.md)"
