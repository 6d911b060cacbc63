"""A failure of the environment stops zlb batch once; it is not N operator failures.

What no operator can escape (the checkout gone, no interpreter, no device, a
full disk) stops the batch at once with the check's exit code, and every
operator not finished stays PENDING for a --resume once it is fixed. It does
so whichever isolation the operators run under: in a process of their own or
in a warm worker (the default), where the session that met the environment
runs in a process started before it failed.
"""
import json
import shutil
import time

import pytest

from test_batch import batch, popen_batch, recorded, status, wait_for, world  # noqa: F401

ISOLATIONS = ["process", "worker"]


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_checkout_that_goes_away_stops_the_batch_and_keeps_the_rest_pending(world,
                                                                              isolation):
    fg = world.env["FLAGGEMS_DIR"]
    ops = ["b_slow", "b_pass", "b_trivial", "b_fp32only"]
    p = popen_batch(world, "--isolation", isolation, "--ops", *ops, "--flaggems-dir", fg,
                    env={"FAKE_BATCH_SLOW": "2"})
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
    assert bj["options"]["isolation"] == isolation
    # Fixed, the same batch continues where it stopped, in the same isolation.
    shutil.move(fg + ".away", fg)
    r = batch(world, "--resume")
    assert r.rc == 0, r
    assert all(v["status"] == "PASS" for v in status(world.bdir).values())
    ident = json.loads((world.bdir / "main/b_pass/run_identity.json").read_text())
    assert ident["caliber"]["isolation"] == isolation, ident


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_broken_checkout_is_refused_before_any_operator_starts(world, tmp_path, isolation):
    not_a_checkout = tmp_path / "empty"
    not_a_checkout.mkdir()
    t0 = time.monotonic()
    r = batch(world, "--isolation", isolation, "--ops", "b_pass", "b_trivial",
              "--flaggems-dir", str(not_a_checkout))
    assert r.rc == 3, r
    assert "PREFLIGHT_FAILED check=flaggems_dir" in r.err, r
    assert not world.bdir.exists() or not (world.bdir / "ops_status.csv").exists()
    assert time.monotonic() - t0 < 10


@pytest.mark.parametrize("isolation", ISOLATIONS)
@pytest.mark.parametrize("kind", ["gone", "broken"])
def test_an_interpreter_lost_under_the_batch_stops_it_once(world, logging_python, isolation,
                                                           kind):
    # The interpreter goes (or starts failing) while b_slow runs: the next
    # operator's check of it stops the batch, whether its pytest would have
    # started a process or gone to the worker that was already running.
    py = logging_python()
    ops = ["b_slow", "b_pass", "b_trivial"]
    p = popen_batch(world, "--isolation", isolation, "--python", str(py.path), "--ops", *ops,
                    env={"FAKE_BATCH_SLOW": "2"})
    assert wait_for(lambda: any(n.startswith("b_slow.") for n, _, _ in recorded(world))), \
        p.communicate()
    kept = py.path.read_text()
    if kind == "gone":
        py.path.unlink()
    else:
        py.path.write_text("#!/bin/sh\nexit 1\n")
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 3, out
    assert "stopped by the environment" in out and "PREFLIGHT_FAILED check=python" in out, out
    st = status(world.bdir)
    said = [o for o in ops if st[o]["remarks"] == "environment=python"]
    assert len(said) == 1 and st[said[0]]["status"] == "PENDING", st
    assert not any(st[o]["status"] == "FAIL" for o in ops), st
    assert all(st[o]["status"] in ("PASS", "PENDING") for o in ops), st
    bj = json.loads((world.bdir / "batch.json").read_text())
    assert bj["status"] == "environment" and bj["exit_code"] == 3
    py.path.write_text(kept)
    py.path.chmod(0o755)
    r = batch(world, "--resume")
    assert r.rc == 0, r
    assert all(v["status"] == "PASS" for v in status(world.bdir).values())
