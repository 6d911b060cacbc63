"""The power cap and a measurement: when a graph measurement is sampled again
with the GPU idle part of the time (_rule.Rule.power_duty), and what its record
keeps of the first sampling. Pure functions of a sampling's statistics;
_graph does the sampling."""

# NVML's reasons that mean the board's power limit held the clock down.
POWER_LIMITS = ("sw_power_cap", "hw_power_brake_slowdown")
# A graph measurement's record fields of it: the duty its kept samples ran
# at (1.0 back to back; None: a library before ABI 7), and what the first,
# power-capped sampling read when it was sampled again (else None).
POWER_KEYS = ("power_duty", "power_duty_from")
# What the record keeps of a power-capped first sampling (power_duty_from),
# besides why it was sampled again ("why": duty_reason's answer).
DUTY_FROM_KEYS = ("centre_ms", "median_ms", "stdrel", "n", "clock_mhz", "clock_min_mhz",
                  "clock_reasons", "clock_max_mhz", "stop_reason")


def power_capped(stats):
    """Did NVML say the power cap held the clock while these samples ran?

    A compute-bound kernel replayed back to back can draw past the board's
    limit; the power controller then settles on a clock of its own, another
    in every process (a 700 W H100 ran fp16 addmm of 2048^3 at 1470-1710
    MHz in four), and the time follows it. Sampled again with the GPU idle
    part of the time (_rule.Rule.power_duty), it runs at the clock the board
    allows below the cap, the same in every process."""
    return any(r in POWER_LIMITS for r in (stats.get("clock_reasons") or ()))


def clock_held(stats, clock_floor):
    """Did the kept samples run below the board's top clock (clock_max_mhz,
    ABI 9) by more than the clock floor allows, with NVML naming no reason?

    The cap's bit is the power of the moment NVML is asked: on a 700 W H100
    a 4096^3 addmm ran at 1665 MHz with no bit read at any batch's start or
    end, where its other processes read the cap's and were sampled again at
    1980 MHz (10% apart). A busy GPU that nothing limits runs at its top
    clock; one held below it with no reason named is taken for capped. A
    reason other than the power cap's (thermal, a clock setting) says what
    held it, and pauses would not lift it."""
    top, mhz = stats.get("clock_max_mhz"), stats.get("clock_mhz")
    if not top or not mhz or not clock_floor or stats.get("clock_reasons") != []:
        return False
    return mhz < clock_floor * top


def duty_reason(stats, clock_floor, recorded_duty=None):
    """Why a measurement is sampled again at the power duty, or None:
    "power_cap" (power_capped), "clock_held" (clock_held), or "recording":
    it replays a recording (GraphShape.power_duty) whose samples ran below
    duty 1. Whether the cap's bit is caught is the luck of the moment NVML
    is asked: on a 700 W H100 an fp16 1024^3 addmm read 6.49-6.50 us in
    three processes at duty 0.5 (each had caught the bit) and 6.61 us in the
    fourth, back to back at 1980 MHz with no bit caught. So a replay samples
    such a row as its recording did, and both sides of an A/B run one
    protocol. A replay whose recording ran back to back still goes to the
    duty where its own samples were capped: that reading is the true one."""
    if power_capped(stats):
        return "power_cap"
    if clock_held(stats, clock_floor):
        return "clock_held"
    if recorded_duty is not None and recorded_duty < 1:
        return "recording"
    return None


def single_read_duty(lib, duty):
    """The library's duty for a one-sample read (_replay: one untimed replay,
    then the timed one, then the library's pause) that leaves the GPU busy
    duty of the time. From ABI 8 the library counts the untimed replay as
    busy itself: duty. Before, its pause was (1/duty - 1) timed replays: d /
    (2 - d). 0 (back to back) for duty 0 or 1."""
    if not 0 < duty < 1:
        return 0.0
    return duty if getattr(lib, "v8", False) else duty / (2.0 - duty)
