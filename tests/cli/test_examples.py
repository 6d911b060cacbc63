"""The A/B runs under examples/ab/ were recorded with `zlb ab` on an H200
against real FlagGems (examples/gpu_demos.sh). These tests read them with
this build: the comparison must reproduce, cell for cell, the compare.csv
written on the GPU machine (the bootstrap is seeded; an interval may only widen where
the sides ran at other clocks), and the IR gate must
say what it said there. So the statistics and IR tools are checked on real
data, and a change that alters a shipped verdict shows up here.
"""
import csv
import json
from pathlib import Path

import pytest

from conftest import REPO

AB = REPO / "examples" / "ab"


def runs(ab, side, rnd):
    found = sorted((ab / side / f"r{rnd}").iterdir())
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("name", ["layer_norm_fp_fusion", "mm_dead_switch"])
def test_compare_reproduces_the_gpu_verdicts(zlb, tmp_path, name):
    ab = AB / name
    r = zlb.cmd("compare", str(ab / "A"), str(ab / "B"), "--out", str(tmp_path), "--color", "never")
    assert r.rc == 0, r
    # every column the GPU machine wrote, cell for cell; columns added since
    # (replay_fallbacks_a/_b, gems_/torch_rounds_needed) come after them
    mine_csv = list(csv.reader((tmp_path / "compare.csv").open(newline="")))
    shipped_csv = list(csv.reader((ab / "compare.csv").open(newline="")))
    mine = json.loads((tmp_path / "compare.json").read_text())
    shipped = json.loads((ab / "compare.json").read_text())
    width = len(shipped_csv[0])
    assert len(mine_csv) == len(shipped_csv) and mine_csv[0][:width] == shipped_csv[0]
    # The changes of model since these were written: where the sides'
    # clocks differ by more than a step (clock_shift), the interval also
    # covers what the clocks explain; where a round's level moved while it
    # sampled (trend), its drift holds the move. Either may only have
    # widened the interval (and so raised p), and no verdict may have moved.
    widened = moved = 0
    for m, s, mj, sj in zip(mine_csv[1:], shipped_csv[1:], mine["rows"], shipped["rows"]):
        for kind in ("gems", "torch"):
            if not (mj[kind]["clock_shift"] or mj[kind]["trend"]):
                continue
            widened += bool(mj[kind]["clock_shift"])
            moved += bool(mj[kind]["trend"])
            lo, hi, p, q = (shipped_csv[0].index(f"{kind}_{e}")
                            for e in ("ci_low", "ci_high", "p", "q"))
            assert float(m[lo]) <= float(s[lo]) and float(m[hi]) >= float(s[hi])
            assert float(m[p]) >= float(s[p]) and float(m[q]) >= float(s[q])
            assert mj[kind]["verdict"] == sj[kind]["verdict"]
            for col in (lo, hi, p, q):
                m[col] = s[col]
            for key in ("ci_low", "ci_high", "p", "q"):
                mj[kind][key] = sj[kind][key]
        assert m[:width] == s
        # added since: the replay fallbacks (none on these runs) and the
        # rounds a side each kind would need, as compare.json has them
        extra = dict(zip(mine_csv[0][width:], m[width:]))
        assert not extra.pop("replay_fallbacks_a", "") and not extra.pop("replay_fallbacks_b", "")
        assert extra == {f"{k}_rounds_needed": str(mj[k]["rounds_needed"] or "")
                         for k in ("gems", "torch")}
        assert all(mj[k]["rounds_needed"] >= 1 for k in ("gems", "torch"))
    assert widened <= 2
    # which cells moved: every mm cell (at the power cap), two torch
    # layer_norm cells (the 16384x4096 one by 0.3% in a round)
    assert moved == {"mm_dead_switch": 6, "layer_norm_fp_fusion": 2}[name]
    # every field the GPU machine wrote, as it wrote it; fields added since
    # (placement_model) may be new, and say these runs predate the draws
    assert [as_shipped(m, s) for m, s in zip(mine["rows"], shipped["rows"])] == shipped["rows"]
    assert len(mine["rows"]) == len(shipped["rows"])
    for row in mine["rows"]:
        for kind in ("gems", "torch"):
            assert row[kind]["placement_model"] in ("spread", None)
    assert "3 paired rows" in r.out


def as_shipped(mine, shipped):
    """mine with only the keys shipped has, recursively."""
    if isinstance(mine, dict) and isinstance(shipped, dict):
        return {k: as_shipped(mine[k], shipped[k]) if k in mine else "<missing>"
                for k in shipped}
    return mine


def test_dead_switch_mm_no_row_flagged_and_identical_ir(zlb):
    ab = AB / "mm_dead_switch"
    doc = json.loads((ab / "ab.json").read_text())
    assert doc["status"] == "completed" and doc["rounds"] == 3
    assert doc["ir"]["verdict"] == "identical" and doc["ir"]["allowed"]
    assert doc["compare"]["gems"]["SLOWER"] == 0 and doc["compare"]["gems"]["FASTER"] == 0
    # Round 1 of A recorded one LibTuner kernel; B and later A rounds replayed it.
    rec = json.loads((runs(ab, "A", 1) / "autotune_records" / "mm.json").read_text())
    assert [(k["tuner"], len(k["entries"])) for k in rec["kernels"]] == [("libtuner", 3)]
    assert [r["autotune_mode"] for r in doc["runs"]] == ["record"] + ["replay"] * 5
    r = zlb.cmd("ir", "fingerprint", str(runs(ab, "A", 1)))
    assert r.rc == 0, r
    assert r.out.split("\t")[:2] == ["mm", doc["ir"]["A"]["fingerprint"]]


def test_live_switch_changes_the_ptx_where_fma_is_contracted(zlb):
    ab = AB / "layer_norm_fp_fusion"
    a1, b1 = runs(ab, "A", 1), runs(ab, "B", 1)
    r = zlb.cmd("ir", "fingerprint", str(a1), str(b1))
    assert r.rc == 0, r
    fa, fb = [line.split("\t")[1] for line in r.out.splitlines()]
    assert fa != fb
    r = zlb.cmd("ir", "diff", str(a1), str(b1), "--stage", "ptx", "--color", "never")
    assert r.rc == 1, r                                  # the IR differs
    # A ran with TRITON_DEFAULT_FP_FUSION=0: no fused multiply-add at all;
    # B (=1) contracts mul+add into fma.rn.f32.
    removed = [l for l in r.out.splitlines() if l.startswith("-") and "fma.rn" in l]
    added = [l for l in r.out.splitlines() if l.startswith("+") and "fma.rn.f32" in l]
    assert not removed and len(added) > 10
    assert "ir diff: 0 identical, 3 differing, 0 only in A, 0 only in B (stage ptx)" in r.out
