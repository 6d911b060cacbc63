"""`zlb ir layout|diff|fingerprint` on run directories written by hand.

Each test builds the files the zlbench.ir plugin and the results plugin
leave in a run (docs/protocol.md sections 3 and 6): results.jsonl rows with
"launches" in their gems measurement, ir/compiles.jsonl, ir/staged.jsonl and
ir/files/<hash>/<name>.<stage>. No Python plugin, no GPU.
"""
import hashlib
import json
import re
from pathlib import Path

import pytest

STAGES = ["ttir", "ttgir", "llir", "ptx", "cubin"]
DTYPES = {"fp16": "torch.float16", "bf16": "torch.bfloat16", "fp32": "torch.float32"}
KERNEL = "softmax_kernel_inner"


def h(*parts):
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()


def make_run(root, op="softmax", shapes=((1024, 1024), (4096, 4096)), dtypes=("fp16", "bf16", "fp32"),
             body="", losers=1, identity=True, unlaunched=0):
    """A run of `op`: one variant per dtype, launched under every shape, plus sweep losers
    (compiled while a tuner timed them) and other variants no row launched."""
    root = Path(root)
    (root / "ir" / "files").mkdir(parents=True, exist_ok=True)
    if identity:
        (root / "run_identity.json").write_text(json.dumps({"schema_version": 1, "op": op}))
    compiles, staged, rows = [], [], []

    def compile_line(hash_, warps, stages, tile, dtype, during="eager"):
        compiles.append({
            "schema_version": 1, "ts": 1.0, "hash": hash_, "kernel": KERNEL, "name": KERNEL,
            "num_warps": warps, "num_stages": stages, "num_ctas": 1,
            "constexprs": {"TILE_N": tile, "ONE_TILE_PER_CTA": True},
            "signature": {"output_ptr": "*" + dtype, "input_ptr": "*" + dtype, "M": "i32", "N": "i32"},
            "specialization": {"div16": ["output_ptr", "input_ptr", "N"], "equal1": []},
            "cache_hit": False, "stages": {}, "nodeid": "x", "during": during})

    for dt in dtypes:
        hash_ = h(op, dt)
        compile_line(hash_, 4, 3, 1024, dt)
        d = root / "ir" / "files" / hash_
        d.mkdir(parents=True, exist_ok=True)
        files = {}
        for st in STAGES:
            data = f"// {st} of {KERNEL} {dt}\nmodule {{\n  op {dt}\n}}\n{body}"
            (d / f"{KERNEL}.{st}").write_bytes(data.encode() + (b"\0\1" if st == "cubin" else b""))
            files[st] = f"files/{hash_}/{KERNEL}.{st}"
        staged.append({"hash": hash_, "files": files})
        for i, (m, n) in enumerate(shapes):
            rows.append({
                "schema_version": 1, "kind": "row", "op": op, "op_name": op, "dtype": DTYPES[dt],
                "index": i, "status": "SUCCESS", "shape_detail": f"[torch.Size([{m}, {n}]), 1]",
                "torch": {"timer": "graph", "launches": []},
                "gems": {"timer": "graph", "launches": [{"hash": hash_, "kernel": KERNEL, "count": 1}]}})
    for k in range(losers):
        compile_line(h(op, "loser", k), 8, 2 + k, 2048, "fp16", during="tune")
    for k in range(unlaunched):
        compile_line(h(op, "fill", k), 4, 3, 1024, "fp32", during="other")
    (root / "ir" / "compiles.jsonl").write_text("".join(json.dumps(c) + "\n" for c in compiles))
    (root / "ir" / "staged.jsonl").write_text("".join(json.dumps(s) + "\n" for s in staged))
    (root / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def no_ir_run(root, op="softmax"):
    root = Path(root)
    root.mkdir(parents=True)
    (root / "run_identity.json").write_text(json.dumps({"schema_version": 1, "op": op}))
    (root / "results.jsonl").write_text(json.dumps({
        "kind": "row", "op": op, "dtype": "torch.float16", "shape_detail": "[torch.Size([4])]",
        "gems": {"timer": "graph"}}) + "\n")
    return root


def index_rows(run):
    lines = (Path(run) / "ttgir" / "index.tsv").read_text().splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, l.split("\t"))) for l in lines[1:]]


def tree_listing(run):
    tree = Path(run) / "ttgir"
    return sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file())


# ---- layout ---------------------------------------------------------------------

def test_layout_builds_the_seed_tree(zlb, tmp_path):
    run = make_run(tmp_path / "runs" / "softmax_1", unlaunched=1)
    r = zlb.cmd("ir", "layout", str(run))
    assert r.rc == 0, r
    assert ("6 variants (30 files) in 2 shapes, 1 kernel; 1 sweep loser and 1 other "
            "unlaunched variant listed in index.tsv") in r.out
    files = tree_listing(run)
    for shape in ("1024x1024", "4096x4096"):
        for dt in ("bf16", "fp16", "fp32"):
            for st in STAGES:
                assert f"{shape}/{KERNEL}/w4s3__{dt}.{st}" in files
    assert "index.tsv" in files and "naming.md" in files
    assert len(files) == 32
    text = (run / "ttgir" / "1024x1024" / KERNEL / "w4s3__bf16.ttgir").read_text()
    assert "op bf16" in text

    rows = index_rows(run)
    kept = [r for r in rows if r["sweep_loser"] == "no"]
    losers = [r for r in rows if r["sweep_loser"] == "yes"]
    unlaunched = [r for r in rows if r["sweep_loser"] == "unlaunched"]
    assert len(kept) == 6 and len(losers) == 1 and len(unlaunched) == 1
    assert unlaunched[0]["hash"] == h("softmax", "fill", 0) and unlaunched[0]["files"] == "-"
    fp16 = [r for r in kept if r["shape"] == "4096x4096" and r["variant"] == "w4s3__fp16"][0]
    assert fp16["dtype"] == "torch.float16"
    assert fp16["hash"] == h("softmax", "fp16")
    assert fp16["launches"] == "1"
    assert (fp16["num_warps"], fp16["num_stages"], fp16["num_ctas"]) == ("4", "3", "1")
    assert json.loads(fp16["constexprs"]) == {"ONE_TILE_PER_CTA": True, "TILE_N": 1024}
    assert fp16["files"].split(",")[1] == f"4096x4096/{KERNEL}/w4s3__fp16.ttgir"
    assert losers[0]["shape"] == "-" and losers[0]["variant"] == "-" and losers[0]["files"] == "-"
    assert losers[0]["hash"] == h("softmax", "loser", 0)
    # The loser's files were never staged, and nothing of it is in the tree.
    assert not any(h("softmax", "loser", 0)[:8] in f for f in files)

    legend = (run / "ttgir" / "naming.md").read_text()
    assert "- variants kept: 6 (30 files)" in legend
    assert "- sweep losers: 1" in legend
    assert "- other variants no row launched: 1" in legend
    assert "| fp16 | torch.float16 |" in legend


def test_layout_again_replaces_the_tree(zlb, tmp_path):
    run = make_run(tmp_path / "run")
    assert zlb.cmd("ir", "layout", str(run)).rc == 0
    first = (run / "ttgir" / "index.tsv").read_text()
    (run / "ttgir" / "stale.txt").write_text("from an older zlb\n")
    r = zlb.cmd("ir", "layout", str(run))
    assert r.rc == 0, r
    assert (run / "ttgir" / "index.tsv").read_text() == first
    assert not (run / "ttgir" / "stale.txt").exists()
    assert sorted(p.name for p in run.iterdir()) == ["ir", "results.jsonl", "run_identity.json", "ttgir"]


def test_layout_names_differing_configs(zlb, tmp_path):
    """Two configs of one kernel in one shape: named by what differs, initials for constexprs."""
    run = make_run(tmp_path / "run", shapes=((64, 64),), dtypes=("fp16",), losers=0)
    compiles = [json.loads(l) for l in (run / "ir" / "compiles.jsonl").read_text().splitlines()]
    other = dict(compiles[0], hash=h("other"), num_warps=8,
                 constexprs={"TILE_N": 2048, "ONE_TILE_PER_CTA": False})
    compiles.append(other)
    (run / "ir" / "compiles.jsonl").write_text("".join(json.dumps(c) + "\n" for c in compiles))
    d = run / "ir" / "files" / other["hash"]
    d.mkdir()
    (d / f"{KERNEL}.ttgir").write_text("other\n")
    with (run / "ir" / "staged.jsonl").open("a") as f:
        f.write(json.dumps({"hash": other["hash"], "files": {"ttgir": f"files/{other['hash']}/{KERNEL}.ttgir"}}) + "\n")
    rows = [json.loads(l) for l in (run / "results.jsonl").read_text().splitlines()]
    rows[0]["gems"]["launches"].append({"hash": other["hash"], "kernel": KERNEL, "count": 3})
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    r = zlb.cmd("ir", "layout", str(run))
    assert r.rc == 0, r
    names = {(x["variant"], x["launches"]) for x in index_rows(run)}
    assert names == {("OTPC1_TN1024_w4", "1"), ("OTPC0_TN2048_w8", "3")}
    assert (run / "ttgir" / "64x64" / KERNEL / "OTPC0_TN2048_w8.ttgir").read_text() == "other\n"
    legend = (run / "ttgir" / "naming.md").read_text()
    assert "| `OTPC` | `ONE_TILE_PER_CTA` |" in legend
    assert "| `TN` | `TILE_N` |" in legend


def test_layout_without_ir(zlb, tmp_path):
    run = no_ir_run(tmp_path / "timer_only")
    r = zlb.cmd("ir", "layout", str(run))
    assert r.rc == 8, r
    assert "zlb ir layout: no IR captured" in r.err and r.out == ""
    assert "error" not in r.out + r.err
    assert not (run / "ttgir").exists()


def test_layout_bad_input(zlb, tmp_path):
    (tmp_path / "plain").mkdir()
    r = zlb.cmd("ir", "layout", str(tmp_path / "plain"))
    assert r.rc == 8 and "is not a run directory" in r.err, r
    r = zlb.cmd("ir", "layout", str(tmp_path / "missing"))
    assert r.rc == 8 and "is not a directory" in r.err, r
    r = zlb.cmd("ir", "layout")
    assert r.rc == 2 and "zlb ir layout: which run? zlb ir layout RUN" in r.err, r
    r = zlb.cmd("ir", "layout", "a", "b")
    assert r.rc == 2, r
    r = zlb.cmd("ir", "layout", "--frobnicate", "a")
    assert r.rc == 2 and "unknown option" in r.err, r


def test_layout_unwritable_run(zlb, tmp_path):
    run = make_run(tmp_path / "run")
    run.chmod(0o555)
    try:
        if _writable(run):
            pytest.skip("running as a user that ignores permissions")
        r = zlb.cmd("ir", "layout", str(run))
        assert r.rc == 7, r
        assert "zlb ir layout:" in r.err
    finally:
        run.chmod(0o755)


def _writable(d):
    try:
        (d / ".probe").write_text("")
        (d / ".probe").unlink()
        return True
    except OSError:
        return False


# ---- diff -----------------------------------------------------------------------------

def summary(out):
    last = out.strip().splitlines()[-1]
    assert last.startswith("ir diff: "), out
    return last[len("ir diff: "):]


def test_diff_identical_runs(zlb, tmp_path):
    a = make_run(tmp_path / "a")
    b = make_run(tmp_path / "b")
    assert zlb.cmd("ir", "layout", str(a)).rc == 0
    r = zlb.cmd("ir", "diff", str(a), str(b))   # b is laid out on the fly
    assert r.rc == 0, r
    assert summary(r.out) == "6 identical, 0 differing, 0 only in A, 0 only in B (stage ttgir)"
    assert not (b / "ttgir").exists(), "diff must not change a run"


def test_diff_shows_unified_diff(zlb, tmp_path):
    a = make_run(tmp_path / "a")
    b = make_run(tmp_path / "b", body="  // B's compiler\n")
    r = zlb.cmd("ir", "diff", str(a), str(b), "--shape", "1024x1024")
    assert r.rc == 1, r
    assert summary(r.out) == "0 identical, 3 differing, 0 only in A, 0 only in B (stage ttgir)"
    assert f"=== 1024x1024/{KERNEL}/w4s3__fp16.ttgir" in r.out
    assert f"--- a/1024x1024/{KERNEL}/w4s3__fp16.ttgir" in r.out
    assert f"+++ b/1024x1024/{KERNEL}/w4s3__fp16.ttgir" in r.out
    assert "\n+  // B's compiler\n" in r.out
    assert "4096x4096" not in r.out
    assert "\x1b[" not in r.out

    r = zlb.cmd("ir", "diff", str(a), str(b), "--color", "always", "--stage=ptx")
    assert r.rc == 1, r
    assert "\x1b[32m+  // B's compiler\x1b[0m" in r.out
    assert summary(r.out).endswith("(stage ptx)")
    # The colour setting of `zlb run` is the default here too; the flag wins.
    r = zlb.cmd("ir", "diff", str(a), str(b), env={"FLAGGEMS_PERF_COLOR": "always"})
    assert "\x1b[32m+  // B's compiler" in r.out, r
    r = zlb.cmd("ir", "diff", str(a), str(b), "--color", "never", env={"FLAGGEMS_PERF_COLOR": "always"})
    assert "\x1b[" not in r.out, r
    r = zlb.cmd("ir", "diff", str(a), str(b), env={"FLAGGEMS_PERF_COLOR": "bright"})
    assert r.rc == 2 and "FLAGGEMS_PERF_COLOR" in r.err, r


def test_diff_cubin_is_binary(zlb, tmp_path):
    a = make_run(tmp_path / "a", dtypes=("fp16",))
    b = make_run(tmp_path / "b", dtypes=("fp16",), body="x")
    r = zlb.cmd("ir", "diff", str(a), str(b), "--stage", "cubin")
    assert r.rc == 1, r
    m = re.search(r"Binary files a/(\S+) \((\d+) bytes, xxh3 ([0-9a-f]{16})\) and "
                  r"b/(\S+) \((\d+) bytes, xxh3 ([0-9a-f]{16})\) differ", r.out)
    assert m, r
    assert m.group(1) == f"1024x1024/{KERNEL}/w4s3.cubin"
    assert int(m.group(5)) == int(m.group(2)) + 1
    assert m.group(3) != m.group(6)
    assert "@@" not in r.out


def test_diff_one_side_only(zlb, tmp_path):
    a = make_run(tmp_path / "a")
    b = make_run(tmp_path / "b", shapes=((1024, 1024), (4096, 4096), (2048, 2048)))
    r = zlb.cmd("ir", "diff", str(a), str(b))
    assert r.rc == 1, r
    assert f"only in B: 2048x2048/{KERNEL}/w4s3__fp16" in r.out
    assert summary(r.out) == "6 identical, 0 differing, 0 only in A, 3 only in B (stage ttgir)"
    r = zlb.cmd("ir", "diff", str(b), str(a), "--shape", "2048x2048")
    assert r.rc == 1 and "only in A: 2048x2048" in r.out, r
    r = zlb.cmd("ir", "diff", str(a), str(b), "--shape", "8x8")
    assert r.rc == 8 and "neither run has a variant under shape '8x8'" in r.err, r


def test_diff_different_ops(zlb, tmp_path):
    a = make_run(tmp_path / "softmax_run", op="softmax")
    b = make_run(tmp_path / "mm_run", op="mm")
    r = zlb.cmd("ir", "diff", str(a), str(b))
    assert r.rc == 9, r
    assert "different operators" in r.err and "'softmax'" in r.err and "'mm'" in r.err
    r = zlb.cmd("ir", "diff", str(a), str(b), "--op", "softmax")
    assert r.rc == 9 and "has no run of operator 'softmax'" in r.err, r


def test_diff_batches_with_op(zlb, tmp_path):
    for side in ("A", "B"):
        make_run(tmp_path / side / "main" / "softmax", op="softmax",
                 body="changed\n" if side == "B" else "")
        make_run(tmp_path / side / "main" / "mm", op="mm")
    r = zlb.cmd("ir", "diff", str(tmp_path / "A"), str(tmp_path / "B"))
    assert r.rc == 2 and "choose one with --op" in r.err, r
    r = zlb.cmd("ir", "diff", str(tmp_path / "A"), str(tmp_path / "B"), "--op", "mm")
    assert r.rc == 0, r
    r = zlb.cmd("ir", "diff", str(tmp_path / "A"), str(tmp_path / "B"), "--op", "softmax")
    assert r.rc == 1, r
    assert summary(r.out).startswith("0 identical, 6 differing")
    r = zlb.cmd("ir", "diff", str(tmp_path / "A"), str(tmp_path / "B"), "--op", "layer_norm")
    assert r.rc == 9 and "(it has: mm, softmax)" in r.err, r


def test_diff_no_ir_and_not_a_run(zlb, tmp_path):
    a = make_run(tmp_path / "a")
    n = no_ir_run(tmp_path / "n")
    (tmp_path / "plain").mkdir()
    r = zlb.cmd("ir", "diff", str(a), str(n))
    assert r.rc == 8 and "B: no IR captured" in r.err, r
    r = zlb.cmd("ir", "diff", str(tmp_path / "plain"), str(a))
    assert r.rc == 8 and "is not a run directory" in r.err, r
    r = zlb.cmd("ir", "diff", str(tmp_path / "nowhere"), str(a))
    assert r.rc == 8 and "is not a directory" in r.err, r


def test_diff_stat_in_every_format(zlb, tmp_path):
    a = make_run(tmp_path / "a")
    b = make_run(tmp_path / "b", shapes=((1024, 1024), (4096, 4096), (2048, 2048)),
                 body="x\ny\n")
    key = f"1024x1024/{KERNEL}/w4s3__fp16"
    # table: the variants that are not the same, then the summary line
    r = zlb.cmd("ir", "diff", str(a), str(b), "--stat")
    assert r.rc == 1, r
    row = next(l for l in r.out.splitlines() if l.startswith(key))
    assert row.split()[1:] == ["differs", "+2", "-0", str(len(f"// ttgir of {KERNEL} fp16\nmodule {{\n  op fp16\n}}\n")),
                               str(len(f"// ttgir of {KERNEL} fp16\nmodule {{\n  op fp16\n}}\nx\ny\n"))]
    assert f"2048x2048/{KERNEL}/w4s3__fp16  only_b" in r.out
    assert summary(r.out) == "0 identical, 6 differing, 0 only in A, 3 only in B (stage ttgir)"
    assert "@@" not in r.out
    # json: every variant, schema_version, nothing else on stdout
    r = zlb.cmd("ir", "diff", str(a), str(b), "--stat", "--format", "json", "--stage", "ptx")
    assert r.rc == 1, r
    j = json.loads(r.out)
    assert (j["schema_version"], j["kind"], j["stage"]) == (1, "zlb-ir-diff-stat", "ptx")
    assert j["summary"] == {"identical": 0, "differing": 6, "only_a": 0, "only_b": 3,
                            "without_stage": 0}
    v = {x["variant"]: x for x in j["variants"]}
    assert v[key]["status"] == "differs" and (v[key]["added"], v[key]["removed"]) == (2, 0)
    assert v[f"2048x2048/{KERNEL}/w4s3__bf16"]["bytes_a"] is None
    # csv: a header and a line per variant
    r = zlb.cmd("ir", "diff", str(a), str(b), "--stat", "--format", "csv", "--stage", "cubin")
    lines = r.out.splitlines()
    assert lines[0] == "variant,status,added,removed,bytes_a,bytes_b" and len(lines) == 1 + 9
    assert next(l for l in lines if l.startswith(key)).split(",")[1:4] == ["differs", "", ""]
    # md: for a pull request
    r = zlb.cmd("ir", "diff", str(a), str(b), "--stat", "--format", "md")
    assert r.out.startswith("## zlb ir diff: `ttgir`\n"), r
    assert f"| `{key}` | differs | +2 | -0 |" in r.out
    # identical runs: no line but the summary, exit 0
    r = zlb.cmd("ir", "diff", str(a), str(a), "--stat")
    assert r.rc == 0 and summary(r.out).startswith("6 identical, 0 differing"), r
    assert "differs" not in r.out


def test_diff_bad_usage(zlb, tmp_path):
    a = make_run(tmp_path / "a")
    for args, msg in [((str(a),), "compares two run directories"),
                      ((str(a), str(a), str(a)), "is a third"),
                      ((str(a), str(a), "--stage", "sass"),
                       "'sass' is not one of ttgir, ttir, llir, ptx, cubin"),
                      ((str(a), str(a), "--color", "sometimes"),
                       "'sometimes' is not one of auto, always, never"),
                      ((str(a), str(a), "--op"), "needs a value"),
                      ((str(a), str(a), "--format", "json"), "--format and --wide are for --stat"),
                      ((str(a), str(a), "--bogus"), "unknown option")]:
        r = zlb.cmd("ir", "diff", *args)
        assert r.rc == 2, (args, r)
        assert msg in r.err, (args, r)
        # one error line, one hint, the same prefix
        assert r.err.splitlines()[0].startswith("zlb ir diff: ") and len(r.err.splitlines()) == 2
    r = zlb.cmd("ir", "diff", str(a), str(a), env={"FLAGGEMS_PERF_COLOR": "sometimes"})
    assert r.rc == 2 and "FLAGGEMS_PERF_COLOR=sometimes (the default of --color)" in r.err, r


def test_diff_never_uses_a_shell(zlb, tmp_path):
    """Paths with shell syntax reach diff(1) as plain arguments."""
    evil = tmp_path / "x; touch PWNED; $(touch PWNED2)"
    a = make_run(evil / "a")
    b = make_run(evil / "b", body="y\n")
    r = zlb.cmd("ir", "diff", str(a), str(b), cwd=str(tmp_path))
    assert r.rc == 1, r
    assert "+y" in r.out
    assert not (tmp_path / "PWNED").exists() and not (tmp_path / "PWNED2").exists()


# ---- fingerprint ---------------------------------------------------------------------------

FP_LINE = re.compile(r"^(\S+)\t([0-9a-f]{16})\t(\d+)$")


def fingerprints(out):
    return [FP_LINE.match(l).groups() for l in out.splitlines()]


def test_fingerprint_stable_and_sensitive(zlb, tmp_path):
    a = make_run(tmp_path / "a")
    b = make_run(tmp_path / "b")
    c = make_run(tmp_path / "c", body="z")
    r = zlb.cmd("ir", "fingerprint", str(a), str(b), str(c))
    assert r.rc == 0, r
    (oa, fa, na), (ob, fb, nb), (oc, fc, nc) = fingerprints(r.out)
    assert oa == ob == oc == "softmax"
    assert na == nb == nc == "30"
    assert fa == fb and fa != fc
    # Laid out or on the fly: the same fingerprint; and again the same.
    assert zlb.cmd("ir", "layout", str(a)).rc == 0
    again = zlb.cmd("ir", "fingerprint", str(a))
    assert fingerprints(again.out)[0][1] == fa
    # A file renamed inside the tree changes it; index.tsv does not count.
    tree = a / "ttgir" / "1024x1024" / KERNEL
    (tree / "w4s3__fp16.ptx").rename(tree / "w4s3__fp16.ptx2")
    (a / "ttgir" / "index.tsv").write_text("shape\tkernel\n")
    assert fingerprints(zlb.cmd("ir", "fingerprint", str(a)).out)[0][1] != fa
    (tree / "w4s3__fp16.ptx2").rename(tree / "w4s3__fp16.ptx")
    assert fingerprints(zlb.cmd("ir", "fingerprint", str(a)).out)[0][1] == fa


def test_fingerprint_batch(zlb, tmp_path):
    batch = tmp_path / "batch_1"
    make_run(batch / "main" / "softmax", op="softmax")
    make_run(batch / "main" / "mm", op="mm", dtypes=("bf16",))
    make_run(batch / "vllm" / "fused_moe", op="fused_moe", dtypes=("fp16",), shapes=((8, 8),))
    (batch / "ops_status.csv").write_text("op,status\n")
    r = zlb.cmd("ir", "fingerprint", str(batch))
    assert r.rc == 0, r
    got = fingerprints(r.out)
    assert [(op, n) for op, _, n in got] == [("mm", "10"), ("softmax", "30"), ("fused_moe", "5")]


def test_fingerprint_no_ir(zlb, tmp_path):
    a = make_run(tmp_path / "a")
    n = no_ir_run(tmp_path / "n", op="layer_norm")
    r = zlb.cmd("ir", "fingerprint", str(a), str(n))
    assert r.rc == 8, r
    lines = r.out.splitlines()
    assert FP_LINE.match(lines[0])
    assert lines[1].startswith("layer_norm\t-\t0\tno IR captured")
    r = zlb.cmd("ir", "fingerprint", str(tmp_path / "nowhere"))
    assert r.rc == 8 and "not a directory" in r.out, r
    (tmp_path / "plain").mkdir()
    r = zlb.cmd("ir", "fingerprint", str(tmp_path / "plain"))
    assert r.rc == 8 and "not a run directory" in r.out, r
    r = zlb.cmd("ir", "fingerprint")
    assert r.rc == 2, r


# ---- help ---------------------------------------------------------------------------------------

def test_help(zlb):
    for args in (("help", "ir"), ("ir", "--help")):
        r = zlb.cmd(*args)
        assert r.rc == 0, (args, r)
        assert "usage: zlb ir layout RUN" in r.out
        assert "zlb ir fingerprint RUN [RUN...]" in r.out
        assert re.search(r"^  9 +\(diff\) the runs measured different operators", r.out, re.M)
    # a sub-command's help is its own
    for args in (("help", "ir", "diff"), ("ir", "diff", "--help"), ("ir", "diff", "a", "-h")):
        r = zlb.cmd(*args)
        assert r.rc == 0, (args, r)
        assert r.out.startswith("usage: zlb ir diff RUN_A RUN_B"), r
        assert "zlb ir layout" not in r.out and "fingerprint" not in r.out
        assert "--stat" in r.out and "--format FORMAT" in r.out
        assert re.search(r"^  9 +the runs measured different operators", r.out, re.M)
    r = zlb.cmd("ir", "fingerprint", "--help")
    assert r.rc == 0 and r.out.startswith("usage: zlb ir fingerprint RUN [RUN...]"), r
    assert "zlb ir diff" not in r.out
    r = zlb.cmd("ir", "layout", "-V")
    assert r.rc == 0 and r.out.startswith("zlb "), r
    r = zlb.cmd("help")
    assert re.search(r"^  ir +lay out, diff and fingerprint", r.out, re.M)
    r = zlb.cmd("ir")
    assert r.rc == 2 and "zlb ir: which one? zlb ir layout|diff|fingerprint" in r.err
    r = zlb.cmd("ir", "frob")
    assert r.rc == 2 and "'frob' is not an ir command" in r.err


# ---- runs are data: nothing outside them is read (issue 16 row 6) -----------------

def plant_secret(tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "shadow.ttgir").write_text("root:SECRET-HASH:19000:0:99999:7:::\n")
    return secret


def test_diff_refuses_an_index_naming_files_outside_the_run(zlb, tmp_path):
    plant_secret(tmp_path)
    a = make_run(tmp_path / "a")
    b = make_run(tmp_path / "b", body="  // B\n")
    for run in (a, b):
        assert zlb.cmd("ir", "layout", str(run)).rc == 0
    index = b / "ttgir" / "index.tsv"
    lines = index.read_text().splitlines()
    cols = lines[1].split("\t")
    files = lines[0].split("\t").index("files")
    cols[files] = "../../secret/shadow.ttgir"
    lines[1] = "\t".join(cols)
    index.write_text("\n".join(lines) + "\n")
    r = zlb.cmd("ir", "diff", str(a), str(b))
    assert r.rc == 8, r
    assert "SECRET" not in r.out + r.err
    assert "index.tsv:2 names the file '../../secret/shadow.ttgir'" in r.err, r
    assert "zlb ir layout" in r.err
    r = zlb.cmd("ir", "diff", str(a), str(b), "--stat")
    assert r.rc == 8 and "SECRET" not in r.out + r.err, r


def test_diff_follows_no_link_in_a_laid_out_tree(zlb, tmp_path):
    secret = plant_secret(tmp_path)
    a = make_run(tmp_path / "a")
    b = make_run(tmp_path / "b", body="  // B\n")
    for run in (a, b):
        assert zlb.cmd("ir", "layout", str(run)).rc == 0
    target = b / "ttgir" / "1024x1024" / KERNEL / "w4s3__fp16.ttgir"
    target.unlink()
    target.symlink_to(secret / "shadow.ttgir")
    for stat in ([], ["--stat"], ["--stat", "--format", "json"]):
        r = zlb.cmd("ir", "diff", str(a), str(b), *stat)
        assert r.rc == 8, (stat, r)
        assert "SECRET" not in r.out + r.err
        assert "is a symbolic link" in r.err, (stat, r)


def test_layout_places_no_linked_staged_file(zlb, tmp_path):
    secret = plant_secret(tmp_path)
    a = make_run(tmp_path / "a")
    b = make_run(tmp_path / "b")
    # A staged stage file that is a link, and a hash directory that is one.
    staged = sorted((b / "ir" / "files").iterdir())
    (staged[0] / f"{KERNEL}.ttgir").unlink()
    (staged[0] / f"{KERNEL}.ttgir").symlink_to(secret / "shadow.ttgir")
    for f in staged[1].iterdir():
        f.unlink()
    staged[1].rmdir()
    staged[1].symlink_to(secret)
    r = zlb.cmd("ir", "layout", str(b))
    assert r.rc == 0, r
    # 1 linked file + 5 under the linked directory, each placed under both shapes
    assert "note: 12 staged files were refused (a symbolic link" in r.out, r
    for p in (b / "ttgir").rglob("*"):
        assert not p.is_symlink(), p
        if p.is_file():
            assert "SECRET" not in p.read_text(errors="replace"), p
    r = zlb.cmd("ir", "diff", str(a), str(b))
    assert r.rc == 1, r
    assert "SECRET" not in r.out + r.err
    assert "only B has this file" not in r.out and "only A has this file" in r.out, r
