"""Options, Config and result bookkeeping of the fake FlagGems benchmark suites.

As upstream: `Config = None` at import and a BenchConfig built in
pytest_configure (base.py imports it at collection, after configure, so both
hold the same object); update_result(op, data) appends to TEST_RESULTS only
with --record json; the same options with the same choices.
"""

import json
import logging
import os

import pytest
import torch

from ._package import NAME as PACKAGE
from ._package import gems as flag_gems

torch_device_fn = flag_gems.runtime.torch_device_fn

from . import consts

device = flag_gems.device
vendor_name = flag_gems.vendor_name
recordLogger = logging.getLogger(PACKAGE + "_benchmark")
recordLogger.propagate = False
Config = None

BUILTIN_MARKS = ("parametrize", "skip", "skipif", "xfail", "usefixtures",
                 "filterwarnings", "timeout", "tryfirst", "trylast")
TEST_RESULTS = {}
REPORT_FILE = "benchmark_result.json"


def update_result(op, data):
    if not Config.record_json:
        return
    TEST_RESULTS.setdefault(op, {}).setdefault("details", []).append(data)


def emit_record_logger(message):
    if Config.record_log:
        recordLogger.info(message)


class BenchConfig:
    def __init__(self):
        self.mode = consts.BenchMode.KERNEL
        self.bench_level = consts.BenchLevel.COMPREHENSIVE
        self.warm_up = consts.DEFAULT_WARMUP_TIME
        self.repetition = consts.DEFAULT_ITER_TIME
        self.record_log = False
        self.record_json = False
        self.user_desired_dtypes = None
        self.user_desired_metrics = None
        self.shape_file = os.path.join(os.path.dirname(__file__), "core_shapes.yaml")
        self.query = False
        self.parallel = 0


def pytest_addoption(parser):
    parser.addoption("--mode", action="store", default="kernel", required=False,
                     choices=[m.value for m in consts.BenchMode],
                     help="how to measure latency")
    parser.addoption("--level", action="store", default="comprehensive",
                     required=False, choices=[lv.value for lv in consts.BenchLevel],
                     help="comprehensive or core")
    parser.addoption("--warmup", default=consts.DEFAULT_WARMUP_TIME,
                     help="warm-up time (ms)")
    parser.addoption("--iter", default=consts.DEFAULT_ITER_TIME,
                     help="repetition time (ms)")
    parser.addoption("--query", action="store_true", default=False,
                     help="query mode")
    parser.addoption("--metrics", action="append", default=None, required=False,
                     choices=sorted(consts.ALL_AVAILABLE_METRICS),
                     help="metrics to benchmark")
    parser.addoption("--dtypes", action="append", default=None, required=False,
                     choices=[str(d).split(".")[-1] for d in
                              consts.FLOAT_DTYPES + consts.INT_DTYPES +
                              consts.BOOL_DTYPES + [torch.cfloat]],
                     help="dtypes to benchmark")
    parser.addoption("--shape_file", action="store",
                     default=os.path.join(os.path.dirname(__file__), "core_shapes.yaml"),
                     required=False, help="shape file")
    try:
        parser.addoption("--record", action="store", default="none", required=False,
                         choices=["none", "log", "json"], help="record results")
        parser.addoption("--output", default=REPORT_FILE, help="JSON report path")
    except ValueError:
        pass
    parser.addoption("--parallel", action="store", type=int, default=0,
                     help="multi-GPU parallel shapes")


def pytest_configure(config):
    global Config, REPORT_FILE
    Config = BenchConfig()
    Config.mode = consts.BenchMode(config.getoption("--mode"))
    Config.query = config.getoption("--query")
    Config.bench_level = consts.BenchLevel(config.getoption("--level"))
    Config.warm_up = int(config.getoption("--warmup"))
    Config.repetition = int(config.getoption("--iter"))
    names = config.getoption("--dtypes")
    Config.user_desired_dtypes = [getattr(torch, d) for d in names] if names else names
    Config.user_desired_metrics = config.getoption("--metrics")
    Config.shape_file = config.getoption("--shape_file")
    Config.record_log = config.getoption("--record") == "log"
    Config.record_json = config.getoption("--record") == "json"
    Config.parallel = int(config.getoption("--parallel") or 0)
    if Config.record_json:
        Config.output = config.getoption("--output")
        REPORT_FILE = Config.output


@pytest.fixture(scope="function", autouse=True)
def clear_function_cache():
    yield
    torch_device_fn.empty_cache()


@pytest.fixture(scope="module", autouse=True)
def clear_module_cache():
    yield
    torch_device_fn.empty_cache()


def get_reason(report):
    if hasattr(report.longrepr, "reprcrash"):
        return report.longrepr.reprcrash.message
    if isinstance(report.longrepr, tuple):
        return report.longrepr[2]
    return str(report.longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    out = yield
    report = out.get_result()
    marks = [m.name for m in item.iter_markers() if m.name not in BUILTIN_MARKS]
    report.opid = marks[0] if marks else item.nodeid


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    if not Config.record_json:
        return
    entry = TEST_RESULTS.setdefault(report.opid, {})
    if report.when == "setup" and report.outcome == "skipped":
        entry.update(result="skipped", reason=get_reason(report),
                     test_case=report.nodeid)
    elif report.when == "call":
        entry.update(result=report.outcome, test_case=report.nodeid,
                     reason=get_reason(report)
                     if report.outcome in ("skipped", "failed") else None)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not Config.record_json:
        return
    data = TEST_RESULTS
    if os.path.exists(REPORT_FILE):
        with open(REPORT_FILE) as f:
            old = json.load(f)
        old.update(TEST_RESULTS)
        data = old
    with open(REPORT_FILE, "w") as f:
        json.dump(data, f, indent=2, default=str)
