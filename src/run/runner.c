#include "run/runner.h"
#include "run/runner_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "rundir/exit_codes.h"
#include "lib/clock.h"
#include "run/graph_plan.h"
#include "rundir/identity.h"
#include "ir/ir_layout.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "run/plugin_plan.h"
#include "lib/proc_tree.h"
#include "rundir/results_file.h"
#include "rundir/rundir.h"
#include "lib/term.h"
#include "lib/unixsock.h"
#include "providers/flaggems_child.h"

/* How long the worker client waits for its worker's socket (worker_client.py). */
#define WORKER_CONNECT_WAIT_MS 30000

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
	if (ta->tune_calls)
		tee_say(t, TEE_PLAIN, "zlb:   autotuning: %ld config timing call(s), %.1f s of "
		    "the run (no row)", ta->tune_calls, ta->tune_s);
	if (ta->tuning_fallbacks)
		tee_say(t, TEE_PLAIN, "zlb:   %ld autotune timing call(s) could not be captured and "
		    "were timed directly (config choice only; no row affected)",
		    ta->tuning_fallbacks);
	if (o->exit_code != ZLB_EXIT_OK && o->pytest_rc >= 0 && t->verbosity < TEE_VERBOSE)
		tee_say(t, TEE_PLAIN, "zlb: pytest's own output (tracebacks, ...) is in %s/run.log; "
			"-v shows it as it comes", o->run_dir);
	tee_result(t, o->exit_code == ZLB_EXIT_OK ? TERM_GREEN : TERM_RED,
	    "zlb: %s, exit %d; run directory %s", runner_status_word(o->exit_code),
	    o->exit_code, o->run_dir);
	strbuf_release(&sb);
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

/* The run's directory, claimed, with room kept for the identity's last write (rundir.h). */
static int claim_run_dir(const struct run_config *cfg, const struct run_plan *plan,
			 struct run_outcome *out)
{
	if (cfg->run_dir ? rundir_claim_exact(cfg->run_dir, &out->run_dir) :
	    rundir_claim(cfg->runs_dir, plan->target.op, time(NULL), &out->run_dir))
		return -1;
	if (rundir_reserve(out->run_dir)) {
		rmdir(out->run_dir);	/* still empty: nothing of the run is lost */
		return -1;
	}
	return 0;
}

/* What the measured child gets (its files, environment and command line), in the identity. */
static json_t *prepare_child(const struct run_config *cfg, const struct run_plan *plan,
			     char *const *envp, char **argv, const char *run_dir,
			     struct run_files *f, struct strvec *plugins, struct strvec *env,
			     struct strvec *child_argv, char **tuner)
{
	struct plugin_plan_input plugin_in = { plan->backend, plan->shape_mode, &cfg->extra_plugins,
					  cfg->ir, cfg->mm_cluster_fix };
	json_t *id, *prov;

	if (prepare_files(cfg, plan, run_dir, f))
		return NULL;
	plan_plugins(&plugin_in, plugins);
	runner_child_env(cfg, plan, envp, run_dir, f, env);
	runner_child_argv(cfg, plan, f->shape_archive, plugins, child_argv);
	*tuner = flaggems_tuner_cache(env, f->isolated);
	id = runner_initial_identity(cfg, plan, run_dir, *tuner, plugins, child_argv, argv);
	prov = identity_section(id, "provenance");
	json_object_set_new(prov, "compile_cache_dir", json_string(f->compile_cache));
	json_object_set_new(prov, "compile_cache_kept", json_boolean(cfg->keep_compile_cache));
	json_object_set_new(prov, "graph_plan", f->graph_plan ? json_integer((json_int_t)f->planned)
							     : json_null());
	if (identity_write(run_dir, id)) {
		json_decref(id);
		return NULL;
	}
	return id;
}

/*
 * After pytest: what the run's files say, the device's end, the IR laid
 * out, the identity's last write, then the summary. 0, or -1 when the
 * identity could not be written (out->exit_code 7).
 */
static int finish_run(struct tee *tee, const struct run_config *cfg, const struct run_plan *plan,
		      json_t *id, const struct child *c, struct run_files *f, pid_t worker,
		      struct run_outcome *out)
{
	struct strbuf why = STRBUF_INIT;
	struct run_tally ta;
	struct device_state st;
	/* Before anything is freed: did the run fill its file system? */
	int filled = disk_filled(out->run_dir, tee, &why), ret = 0;

	/* Room for the last writes: the run's own caches go first, then the reserve. */
	drop_caches(cfg, f);
	rundir_release_reserve(out->run_dir);

	if (run_tally_read(out->run_dir, &ta) || ta.bad_lines)
		tee_say(tee, TERM_YELLOW, "zlb: warning: %zu unreadable line%s in "
			"results.jsonl/events.jsonl", ta.bad_lines, PLURAL(ta.bad_lines));
	take_tally(out, &ta);
	json_object_set_new(identity_section(id, "provenance"), "device_end",
			    device_snapshot(plan, cfg->device, worker, &st));
	if (cfg->ir)
		lay_out_ir(tee, out->run_dir, identity_section(id, "outcome"));
	if (filled) {
		/* Whatever pytest made of it, the run is not whole: zlb's files (exit 7). */
		out->exit_code = ZLB_EXIT_IO;
		tee_say(tee, TERM_RED, "zlb: the file system of the run filled up while it ran "
			"(%s): what was written before is kept, but the run is not whole; free "
			"space and run it again", why.buf);
		json_object_set_new(identity_section(id, "outcome"), "io_error",
				    json_string(why.buf));
	}
	runner_finalize_identity(id, out, &ta, c, plan->timer);
	/* The identity first: the summary's last line says what the run's files say. */
	if (identity_write(out->run_dir, id)) {
		out->exit_code = ZLB_EXIT_IO;
		tee_say(tee, TERM_RED, "zlb: %s; run_identity.json still says 'running'",
			last_error());
		ret = error("the run's identity could not be written (above)");
	}
	print_summary(tee, out, &ta, c);
	run_tally_release(&ta);
	strbuf_release(&why);
	return ret;
}

int runner_run(const struct run_config *cfg, const struct run_plan *plan,
	       char *const *envp, char **argv, int out_fd,
	       struct run_outcome *out)
{
	struct tee tee = { .log_fd = -1, .term_fd = out_fd };
	struct strvec env = STRVEC_INIT, child_argv = STRVEC_INIT, plugins = STRVEC_INIT;
	struct child c = { 0 };
	struct run_files f = { 0 };
	struct sweep_result sweep = { 0 };
	char *log_path = NULL, *tuner = NULL;
	json_t *id = NULL;
	pid_t worker = 0;
	size_t left;
	int ret = -1, r;

	memset(out, 0, sizeof(*out));
	out->pytest_rc = -1;
	out->exit_code = ZLB_EXIT_IO;

	if (interrupts_install())
		return -1;
	if (claim_run_dir(cfg, plan, out))
		goto done;
	id = prepare_child(cfg, plan, envp, argv, out->run_dir, &f, &plugins, &env,
			   &child_argv, &tuner);
	if (!id)
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
	if (runner_sweep_first(&tee, cfg, plan, envp, out->run_dir, &plugins, &env, id, &sweep))
		goto done;
	r = run_pytest(&c, &child_argv, &env, plan->target.dir, &tee, cfg->interrupt_grace_ms, out);
	left = proc_kill_tree(getpid(), NULL);
	if (left)
		tee_say(&tee, TERM_YELLOW, "zlb: ended %zu process(es) the test left running "
			"(outside pytest's process group); nothing a run starts outlives it", left);
	if (!r)
		ret = finish_run(&tee, cfg, plan, id, &c, &f, worker, out);
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
	sweep_result_release(&sweep);
	return ret;
}

void run_outcome_release(struct run_outcome *out)
{
	free(out->run_dir);
	memset(out, 0, sizeof(*out));
}
