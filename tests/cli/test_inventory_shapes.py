"""zlb inventory --build-shapes / --migrate-shapes / --check-shapes: suite
shape sets against an inventory. Built from the fake FlagGems suite (its
core_shapes.yaml and static scan), and the shipped ops/shapes_single.yaml
and ops/shapes_multi.yaml checked against the shipped ops/inventory_main.csv
(every key resolves, no operator falls through) without FlagGems."""
import csv
import shutil
import textwrap

import yaml

from conftest import FAKE_MAIN, REPO

OPS = REPO / "ops"


def inv(zlb, *args):
    return zlb.cmd("inventory", *map(str, args))


def fake_inventory(zlb, tmp_path):
    ops = tmp_path / "ops"
    r = inv(zlb, "--flaggems-dir", FAKE_MAIN, "--no-verify", "--out", ops)
    assert r.rc == 0, r
    return ops


def test_build_single_and_multi_from_the_fake_suite(zlb, tmp_path):
    ops = fake_inventory(zlb, tmp_path)
    single, multi = ops / "shapes_single.yaml", ops / "shapes_multi.yaml"
    r = inv(zlb, "--flaggems-dir", FAKE_MAIN, "--out", ops, "--build-shapes", "single",
            "--shapes-out", single)
    assert r.rc == 0, r
    assert "0 fall through to FlagGems' DEFAULT_SHAPES" in r.out
    s = yaml.safe_load(single.read_text())
    core = yaml.safe_load((FAKE_MAIN / "benchmark" / "core_shapes.yaml").read_text())
    # One shape per key: the middle one of core_shapes' list.
    assert all(len(v["shapes"]) == 1 for v in s.values())
    assert s["BlasBenchmark"]["shapes"] == [core["BlasBenchmark"]["shapes"][0]]
    assert s["Benchmark"]["shapes"] == [core["Benchmark"]["shapes"][2]]
    # Every operator is a key of its own, its shape from the class core_shapes reaches it
    # by, with that class's shape_desc: mm gets the BLAS layout, not a 1-D default.
    assert s["mm"] == {"shapes": [[2, 384, 384, 384]], "shape_desc": "B, M, N, K"}
    assert s["add"]["shapes"] == [core["add"]["shapes"][0]]
    # A class that hard-codes its shapes gets no key from a base class above it.
    assert "avg_pool2d" not in s and "upsample_bilinear2d_aa_backward" not in s
    # A key naming nothing the inventory knows is left out, kept aside.
    assert "mm_self_transpose" not in s
    aside = yaml.safe_load((ops / "shapes_single.unmatched.yaml").read_text())
    assert aside == {"mm_self_transpose": core["mm_self_transpose"]}
    # The file says how to rebuild it.
    head = single.read_text().splitlines()[:10]
    assert any("--build-shapes single --shapes-out" in line for line in head)

    r = inv(zlb, "--flaggems-dir", FAKE_MAIN, "--out", ops, "--build-shapes", "multi",
            "--shapes-out", multi)
    assert r.rc == 0, r
    m = yaml.safe_load(multi.read_text())
    assert {k: m[k] for k in m} == {k: core[k] for k in m}
    assert set(m) == set(core) - {"mm_self_transpose"}

    for f in (single, multi):
        r = inv(zlb, "--out", ops, "--check-shapes", f)
        assert r.rc == 0, r
        assert "0 unmatched" in r.out and "0 fall through" in r.out


def test_a_rebuild_keeps_what_was_pinned(zlb, tmp_path):
    # On the H200 one_hot failed on the middle shape of its class ([4096, 4096]):
    # its input_fn drops every input over 1e8 output elements. A pinned entry
    # is how the asset keeps a shape the builder cannot choose.
    ops = fake_inventory(zlb, tmp_path)
    single = ops / "shapes_single.yaml"
    build = ("--flaggems-dir", FAKE_MAIN, "--out", ops, "--build-shapes", "single",
             "--shapes-out", single)
    assert inv(zlb, *build).rc == 0
    s = yaml.safe_load(single.read_text())
    s["add"] = {"shapes": [[64, 64]], "pinned": "the middle shape gives no input"}
    s["layer_norm"]["pinned"] = "kept by hand"
    s["NoSuchBenchmark"] = {"shapes": [[1]], "pinned": "stale"}
    softmax_before = s["softmax"]
    s["softmax"] = {"shapes": [[7]]}                 # not pinned: rebuilt
    single.write_text(yaml.safe_dump(s))
    r = inv(zlb, *build)
    assert r.rc == 0, r
    t = yaml.safe_load(single.read_text())
    assert t["add"] == {"shapes": [[64, 64]], "pinned": "the middle shape gives no input"}
    assert t["layer_norm"] == s["layer_norm"]
    assert t["softmax"] == softmax_before
    assert "NoSuchBenchmark" not in t
    assert "2 pinned entries kept from the file rebuilt" in r.out, r.out
    assert "pinned: add: the middle shape gives no input" in r.out
    assert "NoSuchBenchmark: pinned (stale), but names no op_name" in r.out
    # A file that does not read is not rebuilt over: its pins would be lost.
    single.write_text("add: [unclosed\n")
    r = inv(zlb, *build)
    assert r.rc == 3 and "pinned entries cannot be kept" in r.err, r
    assert single.read_text() == "add: [unclosed\n"


def test_check_catches_a_stale_key_and_a_fall_through(zlb, tmp_path, shapes):
    ops = fake_inventory(zlb, tmp_path)
    # No Benchmark, no GenericBenchmark2DOnly key: the 2-D family falls through.
    f = shapes(textwrap.dedent("""\
        softmax: {shapes: [[64, 64]]}
        mm: {shapes: [[2, 64, 64, 64]]}
        renamed_upstream: {shapes: [[8]]}
    """))
    r = inv(zlb, "--out", ops, "--check-shapes", f)
    assert r.rc == 1, r
    assert "unmatched: renamed_upstream: names no op_name or Benchmark class" in r.out
    assert ("falls through: main:sort (op_name sort, chain GenericBenchmark2DOnly>"
            "GenericBenchmark>Benchmark)") in r.out
    assert "check failed" in r.out


def write_inventory(ops, rows):
    ops.mkdir(parents=True, exist_ok=True)
    cols = ["repo", "op", "op_file", "test", "node", "collected", "cases", "skip", "skipif",
            "op_name", "bench_class", "source", "note", "hardcodes"]
    with open(ops / "inventory_main.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in cols})


def test_migrate_moves_renamed_keys_and_keeps_the_rest_aside(zlb, tmp_path, shapes):
    ops = tmp_path / "ops"
    write_inventory(ops, [
        {"repo": "main", "op": "perf_adaptive_avg_pool1d", "op_file": "adaptive_avg_pool1d",
         "test": "test_perf_adaptive_avg_pool1d", "collected": "yes",
         "op_name": "adaptive_avg_pool1d",
         "bench_class": "GenericBenchmark>Benchmark"},
        {"repo": "main", "op": "add", "op_file": "add", "test": "test_add",
         "collected": "yes", "op_name": "add",
         "bench_class": "BinaryPointwiseBenchmark>Benchmark"},
        {"repo": "main", "op": "mm", "op_file": "mm", "test": "test_mm", "collected": "yes",
         "op_name": "mm", "bench_class": "BlasBenchmark>Benchmark"},
    ])
    f = shapes(textwrap.dedent("""\
        base: &b
          shapes: [[1024]]
        test_add:
          <<: *b
        perf_adaptive_avg_pool1d:
          shapes: [[4, 8, 16]]
          shape_desc: "N, C, L"
        BlasBenchmark:
          shapes: [[2, 384, 384, 384]]
        Benchmark:
          shapes: [[64, 64]]
        gone_upstream:
          shapes: [[3]]
    """), name="old.yaml")
    out = tmp_path / "new.yaml"
    r = inv(zlb, "--out", ops, "--migrate-shapes", f, "--shapes-out", out)
    assert r.rc == 0, r
    assert "moved: test_add -> add (the old harness's test name)" in r.out
    assert ("moved: perf_adaptive_avg_pool1d -> adaptive_avg_pool1d "
            "(test_perf_adaptive_avg_pool1d's Benchmark has op_name adaptive_avg_pool1d)"
            ) in r.out
    assert "2 unmatched -> %s" % (tmp_path / "new.unmatched.yaml") in r.out
    new = yaml.safe_load(out.read_text())
    # Entries are carried over as they were, merges included.
    assert new == {"add": {"shapes": [[1024]]},
                   "adaptive_avg_pool1d": {"shapes": [[4, 8, 16]], "shape_desc": "N, C, L"},
                   "BlasBenchmark": {"shapes": [[2, 384, 384, 384]]},
                   "Benchmark": {"shapes": [[64, 64]]}}
    aside = yaml.safe_load((tmp_path / "new.unmatched.yaml").read_text())
    assert set(aside) == {"base", "gone_upstream"}
    assert "0 fall through" in r.out
    # In place: the file may be its own output; a clean run removes the stale aside file.
    shutil.copy(out, f)
    r = inv(zlb, "--out", ops, "--migrate-shapes", f, "--shapes-out", f)
    assert r.rc == 0 and "0 moved; 0 unmatched" in r.out, r
    assert not (tmp_path / "old.unmatched.yaml").exists()


def test_shape_modes_bad_input(zlb, tmp_path, shapes):
    f = shapes("softmax: {shapes: [[8]]}\n")
    r = inv(zlb, "--out", tmp_path / "none", "--check-shapes", f)
    assert r.rc == 3 and "zlb inventory --out" in r.err, r
    r = inv(zlb, "--out", tmp_path, "--migrate-shapes", f)
    assert r.rc == 2 and "need --shapes-out FILE" in r.err
    r = inv(zlb, "--out", tmp_path, "--check-shapes", f, "--shapes-out", f)
    assert r.rc == 2 and "--check-shapes writes nothing" in r.err
    r = inv(zlb, "--out", tmp_path, "--check-shapes", f, "--migrate-shapes", f,
            "--shapes-out", f)
    assert r.rc == 2 and "one job each" in r.err
    r = inv(zlb, "--build-shapes", "several", "--shapes-out", f)
    assert r.rc == 2 and "'several' is not one of single, multi" in r.err


def test_shipped_shape_sets_resolve_against_the_shipped_inventory(zlb):
    """ops/shapes_{single,multi}.yaml were built from a real FlagGems checkout
    (their header says which and how to rebuild them); every key must name an
    op_name or class of ops/inventory_main.csv and no operator may fall
    through to FlagGems' DEFAULT_SHAPES."""
    for name in ("shapes_single.yaml", "shapes_multi.yaml"):
        f = OPS / name
        r = inv(zlb, "--out", OPS, "--check-shapes", f)
        assert r.rc == 0, r
        assert "0 unmatched" in r.out and "0 fall through" in r.out, r.out
        head = f.read_text().splitlines()[:12]
        assert any("zlb inventory --flaggems-dir FLAGGEMS --out ops --build-shapes" in line
                   for line in head), head
    single = yaml.safe_load((OPS / "shapes_single.yaml").read_text())
    assert len(single) > 500
    assert all(len(v["shapes"]) == 1 for v in single.values())
    # The BLAS family keeps its 4-number layout.
    assert len(single["BlasBenchmark"]["shapes"][0]) == 4
