"""The graph shapes a replay run must capture (docs/protocol.md §1).

A run that replays another's autotune configs (zlb run --replay-from, every
compared round of zlb ab) also times the same graphs: zlb reads the recording
run's results.jsonl and writes, into this run's directory, graph_plan.json:

    {"schema_version": 2, "kind": "graph_plan", "replay_from": DIR,
     "measurements": [{"nodeid", "op_name", "dtype", "shape_detail", "role",
                       "calls_per_replay", "placements", "power_duty",
                       "calls_first"}, ...]}

one entry per graph-timed torch or gems measurement of a SUCCESS row, in
the recording's order; power_duty is the duty the recording's kept samples
ran at, calls_first the K it captured first before settling K (each null
where it did not say; version 1 had neither).
ZLB_GRAPH_PLAN names the file. A measurement of this run takes the next
entry of its key (nodeid, op_name, dtype, shape detail, role); none left:
it settles its own K, and says so.
"""

import collections
import json

from ._graph import GraphShape

SCHEMA_VERSION = 2
# Versions this reader takes: 1 lacks power_duty and calls_first (read as unknown).
READS = (1, 2)
KEYS = ("nodeid", "op_name", "dtype", "shape_detail", "role")


class PlanError(ValueError):
    """graph_plan.json cannot be used."""


class Plan:
    def __init__(self, measurements, source):
        self.source = source
        self.left = collections.defaultdict(collections.deque)
        for i, m in enumerate(measurements):
            if not isinstance(m, dict):
                raise PlanError("%s: measurement %d is not an object" % (source, i))
            try:
                key = tuple(m[k] for k in KEYS)
                shape = GraphShape(m["calls_per_replay"], m["placements"],
                                   _duty(m.get("power_duty"), source, i),
                                   _k_first(m.get("calls_first"), source, i))
            except (KeyError, TypeError, ValueError) as e:
                raise PlanError("%s: measurement %d lacks a usable %s" % (source, i, e)) \
                    from None
            if shape.k < 1 or shape.placements < 1:
                raise PlanError("%s: measurement %d has calls_per_replay %d, placements "
                                "%d (both must be >= 1)" % (source, i, shape.k,
                                                             shape.placements))
            self.left[key].append(shape)
        self.size = len(measurements)

    def take(self, nodeid, op_name, dtype, shape_detail, role):
        """The next GraphShape of this key, or None where the plan has none left."""
        q = self.left.get((nodeid, op_name, dtype, shape_detail, role))
        return q.popleft() if q else None


def _duty(value, source, i):
    """A plan entry's power_duty: None (unknown) or a fraction in (0, 1]."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not 0 < value <= 1:
        raise PlanError("%s: measurement %d has power_duty %r (a fraction in (0, 1] "
                        "or null)" % (source, i, value))
    return float(value)


def _k_first(value, source, i):
    """A plan entry's calls_first: None (unknown) or a K of at least 1."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PlanError("%s: measurement %d has calls_first %r (a K of at least 1 or null)"
                        % (source, i, value))
    return value


def load(path):
    """The Plan in path (PlanError with a sentence otherwise)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise PlanError("%s cannot be read: %s" % (path, e)) from None
    if not isinstance(doc, dict) or doc.get("kind") != "graph_plan":
        raise PlanError("%s is not a graph plan (kind graph_plan)" % path)
    if doc.get("schema_version") not in READS:
        raise PlanError("%s has schema_version %r; this zlbench reads %s"
                        % (path, doc.get("schema_version"),
                           " and ".join(str(v) for v in READS)))
    ms = doc.get("measurements")
    if not isinstance(ms, list):
        raise PlanError("%s has no measurements list" % path)
    return Plan(ms, path)
