"""`zlb ab` end to end on the fake FlagGems checkout.

Each round is a real `zlb run` child against tests/fake_flaggems with the stub
torch/triton: FAKE_TRITON_BUILD=<tag> stands for another compiler build (other
IR), FAKE_TUNE_BIAS=1 makes live tuning pick other configs, FAKE_CRASH and
FAKE_HANG make a round die or hang. Stub latencies are deterministic, so A and
B measure the same times: no row may come out SLOWER or FASTER.
"""
import json
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import FAKE_MAIN

QUICK = ["--dtypes", "float16"]


class Ab:
    """One `zlb ab` (stdout and stderr merged, in the order written)."""

    def __init__(self, zlb, args, env=None, timeout=300):
        full = dict(zlb.env)
        full.update({k: v for k, v in (env or {}).items() if v is not None})
        for k, v in (env or {}).items():
            if v is None:
                full.pop(k, None)
        proc = subprocess.run([zlb.bin, "ab", *map(str, args)], cwd=zlb.cwd, env=full,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout)
        self.rc = proc.returncode
        self.out = proc.stdout
        self.zlb = zlb
        dirs = sorted(zlb.runs.glob("ab_*")) if zlb.runs.exists() else []
        self.dir = dirs[-1] if dirs else None
        path = self.dir / "ab.json" if self.dir else None
        self.json = json.loads(path.read_text()) if path and path.exists() else None

    def runs(self, side):
        """Run directories of side, by round: {1: path, 2: path}."""
        found = {}
        for r in sorted((self.dir / side).glob("r*")):
            dirs = [d for d in r.iterdir() if d.is_dir()]
            assert len(dirs) == 1, dirs
            found[int(r.name[1:])] = dirs[0]
        return found

    def recording(self):
        """The recording R's run directory (not a round of either side)."""
        (run,) = [d for d in (self.dir / "R").iterdir() if d.is_dir()]
        return run

    def identity(self, run):
        return json.loads((run / "run_identity.json").read_text())

    def __str__(self):
        return f"rc={self.rc}\n{self.out}"

    __repr__ = __str__


def fingerprint(zlb, run):
    r = zlb.cmd("ir", "fingerprint", str(run))
    assert r.rc == 0, r
    return r.out.split("\t")[1]


def index_configs(run):
    """(shape, kernel, num_warps, num_stages, constexprs) of every launched variant."""
    lines = (run / "ttgir" / "index.tsv").read_text().splitlines()
    head = lines[0].split("\t")
    rows = [dict(zip(head, l.split("\t"))) for l in lines[1:]]
    return sorted((r["shape"], r["kernel"], r["num_warps"], r["num_stages"], r["constexprs"])
                  for r in rows if r["sweep_loser"] == "no")


# ---- the IR gate -----------------------------------------------------------------------

def test_dead_axis_warns_and_stops_after_round_one(zlb):
    r = Ab(zlb, ["softmax", "--axis", "ZL_DEAD=0,1", *QUICK])
    assert r.rc == 10, r
    # The name check comes before anything runs.
    warning = f"the switch ZL_DEAD appears nowhere in {FAKE_MAIN}/src"
    assert warning in r.out, r
    assert "if it was renamed or removed upstream, both sides run the same code" in r.out
    assert r.out.index(warning) < r.out.index("=== zlb ab: the recording R")
    assert r.out.index("=== zlb ab: the recording R") < r.out.index("=== zlb ab: round 1/3, side A")
    # Round 1 ran (A then B), then the gate stopped it: two runs, no round 2, no compare.
    a, b = r.runs("A"), r.runs("B")
    assert list(a) == [1] and list(b) == [1], r
    m = re.search(r"^SWITCH_NO_IR_DIFF op=softmax axis=ZL_DEAD=0,1 fingerprint=([0-9a-f]{16})$",
                  r.out, re.M)
    assert m, r
    assert fingerprint(zlb, a[1]) == fingerprint(zlb, b[1]) == m.group(1)
    assert "byte-identical IR (21 stage files)" in r.out
    assert "--allow-no-ir-diff" in r.out
    assert not (r.dir / "compare.json").exists()
    j = r.json
    assert j["schema_version"] == 3 and j["kind"] == "zlb-ab"
    assert j["calibrate"] is False
    assert j["status"] == "no_ir_diff" and j["exit_code"] == 10
    assert j["rounds"] == 3 and j["rounds_done"] == 1
    assert j["axis"] == "ZL_DEAD=0,1"
    assert j["sides"]["A"]["env"] == {"ZL_DEAD": "0"}
    assert j["sides"]["B"]["env"] == {"ZL_DEAD": "1"}
    assert j["ir"]["verdict"] == "identical" and j["ir"]["same"] == 21
    assert j["ir"]["A"]["fingerprint"] == j["ir"]["B"]["fingerprint"] == m.group(1)
    assert j["switch_check"] == [{"name": "ZL_DEAD", "searched": f"{FAKE_MAIN}/src",
                                  "found": False, "where": None,
                                  "files": j["switch_check"][0]["files"], "skipped": None}]
    assert [(x["side"], x["round"], x["dir"], x["exit_code"]) for x in j["runs"]] == \
        [("R", 0, str(r.recording()), 0), ("A", 1, str(a[1]), 0), ("B", 1, str(b[1]), 0)]
    assert j["order"] == ["R", "A1", "B1", "A2", "B2", "A3", "B3"]
    assert j["compare"] is None


def test_calibrate_reads_s_in_the_recording_alone_and_compares_with_it(zlb):
    # R reads each hot row's clock elasticity; the rounds do not, and the
    # comparison takes R's. Under the fake driver no burn moves a clock, so
    # R reads none: the comparison says so and goes on without it.
    r = Ab(zlb, ["softmax", "--axis", "ZL_DEAD=0,1", "--rounds", "1", "--allow-no-ir-diff",
                 "--calibrate", *QUICK])
    assert r.rc == 0, r
    assert r.json["calibrate"] is True
    assert "calibration: R also reads each hot row's clock elasticity" in r.out
    rec = r.identity(r.recording())
    assert rec["caliber"]["clock_elasticity"] is True
    for run in (r.runs("A")[1], r.runs("B")[1]):
        assert r.identity(run)["caliber"]["clock_elasticity"] is False, run
    # R's rows ran the phase (its record's keys are there, s or its reason)
    rows = [json.loads(l) for l in (r.recording() / "results.jsonl").read_text().splitlines()]
    rows = [x for x in rows if x.get("kind") == "row"]
    assert rows and all("clock_elasticity_why" in x["gems"] for x in rows)
    assert f"clock elasticity: {r.recording()} read none" in r.out, r
    assert r.json["compare"]["exit_code"] == 0


def test_dead_axis_allowed_runs_every_round_and_compares(zlb):
    r = Ab(zlb, ["softmax", "--axis", "ZL_DEAD=0,1", "--rounds", "2", "--allow-no-ir-diff",
                 *QUICK])
    assert r.rc == 0, r
    assert "SWITCH_NO_IR_DIFF op=softmax" in r.out and "measuring anyway" in r.out
    a, b = r.runs("A"), r.runs("B")
    assert list(a) == [1, 2] and list(b) == [1, 2]
    # The recording first, then interleaved: R A1 B1 A2 B2.
    assert [(x["side"], x["round"]) for x in r.json["runs"]] == \
        [("R", 0), ("A", 1), ("B", 1), ("A", 2), ("B", 2)]
    # R records on its own tuner cache; every compared round replays R.
    rec_dir = r.recording()
    rec = r.identity(rec_dir)
    assert rec["caliber"]["autotune_mode"] == "record"
    assert rec["provenance"]["replay_from"] is None
    assert (rec_dir / "autotune_records").is_dir()
    for run in (a[1], b[1], a[2], b[2]):
        ident = r.identity(run)
        assert ident["caliber"]["autotune_mode"] == "replay", run
        assert ident["provenance"]["replay_from"] == str(rec_dir)
        assert not (run / "autotune_records").exists()
    for run in (rec_dir, a[1], a[2], b[1], b[2]):
        assert r.identity(run)["caliber"]["tuner_cache"] == "isolated"
        assert r.identity(run)["status"] == "completed"
    assert r.json["recording"] == str(rec_dir)
    # One compare over all rounds, written into the ab directory.
    cmp = json.loads((r.dir / "compare.json").read_text())
    assert sorted(x["dir"] for x in cmp["a"]["runs"]) == sorted(map(str, (a[1], a[2])))
    assert sorted(x["dir"] for x in cmp["b"]["runs"]) == sorted(map(str, (b[1], b[2])))
    assert cmp["caliber"]["ok"]
    # two replays a side of one recording: nothing to warn about its source
    assert cmp["warnings"] == [], cmp["warnings"]
    paired = [x for x in cmp["rows"] if x["paired"]]
    assert len(paired) == 3
    verdicts = {x["gems"]["verdict"] for x in paired}
    assert verdicts <= {"SAME", "UNSURE"} and "SAME" in verdicts, verdicts
    assert all(x["gems"]["rounds_a"] == 2 and x["gems"]["rounds_b"] == 2 for x in paired)
    assert (r.dir / "compare.csv").exists()
    assert "result: no significant regression" in r.out
    assert "SLOWER  " not in r.out.split("=== zlb ab: compare")[1]
    j = r.json
    assert j["status"] == "completed" and j["exit_code"] == 0 and j["rounds_done"] == 2
    assert j["ir"]["allowed"] is True
    assert j["compare"]["exit_code"] == 0 and j["compare"]["paired"] == 3
    assert j["compare"]["gems"]["SLOWER"] == j["compare"]["gems"]["FASTER"] == 0
    assert j["compare"]["json"] == str(r.dir / "compare.json")
    # zlb report on the ab directory: the rounds compared, the recording not among them
    out = zlb.cwd / "ab.html"
    rep = zlb.cmd("report", str(r.dir), "-o", str(out))
    assert rep.rc == 0, rep
    page = out.read_text()
    assert str(a[1]) in page and str(b[2]) in page
    # R is where both sides' configs came from, and no compared run
    rows_naming_r = [row for row in page.split("<tr>") if str(r.recording()) in row]
    assert rows_naming_r and all(row.startswith("<td>replay_from</td>") for row in rows_naming_r)


def test_live_axis_changes_the_ir_and_runs_the_rounds(zlb):
    r = Ab(zlb, ["softmax", "--axis", "FAKE_TRITON_BUILD=a,b", "--rounds", "2", *QUICK])
    assert r.rc == 0, r
    a, b = r.runs("A"), r.runs("B")
    assert list(a) == [1, 2] and list(b) == [1, 2]
    fa, fb = fingerprint(zlb, a[1]), fingerprint(zlb, b[1])
    assert fa != fb
    assert f"IR after round 1: A {fa}, B {fb}: the sides generated different code" in r.out
    assert "SWITCH_NO_IR_DIFF" not in r.out
    ir = r.json["ir"]
    assert ir["verdict"] == "differ" and ir["differing"] > 0 and ir["only_a"] == ir["only_b"] == 0
    assert ir["first"][0].endswith(".ttgir (differs)"), ir["first"]
    # The variable reached each side's pytest: B's IR is build b's.
    ttgir = next((b[2] / "ttgir").rglob("*.ttgir")).read_text()
    assert "stub triton build: b" in ttgir
    assert "stub triton build: a" in next((a[2] / "ttgir").rglob("*.ttgir")).read_text()
    cmp = json.loads((r.dir / "compare.json").read_text())
    assert sum(x["paired"] for x in cmp["rows"]) == 3
    assert r.json["compare"]["exit_code"] == 0


def test_quiet_ab_says_each_round_and_the_result(zlb):
    r = Ab(zlb, ["softmax", "--axis", "FAKE_TRITON_BUILD=a,b", "--rounds", "1", "-q", *QUICK])
    assert r.rc == 0, r
    lines = r.out.splitlines()
    # each round's zlb run (given -q) says how it ended; zlb ab its compare and its end
    assert [l for l in lines if l.startswith("zlb: completed, exit 0")].__len__() == 3, r
    assert lines[-2] == "result: no significant regression beyond 1.00%", r
    assert lines[-1].startswith("zlb ab: compared, exit 0; "), r
    assert "=== zlb ab: round" not in r.out and "Gems Speedup" not in r.out
    # the files are whole whatever the terminal showed
    assert json.loads((r.dir / "compare.json").read_text())["summary"]["paired"] == 3


def test_tuned_op_b_replays_a_configs(zlb):
    """B tunes differently on its own (FAKE_TUNE_BIAS), yet runs R's configs."""
    args = ["tuned_rowsum", "--shape-mode", "upstream", *QUICK]
    r = Ab(zlb, [*args, "--axis", "FAKE_TRITON_BUILD=a,b", "--b-env", "FAKE_TUNE_BIAS=1",
                 "--rounds", "2"])
    # In the fake's cost model A's configs cost B more (its bias moves the
    # ideal block), so the compare may well call B slower (exit 1); what
    # this test is about is which configs ran.
    assert r.rc in (0, 1) and r.json["status"] == "completed", r
    a, b = r.runs("A"), r.runs("B")
    recorded = r.identity(r.recording())["outcome"]["autotune"]["recorded"]
    assert recorded["entries"] > 0
    for run in (a[1], b[1], a[2], b[2]):
        out = r.identity(run)["outcome"]
        assert out["autotune"]["replayed"]["injected"] == recorded["entries"], run
        assert "AUTOTUNE_REPLAY_FALLBACK" not in out["markers"]
    configs = index_configs(r.recording())
    assert configs and all(index_configs(run) == configs for run in (a[1], b[1], a[2], b[2]))
    # Left to itself, B's build would have chosen other configs.
    own = zlb.run(*args, "--isolate-tuner-cache", "--runs-dir", str(zlb.cwd / "own"),
                  env={"FAKE_TUNE_BIAS": "1", "FAKE_TRITON_BUILD": "b"})
    assert own.rc == 0, own
    (own_run,) = (zlb.cwd / "own").iterdir()
    assert index_configs(own_run) != configs
    # FAKE_TUNE_BIAS is in the fake FlagGems source: found, no warning.
    found = {x["name"]: x for x in r.json["switch_check"]}
    assert found["FAKE_TUNE_BIAS"]["found"] is True
    assert found["FAKE_TUNE_BIAS"]["where"].endswith(".py")
    assert "the switch FAKE_TUNE_BIAS appears nowhere" not in r.out
    assert r.json["sides"]["A"]["env"]["FAKE_TUNE_BIAS"] is None


def test_tuning_switch_alone_changes_no_ir_under_replay(zlb):
    # With R's configs pinned on B, a switch that only steers tuning generates
    # the same code: the gate says so after round 1.
    r = Ab(zlb, ["tuned_rowsum", "--shape-mode", "upstream", "--b-env", "FAKE_TUNE_BIAS=1",
                 *QUICK])
    assert r.rc == 10, r
    assert "SWITCH_NO_IR_DIFF op=tuned_rowsum axis=FAKE_TUNE_BIAS=(unset),1 fingerprint=" in r.out
    assert "appears nowhere" not in r.out


def test_two_interpreters_are_two_builds(zlb, tmp_path):
    # --b-python: a second environment (here a wrapper that selects another stub build).
    wrapper = tmp_path / "python_b"
    wrapper.write_text("#!/bin/sh\nFAKE_TRITON_BUILD=wrapped exec /usr/bin/python3 \"$@\"\n")
    wrapper.chmod(0o755)
    r = Ab(zlb, ["softmax", "--a-python", "/usr/bin/python3", "--b-python", wrapper,
                 "--rounds", "1", *QUICK])
    assert r.rc == 0, r
    a, b = r.runs("A"), r.runs("B")
    assert r.identity(a[1])["provenance"]["python"] == "/usr/bin/python3"
    assert r.identity(b[1])["provenance"]["python"] == str(wrapper)
    assert r.json["ir"]["verdict"] == "differ"
    assert r.json["axis"] == f"python=/usr/bin/python3,{wrapper}"
    assert "appears nowhere" not in r.out            # no variable to look up


def test_compiler_switches_are_not_looked_up_in_flaggems(zlb):
    r = Ab(zlb, ["softmax", "--axis", "TRITON_FAKE_KNOB=0,1", *QUICK])
    assert r.rc == 10, r
    assert "appears nowhere" not in r.out
    assert "TRITON_FAKE_KNOB is a TRITON_* switch" in r.out
    (check,) = r.json["switch_check"]
    assert check["name"] == "TRITON_FAKE_KNOB" and check["searched"] is None
    assert "compiler's own" in check["skipped"]


def test_shared_tuner_cache_on_request(zlb):
    r = Ab(zlb, ["softmax", "--axis", "FAKE_TRITON_BUILD=a,b", "--rounds", "1",
                 "--shared-tuner-cache", *QUICK])
    assert r.rc == 0, r
    for run in (r.recording(), r.runs("A")[1], r.runs("B")[1]):
        assert r.identity(run)["caliber"]["tuner_cache"].startswith("shared(")
    assert r.json["tuner_cache"] == "shared"
    assert "zlb ab: warning: R records autotune configs on a shared tuner cache" in r.out


# ---- failures ------------------------------------------------------------------------

def test_a_crashing_round_is_named_with_its_run_dir(zlb):
    r = Ab(zlb, ["crash", "--shape-mode", "upstream", "--b-env", "FAKE_CRASH=1", *QUICK])
    assert r.rc == 139, r
    b = r.runs("B")[1]
    assert f"round 1 B failed (zlb run exit 139: pytest was killed by SIGSEGV): run directory {b}" \
        in r.out
    assert r.identity(b)["status"] == "crashed"
    assert not (r.dir / "A" / "r2").exists() and not (r.dir / "compare.json").exists()
    assert r.json["status"] == "round_failed" and r.json["exit_code"] == 139
    assert r.json["failed"]["side"] == "B" and r.json["failed"]["round"] == 1
    assert r.json["failed"]["dir"] == str(b) and r.json["failed"]["exit_code"] == 139
    assert r.json["ir"] is None


def test_a_broken_op_fails_in_the_recording(zlb):
    r = Ab(zlb, ["broken", "--shape-mode", "upstream", "--axis", "FAKE_TRITON_BUILD=a,b", *QUICK])
    assert r.rc == 1, r
    rec = r.recording()
    assert ("the recording R failed (zlb run exit 1: pytest reported failed tests): run "
            f"directory {rec}") in r.out
    assert not (r.dir / "A").exists() and not (r.dir / "B").exists()
    assert r.json["failed"] == {"side": "R", "round": 0, "dir": str(rec), "exit_code": 1,
                                "end": "exit 1: pytest reported failed tests"}
    assert r.json["recording"] is None


def test_ctrl_c_stops_the_round_and_marks_ab_json(zlb):
    env = dict(zlb.env)
    # -v (zlb run's, given to every round): the fake test's own line says when it hangs
    p = subprocess.Popen([zlb.bin, "ab", "hang", "--shape-mode", "upstream", "--b-env",
                          "FAKE_HANG=1", "-v", *QUICK], cwd=zlb.cwd, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = ""
    deadline = time.time() + 120
    while "FAKE_HANG: started" not in seen and time.time() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        seen += line
    assert "FAKE_HANG: started" in seen, seen
    p.send_signal(signal.SIGINT)
    out = seen + p.communicate(timeout=120)[0]
    assert p.returncode == 130, out
    (ab,) = zlb.runs.glob("ab_hang_*")
    j = json.loads((ab / "ab.json").read_text())
    assert j["status"] == "interrupted" and j["exit_code"] == 130
    assert [(x["side"], x["round"], x["exit_code"]) for x in j["runs"]] == \
        [("R", 0, 0), ("A", 1, 0), ("B", 1, 130)]
    (b1,) = (ab / "B" / "r1").iterdir()
    assert json.loads((b1 / "run_identity.json").read_text())["status"] == "interrupted"
    assert "zlb ab: interrupted" in out
    left = subprocess.run(["pgrep", "-f", "test_hang.py::test_hang"], capture_output=True,
                          text=True)
    assert left.stdout.strip() == "", left.stdout


# ---- bad input: a sentence, exit 2 (or 3), nothing created --------------------------------

@pytest.mark.parametrize("args,env,needle", [
    (["softmax"], {}, "nothing tells A from B"),
    (["softmax", "--axis", "ZL_X"], {}, "expected NAME=VALUE_A,VALUE_B"),
    (["softmax", "--axis", "ZL_X=1"], {}, "two values are needed"),
    (["softmax", "--axis", "ZL_X=1,2,3"], {}, "more than one comma"),
    (["softmax", "--axis", "ZL_X=1,1"], {}, "A and B get the same value"),
    (["softmax", "--axis"], {}, "--axis needs NAME=VALUE_A,VALUE_B"),
    (["softmax", "--a-env", "ZL_X=1", "--b-env", "ZL_X=1"], {}, "set up identically"),
    (["softmax", "--axis", "BENCH_LEVEL=core,comprehensive"], {}, "BENCH_LEVEL is zlb run's --level"),
    (["softmax", "--b-env", "FLAGGEMS_DIR=/x"], {}, "--a-flaggems-dir / --b-flaggems-dir"),
    (["softmax", "--axis", "ZL_X=0,1", "--rounds", "0"], {}, "--rounds 0: a side needs 1 to 100"),
    (["softmax", "--axis", "ZL_X=0,1", "--rounds", "x"], {}, "--rounds takes a whole number"),
    (["softmax", "--axis", "ZL_X=0,1", "--level", "fast"], {}, "'fast' is not one of core"),
    (["softmax", "--axis", "ZL_X=0,1", "--bogus"], {}, "unknown option '--bogus'"),
    (["softmax", "--axis", "ZL_X=0,1", "--replay-from", "runs/x"], {}, "--replay-from: zlb ab records"),
    (["softmax", "--axis", "ZL_X=0,1"], {"REPLAY_FROM": "/tmp"}, "REPLAY_FROM: zlb ab records"),
    (["softmax", "--axis", "ZL_X=0,1", "--ir", "off"], {}, "add --allow-no-ir-diff"),
    (["softmax", "--axis", "ZL_X=0,1", "--threshold", "200"], {}, "--threshold takes a percentage"),
    (["softmax", "--axis", "ZL_X=0,1", "--elasticity-from", "/nonexistent/cal"], {},
     "'/nonexistent/cal' is not a directory"),
    (["softmax", "--axis", "ZL_X=0,1", "--shared-tuner-cache", "--isolate-tuner-cache"], {},
     "contradict"),
    (["softmax", "--axis", "ZL_X=0,1", "--calibrate", "--elasticity-from", "/tmp"], {},
     "--calibrate reads s in R and --elasticity-from /tmp takes it from there: give one"),
    (["softmax", "--axis", "ZL_X=0,1", "--calibrate", "--clock-elasticity"], {},
     "--calibrate reads s in R alone, and --clock-elasticity in every round"),
    (["softmax", "--axis", "ZL_X=0,1", "--calibrate", "--l2", "cold"], {},
     "--l2 cold has none to read"),
])
def test_bad_input_exit_2_and_create_nothing(zlb, args, env, needle):
    r = zlb.cmd("ab", *args, env=env)
    assert r.rc == 2, r
    assert needle in r.err, r
    assert not zlb.runs.exists(), r


def test_preflight_of_side_b_fails_before_anything_starts(zlb):
    r = zlb.cmd("ab", "softmax", "--axis", "ZL_X=0,1", "--b-python", "/nonexistent/python3")
    assert r.rc == 3, r
    assert "PREFLIGHT_FAILED check=python side=B" in r.err
    assert not zlb.runs.exists()
    r = zlb.cmd("ab", "softmax", "--a-flaggems-dir", str(zlb.cwd / "nowhere"),
                "--b-flaggems-dir", str(FAKE_MAIN))
    assert r.rc == 3 and "PREFLIGHT_FAILED check=flaggems_dir side=A" in r.err, r


def test_help_lists_ab(zlb):
    r = zlb.cmd("ab", "--help")
    assert r.rc == 0 and "--axis NAME=VA,VB" in r.out and "SWITCH_NO_IR_DIFF" in r.out
    assert re.search(r"^  10 +SWITCH_NO_IR_DIFF", r.out, re.M)
    r = zlb.cmd("help")
    assert r.rc == 0 and re.search(r"^  ab ", r.out, re.M)
