"""Per-process state shared by the plugins.

The plugins are separate pytest plugin modules (each may be loaded alone), so
whatever one writes and another reads lives here, in module globals.
"""

# The open results/events sink (an _io.Sink) and whether the "inactive"
# notice has been written to stderr.
sink = None
inactive_said = False

# The test being run (pytest nodeid), set at logstart, and whether its
# setup or call phase failed.
nodeid = None
call_failed = False

# Outermost measurements of the current test that the results plugin has not
# yet paired with a BenchmarkResult metric, in the order they were taken.
# Each is a dict: value (what do_bench returned), record (the measurement
# object of protocol §3), role_hint, op_name, dtype.
pending = []

# The BenchmarkResults of the current test whose rows are written (results.py
# result_key()): FlagGems hands one result on through update_result and
# to_json both, and rows are written from the first of them only.
results_written = set()

# How many calls of our do_bench are on the stack (> 1: autotuning inside a
# measurement), and whether a CUDA graph capture of ours is in progress.
depth = 0
capturing = False

# Why this process's device context was poisoned by a capture failure
# (ZLB_CAPTURE_POISON), or None: once set, nothing more is measured here.
poisoned = None

# The do_bench that the timing plugin replaced (triton.testing.do_bench).
original_do_bench = None

# Keys of things said once per process (PLUGIN details and the like).
said = set()

# IR capture (zlbench.ir, docs/protocol.md §6). `ir` is the plugin's Capture
# while it is active (else None): the timing plugin runs a measurement's first
# eager call through ir.first_call(call) and an autotuner's timing call inside
# ir.tuning(). ir_during is what the compile listener records as "during":
# "eager" inside a first eager call, "tune" inside an autotuner's timing call,
# None otherwise ("other"). ir_launches collects the launches of the first
# eager call under way (None when none is).
ir = None
ir_during = None
ir_launches = None

# The current test's autotuning (_tune_tally): how many configs autotuners had
# timed (through our do_bench or LibTuner's do_bench_cudagraph) and the wall
# seconds they took (TUNE_TIMING, written when the test ends). tuning_now: one is under way
# (a config's timing that itself tunes is not counted twice).
tune_calls = 0
tune_s = 0.0
tuning_now = False


# The autotune replay fallbacks (_autotune_replay) of the outermost
# torch/gems measurement under way (timing.do_bench): a list of distinct
# {"reason", "kernel"} while one is, else None. A tuner chooses its config at
# the first call with a new key, which is inside that measurement; a fallback
# then belongs to its record (protocol section 3, replay_fallbacks).
measure_fallbacks = None
# The run's spin graph (_spin.SpinClock), made at its first graph
# measurement: one graph object for every reading of the run.
spin_clock = None
# The run's burn and short spin graphs (_elasticity.Burner), made at the
# first row that reads its clock elasticity.
burner = None


def reset_pending():
    """Drop unpaired measurements; returns how many there were."""
    n = len(pending)
    del pending[:]
    return n
