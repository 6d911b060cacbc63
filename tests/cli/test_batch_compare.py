"""A/B over a whole screen: zlb batch for build A, zlb batch --replay-root A for
build B, then zlb compare A B. Each side holds one run per operator, so the
runs of a side are not rounds of one measurement: calibers and autotune
sources are checked operator by operator, and a difference shared by many
operators is said once, with their count.
"""
import json

from test_batch import world  # noqa: F401

OPS = ["b_pass", "add", "softmax", "mm"]


def run_batch(zlb, bdir, *extra):
    r = zlb.cmd("batch", "--batch-dir", str(bdir), "--progress", "plain", "--ops", *OPS, *extra)
    assert r.rc == 0, r
    return bdir


def compare(zlb, a, b, out, *extra):
    return zlb.cmd("compare", str(a), str(b), "--out", str(out), "--color", "never", *extra)


def test_batch_b_replaying_batch_a_compares_operator_by_operator(world, tmp_path):  # noqa: F811
    a = run_batch(world, tmp_path / "A")
    b = run_batch(world, tmp_path / "B", "--replay-root", str(tmp_path / "A"))
    r = compare(world, a, b, tmp_path)
    assert r.rc == 0, r
    assert "!!! [caliber]" not in r.out + r.err
    assert "autotune configs come from" not in r.out + r.err
    doc = json.loads((tmp_path / "compare.json").read_text())
    assert {row["op"] for row in doc["rows"] if row["paired"]} == set(OPS)
    assert doc["summary"]["paired"] == sum(1 for row in doc["rows"] if row["paired"])
    # one run per operator and side: no "rounds 1/4" notes on the rows
    assert "rounds 1/" not in r.out
    # A's runs tuned, B's did not: said once, with the way around it
    lines = [l for l in r.err.splitlines() if "a recording compared with its replays" in l]
    assert len(lines) == 1 and lines[0].startswith("warning: for 4 of 4 operators, "), r
    assert "zlb batch --replay-root REC, for A and for B" in lines[0]


def test_two_replays_of_one_recording_compare_without_that_warning(world, tmp_path):  # noqa: F811
    rec = run_batch(world, tmp_path / "R")
    a = run_batch(world, tmp_path / "A", "--replay-root", str(rec))
    b = run_batch(world, tmp_path / "B", "--replay-root", str(rec))
    r = compare(world, a, b, tmp_path)
    assert r.rc == 0, r
    assert "a recording compared with its replays" not in r.err
    # one source for every run, though it is not compared here: nothing to say
    assert "warning" not in r.err and "!!!" not in r.err, r


def test_record_vs_record_batches_are_refused_once_for_all_operators(world, tmp_path):  # noqa: F811
    a = run_batch(world, tmp_path / "A")
    b = run_batch(world, tmp_path / "B")
    r = compare(world, a, b, tmp_path)
    assert r.rc == 4, r
    lines = [l for l in r.err.splitlines() if l.startswith("!!! [caliber] autotune_mode")]
    assert len(lines) == 1, r
    assert "4 of 4 operators are record-vs-record" in lines[0]


def test_a_caliber_difference_is_one_line_with_its_operators(world, tmp_path):  # noqa: F811
    a = run_batch(world, tmp_path / "A")
    b = run_batch(world, tmp_path / "B", "--replay-root", str(tmp_path / "A"),
                  "--warmup", "7")
    r = compare(world, a, b, tmp_path)
    assert r.rc == 4, r
    lines = [l for l in r.err.splitlines() if l.startswith("!!! [caliber] warmup_ms")]
    assert len(lines) == 1, r
    assert "B=7 for 4 of 4 operators" in lines[0]
    # overridden, the rows are compared anyway
    r = compare(world, a, b, tmp_path, "--allow-caliber-mismatch")
    assert r.rc == 0, r
    assert "paired rows" in r.out


def test_operators_that_met_other_gpus_are_named_and_pin_avoids_it(world, tmp_path):  # noqa: F811
    world.env["FAKE_CUDA_DEVICES"] = "2"
    slow = {"FAKE_BATCH_SLOW": "2"}

    def two(bdir, order, *extra):
        r = world.cmd("batch", "--batch-dir", str(bdir), "--progress", "plain", "--devices",
                      "0,1", "--ops", *order, *extra, env=slow)
        assert r.rc == 0, r
        return bdir

    # One queue: the slow operator holds the device it got first, so the
    # order of the list decides where the others go.
    a = two(tmp_path / "A", ["b_slow", "b_pass"])
    b = two(tmp_path / "B", ["b_pass", "b_slow"], "--replay-root", str(tmp_path / "A"))
    r = compare(world, a, b, tmp_path / "c1")
    assert "2 operators ran on other GPUs in A than in B (by uuid)" in r.out + r.err, r
    assert "b_pass (A on " in r.out + r.err
    # the GPUs named are the two that differ
    import re
    named = re.search(r"b_pass \(A on (\S+), B on (\S+?)\)", r.out + r.err)
    assert named and named.group(1) != named.group(2), r
    pa = two(tmp_path / "PA", ["b_slow", "b_pass"], "--pin")
    pb = two(tmp_path / "PB", ["b_pass", "b_slow"], "--pin", "--replay-root", str(tmp_path / "PA"))
    r = compare(world, pa, pb, tmp_path / "c2")
    assert "other GPUs" not in r.out + r.err, r


def test_an_operator_a_batch_never_measured_is_left_out_not_the_screen(world, tmp_path):  # noqa: F811
    # A batch stopped before an operator's first row leaves a run directory
    # without results.jsonl (on the H200: a budget-stopped batch). Its rows
    # are "only in B"; the other operators are still compared.
    a = run_batch(world, tmp_path / "A")
    b = run_batch(world, tmp_path / "B", "--replay-root", str(tmp_path / "A"))
    (a / "main" / "softmax" / "results.jsonl").unlink()
    r = compare(world, a, b, tmp_path / "out")
    assert r.rc == 0, r
    assert "softmax left out" in r.err and "has no results.jsonl" in r.err, r.err
    doc = json.loads((tmp_path / "out" / "compare.json").read_text())
    paired = {row["op"] for row in doc["rows"] if row["paired"]}
    assert paired == set(OPS) - {"softmax"}, paired
    assert doc["summary"]["only_b"] > 0
