"""Graph timing: capture the workload in a CUDA graph (torch), time its
replays in C (libzlbtimer through ctypes). The graph, streams and generators
come from torch's device module of the backend (_device: torch.cuda,
torch.musa); where that torch hands out no raw graph exec (torch_musa), the
replays are timed by _eventtimer instead of libzlbtimer, with the same
answer (lib.replays_graphs).

    measure(torch, lib, fn, warmup_ms, rep_ms, grad_to_none, max_warm, rule, shape=None)

1. runs fn once eagerly and synchronizes (absorbs autotune and JIT; an
   exception here is the operator's own failure and propagates as it is);
   under IR capture this call runs with Triton's launch hook on (ir=);
2. warms up: times a few eager calls, then runs
   clamp(warmup_ms / per_call_ms, 5, max_warm) more;
3. L2 hot: captures graphs of 1 and PROBE_K calls into
   torch.cuda.CUDAGraph(keep_graph=True) on a side stream and has libzlbtimer
   time a few replays of each; the slope between them is the per-call GPU
   time c (a replay's fixed cost, ~3 us on an H200, left out); then captures
   K calls into one graph, K = ceil(rule.replay_target_ms / c) (zlb's
   --replay-target, 2 ms by default) rounded up to a power of two
   (at most 4096), so processes with slightly different estimates capture
   the same graph; a few replays of that graph then give the per-call time
   K is settled from (recaptured if it says another K). L2 cold: K = 1
   straight away (only the first call of a replay would start cold), no
   estimate. A given shape (K and placements from the recording run of a
   replay, GraphShape) is captured as it is, after the estimates' graphs are
   captured and released as the recording's were, untimed
   (_mirror_estimates: the measured graph's placement follows them), and
   its first graph is captured, replayed and captured anew as the
   recording's was (_settle_k, GraphShape.k_first). Then
   the same K calls are captured again, rule.placements graphs in all,
   each with its own memory pool and so its own placement of what the work
   allocates (fewer when their memory would not fit, see placements_for),
   all kept alive until sampled; a library older than ABI 3 gets one;
4. counts the measured graph's nodes by type (zlbt_graph_info on
   raw_cuda_graph(), after capture and before instantiation): memcpy and
   memset nodes are another caliber (copy engine) and become markers, and a
   graph without a kernel node (a view such as torch.conj captures nothing;
   a copy captures only copy-engine nodes) measures no kernel at all:
   GRAPH_NO_KERNELS;
5. has libzlbtimer sample the placements, each one's replays in blocks
   (libzlbtimer's blocked order), under the rule: at least
   min_samples samples and rep_ms of GPU time, then until the median's
   relative noise is at most noise_target, never more than max_wall_ms of
   wall time; L2 flushed before each sample when cold; samples taken below
   clock_floor x the steady SM clock discarded (clock_floor 0: no check);
   the centre is the mean of the placements' medians and the placement
   noise says how uncertain where they landed leaves it (ABI 4);
5a. reads the SM clock the kernels really run at just before and just after
   the sampling (_spin: a graph of spin kernels, captured once per run
   before the first row's graphs): the row's effective_mhz;
5b. after a one-graph measurement, times rule.placement_probes more graphs
   briefly (_probe_placements): the row's placement_sd, the spread a second
   process's one graph could read, which zlb compare takes for one round;
5c. with rule.clock_elasticity (L2 hot), reads how far the row's time follows
   the SM clock, pairs of the measured graph and a spin graph around a burn
   (_elasticity): the row's clock_elasticity, by which zlb compare corrects
   for its sides' effective clocks;
6. captures under a throwaway CUDA RNG state (see rng_swap).

A library of ABI version 1 (before noise target, L2 flush, clock check and
graph inspection) is driven with its version 1 structs: the rule is then
min_samples and rep_ms only, L2 stays hot and the graph is not inspected.

A failure in steps 2-5 raises CaptureFailure(phase, error) with phase
"warmup", "capture" (capture and instantiation) or "replay" (libzlbtimer);
the timing plugin decides between fatal and falling back to direct timing.
Graphs are released before returning, whatever happened.

What is not GPU work lives beside it: _rule (the rule measure is handed,
plain data), _graph_size (K, placements, warm-up calls, a probe's unit),
_allocator (the allocator's memory, read around captures), _power (when to
sample again at the power duty) and _probe_read (a probe's draw from its
pairs); the effective clock's spin graph is _spin's and the preload
_preload's, each handed _replay. What stays here touches the GPU: capture,
replay, the probes' graphs, the steps a replay repeats after its recording
(_mirror_estimates, _settle_k), and the graphs measure owns until it
releases them; about 800 lines because those steps share that ownership
and _replay (and the capture/replay calls the tests watch through the
library they replace): moved out, each would import _graph back.
"""

import time

from . import _allocator, _device, _elasticity, _io, _markers, _preload, _spin, _state
# The parts of the engine that are arithmetic on times, named through _graph
# by its callers and tests.
from ._graph_size import (K_SLACK, MAX_K, PLACEMENT_MEM_BYTES, PROBE_UNIT,  # noqa: F401
                          call_cost_ms, k_for, placements_for, warmup_calls_for)
from ._graph_size import probe_unit as _probe_unit
from ._power import (DUTY_FROM_KEYS, POWER_KEYS, POWER_LIMITS, clock_held,  # noqa: F401
                     duty_reason, power_capped, single_read_duty)
from ._probe_read import (PROBE_PAIRS, PROBE_PROTOCOL, clock_sentence, log_sd,  # noqa: F401
                          probe_pair_draw, probe_pair_order, probe_pairs_record, probe_spread)
# What the engine's callers and tests name through _graph, libzlbtimer's part
# of which lives in _timerlib.
from ._timerlib import (GRAPH_KEYS, STATUS, STOP_REASONS, V2_RESULT_KEYS, V3_RESULT_KEYS,  # noqa: F401
                        V6_RESULT_KEYS, V9_RESULT_KEYS, ZLBT_CLOCK_CHECK, ZLBT_CLOCK_OFF, ZLBT_ETIMEOUT, ZLBT_L2_COLD,
                        ZLBT_L2_HOT, ZLBT_OK, TimerLib, _libs, timer_lib)

MAX_SAMPLES = 10000
PROBE_K = 8
PROBE_CALLS = 3
ESTIMATE_SAMPLES = 5
MEMCPY_MARKER = _markers.MARKER_MEMCPY_NODES
MEMSET_MARKER = _markers.MARKER_MEMSET_NODES
NO_KERNELS_MARKER = _markers.MARKER_NO_KERNELS


class CaptureFailure(Exception):
    """Graph timing failed in `phase`; `error` is what was raised."""

    def __init__(self, phase, error):
        Exception.__init__(self, "%s: %s" % (phase, error))
        self.phase = phase
        self.error = error
        self.launches = None      # the first eager call's, under IR capture


# --- the CUDA RNG stand-in --------------------------------------------------

def rng_swap(torch):
    """Put a throwaway clone in place of the default CUDA generator's state.

    torch.cuda.graph registers the default CUDA generator with the graph; an
    aborted capture can leave the registered state stuck "capturing", after
    which every torch.randn on the device fails. Under the clone, the real
    state never takes part in a capture. Returns (restore, how): restore()
    puts the saved state back; how is "graphsafe" or "get_state" (an older
    torch without graphsafe_*: the state is copied back, which does not
    protect against a stuck capture) or "none".
    """
    try:
        dev = _device.module(torch)
        # default_generators stays () until the device's lazy initialisation.
        if not dev.default_generators:
            dev.init()
        gen = dev.default_generators[dev.current_device()]
    except Exception:
        return (lambda: None), "none"
    if all(hasattr(gen, a) for a in ("graphsafe_get_state", "graphsafe_set_state",
                                     "clone_state")):
        saved = gen.graphsafe_get_state()
        gen.graphsafe_set_state(gen.clone_state())
        return (lambda: gen.graphsafe_set_state(saved)), "graphsafe"
    saved = gen.get_state()
    return (lambda: gen.set_state(saved)), "get_state"


# --- capture ---------------------------------------------------------------

def _new_graph(torch):
    cls = _device.graph_class(_device.module(torch))
    try:
        return cls(keep_graph=True), True
    except TypeError:
        # torch < 2.9 (and torch_musa's MUSAGraph): capture_end instantiates;
        # raw_cuda_graph_exec may be missing, which then fails below with a
        # sentence where the replay needs it.
        return cls(), False


def capture(torch, call, k, on_rng=None, inspect=None, needs_exec=True, instantiate=True):
    """A graph of k calls of call(), instantiated; the graph is released and
    the error re-raised on any failure. When a call is refused during the
    capture, torch.cuda.graph's exit fails too ("operation failed due to a
    previous error during capture") with the refusal as its __context__:
    first_cause() finds the refusal.

    inspect(g), if given, is called once the capture has ended and before the
    graph is instantiated (raw_cuda_graph() is valid from capture_end on, with
    keep_graph=True); it must not raise.

    needs_exec: the replay needs raw_cuda_graph_exec() (libzlbtimer); the
    events timer replays the graph object and does not.

    instantiate False: a keep_graph=True graph is left captured, for its
    raw_cuda_graph() only (a probe's unit, _RepeatedGraph); a torch that
    instantiates at capture_end does so anyway."""
    dev = _device.module(torch)
    g, keep = _new_graph(torch)
    err = None
    try:
        side = dev.Stream()
        side.wait_stream(dev.current_stream())
    except BaseException:
        release(g)
        raise
    restore, how = rng_swap(torch)
    if on_rng is not None:
        on_rng(how)
    _state.capturing = True
    try:
        with dev.graph(g, stream=side):
            for _ in range(k):
                call()
    except BaseException as e:
        err = e
    finally:
        _state.capturing = False
    for step in (restore, lambda: dev.current_stream().wait_stream(side)):
        try:
            step()
        except BaseException as e:
            if err is None:
                err = e
    if err is None and inspect is not None:
        inspect(g)
    if err is None:
        try:
            if keep and instantiate:
                g.instantiate()
            if needs_exec and not hasattr(g, "raw_cuda_graph_exec"):
                raise RuntimeError("this torch's CUDAGraph has no raw_cuda_graph_exec()")
        except BaseException as e:
            err = e
    if err is not None:
        release(g)
        raise err
    return g


def first_cause(e):
    """The error that started it: torch.cuda.graph's __exit__ runs
    capture_end, whose own failure hides the refusal in __context__."""
    seen = set()
    while id(e) not in seen:
        seen.add(id(e))
        nxt = e.__cause__ or e.__context__
        if nxt is None or not isinstance(nxt, Exception):
            break
        e = nxt
    return e


def _capture_or_fail(torch, call, k, on_rng, inspect=None, lib=None, instantiate=True):
    """capture(), its failure raised as CaptureFailure("capture", ...)."""
    needs_exec = instantiate and not getattr(lib, "replays_graphs", False)
    try:
        return capture(torch, call, k, on_rng, inspect=inspect, needs_exec=needs_exec,
                       instantiate=instantiate)
    except Exception as e:
        raise CaptureFailure("capture", e) from e


def release(g):
    if g is None:
        return
    try:
        g.reset()
    except Exception:
        pass


def _replay(torch, lib, g, calls, min_samples, max_samples, min_time_ms, max_wall_ms,
            rule=None, more=(), duty=0.0, stop_when_capped=False):
    """libzlbtimer on g (and round-robin on the graphs in more, the same work
    on other placements): (stats, samples, markers). Raises CaptureFailure.
    rule None: the bare rule (no noise target, L2 hot, no clock check).
    duty: replay only that fraction of the time (power_resample).
    stop_when_capped: stop at min_samples if the power cap held them (ABI
    10; the sampling runs its course before)."""
    try:
        if getattr(lib, "replays_graphs", False):
            # The events timer replays the graph objects themselves.
            exec_handle, more_handles, stream = g, list(more), 0
        else:
            exec_handle = int(g.raw_cuda_graph_exec())
            more_handles = [int(m.raw_cuda_graph_exec()) for m in more]
            stream = _device.stream_handle(_device.module(torch).current_stream())
    except Exception as e:
        raise CaptureFailure("capture", e) from e
    extra = {}
    if rule is not None:
        cold = rule.l2 == "cold" and getattr(lib, "flushes_l2", True)
        extra = {"noise_target": rule.noise_target,
                 "l2_mode": ZLBT_L2_COLD if cold else ZLBT_L2_HOT,
                 "clock_check": ZLBT_CLOCK_CHECK if rule.clock_floor > 0 else ZLBT_CLOCK_OFF,
                 "clock_floor": rule.clock_floor}
    if more_handles:
        extra["more_placements"] = more_handles
    if duty:
        extra["duty"] = duty
    if stop_when_capped and getattr(lib, "v10", False):
        extra["stop_when_capped"] = True
    rc, stats, samples, err = lib.time_graph(exec_handle, stream, calls, min_samples,
                                             max_samples, min_time_ms, max_wall_ms,
                                             warmup_replays=1, **extra)
    markers = []
    if rc == ZLBT_ETIMEOUT and stats["n"] > 0:
        markers.append(_markers.MARKER_WALL_LIMIT)
    elif rc != ZLBT_OK:
        raise CaptureFailure("replay", RuntimeError(
            "libzlbtimer %s: %s" % (STATUS.get(rc, rc), err or "no reason given")))
    return stats, samples, markers


class PhaseClock:
    """Wall time of a measurement's phases, in ms: where a run's time went
    (first_call: compilation and autotuning; warmup; settle: the graphs that
    estimate K; capture: the measured graphs; spin: the effective clock's
    readings (_spin); sample; duty: sampling again at the power duty;
    probes; release). A
    diagnosis, never caliber: nothing compares it between runs."""

    def __init__(self):
        self._t = time.perf_counter()
        self.ms = {}

    def lap(self, phase):
        now = time.perf_counter()
        self.ms[phase] = self.ms.get(phase, 0.0) + (now - self._t) * 1e3
        self._t = now


def graph_markers(counts):
    """The caliber markers a measured graph's node counts call for: copy-engine
    nodes, and no kernel node at all (its replays time the launch alone, or
    copies: not a measurement of the operator)."""
    if not counts:
        return []
    out = []
    if counts.get("memcpys"):
        out.append(MEMCPY_MARKER)
    if counts.get("memsets"):
        out.append(MEMSET_MARKER)
    if not counts.get("kernels"):
        out.append(NO_KERNELS_MARKER)
    return out


class Inspector:
    """inspect= for capture(): zlbt_graph_info on the captured graph. Leaves
    counts (nodes and GRAPH_KEYS) or None and why."""

    def __init__(self, lib):
        self.lib = lib
        self.counts = None
        self.why = None

    def __call__(self, g):
        try:
            raw = int(g.raw_cuda_graph())
        except Exception as e:
            self.why = "raw_cuda_graph(): %s" % (str(e).strip().splitlines() or
                                                 [type(e).__name__])[0]
            return
        try:
            self.counts, self.why = self.lib.graph_info(raw)
        except Exception as e:           # a ctypes-level surprise: not fatal
            self.why = "zlbt_graph_info: %s" % e


class GraphShape:
    """The graph a measurement must capture: k calls per replay on
    placements graphs, as the recording run of a replay measured it (zlb
    hands them down, ZLB_GRAPH_PLAN), so that A and B time the same graph.
    power_duty: the duty the recording's kept samples ran at (None: it did
    not say); below 1, the replay samples at the duty too (_power). k_first:
    the K the recording captured its first graph with before it settled K
    (None: it did not say, taken for k), which the replay captures and
    checks as the recording did (_settle_k)."""

    def __init__(self, k, placements, power_duty=None, k_first=None):
        self.k = int(k)
        self.placements = int(placements)
        self.power_duty = power_duty
        self.k_first = None if k_first is None else int(k_first)

    def __repr__(self):
        return "GraphShape(k=%d, placements=%d, power_duty=%r, k_first=%r)" % (
            self.k, self.placements, self.power_duty, self.k_first)


def measure(torch, lib, fn, warmup_ms, rep_ms, grad_to_none, max_warm, on_rng=None,
            rule=None, ir=None, shape=None):
    """Time fn by graph replay. Returns a dict: stats (n, the seven statistics
    and the version 2 fields: noise, stop_reason, discarded, clock_mhz,
    clock_min_mhz, l2_flush_bytes, None under a version 1 library), samples,
    k, warmup_calls, markers, l2 (what was done: "cold" only where the
    library could flush), graph (GRAPH_KEYS counts of the measured graph, or
    None), graph_why (why graph is None) and launches.

    ir: IR capture's Capture (zlbench.ir), whose first_call runs step 1 with
    Triton's launch hook on and returns the launches it saw ("launches"; None
    without ir); the hook is off again before the warm-up. A CaptureFailure
    raised later carries them as .launches.

    rule is required (_rule.Rule). shape: a GraphShape to capture instead of
    settling K and the placements here."""
    if rule is None:
        raise ValueError("measure() needs the rule zlb passed (_rule.Rule)")

    def call():
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        fn()

    # 1. Once, eagerly: autotuning and compilation happen here.
    clock = PhaseClock()
    if ir is not None:
        launches = ir.first_call(call)
    else:
        call()
        launches = None
    _device.module(torch).synchronize()
    clock.lap("first_call")
    try:
        m = _measure_warm(torch, lib, call, warmup_ms, rep_ms, max_warm, on_rng, rule,
                          shape, clock)
    except CaptureFailure as cf:
        cf.launches = launches
        raise
    m["launches"] = launches
    return m


def _measure_warm(torch, lib, call, warmup_ms, rep_ms, max_warm, on_rng, rule, shape=None,
                  clock=None):
    """Steps 2-5 of measure(), once the first eager call is done. clock: the
    PhaseClock that laps each step (a fresh one when None)."""
    clock = clock or PhaseClock()
    cold = rule.l2 == "cold" and lib.v2 and getattr(lib, "flushes_l2", True)
    dev = _device.module(torch)

    # 2. Warm up by the caller's time budget.
    try:
        t0 = time.perf_counter()
        for _ in range(PROBE_CALLS):
            call()
        dev.synchronize()
        per_call_ms = (time.perf_counter() - t0) * 1e3 / PROBE_CALLS
        n_warm = warmup_calls_for(warmup_ms, per_call_ms, max_warm)
        for _ in range(n_warm):
            call()
        dev.synchronize()
    except Exception as e:
        raise CaptureFailure("warmup", e) from e
    clock.lap("warmup")

    max_wall = float(rule.max_wall_ms)
    g = None
    # The effective clock (_spin), for a row and not for an autotuner's
    # config, whose time only ranks it. The spin graph is captured before
    # this row's graphs (the first row of a run only): its capture empties
    # the allocator's cache, which should not fall between a row's own.
    spin_ok = lib.v2 and not _state.tuning_now and _spin.clock().ready(torch, lib)

    # 3a. L2 hot: graphs of 1 and PROBE_K calls: what does a call cost on the GPU?
    if shape is not None:
        k = max(1, min(MAX_K, shape.k))
        if not cold:
            _mirror_estimates(torch, lib, call, on_rng, max_wall)
    elif cold:
        k = 1
    else:
        est = []
        for n in (1, PROBE_K):
            try:
                g = _capture_or_fail(torch, call, n, on_rng, lib=lib)
                st, _, _ = _replay(torch, lib, g, n, ESTIMATE_SAMPLES, ESTIMATE_SAMPLES,
                                   0.0, max_wall)
                est.append(st["median_ms"] * n)
            finally:
                release(g)
                g = None
        k = k_for(call_cost_ms(est[0], est[1], PROBE_K), rule.replay_target_ms)
    # The K the first graph is captured with: a replay's is the one its
    # recording captured first (_settle_k); cold L2 settles nothing.
    k_first = k
    if shape is not None and shape.k_first is not None and not cold:
        k_first = max(1, min(MAX_K, shape.k_first))
    clock.lap("settle")

    # 3b. K calls per replay on each placement (the first inspected), then
    # sampled round-robin under the rule.
    inspector = Inspector(lib) if lib.v2 and getattr(lib, "has_graph_info", True) else None
    min_samples = max(1, rule.min_samples)
    max_samples = max(MAX_SAMPLES, min_samples)
    graphs = []
    try:
        reserved_before = _allocator.reserved_or_none(torch)
        graphs.append(_capture_or_fail(torch, call, k_first, on_rng, inspector, lib=lib))
        if not cold:
            k = _settle_k(torch, lib, call, on_rng, inspector, graphs, k_first,
                          k if shape is not None else None, rule, max_wall)
        asked = rule.placements if lib.v3 else 1
        if shape is not None and lib.v3:
            asked = max(1, shape.placements)
        if asked > 1 and shape is not None:
            while len(graphs) < asked:
                graphs.append(_capture_or_fail(torch, call, k, on_rng, lib=lib))
        elif asked > 1:
            # What one more placement costs is read on the second: the first
            # capture may reuse blocks the warm-up left cached (on an H200 a
            # 256 MiB softmax output grew the reserved memory by 2 MiB on the
            # first capture, by 258 MiB on the second).
            before = _allocator.reserved(torch)
            graphs.append(_capture_or_fail(torch, call, k, on_rng, lib=lib))
            want = placements_for(asked, _allocator.reserved(torch) - before, _allocator.free_bytes(torch))
            while len(graphs) > want:
                release(graphs.pop())
            while len(graphs) < want:
                graphs.append(_capture_or_fail(torch, call, k, on_rng, lib=lib))
        # Not more placements when they scatter, though their mean would be
        # surer: on an H200, 32 placements made every replay of a 64k add
        # 14% slower and of a 1024x1024 softmax 3% slower than 8 did (more
        # graphs and outputs cycled through L2, presumably): another caliber.
        measured_grew = _allocator.grew_mib(reserved_before, _allocator.reserved_or_none(torch))
        clock.lap("capture")
        before = None
        if spin_ok:
            before = _spin.clock().read(torch, lib, _replay)
            clock.lap("spin")
        # After the spin: nothing idles the GPU between the load and the sampling.
        # the sampling's L2 (a cold row's load flushes before each replay), but
        # neither its noise target nor its clock gate: a load, not a reading
        preload = _preload.run(torch, lib, _replay, graphs, k, rule.preload_ms, max_wall,
                               steady=rule.preload_steady,
                               rule=rule.but(noise_target=0.0, clock_floor=0.0))
        if rule.preload_ms > 0:
            clock.lap("preload")
        stats, samples, markers, power = _sample(torch, lib, graphs, k, min_samples,
                                                 max_samples, float(rep_ms), max_wall, rule,
                                                 shape, clock)
        after = None
        if spin_ok:
            after = _spin.clock().read(torch, lib, _replay)
            clock.lap("spin")
        spin = _spin.fields([before, after], _spin.why_none(lib))
        probe = dict.fromkeys(PROBE_KEYS)
        probe["placement_probes"] = 0
        if len(graphs) == 1 and rule.placement_probes > 0 and lib.v2:
            probe = _probe_placements(torch, lib, call, k, on_rng, graphs, rule, max_wall,
                                      duty=power["power_duty"] if power["power_duty"] else 0.0,
                                      measured_grew=measured_grew)
            clock.lap("probes")
        elasticity = dict.fromkeys(_elasticity.KEYS)
        # Hot replays say nothing of a cold row's s: its calls read from HBM.
        if rule.clock_elasticity and spin_ok and not cold and stats.get("median_ms"):
            elasticity = _elasticity.burner().measure(torch, graphs[0], k,
                                                      stats["median_ms"] * k)
            clock.lap("elasticity")
    finally:
        for g in graphs:
            release(g)
    clock.lap("release")
    counts = inspector.counts if inspector is not None else None
    if inspector is not None:
        why = inspector.why
    elif getattr(lib, "replays_graphs", False):
        why = lib.graph_info(None)[1]
    else:
        why = "libzlbtimer ABI %d: graph not inspected" % lib.abi
    graph = {k2: counts[k2] for k2 in GRAPH_KEYS} if counts else None
    markers = markers + graph_markers(graph)
    return {"stats": stats, "samples": samples, "k": k, "k_first": k_first,
            "warmup_calls": n_warm, "power": power, "spin": spin, "preload": preload,
            "markers": markers, "l2": "cold" if cold else "hot", "graph": graph,
            "graph_why": None if graph else why,
            "nodes": counts["nodes"] if counts else None, "probe": probe,
            "elasticity": elasticity,
            "phase_ms": clock.ms}


def _sample(torch, lib, graphs, k, min_samples, max_samples, rep_ms, max_wall, rule, shape,
            clock):
    """Step 4: sample graphs[0] (round-robin over the rest) under the rule,
    and again at rule.power_duty where duty_reason says so. The first
    sampling stops at min_samples once the cap shows (stop_when_capped)
    where the duty would follow: its samples are kept only as
    power_duty_from, and at the cap its noise target is out of reach (an
    H100's 4096^3 addmm spent its 2 s wall limit there).

    A replay whose recording sampled below duty 1 still samples back to
    back first, though the duty follows whatever that reads: on an H100
    replays that went to the duty straight from the capture read gems
    addmm of 1024^3 6.466-6.572 us and of 2048^3 29.77-30.31 us in four
    processes, false verdicts between them, where replays sampled first
    read 6.60-6.67 and 29.53-29.63. What the board ran just before still
    moves the duty's time: the ones whose first sampling hit the cap read
    gems addmm 1024^3 6.57 us at duty 0.5, the others 6.47 (same NVML and
    spin clocks), so rule.power_settle_ms of idle come first. (stats,
    samples, markers, {"power_duty", "power_duty_from"}); laps "sample",
    "power_settle" (with a settle) and "duty" on clock."""
    at_duty = rule.power_duty > 0 and getattr(lib, "v7", False)
    recorded = shape.power_duty if shape is not None else None
    stats, samples, markers = _replay(torch, lib, graphs[0], k, min_samples, max_samples,
                                      rep_ms, max_wall, rule=rule if lib.v2 else None,
                                      more=graphs[1:], stop_when_capped=at_duty)
    clock.lap("sample")
    why = duty_reason(stats, rule.clock_floor, recorded)
    if not (why and at_duty):
        return stats, samples, markers, {
            "power_duty": 1.0 if getattr(lib, "v7", False) else None, "power_duty_from": None}
    first = {k2: stats.get(k2) for k2 in DUTY_FROM_KEYS}
    first["why"] = why
    if rule.power_settle_ms > 0:
        # the library returns with the device idle: this idles the GPU
        time.sleep(rule.power_settle_ms / 1000.0)
        clock.lap("power_settle")
    stats, samples, markers = _replay(torch, lib, graphs[0], k, min_samples, max_samples,
                                      rep_ms, max_wall / rule.power_duty, rule=rule,
                                      more=graphs[1:], duty=rule.power_duty)
    clock.lap("duty")
    return stats, samples, markers, {"power_duty": rule.power_duty, "power_duty_from": first}


def _settle_k(torch, lib, call, on_rng, inspector, graphs, k_first, k_planned, rule,
              max_wall):
    """K again, from the per-call time of the k_first-call graph graphs[0]
    itself: the probes' slope is a rough estimate (event times are
    quantised), and one process of twelve on an H200 put a 64k add under the
    0.977 us of the 2048/4096 boundary, captured 4096 calls and read 1.313
    us, where every 2048-call graph measured ~1.195 us. That measured
    per-call time is precise enough to land on the same side of a boundary
    in every process. A K it disagrees with is captured anew in graphs[0].

    k_planned: a replay's K (GraphShape.k), else None. A replay checks
    nothing but does what its recording did: the same five replays of the
    graph its recording captured first, and the same second capture where
    the recording's K moved. Without them the measured graph lands after
    other allocations than the recording's: on an H100 an 8192x16384
    index_select read 1325.4 us in its recording (first K 1, measured K 2)
    and 1319.2-1319.7 in three replays that captured K 2 at once. Returns K."""
    st, _, _ = _replay(torch, lib, graphs[0], k_first, ESTIMATE_SAMPLES, ESTIMATE_SAMPLES,
                       0.0, max_wall)
    settled = k_planned if k_planned is not None else k_for(st["median_ms"],
                                                            rule.replay_target_ms)
    if settled != k_first:
        release(graphs.pop())
        graphs.append(_capture_or_fail(torch, call, settled, on_rng, inspector, lib=lib))
    return settled


def _mirror_estimates(torch, lib, call, on_rng, max_wall):
    """A replay's step 3a: capture, replay once and release the two estimate
    graphs the recording run captured before its measured graph, though K is
    given. Where the measured graph's buffers land follows what was
    allocated and freed before it, and this keeps that history the
    recording's: on an H100 an 8192x16384 index_select read 1327.3 and
    1326.1 us in two recording processes, 1318.5 and 1318.1 in two replays
    of them, each pair's probes alike (1321-1328 us), so only the measured
    graph had moved, and a record-against-replay A/A read 0.7% apart. One
    replay of each, untimed in effect, does what the recording's did to
    the device (the graph's upload); its time is not used. A recording that
    captured its K-call graph twice (K settled anew) is not mirrored in that."""
    for n in (1, PROBE_K):
        g = None
        try:
            g = _capture_or_fail(torch, call, n, on_rng, lib=lib)
            _replay(torch, lib, g, n, 1, 1, 0.0, max_wall)
        finally:
            release(g)


# What _probe_placements adds to a record.
PROBE_KEYS = ("placement_probes", "placement_sd", "placement_probe_ms", "placement_probe_mhz",
              "placement_probe_ref_ms", "placement_probe_draws", "placement_probe_error",
              "placement_probe_protocol", "placement_probe_build", "placement_probe_pairs",
              "placement_probe_pool_mib")
class _RepeatedGraph:
    """A probe of k calls built as copies of a captured unit of fewer: what
    _replay and release() ask of a graph (raw_cuda_graph_exec, reset). The
    unit's torch graph stays alive with it: its memory pool holds the
    buffers every copy uses."""

    def __init__(self, lib, unit, exec_handle, built):
        self._lib = lib
        self._unit = unit
        self._exec = exec_handle
        self._built = built

    def raw_cuda_graph_exec(self):
        return self._exec

    def reset(self):
        if self._exec or self._built:
            try:
                self._lib.graph_repeat_release(self._exec, self._built)
            finally:
                self._exec = self._built = 0
                release(self._unit)


def _probe_graph(torch, lib, call, k, on_rng, how):
    """One probe graph of k calls on memory of its own: a capture of
    _probe_unit(k) calls repeated, or of all k where that is not to be had.
    how: {"build": "repeat" or "capture", "why": why a repeat failed}; a
    failed repeat turns the rest of the row's probes to whole captures.
    Raises CaptureFailure as _capture_or_fail does."""
    unit = _probe_unit(k)
    if how["build"] == "repeat" and unit:
        g = _capture_or_fail(torch, call, unit, on_rng, lib=lib, instantiate=False)
        try:
            g_raw = int(g.raw_cuda_graph())
            exec_handle, built = lib.graph_repeat(g_raw, k // unit)
            return _RepeatedGraph(lib, g, exec_handle, built)
        except Exception as e:
            release(g)
            how["build"], how["why"] = "capture", _io.first_line(e)
    elif how["build"] == "repeat":
        how["build"] = "capture"
    return _capture_or_fail(torch, call, k, on_rng, lib=lib)


def _probe_placements(torch, lib, call, k, on_rng, graphs, rule, max_wall, duty=0.0,
                      measured_grew=None):
    """Steps 5b: time rule.placement_probes more graphs of the same k calls,
    each captured on memory of its own while the measured one (graphs[0])
    is alive. One graph is one draw of where a small kernel's buffers land;
    these are more draws, and their spread is what a second process could
    read.

    Each probe is read against the measured graph in PROBE_PAIRS pairs of
    single replays (each after an untimed replay of its own graph), the two
    timed a few milliseconds apart (probe_pair_draw). Blocks of replays one
    after another do not do: on an H200 probes timed in a row read later
    ones slower and slower (a 2048x4096 rms_norm +0.3% .. +1.2% over eight),
    and at the power cap a block's clock follows the pause before it (a
    2048x2048 addmm measured at 1485 MHz had probe blocks at 1515-1860 MHz,
    drawn -3.3% by the clock alone, and two of three left out): a drift of
    the device over the probe's own second that no second process sees.

    Returns {"placement_probes": the probes kept (the spread's degrees of
    freedom), "placement_sd": probe_spread's sd (None with no probe),
    "placement_probe_ms" / "placement_probe_mhz": each probe's median and
    median clock over its kept pairs, "placement_probe_ref_ms": the measured
    graph's median over the same pairs, "placement_probe_draws":
    probe_pair_draw's, by probe, "placement_probe_error": why probes are
    missing, or None, "placement_probe_protocol": PROBE_PROTOCOL,
    "placement_probe_build": how the probe graphs were built, "repeat" or
    "capture" (_probe_graph), "capture: <why>" where a repeat failed,
    "placement_probe_pairs": each probe's pairs as timed, so that a draw can
    be read again off the GPU, "placement_probe_pool_mib": how far the
    allocator's reserved memory grew, in MiB, while the measured graphs were
    made (measured_grew: every capture of them, one thrown away for another
    K included) and then while each probe graph was captured: 0 where a
    graph took blocks the allocator had cached, more where it asked the
    driver for new memory, None where the allocator could not say}. A
    probe that fails leaves the measurement as it is. The graphs are
    appended to graphs, which the caller releases.

    duty: the measurement was sampled with the GPU idle part of the time
    (duty_reason); its probes are read the same way, or the power cap
    holds them and their clocks, not their placements, draw them."""
    probes = []
    error = None
    want = 1 + rule.placement_probes
    repeats = getattr(lib, "has_graph_repeat", False) and _probe_unit(k)
    how = {"build": "repeat" if repeats else "capture", "why": None}
    # Whether a probe's buffers came from the allocator's cache or from new
    # memory: on the H100 matrices one probe of torch's rms_norm 4096x8192
    # landed anywhere between processes (its draws' sd 1.5-2.1%) while the
    # measured graph and the other probe each landed in one place
    # (bench/README.md, "what the probes' P is made of").
    grew = [measured_grew]
    try:
        before = _allocator.reserved_or_none(torch)
        graphs.append(_probe_graph(torch, lib, call, k, on_rng, how))
        after = _allocator.reserved_or_none(torch)
        grew.append(_allocator.grew_mib(before, after))
        pool = (after or 0) - (before or 0)
        asked, want = want, placements_for(want, pool, _allocator.free_bytes(torch))
        if want < asked:
            error = ("memory: a graph reserves %.0f MiB, room for %d probe%s of %d" % (
                pool / (1 << 20), want - 1, "" if want == 2 else "s", asked - 1))
        while len(graphs) < want:
            before = _allocator.reserved_or_none(torch)
            graphs.append(_probe_graph(torch, lib, call, k, on_rng, how))
            grew.append(_allocator.grew_mib(before, _allocator.reserved_or_none(torch)))
        for i in range(1, want):
            pairs = []
            for order in probe_pair_order(PROBE_PAIRS):
                got = {}
                for which in order:
                    st, _, _ = _replay(torch, lib, graphs[(0, i)[which]], k, 1, 1, 0.0,
                                       max_wall, rule=rule, duty=single_read_duty(lib, duty))
                    got[which] = (st["median_ms"] if st["n"] > 0 else None, st.get("clock_mhz"))
                pairs.append((order[0], got[0], got[1]))
            probes.append(pairs)
    except CaptureFailure as cf:
        error = "%s: %s" % (cf.phase, _io.first_line(first_cause(cf.error)))
        probes = []
    reads = [probe_pair_draw(pairs, rule.clock_floor) for pairs in probes]
    draws = [r["draw"] for r in reads]
    sd, kept = probe_spread(draws)
    why = clock_sentence(sum(r["off"] for r in reads), len(reads), rule.clock_floor)
    return {"placement_probes": kept, "placement_sd": sd,
            "placement_probe_ms": [r["probe_ms"] for r in reads] or None,
            "placement_probe_mhz": [r["mhz"] for r in reads] or None,
            "placement_probe_ref_ms": [r["ref_ms"] for r in reads] or None,
            "placement_probe_draws": draws or None,
            "placement_probe_error": error or why,
            "placement_probe_protocol": PROBE_PROTOCOL,
            "placement_probe_build": how["build"] if not how["why"] else
            "capture: %s" % how["why"],
            "placement_probe_pairs": [probe_pairs_record(pairs) for pairs in probes] or None,
            "placement_probe_pool_mib": grew if probes else None}
