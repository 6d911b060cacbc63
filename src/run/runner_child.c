/*
 * What the measured child is given (runner_int.h): its environment and
 * command line, and, before it, the parallel sweep's shards with theirs.
 */
#include "run/runner_int.h"

#include <stdlib.h>
#include <string.h>

#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "providers/flaggems_child.h"
#include "rundir/identity.h"
#include "run/run_caliber.h"

/* key=the texts, one a line (the plugins split them back): a backend table's list. */
static void env_set_lines(struct strvec *env, const char *key, const char *const *texts)
{
	struct strbuf sb = STRBUF_INIT;

	for (const char *const *t = texts; t && *t; t++)
		strbuf_addf(&sb, "%s%s", sb.len ? "\n" : "", *t);
	env_set(env, key, sb.buf);
	strbuf_release(&sb);
}

void runner_child_env(const struct run_config *cfg, const struct run_plan *plan,
		      char *const *envp, const char *run_dir, const struct run_files *files,
		      struct strvec *env)
{
	run_plan_child_env(plan, envp, env);
	backend_apply_visibility(plan->backend, env, plan->physical_device);
	flaggems_child_env(env, plan->backend->flaggems_vendor, cfg->use_flagtune, files->isolated);
	env_set(env, "PYTHONUNBUFFERED", "1");
	env_set(env, "ZLB_RUN_DIR", run_dir);
	env_set(env, "ZLB_OP", plan->target.op);
	env_set(env, "ZLB_SHAPE_MODE", plan->shape_mode);
	if (strcmp(plan->shape_mode, "upstream"))
		env_set(env, "ZLB_SHAPE_FILE", files->shape_archive);
	else
		env_unset(env, "ZLB_SHAPE_FILE");
	env_set(env, "ZLB_TIMER", plan->timer);
	run_config_engine_env(cfg, env);
	env_set(env, "ZLB_IR", cfg->ir ? "1" : "0");
	env_set(env, "ZLB_BACKEND", plan->backend->name);
	env_set(env, "ZLB_AUTOTUNE_MODE", plan->replay_from ? "replay" : "record");
	if (plan->replay_from)
		env_set(env, "ZLB_REPLAY_FROM", plan->replay_from);
	else
		env_unset(env, "ZLB_REPLAY_FROM");
	if (plan->timer_lib)
		env_set(env, "ZLB_TIMER_LIB", plan->timer_lib);
	env_set_lines(env, "ZLB_CAPTURE_FATAL", plan->backend->capture_fatal_texts);
	env_set_lines(env, "ZLB_CAPTURE_POISON", plan->backend->capture_poison_texts);
	env_set_lines(env, "ZLB_CAPTURE_DENY", plan->backend->capture_deny);
	env_set(env, "ZLB_TORCH_MODULE", plan->backend->torch_module);
	if (plan->backend->graph_replay)
		env_set(env, "ZLB_GRAPH_REPLAY", plan->backend->graph_replay);
	else
		env_unset(env, "ZLB_GRAPH_REPLAY");
	if (plan->target.package)
		env_set(env, "ZLB_PACKAGE", plan->target.package);
	env_set(env, "TRITON_CACHE_DIR", files->compile_cache);
	if (files->graph_plan)
		env_set(env, "ZLB_GRAPH_PLAN", files->graph_plan);
	else
		env_unset(env, "ZLB_GRAPH_PLAN");
}

/*
 * pytest's command line. shard: a shard of the parallel sweep (pytest in a
 * process of its own whatever --worker says, no IR capture, its own shapes).
 */
static void pytest_argv(const struct run_config *cfg, const struct run_plan *plan,
			const char *shape_file, const struct strvec *plugins, int shard,
			struct strvec *argv)
{
	/* A worker runs the same pytest arguments in its warm process (run/run_config.h). */
	if (cfg->worker && !shard)
		strvec_pushl(argv, plan->python, "-m", "zlbench.worker_client", cfg->worker, NULL);
	else
		strvec_pushl(argv, plan->python, "-m", "pytest", NULL);
	strvec_pushl(argv, plan->target.node,
		     "-p", "no:cacheprovider", "-s", "-v", "-rfEsx", NULL);
	for (size_t i = 0; i < plugins->nr; i++)
		if (!shard || strcmp(plugins->v[i], "zlbench.ir"))
			strvec_pushl(argv, "-p", plugins->v[i], NULL);
	flaggems_pytest_args(argv, &(struct flaggems_args){
		.level = cfg->bench_level, .warmup_ms = cfg->warmup_ms, .iter_ms = cfg->rep_ms,
		.shape_file = shape_file,
		.dtypes = &cfg->dtypes,
	});
}

void runner_child_argv(const struct run_config *cfg, const struct run_plan *plan,
		       const char *shape_archive, const struct strvec *plugins,
		       struct strvec *argv)
{
	pytest_argv(cfg, plan, strcmp(plan->shape_mode, "upstream") ? shape_archive : NULL,
		    plugins, 0, argv);
}

/* --- the parallel sweep ------------------------------------------------- */

struct shard_cmd {
	const struct run_config *cfg;
	const struct run_plan *plan;
	const struct strvec *plugins;
};

/* A shard's pytest: its shapes are always a file, whatever the run's shape mode. */
static void shard_argv(void *ctx, const char *shape_file, struct strvec *argv)
{
	const struct shard_cmd *sc = ctx;

	pytest_argv(sc->cfg, sc->plan, shape_file, sc->plugins, 1, argv);
}

/*
 * A replay uses the configs its source chose: how they were chosen (the
 * source's sweep) is its caliber too, so that a B replaying a sharded A
 * pairs with A and not with a serially swept run. A source that does not
 * say swept serially.
 */
static void inherit_sweep_caliber(const char *replay_from, json_t *cal)
{
	char *p = path_join(replay_from, IDENTITY_FILE);
	json_t *src = NULL, *scal, *g, *c;

	if (!json_read_file(p, &src) && json_is_object(scal = json_object_get(src, "caliber"))) {
		g = json_object_get(scal, "parallel_warmup_gpus");
		c = json_object_get(scal, "sweep_conflicts");
		run_caliber_set_sweep(cal, json_is_integer(g) ? (int)json_integer_value(g) : 1,
				      json_is_integer(c) ? (long)json_integer_value(c) : 0);
	}
	json_decref(src);
	free(p);
}

/*
 * The header's caliber line is written before the sweep, with the serial
 * sweep's values: what the sweep (or a replayed source's) made of them is
 * said, so that the terminal never shows a caliber the identity does not.
 */
static void say_sweep_caliber(struct tee *t, json_t *cal)
{
	json_int_t gpus = json_integer_value(json_object_get(cal, "parallel_warmup_gpus"));
	json_int_t conflicts = json_integer_value(json_object_get(cal, "sweep_conflicts"));

	if (gpus > 1 || conflicts)
		tee_say(t, TEE_PLAIN, "  caliber:  parallel_warmup_gpus=%lld sweep_conflicts=%lld "
			"(set by the sweep; the line above was written before it)",
			(long long)gpus, (long long)conflicts);
}

/*
 * The parallel sweep before the measurement (run/sweep_shards.h): when its
 * records were merged, the measured child replays them from the run's own
 * directory. The identity gets what happened (provenance parallel_sweep)
 * and its caliber (parallel_warmup_gpus, sweep_conflicts).
 */
int runner_sweep_first(struct tee *t, const struct run_config *cfg, const struct run_plan *plan,
		       char *const *envp, const char *run_dir, const struct strvec *plugins,
		       struct strvec *env, json_t *id, struct sweep_result *res)
{
	struct strvec inherited = STRVEC_INIT;
	struct shard_cmd sc = { cfg, plan, plugins };
	struct sweep_input in = {
		.gpus = cfg->parallel_warmup_gpus, .run_dir = run_dir,
		.bench_level = cfg->bench_level, .replay_from = plan->replay_from,
		.worker = cfg->worker, .backend = plan->backend, .devices = &plan->devices,
		.inherited = &inherited, .env = env, .target = &plan->target,
		.shapes = strcmp(plan->shape_mode, "upstream") ? &plan->shapes : NULL,
		.grace_ms = cfg->interrupt_grace_ms, .tee = t, .shard_argv = shard_argv,
		.ctx = &sc,
	};
	int r;

	strvec_pushv(&inherited, (const char *const *)envp);
	r = sweep_shards_run(&in, res);
	strvec_clear(&inherited);
	if (r)
		return -1;
	if (plan->replay_from)
		inherit_sweep_caliber(plan->replay_from, identity_section(id, "caliber"));
	if (res->state == SWEEP_OFF)
		return plan->replay_from ? identity_write(run_dir, id) : 0;
	if (res->state == SWEEP_MERGED) {
		env_set(env, "ZLB_AUTOTUNE_MODE", "replay");
		env_set(env, "ZLB_REPLAY_FROM", run_dir);
	}
	json_object_set(identity_section(id, "provenance"), "parallel_sweep", res->about);
	if (!plan->replay_from)
		run_caliber_set_sweep(identity_section(id, "caliber"), res->shards, res->conflicts);
	say_sweep_caliber(t, identity_section(id, "caliber"));
	return identity_write(run_dir, id);
}

