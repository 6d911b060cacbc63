"""The ZLB_* environment that zlb sets for the child (docs/protocol.md §1).

Values are read when asked for, not at import, so that a test can change the
environment between calls. A value outside its domain raises EnvError with a
sentence naming the variable: the plugins refuse loudly rather than guess.
"""

import os


class EnvError(ValueError):
    """A ZLB_* variable holds something the plugins cannot use."""


def _get(name):
    v = os.environ.get(name)
    return v if v not in (None, "") else None


def _int(name, default, minimum):
    raw = _get(name)
    if raw is None:
        return default
    text = raw.strip()
    try:
        value = int(text, 10)
    except ValueError:
        raise EnvError("%s=%r is not an integer" % (name, raw)) from None
    if value < minimum:
        raise EnvError("%s=%r must be at least %d" % (name, raw, minimum))
    return value


def run_dir():
    """Absolute path of the run directory, or None: plugins stay inactive."""
    return _get("ZLB_RUN_DIR")


def op():
    """The operator as zlb names it (test function name without test_)."""
    return _get("ZLB_OP")


def shape_file():
    """The archived shape file; None in upstream shape mode."""
    return _get("ZLB_SHAPE_FILE")


def shape_mode():
    return _get("ZLB_SHAPE_MODE")


def seed():
    """ZLB_SEED, default 0. Any integer (negative seeds are refused by torch)."""
    return _int("ZLB_SEED", 0, 0)


TIMERS = ("graph", "direct")


def timer():
    """ZLB_TIMER: 'graph' or 'direct' (default 'direct': upstream's own timer)."""
    raw = _get("ZLB_TIMER")
    if raw is None:
        return "direct"
    if raw not in TIMERS:
        raise EnvError("ZLB_TIMER=%r is neither 'graph' nor 'direct'" % raw)
    return raw


def timer_lib():
    return _get("ZLB_TIMER_LIB")


def direct_repeat():
    """ZLB_DIRECT_REPEAT: N >= 1 calls of upstream do_bench per direct row."""
    return _int("ZLB_DIRECT_REPEAT", 1, 1)


def warmup_max_calls():
    """ZLB_WARMUP_MAX_CALLS: the most steady-state warm-up calls before capture."""
    return _int("ZLB_WARMUP_MAX_CALLS", 200, 1)


def capture_fatal():
    """ZLB_CAPTURE_FATAL as a list of exact texts (empty lines dropped)."""
    raw = os.environ.get("ZLB_CAPTURE_FATAL") or ""
    return [line.strip() for line in raw.split("\n") if line.strip()]


def package():
    """ZLB_PACKAGE: 'flag_gems' or 'flaggems_vllm' (None when zlb did not say)."""
    return _get("ZLB_PACKAGE")
