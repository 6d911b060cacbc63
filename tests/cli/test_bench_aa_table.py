"""bench/aa_table.py, the A/A table of issue 28, on the shipped H200 rounds of
examples/ab/layer_norm_fp_fusion: its counts must be zlb compare's own verdicts,
restricted to rows at least --min-us long, and a two-round split must be made
of four directories."""
import json
import subprocess
import sys

from conftest import REPO

AB = REPO / "examples" / "ab" / "layer_norm_fp_fusion"


def table(zlb, *args):
    r = subprocess.run([sys.executable, str(REPO / "bench" / "aa_table.py"), "--zlb", zlb.bin,
                        *map(str, args)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.splitlines()


def verdicts(zlb, a, b, kind, min_ms):
    r = zlb.cmd("compare", "--format", "json", str(a), "--", str(b))
    rows = json.loads(r.out)["rows"]
    return [x[kind]["verdict"] for x in rows if x["paired"] and x[kind]["a_ms"] >= min_ms]


def test_counts_are_compares_verdicts(zlb):
    a, b, c, d = AB / "A" / "r1", AB / "B" / "r1", AB / "A" / "r2", AB / "B" / "r2"
    lines = table(zlb, a, b, c, d, "--two-rounds", "--min-us", "3")
    # 6 pairs, then 3 splits of the four into two rounds a side
    assert len(lines) == 1 + 6 + 3, lines
    # the name may hold spaces: the six cells are the line's last words
    first = lines[1].split()[-6:]
    for kind, cell in (("gems", 0), ("torch", 3)):
        v = verdicts(zlb, a, b, kind, 0.003)
        assert first[cell] == "%d/%d" % (v.count("SAME"), len(v)), first
        assert first[cell + 2] == str(v.count("SLOWER") + v.count("FASTER")), first
    # the 3 us floor leaves out the 2.9 us gems row of 1024x1024
    assert first[0].endswith("/2")
    assert table(zlb, a, b, "--min-us", "100")[1].split()[-6] == "0/0"


def test_across_a_caliber_axis_only_when_asked(zlb, tmp_path):
    # B's round measured with a cold L2: compare refuses, and so does the
    # table, unless the flag is passed on; the counts are then compare's own.
    import shutil
    a = AB / "A" / "r1"
    b = tmp_path / "cold"
    shutil.copytree(AB / "B" / "r1", b)
    (ident,) = b.glob("*/run_identity.json")
    doc = json.loads(ident.read_text())
    doc["caliber"]["l2_mode"] = "cold"
    ident.write_text(json.dumps(doc))
    r = subprocess.run([sys.executable, str(REPO / "bench" / "aa_table.py"), "--zlb", zlb.bin,
                        str(a), str(b)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "exit 4" in r.stderr and "l2_mode" in r.stderr, r
    lines = table(zlb, a, b, "--allow-caliber-mismatch", "--min-us", "3")
    assert len(lines) == 2, lines
    cells = lines[1].split()[-6:]
    res = zlb.cmd("compare", "--format", "json", "--allow-caliber-mismatch", str(a), "--", str(b))
    rows = [x for x in json.loads(res.out)["rows"] if x["paired"] and x["gems"]["a_ms"] >= 0.003]
    same = sum(x["gems"]["verdict"] == "SAME" for x in rows)
    assert cells[0] == "%d/%d" % (same, len(rows)), (cells, rows)
    # a long name is printed whole, not cut to the column
    assert lines[1].startswith(str(a)), lines[1]


def test_coverage_counts_the_intervals_that_hold_one(zlb):
    # the coverage line must be compare's own intervals: how many hold 1.0,
    # and the median half-width, per kind, over the rows at least --min-us
    a, b = AB / "A" / "r1", AB / "B" / "r1"
    lines = table(zlb, a, b, "--coverage", "--min-us", "3")
    assert len(lines) == 3 and lines[2].startswith("  coverage: "), lines
    r = zlb.cmd("compare", "--format", "json", str(a), "--", str(b))
    doc = json.loads(r.out)["rows"]
    for kind in ("gems", "torch"):
        rows = [x[kind] for x in doc if x["paired"] and x[kind]["a_ms"] >= 0.003]
        held = sum(c["ci_low"] <= 1.0 <= c["ci_high"] for c in rows)
        widths = sorted((c["ci_high"] - c["ci_low"]) / 2 for c in rows)
        want = "%s holds 1.0 on %d/%d" % (kind, held, len(rows))
        assert want in lines[2], (want, lines[2])
        assert "half-width %.2f%%" % (100 * widths[len(widths) // 2]) in lines[2], lines[2]
    # the layer_norm A/B moved its kernels: some interval must miss 1.0, or
    # this test could not tell a count from a constant
    assert any(x["gems"]["ci_low"] > 1.0 or x["gems"]["ci_high"] < 1.0
               for x in doc if x["paired"]), doc
    # without the flag, no coverage line
    assert len(table(zlb, a, b, "--min-us", "3")) == 2


def test_a_row_widened_by_its_effective_clocks_says_so():
    import importlib.util

    spec = importlib.util.spec_from_file_location("aa_table", REPO / "bench" / "aa_table.py")
    aa = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(aa)
    gems = {"verdict": "UNSURE", "ratio": 0.983, "ci_low": 0.979, "ci_high": 0.9942,
            "placement_sd_a": None, "clock_reasons_a": [], "clock_reasons_b": [],
            "power_duty_a": 1.0, "power_duty_b": 1.0, "clock_shift": 0.00752,
            "effective_mhz_a": [1960.2], "effective_mhz_b": [1975.0]}
    row = {"op_name": "addmm", "shape_detail": "[1024, 1024]", "gems": gems}
    assert "eff 1960-1975 MHz, shift +0.75%" in aa.describe(row, "gems")
    # one clock on both sides: no note, whatever was read
    assert "eff" not in aa.describe({**row, "gems": {**gems, "clock_shift": 0.0}}, "gems")


def test_without_effective_reads_the_rounds_on_nvmls_clock_alone(zlb, tmp_path):
    # Two shipped rounds of one build (an A/A) with every gems measurement
    # given an effective clock, one round's two levels below the other's:
    # compare widens by it (less one step). --without-effective must read them as the rounds
    # were before, cell for cell.
    import shutil

    dirs = []
    for r, mhz in (("r1", 1945.4), ("r2", 1975.0)):
        dst = tmp_path / r
        shutil.copytree(AB / "A" / r, dst)
        for res in dst.rglob("results.jsonl"):
            recs = [json.loads(l) for l in res.read_text().splitlines() if l.strip()]
            for rec in recs:
                if isinstance(rec.get("gems"), dict):
                    rec["gems"]["effective_mhz"] = mhz
            res.write_text("".join(json.dumps(r) + "\n" for r in recs))
        dirs.append(dst)

    def cells(lines):
        # gems SAME, its %, false verdicts; the same for torch
        return [l.split()[-6:] for l in lines if " -- " in l]

    plain = cells(table(zlb, AB / "A" / "r1", AB / "A" / "r2", "--min-us", "0"))
    widened = cells(table(zlb, *dirs, "--min-us", "0"))
    stripped = table(zlb, *dirs, "--min-us", "0", "--without-effective")
    assert stripped[0].startswith("(copies without effective_mhz")
    assert cells(stripped) == plain
    # the levels apart cost gems SAME rows, gave no verdict, and left torch,
    # whose measurements read no effective clock, as it was
    same = lambda c: int(c[0].split("/")[0])  # noqa: E731
    assert same(widened[0]) < same(plain[0]), (widened, plain)
    assert widened[0][2] == "0" and widened[0][3:] == plain[0][3:]
    # the originals were copied, not touched
    assert all("effective_mhz" not in p.read_text()
               for p in (AB / "A" / "r1").rglob("results.jsonl"))
