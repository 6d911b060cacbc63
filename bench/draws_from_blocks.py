#!/usr/bin/env python3
"""Copy batch directories made before placement_probe_draws existed, adding the
field from each measurement's recorded probe and reference blocks, so that
`zlb compare` can read them with the aligned placement model (bench/README.md,
issue 28). The runs' clocks of the reference blocks were not recorded, so no
probe is left out for its clock here (the engine does that itself now).

Usage: bench/draws_from_blocks.py SRC_BATCH DST_BATCH [SRC DST ...]
"""
import glob
import json
import math
import os
import shutil
import sys


def bracketed_draws(refs, probes):
    """The draws of the "bracketed" probe protocol these runs used (n + 1
    reference blocks, probe i timed between refs i and i + 1): ln(probe i)
    less the mean ln of its two references, None where a block has no time."""
    draws = []
    for i, ms in enumerate(probes):
        r0, r1 = (refs[i], refs[i + 1]) if i + 1 < len(refs) else (None, None)
        ok = all(v and v > 0 for v in (ms, r0, r1))
        draws.append(math.log(ms) - (math.log(r0) + math.log(r1)) / 2 if ok else None)
    return draws


def add_draws(meas):
    if not isinstance(meas, dict) or not meas.get("placement_probe_ms") \
            or not meas.get("placement_probe_ref_ms"):
        return
    meas["placement_probe_draws"] = bracketed_draws(meas["placement_probe_ref_ms"],
                                                    meas["placement_probe_ms"])


def main(argv):
    if len(argv) < 2 or len(argv) % 2:
        sys.exit(__doc__)
    for src, dst in zip(argv[0::2], argv[1::2]):
        if os.path.exists(dst):
            sys.exit("%s exists: give a new directory" % dst)
        shutil.copytree(src, dst, symlinks=True)
        for f in glob.glob(os.path.join(dst, "**", "results.jsonl"), recursive=True):
            if os.path.islink(f):
                continue
            lines = []
            for line in open(f):
                row = json.loads(line)
                for side in ("gems", "torch"):
                    add_draws(row.get(side))
                lines.append(json.dumps(row))
            with open(f, "w") as out:
                out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
