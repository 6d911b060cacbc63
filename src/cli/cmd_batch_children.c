/*
 * zlb batch: where and how the children run (cmd_batch.h): the backend and
 * its devices, the executor, the children's environment, and the
 * interpreter and checkout they are given, checked once for the batch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "cli/commands.h"
#include "cli/usage.h"
#include "lib/options.h"
#include "run/preflight.h"
#include "run/run_config.h"
#include "lib/term.h"
#include "executors/executor.h"

#include "cli/cmd_batch.h"

extern char **environ;

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

/* PREFLIGHT_FAILED's report on stderr, and its exit code. */
static int preflight_refusal(struct preflight *pf, const struct batch_cmd *bc)
{
	struct strbuf sb = STRBUF_INIT;

	preflight_failure_text(pf, NULL, term_color_wanted(2, bc->cfg.color), &sb);
	fputs(sb.buf, stderr);
	strbuf_release(&sb);
	preflight_release(pf);
	return ZLB_EXIT_PREFLIGHT;
}

/*
 * The interpreter, probed once for the children to trust, and the
 * checkout, checked once: every operator would fail the same check. The
 * checkout found is given to every child, and recorded for --resume.
 */
static int check_interpreter_and_checkout(struct batch_cmd *bc)
{
	struct preflight pf;
	char *probed, *found = NULL;
	int bad;

	if (preflight_python(&pf, &bc->cfg, bc->env.v))
		return preflight_refusal(&pf, bc);
	bc->python = xstrdup(pf.plan.python);
	run_plan_child_env(&pf.plan, bc->env.v, &bc->worker_env);
	bad = preflight_checkout(&pf, bc->main_dir, &found);
	if (!bad && bc->vllm_dir) {
		char *v = NULL;
		bad = preflight_checkout(&pf, bc->vllm_dir, &v);
		free(v);
	}
	if (bad) {
		free(found);
		return preflight_refusal(&pf, bc);
	}
	free(bc->main_dir);
	bc->main_dir = found;
	probed = preflight_probed_value(&pf);
	if (probed)
		env_set(&bc->env, PREFLIGHT_PROBED_ENV, probed);
	free(probed);
	preflight_release(&pf);
	return 0;
}

/*
 * Where the operators run from this process: a cluster executor submits the
 * batch (the driver), unless this process is one of its tasks (--task) or
 * runs inside an allocation of the cluster, where the allocation's GPUs are
 * this machine's: then the operators run here, as the local executor runs
 * them. Refusals are preflight failures (exit 3).
 */
static int choose_executor(struct batch_cmd *bc)
{
	const char *name = opt_get(batch_option_defs, &bc->raw, "executor");
	const struct executor_ops *xo = executor_find(name);
	struct strbuf why = STRBUF_INIT, what = STRBUF_INIT;
	const char *alloc;

	bc->executor = name;
	if (!xo->cluster)
		return 0;
	if (bc->task) {
		bc->executor = "local";
		return 0;
	}
	if ((alloc = xo->cluster->allocation(&what))) {
		const char *nodes = getenv("SLURM_JOB_NUM_NODES");

		if (nodes && atoi(nodes) > 1) {
			char *text = xstrfmt("zlb batch runs inside %s allocation %s (%s): "
					     "its operators would run on this node only",
					     name, alloc, what.buf);
			int r = cli_preflight_failed("executor", text, "run zlb batch --executor "
						     "slurm from a login node to spread the "
						     "operators over nodes, or allocate one node");

			free(text);
			strbuf_release(&what);
			return r;
		}
		printf("zlb batch: inside %s allocation %s (%s): the operators run here, on the "
		       "GPUs it was given\n", name, alloc, what.buf);
		bc->alloc = xstrdup(alloc);
		bc->executor = "local";
		strbuf_release(&what);
		return 0;
	}
	strbuf_release(&what);
	if (xo->available && !xo->available(&why)) {
		int r = cli_preflight_failed("executor", why.buf, NULL);

		strbuf_release(&why);
		return r;
	}
	strbuf_release(&why);
	bc->cluster = 1;
	return 0;
}

int batch_cmd_prepare_children(struct batch_cmd *bc)
{
	const char *s;
	int r;

	/* Devices, from the backend. */
	s = opt_get(batch_option_defs, &bc->raw, "backend");
	bc->be = s ? backend_find(s) : backend_all()[0];
	if (!bc->be) {
		char *names = backend_names_help();
		int rc = usage_error("batch", "unknown backend '%s'; known: %s", s, names);

		free(names);
		return rc;
	}
	if ((r = choose_executor(bc)))
		return r;
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
	 * A cluster task's interpreter is its node's, which this machine may
	 * not even have: each task probes it where it runs.
	 */
	if (!bc->cluster)
		return check_interpreter_and_checkout(bc);
	return 0;
}

int batch_cmd_resolve_devices(struct batch_cmd *bc)
{
	static const char *const cluster_opts[] = {
		"partition", "account", "qos", "gres", "time", NULL,
	};
	const char *s;
	int cluster_named = !!executor_find(opt_get(batch_option_defs, &bc->raw,
						    "executor"))->cluster;

	for (const char *const *o = cluster_opts; *o; o++) {
		if (!(s = opt_get(batch_option_defs, &bc->raw, *o)))
			continue;
		if (!cluster_named)
			REFUSE("--%s is for a cluster executor (--executor slurm)", *o);
		strvec_pushf(&bc->exec_args, "--%s=%s", *o, s);
	}
	if ((s = opt_get(batch_option_defs, &bc->raw, "slurm-args"))) {
		if (strcmp(opt_get(batch_option_defs, &bc->raw, "executor"), "slurm"))
			REFUSE("--slurm-args is for --executor slurm");
		strvec_split(&bc->exec_args, s, " \t");
		for (size_t k = 0; k < bc->exec_args.nr; k++)
			if (bc->exec_args.v[k][0] != '-')
				REFUSE("--slurm-args: '%s' is not an sbatch option (each word must "
				       "start with '-'; zlb gives sbatch the script itself)",
				       bc->exec_args.v[k]);
	}
	if (bc->cluster) {
		/* The driver runs nothing itself: each task uses the GPUs it was given. */
		if (opt_get(batch_option_defs, &bc->raw, "devices"))
			REFUSE("--devices picks GPUs of this machine; with --executor %s each "
			       "task uses the GPUs the cluster gave it (--gres sets how many)",
			       opt_get(batch_option_defs, &bc->raw, "executor"));
		bc->devices = xcalloc(1, sizeof(int));
		bc->ndevices = 1;
		return 0;
	} else {
		struct strbuf why = STRBUF_INIT;
		int r = bc->be->list_devices(&bc->devs, &why);
		if (r || !bc->devs.nr) {
			char *text = xstrfmt("no %s device is visible%s%s%s%s", bc->be->name,
					     why.len ? ": " : "", why.buf,
					     bc->alloc ? "; inside allocation " : "",
					     bc->alloc ? bc->alloc : "");
			char *fix = xstrfmt("run on a machine with a %s device, check the driver "
					    "and %s, or pick another --backend (ZL_BACKEND)%s",
					    bc->be->name, bc->be->visibility_keys[0],
					    bc->alloc ? "; an allocation must ask for its GPUs "
					    "(--gres=gpu:N)" : "");

			r = cli_preflight_failed("device", text, fix);
			free(text);
			free(fix);
			strbuf_release(&why);
			return r;
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
