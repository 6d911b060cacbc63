"""What the probes in bench/ share: one command line, and the measuring done
in fresh worker processes (the script re-run with --worker), each printing
one JSON document on stdout."""

import argparse
import json
import subprocess
import sys
import time


def parser(doc, kernels, procs, m):
    """The probes' command line: --timer-lib, --procs, --m, --kernels, --out."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--timer-lib", required=True)
    p.add_argument("--procs", type=int, default=procs)
    p.add_argument("--m", type=int, default=m, help="measurements per mode and process")
    p.add_argument("--kernels", default=",".join(kernels))
    p.add_argument("--out")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return p


def run_workers(script, argv, procs):
    """Run script --worker argv in procs fresh processes, one after another;
    the JSON each printed, for those that succeeded (failures are reported)."""
    out = []
    for i in range(procs):
        t0 = time.time()
        r = subprocess.run([sys.executable, script, "--worker"] + list(argv),
                           capture_output=True, text=True)
        if r.returncode != 0:
            print("worker %d failed (rc %d): %s" % (i, r.returncode, r.stderr[-2000:]))
            continue
        out.append(json.loads(r.stdout))
        print("worker %d: %.1f s" % (i, time.time() - t0), flush=True)
    return out
