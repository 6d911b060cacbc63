"""The ZLB_* environment that zlb sets for the child (docs/protocol.md §1).

Values are read when asked for, not at import, so that a test can change the
environment between calls. A value outside its domain raises EnvError with a
sentence naming the variable: the plugins refuse loudly rather than guess.
"""

import math
import os


class EnvError(ValueError):
    """A ZLB_* variable holds something the plugins cannot use."""


def _get(name):
    v = os.environ.get(name)
    return v if v not in (None, "") else None


REQUIRED = object()     # no default: zlb always passes it (run_config_engine_env)


def _missing(name):
    return EnvError("%s is not set: zlb passes every setting that shapes a measurement "
                    "(zlb run --print-engine-env lists them); run through zlb, or set "
                    "them all as it prints them" % name)


def _int(name, default, minimum, maximum=None):
    """An integer in [minimum, maximum]; default where unset (REQUIRED: EnvError)."""
    raw = _get(name)
    if raw is None:
        if default is REQUIRED:
            raise _missing(name)
        return default
    text = raw.strip()
    try:
        value = int(text, 10)
    except ValueError:
        raise EnvError("%s=%r is not an integer" % (name, raw)) from None
    if value < minimum:
        raise EnvError("%s=%r must be at least %d" % (name, raw, minimum))
    if maximum is not None and value > maximum:
        raise EnvError("%s=%r must be at most %d" % (name, raw, maximum))
    return value


def _either(name, default, choices):
    """One of a few words; default where unset (REQUIRED: EnvError)."""
    raw = _get(name)
    if raw is None:
        if default is REQUIRED:
            raise _missing(name)
        return default
    if raw not in choices:
        if len(choices) == 2:
            raise EnvError("%s=%r is neither %r nor %r" % ((name, raw) + tuple(choices)))
        raise EnvError("%s=%r is not one of %s" % (name, raw, ", ".join(map(repr, choices))))
    return raw


def _float(name, default, lo, hi, lo_open=False):
    """A finite real in [lo, hi] ((lo, hi] with lo_open), or EnvError;
    default where unset (REQUIRED: EnvError)."""
    raw = _get(name)
    if raw is None:
        if default is REQUIRED:
            raise _missing(name)
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        raise EnvError("%s=%r is not a number" % (name, raw)) from None
    if not math.isfinite(value):
        raise EnvError("%s=%r is not a finite number" % (name, raw))
    if value < lo or value > hi or (lo_open and value == lo):
        raise EnvError("%s=%r is outside %s%g..%g" % (name, raw, "(exclusive) " if lo_open
                                                     else "", lo, hi))
    return value


def run_dir():
    """Absolute path of the run directory, or None: plugins stay inactive."""
    return _get("ZLB_RUN_DIR")


def op():
    """The operator as zlb names it (test function name without test_)."""
    return _get("ZLB_OP")


def sweep_only():
    """ZLB_SWEEP_ONLY: '1' in a shard of a parallel autotune sweep (zlb run
    --parallel-warmup-gpus): each measurement calls its function once, so its
    tuners sweep and record their choice, and times nothing. Absent or '0':
    a normal run."""
    raw = _get("ZLB_SWEEP_ONLY")
    if raw is None or raw == "0":
        return False
    if raw != "1":
        raise EnvError("ZLB_SWEEP_ONLY=%r is neither '0' nor '1'" % raw)
    return True


def shape_file():
    """The archived shape file; None in upstream shape mode."""
    return _get("ZLB_SHAPE_FILE")


def shape_mode():
    return _get("ZLB_SHAPE_MODE")


def seed():
    """ZLB_SEED: a non-negative integer (zlb's --seed; torch refuses negative seeds)."""
    return _int("ZLB_SEED", REQUIRED, 0, 2147483647)


TIMERS = ("graph", "direct")


def timer():
    """ZLB_TIMER: 'graph' or 'direct' (default 'direct': upstream's own timer)."""
    return _either("ZLB_TIMER", "direct", TIMERS)


def timer_lib():
    return _get("ZLB_TIMER_LIB")


# The settings below shape a measurement. Their defaults and ranges live in
# zlb's option table (src/run/run_config.c); the ranges here are the same,
# and there is no default: a plugin run without zlb's values refuses.

def direct_repeat():
    """ZLB_DIRECT_REPEAT: N (1..1000) calls of upstream do_bench per direct row."""
    return _int("ZLB_DIRECT_REPEAT", REQUIRED, 1, 1000)


def warmup_max_calls():
    """ZLB_WARMUP_MAX_CALLS: the most steady-state warm-up calls before capture."""
    return _int("ZLB_WARMUP_MAX_CALLS", REQUIRED, 1, 1000000)


def replay_target_ms():
    """ZLB_REPLAY_TARGET_MS: the GPU time one replay's K calls are sized for."""
    return _float("ZLB_REPLAY_TARGET_MS", REQUIRED, 0.01, 1000.0)


def graph_plan():
    """ZLB_GRAPH_PLAN: the graph_plan.json of a replay run (None otherwise)."""
    return _get("ZLB_GRAPH_PLAN")


def capture_fatal():
    """ZLB_CAPTURE_FATAL as a list of exact texts (empty lines dropped)."""
    raw = os.environ.get("ZLB_CAPTURE_FATAL") or ""
    return [line.strip() for line in raw.split("\n") if line.strip()]


def capture_poison():
    """ZLB_CAPTURE_POISON as a list of exact texts: a capture failure holding
    one poisons the process's device context (nothing after it is measured)."""
    raw = os.environ.get("ZLB_CAPTURE_POISON") or ""
    return [line.strip() for line in raw.split("\n") if line.strip()]


def capture_deny():
    """ZLB_CAPTURE_DENY: the test functions (names without test_) whose
    measurements this backend never captures, as a set."""
    raw = os.environ.get("ZLB_CAPTURE_DENY") or ""
    return {line.strip() for line in raw.split("\n") if line.strip()}


def _module_name(name, raw, default):
    if raw is None:
        return default
    if not (raw.isascii() and raw.isidentifier()):
        raise EnvError("%s=%r is not a Python identifier" % (name, raw))
    return raw


def torch_module():
    """ZLB_TORCH_MODULE: torch's device module of the backend (torch.<name>:
    'cuda', 'musa', ...); 'cuda' when zlb did not say."""
    return _module_name("ZLB_TORCH_MODULE", _get("ZLB_TORCH_MODULE"), "cuda")


GRAPH_REPLAYS = ("driver", "events")


def graph_replay():
    """ZLB_GRAPH_REPLAY: 'driver' (libzlbtimer replays the raw graph exec) or
    'events' (graph.replay() between the device module's timing events);
    'driver' when zlb did not say."""
    return _either("ZLB_GRAPH_REPLAY", "driver", GRAPH_REPLAYS)


def package():
    """ZLB_PACKAGE: 'flag_gems' or 'flaggems_vllm' (None when zlb did not say)."""
    return _get("ZLB_PACKAGE")


# --- the stopping rule and what a sample is (graph timing; protocol §1) ------

MIN_SAMPLES_MAX = 100000


def min_samples():
    """ZLB_MIN_SAMPLES: at least this many samples per measurement."""
    return _int("ZLB_MIN_SAMPLES", REQUIRED, 1, MIN_SAMPLES_MAX)


def noise_target():
    """ZLB_NOISE_TARGET: then sample until the median's relative noise is at
    most this (0 turns the target off)."""
    return _float("ZLB_NOISE_TARGET", REQUIRED, 0.0, 0.5)


def max_wall_ms():
    """ZLB_MAX_WALL_MS: wall-clock limit of one measurement's sampling, ms
    (an integer 1..600000, as zlb's --max-wall)."""
    return float(_int("ZLB_MAX_WALL_MS", REQUIRED, 1, 600000))


L2_MODES = ("hot", "cold")


def l2():
    """ZLB_L2: 'hot' or 'cold' (L2 flushed before each sample)."""
    return _either("ZLB_L2", REQUIRED, L2_MODES)


def clock_floor():
    """ZLB_CLOCK_FLOOR: samples below this fraction of the steady SM clock are
    discarded (0 turns the clock check off)."""
    return _float("ZLB_CLOCK_FLOOR", REQUIRED, 0.0, 1.0)


def power_duty():
    """ZLB_POWER_DUTY: a measurement whose samples ran under the power cap
    is sampled again replaying this fraction of the time (0: never)."""
    return _float("ZLB_POWER_DUTY", REQUIRED, 0.0, 0.95)


def power_settle_ms():
    """ZLB_POWER_SETTLE_MS: milliseconds of idle before a measurement is
    sampled again at the power duty (0: at once)."""
    return _float("ZLB_POWER_SETTLE_MS", REQUIRED, 0.0, 10000.0)


def preload_ms():
    """ZLB_PRELOAD_MS: milliseconds of untimed back-to-back replays of a
    measurement's graphs right before it is sampled (0: none)."""
    return _float("ZLB_PRELOAD_MS", REQUIRED, 0.0, 10000.0)


def preload_steady():
    """ZLB_PRELOAD_STEADY: stop the preload once its last chunks' medians
    lie within this fraction of each other (0: the whole preload)."""
    return _float("ZLB_PRELOAD_STEADY", REQUIRED, 0.0, 0.05)


PLACEMENTS_MAX = 64     # ZLBT_MAX_PLACEMENTS


def placements():
    """ZLB_PLACEMENTS: graphs of the same work, each on its own memory,
    each one's replays in a block, per measurement (1: one graph)."""
    return _int("ZLB_PLACEMENTS", REQUIRED, 1, PLACEMENTS_MAX)


PLACEMENT_PROBES_MAX = 16


def placement_probes():
    """ZLB_PLACEMENT_PROBES: after a one-graph measurement, graphs of the
    same work on memory of their own, timed briefly for the row's
    placement_sd (0: none)."""
    return _int("ZLB_PLACEMENT_PROBES", REQUIRED, 0, PLACEMENT_PROBES_MAX)


def tune_placement_probes():
    """ZLB_TUNE_PLACEMENT_PROBES: the same after an autotuner's timing of a
    config, which makes no row (0: none, zlb's default)."""
    return _int("ZLB_TUNE_PLACEMENT_PROBES", REQUIRED, 0, PLACEMENT_PROBES_MAX)


def clock_elasticity():
    """ZLB_CLOCK_ELASTICITY: 1 reads each row's clock elasticity after its
    sampling (_elasticity), 0 does not."""
    return _int("ZLB_CLOCK_ELASTICITY", REQUIRED, 0, 1) == 1


TUNE_RULES = ("rows", "budget", "triton")


def tune_rule():
    """ZLB_TUNE_RULE: how an autotuner's timing of a config is taken: 'rows'
    (zlb's timer, the rows' stopping rule), 'budget' (zlb's timer, the
    tuner's rep and the minimum samples, no noise target) or 'triton'
    (Triton's own do_bench, as FlagGems' harness times configs)."""
    return _either("ZLB_TUNE_RULE", REQUIRED, TUNE_RULES)


# --- autotune record and replay (protocol §7) -----------------------------------

AUTOTUNE_MODES = ("record", "replay")


def autotune_mode():
    """ZLB_AUTOTUNE_MODE: 'record' (the default: every run that does not
    replay records) or 'replay'."""
    return _either("ZLB_AUTOTUNE_MODE", "record", AUTOTUNE_MODES)


def replay_from():
    """ZLB_REPLAY_FROM: the recording run directory, an absolute path; set
    exactly when ZLB_AUTOTUNE_MODE is 'replay' (None in record mode)."""
    raw = _get("ZLB_REPLAY_FROM")
    mode = autotune_mode()
    if mode == "record":
        if raw is not None:
            raise EnvError("ZLB_REPLAY_FROM=%r is set but ZLB_AUTOTUNE_MODE is 'record': "
                           "a run either records or replays" % raw)
        return None
    if raw is None:
        raise EnvError("ZLB_AUTOTUNE_MODE=replay needs ZLB_REPLAY_FROM (the recording run "
                       "directory)")
    if not os.path.isabs(raw):
        raise EnvError("ZLB_REPLAY_FROM=%r is not an absolute path" % raw)
    return raw


def backend():
    """ZLB_BACKEND: the backend's name as zlb's backend table spells it
    (letters, digits, '_', '-', '.'); None when zlb did not say."""
    raw = _get("ZLB_BACKEND")
    if raw is None:
        return None
    if not all(c.isascii() and (c.isalnum() or c in "_-.") for c in raw):
        raise EnvError("ZLB_BACKEND=%r is not a backend name (letters, digits, '_', '-', "
                       "'.')" % raw)
    return raw


def use_flagtune():
    """ZLB_USE_FLAGTUNE: '1' (FlagTune's expanded config spaces) or '0', as
    zlb's --use-flagtune passes it; as a bool."""
    raw = _get("ZLB_USE_FLAGTUNE")
    if raw is None:
        raise _missing("ZLB_USE_FLAGTUNE")
    if raw.strip() not in ("0", "1"):
        raise EnvError("ZLB_USE_FLAGTUNE=%r is neither '0' nor '1'" % raw)
    return raw.strip() == "1"
