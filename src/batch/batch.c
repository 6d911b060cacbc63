/*
 * The batch scheduler (batch.h): operators over device slots from one
 * queue (or pinned), attempts through an executor, retries by the policy,
 * the status files rewritten as each attempt ends. The state files are
 * batch_state.c's, one attempt's mechanics batch_attempt.c's.
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
#include "lib/clock.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/proc.h"
#include "lib/proc_tree.h"
#include "rundir/run_tally.h"
#include "rundir/rundir.h"
#include "rundir/markers.h"

#include "batch/batch_int.h"

/* zlb run's own escalation (SIGINT, g, SIGTERM, g, SIGKILL) fits in the batch's grace. */
#define CHILD_GRACE_SHARE 3
/* Redraw the live progress this often. */
#define TICK_MS 1000

int batch_shard(const char *spec, int ndevices)
{
	return ndevices > 0 ? (int)(XXH3_64bits(spec, strlen(spec)) % (uint64_t)ndevices) : 0;
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
	progress_end(&b->prog, line, o->row.status != OP_PASS && o->row.status != OP_SKIP);
}

/* Record an operator's final status: .complete first, then the table. */
static void finish_op(struct batch *b, struct op_state *o, enum op_status st)
{
	struct strbuf remarks = STRBUF_INIT;

	o->row.status = st;
	o->row.exit_code = o->last.exit_code;
	o->row.rows = o->last.rows;
	o->row.attempts = o->prog.attempts + o->fresh_reruns;
	policy_remarks(&o->prog, &o->last, st, &remarks);
	if (o->fresh_reruns || o->moved_fresh)
		strbuf_addf(&remarks, "%sfresh_worker", remarks.len ? ";" : "");
	op_row_set(&o->row.remarks, remarks.len ? remarks.buf : NULL);
	strbuf_release(&remarks);
	batch_row_run_facts(&o->row, o->run_abs);
	op_row_set(&o->row.run_dir, is_dir(o->run_abs) ? o->run_rel : NULL);
	op_row_set(&o->row.job, b->p->cluster_job);
	o->done = 1;
	if ((st == OP_PASS || st == OP_SKIP) && complete_write(o->run_abs, o->spec, &o->row)) {
		b->io_failed = 1;
		warning("%s", last_error());
		batch_stop(b, ZLB_EXIT_IO, "%s's .complete could not be written", o->spec->spec);
	}
	batch_save_status(b);
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

/*
 * An attempt that could not start: the environment's failure (the batch
 * stops), not the operator's, which stays PENDING for a --resume.
 */
static void not_started(struct batch *b, struct op_state *o, int code)
{
	struct lane *l = &b->lanes[o->lane];

	batch_stop(b, code, "%s could not be started: %s", o->spec->spec, last_error());
	o->row.status = OP_PENDING;
	op_row_set(&o->row.remarks, "not_started");
	if (l->current == o)
		l->current = NULL;
	b->prog.lanes[o->lane].current = NULL;
	batch_save_status(b);
}

/* Start the next operator of lane l, skipping those that cannot start. */
static void fill_lane(struct batch *b, struct lane *l, double now)
{
	struct op_state *o;
	int code;

	while (!l->current && (o = next_op(b, l))) {
		struct progress_lane *pl = &b->prog.lanes[o->lane];

		op_progress_init(&o->prog, b->p->max_retries, b->p->dtypes->nr > 0,
				 b->p->shape_file != NULL);
		o->row.seconds = 0;
		o->row.device = l->device;
		op_row_set(&o->row.backend, b->p->backend);
		/* the card is the final attempt's, learnt from its identity when it ends */
		op_row_set(&o->row.gpu, NULL);
		op_row_set(&o->row.gpu_uuid, NULL);
		op_row_set(&o->row.job, b->p->cluster_job);
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
				batch_save_status(b);
				say_end(b, o);
				continue;
			}
		}
		if ((code = batch_start_attempt(b, o))) {
			not_started(b, o, code);
			break;
		}
		o->row.status = OP_RUNNING;
		l->current = o;
		share_totals(b);
		pl->current = o->spec->spec;
		pl->op_started = now;
		batch_save_status(b);
	}
}

/* An attempt ended: the policy decides between another attempt and the end. */
static void attempt_ended(struct batch *b, struct op_state *o, int interrupted, double now)
{
	struct lane *l = &b->lanes[o->lane];
	struct progress_lane *pl = &b->prog.lanes[o->lane];
	enum op_status st = OP_FAIL;
	enum policy_action act;
	int env, code, refused;

	o->row.seconds += o->job.seconds;
	batch_read_result(o);
	if (!interrupted && !b->env_code && (env = policy_environment_failure(&o->last))) {
		char check[64];

		snprintf(check, sizeof(check), "%s", env == ZLB_EXIT_IO ? "io" : o->last.preflight);
		if (env == ZLB_EXIT_IO)
			batch_stop(b, env, "%s: zlb run could not write its own files (exit 7; "
				   "its log: %s)", o->spec->spec, o->console);
		else
			batch_stop(b, env, "%s: PREFLIGHT_FAILED check=%s (its log: %s)",
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
		batch_save_status(b);
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
		batch_save_status(b);
		return;
	}
	if (o->worker) {
		worker_check(&b->workers, o->lane);
		/*
		 * A job stopped at its deadline, or whose zlb run was killed by a
		 * signal (by the user, the OOM killer), was interrupted mid-test:
		 * its worker goes too. One left running would be handed the next
		 * operator while it still ends the dead job (its client gone, it
		 * exits), and that operator would wait for a worker that is no
		 * longer there.
		 */
		if (o->last.timed_out || o->last.exit_code > 128)
			worker_stop(&b->workers, o->lane, (int)(b->p->grace_s * 1000));
		o->ran_fresh |= o->worker_job == 1;
	}
	/* Asked before the policy moves on: it reads the configuration in force. */
	refused = policy_configuration_refused(&o->prog, &o->last);
	act = policy_next(&o->prog, &o->last, &st);
	if (o->worker && !interrupted && o->last.exit_code != ZLB_EXIT_OK && !refused) {
		/*
		 * A warm worker's state (a poisoned context, a switch an earlier
		 * test left) may be the cause of a failure, so a verdict is a fresh
		 * worker's, as a process of its own would give it: a retry runs as
		 * a fresh worker's first job, as a retry in a process of its own
		 * would; and a failure that would be final, reached after other
		 * jobs with no attempt of this operator in a fresh worker yet, gets
		 * one more there (fresh_worker). A refused configuration (dtypes,
		 * shape file) is the operator's in any process: the next runs here.
		 */
		if (act == POLICY_RETRY) {
			worker_stop(&b->workers, o->lane, (int)(b->p->grace_s * 1000));
			/* said only where other operators' state may have been the cause */
			o->moved_fresh += o->worker_job > 1;
		} else if (act == POLICY_DONE && st == OP_FAIL && o->worker_job > 1 &&
			   !o->ran_fresh) {
			worker_stop(&b->workers, o->lane, (int)(b->p->grace_s * 1000));
			o->fresh_reruns++;
			act = POLICY_RETRY;
		}
	}
	if (act != POLICY_DONE && !interrupted) {
		o->row.attempts = o->prog.attempts + o->fresh_reruns;
		if (!(code = batch_start_attempt(b, o)))
			return;
		not_started(b, o, code);
		return;
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

int batch_exit_status(const struct batch *b)
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

const char *batch_state_dir(const struct batch_plan *p)
{
	return p->state_dir ? p->state_dir : p->dir;
}

/* 0, or the exit code after error(): 2 for the command line, 7 for a directory zlb cannot make. */
static int prepare_dir(const struct batch_plan *p, const char *json_path)
{
	int has_json;
	char *batch_json = path_join(p->dir, "batch.json");

	/* A cluster task resumes its share of a batch the driver made. */
	has_json = access(p->state_dir ? batch_json : json_path, F_OK) == 0;
	free(batch_json);
	if (p->resume) {
		if (!has_json) {
			error("%s holds no batch.json: there is nothing to resume; drop "
			      "--resume to start a new batch there", p->dir);
			return ZLB_EXIT_USAGE;
		}
		return p->state_dir && mkdir_p(p->state_dir, 0755) ? ZLB_EXIT_IO : 0;
	}
	if (has_json) {
		error("%s already holds a batch; continue it with --resume, or give "
		      "another --batch-dir", p->dir);
		return ZLB_EXIT_USAGE;
	}
	if (is_dir(p->dir) && !dir_is_empty(p->dir)) {
		error("%s exists and is not empty; give a new --batch-dir", p->dir);
		return ZLB_EXIT_USAGE;
	}
	return mkdir_p(p->dir, 0755) ? ZLB_EXIT_IO : 0;
}

static void init_ops(struct batch *b)
{
	const struct batch_plan *p = b->p;
	size_t *counts = xcalloc((size_t)p->ndevices + 1, sizeof(size_t));

	b->ops = xcalloc(p->nr ? p->nr : 1, sizeof(*b->ops));
	b->lanes = xcalloc((size_t)p->ndevices + 1, sizeof(*b->lanes));
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
		/* a version 1 marker predates gpu, gpu_uuid: the run's identity has them */
		if (!o->row.gpu && !o->row.gpu_uuid)
			batch_row_run_facts(&o->row, o->run_abs);
		o->done = 1;
		reused++;
		b->prog.lanes[o->lane].done++;
	}
	return reused;
}

void batch_release(struct batch *b)
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

int batch_setup(struct batch *b, const struct batch_plan *p, size_t *reused)
{
	const char *state = batch_state_dir(p);
	char *logs;
	int r;

	memset(b, 0, sizeof(*b));
	b->p = p;
	b->lock_fd = -1;
	b->json_path = path_join(state, "batch.json");
	b->status_path = path_join(state, "ops_status.csv");
	snprintf(b->child_grace, sizeof(b->child_grace), "%ld",
		 (long)(p->grace_s * 1000 / CHILD_GRACE_SHARE));
	init_ops(b);
	progress_init(&b->prog, p->progress == BATCH_PROGRESS_LIVE,
		      p->ndevices > 0 ? p->ndevices : 1, p->rep, mono_s());
	for (size_t i = 0; i < p->nr; i++)
		b->prog.lanes[b->ops[i].lane].total++;
	for (int d = 0; d < p->ndevices; d++)
		b->prog.lanes[d].device = p->devices[d];
	*reused = 0;
	if ((r = prepare_dir(p, b->json_path)) || (r = batch_take_lock(b)))
		return r;
	for (size_t i = 0; opspec_repos[i]; i++) {
		logs = xstrfmt("%s/.logs/%s", p->dir, opspec_repos[i]);
		r = mkdir_p(logs, 0755);
		free(logs);
		if (r)
			return ZLB_EXIT_IO;
	}
	if (p->resume)
		*reused = reuse_complete(b);
	return 0;
}

void batch_say_totals(const struct batch *b, int interrupted, double seconds)
{
	size_t counts[OP_STATUSES] = { 0 }, pending;
	char took[32], cancelled[48] = "", not_run[96] = "";

	for (size_t i = 0; i < b->p->nr; i++)
		counts[b->ops[i].row.status]++;
	if (counts[OP_CANCELLED])
		snprintf(cancelled, sizeof(cancelled), ", %zu CANCELLED", counts[OP_CANCELLED]);
	pending = counts[OP_PENDING] + counts[OP_RUNNING];
	if (pending)
		snprintf(not_run, sizeof(not_run), ", %zu not run%s", pending,
			 interrupted ? " (interrupted; --resume continues)" : "");
	/* This session's wall time: what a screen costs is the first thing asked of it. */
	progress_fmt_duration(took, sizeof(took), seconds);
	report(b->p->rep, REPORT_RESULT, "zlb batch: %zu PASS, %zu SKIP, %zu FAIL, %zu TIMEOUT%s%s "
	       "in %s; %s/ops_status.csv", counts[OP_PASS], counts[OP_SKIP], counts[OP_FAIL],
	       counts[OP_TIMEOUT], cancelled, not_run, took, batch_state_dir(b->p));
}

int batch_execute(const struct batch_plan *p)
{
	struct batch b;
	const struct executor_ops *xo = executor_find(p->executor);
	size_t reused = 0;
	int code, r;

	if (!xo)
		BUG("executor '%s' is not registered", p->executor);
	code = batch_setup(&b, p, &reused);
	if (code)
		goto out;
	if (xo->cluster && !p->state_dir) {
		code = batch_cluster_execute(&b, reused);
		goto out;
	}
	code = ZLB_EXIT_IO;
	if (batch_open_json(&b) || batch_save_status(&b))
		goto out;
	b.ex.ops = xo;
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
		snprintf(line, sizeof(line), "zlb batch: %zu operator(s) on %d device(s)%s%s -> %s",
			 p->nr, p->ndevices, !p->cluster_job ? "" : p->state_dir ? " as cluster task " : " in cluster job ",
			 p->cluster_job ? p->cluster_job : "", p->dir);
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
	/*
	 * The local executor made the batch a subreaper: what a killed zlb run
	 * left behind came back here. Nothing the batch started outlives it.
	 */
	proc_kill_tree(getpid(), NULL);
	interrupts_restore();
	progress_finish(&b.prog);
	if (r < 0) {
		batch_close_json(&b, "error", ZLB_EXIT_IO);
		code = ZLB_EXIT_IO;
		goto out;
	}
	code = r ? ZLB_EXIT_INTERRUPTED : batch_exit_status(&b);
	if (b.io_failed && code == ZLB_EXIT_OK)
		code = ZLB_EXIT_IO;
	if (b.env_code && !r) {
		code = b.env_code;
		report(p->rep, REPORT_WARN, "zlb batch: stopped by the environment: %s; fix it, "
		       "then continue with --resume", b.env_why);
	}
	batch_close_json(&b, r ? "interrupted" : b.env_code ? "environment" : "completed", code);
	batch_say_totals(&b, r, mono_s() - b.prog.t0);
out:
	batch_release(&b);
	return code;
}
