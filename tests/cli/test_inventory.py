"""`zlb inventory` end to end against the fake checkouts of tests/fake_inventory
(main: flag_gems, vllm: flaggems_vllm), with the real pytest collecting them."""
import csv
import json
import shutil
from pathlib import Path

import pytest

from conftest import REPO

FAKE = REPO / "tests" / "fake_inventory"
MAIN = FAKE / "main"
VLLM = FAKE / "vllm"
REAL = REPO / ".carry" / "FlagGems"

COLUMNS = ["repo", "op", "op_file", "test", "node", "collected", "cases", "skip",
           "skipif", "op_name", "bench_class", "source", "note", "hardcodes"]


def rows(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == COLUMNS
        return list(reader)


def by_node(table):
    return {r["node"]: r for r in table}


def inventory(zlb, *args, **kw):
    return zlb.cmd("inventory", *args, **kw)


def test_help_lists_the_options(zlb):
    res = inventory(zlb, "--help")
    assert res.rc == 0, res
    for opt in ("--flaggems-dir", "--vllm-dir", "--out", "--dismiss", "--python",
                "--no-verify", "--collect-timeout", "FLAGGEMS_VLLM_DIR"):
        assert opt in res.out, opt
    res = zlb.cmd("help")
    assert "inventory" in res.out


def test_both_repos_verified_by_pytest(zlb, tmp_path):
    res = inventory(zlb, "--flaggems-dir", str(MAIN), "--vllm-dir", str(VLLM))
    assert res.rc == 0, res
    ops = tmp_path / "ops"
    main = rows(ops / "inventory_main.csv")
    vllm = rows(ops / "inventory_vllm.csv")

    # Sorted by op_file, then test.
    keys = [(r["op_file"], r["test"]) for r in main]
    assert keys == sorted(keys)
    m = by_node(main)
    assert len(main) == 17
    assert m["benchmark/test_softmax.py::test_softmax"]["collected"] == "yes"
    assert m["benchmark/test_softmax.py::test_softmax_backward"]["op_name"] == "softmax_backward"
    assert (m["benchmark/test_softmax.py::test_softmax"]["bench_class"]
            == "UnaryReductionBenchmark>GenericBenchmark>Benchmark")
    assert m["benchmark/test_params.py::test_mm"]["cases"] == "3"
    assert m["benchmark/test_skips.py::test_isneginf_out"]["skip"] == \
        "No support to non-boolean outputs: issue #2687"
    assert m["benchmark/test_skips.py::test_skip_layernorm"]["skip"] == ""
    assert m["benchmark/test_skips.py::test_skip_layernorm"]["skipif"] == \
        "skipif: never [if False]"
    assert m["benchmark/test_shadowed.py::test_shadowed"]["collected"] == "no"
    broken = m["benchmark/test_broken_import.py::test_broken"]
    assert broken["collected"] == "no"
    assert "zlb_fake_module_that_does_not_exist" in broken["note"]
    cls = m["benchmark/test_params.py::TestMatmul::test_bmm"]
    assert cls["source"] == "collect" and cls["collected"] == "yes"
    assert m["benchmark/test_FLA/test_chunk.py::test_perf_chunk"]["op_file"] == "test_FLA/chunk"
    assert not any("models_benchmark" in r["node"] for r in main)
    assert not any(r["test"] == "test_in_docstring" for r in main)

    v = by_node(vllm)
    assert {r["repo"] for r in vllm} == {"vllm"}
    assert v["benchmark/test_fused_moe.py::test_softmax"]["collected"] == "yes"
    topk = v["benchmark/test_needs_vllm.py::test_topk_softmax"]
    assert topk["collected"] == "no"
    assert topk["skipif"] == "importorskip: zlb_fake_vllm_ops"
    assert topk["note"] == "pytest skipped its module at import"

    meta = json.loads((ops / "inventory.json").read_text())
    assert meta["schema_version"] == 1
    assert meta["created"]
    assert meta["repos"]["main"]["checkout"] == str(MAIN)
    assert meta["repos"]["main"]["package"] == "flag_gems"
    assert meta["repos"]["vllm"]["package"] == "flaggems_vllm"
    assert meta["repos"]["main"]["verified_by"] == "pytest"
    assert meta["repos"]["main"]["counts"] == {
        "files": 10, "functions": 16, "skipped": 3, "collected": 15,
        "not_collected": 2, "unverified": 0, "collect_only": 1, "collect_errors": 1}
    assert meta["repos"]["vllm"]["counts"]["not_collected"] == 1

    lines = res.out.splitlines()
    assert lines[0].startswith("main: 16 functions in 10 files, 3 skip-marked, "
                               "15 collected, 2 not collected"), res
    assert lines[1].startswith("vllm: 3 functions in 2 files"), res
    # Nothing written into the checkout (it may be read-only or shared).
    assert not (MAIN / ".pytest_cache").exists()
    assert not list(MAIN.rglob("__pycache__"))


def test_no_verify_leaves_rows_unverified(zlb, tmp_path):
    res = inventory(zlb, "--flaggems-dir", str(MAIN), "--no-verify", "--out", "inv")
    assert res.rc == 0, res
    main = rows(tmp_path / "inv" / "inventory_main.csv")
    assert len(main) == 16  # only pytest finds the class method
    assert {r["collected"] for r in main} == {"unverified"}
    assert {r["cases"] for r in main} == {""}
    assert "collection unverified: not tried (--no-verify)" in res.out
    assert "vllm: not inventoried" in res.out
    assert not (tmp_path / "inv" / "inventory_vllm.csv").exists()


def test_pytest_that_cannot_collect_says_so(zlb, tmp_path):
    # A checkout whose conftest needs a module that is not there (as FlagGems'
    # needs torch): pytest stops before collecting anything.
    co = tmp_path / "co"
    shutil.copytree(MAIN, co)
    (co / "benchmark" / "conftest.py").write_text("import zlb_no_torch_here  # noqa\n")
    res = inventory(zlb, "--flaggems-dir", str(co))
    assert res.rc == 0, res
    assert "collection unverified: pytest could not collect (exit 4)" in res.out, res
    assert "zlb_no_torch_here" in res.out
    main = rows(tmp_path / "ops" / "inventory_main.csv")
    assert {r["collected"] for r in main} == {"unverified"}
    meta = json.loads((tmp_path / "ops" / "inventory.json").read_text())
    assert meta["repos"]["main"]["verified_by"].startswith("pytest could not collect")


def test_missing_python_is_unverified_not_fatal(zlb, tmp_path):
    res = inventory(zlb, "--flaggems-dir", str(MAIN), "--python", "/nonexistent/python3")
    assert res.rc == 0, res
    assert "python '/nonexistent/python3' was not found" in res.out


@pytest.mark.parametrize("setup,needle", [
    (lambda p: None, "does not exist"),
    (lambda p: p.mkdir(), "has no benchmark/ folder"),
])
def test_bad_checkout_is_a_preflight_failure(zlb, tmp_path, setup, needle):
    target = tmp_path / "nothing"
    setup(target)
    res = inventory(zlb, "--flaggems-dir", str(target))
    assert res.rc == 3, res
    assert "PREFLIGHT_FAILED check=flaggems_dir" in res.err
    assert needle in res.err
    assert "fix: " in res.err
    assert not (tmp_path / "ops").exists()


def test_repos_given_the_wrong_way_round(zlb, tmp_path):
    res = inventory(zlb, "--flaggems-dir", str(VLLM))
    assert res.rc == 3, res
    assert "holds the package flaggems_vllm" in res.err
    assert "--vllm-dir" in res.err
    res = inventory(zlb, "--flaggems-dir", str(MAIN), "--vllm-dir", str(MAIN))
    assert res.rc == 3, res
    assert "PREFLIGHT_FAILED check=vllm_dir" in res.err


def test_vllm_dir_from_the_environment(zlb, tmp_path):
    res = inventory(zlb, "--no-verify", env={"FLAGGEMS_DIR": str(MAIN),
                                             "FLAGGEMS_VLLM_DIR": str(VLLM)})
    assert res.rc == 0, res
    assert (tmp_path / "ops" / "inventory_vllm.csv").exists()


def test_dismiss_list_is_checked_and_counted(zlb, tmp_path):
    ops = tmp_path / "ops"
    ops.mkdir()
    (ops / "dismiss.txt").write_text(
        "# verified failures\n"
        "softmax_backward  fails: issue #9\n"
        "vllm:fused_moe    # OOM at default shapes\n"
        "nextafter_@nextafter_a  flaky\n"
        "gone_op  removed upstream\n")
    res = inventory(zlb, "--flaggems-dir", str(MAIN), "--vllm-dir", str(VLLM), "--no-verify")
    assert res.rc == 0, res
    assert "2 dismissed -> ops/inventory_main.csv" in res.out, res
    assert "1 dismissed -> ops/inventory_vllm.csv" in res.out, res
    assert "dismiss.txt:5: gone_op matches no benchmark function" in res.err

    bad = tmp_path / "bad.txt"
    bad.write_text("abs  fine\nsoftmax\n")
    res = inventory(zlb, "--flaggems-dir", str(MAIN), "--dismiss", str(bad))
    assert res.rc == 3, res
    assert "PREFLIGHT_FAILED check=dismiss" in res.err
    assert f"{bad}:2: 'softmax' has no reason" in res.err

    bad.write_text("vlm:fused_moe  typo\n")
    res = inventory(zlb, "--flaggems-dir", str(MAIN), "--dismiss", str(bad))
    assert res.rc == 3, res
    assert "unknown repository 'vlm'" in res.err

    res = inventory(zlb, "--flaggems-dir", str(MAIN), "--dismiss", str(tmp_path / "none.txt"))
    assert res.rc == 3, res
    assert "none.txt" in res.err


def test_rebuild_overwrites_and_keeps_the_other_repo(zlb, tmp_path):
    ops = tmp_path / "ops"
    res = inventory(zlb, "--flaggems-dir", str(MAIN), "--vllm-dir", str(VLLM), "--no-verify")
    assert res.rc == 0, res
    vllm_before = (ops / "inventory_vllm.csv").read_text()
    (ops / "inventory_main.csv").write_text("stale\n")
    res = inventory(zlb, "--flaggems-dir", str(MAIN))
    assert res.rc == 0, res
    assert len(rows(ops / "inventory_main.csv")) == 17
    assert (ops / "inventory_vllm.csv").read_text() == vllm_before
    assert "kept the earlier ops/inventory_vllm.csv" in res.out
    meta = json.loads((ops / "inventory.json").read_text())
    assert meta["repos"]["vllm"]["kept"] is True
    assert "kept" not in meta["repos"]["main"]
    assert meta["repos"]["main"]["verified_by"] == "pytest"
    # No temporary files left beside the tables.
    assert sorted(p.name for p in ops.iterdir()) == [
        "inventory.json", "inventory_main.csv", "inventory_vllm.csv"]


def test_bad_command_line_and_unwritable_out(zlb, tmp_path):
    res = inventory(zlb, "softmax")
    assert res.rc == 2, res
    assert "unexpected argument 'softmax'" in res.err
    res = inventory(zlb, "--collect-timeout", "0", "--flaggems-dir", str(MAIN))
    assert res.rc == 2, res
    (tmp_path / "afile").write_text("")
    res = inventory(zlb, "--flaggems-dir", str(MAIN), "--no-verify",
                    "--out", str(tmp_path / "afile" / "ops"))
    assert res.rc == 7, res


@pytest.mark.skipif(not (REAL / "benchmark").is_dir(), reason="no FlagGems checkout in .carry")
def test_real_flaggems_static_scan(zlb, tmp_path):
    res = inventory(zlb, "--flaggems-dir", str(REAL), "--no-verify")
    assert res.rc == 0, res
    main = rows(tmp_path / "ops" / "inventory_main.csv")
    assert len(main) > 1000
    assert sum(1 for r in main if r["skip"]) >= 1
    assert sum(1 for r in main if r["op_name"]) > 0.9 * len(main)


def test_a_linked_folder_is_not_scanned_twice(zlb, tmp_path):
    # issue 16 row 16: `ln -s . benchmark/loop` listed every operator twice
    main = tmp_path / "main"
    shutil.copytree(MAIN, main, ignore=shutil.ignore_patterns("__pycache__"))
    first = sorted(main.glob("benchmark/test_*.py"))[0]
    (main / "benchmark" / "loop").symlink_to(".")
    (main / "benchmark" / "test_zz_alias.py").symlink_to(first.name)
    res = inventory(zlb, "--flaggems-dir", str(main), "--no-verify", "--out", "inv")
    assert res.rc == 0, res
    table = rows(tmp_path / "inv" / "inventory_main.csv")
    assert len(table) == 16, [r["node"] for r in table]
    assert not any("loop/" in r["node"] or "zz_alias" in r["node"] for r in table)
