"""What a batch tells: --junit FILE for CI systems (validated with
xml.etree; escaping names from the data is test_junit.c's and
test_compare.py's), --status (per device lane, the card and its counts),
-q (the closing line and the failures only)."""
import re
import signal
import xml.etree.ElementTree as ET

from test_batch import (FAKE_GPU, assert_nothing_left, batch, fake_uuid, popen_batch,  # noqa: F401
                        recorded, status, wait_for, world)

# --pin shards these by a hash of their spec over both devices (test_batch.py's
# two-device test shows they land on both)
TWO_GPU_OPS = ["b_slow", "b_pass", "b_flaky", "b_skipif", "b_xfail", "b_fail"]
TWO_GPUS = {"FAKE_CUDA_DEVICES": "2"}


def two_gpu_batch(world, *args):  # noqa: F811
    r = batch(world, "--ops", *TWO_GPU_OPS, "--devices", "0,1", "--pin", *args, env=TWO_GPUS)
    assert r.rc == 1, r
    st = status(world.bdir)
    assert {row["device"] for row in st.values()} == {"0", "1"}, st
    return st


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
    # passed: nothing but where it ran
    assert [c.tag for c in cases["b_pass"]] == ["properties"]
    assert float(cases["b_pass"].get("time")) > 0
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


def test_a_refused_run_option_is_one_sentence_before_any_operator(world):  # noqa: F811
    r = batch(world, "--ops", "b_pass", "b_fail", "--preload-steady", "0.002")
    assert r.rc == 2, r
    assert r.err.count("--preload-steady 0.002 stops a preload early") == 1, r.err
    assert "b_pass" not in r.out and "b_fail" not in r.out, r.out


def test_children_keep_their_whole_output(world):  # noqa: F811
    # the retry policy reads each child's console log for upstream's sentences
    r = batch(world, "--ops", "b_pass")
    assert r.rc == 0, r
    log = (world.bdir / ".logs" / "main" / "b_pass.log").read_text()
    assert "test session starts" in log and "PASSED" in log


def test_junit_says_where_each_operator_ran(world, tmp_path):  # noqa: F811
    junit = tmp_path / "zlb.xml"
    st = two_gpu_batch(world, "--junit", str(junit))
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert set(cases) == set(TWO_GPU_OPS)
    for op, case in cases.items():
        props = {p.get("name"): p.get("value") for p in case.find("properties")}
        dev = st[op]["device"]
        assert props == {"backend": st[op]["backend"], "device": dev, "gpu": FAKE_GPU,
                         "gpu_uuid": fake_uuid(dev)}, (op, props)
        assert props["backend"]          # the table names it: so does the report
    # <properties> is the case's first child, before the failure
    assert [c.tag for c in cases["b_fail"]] == ["properties", "failure"]


def lanes(out):
    """--status's lane lines: {device: (card, {status: n})}."""
    found = {}
    for m in re.finditer(r"^  device (\d+): (.*?): (\d+) operator\(s\): (.*)$", out, re.M):
        counts = {k: int(n) for n, k in (c.split() for c in m.group(4).split(", "))}
        assert sum(counts.values()) == int(m.group(3)), m.group(0)
        found[m.group(1)] = (m.group(2), counts)
    return found


def test_status_shows_each_device_lane_and_its_card(world):  # noqa: F811
    st = two_gpu_batch(world)
    r = world.cmd("batch", "--batch-dir", str(world.bdir), "--status")
    assert r.rc == 0, r
    got = lanes(r.out)
    want = {}
    for row in st.values():
        want.setdefault(row["device"], {}).setdefault(row["status"], 0)
        want[row["device"]][row["status"]] += 1
    assert {d: c for d, (_, c) in got.items()} == want, r.out
    # the fake uuids differ in their last byte only: kept whole, so the cards stay apart
    assert {d: card for d, (card, _) in got.items()} == \
        {d: f"{FAKE_GPU} {fake_uuid(d)}" for d in ("0", "1")}, r.out


def test_status_of_one_device_has_no_lanes(world):  # noqa: F811
    assert batch(world, "--ops", "b_pass", "b_fail", "--retries", "0").rc == 1
    r = world.cmd("batch", "--batch-dir", str(world.bdir), "--status")
    assert r.rc == 0 and "2 operator(s): 1 PASS" in r.out, r
    assert not lanes(r.out), r.out


def test_status_names_a_running_operators_device(world):  # noqa: F811
    p = popen_batch(world, "--ops", "b_hang", "b_pass", "--devices", "0,1",
                    "--op-timeout", "60", "--grace", "1", env=TWO_GPUS)
    assert wait_for(lambda: any(n.startswith("b_hang.") for n, _, _ in recorded(world)))
    assert wait_for(lambda: status(world.bdir)["b_pass"]["status"] == "PASS")
    dev = status(world.bdir)["b_hang"]["device"]
    r = world.cmd("batch", "--batch-dir", str(world.bdir), "--status")
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=30)
    assert r.rc == 0, r
    assert f"    running: b_hang on device {dev}\n" in r.out, r.out
    # the lanes: the running operator's own, where no card is recorded yet, and b_pass's
    got = lanes(r.out)
    assert got[dev][1] == {"RUNNING": 1}, r.out
    assert_nothing_left(world)


def test_report_of_a_two_gpu_batch_names_each_card(world):  # noqa: F811
    from test_report import Tables
    st = two_gpu_batch(world)
    out = world.bdir.parent / "report.html"
    r = world.cmd("report", str(world.bdir), "-o", str(out))
    assert r.rc == 0, r
    t = Tables(out.read_text())
    head, *rows = t.tables["operators"]
    # the fake uuids differ in their last byte: each card keeps its whole uuid
    assert {row[0]: row[head.index("GPU")] for row in rows} == {
        f"main/{op}": f"{FAKE_GPU} {fake_uuid(st[op]['device'])}" for op in TWO_GPU_OPS}
    per_device = {d: sum(row["device"] == d for row in st.values()) for d in ("0", "1")}
    assert sorted(row[1:] for row in t.tables["devices"][1:]) == sorted(
        [FAKE_GPU, fake_uuid(d), str(n)] for d, n in per_device.items())
