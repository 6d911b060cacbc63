"""bench/tune_rule.py on the fake FlagGems: the script the next GPU session runs
to decide --tune-rule's default must itself work — both rules run and tune,
their winners are paired, and the compare of the two is read (its default
pair, rows against triton, and rows against budget)."""
import json
import subprocess
import sys

import pytest

from conftest import FAKE_MAIN, REPO


@pytest.mark.parametrize("rules", [None, "rows,budget"])
def test_both_rules_tune_and_are_paired(zlb, tmp_path, rules):
    out = tmp_path / "tune_rule.json"
    env = dict(zlb.env, ZLB_BIN=zlb.bin)
    r = subprocess.run([sys.executable, str(REPO / "bench" / "tune_rule.py"), "--zlb", zlb.bin,
                        "--flaggems-dir", str(FAKE_MAIN), "--ops", "tuned_scale",
                        "--work", str(tmp_path / "w"), "--out", str(out)] +
                       (["--rules", rules] if rules else []),
                       env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(out.read_text())["ops"]["tuned_scale"]
    for rule in (rules or "rows,triton").split(","):
        assert res[rule]["rc"] == 0 and res[rule]["tune_calls"] > 0, res
        ident = json.loads((tmp_path / "w" / rule / "tuned_scale" / "run_identity.json")
                           .read_text())
        assert ident["caliber"]["tune_rule"] == rule
    # The fake's configs are told apart by far more than any noise: same winners.
    assert res["winners"]["same"] > 0 and res["winners"]["other"] == [], res
    assert res["compare"]["verdicts"].get("gems SAME", 0) > 0, res
    assert "winners: %d same, 0 other" % res["winners"]["same"] in r.stdout


def test_a_run_that_fails_says_why(zlb, tmp_path):
    # On the H200 conj refused float16 under both rules and the bench printed
    # rc=1 and nothing more.
    out = tmp_path / "tune_rule.json"
    r = subprocess.run([sys.executable, str(REPO / "bench" / "tune_rule.py"), "--zlb", zlb.bin,
                        "--flaggems-dir", str(FAKE_MAIN), "--ops", "no_such_op",
                        "--work", str(tmp_path / "w"), "--out", str(out)],
                       env=dict(zlb.env, ZLB_BIN=zlb.bin), capture_output=True, text=True,
                       timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(out.read_text())["ops"]["no_such_op"]
    for rule in ("rows", "triton"):
        assert res[rule]["rc"] != 0, res
        assert res[rule]["why"].startswith("PREFLIGHT_FAILED check=benchmark_file"), res
        assert "no benchmark test_no_such_op" in res[rule]["why"], res
    assert "    why: PREFLIGHT_FAILED check=benchmark_file" in r.stdout, r.stdout
