"""The rule a measurement is taken under, as zlb passed it: plain data,
read by timing.py from the ZLB_* knobs and handed to _graph.measure, which
is where each field is used."""


class Rule:
    """The stopping rule and what a sample is (docs/protocol.md §1): the
    ZLB_MIN_SAMPLES, ZLB_NOISE_TARGET, ZLB_MAX_WALL_MS, ZLB_L2,
    ZLB_CLOCK_FLOOR, ZLB_POWER_DUTY, ZLB_POWER_SETTLE_MS, ZLB_PRELOAD_MS,
    ZLB_PRELOAD_STEADY, ZLB_PLACEMENTS and ZLB_REPLAY_TARGET_MS knobs, and
    ZLB_PLACEMENT_PROBES and ZLB_CLOCK_ELASTICITY (not rules of the number:
    what is timed after it). The minimum GPU time is the caller's rep. Every
    field is given: zlb owns their defaults (its option table), this module
    has none."""

    FIELDS = ("min_samples", "noise_target", "max_wall_ms", "l2", "clock_floor",
              "power_duty", "power_settle_ms", "preload_ms", "preload_steady", "placements",
              "replay_target_ms", "placement_probes", "clock_elasticity")

    def __init__(self, *, min_samples, noise_target, max_wall_ms, l2, clock_floor,
                 power_duty, power_settle_ms, preload_ms, preload_steady, placements,
                 replay_target_ms, placement_probes, clock_elasticity):
        self.min_samples = int(min_samples)
        self.noise_target = float(noise_target)
        self.max_wall_ms = float(max_wall_ms)
        self.l2 = l2
        self.clock_floor = float(clock_floor)
        self.power_duty = float(power_duty)
        self.power_settle_ms = float(power_settle_ms)
        self.preload_ms = float(preload_ms)
        self.preload_steady = float(preload_steady)
        self.placements = int(placements)
        self.replay_target_ms = float(replay_target_ms)
        self.placement_probes = int(placement_probes)
        self.clock_elasticity = bool(clock_elasticity)

    def as_dict(self):
        return {k: getattr(self, k) for k in self.FIELDS}

    def but(self, **changes):
        """A copy with the given fields changed."""
        d = self.as_dict()
        d.update(changes)
        return Rule(**d)

    def __repr__(self):
        return "Rule(%s)" % ", ".join("%s=%r" % kv for kv in self.as_dict().items())
