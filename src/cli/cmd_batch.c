/*
 * zlb batch: measure many operators, one `zlb run` child each, serial per
 * device and devices in parallel (batch/batch.h has the directory layout,
 * batch/batch_policy.h the retry rules, batch/batch_status.h the tables).
 */
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

extern char **environ;

static const char *const progress_modes[] = { "auto", "live", "plain", NULL };
static const char *const executors[] = { "local", "slurm", NULL };
static const char *const isolations[] = { "process", "worker", NULL };
/* With a remote executor --devices numbers parallel jobs, up to this many. */
#define REMOTE_SLOTS_MAX 4096

static const struct opt_def batch_option_defs[] = {
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
	  "every visible device. With --executor slurm: one number per job that may run "
	  "at once (Slurm picks each job's GPU); required there", NULL },
	{ "op-timeout", NULL, "ZLB_OP_TIMEOUT", "1800", OPT_REAL, NULL, 0, 0, "S",
	  "seconds an attempt may take; then SIGTERM to its process group, --grace, "
	  "SIGKILL, status TIMEOUT (never retried); 0: no limit", NULL, 0.0, 1e7 },
	{ "grace", NULL, "ZLB_KILL_GRACE", "10", OPT_REAL, NULL, 0, 0, "S",
	  "seconds between SIGTERM and SIGKILL when an operator is stopped", NULL,
	  0.0, 3600.0 },
	{ "retries", NULL, "ZLB_RETRIES", "2", OPT_INT, NULL, 0, 20, "N",
	  "retries after pytest rc 1 or a signal; stops early when an exit code repeats",
	  NULL },
	{ "dtypes", NULL, "DTYPES", NULL, OPT_LIST, flaggems_dtypes, 0, 0, "\"T T\"",
	  "dtypes to measure; an operator that cannot take them falls back to its own "
	  "(remarks dtype_fallback, dtype_rescue)", NULL },
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
	{ "executor", NULL, "ZLB_EXECUTOR", "local", OPT_CHOICE, executors, 0, 0, "NAME",
	  "where operators run: local (child processes of this machine) or slurm (one "
	  "Slurm job per operator through srun: 1 task, 1 GPU; the batch directory must "
	  "be on a file system the nodes share)", NULL },
	{ "slurm-args", NULL, "ZLB_SLURM_ARGS", NULL, OPT_STRING, NULL, 0, 0, "\"ARGS\"",
	  "srun options for every job, after zlb's own (so they may override them), e.g. "
	  "\"--partition=gpu --account=perf --gres=gpu:h200:1\"", NULL },
	{ "isolation", NULL, "ZLB_ISOLATION", "process", OPT_CHOICE, isolations, 0, 0, "MODE",
	  "process: each operator's pytest in a process of its own; worker: in a warm "
	  "Python worker per device that imports torch, triton and flag_gems once and "
	  "serves one operator after another (local executor only; compiled kernels and "
	  "tuner choices are dropped between operators, and an operator that fails after "
	  "others in the same worker is rerun in a fresh one). Recorded as caliber "
	  "isolation", NULL },
	{ "override", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "with --resume: options given again with another value than the batch was "
	  "started with take effect for the rest of the batch (recorded with this "
	  "session) instead of being refused", NULL },
	{ "pin", NULL, "ZLB_PIN", NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "each operator on the device its name hashes to (stable across batches on the "
	  "same devices, for A/B pairs); default: one queue, the next operator to the "
	  "first free device", NULL },
	{ NULL },
};

/* zlb run options a batch sets per operator itself. */
static const char *const owned_run_options[] = {
	"op", "op-file", "test-node", "device", "run-dir", "replay-from", "interrupt-grace",
	NULL,
};
/*
 * zlb run options the batch gives each child itself, from its own options
 * of the same names or per operator (the checkout of the operator's repo,
 * dtypes and shapes the retry policy may drop): never recorded as the
 * children's, never passed through.
 */
static const char *const unrecorded_run_options[] = {
	"op", "op-file", "test-node", "device", "run-dir", "replay-from", "interrupt-grace",
	"runs-dir", "flaggems-dir", "shapes", "dtypes", "backend", "worker", NULL,
};
/* Batch options that name a file or directory. */
static const char *const path_options[] = {
	"flaggems-dir", "vllm-dir", "shape-file", "replay-root", NULL,
};
/* Batch options that belong to one session, not to the batch a --resume continues. */
static const char *const session_options[] = {
	"resume", "override", "batch-dir", "progress", "all", "ops-file", "ops-dir", "dismiss",
	NULL,
};

/* Environment defaults of zlb run that must not leak into a child. */
static const char *const scrubbed_env[] = {
	"OP", "OP_FILE", "TEST_NODE", "ZL_DEVICE", "ZLB_RUNS_DIR", "DTYPES", "SHAPE_FILE",
	"FLAGGEMS_DIR", "ZLB_INTERRUPT_GRACE_MS", NULL,
};

static const char usage_head[] =
	"usage: zlb batch --ops OP [OP ...] [options] [zlb run options]\n"
	"       zlb batch --ops-file FILE | --all [options]\n"
	"       zlb batch --batch-dir DIR --resume\n"
	"\n"
	"Measure many operators: one `zlb run` child per operator in its own process\n"
	"group, serial per device, devices in parallel (stable hash sharding). An\n"
	"operator is [repo:]op[@file]: repo main (default) or vllm; @file picks the\n"
	"benchmark file when several define the test function.\n"
	"\n"
	"Writes <batch>/ops_status.csv (one row per operator, rewritten atomically),\n"
	"batch.json, and <batch>/<repo>/<op>/ (normal run directories; .complete marks\n"
	"PASS/SKIP). Any other zlb run option (--level, --timer, --python, ...) is given\n"
	"to every operator's run.\n"
	"\n"
	"options:\n"
	"  --ops OP [OP ...]\n"
	"      operators to measure, [repo:]op[@file] each\n";

static const char usage_tail[] =
	"\n"
	"exit codes:\n"
	"  0    every operator PASS or SKIP\n"
	"  1    some operator FAIL or TIMEOUT\n"
	"  2    bad command line, or the batch directory cannot be used\n"
	"  3    a preflight check failed before any operator ran: the Python\n"
	"       interpreter (probed once for the whole batch) or no visible device\n"
	"  7    the batch's state could not be written\n"
	"  130  interrupted: children stopped, state kept; --resume continues\n";

static void say_warning(const char *prefix, const char *msg)
{
	fprintf(stderr, "zlb batch: warning: %s\n", msg);
}

static int in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return 1;
	return 0;
}

/* "0,1,3" -> indices, each < visible, no repeats. */
static int parse_devices(const char *s, int visible, int **out, int *n)
{
	struct strvec items = STRVEC_INIT;
	int r = 0;

	strvec_split(&items, s, ", ");
	*out = xcalloc(items.nr + 1, sizeof(int));
	*n = 0;
	if (!items.nr)
		r = error("--devices '%s' names no device", s);
	for (size_t i = 0; i < items.nr && !r; i++) {
		char *end;
		long v;

		errno = 0;
		v = strtol(items.v[i], &end, 10);
		if (errno || end == items.v[i] || *end || v < 0 || v >= visible) {
			r = error("--devices: '%s' is not a visible device index (0..%d)",
				  items.v[i], visible - 1);
			break;
		}
		for (int k = 0; k < *n; k++)
			if ((*out)[k] == v)
				r = error("--devices: device %ld is listed twice", v);
		(*out)[(*n)++] = (int)v;
	}
	strvec_clear(&items);
	return r;
}

static char *default_batch_dir(const char *runs_dir)
{
	char stamp[32], *base, *abs = path_absolute(runs_dir);
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	base = xstrfmt("%s/batch_%s", abs, stamp);
	free(abs);
	for (int n = 2; access(base, F_OK) == 0 && n < 1000; n++) {
		char *next = xstrfmt("%s/batch_%s-%d", runs_dir, stamp, n);
		free(base);
		base = path_absolute(next);
		free(next);
	}
	return base;
}

static int has_inventory(const char *ops_dir)
{
	for (const char *const *r = inventory_repos; *r; r++) {
		char *name = inventory_csv_name(*r), *path = path_join(ops_dir, name);
		int ok = is_file(path);
		free(name);
		free(path);
		if (ok)
			return 1;
	}
	return 0;
}

/* What zlb batch gathers from its command line before the scheduler runs. */
struct batch_cmd {
	struct strvec bargv;        /* the batch's own options, for its table */
	struct strvec run_args;     /* zlb run options, given to every child */
	struct strvec spec_text;    /* the operators as written */
	struct strvec dtypes, env, exec_args;
	struct opt_values raw;
	struct opt_values rraw;     /* zlb run's options as given (flags, environment) */
	json_t *record;             /* batch.json "resume": what a later --resume continues */
	struct strvec overrides;    /* with --resume --override: what this session changed */
	int resume;
	struct op_spec *specs;
	size_t nspecs;
	struct run_config cfg;      /* what the children resolve from run_args */
	int have_cfg;
	struct device_list devs;
	const struct backend_ops *be;
	int *devices, ndevices;
	int remote;                 /* the executor places jobs (Slurm) */
	char *python;               /* the interpreter the batch probed (local executor) */
	struct strvec worker_env;   /* the warm workers' environment */
	int ops_given;
	char *dir, *shape_file, *replay_root, *main_dir, *vllm_dir;
};

/* Refuse with a usage error from a step of cmd_batch (exit 2). */
#define REFUSE(...) return usage_error("batch", __VA_ARGS__)

/* The batch's own options, then zlb run's, checked once by its own table (cfg: what the children resolve). */
static int check_options(struct batch_cmd *bc)
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

/* The operators: --ops, --ops-file, --all, or a bare --resume's own list; each once. */
static int select_operators(struct batch_cmd *bc)
{
	/* The operators. */
	{
		int all = opt_get(batch_option_defs, &bc->raw, "all") != NULL &&
			  opt_parse_bool(opt_get(batch_option_defs, &bc->raw, "all")) == 1;
		const char *ops_file = opt_get(batch_option_defs, &bc->raw, "ops-file");
		int resume = opt_get(batch_option_defs, &bc->raw, "resume") &&
			     opt_parse_bool(opt_get(batch_option_defs, &bc->raw, "resume")) == 1;
		int sources = all + (ops_file != NULL) + bc->ops_given;

		if (sources > 1)
			REFUSE("give one of --all, --ops and --ops-file");
		if (bc->ops_given && !bc->spec_text.nr)
			REFUSE("--ops needs at least one operator");
		if (!sources && !resume)
			REFUSE("which operators? give --ops OP ..., --ops-file FILE or --all");
		if (ops_file && opspec_read_file(ops_file, &bc->spec_text))
			REFUSE("%s", last_error());
		if (all) {
			const char *ops_dir = opt_get(batch_option_defs, &bc->raw, "ops-dir");
			struct strvec excluded = STRVEC_INIT;
			if (!has_inventory(ops_dir))
				REFUSE("--all: no operator inventory in %s; run `zlb inventory` "
					   "first (or point --ops-dir at one)", ops_dir);
			if (inventory_select_all(ops_dir, opt_get(batch_option_defs, &bc->raw, "dismiss"),
						 &bc->spec_text, &excluded)) {
				strvec_clear(&excluded);
				REFUSE("--all: %s", last_error());
			}
			if (excluded.nr)
				printf("zlb batch: --all leaves out %zu function(s) (skip marks, not "
				       "collected, dismissed)\n", excluded.nr);
			strvec_clear(&excluded);
			/* The checkouts the inventory was built from, unless given again. */
			{
				char *m = inventory_checkout(ops_dir, "main");
				char *v = inventory_checkout(ops_dir, "vllm");

				if (m)
					opt_set(batch_option_defs, &bc->raw, "flaggems-dir", m,
						"inventory.json");
				if (v)
					opt_set(batch_option_defs, &bc->raw, "vllm-dir", v,
						"inventory.json");
				free(m);
				free(v);
			}
		}
		if (resume && !opt_get(batch_option_defs, &bc->raw, "batch-dir"))
			REFUSE("--resume needs --batch-dir DIR");
		/* A bare --resume: the list comes with the rest in continue_batch(). */
	}

	return 0;
}

/*
 * --resume: the batch that was started continues, every option as it was
 * (batch/batch_resume.h); an option given again with another value is
 * refused unless --override, and then recorded with the session.
 */
static int continue_batch(struct batch_cmd *bc)
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

/* The operator list as specs, each once. */
static int parse_specs(struct batch_cmd *bc)
{
	bc->specs = xcalloc(bc->spec_text.nr + 1, sizeof(*bc->specs));
	for (size_t i = 0; i < bc->spec_text.nr; i++) {
		int dup = 0;
		if (opspec_parse(&bc->specs[bc->nspecs], bc->spec_text.v[i]))
			REFUSE("%s", last_error());
		for (size_t k = 0; k < bc->nspecs && !dup; k++)
			dup = !strcmp(bc->specs[k].repo, bc->specs[bc->nspecs].repo) &&
			      !strcmp(bc->specs[k].key, bc->specs[bc->nspecs].key);
		if (dup) {
			warning("%s is listed twice; measured once", bc->specs[bc->nspecs].spec);
			opspec_release(&bc->specs[bc->nspecs]);
			continue;
		}
		bc->nspecs++;
	}
	if (!bc->nspecs)
		REFUSE("the operator list is empty");
	return 0;
}

/*
 * zlb run's options for every child, as flags: what came from the
 * environment too (the children's environment holds none of them, so a
 * resumed batch's children cannot pick up a variable set since), checked
 * once by zlb run's own table (cfg: what the children resolve).
 */
static int check_run_options(struct batch_cmd *bc)
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
		    in_list(unrecorded_run_options, d->name))
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
	return 0;
}

/*
 * What a --resume continues (batch/batch_resume.h), with the checkout as
 * found: a discovered one is recorded as if it had been given, so that a
 * resume elsewhere (another cwd, another interpreter) cannot find another.
 */
static int record_batch(struct batch_cmd *bc)
{
	struct batch_knobs bk = { batch_option_defs, &bc->raw, session_options };
	struct batch_knobs rk = { run_option_defs, &bc->rraw, unrecorded_run_options };

	if (bc->main_dir)
		opt_set(batch_option_defs, &bc->raw, "flaggems-dir", bc->main_dir, "found");
	/* (a given one is absolute already: check_options) */
	bc->record = batch_record_make(&bk, &rk, &bc->spec_text);
	return 0;
}

/* Paths the children are given, made absolute and checked. */
static int resolve_paths(struct batch_cmd *bc)
{
	const char *s;

	/* Paths. */
	if ((s = opt_get(batch_option_defs, &bc->raw, "shape-file"))) {
		bc->shape_file = path_absolute(s);
		if (!is_file(bc->shape_file))
			REFUSE("--shape-file %s: no such file", s);
	}
	if ((s = opt_get(batch_option_defs, &bc->raw, "replay-root"))) {
		bc->replay_root = path_absolute(s);
		if (!is_dir(bc->replay_root))
			REFUSE("--replay-root %s: no such directory (give an earlier batch "
				   "directory)", s);
	}
	if ((s = opt_get(batch_option_defs, &bc->raw, "flaggems-dir")))
		bc->main_dir = path_absolute(s);
	if ((s = opt_get(batch_option_defs, &bc->raw, "vllm-dir")))
		bc->vllm_dir = path_absolute(s);
	for (size_t i = 0; i < bc->nspecs; i++)
		if (!strcmp(bc->specs[i].repo, "vllm") && !bc->vllm_dir)
			REFUSE("%s is a vllm operator: give the FlagGems-vllm checkout with "
				   "--vllm-dir DIR (FLAGGEMS_VLLM_DIR)", bc->specs[i].spec);
	if ((s = opt_get(batch_option_defs, &bc->raw, "dtypes")))
		strvec_split(&bc->dtypes, s, " ,\t");

	return 0;
}

/* The backend, the executor, the children's environment, and their interpreter probed once. */
static int prepare_children(struct batch_cmd *bc)
{
	const char *s;

	/* Devices, from the backend. */
	s = opt_get(batch_option_defs, &bc->raw, "backend");
	bc->be = s ? backend_find(s) : backend_all()[0];
	if (!bc->be) {
		char *names = backend_names_help();
		int r = usage_error("batch", "unknown backend '%s'; known: %s", s, names);

		free(names);
		return r;
	}
	{
		const struct executor_ops *xo =
			executor_find(opt_get(batch_option_defs, &bc->raw, "executor"));
		struct strbuf why = STRBUF_INIT;

		if (xo->available && !xo->available(&why)) {
			struct strbuf sb = STRBUF_INIT;

			preflight_report(&sb, "executor", NULL, why.buf, NULL, 0);
			fputs(sb.buf, stderr);
			strbuf_release(&sb);
			strbuf_release(&why);
			return ZLB_EXIT_PREFLIGHT;
		}
		strbuf_release(&why);
		bc->remote = xo->remote_devices;
	}
	/* Children get zlb run's settings as flags, never through stray variables. */
	strvec_pushv(&bc->env, (const char *const *)environ);
	for (const char *const *k = scrubbed_env; *k; k++)
		env_unset(&bc->env, *k);
	/* They travel as flags (check_run_options), never as variables. */
	for (const struct opt_def *d = run_option_defs; d->name; d++)
		if (d->env)
			env_unset(&bc->env, d->env);

	/*
	 * The interpreter, once for the whole batch: every child would probe
	 * the same file in the same environment (~120 ms each, more than the
	 * harness budget of an operator). A broken one stops the batch here,
	 * before any operator runs, with zlb run's own sentence. The probe
	 * runs in exactly the children's environment and directory, and the
	 * children trust it only while they are ours and the interpreter file
	 * is unchanged (run/preflight.h); an inherited value vouches for
	 * nothing and is removed first.
	 */
	env_unset(&bc->env, PREFLIGHT_PROBED_ENV);
	/*
	 * A remote job's interpreter is the node's, which this machine may not
	 * even have: each child probes it where it runs.
	 */
	if (!bc->remote) {
		struct preflight pf;
		char *probed;

		if (preflight_python(&pf, &bc->cfg, bc->env.v)) {
			struct strbuf sb = STRBUF_INIT;

			preflight_failure_text(&pf, NULL, term_color_wanted(2, bc->cfg.color), &sb);
			fputs(sb.buf, stderr);
			strbuf_release(&sb);
			preflight_release(&pf);
			return ZLB_EXIT_PREFLIGHT;
		}
		bc->python = xstrdup(pf.plan.python);
		run_plan_child_env(&pf.plan, bc->env.v, &bc->worker_env);
		/*
		 * The checkout, once: every operator would fail the same check.
		 * The one found is given to every child, and recorded for --resume.
		 */
		{
			char *found = NULL;
			int bad = preflight_checkout(&pf, bc->main_dir, &found);

			if (!bad && bc->vllm_dir) {
				char *v = NULL;
				bad = preflight_checkout(&pf, bc->vllm_dir, &v);
				free(v);
			}
			if (bad) {
				struct strbuf sb = STRBUF_INIT;

				preflight_failure_text(&pf, NULL, term_color_wanted(2, bc->cfg.color),
						       &sb);
				fputs(sb.buf, stderr);
				strbuf_release(&sb);
				preflight_release(&pf);
				free(found);
				return ZLB_EXIT_PREFLIGHT;
			}
			free(bc->main_dir);
			bc->main_dir = found;
		}
		probed = preflight_probed_value(&pf);
		if (probed)
			env_set(&bc->env, PREFLIGHT_PROBED_ENV, probed);
		free(probed);
		preflight_release(&pf);
	}

	return 0;
}

/* --slurm-args, and the device slots: the jobs that may run at once on a cluster, else the visible devices. */
static int resolve_devices(struct batch_cmd *bc)
{
	const char *s;

	if ((s = opt_get(batch_option_defs, &bc->raw, "slurm-args"))) {
		if (strcmp(opt_get(batch_option_defs, &bc->raw, "executor"), "slurm"))
			REFUSE("--slurm-args is for --executor slurm");
		strvec_split(&bc->exec_args, s, " \t");
		for (size_t k = 0; k < bc->exec_args.nr; k++)
			if (bc->exec_args.v[k][0] != '-')
				REFUSE("--slurm-args: '%s' is not an srun option (each word must "
					   "start with '-'; zlb gives srun the command itself)",
					   bc->exec_args.v[k]);
	}
	if (bc->remote && !strcmp(opt_get(batch_option_defs, &bc->raw, "isolation"), "worker"))
		REFUSE("--isolation worker keeps warm workers on this machine; with --executor "
		       "%s each operator runs where the cluster puts it: use --isolation process",
		       opt_get(batch_option_defs, &bc->raw, "executor"));
	if (bc->remote) {
		/*
		 * Each job sees only the GPU the cluster gives it, so no local
		 * device is needed; --devices numbers the jobs that run at once.
		 */
		if (!(s = opt_get(batch_option_defs, &bc->raw, "devices")))
			REFUSE("--executor %s: give --devices with one number per job that may "
				   "run at once (e.g. --devices 0,1,2,3 for four); the cluster picks "
				   "each job's GPU", opt_get(batch_option_defs, &bc->raw, "executor"));
		if (parse_devices(s, REMOTE_SLOTS_MAX, &bc->devices, &bc->ndevices))
			REFUSE("%s", last_error());
	} else {
		struct strbuf why = STRBUF_INIT;
		int r = bc->be->list_devices(&bc->devs, &why);
		if (r || !bc->devs.nr) {
			struct strbuf sb = STRBUF_INIT;
			char *text = xstrfmt("no %s device is visible%s%s", bc->be->name,
					     why.len ? ": " : "", why.buf);
			char *fix = xstrfmt("run on a machine with a %s device, check the driver "
					    "and %s, or pick another --backend (ZL_BACKEND)",
					    bc->be->name, bc->be->visibility_keys[0]);

			preflight_report(&sb, "device", NULL, text, fix, 0);
			fputs(sb.buf, stderr);
			strbuf_release(&sb);
			free(text);
			free(fix);
			strbuf_release(&why);
			return ZLB_EXIT_PREFLIGHT;
		}
		strbuf_release(&why);
		if ((s = opt_get(batch_option_defs, &bc->raw, "devices"))) {
			if (parse_devices(s, bc->devs.nr, &bc->devices, &bc->ndevices))
				REFUSE("%s", last_error());
		} else {
			bc->devices = xcalloc((size_t)bc->devs.nr, sizeof(int));
			for (int d = 0; d < bc->devs.nr; d++)
				bc->devices[bc->ndevices++] = d;
		}
	}

	return 0;
}


/*
 * Split the command line: the batch's own options (bc->bargv), zlb run's
 * (bc->run_args), the operators after --ops. Refusals here are usage errors.
 */
static int split_args(struct batch_cmd *bc, int argc, char **argv, int *help)
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
			*help = 1;
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
			if (in_list(owned_run_options, d->name))
				REFUSE("%s is set by zlb batch for each operator%s", a,
				   !strcmp(d->name, "replay-from") ?
				   " (use --replay-root DIR for DIR/<repo>/<op>)" : "");
			strvec_push(&bc->run_args, a);
			if (d->kind != OPT_BOOL && !strchr(a, '=') && i + 1 < argc)
				strvec_push(&bc->run_args, argv[++i]);
			continue;
		}
		REFUSE("unknown option '%s'", a);
	}
	if (!*help && saw_devices && saw_gpus)
		REFUSE("--devices and --gpus are the same option; give one");
	return 0;
}

static void batch_cmd_release(struct batch_cmd *bc)
{
	for (size_t i = 0; i < bc->nspecs; i++)
		opspec_release(&bc->specs[i]);
	free(bc->specs);
	free(bc->devices);
	device_list_release(&bc->devs);
	opt_values_release(&bc->raw);
	strvec_clear(&bc->bargv);
	strvec_clear(&bc->run_args);
	strvec_clear(&bc->exec_args);
	strvec_clear(&bc->spec_text);
	strvec_clear(&bc->dtypes);
	strvec_clear(&bc->env);
	strvec_clear(&bc->worker_env);
	strvec_clear(&bc->overrides);
	opt_values_release(&bc->rraw);
	json_decref(bc->record);
	free(bc->python);
	free(bc->dir);
	free(bc->shape_file);
	free(bc->replay_root);
	free(bc->main_dir);
	free(bc->vllm_dir);
	if (bc->have_cfg)
		run_config_release(&bc->cfg);
}

static void print_help(void)
{
	char *names = backend_names_help();

	fputs(usage_head, stdout);
	options_usage(stdout, batch_option_defs);
	printf("\nbackends: %s\n", names);
	fputs(usage_tail, stdout);
	free(names);
}

int cmd_batch(int argc, char **argv)
{
	struct batch_cmd bc = {
		.bargv = STRVEC_INIT, .run_args = STRVEC_INIT, .spec_text = STRVEC_INIT,
		.dtypes = STRVEC_INIT, .env = STRVEC_INIT, .exec_args = STRVEC_INIT,
		.worker_env = STRVEC_INIT, .overrides = STRVEC_INIT,
	};
	struct batch_plan plan;
	struct stream_reporter term;
	int rc, help = 0;
	char exe[PATH_MAX];
	const char *s;
	json_t *args = NULL;
	ssize_t n;

	set_error_routine(error_quiet);
	set_warning_routine(say_warning);
	rc = split_args(&bc, argc, argv, &help);
	if (!rc && help) {
		print_help();
		goto out;
	}
	if (rc || (rc = check_options(&bc)) || (rc = select_operators(&bc)) ||
	    (rc = continue_batch(&bc)) || (rc = parse_specs(&bc)) || (rc = check_run_options(&bc)) ||
	    (rc = resolve_paths(&bc)) || (rc = prepare_children(&bc)) ||
	    (rc = resolve_devices(&bc)) || (rc = record_batch(&bc)))
		goto out;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "zlb batch: cannot find zlb's own binary (/proc/self/exe): %s\n",
			strerror(errno));
		rc = ZLB_EXIT_IO;
		goto out;
	}
	exe[n] = '\0';

	s = opt_get(batch_option_defs, &bc.raw, "batch-dir");
	bc.dir = s ? path_absolute(s) : default_batch_dir(opt_get(batch_option_defs, &bc.raw,
								     "runs-dir"));

	args = json_object();
	{
		json_t *a = json_array();
		for (int i = 0; i < argc; i++)
			json_array_append_new(a, json_string(argv[i]));
		json_object_set_new(args, "argv", a);
	}
	signal(SIGPIPE, SIG_IGN);
	memset(&plan, 0, sizeof(plan));
	plan.exe = exe;
	plan.envp = bc.env.v;
	plan.dir = bc.dir;
	plan.specs = bc.specs;
	plan.nr = bc.nspecs;
	plan.devices = bc.devices;
	plan.ndevices = bc.ndevices;
	plan.backend = bc.be->name;
	plan.run_args = &bc.run_args;
	plan.dtypes = &bc.dtypes;
	plan.shape_file = bc.shape_file;
	plan.replay_root = bc.replay_root;
	plan.main_dir = bc.main_dir;
	plan.vllm_dir = bc.vllm_dir;
	plan.op_timeout_s = strtod(opt_get(batch_option_defs, &bc.raw, "op-timeout"), NULL);
	plan.grace_s = strtod(opt_get(batch_option_defs, &bc.raw, "grace"), NULL);
	plan.max_retries = atoi(opt_get(batch_option_defs, &bc.raw, "retries"));
	plan.resume = bc.resume;
	plan.record = bc.record;
	plan.overrides = &bc.overrides;
	s = opt_get(batch_option_defs, &bc.raw, "progress");
	plan.progress = !strcmp(s, "live") || (!strcmp(s, "auto") && isatty(STDOUT_FILENO) &&
		!(getenv("TERM") && !strcmp(getenv("TERM"), "dumb"))) ?
		BATCH_PROGRESS_LIVE : BATCH_PROGRESS_PLAIN;
	plan.executor = opt_get(batch_option_defs, &bc.raw, "executor");
	plan.executor_args = &bc.exec_args;
	plan.isolation = opt_get(batch_option_defs, &bc.raw, "isolation");
	plan.python = bc.python;
	plan.worker_envp = bc.worker_env.v;
	s = opt_get(batch_option_defs, &bc.raw, "pin");
	plan.pin = s && opt_parse_bool(s) == 1;
	plan.args = args;

	set_error_routine(NULL);
	stream_reporter_init(&term, stdout, stderr);
	plan.rep = &term.r;
	rc = batch_execute(&plan);
out:
	batch_cmd_release(&bc);
	json_decref(args);
	return rc;
}
