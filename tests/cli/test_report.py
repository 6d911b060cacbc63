"""`zlb report`: one self-contained HTML page of a run, a batch or an A/B.

The A/B and its runs are real: examples/ab/ was recorded with `zlb ab` on an
H200 (see test_examples.py). Batches are assembled from copies of those runs
with an ops_status.csv, as `zlb batch` lays them out; hostile runs are
written by hand. The pages are read back with Python's html.parser, so the
checks are about elements, not text that happens to match.
"""
import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import REPO

AB = REPO / "examples" / "ab" / "layer_norm_fp_fusion"
MM = REPO / "examples" / "ab" / "mm_dead_switch"


def first_run(ab, side, rnd=1):
    found = sorted((ab / side / f"r{rnd}").iterdir())
    assert len(found) == 1, found
    return found[0]


class Page(HTMLParser):
    """The elements of a page: (tag, attrs) in order, text by element, links."""

    def __init__(self, text):
        super().__init__()
        self.elements, self.links, self.text = [], [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        if tag == "a" and "href" in a:
            self.links.append(a["href"])

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_data(self, data):
        self.text.append(data)

    def all(self, tag, cls=None):
        return [a for t, a in self.elements
                if t == tag and (cls is None or cls in a.get("class", "").split())]

    @property
    def plain(self):
        return "".join(self.text)


def report(zlb, *args, out=None):
    out = out or zlb.cwd / "report.html"
    r = zlb.cmd("report", *map(str, args), "-o", str(out))
    return r, out


def make_batch(root, ops):
    """A batch laid out as zlb batch does: ops_status.csv and <repo>/<op>/ run copies."""
    lines = ["repo,op,spec,status,seconds,attempts,rows,remarks,backend,device,timer,"
             "exit_code,run_dir"]
    for op, status, src in ops:
        if src:
            shutil.copytree(src, root / "main" / op)
        lines.append(f"main,{op},{op},{status},1.0,1,0,,cuda,0,graph,0,main/{op}")
    root.mkdir(parents=True, exist_ok=True)
    (root / "ops_status.csv").write_text("\n".join(lines) + "\n")
    return root


def write_run(run, rows, identity=True):
    run.mkdir(parents=True)
    if identity:
        (run / "run_identity.json").write_text(json.dumps(
            {"schema_version": 1, "status": "completed", "op": rows[0]["op"],
             "caliber": {"timer": "graph"}, "provenance": {"host": "h"}}))
    with open(run / "results.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps({"schema_version": 1, "kind": "row", "status": "SUCCESS",
                                **r}) + "\n")
    return run


# ---- an A/B ---------------------------------------------------------------------------

def test_ab_dir_forest_calibers_and_ir_links(zlb):
    r, out = report(zlb, AB)
    assert r.rc == 0, r
    assert r.out.startswith(f"wrote {out} (")
    page = Page(out.read_text())
    forest = page.all("svg", "forest")
    assert len(forest) == 1
    # one point per compared row, coloured by the verdicts compare.json gives
    verdicts = [r["gems"]["verdict"] for r in json.loads((AB / "compare.json").read_text())["rows"]]
    points = [a["class"] for t, a in page.elements if "pt" in a.get("class", "").split()]
    assert sorted(points) == sorted(f"pt v-{v}" for v in verdicts)
    assert "SAME band \u00b11%" in page.plain
    # calibers side by side: A1 records, every other run replays
    row = [a for a in page.all("tr", "differs")]
    assert row, "autotune_mode differs between the sides (record; replay vs replay)"
    assert "TRITON_DEFAULT_FP_FUSION=0,1" in page.plain
    # IR: differ, and every link opens a stage file inside one of the two first rounds
    assert "differ" in page.plain
    a1, b1 = first_run(AB, "A").resolve(), first_run(AB, "B").resolve()
    assert page.links, "links to the differing stage files"
    for href in [h for h in page.links if not h.startswith("#")]:
        target = (out.parent / href).resolve()
        assert target.is_file(), href
        assert a1 in target.parents or b1 in target.parents, href
        assert (a1 / "ttgir") in target.parents or (b1 / "ttgir") in target.parents
    # self-contained: nothing to load, no script
    html = out.read_text()
    assert "<script" not in html
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)
    assert "default-src 'none'" in html


def calibrated_ab(tmp_path, inside=True):
    """A copy of the example A/B whose comparison took s from a calibration
    run: inside the A/B directory (zlb ab --calibrate's R), or beside it."""
    ab = tmp_path / "ab"
    shutil.copytree(AB, ab)
    cal = (ab / "R" if inside else tmp_path / "cal") / "cal_run"
    shutil.copytree(first_run(AB, "A"), cal)
    rows = [json.loads(l) for l in (cal / "results.jsonl").read_text().splitlines()]
    for r in rows:
        for side in ("gems", "torch"):
            if isinstance(r.get(side), dict):
                r[side].update(clock_elasticity=0.8, clock_elasticity_se=0.01,
                               clock_elasticity_pairs=90)
    (cal / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    doc = json.loads((ab / "compare.json").read_text())
    doc["settings"]["elasticity_from"] = str(cal)
    (ab / "compare.json").write_text(json.dumps(doc))
    return ab, cal


def test_ab_page_takes_s_where_the_ab_took_it_from_its_own_recording(zlb, tmp_path):
    # zlb ab --calibrate compared with its R's s: the page compares so again
    ab, cal = calibrated_ab(tmp_path)
    r, out = report(zlb, ab)
    assert r.rc == 0, r
    assert re.search(r"clock elasticity: \d+ rounds? of \d+ rows? took s from %s \(the "
                     r"A/B's own\)" % re.escape(str(cal)), Page(out.read_text()).plain), r
    # moved, it still finds its R: a path under where zlb ab wrote it is read under the A/B
    doc = json.loads((ab / "ab.json").read_text())
    doc["ab_dir"] = str(tmp_path / "where_it_was")
    (ab / "ab.json").write_text(json.dumps(doc))
    doc = json.loads((ab / "compare.json").read_text())
    doc["settings"]["elasticity_from"] = str(tmp_path / "where_it_was" / "R" / "cal_run")
    (ab / "compare.json").write_text(json.dumps(doc))
    r, out = report(zlb, ab)
    assert r.rc == 0 and "which is not in" not in r.err, r
    assert "took s from %s (the A/B's own)" % cal in Page(out.read_text()).plain
    # a path that climbs out of it is not followed
    shutil.copytree(ab / "R", tmp_path / "R")
    doc["settings"]["elasticity_from"] = str(tmp_path / "where_it_was" / ".." / "R" / "cal_run")
    (ab / "compare.json").write_text(json.dumps(doc))
    r, out = report(zlb, ab)
    assert r.rc == 0 and "which is not in" in r.err, r


def test_ab_page_follows_no_path_out_of_the_ab_but_takes_one_given(zlb, tmp_path):
    ab, cal = calibrated_ab(tmp_path, inside=False)
    r, out = report(zlb, ab)
    assert r.rc == 0, r
    assert f"took the clock elasticity of {cal}, which is not in {ab}" in r.err, r
    assert "took s from" not in Page(out.read_text()).plain
    # given on the command line, it is the user's to name
    r, out = report(zlb, ab, "--elasticity-from", cal)
    assert r.rc == 0 and "which is not in" not in r.err, r
    assert f"took s from {cal} (--elasticity-from)" in Page(out.read_text()).plain
    r, _ = report(zlb, ab, "--elasticity-from", tmp_path / "nowhere")
    assert r.rc == 2 and "'%s' is not one" % (tmp_path / "nowhere") in r.err, r
    r, _ = report(zlb, first_run(AB, "A"), "--elasticity-from", cal)
    assert r.rc == 2 and "--elasticity-from is for an A/B" in r.err, r


def test_ab_replay_fallback_flag_names_side_reason_and_kernel(zlb, tmp_path):
    a = tmp_path / "A"
    b = tmp_path / "B"
    shutil.copytree(first_run(AB, "A"), a)
    shutil.copytree(first_run(AB, "B"), b)
    rows = [json.loads(line) for line in (b / "results.jsonl").read_text().splitlines()]
    rows[0]["gems"]["markers"] = rows[0]["gems"].get("markers", []) + ["AUTOTUNE_REPLAY_FALLBACK"]
    rows[0]["gems"]["replay_fallbacks"] = [{"reason": "key_missing", "kernel": "ln_kernel"}]
    (b / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    r, out = report(zlb, a, b)
    assert r.rc == 0, r
    flags = [t for t in Page(out.read_text()).text if "replay fallback" in t]
    # the flag says which side, why and which kernel, on the one row that fell back
    assert flags and set(flags) == {"B replay fallback: key_missing ln_kernel"}, flags


def test_two_directories_are_compared_on_the_fly(zlb):
    r, out = report(zlb, AB / "A", AB / "B")
    assert r.rc == 0, r
    page = Page(out.read_text())
    points = [a["class"] for t, a in page.elements if "pt" in a.get("class", "").split()]
    assert sorted(points) == ["pt v-SAME", "pt v-UNSURE", "pt v-UNSURE"]
    # the same verdicts as the A/B directory's own page
    r2, out2 = report(zlb, AB, out=zlb.cwd / "ab.html")
    assert r2.rc == 0, r2
    points2 = [a["class"] for t, a in Page(out2.read_text()).elements
               if "pt" in a.get("class", "").split()]
    assert points == points2


def test_threshold_moves_the_band(zlb):
    r, out = report(zlb, AB, "--threshold", "5")
    assert r.rc == 0, r
    page = Page(out.read_text())
    assert "SAME band \u00b15%" in page.plain
    # the rows whose whole interval is within +-5% are now SAME
    points = [a["class"] for t, a in page.elements if "pt" in a.get("class", "").split()]
    assert points.count("pt v-SAME") == 3


def test_calibers_that_differ_are_refused_then_shown(zlb, tmp_path):
    a = tmp_path / "A"
    b = tmp_path / "B"
    shutil.copytree(first_run(MM, "A"), a)
    shutil.copytree(first_run(MM, "B", 2), b)
    ident = json.loads((b / "run_identity.json").read_text())
    ident["caliber"]["l2_mode"] = "cold"
    (b / "run_identity.json").write_text(json.dumps(ident))
    r, out = report(zlb, a, b)
    assert r.rc == 4, r
    assert "l2_mode" in r.err and "--allow-caliber-mismatch" in r.err
    assert not out.exists()
    r, out = report(zlb, a, b, "--allow-caliber-mismatch")
    assert r.rc == 0, r
    page = Page(out.read_text())
    assert "Calibers differ" in page.plain
    diff = [a for t, a in page.elements if t == "td" and "diff" in a.get("class", "")]
    assert diff, "the differing caliber field is marked"


# ---- a batch ----------------------------------------------------------------------------

def test_batch_statuses_speedups_and_every_operator(zlb, tmp_path):
    batch = make_batch(tmp_path / "batch", [
        ("layer_norm", "PASS", first_run(AB, "A")),
        ("mm", "PASS", first_run(MM, "A")),
        ("broken", "FAIL", None),
    ])
    r, out = report(zlb, batch)
    assert r.rc == 0, r
    page = Page(out.read_text())
    # statuses; slowest and fastest; devices: the two example runs were recorded on two
    # H200s (their provenance's gpu_uuid), so the batch spans two cards
    assert len(page.all("svg", "hbars")) == 3
    assert len(page.all("svg", "histogram")) == 1
    text = page.plain
    for op in ("main/layer_norm", "main/mm", "main/broken"):
        assert op in text
    assert "FAIL" in text and "PASS" in text
    # one bar per operator with ranked rows (broken has none)
    rows = [a for a in page.all("g", "row")]
    # 2 statuses + 2 ranked operators + 3 devices (the two cards, broken's unknown one)
    assert len(rows) == 2 + 2 + 3
    devices = Tables(out.read_text()).tables["devices"]
    assert sorted(row[1:] for row in devices[1:]) == [
        ["(unknown)", "", "1"],
        ["NVIDIA H200", "GPU-0885e24e-3942-230c-3b7a-b82274351832", "1"],
        ["NVIDIA H200", "GPU-a576e5a1-53da-9c25-f562-335906b1ea6f", "1"]]


class Tables(HTMLParser):
    """Each <table class=...>'s rows as lists of cell texts: {cls: [[cell, ...], ...]}."""

    def __init__(self, text):
        super().__init__()
        self.tables, self.cls, self.row, self.cell = {}, None, None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.cls = dict(attrs).get("class", "")
            self.tables[self.cls] = []
        elif tag == "tr" and self.cls is not None:
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.tables[self.cls].append(self.row)
            self.row = None
        elif tag == "table":
            self.cls = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


EVIL_GPU = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
UUID_A = "GPU-0a0a0a0a-1111-2222-3333-444444444444"
UUID_B = "GPU-0b0b0b0b-1111-2222-3333-444444444444"


def make_gpu_batch(root, ops):
    """A batch of version 3 whose runs recorded no card: ops_status.csv's gpu columns say it."""
    import csv
    root.mkdir(parents=True)
    with open(root / "ops_status.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["repo", "op", "spec", "status", "seconds", "attempts", "rows", "remarks",
                    "backend", "device", "gpu", "gpu_uuid", "timer", "exit_code", "run_dir",
                    "job"])
        for op, device, gpu, uuid in ops:
            write_run(root / "main" / op, [{"op": op, "dtype": "torch.float16",
                                            "shape_detail": "[4]", "latency_base_ms": 1.0,
                                            "latency_ms": 0.5, "speedup": 2.0}])
            w.writerow(["main", op, op, "PASS", "1.0", "1", "1", "", "cuda", device, gpu,
                        uuid, "graph", "0", f"main/{op}", ""])
    return root


def test_batch_over_two_gpus_names_each_operators_card(zlb, tmp_path):
    batch = make_gpu_batch(tmp_path / "batch", [
        ("add", "0", "H200", UUID_A), ("mul", "1", EVIL_GPU, UUID_B),
        ("sub", "0", "H200", UUID_A)])
    r, out = report(zlb, batch)
    assert r.rc == 0, r
    html = out.read_text()
    assert "<script" not in html and "<img" not in html     # the card's name is data
    t = Tables(html)
    head, *rows = t.tables["operators"]
    gpu = head.index("GPU")
    # several cards: each named with as much uuid as tells them apart
    assert {row[0]: row[gpu] for row in rows} == {
        "main/add": "H200 GPU-0a0a0a0a", "main/mul": f"{EVIL_GPU} GPU-0b0b0b0b",
        "main/sub": "H200 GPU-0a0a0a0a"}
    head, *rows = t.tables["devices"]
    assert head == ["backend", "GPU", "uuid", "operators"]
    assert sorted(rows) == sorted([["cuda", "H200", UUID_A, "2"],
                                   ["cuda", EVIL_GPU, UUID_B, "1"]])
    page = Page(html)
    assert "#devices" in page.links
    # a chart beside the table: one bar per card (and the statuses' one)
    assert len(page.all("svg", "hbars")) == 3


def test_batch_on_one_gpu_has_no_devices_section(zlb, tmp_path):
    batch = make_gpu_batch(tmp_path / "batch", [("add", "0", "H200", UUID_A),
                                                 ("mul", "0", "H200", UUID_A)])
    r, out = report(zlb, batch)
    assert r.rc == 0, r
    t = Tables(out.read_text())
    head, *rows = t.tables["operators"]
    assert [row[head.index("GPU")] for row in rows] == ["H200", "H200"]   # no uuid needed
    assert "devices" not in t.tables
    assert "#devices" not in Page(out.read_text()).links


def test_batch_run_dir_outside_is_refused(zlb, tmp_path):
    outside = tmp_path / "elsewhere"
    shutil.copytree(first_run(MM, "A"), outside)
    batch = tmp_path / "batch"
    batch.mkdir()
    (batch / "ops_status.csv").write_text(
        "repo,op,status,run_dir\nmain,mm,PASS,../elsewhere\n")
    r, out = report(zlb, batch)
    assert r.rc == 8, r
    assert "names run_dir '../elsewhere', outside the batch" in r.err
    assert not out.exists()


def test_symbolic_link_out_of_the_batch_is_refused(zlb, tmp_path):
    batch = make_batch(tmp_path / "batch", [("mm", "PASS", first_run(MM, "A"))])
    secret = tmp_path / "secret.jsonl"
    secret.write_text("{}\n")
    ev = batch / "main" / "mm" / "events.jsonl"
    ev.unlink()
    ev.symlink_to(secret)
    r, out = report(zlb, batch)
    assert r.rc == 8, r
    assert f"{ev} is a symbolic link to {secret}, outside {batch}" in r.err
    assert not out.exists()


# ---- a run ------------------------------------------------------------------------------

def test_run_latency_against_size(zlb):
    run = first_run(AB, "A")
    r, out = report(zlb, run)
    assert r.rc == 0, r
    page = Page(out.read_text())
    assert len(page.all("svg", "xy")) == 1
    # gems and torch for one dtype: two legend lines and two series lines
    assert len(page.all("polyline")) == 4
    assert len(page.all("circle")) == 6   # 3 rows x 2 sides
    assert "Run of layer_norm" in page.plain
    assert "float16 gems" in page.plain and "float16 torch" in page.plain


def test_a_replay_fallback_names_its_reason_and_kernel(zlb, tmp_path):
    fb = [{"reason": "key_missing", "kernel": "softmax_kernel"}]
    run = write_run(tmp_path / "run", [
        {"op": "softmax", "op_name": "softmax", "dtype": "torch.float16",
         "shape_detail": "[torch.Size([4])]", "latency_base_ms": 1.0, "latency_ms": 0.5,
         "speedup": 2.0, "torch": {"timer": "graph", "markers": []},
         "gems": {"timer": "graph", "markers": ["AUTOTUNE_REPLAY_FALLBACK"],
                  "replay_fallbacks": fb}},
        {"op": "softmax", "op_name": "softmax", "dtype": "torch.float16",
         "shape_detail": "[torch.Size([8])]", "latency_base_ms": 1.0, "latency_ms": 0.5,
         "speedup": 2.0, "torch": {"timer": "graph", "markers": []},
         "gems": {"timer": "graph", "markers": []}},
    ])
    r, out = report(zlb, run)
    assert r.rc == 0, r
    plain = Page(out.read_text()).plain
    assert plain.count("AUTOTUNE_REPLAY_FALLBACK(key_missing:softmax_kernel)") == 1
    assert plain.count("AUTOTUNE_REPLAY_FALLBACK") == 1


def test_hostile_names_are_escaped(zlb, tmp_path):
    evil = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    run = write_run(tmp_path / "run", [
        {"op": evil, "op_name": evil, "dtype": evil, "shape_detail": evil,
         "latency_base_ms": 1.0, "latency_ms": 0.5, "speedup": 2.0,
         "torch": {"timer": "graph", "markers": [evil]}, "gems": {"timer": evil}},
        {"op": evil, "dtype": "torch.float16", "shape_detail": "[torch.Size([4])]",
         "latency_base_ms": 1.0, "latency_ms": 0.5, "speedup": 2.0},
    ])
    r, out = report(zlb, run)
    assert r.rc == 0, r
    html = out.read_text()
    assert "<script" not in html and "<img" not in html
    page = Page(html)
    assert not [a for t, a in page.elements if any(k.startswith("on") for k in a)]
    assert "<script>alert(1)</script>" in page.plain   # shown as text


def test_bad_command_lines_and_inputs(zlb, tmp_path):
    r = zlb.cmd("report", str(AB))
    assert r.rc == 2 and "give -o FILE" in r.err, r
    r = zlb.cmd("report", "-o", "x.html")
    assert r.rc == 2 and "what to report?" in r.err, r
    r = zlb.cmd("report", str(AB), str(AB), str(AB), "-o", "x.html")
    assert r.rc == 2, r
    r = zlb.cmd("report", str(AB), "--bogus", "-o", "x.html")
    assert r.rc == 2 and "--bogus" in r.err, r
    r = zlb.cmd("report", str(first_run(AB, "A")), "--threshold", "2", "-o", "x.html")
    assert r.rc == 2 and "--threshold is an A/B's band" in r.err, r
    r = zlb.cmd("report", str(AB), "--threshold", "80", "-o", "x.html")
    assert r.rc == 2 and "--threshold" in r.err, r
    r = zlb.cmd("report", str(tmp_path / "nope"), "-o", "x.html")
    assert r.rc == 8 and "is not a directory" in r.err, r
    (tmp_path / "empty").mkdir()
    r = zlb.cmd("report", str(tmp_path / "empty"), "-o", "x.html")
    assert r.rc == 8 and "nothing to report" in r.err, r
    assert not (zlb.cwd / "x.html").exists()


def test_page_to_stdout(zlb):
    r = zlb.cmd("report", str(first_run(AB, "A")), "-o", "-")
    assert r.rc == 0, r
    assert r.out.startswith("<!DOCTYPE html>") and r.out.rstrip().endswith("</html>")


def test_help_from_the_option_table(zlb):
    r = zlb.cmd("report", "--help")
    assert r.rc == 0
    for needle in ("usage: zlb report RUN -o FILE", "zlb report A B -o FILE", "--out FILE",
                   "--threshold PCT", "--allow-caliber-mismatch", "exit codes:"):
        assert needle in r.out, needle
    r = zlb.cmd("help")
    assert re.search(r"^  report\s+one self-contained HTML page", r.out, re.M), r.out
