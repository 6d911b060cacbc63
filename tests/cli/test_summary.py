"""zlb summary end to end: hand-made batches (tests/data/summary/) and a batch
made of run directories that the real `zlb run` wrote against the fake
FlagGems checkout."""
import csv
import io
import json
import re
import shutil

from conftest import REPO
from test_batch import world  # noqa: F401 (fixture)

DATA = REPO / "tests" / "data" / "summary"

HEADER = ("repo,op,status,backend,device,op_name,dtype,shape_detail,row_status,"
          "torch_latency_ms,gems_latency_ms,speedup,timer,markers,op_remarks\n")

BATCH_CSV = HEADER + """\
main,broken,FAIL,cuda,NVIDIA H200,,,,,,,,,,no_results;deterministic_failure;rc=1
main,extra,,cuda,NVIDIA H200,extra,torch.float32,N/A,SUCCESS,0.001000,0.000500,2.000,graph,,not_in_ops_status
main,layer_norm,PASS,cuda,NVIDIA H200,layer_norm,torch.float16,"[torch.Size([1024, 1024]), [1024]]",SUCCESS,0.004284,0.002895,1.480,graph,,
main,layer_norm,PASS,cuda,NVIDIA H200,layer_norm,torch.float16,"[torch.Size([1, 7]), [7]]",FAILED,,,,,,
main,softmax,PASS,cuda,NVIDIA H100 80GB HBM3,softmax,torch.float16,"[torch.Size([1024, 1024]), 1]",SUCCESS,0.004718,0.002336,2.020,graph,,
main,softmax,PASS,cuda,NVIDIA H100 80GB HBM3,softmax,torch.float16,"[torch.Size([4096, 4096]), 1]",SUCCESS,0.054926,0.022737,2.416,graph,,
main,softmax,PASS,cuda,NVIDIA H100 80GB HBM3,softmax,torch.bfloat16,"[torch.Size([1024, 1024]), 1]",SUCCESS,0.004801,0.002402,1.999,graph,,
main,sort,PASS,cuda,NVIDIA H200,sort,torch.float16,"[torch.Size([1024, 1024])]",SUCCESS,0.020000,0.025000,0.800,graph+direct,BENCHMARK_DIRECT_NO_CUDAGRAPH,no_cudagraph_rows=1
main,sort,PASS,cuda,NVIDIA H200,sort,torch.float16,"[torch.Size([64, 64])]",SUCCESS,0.010000,0.008000,1.250,graph,GRAPH_MEMSET_NODES,no_cudagraph_rows=1
main,tuned_rowsum,PASS,cuda,NVIDIA H200,tuned_rowsum,torch.float16,"[torch.Size([256, 1024])]",SUCCESS,0.003000,0.001000,3.000,graph,AUTOTUNE_REPLAY_FALLBACK,replay_fallback=2;bad_lines=1;dtype_fallback
main,tuned_rowsum,PASS,cuda,NVIDIA H200,tuned_rowsum,torch.float16,"[torch.Size([512, 1024])]",SUCCESS,0.004000,0.004000,1.000,graph,AUTOTUNE_REPLAY_FALLBACK,replay_fallback=2;bad_lines=1;dtype_fallback
main,upsample,SKIP,cuda,,,,,,,,,,,no_run_dir;skip_reason=needs sm90
vllm,fused_moe,TIMEOUT,cuda,,,,,,,,,,,no_run_dir
"""

OLD_CSV = HEADER + """\
main,add,,cuda,NVIDIA H200,add,torch.float16,"[torch.Size([1048576]), torch.Size([1048576])]",SUCCESS,0.001789,0.002164,0.827,graph,,
vllm,fused_marlin_moe,,cuda,NVIDIA H200,fused_marlin_moe,torch.bfloat16,"[torch.Size([1, 7168])]",SUCCESS,0.120000,0.100000,1.200,direct,BENCHMARK_DIRECT_NO_CUDAGRAPH,no_cudagraph_rows=1
"""


def copy_data(tmp_path, name):
    dst = tmp_path / name
    shutil.copytree(DATA / name, dst)
    return dst


def test_batch_table_is_exact(zlb, tmp_path):
    batch = copy_data(tmp_path, "batch")
    r = zlb.cmd("summary", str(batch), "--out", str(batch))
    assert r.rc == 0, r
    assert (batch / "summary.csv").read_text() == BATCH_CSV
    # The corrupt line is skipped with its file and line named.
    assert re.search(r"warning: \S+/main/tuned_rowsum/results.jsonl:2: not a JSON object", r.err), r
    out = r.out
    assert "8 operators" in out
    assert "status: PASS 4, FAIL 1, TIMEOUT 1, SKIP 1, (none) 1" in out
    assert "not in ops_status.csv, found on disk: main/extra" in out
    # where the numbers come from: the identity's card (softmax's provenance names
    # another), else its caliber's model; without a run, ops_status.csv's backend
    assert ("devices: cuda NVIDIA H200 (5 operators), cuda NVIDIA H100 80GB HBM3 "
            "GPU-11111111-2222-4333-8444-555555555555 (1 operator), "
            "cuda (device unknown) (2 operators)") in out
    assert "rows: 10, 9 SUCCESS; 3 operators without rows: main/broken, main/upsample, vllm/fused_moe" in out
    assert "not graph-timed: 1 row in 1 operator: main/sort (1)" in out
    assert "replay fallbacks: 2 in 1 operator: main/tuned_rowsum (2)" in out
    # sort's GRAPH_MEMSET_NODES row times the copy engine, its other row is
    # graph against direct: in no list
    assert ("left out of the speedups: 1 row with GRAPH_MEMCPY_NODES or GRAPH_MEMSET_NODES "
            "(copy-engine nodes: another caliber); 1 row timed by graph on one side and "
            "directly on the other (a ratio of two calibers)") in out
    worst = out[out.index("worst speedups"):out.index("best speedups")]
    assert worst.splitlines()[1].split()[:2] == ["1.000", "main/tuned_rowsum"]
    assert len(worst.strip().splitlines()) == 1 + 4
    assert "GRAPH_MEMSET_NODES" not in out[out.index("worst speedups"):]
    assert "main/sort" not in out[out.index("worst speedups"):]
    best = out[out.index("best speedups"):].splitlines()
    assert best[1].split()[:2] == ["3.000", "main/tuned_rowsum"]
    assert f"wrote {batch}/summary.csv and {batch}/summary.json" in out
    assert "\x1b" not in out

    j = json.loads((batch / "summary.json").read_text())
    assert j["schema_version"] == 2
    assert j["csv"] == {"file": "summary.csv", "schema_version": 2,
                        "columns": HEADER.strip().split(",")}
    assert j["status_counts"] == {"PASS": 4, "FAIL": 1, "TIMEOUT": 1, "SKIP": 1, "(none)": 1}
    assert (j["ops"], j["rows"], j["rows_success"], j["rows_not_graph"], j["replay_fallbacks"],
            j["bad_lines"], j["ops_without_rows"]) == (8, 10, 9, 1, 2, 1, 3)
    assert j["ops_status"] == "ops_status.csv"
    assert j["devices"] == [
        {"backend": "cuda", "device": "NVIDIA H200", "device_uuid": "", "ops": 5},
        {"backend": "cuda", "device": "NVIDIA H100 80GB HBM3",
         "device_uuid": "GPU-11111111-2222-4333-8444-555555555555", "ops": 1},
        {"backend": "cuda", "device": "", "device_uuid": "", "ops": 2}]
    soft = [b for b in j["best_speedups"] if b["op"] == "softmax"]
    assert soft and all((b["backend"], b["device"], b["device_uuid"]) ==
                        ("cuda", "NVIDIA H100 80GB HBM3",
                         "GPU-11111111-2222-4333-8444-555555555555") for b in soft)
    assert j["ops_found_by_walking"] == ["main/extra"]
    assert {(o["op"], o["remarks"]) for o in j["ops_with_remarks"]} == {
        ("broken", "no_results;deterministic_failure;rc=1"), ("extra", "not_in_ops_status"),
        ("sort", "no_cudagraph_rows=1"), ("tuned_rowsum", "replay_fallback=2;bad_lines=1;dtype_fallback"),
        ("upsample", "no_run_dir;skip_reason=needs sm90"), ("fused_moe", "no_run_dir")}
    assert [round(w["speedup"], 3) for w in j["worst_speedups"]][:3] == [1.0, 1.48, 1.999]
    assert j["speedups_left_out"] == {"no_kernels": 0, "copy_engine": 1, "mixed_timers": 1}

    # Run again: the same files, byte for byte; nothing of its own is read back.
    first = (batch / "summary.csv").read_bytes(), (batch / "summary.json").read_bytes()
    r = zlb.cmd("summary", str(batch), "--out", str(batch))
    assert r.rc == 0, r
    assert ((batch / "summary.csv").read_bytes(), (batch / "summary.json").read_bytes()) == first


def test_old_batch_without_ops_status(zlb, tmp_path):
    batch = copy_data(tmp_path, "old_batch")
    r = zlb.cmd("summary", str(batch), "--out", str(batch))
    assert r.rc == 0, r
    assert (batch / "summary.csv").read_text() == OLD_CSV
    assert f"2 operators, found by walking {batch}/*/*/ (no ops_status.csv)" in r.out
    assert "status: (none) 2" in r.out
    j = json.loads((batch / "summary.json").read_text())
    assert j["ops_status"] is None
    assert j["ops_found_by_walking"] == ["main/add", "vllm/fused_marlin_moe"]
    assert j["status_counts"] == {"(none)": 2}


def test_out_option_and_color(zlb, tmp_path):
    batch = copy_data(tmp_path, "old_batch")
    # Without --out nothing is written, the batch itself included.
    r = zlb.cmd("summary", str(batch), "--color", "always")
    assert r.rc == 0, r
    assert not (batch / "summary.csv").exists() and "wrote" not in r.out
    assert "\x1b[33mnot graph-timed:\x1b[0m" in r.out
    # --out DIR: both files there, DIR created.
    out = tmp_path / "reports" / "b"
    r = zlb.cmd("summary", str(batch), "--out", str(out))
    assert r.rc == 0, r
    assert (out / "summary.csv").read_text() == OLD_CSV
    assert json.loads((out / "summary.json").read_text())["csv"]["file"] == "summary.csv"
    assert f"wrote {out}/summary.csv and {out}/summary.json" in r.out
    assert not (batch / "summary.csv").exists()
    # A place that cannot be made: exit 7, with a sentence; --out - is refused.
    (tmp_path / "file").write_text("x")
    r = zlb.cmd("summary", str(batch), "--out", str(tmp_path / "file" / "s"))
    assert r.rc == 7 and "cannot create" in r.err, r
    r = zlb.cmd("summary", str(batch), "--out", "-")
    assert r.rc == 2 and not (zlb.cwd / "-").exists(), r


def test_formats_on_standard_output(zlb, tmp_path):
    batch = copy_data(tmp_path, "batch")
    r = zlb.cmd("summary", str(batch), "--format", "csv")
    assert r.rc == 0, r
    assert r.out == BATCH_CSV
    r = zlb.cmd("summary", str(batch), "--format", "json")
    assert r.rc == 0, r
    j = json.loads(r.out)
    assert j["schema_version"] == 2 and j["status_counts"]["PASS"] == 4
    assert j["csv"]["columns"] == HEADER.strip().split(",")
    r = zlb.cmd("summary", str(batch), "--format", "md")
    assert r.rc == 0, r
    md = r.out
    assert md.startswith("## zlb summary of `batch`\n")
    assert "| status | operators |\n| --- | ---: |\n| PASS | 4 |\n" in md
    assert "### Worst speedups (gems vs torch)" in md
    assert "| 1.000 | `main/tuned_rowsum` | `torch.float16` |" in md
    assert "`main/sort`" not in md[md.index("### Worst speedups"):md.index("### Best speedups")]
    # the operators to read first: not PASS/SKIP, or with remarks
    assert ("| `main/broken` | FAIL | 0 | `no_results;deterministic_failure;rc=1` | "
            "`NVIDIA H200` |") in md
    assert ("| `cuda` | `NVIDIA H100 80GB HBM3` | `GPU-11111111-2222-4333-8444-555555555555` "
            "| 1 |") in md
    assert "\x1b" not in md
    # nothing written by any of them
    assert not (batch / "summary.csv").exists()


def _row(op, i, shape, torch_ms, gems_ms, torch_markers=(), gems_markers=(),
         timers=("graph", "graph")):
    def meas(ms, markers, timer):
        return {"timer": timer, "median_ms": ms, "n": 5,
                "calls_per_replay": 4096 if timer == "graph" else None,
                "markers": list(markers), "fallback": None}
    return json.dumps({"schema_version": 1, "kind": "row", "nodeid": f"test_{op}.py::test_{op}",
                       "op": op, "op_name": op, "dtype": "torch.float16", "index": i,
                       "status": "SUCCESS", "shape_detail": shape,
                       "latency_base_ms": torch_ms, "latency_ms": gems_ms,
                       "speedup": torch_ms / gems_ms,
                       "torch": meas(torch_ms, torch_markers, timers[0]),
                       "gems": meas(gems_ms, gems_markers, timers[1])}) + "\n"


def test_rows_that_time_no_kernel_are_left_out_of_the_speedups(zlb, tmp_path):
    # On real FlagGems: torch.conj is a view, its graph holds no node and reads
    # 0.4 ns (speedup 1e-7); fill_scalar_out's torch side captured memset nodes
    # only. Neither is a kernel's speedup, so neither heads a list.
    batch = tmp_path / "batch"
    rows = {
        "conj": [_row("conj", 0, "[torch.Size([1024])]", 4e-7, 0.004,
                      torch_markers=["GRAPH_NO_KERNELS"])],
        "fill_scalar_out": [_row("fill_scalar_out", 0, "[torch.Size([64])]", 0.002, 2e-9,
                                 torch_markers=["GRAPH_MEMSET_NODES", "GRAPH_NO_KERNELS"])],
        "copy": [_row("copy", 0, "[torch.Size([4096])]", 0.09, 0.003,
                      gems_markers=["GRAPH_MEMCPY_NODES"])],
        "add": [_row("add", i, f"[torch.Size([{n}])]", 0.010, 0.010 / sp)
                for i, (n, sp) in enumerate([(1024, 0.9), (2048, 1.1), (4096, 1.3)])],
        # reshape_and_cache on the H200 screen: torch eager 2.39 ms, gems replayed
        # 2.4 us, "1007x"; a ratio of two calibers heads no list
        "reshape_and_cache": [_row("reshape_and_cache", 0, "[torch.Size([64])]", 2.39, 0.0024,
                                   timers=("direct", "graph"))],
        "hermite": [_row("hermite", 0, "[torch.Size([64])]", 0.0038, 0.54,
                         timers=("graph", "direct"))],
        # both sides eager: one caliber, ranked
        "choose_qparams": [_row("choose_qparams", 0, "[torch.Size([64])]", 0.012, 0.010,
                                timers=("direct", "direct"))],
    }
    for op, lines in rows.items():
        (batch / "main" / op).mkdir(parents=True)
        (batch / "main" / op / "results.jsonl").write_text("".join(lines))
    r = zlb.cmd("summary", str(batch), "--out", str(batch))
    assert r.rc == 0, r
    out = r.out
    assert ("left out of the speedups: 2 rows with GRAPH_NO_KERNELS (the graph held no kernel "
            "node: nothing measured); 1 row with GRAPH_MEMCPY_NODES or GRAPH_MEMSET_NODES "
            "(copy-engine nodes: another caliber); 2 rows timed by graph on one side and "
            "directly on the other (a ratio of two calibers)") in out
    lists = out[out.index("worst speedups"):]
    for op in ("conj", "fill_scalar_out", "copy", "reshape_and_cache", "hermite"):
        assert op not in lists, out
    assert "main/choose_qparams" in lists, out
    worst = lists[:lists.index("best speedups")].splitlines()
    best = lists[lists.index("best speedups"):].splitlines()
    assert worst[1].split()[:2] == ["0.900", "main/add"]
    assert best[1].split()[:2] == ["1.300", "main/add"]
    j = json.loads((batch / "summary.json").read_text())
    assert j["speedups_left_out"] == {"no_kernels": 2, "copy_engine": 1, "mixed_timers": 2}
    assert {w["op"] for w in j["worst_speedups"] + j["best_speedups"]} == {"add", "choose_qparams"}
    # The rows stay in the table, markers and all.
    table = list(csv.DictReader(io.StringIO((batch / "summary.csv").read_text())))
    fill = next(t for t in table if t["op"] == "fill_scalar_out")
    assert fill["markers"] == "GRAPH_MEMSET_NODES;GRAPH_NO_KERNELS"


def test_bad_input(zlb, tmp_path):
    r = zlb.cmd("summary")
    assert r.rc == 2 and "which batch?" in r.err, r
    r = zlb.cmd("summary", "a", "b")
    assert r.rc == 2 and "one batch directory at a time" in r.err, r
    r = zlb.cmd("summary", str(tmp_path), "--frobnicate")
    assert r.rc == 2 and "unknown option '--frobnicate'" in r.err, r
    r = zlb.cmd("summary", str(tmp_path), "--color", "sometimes")
    assert r.rc == 2, r
    r = zlb.cmd("summary", str(tmp_path / "nowhere"))
    assert r.rc == 8 and "is not a directory" in r.err, r
    r = zlb.cmd("summary", str(DATA / "empty_batch"))
    assert r.rc == 8 and "nothing to summarise" in r.err, r
    assert not (DATA / "empty_batch" / "summary.csv").exists()
    bad = copy_data(tmp_path, "bad_status")
    r = zlb.cmd("summary", str(bad))
    assert r.rc == 8, r
    assert "ops_status.csv: record 2 has 4 fields, the header has 2" in r.err
    assert not (bad / "summary.csv").exists()
    # An ops_status.csv without an op column is not one.
    (bad / "ops_status.csv").write_text("name,result\nsoftmax,PASS\n")
    r = zlb.cmd("summary", str(bad))
    assert r.rc == 8 and "has no 'op' column" in r.err, r


def test_help(zlb):
    r = zlb.cmd("summary", "--help")
    assert r.rc == 0, r
    for word in ("usage: zlb summary BATCH", "--out DIR", "--format FORMAT", "--color WHEN",
                 "op_remarks",
                 "no_cudagraph_rows", "replay_fallback", "exit codes"):
        assert word in r.out, word
    r = zlb.cmd("--help")
    assert re.search(r"^  summary ", r.out, re.M), r


def test_batch_of_real_runs(zlb, tmp_path):
    """Run directories written by the real zlb run, moved into a batch."""
    batch = tmp_path / "batch"
    runs = {}
    for op, args in (("softmax", ["--dtypes", "float16"]),
                     ("sort", ["--dtypes", "float16", "--direct-repeat", "3",
                               "--shape-mode", "upstream"])):
        r = zlb.run(op, *args, "--runs-dir", str(tmp_path / f"runs_{op}"))
        assert r.rc == 0, r
        (run_dir,) = list((tmp_path / f"runs_{op}").iterdir())
        (batch / "main").mkdir(parents=True, exist_ok=True)
        runs[op] = run_dir.rename(batch / "main" / op)

    # Without ops_status.csv: the older-batch path.
    r = zlb.cmd("summary", str(batch), "--out", str(batch))
    assert r.rc == 0, r
    assert "found by walking" in r.out
    table = list(csv.DictReader(io.StringIO((batch / "summary.csv").read_text())))
    for op, run in runs.items():
        rows = [json.loads(l) for l in (run / "results.jsonl").read_text().splitlines() if l]
        mine = [t for t in table if t["op"] == op]
        assert len(mine) == len(rows) > 0
        for t, row in zip(mine, rows):
            assert (t["repo"], t["status"], t["op_name"], t["dtype"], t["shape_detail"],
                    t["row_status"]) == ("main", "", row["op_name"], row["dtype"],
                                         row["shape_detail"], row["status"])
            assert t["torch_latency_ms"] == "%.6f" % row["latency_base_ms"]
            assert t["gems_latency_ms"] == "%.6f" % row["latency_ms"]
            assert t["speedup"] == "%.3f" % row["speedup"]
    soft = [t for t in table if t["op"] == "softmax"]
    assert {t["timer"] for t in soft} == {"graph"} and {t["op_remarks"] for t in soft} == {""}
    sort = [t for t in table if t["op"] == "sort"]
    assert all("direct" in t["timer"] for t in sort)
    assert all("BENCHMARK_DIRECT_NO_CUDAGRAPH" in t["markers"].split(";") for t in sort)
    assert {t["op_remarks"] for t in sort} == {f"no_cudagraph_rows={len(sort)}"}
    assert f"not graph-timed: {len(sort)} rows in 1 operator: main/sort ({len(sort)})" in r.out

    # With an ops_status.csv (as zlb batch writes it): statuses and remarks join in.
    # (version 3: mm, with no run directory, is named by the table's gpu column; the
    # others by their identities, which outrank the table's "Stale" names)
    (batch / "ops_status.csv").write_text(
        "repo,op,spec,status,seconds,attempts,rows,remarks,backend,device,gpu,gpu_uuid,timer,"
        "exit_code,run_dir,job\n"
        f"main,softmax,softmax,PASS,3.0,1,{len(soft)},,cuda,0,Stale,GPU-x,graph,0,main/softmax,\n"
        f"main,sort,sort,PASS,3.0,1,{len(sort)},dtype_fallback,cuda,0,Stale,GPU-x,graph+direct,0,"
        "main/sort,\n"
        "main,mm,mm,FAIL,1.0,2,0,deterministic_failure,musa,1,MTT S4000,GPU-mm,graph,1,,\n")
    r = zlb.cmd("summary", str(batch), "--out", str(batch))
    assert r.rc == 0, r
    table = list(csv.DictReader(io.StringIO((batch / "summary.csv").read_text())))
    assert [t["op"] for t in table] == ["mm"] + ["softmax"] * len(soft) + ["sort"] * len(sort)
    assert table[0]["status"] == "FAIL" and table[0]["op_remarks"] == "no_run_dir;deterministic_failure"
    assert {t["status"] for t in table[1:]} == {"PASS"}
    assert (table[0]["backend"], table[0]["device"]) == ("musa", "MTT S4000")
    assert {(t["backend"], t["device"]) for t in table[1:]} == \
        {("cuda", "Fake H200 (zlbench test driver)")}
    j = json.loads((batch / "summary.json").read_text())
    assert {d["device_uuid"] for d in j["devices"]} == \
        {"GPU-mm", "GPU-facec0da-0000-4000-8000-000000000000"}
    assert table[-1]["op_remarks"] == f"no_cudagraph_rows={len(sort)};dtype_fallback"
    assert "status: PASS 2, FAIL 1" in r.out


def test_run_dirs_named_by_ops_status_stay_inside_the_batch(zlb, tmp_path):
    # issue 16: a path read from a batch's file is data; ../ or an absolute
    # path in the run_dir column was read as the operator's run
    outside = copy_data(tmp_path, "batch") / "main" / "softmax"
    bdir = tmp_path / "b"
    bdir.mkdir()
    (bdir / "ops_status.csv").write_text(
        "repo,op,spec,status,seconds,attempts,rows,remarks,backend,device,timer,exit_code,run_dir\n"
        f"main,evil,evil,PASS,1,1,3,,cuda,0,graph,0,{outside}\n"
        "main,up,up,PASS,1,1,3,,cuda,0,graph,0,../batch/main/softmax\n")
    r = zlb.cmd("summary", str(bdir), "--format", "csv")   # files only with --out
    assert r.rc == 0, r
    rows = {row["op"]: row for row in csv.DictReader(io.StringIO(r.out))}
    for op in ("evil", "up"):
        assert rows[op]["row_status"] == "" and "no_run_dir" in rows[op]["op_remarks"], rows[op]


def test_an_operator_two_files_define_is_listed_under_its_run_directory(zlb, tmp_path):
    # On the H200 screen, nextafter_ ran as nextafter_@nextafter_: the summary
    # counted it twice (its listed line under nextafter_ without its run, and
    # its directory "not in ops_status.csv"), and two such lines of one op
    # would have been merged into one.
    template = copy_data(tmp_path, "batch") / "main" / "softmax"
    bdir = tmp_path / "b"
    for spec in ("nextafter_@nextafter_", "nextafter_@other"):
        shutil.copytree(template, bdir / "main" / spec)
    (bdir / "ops_status.csv").write_text(
        "repo,op,spec,status,seconds,attempts,rows,remarks,backend,device,timer,exit_code,run_dir\n"
        "main,nextafter_,nextafter_@nextafter_,PASS,1,1,3,,cuda,0,graph,0,"
        "main/nextafter_@nextafter_\n"
        "main,nextafter_,nextafter_@other,FAIL,1,1,3,,cuda,0,graph,1,main/nextafter_@other\n")
    r = zlb.cmd("summary", str(bdir), "--format", "csv")
    assert r.rc == 0, r
    rows = list(csv.DictReader(io.StringIO(r.out)))
    ops = {(row["op"], row["status"]) for row in rows}
    assert ops == {("nextafter_@nextafter_", "PASS"), ("nextafter_@other", "FAIL")}, ops
    assert all(row["row_status"] and "not_in_ops_status" not in row["op_remarks"]
               for row in rows), rows
    r = zlb.cmd("summary", str(bdir))
    assert "2 operators" in r.out and "not in ops_status.csv" not in r.out, r


def test_a_batch_on_two_gpus_names_each_operators_card(world):
    """zlb batch over two fake GPUs, then zlb summary: each row says the
    backend and the card its operator ran on, the JSON its uuid, all as
    ops_status.csv and the run's identity have them."""
    from test_batch import FAKE_GPU, batch, fake_uuid, status

    ops = ["b_pass", "b_fp32only", "b_slow", "b_fail"]
    r = batch(world, "--ops", *ops, "--devices", "0,1", "--retries", "0",
              env={"FAKE_CUDA_DEVICES": "2", "FAKE_BATCH_SLOW": "1"})
    assert r.rc == 1, r
    st = status(world.bdir)
    assert {st[op]["device"] for op in ops} == {"0", "1"}, st
    r = world.cmd("summary", str(world.bdir), "--out", str(world.bdir))
    assert r.rc == 0, r
    table = list(csv.DictReader(io.StringIO((world.bdir / "summary.csv").read_text())))
    assert {t["op"] for t in table} == set(ops)
    for t in table:
        assert (t["backend"], t["device"]) == ("cuda", FAKE_GPU), t
    j = json.loads((world.bdir / "summary.json").read_text())
    used = sorted({st[op]["device"] for op in ops})
    assert sorted(d["device_uuid"] for d in j["devices"]) == [fake_uuid(i) for i in used]
    assert sum(d["ops"] for d in j["devices"]) == len(ops)
    per_op = {w["op"]: w["device_uuid"] for w in j["worst_speedups"] + j["best_speedups"]}
    per_op.update({o["op"]: o["device_uuid"] for o in j["ops_with_remarks"]})
    assert per_op and all(u == fake_uuid(st[op]["device"]) == st[op]["gpu_uuid"]
                          for op, u in per_op.items()), (per_op, st)
    for i in used:
        assert f"{FAKE_GPU} {fake_uuid(i)}" in r.out, r
