"""A failure of the environment stops zlb batch once; it is not N operator failures.

What no operator can escape (the checkout gone, no interpreter, no device, a
full disk) stops the batch at once with the check's exit code, and every
operator not finished stays PENDING for a --resume once it is fixed.
"""
import json
import shutil
import time

from test_batch import batch, popen_batch, recorded, status, wait_for, world  # noqa: F401


def test_a_checkout_that_goes_away_stops_the_batch_and_keeps_the_rest_pending(world):
    fg = world.env["FLAGGEMS_DIR"]
    ops = ["b_slow", "b_pass", "b_trivial", "b_fp32only"]
    p = popen_batch(world, "--ops", *ops, "--flaggems-dir", fg, env={"FAKE_BATCH_SLOW": "2"})
    assert wait_for(lambda: any(n.startswith("b_slow.") for n, _, _ in recorded(world))), \
        p.communicate()
    shutil.move(fg, fg + ".away")
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 3, out
    assert "stopped by the environment" in out and "PREFLIGHT_FAILED check=flaggems_dir" in out
    st = status(world.bdir)
    # The first run that met the missing checkout says so; nothing is a FAIL.
    said = [o for o in ops if st[o]["remarks"] == "environment=flaggems_dir"]
    assert len(said) == 1 and st[said[0]]["status"] == "PENDING", st
    assert all(st[o]["status"] == "PENDING" for o in ops if o != "b_slow"), st
    assert not any(st[o]["status"] == "FAIL" for o in ops), st
    bj = json.loads((world.bdir / "batch.json").read_text())
    assert bj["status"] == "environment" and bj["exit_code"] == 3
    # Fixed, the same batch continues where it stopped.
    shutil.move(fg + ".away", fg)
    r = batch(world, "--resume")
    assert r.rc == 0, r
    assert all(v["status"] == "PASS" for v in status(world.bdir).values())


def test_a_broken_checkout_is_refused_before_any_operator_starts(world, tmp_path):
    not_a_checkout = tmp_path / "empty"
    not_a_checkout.mkdir()
    t0 = time.monotonic()
    r = batch(world, "--ops", "b_pass", "b_trivial", "--flaggems-dir", str(not_a_checkout))
    assert r.rc == 3, r
    assert "PREFLIGHT_FAILED check=flaggems_dir" in r.err, r
    assert not world.bdir.exists() or not (world.bdir / "ops_status.csv").exists()
    assert time.monotonic() - t0 < 10
