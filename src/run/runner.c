#include "run/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "rundir/exit_codes.h"
#include "lib/fingerprint.h"
#include "lib/gitinfo.h"
#include "run/graph_plan.h"
#include "rundir/identity.h"
#include "ir/ir_layout.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "run/plugin_plan.h"
#include "run/run_caliber.h"
#include "lib/proc.h"
#include "lib/proc_tree.h"
#include "rundir/results_file.h"
#include "rundir/run_tally.h"
#include "rundir/rundir.h"
#include "run/sweep_shards.h"
#include "run/tee.h"
#include "lib/term.h"
#include "lib/unixsock.h"
#include "providers/flaggems_child.h"

/* How long the worker client waits for its worker's socket (worker_client.py). */
#define WORKER_CONNECT_WAIT_MS 30000

/* Monotonic seconds: the wall time of pytest, as the batch overhead bench reads it. */
static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- the child ---------------------------------------------------------- */

/* key=the texts, one a line (the plugins split them back): a backend table's list. */
static void env_set_lines(struct strvec *env, const char *key, const char *const *texts)
{
	struct strbuf sb = STRBUF_INIT;

	for (const char *const *t = texts; t && *t; t++)
		strbuf_addf(&sb, "%s%s", sb.len ? "\n" : "", *t);
	env_set(env, key, sb.buf);
	strbuf_release(&sb);
}

/* Where the child's own files go: its Triton cache, and a replay's graph plan (or NULL). */
struct child_files {
	const char *compile_cache;
	const char *graph_plan;
};

static void build_env(const struct run_config *cfg, const struct run_plan *plan,
		      char *const *envp, const char *run_dir, const char *shape_archive,
		      const char *isolated_cache, const struct child_files *files,
		      struct strvec *env)
{
	run_plan_child_env(plan, envp, env);
	backend_apply_visibility(plan->backend, env, plan->physical_device);
	flaggems_child_env(env, plan->backend->flaggems_vendor, cfg->use_flagtune, isolated_cache);
	env_set(env, "PYTHONUNBUFFERED", "1");
	env_set(env, "ZLB_RUN_DIR", run_dir);
	env_set(env, "ZLB_OP", plan->target.op);
	env_set(env, "ZLB_SHAPE_MODE", plan->shape_mode);
	if (strcmp(plan->shape_mode, "upstream"))
		env_set(env, "ZLB_SHAPE_FILE", shape_archive);
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

static void build_argv(const struct run_config *cfg, const struct run_plan *plan,
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
	char *p = path_join(replay_from, "run_identity.json");
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
static int sweep_first(struct tee *t, const struct run_config *cfg, const struct run_plan *plan,
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

/* --- identity ----------------------------------------------------------- */

static json_t *initial_identity(const struct run_config *cfg, const struct run_plan *plan,
				const char *run_dir, const char *tuner_cache,
				const struct strvec *plugins, const struct strvec *child_argv,
				int argc, char **argv)
{
	json_t *id = identity_new(plan->target.op, run_dir);
	json_t *prov = identity_section(id, "provenance");
	const struct device_info *dev = &plan->devices.v[cfg->device];
	const struct run_facts facts = {
		.backend = plan->backend->name, .device = dev->name, .timer = plan->timer,
		.shape_mode = plan->shape_mode, .tuner_cache = tuner_cache,
	};
	char host[256] = "";
	char *commit = git_head_commit(plan->target.dir);
	struct strvec cmd = STRVEC_INIT;

	json_object_set_new(id, "caliber", run_caliber(cfg, &facts));

	gethostname(host, sizeof(host) - 1);
	strvec_pushv(&cmd, (const char *const *)argv);
	(void)argc;
	json_object_set_new(prov, "zlb_version", json_string(ZLB_VERSION));
	json_object_set_new(prov, "command_line", json_strvec(&cmd));
	json_object_set_new(prov, "host", json_string(host));
	json_object_set_new(prov, "cluster_job", cfg->cluster_job ? json_string(cfg->cluster_job)
								 : json_null());
	json_object_set_new(prov, "started_at", identity_now());
	json_object_set_new(prov, "op_file", json_string(plan->target.op_file));
	json_object_set_new(prov, "op_name", plan->target.op_name ? json_string(plan->target.op_name)
								: json_null());
	json_object_set_new(prov, "test_node", json_string(plan->target.node));
	json_object_set_new(prov, "flaggems_dir", json_string(plan->target.dir));
	json_object_set_new(prov, "flaggems_package", plan->target.package ?
			    json_string(plan->target.package) : json_null());
	json_object_set_new(prov, "flaggems_commit", commit ? json_string(commit) : json_null());
	json_object_set_new(prov, "python", json_string(plan->python));
	json_object_set_new(prov, "python_version", json_string(plan->python_version));
	json_object_set_new(prov, "pytest_version", json_string(plan->pytest_version));
	/* "batch": the probe was the batch's, handed down (preflight.h). */
	json_object_set_new(prov, "python_check", json_string(plan->python_check));
	json_object_set_new(prov, "device_index", json_integer(cfg->device));
	json_object_set_new(prov, "device_visible_as", json_string(plan->physical_device));
	/* Which GPU, whatever its index: zlb compare tells A/B pairs that met different ones. */
	json_object_set_new(prov, "device_uuid", dev->uuid ? json_string(dev->uuid) : json_null());
	json_object_set_new(prov, "gpu_name", json_string(dev->name ? dev->name : "unknown"));
	json_object_set_new(prov, "gpu_uuid", dev->uuid ? json_string(dev->uuid) : json_null());
	json_object_set_new(prov, "gpu_total_mem", json_integer((json_int_t)dev->total_mem));
	json_object_set_new(prov, "driver_version", plan->devices.driver_version ?
			    json_string(plan->devices.driver_version) : json_null());
	json_object_set_new(prov, "replay_from", plan->replay_from ? json_string(plan->replay_from)
								 : json_null());
	json_object_set_new(prov, "shape_source", json_string(
		!strcmp(plan->shape_mode, "file") ? plan->shapes.path :
		!strcmp(plan->shape_mode, "inline") ? "built-in" : "upstream core_shapes.yaml"));
	json_object_set_new(prov, "plugins", json_strvec(plugins));
	json_object_set_new(prov, "timer_lib", plan->timer_lib ? json_string(plan->timer_lib)
							     : json_null());
	/* How graph replays are timed (the backend's): libzlbtimer, or torch's events. */
	json_object_set_new(prov, "graph_replay", !strcmp(plan->timer, "graph") &&
			    plan->backend->graph_replay ? json_string(plan->backend->graph_replay)
							: json_null());
	json_object_set_new(prov, "torch_module", json_string(plan->backend->torch_module));
	json_object_set_new(prov, "flaggems_vendor", json_string(plan->flaggems_vendor ?
			    plan->flaggems_vendor : plan->backend->flaggems_vendor));
	/* "backend": zlb set it; else the user's variable, kept. */
	json_object_set_new(prov, "flaggems_vendor_from", json_string(
			    plan->flaggems_vendor_var ? plan->flaggems_vendor_var : "backend"));
	json_object_set_new(prov, "pytest_command", json_strvec(child_argv));
	strvec_clear(&cmd);
	free(commit);
	return id;
}

/* --- exit status -------------------------------------------------------- */

static int map_exit(const struct child *c, int interrupted)
{
	int code = child_exit_code(c);

	if (interrupted)
		return ZLB_EXIT_INTERRUPTED;
	if (code >= 128)
		return code;              /* killed by a signal: 128+N */
	switch (code) {
	case 0: return ZLB_EXIT_OK;
	case 1: return ZLB_EXIT_TESTS_FAILED;
	case 5: return ZLB_EXIT_NO_TESTS;
	default: return ZLB_EXIT_PYTEST_ERROR;  /* 2 interrupted, 3 internal, 4 usage */
	}
}

static const char *status_word(int exit_code)
{
	switch (exit_code) {
	case ZLB_EXIT_OK: return "completed";
	case ZLB_EXIT_INTERRUPTED: return "interrupted";
	default: return exit_code >= 128 ? "crashed" : "failed";
	}
}

/* --- the device, before and after ------------------------------------- */

/*
 * The device's state as identity JSON, or null where it cannot be read.
 * measuring: the warm worker that runs this run's pytest (0: none), which
 * is not "another process" on the card.
 */
static json_t *device_snapshot(const struct run_plan *plan, int index, pid_t measuring,
			       struct device_state *st)
{
	struct strbuf why = STRBUF_INIT;
	json_t *o, *pids;

	memset(st, 0, sizeof(*st));
	if (!plan->backend->device_state ||
	    plan->backend->device_state(&plan->devices.v[index], st, &why)) {
		o = json_pack("{s:s}", "unavailable", why.len ? why.buf : "not supported");
		strbuf_release(&why);
		return o;
	}
	strbuf_release(&why);
	device_state_drop_pid(st, measuring);
	o = json_object();
	json_object_set_new(o, "at", identity_now());
	json_object_set_new(o, "sm_clock_mhz", json_integer(st->sm_clock_mhz));
	json_object_set_new(o, "mem_clock_mhz", json_integer(st->mem_clock_mhz));
	json_object_set_new(o, "sm_max_mhz", json_integer(st->sm_max_mhz));
	json_object_set_new(o, "clock_limit_reasons",
			    st->reasons_known ? json_string(st->reasons) : json_null());
	json_object_set_new(o, "clocks_locked", st->clocks_locked < 0 ? json_null()
						: json_boolean(st->clocks_locked));
	json_object_set_new(o, "temperature_c", json_integer(st->temperature_c));
	json_object_set_new(o, "power_w", json_real(st->power_mw / 1000.0));
	pids = st->procs_known ? json_array() : json_null();
	for (unsigned i = 0; st->procs_known && i < st->nprocs && i < 16; i++)
		json_array_append_new(pids, json_integer(st->pids[i]));
	json_object_set_new(o, "processes", pids);
	return o;
}

/*
 * Another process on the card slows A and B alike: the run stays
 * self-consistent and is wrong. Said loudly, not refused (it may be the
 * only card there is).
 */
static void warn_shared(struct tee *t, const struct device_state *st)
{
	struct strbuf pids = STRBUF_INIT;

	if (!st->procs_known || !st->nprocs)
		return;
	for (unsigned i = 0; i < st->nprocs && i < 16; i++)
		strbuf_addf(&pids, "%s%u", i ? ", " : "", st->pids[i]);
	tee_say(t, TERM_YELLOW, "  warning: %u other process(es) use this device (pid %s): "
		"a shared card slows every side alike and gives self-consistent, wrong "
		"numbers; pick an idle one", st->nprocs, pids.buf);
	strbuf_release(&pids);
}

/* --- IR ----------------------------------------------------------------- */

/*
 * Turn the plugin's staging (ir/) into ttgir/<shape>/<kernel>/<variant>.*
 * with its index and legend. A run that compiled nothing (a timer-only
 * run, a crash before the first compile) says so; it is not an error.
 */
static void lay_out_ir(struct tee *t, const char *run_dir, json_t *outcome)
{
	struct ir_layout_report rep;
	int r = ir_layout_build(run_dir, &rep);

	if (r < 0) {
		tee_say(t, TERM_YELLOW, "zlb: warning: the IR could not be laid out: %s",
			last_error());
		json_object_set_new(outcome, "ir", json_pack("{s:s}", "error", last_error()));
		return;
	}
	if (r > 0) {
		tee_say(t, TEE_PLAIN, "zlb: %s", rep.why);
		json_object_set_new(outcome, "ir", json_pack("{s:b,s:s}", "captured", 0,
							      "why", rep.why));
		return;
	}
	tee_say(t, TEE_PLAIN, "zlb: IR: %zu variant%s of %zu kernel%s over %zu shape%s, "
		"%zu file%s in ttgir/; %zu autotune sweep loser%s and %zu other unlaunched "
		"variant%s indexed, not kept (ttgir/index.tsv, ttgir/naming.md)",
		rep.variants, PLURAL(rep.variants), rep.kernels, PLURAL(rep.kernels), rep.shapes,
		PLURAL(rep.shapes), rep.files, PLURAL(rep.files), rep.sweep_losers,
		PLURAL(rep.sweep_losers), rep.unlaunched, PLURAL(rep.unlaunched));
	json_object_set_new(outcome, "ir", json_pack("{s:b,s:I,s:I,s:I,s:I,s:I,s:I}",
		"captured", 1, "variants", (json_int_t)rep.variants,
		"kernels", (json_int_t)rep.kernels, "shapes", (json_int_t)rep.shapes,
		"files", (json_int_t)rep.files, "sweep_losers", (json_int_t)rep.sweep_losers,
		"unlaunched", (json_int_t)rep.unlaunched));
}

/* --- the run ------------------------------------------------------------ */

static int archive_shapes(const struct run_config *cfg, const struct run_plan *plan,
			  const char *dest)
{
	char *header;
	int r;

	if (!strcmp(plan->shape_mode, "upstream")) {
		/* Not passed to pytest; kept so the run says what FlagGems read. */
		/* A copy of its text: checking it is not zlb's to do, FlagGems reads it. */
		struct shape_file up = { 0 };
		struct strbuf text = STRBUF_INIT;
		char *core = path_join(plan->target.dir, "benchmark/core_shapes.yaml");
		header = xstrfmt("zlbench: op=%s bench_level=%s shape_mode=upstream\n"
				 "copy of %s: FlagGems read its own file", plan->target.op,
				 cfg->bench_level, core);
		if (strbuf_read_file(&text, core, 64u << 20)) {
			r = error_errno("cannot archive FlagGems' %s", core);
		} else {
			up.text = text.buf;
			r = shape_file_archive(&up, dest, header);
		}
		strbuf_release(&text);
		free(core);
		free(header);
		return r;
	}
	header = xstrfmt("zlbench: op=%s bench_level=%s shape_mode=%s\nsource: %s",
			 plan->target.op, cfg->bench_level, plan->shape_mode,
			 !strcmp(plan->shape_mode, "inline") ? plan->builtin->about : plan->shapes.path);
	r = shape_file_archive(&plan->shapes, dest, header);
	free(header);
	return r;
}

static void print_header(struct tee *t, const struct run_config *cfg,
			 const struct run_plan *plan, const char *run_dir,
			 const json_t *id, const struct strvec *plugins)
{
	const json_t *cal = json_object_get(id, "caliber");
	const json_t *prov = json_object_get(id, "provenance");
	const char *commit = json_str(prov, "flaggems_commit");
	const struct device_info *dev = &plan->devices.v[cfg->device];
	struct strbuf sb = STRBUF_INIT;
	const char *key;
	json_t *v;

	tee_say(t, TERM_BOLD, "zlb %s: run %s -> %s", ZLB_VERSION, plan->target.op, run_dir);
	tee_say(t, TEE_PLAIN, "  flaggems: %s (%s%s%.12s) node %s", plan->target.dir,
	    plan->target.package ? plan->target.package : "package unknown",
	    commit ? " @ " : "", commit ? commit : "", plan->target.node);
	tee_say(t, TEE_PLAIN, "  device:   %s %d -> %s=%s, %s%s%s, driver %s", plan->backend->name,
	    cfg->device, plan->backend->visibility_keys[0], plan->physical_device,
	    dev->name ? dev->name : "?", dev->uuid ? " " : "", dev->uuid ? dev->uuid : "",
	    plan->devices.driver_version ? plan->devices.driver_version : "?");
	tee_say(t, TEE_PLAIN, "  python:   %s (Python %s, pytest %s): ok (%s)", plan->python,
	    plan->python_version, plan->pytest_version,
	    !strcmp(plan->python_check, "batch") ? "checked by the batch" : "probed");
	json_object_foreach((json_t *)cal, key, v) {
		char *txt = json_is_string(v) ? xstrdup(json_string_value(v))
					      : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY |
							   JSON_REAL_PRECISION(15));
		strbuf_addf(&sb, "%s%s=%s", sb.len ? " " : "", key, txt);
		free(txt);
	}
	tee_say(t, TEE_PLAIN, "  caliber:  %s", sb.buf);
	for (size_t i = 0; i < plan->notes.nr; i++)
		tee_say(t, starts_with(plan->notes.v[i], "warning") ? TERM_YELLOW : TEE_PLAIN,
		    "  %s", plan->notes.v[i]);
	strbuf_reset(&sb);
	for (size_t i = 0; i < plugins->nr; i++)
		strbuf_addf(&sb, "%s%s", i ? " " : "", plugins->v[i]);
	tee_say(t, TEE_PLAIN, "  plugins:  %s", sb.buf);
	strbuf_release(&sb);
}

/* How far the autotune record (or replay) reached: events.jsonl says, the terminal too. */
static void say_autotune(struct tee *t, const struct run_tally *ta)
{
	const json_t *rec = json_object_get(ta->autotune, "recorded");
	const json_t *rep = json_object_get(ta->autotune, "replayed");

	if (rec) {
		json_int_t kernels = json_integer_value(json_object_get(rec, "tuners"));
		json_int_t entries = json_integer_value(json_object_get(rec, "entries"));
		json_int_t unrec = json_integer_value(json_object_get(rec, "unrecordable"));

		tee_say(t, TEE_PLAIN, "zlb:   autotune record: %lld kernel(s), %lld config "
			"entr%s%s (autotune_records/)", (long long)kernels, (long long)entries,
			entries == 1 ? "y" : "ies", unrec ? "; some choices could not be recorded "
			"(events.jsonl)" : "");
		if (unrec)
			tee_say(t, TERM_YELLOW, "zlb:   autotune record: %lld choice(s) could not be "
				"recorded: a replay of this run tunes those live", (long long)unrec);
	}
	if (rep) {
		json_int_t bound = json_integer_value(json_object_get(rep, "tuners"));
		json_int_t injected = json_integer_value(json_object_get(rep, "injected"));
		const json_t *recorded = json_object_get(rep, "recorded");
		struct strbuf of = STRBUF_INIT;

		if (json_is_integer(recorded))
			strbuf_addf(&of, " of the %lld recorded", (long long)json_integer_value(recorded));
		tee_say(t, json_is_integer(recorded) && json_integer_value(recorded) > bound ?
			TERM_YELLOW : TEE_PLAIN, "zlb:   autotune replay: %lld entr%s injected into "
			"%lld%s kernel(s)", (long long)injected, injected == 1 ? "y" : "ies",
			(long long)bound, of.buf);
		strbuf_release(&of);
	}
}

static void print_summary(struct tee *t, const struct run_outcome *o,
			  const struct run_tally *ta, const struct child *c)
{
	struct strbuf sb = STRBUF_INIT, end = STRBUF_INIT;
	const char *key;
	json_t *v;
	size_t i;

	child_describe_end(c, &end);
	tee_say(t, TEE_PLAIN, "%s", "");
	tee_say(t, ta->rows ? TERM_BOLD : TERM_YELLOW,
	    "zlb: %ld row%s: %ld graph-timed, %ld direct-timed%s; tests: %ld passed, "
	    "%ld failed, %ld skipped; pytest %s", ta->rows, PLURAL(ta->rows), ta->rows_graph,
	    ta->rows_direct,
	    ta->rows_failed ? " (some FAILED)" : "", ta->passed, ta->failed, ta->skipped,
	    end.buf);
	json_object_foreach(ta->markers, key, v)
		strbuf_addf(&sb, "%s%s x%lld", sb.len ? ", " : "", key,
			    (long long)json_integer_value(v));
	if (sb.len)
		tee_say(t, TERM_YELLOW, "zlb: markers: %s (see events.jsonl)", sb.buf);
	json_array_foreach(ta->fallbacks, i, v)
		tee_say(t, TERM_YELLOW, "zlb:   not graph-timed: %s", json_string_value(v));
	json_array_foreach(ta->copy_rows, i, v)
		tee_say(t, TERM_YELLOW, "zlb:   copy-engine nodes in the graph (another "
			"caliber than eager): %s", json_string_value(v));
	json_array_foreach(ta->skips, i, v)
		tee_say(t, TERM_YELLOW, "zlb:   skipped: %s", json_string_value(v));
	json_array_foreach(ta->warnings, i, v)
		tee_say(t, TERM_YELLOW, "zlb:   warning from the plugins: %s", json_string_value(v));
	json_array_foreach(ta->inactive, i, v)
		tee_say(t, TERM_YELLOW, "zlb:   plugin stayed inactive: %s", json_string_value(v));
	say_autotune(t, ta);
	if (ta->tuning_fallbacks)
		tee_say(t, TEE_PLAIN, "zlb:   %ld autotune timing call(s) could not be captured and "
		    "were timed directly (config choice only; no row affected)",
		    ta->tuning_fallbacks);
	if (o->exit_code != ZLB_EXIT_OK && o->pytest_rc >= 0 && t->verbosity < TEE_VERBOSE)
		tee_say(t, TEE_PLAIN, "zlb: pytest's own output (tracebacks, ...) is in %s/run.log; "
			"-v shows it as it comes", o->run_dir);
	tee_result(t, o->exit_code == ZLB_EXIT_OK ? TERM_GREEN : TERM_RED,
	    "zlb: %s, exit %d; run directory %s", status_word(o->exit_code),
	    o->exit_code, o->run_dir);
	strbuf_release(&sb);
	strbuf_release(&end);
}

/*
 * The compiler under test, by content: version strings of FlagTree builds
 * can be equal while their compiled libtriton differs.
 */
static json_t *triton_build(const json_t *runtime)
{
	const char *dir = json_str(runtime, "triton_path");
	uint64_t hash, size;
	char *lib;
	json_t *res;

	if (!dir)
		return json_null();
	lib = xstrfmt("%s/_C/libtriton.so", dir);
	if (file_xxh3(lib, &hash, &size)) {
		free(lib);
		return json_null();
	}
	res = json_object();
	json_object_set_new(res, "file", json_string(lib));
	json_object_set_new(res, "xxh3", json_sprintf("%016llx", (unsigned long long)hash));
	json_object_set_new(res, "bytes", json_integer((json_int_t)size));
	free(lib);
	return res;
}

static void finalize_identity(json_t *id, const struct run_outcome *o,
			      const struct run_tally *ta, const struct child *c,
			      const char *planned_timer)
{
	json_t *cal = identity_section(id, "caliber");
	json_t *prov = identity_section(id, "provenance");
	json_t *out = identity_section(id, "outcome");
	struct strbuf end = STRBUF_INIT;

	/* The timer actually used: a row that fell back changes the caliber. */
	json_object_set_new(cal, "timer", json_string(run_tally_timer(ta, planned_timer)));

	json_object_set_new(prov, "finished_at", identity_now());
	json_object_set_new(prov, "runtime", json_deep_copy(ta->runtime));
	json_object_set_new(prov, "triton_build", triton_build(ta->runtime));

	child_describe_end(c, &end);
	json_object_set_new(id, "status", json_string(status_word(o->exit_code)));
	json_object_set_new(out, "exit_code", json_integer(o->exit_code));
	json_object_set_new(out, "pytest_exit", json_integer(o->pytest_rc));
	json_object_set_new(out, "pytest_end", json_string(end.buf));
	/* Wall time of the pytest process (spawn to reap), seconds. */
	json_object_set_new(out, "pytest_wall_s", o->pytest_rc < 0 ? json_null()
			    : json_real(o->pytest_wall_s));
	json_object_set_new(out, "interrupted", json_boolean(o->interrupted));
	json_object_set_new(out, "timer_planned", json_string(planned_timer));
	json_object_set_new(out, "rows", json_integer(ta->rows));
	json_object_set_new(out, "rows_graph", json_integer(ta->rows_graph));
	json_object_set_new(out, "rows_direct", json_integer(ta->rows_direct));
	json_object_set_new(out, "rows_failed", json_integer(ta->rows_failed));
	json_object_set_new(out, "rows_copy_engine", json_integer(ta->rows_copy_engine));
	json_object_set_new(out, "tests", json_pack("{s:I,s:I,s:I}",
		"passed", (json_int_t)ta->passed, "failed", (json_int_t)ta->failed,
		"skipped", (json_int_t)ta->skipped));
	json_object_set_new(out, "markers", json_deep_copy(ta->markers));
	json_object_set_new(out, "tuning_fallbacks", json_integer(ta->tuning_fallbacks));
	json_object_set_new(out, "autotune", json_deep_copy(ta->autotune));
	strbuf_release(&end);
}

/*
 * The device as the run starts (provenance device_start, and whether another
 * process shares it, which the terminal is told), written at once.
 */
static int note_device_start(struct tee *t, const struct run_config *cfg,
			     const struct run_plan *plan, pid_t worker, const char *run_dir,
			     json_t *id)
{
	struct device_state st;
	json_t *prov = identity_section(id, "provenance");

	if (worker > 0)
		json_object_set_new(prov, "worker_pid", json_integer(worker));
	json_object_set_new(prov, "device_start",
			    device_snapshot(plan, cfg->device, worker, &st));
	json_object_set_new(prov, "device_shared_at_start",
			    json_boolean(st.procs_known && st.nprocs));
	warn_shared(t, &st);
	return identity_write(run_dir, id);
}

/* "  command:  (cd DIR && ARGV...)": what a person would type to run it by hand. */
static void say_command(struct tee *t, const char *dir, const struct strvec *argv)
{
	struct strbuf cmd = STRBUF_INIT;

	for (size_t i = 0; i < argv->nr; i++)
		strbuf_addf(&cmd, "%s%s", i ? " " : "", argv->v[i]);
	tee_say(t, TERM_DIM, "  command:  (cd %s && %s)", dir, cmd.buf);
	strbuf_release(&cmd);
}

/*
 * pytest in its own process group, its output through the tee, unless an
 * interrupt came first; out gets its exit code, wall time and zlb's exit
 * code. -1 when it could not be started or followed.
 */
static int run_pytest(struct child *c, const struct strvec *argv, const struct strvec *env,
		      const char *dir, struct tee *t, int grace_ms, struct run_outcome *out)
{
	double start;

	if (interrupt_pending()) {
		out->interrupted = interrupt_pending();
	} else {
		c->argv = argv->v;
		c->envp = env->v;
		c->dir = dir;
		c->new_pgroup = 1;
		c->capture = 1;
		/* runner_run() made zlb a subreaper: what is below it is pytest's. */
		c->owns_descendants = 1;
		if (child_start(c))
			return -1;
		start = mono_s();
		if (child_pump(c, &tee_pump_ops, t, grace_ms))
			return -1;
		out->pytest_wall_s = mono_s() - start;
		tee_flush(t);
		out->interrupted = interrupt_pending();
		out->pytest_rc = child_exit_code(c);
	}
	out->exit_code = c->pid > 0 ? map_exit(c, out->interrupted) : ZLB_EXIT_INTERRUPTED;
	return 0;
}

/* The rows and tests the run's files hold, into its outcome. */
static void take_tally(struct run_outcome *out, const struct run_tally *ta)
{
	out->rows = ta->rows;
	out->rows_graph = ta->rows_graph;
	out->rows_direct = ta->rows_direct;
	out->tests_passed = ta->passed;
	out->tests_failed = ta->failed;
	out->tests_skipped = ta->skipped;
}

/* The files a run makes for its child before it starts, in the run directory. */
struct run_files {
	char *shape_archive;   /* shapes.yaml: the shapes measured */
	char *isolated;        /* tuner_cache/, with --isolate-tuner-cache; else NULL */
	char *compile_cache;   /* triton_cache/: Triton compiles here */
	char *graph_plan;      /* graph_plan.json of a replay; else NULL */
	size_t planned;        /* its measurements */
};

static int prepare_files(const struct run_config *cfg, const struct run_plan *plan,
			 const char *run_dir, struct run_files *f)
{
	f->shape_archive = path_join(run_dir, "shapes.yaml");
	if (archive_shapes(cfg, plan, f->shape_archive))
		return -1;
	if (cfg->isolate_tuner_cache) {
		f->isolated = path_join(run_dir, "tuner_cache");
		if (mkdir_p(f->isolated, 0755))
			return -1;
	}
	/*
	 * Triton compiles into the run's own cache: a compiler switch outside
	 * Triton's cache key must not let B load A's binaries (seeds' README).
	 */
	f->compile_cache = path_join(run_dir, COMPILE_CACHE_DIR);
	if (mkdir_p(f->compile_cache, 0755))
		return -1;
	if (plan->replay_from && graph_plan_write(plan->replay_from, run_dir, &f->graph_plan,
						&f->planned))
		return -1;
	return 0;
}

/* Remove the run's own caches (once): the isolated tuner cache, the Triton cache unless kept. */
static void drop_caches(const struct run_config *cfg, struct run_files *f)
{
	if (f->isolated && remove_tree(f->isolated))
		warning("could not remove the isolated tuner cache %s", f->isolated);
	if (f->compile_cache && !cfg->keep_compile_cache && remove_tree(f->compile_cache))
		warning("could not remove the run's Triton cache %s", f->compile_cache);
	free(f->isolated);
	f->isolated = NULL;
	if (!cfg->keep_compile_cache) {
		free(f->compile_cache);
		f->compile_cache = NULL;
	}
}

/* Below this much free room, a line the plugins cut short is the disk's doing, not a crash's. */
#define NEARLY_FULL_BYTES (1u << 20)

/*
 * Did the run fill the file system of run_dir? Asked before the run's
 * caches are dropped: the log refused a line for want of room, no block is
 * left, or the room is nearly gone and a JSON-lines file of the plugins
 * ends in a cut line. why gets the evidence.
 */
static int disk_filled(const char *run_dir, const struct tee *t, struct strbuf *why)
{
	static const char *const files[] = { RESULTS_FILE, EVENTS_FILE, NULL };
	struct statvfs vfs;
	int have_vfs = !statvfs(run_dir, &vfs);

	if (t->log_errno == ENOSPC || t->log_errno == EDQUOT) {
		strbuf_addf(why, "run.log: %s", strerror(t->log_errno));
		return 1;
	}
	if (have_vfs && vfs.f_bavail == 0) {
		strbuf_addstr(why, "no free block left");
		return 1;
	}
	if (!have_vfs || (unsigned long long)vfs.f_bavail * vfs.f_frsize >= NEARLY_FULL_BYTES)
		return 0;
	for (int i = 0; files[i]; i++) {
		char *p = path_join(run_dir, files[i]);
		int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		struct stat st;
		char last = '\n';

		if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
		    pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n')
			strbuf_addf(why, "%s ends in a line cut short", files[i]);
		if (fd >= 0)
			close(fd);
		free(p);
		if (why->len)
			return 1;
	}
	return 0;
}

static void run_files_release(struct run_files *f)
{
	free(f->shape_archive);
	free(f->isolated);
	free(f->compile_cache);
	free(f->graph_plan);
}

int runner_run(const struct run_config *cfg, const struct run_plan *plan,
	       char *const *envp, int argc, char **argv, int out_fd,
	       struct run_outcome *out)
{
	struct tee tee = { .log_fd = -1, .term_fd = out_fd };
	struct strvec env = STRVEC_INIT, child_argv = STRVEC_INIT, plugins = STRVEC_INIT;
	struct plugin_plan_input plugin_in = { plan->backend, plan->shape_mode, &cfg->extra_plugins,
					  cfg->ir, cfg->mm_cluster_fix };
	struct child c = { 0 };
	struct run_tally ta;
	struct run_files f = { 0 };
	struct sweep_result sweep = { 0 };
	char *log_path = NULL, *tuner = NULL;
	struct strbuf why = STRBUF_INIT;
	json_t *id = NULL;
	pid_t worker = 0;
	size_t left;
	int ret = -1, r, filled;

	memset(out, 0, sizeof(*out));
	out->pytest_rc = -1;
	out->exit_code = ZLB_EXIT_IO;

	if (interrupts_install())
		return -1;
	if (cfg->run_dir ? rundir_claim_exact(cfg->run_dir, &out->run_dir) :
	    rundir_claim(cfg->runs_dir, plan->target.op, time(NULL), &out->run_dir))
		goto done;
	/* Room for the identity's last write, whatever the run fills (rundir.h). */
	if (rundir_reserve(out->run_dir)) {
		rmdir(out->run_dir);	/* still empty: nothing of the run is lost */
		goto done;
	}

	if (prepare_files(cfg, plan, out->run_dir, &f))
		goto done;
	plan_plugins(&plugin_in, &plugins);
	{
		struct child_files files = { f.compile_cache, f.graph_plan };
		build_env(cfg, plan, envp, out->run_dir, f.shape_archive, f.isolated, &files, &env);
	}
	build_argv(cfg, plan, f.shape_archive, &plugins, &child_argv);
	tuner = flaggems_tuner_cache(&env, f.isolated);
	id = initial_identity(cfg, plan, out->run_dir, tuner, &plugins, &child_argv, argc, argv);
	{
		json_t *prov = identity_section(id, "provenance");
		json_object_set_new(prov, "compile_cache_dir", json_string(f.compile_cache));
		json_object_set_new(prov, "compile_cache_kept",
				    json_boolean(cfg->keep_compile_cache));
		json_object_set_new(prov, "graph_plan", f.graph_plan ? json_integer((json_int_t)f.planned)
								   : json_null());
	}
	if (identity_write(out->run_dir, id))
		goto done;

	log_path = path_join(out->run_dir, "run.log");
	if (tee_open(&tee, log_path, out_fd, term_color_wanted(out_fd, cfg->color)))
		goto done;
	tee_set_verbosity(&tee, cfg->quiet ? TEE_QUIET : cfg->verbose ? TEE_VERBOSE : TEE_NORMAL);
	print_header(&tee, cfg, plan, out->run_dir, id, &plugins);
	/*
	 * Who listens on the worker's socket (a worker the batch just started
	 * binds within its Python start: as long as the client waits for it). A
	 * worker that does not answer fails the job in its client, which says why.
	 */
	if (cfg->worker && unix_socket_listener_pid(cfg->worker, WORKER_CONNECT_WAIT_MS, &worker))
		worker = 0;
	if (note_device_start(&tee, cfg, plan, worker, out->run_dir, id))
		goto done;
	say_command(&tee, plan->target.dir, &child_argv);

	/*
	 * Whatever pytest (or a shard of the sweep) starts stays below zlb,
	 * also a process that leaves its group or session (setsid, a daemon),
	 * so the run can end it.
	 */
	if (proc_become_subreaper())
		goto done;
	if (sweep_first(&tee, cfg, plan, envp, out->run_dir, &plugins, &env, id, &sweep))
		goto done;
	r = run_pytest(&c, &child_argv, &env, plan->target.dir, &tee, cfg->interrupt_grace_ms, out);
	left = proc_kill_tree(getpid(), NULL);
	if (left)
		tee_say(&tee, TERM_YELLOW, "zlb: ended %zu process(es) the test left running "
			"(outside pytest's process group); nothing a run starts outlives it", left);
	if (r)
		goto done;

	/* Before anything is freed: did the run fill its file system? */
	filled = disk_filled(out->run_dir, &tee, &why);
	/* Room for the last writes: the run's own caches go first, then the reserve. */
	drop_caches(cfg, &f);
	rundir_release_reserve(out->run_dir);

	if (run_tally_read(out->run_dir, &ta) || ta.bad_lines)
		tee_say(&tee, TERM_YELLOW, "zlb: warning: %zu unreadable line%s in "
			"results.jsonl/events.jsonl", ta.bad_lines, PLURAL(ta.bad_lines));
	take_tally(out, &ta);
	{
		struct device_state st;
		json_object_set_new(identity_section(id, "provenance"), "device_end",
				    device_snapshot(plan, cfg->device, worker, &st));
	}
	if (cfg->ir)
		lay_out_ir(&tee, out->run_dir, identity_section(id, "outcome"));
	if (filled) {
		/* Whatever pytest made of it, the run is not whole: zlb's files (exit 7). */
		out->exit_code = ZLB_EXIT_IO;
		tee_say(&tee, TERM_RED, "zlb: the file system of the run filled up while it ran "
			"(%s): what was written before is kept, but the run is not whole; free "
			"space and run it again", why.buf);
		json_object_set_new(identity_section(id, "outcome"), "io_error",
				    json_string(why.buf));
	}
	finalize_identity(id, out, &ta, &c, plan->timer);
	/* The identity first: the summary's last line says what the run's files say. */
	if (identity_write(out->run_dir, id)) {
		out->exit_code = ZLB_EXIT_IO;
		tee_say(&tee, TERM_RED, "zlb: %s; run_identity.json still says 'running'",
			last_error());
		error("the run's identity could not be written (above)");
	} else {
		ret = 0;
	}
	print_summary(&tee, out, &ta, &c);
	run_tally_release(&ta);
done:
	drop_caches(cfg, &f);
	if (out->run_dir)
		rundir_release_reserve(out->run_dir);
	tee_close(&tee);
	interrupts_restore();
	json_decref(id);
	strvec_clear(&env);
	strvec_clear(&child_argv);
	strvec_clear(&plugins);
	free(log_path);
	run_files_release(&f);
	free(tuner);
	strbuf_release(&why);
	sweep_result_release(&sweep);
	return ret;
}

void run_outcome_release(struct run_outcome *out)
{
	free(out->run_dir);
	memset(out, 0, sizeof(*out));
}
