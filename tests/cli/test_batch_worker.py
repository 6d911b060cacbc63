"""zlb batch --isolation worker: warm workers against the fake FlagGems.

The fake suite's operators crash, hang and pass (tests/fake_flaggems_batch);
b_poison leaves the process broken for whatever runs after it. What must hold:
every operator still gets its own run directory and identity (caliber
isolation=worker), several operators share one worker process, and no
operator's outcome depends on what ran before it in the same worker.
"""
import json
import os
import re
import signal
import time

from test_batch import batch, popen_batch, status, world  # noqa: F401 (fixture)
from test_fault_injection import zlb_run_children


def worker_jobs(zlb, st, spec):
    """(worker pid, job number) of each attempt, read from the run's log."""
    log = (zlb.bdir / st[spec]["run_dir"] / "run.log").read_text()
    return [(int(p), int(j)) for j, p in re.findall(r"job (\d+) of worker pid (\d+)", log)]


def test_operators_share_one_warm_worker(world):
    r = batch(world, "--isolation", "worker", "--ops", "b_pass", "b_trivial", "b_slow")
    assert r.rc == 0, r
    st = status(world.bdir)
    seen = {}
    for spec, row in st.items():
        assert row["status"] in ("PASS", "SKIP"), row
        ident = json.loads((world.bdir / row["run_dir"] / "run_identity.json").read_text())
        assert ident["caliber"]["isolation"] == "worker"
        (pid, job), = worker_jobs(world, st, spec)
        seen[job] = pid
        # zlb run asked the socket who listens: the worker measuring it, which
        # is no "other process" on the device.
        assert ident["provenance"]["worker_pid"] == pid, ident["provenance"]
    assert sorted(seen) == [1, 2, 3] and len(set(seen.values())) == 1, seen
    bj = json.loads((world.bdir / "batch.json").read_text())
    assert bj["options"]["isolation"] == "worker"


def test_a_crash_costs_one_fresh_worker_not_the_batch(world):
    r = batch(world, "--isolation", "worker", "--ops", "b_pass", "b_segv", "b_trivial")
    assert r.rc == 1, r
    st = status(world.bdir)
    assert st["b_pass"]["status"] == "PASS" and st["b_trivial"]["status"] == "PASS", st
    segv = st["b_segv"]
    assert segv["status"] == "FAIL"
    assert "fresh_worker" in segv["remarks"] and "signal=11" in segv["remarks"], segv
    # Its final attempt was the first job of a fresh worker, killed by the
    # same signal a process of its own dies of.
    assert segv["exit_code"] == str(128 + 11)
    (pid_final, job_final), = worker_jobs(world, st, "b_segv")
    (pid_first, _), = worker_jobs(world, st, "b_pass")
    assert job_final == 1 and pid_final != pid_first
    # The evidence of the attempt in the shared worker is kept, moved aside.
    assert list((world.bdir / ".attempts" / "main").glob("b_segv.*.log"))
    (pid_next, job_next), = worker_jobs(world, st, "b_trivial")
    assert job_next == 1 and pid_next not in (pid_first, pid_final)


def test_an_operator_broken_by_the_one_before_is_judged_in_a_fresh_worker(world):
    r = batch(world, "--isolation", "worker", "--ops", "b_poison", "b_pass", "b_trivial")
    assert r.rc == 0, r
    st = status(world.bdir)
    assert [st[o]["status"] for o in ("b_poison", "b_pass", "b_trivial")] == ["PASS"] * 3, st
    assert "fresh_worker" in st["b_pass"]["remarks"]
    assert st["b_pass"]["attempts"] == "2"
    (_, job), = worker_jobs(world, st, "b_pass")
    assert job == 1
    # The broken attempt's log, kept aside, shows why it was rerun.
    aside = list((world.bdir / ".attempts" / "main").glob("b_pass.*.log"))
    assert aside and "broken by an earlier test" in aside[0].read_text()


def test_a_hang_inside_a_worker_times_out_and_the_batch_goes_on(world):
    t0 = time.monotonic()
    r = batch(world, "--isolation", "worker", "--ops", "b_pass", "b_hang", "b_trivial",
              "--op-timeout", "6", "--grace", "1")
    assert r.rc == 1, r
    st = status(world.bdir)
    assert st["b_hang"]["status"] == "TIMEOUT", st
    assert st["b_pass"]["status"] == "PASS" and st["b_trivial"]["status"] == "PASS", st
    assert time.monotonic() - t0 < 60
    for pid in (p for p, _ in worker_jobs(world, st, "b_pass")):
        assert not alive_pid(pid), "the worker that ran the hung operator must be gone"


def test_a_run_killed_in_its_job_takes_its_worker_along(world):
    # A zlb run killed by a signal mid-job (the user, the OOM killer) leaves
    # its worker ending a job whose client is gone. The next operator must
    # get a fresh worker at once, not that one: it would wait for a socket
    # nobody listens on, then fail and be retried.
    p = popen_batch(world, "--isolation", "worker", "--retries", "0",
                    "--ops", "b_slow", "b_pass", env={"FAKE_BATCH_SLOW": "30"})
    log = world.bdir / "main" / "b_slow" / "run.log"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
            log.exists() and "of worker pid" in log.read_text()):
        time.sleep(0.05)
    kids = zlb_run_children(p.pid)
    assert len(kids) == 1, kids
    os.kill(kids[0], signal.SIGKILL)
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 1, out
    st = status(world.bdir)
    assert st["b_slow"]["status"] == "FAIL" and "signal=9" in st["b_slow"]["remarks"], st
    assert st["b_pass"]["status"] == "PASS", st
    # One attempt, as the first job of a worker other than the killed one's.
    assert st["b_pass"]["attempts"] == "1" and "fresh_worker" not in st["b_pass"]["remarks"], st
    (pid_slow, _), = worker_jobs(world, st, "b_slow")
    (pid_pass, job_pass), = worker_jobs(world, st, "b_pass")
    assert job_pass == 1 and pid_pass != pid_slow
    assert not alive_pid(pid_slow)


def alive_pid(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_the_queue_gives_the_next_operator_to_the_free_device(world):
    world.env["FAKE_CUDA_DEVICES"] = "2"
    r = batch(world, "--ops", "b_slow", "b_pass", "b_trivial", "b_fp32only",
              "--devices", "0,1", env={"FAKE_BATCH_SLOW": "3"})
    assert r.rc == 0, r
    st = status(world.bdir)
    assert st["b_slow"]["device"] == "0"
    assert [st[o]["device"] for o in ("b_pass", "b_trivial", "b_fp32only")] == ["1"] * 3, st
    bj = json.loads((world.bdir / "batch.json").read_text())
    assert bj["options"]["pin"] is False
    assert all(o["device"] is None for o in bj["ops"])


def test_pin_keeps_each_operator_on_its_hashed_device(world):
    world.env["FAKE_CUDA_DEVICES"] = "2"
    ops = ["b_slow", "b_pass", "b_trivial", "b_fp32only", "b_skipif"]
    r = batch(world, "--ops", *ops, "--devices", "0,1", "--pin")
    assert r.rc == 0, r
    st = status(world.bdir)
    bj = json.loads((world.bdir / "batch.json").read_text())
    planned = {o["spec"]: str(o["device"]) for o in bj["ops"]}
    assert {o: st[o]["device"] for o in ops} == planned
    # The same plan in another directory: the same devices.
    world.bdir = world.bdir.parent / "b2"
    assert batch(world, "--ops", *ops, "--devices", "0,1", "--pin").rc == 0
    assert {o: st2["device"] for o, st2 in status(world.bdir).items()} == planned


def test_a_refused_dtype_falls_back_in_the_same_worker(world):
    # "can't be supported" is the operator's answer to --dtypes in any
    # process: its fallback runs in the warm worker, no fresh one is started.
    r = batch(world, "--isolation", "worker", "--dtypes", "float16",
              "--ops", "b_pass", "b_fp32only", "b_trivial")
    assert r.rc == 0, r
    st = status(world.bdir)
    row = st["b_fp32only"]
    assert row["status"] == "PASS" and row["attempts"] == "2", row
    assert "dtype_fallback" in row["remarks"] and "fresh_worker" not in row["remarks"], row
    (pid_first, _), = worker_jobs(world, st, "b_pass")
    (pid, job), = worker_jobs(world, st, "b_fp32only")
    assert pid == pid_first and job == 3, (pid, job)
    assert len(list((world.bdir / ".logs" / "workers").glob("lane0.*.log"))) == 1


def test_a_failure_costs_the_attempts_a_process_of_its_own_costs(world):
    # Every retry runs as a fresh worker's first job, as a retry in a process
    # of its own does: a deterministic failure after other jobs takes the same
    # two attempts (the first, one retry, cut off when its code repeats).
    r = batch(world, "--isolation", "worker", "--ops", "b_pass", "b_fail")
    assert r.rc == 1, r
    row = status(world.bdir)["b_fail"]
    assert (row["status"], row["attempts"]) == ("FAIL", "2"), row
    assert row["remarks"] == "retries=1;fresh_worker", row
    (pid_first, _), = worker_jobs(world, status(world.bdir), "b_pass")
    (pid, job), = worker_jobs(world, status(world.bdir), "b_fail")
    assert job == 1 and pid != pid_first          # its last attempt: a fresh worker
    world.bdir = world.bdir.parent / "process"
    r = batch(world, "--isolation", "process", "--ops", "b_pass", "b_fail")
    assert status(world.bdir)["b_fail"]["attempts"] == "2"


def test_one_crash_among_sixteen_costs_a_fresh_worker_or_two_not_the_batch(world):
    ops = ["add", "softmax", "mm", "layer_norm", "sort", "avg_pool2d", "b_pass", "b_trivial",
           "b_segv", "b_fp32only", "b_skipif", "b_xfail", "softmax_backward", "only_fp32",
           "adaptive_max_pool2d", "autotuned_exp"]
    r = batch(world, "--isolation", "worker", "--ops", *ops, timeout=300)
    assert r.rc == 1, r
    st = status(world.bdir)
    assert st["b_segv"]["status"] == "FAIL", st
    assert all(st[o]["status"] in ("PASS", "SKIP") for o in ops if o != "b_segv"), st
    # The worker that ran the first eight, a fresh one for the crash's verdict
    # (and one per retry of it: each crash ends its worker), one for the rest.
    workers = list((world.bdir / ".logs" / "workers").glob("lane0.*.log"))
    attempts = int(st["b_segv"]["attempts"])
    assert len(workers) == 1 + attempts, (workers, st["b_segv"])
    jobs = {o: worker_jobs(world, st, o)[-1][1] for o in ops if st[o]["run_dir"]}
    assert max(jobs.values()) >= 7, jobs      # the warm worker really served many


def test_a_tuner_cache_per_run_is_refused_in_a_worker(world):
    r = batch(world, "--isolation", "worker", "--isolate-tuner-cache", "--ops", "b_pass")
    assert r.rc == 2 and "--isolation process" in r.err, r
    assert not world.bdir.exists()
    # A worker asked for through the environment is asked for too.
    r = batch(world, "--isolate-tuner-cache", "--ops", "b_pass", env={"ZLB_ISOLATION": "worker"})
    assert r.rc == 2 and "--isolation process" in r.err, r
    assert not world.bdir.exists()


def test_a_tuner_cache_per_run_takes_a_process_per_operator_when_none_was_asked_for(world):
    # The default (worker) yields to what was asked for, and the batch
    # continues so: recorded as process, not as a default to take again.
    r = batch(world, "--isolate-tuner-cache", "--ops", "b_pass", "b_fail", "--retries", "0")
    assert r.rc == 1, r
    bj = json.loads((world.bdir / "batch.json").read_text())
    assert bj["options"]["isolation"] == "process"
    assert bj["resume"]["batch"]["isolation"] == "process"
    ident = json.loads((world.bdir / "main/b_pass/run_identity.json").read_text())
    assert ident["caliber"]["isolation"] == "process"
    assert ident["caliber"]["tuner_cache"] == "isolated", ident["caliber"]
    assert not list((world.bdir / ".logs" / "workers").glob("*.log"))
    r = batch(world, "--resume")
    assert r.rc == 1, r
    ident = json.loads((world.bdir / "main/b_fail/run_identity.json").read_text())
    assert ident["caliber"]["isolation"] == "process"


def rows_of(bdir, st):
    out = {}
    for spec, row in st.items():
        path = bdir / row["run_dir"] / "results.jsonl" if row["run_dir"] else None
        if path and path.exists():
            rows = [json.loads(l) for l in path.read_text().splitlines() if l.strip()]
            out[spec] = sorted((r.get("op_name"), r.get("dtype"), r.get("shape_detail"),
                                r.get("status")) for r in rows if r.get("kind") == "row")
    return out


def test_a_worker_gives_the_rows_a_process_of_its_own_gives(world):
    ops = ["add", "softmax", "mm", "layer_norm", "sort", "b_pass", "autotuned_exp",
           "tuned_rowsum", "adaptive_max_pool2d"]
    assert batch(world, "--isolation", "process", "--ops", *ops, timeout=300).rc == 0
    per_process = rows_of(world.bdir, status(world.bdir))
    world.bdir = world.bdir.parent / "w"
    assert batch(world, "--isolation", "worker", "--ops", *ops, timeout=300).rc == 0
    st = status(world.bdir)
    assert rows_of(world.bdir, st) == per_process
    assert all(rows for rows in per_process.values())
    assert max(worker_jobs(world, st, o)[-1][1] for o in ops) == len(ops)  # one worker for all


def ir_files(bdir, st):
    """The readable IR tree and the content-addressed store of each run."""
    out = {}
    for spec, row in st.items():
        if not row["run_dir"]:
            continue
        files = []
        for sub in ("ttgir", "ir"):
            d = bdir / row["run_dir"] / sub
            files += sorted(str(p.relative_to(bdir / row["run_dir"])) for p in d.rglob("*")
                            if p.is_file() and p.name != "index.json")
        out[spec] = files
    return out


def test_a_worker_keeps_the_ir_each_operator_compiled_as_a_process_does(world):
    world.env["ZL_IR"] = "on"
    # Each batch from an empty FlagGems tuner database: each tunes for itself.
    world.env["FLAGGEMS_CACHE_DIR"] = str(world.bdir.parent / "tuner_b")
    ops = ["add", "softmax", "autotuned_exp", "tuned_rowsum", "b_pass"]
    assert batch(world, "--isolation", "process", "--ops", *ops, timeout=300).rc == 0
    per_process = ir_files(world.bdir, status(world.bdir))
    world.bdir = world.bdir.parent / "w"
    world.env["FLAGGEMS_CACHE_DIR"] = str(world.bdir.parent / "tuner_w")
    assert batch(world, "--isolation", "worker", "--ops", *ops, timeout=300).rc == 0
    st = status(world.bdir)
    assert ir_files(world.bdir, st) == per_process
    assert any(per_process.values()), per_process   # the fake compiles something
    # and each tuner chose, and recorded, what it chose in a process of its own
    for op in ("autotuned_exp", "tuned_rowsum"):
        rec = "main/%s/autotune_records/%s.json" % (op, op)
        assert (world.bdir / rec).read_bytes() == (world.bdir.parent / "b" / rec).read_bytes()
        # and its configs' timing was tallied as in a process of its own: the
        # LibTuner of tuned_rowsum binds do_bench_cudagraph in the worker's
        # first job, and the tally must follow the job under way.
        calls = [json.loads((d / "main" / op / "run_identity.json").read_text())
                 ["outcome"]["tuning"]["calls"] for d in (world.bdir.parent / "b", world.bdir)]
        assert calls[0] == calls[1] > 0, (op, calls)


def test_b_replays_a_in_workers_without_a_fallback(world):
    ops = ["autotuned_exp", "tuned_rowsum", "tuned_scale", "add"]
    a = world.bdir
    assert batch(world, "--isolation", "worker", "--ops", *ops, timeout=300).rc == 0
    world.bdir = a.parent / "B"
    r = batch(world, "--isolation", "worker", "--replay-root", str(a), "--ops", *ops, timeout=300)
    assert r.rc == 0, r
    st = status(world.bdir)
    assert not any("replay_fallback" in row["remarks"] for row in st.values()), st
    r = world.cmd("compare", str(a), str(world.bdir), "--out", str(a.parent / "c"),
                  "--color", "never")
    assert "[caliber]" not in r.out and "AUTOTUNE_REPLAY_FALLBACK" not in r.out + r.err, r


def test_the_reset_runs_after_each_job_not_when_the_next_one_waits(world):
    # A job's reset (modules, kernel caches, switches, gc) runs as soon as its
    # client has the exit code, before the worker takes the next job: each
    # "job N" line is followed by "after job N: reset", then job N+1. The
    # last job's reset may be cut short by the batch stopping the worker
    # (SIGTERM once the operators are done): no job waits for it.
    r = batch(world, "--isolation", "worker", "--ops", "b_pass", "b_trivial", "b_skipif")
    assert r.rc == 0, r
    (log,) = (world.bdir / ".logs" / "workers").glob("lane0.*.log")
    lines = [l.split(": ", 1)[1] for l in log.read_text().splitlines()
             if l.startswith("zlb worker lane 0: ") and "job" in l]
    kinds = [("reset %s" % l.split()[2].rstrip(":")) if l.startswith("after job ")
             else ("job %s" % l.split()[1].rstrip(":")) for l in lines]
    assert kinds in (["job 1", "reset 1", "job 2", "reset 2", "job 3"],
                     ["job 1", "reset 1", "job 2", "reset 2", "job 3", "reset 3"]), lines
    for l in lines:
        if l.startswith("after job "):
            assert all(k in l for k in ("modules", "caches", "switches", "gc", "device")), l
        else:
            assert "reset" not in l and ", rc 0" in l, l
