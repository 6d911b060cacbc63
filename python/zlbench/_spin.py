"""The SM clock a measurement really ran at, read with a graph of spin kernels.

On an H100 (bench/README, "The SM clock steps NVML does not show") torch's
gelu of 8192^2 read 92.57 us in some stretches of a process and 92.88 in
others, and the same row read 0.3-0.5% apart between zlb's processes, while
nvidia-smi read 1980 MHz every 50 ms with no reason bit. A graph of
torch.cuda._sleep kernels, each spinning a fixed number of SM clock cycles,
read two levels at the same moments, 1975.0 and 1960.2 MHz (one 15 MHz step
of the clock table), to about 0.01%, and gelu followed them. So the engine
reads this effective clock just before and just after a row's sampling,
zlb compare carries it as it carries NVML's clock (stats_compare.h,
"Clocks"), and a row measured at another level in each process reads
UNSURE instead of a false FASTER or SLOWER.

The figure is cycles over the spin graph's GPU time per kernel, gaps
between its kernels included: a relative measure, the same graph shape in
every process (SPIN_CYCLES x SPIN_NODES), not the clock table's number.
"""

import math

from . import _device, _state

SPIN_CYCLES = 200000        # about 0.1 ms a kernel at 2 GHz: gaps are ~1% of it
SPIN_NODES = 8              # a replay of about 0.8 ms
SPIN_SAMPLES = 3            # timed replays per reading, each after an untimed one

# What a measurement's record gets (zlbench.timing).
SPIN_KEYS = ("effective_mhz", "effective_mhz_reads", "effective_mhz_error")


def sleep_kernel(torch):
    """(the backend's spin kernel, None) or (None, why it has none): the
    device module's _sleep(cycles), which spins a fixed count of SM cycles."""
    dev = _device.module(torch)
    spin = getattr(dev, "_sleep", None)
    if spin is None:
        return None, "%s has no _sleep spin kernel" % getattr(dev, "__name__", "torch")
    return spin, None


class SpinClock:
    """One spin graph per run (_state: a warm worker's job starts anew),
    captured at the run's first graph measurement and kept: the same graph
    object reads the same, where a second capture of it read 0.14% apart."""

    def __init__(self):
        self.graph = None
        self.why = None

    def ready(self, torch, lib):
        """Whether the spin graph is there to read: captured at the first
        call; a backend without a spin kernel, or a spin that cannot be
        captured, is said once (self.why) and never tried again."""
        if self.graph is not None:
            return True
        if self.why is not None:
            return False
        spin, self.why = sleep_kernel(torch)
        if spin is None:
            return False
        try:
            from ._graph import capture

            self.graph = capture(torch, lambda: spin(SPIN_CYCLES), SPIN_NODES,
                                 needs_exec=not getattr(lib, "replays_graphs", False))
        except Exception as e:
            self._failed(e)
            return False
        return True

    def read(self, torch, lib, replay):
        """The effective SM clock now, in MHz, or None (self.why says why).
        replay is _graph._replay; a failure to replay the spin is recorded
        once and leaves the measurement alone."""
        if not self.ready(torch, lib):
            return None
        try:
            st, _, _ = replay(torch, lib, self.graph, SPIN_NODES, SPIN_SAMPLES, SPIN_SAMPLES,
                              0.0, 1000.0)
        except Exception as e:
            self._failed(e)
            return None
        ms = st.get("median_ms") if st.get("n") else None
        if not ms or ms <= 0:
            self.why = "the spin graph read no time"
            return None
        return SPIN_CYCLES / (ms * 1e3)

    def _failed(self, e):
        from ._graph import first_cause, release

        e = first_cause(e)
        self.why = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
        release(self.graph)
        self.graph = None


def clock():
    """This run's SpinClock (in _state: a job of a warm worker starts anew)."""
    if _state.spin_clock is None:
        _state.spin_clock = SpinClock()
    return _state.spin_clock


def release():
    """Let the run's spin graph go (the end of a run: a warm worker's next
    job captures its own)."""
    c, _state.spin_clock = _state.spin_clock, None
    if c is not None and c.graph is not None:
        from ._graph import release as release_graph

        release_graph(c.graph)
        c.graph = None


def why_none(lib):
    """Why a measurement has no effective clock, when it has none."""
    if not lib.v2:
        return "libzlbtimer ABI %d" % lib.abi
    if _state.tuning_now:
        return "an autotuner's config"
    return clock().why


def fields(reads, why):
    """SPIN_KEYS of a record from the readings before and after sampling
    (None where one failed): effective_mhz is their geometric mean, None
    unless both were read."""
    got = [r for r in reads if r]
    both = len(got) == len(reads) and len(got) > 0
    mean = math.prod(got) ** (1.0 / len(got)) if both else None
    return {"effective_mhz": mean, "effective_mhz_reads": list(reads) if got else None,
            "effective_mhz_error": None if both else (why or "not read")}
