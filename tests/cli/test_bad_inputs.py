"""A catalogue of bad inputs thrown at every command that reads outside input
(issue 16: "bad inputs tried / handled / misbehaved").

Each case is a command line over files made bad on purpose: tampered run and
batch directories (cut, binary, deeply nested, wrong types, links, FIFOs,
directories where files belong), shape files PyYAML reads otherwise, op specs,
ops files, dismiss lists, option values. A case is handled when zlb ends within
the time limit with a documented exit code (never a signal, nor 2-10 without a
sentence on stderr) and leaves its inputs byte for byte as they were, reads
nothing a planted link or path points at (a canary file of the test's own,
never a system file: a zlb with the bug would write through the link), and,
for a shape file,
refuses it at preflight (each would fail in FlagGems, or hang). Anything else
is a misbehaviour, and the test lists them. The counts are printed
(`pytest -s`) for the figures of the issue's closing note.
"""
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FAKE_MAIN, REPO
from test_compare import make_run, base_rows
from test_ir import make_run as make_ir_run

DOCUMENTED = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
# What every planted link points at: a file of the test's own (set in the test).
CANARY_TEXT = "ZLB-CANARY-7f3a9c: read through a link or a path from data\n"
CANARY = None
SAMPLE_RUN = sorted((REPO / "examples" / "ab" / "mm_dead_switch" / "A" / "r1").iterdir())[0]


def tree_digest(root):
    """Every file and link below root, with its bytes (a FIFO by name only)."""
    h = hashlib.sha256()
    for p in sorted(Path(root).rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_symlink():
            h.update(b"->" + os.readlink(p).encode())
        elif p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


# ---- the cases: (name, command args, inputs to keep unchanged) ---------------------

GARBAGE = {
    "empty": b"",
    "binary": bytes(range(256)) * 4,
    "nul": b'{"kind": "row", "op": "soft\0max"}\n',
    "cut": b'{"kind": "row", "op": "softmax", "gems": {"median_ms": 0.1, "samples_ms": [1.0, 2',
    "deep": b"[" * 5000 + b"]" * 5000 + b"\n",
    "deep_object": b'{"a":' * 3000 + b"1" + b"}" * 3000 + b"\n",
    "not_object": b"[1, 2, 3]\n\"text\"\n42\n",
    "wrong_types": b'{"kind": "row", "op": 7, "dtype": [], "shape_detail": {}, "status": 1, '
                   b'"gems": {"median_ms": "x", "samples_ms": {"a": 1}}, "torch": []}\n',
    "nan": b'{"kind": "row", "op": "softmax", "gems": {"median_ms": NaN, "samples_ms": '
           b'[Infinity, -Infinity]}}\n',
    "huge_numbers": b'{"kind": "row", "op": "softmax", "gems": {"median_ms": 1e999, '
                    b'"samples_ms": [1e308, -1e308, 123456789012345678901234567890]}}\n',
    "long_line": b'{"kind": "row", "op": "' + b"x" * 200000 + b'"}\n',
    "crlf": b'{"kind": "row", "op": "softmax"}\r\n\r\n',
    "utf8_bad": b'{"kind": "row", "op": "\xff\xfe"}\n',
    "duplicate_keys": b'{"kind": "row", "op": "a", "op": "b", "op": "c"}\n',
}


def plant(path, kind, data=b""):
    """Make path a bad kind of thing: 'file' with data, 'dir', 'fifo', 'link' (to the canary)."""
    path = Path(path)
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    if kind == "file":
        path.write_bytes(data)
    elif kind == "dir":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "link":
        path.symlink_to(CANARY)


def compare_cases(tmp):
    rows = base_rows()
    cases = []
    for target in ("results.jsonl", "run_identity.json", "events.jsonl"):
        kinds = [("file", k, v) for k, v in GARBAGE.items()] + \
                [(k, k, b"") for k in ("dir", "fifo", "link")]
        for kind, label, data in kinds:
            d = tmp / f"cmp-{target}-{label}"
            a = make_run(d / "A", rows, 1, mode="record")
            b = make_run(d / "B", rows, 2, mode="replay", replay_from=a)
            plant(b / target, kind, data)
            cases.append((f"compare {target} {label}",
                          ["compare", str(a), str(b), "--out", str(d / "out"), "--bootstrap", "0"],
                          [d / "A", d / "B"]))
    return cases


def ir_cases(tmp):
    cases = []
    # index.tsv sits in <tmp>/ir-index-*/B/ttgir/: four levels up is the test's directory.
    bad_index = {
        "outside": "shape\tkernel\tvariant\tdtype\tlaunches\thash\tsweep_loser\tfiles\n"
                   "1x1\tk\tw\tfp16\t1\th\tno\t../../../../canary.ttgir\n",
        "absolute": "shape\tkernel\tvariant\tdtype\tlaunches\thash\tsweep_loser\tfiles\n"
                    f"1x1\tk\tw\tfp16\t1\th\tno\t{CANARY}.ttgir\n",
        "no_header": "1x1\tk\tw\tfp16\t1\th\tno\ta.ttgir\n",
        "missing_file": "shape\tkernel\tvariant\tdtype\tlaunches\thash\tsweep_loser\tfiles\n"
                        "1024x1024\tk\tw\tfp16\t1\th\tno\tnope/x.ttgir\n",
        "escapes": "shape\tkernel\tvariant\tdtype\tlaunches\thash\tsweep_loser\tfiles\n"
                   "a\\tb\\\\\\n\tk\\\tw\tfp16\tx\th\tno\t\\\\..\\\\x.ttgir\n",
        "binary": bytes(range(256)).decode("latin-1"),
    }
    for label, text in bad_index.items():
        d = tmp / f"ir-index-{label}"
        a = make_ir_run(d / "A")
        b = make_ir_run(d / "B", body="  // B\n")
        subprocess.run([os.environ["ZLB_BIN"], "ir", "layout", str(a)], capture_output=True)
        subprocess.run([os.environ["ZLB_BIN"], "ir", "layout", str(b)], capture_output=True)
        (b / "ttgir" / "index.tsv").write_bytes(text.encode("latin-1"))
        for cmd in (["ir", "diff", str(a), str(b)], ["ir", "fingerprint", str(b)]):
            cases.append((f"{' '.join(cmd[:2])} index {label}", cmd, [d / "A", d / "B"]))
    for target in ("ir/compiles.jsonl", "ir/staged.jsonl", "results.jsonl"):
        for label, data in GARBAGE.items():
            d = tmp / f"ir-{target.replace('/', '_')}-{label}"
            b = make_ir_run(d / "B")
            plant(b / target, "file", data)
            cases.append((f"ir diff {target} {label}",
                          ["ir", "diff", str(make_ir_run(d / "A")), str(b)], [d / "A", d / "B"]))
    for label, kind in (("ttgir_link", "link"), ("ir_link", "link"), ("ttgir_file", "file")):
        d = tmp / f"ir-{label}"
        b = make_ir_run(d / "B")
        subprocess.run([os.environ["ZLB_BIN"], "ir", "layout", str(b)], capture_output=True)
        plant(b / ("ttgir" if label.startswith("ttgir") else "ir"), kind, b"x")
        cases.append((f"ir diff {label}", ["ir", "diff", str(make_ir_run(d / "A")), str(b)],
                      [d / "A", d / "B"]))
        cases.append((f"ir fingerprint {label}", ["ir", "fingerprint", str(b)], [d / "B"]))
    return cases


def summary_cases(tmp):
    cases = []
    src = REPO / "tests" / "data" / "summary" / "batch"
    for target in ("ops_status.csv", "batch.json", "main/softmax/results.jsonl",
                   "main/softmax/run_identity.json"):
        for label, data in list(GARBAGE.items()) + [("csv_quotes", b'repo,op\n"a,"b\n""\n')]:
            d = tmp / f"sum-{target.replace('/', '_')}-{label}"
            shutil.copytree(src, d / "batch")
            plant(d / "batch" / target, "file", data)
            cases.append((f"summary {target} {label}",
                          ["summary", str(d / "batch"), "--out", str(d / "s.csv")], [d / "batch"]))
    return cases


SHAPES = {
    "dup": "softmax:\n  shapes: [[1]]\nsoftmax:\n  shapes: [[2]]\n",
    "docs": "softmax:\n  shapes: [[1]]\n---\nmm: {}\n",
    "python_tag": "softmax:\n  shapes: !!python/tuple [[1]]\n",
    "object_tag": "softmax:\n  shapes: [[!!python/object/apply:os.system [echo]]]\n",
    "local_tag": "softmax: !x {shapes: [[1]]}\n",
    "words": "softmax:\n  shapes: [[abc, 1e400]]\n",
    "zero": "softmax:\n  shapes: [[0, 0]]\n",
    "negative": "softmax:\n  shapes: [[-1, 4]]\n",
    "fraction": "softmax:\n  shapes: [[1.5]]\n",
    "null": "softmax:\n  shapes: [[~]]\n",
    "quoted": "softmax:\n  shapes: [['1024']]\n",
    "huge": "softmax:\n  shapes: [[99999999999999999999999]]\n",
    "merge_bomb": "m0: &m0 {x: 1}\n" + "".join(
        "m%d: &m%d\n  <<: [%s]\n" % (k, k, ", ".join(["*m%d" % (k - 1)] * 20))
        for k in range(1, 9)) + "softmax:\n  <<: *m8\n  shapes: [[1]]\n",
    "laughs": "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        "l%d: &l%d [%s]\n" % (i, i, ", ".join(["*l%d" % (i - 1)] * 10)) for i in range(1, 10)) +
        "softmax:\n  shapes: [[1]]\n",
    "deep_flow": "softmax: " + "[" * 100000 + "]" * 100000 + "\n",
    "deep_block": "".join(" " * i + "k%d:\n" % i for i in range(2000)),
    "alias_chain": "a0: &a0 [1]\n" + "".join("a%d: &a%d [*a%d]\n" % (i, i, i - 1)
                                              for i in range(1, 100)),
    "recursive": "a: &a [*a]\nsoftmax: {shapes: [[1]]}\n",
    "complex_key": "? [a, b]\n: x\nsoftmax: {shapes: [[1]]}\n",
    "not_yaml": "softmax: [1, 2\n",
    "tab": "softmax:\n\tshapes: [[1]]\n",
    "list_top": "- softmax\n",
    "scalar_top": "softmax\n",
    "empty": "",
    "comment_only": "# nothing\n",
    "no_shapes": "softmax: {shape_desc: x}\n",
    "shapes_scalar": "softmax: {shapes: 7}\n",
    "shapes_empty": "softmax: {shapes: []}\n",
    "shape_empty": "softmax: {shapes: [[]]}\n",
    # upstream nests shapes ([[32, 384, 128], 1, false]); a mapping or ten levels are not shapes
    "nested_map": "softmax: {shapes: [[1, [{a: 2}]]]}\n",
    "nested_deep": "softmax: {shapes: [[1, " + "[" * 10 + "2" + "]" * 10 + "]]}\n",
    "binary": "\x00\x01\x02softmax",
    "bom_garbage": "\ufeff\ufeff: x\n",
    "anchor_undefined": "softmax: {shapes: [*nope]}\n",
}


def shape_cases(tmp):
    cases = []
    for label, text in SHAPES.items():
        p = tmp / f"shape-{label}.yaml"
        p.write_bytes(text.encode("utf-8", "surrogatepass"))
        cases.append((f"run --shapes {label}", ["run", "softmax", "--shapes", str(p)], [p]))
    for kind in ("dir", "fifo"):
        p = tmp / f"shape-{kind}.yaml"
        plant(p, kind)
        cases.append((f"run --shapes {kind}", ["run", "softmax", "--shapes", str(p)], []))
    return cases


SPECS = ["", ":", "x:softmax", "soft max", "../x", "a/b", "op@", "op@../x", "op@/abs",
         "vllm:", "a" * 120 + "@" + "b" * 100, "a" * 121, "op@" + "b" * 121, "op@a/b/c",
         "main:op@-x", "op\n", "op\x01", "opé", "op@a b", "main:main:op"]


def batch_cases(tmp):
    cases = []
    for i, spec in enumerate(SPECS):
        cases.append((f"batch --ops {spec[:20]!r}",
                      ["batch", "--batch-dir", str(tmp / f"b-spec{i}"), "--ops", spec], []))
    ops_files = {"two_words": "softmax add\n", "binary": "\x00\x01\xff\n", "bad_spec": "../x\n",
                 "long": "a" * 300 + "\n", "deep_comment": "#" * 10000 + "\n" + "x y\n"}
    for label, text in ops_files.items():
        p = tmp / f"ops-{label}.txt"
        p.write_bytes(text.encode("latin-1"))
        cases.append((f"batch --ops-file {label}",
                      ["batch", "--batch-dir", str(tmp / f"b-ops-{label}"), "--ops-file", str(p)],
                      [p]))
    for kind in ("dir", "fifo"):
        p = tmp / f"ops-{kind}.txt"
        plant(p, kind)
        cases.append((f"batch --ops-file {kind}",
                      ["batch", "--batch-dir", str(tmp / f"b-ops-{kind}"), "--ops-file", str(p)], []))
    dismiss = {"bad_spec": "../x reason\n", "no_reason": "softmax\n", "binary": "\xff\x00 x\n"}
    for label, text in dismiss.items():
        ops = tmp / f"opsdir-{label}"
        ops.mkdir()
        (ops / "inventory_main.csv").write_text(
            "repo,op,op_file,test,node,collected,cases,skip,skipif,op_name,bench_class,"
            "source,note\nmain,softmax,softmax,test_softmax,n,yes,1,,,softmax,,scan,\n")
        (ops / "dismiss.txt").write_bytes(text.encode("latin-1"))
        cases.append((f"batch --all dismiss {label}",
                      ["batch", "--batch-dir", str(tmp / f"b-dis-{label}"), "--all", "--ops-dir",
                       str(ops)], [ops]))
    for label, data in list(GARBAGE.items())[:8]:
        ops = tmp / f"inv-{label}"
        ops.mkdir()
        (ops / "inventory_main.csv").write_bytes(data)
        cases.append((f"batch --all inventory {label}",
                      ["batch", "--batch-dir", str(tmp / f"b-inv-{label}"), "--all", "--ops-dir",
                       str(ops)], [ops]))
    # Resuming a batch directory whose state files were damaged.
    for target in ("batch.json", "ops_status.csv", ".lock"):
        for label, kind, data in [("garbage", "file", GARBAGE["binary"]), ("link", "link", b""),
                                  ("dir", "dir", b""), ("deep", "file", GARBAGE["deep_object"])]:
            d = tmp / f"b-res-{target}-{label}"
            d.mkdir()
            (d / "batch.json").write_text(json.dumps({"schema_version": 2, "resume": {
                "batch": {}, "run": {}, "ops": ["softmax"], "environment": {}}}))
            plant(d / target, kind, data)
            cases.append((f"batch --resume {target} {label}",
                          ["batch", "--batch-dir", str(d), "--resume"], []))
    afile = tmp / "afile"
    afile.write_text("x")
    cases.append(("batch --batch-dir afile", ["batch", "--batch-dir", str(afile), "--ops", "a"],
                  [afile]))
    return cases


OPTIONS = [
    ["run", "--level", "fast"], ["run", "--dtypes", "float8x"], ["run", "--warmup", "-1"],
    ["run", "--warmup", "1e999"], ["run", "--min-samples", "0x"], ["run", "--noise-target", "nan"],
    ["run", "--device", "-1"], ["run", "--device", "99999999999999999999"],
    ["run", "--backend", "tpu"], ["run", "--timer", "sundial"], ["run", "a/b"], ["run", ".."],
    ["run", "--extra-plugins", "a;b"], ["run", "--op-file", "../x"], ["run", "--color", "\x01"],
    ["run", "--replay-from", "/nonexistent"], ["run", "--test-node", "x::y::z"],
    ["batch", "--devices", "0,0"], ["batch", "--devices", "a"], ["batch", "--op-timeout", "-5"],
    ["batch", "--grace", "nan"], ["batch", "--retries", "99999"], ["batch", "--executor", "nope"],
    ["compare"], ["compare", "--threshold", "-1", "a", "b"], ["compare", "--fdr", "2", "a", "b"],
    ["compare", "--bootstrap", "1e9", "a", "b"], ["ir"], ["ir", "diff", "a"],
    ["ir", "diff", "/", "/"], ["summary"], ["summary", "/nonexistent"], ["inventory", "--out"],
    ["frobnicate"], ["run", "--bogus"], ["ab", "softmax", "--axis", "X"],
    ["ab", "softmax", "--axis", "X=1,2,3"], ["ab", "softmax", "--rounds", "0"],
]


def option_cases(tmp):
    return [(f"options {' '.join(o)[:40]!r}", o, []) for o in OPTIONS]


def checkout_cases(tmp):
    """Benchmark sources the static scan reads: linked folders, garbage files."""
    fg = tmp / "FlagGems"
    shutil.copytree(FAKE_MAIN, fg, ignore=shutil.ignore_patterns("__pycache__"))
    (fg / "benchmark" / "loop").symlink_to(".")
    (fg / "benchmark" / "test_garbage.py").write_bytes(bytes(range(256)) * 64)
    (fg / "benchmark" / "test_deep.py").write_text("def test_x():\n" + "  (" * 5000 + "\n")
    (fg / "benchmark" / "test_fooBenchmark.py").write_text("def test_fooBenchmark():\n    pass\n")
    (fg / "benchmark" / "test_link.py").symlink_to(CANARY)
    return [("inventory odd checkout", ["inventory", "--no-verify", "--flaggems-dir", str(fg),
                                        "--out", str(tmp / "inv-out")], [])]


def test_every_bad_input_is_handled(zlb, tmp_path, capsys):
    global CANARY
    os.environ.setdefault("ZLB_BIN", zlb.bin)
    CANARY = tmp_path / "canary"
    CANARY.write_text(CANARY_TEXT)
    (tmp_path / "canary.ttgir").write_text(CANARY_TEXT)
    cases = []
    for make in (compare_cases, ir_cases, summary_cases, shape_cases, batch_cases,
                 option_cases, checkout_cases):
        d = tmp_path / make.__name__
        d.mkdir()
        cases += make(d)
    misbehaved = []
    for name, args, keep in cases:
        before = [tree_digest(k) if Path(k).is_dir() else
                  (Path(k).read_bytes() if Path(k).is_file() else None) for k in keep]
        try:
            r = zlb.cmd(*args, timeout=60)
        except subprocess.TimeoutExpired:
            misbehaved.append((name, "hung past 60 s"))
            continue
        after = [tree_digest(k) if Path(k).is_dir() else
                 (Path(k).read_bytes() if Path(k).is_file() else None) for k in keep]
        if r.rc not in DOCUMENTED:
            misbehaved.append((name, f"rc {r.rc}: {r.err[-300:]}"))
        elif name.startswith("run --shapes") and (r.rc != 3 or "check=shape_file" not in r.err):
            # Every one of them fails in FlagGems or hangs: preflight must say so first.
            misbehaved.append((name, f"passed preflight (rc {r.rc})"))
        elif "ZLB-CANARY" in r.out + r.err:
            # The links and paths planted point at the canary: nothing of it may be read.
            misbehaved.append((name, "read a file outside its input"))
        if CANARY.read_text() != CANARY_TEXT or (tmp_path / "canary.ttgir").read_text() != \
                CANARY_TEXT:
            misbehaved.append((name, "wrote through a planted link"))
            CANARY.write_text(CANARY_TEXT)
            (tmp_path / "canary.ttgir").write_text(CANARY_TEXT)
        elif r.rc not in (0, 1) and not r.err.strip() and f"exit {r.rc}" not in r.out:
            # compare's verdict is its report: "result: nothing to compare ... (exit 8)"
            misbehaved.append((name, f"rc {r.rc} without a sentence"))
        elif "Traceback" in r.err or "BUG:" in r.err:
            misbehaved.append((name, r.err[-300:]))
        elif before != after:
            misbehaved.append((name, "changed its input"))
    with capsys.disabled():
        print(f"\nbad inputs: {len(cases)} tried, {len(cases) - len(misbehaved)} handled, "
              f"{len(misbehaved)} misbehaved")
    assert not misbehaved, "\n".join(f"{n}: {why}" for n, why in misbehaved)
