/*
 * zlb batch: measure many operators, one `zlb run` child each, serial per
 * device and devices in parallel (batch/batch.h has the directory layout,
 * batch/batch_policy.h the retry rules, batch/batch_status.h the tables).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/backend.h"
#include "cli/commands.h"
#include "cli/usage.h"
#include "batch/batch.h"
#include "batch/batch_junit.h"
#include "batch/batch_resume.h"
#include "batch/inventory.h"
#include "lib/jsonfile.h"
#include "batch/opspec.h"
#include "lib/options.h"
#include "lib/paths.h"
#include "run/run_config.h"
#include "lib/term.h"

#include "cli/cmd_batch.h"

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

/* Is the batch's boolean option name given (and true)? */
static int flag_set(const struct batch_cmd *bc, const char *name)
{
	const char *v = opt_get(batch_option_defs, &bc->raw, name);

	return v && opt_parse_bool(v) == 1;
}

/*
 * --all and the vllm repository: ops_dir/inventory_vllm.csv is written only
 * when zlb inventory is given the FlagGems-vllm checkout (--vllm-dir), and
 * the repository ships none. Asked for (--vllm-dir or FLAGGEMS_VLLM_DIR given
 * with --all) and absent: refused, exit 2. Not asked for: --all takes main
 * alone and says so. 0, or the usage error's exit code.
 */
static int vllm_inventory(const struct batch_cmd *bc, const char *ops_dir)
{
	char *name = inventory_csv_name("vllm"), *csv = path_join(ops_dir, name);
	char *recorded = inventory_checkout(ops_dir, "vllm");
	enum opt_source src = opt_source_of(batch_option_defs, &bc->raw, "vllm-dir");
	const char *given = src == OPT_FROM_FLAG ? "--vllm-dir" : "FLAGGEMS_VLLM_DIR";
	const char *why = recorded ? "inventory.json records a vllm checkout, but the file is gone"
				   : "the inventory was built without a FlagGems-vllm checkout";
	int rc = 0;

	if (!is_file(csv)) {
		if (src == OPT_FROM_FLAG || src == OPT_FROM_ENV)
			rc = usage_error("batch", "--all with %s: %s does not exist (%s), so --all "
					 "has no vllm operator to take; build it with `zlb inventory "
					 "--vllm-dir DIR --out %s`, or drop %s to screen main alone",
					 given, csv, why, ops_dir, given);
		else if (!flag_set(bc, "quiet"))
			printf("zlb batch: --all: no vllm operators: %s does not exist (%s); `zlb "
			       "inventory --vllm-dir DIR --out %s` adds them\n", csv, why, ops_dir);
	}
	free(recorded);
	free(csv);
	free(name);
	return rc;
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
			{
				int rc = vllm_inventory(bc, ops_dir);
				if (rc)
					return rc;
			}
			if (inventory_select_all(ops_dir, opt_get(batch_option_defs, &bc->raw, "dismiss"),
						 &bc->spec_text, &excluded)) {
				strvec_clear(&excluded);
				REFUSE("--all: %s", last_error());
			}
			if (excluded.nr && !flag_set(bc, "quiet"))
				printf("zlb batch: --all leaves out %zu function%s (skip marks, not "
				       "collected, dismissed)\n", excluded.nr, PLURAL(excluded.nr));
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
		/* A bare --resume: the list comes with the rest in batch_cmd_continue_batch(). */
	}

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

/* --junit FILE from the batch's ops_status.csv, once it has ended: 0, or -1 having said why. */
static int write_junit(const char *batch_dir, const char *file)
{
	struct junit_suite suite;
	char *name = xstrfmt("zlb batch %s", path_basename(batch_dir));
	int r;

	char *dir = path_dirname(file);

	junit_init(&suite, name);
	set_error_routine(error_quiet);	/* said once, below */
	r = batch_junit_read(batch_dir, &suite);
	if (!r)
		r = mkdir_p(dir, 0777);
	if (!r)
		r = junit_write(&suite, file);
	cli_report_errors("batch");
	junit_release(&suite);
	free(name);
	free(dir);
	if (r)
		fprintf(stderr, "zlb batch: the JUnit report %s was not written: %s\n", file,
			last_error());
	return r;
}

/*
 * --task ARRAY_INDEX (zlb task on a node): the batch continues as it was
 * started, with this task's share of the operators, its state files in
 * <batch>/.tasks/ARRAY_INDEX/. Before the operators are parsed.
 */
static int take_task_share(struct batch_cmd *bc)
{
	const char *dir = opt_get(batch_option_defs, &bc->raw, "batch-dir");
	char *us, *end, *abs;
	long index;

	if (!bc->task)
		return 0;
	us = strrchr(bc->task, '_');
	index = us ? strtol(us + 1, &end, 10) : -1;
	if (!us || us == bc->task || end == us + 1 || *end || index < 0 ||
	    strspn(bc->task, "0123456789") != (size_t)(us - bc->task))
		REFUSE("--task %s: not <array>_<index>", bc->task);
	if (!bc->resume || !dir)
		REFUSE("--task continues a batch: give --batch-dir DIR --resume (zlb task does)");
	*us = '\0';
	strvec_clear(&bc->spec_text);
	abs = path_absolute(dir);
	if (batch_task_share(abs, bc->task, (int)index, &bc->spec_text)) {
		*us = '_';
		free(abs);
		REFUSE("%s", last_error());
	}
	*us = '_';
	bc->state_dir = xstrfmt("%s/.tasks/%s", abs, bc->task);
	free(abs);
	if (!bc->spec_text.nr)
		REFUSE("--task %s: its share is empty", bc->task);
	return 0;
}

/* A yes/no question at the terminal (the cluster driver's Ctrl-C). */
static int ask_terminal(const char *question, int dflt)
{
	char answer[16] = "";
	int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 || !isatty(STDIN_FILENO)) {
		if (fd >= 0)
			close(fd);
		return dflt;
	}
	(void)!write(fd, question, strlen(question));
	n = read(fd, answer, sizeof(answer) - 1);
	close(fd);
	if (n <= 0)
		return dflt;
	answer[n] = '\0';
	if (answer[0] == 'y' || answer[0] == 'Y')
		return 1;
	if (answer[0] == 'n' || answer[0] == 'N')
		return 0;
	return dflt;
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
	free(bc->task);
	free(bc->state_dir);
	free(bc->alloc);
	if (bc->have_cfg)
		run_config_release(&bc->cfg);
}

/* --status: where the batch in --batch-dir stands; nothing is changed. */
static int show_status(struct batch_cmd *bc)
{
	const char *dir = opt_get(batch_option_defs, &bc->raw, "batch-dir");
	struct stream_reporter term;
	char *abs;
	int rc;

	if (!dir)
		REFUSE("--status needs --batch-dir DIR");
	if (bc->spec_text.nr || bc->run_args.nr)
		REFUSE("--status shows a batch; it takes no operators or zlb run options");
	abs = path_absolute(dir);
	cli_report_errors("batch");
	stream_reporter_init(&term, stdout, stderr);
	rc = batch_show_status(abs, &term.r);
	free(abs);
	return rc;
}

/* The scheduler's plan, from what the steps before gathered. */
static void fill_plan(struct batch_cmd *bc, const char *exe, json_t *args,
		      struct batch_plan *plan)
{
	const char *s;

	memset(plan, 0, sizeof(*plan));
	plan->exe = exe;
	plan->envp = bc->env.v;
	plan->dir = bc->dir;
	plan->specs = bc->specs;
	plan->nr = bc->nspecs;
	plan->devices = bc->devices;
	plan->ndevices = bc->ndevices;
	plan->backend = bc->be->name;
	plan->run_args = &bc->run_args;
	plan->dtypes = &bc->dtypes;
	plan->shape_file = bc->shape_file;
	plan->replay_root = bc->replay_root;
	plan->main_dir = bc->main_dir;
	plan->vllm_dir = bc->vllm_dir;
	plan->op_timeout_s = strtod(opt_get(batch_option_defs, &bc->raw, "op-timeout"), NULL);
	plan->grace_s = strtod(opt_get(batch_option_defs, &bc->raw, "grace"), NULL);
	plan->max_retries = atoi(opt_get(batch_option_defs, &bc->raw, "retries"));
	plan->resume = bc->resume;
	plan->record = bc->record;
	plan->overrides = &bc->overrides;
	s = opt_get(batch_option_defs, &bc->raw, "progress");
	plan->progress = !bc->task && !bc->cluster && (!strcmp(s, "live") ||
		(!strcmp(s, "auto") && isatty(STDOUT_FILENO) &&
		!(getenv("TERM") && !strcmp(getenv("TERM"), "dumb")))) ?
		BATCH_PROGRESS_LIVE : BATCH_PROGRESS_PLAIN;
	plan->executor = bc->executor;
	plan->executor_args = &bc->exec_args;
	plan->state_dir = bc->state_dir;
	plan->cluster_job = bc->task ? bc->task : bc->alloc;
	plan->max_parallel = atoi(opt_get(batch_option_defs, &bc->raw, "max-parallel"));
	plan->task_ops = atoi(opt_get(batch_option_defs, &bc->raw, "task-ops"));
	s = opt_get(batch_option_defs, &bc->raw, "no-follow");
	plan->follow = !(s && opt_parse_bool(s) == 1);
	s = opt_get(batch_option_defs, &bc->raw, "retry-cancelled");
	plan->retry_cancelled = s && opt_parse_bool(s) == 1;
	plan->ask = ask_terminal;
	plan->isolation = opt_get(batch_option_defs, &bc->raw, "isolation");
	plan->python = bc->python;
	plan->worker_envp = bc->worker_env.v;
	s = opt_get(batch_option_defs, &bc->raw, "pin");
	plan->pin = s && opt_parse_bool(s) == 1;
	plan->args = args;
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
	rc = batch_cmd_split_args(&bc, argc, argv, &help);
	if (!rc && help) {
		rc = help == OPT_WANT_HELP ? cli_help("batch", &batch_doc) : cli_version();
		goto out;
	}
	if (!rc)
		rc = batch_cmd_check_options(&bc);
	if (!rc && (s = opt_get(batch_option_defs, &bc.raw, "status")) && opt_parse_bool(s) == 1) {
		rc = show_status(&bc);
		goto out;
	}
	if (!rc && (s = opt_get(batch_option_defs, &bc.raw, "task")))
		bc.task = xstrdup(s);
	if (rc || (rc = select_operators(&bc)) ||
	    (rc = batch_cmd_continue_batch(&bc)) || (rc = take_task_share(&bc)) ||
	    (rc = parse_specs(&bc)) || (rc = batch_cmd_check_run_options(&bc)) ||
	    (rc = resolve_paths(&bc)) || (rc = batch_cmd_prepare_children(&bc)) ||
	    (rc = batch_cmd_resolve_devices(&bc)) || (rc = batch_cmd_record_batch(&bc)))
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
	fill_plan(&bc, exe, args, &plan);

	/*
	 * Each child's console goes whole to its log (.logs/<repo>/<op>.log),
	 * which the retry policy reads for upstream's sentences: verbose. Not
	 * a zlb run option of the batch's (it is not recorded for --resume).
	 */
	strvec_push(&bc.run_args, "--verbose");
	cli_report_errors("batch");
	stream_reporter_init(&term, stdout, stderr);
	term.verbosity = flag_set(&bc, "quiet") ? REPORT_QUIET : flag_set(&bc, "verbose") ?
			 REPORT_VERBOSE : REPORT_NORMAL;
	plan.rep = &term.r;
	rc = batch_execute(&plan);
	if ((s = opt_get(batch_option_defs, &bc.raw, "junit")) && write_junit(bc.dir, s) &&
	    (rc == ZLB_EXIT_OK || rc == ZLB_EXIT_REGRESSION))
		rc = ZLB_EXIT_IO;
out:
	batch_cmd_release(&bc);
	json_decref(args);
	return rc;
}
