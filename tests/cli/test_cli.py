"""What every zlb command does the same way: help made from its option table,
-h/--help/-V/--version, one error prefix and one hint line, the bash
completion (sourced in bash and asked, as bash asks it) and the man page
made from the same tables, and `make install`'s files."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

COMMANDS = ["run", "ir", "compare", "ab", "inventory", "batch", "summary", "report", "task",
            "help", "version", "completion"]
# commands with an option table of their own
WITH_OPTIONS = ["run", "compare", "ab", "inventory", "batch", "summary", "report", "ir diff",
                "help"]


def test_version_everywhere(zlb):
    for args in (["-V"], ["--version"], ["version"], ["run", "--version"], ["compare", "-V"],
                 ["ab", "-V"], ["batch", "--version"], ["summary", "-V"], ["inventory", "-V"],
                 ["ir", "-V"], ["ir", "diff", "--version"], ["help", "-V"],
                 ["completion", "-V"], ["report", "-V"], ["task", "-V"]):
        r = zlb.cmd(*args)
        assert r.rc == 0 and re.fullmatch(r"zlb \d+\.\d+\.\d+\n", r.out), (args, r)


@pytest.mark.parametrize("cmd", COMMANDS)
def test_help_is_made_from_the_table(zlb, cmd):
    for flag in ("--help", "-h"):
        r = zlb.cmd(*cmd.split(), flag)
        assert r.rc == 0, r
        assert r.out.startswith(f"usage: zlb {cmd}"), r.out
        assert "\noptions:\n" in r.out and "  -h, --help\n" in r.out
        assert "  -V, --version\n" in r.out and "\nexit codes:\n" in r.out
        assert r.err == ""
    # zlb help CMD says the same
    assert zlb.cmd("help", cmd).out == r.out


def test_unknown_command_and_bare_zlb(zlb):
    r = zlb.cmd("frob")
    assert r.rc == 2 and r.err == ("zlb: 'frob' is not a zlb command\n"
                                   "       (zlb --help lists the commands)\n"), r
    r = zlb.cmd()
    assert r.rc == 2 and "usage: zlb <command>" in r.err
    r = zlb.cmd("--help")
    assert r.rc == 0 and all(re.search(rf"^  {c} ", r.out, re.M) for c in COMMANDS), r
    r = zlb.cmd("help", "frob")
    assert r.rc == 2 and "'frob' is not a zlb command" in r.err


@pytest.mark.parametrize("cmd", WITH_OPTIONS)
def test_one_prefix_and_one_hint(zlb, cmd, tmp_path):
    args = cmd.split() + (["a", "b"] if cmd == "ir diff" else []) + ["--bogus"]
    r = zlb.cmd(*args)
    assert r.rc == 2, r
    lines = r.err.splitlines()
    assert lines[0].startswith(f"zlb {cmd}: unknown option '--bogus'"), r
    assert lines[1:] == [f"       (zlb {cmd} --help shows the usage)"], r
    assert "error:" not in r.err and "see --help" not in r.err


def test_a_typo_names_the_option_meant(zlb):
    r = zlb.cmd("run", "--warmpu", "5")
    assert "unknown option '--warmpu'; did you mean --warmup?" in r.err, r
    r = zlb.cmd("batch", "--ops", "x", "--isolaton", "worker")
    assert "did you mean --isolation?" in r.err, r
    r = zlb.cmd("ab", "softmax", "--rouns", "2")
    assert "did you mean --rounds?" in r.err, r


# ---- bash completion -------------------------------------------------------------------

@pytest.fixture
def complete(zlb, tmp_path):
    """Ask the generated script what bash would offer after `words` (the last is being typed)."""
    bash = shutil.which("bash")
    if not bash:
        pytest.skip("no bash")
    r = zlb.cmd("completion", "bash")
    assert r.rc == 0, r
    script = tmp_path / "zlb.bash"
    script.write_text(r.out)
    (tmp_path / "rundir").mkdir()
    (tmp_path / "afile").write_text("")

    def ask(*words):
        words = ["zlb", *words]
        quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
        prog = (f"source '{script}'\n"
                f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}\n"
                "_zlb\n"
                'printf "%s\\n" "${COMPREPLY[@]}"\n')
        p = subprocess.run([bash, "--norc", "--noprofile", "-c", prog], cwd=tmp_path,
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, p.stderr
        assert p.stderr == "", p.stderr
        return sorted(l for l in p.stdout.splitlines() if l)
    return ask


def test_completion_commands_and_sub_commands(complete):
    assert complete("") == sorted(COMMANDS + ["-h", "--help", "-V", "--version"])
    assert complete("co") == ["compare", "completion"]
    assert complete("ir", "") == sorted(["layout", "diff", "fingerprint", "-h", "--help", "-V",
                                         "--version"])
    assert complete("help", "su") == ["summary"]
    assert complete("completion", "") == ["-h", "--help", "-V", "--version", "bash"] or \
        "bash" in complete("completion", "")


def test_completion_options_and_values(complete):
    assert complete("compare", "--for") == ["--format"]
    assert complete("compare", "--format", "") == ["csv", "json", "md", "table"]
    assert complete("compare", "--sort", "") == ["name", "q", "ratio"]
    # "--name=value", split at '=' as bash does by default
    assert complete("compare", "--format", "=", "j") == ["json"]
    assert complete("compare", "--out", "r") == ["rundir"]          # a directory
    assert complete("report", "-o", "af") == ["afile"]              # a short option's file
    assert complete("compare", "--junit", "af") == ["afile"]        # a file
    assert complete("compare", "--threshold", "") == []             # a number
    assert complete("ir", "diff", "--stage", "p") == ["ptx"]
    assert complete("ir", "diff", "--st") == ["--stage", "--stat"]
    run = complete("run", "-")
    assert {"-q", "-v", "--quiet", "--verbose", "--level", "-h", "-V"} <= set(run)
    assert complete("run", "--level", "") == ["comprehensive", "core"]
    # zlb batch and zlb ab take zlb run's options too
    assert complete("batch", "--isol") == ["--isolate-tuner-cache", "--isolation"]
    assert complete("batch", "--timer", "") == ["auto", "direct", "graph"]
    assert complete("ab", "--a-") == ["--a-env", "--a-flaggems-dir", "--a-python"]
    # a positional: files and directories
    assert "rundir" in complete("compare", "r")


def test_completion_knows_every_option_the_help_lists(zlb, complete):
    for cmd in ("run", "compare", "ab", "batch", "summary", "inventory", "report", "ir diff"):
        shown = set(re.findall(r"^  (?:-\w, )?(--[\w-]+)", zlb.cmd(*cmd.split(), "--help").out,
                               re.M))
        assert shown and shown <= set(complete(*cmd.split(), "--")), cmd


# ---- the man page ------------------------------------------------------------------------

def build_dir():
    return Path(os.environ["ZLB_BIN"]).parent


def test_man_page_is_built_from_the_tables(zlb, tmp_path):
    page = build_dir() / "zlb.1"
    assert page.is_file(), "the build makes build/zlb.1"
    r = zlb.cmd("help", "--man")
    assert r.rc == 0 and r.out == page.read_text()
    text = r.out
    for cmd in COMMANDS:
        assert f'.SS "zlb {cmd}"' in text, cmd
    assert '.SS "zlb ir diff"' in text and '.SS "zlb completion bash"' in text
    assert "\\fB\\-\\-only\\-changed\\fR" in text and "\\fB\\-q\\fR, \\fB\\-\\-quiet\\fR" in text
    groff = shutil.which("groff")
    if not groff:
        pytest.skip("no groff (Debian's groff-base)")
    p = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", str(page)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    p = subprocess.run([groff, "-man", "-Tascii", str(page)], capture_output=True, text=True,
                       timeout=60, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    shown = re.sub(".\b", "", p.stdout)         # no overstrike (bold) left
    assert "zlb compare" in shown and "--format FORMAT" in shown, shown


def test_make_install_puts_the_man_page_and_the_completion(tmp_path):
    cmake = shutil.which("cmake")
    if not cmake:
        pytest.skip("no cmake")
    prefix = tmp_path / "prefix"
    p = subprocess.run([cmake, "--install", str(build_dir()), "--prefix", str(prefix)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    for rel in ("bin/zlb", "share/man/man1/zlb.1", "share/bash-completion/completions/zlb",
                "lib/zlbench/libzlbtimer.so", "share/zlbench/python/zlbench/__init__.py"):
        assert (prefix / rel).is_file(), rel
    assert "complete -o filenames -F _zlb zlb" in \
        (prefix / "share/bash-completion/completions/zlb").read_text()
    r = subprocess.run([str(prefix / "bin/zlb"), "-V"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("zlb ")
