"""What a batch tells: --junit FILE for CI systems (validated with
xml.etree; escaping names from the data is test_junit.c's and
test_compare.py's), -q (the closing line and the failures only)."""
import xml.etree.ElementTree as ET

from test_batch import batch, status, world  # noqa: F401


def test_junit_has_one_case_per_operator(world, tmp_path):  # noqa: F811
    junit = tmp_path / "ci" / "zlb.xml"            # its directory is made
    r = batch(world, "--ops", "b_pass", "b_fail", "b_skipif", "--retries", "0",
              "--junit", str(junit))
    assert r.rc == 1, r
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    assert suite.get("name") == "zlb batch b"
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "1")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"b_pass", "b_fail", "b_skipif"}
    assert all(c.get("classname") == "zlb.batch.main" for c in cases.values())
    assert list(cases["b_pass"]) == [] and float(cases["b_pass"].get("time")) > 0
    fail = cases["b_fail"].find("failure")
    assert fail.get("message").startswith("FAIL") and "zlb run exit 1" in fail.get("message")
    assert "run directory" in fail.text
    assert cases["b_skipif"].find("skipped") is not None
    # the report says what the table says
    assert {k: v["status"] for k, v in status(world.bdir).items()} == {
        "b_pass": "PASS", "b_fail": "FAIL", "b_skipif": "SKIP"}


def test_junit_counts_a_timeout_as_a_failure(world, tmp_path):  # noqa: F811
    # the hanging operator alone: the short deadline is its, no other operator's
    junit = tmp_path / "t.xml"
    r = batch(world, "--ops", "b_hang", "--op-timeout", "2", "--grace", "1",
              "--junit", str(junit))
    assert r.rc == 1, r
    (case,) = ET.parse(junit).getroot().iter("testcase")
    assert case.get("name") == "b_hang"
    assert case.find("failure").get("message").startswith("TIMEOUT")


def test_quiet_shows_the_result_and_the_failures(world):  # noqa: F811
    r = batch(world, "--ops", "b_pass", "b_fail", "--retries", "0", "-q")
    assert r.rc == 1, r
    lines = r.out.splitlines()
    assert len(lines) == 2, r
    assert "FAIL    b_fail" in lines[0]
    assert lines[1].startswith("zlb batch: 1 PASS, 0 SKIP, 1 FAIL, 0 TIMEOUT in ")
    r = batch(world, "--ops", "b_pass", "-q", "-v")
    assert r.rc == 2 and "--quiet and --verbose contradict each other" in r.err, r


def test_children_keep_their_whole_output(world):  # noqa: F811
    # the retry policy reads each child's console log for upstream's sentences
    r = batch(world, "--ops", "b_pass")
    assert r.rc == 0, r
    log = (world.bdir / ".logs" / "main" / "b_pass.log").read_text()
    assert "test session starts" in log and "PASSED" in log
