/*
 * The names a run writes and its readers look for: row markers (a
 * measurement's "markers", the terminal's "markers:" line) and event kinds
 * (events.jsonl "event"). The measured process writes them from
 * python/zlbench/_markers.py, which must say the same: the plugin tests
 * read this file and check it (tests/python/test_markers.py).
 *
 * Format, for that check: one #define per name, MARKER_* or EVENT_*, the
 * value a string literal.
 */
#ifndef ZLB_MARKERS_H
#define ZLB_MARKERS_H

/* Row markers: the measurement is another caliber or was not what it seems. */
#define MARKER_DIRECT          "BENCHMARK_DIRECT_NO_CUDAGRAPH" /* timed eagerly, not in a graph */
#define MARKER_CAPTURE_FATAL   "CAPTURE_FATAL"       /* a capture error the backend calls fatal */
/* a capture error after which the backend's context is unusable: nothing later is measured */
#define MARKER_CAPTURE_POISONED "CAPTURE_POISONED"
#define MARKER_MEMCPY_NODES    "GRAPH_MEMCPY_NODES"  /* the graph replays copy-engine nodes */
#define MARKER_MEMSET_NODES    "GRAPH_MEMSET_NODES"
#define MARKER_NO_KERNELS      "GRAPH_NO_KERNELS"    /* the graph holds no kernel node */
#define MARKER_WALL_LIMIT      "TIMER_WALL_LIMIT"    /* sampling stopped at --max-wall */
#define MARKER_REPLAY_FALLBACK "AUTOTUNE_REPLAY_FALLBACK" /* tuned live instead of replaying */
/* zlb compare's own: the sides captured different calls per replay */
#define MARKER_K_DIFFERS       "CALLS_PER_REPLAY_DIFFERS"

/* Event kinds that C reads. */
#define EVENT_TEST_OUTCOME       "TEST_OUTCOME"
#define EVENT_PLUGIN             "PLUGIN"
#define EVENT_SHAPES_INJECTED    "SHAPES_INJECTED"
#define EVENT_AUTOTUNE_RECORDED  "AUTOTUNE_RECORDED"
#define EVENT_AUTOTUNE_REPLAYED  "AUTOTUNE_REPLAYED"
#define EVENT_SHAPE_NOT_REPLAYED "GRAPH_SHAPE_NOT_REPLAYED"
#define EVENT_COMPAT_UNSKIP      "COMPAT_UNSKIP"     /* a compat plugin dropped a skip guard */
#define EVENT_MM_CLUSTER_AVOIDED "MM_CLUSTER_AVOIDED" /* mm kept off the Hopper cluster kernel */
#define EVENT_TUNE_TIMING        "TUNE_TIMING"        /* a test's autotuning: configs timed, wall s */

#endif
