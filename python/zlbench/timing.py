"""zlbench.timing: replaces triton.testing.do_bench.

FlagGems' Benchmark.get_latency looks triton.testing.do_bench up at call
time, and so does Triton's autotuner (through the driver's benchmarker), so
replacing the module attribute reaches both. Both call shapes are accepted:

    do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None,
             return_mode="mean")          # FlagGems: return_mode="median"
    do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8))   # the autotuner: a list

An outermost call is a measurement: what it took (timer, statistics, samples,
markers, the value returned) goes to the shared pending list, where the
results plugin pairs it with the metric it became (torch or gems). A call
made while another of ours is running (autotuning triggered by the first,
eager call of a measurement) has the role "tune" and is not recorded. An
autotune replay point that falls back while a measurement runs (the tuner
chose live at that first call) is that measurement's: its record gets the
marker AUTOTUNE_REPLAY_FALLBACK and replay_fallbacks [{reason, kernel}].

ZLB_TIMER=direct: the median of ZLB_DIRECT_REPEAT calls of the original
do_bench with the same arguments (one call when quantiles are asked for or
return_mode is "all": the result is then a sequence, and a median across calls
of a sequence is undefined).

ZLB_TIMER=graph: capture and replay (see _graph.py), on torch's device module
ZLB_TORCH_MODULE (torch.cuda, torch.musa), the replays timed by libzlbtimer
through the driver (ZLB_GRAPH_REPLAY=driver) or between the module's own
events (events, _eventtimer.py: torch_musa hands out no raw graph exec). When
capture, instantiation, warm-up or replay fails, the error is one of three
kinds, by the exact texts of the backend (compared with the error and what led
to it):
- ZLB_CAPTURE_POISON: the context is unusable for the rest of the process
  (MUSA's "unknown error"): CAPTURE_POISONED event and marker, the error
  re-raised, and every later call of this process refuses to measure
  (a warm worker then ends: _worker_reset.device_unusable);
- ZLB_CAPTURE_FATAL: the device is broken: CAPTURE_FATAL event and marker,
  the error re-raised;
- anything else: this one call falls back to direct timing, with a
  BENCHMARK_DIRECT_NO_CUDAGRAPH event and (for torch/gems calls) a marker
  line on stdout.
Matching is exact on purpose: torch appends "... to enable device-side
assertions." to every CUDA error, so a loose match would make every refusal
fatal. A test named in ZLB_CAPTURE_DENY (its function name without test_) is
never captured: each call is direct-timed with phase "deny".

The graph timer's stopping rule and sample definition come from
ZLB_MIN_SAMPLES, ZLB_NOISE_TARGET, ZLB_MAX_WALL_MS, ZLB_L2 and ZLB_CLOCK_FLOOR
(the minimum GPU time is the caller's rep, FlagGems' --iter). A measured graph
holding memcpy (memset) nodes times the copy engine, another caliber: the
measurement gets the marker GRAPH_MEMCPY_NODES (GRAPH_MEMSET_NODES), an event
of that name, and, but for tuning calls, a line
`GRAPH_MEMCPY_NODES count=<n> role=<r>` on stdout. A measured graph without
any kernel node (a view such as torch.conj captures nothing; a plain copy
only copy-engine nodes) is not a measurement: the marker GRAPH_NO_KERNELS
(besides the copy-engine markers that apply), its event, and but for tuning
calls `GRAPH_NO_KERNELS nodes=<n> role=<r>` on stdout.

Under IR capture (zlbench.ir active, _state.ir set): the first eager call of
each outermost torch/gems measurement runs through ir.first_call, with
Triton's launch hook on, and the measurement record gains "launches" (the
kernels that call launched; null for a measurement in the quantiles form).
Graph timing already makes that call (step 1 of _graph.measure); direct
timing gets one extra eager call before upstream's do_bench, only then. An
autotuner's timing call (nested, or in the quantiles form) runs inside
ir.tuning(): its compiles are "tune" and its launches are not attributed.
Without IR capture nothing here changes.

ZLB_SWEEP_ONLY=1 (a shard of zlb run --parallel-warmup-gpus): an outermost
measurement calls its function once and times nothing (value 1.0 ms, timer
"sweep"); the autotuner's timing calls that first call makes are timed as in
any run, so a shard chooses configs exactly as the serial sweep would. The
shard's rows are thrown away with it; its autotune record is what counts.
"""

import contextlib
import gc
import sys

import pytest

from .results import shape_text
from . import (_capture_errors, _device, _elasticity, _env, _eventtimer, _graph, _graph_plan,
               _io, _markers, _preload, _record, _rule, _spin, _state, _stats, _tune_tally)

NAME = "zlbench.timing"
RETURN_MODES = ("min", "max", "mean", "median", "all")
DIRECT_MARKER = _markers.MARKER_DIRECT
FATAL_MARKER = _markers.MARKER_CAPTURE_FATAL
POISONED_MARKER = _markers.MARKER_CAPTURE_POISONED


# --- plugin hooks ------------------------------------------------------------

def _settings():
    """The environment this plugin reads, checked (EnvError otherwise)."""
    return {
        "timer": _env.timer(),
        "sweep_only": _env.sweep_only(),
        "repeat": _env.direct_repeat(),
        "max_warm": _env.warmup_max_calls(),
        "fatal": _env.capture_fatal(),
        "poison": _env.capture_poison(),
        "deny": _env.capture_deny(),
        "module": _env.torch_module(),
        "replay": _env.graph_replay(),
        "lib": _env.timer_lib(),
        "tune_probes": _env.tune_placement_probes(),
        "tune_rule": _env.tune_rule(),
        "rule": _rule.Rule(min_samples=_env.min_samples(),
                            noise_target=_env.noise_target(),
                            max_wall_ms=_env.max_wall_ms(), l2=_env.l2(),
                            clock_floor=_env.clock_floor(),
                            power_duty=_env.power_duty(),
                            power_settle_ms=_env.power_settle_ms(),
                            preload_ms=_env.preload_ms(),
                            preload_steady=_env.preload_steady(),
                            placements=_env.placements(),
                            replay_target_ms=_env.replay_target_ms(),
                            placement_probes=_env.placement_probes(),
                            clock_elasticity=_env.clock_elasticity()),
    }


# The replay's graph plan, loaded once per process: path -> Plan.
_plans = {}
# Whether pytest_collection_finish froze the collector's view of the imports.
_frozen = False


def _plan():
    """The Plan that ZLB_GRAPH_PLAN names, or None (EnvError if unusable)."""
    path = _env.graph_plan()
    if path is None:
        return None
    if path not in _plans:
        try:
            _plans[path] = _graph_plan.load(path)
        except _graph_plan.PlanError as e:
            raise _env.EnvError("ZLB_GRAPH_PLAN: %s" % e) from None
    return _plans[path]


def _planned_shape(ctx):
    """The GraphShape the recording run measured for this call, or None (not
    a replay, a tuning call, an unknown role, or no entry left: a
    GRAPH_SHAPE_NOT_REPLAYED event then)."""
    plan = _plan()
    if plan is None or ctx["role"] not in ("torch", "gems"):
        return None
    shape = plan.take(_state.nodeid, ctx["op_name"], ctx["dtype"], ctx["shape_detail"],
                      ctx["role"])
    if shape is None:
        _io.event(_markers.EVENT_SHAPE_NOT_REPLAYED, op=_op(), op_name=ctx["op_name"],
                  dtype=ctx["dtype"], role=ctx["role"], shape_detail=ctx["shape_detail"],
                  nodeid=_state.nodeid, plan=plan.source)
    return shape


def pytest_configure(config):
    if not _io.require(NAME):
        return
    try:
        s = _settings()
        plan = _plan()
    except _env.EnvError as e:
        raise pytest.UsageError("%s: %s" % (NAME, e))
    try:
        install()
    except ImportError as e:
        _io.plugin(NAME, "inactive", "triton cannot be imported (%s): do_bench "
                   "left alone" % _io.one_line(e))
        return
    detail = "timer=%s direct_repeat=%d" % (s["timer"], s["repeat"])
    if s["timer"] == "graph":
        r = s["rule"]
        detail += (" device_module=torch.%s replay=%s warmup_max_calls=%d "
                   "capture_fatal_texts=%d capture_poison_texts=%d capture_deny=%s "
                   "min_samples=%d noise_target=%g max_wall_ms=%g l2=%s clock_floor=%g "
                   "placements=%d lib=%s" % (
                       s["module"], s["replay"], s["max_warm"], len(s["fatal"]),
                       len(s["poison"]), ",".join(sorted(s["deny"])) or "-",
                       r.min_samples, r.noise_target, r.max_wall_ms, r.l2,
                       r.clock_floor, r.placements,
                       s["lib"] if s["replay"] == "driver" else "-"))
        detail += (" replay_target_ms=%g placement_probes=%d clock_elasticity=%d "
                   "preload_ms=%g preload_steady=%g" % (
                       r.replay_target_ms, r.placement_probes, r.clock_elasticity,
                       r.preload_ms, r.preload_steady))
        if plan is not None:
            detail += " graph_plan=%d" % plan.size
    _io.plugin(NAME, "ready", detail)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    # What collection imported (torch, triton, flag_gems, the benchmark
    # modules) stays alive to the end of the session: frozen, the gc.collect()
    # FlagGems' Benchmark.run makes after every shape, and the collector's
    # own full passes, no longer walk it (0.2 s each beside torch on an H100
    # host; a seventh of a fake run's measured process). Unfrozen at
    # unconfigure, so that a warm worker's reset collects whatever of it an
    # operator left as garbage.
    global _frozen
    if _state.original_do_bench is not None and not _frozen:
        gc.collect()
        gc.freeze()
        _frozen = True


def pytest_unconfigure(config):
    global _frozen
    if _frozen:
        gc.unfreeze()
        _frozen = False
    _spin.release()
    _elasticity.release()
    uninstall()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logstart(nodeid, location):
    # The results plugin pairs and discards; alone, this plugin only forgets.
    _state.nodeid = nodeid
    _state.depth = 0
    _state.capturing = False
    _tune_tally.reset()
    # Said once per test: a deny-list key that names this test's file.
    _deny_key_names_file(nodeid)


def pytest_runtest_logfinish(nodeid, location):
    _tune_tally.emit(nodeid)


def install():
    """Put do_bench in place of triton.testing.do_bench (ImportError without
    triton). Idempotent."""
    import triton.testing as tt

    _tune_tally.wrap_graph_bench(tt)
    cur = tt.do_bench
    if getattr(cur, "_zlb_wrapped", False):
        return
    _state.original_do_bench = cur
    tt.do_bench = do_bench


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    # Before the benchmark's conftest imports flag_gems, whose LibTuner binds
    # do_bench_cudagraph then: the tally must be what it binds.
    if _env.run_dir() is None:
        return
    try:
        import triton.testing as tt
    except ImportError:
        return      # said at pytest_configure
    _tune_tally.wrap_graph_bench(tt)


def uninstall():
    tt = sys.modules.get("triton.testing")
    if tt is not None and getattr(tt.do_bench, "_zlb_wrapped", False) \
            and _state.original_do_bench is not None:
        tt.do_bench = _state.original_do_bench
    if tt is not None:
        _tune_tally.unwrap_graph_bench(tt)


def _original():
    if _state.original_do_bench is not None:
        return _state.original_do_bench
    import triton.testing as tt

    if getattr(tt.do_bench, "_zlb_wrapped", False):
        raise RuntimeError("zlbench: the original triton.testing.do_bench was lost")
    return tt.do_bench


# --- the replacement -----------------------------------------------------------

def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None,
             return_mode="mean", **extra):
    if return_mode not in RETURN_MODES:
        raise ValueError("return_mode must be one of %s, not %r"
                         % (", ".join(RETURN_MODES), return_mode))
    if _state.poisoned is not None:
        raise RuntimeError("zlbench: not measured: %s; nothing more is measured in this "
                           "process" % _state.poisoned)
    if _state.capturing:
        # Autotuning reached from inside our own capture: it cannot time
        # anything there. Refusing makes the capture fail and fall back.
        raise RuntimeError("zlbench: do_bench called during a CUDA graph capture "
                           "(autotuning inside the captured call)")
    args = dict(warmup=warmup, rep=rep, grad_to_none=grad_to_none,
                quantiles=quantiles, return_mode=return_mode)
    args.update(extra)
    nested = _state.depth > 0
    ctx = _context()
    if nested:
        ctx["role"] = "tune"
    # IR capture: an autotuner's timing call (nested, or the quantiles form)
    # runs as "tune"; an outermost torch/gems measurement gets its first
    # eager call attributed.
    ir = _state.ir
    tuning = nested or quantiles is not None
    attribute = ir if not tuning else None
    if not tuning:
        _state.measure_fallbacks = []      # the autotune replay's, during this one
    _state.depth += 1
    try:
        with _tune_tally.Timed(_state, tuning), \
                ir.tuning() if ir is not None and tuning else contextlib.nullcontext():
            if tuning and _env.tune_rule() == "triton":
                # --tune-rule triton: a config's time only ranks it; Triton's
                # own do_bench takes it, as in FlagGems' harness. It makes no
                # record, so it can never become a row.
                return _original()(fn, **args)
            value, record = _measure(fn, args, ctx, attribute, tuning=tuning)
    finally:
        _state.depth -= 1
        fallbacks = _state.measure_fallbacks
        if not tuning:
            _state.measure_fallbacks = None
    if not tuning and fallbacks:
        _replay_fallbacks(record, fallbacks)
    if not nested:
        _state.pending.append({"value": value, "record": record,
                               "role_hint": ctx["role"], "op_name": ctx["op_name"],
                               "dtype": ctx["dtype"]})
    return value


do_bench._zlb_wrapped = True


def _replay_fallbacks(record, fallbacks):
    """The autotune replay points that fell back while this measurement ran
    (a tuner's first call with a new key is inside it): the marker and
    replay_fallbacks [{reason, kernel}] on its record (protocol section 3)."""
    markers = list(record.get("markers") or [])
    if _markers.MARKER_REPLAY_FALLBACK not in markers:
        markers.append(_markers.MARKER_REPLAY_FALLBACK)
    record["markers"] = markers
    record["replay_fallbacks"] = list(fallbacks)


def _measure(fn, args, ctx, ir=None, tuning=False):
    """(value, record). ir: IR capture's Capture when this measurement's first
    eager call is to be attributed (the record then gets "launches").
    tuning: an autotuner's timing of a config (nested in a measurement, or
    the quantiles form), which gets ZLB_TUNE_PLACEMENT_PROBES probes and,
    under ZLB_TUNE_RULE=budget, no noise target."""
    value, record = _measure_timed(fn, args, ctx, ir, tuning)
    if _state.ir is not None:
        record["launches"] = ctx.get("launches")
    return value, record


def _first_eager(ir, fn, args):
    """Direct timing under IR capture: one eager call of fn with Triton's
    launch hook on, before upstream's do_bench (whose own first call is not
    ours to watch); the launches it saw. Nothing without ir."""
    if ir is None:
        return None
    grad_to_none = args["grad_to_none"]

    def call():
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        fn()

    return ir.first_call(call)


def _measure_timed(fn, args, ctx, ir, tuning=False):
    if not tuning and _env.sweep_only():
        return _sweep_call(fn, args)
    s = _settings()
    if tuning:
        # A config's time ranks it and makes no row: no probes by default,
        # under "budget" the tuner's rep without a noise target, and never
        # the rows' preload or elasticity phase (a second of replays, or a
        # burn that leaves the board at its power cap, per config).
        changes = {"placement_probes": s["tune_probes"], "preload_ms": 0.0,
                   "clock_elasticity": False}
        if s["tune_rule"] == "budget":
            changes["noise_target"] = 0.0
        s["rule"] = s["rule"].but(**changes)
    if s["timer"] == "direct":
        ctx["launches"] = _first_eager(ir, fn, args)
        return _direct(fn, args, s["repeat"], [], None)
    test = _test_function()
    if test is not None and test in s["deny"]:
        why = "capture denied on %s for %s (ZLB_CAPTURE_DENY)" % (
            _env.backend() or "this backend", test)
        ctx["launches"] = _first_eager(ir, fn, args)
        return _fallback(fn, args, "deny", why, ctx, s)
    import torch

    lib, why = _engine(torch, s)
    if lib is None:
        _say_once("nolib", "graph timer unavailable, every call falls back to "
                  "direct timing: %s" % why)
        ctx["launches"] = _first_eager(ir, fn, args)
        return _fallback(fn, args, "replay", why, ctx, s)
    dev = _device.module(torch, s["module"])
    if not dev.is_available():
        why = "torch.%s.is_available() is False" % s["module"]
        _say_once("nocuda", "graph timer unavailable: %s" % why)
        ctx["launches"] = _first_eager(ir, fn, args)
        return _fallback(fn, args, "replay", why, ctx, s)
    if getattr(lib, "replays_graphs", False):
        _say_once("events", "graph replays timed by %s: no clock check, no L2 flush%s, "
                  "no graph inspection, one placement" % (
                      lib.path, " (ZLB_L2=cold is not honoured)"
                      if s["rule"].l2 == "cold" else ""))
    elif not lib.v2:
        _say_once("abi1", "libzlbtimer at %s has ABI version %d (< 2): no noise target, "
                  "L2 flush, clock check or graph inspection; the stopping rule is "
                  "min_samples and min time only%s" % (
                      lib.path, lib.abi, ", ZLB_L2=cold is not honoured"
                      if s["rule"].l2 == "cold" else ""))
    shape = _planned_shape(ctx)
    try:
        m = _graph.measure(torch, lib, fn, args["warmup"], args["rep"],
                           args["grad_to_none"], s["max_warm"], on_rng=_note_rng,
                           rule=s["rule"], ir=ir, shape=shape)
    except _graph.CaptureFailure as cf:
        ctx["launches"] = cf.launches
        reason = _capture_errors.reason(cf.error)
        matched, culprit = _capture_errors.fatal_text(cf.error, s["poison"])
        if matched is not None:
            reason = _io.first_line(culprit)
            _state.poisoned = "the device context was poisoned by a capture failure " \
                "(%s, phase %s, in %s)" % (reason, cf.phase, _state.nodeid)
            _io.event(POISONED_MARKER, op=_op(), op_name=ctx["op_name"],
                      dtype=ctx["dtype"], role=ctx["role"], phase=cf.phase,
                      reason=reason, matched=matched, nodeid=_state.nodeid)
            _io.marker("%s phase=%s reason=%s" % (POISONED_MARKER, cf.phase, reason))
            raise culprit
        matched, culprit = _capture_errors.fatal_text(cf.error, s["fatal"])
        if matched is not None:
            reason = _io.first_line(culprit)
            _io.event(FATAL_MARKER, op=_op(), op_name=ctx["op_name"],
                      dtype=ctx["dtype"], role=ctx["role"], phase=cf.phase,
                      reason=reason, matched=matched, nodeid=_state.nodeid)
            _io.marker("%s phase=%s reason=%s" % (FATAL_MARKER, cf.phase, reason))
            raise culprit
        return _fallback(fn, args, cf.phase, reason, ctx, s)
    ctx["launches"] = m["launches"]
    stats, samples = m["stats"], m["samples"]
    value = _record.pick(stats, samples, args["quantiles"], args["return_mode"])
    rule = s["rule"]
    record = {"timer": "graph"}
    record.update(_record.stat_fields(stats))
    for key in (_graph.V2_RESULT_KEYS + _graph.V3_RESULT_KEYS + ("placement_noise",)
                + _graph.V6_RESULT_KEYS + _graph.V9_RESULT_KEYS):
        record[key] = stats.get(key)
    record["l2"] = m["l2"]
    record["graph"] = m["graph"]
    if lib.v2:
        record.update({"min_samples": rule.min_samples, "min_time_ms": float(args["rep"]),
                       "noise_target": rule.noise_target, "max_wall_ms": rule.max_wall_ms,
                       "clock_floor": rule.clock_floor
                       if getattr(lib, "checks_clock", True) else None})
    else:
        # A version 1 library was asked for min_samples and min time only.
        record.update({"min_samples": rule.min_samples, "min_time_ms": float(args["rep"]),
                       "noise_target": None, "max_wall_ms": rule.max_wall_ms,
                       "clock_floor": None})
    record["replay_target_ms"] = rule.replay_target_ms
    record["graph_shape"] = "replayed" if shape is not None else "settled"
    record.update(m.get("power") or dict.fromkeys(_graph.POWER_KEYS))
    record.update(m.get("spin") or dict.fromkeys(_spin.SPIN_KEYS))
    record.update(m.get("preload") or dict.fromkeys(_preload.KEYS))
    record.update(m["probe"])
    record.update(m.get("elasticity") or dict.fromkeys(_elasticity.KEYS))
    record.update({"calls_per_replay": m["k"], "calls_first": m["k_first"],
                   "warmup_calls": m["warmup_calls"],
                   "markers": m["markers"], "samples_ms": samples, "fallback": None,
                   "phase_ms": m.get("phase_ms")})
    _graph_events(m, ctx, warn=lib.v2 and not getattr(lib, "replays_graphs", False))
    return value, record


def _engine(torch, s):
    """(the replay timer, None) or (None, why not): libzlbtimer for
    ZLB_GRAPH_REPLAY=driver, the device module's events for events."""
    if s["replay"] == "events":
        try:
            return _eventtimer.EventTimer(_device.module(torch, s["module"])), None
        except _device.DeviceModuleError as e:
            return None, str(e)
    return _graph.timer_lib(s["lib"])


def _test_function():
    """The current test's function name without test_ (and without its
    parameters), or None: the deny list's key."""
    node = _state.nodeid or ""
    name = node.split("::")[-1].split("[")[0] if "::" in node else ""
    if not name:
        return None
    return name[5:] if name.startswith("test_") else name


def _deny_key_names_file(nodeid):
    """A deny-list key written as the test's FILE name (test_unique.py for
    test_unique2) matches nothing: say so once per key, as a WARNING."""
    try:
        deny = _env.capture_deny()
    except _env.EnvError:
        return
    if not deny or "::" not in (nodeid or ""):
        return
    stem = nodeid.split("::")[0].rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.endswith(".py") else stem
    stem = stem[5:] if stem.startswith("test_") else stem
    test = _test_function()
    if stem in deny and test != stem and ("deny_file", stem) not in _state.said:
        _state.said.add(("deny_file", stem))
        _io.warning(NAME, "capture deny key %r names the benchmark file test_%s.py, not a "
                    "test function: it denies nothing here (the test is %r; the list is "
                    "keyed by test function name)" % (stem, stem, test))


def _graph_events(m, ctx, warn=True):
    """GRAPH_MEMCPY_NODES / GRAPH_MEMSET_NODES events (and a stdout line, but
    for tuning calls) for a measured graph holding copy-engine nodes, and
    GRAPH_NO_KERNELS for one without a kernel node; a WARNING when a
    version 2 library could not inspect the graph."""
    graph = m["graph"]
    if graph is None:
        if warn and m["graph_why"] and "graph_info" not in _state.said:
            _state.said.add("graph_info")
            _io.warning(NAME, "the measured graph was not inspected: %s" % m["graph_why"],
                        role=ctx["role"])
        return
    for marker, key in ((_graph.MEMCPY_MARKER, "memcpys"),
                        (_graph.MEMSET_MARKER, "memsets")):
        count = graph.get(key) or 0
        if not count:
            continue
        _io.event(marker, op=_op(), op_name=ctx["op_name"], dtype=ctx["dtype"],
                  role=ctx["role"], nodeid=_state.nodeid, count=count,
                  calls_per_replay=m["k"])
        if ctx["role"] != "tune":
            _io.marker("%s count=%d role=%s" % (marker, count, ctx["role"] or "null"))
    if _graph.NO_KERNELS_MARKER in m["markers"]:
        nodes = m["nodes"] if m.get("nodes") is not None else sum(graph.values())
        _io.event(_graph.NO_KERNELS_MARKER, op=_op(), op_name=ctx["op_name"],
                  dtype=ctx["dtype"], role=ctx["role"], nodeid=_state.nodeid, nodes=nodes,
                  memcpys=graph.get("memcpys") or 0, memsets=graph.get("memsets") or 0,
                  others=graph.get("others") or 0, calls_per_replay=m["k"])
        if ctx["role"] != "tune":
            _io.marker("%s nodes=%d role=%s" % (_graph.NO_KERNELS_MARKER, nodes,
                                               ctx["role"] or "null"))


def _is_sequence_call(args):
    return args["quantiles"] is not None or args["return_mode"] == "all"


def _direct(fn, args, repeat, markers, fallback):
    """The original do_bench, median over repeat calls (one call for the
    sequence-valued forms)."""
    original = _original()
    if _is_sequence_call(args):
        value = original(fn, **args)
        samples = []
        if args["quantiles"] is None and isinstance(value, (list, tuple)):
            samples = [float(v) for v in value]
        stats = _stats.summarize(samples) if samples else None
        n = 1
    else:
        values = [original(fn, **args) for _ in range(repeat)]
        value = values[0] if repeat == 1 else _stats.median(values)
        samples = [float(v) for v in values]
        stats = _stats.summarize(samples)
        n = repeat
    record = {"timer": "direct"}
    record.update(_record.stat_fields(stats))
    record.update(dict.fromkeys(_record.DIRECT_NONE))
    record["noise"] = stats.get("noise") if stats and len(samples) > 1 else None
    record.update({"n": n, "calls_per_replay": None, "warmup_calls": None,
                   "markers": list(markers), "samples_ms": samples,
                   "fallback": fallback})
    return value, record


def _sweep_call(fn, args):
    """ZLB_SWEEP_ONLY: one eager call (its tuners sweep inside it), no timing."""
    if args["grad_to_none"] is not None:
        for x in args["grad_to_none"]:
            x.grad = None
    fn()
    record = {"timer": "sweep"}
    record.update(_record.stat_fields(None))
    record.update(dict.fromkeys(_record.DIRECT_NONE))
    record.update({"n": 0, "calls_per_replay": None, "warmup_calls": None,
                   "markers": [], "samples_ms": [], "fallback": None})
    return 1.0, record


def _fallback(fn, args, phase, reason, ctx, s):
    repeat = 1 if _is_sequence_call(args) else s["repeat"]
    _io.event(DIRECT_MARKER, op=_op(), op_name=ctx["op_name"], dtype=ctx["dtype"],
              role=ctx["role"], phase=phase, reason=reason, repeat=repeat,
              nodeid=_state.nodeid)
    if ctx["role"] != "tune":
        _io.marker("%s phase=%s reason=%s repeat=%d" % (DIRECT_MARKER, phase, reason,
                                                         repeat))
    return _direct(fn, args, repeat, [DIRECT_MARKER],
                   {"phase": phase, "reason": reason})


# --- notices said once ------------------------------------------------------

def _note_rng(how):
    if how != "graphsafe":
        _say_once("rng", "capture RNG isolation: %s (this torch's generator lacks "
                  "graphsafe_get_state/graphsafe_set_state/clone_state; an aborted "
                  "capture can still leave the CUDA RNG unusable)" % how)


def _say_once(key, detail):
    if key in _state.said:
        return
    _state.said.add(key)
    _io.plugin(NAME, "ready", detail)


# --- who is being measured ----------------------------------------------------------

def _op():
    op = _env.op()
    if op:
        return op
    node = _state.nodeid or ""
    name = node.split("::")[-1].split("[")[0]
    return name[5:] if name.startswith("test_") else (name or None)


def _context():
    """op_name, dtype and the role this call will have, read from upstream's
    Benchmark.run / get_latency frames (best effort; None where unknown).
    The results plugin pairs by order; this only labels events and lets it
    cross-check."""
    ctx = {"op_name": None, "dtype": None, "role": None, "shape_detail": None}
    try:
        f = sys._getframe(2)
    except ValueError:
        return ctx
    bench = op = metric = None
    for _ in range(64):
        if f is None:
            break
        name = f.f_code.co_name
        me = f.f_locals.get("self")
        if me is not None and hasattr(me, "op_name") and hasattr(me, "to_bench_metrics"):
            loc = f.f_locals
            if name == "get_latency" and bench is None:
                bench, op = me, loc.get("op")
            elif bench is None or me is bench:
                # The metric under construction: in run() itself (base.py) or
                # in a helper of its (test_blas_perf_parallel.py's
                # _build_metric_from_input, int4pack's _run_metric).
                m = loc.get("metric")
                if metric is None and m is not None and hasattr(m, "shape_detail"):
                    metric = m
                    ctx["shape_detail"] = shape_text(m.shape_detail)
                if name == "run":
                    bench = me
                    dtype = loc.get("dtype")
                    ctx["dtype"] = None if dtype is None else str(dtype)
                    break
        f = f.f_back
    if bench is None:
        return ctx
    ctx["op_name"] = getattr(bench, "op_name", None)
    gems_op = getattr(bench, "gems_op", None)
    if op is not None and gems_op is not None and op is gems_op:
        ctx["role"] = "gems"
    elif metric is not None and hasattr(metric, "latency_base"):
        wants_base = "latency_base" in (getattr(bench, "to_bench_metrics", None) or ())
        ctx["role"] = "torch" if wants_base and metric.latency_base is None else "gems"
    return ctx
