"""bench/kind_offsets.py: recordings against replays, row by row. Its figures
must be the logs of the centres the files hold, a row is marked only when the
kind moved it beyond the spread inside a kind, and directories without both
kinds end with exit 2 and a sentence."""
import json
import math
import subprocess
import sys

from conftest import REPO

TOOL = REPO / "bench" / "kind_offsets.py"


def write_run(root, name, kind, rows):
    """One directory holding a results.jsonl of rows (shape, gems centre us,
    gems probes us) measured as kind ("settled" or "replayed")."""
    d = root / name / "main" / "op"
    d.mkdir(parents=True)
    lines = [json.dumps({"schema_version": 1, "kind": "meta"})]
    for shape, centre_us, probes_us in rows:
        gems = {"centre_ms": centre_us / 1e3, "graph_shape": kind,
                "placement_probe_ms": [p / 1e3 for p in probes_us]}
        torch = {"centre_ms": 2 * centre_us / 1e3, "graph_shape": kind}
        lines.append(json.dumps({"kind": "row", "op_name": "op", "dtype": "torch.float16",
                                 "shape_detail": shape, "gems": gems, "torch": torch}))
    (d / "results.jsonl").write_text("\n".join(lines) + "\nnot json\n")
    return root / name


def run(*args):
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True,
                          text=True, timeout=60)


def test_the_kind_that_moved_a_row_is_marked(tmp_path):
    # [1]: recordings at 1327 and 1326, replays at 1318.5 and 1318 (probes
    # alike): the measured graph moved with the kind. [2]: the two kinds
    # interleave (100.0 / 100.4 against 100.1 / 100.3): no mark.
    dirs = [write_run(tmp_path, "A", "settled", [("[1]", 1327.0, [1328, 1322]),
                                                 ("[2]", 100.0, [100.1])]),
            write_run(tmp_path, "A2", "settled", [("[1]", 1326.0, [1327, 1321]),
                                                  ("[2]", 100.4, [100.5])]),
            write_run(tmp_path, "B", "replayed", [("[1]", 1318.5, [1328, 1325]),
                                                  ("[2]", 100.1, [100.2])]),
            write_run(tmp_path, "C", "replayed", [("[1]", 1318.0, [1328, 1324]),
                                                  ("[2]", 100.3, [100.3])])]
    r = run(*dirs, "--all")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    gems = {line.split()[3]: line for line in lines if line.startswith("gems")}
    offset = (math.log(1327.0) + math.log(1326.0) - math.log(1318.5) - math.log(1318.0)) / 2
    assert "offset %+.2f%%" % (100 * offset) in " ".join(gems["[1]"].split())
    assert gems["[1]"].endswith("<<") and not gems["[2]"].endswith("<<")
    assert "A 1327.000R A2 1326.000R B 1318.500P C 1318.000P" in gems["[1]"]
    # the probes' medians (1325, 1324 against 1326.5, 1326): -0.13%, not the centre's move
    probes = (math.log(1325) + math.log(1324) - math.log(1326.5) - math.log(1326)) / 2
    assert "probes %+.2f%%" % (100 * probes) in " ".join(gems["[1]"].split())
    # torch rows (twice the centre, no probes): the same offsets, no probe figure
    assert lines[-1] == "2 of 4 rows moved with the kind (|offset| > 2 x max(within, 0.1%))"
    # without --all only the marked rows are printed
    assert len(run(*dirs).stdout.splitlines()) == 3


def test_rows_under_min_us_are_left_out(tmp_path):
    dirs = [write_run(tmp_path, "A", "settled", [("[1]", 4.0, [])]),
            write_run(tmp_path, "B", "replayed", [("[1]", 4.4, [])])]
    r = run(*dirs, "--all")
    # the torch side (8 us) is compared, the gems side (4 us) is not
    assert r.returncode == 0 and [x.split()[0] for x in r.stdout.splitlines()[:-1]] == ["torch"]
    assert run(*dirs, "--min-us", "10").returncode == 2


def test_one_kind_only_says_so(tmp_path):
    dirs = [write_run(tmp_path, "B", "replayed", [("[1]", 10.0, [])]),
            write_run(tmp_path, "C", "replayed", [("[1]", 10.1, [])])]
    r = run(*dirs)
    assert r.returncode == 2
    assert "measured by both a recording" in r.stderr
    r = run(tmp_path / "missing")
    assert r.returncode != 0 and "is not a directory" in r.stderr
