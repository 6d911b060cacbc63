"""The names a run writes for zlb to read: row markers and event kinds.

The same names, with the same values, as src/rundir/markers.h (its
MARKER_* and EVENT_* defines); tests/python/test_markers.py checks that
the two agree, so neither side can rename one alone.
"""

# Row markers: the measurement is another caliber or was not what it seems.
MARKER_DIRECT = "BENCHMARK_DIRECT_NO_CUDAGRAPH"
MARKER_CAPTURE_FATAL = "CAPTURE_FATAL"
MARKER_MEMCPY_NODES = "GRAPH_MEMCPY_NODES"
MARKER_MEMSET_NODES = "GRAPH_MEMSET_NODES"
MARKER_NO_KERNELS = "GRAPH_NO_KERNELS"
MARKER_WALL_LIMIT = "TIMER_WALL_LIMIT"
MARKER_REPLAY_FALLBACK = "AUTOTUNE_REPLAY_FALLBACK"
# zlb compare's own (never written by a plugin)
MARKER_K_DIFFERS = "CALLS_PER_REPLAY_DIFFERS"

# Event kinds that C reads.
EVENT_TEST_OUTCOME = "TEST_OUTCOME"
EVENT_PLUGIN = "PLUGIN"
EVENT_SHAPES_INJECTED = "SHAPES_INJECTED"
EVENT_AUTOTUNE_RECORDED = "AUTOTUNE_RECORDED"
EVENT_AUTOTUNE_REPLAYED = "AUTOTUNE_REPLAYED"
EVENT_SHAPE_NOT_REPLAYED = "GRAPH_SHAPE_NOT_REPLAYED"
