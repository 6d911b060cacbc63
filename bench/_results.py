"""What the bench/ scripts that read runs share: the row records of the
results.jsonl files under a batch or run directory."""

import glob
import json
import os
import sys


def rows_of(path):
    """The row records of one results.jsonl (a line that is not JSON is skipped)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("kind") == "row":
                yield rec


def rows_under(root):
    """The row records of every results.jsonl under root, file by file in
    sorted order."""
    for path in sorted(glob.glob(os.path.join(str(root), "**", "results.jsonl"),
                                 recursive=True)):
        yield from rows_of(path)


def rounds_or_exit(prog, dirs, read, why_three):
    """read(d) of each round directory, for a script that needs three or
    more rounds: exits with a sentence for fewer (why_three says why) or
    for a round that holds no measured row."""
    if len(dirs) < 3:
        sys.exit("%s: give three or more rounds (%s)" % (prog, why_three))
    rounds = []
    for d in dirs:
        got = read(d)
        if not got:
            sys.exit("%s: %s holds no measured rows (a batch or run directory with "
                     "results.jsonl)" % (prog, d))
        rounds.append(got)
    return rounds
