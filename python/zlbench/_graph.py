"""Graph timing: capture the workload in a CUDA graph (torch), time its
replays in C (libzlbtimer through ctypes).

    measure(torch, lib, fn, warmup_ms, rep_ms, grad_to_none, max_warm)

1. runs fn once eagerly and synchronizes (absorbs autotune and JIT; an
   exception here is the operator's own failure and propagates as it is);
2. warms up: times a few eager calls, then runs
   clamp(warmup_ms / per_call_ms, 5, max_warm) more;
3. captures one call into torch.cuda.CUDAGraph(keep_graph=True) on a side
   stream, instantiates it and has libzlbtimer time a few replays to estimate
   the per-call GPU time t1; then captures K = clamp(ceil(1 ms / t1), 1, 1000)
   calls into one graph and has libzlbtimer sample it until rep_ms of GPU time
   (10..10000 replays, at most max(20 * rep_ms, 5000) ms of wall time);
4. captures under a throwaway CUDA RNG state (see rng_swap).

A failure in steps 2-3 raises CaptureFailure(phase, error) with phase
"warmup", "capture" (capture and instantiation) or "replay" (libzlbtimer);
the timing plugin decides between fatal and falling back to direct timing.
Graphs are released before returning, whatever happened.
"""

import ctypes
import math
import time

from . import _state

ZLBT_OK = 0
ZLBT_ENODEV = 1
ZLBT_EDRIVER = 2
ZLBT_EINVAL = 3
ZLBT_ETIMEOUT = 4
STATUS = {0: "ZLBT_OK", 1: "ZLBT_ENODEV", 2: "ZLBT_EDRIVER", 3: "ZLBT_EINVAL",
          4: "ZLBT_ETIMEOUT"}

MAX_SAMPLES = 10000
MAX_K = 1000
TARGET_REPLAY_MS = 1.0
PROBE_CALLS = 3
ESTIMATE_SAMPLES = 5
# A ppm of slack when turning t1 into K: t1 comes back through a float32
# elapsed time, and 1 ms / 0.004999999888 ms must still make K = 200.
K_SLACK = 1e-6


class CaptureFailure(Exception):
    """Graph timing failed in `phase`; `error` is what was raised."""

    def __init__(self, phase, error):
        Exception.__init__(self, "%s: %s" % (phase, error))
        self.phase = phase
        self.error = error


class _Request(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("calls_per_replay", ctypes.c_uint32),
        ("graph_exec", ctypes.c_uint64),
        ("stream", ctypes.c_uint64),
        ("min_samples", ctypes.c_uint32),
        ("max_samples", ctypes.c_uint32),
        ("min_time_ms", ctypes.c_double),
        ("max_wall_ms", ctypes.c_double),
        ("warmup_replays", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
    ]


class _Result(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("n", ctypes.c_uint32),
        ("median_ms", ctypes.c_double),
        ("mean_ms", ctypes.c_double),
        ("min_ms", ctypes.c_double),
        ("max_ms", ctypes.c_double),
        ("q1_ms", ctypes.c_double),
        ("q3_ms", ctypes.c_double),
        ("stdrel", ctypes.c_double),
        ("total_gpu_ms", ctypes.c_double),
        ("wall_ms", ctypes.c_double),
    ]


_STATS = ("median_ms", "mean_ms", "min_ms", "max_ms", "q1_ms", "q3_ms", "stdrel")


class TimerLib:
    """libzlbtimer.so loaded with ctypes (src/timer/zlbtimer.h)."""

    def __init__(self, path):
        self.path = path
        lib = ctypes.CDLL(path)
        lib.zlbt_abi_version.restype = ctypes.c_int
        lib.zlbt_abi_version.argtypes = []
        lib.zlbt_open.restype = ctypes.c_int
        lib.zlbt_open.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        lib.zlbt_time_graph.restype = ctypes.c_int
        lib.zlbt_time_graph.argtypes = [
            ctypes.POINTER(_Request), ctypes.POINTER(_Result),
            ctypes.POINTER(ctypes.c_double), ctypes.c_uint32,
            ctypes.c_char_p, ctypes.c_size_t]
        lib.zlbt_summarize.restype = ctypes.c_int
        lib.zlbt_summarize.argtypes = [ctypes.POINTER(ctypes.c_double),
                                       ctypes.c_uint32, ctypes.POINTER(_Result)]
        self.lib = lib

    def abi_version(self):
        return self.lib.zlbt_abi_version()

    def open(self):
        """(status, sentence)."""
        err = ctypes.create_string_buffer(512)
        rc = self.lib.zlbt_open(err, ctypes.sizeof(err))
        return rc, err.value.decode("utf-8", "replace")

    def time_graph(self, graph_exec, stream, calls_per_replay, min_samples,
                   max_samples, min_time_ms, max_wall_ms, warmup_replays=0):
        """(status, stats dict, samples list, sentence)."""
        req = _Request()
        req.struct_size = ctypes.sizeof(_Request)
        req.calls_per_replay = calls_per_replay
        req.graph_exec = int(graph_exec)
        req.stream = int(stream)
        req.min_samples = min_samples
        req.max_samples = max_samples
        req.min_time_ms = float(min_time_ms)
        req.max_wall_ms = float(max_wall_ms)
        req.warmup_replays = warmup_replays
        res = _Result()
        res.struct_size = ctypes.sizeof(_Result)
        cap = max_samples
        buf = (ctypes.c_double * cap)()
        err = ctypes.create_string_buffer(512)
        rc = self.lib.zlbt_time_graph(ctypes.byref(req), ctypes.byref(res), buf,
                                      cap, err, ctypes.sizeof(err))
        stats = {"n": int(res.n)}
        for k in _STATS:
            stats[k] = float(getattr(res, k))
        samples = [float(buf[i]) for i in range(min(int(res.n), cap))]
        return rc, stats, samples, err.value.decode("utf-8", "replace")

    def summarize(self, samples):
        """Stats dict of zlbt_summarize, or None where it refuses."""
        n = len(samples)
        arr = (ctypes.c_double * max(n, 1))(*[float(x) for x in samples])
        res = _Result()
        res.struct_size = ctypes.sizeof(_Result)
        if self.lib.zlbt_summarize(arr, n, ctypes.byref(res)) != ZLBT_OK:
            return None
        stats = {"n": int(res.n)}
        for k in _STATS:
            stats[k] = float(getattr(res, k))
        return stats


# path -> (TimerLib or None, None or the reason it cannot be used)
_libs = {}


def timer_lib(path):
    """The opened library at path, as (lib, None), or (None, reason).

    Loaded and zlbt_open()ed once per process and path; "no device" and any
    other refusal is remembered, so every row falls back with that reason.
    """
    if not path:
        return None, "ZLB_TIMER_LIB is not set: no graph timer library"
    if path in _libs:
        return _libs[path]
    try:
        lib = TimerLib(path)
    except (OSError, AttributeError) as e:
        _libs[path] = (None, "libzlbtimer cannot be loaded from %s: %s" % (path, e))
        return _libs[path]
    rc, err = lib.open()
    if rc == ZLBT_OK:
        _libs[path] = (lib, None)
    elif rc == ZLBT_ENODEV:
        _libs[path] = (None, "libzlbtimer: no device (%s)" % (err or "ZLBT_ENODEV"))
    else:
        _libs[path] = (None, "libzlbtimer: zlbt_open failed with %s (%s)"
                       % (STATUS.get(rc, rc), err))
    return _libs[path]


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
        # default_generators stays () until CUDA's lazy initialisation.
        if not torch.cuda.default_generators:
            torch.cuda.init()
        gen = torch.cuda.default_generators[torch.cuda.current_device()]
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
    try:
        return torch.cuda.CUDAGraph(keep_graph=True), True
    except TypeError:
        # torch < 2.9: capture_end instantiates; raw_cuda_graph_exec may be
        # missing, which then fails below with a sentence.
        return torch.cuda.CUDAGraph(), False


def capture(torch, call, k, on_rng=None):
    """A graph of k calls of call(), instantiated; the graph is released and
    the error re-raised on any failure. When a call is refused during the
    capture, torch.cuda.graph's exit fails too ("operation failed due to a
    previous error during capture") with the refusal as its __context__:
    first_cause() finds the refusal."""
    g, keep = _new_graph(torch)
    err = None
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
    except BaseException:
        release(g)
        raise
    restore, how = rng_swap(torch)
    if on_rng is not None:
        on_rng(how)
    _state.capturing = True
    try:
        with torch.cuda.graph(g, stream=side):
            for _ in range(k):
                call()
    except BaseException as e:
        err = e
    finally:
        _state.capturing = False
    for step in (restore, lambda: torch.cuda.current_stream().wait_stream(side)):
        try:
            step()
        except BaseException as e:
            if err is None:
                err = e
    if err is None:
        try:
            if keep:
                g.instantiate()
            if not hasattr(g, "raw_cuda_graph_exec"):
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


def release(g):
    if g is None:
        return
    try:
        g.reset()
    except Exception:
        pass


def _replay(torch, lib, g, calls, min_samples, max_samples, min_time_ms, max_wall_ms):
    """libzlbtimer on g: (stats, samples, markers). Raises CaptureFailure."""
    try:
        exec_handle = int(g.raw_cuda_graph_exec())
        stream = int(torch.cuda.current_stream().cuda_stream)
    except Exception as e:
        raise CaptureFailure("capture", e) from e
    rc, stats, samples, err = lib.time_graph(exec_handle, stream, calls, min_samples,
                                             max_samples, min_time_ms, max_wall_ms,
                                             warmup_replays=1)
    markers = []
    if rc == ZLBT_ETIMEOUT and stats["n"] > 0:
        markers.append("TIMER_WALL_LIMIT")
    elif rc != ZLBT_OK:
        raise CaptureFailure("replay", RuntimeError(
            "libzlbtimer %s: %s" % (STATUS.get(rc, rc), err or "no reason given")))
    return stats, samples, markers


def k_for(t1_ms):
    """Calls per replay so that one replay takes about TARGET_REPLAY_MS."""
    if not (t1_ms > 0) or not math.isfinite(t1_ms):
        return MAX_K
    k = math.ceil(TARGET_REPLAY_MS / t1_ms * (1 - K_SLACK))
    return max(1, min(MAX_K, k))


def warmup_calls_for(warmup_ms, per_call_ms, max_warm):
    lo = min(5, max_warm)
    if not (per_call_ms > 0):
        return max_warm
    n = math.ceil(float(warmup_ms) / per_call_ms)
    return max(lo, min(max_warm, n))


def measure(torch, lib, fn, warmup_ms, rep_ms, grad_to_none, max_warm, on_rng=None):
    """Time fn by graph replay. Returns (stats, samples, K, warmup calls, markers)."""

    def call():
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        fn()

    # 1. Once, eagerly: autotuning and compilation happen here.
    call()
    torch.cuda.synchronize()

    # 2. Warm up by the caller's time budget.
    try:
        t0 = time.perf_counter()
        for _ in range(PROBE_CALLS):
            call()
        torch.cuda.synchronize()
        per_call_ms = (time.perf_counter() - t0) * 1e3 / PROBE_CALLS
        n_warm = warmup_calls_for(warmup_ms, per_call_ms, max_warm)
        for _ in range(n_warm):
            call()
        torch.cuda.synchronize()
    except Exception as e:
        raise CaptureFailure("warmup", e) from e

    max_wall = max(20.0 * float(rep_ms), 5000.0)

    # 3a. One call captured: what does a call cost on the GPU?
    g = None
    try:
        try:
            g = capture(torch, call, 1, on_rng)
        except Exception as e:
            raise CaptureFailure("capture", e) from e
        est, _, _ = _replay(torch, lib, g, 1, ESTIMATE_SAMPLES, ESTIMATE_SAMPLES, 0.0,
                            max_wall)
    finally:
        release(g)
        g = None
    k = k_for(est["median_ms"])

    # 3b. K calls per replay, sampled until rep_ms of GPU time.
    try:
        try:
            g = capture(torch, call, k, on_rng)
        except Exception as e:
            raise CaptureFailure("capture", e) from e
        stats, samples, markers = _replay(torch, lib, g, k, 10, MAX_SAMPLES,
                                          float(rep_ms), max_wall)
    finally:
        release(g)
    return stats, samples, k, n_warm, markers
