#!/usr/bin/env python3
"""The layering check: every zlb header a file includes must come from its
own room or a room below it (docs/architecture.md), and only cli/ writes to
stdout, exits or sets the error routine. Arrows only go down; a wrong
include or a library that prints fails CI with the file, the line and the
rule.

    tools/check_layers.py [SRC_DIR]      exit 0: clean, 1: violations, 2: usage

Rooms not in RULES (a new folder) are a violation until given a rule here,
so the layering is decided when a room is made, not found out later.
"""

import os
import re
import sys

# room -> the rooms its files may include (besides their own). Top to bottom.
RULES = {
    "cli":       {"report", "ab", "batch", "compare", "run", "ir", "rundir", "providers",
                  "backends", "executors", "lib"},
    # Reports read what the rooms below wrote (an A/B, a batch's summary, runs).
    "report":    {"ab", "batch", "compare", "ir", "rundir", "lib"},
    "ab":        {"compare", "run", "ir", "rundir", "lib"},
    "batch":     {"rundir", "providers", "executors", "lib"},
    "compare":   {"rundir", "lib"},
    "run":       {"ir", "rundir", "providers", "backends", "lib"},
    "ir":        {"rundir", "lib"},
    "rundir":    {"lib"},
    "providers": {"lib"},
    "backends":  {"lib"},
    "executors": {"lib"},
    "lib":       set(),
    # The engine is loaded into the measured process: it takes only the
    # driver tables and two libc-only leaves (pure math, messages into a
    # caller's buffer), named one by one.
    "timer":     set(),
}
# Headers a room may include one by one, outside its rules.
LEAVES = {
    "timer": {"backends/cuda_driver.h", "backends/nvml.h", "backends/dlload.h",
              "lib/stats_dist.h", "lib/errbuf.h"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

# Only cli/ writes to stdout, exits or sets the error routine; library code
# returns errors and tells a reporter (lib/reporter.h). What each pattern
# catches, and the one file allowed to (the error routine's own home).
CLI_ONLY = [
    (re.compile(r"\bstdout\b"), "writes to stdout"),
    (re.compile(r"(?<![\w])(printf|puts|putchar)\s*\("), "prints to stdout"),
    (re.compile(r"(?<![\w])exit\s*\("), "exits"),
    (re.compile(r"(?<![\w])set_error_routine\s*\("), "sets the error routine"),
]
CLI_ONLY_ALLOWED = {"lib/error.c": {"sets the error routine"}, "lib/error.h": {"sets the error routine"}}
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\])*\"", re.S)


def check(src):
    problems = []
    for room in sorted(os.listdir(src)):
        top = os.path.join(src, room)
        if not os.path.isdir(top):
            continue
        if room not in RULES:
            problems.append("%s/: a room with no rule in tools/check_layers.py RULES" % top)
            continue
        for dp, _, files in os.walk(top):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(dp, f)
                if room != "cli":
                    problems.extend(cli_only(src, path))
                with open(path, encoding="utf-8") as fh:
                    for lineno, line in enumerate(fh, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        if "/" not in target:
                            problems.append("%s:%d: #include \"%s\" does not name its room "
                                            "(write \"<room>/%s\")" % (path, lineno, target,
                                                                       target))
                            continue
                        to = target.split("/", 1)[0]
                        if to == room or to in RULES[room] or target in LEAVES.get(room, ()):
                            continue
                        allowed = sorted(RULES[room] | {room}) + sorted(LEAVES.get(room, ()))
                        problems.append("%s:%d: %s/ may not include \"%s\" (%s/ may include: "
                                        "%s)" % (path, lineno, room, target, room,
                                                 ", ".join(allowed)))
    return problems


def cli_only(src, path):
    """What a file outside cli/ does that only cli/ may (comments and string
    literals left out)."""
    rel = os.path.relpath(path, src)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    # blank what is not code, keeping the line breaks for line numbers
    code = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    out = []
    for pattern, what in CLI_ONLY:
        if what in CLI_ONLY_ALLOWED.get(rel, ()):
            continue
        for m in pattern.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            out.append("%s:%d: %s; only cli/ may (library code returns errors and "
                       "tells a reporter, lib/reporter.h)" % (path, line, what))
    return out


def main(argv):
    if len(argv) > 2:
        sys.stderr.write("usage: check_layers.py [SRC_DIR]\n")
        return 2
    src = argv[1] if len(argv) == 2 else os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    if not os.path.isdir(src):
        sys.stderr.write("check_layers.py: %s is not a directory\n" % src)
        return 2
    problems = check(src)
    for p in problems:
        print(p)
    if problems:
        print("check_layers: %d problem%s against the layering (docs/architecture.md)" % (
            len(problems), "" if len(problems) == 1 else "s"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
