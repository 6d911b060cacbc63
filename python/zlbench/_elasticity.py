"""How far a row's time follows the SM clock, read in the row's own process.

Between zlb's processes the effective SM clock (_spin) settles at another
level each time (1936-1970 MHz on an H100 whose NVML reads 1980), and a
row's time follows it by an elasticity s of its own, ln t = c - s ln f:
bench/clock_elasticity.py found s the same on four matrices (torch gelu
2048^2 0.82-0.93, torch cumsum 4096x16384 0.64-0.74, FlagGems' amax and
cumsum 0). zlb compare widened such a row's interval by the whole clock
difference less a step, and a row 0.8% apart at clocks 0.75% apart read
UNSURE. Knowing s, it corrects ln(B/A) by s times the sides' clock
difference instead (stats_compare.h, "Elasticity").

Within one process the clock holds still, so s has to be made to show
(bench/elasticity_probe.py, on an H100): a burn (fp16 matmuls 8192^3, the
board at its power cap) drops the clock to ~1500 MHz; it climbs back within
~0.1 s to a plateau a step or two below where it was before (the board is
warmer), and stays there. Over the whole recovery the fitted s came out
above the between-process one for rows whose time is part memory, part
clock (torch amax 4096x8192 0.81 against 0.48-0.66, FlagGems' gelu 4096^2
0.75 against 0.47-0.54): time = memory + cycles / f bends, and far below
the top clock a row is more clock-bound than near it. So the fit takes the
pairs within WINDOW below the clock before the burn: the tail of the climb,
the plateau and the pairs before the burn, the range the processes differ
by.

The phase, after the row's sampling and probes (nothing here touches the
number; like the probes it is caliber, for the warmth it leaves):
1. STEADY_PAIRS pairs, each a replay of a short spin graph (a fixed count of
   SM cycles: its time is the clock) and one of the row's measured graph,
   every replay between two of the device module's timing events;
2. the burn, BURN_MS of it;
3. pairs for RECOVER_MS while the clock climbs back.
A row replay's clock is the geometric mean of the spins on either side.
"""

import math
import statistics

from . import _device, _spin, _state

SPIN_CYCLES = 100000     # about 50 us a kernel at 2 GHz
SPIN_NODES = 4           # a spin replay of about 0.2 ms
BURN_N = 8192            # the burn's fp16 matmul size (two 128 MiB tensors)
BURN_CALLS = 4           # matmuls per burn replay (about 6 ms on an H100)
BURN_MS = 250.0          # how long the burn holds the cap
STEADY_PAIRS = 30        # pairs before the burn
RECOVER_MS = 250.0       # GPU time of pairs behind it
MIN_PAIRS, MAX_PAIRS = 20, 400
# Pairs within this fraction below the steady clock are fitted (above).
WINDOW = 0.04
# Less clock spread than this (sd of ln clock over the fitted pairs) cannot
# tell s from noise: the burn did not move the clock.
MIN_LN_SPREAD = 0.002
# A pair whose residual is beyond this many MADs is a replay something else
# delayed, dropped before the final fit.
RESIDUAL_MADS = 5.0

# What a measurement's record gets (zlbench.timing).
KEYS = ("clock_elasticity", "clock_elasticity_se", "clock_elasticity_pairs",
        "clock_elasticity_mhz", "clock_elasticity_why")


def fit(pairs):
    """(s, se, n) by least squares of ln time on ln clock over pairs [(MHz,
    ms)], pairs far off the first line dropped (RESIDUAL_MADS) and fitted
    again; (None, None, n) when the clock did not spread (MIN_LN_SPREAD) or
    fewer than MIN_PAIRS are left."""
    pts = [(math.log(f), math.log(t)) for f, t in pairs
           if f and t and f > 0 and t > 0 and math.isfinite(f) and math.isfinite(t)]
    line = _line(pts)
    if line is None:
        return None, None, len(pts)
    mad = statistics.median(abs(r) for r in line[1])
    if mad > 0:
        pts = [p for p, r in zip(pts, line[1]) if abs(r) <= RESIDUAL_MADS * mad]
        line = _line(pts)
        if line is None:
            return None, None, len(pts)
    b, res, sxx = line
    se = math.sqrt(sum(r * r for r in res) / (len(pts) - 2) / sxx)
    return -b, se, len(pts)


def _line(pts):
    """(slope, residuals, sxx) of least squares over [(ln f, ln t)]; None
    with fewer than MIN_PAIRS or a clock spread under MIN_LN_SPREAD."""
    if len(pts) < MIN_PAIRS:
        return None
    mx = statistics.fmean(x for x, _ in pts)
    my = statistics.fmean(y for _, y in pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    if sxx <= 0 or math.sqrt(sxx / (len(pts) - 1)) < MIN_LN_SPREAD:
        return None
    b = sum((x - mx) * (y - my) for x, y in pts) / sxx
    return b, [y - my - b * (x - mx) for x, y in pts], sxx


def window(pairs, steady_mhz):
    """The pairs whose clock is at least (1 - WINDOW) x steady_mhz."""
    floor = (1 - WINDOW) * steady_mhz
    return [(f, t) for f, t in pairs if f >= floor]


def fields(s=None, se=None, n=0, mhz=None, why=None):
    """KEYS of a record; s and se rounded to what they can say."""
    return {"clock_elasticity": None if s is None else round(s, 4),
            "clock_elasticity_se": None if se is None else round(se, 4),
            "clock_elasticity_pairs": n, "clock_elasticity_mhz": mhz,
            "clock_elasticity_why": why}


class Burner:
    """The run's burn and short spin graphs, captured at the first row that
    reads its elasticity and kept (like _spin.SpinClock); a backend that
    cannot make them is said once (self.why) and never tried again."""

    def __init__(self):
        self.spin = None
        self.burn = None
        self.burn_ms = None
        self.tensors = None
        self.why = None

    def ready(self, torch):
        if self.burn is not None:
            return True
        if self.why is not None:
            return False
        dev = _device.module(torch)
        sleep, self.why = _spin.sleep_kernel(torch)
        if sleep is None:
            return False
        try:
            from ._graph import capture

            w = torch.randn(BURN_N, BURN_N, device=_device.name_of(dev), dtype=torch.float16)
            o = torch.empty_like(w)
            self.tensors = (w, o)
            # Each once before its capture: cuBLAS makes its handle at the
            # first call, which a capture refuses.
            sleep(SPIN_CYCLES)
            torch.mm(w, w, out=o)
            self.spin = capture(torch, lambda: sleep(SPIN_CYCLES), SPIN_NODES, needs_exec=False)
            self.burn = capture(torch, lambda: torch.mm(w, w, out=o), BURN_CALLS,
                                needs_exec=False)
            self.burn_ms = _timed(dev, [self.burn], 3) / 3
        except Exception as e:
            self._failed(e)
            return False
        return True

    def _failed(self, e):
        from ._graph import first_cause

        e = first_cause(e)
        self.why = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
        self.release()

    def release(self):
        from ._graph import release

        release(self.spin)
        release(self.burn)
        self.spin = self.burn = self.tensors = None

    def measure(self, torch, row, k, row_ms):
        """fields() for the row's measured graph row of k calls, one replay
        of which takes about row_ms."""
        if not self.ready(torch):
            return fields(why=self.why)
        dev = _device.module(torch)
        try:
            steady = _pairs(dev, self.spin, row, STEADY_PAIRS)
            for _ in range(max(1, round(BURN_MS / max(self.burn_ms, 1e-3)))):
                self.burn.replay()
            n = int(RECOVER_MS / max(row_ms + 0.2, 1e-3))
            recover = _pairs(dev, self.spin, row, max(MIN_PAIRS, min(MAX_PAIRS, n)))
        except Exception as e:
            self._failed(e)
            return fields(why=self.why)
        if not steady:
            return fields(why="the spin read no clock")
        steady_mhz = statistics.median(f for f, _ in steady)
        kept = window(steady + recover, steady_mhz)
        s, se, n = fit([(f, t / k) for f, t in kept])
        fs = sorted(f for f, _ in kept)
        mhz = [round(fs[0], 1), round(steady_mhz, 1)] if fs else None
        if s is None:
            return fields(n=n, mhz=mhz, why="the clock did not move enough to read s "
                          "(%d pairs within %.0f%% of %.0f MHz)" % (n, 100 * WINDOW, steady_mhz))
        return fields(s, se, n, mhz)


def _timed(dev, graphs, reps):
    """GPU ms of reps replays of each graph in turn, between two events."""
    a, b = dev.Event(enable_timing=True), dev.Event(enable_timing=True)
    a.record()
    for _ in range(reps):
        for g in graphs:
            g.replay()
    b.record()
    b.synchronize()
    return a.elapsed_time(b)


def _pairs(dev, spin, row, n):
    """Queue n (spin, row) replays and a last spin, each between events;
    [(clock MHz, row replay ms)] once they ran."""
    ev = [dev.Event(enable_timing=True) for _ in range(2 * n + 2)]
    ev[0].record()
    for i in range(n):
        spin.replay()
        ev[2 * i + 1].record()
        row.replay()
        ev[2 * i + 2].record()
    spin.replay()
    ev[2 * n + 1].record()
    ev[-1].synchronize()
    spins = [ev[2 * i].elapsed_time(ev[2 * i + 1]) for i in range(n + 1)]
    mhz = [SPIN_CYCLES * SPIN_NODES / (ms * 1e3) if ms > 0 else math.nan for ms in spins]
    out = []
    for i in range(n):
        t = ev[2 * i + 1].elapsed_time(ev[2 * i + 2])
        f = math.sqrt(mhz[i] * mhz[i + 1]) if mhz[i] > 0 and mhz[i + 1] > 0 else math.nan
        if t > 0 and f > 0:
            out.append((f, t))
    return out


def burner():
    """This run's Burner (in _state: a job of a warm worker starts anew)."""
    if _state.burner is None:
        _state.burner = Burner()
    return _state.burner


def release():
    """Let the run's burn and spin graphs and tensors go (the end of a run)."""
    b, _state.burner = _state.burner, None
    if b is not None:
        b.release()
