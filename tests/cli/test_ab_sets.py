"""zlb ab: several shape sets in one call (one A/B each, one table, one log),
SWITCH_ALLOW_NO_IR_DIFF=1, and switch names holding <VENDOR> (the compiler-
switch A/B, FLAGTREE_<VENDOR>_RLC_ENHANCE, with the vendor from the
backend). Against the fake FlagGems tree, as test_ab.py."""
import csv
import json
import os
import re
import subprocess

import pytest

QUICK = ["--dtypes", "float16"]


def ab(zlb, args, env=None):
    full = dict(zlb.env)
    for k, v in (env or {}).items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    proc = subprocess.run([zlb.bin, "ab", *map(str, args)], cwd=zlb.cwd, env=full,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=600)
    return proc.returncode, proc.stdout


def test_several_shape_sets_one_ab_each_one_table(zlb, shapes):
    s1 = shapes("softmax:\n  shapes:\n    - [64, 512]\n", name="trace-p1024.yaml")
    s2 = shapes("softmax:\n  shapes:\n    - [128, 256]\n    - [32, 32]\n",
                name="trace-p4096.yaml")
    rc, out = ab(zlb, ["softmax", "--axis", "FAKE_TRITON_BUILD=a,b", "--rounds", "1",
                       "--shape-set", s1, "--shape-set", s2, *QUICK])
    assert rc == 0, out
    (parent,) = sorted(zlb.runs.glob("ab_softmax_sets_*"))
    top = json.loads((parent / "ab_sets.json").read_text())
    assert top["kind"] == "zlb-ab-sets" and top["exit_code"] == 0
    assert [(s["name"], s["shape_file"], s["exit_code"], s["status"], s["paired"])
            for s in top["sets"]] == [("trace-p1024", str(s1), 0, "completed", 1),
                                      ("trace-p4096", str(s2), 0, "completed", 2)]
    for name, shapes_file, n in (("trace-p1024", s1, 1), ("trace-p4096", s2, 2)):
        d = parent / name
        j = json.loads((d / "ab.json").read_text())
        assert j["shape_set"] == str(shapes_file) and j["status"] == "completed"
        # Each set has its own recording, rounds and comparison.
        assert j["recording"].startswith(str(d / "R"))
        runs = [r["dir"] for r in j["runs"]]
        assert len(runs) == 3                     # R, A1, B1
        for run in runs:
            ident = json.loads(open(os.path.join(run, "run_identity.json")).read())
            assert ident["provenance"]["shape_source"] == str(shapes_file)
        cmp = json.loads((d / "compare.json").read_text())
        assert sum(1 for r in cmp["rows"] if r["paired"]) == n
    rows = list(csv.DictReader(open(parent / "compare_sets.csv")))
    assert [(r["set"], r["shape_detail"]) for r in rows] == [
        ("trace-p1024", "[torch.Size([64, 512]), 1]"),
        ("trace-p4096", "[torch.Size([128, 256]), 1]"),
        ("trace-p4096", "[torch.Size([32, 32]), 1]")]
    assert all(r["verdict"] and float(r["ratio"]) > 0 for r in rows)
    log = (parent / "ab.log").read_text()
    assert "\x1b" not in log
    assert re.search(r"^##### set 1/2 trace-p1024 ", log, re.M)
    assert re.search(r"^##### set trace-p4096: exit 0$", log, re.M)
    assert re.search(r"^##### all sets: gems B/A, paired rows of every set \(3\)$", log, re.M)
    # zlb ab's own narrative of each set is in the log, as on the terminal.
    assert log.count("IR after round 1") == 2
    assert "zlb ab: 2 sets, exit 0" in out


def test_a_set_that_stops_does_not_stop_the_next(zlb, shapes):
    good = shapes("softmax:\n  shapes:\n    - [64, 512]\n", name="good.yaml")
    rc, out = ab(zlb, ["softmax", "--axis", "ZL_DEAD=0,1", "--rounds", "1",
                       "--shape-set", good, "--shape-set", good, *QUICK])
    # The dead switch stops each set after round 1 (SWITCH_NO_IR_DIFF, 10).
    assert rc == 10, out
    (parent,) = sorted(zlb.runs.glob("ab_softmax_sets_*"))
    top = json.loads((parent / "ab_sets.json").read_text())
    assert [(s["name"], s["status"], s["exit_code"]) for s in top["sets"]] == [
        ("good", "no_ir_diff", 10), ("good-2", "no_ir_diff", 10)]


def test_shape_sets_bad_input(zlb, shapes):
    f = shapes("softmax:\n  shapes:\n    - [64, 512]\n")
    rc, out = ab(zlb, ["softmax", "--axis", "X_Y=0,1", "--shapes", f, "--shape-set", f])
    assert rc == 2 and "--shape-set gives each A/B its shape file; drop --shapes" in out
    rc, out = ab(zlb, ["softmax", "--axis", "X_Y=0,1", "--shape-set", "/nonexistent.yaml"])
    assert rc == 3 and "shape set /nonexistent.yaml" in out and "PREFLIGHT_FAILED" in out
    assert not zlb.runs.exists()


def test_switch_allow_no_ir_diff_env(zlb):
    rc, out = ab(zlb, ["softmax", "--axis", "ZL_DEAD=0,1", "--rounds", "1", *QUICK],
                 env={"SWITCH_ALLOW_NO_IR_DIFF": "1"})
    assert rc == 0, out
    assert "SWITCH_NO_IR_DIFF op=softmax" in out and "measuring anyway" in out
    (d,) = sorted(zlb.runs.glob("ab_softmax_*"))
    assert json.loads((d / "ab.json").read_text())["allow_no_ir_diff"] is True
    rc, out = ab(zlb, ["softmax", "--axis", "ZL_DEAD=0,1"],
                 env={"SWITCH_ALLOW_NO_IR_DIFF": "maybe"})
    assert rc == 2 and "SWITCH_ALLOW_NO_IR_DIFF=maybe: give 1" in out
    rc, out = ab(zlb, ["softmax", "--axis", "ZL_DEAD=0,1", "--rounds", "1", *QUICK],
                 env={"SWITCH_ALLOW_NO_IR_DIFF": "0"})
    assert rc == 10, out


def fakevendor():
    v = os.environ.get("ZLB_FAKEVENDOR")
    if not v or not os.path.exists(v):
        pytest.skip("ZLB_FAKEVENDOR is not set (run through ctest)")
    return v


@pytest.mark.parametrize("backend,switch", [
    ("cuda", "FLAGTREE_RLC_ENHANCE"),
    ("musa", "FLAGTREE_MUSA_RLC_ENHANCE"),
])
def test_compiler_switch_vendor_from_the_backend(zlb, backend, switch):
    env = {"ZL_BACKEND": backend}
    if backend == "musa":
        env["ZLB_LIBMUSA"] = fakevendor()
    rc, out = ab(zlb, ["softmax", "--axis", "FLAGTREE_<VENDOR>_RLC_ENHANCE=0,1", "--rounds",
                       "1", *QUICK], env=env)
    # The fake compiler has no such switch: the IR gate stops after round 1.
    assert rc == 10, out
    (d,) = sorted(zlb.runs.glob("ab_softmax_*"))
    j = json.loads((d / "ab.json").read_text())
    assert j["axis"] == switch + "=0,1"
    assert j["sides"]["A"]["env"] == {switch: "0"} and j["sides"]["B"]["env"] == {switch: "1"}
    assert f"{switch} is a FLAGTREE_* switch" in out
    for run in (r["dir"] for r in j["runs"]):
        ident = json.loads(open(os.path.join(run, "run_identity.json")).read())
        assert ident["caliber"]["backend"] == backend


def test_vendor_unknown_for_the_backend_is_refused(zlb):
    rc, out = ab(zlb, ["softmax", "--axis", "FLAGTREE_<VENDOR>_RLC_ENHANCE=0,1"],
                 env={"ZL_BACKEND": "ascend"})
    assert rc == 2, out
    assert "zlb does not know for ascend; write the switch's name out" in out
    assert not zlb.runs.exists()
