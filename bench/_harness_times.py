"""A pytest plugin for bench/worker_mode.py's harness mode: each test's time and
outcome, appended to $ZLB_BENCH_TIMES as it ends, so that a harness stopped at
its budget (pytest writes its junit XML only at the end) still says what it
finished. One JSON object per line: {"node", "when", "outcome", "duration"}."""
import json
import os


def pytest_runtest_logreport(report):
    path = os.environ.get("ZLB_BENCH_TIMES")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"node": report.nodeid, "when": report.when,
                            "outcome": report.outcome, "duration": report.duration}) + "\n")
