"""`zlb compare` on run directories written by hand.

Each test builds what `zlb run` leaves (docs/protocol.md section 3): a
run_identity.json with a caliber section and a results.jsonl whose rows carry
raw per-call samples for torch and gems. Samples are log-normal around a
per-round centre that itself drifts between rounds (processes), as measured
on an H200 (bench/README.md). Seeds are fixed, so every outcome below is
deterministic.

Over 700 lines as one file on purpose: every test here builds its sides with
the same make_run/make_sides and reads the same outputs; comparisons of real
batches live beside it (test_batch_compare.py).
"""
import csv
import os
import json
import math
import subprocess
import random
import statistics
import re
from pathlib import Path

import pytest

CALIBER = {
    "backend": "cuda", "device": "NVIDIA H200", "timer": "graph", "mode": "kernel",
    "bench_level": "core", "shape_mode": "inline", "tuner_cache": "isolated",
    "direct_repeat": 1, "autotune_mode": "record", "use_flagtune": False,
    "dtypes": ["float16", "bfloat16"], "seed": 0, "warmup_ms": 1000, "min_samples": 10,
    "min_time_ms": 100, "noise_target": 0.001, "max_wall_ms": 2000, "l2_mode": "hot",
    "clock_floor": 0.97,
}
SHAPES = [f"[torch.Size([{m}, {m}]), 1]" for m in (256, 512, 1024, 2048, 4096)]
DTYPES = ["torch.float16", "torch.bfloat16"]


def base_rows(op="softmax"):
    """Ten rows: 5 shapes x 2 dtypes, gems and torch centres in ms."""
    rows = []
    for i, shape in enumerate(SHAPES):
        for dt in DTYPES:
            rows.append({"op": op, "dtype": dt, "shape": shape,
                         "gems": 0.002 * 2 ** i, "torch": 0.004 * 2 ** i})
    return rows


def make_run(path, rows, seed, mode="record", caliber=None, identity=True, n=200, noise=0.01,
             drift=0.001, shift=None, status=None, markers=None, drop=(), replay_from=None,
             events=(), ks=None, placement=None, torch_shift=None, draws=None,
             gems_fields=None, nodeids=None):
    """One run (round). shift: {row index: fraction} applied to gems (torch_shift:
    to torch); status: {index: str};
    markers: {index: [gems markers]}; drop: indices left out; events: events.jsonl lines;
    gems_fields: {index: {field: value}} added to the gems measurement; nodeids:
    {index: nodeid} in place of the op's test;
    ks: {index: calls_per_replay of gems} (2048 for the others when given);
    placement: (placement_sd, placement_probes) every measurement reports;
    draws: its placement_probe_draws."""
    rng = random.Random(seed)
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    if identity:
        cal = dict(CALIBER, autotune_mode=mode, **(caliber or {}))
        (path / "run_identity.json").write_text(json.dumps({
            "schema_version": 1, "status": "completed", "op": rows[0]["op"], "caliber": cal,
            "provenance": {"runtime": {"triton": "3.6.0", "triton_git": "0123456789abcdef"},
                           "replay_from": str(replay_from) if replay_from else None}}))
    if events:
        (path / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))

    def measurement(centre, mk):
        c = centre * math.exp(rng.gauss(0, drift))
        x = [c * math.exp(rng.gauss(0, noise)) for _ in range(n)]
        return {"timer": "graph", "median_ms": sorted(x)[n // 2], "n": n,
                "markers": list(mk), "fallback": None, "samples_ms": x}

    lines = []
    for i, r in enumerate(rows):
        if i in drop:
            continue
        st = (status or {}).get(i, "SUCCESS")
        g = measurement(r["gems"] * (1 + (shift or {}).get(i, 0.0)), (markers or {}).get(i, []))
        t = measurement(r["torch"] * (1 + (torch_shift or {}).get(i, 0.0)), [])
        if placement is not None:
            for m in (g, t):
                m["placement_sd"], m["placement_probes"] = placement
        if draws is not None:
            for m in (g, t):
                m["placement_probe_draws"] = list(draws)
        if ks is not None:
            g["calls_per_replay"] = ks.get(i, 2048)
            t["calls_per_replay"] = 2048
        g.update((gems_fields or {}).get(i, {}))
        row = {"schema_version": 1, "kind": "row", "op": r["op"], "op_name": r["op"],
               "nodeid": (nodeids or {}).get(i, f"benchmark/test_{r['op']}.py::test_{r['op']}"),
               "dtype": r["dtype"], "status": st, "shape_detail": r["shape"], "index": i,
               "latency_base_ms": t["median_ms"], "latency_ms": g["median_ms"],
               "torch": t, "gems": g}
        if st != "SUCCESS":
            row.update(latency_ms=None, gems=None, error="boom")
        lines.append(json.dumps(row))
    (path / "results.jsonl").write_text("\n".join(lines) + "\n")
    return path


def make_sides(root, rounds=3, a_kw=None, b_kw=None, rows=None, **kw):
    """The A/B protocol: A/r0 records; A/r1.. and B/r0.. replay A/r0's configs."""
    rows = rows or base_rows()
    rec = root / "A" / "r0"
    for k in range(rounds):
        mode_a = {"mode": "record"} if k == 0 else {"mode": "replay", "replay_from": rec}
        make_run(root / "A" / f"r{k}", rows, 100 + k, **{**mode_a, **kw, **(a_kw or {})})
        make_run(root / "B" / f"r{k}", rows, 200 + k,
                 **{"mode": "replay", "replay_from": rec, **kw, **(b_kw or {})})
    return root / "A", root / "B"


def compare(zlb, *args):
    res = zlb.cmd("compare", *[str(a) for a in args])
    out = zlb.cwd / "out"
    res.json = json.loads((out / "compare.json").read_text()) if (out / "compare.json").exists() else None
    res.csv = list(csv.DictReader((out / "compare.csv").open())) if (out / "compare.csv").exists() else None
    return res


def paired(res):
    return [r for r in res.json["rows"] if r["paired"]]


# ---- caliber ------------------------------------------------------------------------

def test_caliber_mismatch_exits_4_before_reading_rows(zlb, tmp_path):
    a, b = make_sides(tmp_path, b_kw={"caliber": {"l2_mode": "cold"}})
    # a latency file that does not parse would not stop the caliber check
    (b / "r0" / "results.jsonl").write_text("not json\n")
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 4, res
    # diagnostics, on stderr: standard output is for the report
    assert "!!! [caliber] l2_mode: A=hot B=cold" in res.err and "[caliber]" not in res.out
    assert "not comparing" in res.err and "--allow-caliber-mismatch" in res.err
    assert res.json is None and res.csv is None


def test_a_run_from_before_the_centre_is_another_caliber(zlb, tmp_path):
    # B's runs state what their latency is; A's, made before, do not.
    a, b = make_sides(tmp_path, b_kw={"caliber": {"centre": "mean_of_placement_medians"}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 4, res
    assert "!!! [caliber] centre: A=(absent) B=mean_of_placement_medians" in res.err


def test_caliber_mismatch_override_still_prints(zlb, tmp_path):
    a, b = make_sides(tmp_path, b_kw={"caliber": {"l2_mode": "cold", "seed": 1}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--allow-caliber-mismatch")
    assert res.rc == 0, res
    assert "!!! [caliber] l2_mode: A=hot B=cold" in res.err
    assert "!!! [caliber] seed: A=0 B=1" in res.err
    assert "compared anyway (--allow-caliber-mismatch)" in res.err
    assert "[caliber]" not in res.out and "SAME" in res.out
    cal = res.json["caliber"]
    assert cal["ok"] is False and cal["allowed"] is True
    assert {p["field"] for p in cal["problems"]} == {"l2_mode", "seed"}
    assert res.json["summary"]["paired"] == 10


def test_caliber_must_agree_within_a_side(zlb, tmp_path):
    a, b = make_sides(tmp_path)
    ident = json.loads((a / "r1" / "run_identity.json").read_text())
    ident["caliber"]["timer"] = "graph+direct"
    (a / "r1" / "run_identity.json").write_text(json.dumps(ident))
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 4, res
    line = next(l for l in res.err.splitlines() if "[caliber] timer" in l)
    assert "A=graph | graph+direct B=graph" in line and "differs between A's rounds" in line


def test_missing_identity_is_a_caliber_problem(zlb, tmp_path):
    a, b = make_sides(tmp_path)
    (b / "r2" / "run_identity.json").unlink()
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 4, res
    assert "!!! [caliber] identity: B run" in res.err and "r2 has no run_identity.json" in res.err
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--allow-caliber-mismatch")
    assert res.rc == 0, res
    assert "!!! [caliber] identity: B run" in res.err
    assert res.json["b"]["runs"][2]["identity"] == "absent"


def test_record_vs_record_is_refused_by_name(zlb, tmp_path):
    a, b = make_sides(tmp_path, a_kw={"mode": "record"}, b_kw={"mode": "record"})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 4, res
    assert "!!! [caliber] autotune_mode: record-vs-record: both sides tuned themselves" in res.err
    assert "--replay-from" in res.err
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--allow-caliber-mismatch")
    assert res.rc == 0 and "record-vs-record" in res.err, res


def test_one_recording_replayed_everywhere_is_clean(zlb, tmp_path):
    a, b = make_sides(tmp_path)
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 0 and "!!!" not in res.err + res.out and "warning" not in res.err, res
    assert res.json["warnings"] == []


def test_one_recording_against_its_replay_warns(zlb, tmp_path):
    # the one-round A/B: A/r0 records, B/r0 replays it
    a, b = make_sides(tmp_path, rounds=1)
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 0 and "!!!" not in res.err, res
    warn = [w for w in res.json["warnings"] if "a recording compared with its replays" in w]
    assert len(warn) == 1 and "compare replays only" in warn[0]
    assert "zlb run --replay-from REC" in warn[0]
    # a side that holds the recording among replays (zlb ab's A) is not this case
    a, b = make_sides(tmp_path / "ab", rounds=2)
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 0 and res.json["warnings"] == [], res


def test_several_recordings_warn(zlb, tmp_path):
    # every A round tuned itself; B replays the first
    a, b = make_sides(tmp_path, a_kw={"mode": "record", "replay_from": None})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 0, res
    assert "!!!" not in res.err
    assert "warning: the runs' autotune configs come from 3 runs (A/r0, A/r1, A/r2)" in res.err
    assert "A1.. and B1.. --replay-from R" in res.err


def test_replaying_a_run_not_compared_warns(zlb, tmp_path):
    a, b = make_sides(tmp_path, b_kw={"replay_from": tmp_path / "elsewhere" / "softmax_x"})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 0, res
    assert "3 replaying runs replay configs recorded by a run that is not compared here" in res.err


def test_replay_fallback_event_flags_the_test_rows(zlb, tmp_path):
    ev = {"schema_version": 1, "ts": 1.0, "event": "AUTOTUNE_REPLAY_FALLBACK",
          "reason": "key_missing", "kernel": "softmax_kernel", "where": "m:k", "key": [1],
          "detail": None, "nodeid": "benchmark/test_softmax.py::test_softmax"}
    a, b = make_sides(tmp_path, rounds=2, b_kw={"events": [ev]})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 0, res
    assert all(r["fallback"] and r["markers_b"] == ["AUTOTUNE_REPLAY_FALLBACK"] for r in paired(res))
    assert res.json["summary"]["fallback_rows"] == 10
    assert "!B:replay-fallback(key_missing)" in res.out
    assert ("B run r0: 1 autotune point could not be replayed (AUTOTUNE_REPLAY_FALLBACK: "
            "1 key_missing) and tuned live; the rows they touched are flagged") in res.err
    # a file from before "measured" and replay_fallbacks: the event is its test's
    assert all(r["replay_fallbacks_b"] == [{"reason": "key_missing", "kernel": "softmax_kernel",
                                            "from": "test"}] for r in paired(res))
    assert all(r["replay_fallbacks_a"] == [] for r in paired(res))


def fallback_event(reason, kernel, nodeid, measured):
    return {"schema_version": 1, "ts": 1.0, "event": "AUTOTUNE_REPLAY_FALLBACK",
            "reason": reason, "kernel": kernel, "where": "m:k", "key": [1], "detail": None,
            "nodeid": nodeid, "measured": measured}


SOFTMAX = "benchmark/test_softmax.py::test_softmax"
LARGE = "benchmark/test_softmax.py::test_softmax_large"


def test_replay_fallbacks_are_named_on_the_rows_they_touched(zlb, tmp_path):
    # B r0: row 2's gems measurement fell back (key_missing, a new shape): its
    # record says so, and its event (measured) touches no other row of the
    # test. B r1: an event of test_softmax_large (rows 5-9) outside any
    # measurement touches that test's rows. A: nothing.
    large = {i: LARGE for i in range(5, 10)}
    fb = {"replay_fallbacks": [{"reason": "key_missing", "kernel": "softmax_kernel"}],
          "markers": ["AUTOTUNE_REPLAY_FALLBACK"]}
    rec = tmp_path / "A" / "r0"
    for k in range(2):
        make_run(tmp_path / "A" / f"r{k}", base_rows(), 100 + k, nodeids=large,
                 **({"mode": "record"} if k == 0 else {"mode": "replay", "replay_from": rec}))
    make_run(tmp_path / "B" / "r0", base_rows(), 200, mode="replay", replay_from=rec,
             nodeids=large, gems_fields={2: fb},
             events=[fallback_event("key_missing", "softmax_kernel", SOFTMAX, True)])
    make_run(tmp_path / "B" / "r1", base_rows(), 201, mode="replay", replay_from=rec,
             nodeids=large,
             events=[fallback_event("config_missing", "big_kernel", LARGE, False)])
    res = compare(zlb, tmp_path / "A", tmp_path / "B", "--out", zlb.cwd / "out")
    assert res.rc == 0, res
    rows = paired(res)
    assert len(rows) == 10
    want = {2: [{"reason": "key_missing", "kernel": "softmax_kernel", "from": "gems"}]}
    want.update({i: [{"reason": "config_missing", "kernel": "big_kernel", "from": "test"}]
                 for i in range(5, 10)})
    for i, r in enumerate(rows):
        assert (r["dtype"], r["shape_detail"]) == (DTYPES[i % 2], SHAPES[i // 2])
        assert r["replay_fallbacks_b"] == want.get(i, []), i
        assert r["replay_fallbacks_a"] == [] and r["markers_a"] == []
        assert r["fallback"] is (i in want)
        assert r["markers_b"] == (["AUTOTUNE_REPLAY_FALLBACK"] if i in want else [])
    assert res.json["summary"]["fallback_rows"] == 6
    # the text: the flag names the reason on its rows only, the legend the points
    lines = res.out.splitlines()
    for i in range(10):
        shape = SHAPES[i // 2].split("(")[1].split(")")[0]     # "[512, 512]"
        (line,) = [l for l in lines if shape in l and f" {DTYPES[i % 2][6:]} " in l]
        flag = {2: "!B:replay-fallback(key_missing)"}.get(
            i, "!B:replay-fallback(config_missing)" if i >= 5 else None)
        if flag:
            assert flag in line, line
        else:
            assert "replay-fallback" not in line, line
    assert "  B key_missing softmax_kernel: 1 row (its gems measurement)" in lines
    assert "  B config_missing big_kernel: 5 rows (its test, outside a measurement)" in lines
    assert ("B run r0: 1 autotune point could not be replayed (AUTOTUNE_REPLAY_FALLBACK: "
            "1 key_missing) and tuned live; the rows they touched are flagged") in res.err
    assert "B run r1: 1 autotune point could not be replayed (AUTOTUNE_REPLAY_FALLBACK: " \
        "1 config_missing)" in res.err
    # the CSV
    assert len(res.csv) == 10
    for i, r in enumerate(res.csv):
        assert r["replay_fallbacks_a"] == ""
        assert r["replay_fallbacks_b"] == {2: "key_missing:softmax_kernel"}.get(
            i, "config_missing:big_kernel" if i >= 5 else ""), i


def test_a_run_wide_fallback_touches_every_row_and_a_lost_one_its_test(zlb, tmp_path):
    # tuner_missing has no test: every row of B r0. A measured event that no
    # row of its test carries (its measurement was paired with no row) is
    # taken as its test's.
    large = {i: LARGE for i in range(5, 10)}
    a, b = make_sides(tmp_path, rounds=2, a_kw={"nodeids": large}, b_kw={
        "nodeids": large,
        "events": [fallback_event("tuner_missing", "old_kernel", None, False),
                   fallback_event("compile_failed", "big_kernel", LARGE, True),
                   fallback_event("compile_failed", "big_kernel", LARGE, True)]})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 0, res
    run = {"reason": "tuner_missing", "kernel": "old_kernel", "from": "run"}
    lost = {"reason": "compile_failed", "kernel": "big_kernel", "from": "test"}
    for i, r in enumerate(paired(res)):
        assert r["replay_fallbacks_b"] == ([run, lost] if i >= 5 else [run]), i
        assert r["replay_fallbacks_a"] == []
    assert "  B tuner_missing old_kernel: 10 rows (no test: the whole run)" in res.out
    assert "!B:replay-fallback(tuner_missing,compile_failed)" in res.out
    assert ("B run r0: 3 autotune points could not be replayed (AUTOTUNE_REPLAY_FALLBACK: "
            "1 tuner_missing, 2 compile_failed) and tuned live; every row of the run is "
            "flagged") in res.err
    assert {r["replay_fallbacks_b"] for r in res.csv} == {
        "tuner_missing:old_kernel", "tuner_missing:old_kernel;compile_failed:big_kernel"}


def test_record_on_shared_cache_warns(zlb, tmp_path):
    shared = {"tuner_cache": "shared(/home/u/.flaggems)"}
    a, b = make_sides(tmp_path, caliber=shared)
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 0, res
    assert "!!!" not in res.err
    assert ("warning: A records autotune configs on a shared tuner cache "
            "(shared(/home/u/.flaggems))") in res.err
    assert "B records" not in res.err   # B replays
    assert len(res.json["warnings"]) == 1 and "--isolate-tuner-cache" in res.json["warnings"][0]
    # a shared cache is harmless when every run replays... but here A/r0 records on it
    a2, b2 = make_sides(tmp_path / "2", caliber=shared, a_kw={"mode": "replay"})
    res = compare(zlb, a2, b2, "--out", zlb.cwd / "out")
    assert "shared tuner cache" not in res.err, res


# ---- pairing -------------------------------------------------------------------------

def test_a_row_missing_from_a_round_is_noted_with_its_rounds(zlb, tmp_path):
    # Three rounds a side; B's second round lost row 4: that row alone says
    # how many rounds each side had of it.
    a, b = make_sides(tmp_path)
    lines = (b / "r1" / "results.jsonl").read_text().splitlines()
    (b / "r1" / "results.jsonl").write_text("\n".join(lines[:4] + lines[5:]) + "\n")
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--color", "never", "--wide")
    assert res.rc in (0, 1), res
    noted = [l for l in res.out.splitlines() if "rounds " in l]
    assert len(noted) == 1 and "rounds 3/2" in noted[0], res.out
    assert SHAPES[2] in noted[0] and " float16 " in noted[0], noted       # row 4


def test_pairing_and_unpaired_rows(zlb, tmp_path):
    rows = base_rows()
    extra = dict(rows[0], shape="[torch.Size([8192, 8192]), 1]")
    make_run(tmp_path / "A", rows, 1, mode="record", drop=(9,))                       # row 9: only B
    make_run(tmp_path / "B", rows + [extra], 2, mode="replay", status={3: "FAILED"},  # extra: only B
             replay_from=tmp_path / "A")
    # row 0: only in A (B lacks it)
    lines = (tmp_path / "B" / "results.jsonl").read_text().splitlines()
    (tmp_path / "B" / "results.jsonl").write_text("\n".join(lines[1:]) + "\n")
    res = compare(zlb, tmp_path / "A", tmp_path / "B", "--out", zlb.cwd / "out")
    assert res.rc in (0, 1), res
    s = res.json["summary"]
    assert (s["paired"], s["only_a"], s["only_b"], s["not_success"]) == (7, 1, 2, 1)
    by_reason = {r["unpaired_reason"]: r for r in res.json["rows"] if not r["paired"]}
    assert by_reason["only in A"]["shape_detail"] == SHAPES[0] and by_reason["only in A"]["dtype"] == DTYPES[0]
    assert by_reason["not SUCCESS in B"]["status_b"] == ["FAILED"]
    assert "not compared: 4 rows" in res.out
    assert "not SUCCESS in B" in res.out and "(B: FAILED)" in res.out
    pairing = sorted(r["pairing"] for r in res.csv)
    assert pairing.count("paired") == 7 and pairing.count("only in B") == 2
    # an unpaired row has empty statistics in the csv
    only_a = next(r for r in res.csv if r["pairing"] == "only in A")
    assert only_a["gems_ratio"] == "" and only_a["gems_verdict"] == ""


def test_rows_pair_across_rounds_and_dtypes_not_by_order(zlb, tmp_path):
    rows = base_rows()
    make_run(tmp_path / "A", rows, 1, mode="record")
    make_run(tmp_path / "B", list(reversed(rows)), 2, mode="replay", replay_from=tmp_path / "A")
    res = compare(zlb, tmp_path / "A", tmp_path / "B", "--out", zlb.cwd / "out")
    assert res.json["summary"]["paired"] == 10
    for r in paired(res):    # same centres, reversed file order: ratios near 1
        assert abs(r["gems"]["ratio"] - 1) < 0.01, r


# ---- verdicts --------------------------------------------------------------------------

def test_clear_regression_exits_1(zlb, tmp_path):
    a, b = make_sides(tmp_path, b_kw={"shift": {4: 0.05}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 1, res
    rows = paired(res)
    slow = [r for r in rows if r["gems"]["verdict"] == "SLOWER"]
    assert len(slow) == 1 and slow[0]["shape_detail"] == SHAPES[2] and slow[0]["dtype"] == DTYPES[0]
    g = slow[0]["gems"]
    assert 1.04 < g["ratio"] < 1.06 and g["ci_low"] > 1.01 and g["ci_low"] < g["ratio"] < g["ci_high"]
    assert g["test"] == "student" and g["rounds_a"] == 3 and g["rounds_b"] == 3 and g["q"] <= 0.05
    # the torch control did not move
    assert all(r["torch"]["verdict"] in ("SAME", "UNSURE") for r in rows)
    assert res.json["summary"]["regression"] is True and res.json["summary"]["exit_code"] == 1
    assert "result: REGRESSION: 1 gems row SLOWER beyond 1.00% (exit 1)" in res.out
    line = next(l for l in res.out.splitlines() if "SLOWER" in l and "1024" in l)
    assert "+5." in line


def test_a_verdict_whose_control_moved_too_says_so(zlb, tmp_path):
    # On the H200 an A/A of per-operator processes against a warm worker read mm
    # 384x384 +4.0% SLOWER with its torch control +5.8% SLOWER: torch's kernels
    # do not change with the Triton build, so the row says it and so does the result.
    a, b = make_sides(tmp_path, b_kw={"shift": {4: 0.05, 7: 0.05}, "torch_shift": {4: 0.05}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--color", "never")
    assert res.rc == 1, res
    slow = [r for r in paired(res) if r["gems"]["verdict"] == "SLOWER"]
    assert len(slow) == 2, slow
    moved = [l for l in res.out.splitlines() if l.startswith("softmax") and "ctl too" in l]
    assert len(moved) == 1 and "1024" in moved[0], res.out      # row 4 only, not row 7
    assert "ctl too  the torch control moved the same way on this row" in res.out
    assert ("result: REGRESSION: 2 gems rows SLOWER beyond 1.00% (on some the torch "
            "control moved too: ctl too) (exit 1)") in res.out
    a, b = make_sides(tmp_path / "all", b_kw={"shift": {4: 0.05}, "torch_shift": {4: 0.05}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--color", "never")
    assert ("result: REGRESSION: 1 gems row SLOWER beyond 1.00% (on every one the torch "
            "control moved too) (exit 1)") in res.out, res.out


def test_faster_and_threshold(zlb, tmp_path):
    a, b = make_sides(tmp_path, b_kw={"shift": {0: -0.05, 6: 0.02}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--threshold", "3")
    # +2% is below a 3% threshold: no regression, whatever its significance
    assert res.rc == 0, res
    v = {(r["dtype"], r["shape_detail"]): r["gems"]["verdict"] for r in paired(res)}
    assert v[(DTYPES[0], SHAPES[0])] == "FASTER"
    assert v[(DTYPES[0], SHAPES[3])] in ("SAME", "UNSURE")
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--threshold", "1%")
    assert res.rc == 1, res
    assert res.json["settings"]["threshold"] == pytest.approx(0.01)


def test_aa_gives_same_or_unsure_and_exit_0(zlb, tmp_path):
    a, b = make_sides(tmp_path, rounds=3)
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 0, res
    verdicts = [r[k]["verdict"] for r in paired(res) for k in ("gems", "torch")]
    assert len(verdicts) == 20 and set(verdicts) <= {"SAME", "UNSURE"}
    assert verdicts.count("SAME") >= 10
    assert "result: no significant regression beyond 1.00%" in res.out


def test_single_rounds_line_up_their_probe_draws(zlb, tmp_path):
    # Each process's probes spread 0.6% about its measured graph, but probe i
    # lands alike in both (one allocation history: an H200 batch's processes
    # repeated a cumsum's +0.8 -0.5 -0.5% to 0.2%): what they do not share is
    # small, and one round a side says SAME.
    kw = dict(rounds=1, drift=0.0003, placement=(0.006, 3))
    a, b = make_sides(tmp_path / "spread", **kw)
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    rows = paired(res)
    assert {r["gems"]["placement_model"] for r in rows} == {"spread"}
    assert {r["gems"]["verdict"] for r in rows} == {"UNSURE"}
    a, b = make_sides(tmp_path / "aligned", a_kw={"draws": [0.0084, -0.0050, -0.0047]},
                      b_kw={"draws": [0.0066, -0.0051, None]}, **kw)
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 0, res
    rows = paired(res)
    assert {r[k]["placement_model"] for r in rows for k in ("gems", "torch")} == {"aligned"}
    assert {r[k]["verdict"] for r in rows for k in ("gems", "torch")} == {"SAME"}
    # probe 3 is left out of both; 0, 0.0018, 0.0001 differ: var / 2
    want = statistics.variance([0, 0.0018, 0.0001]) / 2
    assert all(r["gems"]["placement_sd_a"] ** 2 == pytest.approx(want) for r in rows)
    # B's measured graph landed where A's probes did not (a 2048x4096
    # log_softmax's second process read -4.8 -12.0 +0.2% where the first
    # read +0.4 +0.4 +0.5%): its offsets are a placement apart, UNSURE
    a, b = make_sides(tmp_path / "apart", a_kw={"draws": [0.004, 0.004, 0.005]},
                      b_kw={"draws": [-0.048, -0.120, 0.002]}, **kw)
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    rows = paired(res)
    assert {r["gems"]["verdict"] for r in rows} == {"UNSURE"}
    assert all(r["gems"]["placement_sd_a"] > 0.03 for r in rows)


def test_single_rounds_take_the_placement_spread_they_measured(zlb, tmp_path):
    # One graph per process, 3% between where two processes' buffers land (an
    # H200's 1024x1024 softmax read 7.6% apart): the 0.1% floor false-flags,
    # the spread each round's probes measured does not.
    a, b = make_sides(tmp_path / "bare", rounds=1, drift=0.03)
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc in (0, 1), res
    flagged = [r for r in paired(res) for k in ("gems", "torch")
               if r[k]["verdict"] in ("SLOWER", "FASTER")]
    assert flagged, res
    assert all(r["gems"]["placement_sd_a"] is None for r in paired(res))
    a, b = make_sides(tmp_path / "probed", rounds=1, drift=0.03, placement=(0.03, 3))
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 0, res
    rows = paired(res)
    assert all(r[k]["verdict"] in ("SAME", "UNSURE") for r in rows for k in ("gems", "torch"))
    assert all(r["gems"]["placement_sd_a"] == pytest.approx(0.03) for r in rows)
    assert all(r["gems"]["drift_floor_b"] == pytest.approx(math.hypot(0.001, 0.03))
               for r in rows)
    assert all(r["gems"]["df"] is not None and r["gems"]["df"] < 10 for r in rows)
    # Rounds measure the drift themselves, and their probes add degrees of
    # freedom to it: 3 + 3 rounds (4 df) and 6 x 3 probes (18 df).
    a, b = make_sides(tmp_path / "rounds", rounds=3, placement=(0.03, 3))
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert all(r["gems"]["placement_sd_a"] is None and r["gems"]["drift_floor_a"] is None
               for r in paired(res))
    assert all(r["gems"]["df"] == pytest.approx(22) for r in paired(res))


def test_unsure_rows_say_how_many_rounds_would_settle_them(zlb, tmp_path):
    # One round a side whose probes say buffers land 0.6% apart: UNSURE at a
    # 1% band. Per side 0.6% placement, the 0.1% floor and the median's own
    # noise make 3.8e-5; an interval 0.4 x ln(1.01) wide each way asks
    # z^2 x 7.6e-5 / 0.00398^2 = 18.3 rounds a side, t's tails a few more.
    kw = dict(drift=0.0003, placement=(0.006, 3))
    a, b = make_sides(tmp_path / "one", rounds=1, **kw)
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--wide")
    assert res.rc == 0, res
    rows = paired(res)
    assert {r["gems"]["verdict"] for r in rows} == {"UNSURE"}
    need = {r["gems"]["rounds_needed"] for r in rows}
    assert need and need <= set(range(19, 25)), need
    assert all(r["torch"]["rounds_needed"] in range(19, 25) for r in rows)
    assert re.search(r"UNSURE .* needs (19|2[0-4]) rounds", res.out), res.out
    assert "needs N rounds  with the noise this comparison measured" in res.out
    lo, hi = min(need), max(need)
    assert ("note: by their noise, %d UNSURE gems rows would settle with %s rounds a side: "
            % (len(rows), "%d-%d" % (lo, hi) if hi > lo else lo)) in res.out, res.out
    assert {c["gems_rounds_needed"] for c in res.csv if c["pairing"] == "paired"} == \
        {str(n) for n in need}
    # That many rounds a side, afresh: every row SAME, and no plan left to give.
    a, b = make_sides(tmp_path / "planned", rounds=max(need), **kw)
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--wide")
    assert res.rc == 0, res
    assert {r["gems"]["verdict"] for r in paired(res)} == {"SAME"}
    assert "needs" not in res.out
    # 3% apart (a few-us kernel on one graph): no count of rounds is the remedy.
    a, b = make_sides(tmp_path / "lottery", rounds=1, drift=0.03, placement=(0.03, 3))
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--wide")
    assert all(r["gems"]["rounds_needed"] > 100 for r in paired(res))
    assert "needs >100 rounds" in res.out
    assert ("note: by their noise, %d UNSURE gems rows would not settle with 100 rounds a "
            "side (they move with placement" % len(paired(res))) in res.out, res.out
    # --threshold 0 has no band to plan for
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--threshold", "0")
    assert {r["gems"]["rounds_needed"] for r in paired(res)} == {None}
    assert "needs" not in res.out


def test_rounds_at_different_clocks_are_noted(zlb, tmp_path):
    # A 4096^3 addmm under an H200's power cap ran at 1305-1357 MHz in four
    # processes and its time followed the clock: the row says so. Row 1's
    # clocks agree within 0.5%: no note. The other rows read no clock.
    clocks = {"A": (1305.0, 1350.0), "B": (1335.0, 1357.0)}
    calm = {"A": (1980.0, 1975.0), "B": (1980.0, 1980.0)}
    rec = tmp_path / "A" / "r0"
    for side in "AB":
        for k in range(2):
            mode = ({"mode": "record"} if side == "A" and k == 0 else
                    {"mode": "replay", "replay_from": rec})
            seed = (100 if side == "A" else 200) + k
            make_run(tmp_path / side / f"r{k}", base_rows(), seed, **mode,
                     gems_fields={0: {"clock_mhz": clocks[side][k]},
                                  1: {"clock_mhz": calm[side][k]}})
    res = compare(zlb, tmp_path / "A", tmp_path / "B", "--out", zlb.cwd / "out", "--wide")
    assert res.rc in (0, 1), res
    rows = paired(res)
    g = {(r["dtype"], r["shape_detail"]): r["gems"] for r in rows}
    first, second = g[(DTYPES[0], SHAPES[0])], g[(DTYPES[1], SHAPES[0])]
    assert first["clock_mhz_a"] == [1305.0, 1350.0] and first["clock_mhz_b"] == [1335.0, 1357.0]
    assert second["clock_mhz_a"] == [1980.0, 1975.0]
    assert g[(DTYPES[0], SHAPES[1])]["clock_mhz_a"] == [None, None]
    noted = [line for line in res.out.splitlines() if "clock 1305-1357 MHz" in line]
    assert len(noted) == 1 and SHAPES[0][:12] in noted[0] and "float16" in noted[0], res.out
    assert res.out.count(" MHz") == 2, res.out      # the row's note and the legend
    assert "clock LO-HI MHz  the row's rounds ran at steady SM clocks more than 0.5% apart" \
        in res.out


def test_effective_clocks_apart_turn_a_verdict_unsure(zlb, tmp_path):
    # One round a side, B's gems 1.7% faster on rows 0 and 1, NVML at 1980
    # MHz on every row (as on an H100 in issue 28). Row 0's spin graphs read
    # the SM clock at 1945.4 MHz in A and 1975.0 in B, two steps of the
    # clock table that NVML did not show: what the clock can explain beyond
    # a step is in its interval, and it is no verdict. Row 1's read one
    # clock: FASTER.
    def fields(eff):
        return {0: {"clock_mhz": 1980.0, "effective_mhz": eff},
                1: {"clock_mhz": 1980.0, "effective_mhz": 1975.0}}
    a, b = make_sides(tmp_path, rounds=1, n=400, noise=0.001, drift=0.0,
                      a_kw={"gems_fields": fields(1945.4)},
                      b_kw={"gems_fields": fields(1975.0), "shift": {0: -0.017, 1: -0.017}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc in (0, 1), res
    g = {(r["dtype"], r["shape_detail"]): r["gems"] for r in paired(res)}
    apart, one = g[(DTYPES[0], SHAPES[0])], g[(DTYPES[1], SHAPES[0])]
    assert apart["effective_mhz_a"] == [1945.4] and apart["effective_mhz_b"] == [1975.0]
    assert apart["clock_shift"] == pytest.approx(
        math.log(1975.0 / 1945.4) - math.log1p(15 / 1945.4), rel=1e-9)
    assert apart["verdict"] == "UNSURE" and apart["ci_high"] > 0.99
    assert one["clock_shift"] == 0 and one["verdict"] == "FASTER"
    assert g[(DTYPES[0], SHAPES[1])]["effective_mhz_a"] == [None]
    noted = [line for line in res.out.splitlines() if "eff 1945-1975 MHz" in line]
    assert len(noted) == 1 and SHAPES[0][:12] in noted[0], res.out
    assert "eff LO-HI MHz  the SM clock the row's kernels really ran at" in res.out


def test_a_clock_that_moved_while_a_row_sampled_is_no_effective_clock(zlb, tmp_path):
    # As above, B's gems 1.7% faster at one NVML clock. Row 0's A read its
    # spin at 1700 MHz before the sampling and 1945 after (a power-capped
    # GEMM on an H100): no clock its samples ran at, so A's round has no
    # effective clock and the row is read on NVML's (FASTER). Row 1's A
    # read 1945.4 both times, two levels below B: widened, UNSURE.
    def fields(reads):
        return {"clock_mhz": 1980.0, "effective_mhz": math.sqrt(reads[0] * reads[1]),
                "effective_mhz_reads": reads}
    a, b = make_sides(tmp_path, rounds=1, n=400, noise=0.001, drift=0.0,
                      a_kw={"gems_fields": {0: fields([1700.0, 1945.0]),
                                            1: fields([1945.4, 1945.4])}},
                      b_kw={"gems_fields": {0: fields([1975.0, 1975.0]),
                                            1: fields([1975.0, 1975.0])},
                            "shift": {0: -0.017, 1: -0.017}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc in (0, 1), res
    g = {(r["dtype"], r["shape_detail"]): r["gems"] for r in paired(res)}
    moved, apart = g[(DTYPES[0], SHAPES[0])], g[(DTYPES[1], SHAPES[0])]
    assert moved["effective_mhz_a"] == [None] and moved["effective_mhz_b"] == [1975.0]
    assert moved["clock_shift"] == 0 and moved["verdict"] == "FASTER"
    assert apart["effective_mhz_a"] == [pytest.approx(1945.4)]
    assert apart["clock_shift"] > 0.007 and apart["verdict"] == "UNSURE"


def test_a_row_that_read_its_elasticity_is_corrected_for_the_clocks(zlb, tmp_path):
    # B ran its spin 1.5% faster and its gems rows read 1.2% faster (s
    # 0.8): widened by the clocks less a step such a row is UNSURE. Row 0
    # read s on both sides (--clock-elasticity): the interval moves by s dc
    # and the row is SAME. Row 1's B read an s of 7.5, no kernel's response
    # to its clock: taken as not read, the row is widened as before.
    dc = math.log(1.015)

    def fields(eff, junk=False):
        f = {"clock_mhz": 1980.0, "effective_mhz": eff, "clock_elasticity": 0.8,
             "clock_elasticity_se": 0.01, "clock_elasticity_pairs": 90}
        return {0: f, 1: dict(f, clock_elasticity=7.5) if junk else f}
    a, b = make_sides(tmp_path, rounds=1, n=400, noise=0.001, drift=0.0,
                      a_kw={"gems_fields": fields(1945.0)},
                      b_kw={"gems_fields": fields(1945.0 * 1.015, junk=True),
                            "shift": {0: -0.8 * dc, 1: -0.8 * dc}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc in (0, 1), res
    g = {(r["dtype"], r["shape_detail"]): r["gems"] for r in paired(res)}
    read, junk = g[(DTYPES[0], SHAPES[0])], g[(DTYPES[1], SHAPES[0])]
    assert read["elasticity"] == pytest.approx(0.8)
    assert read["clock_correction"] == pytest.approx(0.8 * dc, rel=1e-6)
    assert read["ratio"] < 0.992 and read["verdict"] == "SAME", read
    assert junk["elasticity"] is None and junk["clock_correction"] is None
    assert junk["ratio"] < 0.992 and junk["verdict"] == "UNSURE", junk
    noted = [line for line in res.out.splitlines() if "eff 1945-1974 MHz" in line]
    assert len(noted) == 2 and sum(" s 0.80" in line for line in noted) == 1, res.out
    assert "eff ... s S  every round of the row read how far" in res.out


def test_elasticity_from_a_calibration_run_corrects_rounds_that_read_none(zlb, tmp_path):
    # The sides read no s (the default: the burn would perturb their rows);
    # a calibration run on the same GPU read s 0.8 for row 0 only. B ran
    # its spin 1.5% faster and read 1.2% faster on rows 0 and 1: row 0 is
    # corrected (SAME), row 1 is widened as before (UNSURE).
    dc = math.log(1.015)
    eff = {0: {"clock_mhz": 1980.0, "effective_mhz": 1945.0},
           1: {"clock_mhz": 1980.0, "effective_mhz": 1945.0}}
    eff_b = {i: dict(f, effective_mhz=1945.0 * 1.015) for i, f in eff.items()}
    a, b = make_sides(tmp_path, rounds=1, n=400, noise=0.001, drift=0.0,
                      a_kw={"gems_fields": eff},
                      b_kw={"gems_fields": eff_b, "shift": {0: -0.8 * dc, 1: -0.8 * dc}})
    cal = tmp_path / "cal"
    s_fields = {"clock_elasticity": 0.8, "clock_elasticity_se": 0.01,
                "clock_elasticity_pairs": 90}
    for k, s in enumerate((0.78, 0.8, 0.84)):
        make_run(cal / f"r{k}", base_rows(), 300 + k,
                 gems_fields={0: dict(s_fields, clock_elasticity=s)})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--elasticity-from", cal)
    assert res.rc in (0, 1), res
    g = {(r["dtype"], r["shape_detail"]): r["gems"] for r in paired(res)}
    took, none = g[(DTYPES[0], SHAPES[0])], g[(DTYPES[1], SHAPES[0])]
    # the calibration's median, not its mean
    assert took["elasticity"] == pytest.approx(0.8) and took["verdict"] == "SAME", took
    assert none["elasticity"] is None and none["verdict"] == "UNSURE", none
    assert "clock elasticity: 2 rounds of 1 row took s from" in res.out
    # and compare.json says where, for a report to take it again
    assert res.json["settings"]["elasticity_from"] == str(cal)

    # Refused with a sentence and exit 2: no directory, no run, no s read,
    # another GPU.
    empty = tmp_path / "empty"
    empty.mkdir()
    plain = tmp_path / "plain"
    make_run(plain / "r0", base_rows(), 400)
    other = tmp_path / "other"
    make_run(other / "r0", base_rows(), 401, caliber={"device": "NVIDIA H100 80GB HBM3"},
             gems_fields={0: s_fields})
    for where, says in ((tmp_path / "nowhere", "is not a directory"),
                        (empty, "holds no run"),
                        (plain, "none of its rows read a clock elasticity"),
                        (other, "ran on NVIDIA H100 80GB HBM3, and run")):
        res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--elasticity-from", where)
        assert res.rc == 2 and says in res.err, (where, res)


def test_aa_single_round_notes_the_drift_floor(zlb, tmp_path):
    # 0.08% drift between processes, 1% sample noise: samples alone would flag
    a, b = make_sides(tmp_path, rounds=1, drift=0.0008)
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 0, res
    rows = paired(res)
    assert {r["gems"]["test"] for r in rows} == {"mwu+floor"}
    assert all(r["gems"]["verdict"] in ("SAME", "UNSURE") for r in rows)
    assert all(r["gems"]["drift_floor_a"] == pytest.approx(0.001) for r in rows)
    assert "assume a drift per side of 0.10% (--drift-floor) plus how far the rounds'" in res.out
    assert res.json["summary"]["single_round"] is True
    # ... and without the floor the same data false-flag (threshold 0: the test alone)
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--drift-floor", "0", "--threshold", "0")
    flagged = [r for r in paired(res) if r["gems"]["verdict"] in ("SLOWER", "FASTER")
               or r["torch"]["verdict"] in ("SLOWER", "FASTER")]
    assert flagged, res


def test_another_calls_per_replay_is_flagged(zlb, tmp_path):
    # B's third round captured 4096 calls per replay on row 3, where every
    # other run and row captured 2048.
    rows = base_rows()
    rec = tmp_path / "A" / "r0"
    for k in range(3):
        make_run(tmp_path / "A" / f"r{k}", rows, 100 + k, ks={},
                 **({"mode": "record"} if k == 0 else {"mode": "replay", "replay_from": rec}))
        make_run(tmp_path / "B" / f"r{k}", rows, 200 + k, mode="replay", replay_from=rec,
                 ks={3: 4096} if k == 2 else {})
    res = compare(zlb, tmp_path / "A", tmp_path / "B", "--out", zlb.cwd / "out")
    flagged = [r for r in paired(res) if r["fallback"]]
    assert [r["shape_detail"] for r in flagged] == [rows[3]["shape"]], res
    assert flagged[0]["markers_a"] == flagged[0]["markers_b"] == ["CALLS_PER_REPLAY_DIFFERS"]
    assert "!B:K" in res.out and "CALLS_PER_REPLAY_DIFFERS: the sides captured" in res.out
    # Rows that give no K (direct timing, older runs) are not flagged.
    assert res.json["summary"]["fallback_rows"] == 1


def test_placements_are_averaged_as_the_engine_does(zlb, tmp_path):
    # Rounds sampled on 8 placements (sample i ran placement i % 8): five
    # at the row's centre, three 1% above. The engine reports the mean of
    # the placements' medians (centre +0.375%); the pooled median sits in
    # the big cluster. compare must use the engine's centre.
    rows = base_rows()[:2]
    levels = [1.0] * 5 + [1.01] * 3

    def placed(path, seed, mode, **kw):
        make_run(path, rows, seed, mode=mode, noise=0.001, drift=0.0, **kw)
        lines = (path / "results.jsonl").read_text().splitlines()
        out = []
        for line in lines:
            row = json.loads(line)
            for kind in ("gems", "torch"):
                m = row[kind]
                x = [v * levels[i % 8] for i, v in enumerate(m["samples_ms"])]
                m.update(samples_ms=x, placements=8, median_ms=sorted(x)[len(x) // 2])
                per = [sorted(x[k::8])[len(x[k::8]) // 2] for k in range(8)]
                m["centre_ms"] = sum(per) / 8
            out.append(json.dumps(row))
        (path / "results.jsonl").write_text("\n".join(out) + "\n")
        return [json.loads(line)["gems"] for line in out]

    a = placed(tmp_path / "A" / "r0", 1, "record")
    placed(tmp_path / "B" / "r0", 2, "replay", replay_from=tmp_path / "A" / "r0")
    res = compare(zlb, tmp_path / "A", tmp_path / "B", "--out", zlb.cwd / "out")
    assert res.rc == 0, res
    got = {r["dtype"]: r["gems"]["a_ms"] for r in paired(res)}
    for row, m in zip(rows, a):
        assert got[row["dtype"]] == pytest.approx(m["centre_ms"], rel=1e-9)
        assert m["centre_ms"] > m["median_ms"] * 1.002    # not the pooled median


def test_without_samples_the_centre_stands_for_the_round(zlb, tmp_path):
    # A measurement kept without its samples is one value: centre_ms where
    # the engine gave one (not the pooled median_ms), else median_ms.
    rows = base_rows()[:1]
    for side, seed, mode in (("A", 1, "record"), ("B", 2, "replay")):
        path = tmp_path / side / "r0"
        make_run(path, rows, seed, mode=mode, replay_from=tmp_path / "A" / "r0")
        row = json.loads((path / "results.jsonl").read_text())
        del row["gems"]["samples_ms"], row["torch"]["samples_ms"]
        if side == "A":
            row["gems"]["centre_ms"] = row["gems"]["median_ms"] * 1.01
        (path / "results.jsonl").write_text(json.dumps(row) + "\n")
    a = json.loads((tmp_path / "A" / "r0" / "results.jsonl").read_text())
    res = compare(zlb, tmp_path / "A", tmp_path / "B", "--out", zlb.cwd / "out")
    assert res.rc == 0, res
    (r,) = paired(res)
    assert r["gems"]["a_ms"] == pytest.approx(a["gems"]["centre_ms"], rel=1e-12)
    assert r["torch"]["a_ms"] == pytest.approx(a["torch"]["median_ms"], rel=1e-12)


def test_fallback_marker_is_flagged(zlb, tmp_path):
    a, b = make_sides(tmp_path, b_kw={"markers": {1: ["BENCHMARK_DIRECT_NO_CUDAGRAPH"]}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    rows = paired(res)
    flagged = [r for r in rows if r["fallback"]]
    assert len(flagged) == 1 and flagged[0]["markers_b"] == ["BENCHMARK_DIRECT_NO_CUDAGRAPH"]
    assert flagged[0]["markers_a"] == []
    assert res.json["summary"]["fallback_rows"] == 1
    line = next(l for l in res.out.splitlines() if "!B:direct" in l)
    assert "bfloat16" in line and "256, 256" in line
    assert "BENCHMARK_DIRECT_NO_CUDAGRAPH: the row fell back" in res.out
    row = next(r for r in res.csv if r["markers_b"])
    assert row["markers_b"] == "BENCHMARK_DIRECT_NO_CUDAGRAPH"


def test_a_graph_without_kernels_is_excluded_from_verdicts(zlb, tmp_path):
    # Row 4 is 5% slower in B, but one of B's rounds captured a graph with no
    # kernel node for it (a view such as torch.conj): that row measured
    # nothing, so it gets no verdict, makes no regression and stays out of
    # the other rows' FDR family.
    rows = base_rows()
    for root in (tmp_path / "all", tmp_path / "without"):
        rec = root / "A" / "r0"
        for k in range(3):
            make_run(root / "A" / f"r{k}", rows, 100 + k,
                     **({"mode": "record"} if k == 0 else {"mode": "replay", "replay_from": rec}))
            make_run(root / "B" / f"r{k}", rows, 200 + k, mode="replay", replay_from=rec,
                     shift={4: 0.05}, markers={4: ["GRAPH_NO_KERNELS"]} if k == 1 else None)
    # The same runs without row 4 at all: the other rows' q must not change.
    for results in (tmp_path / "without").glob("*/r*/results.jsonl"):
        lines = [l for l in results.read_text().splitlines() if json.loads(l)["index"] != 4]
        results.write_text("\n".join(lines) + "\n")
    res = compare(zlb, tmp_path / "all" / "A", tmp_path / "all" / "B", "--out", zlb.cwd / "out")
    assert res.rc == 0, res
    (row,) = [r for r in paired(res) if r["gems"]["verdict"] == "EXCLUDED"]
    assert (row["dtype"], row["shape_detail"]) == (DTYPES[0], SHAPES[2])
    assert row["fallback"] is True and row["markers_b"] == ["GRAPH_NO_KERNELS"]
    assert row["gems"]["verdict"] == row["torch"]["verdict"] == "EXCLUDED"
    assert row["gems"]["q"] is None and row["torch"]["q"] is None
    assert row["gems"]["ratio"] > 1.04          # still shown, with its interval
    s = res.json["summary"]
    assert (s["excluded_rows"], s["fallback_rows"], s["regression"]) == (1, 1, False)
    for kind in ("gems", "torch"):
        assert s[kind]["compared"] == 9
        assert sum(s[kind][v] for v in ("SAME", "FASTER", "SLOWER", "UNSURE")) == 9
    line = next(l for l in res.out.splitlines() if "!B:no-kernels" in l)
    assert "EXCLUDED" in line and "1024, 1024" in line
    assert "GRAPH_NO_KERNELS: the measured graph holds no kernel node" in res.out
    assert "10 paired rows" in res.out and "1 flagged (1 EXCLUDED: GRAPH_NO_KERNELS)" in res.out
    assert "result: no significant regression" in res.out
    c = next(r for r in res.csv if r["markers_b"])
    assert (c["gems_verdict"], c["torch_verdict"], c["gems_q"]) == ("EXCLUDED", "EXCLUDED", "")
    q_all = {(r["dtype"], r["shape_detail"]): (r["gems"]["q"], r["torch"]["q"])
             for r in paired(res) if r["gems"]["verdict"] != "EXCLUDED"}
    res = compare(zlb, tmp_path / "without" / "A", tmp_path / "without" / "B",
                  "--out", zlb.cwd / "out")
    assert q_all == {(r["dtype"], r["shape_detail"]): (r["gems"]["q"], r["torch"]["q"])
                     for r in paired(res)}


def test_torch_control_that_moves_is_reported(zlb, tmp_path):
    rows = base_rows()
    slow_machine = [dict(r, torch=r["torch"] * 1.04) for r in rows]
    rec = tmp_path / "A" / "r0"
    for k in range(3):
        make_run(tmp_path / "A" / f"r{k}", rows, 10 + k, mode="record" if k == 0 else "replay",
                 replay_from=rec if k else None)
        make_run(tmp_path / "B" / f"r{k}", slow_machine, 20 + k, mode="replay", replay_from=rec)
    res = compare(zlb, tmp_path / "A", tmp_path / "B", "--out", zlb.cwd / "out")
    assert res.rc == 0, res            # only gems rows decide the exit status
    assert res.json["summary"]["torch"]["SLOWER"] == 10
    assert "warning: the torch control moved on 10 of 10 rows" in res.err


# ---- files and syntax ---------------------------------------------------------------

def test_csv_and_json_content(zlb, tmp_path):
    a, b = make_sides(tmp_path, b_kw={"shift": {4: 0.05}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    j = res.json
    assert j["schema_version"] == 1 and j["kind"] == "zlb-compare"
    assert j["settings"] == {"threshold": 0.01, "fdr": 0.05, "drift_floor": 0.001,
                             "bootstrap": 2000, "seed": 1, "confidence": 0.95,
                             "elasticity_from": None}
    assert j["a"]["rounds"] == 3 and j["b"]["rounds"] == 3
    assert j["a"]["runs"][0]["caliber"]["autotune_mode"] == "record"
    assert len(res.csv) == 10
    for row, jr in zip(res.csv, j["rows"]):
        g = jr["gems"]
        assert row["shape_detail"] == jr["shape_detail"]     # commas survive CSV quoting
        assert float(row["gems_ratio"]) == pytest.approx(g["b_ms"] / g["a_ms"], rel=1e-5)
        assert float(row["gems_ratio"]) == pytest.approx(g["ratio"], abs=1e-6)
        assert row["gems_verdict"] == g["verdict"] and row["torch_verdict"] == jr["torch"]["verdict"]
        assert float(row["gems_ci_low"]) <= float(row["gems_ratio"]) <= float(row["gems_ci_high"])
        assert 0 <= float(row["gems_q"]) <= 1 and float(row["gems_p"]) <= float(row["gems_q"]) + 1e-12
        assert g["samples_a"] == 600 and g["samples_b"] == 600
    # the centre is the geometric mean of the rounds' medians
    want_a = math.exp(sum(math.log(sorted(json.loads(l)["gems"]["samples_ms"])[99:101][0] * 0.5
                                   + sorted(json.loads(l)["gems"]["samples_ms"])[99:101][1] * 0.5)
                          for k in range(3)
                          for l in [(a / f"r{k}" / "results.jsonl").read_text().splitlines()[0]]) / 3)
    assert j["rows"][0]["gems"]["a_ms"] == pytest.approx(want_a, rel=1e-12)


def test_deterministic_output(zlb, tmp_path):
    a, b = make_sides(tmp_path, b_kw={"shift": {2: 0.01}})
    first = compare(zlb, a, b, "--out", zlb.cwd / "out")
    again = compare(zlb, a, b, "--out", zlb.cwd / "out")
    for r in (first.json, again.json):
        r.pop("created_at")
    assert first.json == again.json and first.out == again.out
    other = compare(zlb, a, b, "--out", zlb.cwd / "out", "--seed", "7")
    assert other.json["settings"]["seed"] == 7
    assert [r["gems"]["ratio"] for r in other.json["rows"]] == [r["gems"]["ratio"] for r in first.json["rows"]]
    # the bootstrap only widens the t interval (the interval is their hull)
    t_only = compare(zlb, a, b, "--out", zlb.cwd / "out", "--bootstrap", "0")
    for w, t in zip(first.json["rows"], t_only.json["rows"]):
        assert w["gems"]["ci_low"] <= t["gems"]["ci_low"] + 1e-15
        assert w["gems"]["ci_high"] >= t["gems"]["ci_high"] - 1e-15


def test_round_syntaxes_agree(zlb, tmp_path):
    a, b = make_sides(tmp_path, b_kw={"shift": {4: 0.05}})
    runs_a = [a / f"r{k}" for k in range(3)]
    runs_b = [b / f"r{k}" for k in range(3)]
    by_dir = compare(zlb, a, b, "--out", zlb.cwd / "out")
    by_list = compare(zlb, *runs_a, "--", *runs_b, "--out", zlb.cwd / "out")
    by_flag = compare(zlb, *[x for r in runs_a for x in ("--a", r)],
                      *[x for r in runs_b for x in ("--b", r)], "--out", zlb.cwd / "out")
    for r in (by_dir, by_list, by_flag):
        assert r.rc == 1, r
        r.json.pop("created_at")
    assert by_dir.json == by_list.json == by_flag.json


def test_files_only_where_asked(zlb, tmp_path):
    # No --out: standard output only, nothing written in the current directory.
    a, b = make_sides(tmp_path / "data")
    res = zlb.cmd("compare", str(a), str(b))
    assert res.rc == 0, res
    assert sorted(p.name for p in zlb.cwd.iterdir()) == ["data", "home"]
    assert "wrote" not in res.out and "result: no significant regression" in res.out
    # --out DIR: both files, and the table says where
    res = zlb.cmd("compare", str(a), str(b), "--out", "o")
    assert res.rc == 0, res
    assert (zlb.cwd / "o" / "compare.csv").is_file() and (zlb.cwd / "o" / "compare.json").is_file()
    assert "wrote o/compare.csv and o/compare.json" in res.out
    # --out - is refused; no directory named '-' appears
    res = zlb.cmd("compare", str(a), str(b), "--out", "-")
    assert res.rc == 2 and not (zlb.cwd / "-").exists(), res
    assert res.err.count("zlb compare --help") == 1


@pytest.mark.parametrize("args,msg", [
    ([], "compare needs A and B"),
    (["x"], "compare needs A and B"),
    (["x", "y", "z"], "separate A's rounds from B's with '--'"),
    (["x", "--"], "'--' needs A's directories before it and B's after it"),
    (["--a", "x"], "both --a and --b are needed"),
    (["--a", "x", "--b", "y", "z"], "not both"),
    (["x", "y", "--threshold", "abc"], "--threshold takes a percentage"),
    (["x", "y", "--fdr", "1.5"], "--fdr takes a level in (0, 1)"),
    (["x", "y", "--bootstrap", "5"], "--bootstrap takes 0 or a count"),
    (["x", "y", "--color", "sometimes"], "'sometimes' is not one of auto, always, never"),
    (["x", "y", "--frobnicate"], "unknown option '--frobnicate'"),
    (["x", "y", "--thresold", "1"], "unknown option '--thresold'; did you mean --threshold?"),
    (["x", "y", "--out", "-"], "--out takes a directory for the files"),
    (["x", "y", "--format", "xml"], "'xml' is not one of table, json, csv, md"),
    (["x", "y", "--sort", "speed"], "'speed' is not one of ratio, q, name"),
])
def test_usage_errors_exit_2(zlb, args, msg):
    res = zlb.cmd("compare", *args)
    assert res.rc == 2, res
    assert msg in res.err


def test_same_run_twice_is_refused(zlb, tmp_path):
    a, b = make_sides(tmp_path)
    res = zlb.cmd("compare", str(a / "r0"), str(a / "r1"), "--", str(a / "r0"), str(b / "r0"))
    assert res.rc == 2 and "is given twice" in res.err, res


def test_no_data_exits_8(zlb, tmp_path):
    a, b = make_sides(tmp_path)
    (tmp_path / "empty").mkdir()
    res = zlb.cmd("compare", str(a), str(tmp_path / "nope"))
    assert res.rc == 8 and "is not a directory" in res.err, res
    res = zlb.cmd("compare", str(a), str(tmp_path / "empty"))
    assert res.rc == 8 and "holds none" in res.err, res
    # different operators: nothing pairs
    other = [dict(r, op="layer_norm") for r in base_rows("layer_norm")]
    make_run(tmp_path / "ln", other, 5, mode="replay")
    res = compare(zlb, a / "r0", tmp_path / "ln", "--out", zlb.cwd / "out")
    assert res.rc == 8, res
    assert "result: nothing to compare" in res.err and "nothing to compare" not in res.out
    assert res.json["summary"]["only_a"] == 10 and res.json["summary"]["only_b"] == 10


def test_help_and_command_table(zlb):
    res = zlb.cmd("compare", "--help")
    assert res.rc == 0 and "zlb compare [options] A1 A2 ... -- B1 B2 ..." in res.out
    assert re.search(r"^  4 +calibers differ", res.out, re.M)
    res = zlb.cmd("help")
    assert "compare" in res.out


def test_color_always_marks_verdicts(zlb, tmp_path):
    a, b = make_sides(tmp_path, b_kw={"shift": {4: 0.05, 0: -0.05}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--color", "always")
    assert "\033[31mSLOWER\033[0m" in res.out and "\033[32mFASTER\033[0m" in res.out
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert "\033[" not in res.out


# ---- standard output ----------------------------------------------------------------

def test_a_table_that_cannot_be_written_is_an_error(zlb, tmp_path):
    # git's run_builtin habit: a lost stdout is not success (exit 7, a sentence).
    a, b = make_sides(tmp_path)
    with open("/dev/full", "w") as full:
        r = subprocess.run([str(zlb.bin), "compare", str(a), str(b), "--out", str(tmp_path / "o")],
                           stdout=full, stderr=subprocess.PIPE, text=True, env=zlb.env,
                           timeout=60)
    assert r.returncode == 7, r.stderr
    assert "zlb compare: could not write to standard output: No space left on device" in r.stderr
    # what was written to files stays written
    assert (tmp_path / "o" / "compare.json").exists()
    with open("/dev/full", "w") as full:
        r = subprocess.run([str(zlb.bin), "version"], stdout=full, stderr=subprocess.PIPE,
                           text=True, env=zlb.env, timeout=60)
    assert r.returncode == 7 and "zlb version: could not write" in r.stderr


def test_an_unreadable_results_file_is_said_once(zlb, tmp_path):
    a, b = make_sides(tmp_path, rounds=1)
    rows = b / "r0" / "results.jsonl"
    rows.unlink()
    rows.mkdir()                     # there, but not a file that can be read
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 8, res
    said = [l for l in res.err.splitlines() if "results.jsonl" in l]
    assert len(said) == 1, res.err
    assert said[0].startswith("zlb compare: ")


def test_a_screen_against_a_full_run_is_refused_with_the_reason(zlb, tmp_path):
    a, b = make_sides(tmp_path, b_kw={"caliber": {"preset": "screen"}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 4, res
    # A's runs predate presets: their absence means full, and the reason is said.
    assert "!!! [caliber] preset: A=full B=screen (a screening run is for triage" in res.err
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--allow-caliber-mismatch")
    assert res.rc == 0, res


def test_keys_added_later_mean_what_every_run_before_them_did(zlb, tmp_path):
    a, b = make_sides(tmp_path, b_kw={"caliber": {"isolation": "process", "preset": "full"}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 0, res
    assert "[caliber]" not in res.err
    a, b = make_sides(tmp_path / "w", b_kw={"caliber": {"isolation": "worker"}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 4 and "isolation: A=process B=worker (a warm worker" in res.err, res


# A key added later, the value its absence means (every run before it ran
# so), and another value, which is another caliber.
IMPLIED = [
    ("tune_placement_probes", 3, 0),    # tuning probed as rows did before the knob; 0 since
    ("tune_rule", "rows", "budget"),    # configs were timed under the rows' rule
    ("preload_steady", 0, 0.002),       # the whole preload ran before --preload-steady
]


@pytest.mark.parametrize("key,then,other", IMPLIED)
def test_a_key_added_later_reads_as_what_it_meant_before(zlb, tmp_path, key, then, other):
    a, b = make_sides(tmp_path / "same", b_kw={"caliber": {key: then}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 0 and "[caliber]" not in res.out + res.err, res
    a, b = make_sides(tmp_path / "other", b_kw={"caliber": {key: other}})
    res = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert res.rc == 4 and "%s: A=%s B=%s" % (key, then, other) in res.err, res


def test_a_round_without_results_is_refused(zlb, tmp_path):
    # One round of three lost its results.jsonl: the side is not the rounds
    # asked for, so nothing is compared (a batch's never-measured operator is
    # another matter: test_batch_compare).
    a, b = make_sides(tmp_path)
    (a / "r1" / "results.jsonl").unlink()
    r = compare(zlb, a, b, "--out", zlb.cwd / "out")
    assert r.rc == 8, r
    assert "A run %s has no results.jsonl" % (a / "r1") in r.err, r.err
    # a single run without rows is refused too
    r = compare(zlb, a / "r1", b / "r0", "--out", zlb.cwd / "out")
    assert r.rc == 8, r


# ---- formats, files, pipes, JUnit, the terminal's width ---------------------------------

def test_formats_on_standard_output(zlb, tmp_path):
    a, b = make_sides(tmp_path, b_kw={"shift": {4: 0.05, 0: -0.05}})
    full = compare(zlb, a, b, "--out", zlb.cwd / "out")
    # json: compare.json's document, nothing else on stdout
    r = zlb.cmd("compare", str(a), str(b), "--format", "json")
    assert r.rc == 1, r
    j = json.loads(r.out)
    assert j["schema_version"] == 1 and j["kind"] == "zlb-compare"
    j.pop("created_at")
    full.json.pop("created_at")
    assert j == full.json
    assert "result:" not in r.out and "result: REGRESSION" not in r.err
    # csv: compare.csv's lines
    r = zlb.cmd("compare", str(a), str(b), "--format", "csv")
    assert r.rc == 1 and r.out == (zlb.cwd / "out" / "compare.csv").read_text(), r
    # md: for a pull request
    r = zlb.cmd("compare", str(a), str(b), "--format", "md")
    assert r.rc == 1, r
    md = r.out
    assert md.startswith("## zlb compare: B against A\n\n**Result: REGRESSION**: 1 gems row SLOWER")
    assert "| op | dtype | shape | A gems ms | B gems ms | B/A | 95% CI | q | verdict |" in md
    assert "| --- | --- | --- | ---: | ---: | ---: | --- | ---: | --- |" in md
    slow = next(l for l in md.splitlines() if "SLOWER" in l and l.startswith("|"))
    assert slow.startswith("| `softmax` | `float16` | `[torch.Size([1024, 1024]), 1]` |")
    assert "<details><summary>runs</summary>" in md and "\x1b" not in md
    # none of them wrote a file
    assert sorted(p.name for p in zlb.cwd.glob("compare.*")) == []
    assert sorted(p.name for p in (zlb.cwd / "out").iterdir()) == ["compare.csv", "compare.json"]


def test_only_changed_and_sort(zlb, tmp_path):
    a, b = make_sides(tmp_path, b_kw={"shift": {4: 0.05, 0: -0.05}})
    r = zlb.cmd("compare", str(a), str(b), "--only-changed", "--sort", "ratio")
    assert r.rc == 1, r
    rows = [l for l in r.out.splitlines() if "SLOWER" in l or "FASTER" in l or "SAME" in l
            or "UNSURE" in l]
    table = [l for l in rows if l.startswith("softmax")]
    assert [("SLOWER" in l, "FASTER" in l) for l in table] == [(True, False), (False, True)]
    assert "2 of 10 paired rows shown (--only-changed: SLOWER or FASTER)" in r.out
    # the same view in JSON, which says what it shows
    r = zlb.cmd("compare", str(a), str(b), "--only-changed", "--sort", "ratio",
                "--format", "json")
    j = json.loads(r.out)
    assert j["view"] == {"only_changed": True, "sort": "ratio"}
    assert [x["gems"]["verdict"] for x in j["rows"]] == ["SLOWER", "FASTER"]
    assert j["summary"]["paired"] == 10
    # by name: op, dtype, shape
    r = zlb.cmd("compare", str(a), str(b), "--sort", "name", "--format", "csv")
    keys = [(x["dtype"], x["shape_detail"]) for x in csv.DictReader(r.out.splitlines())]
    assert keys == sorted(keys)
    # by q: the most significant first
    r = zlb.cmd("compare", str(a), str(b), "--sort", "q", "--format", "json")
    qs = [x["gems"]["q"] for x in json.loads(r.out)["rows"]]
    assert qs == sorted(qs)
    # the files of --out keep every row in pairing order
    r = zlb.cmd("compare", str(a), str(b), "--only-changed", "--out", "o")
    assert len(json.loads((zlb.cwd / "o" / "compare.json").read_text())["rows"]) == 10


def long_shape_sides(tmp_path):
    shapes = [f"[torch.Size([{m}, {m}]), torch.Size([{m}, {m}]), torch.Size([{m}]), "
              f"dim=1, keepdim=True]" for m in (256, 512)]
    rows = [{"op": "fused_add_rms_norm", "dtype": "torch.float16", "shape": s,
             "gems": 0.002, "torch": 0.004} for s in shapes]
    return make_sides(tmp_path, rows=rows)


def test_table_fits_the_terminal_width(zlb, tmp_path):
    a, b = long_shape_sides(tmp_path)
    whole = "[torch.Size([256, 256]), torch.Size([256, 256]), torch.Size([256]), dim=1, keepdim=True]"
    # a pipe without COLUMNS: nothing is cut (the old 40-character cut is gone)
    r = zlb.cmd("compare", str(a), str(b))
    assert r.rc == 0 and whole in r.out, r
    # COLUMNS=300: the same
    r = zlb.cmd("compare", str(a), str(b), env={"COLUMNS": "300"})
    assert whole in r.out, r
    # COLUMNS=100, 80: the table's lines fit; the shape is cut and says so, the
    # torch control and the latencies are left out, and a line says which
    for cols in (100, 80):
        r = zlb.cmd("compare", str(a), str(b), env={"COLUMNS": str(cols)})
        table = r.out[r.out.index("\nop "):r.out.index("\ncompare: ")].strip("\n").splitlines()
        assert table and all(len(l) <= cols for l in table[:-1]), r.out
        assert whole not in r.out and any("..." in l for l in table), r.out
        assert table[-1].startswith(f"(not shown at {cols} columns: ") and \
            table[-1].endswith("; --wide shows every column)"), r.out
        assert "verdict" in table[0] and "95% CI" in table[0] and "B/A" in table[0]
    # --wide: every character whatever the width
    r = zlb.cmd("compare", str(a), str(b), "--wide", env={"COLUMNS": "100"})
    assert whole in r.out, r


def test_a_closed_pipe_loses_no_file(zlb, tmp_path):
    a, b = make_sides(tmp_path)
    out = tmp_path / "o"
    # `zlb compare A B --out o | head -3`: the reader leaves after three lines
    p = subprocess.Popen([zlb.bin, "compare", str(a), str(b), "--out", str(out)],
                         cwd=zlb.cwd, env=zlb.env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    for _ in range(3):
        p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read()
    rc = p.wait(timeout=60)
    # not killed by SIGPIPE (141), the files are whole, and the reader's leaving is no news
    assert rc in (0, 7), (rc, err)
    assert (out / "compare.csv").is_file()
    assert json.loads((out / "compare.json").read_text())["summary"]["paired"] == 10
    assert "Broken pipe" not in err
    # a reader gone before anything is printed: EPIPE, not a death by SIGPIPE; exit 7
    # (documented), the files written first, nothing said about the pipe
    rd, wr = os.pipe()
    os.close(rd)
    try:
        p = subprocess.run([zlb.bin, "compare", str(a), str(b), "--out", str(tmp_path / "o2")],
                           cwd=zlb.cwd, env=zlb.env, stdout=wr, stderr=subprocess.PIPE,
                           text=True, timeout=60)
    finally:
        os.close(wr)
    assert p.returncode == 7 and p.stderr == "", (p.returncode, p.stderr)
    assert json.loads((tmp_path / "o2" / "compare.json").read_text())["summary"]["paired"] == 10


def test_junit_report_validates_and_fails_on_slower(zlb, tmp_path):
    import xml.etree.ElementTree as ET
    rows = base_rows()
    rows[3] = dict(rows[3], op="we<ird>&\"op\x01")
    a, b = make_sides(tmp_path, rows=rows, b_kw={"shift": {4: 0.05}})
    junit = tmp_path / "reports" / "compare.xml"   # its directory is made
    r = zlb.cmd("compare", str(a), str(b), "--junit", str(junit))
    assert r.rc == 1, r
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == 10 and suite.get("tests") == "10" and suite.get("failures") == "1"
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) == 1 and failed[0].get("classname") == "zlb.compare.softmax"
    assert failed[0].get("name") == f"softmax {DTYPES[0]} {SHAPES[2]}"
    assert failed[0].find("failure").get("message").startswith("SLOWER: gems B/A +")
    # a name from the data: escaped, the control character replaced, and read back
    odd = [c for c in cases if c.get("classname").startswith("zlb.compare.we")]
    assert odd and odd[0].get("classname") == "zlb.compare.we<ird>&\"op\ufffd"
    # calibers that differ: one failed case saying why
    a2, b2 = make_sides(tmp_path / "c", b_kw={"caliber": {"l2_mode": "cold"}})
    r = zlb.cmd("compare", str(a2), str(b2), "--junit", str(junit))
    assert r.rc == 4, r
    cases = ET.parse(junit).getroot().find("testsuite").findall("testcase")
    assert len(cases) == 1 and "calibers differ" in cases[0].find("failure").get("message")


# ---- bad files where results belong (issue 16 row 13) ---------------------------------

def test_a_fifo_or_a_directory_named_results_is_refused_at_once(zlb, tmp_path):
    a, b = make_sides(tmp_path, rounds=1)
    results = b / "r0" / "results.jsonl"
    results.unlink()
    os.mkfifo(results)                      # no writer: an open() for reading would wait for ever
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--bootstrap", "0")
    assert res.rc == 8, res
    assert "results.jsonl' is a FIFO, where zlb expects a regular file" in res.err, res
    results.unlink()
    results.mkdir()                          # it read as an empty file
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--bootstrap", "0")
    assert res.rc == 8, res
    assert "results.jsonl' is a directory, where zlb expects a regular file" in res.err, res


def test_a_cut_last_line_is_said_on_the_terminal(zlb, tmp_path):
    a, b = make_sides(tmp_path, rounds=1)
    results = b / "r0" / "results.jsonl"
    text = results.read_text()
    results.write_text(text[:-200])          # the last row cut short (a crash, a full disk)
    res = compare(zlb, a, b, "--out", zlb.cwd / "out", "--bootstrap", "0")
    assert res.rc in (0, 1), res
    assert "B run r0: 1 line of results.jsonl is not a JSON object" in res.err, res
    assert "the row it held is missing" in res.err
    assert res.json["summary"]["only_a"] == 1


def test_what_held_the_clock_is_noted(zlb, tmp_path):
    # On a 700 W H100 every fp16 addmm of 2048^3 and up ran under the SW
    # power cap (NVML reason 0x4): the row names it, per side, and
    # compare.json keeps the names. A name zlb does not know, or a number,
    # counts for nothing; app_clocks_setting is no limit.
    held = {"A": ["sw_power_cap"], "B": ["sw_power_cap", "sw_thermal_slowdown"]}
    for side in "AB":
        mode = {"mode": "record"} if side == "A" else {"mode": "replay",
                                                        "replay_from": tmp_path / "A" / "r0"}
        make_run(tmp_path / side / "r0", base_rows(), 100 if side == "A" else 200, **mode,
                 gems_fields={0: {"clock_reasons": held[side]},
                              1: {"clock_reasons": ["hw_thermal_slowdown"] if side == "B"
                                  else ["app_clocks_setting", "no_such_reason", 4]}})
    res = compare(zlb, tmp_path / "A", tmp_path / "B", "--out", zlb.cwd / "out", "--wide")
    assert res.rc in (0, 1), res
    g = {(r["dtype"], r["shape_detail"]): r["gems"] for r in paired(res)}
    first, second = g[(DTYPES[0], SHAPES[0])], g[(DTYPES[1], SHAPES[0])]
    assert first["clock_reasons_a"] == ["sw_power_cap"]
    assert first["clock_reasons_b"] == ["sw_power_cap", "sw_thermal_slowdown"]
    assert second["clock_reasons_a"] == ["app_clocks_setting"]
    assert second["clock_reasons_b"] == ["hw_thermal_slowdown"]
    assert g[(DTYPES[0], SHAPES[1])]["clock_reasons_a"] == []
    lines = res.out.splitlines()
    capped = [x for x in lines if "power cap A,B" in x]
    assert len(capped) == 1 and SHAPES[0][:12] in capped[0] and "float16" in capped[0], res.out
    thermal = [x for x in lines if x.rstrip().endswith("thermal B")]
    assert len(thermal) == 1 and "power cap" not in thermal[0] and "thermal A" not in thermal[0]
    assert "power cap / thermal / hw slowdown A,B  NVML said that limit held" in res.out


def test_a_duty_below_one_is_noted_per_side(zlb, tmp_path):
    # Row 0 was sampled again at duty 0.5 on both sides, row 1 on B only
    # (a build that draws less power may stay under the cap), the others
    # ran back to back (power_duty 1, or absent in older runs).
    duty = {"A": {0: {"power_duty": 0.5}, 1: {"power_duty": 1.0}},
            "B": {0: {"power_duty": 0.5}, 1: {"power_duty": 0.5}, 2: {"power_duty": "x"}}}
    for side in "AB":
        mode = {"mode": "record"} if side == "A" else {"mode": "replay",
                                                        "replay_from": tmp_path / "A" / "r0"}
        make_run(tmp_path / side / "r0", base_rows(), 100 if side == "A" else 200, **mode,
                 gems_fields=duty[side])
    res = compare(zlb, tmp_path / "A", tmp_path / "B", "--out", zlb.cwd / "out", "--wide")
    assert res.rc in (0, 1), res
    g = {(r["dtype"], r["shape_detail"]): r["gems"] for r in paired(res)}
    both, b_only = g[(DTYPES[0], SHAPES[0])], g[(DTYPES[1], SHAPES[0])]
    assert (both["power_duty_a"], both["power_duty_b"]) == (0.5, 0.5)
    assert (b_only["power_duty_a"], b_only["power_duty_b"]) == (1.0, 0.5)
    assert {(r["power_duty_a"], r["power_duty_b"]) for k, r in g.items()
            if k not in ((DTYPES[0], SHAPES[0]), (DTYPES[1], SHAPES[0]))} == {(1.0, 1.0)}
    lines = res.out.splitlines()
    assert len([x for x in lines if "duty 0.5 A,B" in x]) == 1
    assert len([x for x in lines if x.rstrip().endswith("duty 0.5 B")]) == 1
    assert "duty F A,B  the power cap held that side's samples" in res.out
