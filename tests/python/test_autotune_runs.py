"""Whole runs of the fake FlagGems tree with zlbench.autotune, in subprocesses
as `zlb run` spawns them: record on a cold and a warm config DB, the A/B round
trip (B replays A's configs although its own tuning would choose others), the
fallback markers of a run, and the refusal of a recording of other terms.

The ops are benchmark/test_tuned.py's (src/flag_gems/tuned/): tuned_scale (a
plain @triton.autotune under LibEntry), tuned_rowsum (a @libtuner under
LibEntry, winners in the fake's JSON config DB under $FLAGGEMS_CACHE_DIR) and
tuned_hooked (pre_hook configs: unrecordable). $FAKE_TUNE_BIAS=1 makes live
tuning choose other configs; $FAKE_TUNE_LOG lists every tuner call with the
config it ran and whether it benchmarked.
"""

import json
import os
import textwrap

from conftest import events, read_jsonl, rows, run_pytest

NODES = ["benchmark/test_tuned.py::test_tuned_scale",
         "benchmark/test_tuned.py::test_tuned_rowsum"]
PLUGINS = ["-p", "zlbench.results", "-p", "zlbench.seed", "-p", "zlbench.autotune",
           "-p", "zlbench.shapes", "-p", "zlbench.timing"]
SHAPES = """
    tuned_scale: {shapes: [[64, 64], [4096, 4096], [8, 100]]}
    tuned_rowsum: {shapes: [[64, 64], [4096, 4096], [8, 100]]}
    tuned_hooked: {shapes: [[64, 64]]}
"""
MARKER = "AUTOTUNE_REPLAY_FALLBACK"


def zrun(tmp, name, db, mode="record", replay_from=None, nodes=NODES, shapes=SHAPES,
         **extra):
    run = tmp / name
    run.mkdir()
    shape_file = run / "shapes.yaml"
    shape_file.write_text(textwrap.dedent(shapes))
    env = {"ZLB_RUN_DIR": str(run), "ZLB_OP": "tuned", "ZLB_SHAPE_FILE": str(shape_file),
           "ZLB_SHAPE_MODE": "file", "ZLB_SEED": "0", "ZLB_PACKAGE": "flag_gems",
           "ZLB_TIMER": "direct", "ZLB_DIRECT_REPEAT": "1", "GEMS_VENDOR": "nvidia",
           "ZLB_BACKEND": "cuda", "ZLB_USE_FLAGTUNE": "0", "ZLB_AUTOTUNE_MODE": mode,
           "FLAGGEMS_CACHE_DIR": str(tmp / db), "TRITON_CACHE_DIR": str(tmp / "triton"),
           "FAKE_TUNE_LOG": str(run / "tune.log")}
    if replay_from is not None:
        env["ZLB_REPLAY_FROM"] = str(replay_from)
    env.update(extra)
    args = list(nodes) + ["--level", "core", "--mode", "kernel", "--warmup", "5", "--iter",
                          "5", "--shape_file", str(shape_file), "--dtypes", "float16",
                          "--dtypes", "float32"] + PLUGINS
    r = run_pytest(args, env)
    return run, r


def ok(r):
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def recorded(run):
    d = run / "autotune_records"
    doc = json.loads((d / "tuned.json").read_text())
    meta = json.loads((d / "meta.json").read_text())
    return doc, meta


def configs_of_records(doc):
    """{(kernel, key): the config as all_kwargs()} of a recording."""
    out = {}
    for k in doc["kernels"]:
        for e in k["entries"]:
            c = e["config"]
            kw = dict(c["kwargs"], num_warps=c["num_warps"], num_stages=c["num_stages"],
                      num_ctas=c["num_ctas"])
            if c["maxnreg"] is not None:
                kw["maxnreg"] = c["maxnreg"]
            out[(k["kernel"], tuple(e["key"]))] = kw
    return out


def tune_log(run):
    return read_jsonl(os.path.join(str(run), "tune.log"))


def configs_of_log(run, kernels=("scale_kernel", "rowsum_kernel")):
    """{(kernel, key): the config the tuner ran}: each key once (LibEntry
    dispatches later calls without the tuner)."""
    out = {}
    for line in tune_log(run):
        if line["kernel"] in kernels:
            k = (line["kernel"], tuple(line["key"]))
            assert out.get(k, line["config"]) == line["config"]
            out[k] = line["config"]
    return out


F16, F32 = "torch.float16", "torch.float32"
KEYS = {("scale_kernel", (n, dt, dt)) for n in (4096, 16777216, 800) for dt in (F16, F32)} | \
    {("rowsum_kernel", (m, n, dt, dt)) for m, n in ((64, 64), (4096, 4096), (8, 128))
     for dt in (F16, F32)}


def test_record_on_a_cold_then_a_warm_config_db(tmp_path):
    a1, r1 = zrun(tmp_path, "a1", "db")
    ok(r1)
    a2, r2 = zrun(tmp_path, "a2", "db")             # another process, the DB now warm
    ok(r2)
    doc1, meta1 = recorded(a1)
    doc2, meta2 = recorded(a2)
    assert set(configs_of_records(doc1)) == KEYS
    assert doc1 == doc2 and meta1 == meta2
    assert meta1 == {"schema_version": 1, "op": "tuned", "backend": "cuda",
                     "use_flagtune": False, "package": "flag_gems", "tuners": 2,
                     "entries": 12}
    assert [(k["tuner"], k["kernel"], k["where"], k["key_names"]) for k in doc1["kernels"]] == [
        ("libtuner", "rowsum_kernel", "flag_gems.tuned.rowsum:rowsum_kernel.fn", ["M", "N"]),
        ("autotuner", "scale_kernel", "flag_gems.tuned.scale:scale_kernel.fn", ["N"])]
    # the first process tuned everything; the second answered the LibTuner's
    # keys from the DB (no new row: diffing its keys would have found nothing)
    assert all(x["benchmarked"] for x in tune_log(a1))
    log2 = tune_log(a2)
    assert [x["benchmarked"] for x in log2 if x["kernel"] == "rowsum_kernel"] == [False] * 6
    assert [x["benchmarked"] for x in log2 if x["kernel"] == "scale_kernel"] == [True] * 6
    assert configs_of_log(a1) == configs_of_log(a2) == configs_of_records(doc1)
    for run in (a1, a2):
        (ev,) = events(run, "AUTOTUNE_RECORDED")
        assert (ev["tuners"], ev["entries"], ev["unrecordable"]) == (2, 12, 0)
        assert MARKER not in (r1.stdout + r2.stdout)


def test_ab_round_trip_replays_a_on_b(tmp_path):
    # A records on a cold DB.
    a, ra = zrun(tmp_path, "a", "db_a")
    ok(ra)
    doc_a, meta_a = recorded(a)
    want = configs_of_records(doc_a)
    assert set(want) == KEYS
    # C: a record run under B's conditions (another build / timing noise)
    # chooses differently for every key; it leaves its winners in db_c.
    c, rc = zrun(tmp_path, "c", "db_c", FAKE_TUNE_BIAS="1")
    ok(rc)
    theirs = configs_of_records(recorded(c)[0])
    assert set(theirs) == KEYS and all(theirs[k] != want[k] for k in KEYS)
    # B replays A under the same conditions, on db_c: warm with other winners.
    b, rb = zrun(tmp_path, "b", "db_c", "replay", a, FAKE_TUNE_BIAS="1")
    ok(rb)
    got = configs_of_log(b)
    assert got == want                          # B ran exactly A's configs
    assert not any(x["benchmarked"] for x in tune_log(b))       # and tuned nothing
    assert MARKER not in rb.stdout and events(b, MARKER) == []
    assert not (b / "autotune_records").exists()
    (ev,) = events(b, "AUTOTUNE_REPLAYED")
    assert (ev["injected"], ev["tuners"]) == (meta_a["entries"], meta_a["tuners"])
    assert events(b, "WARNING") == []
    # the pre_hook of rowsum's BLOCK_N 64 config came back with it: the runs
    # have rows, all of them SUCCESS
    rb_rows = rows(b)
    assert len(rb_rows) == 12 and {x["status"] for x in rb_rows} == {"SUCCESS"}
    assert [(x["op_name"], x["dtype"], x["shape_detail"]) for x in rb_rows] == \
        [(x["op_name"], x["dtype"], x["shape_detail"]) for x in rows(a)]
    # db_c was not overwritten by the replay: C's winners are still there
    d, rd = zrun(tmp_path, "d", "db_c", FAKE_TUNE_BIAS="1")
    ok(rd)
    assert configs_of_log(d, ("rowsum_kernel",)) == {
        k: v for k, v in theirs.items() if k[0] == "rowsum_kernel"}


def test_replay_fallbacks_of_a_run(tmp_path):
    a, ra = zrun(tmp_path, "a", "db_a")
    ok(ra)
    # B: one more shape, a config A chose that B's compiler cannot build, and
    # an op A never ran (its tuner has pre_hook configs: unrecordable anyway).
    shapes = SHAPES.replace("[8, 100]]}", "[8, 100], [2, 2000]]}")
    b, rb = zrun(tmp_path, "b", "db_b", "replay", a, shapes=shapes,
                 nodes=NODES + ["benchmark/test_tuned.py::test_tuned_hooked"],
                 FAKE_TRITON_FAIL="scale_kernel:BLOCK=256")
    ok(rb)
    evs = [(e["reason"], e["kernel"], tuple(e["key"])) for e in events(b, MARKER)]
    assert sorted(evs) == sorted(
        [("compile_failed", "scale_kernel", (16777216, dt, dt)) for dt in (F16, F32)] +
        [("key_missing", "scale_kernel", (4000, dt, dt)) for dt in (F16, F32)] +
        [("key_missing", "rowsum_kernel", (2, 2016, dt, dt)) for dt in (F16, F32)] +
        [("key_missing", "hooked_copy_kernel", (4096, dt, dt)) for dt in (F16, F32)])
    # one stdout line each (pytest's progress dot may precede it on its line)
    assert rb.stdout.count(MARKER) == len(evs) == 8
    for reason, k, _ in evs:
        line = "%s reason=%s kernel=%s\n" % (MARKER, reason, k)
        assert rb.stdout.count(line) == sum(1 for e in evs if e[:2] == (reason, k))
    # per dtype: A's config ran and failed, was evicted, and the retry tuned
    # live without it
    calls = [(x["benchmarked"], x["config"]["BLOCK"]) for x in tune_log(b)
             if x["kernel"] == "scale_kernel" and x["key"][0] == 16777216]
    assert calls[0] == calls[2] == (False, 256)
    assert calls[1][0] is calls[3][0] is True and 256 not in (calls[1][1], calls[3][1])
    assert len(calls) == 4
    assert {x["status"] for x in rows(b)} == {"SUCCESS"}
    assert all(e["nodeid"].startswith("benchmark/test_tuned.py::") for e in events(b, MARKER))
    # each fired in the gems measurement of its row, which says so; no other
    # row of its test does
    assert all(e["measured"] for e in events(b, MARKER))
    got = {(x["op_name"], x["shape_detail"], x["dtype"]):
           (x["gems"].get("replay_fallbacks"), x["gems"]["markers"],
            x["torch"].get("replay_fallbacks"))
           for x in rows(b)}
    want = {}
    for dt in (F16, F32):
        want[("tuned_scale", "[torch.Size([4096, 4096])]", dt)] = "compile_failed", "scale_kernel"
        want[("tuned_scale", "[torch.Size([2, 2000])]", dt)] = "key_missing", "scale_kernel"
        want[("tuned_rowsum", "[torch.Size([2, 2000])]", dt)] = "key_missing", "rowsum_kernel"
        want[("tuned_hooked", "[torch.Size([64, 64])]", dt)] = "key_missing", "hooked_copy_kernel"
    assert set(want) <= set(got) and len(got) == 4 * 2 + 4 * 2 + 2
    for k, (fbs, markers, torch_fbs) in got.items():
        if k in want:
            assert fbs == [dict(zip(("reason", "kernel"), want[k]))], k
            assert MARKER in markers, k
        else:
            assert fbs is None and MARKER not in markers, k
        assert torch_fbs is None, k


def test_a_recording_of_other_terms_stops_pytest(tmp_path):
    a, ra = zrun(tmp_path, "a", "db_a", nodes=NODES[:1])
    ok(ra)
    b, rb = zrun(tmp_path, "b", "db_a", "replay", a, nodes=NODES[:1], ZLB_BACKEND="rocm")
    assert rb.returncode == 4, rb.stdout[-2000:] + rb.stderr[-2000:]
    assert ("zlbench.autotune: ZLB_REPLAY_FROM=%s was recorded on backend 'cuda' and this "
            "run is on 'rocm'" % a) in rb.stderr
    assert rows(b) == []
    c, rc = zrun(tmp_path, "c", "db_a", "replay", a, nodes=NODES[:1], ZLB_USE_FLAGTUNE="1")
    assert rc.returncode == 4
    assert "was recorded with USE_FLAGTUNE=0 and this run has 1" in rc.stderr
    d, rd = zrun(tmp_path, "d", "db_a", "replay", b, nodes=NODES[:1])
    assert rd.returncode == 4 and "it is not a recording run" in rd.stderr
