"""`zlb report` pages rendered by a real browser: headless Chromium (Debian's
`chromium`, which CI installs through `make deps`).

Per page, one Chromium process prints the DOM it built (--dump-dom) and takes
a screenshot (--screenshot), logging to stderr (--enable-logging=stderr
--v=0), in a fresh profile with every background fetch turned off. Then:

- the DOM holds the page's SVG plots and their marks (what the browser
  parsed, not what zlb wrote);
- no console message: the pages carry no script, and their
  Content-Security-Policy forbids loading anything, so a line from the
  console means a blocked load (a font, an image, a script) or an error;
- the screenshot is not blank: decoded (tests/cli/pngread.py), its grey
  levels vary and a fair share of its pixels is not background.

Two controls keep those checks honest on whatever Chromium is installed: a
page that loads an image and throws must produce console lines, and a white
page must be judged blank.
"""
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

import pytest

import pngread
from conftest import REPO
from test_report import AB, MM, Page, first_run, make_batch, report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (make deps installs Debian's chromium)")

WIDTH, HEIGHT = 1280, 1000


def render(page, tmp_path):
    """(dom, console lines, screenshot path) of page as Chromium shows it."""
    shot = tmp_path / (page.stem + ".png")
    with tempfile.TemporaryDirectory(prefix="zlb-chromium-") as profile:
        proc = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--no-first-run", "--disable-extensions",
             "--hide-scrollbars", f"--user-data-dir={profile}",
             f"--window-size={WIDTH},{HEIGHT}", "--enable-logging=stderr", "--v=0",
             f"--screenshot={shot}", "--dump-dom", page.as_uri()],
            capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    console = [l for l in proc.stderr.splitlines() if ":CONSOLE" in l or "Uncaught" in l]
    return proc.stdout, console, shot


def blankness(png):
    """(standard deviation of grey levels, share of pixels darker than near-white)."""
    grey = pngread.grey_levels(png)
    return statistics.pstdev(grey), sum(1 for g in grey if g < 235) / len(grey)


def assert_seen(page, tmp_path, svg_classes):
    dom, console, shot = render(page, tmp_path)
    assert not console, "console messages:\n" + "\n".join(console)
    parsed = Page(dom)
    for cls, least in svg_classes.items():
        found = parsed.all("svg", cls)
        assert len(found) >= least, f"{len(found)} <svg class=plot {cls}> in the DOM"
    assert parsed.all("table"), "every plot has its table"
    sd, ink = blankness(shot)
    assert sd > 20 and ink > 0.02, f"screenshot looks blank: sd {sd:.1f}, ink {ink:.3f}"
    return parsed


def test_controls_the_checks_catch_errors_and_blank_pages(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><meta http-equiv=\"Content-Security-Policy\" "
                   "content=\"default-src 'none'\"><p>x</p><img src=\"missing.png\">")
    throws = tmp_path / "throws.html"
    throws.write_text("<!DOCTYPE html><p>x</p><script>undefined_function();</script>")
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><title>blank</title>")
    for page in (bad, throws):
        _, console, _ = render(page, tmp_path)
        assert console, f"{page.name}: the console check saw nothing"
    _, console, shot = render(blank, tmp_path)
    sd, ink = blankness(shot)
    assert sd < 1 and ink == 0, (sd, ink)


def test_ab_page_in_chromium(zlb, tmp_path):
    r, out = report(zlb, AB, out=tmp_path / "ab.html")
    assert r.rc == 0, r
    dom = assert_seen(out, tmp_path, {"forest": 1})
    points = [a for t, a in dom.elements if "pt" in a.get("class", "").split()]
    assert len(points) == 3
    assert dom.all("a"), "links to the IR files"


def test_batch_page_in_chromium(zlb, tmp_path):
    batch = make_batch(tmp_path / "batch", [
        ("layer_norm", "PASS", first_run(AB, "A")),
        ("mm", "PASS", first_run(MM, "A")),
        ("broken", "FAIL", None),
    ])
    r, out = report(zlb, batch, out=tmp_path / "batch.html")
    assert r.rc == 0, r
    # statuses, slowest and fastest, devices (the example runs are on two H200s)
    assert_seen(out, tmp_path, {"hbars": 3, "histogram": 1})


def test_run_page_in_chromium(zlb, tmp_path):
    r, out = report(zlb, first_run(AB, "B"), out=tmp_path / "run.html")
    assert r.rc == 0, r
    dom = assert_seen(out, tmp_path, {"xy": 1})
    assert len(dom.all("circle")) == 6
