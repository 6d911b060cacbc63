/*
 * The batch scheduler (batch.h): operators over device slots, attempts
 * through an executor, retries by the policy, the status files rewritten
 * as each attempt ends. About 770 lines in one file because it is one
 * event loop over one private state (lanes, attempts, the status table);
 * the policy, the status files and the progress are already files of
 * their own.
 */
#include "batch/batch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "batch/batch_policy.h"
#include "batch/batch_progress.h"
#include "batch/batch_status.h"
#include "batch/batch_workers.h"
#include "rundir/preflight_report.h"
#include "rundir/exit_codes.h"
#include "executors/executor.h"
#include "rundir/identity.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/proc.h"
#include "rundir/run_tally.h"
#include "rundir/rundir.h"
#include "rundir/markers.h"

/* zlb run's own escalation (SIGINT, g, SIGTERM, g, SIGKILL) fits in the batch's grace. */
#define CHILD_GRACE_SHARE 3
/* Redraw the live progress this often. */
#define TICK_MS 1000
#define CANT_SUPPORT "can't be supported by this op"

int batch_shard(const char *spec, int ndevices)
{
	return ndevices > 0 ? (int)(XXH3_64bits(spec, strlen(spec)) % (uint64_t)ndevices) : 0;
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct op_state {
	const struct op_spec *spec;
	struct op_row row;
	struct op_progress prog;
	struct attempt_result last;
	int lane;
	int done;                 /* final (this session or reused) */
	struct exec_job job;
	struct strvec argv;
	char *run_abs, *run_rel, *console;
	const char *worker;       /* the worker's socket for this attempt, or NULL */
	int worker_job;           /* which job of that worker it is (1: the first) */
	int fresh_reruns;         /* attempts rerun in a fresh worker */
};

/* A device slot; with --pin it has its own queue, else all share the batch's. */
struct lane {
	int device;
	size_t *queue, nq, next;
	struct op_state *current;
};

struct batch {
	const struct batch_plan *p;
	struct op_state *ops;
	struct lane *lanes;
	struct lane shared;       /* the one queue, without --pin */
	struct worker_pool workers;
	int use_workers;
	struct executor ex;
	struct progress prog;
	json_t *json;
	char *status_path, *json_path;
	int lock_fd;
	int io_failed;
	int env_code;             /* the environment failed: the batch's exit code; else 0 */
	char env_why[512];        /* and what said so */
	char child_grace[24];
};

/*
 * A failure no operator can escape (batch/batch_policy.h): stop at once,
 * the running operators stopped as by an interrupt, and every operator not
 * finished left PENDING for a --resume once it is fixed.
 */
static void stop_batch(struct batch *b, int code, const char *fmt, ...)
	ZLB_PRINTF(3, 4);

static void stop_batch(struct batch *b, int code, const char *fmt, ...)
{
	va_list ap;

	if (b->env_code)
		return;
	b->env_code = code;
	va_start(ap, fmt);
	vsnprintf(b->env_why, sizeof(b->env_why), fmt, ap);
	va_end(ap);
	if (b->ex.ops && b->ex.ops->running && b->ex.ops->running(&b->ex))
		b->ex.ops->stop_all(&b->ex);
}

/* ---- state files ----------------------------------------------------------- */

static int save_status(struct batch *b)
{
	struct op_row *rows = xcalloc(b->p->nr ? b->p->nr : 1, sizeof(*rows));
	int r;

	for (size_t i = 0; i < b->p->nr; i++)
		rows[i] = b->ops[i].row;   /* shallow: rendering only */
	r = ops_status_write(b->status_path, b->p->specs, rows, b->p->nr);
	free(rows);
	if (r) {
		b->io_failed = 1;
		warning("ops_status.csv could not be written: %s", last_error());
		stop_batch(b, ZLB_EXIT_IO, "ops_status.csv could not be written (%s)", last_error());
	}
	return r;
}

static int save_json(struct batch *b)
{
	int r = json_write_file(b->json_path, b->json);
	if (r) {
		b->io_failed = 1;
		warning("batch.json could not be written: %s", last_error());
		stop_batch(b, ZLB_EXIT_IO, "batch.json could not be written (%s)", last_error());
	}
	return r;
}

static int take_lock(struct batch *b)
{
	char *path = path_join(b->p->dir, ".lock");
	char pid[32];
	int n;

	b->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (b->lock_fd < 0) {
		int r = error_errno("cannot open %s", path);
		free(path);
		return r;
	}
	if (flock(b->lock_fd, LOCK_EX | LOCK_NB)) {
		char other[32] = "";
		ssize_t k = pread(b->lock_fd, other, sizeof(other) - 1, 0);
		int r;

		other[k > 0 ? k : 0] = '\0';
		other[strcspn(other, "\n")] = '\0';
		r = error("another zlb batch (pid %s) is working on %s; wait for it to end "
			  "(or stop it) before using this directory", *other ? other : "?",
			  b->p->dir);
		close(b->lock_fd);
		b->lock_fd = -1;
		free(path);
		return r;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(b->lock_fd, 0) == 0)
		(void)!pwrite(b->lock_fd, pid, (size_t)n, 0);
	free(path);
	return 0;
}

/* ---- batch.json ------------------------------------------------------------ */

static json_t *plan_json(const struct batch *b)
{
	const struct batch_plan *p = b->p;
	json_t *o = json_object(), *devs = json_array(), *ops = json_array(), *opt;

	json_object_set_new(o, "schema_version", json_integer(BATCH_SCHEMA_VERSION));
	json_object_set_new(o, "zlb_version", json_string(ZLB_VERSION));
	json_object_set_new(o, "status", json_string("running"));
	json_object_set_new(o, "args", json_deep_copy(p->args));
	opt = json_object();
	json_object_set_new(opt, "backend", json_string(p->backend));
	json_object_set_new(opt, "executor", json_string(p->executor));
	json_object_set_new(opt, "op_timeout_s", json_real(p->op_timeout_s));
	json_object_set_new(opt, "grace_s", json_real(p->grace_s));
	json_object_set_new(opt, "retries", json_integer(p->max_retries));
	json_object_set_new(opt, "isolation", json_string(p->isolation ? p->isolation : "process"));
	json_object_set_new(opt, "pin", json_boolean(p->pin));
	{
		json_t *d = json_array();
		for (size_t i = 0; i < p->dtypes->nr; i++)
			json_array_append_new(d, json_string(p->dtypes->v[i]));
		json_object_set_new(opt, "dtypes", d);
	}
	json_object_set_new(opt, "shape_file", p->shape_file ? json_string(p->shape_file)
							     : json_null());
	json_object_set_new(opt, "replay_root", p->replay_root ? json_string(p->replay_root)
							       : json_null());
	json_object_set_new(opt, "flaggems_dir", p->main_dir ? json_string(p->main_dir)
							     : json_null());
	json_object_set_new(opt, "vllm_dir", p->vllm_dir ? json_string(p->vllm_dir)
							 : json_null());
	{
		json_t *ra = json_array();
		for (size_t i = 0; i < p->run_args->nr; i++)
			json_array_append_new(ra, json_string(p->run_args->v[i]));
		json_object_set_new(opt, "run_args", ra);
	}
	json_object_set_new(o, "options", opt);
	for (int d = 0; d < p->ndevices; d++)
		json_array_append_new(devs, json_pack("{s:i,s:i}", "slot", d,
						      "device", p->devices[d]));
	json_object_set_new(o, "devices", devs);
	for (size_t i = 0; i < p->nr; i++)
		json_array_append_new(ops, json_pack("{s:s,s:s,s:s,s:s,s:o}",
			"spec", p->specs[i].spec, "repo", p->specs[i].repo,
			"op", p->specs[i].op, "dir", b->ops[i].run_rel,
			/* One queue: the device is known when the operator starts. */
			"device", p->pin ? json_integer(p->devices[b->ops[i].lane]) : json_null()));
	json_object_set_new(o, "ops", ops);
	json_object_set_new(o, "tables", json_pack("{s:i,s:i}", "ops_status", OPS_STATUS_VERSION,
						   "complete", COMPLETE_VERSION));
	json_object_set_new(o, "sessions", json_array());
	json_object_set(o, "resume", p->record ? p->record : json_null());
	return o;
}

/*
 * An earlier session still marked running did not end by itself: this
 * one holds the batch's lock, so no other process is running it. It was
 * killed (SIGKILL, a lost node) or crashed; say so rather than leave a
 * batch.json that claims two sessions at once.
 */
static void mark_dead_sessions(json_t *sessions)
{
	size_t i;
	json_t *s;

	json_array_foreach(sessions, i, s) {
		const char *st = json_string_value(json_object_get(s, "status"));

		if (st && !strcmp(st, "running"))
			json_object_set_new(s, "status", json_string("killed"));
	}
}

/* A fresh plan, keeping the sessions (and first start) of an earlier one. */
static int open_json(struct batch *b)
{
	json_t *old = NULL, *sessions;
	int r = json_read_file(b->json_path, &old);

	b->json = plan_json(b);
	sessions = json_object_get(b->json, "sessions");
	if (r == 0) {
		json_t *prev = json_object_get(old, "sessions");
		if (json_integer_value(json_object_get(old, "schema_version")) != BATCH_SCHEMA_VERSION) {
			json_decref(old);
			return error("%s is not a batch.json of version %d: this zlb cannot resume it",
				     b->json_path, BATCH_SCHEMA_VERSION);
		}
		if (json_is_array(prev))
			json_array_extend(sessions, prev);
		json_decref(old);
		mark_dead_sessions(sessions);
	} else if (r < 0) {
		return -1;
	}
	{
		json_t *ov = json_array();

		for (size_t i = 0; b->p->overrides && i < b->p->overrides->nr; i++)
			json_array_append_new(ov, json_string(b->p->overrides->v[i]));
		json_array_append_new(sessions, json_pack("{s:o,s:n,s:s,s:b,s:i,s:o}",
			"started_at", identity_now(), "ended_at", "status", "running",
			"resume", b->p->resume, "pid", (int)getpid(), "overrides", ov));
	}
	json_object_set(b->json, "started_at", json_object_get(json_array_get(sessions, 0),
							       "started_at"));
	json_object_set_new(b->json, "ended_at", json_null());
	return save_json(b);
}

static void close_json(struct batch *b, const char *status, int code)
{
	json_t *sessions = json_object_get(b->json, "sessions");
	json_t *last = json_array_get(sessions, json_array_size(sessions) - 1);
	json_t *counts = json_object();

	for (size_t i = 0; i < b->p->nr; i++) {
		const char *st = op_status_name(b->ops[i].row.status);
		json_object_set_new(counts, st, json_integer(
			json_integer_value(json_object_get(counts, st)) + 1));
	}
	json_object_set_new(last, "ended_at", identity_now());
	json_object_set_new(last, "status", json_string(status));
	json_object_set_new(last, "exit_code", json_integer(code));
	json_object_set_new(b->json, "status", json_string(status));
	json_object_set_new(b->json, "exit_code", json_integer(code));
	json_object_set(b->json, "ended_at", json_object_get(last, "ended_at"));
	json_object_set_new(b->json, "counts", counts);
	save_json(b);
}

/* ---- one attempt ----------------------------------------------------------- */

/* Move an earlier attempt's directory and console log to .attempts/<repo>/<key>.<n>. */
static int move_aside(struct batch *b, struct op_state *o)
{
	int has_dir = access(o->run_abs, F_OK) == 0, has_log = access(o->console, F_OK) == 0;
	char *dest_dir, *base = NULL;
	int r = 0;

	if (!has_dir && !has_log)
		return 0;
	dest_dir = xstrfmt("%s/.attempts/%s", b->p->dir, o->spec->repo);
	if (mkdir_p(dest_dir, 0755)) {
		free(dest_dir);
		return -1;
	}
	for (int n = 1; !base; n++) {
		char *cand = xstrfmt("%s/%s.%d", dest_dir, o->spec->key, n);
		char *cand_log = xstrfmt("%s.log", cand);
		if (access(cand, F_OK) && access(cand_log, F_OK))
			base = cand;
		else
			free(cand);
		free(cand_log);
	}
	if (has_dir && rename(o->run_abs, base))
		r = error_errno("cannot move %s aside to %s", o->run_abs, base);
	if (!r && has_log) {
		char *log = xstrfmt("%s.log", base);
		if (rename(o->console, log))
			r = error_errno("cannot move %s aside to %s", o->console, log);
		free(log);
	}
	free(base);
	free(dest_dir);
	return r;
}

static void build_argv(struct batch *b, struct op_state *o)
{
	const struct batch_plan *p = b->p;
	const char *dir = !strcmp(o->spec->repo, "vllm") ? p->vllm_dir : p->main_dir;

	strvec_clear(&o->argv);
	strvec_pushl(&o->argv, p->exe, "run", "--op", o->spec->op, NULL);
	if (o->spec->file)
		strvec_pushl(&o->argv, "--op-file", o->spec->file, NULL);
	strvec_pushl(&o->argv, "--run-dir", o->run_abs, "--backend", p->backend, NULL);
	/* A remote job sees only the device it was given, as index 0. */
	strvec_pushf(&o->argv, "--device");
	strvec_pushf(&o->argv, "%d", b->ex.ops->remote_devices ? 0 : p->devices[o->lane]);
	strvec_pushl(&o->argv, "--interrupt-grace", b->child_grace, NULL);
	if (dir)
		strvec_pushl(&o->argv, "--flaggems-dir", dir, NULL);
	if (o->prog.dtypes_active && p->dtypes->nr) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < p->dtypes->nr; i++)
			strbuf_addf(&sb, "%s%s", i ? " " : "", p->dtypes->v[i]);
		strvec_pushl(&o->argv, "--dtypes", sb.buf, NULL);
		strbuf_release(&sb);
	}
	if (o->prog.shapes_active && p->shape_file)
		strvec_pushl(&o->argv, "--shapes", p->shape_file, NULL);
	if (p->replay_root) {
		char *src = xstrfmt("%s/%s/%s", p->replay_root, o->spec->repo, o->spec->key);
		strvec_pushl(&o->argv, "--replay-from", src, NULL);
		free(src);
	}
	if (o->worker)
		strvec_pushl(&o->argv, "--worker", o->worker, NULL);
	strvec_pushv(&o->argv, (const char *const *)p->run_args->v);
}

static int start_attempt(struct batch *b, struct op_state *o)
{
	if (move_aside(b, o))
		return -1;
	o->worker = NULL;
	if (b->use_workers) {
		o->worker = worker_for(&b->workers, o->lane, o->spec->repo, &o->worker_job);
		if (!o->worker)
			return -1;
	}
	build_argv(b, o);
	memset(&o->job, 0, sizeof(o->job));
	o->job.argv = o->argv.v;
	o->job.envp = b->p->envp;
	o->job.console = o->console;
	o->job.timeout_s = b->p->op_timeout_s;
	o->job.grace_s = b->p->grace_s;
	o->job.owner = o;
	return b->ex.ops->start(&b->ex, &o->job);
}

/* Scan the console output for the two texts the policy needs. */
static void scan_console(const char *path, struct attempt_result *r)
{
	struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, path, 256 << 20) < 0) {
		strbuf_release(&sb);
		return;
	}
	r->cant_support = strstr(sb.buf, CANT_SUPPORT) != NULL;
	preflight_report_find(sb.buf, r->preflight, sizeof(r->preflight));
	strbuf_release(&sb);
}

static char *final_timer(const char *run_abs)
{
	char *path = path_join(run_abs, "run_identity.json");
	json_t *id = NULL;
	char *t = NULL;

	if (json_read_file(path, &id) == 0) {
		const char *s = json_str(json_object_get(id, "caliber"), "timer");
		t = s ? xstrdup(s) : NULL;
		json_decref(id);
	}
	free(path);
	return t;
}

static void read_result(struct op_state *o)
{
	struct attempt_result *r = &o->last;
	struct run_tally ta;

	memset(r, 0, sizeof(*r));
	r->exit_code = o->job.exit_code;
	r->timed_out = o->job.timed_out;
	scan_console(o->console, r);
	if (is_dir(o->run_abs)) {
		run_tally_read(o->run_abs, &ta);
		r->rows = ta.rows;
		r->rows_ok = ta.rows - ta.rows_failed;
		r->rows_direct = ta.rows_direct;
		r->replay_fallbacks = json_integer_value(json_object_get(ta.markers,
							  MARKER_REPLAY_FALLBACK));
		r->passed = ta.passed;
		r->failed = ta.failed;
		r->skipped = ta.skipped;
		r->xfailed = ta.xfailed;
		run_tally_release(&ta);
	}
}

/* ---- scheduling ------------------------------------------------------------ */

static void say_end(struct batch *b, struct op_state *o)
{
	struct lane *l = &b->lanes[o->lane];
	struct progress_lane *pl = &b->prog.lanes[o->lane];
	char line[1024];

	size_t done = pl->done, total = pl->total;

	if (!b->p->pin) {
		/* One queue: where the batch stands, whichever device ends. */
		done = 0;
		for (int d = 0; d < b->p->ndevices; d++)
			done += b->prog.lanes[d].done;
		total = b->p->nr;
	}
	snprintf(line, sizeof(line), "[device %d %zu/%zu] %-7s %s %.1fs%s%s", l->device,
		 done, total, op_status_name(o->row.status), o->spec->spec,
		 o->row.seconds, o->row.remarks ? " " : "", o->row.remarks ? o->row.remarks : "");
	if (!b->prog.live || (o->row.status != OP_PASS && o->row.status != OP_SKIP))
		progress_line(&b->prog, line);
}

/* Record an operator's final status: .complete first, then the table. */
static void finish_op(struct batch *b, struct op_state *o, enum op_status st)
{
	struct strbuf remarks = STRBUF_INIT;
	char *timer;

	o->row.status = st;
	o->row.exit_code = o->last.exit_code;
	o->row.rows = o->last.rows;
	o->row.attempts = o->prog.attempts + o->fresh_reruns;
	policy_remarks(&o->prog, &o->last, st, &remarks);
	if (o->fresh_reruns)
		strbuf_addf(&remarks, "%sfresh_worker", remarks.len ? ";" : "");
	op_row_set(&o->row.remarks, remarks.len ? remarks.buf : NULL);
	strbuf_release(&remarks);
	timer = is_dir(o->run_abs) ? final_timer(o->run_abs) : NULL;
	op_row_set(&o->row.timer, timer);
	free(timer);
	op_row_set(&o->row.run_dir, is_dir(o->run_abs) ? o->run_rel : NULL);
	o->done = 1;
	if ((st == OP_PASS || st == OP_SKIP) && complete_write(o->run_abs, o->spec, &o->row)) {
		b->io_failed = 1;
		warning("%s", last_error());
		stop_batch(b, ZLB_EXIT_IO, "%s's .complete could not be written", o->spec->spec);
	}
	save_status(b);
}

static struct op_state *next_op(struct batch *b, struct lane *l)
{
	struct lane *q = b->p->pin ? l : &b->shared;

	while (q->next < q->nq) {
		struct op_state *o = &b->ops[q->queue[q->next++]];
		if (!o->done) {
			o->lane = (int)(l - b->lanes);
			return o;
		}
	}
	return NULL;
}

/*
 * Without --pin a lane's share is not known ahead: each lane's total is
 * what it did, what it does, and an even share of what is left.
 */
static void share_totals(struct batch *b)
{
	size_t left = 0, share;

	if (b->p->pin)
		return;
	for (size_t i = b->shared.next; i < b->shared.nq; i++)
		left += !b->ops[b->shared.queue[i]].done;
	share = (left + (size_t)b->p->ndevices - 1) / (size_t)b->p->ndevices;
	for (int d = 0; d < b->p->ndevices; d++) {
		struct progress_lane *pl = &b->prog.lanes[d];
		pl->total = pl->done + (b->lanes[d].current ? 1 : 0) + share;
	}
}

/* Start the next operator of lane l, skipping those that cannot start. */
static void fill_lane(struct batch *b, struct lane *l, double now)
{
	struct op_state *o;

	while (!l->current && (o = next_op(b, l))) {
		struct progress_lane *pl = &b->prog.lanes[o->lane];

		op_progress_init(&o->prog, b->p->max_retries, b->p->dtypes->nr > 0,
				 b->p->shape_file != NULL);
		o->row.seconds = 0;
		o->row.device = l->device;
		op_row_set(&o->row.backend, b->p->backend);
		if (b->p->replay_root) {
			char *src = xstrfmt("%s/%s/%s", b->p->replay_root, o->spec->repo,
					    o->spec->key);
			int missing = !is_dir(src);
			free(src);
			if (missing) {
				memset(&o->last, 0, sizeof(o->last));
				o->last.exit_code = -1;
				o->row.status = OP_FAIL;
				op_row_set(&o->row.remarks, "replay_missing");
				o->done = 1;
				pl->done++;
				pl->failed++;
				save_status(b);
				say_end(b, o);
				continue;
			}
		}
		if (start_attempt(b, o)) {
			warning("%s: %s", o->spec->spec, last_error());
			o->row.status = OP_FAIL;
			op_row_set(&o->row.remarks, "not_started");
			o->done = 1;
			pl->done++;
			pl->failed++;
			b->io_failed = 1;
			save_status(b);
			say_end(b, o);
			continue;
		}
		o->row.status = OP_RUNNING;
		l->current = o;
		share_totals(b);
		pl->current = o->spec->spec;
		pl->op_started = now;
		save_status(b);
	}
}

/* An attempt ended: the policy decides between another attempt and the end. */
static void attempt_ended(struct batch *b, struct op_state *o, int interrupted, double now)
{
	struct lane *l = &b->lanes[o->lane];
	struct progress_lane *pl = &b->prog.lanes[o->lane];
	enum op_status st = OP_FAIL;
	enum policy_action act;
	int env;

	o->row.seconds += o->job.seconds;
	read_result(o);
	if (!interrupted && !b->env_code && (env = policy_environment_failure(&o->last))) {
		char check[64];

		snprintf(check, sizeof(check), "%s", env == ZLB_EXIT_IO ? "io" : o->last.preflight);
		if (env == ZLB_EXIT_IO)
			stop_batch(b, env, "%s: zlb run could not write its own files (exit 7; "
				   "its log: %s)", o->spec->spec, o->console);
		else
			stop_batch(b, env, "%s: PREFLIGHT_FAILED check=%s (its log: %s)",
				   o->spec->spec, check, o->console);
		o->row.status = OP_PENDING;
		o->row.attempts = o->prog.attempts + 1;
		{
			char *rm = xstrfmt("environment=%s", check);
			op_row_set(&o->row.remarks, rm);
			free(rm);
		}
		op_row_set(&o->row.run_dir, is_dir(o->run_abs) ? o->run_rel : NULL);
		l->current = NULL;
		pl->current = NULL;
		save_status(b);
		progress_line(&b->prog, "zlb batch: the environment failed, not an operator: "
			      "stopping; every operator not finished stays PENDING");
		return;
	}
	if ((interrupted || b->env_code) && o->job.stopped && !o->job.timed_out) {
		/* Stopped by the user: not an outcome of the operator. Rerun on resume. */
		o->row.status = OP_PENDING;
		o->row.attempts = o->prog.attempts + 1;
		op_row_set(&o->row.remarks, b->env_code ? "stopped" : "interrupted");
		op_row_set(&o->row.run_dir, is_dir(o->run_abs) ? o->run_rel : NULL);
		l->current = NULL;
		pl->current = NULL;
		save_status(b);
		return;
	}
	if (o->worker) {
		worker_check(&b->workers, o->lane);
		/*
		 * Not passed after other jobs in the same worker: the worker's
		 * state (a poisoned context, a switch an earlier test left) may be
		 * the cause, so the verdict is a fresh worker's, as a process of
		 * its own would give it.
		 */
		if (o->last.exit_code != ZLB_EXIT_OK && o->worker_job > 1 && !interrupted &&
		    !o->fresh_reruns) {
			worker_stop(&b->workers, o->lane, (int)(b->p->grace_s * 1000));
			o->fresh_reruns++;
			if (!start_attempt(b, o))
				return;
			warning("%s: %s", o->spec->spec, last_error());
			b->io_failed = 1;
		}
	}
	act = policy_next(&o->prog, &o->last, &st);
	if (act != POLICY_DONE && !interrupted) {
		o->row.attempts = o->prog.attempts;
		if (!start_attempt(b, o))
			return;
		warning("%s: %s", o->spec->spec, last_error());
		b->io_failed = 1;
		st = OP_FAIL;
	} else if (act != POLICY_DONE) {
		st = OP_FAIL;
	}
	l->current = NULL;
	pl->current = NULL;
	pl->done++;
	pl->busy += now - pl->op_started;
	if (st == OP_FAIL || st == OP_TIMEOUT)
		pl->failed++;
	finish_op(b, o, st);
	say_end(b, o);
}

static int exit_status(const struct batch *b)
{
	for (size_t i = 0; i < b->p->nr; i++)
		if (b->ops[i].row.status != OP_PASS && b->ops[i].row.status != OP_SKIP)
			return ZLB_EXIT_TESTS_FAILED;
	return ZLB_EXIT_OK;
}

static int run_loop(struct batch *b)
{
	int interrupted = 0;
	double tick = mono_s() + TICK_MS / 1000.0;

	for (;;) {
		struct exec_job *done = NULL;
		double now = mono_s();
		int r, busy = 0;

		if (!interrupted && interrupt_pending()) {
			interrupted = interrupt_pending();
			progress_line(&b->prog, "zlb batch: interrupted; stopping the running "
				      "operators (state kept: resume with --resume)");
			b->ex.ops->stop_all(&b->ex);
		}
		if (!interrupted && !b->env_code)
			for (int d = 0; d < b->p->ndevices; d++)
				fill_lane(b, &b->lanes[d], now);
		for (int d = 0; d < b->p->ndevices; d++)
			busy |= b->lanes[d].current != NULL;
		if (!busy)
			break;
		if (b->prog.live && now >= tick) {
			progress_draw(&b->prog, now);
			tick = now + TICK_MS / 1000.0;
		}
		r = b->ex.ops->wait(&b->ex, b->prog.live ? TICK_MS : -1, &done);
		if (r < 0)
			return -1;
		if (r == 1) {
			attempt_ended(b, done->owner, interrupted || interrupt_pending(), mono_s());
			progress_draw(&b->prog, mono_s());
		}
	}
	return interrupted;
}

/* ---- setup ----------------------------------------------------------------- */

static int prepare_dir(const struct batch_plan *p, char *json_path)
{
	int has_json = access(json_path, F_OK) == 0;

	if (p->resume) {
		if (!has_json)
			return error("%s holds no batch.json: there is nothing to resume; drop "
				     "--resume to start a new batch there", p->dir);
		return 0;
	}
	if (has_json)
		return error("%s already holds a batch; continue it with --resume, or give "
			     "another --batch-dir", p->dir);
	if (is_dir(p->dir) && !dir_is_empty(p->dir))
		return error("%s exists and is not empty; give a new --batch-dir", p->dir);
	return mkdir_p(p->dir, 0755);
}

static void init_ops(struct batch *b)
{
	const struct batch_plan *p = b->p;
	size_t *counts = xcalloc((size_t)p->ndevices, sizeof(size_t));

	b->ops = xcalloc(p->nr ? p->nr : 1, sizeof(*b->ops));
	b->lanes = xcalloc((size_t)p->ndevices, sizeof(*b->lanes));
	for (size_t i = 0; i < p->nr; i++) {
		struct op_state *o = &b->ops[i];
		o->spec = &p->specs[i];
		op_row_init(&o->row);
		strvec_init(&o->argv);
		o->lane = batch_shard(o->spec->spec, p->ndevices);
		o->run_rel = xstrfmt("%s/%s", o->spec->repo, o->spec->key);
		o->run_abs = path_join(p->dir, o->run_rel);
		o->console = xstrfmt("%s/.logs/%s/%s.log", p->dir, o->spec->repo, o->spec->key);
		counts[o->lane]++;
	}
	for (int d = 0; d < p->ndevices; d++) {
		b->lanes[d].device = p->devices[d];
		b->lanes[d].queue = xcalloc(counts[d] + 1, sizeof(size_t));
	}
	for (size_t i = 0; i < p->nr; i++) {
		struct lane *l = &b->lanes[b->ops[i].lane];
		l->queue[l->nq++] = i;
	}
	b->shared.queue = xcalloc(p->nr + 1, sizeof(size_t));
	for (size_t i = 0; i < p->nr; i++)
		b->shared.queue[b->shared.nq++] = i;
	free(counts);
}

/* --resume: operators with a valid .complete are taken as they are. */
static size_t reuse_complete(struct batch *b)
{
	size_t reused = 0;

	for (size_t i = 0; i < b->p->nr; i++) {
		struct op_state *o = &b->ops[i];
		int r = complete_read(o->run_abs, o->spec, &o->row);
		if (r < 0)
			warning("%s", last_error());
		if (r)
			continue;
		op_row_set(&o->row.run_dir, o->run_rel);
		o->done = 1;
		reused++;
		b->prog.lanes[o->lane].done++;
	}
	return reused;
}

static void release(struct batch *b)
{
	for (size_t i = 0; b->ops && i < b->p->nr; i++) {
		op_row_release(&b->ops[i].row);
		strvec_clear(&b->ops[i].argv);
		free(b->ops[i].run_abs);
		free(b->ops[i].run_rel);
		free(b->ops[i].console);
	}
	for (int d = 0; b->lanes && d < b->p->ndevices; d++)
		free(b->lanes[d].queue);
	free(b->shared.queue);
	free(b->ops);
	free(b->lanes);
	progress_release(&b->prog);
	json_decref(b->json);
	free(b->status_path);
	free(b->json_path);
	if (b->lock_fd >= 0)
		close(b->lock_fd);
}

int batch_execute(const struct batch_plan *p)
{
	struct batch b;
	size_t reused = 0, counts[6] = { 0 };
	int code = ZLB_EXIT_USAGE, r;
	char *logs;

	memset(&b, 0, sizeof(b));
	b.p = p;
	b.lock_fd = -1;
	b.json_path = path_join(p->dir, "batch.json");
	b.status_path = path_join(p->dir, "ops_status.csv");
	snprintf(b.child_grace, sizeof(b.child_grace), "%ld",
		 (long)(p->grace_s * 1000 / CHILD_GRACE_SHARE));
	init_ops(&b);
	progress_init(&b.prog, p->progress == BATCH_PROGRESS_LIVE, p->ndevices, p->rep, mono_s());
	for (size_t i = 0; i < p->nr; i++)
		b.prog.lanes[b.ops[i].lane].total++;
	for (int d = 0; d < p->ndevices; d++)
		b.prog.lanes[d].device = p->devices[d];

	if (prepare_dir(p, b.json_path) || take_lock(&b))
		goto out;
	code = ZLB_EXIT_IO;
	for (size_t i = 0; opspec_repos[i]; i++) {
		logs = xstrfmt("%s/.logs/%s", p->dir, opspec_repos[i]);
		r = mkdir_p(logs, 0755);
		free(logs);
		if (r)
			goto out;
	}
	if (p->resume)
		reused = reuse_complete(&b);
	if (open_json(&b) || save_status(&b))
		goto out;
	b.ex.ops = executor_find(p->executor);
	if (!b.ex.ops)
		BUG("executor '%s' is not registered", p->executor);
	b.ex.args = p->executor_args;
	b.use_workers = p->isolation && !strcmp(p->isolation, "worker");
	if (b.use_workers && worker_pool_open(&b.workers, p->ndevices, p->dir, p->python,
					      p->worker_envp))
		goto out;
	if (interrupts_install() || b.ex.ops->open(&b.ex))
		goto out;
	b.ex.wake_fd = interrupt_fd();

	{
		char line[512];
		snprintf(line, sizeof(line), "zlb batch: %zu operator(s) on %d device(s)%s -> %s",
			 p->nr, p->ndevices, "", p->dir);
		progress_line(&b.prog, line);
		if (reused) {
			snprintf(line, sizeof(line), "zlb batch: resuming: %zu operator(s) already "
				 "PASS/SKIP are kept, %zu to run", reused, p->nr - reused);
			progress_line(&b.prog, line);
		}
	}
	r = run_loop(&b);
	b.ex.ops->close(&b.ex);
	if (b.use_workers)
		worker_pool_close(&b.workers, (int)(p->grace_s * 1000));
	interrupts_restore();
	progress_finish(&b.prog);
	if (r < 0) {
		close_json(&b, "error", ZLB_EXIT_IO);
		code = ZLB_EXIT_IO;
		goto out;
	}
	for (size_t i = 0; i < p->nr; i++)
		counts[b.ops[i].row.status]++;
	code = r ? ZLB_EXIT_INTERRUPTED : exit_status(&b);
	if (b.io_failed && code == ZLB_EXIT_OK)
		code = ZLB_EXIT_IO;
	if (b.env_code && !r) {
		code = b.env_code;
		report(p->rep, REPORT_WARN, "zlb batch: stopped by the environment: %s; fix it, "
		       "then continue with --resume", b.env_why);
	}
	close_json(&b, r ? "interrupted" : b.env_code ? "environment" : "completed", code);
	{
		char took[32];

		/* This session's wall time: what a screen costs is the first thing asked of it. */
		progress_fmt_duration(took, sizeof(took), mono_s() - b.prog.t0);
		report(p->rep, REPORT_OUT, "zlb batch: %zu PASS, %zu SKIP, %zu FAIL, %zu TIMEOUT%s%s "
		       "in %s; %s/ops_status.csv", counts[OP_PASS], counts[OP_SKIP], counts[OP_FAIL],
		       counts[OP_TIMEOUT], counts[OP_PENDING] ? ", not run: " : "",
		       counts[OP_PENDING] ? (r ? "some (interrupted; --resume continues)" :
					     "some") : "", took, p->dir);
	}
out:
	release(&b);
	return code;
}
