"""bench/centre_probe.py without a GPU: the candidate centres of a
round-robin sample, and the whole script against the stub torch and the
fake driver."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import FAKECUDA, PYDIR, PYTHON, REPO, STUBS, TIMER_LIB, need_timer

SCRIPT = os.path.join(REPO, "bench", "centre_probe.py")
sys.path.insert(0, os.path.dirname(SCRIPT))     # its helper, bench/_probe.py
_spec = importlib.util.spec_from_file_location("centre_probe", SCRIPT)
cp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cp)


def test_centres_of_a_mixture_of_placements():
    # 4 placements round-robin, 3 samples each: three at ~1.0, one at ~2.0;
    # a 13th sample (a partial round) is left out.
    samples = [1.0, 1.01, 0.99, 2.0] * 2 + [1.02, 1.0, 0.98, 2.1] + [50.0]
    c = cp.centres(samples, 4)
    assert c["pooled_median"] == pytest.approx(1.005)   # inside the big cluster
    assert c["mean_of_medians"] == pytest.approx((1.0 + 1.01 + 0.99 + 2.0) / 4)
    assert c["median_of_medians"] == pytest.approx(1.005)
    assert c["pooled_mean"] == pytest.approx(sum(samples[:12]) / 12)


def test_drift_is_pairwise_relative():
    med, worst = cp.drift([1.0, 1.01, 1.02])
    assert worst == pytest.approx(2.0) and med == pytest.approx(1.0)
    assert cp.drift([1.0]) == (None, None)


def test_whole_script_on_the_stubs(tmp_path):
    need_timer()
    out = tmp_path / "centre.json"
    env = {"PATH": os.environ.get("PATH", ""),
           "PYTHONPATH": os.pathsep.join([PYDIR, STUBS]), "ZLB_LIBCUDA": FAKECUDA}
    r = subprocess.run([PYTHON, SCRIPT, "--timer-lib", TIMER_LIB, "--procs", "2", "--m", "2",
                        "--kernels", "add_1us,softmax_5us", "--out", str(out)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "== add 64k fp16 ==" in r.stdout and "copies mean_of_medians" in r.stdout
    procs = json.loads(out.read_text())["procs"]
    assert len(procs) == 2
    for w in procs:
        for mode in ("placed", "copies"):
            recs = w["add_1us"][mode]
            assert len(recs) == 2 and all(rec["p"] == 8 for rec in recs)
            assert all(len(rec["samples"]) % 8 == 0 for rec in recs)
