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
	{ NULL },
};

/* zlb run options a batch sets per operator itself. */
static const char *const owned_run_options[] = {
	"op", "op-file", "test-node", "device", "run-dir", "replay-from", "interrupt-grace",
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

/* The operator list of an earlier session (batch.json), for a bare --resume. */
static int specs_from_batch(const char *dir, struct strvec *specs)
{
	char *path = path_join(dir, "batch.json");
	json_t *j = NULL, *v;
	size_t i;
	int r = json_read_file(path, &j);

	if (r) {
		r = error("%s cannot be read: there is nothing to resume there", path);
		free(path);
		return r;
	}
	json_array_foreach(json_object_get(j, "ops"), i, v)
		if (json_str(v, "spec"))
			strvec_push(specs, json_str(v, "spec"));
	json_decref(j);
	free(path);
	return 0;
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

#define FAIL_USAGE(...) do { rc = usage_error("batch", __VA_ARGS__); goto out; } while (0)

int cmd_batch(int argc, char **argv)
{
	struct strvec bargv = STRVEC_INIT, run_args = STRVEC_INIT, spec_text = STRVEC_INIT,
		      dtypes = STRVEC_INIT, env = STRVEC_INIT, check = STRVEC_INIT,
		      exec_args = STRVEC_INIT;
	struct opt_values raw = { 0 };
	struct op_spec *specs = NULL;
	size_t nspecs = 0;
	struct batch_plan plan;
	struct stream_reporter term;
	struct run_config cfg;
	struct device_list devs = { 0 };
	const struct backend_ops *be;
	int *devices = NULL, ndevices = 0, rc = ZLB_EXIT_OK, help = 0, in_ops = 0,
	    saw_devices = 0, saw_gpus = 0, ops_given = 0, have_cfg = 0, remote = 0;
	char *dir = NULL, *shape_file = NULL, *replay_root = NULL, *main_dir = NULL,
	     *vllm_dir = NULL, exe[PATH_MAX];
	const char *s;
	json_t *args = NULL;
	ssize_t n;

	set_error_routine(error_quiet);
	set_warning_routine(say_warning);
	strvec_push(&bargv, "batch");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct opt_def *d;

		if (!strcmp(a, "--ops")) {
			in_ops = ops_given = 1;
			continue;
		}
		if (a[0] != '-') {
			if (!in_ops)
				FAIL_USAGE("'%s': operators go after --ops (or in --ops-file)", a);
			strvec_push(&spec_text, a);
			continue;
		}
		in_ops = 0;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			help = 1;
			continue;
		}
		if ((d = opt_find(batch_option_defs, a))) {
			if (!strcmp(d->name, "devices")) {
				const char *nm = a + 2;
				if (!strncmp(nm, "gpus", 4))
					saw_gpus = 1;
				else
					saw_devices = 1;
			}
			strvec_push(&bargv, a);
			if (d->kind != OPT_BOOL && !strchr(a, '=') && i + 1 < argc)
				strvec_push(&bargv, argv[++i]);
			continue;
		}
		if ((d = opt_find(run_option_defs, a))) {
			if (in_list(owned_run_options, d->name))
				FAIL_USAGE("%s is set by zlb batch for each operator%s", a,
					   !strcmp(d->name, "replay-from") ?
					   " (use --replay-root DIR for DIR/<repo>/<op>)" : "");
			strvec_push(&run_args, a);
			if (d->kind != OPT_BOOL && !strchr(a, '=') && i + 1 < argc)
				strvec_push(&run_args, argv[++i]);
			continue;
		}
		FAIL_USAGE("unknown option '%s'", a);
	}
	if (help) {
		char *names = backend_names_help();
		fputs(usage_head, stdout);
		options_usage(stdout, batch_option_defs);
		printf("\nbackends: %s\n", names);
		fputs(usage_tail, stdout);
		free(names);
		goto out;
	}
	if (saw_devices && saw_gpus)
		FAIL_USAGE("--devices and --gpus are the same option; give one");
	if (options_parse(batch_option_defs, (int)bargv.nr, bargv.v, environ, &raw, &check,
			  &help) || check.nr)
		FAIL_USAGE("%s", check.nr ? "unexpected argument" : last_error());
	strvec_clear(&check);

	/* zlb run's options: checked once by its own table (cfg: what children resolve). */
	strvec_pushl(&check, "run", "softmax", NULL);
	strvec_pushv(&check, (const char *const *)run_args.v);
	{
		struct opt_values rraw = { 0 };
		int r = run_config_parse(&cfg, (int)check.nr, check.v, environ, &rraw);
		opt_values_release(&rraw);
		have_cfg = 1;
		if (r)
			FAIL_USAGE("%s", last_error());
	}
	if ((s = getenv("REPLAY_FROM")) && *s)
		FAIL_USAGE("REPLAY_FROM is set: zlb batch replays per operator with "
			   "--replay-root DIR (DIR/<repo>/<op>); unset REPLAY_FROM");

	/* The operators. */
	{
		int all = opt_get(batch_option_defs, &raw, "all") != NULL &&
			  opt_parse_bool(opt_get(batch_option_defs, &raw, "all")) == 1;
		const char *ops_file = opt_get(batch_option_defs, &raw, "ops-file");
		int resume = opt_get(batch_option_defs, &raw, "resume") &&
			     opt_parse_bool(opt_get(batch_option_defs, &raw, "resume")) == 1;
		int sources = all + (ops_file != NULL) + ops_given;

		if (sources > 1)
			FAIL_USAGE("give one of --all, --ops and --ops-file");
		if (ops_given && !spec_text.nr)
			FAIL_USAGE("--ops needs at least one operator");
		if (!sources && !resume)
			FAIL_USAGE("which operators? give --ops OP ..., --ops-file FILE or --all");
		if (ops_file && opspec_read_file(ops_file, &spec_text))
			FAIL_USAGE("%s", last_error());
		if (all) {
			const char *ops_dir = opt_get(batch_option_defs, &raw, "ops-dir");
			struct strvec excluded = STRVEC_INIT;
			if (!has_inventory(ops_dir))
				FAIL_USAGE("--all: no operator inventory in %s; run `zlb inventory` "
					   "first (or point --ops-dir at one)", ops_dir);
			if (inventory_select_all(ops_dir, opt_get(batch_option_defs, &raw, "dismiss"),
						 &spec_text, &excluded)) {
				strvec_clear(&excluded);
				FAIL_USAGE("--all: %s", last_error());
			}
			if (excluded.nr)
				printf("zlb batch: --all leaves out %zu function(s) (skip marks, not "
				       "collected, dismissed)\n", excluded.nr);
			strvec_clear(&excluded);
		}
		if (!sources) {
			const char *bd = opt_get(batch_option_defs, &raw, "batch-dir");
			if (!bd)
				FAIL_USAGE("--resume needs --batch-dir DIR");
			if (specs_from_batch(bd, &spec_text))
				FAIL_USAGE("%s", last_error());
		}
		specs = xcalloc(spec_text.nr + 1, sizeof(*specs));
		for (size_t i = 0; i < spec_text.nr; i++) {
			int dup = 0;
			if (opspec_parse(&specs[nspecs], spec_text.v[i]))
				FAIL_USAGE("%s", last_error());
			for (size_t k = 0; k < nspecs && !dup; k++)
				dup = !strcmp(specs[k].repo, specs[nspecs].repo) &&
				      !strcmp(specs[k].key, specs[nspecs].key);
			if (dup) {
				warning("%s is listed twice; measured once", specs[nspecs].spec);
				opspec_release(&specs[nspecs]);
				continue;
			}
			nspecs++;
		}
		if (!nspecs)
			FAIL_USAGE("the operator list is empty");
	}

	/* Paths. */
	if ((s = opt_get(batch_option_defs, &raw, "shape-file"))) {
		shape_file = path_absolute(s);
		if (!is_file(shape_file))
			FAIL_USAGE("--shape-file %s: no such file", s);
	}
	if ((s = opt_get(batch_option_defs, &raw, "replay-root"))) {
		replay_root = path_absolute(s);
		if (!is_dir(replay_root))
			FAIL_USAGE("--replay-root %s: no such directory (give an earlier batch "
				   "directory)", s);
	}
	if ((s = opt_get(batch_option_defs, &raw, "flaggems-dir")))
		main_dir = path_absolute(s);
	if ((s = opt_get(batch_option_defs, &raw, "vllm-dir")))
		vllm_dir = path_absolute(s);
	for (size_t i = 0; i < nspecs; i++)
		if (!strcmp(specs[i].repo, "vllm") && !vllm_dir)
			FAIL_USAGE("%s is a vllm operator: give the FlagGems-vllm checkout with "
				   "--vllm-dir DIR (FLAGGEMS_VLLM_DIR)", specs[i].spec);
	if ((s = opt_get(batch_option_defs, &raw, "dtypes")))
		strvec_split(&dtypes, s, " ,\t");

	/* Devices, from the backend. */
	s = opt_get(batch_option_defs, &raw, "backend");
	be = s ? backend_find(s) : backend_all()[0];
	if (!be) {
		char *names = backend_names_help();
		rc = usage_error("batch", "unknown backend '%s'; known: %s", s, names);
		free(names);
		goto out;
	}
	{
		const struct executor_ops *xo =
			executor_find(opt_get(batch_option_defs, &raw, "executor"));
		struct strbuf why = STRBUF_INIT;

		if (xo->available && !xo->available(&why)) {
			struct strbuf sb = STRBUF_INIT;

			preflight_report(&sb, "executor", NULL, why.buf, NULL, 0);
			fputs(sb.buf, stderr);
			strbuf_release(&sb);
			strbuf_release(&why);
			rc = ZLB_EXIT_PREFLIGHT;
			goto out;
		}
		strbuf_release(&why);
		remote = xo->remote_devices;
	}
	/* Children get zlb run's settings as flags, never through stray variables. */
	strvec_pushv(&env, (const char *const *)environ);
	for (const char *const *k = scrubbed_env; *k; k++)
		env_unset(&env, *k);

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
	env_unset(&env, PREFLIGHT_PROBED_ENV);
	/*
	 * A remote job's interpreter is the node's, which this machine may not
	 * even have: each child probes it where it runs.
	 */
	if (!remote) {
		struct preflight pf;
		char *probed;

		if (preflight_python(&pf, &cfg, env.v)) {
			struct strbuf sb = STRBUF_INIT;

			preflight_failure_text(&pf, NULL, term_color_wanted(2, cfg.color), &sb);
			fputs(sb.buf, stderr);
			strbuf_release(&sb);
			preflight_release(&pf);
			rc = ZLB_EXIT_PREFLIGHT;
			goto out;
		}
		probed = preflight_probed_value(&pf);
		if (probed)
			env_set(&env, PREFLIGHT_PROBED_ENV, probed);
		free(probed);
		preflight_release(&pf);
	}

	if ((s = opt_get(batch_option_defs, &raw, "slurm-args"))) {
		if (strcmp(opt_get(batch_option_defs, &raw, "executor"), "slurm"))
			FAIL_USAGE("--slurm-args is for --executor slurm");
		strvec_split(&exec_args, s, " \t");
		for (size_t k = 0; k < exec_args.nr; k++)
			if (exec_args.v[k][0] != '-')
				FAIL_USAGE("--slurm-args: '%s' is not an srun option (each word must "
					   "start with '-'; zlb gives srun the command itself)",
					   exec_args.v[k]);
	}
	if (remote) {
		/*
		 * Each job sees only the GPU the cluster gives it, so no local
		 * device is needed; --devices numbers the jobs that run at once.
		 */
		if (!(s = opt_get(batch_option_defs, &raw, "devices")))
			FAIL_USAGE("--executor %s: give --devices with one number per job that may "
				   "run at once (e.g. --devices 0,1,2,3 for four); the cluster picks "
				   "each job's GPU", opt_get(batch_option_defs, &raw, "executor"));
		if (parse_devices(s, REMOTE_SLOTS_MAX, &devices, &ndevices))
			FAIL_USAGE("%s", last_error());
	} else {
		struct strbuf why = STRBUF_INIT;
		int r = be->list_devices(&devs, &why);
		if (r || !devs.nr) {
			struct strbuf sb = STRBUF_INIT;
			char *text = xstrfmt("no %s device is visible%s%s", be->name,
					     why.len ? ": " : "", why.buf);
			char *fix = xstrfmt("run on a machine with a %s device, check the driver "
					    "and %s, or pick another --backend (ZL_BACKEND)",
					    be->name, be->visibility_keys[0]);

			preflight_report(&sb, "device", NULL, text, fix, 0);
			fputs(sb.buf, stderr);
			strbuf_release(&sb);
			free(text);
			free(fix);
			strbuf_release(&why);
			rc = ZLB_EXIT_PREFLIGHT;
			goto out;
		}
		strbuf_release(&why);
		if ((s = opt_get(batch_option_defs, &raw, "devices"))) {
			if (parse_devices(s, devs.nr, &devices, &ndevices))
				FAIL_USAGE("%s", last_error());
		} else {
			devices = xcalloc((size_t)devs.nr, sizeof(int));
			for (int d = 0; d < devs.nr; d++)
				devices[ndevices++] = d;
		}
	}

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "zlb batch: cannot find zlb's own binary (/proc/self/exe): %s\n",
			strerror(errno));
		rc = ZLB_EXIT_IO;
		goto out;
	}
	exe[n] = '\0';

	s = opt_get(batch_option_defs, &raw, "batch-dir");
	dir = s ? path_absolute(s) : default_batch_dir(opt_get(batch_option_defs, &raw,
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
	plan.envp = env.v;
	plan.dir = dir;
	plan.specs = specs;
	plan.nr = nspecs;
	plan.devices = devices;
	plan.ndevices = ndevices;
	plan.backend = be->name;
	plan.run_args = &run_args;
	plan.dtypes = &dtypes;
	plan.shape_file = shape_file;
	plan.replay_root = replay_root;
	plan.main_dir = main_dir;
	plan.vllm_dir = vllm_dir;
	plan.op_timeout_s = strtod(opt_get(batch_option_defs, &raw, "op-timeout"), NULL);
	plan.grace_s = strtod(opt_get(batch_option_defs, &raw, "grace"), NULL);
	plan.max_retries = atoi(opt_get(batch_option_defs, &raw, "retries"));
	plan.resume = opt_get(batch_option_defs, &raw, "resume") &&
		      opt_parse_bool(opt_get(batch_option_defs, &raw, "resume")) == 1;
	s = opt_get(batch_option_defs, &raw, "progress");
	plan.progress = !strcmp(s, "live") || (!strcmp(s, "auto") && isatty(STDOUT_FILENO) &&
		!(getenv("TERM") && !strcmp(getenv("TERM"), "dumb"))) ?
		BATCH_PROGRESS_LIVE : BATCH_PROGRESS_PLAIN;
	plan.executor = opt_get(batch_option_defs, &raw, "executor");
	plan.executor_args = &exec_args;
	plan.args = args;

	set_error_routine(NULL);
	stream_reporter_init(&term, stdout, stderr);
	plan.rep = &term.r;
	rc = batch_execute(&plan);
out:
	for (size_t i = 0; i < nspecs; i++)
		opspec_release(&specs[i]);
	free(specs);
	free(devices);
	device_list_release(&devs);
	opt_values_release(&raw);
	strvec_clear(&bargv);
	strvec_clear(&run_args);
	strvec_clear(&exec_args);
	strvec_clear(&spec_text);
	strvec_clear(&dtypes);
	strvec_clear(&env);
	strvec_clear(&check);
	free(dir);
	free(shape_file);
	free(replay_root);
	free(main_dir);
	free(vllm_dir);
	json_decref(args);
	if (have_cfg)
		run_config_release(&cfg);
	return rc;
}
