#include "run/run_config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"

static const char *const levels[] = { "core", "comprehensive", NULL };
static const char *const shape_modes[] = { "inline", "file", "upstream", NULL };
static const char *const colors[] = { "auto", "always", "never", NULL };
static const char *const timers[] = { "auto", "graph", "direct", NULL };
static const char *const l2_modes[] = { "hot", "cold", NULL };
static const char *const on_off[] = { "on", "off", NULL };
static const char *const tune_rules[] = { "rows", "budget", "triton", NULL };

/*
 * DTYPES / --dtypes: names as torch spells them (float16, complex64, ...).
 * Which ones the operator's FlagGems accepts is its conftest's to say:
 * preflight reads it (providers/flaggems_dtypes.h).
 */
int valid_dtype_names(const char *v, struct strbuf *why)
{
	struct strvec items = STRVEC_INIT;
	int ret = 0;

	strvec_split(&items, v, " ,\t");
	for (size_t i = 0; i < items.nr && !ret; i++) {
		const char *p = items.v[i];
		int ok = islower((unsigned char)*p);
		for (; *p && ok; p++)
			ok = islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_';
		if (!ok) {
			strbuf_addf(why, "'%s' is not a dtype name (lower-case letters, digits and "
				    "'_', as torch names them: float16, bfloat16, complex64, ...)",
				    items.v[i]);
			ret = -1;
		}
	}
	strvec_clear(&items);
	return ret;
}

static int valid_backend(const char *v, struct strbuf *why)
{
	char *names;

	if (backend_find(v))
		return 0;
	names = backend_names_help();
	strbuf_addf(why, "unknown backend '%s'; known: %s", v, names);
	free(names);
	return -1;
}

/* Plugin names become `-p <name>` for pytest: dotted Python identifiers only. */
static int valid_plugins(const char *v, struct strbuf *why)
{
	struct strvec items = STRVEC_INIT;
	int ret = 0;

	strvec_split(&items, v, " ,\t");
	for (size_t i = 0; i < items.nr && !ret; i++) {
		const char *p = items.v[i];
		int ok = isalpha((unsigned char)*p) || *p == '_';
		for (; *p && ok; p++)
			ok = isalnum((unsigned char)*p) || *p == '_' ||
			     (*p == '.' && p[1] && p[1] != '.');
		if (!ok) {
			strbuf_addf(why, "'%s' is not a Python module name", items.v[i]);
			ret = -1;
		}
	}
	strvec_clear(&items);
	return ret;
}

static int valid_op(const char *v, struct strbuf *why)
{
	for (const char *p = v; *p; p++) {
		if (isalnum((unsigned char)*p) || *p == '_')
			continue;
		strbuf_addf(why, "'%s' is not an operator name: use the test function "
			    "name without 'test_' (letters, digits and '_' only)", v);
		return -1;
	}
	return *v ? 0 : (strbuf_addstr(why, "empty operator name"), -1);
}

/* "stem" or "folder/stem": a file under benchmark/, never a path out of it. */
static int valid_op_file(const char *v, struct strbuf *why)
{
	const char *slash = strchr(v, '/');
	int ok = *v && !strstr(v, "..") && v[0] != '/' && !strchr(v, '\\') &&
		 (!slash || (slash[1] && !strchr(slash + 1, '/')));

	for (const char *p = v; ok && *p; p++)
		ok = isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '/';
	if (!ok) {
		strbuf_addf(why, "'%s' must name benchmark/test_<OP_FILE>.py: a file "
			    "stem, or folder/stem for benchmark/folder/test_stem.py", v);
		return -1;
	}
	return 0;
}

/*
 * Where each knob lands in struct run_config. A .export_env knob goes to the
 * measured process's environment (run_config_engine_env); a .record knob is
 * caliber, recorded under that key in run_identity.json (run_caliber.c).
 */
/*
 * Named sets of defaults (--preset). Each entry is a knob's value under the
 * preset; a knob given on the command line or in the environment wins, as
 * it wins over any default. "full" is the table's own defaults.
 */
static const char *const presets[] = { "full", "screen", NULL };
static const struct preset_value { const char *preset, *option, *value; } preset_values[] = {
	/*
	 * Triage: a tenth of the warm-up and a quarter of the sampling, looser
	 * noise, and configs timed at the tuner's own budget (a tuned operator's
	 * configs cost it more than its rows: layer_norm on the H200, 17.3 of 24.4 s).
	 */
	{ "screen", "warmup", "100" },
	{ "screen", "iter", "25" },
	{ "screen", "noise-target", "0.005" },
	{ "screen", "max-wall", "500" },
	{ "screen", "tune-rule", "budget" },
	{ NULL, NULL, NULL },
};

#define BIND(kind, field) .store = OPT_STORE_##kind, .offset = offsetof(struct run_config, field)

const struct opt_def run_option_defs[] = {
	{ "op", NULL, "OP", NULL, OPT_STRING, NULL, 0, 0, "NAME",
	  "operator: the benchmark test function name without 'test_' "
	  "(default softmax; also the first positional argument)", valid_op },
	{ "op-file", NULL, "OP_FILE", NULL, OPT_STRING, NULL, 0, 0, "STEM",
	  "benchmark file: benchmark/test_<STEM>.py (default: the one file that "
	  "defines test_<op>)", valid_op_file,
	  BIND(STR, op_file) },
	{ "shapes", "shape-file", "SHAPE_FILE", NULL, OPT_STRING, NULL, 0, 0, "FILE",
	  "shape YAML (top-level key: op name or Benchmark class name)", NULL,
	  BIND(STR, shape_file) },
	{ "flaggems-dir", NULL, "FLAGGEMS_DIR", NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "FlagGems checkout (flag_gems or flaggems_vllm); default: the repo of an "
	  "importable flag_gems, else ./FlagGems", NULL,
	  BIND(STR, flaggems_dir) },
	{ "test-node", NULL, "TEST_NODE", NULL, OPT_STRING, NULL, 0, 0, "NODE",
	  "pytest node path/benchmark/test_x.py::test_op instead of --op/--op-file "
	  "(shape mode defaults to upstream)", NULL,
	  BIND(STR, test_node) },
	{ "shape-mode", NULL, "SHAPE_MODE", NULL, OPT_CHOICE, shape_modes, 0, 0, "MODE",
	  "inline: built-in shapes; file: --shapes; upstream: FlagGems' "
	  "core_shapes.yaml (default: derived from what is given)", NULL,
	  BIND(STR, shape_mode) },
	{ "dtypes", NULL, "DTYPES", NULL, OPT_LIST, NULL, 0, 0, "\"T T\"",
	  "dtypes to measure, space separated, any name the checkout's --dtypes accepts "
	  "(its benchmark/conftest.py; default: the operator's own list)", valid_dtype_names,
	  BIND(LIST, dtypes) },
	{ "level", NULL, "BENCH_LEVEL", "core", OPT_CHOICE, levels, 0, 0, "LEVEL",
	  "FlagGems bench level; comprehensive adds each class's set_more_shapes()", NULL,
	  BIND(STR, bench_level), .record = "bench_level" },
	{ "use-flagtune", NULL, "USE_FLAGTUNE", "0", OPT_BOOL, NULL, 0, 0, NULL,
	  "tune in FlagTune's expanded config spaces (slow first run); A and B "
	  "must agree", NULL,
	  BIND(BOOL, use_flagtune), .export_env = "ZLB_USE_FLAGTUNE", .record = "use_flagtune" },
	{ "color", NULL, "FLAGGEMS_PERF_COLOR", "auto", OPT_CHOICE, colors, 0, 0, "WHEN",
	  "terminal colours (NO_COLOR is honoured in auto); run.log never has any", NULL,
	  BIND(STR, color) },
	{ "backend", NULL, "ZL_BACKEND", NULL, OPT_STRING, NULL, 0, 0, "NAME",
	  "accelerator backend, a name or alias listed under 'backends' below "
	  "(default: the first)", valid_backend,
	  BIND(STR, backend) },
	{ "direct-repeat", NULL, "ZL_DIRECT_REPEAT", "1", OPT_INT, NULL, 1, 1000, "N",
	  "direct-timed rows: median of N upstream do_bench calls", NULL,
	  BIND(INT, direct_repeat), .export_env = "ZLB_DIRECT_REPEAT", .record = "direct_repeat" },
	{ "extra-plugins", NULL, "ZL_EXTRA_PLUGINS", NULL, OPT_LIST, NULL, 0, 0, "\"M M\"",
	  "more pytest plugin modules to load with -p", valid_plugins,
	  BIND(LIST, extra_plugins) },
	{ "replay-from", NULL, "REPLAY_FROM", NULL, OPT_STRING, NULL, 0, 0, "RUN_DIR",
	  "replay the autotune configs recorded in an earlier run directory", NULL,
	  BIND(STR, replay_from) },
	{ "isolate-tuner-cache", NULL, "ZL_ISOLATE_TUNER_CACHE", "0", OPT_BOOL, NULL, 0, 0,
	  NULL, "give the run its own FlagGems tuner cache, dropped afterwards", NULL,
	  BIND(BOOL, isolate_tuner_cache) },
	{ "parallel-warmup-gpus", NULL, "PARALLEL_WARMUP_GPUS", "0", OPT_INT, NULL, 0, 1024, "N",
	  "shard the autotune sweep over N GPUs (measurement stays serial); "
	  "below 2 means serial", NULL,
	  BIND(INT, parallel_warmup_gpus) },
	{ "device", NULL, "ZL_DEVICE", "0", OPT_INT, NULL, 0, 1023, "N",
	  "device index among those visible (an inherited visibility list, "
	  "e.g. 6,7, is honoured: 1 means 7)", NULL,
	  BIND(INT, device) },
	{ "timer", NULL, "ZL_TIMER", "auto", OPT_CHOICE, timers, 0, 0, "KIND",
	  "graph: graph replay timed by libzlbtimer (per-row fallback to direct); "
	  "direct: upstream do_bench; auto: graph where the backend supports it", NULL,
	  BIND(STR, timer) },
	{ "preset", NULL, "ZL_PRESET", "full", OPT_CHOICE, presets, 0, 0, "NAME",
	  "full: the defaults below; screen: a triage caliber (warm-up 100 ms, 25 ms "
	  "sampled, noise target 0.005, 500 ms wall per measurement) for a first pass "
	  "over a whole suite. A preset sets defaults only: a knob given still wins. "
	  "Caliber: zlb compare refuses a screen against a full run", NULL,
	  BIND(STR, preset), .record = "preset" },
	{ "warmup", NULL, "ZL_WARMUP_MS", "1000", OPT_INT, NULL, 0, 600000, "MS",
	  "warm-up budget per measurement before capture (ms; at most "
	  "--warmup-max-calls calls)", NULL,
	  BIND(INT, warmup_ms), .record = "warmup_ms" },
	/* The stopping rule of a graph-timed measurement: all four are caliber. */
	{ "min-samples", NULL, "ZL_MIN_SAMPLES", "10", OPT_INT, NULL, 1, 100000, "N",
	  "stopping rule: at least N samples (replays) per measurement", NULL,
	  BIND(INT, min_samples), .export_env = "ZLB_MIN_SAMPLES", .record = "min_samples" },
	{ "iter", "min-time", "ZL_ITER_MS", "100", OPT_INT, NULL, 1, 600000, "MS",
	  "stopping rule: at least MS of GPU time sampled per measurement "
	  "(FlagGems' --iter)", NULL,
	  BIND(INT, rep_ms), .record = "min_time_ms" },
	{ "noise-target", NULL, "ZL_NOISE_TARGET", "0.001", OPT_REAL, NULL, 0, 0, "R",
	  "stopping rule: then sample until the relative noise of the median (half "
	  "its 95% interval / median) is at most R; 0 turns it off", NULL, 0.0, 0.5,
	  BIND(STR, noise_target), .export_env = "ZLB_NOISE_TARGET", .record = "noise_target" },
	{ "max-wall", NULL, "ZL_MAX_WALL_MS", "2000", OPT_INT, NULL, 1, 600000, "MS",
	  "stopping rule: but never sample one measurement longer than MS of wall time",
	  NULL,
	  BIND(INT, max_wall_ms), .export_env = "ZLB_MAX_WALL_MS", .record = "max_wall_ms" },
	{ "l2", NULL, "ZL_L2", "hot", OPT_CHOICE, l2_modes, 0, 0, "MODE",
	  "hot: L2 as the workload leaves it; cold: flush the device's L2 before "
	  "each sample (one call per replay)", NULL,
	  BIND(STR, l2_mode), .export_env = "ZLB_L2", .record = "l2_mode" },
	{ "clock-floor", NULL, "ZL_CLOCK_FLOOR", "0.97", OPT_REAL, NULL, 0, 0, "F",
	  "discard samples taken while the SM clock sat below F x the measurement's "
	  "steady clock; 0 turns the check off", NULL, 0.0, 1.0,
	  BIND(STR, clock_floor), .export_env = "ZLB_CLOCK_FLOOR", .record = "clock_floor" },
	/*
	 * On a 700 W H100 every fp16 addmm of 2048^3 and up ran under the SW
	 * power cap, back to back, at 1155-1710 MHz: a different clock in
	 * every process, so its single rounds disagreed by up to 8% and no
	 * A/A said SAME. Replaying half the time (bench/power_duty.py) it
	 * drew 480-540 W and held 1980 MHz: 4096^3 read 202-205 us, not
	 * 231-235. Caliber: the rows it touches are timed at the clock the
	 * board allows below its cap, not at the one the cap settles on.
	 */
	{ "power-duty", NULL, "ZL_POWER_DUTY", "0.5", OPT_REAL, NULL, 0, 0, "F",
	  "when NVML says the power cap held the SM clock while a measurement's "
	  "samples ran, sample it again replaying only F of the time (idle in "
	  "between), at the clock the board allows below its cap; 0: never", NULL,
	  0.0, 0.95,
	  BIND(STR, power_duty), .export_env = "ZLB_POWER_DUTY", .record = "power_duty" },
	/*
	 * What the board ran just before moves a duty sampling's time: on an
	 * H100 a gems addmm 1024^3 at duty 0.5 read 6.57 us in the two
	 * processes whose back-to-back sampling had just hit the cap and 6.47
	 * in the two whose had not, at one NVML clock and one spin clock.
	 * Idling first lets every process start it from the same state. Off by
	 * default: on one H100 the issue-28 matrix at 0 and at 250 ms (two
	 * runs back to back) gave the same SAME rates within a row, while at
	 * 250 the duty sampling was noisier (torch addmm 2048^3: stdrel
	 * 0.33-0.39% and 225-258 samples, against 0.12-0.19% and 27-51 at 0),
	 * took 6.0-8.0 s a replay instead of 2.3-2.9, and the one false verdict
	 * of either run was a duty row's. The idle's clock ramps while the
	 * duty samples. bench/README.md, "the settle's control".
	 */
	{ "power-settle", NULL, "ZL_POWER_SETTLE", "0", OPT_REAL, NULL, 0, 0, "MS",
	  "idle the GPU for MS milliseconds before a measurement is sampled again at "
	  "--power-duty, so that every process starts that sampling from the same power "
	  "state; 0: at once", NULL,
	  0.0, 10000.0,
	  BIND(STR, power_settle), .export_env = "ZLB_POWER_SETTLE_MS",
	  .record = "power_settle_ms" },
	/*
	 * A tensor-core kernel restarted after the capture's idle steps
	 * through levels while it is sampled: on an H100 torch's fp16 addmm
	 * of 1024^3 read 7.60, 7.585, 7.54 and 7.51 us, stepping 23 to 167 ms
	 * into the sampling, at another moment in each process, and four
	 * processes' medians 7.511-7.585 us (python/zlbench/_preload.py).
	 * The preload runs the row's graphs back to back first, untimed, so
	 * that the sampling starts on the level that load settles at. Off by
	 * default until a GPU shows that those levels agree between
	 * processes (bench/preload_control.sh).
	 */
	{ "preload", NULL, "ZL_PRELOAD", "0", OPT_REAL, NULL, 0, 0, "MS",
	  "replay each measurement's graphs back to back for MS milliseconds of GPU time, "
	  "untimed, right before it is sampled, so that the sampling starts at the clock "
	  "the board holds under that load; 0: none", NULL,
	  0.0, 10000.0,
	  BIND(STR, preload), .export_env = "ZLB_PRELOAD_MS",
	  .record = "preload_ms" },
	/*
	 * How long the preload must be is the row's: the addmm rounds that
	 * sampled 0.6-1.6 s settled at 7.503-7.511 us, those that stopped at
	 * 0.1 s read 7.53-7.75, and a preload as long as the slowest row needs
	 * costs every row that much (1000 ms is a minute on issue 28's
	 * 60 row-sides). With a fraction here the preload stops once its
	 * last eight 25 ms chunks agree within it (python/zlbench/_preload.py
	 * says why eight), and --preload is its cap.
	 */
	{ "preload-steady", NULL, "ZL_PRELOAD_STEADY", "0", OPT_REAL, NULL, 0, 0, "FRAC",
	  "stop the preload once the medians of its last eight 25 ms chunks lie within this "
	  "fraction of each other (--preload is then its cap); 0: the whole --preload", NULL,
	  0.0, 0.05,
	  BIND(STR, preload_steady), .export_env = "ZLB_PRELOAD_STEADY",
	  .record = "preload_steady" },
	/*
	 * One graph by default: on an H200, 8 placements alternated every
	 * replay read L2-sized kernels up to 8% slow, and replayed in blocks
	 * (libzlbtimer now does) they still read torch.fmin on 50000 elements
	 * 12.5% above one graph and do_bench_cudagraph, which agree: where a
	 * tiny kernel's buffers land moves it by that much (issue 12,
	 * bench/placement_mechanism.py). N > 1 is another caliber.
	 */
	{ "placements", NULL, "ZL_PLACEMENTS", "1", OPT_INT, NULL, 1, 64, "N",
	  "capture each measured graph N times, each on memory of its own, and "
	  "average their medians, each graph's replays in blocks (another "
	  "caliber: it averages where a small kernel's buffers land); 1: one graph",
	  NULL,
	  BIND(INT, placements), .export_env = "ZLB_PLACEMENTS", .record = "placements" },
	/*
	 * The probes are there for zlb compare: one graph is one draw of
	 * where a small kernel's buffers land (on an H200 a 1024x1024
	 * softmax read 7.6% apart in two processes, one graph each), and a
	 * single round can only be judged with that spread. Caliber: they
	 * are timed after the measured graph, but the memory their graphs
	 * held is where the next measurement's buffers land (on an H200 the
	 * gems sum of 1M elements, measured after the torch side's probes,
	 * read 3.262 and 3.261 us in two processes without them, 3.200 and
	 * 3.245 with them). Two by default: on an H100 matrix (10 operators
	 * x 3 sizes, four processes) the first two probes alone gave the
	 * same verdicts as three (replay against replay SAME on 89-93% of
	 * gems rows, 86-90% of torch; two rounds 93%, 93-97%; none false)
	 * and cost a third less of the worker's time; one alone left two
	 * rounds of torch rows at 86%.
	 */
	{ "placement-probes", NULL, "ZL_PLACEMENT_PROBES", "2", OPT_INT, NULL, 0, 16, "N",
	  "after a one-graph measurement, time N more graphs of the same work on "
	  "memory of their own, briefly: the row's placement_sd, which zlb compare "
	  "takes as a single round's drift; 0: none", NULL,
	  BIND(INT, placement_probes), .export_env = "ZLB_PLACEMENT_PROBES",
	  .record = "placement_probes" },
	/*
	 * Between processes the SM clock settles at another level each time
	 * (1936-1970 MHz on an H100 whose NVML read 1980) and a row follows it
	 * by an elasticity of its own (torch gelu 2048^2 ~0.85, FlagGems' amax
	 * 0): read in the row's process, it lets zlb compare correct for the
	 * sides' clocks instead of widening by all of their difference
	 * (stats_compare.h, "Elasticity"). Caliber: the burn it reads s
	 * around leaves the board warmer for the next row. Off by default:
	 * on an H100 (issue 28's matrix, 2026-12-08) it read s near the
	 * between-process one (torch amax 4096x8192 0.49-0.61 against
	 * 0.48-0.66) but cost 0.6-0.9 s a row (the recording 151 s against
	 * 94) and the burn's warmth put rows that had sampled back to back
	 * (gelu and mul 4096^2, rms_norm, index_select) under the power cap
	 * and to the duty, whose intervals widened more than the correction
	 * narrowed.
	 */
	{ "clock-elasticity", NULL, "ZL_CLOCK_ELASTICITY", "0", OPT_BOOL, NULL, 0, 0, NULL,
	  "after each row's sampling, read how far its time follows the SM clock "
	  "(a burn, then pairs of the row and a spin graph while the clock climbs "
	  "back): zlb compare corrects for the sides' clocks by it", NULL,
	  BIND(BOOL, clock_elasticity), .export_env = "ZLB_CLOCK_ELASTICITY",
	  .record = "clock_elasticity" },
	/*
	 * An autotuner's timing of a config makes no row: its placement_sd is
	 * never read. Probing there cost a tuned operator three more captures
	 * of K calls and 44 replays per config (layer_norm on the H200: 31
	 * configs, 39.7 s where FlagGems' own harness took 22.5 s). Caliber all
	 * the same: what the probes' graphs held is where later rows' buffers
	 * land (see --placement-probes).
	 */
	{ "tune-placement-probes", NULL, "ZL_TUNE_PLACEMENT_PROBES", "0", OPT_INT, NULL, 0, 16, "N",
	  "placement probes after each autotuning measurement (a config's time, "
	  "never a row); runs before this knob probed there as --placement-probes "
	  "says", NULL,
	  BIND(INT, tune_placement_probes), .export_env = "ZLB_TUNE_PLACEMENT_PROBES",
	  .record = "tune_placement_probes" },
	/*
	 * How an autotuner's timing of a config stops. Under the rows' rule a
	 * config is sampled until its median's noise meets --noise-target: on
	 * the H200 layer_norm's 42 configs took 17.3 s that way (412 ms each),
	 * where Triton's do_bench spends its warm-up and rep (25 + 100 ms). The
	 * tuner only ranks configs, and "budget" gives it what it asked for:
	 * its rep of GPU time and --min-samples, no noise target. The H200 then
	 * showed the same 42 configs in 18.46 s against 18.56 s under "rows":
	 * what a config costs is zlb's engine around it (capture, warm-up,
	 * settling the graph), not the samples. "triton" hands a config to
	 * Triton's own do_bench, as FlagGems' harness times it; on the H200 it
	 * chose other configs for 4 of layer_norm's 5 keys, and 3 of its rows
	 * read over 1% slower for it: configs are best ranked under the
	 * caliber their rows are measured in, so "rows" stays. Caliber: a
	 * config within the noise of another may win instead (a replay of A's
	 * choices makes B's the same either way).
	 */
	{ "tune-rule", NULL, "ZL_TUNE_RULE", "rows", OPT_CHOICE, tune_rules, 0, 0, "RULE",
	  "how an autotuner's timing of a config is taken: rows (zlb's timer and "
	  "the rows' stopping rule, noise target included), budget (zlb's timer, "
	  "the tuner's own rep of GPU time and --min-samples) or triton (Triton's "
	  "own do_bench, as FlagGems' harness times configs)", NULL,
	  BIND(STR, tune_rule), .export_env = "ZLB_TUNE_RULE", .record = "tune_rule" },
	/* What a sample is: both are caliber, and the child has no default of its own. */
	{ "replay-target", NULL, "ZL_REPLAY_TARGET_MS", "2", OPT_REAL, NULL, 0, 0, "MS",
	  "calls captured per replay: enough for one replay to take MS of GPU time "
	  "(rounded up to a power of two, at most 4096)", NULL, 0.01, 1000.0,
	  BIND(STR, replay_target_ms), .export_env = "ZLB_REPLAY_TARGET_MS", .record = "replay_target_ms" },
	{ "warmup-max-calls", NULL, "ZL_WARMUP_MAX_CALLS", "200", OPT_INT, NULL, 1, 1000000,
	  "N", "the warm-up budget (--warmup) runs at most N calls before capture", NULL,
	  BIND(INT, warmup_max_calls), .export_env = "ZLB_WARMUP_MAX_CALLS", .record = "warmup_max_calls" },
	{ "seed", NULL, "ZL_SEED", "0", OPT_INT, NULL, 0, 2147483647L, "N",
	  "seed for random, numpy, torch and the device's generator", NULL,
	  BIND(INT, seed), .export_env = "ZLB_SEED", .record = "seed" },
	{ "ir", NULL, "ZL_IR", "on", OPT_CHOICE, on_off, 0, 0, "WHEN",
	  "keep the IR of every kernel variant each shape ran (ttgir/ of the run "
	  "directory); off skips the compile listener", NULL },
	/*
	 * FlagGems' Hopper mm sends contiguous fp16 GEMMs (M >= 64, N >= 256,
	 * K >= 64) to a two-CTA cluster kernel when Triton has TLE device
	 * meshes (FlagTree builds): python/zlbench/mm_cluster_fix.py says what
	 * it does and why. Another kernel is measured: caliber.
	 */
	{ "mm-cluster-fix", NULL, "ZL_MM_CLUSTER_FIX", "0", OPT_BOOL, NULL, 0, 0, NULL,
	  "keep FlagGems' Hopper fp16 mm off its TLE cluster kernel (the original's "
	  "_mm_cluster_fix_plugin; CUDA only; another kernel is measured: caliber)", NULL,
	  BIND(BOOL, mm_cluster_fix), .record = "mm_cluster_fix" },
	{ "keep-compile-cache", NULL, "ZL_KEEP_COMPILE_CACHE", "0", OPT_BOOL, NULL, 0, 0, NULL,
	  "keep the run's own Triton cache (<run dir>/triton_cache) instead of "
	  "dropping it at the end", NULL,
	  BIND(BOOL, keep_compile_cache) },
	{ "print-engine-env", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "print the engine's settings as the child would get them (ZLB_*=value "
	  "lines, after every option and variable) and exit", NULL,
	  BIND(BOOL, print_engine_env) },
	{ "python", NULL, "ZLB_PYTHON", "python3", OPT_STRING, NULL, 0, 0, "PROG",
	  "Python interpreter that has torch, triton and pytest", NULL,
	  BIND(STR, python) },
	{ "runs-dir", NULL, "ZLB_RUNS_DIR", "runs", OPT_STRING, NULL, 0, 0, "DIR",
	  "where run directories are created", NULL,
	  BIND(STR, runs_dir) },
	{ "run-dir", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "PATH",
	  "this exact run directory instead of <runs-dir>/<op>_<time> (zlb batch "
	  "uses it); its parent is created, PATH must not exist or be empty", NULL,
	  BIND(STR, run_dir) },
	{ "interrupt-grace", NULL, "ZLB_INTERRUPT_GRACE_MS", "5000", OPT_INT, NULL, 0, 600000,
	  "MS", "after Ctrl-C/SIGTERM, how long pytest gets before SIGTERM, and again "
	  "before SIGKILL, to its whole process group", NULL,
	  BIND(INT, interrupt_grace_ms) },
	/* What the terminal shows; run.log has everything whatever they say. */
	{ "quiet", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "show only the result line and errors (FAILED lines, refusals); the tables and "
	  "pytest's output are in run.log", NULL,
	  BIND(BOOL, quiet), .short_name = 'q' },
	{ "verbose", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "show pytest's whole output as it comes too (its session header, progress "
	  "lines, tracebacks); by default the terminal shows zlb's lines and tables, "
	  "markers, warnings and failures, and run.log keeps everything", NULL,
	  BIND(BOOL, verbose), .short_name = 'v' },
	{ "worker", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "SOCKET",
	  "run pytest in the warm worker listening on SOCKET instead of a process of "
	  "its own (zlb batch --isolation worker starts them; python/zlbench/worker.py); "
	  "recorded as caliber isolation=worker", NULL,
	  BIND(STR, worker) },
	{ "cluster-job", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "LABEL",
	  "the cluster task that runs this run (zlb batch gives it on a cluster: "
	  "\"<array>_<index>\", or the allocation's id); recorded as provenance "
	  "cluster_job", NULL,
	  BIND(STR, cluster_job) },
	{ NULL },
};

/* The preset's values for the knobs raw holds at their defaults. */
static void run_preset_apply(const struct opt_def *defs, struct opt_values *raw)
{
	const char *name = opt_get(defs, raw, "preset");

	for (const struct preset_value *p = preset_values; p->preset; p++)
		if (name && !strcmp(p->preset, name) &&
		    opt_source_of(defs, raw, p->option) == OPT_FROM_DEFAULT)
			opt_set(defs, raw, p->option, p->value, "preset");
}

static char *dup_opt(const struct opt_values *v, const char *name)
{
	const char *s = opt_get(run_option_defs, v, name);
	return s && *s ? xstrdup(s) : NULL;
}

int run_config_parse(struct run_config *cfg, int argc, char **argv,
		     char *const *envp, struct opt_values *raw)
{
	struct strvec pos = STRVEC_INIT;
	int want = 0, op_from_flag = 0;

	memset(cfg, 0, sizeof(*cfg));
	strvec_init(&cfg->dtypes);
	strvec_init(&cfg->extra_plugins);
	strvec_init(&cfg->notes);
	if (options_parse(run_option_defs, argc, argv, envp, raw, &pos, &want)) {
		strvec_clear(&pos);
		return -1;
	}
	if (want != OPT_WANT_NOTHING) {
		strvec_clear(&pos);
		return want == OPT_WANT_HELP ? 1 : 2;
	}
	if (pos.nr > 1) {
		int r = error("one operator per run (got '%s' and '%s'); "
			      "zlb batch measures several", pos.v[0], pos.v[1]);
		strvec_clear(&pos);
		return r;
	}
	if (pos.nr == 1) {
		struct strbuf why = STRBUF_INIT;
		if (valid_op(pos.v[0], &why)) {
			int r = error("%s", why.buf);
			strbuf_release(&why);
			strvec_clear(&pos);
			return r;
		}
		if (opt_source_of(run_option_defs, raw, "op") == OPT_FROM_FLAG &&
		    strcmp(opt_get(run_option_defs, raw, "op"), pos.v[0])) {
			int r = error("operator given twice: '%s' and --op %s", pos.v[0],
				      opt_get(run_option_defs, raw, "op"));
			strvec_clear(&pos);
			return r;
		}
		cfg->op = xstrdup(pos.v[0]);
		cfg->op_given = 1;
		op_from_flag = 1;
	} else {
		cfg->op = dup_opt(raw, "op");
		cfg->op_given = cfg->op != NULL;
		op_from_flag = opt_source_of(run_option_defs, raw, "op") == OPT_FROM_FLAG;
	}
	strvec_clear(&pos);

	run_preset_apply(run_option_defs, raw);
	opt_bind(run_option_defs, raw, cfg);
	if (!cfg->backend)
		cfg->backend = xstrdup(backend_all()[0]->name);
	cfg->ir = !strcmp(opt_get(run_option_defs, raw, "ir"), "on");

	/*
	 * An operator and a test node both say what to run. A flag beats an
	 * environment variable (OP=x in the shell, --test-node on the line is
	 * clear); two flags are a contradiction. Both in the environment is the
	 * original tool's habit (OP left exported, TEST_NODE set for one run):
	 * the node is the more precise, so it wins, and the run header says so.
	 */
	if (cfg->test_node && cfg->op) {
		enum opt_source node_src = opt_source_of(run_option_defs, raw, "test-node");
		enum opt_source op_src = op_from_flag ? OPT_FROM_FLAG : OPT_FROM_ENV;
		if (node_src == OPT_FROM_FLAG && op_src == OPT_FROM_FLAG)
			return error("give either an operator (argument or --op) or a test node "
				     "(--test-node), not both");
		if (node_src == OPT_FROM_ENV && op_src == OPT_FROM_ENV)
			strvec_pushf(&cfg->notes, "note: OP=%s and TEST_NODE are both set; the test "
				     "node wins (%s)", cfg->op, cfg->test_node);
		if (node_src == op_src || node_src == OPT_FROM_FLAG) {
			free(cfg->op);
			cfg->op = NULL;
			cfg->op_given = 0;
		} else {
			free(cfg->test_node);
			cfg->test_node = NULL;
		}
	}
	if (cfg->test_node && cfg->op_file &&
	    opt_source_of(run_option_defs, raw, "op-file") == OPT_FROM_FLAG)
		return error("--op-file (OP_FILE) and --test-node (TEST_NODE) both name "
			     "the benchmark file; give one");
	if (cfg->test_node && cfg->op_file) {
		/* OP_FILE left in the shell belongs to the OP habit, not to this node. */
		free(cfg->op_file);
		cfg->op_file = NULL;
	}
	if (!cfg->test_node && !cfg->op)
		cfg->op = xstrdup("softmax");
	if (cfg->quiet && cfg->verbose)
		return error("--quiet and --verbose contradict each other; give one");
	/*
	 * The steady rule only cuts a preload short: without one it does
	 * nothing, yet would be recorded as a caliber of its own and keep
	 * the run from comparing with plain --preload 0 runs.
	 */
	if (strtod(cfg->preload_steady, NULL) > 0 && strtod(cfg->preload, NULL) == 0) {
		int env = opt_source_of(run_option_defs, raw, "preload-steady") == OPT_FROM_ENV;

		return error("%s%s%s stops a preload early, and --preload (ZL_PRELOAD) is 0: "
			     "give --preload MS as its cap (1000 is bench/README's), or drop it",
			     env ? "ZL_PRELOAD_STEADY=" : "--preload-steady ",
			     cfg->preload_steady, env ? " (the environment)" : "");
	}
	return 0;
}

void run_config_engine_env(const struct run_config *cfg, struct strvec *env)
{
	for (const struct opt_def *d = run_option_defs; d->name; d++) {
		char *v;

		if (!d->export_env)
			continue;
		v = opt_format(d, cfg);
		if (!v)
			BUG("--%s goes to the child (%s) but has no value", d->name, d->export_env);
		env_set(env, d->export_env, v);
		free(v);
	}
}

void run_config_release(struct run_config *cfg)
{
	free(cfg->op);
	strvec_clear(&cfg->notes);
	opt_unbind(run_option_defs, cfg);
	memset(cfg, 0, sizeof(*cfg));
}
