"""zlbench.results: results.jsonl rows and events.jsonl facts (always loaded first).

- pytest_configure opens $ZLB_RUN_DIR/results.jsonl and events.jsonl (append,
  one JSON object per line, flushed per line) and writes a PLUGIN event.
  Without ZLB_RUN_DIR every zlbench plugin stays inactive (said once on stderr).
- PROVENANCE once collection is done (torch is importable by then).
- TEST_OUTCOME for each setup/call/teardown report.
- Rows: a FlagGems benchmark hands each dtype's BenchmarkResult on in one of
  three ways, all wrapped (the originals are always called):
    * base.py's Benchmark.run(): `update_result(self.op_name, asdict(result))`
      (a global of benchmark/base.py looked up at call time), then
      `emit_record_logger(result.to_json())`;
    * test_blas_perf_parallel.py's run(): `result.to_json()` alone;
    * test_convert_weight_to_int4pack.py and its kin: `update_result` imported
      into the test module itself, given `result.to_json()` (a JSON string).
  So update_result is wrapped wherever a module of the benchmark package holds
  it, and BenchmarkResult.to_json on the class; rows are written from the
  first of the two that sees a result, once (result_key). Each metric of the
  BenchmarkResult becomes one row, paired with the
  measurements the timing plugin recorded, in order: latency_base (torch) then
  latency (gems), each only where not None. A measurement is attributed only
  when the value it returned is the metric's latency; otherwise the row gets
  null there and a WARNING event says so. Leftover measurements are dropped
  at teardown (a failing row raises pytest.fail before update_result).
"""

import dataclasses
import importlib
import json
import os
import sys

import pytest

from . import _env, _io, _markers, _state

NAME = "zlbench.results"


def pytest_configure(config):
    if not _io.require(NAME):
        return
    _io.plugin(NAME, "ready", "writing %s and %s under %s"
               % (_io.RESULTS, _io.EVENTS, _io.sink().run_dir))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    if _state.sink is None:          # inactive, or configure refused the run dir
        return
    provenance()          # a session that never finished collecting
    _io.close()


def pytest_collection_finish(session):
    if not _io.active(NAME):
        return
    provenance()
    patch_result_sinks()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logstart(nodeid, location):
    _state.nodeid = nodeid
    _state.reset_pending()
    _state.results_written.clear()
    _state.call_failed = False


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    # A benchmark module imported after collection still gets its rows.
    if _io.active(NAME):
        patch_result_sinks()


def pytest_runtest_logreport(report):
    if not _io.active(NAME):
        return
    _io.event(_markers.EVENT_TEST_OUTCOME, nodeid=report.nodeid, when=report.when,
              outcome=report.outcome, reason=_report_reason(report),
              duration_s=getattr(report, "duration", None),
              xfail=hasattr(report, "wasxfail"))
    if report.when in ("setup", "call") and report.outcome != "passed":
        _state.call_failed = True
    if report.when == "teardown":
        n = _state.reset_pending()
        if n and not _state.call_failed:
            _io.warning(NAME, "%d measurement(s) of a passing test were not paired "
                        "with any row and were dropped" % n, count=n)


def _report_reason(report):
    if hasattr(report, "wasxfail"):
        return str(report.wasxfail) or None
    lr = report.longrepr
    if report.outcome == "skipped":
        if isinstance(lr, tuple) and len(lr) == 3:
            text = str(lr[2])
            return text[len("Skipped: "):] if text.startswith("Skipped: ") else text
        return None if lr is None else _io.one_line(lr, 2000)
    if report.outcome == "failed":
        crash = getattr(lr, "reprcrash", None)
        if crash is not None and getattr(crash, "message", None):
            return _io.one_line(crash.message, 2000)
        text = "" if lr is None else str(lr).strip()
        return _io.one_line(text.splitlines()[-1], 2000) if text else None
    return None


# --- provenance --------------------------------------------------------------------

def provenance():
    """PROVENANCE, once per process. Every field that cannot be had is null."""
    if "provenance" in _state.said:
        return
    _state.said.add("provenance")
    f = dict.fromkeys(("torch", "torch_git", "torch_cuda", "triton", "triton_git",
                       "triton_path", "package", "package_version", "gpu_name",
                       "gpu_uuid", "device_count", "capability"))
    f["python"] = sys.version.split()[0]
    torch = _try_import("torch")
    if torch is not None:
        f["torch"] = _guard(lambda: str(torch.__version__))
        f["torch_cuda"] = _guard(lambda: torch.version.cuda)
        f["torch_git"] = _guard(lambda: torch.version.git_version)
    triton = _try_import("triton")
    if triton is not None:
        f["triton"] = _guard(lambda: str(triton.__version__))
        f["triton_path"] = _guard(lambda: os.path.dirname(os.path.abspath(triton.__file__)))
        # Source builds (FlagTree) may carry their commit; wheels do not. zlb
        # also fingerprints the compiled library, which tells builds apart.
        f["triton_git"] = _guard(lambda: getattr(triton, "__git_version__", None)
                                 or getattr(triton, "git_version", None))
    pkg_name = _env.package()
    if pkg_name is None:
        pkg_name = next((n for n in ("flag_gems", "flaggems_vllm") if n in sys.modules),
                        None)
    f["package"] = pkg_name
    if pkg_name is not None:
        pkg = sys.modules.get(pkg_name) or _try_import(pkg_name)
        if pkg is not None:
            f["package_version"] = _guard(lambda: str(pkg.__version__))
    if torch is not None:
        cuda = getattr(torch, "cuda", None)
        if cuda is not None and _guard(cuda.is_available):
            idx = _guard(cuda.current_device)
            idx = 0 if idx is None else idx
            props = _guard(lambda: cuda.get_device_properties(idx))
            f["gpu_name"] = _guard(lambda: str(props.name)) if props is not None else None
            if f["gpu_name"] is None:
                f["gpu_name"] = _guard(lambda: str(cuda.get_device_name(idx)))
            if props is not None:
                f["gpu_uuid"] = _guard(lambda: _uuid_text(props.uuid))
                f["capability"] = _guard(lambda: "%d.%d" % (props.major, props.minor))
        if cuda is not None:
            f["device_count"] = _guard(cuda.device_count)
    _io.event("PROVENANCE", **f)


def _uuid_text(u):
    s = str(u)
    if not s:
        return None
    return s if s.startswith("GPU-") else "GPU-" + s


def _try_import(name):
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def _guard(fn):
    try:
        return fn()
    except Exception:
        return None


# --- rows ------------------------------------------------------------------------------

def base_modules():
    """Loaded modules that look like FlagGems' benchmark/base.py."""
    out = []
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == "base" or name.endswith(".base")):
            continue
        if isinstance(getattr(mod, "Benchmark", None), type) and \
                callable(getattr(mod, "update_result", None)):
            out.append(mod)
    return out


def patch_result_sinks():
    """Wrap update_result in every loaded benchmark base module and in every
    module of the same package that imported it by name, and to_json of the
    BenchmarkResult class the base modules use. Idempotent; returns how many
    functions were wrapped now."""
    n = 0
    wrappers = {}              # id of an original update_result -> its wrapper
    packages = set()
    for mod in base_modules():
        cur = mod.update_result
        if not getattr(cur, "_zlb_wrapped", False):
            mod.update_result = wrap_update_result(cur)
            n += 1
        wrappers[id(mod.update_result.__wrapped__)] = mod.update_result
        packages.add(mod.__name__.rpartition(".")[0])
        cls = getattr(mod, "BenchmarkResult", None)
        to_json = getattr(cls, "to_json", None)
        if isinstance(cls, type) and callable(to_json) and \
                not getattr(to_json, "_zlb_wrapped", False):
            cls.to_json = wrap_to_json(to_json)
            n += 1
    for name, mod in list(sys.modules.items()):
        if mod is None or name.rpartition(".")[0] not in packages:
            continue
        cur = getattr(mod, "update_result", None)
        w = wrappers.get(id(cur))
        if w is not None and w.__wrapped__ is cur:
            mod.update_result = w
            n += 1
    return n


def wrap_update_result(original):
    def update_result(op, data, *args, **kwargs):
        try:
            write_rows(json.loads(data) if isinstance(data, str) else data)
        except Exception as e:  # never let bookkeeping break the benchmark
            _io.warning(NAME, "rows not written: %s: %s"
                        % (type(e).__name__, _io.one_line(e)))
        return original(op, data, *args, **kwargs)

    update_result._zlb_wrapped = True
    update_result.__wrapped__ = original
    return update_result


def wrap_to_json(original):
    def to_json(self, *args, **kwargs):
        try:
            write_rows(dataclasses.asdict(self) if dataclasses.is_dataclass(self)
                       else dict(vars(self)))
        except Exception as e:  # never let bookkeeping break the benchmark
            _io.warning(NAME, "rows not written: %s: %s"
                        % (type(e).__name__, _io.one_line(e)))
        return original(self, *args, **kwargs)

    to_json._zlb_wrapped = True
    to_json.__wrapped__ = original
    return to_json


def result_key(data):
    """What tells one BenchmarkResult from another within a test, the same
    whether it came as asdict() or through JSON (which turns a shape's
    torch.Size into a list, so shapes are left out; latencies survive JSON)."""
    metrics = tuple((m.get("latency_base"), m.get("latency"), m.get("error_msg"))
                    for m in (m if isinstance(m, dict) else vars(m)
                              for m in data.get("result") or []))
    return (data.get("op_name"), _plain(data.get("dtype")), _plain(data.get("mode")),
            metrics)


def shape_text(detail):
    """Size Detail exactly as upstream's table prints it."""
    return "N/A" if detail is None else "%s" % (detail,)


def write_rows(data):
    key = result_key(data)
    if key in _state.results_written:
        return
    _state.results_written.add(key)
    metrics = data.get("result") or []
    op_name = data.get("op_name")
    dtype = data.get("dtype")
    for index, m in enumerate(metrics):
        m = m if isinstance(m, dict) else vars(m)
        lat_base = m.get("latency_base")
        lat = m.get("latency")
        where = "%s %s row %d" % (op_name, dtype, index)
        torch_m = _take(lat_base, "torch", where) if lat_base is not None else None
        gems_m = _take(lat, "gems", where) if lat is not None else None
        _io.row({
            "kind": "row",
            "nodeid": _state.nodeid,
            "op": _op(),
            "op_name": op_name,
            "dtype": None if dtype is None else str(dtype),
            "mode": _plain(data.get("mode")),
            "level": _plain(data.get("level")),
            "index": index,
            "status": "SUCCESS" if m.get("error_msg") is None else "FAILED",
            "error": m.get("error_msg"),
            "shape_detail": shape_text(m.get("shape_detail")),
            "latency_base_ms": lat_base,
            "latency_ms": lat,
            "speedup": m.get("speedup"),
            "gbps_base": m.get("gbps_base"),
            "gbps": m.get("gbps"),
            "tflops": m.get("tflops"),
            "torch": torch_m,
            "gems": gems_m,
        })


def _plain(v):
    if v is None or isinstance(v, str):
        return v
    return str(getattr(v, "value", v))


def _same(a, b):
    try:
        return bool(a == b)
    except Exception:
        return False


def _take(value, role, where):
    """The record of the pending measurement that returned value, or None."""
    pend = _state.pending
    for i, p in enumerate(pend):
        if _same(p["value"], value):
            if i:
                _io.warning(NAME, "%d measurement(s) before the %s measurement of %s "
                            "matched no metric and were dropped" % (i, role, where),
                            count=i)
            del pend[: i + 1]
            hint = p.get("role_hint")
            if hint is not None and hint != role:
                _io.warning(NAME, "the measurement paired as %s of %s was taken as %s"
                            % (role, where, hint), role=role, role_hint=hint)
            return p["record"]
    _io.warning(NAME, "no measurement returned the %s latency %r of %s: the row "
                "carries no %s measurement" % (role, value, where, role),
                role=role, pending=len(pend))
    return None


def _op():
    op = _env.op()
    if op:
        return op
    name = (_state.nodeid or "").split("::")[-1].split("[")[0]
    return name[5:] if name.startswith("test_") else (name or None)
