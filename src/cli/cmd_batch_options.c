/* zlb batch's options: the tables, the command line, --resume (cmd_batch.h). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/backend.h"
#include "cli/commands.h"
#include "cli/usage.h"
#include "batch/batch.h"
#include "batch/batch_resume.h"
#include "batch/inventory.h"
#include "lib/jsonfile.h"
#include "batch/opspec.h"
#include "lib/options.h"
#include "lib/paths.h"
#include "rundir/preflight_report.h"
#include "run/preflight.h"
#include "run/run_config.h"
#include "lib/term.h"
#include "executors/executor.h"

#include "cli/cmd_batch.h"

extern char **environ;

static const char *const progress_modes[] = { "auto", "live", "plain", NULL };
static const char *const isolations[] = { "process", "worker", NULL };

const struct opt_def batch_option_defs[] = {
	/* Read by batch_cmd_split_args itself (a list of operators), here for help and completion. */
	{ "ops", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "OP [OP ...]",
	  "operators to measure, [repo:]op[@file] each: repo main (default) or vllm; @file "
	  "picks the benchmark file when several define the test function", NULL },
	{ "all", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "every operator of the inventory in --ops-dir (`zlb inventory` writes it), less "
	  "unconditional skips and the dismiss list", NULL },
	{ "ops-file", NULL, "ZLB_OPS_FILE", NULL, OPT_STRING, NULL, 0, 0, "FILE",
	  "operators, one [repo:]op[@file] a line ('#' comments)", NULL },
	{ "ops-dir", NULL, "ZLB_OPS_DIR", "ops", OPT_STRING, NULL, 0, 0, "DIR",
	  "where --all finds inventory_main.csv / inventory_vllm.csv and dismiss.txt", NULL },
	{ "dismiss", NULL, "ZLB_DISMISS", NULL, OPT_STRING, NULL, 0, 0, "FILE",
	  "dismiss list for --all (default: <ops-dir>/dismiss.txt when present)", NULL },
	{ "devices", "gpus", "ZLB_DEVICES", NULL, OPT_STRING, NULL, 0, 0, "N,N,...",
	  "device indices (among those visible) to spread operators over; default: "
	  "every visible device (with --executor slurm each task uses the GPUs Slurm "
	  "gave it)", NULL },
	{ "op-timeout", NULL, "ZLB_OP_TIMEOUT", "1800", OPT_REAL, NULL, 0, 0, "S",
	  "seconds an attempt may take; then SIGTERM to its process group, --grace, "
	  "SIGKILL, status TIMEOUT (never retried); 0: no limit", NULL, 0.0, 1e7 },
	{ "grace", NULL, "ZLB_KILL_GRACE", "10", OPT_REAL, NULL, 0, 0, "S",
	  "seconds between SIGTERM and SIGKILL when an operator is stopped", NULL,
	  0.0, 3600.0 },
	{ "retries", NULL, "ZLB_RETRIES", "2", OPT_INT, NULL, 0, 20, "N",
	  "retries after pytest rc 1 or a signal; stops early when an exit code repeats",
	  NULL },
	{ "dtypes", NULL, "DTYPES", NULL, OPT_LIST, NULL, 0, 0, "\"T T\"",
	  "dtypes to measure, any name the checkout's --dtypes accepts (each run's "
	  "preflight reads benchmark/conftest.py); an operator that cannot take them "
	  "falls back to its own (remarks dtype_fallback, dtype_rescue)", valid_dtype_names },
	{ "shape-file", "shapes", "SHAPE_FILE", NULL, OPT_STRING, NULL, 0, 0, "FILE",
	  "shape set for every operator (e.g. ops/shapes_multi.yaml); an operator it "
	  "has no entry for runs on upstream's shapes (remark shapes_default)", NULL },
	{ "replay-root", NULL, "ZLB_REPLAY_ROOT", NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "replay each operator's autotune configs from DIR/<repo>/<op> (an earlier batch)",
	  NULL },
	{ "batch-dir", NULL, "ZLB_BATCH_DIR", NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "the batch directory (default: <runs-dir>/batch_<YYYYmmdd-HHMMSS>)", NULL },
	{ "resume", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "continue --batch-dir: PASS/SKIP operators (.complete) are kept, the others run "
	  "again (without operators given, the batch's own list)", NULL },
	{ "runs-dir", NULL, "ZLB_RUNS_DIR", "runs", OPT_STRING, NULL, 0, 0, "DIR",
	  "where the default batch directory goes", NULL },
	{ "flaggems-dir", NULL, "FLAGGEMS_DIR", NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "FlagGems checkout of repo main (flag_gems); default: as zlb run finds it", NULL },
	{ "vllm-dir", NULL, "FLAGGEMS_VLLM_DIR", NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "FlagGems-vllm checkout of repo vllm (flaggems_vllm); needed for vllm: operators",
	  NULL },
	{ "backend", NULL, "ZL_BACKEND", NULL, OPT_STRING, NULL, 0, 0, "NAME",
	  "accelerator backend (default: the first registered)", NULL },
	{ "progress", NULL, "ZLB_PROGRESS", "auto", OPT_CHOICE, progress_modes, 0, 0, "MODE",
	  "live: one line per device redrawn in place; plain: one line per operator; "
	  "auto: live on a terminal", NULL },
	{ "executor", NULL, "ZLB_EXECUTOR", "local", OPT_CHOICE, executor_choices, 0, 0, "NAME",
	  "where operators run: local (child processes of this machine) or slurm (the "
	  "batch as one job array, each task running its share of the operators on the "
	  "GPU Slurm gave it; the batch directory must be on a file system the nodes "
	  "share; inside a Slurm allocation: on its GPUs, here)", NULL },
	{ "max-parallel", NULL, "ZLB_MAX_PARALLEL", "8", OPT_INT, NULL, 0, 100000, "N",
	  "cluster: tasks that may run at once (the array's throttle); 0: as the "
	  "cluster allows", NULL },
	{ "task-ops", NULL, "ZLB_TASK_OPS", "16", OPT_INT, NULL, 1, 100000, "N",
	  "cluster: operators per task at most (fewer when the partition's time limit "
	  "needs it); each task starts Python once (--isolation worker)", NULL },
	{ "partition", NULL, "ZLB_PARTITION", NULL, OPT_STRING, NULL, 0, 0, "NAME",
	  "cluster: the partition the tasks go to", NULL },
	{ "account", NULL, "ZLB_ACCOUNT", NULL, OPT_STRING, NULL, 0, 0, "NAME",
	  "cluster: the account the tasks are charged to", NULL },
	{ "qos", NULL, "ZLB_QOS", NULL, OPT_STRING, NULL, 0, 0, "NAME",
	  "cluster: the quality of service the tasks ask for", NULL },
	{ "gres", NULL, "ZLB_GRES", NULL, OPT_STRING, NULL, 0, 0, "SPEC",
	  "cluster: each task's generic resources (default gpu:1, e.g. gpu:h200:1)", NULL },
	{ "time", NULL, "ZLB_TIME", NULL, OPT_STRING, NULL, 0, 0, "TIME",
	  "cluster: each task's time limit (default: its operators' --op-timeout plus "
	  "--grace, and 5 minutes, within the partition's limit)", NULL },
	{ "slurm-args", NULL, "ZLB_SLURM_ARGS", NULL, OPT_STRING, NULL, 0, 0, "\"ARGS\"",
	  "sbatch options for the array, after zlb's own (so they may override them), e.g. "
	  "\"--constraint=h200 --exclusive\"", NULL },
	{ "no-follow", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "cluster: submit and return; `--status` shows the batch, `--resume` follows it", NULL },
	{ "status", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "with --batch-dir: where the batch stands (its operators, its cluster tasks), "
	  "changing nothing", NULL },
	{ "retry-cancelled", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "with --resume: run again the operators whose cluster task someone cancelled "
	  "(CANCELLED; kept as they are otherwise)", NULL },
	{ "task", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "ARRAY_INDEX",
	  "(what `zlb task` runs on a node) this batch's cluster task ARRAY_INDEX: its "
	  "share of the operators, with the options the batch was started with", NULL },
	{ "isolation", NULL, "ZLB_ISOLATION", "worker", OPT_CHOICE, isolations, 0, 0, "MODE",
	  "worker: each operator's pytest in a warm Python worker per device that imports "
	  "torch, triton and flag_gems once and serves one operator after another (on a "
	  "cluster: in each task; compiled kernels and tuner choices are dropped between "
	  "operators, and an operator that fails after others in the same worker is rerun "
	  "in a fresh one); process: in a process of its own (~25 s more per operator; "
	  "taken when --isolate-tuner-cache is given). Recorded as caliber isolation", NULL,
	  /* the default was process: a batch recorded without it continues as one */
	  .if_unrecorded = "process" },
	{ "override", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "with --resume: options given again with another value than the batch was "
	  "started with take effect for the rest of the batch (recorded with this "
	  "session) instead of being refused", NULL },
	{ "junit", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "FILE",
	  "also write the batch as a JUnit XML report to FILE when it ends (one test case "
	  "per operator: FAIL and TIMEOUT failed, SKIP skipped, not run skipped), for CI "
	  "systems that show test reports", NULL },
	{ "quiet", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "show only the closing line, the operators that FAIL or TIME OUT, and errors "
	  "(no live progress)", NULL, .short_name = 'q' },
	{ "verbose", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "also show a line for every operator that ends, under the live progress too "
	  "(each child's own output stays in .logs/<repo>/<op>.log)", NULL,
	  .short_name = 'v' },
	{ "pin", NULL, "ZLB_PIN", NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "each operator on the device its name hashes to (stable across batches on the "
	  "same devices, for A/B pairs); default: one queue, the next operator to the "
	  "first free device", NULL },
	{ NULL },
};

/* zlb run options a batch sets per operator itself. */
const char *const owned_run_options[] = {
	"op", "op-file", "test-node", "device", "run-dir", "replay-from", "interrupt-grace",
	"cluster-job", NULL,
};
/*
 * zlb run options the batch gives each child itself, from its own options
 * of the same names or per operator (the checkout of the operator's repo,
 * dtypes and shapes the retry policy may drop): never recorded as the
 * children's, never passed through.
 */
static const char *const unrecorded_run_options[] = {
	"op", "op-file", "test-node", "device", "run-dir", "replay-from", "interrupt-grace",
	"runs-dir", "flaggems-dir", "shapes", "dtypes", "backend", "worker", "cluster-job", NULL,
};
/* Batch options that name a file or directory. */
static const char *const path_options[] = {
	"flaggems-dir", "vllm-dir", "shape-file", "replay-root", NULL,
};
/* Batch options that belong to one session, not to the batch a --resume continues. */
static const char *const session_options[] = {
	"resume", "override", "batch-dir", "progress", "all", "ops-file", "ops-dir", "dismiss",
	"no-follow", "status", "retry-cancelled", "task", "ops", "junit", "quiet", "verbose", NULL,
};

/* Environment defaults of zlb run that must not leak into a child. */
const char *const scrubbed_env[] = {
	"OP", "OP_FILE", "TEST_NODE", "ZL_DEVICE", "ZLB_RUNS_DIR", "DTYPES", "SHAPE_FILE",
	"FLAGGEMS_DIR", "ZLB_INTERRUPT_GRACE_MS", NULL,
};

static const struct cmd_exit batch_exits[] = {
	{ "0", "every operator PASS or SKIP" },
	{ "1", "some operator FAIL, TIMEOUT or CANCELLED" },
	{ "2", "bad command line, or the batch directory cannot be used; --all without an "
	       "inventory in --ops-dir, or with --vllm-dir (FLAGGEMS_VLLM_DIR) and no "
	       "<ops-dir>/inventory_vllm.csv" },
	{ "3", "a preflight check failed before any operator ran: the Python interpreter "
	       "(probed once for the whole batch), the executor, or no visible device; or "
	       "the environment stopped the batch (on a cluster node too)" },
	{ "7", "the batch's state (or the --junit report) could not be written" },
	{ "130", "interrupted: children stopped, state kept; --resume continues (on a "
		 "cluster: the tasks zlb submitted cancelled, or left running when asked; "
		 "--resume follows them)" },
	{ NULL, NULL },
};

static char *backends_note(void)
{
	char *names = backend_names_help(), *text = xstrfmt("backends: %s\n", names);

	free(names);
	return text;
}

const struct cmd_doc batch_doc = {
	.name = "batch",
	.summary = "many operators: one zlb run each, devices in parallel, resumable",
	.synopsis = "--ops OP [OP ...] [options] [zlb run options]\n"
		    "--ops-file FILE | --all [options]\n"
		    "--batch-dir DIR --resume | --status",
	.about =
		"Measure many operators: one `zlb run` child per operator in its own process\n"
		"group, serial per device, devices in parallel taking the next operator from\n"
		"one queue (--pin: each on the device its name hashes to). Each device's\n"
		"pytest sessions run in one warm Python worker (--isolation process: a\n"
		"Python start per operator). An operator is [repo:]op[@file]: repo main\n"
		"(default) or vllm; @file picks the benchmark file when several define the\n"
		"test function. --resume continues a batch with every option it was started\n"
		"with (--override to change one).\n"
		"\n"
		"Writes <batch>/ops_status.csv (one row per operator, rewritten atomically),\n"
		"batch.json, and <batch>/<repo>/<op>/ (normal run directories; .complete marks\n"
		"PASS/SKIP); each child's whole output goes to <batch>/.logs/<repo>/<op>.log.\n"
		"On a terminal one live line per device shows the progress, never wider than\n"
		"the terminal; elsewhere one line per operator as it ends.\n",
	.opts = batch_option_defs,
	.more_opts = run_option_defs,
	.more_opts_note = "Any other zlb run option (--level, --timer, --python, ...; see zlb run "
			  "--help), given as a flag or through its variable, is checked once and "
			  "given to every operator's run as a flag.",
	.extra = backends_note,
	.exits = batch_exits,
	.positional = CMD_ARG_NONE,
};

/* The batch's own options, then zlb run's, checked once by its own table (cfg: what the children resolve). */
int batch_cmd_check_options(struct batch_cmd *bc)
{
	struct strvec check = STRVEC_INIT;
	const char *s;
	int help = 0;

	if (options_parse(batch_option_defs, (int)bc->bargv.nr, bc->bargv.v, environ, &bc->raw, &check,
			  &help) || check.nr) {
		int r = usage_error("batch", "%s", check.nr ? "unexpected argument" : last_error());

		strvec_clear(&check);
		return r;
	}
	strvec_clear(&check);
	/* Paths as absolute: what is recorded and compared on --resume is where, not how. */
	for (const char *const *p = path_options; *p; p++) {
		size_t i = opt_index(batch_option_defs, *p);
		if (bc->raw.value[i] && *bc->raw.value[i]) {
			char *abs = path_absolute(bc->raw.value[i]);
			free(bc->raw.value[i]);
			bc->raw.value[i] = abs;
		}
	}
	s = opt_get(batch_option_defs, &bc->raw, "resume");
	bc->resume = s && opt_parse_bool(s) == 1;
	s = opt_get(batch_option_defs, &bc->raw, "override");
	if (s && opt_parse_bool(s) == 1 && !bc->resume)
		REFUSE("--override is for --resume: a new batch has nothing to override");
	if (opt_get(batch_option_defs, &bc->raw, "quiet") &&
	    opt_get(batch_option_defs, &bc->raw, "verbose"))
		REFUSE("--quiet and --verbose contradict each other; give one");
	if ((s = opt_get(batch_option_defs, &bc->raw, "junit")) && !*s)
		REFUSE("--junit needs a file name");

	/* zlb run's options as given, on the command line or in the environment. */
	strvec_push(&check, "run");
	strvec_pushv(&check, (const char *const *)bc->run_args.v);
	{
		struct strvec pos = STRVEC_INIT;
		int r = options_parse(run_option_defs, (int)check.nr, check.v, environ, &bc->rraw,
				      &pos, &help);

		strvec_clear(&pos);
		strvec_clear(&check);
		if (r)
			REFUSE("%s", last_error());
	}
	if ((s = getenv("REPLAY_FROM")) && *s)
		REFUSE("REPLAY_FROM is set: zlb batch replays per operator with "
			   "--replay-root DIR (DIR/<repo>/<op>); unset REPLAY_FROM");

	return 0;
}

/*
 * --resume: the batch that was started continues, every option as it was
 * (batch/batch_resume.h); an option given again with another value is
 * refused unless --override, and then recorded with the session.
 */
int batch_cmd_continue_batch(struct batch_cmd *bc)
{
	struct batch_knobs bk = { batch_option_defs, &bc->raw, session_options };
	struct batch_knobs rk = { run_option_defs, &bc->rraw, unrecorded_run_options };
	struct strvec conflicts = STRVEC_INIT, notes = STRVEC_INIT;
	json_t *rec = NULL;
	const char *s;
	size_t n;

	if (!bc->resume)
		return 0;
	if (batch_record_read(opt_get(batch_option_defs, &bc->raw, "batch-dir"), &rec))
		REFUSE("%s", last_error());
	n = batch_record_restore(rec, &bk, &rk, &bc->spec_text, &conflicts, &notes);
	json_decref(rec);
	for (size_t i = 0; i < notes.nr; i++)
		warning("%s", notes.v[i]);
	strvec_clear(&notes);
	s = opt_get(batch_option_defs, &bc->raw, "override");
	if (n && !(s && opt_parse_bool(s) == 1)) {
		struct strbuf sb = STRBUF_INIT;

		for (size_t i = 0; i < conflicts.nr; i++)
			strbuf_addf(&sb, "\n  %s", conflicts.v[i]);
		strvec_clear(&conflicts);
		fprintf(stderr, "zlb batch: --resume continues the batch as it was started, and "
			"%zu option(s) given now differ:%s\n  fix: drop them to continue as started, "
			"or add --override to change them for the rest of the batch (one batch then "
			"holds two calibers: this session records what changed)\n", n, sb.buf);
		strbuf_release(&sb);
		return ZLB_EXIT_USAGE;
	}
	for (size_t i = 0; i < conflicts.nr; i++)
		strvec_push(&bc->overrides, conflicts.v[i]);
	strvec_clear(&conflicts);
	return 0;
}

/*
 * zlb run's options for every child, as flags: what came from the
 * environment too (the children's environment holds none of them, so a
 * resumed batch's children cannot pick up a variable set since), checked
 * once by zlb run's own table (cfg: what the children resolve).
 */
int batch_cmd_check_run_options(struct batch_cmd *bc)
{
	struct strvec check = STRVEC_INIT;
	struct opt_values rraw = { 0 };
	char *const no_env[] = { NULL };
	int r;

	strvec_clear(&bc->run_args);
	for (size_t i = 0; i < bc->rraw.nr; i++) {
		const struct opt_def *d = &run_option_defs[i];

		/* The children's environment holds no option: a default is theirs too. */
		if (bc->rraw.source[i] == OPT_FROM_DEFAULT || !bc->rraw.value[i] ||
		    (d->def && !strcmp(d->def, bc->rraw.value[i])) ||
		    strlist_has(unrecorded_run_options, d->name))
			continue;
		strvec_pushf(&bc->run_args, "--%s=%s", d->name, bc->rraw.value[i]);
	}
	strvec_pushl(&check, "run", "softmax", NULL);
	strvec_pushv(&check, (const char *const *)bc->run_args.v);
	r = run_config_parse(&bc->cfg, (int)check.nr, check.v, no_env, &rraw);
	opt_values_release(&rraw);
	strvec_clear(&check);
	bc->have_cfg = 1;
	if (r)
		REFUSE("%s", last_error());
	/*
	 * FlagGems reads its tuner cache's place once, at import: a warm worker
	 * cannot give each run a cache of its own.
	 */
	if (bc->cfg.isolate_tuner_cache &&
	    !strcmp(opt_get(batch_option_defs, &bc->raw, "isolation"), "worker")) {
		/* the default yields to what was asked for; a given worker is refused */
		if (opt_source_of(batch_option_defs, &bc->raw, "isolation") == OPT_FROM_DEFAULT) {
			opt_set(batch_option_defs, &bc->raw, "isolation", "process",
				"--isolate-tuner-cache");
			return 0;
		}
		REFUSE("--isolate-tuner-cache gives each run a tuner cache of its own, which "
		       "FlagGems reads once at import: a warm worker cannot; use --isolation "
		       "process with it");
	}
	return 0;
}

/*
 * What a --resume continues (batch/batch_resume.h), with the checkout as
 * found: a discovered one is recorded as if it had been given, so that a
 * resume elsewhere (another cwd, another interpreter) cannot find another.
 */
int batch_cmd_record_batch(struct batch_cmd *bc)
{
	struct batch_knobs bk = { batch_option_defs, &bc->raw, session_options };
	struct batch_knobs rk = { run_option_defs, &bc->rraw, unrecorded_run_options };

	if (bc->main_dir)
		opt_set(batch_option_defs, &bc->raw, "flaggems-dir", bc->main_dir, "found");
	/* (a given one is absolute already: check_options) */
	bc->record = batch_record_make(&bk, &rk, &bc->spec_text);
	return 0;
}

/*
 * Split the command line: the batch's own options (bc->bargv), zlb run's
 * (bc->run_args), the operators after --ops. Refusals here are usage errors.
 */
int batch_cmd_split_args(struct batch_cmd *bc, int argc, char **argv, int *help)
{
	int in_ops = 0, saw_devices = 0, saw_gpus = 0;

	strvec_push(&bc->bargv, "batch");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct opt_def *d;

		if (!strcmp(a, "--ops")) {
			in_ops = bc->ops_given = 1;
			continue;
		}
		if (a[0] != '-') {
			if (!in_ops)
				REFUSE("'%s': operators go after --ops (or in --ops-file)", a);
			strvec_push(&bc->spec_text, a);
			continue;
		}
		in_ops = 0;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			*help = OPT_WANT_HELP;
			continue;
		}
		if ((!strcmp(a, "--version") || !strcmp(a, "-V")) && *help != OPT_WANT_HELP) {
			*help = OPT_WANT_VERSION;
			continue;
		}
		if ((d = opt_find(batch_option_defs, a))) {
			if (!strcmp(d->name, "devices")) {
				if (!strncmp(a + 2, "gpus", 4))
					saw_gpus = 1;
				else
					saw_devices = 1;
			}
			strvec_push(&bc->bargv, a);
			if (d->kind != OPT_BOOL && !strchr(a, '=') && i + 1 < argc)
				strvec_push(&bc->bargv, argv[++i]);
			continue;
		}
		if ((d = opt_find(run_option_defs, a))) {
			if (strlist_has(owned_run_options, d->name))
				REFUSE("%s is set by zlb batch for each operator%s", a,
				   !strcmp(d->name, "replay-from") ?
				   " (use --replay-root DIR for DIR/<repo>/<op>)" : "");
			strvec_push(&bc->run_args, a);
			if (d->kind != OPT_BOOL && !strchr(a, '=') && i + 1 < argc)
				strvec_push(&bc->run_args, argv[++i]);
			continue;
		}
		{
			const char *near = opt_suggest(batch_option_defs, a);

			if (!near)
				near = opt_suggest(run_option_defs, a);
			if (near)
				REFUSE("unknown option '%s'; did you mean --%s?", a, near);
			REFUSE("unknown option '%s'", a);
		}
	}
	if (!*help && saw_devices && saw_gpus)
		REFUSE("--devices and --gpus are the same option; give one");
	return 0;
}

