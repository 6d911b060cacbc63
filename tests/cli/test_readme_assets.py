"""What README.md names must ship, or zlb must say why not.

- every examples/ and ops/ path that README.md and docs/ name exists, except
  ops/inventory_vllm.csv, which the repository does not ship (no FlagGems-vllm
  checkout was at hand when ops/ was built): README must say so;
- the example shape files run as the README's examples use them (each of
  their operator keys through `zlb run OP --shapes FILE`, and the four
  operators of examples/ops_core4.txt through `zlb batch --ops-file`), here
  against the fake FlagGems;
- `zlb batch --all` on an inventory without inventory_vllm.csv: asked for the
  vllm operators (--vllm-dir, FLAGGEMS_VLLM_DIR) it refuses with exit 2 and
  one sentence naming the file, why it is missing and how to make it; not
  asked, it screens main and says the same on standard output.
"""
import csv
import re

import pytest
import yaml

from conftest import FAKE_VLLM, REPO
from test_batch import batch, status, world  # noqa: F401

README = REPO / "README.md"
SHAPES = REPO / "examples" / "shapes"
PATH_RE = re.compile(r"(?<![\w/.-])((?:examples|ops)/[A-Za-z0-9_.*/<>-]*[A-Za-z0-9_>])")


def named_paths():
    texts = [README.read_text()] + [p.read_text() for p in sorted((REPO / "docs").glob("*.md"))]
    found = set()
    for text in texts:
        for m in PATH_RE.finditer(text):
            if "<" not in m.group(1):                    # ops/inventory_<repo>.csv
                found.add(m.group(1).rstrip("/"))
    return sorted(found)


def exists(path):
    return any(REPO.glob(path)) if "*" in path else (REPO / path).exists()


def test_every_examples_and_ops_path_the_readme_names_exists():
    paths = named_paths()
    assert "examples/shapes/core4.yaml" in paths and "ops/inventory_main.csv" in paths
    missing = [p for p in paths if not exists(p)]
    assert missing in ([], ["ops/inventory_vllm.csv"]), missing
    if missing:
        text = " ".join(README.read_text().split())
        assert "`ops/inventory_vllm.csv` is not shipped" in text


def test_troubleshooting_names_only_options_that_exist(zlb):
    text = README.read_text()
    section = text[text.index("## Troubleshooting\n"):]
    section = section[:section.index("\n## ", 1)]
    for topic in ("FlagGems' own numbers", "re-sweep", "IR is not in"):
        assert topic in section
    run_help = zlb.cmd("run", "--help").out
    ir_help = zlb.cmd("ir", "--help").out
    # --mode is FlagGems' own option (its conftest), named as such
    flags = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", section)) - {"--mode"}
    assert {"--timer", "--l2", "--isolate-tuner-cache", "--keep-compile-cache"} <= flags
    for flag in flags:
        assert f"  {flag}" in run_help, flag
    for var in re.findall(r"\b(ZL_[A-Z_]+)=", section):
        assert f"env: {var}" in run_help, var
    assert "zlb ir layout RUN" in section and "layout" in ir_help


def shape_cases():
    for f in sorted(SHAPES.glob("*.yaml")):
        for key in yaml.safe_load(f.read_text()):
            if not key.endswith("Benchmark"):
                yield f.name, key


def test_the_example_shape_files_are_what_the_readme_uses():
    used = set(re.findall(r"examples/shapes/([\w.-]+\.yaml)", README.read_text()))
    shipped = {f.name for f in SHAPES.glob("*.yaml")}
    assert used and used <= shipped, used - shipped
    assert not re.search(r"(?:--shapes|--shape-set|SHAPE_FILE=)\s*(?:my|a|b|my_mm)\.yaml",
                         README.read_text())


@pytest.mark.parametrize("name,op", list(shape_cases()))
def test_example_shape_file_runs(zlb, name, op):
    r = zlb.run(op, "--shapes", str(SHAPES / name), "--ir", "off")
    assert r.rc == 0, r
    want = yaml.safe_load((SHAPES / name).read_text())[op]["shapes"]
    assert f"shapes: {len(want)} under '{op}'" in r.out, r
    assert r.rows(), r


def test_ops_file_example_runs_its_four_operators(world):  # noqa: F811
    r = batch(world, "--ops-file", str(REPO / "examples" / "ops_core4.txt"),
              "--shape-file", str(SHAPES / "core4.yaml"), timeout=300)
    assert r.rc == 0, r
    st = status(world.bdir)
    assert list(st) == ["softmax", "add", "layer_norm", "mm"]
    assert all(row["status"] == "PASS" and int(row["rows"]) > 0 for row in st.values()), st


def main_only_inventory(world, tmp_path):
    """An inventory of the fake main checkout alone, every function but b_pass dismissed."""
    ops_dir = tmp_path / "ops"
    r = world.cmd("inventory", "--out", str(ops_dir), "--no-verify")
    assert r.rc == 0, r
    assert "vllm: not inventoried" in r.out, r
    with open(ops_dir / "inventory_main.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    (ops_dir / "dismiss.txt").write_text("".join(
        f"{row['op']}  not this test's\n" for row in rows if row["op"] != "b_pass"))
    assert not (ops_dir / "inventory_vllm.csv").exists()
    return ops_dir


def refusal(ops_dir, given):
    return (f"zlb batch: --all with {given}: {ops_dir}/inventory_vllm.csv does not exist "
            "(the inventory was built without a FlagGems-vllm checkout), so --all has no "
            "vllm operator to take; build it with `zlb inventory --vllm-dir DIR --out "
            f"{ops_dir}`, or drop {given} to screen main alone")


@pytest.mark.parametrize("how", ["flag", "env"])
def test_all_asked_for_vllm_without_its_inventory_is_refused(world, tmp_path, how):  # noqa: F811
    ops_dir = main_only_inventory(world, tmp_path)
    if how == "flag":
        r = batch(world, "--all", "--ops-dir", str(ops_dir), "--vllm-dir", str(FAKE_VLLM))
        given = "--vllm-dir"
    else:
        r = batch(world, "--all", "--ops-dir", str(ops_dir), env={"FLAGGEMS_VLLM_DIR": str(FAKE_VLLM)})
        given = "FLAGGEMS_VLLM_DIR"
    assert r.rc == 2, r
    assert refusal(ops_dir, given) in r.err, r
    assert not world.bdir.exists()                       # nothing started


def test_all_without_vllm_screens_main_and_says_why_vllm_is_left_out(world, tmp_path):  # noqa: F811
    ops_dir = main_only_inventory(world, tmp_path)
    note = (f"zlb batch: --all: no vllm operators: {ops_dir}/inventory_vllm.csv does not exist "
            "(the inventory was built without a FlagGems-vllm checkout); `zlb inventory "
            f"--vllm-dir DIR --out {ops_dir}` adds them")
    r = batch(world, "--all", "--ops-dir", str(ops_dir), env={"FLAGGEMS_VLLM_DIR": ""})
    assert r.rc == 0, r
    assert note in r.out, r
    assert set(status(world.bdir)) == {"b_pass"}
    r = batch(world, "--all", "--ops-dir", str(ops_dir), "-q", "--resume")
    assert r.rc == 0, r
    assert "no vllm operators" not in r.out + r.err, r   # -q: the closing line only


def test_all_with_the_vllm_inventory_built_takes_vllm(world, tmp_path):  # noqa: F811
    ops_dir = main_only_inventory(world, tmp_path)
    r = world.cmd("inventory", "--out", str(ops_dir), "--no-verify", "--vllm-dir", str(FAKE_VLLM))
    assert r.rc == 0, r
    assert (ops_dir / "inventory_vllm.csv").exists()
    r = batch(world, "--all", "--ops-dir", str(ops_dir), "--vllm-dir", str(FAKE_VLLM), timeout=300)
    assert r.rc in (0, 1), r                             # measured, whatever the fake says
    assert "inventory_vllm.csv" not in r.out + r.err, r
    assert "vllm:fused_marlin_moe" in status(world.bdir)
