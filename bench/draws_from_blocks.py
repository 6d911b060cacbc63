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
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from zlbench import _graph  # noqa: E402


def add_draws(meas):
    if not isinstance(meas, dict) or not meas.get("placement_probe_ms") \
            or not meas.get("placement_probe_ref_ms"):
        return
    refs = [(v, None) for v in meas["placement_probe_ref_ms"]]
    mhz = meas.get("placement_probe_mhz") or [None] * len(meas["placement_probe_ms"])
    meas["placement_probe_draws"] = _graph.probe_draws(
        refs, list(zip(meas["placement_probe_ms"], mhz)), 0.0)[0]


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
