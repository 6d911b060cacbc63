"""The fields of one measurement's record that every timer fills alike
(zlbench.timing): its statistics, the graph-only fields a direct or sweep
call leaves null, and the value do_bench returns from them. Kept apart from
timing.py, which decides how a call is timed, so that the record's shape is
read in one place."""

from . import _elasticity, _graph, _spin, _stats

STAT_KEYS = ("median_ms", "mean_ms", "min_ms", "max_ms", "q1_ms", "q3_ms", "stdrel")
# Graph-only fields of a measurement: null for direct timing (upstream
# do_bench has its own L2 policy, no stopping rule of ours, no graph).
DIRECT_NONE = ("noise", "stop_reason", "discarded", "clock_mhz", "clock_min_mhz",
               "clock_reasons", "clock_max_mhz", "l2", "l2_flush_bytes", "graph", "min_samples",
               "min_time_ms", "noise_target", "max_wall_ms", "clock_floor", "placements",
               "placement_spread", "placement_noise", "replay_target_ms",
               "graph_shape", "calls_first") + _graph.POWER_KEYS + _graph.PROBE_KEYS \
    + _spin.SPIN_KEYS + _elasticity.KEYS


def stat_fields(stats):
    """The statistics of a record. centre_ms is the value a median is asked
    for: the mean of the placements' medians for a graph measurement on
    several (libzlbtimer ABI 4), else the median."""
    out = {k: (stats[k] if stats else None) for k in STAT_KEYS}
    out["centre_ms"] = (stats.get("centre_ms", stats["median_ms"]) if stats else None)
    out["n"] = stats["n"] if stats else 0
    return out


def pick(stats, samples, quantiles, return_mode):
    """What do_bench returns for quantiles / return_mode, from a measurement's
    statistics and samples."""
    if quantiles is not None:
        vals = _stats.quantiles(samples, quantiles)
        return vals[0] if len(vals) == 1 else vals
    if return_mode == "all":
        return list(samples)
    if return_mode == "median":
        # The centre: over several placements the pooled median is one
        # cluster's or another's by the luck of the draw (_graph).
        return stats.get("centre_ms", stats["median_ms"])
    return stats[return_mode + "_ms"]
