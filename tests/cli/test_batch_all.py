"""zlb inventory, then zlb batch --all, then zlb summary: the three commands of
the screening layer chained on one fake checkout, as a user runs them.

The inventory is collected by pytest (stub torch), the dismiss list keeps the
behaviours that only slow a test down (hangs, crashes, sleeps) out of --all,
and the unconditionally skip-marked function never runs. What must hold:
--all runs exactly the inventory less skip marks less dismissed entries, and
the summary accounts for every operator the batch ran.
"""
import csv
import json

from test_batch import batch, status, world  # noqa: F401

DISMISSED = {
    "b_hang": "hangs until killed (timeout test only)",
    "b_stubborn": "ignores SIGTERM (timeout test only)",
    "b_orphan": "leaves a grandchild (process test only)",
    "b_setsid": "leaves a grandchild in its own session (process test only)",
    "b_daemon": "leaves a daemon holding its stdout (process test only)",
    "b_slow": "sleeps (parallelism test only)",
    "b_segv": "dies by SIGSEGV (retry test only)",
    "b_flaky": "fails once on purpose",
    "hang": "hangs until killed",
    "crash": "dies by a signal",
}


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_inventory_then_batch_all_then_summary(world, tmp_path):  # noqa: F811
    ops_dir = tmp_path / "ops"
    r = world.cmd("inventory", "--out", str(ops_dir))
    assert r.rc == 0, r
    inv = read_csv(ops_dir / "inventory_main.csv")
    assert inv and all(row["collected"] == "yes" for row in inv), inv
    skip_marked = {row["op"] for row in inv if row["skip"]}
    assert skip_marked == {"b_skipmarked"}              # @pytest.mark.skip, never run

    (ops_dir / "dismiss.txt").write_text(
        "# known to misbehave on purpose\n"
        + "".join(f"{op}  {why}\n" for op, why in DISMISSED.items()))
    r = batch(world, "--all", "--ops-dir", str(ops_dir), "--op-timeout", "60",
              "--grace", "2", timeout=600)
    assert r.rc in (0, 1), r                            # the fake has failing ops too
    st = status(world.bdir)
    expected = {row["op"] for row in inv} - skip_marked - set(DISMISSED)
    assert set(st) == expected
    assert not set(st) & set(DISMISSED) and not set(st) & skip_marked
    assert all(row["status"] in ("PASS", "SKIP", "FAIL") for row in st.values()), st
    assert st["b_pass"]["status"] == "PASS" and st["b_fail"]["status"] == "FAIL"

    r = world.cmd("summary", str(world.bdir), "--color", "never", "--out", str(world.bdir))
    assert r.rc == 0, r
    rows = read_csv(world.bdir / "summary.csv")
    assert {row["op"] for row in rows} == expected      # every operator accounted for
    by_op = {row["op"]: row for row in rows}
    assert by_op["b_fail"]["status"] == "FAIL" and by_op["b_fail"]["gems_latency_ms"] == ""
    assert any(row["row_status"] == "SUCCESS" and float(row["gems_latency_ms"]) > 0
               for row in rows if row["op"] == "b_pass")
    doc = json.loads((world.bdir / "summary.json").read_text())
    assert doc["ops"] == len(expected)


def test_batch_all_takes_the_checkout_the_inventory_was_built_from(world, tmp_path):  # noqa: F811
    fg = world.env.pop("FLAGGEMS_DIR")
    ops_dir = tmp_path / "ops"
    r = world.cmd("inventory", "--out", str(ops_dir), "--flaggems-dir", fg)
    assert r.rc == 0, r
    keep = {"b_pass", "b_trivial"}
    (ops_dir / "dismiss.txt").write_text("".join(
        f"{row['op']}  not this test's\n" for row in read_csv(ops_dir / "inventory_main.csv")
        if row["op"] not in keep))
    r = batch(world, "--all", "--ops-dir", str(ops_dir))       # no directory given twice
    assert r.rc == 0, r
    assert set(status(world.bdir)) == keep
    bj = json.loads((world.bdir / "batch.json").read_text())
    assert bj["options"]["flaggems_dir"] == fg
    assert bj["resume"]["batch"]["flaggems-dir"] == fg
