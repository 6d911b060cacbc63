"""The autotuners' share of a test's time (TUNE_TIMING, docs/protocol.md).

An autotuner's timing of a config makes no row, but it is wall time of the
run: on the H200 a tuned layer_norm spent 17.3 of its 24.4 s there. Two
timers are counted: the timing plugin's do_bench (plain @triton.autotune,
through Triton's benchmarker) and triton.testing.do_bench_cudagraph, which
FlagGems' LibTuner binds when flag_gems is imported and which is passed
through untouched. A config whose timing itself tunes is counted once.
"""
import sys
import time

from . import _io, _markers, _state


def reset():
    _state.tune_calls, _state.tune_s, _state.tuning_now = 0, 0.0, False


def emit(nodeid):
    """The test's TUNE_TIMING event, when it tuned; the tally starts again."""
    if _state.tune_calls:
        _io.event(_markers.EVENT_TUNE_TIMING, nodeid=nodeid, calls=_state.tune_calls,
                  seconds=round(_state.tune_s, 3))
    reset()


class Timed:
    """`with Timed(st, tuning):` around a timing call: counted into st (the
    job's zlbench._state, or None: not counted) when it is a config's timing
    and none is under way already."""

    def __init__(self, st, tuning):
        self.st = st if tuning and st is not None and not st.tuning_now else None

    def __enter__(self):
        if self.st is not None:
            self.st.tuning_now = True
            self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if self.st is not None:
            self.st.tuning_now = False
            self.st.tune_calls += 1
            self.st.tune_s += time.perf_counter() - self.t0
        return False


def wrap_graph_bench(tt):
    """Put the tally around tt.do_bench_cudagraph (triton.testing), once. A
    process that bound it before this ran (flag_gems imported first) is not
    counted."""
    graph_bench = getattr(tt, "do_bench_cudagraph", None)
    if graph_bench is None or getattr(graph_bench, "_zlb_counted", False):
        return

    def tallied_do_bench_cudagraph(*args, **kwargs):
        # The state of the job under way: a warm worker imports the plugins
        # afresh for each job, while flag_gems (and what it bound) stays.
        with Timed(sys.modules.get("zlbench._state"), True):
            return graph_bench(*args, **kwargs)

    tallied_do_bench_cudagraph._zlb_counted = True
    tallied_do_bench_cudagraph.__wrapped__ = graph_bench
    tt.do_bench_cudagraph = tallied_do_bench_cudagraph


def unwrap_graph_bench(tt):
    graph_bench = getattr(tt, "do_bench_cudagraph", None)
    if getattr(graph_bench, "_zlb_counted", False):
        tt.do_bench_cudagraph = graph_bench.__wrapped__
