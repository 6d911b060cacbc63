"""libzlbtimer.so through ctypes: its status codes, its request, result
and graph-info structs version by version (src/timer/zlbtimer.h), and the
library opened once per process (timer_lib). Graph timing (_graph) drives it.
"""

import ctypes
import math

ZLBT_OK = 0
ZLBT_ENODEV = 1
ZLBT_EDRIVER = 2
ZLBT_EINVAL = 3
ZLBT_ETIMEOUT = 4
STATUS = {0: "ZLBT_OK", 1: "ZLBT_ENODEV", 2: "ZLBT_EDRIVER", 3: "ZLBT_EINVAL",
          4: "ZLBT_ETIMEOUT"}

ZLBT_L2_HOT = 0
ZLBT_L2_COLD = 1
ZLBT_CLOCK_OFF = 0
ZLBT_CLOCK_CHECK = 1
STOP_REASONS = {1: "rule", 2: "noise", 3: "max_samples", 4: "wall", 5: "clock", 6: "capped"}
# The node kinds zlbt_graph_info counts (besides nodes, their total).
GRAPH_KEYS = ("kernels", "memcpys", "memsets", "others")


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
        # --- version 2 ---
        ("noise_target", ctypes.c_double),
        ("l2_mode", ctypes.c_uint32),
        ("clock_check", ctypes.c_uint32),
        ("clock_floor", ctypes.c_double),
        # --- version 3 ---
        ("placement_execs", ctypes.c_uint64),
        ("placements", ctypes.c_uint32),
        ("reserved3", ctypes.c_uint32),
        # --- version 4 (ABI 7) ---
        ("duty", ctypes.c_double),
        # --- version 5 (ABI 10) ---
        ("stop_when_capped", ctypes.c_uint32),
        ("reserved5", ctypes.c_uint32),
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
        # --- version 2 ---
        ("noise", ctypes.c_double),
        ("stop_reason", ctypes.c_uint32),
        ("discarded", ctypes.c_uint32),
        ("clock_mhz", ctypes.c_double),
        ("clock_min_mhz", ctypes.c_double),
        ("l2_flush_bytes", ctypes.c_uint64),
        # --- version 3 ---
        ("placements", ctypes.c_uint32),
        ("reserved3", ctypes.c_uint32),
        ("placement_spread", ctypes.c_double),
        # --- version 4 ---
        ("centre_ms", ctypes.c_double),
        ("placement_noise", ctypes.c_double),
        # --- version 5 (ABI 6) ---
        ("clock_reasons", ctypes.c_uint64),
        ("clock_reasons_known", ctypes.c_uint32),
        ("clock_max_mhz", ctypes.c_uint32),     # ABI 9; reserved before
    ]


class _GraphInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("nodes", ctypes.c_uint32),
        ("kernels", ctypes.c_uint32),
        ("memcpys", ctypes.c_uint32),
        ("memsets", ctypes.c_uint32),
        ("others", ctypes.c_uint32),
    ]


# Each version's structs end where the next version's fields begin.
REQUEST_V1_SIZE = _Request.noise_target.offset
RESULT_V1_SIZE = _Result.noise.offset
REQUEST_V2_SIZE = _Request.placement_execs.offset
REQUEST_V3_SIZE = _Request.duty.offset
REQUEST_V4_SIZE = _Request.stop_when_capped.offset
RESULT_V2_SIZE = _Result.placements.offset
RESULT_V3_SIZE = _Result.centre_ms.offset
RESULT_V4_SIZE = _Result.clock_reasons.offset

_STATS = ("median_ms", "mean_ms", "min_ms", "max_ms", "q1_ms", "q3_ms", "stdrel")
V2_RESULT_KEYS = ("noise", "stop_reason", "discarded", "clock_mhz", "clock_min_mhz",
                  "l2_flush_bytes")
V3_RESULT_KEYS = ("placements", "placement_spread")
V4_RESULT_KEYS = ("centre_ms", "placement_noise")
V6_RESULT_KEYS = ("clock_reasons",)
V9_RESULT_KEYS = ("clock_max_mhz",)

# NVML's clocks event reason bits by the names zlb gives them (nvml.h,
# nvml_reasons_text); gpu_idle never reaches a result.
CLOCK_REASONS = ((0x2, "app_clocks_setting"), (0x4, "sw_power_cap"), (0x8, "hw_slowdown"),
                 (0x10, "sync_boost"), (0x20, "sw_thermal_slowdown"),
                 (0x40, "hw_thermal_slowdown"), (0x80, "hw_power_brake_slowdown"),
                 (0x100, "display_clock_setting"))


def clock_reason_names(bits):
    """The names of NVML clocks event reason bits, in bit order; a bit
    without a name as its hex value."""
    names = []
    for bit, name in CLOCK_REASONS:
        if bits & bit:
            names.append(name)
            bits &= ~bit
    bits &= ~0x1
    if bits:
        names.append("0x%x" % bits)
    return names


def _finite_or_none(x):
    x = float(x)
    return x if math.isfinite(x) else None


class TimerLib:
    """libzlbtimer.so loaded with ctypes (src/timer/zlbtimer.h).

    abi is the version the library says it has, capped at max_abi (tests use
    max_abi=1 to drive a newer library the version 1 way); v2 is abi >= 2,
    v3 (placements) abi >= 3, v4 (their centre and noise) abi >= 4;
    has_graph_repeat (version 5) says graph_repeat can be called; v6 (a
    result's clock_reasons) abi >= 6; v7 (a request's duty) abi >= 7; v8
    (each batch below duty 1 warms up first, counted busy) abi >= 8; v9 (a
    result's clock_max_mhz) abi >= 9; v10 (a request's stop_when_capped)
    abi >= 10.
    """

    def __init__(self, path, max_abi=None):
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
        self.lib_abi = int(lib.zlbt_abi_version())
        abi = self.lib_abi if max_abi is None else min(self.lib_abi, int(max_abi))
        self.has_graph_info = False
        if abi >= 2:
            try:
                fn = lib.zlbt_graph_info
            except AttributeError:
                abi = 1               # says 2 but lacks a version 2 entry point
            else:
                fn.restype = ctypes.c_int
                fn.argtypes = [ctypes.c_uint64, ctypes.POINTER(_GraphInfo),
                               ctypes.c_char_p, ctypes.c_size_t]
                self.has_graph_info = True
        self.has_graph_repeat = False
        if abi >= 5:
            try:
                rep, rel = lib.zlbt_graph_repeat, lib.zlbt_graph_repeat_release
            except AttributeError:
                abi = 4               # says 5 but lacks a version 5 entry point
            else:
                rep.restype = ctypes.c_int
                rep.argtypes = [ctypes.c_uint64, ctypes.c_uint32,
                                ctypes.POINTER(ctypes.c_uint64),
                                ctypes.POINTER(ctypes.c_uint64),
                                ctypes.c_char_p, ctypes.c_size_t]
                rel.restype = ctypes.c_int
                rel.argtypes = [ctypes.c_uint64, ctypes.c_uint64,
                                ctypes.c_char_p, ctypes.c_size_t]
                self.has_graph_repeat = True
        self.abi = abi
        self.v2 = abi >= 2
        self.v3 = abi >= 3
        self.v4 = abi >= 4
        self.v6 = abi >= 6
        self.v7 = abi >= 7
        self.v8 = abi >= 8
        self.v9 = abi >= 9
        self.v10 = abi >= 10

    def abi_version(self):
        return self.lib_abi

    def open(self):
        """(status, sentence)."""
        err = ctypes.create_string_buffer(512)
        rc = self.lib.zlbt_open(err, ctypes.sizeof(err))
        return rc, err.value.decode("utf-8", "replace")

    def _new_result(self):
        res = _Result()
        res.struct_size = (ctypes.sizeof(_Result) if self.v6 else
                           RESULT_V4_SIZE if self.v4 else
                           RESULT_V3_SIZE if self.v3 else
                           RESULT_V2_SIZE if self.v2 else RESULT_V1_SIZE)
        return res

    def _stats(self, res):
        stats = {"n": int(res.n)}
        for k in _STATS:
            stats[k] = float(getattr(res, k))
        if self.v2:
            stats["noise"] = _finite_or_none(res.noise)
            stats["stop_reason"] = STOP_REASONS.get(int(res.stop_reason),
                                                    None if not res.stop_reason
                                                    else str(int(res.stop_reason)))
            stats["discarded"] = int(res.discarded)
            stats["clock_mhz"] = float(res.clock_mhz) or None
            stats["clock_min_mhz"] = float(res.clock_min_mhz) or None
            stats["l2_flush_bytes"] = int(res.l2_flush_bytes)
        else:
            for k in V2_RESULT_KEYS:
                stats[k] = None
        if self.v3:
            stats["placements"] = int(res.placements) or 1
            stats["placement_spread"] = _finite_or_none(res.placement_spread)
        else:
            stats["placements"] = 1
            stats["placement_spread"] = None
        # Before version 4 the centre was the pooled median.
        stats["centre_ms"] = float(res.centre_ms) if self.v4 else stats["median_ms"]
        stats["placement_noise"] = _finite_or_none(res.placement_noise) if self.v4 else None
        # What held the clock down while the kept samples ran: [] none, None unknown.
        stats["clock_reasons"] = (clock_reason_names(int(res.clock_reasons))
                                  if self.v6 and res.clock_reasons_known else None)
        # The top of the board's SM clock; None unknown, or pinned by a user.
        stats["clock_max_mhz"] = int(res.clock_max_mhz) or None if self.v9 else None
        stats["total_gpu_ms"] = float(res.total_gpu_ms)
        stats["wall_ms"] = float(res.wall_ms)
        return stats

    def time_graph(self, graph_exec, stream, calls_per_replay, min_samples,
                   max_samples, min_time_ms, max_wall_ms, warmup_replays=0,
                   noise_target=0.0, l2_mode=ZLBT_L2_HOT, clock_check=ZLBT_CLOCK_OFF,
                   clock_floor=0.0, more_placements=(), duty=0.0, stop_when_capped=False):
        """(status, stats dict, samples list, sentence). Under a version 1
        library the version 2 arguments are not sent and the version 2 stats
        are None. more_placements: the exec handles of the same work captured
        again on memory of its own, sampled round-robin with graph_exec
        (version 3; a ValueError under an older library). duty in (0, 1):
        replay at most that fraction of the time, idle in between (ABI 7; a
        ValueError under an older library); 0: back to back.
        stop_when_capped: stop once min_samples are kept if the power cap
        held them (stop_reason "capped"; ABI 10, ignored before: the
        sampling then runs its course)."""
        if more_placements and not self.v3:
            raise ValueError("libzlbtimer ABI %d cannot sample placements" % self.abi)
        req = _Request()
        if duty and not self.v7:
            raise ValueError("libzlbtimer ABI %d cannot leave the GPU idle between "
                             "replays (duty)" % self.abi)
        req.struct_size = (ctypes.sizeof(_Request) if self.v10 else
                           REQUEST_V4_SIZE if self.v7 else
                           REQUEST_V3_SIZE if self.v3 else
                           REQUEST_V2_SIZE if self.v2 else REQUEST_V1_SIZE)
        req.calls_per_replay = calls_per_replay
        req.graph_exec = int(graph_exec)
        req.stream = int(stream)
        req.min_samples = min_samples
        req.max_samples = max_samples
        req.min_time_ms = float(min_time_ms)
        req.max_wall_ms = float(max_wall_ms)
        req.warmup_replays = warmup_replays
        if self.v2:
            req.noise_target = float(noise_target)
            req.l2_mode = int(l2_mode)
            req.clock_check = int(clock_check)
            req.clock_floor = float(clock_floor)
        if self.v7:
            req.duty = float(duty)
        if self.v10:
            req.stop_when_capped = 1 if stop_when_capped else 0
        more = None
        if more_placements:
            more = (ctypes.c_uint64 * len(more_placements))(*[int(h) for h in more_placements])
            req.placement_execs = ctypes.addressof(more)
            req.placements = len(more_placements) + 1
        res = self._new_result()
        cap = max_samples
        buf = (ctypes.c_double * cap)()
        err = ctypes.create_string_buffer(512)
        rc = self.lib.zlbt_time_graph(ctypes.byref(req), ctypes.byref(res), buf,
                                      cap, err, ctypes.sizeof(err))
        stats = self._stats(res)
        samples = [float(buf[i]) for i in range(min(int(res.n), cap))]
        return rc, stats, samples, err.value.decode("utf-8", "replace")

    def graph_info(self, graph):
        """(counts dict with nodes and GRAPH_KEYS, None) or (None, sentence)."""
        if not self.has_graph_info:
            return None, "libzlbtimer ABI %d has no zlbt_graph_info" % self.abi
        info = _GraphInfo()
        info.struct_size = ctypes.sizeof(_GraphInfo)
        err = ctypes.create_string_buffer(512)
        rc = self.lib.zlbt_graph_info(int(graph), ctypes.byref(info), err,
                                      ctypes.sizeof(err))
        if rc != ZLBT_OK:
            return None, "zlbt_graph_info %s: %s" % (STATUS.get(rc, rc),
                                                    err.value.decode("utf-8", "replace")
                                                    or "no reason given")
        out = {"nodes": int(info.nodes)}
        for k in GRAPH_KEYS:
            out[k] = int(getattr(info, k))
        return out, None

    def graph_repeat(self, graph, copies):
        """(exec, graph): a graph of `copies` copies of the captured graph
        in a row, instantiated (zlbt_graph_repeat), both ints to pass to
        graph_repeat_release. Keep the CUDAGraph that captured graph alive
        until then: its memory is what the copies use. RuntimeError with
        the library's sentence on failure, or where has_graph_repeat is
        false."""
        if not self.has_graph_repeat:
            raise RuntimeError("libzlbtimer ABI %d has no zlbt_graph_repeat" % self.abi)
        exec_, built = ctypes.c_uint64(0), ctypes.c_uint64(0)
        err = ctypes.create_string_buffer(512)
        rc = self.lib.zlbt_graph_repeat(int(graph), int(copies), ctypes.byref(exec_),
                                        ctypes.byref(built), err, ctypes.sizeof(err))
        if rc != ZLBT_OK:
            raise RuntimeError("zlbt_graph_repeat %s: %s" % (
                STATUS.get(rc, rc), err.value.decode("utf-8", "replace") or "no reason given"))
        return int(exec_.value), int(built.value)

    def graph_repeat_release(self, exec_, graph):
        """Destroy what graph_repeat built (0 handles skipped); RuntimeError
        with the library's sentence if the driver refuses either."""
        if not self.has_graph_repeat:
            raise RuntimeError("libzlbtimer ABI %d has no zlbt_graph_repeat_release"
                               % self.abi)
        err = ctypes.create_string_buffer(512)
        rc = self.lib.zlbt_graph_repeat_release(int(exec_), int(graph), err,
                                                ctypes.sizeof(err))
        if rc != ZLBT_OK:
            raise RuntimeError("zlbt_graph_repeat_release %s: %s" % (
                STATUS.get(rc, rc), err.value.decode("utf-8", "replace") or "no reason given"))

    def summarize(self, samples):
        """Stats dict of zlbt_summarize (n, the seven statistics, and noise:
        None under a version 1 library), or None where it refuses."""
        n = len(samples)
        arr = (ctypes.c_double * max(n, 1))(*[float(x) for x in samples])
        res = self._new_result()
        if self.lib.zlbt_summarize(arr, n, ctypes.byref(res)) != ZLBT_OK:
            return None
        stats = {"n": int(res.n)}
        for k in _STATS:
            stats[k] = float(getattr(res, k))
        stats["noise"] = _finite_or_none(res.noise) if self.v2 else None
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
