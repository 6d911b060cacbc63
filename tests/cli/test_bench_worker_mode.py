"""bench/worker_mode.py's harness mode on the fake FlagGems: FlagGems' own
pytest over the operators' nodes in one process, its per-test times taken as
each test ends (bench/_harness_times.py), so that a harness stopped at its
budget by a hanging operator still gives the times of what it finished (on
the H200 a hang cost the whole harness figure: junit is written at the end)."""
import csv
import json
import subprocess
import sys

from conftest import FAKE_MAIN, REPO


def test_a_harness_stopped_at_its_budget_keeps_what_it_finished(zlb, tmp_path):
    out = tmp_path / "wm.json"
    r = subprocess.run([sys.executable, str(REPO / "bench" / "worker_mode.py"), "--zlb", zlb.bin,
                        "--flaggems-dir", str(FAKE_MAIN), "--ops", "add", "softmax", "hang",
                        "--modes", "harness", "--budget", "harness=20",
                        "--work", str(tmp_path / "w"), "--out", str(out)],
                       env=dict(zlb.env, FAKE_HANG="1"), capture_output=True, text=True,
                       timeout=120,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    ops = json.loads(out.read_text())["modes"]["harness"]["op"]
    assert ops["add"]["status"] == "PASS" and ops["add"]["seconds"] > 0, ops
    assert ops["softmax"]["status"] == "PASS" and ops["softmax"]["seconds"] > 0, ops
    assert ops["hang"]["status"] == "PENDING", ops       # stopped inside it: no time
    assert "2 of 3 operators finished" in r.stdout, r.stdout


def test_zlb_opt_reaches_both_zlb_batches_and_is_recorded(zlb, tmp_path):
    out = tmp_path / "wm.json"
    work = tmp_path / "w"
    r = subprocess.run([sys.executable, str(REPO / "bench" / "worker_mode.py"), "--zlb", zlb.bin,
                        "--flaggems-dir", str(FAKE_MAIN), "--ops", "add",
                        "--modes", "process,worker", "--zlb-opt=--tune-rule=budget",
                        "--work", str(work), "--out", str(out)],
                       env=zlb.env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(out.read_text())["zlb_opts"] == ["--tune-rule=budget"]
    for mode in ("process", "worker"):
        row = next(csv.DictReader(open(work / mode / "ops_status.csv")))
        ident = json.loads((work / mode / row["run_dir"] / "run_identity.json").read_text())
        assert ident["caliber"]["tune_rule"] == "budget", (mode, ident["caliber"])
    # Where each mode's time went: the engine's phases summed over the rows.
    modes = json.loads(out.read_text())["modes"]
    for mode in ("process", "worker"):
        phases = modes[mode]["op"]["add"]["phase_s"]
        assert {"first_call", "warmup", "settle", "capture", "sample"} <= set(phases), phases
        assert all(v >= 0 for v in phases.values()), phases
        assert sum(phases.values()) <= modes[mode]["op"]["add"]["pytest_s"], modes[mode]
        assert "%s: of " % mode in r.stdout and "outside the engine" in r.stdout, r.stdout


def test_every_phase_the_rows_have_is_reported_and_none_is_left_outside():
    # A preloaded batch's preload (or a phase added later) must not read as
    # time outside the engine, which the harness would seem to save.
    sys.path.insert(0, str(REPO / "bench"))
    import worker_mode
    ops = {"a": {"pytest_s": 10.0, "phase_s": {"sample": 2.0, "preload": 3.0, "later": 1.0}},
           "b": {"pytest_s": 5.0, "phase_s": {"sample": 1.0}},
           "c": {"pytest_s": 4.0, "phase_s": None}}          # no row timed by the engine
    assert worker_mode.phase_report(ops) == (
        "of 15.0 s in pytest over 2 operators: preload 3.0 s, sample 3.0 s, later 1.0 s, "
        "outside the engine 8.0 s")


def test_repeated_passes_alternate_their_order_and_each_gives_its_ratio(zlb, tmp_path):
    # One pass read 1.07x-1.17x on one build: whichever mode runs second may
    # be slower, so passes go ABBA and the figure is their mean.
    out = tmp_path / "wm.json"
    cmd = [sys.executable, str(REPO / "bench" / "worker_mode.py"), "--zlb", zlb.bin,
           "--flaggems-dir", str(FAKE_MAIN), "--ops", "add", "--modes", "worker,harness",
           "--tuner-from", "none", "--work", str(tmp_path / "w"), "--out", str(out)]
    r = subprocess.run(cmd + ["--repeat", "2"], env=zlb.env, capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    passes = json.loads(out.read_text())["passes"]
    assert [p["order"] for p in passes] == [["worker", "harness"], ["harness", "worker"]]
    # each pass its own runs, not the last one's figures twice
    assert passes[0]["wall_s"]["worker"] != passes[1]["wall_s"]["worker"]
    assert passes[0]["wall_s"]["harness"] != passes[1]["wall_s"]["harness"]
    ratios = [p["per_op_s"]["worker"] / p["per_op_s"]["harness"] for p in passes]
    assert "pass 1 (worker, harness)" in r.stdout and "pass 2 (harness, worker)" in r.stdout
    assert ("over 2 passes: mean %.2fx" % (sum(ratios) / 2)) in r.stdout, r.stdout
    r = subprocess.run(cmd + ["--repeat", "0"], env=zlb.env, capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    assert r.returncode == 2 and "--repeat must be at least 1 (got 0)" in r.stderr, r.stderr
    # passes compare the two, each tuning from nothing
    bad = [(["--repeat", "2", "--modes", "worker"], "give --modes with both"),
           (["--repeat", "2", "--tuner-from", "worker"], "give --tuner-from none")]
    for extra, why in bad:
        r = subprocess.run(cmd + extra, env=zlb.env, capture_output=True, text=True,
                           timeout=60, cwd=tmp_path)
        assert r.returncode == 2 and why in r.stderr, (extra, r.stderr)
