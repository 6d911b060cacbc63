/*
 * A batch on a cluster (batch.h, executors/executor.h's cluster executors):
 * the driver cuts the operators not yet done into tasks, submits them as one
 * array, follows it and merges what each task writes; a task is `zlb task`
 * on a node, a job-executor batch of its share (state in
 * <batch>/.tasks/<label>/, run directories in the batch's own tree).
 *
 * batch.json "cluster" holds every array submitted ("rounds"): its id, each
 * task's operators, and once it has ended each task's state, exit and node.
 * A task finds its share there by its array id and index. A driver killed
 * while it follows leaves the round without "ended_at": the next --resume
 * asks the cluster, follows the array if it still runs, else finishes it.
 *
 * What the cluster says of a task becomes its operators' statuses (what the
 * task itself wrote wins wherever it got that far):
 *   ended by itself      its rows; none at all: the environment (the batch
 *                        directory not on the node, no zlb there) stops the batch
 *   cancelled by someone CANCELLED (not rerun unless --retry-cancelled);
 *                        cancelled by zlb (Ctrl-C): PENDING, for --resume
 *   the cluster's time   the operator at work TIMEOUT, the rest requeued
 *   lost (node, preempt) requeued once, then FAIL
 * Requeued operators go into a new array at once, in the same session.
 * Time spent PENDING in the queue is never an operator's: --op-timeout is
 * counted by the task from each operator's start.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch/batch_cluster_int.h"
#include "lib/clock.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/proc.h"
#include "rundir/exit_codes.h"
#include "rundir/identity.h"

#define TASK_SCRIPT "task"
/* Poll the cluster 2 s after a submission, 8 s after that, then every 32 s. */
static const double poll_steps_s[] = { 2, 8, 32 };
/* Between polls the tasks' own files are read this often. */
#define TICK_MS 1000
/* After zlb cancelled an array, how long it waits for the tasks to go. */
#define CANCEL_WAIT_S 120
/* Rounds in one session: the first, and requeues of lost or timed-out work. */
#define MAX_ROUNDS 3
/* Operators per task when none is said. */
#define DEFAULT_TASK_OPS 16






/* ---- what the tasks wrote --------------------------------------------------- */






/* ---- submitting --------------------------------------------------------------- */

/* <batch>/.cluster/task: `#!<zlb> task`, what every task runs (no shell). */
static char *write_script(const struct batch_plan *p)
{
	char *dir = path_join(p->dir, CLUSTER_DIR), *path = path_join(dir, TASK_SCRIPT);
	struct strbuf sb = STRBUF_INIT;
	int r;

	/* Linux reads at most 255 bytes of a #! line (127 before 5.1). */
	if (strlen(p->exe) + strlen("#! task") > 127) {
		error("zlb's path (%s) is %zu characters: a task starts as `#!<zlb> task`, and "
		      "a #! line holds at most 127 on many kernels; install zlb under a shorter "
		      "path", p->exe, strlen(p->exe));
		goto fail;
	}
	if (mkdir_p(dir, 0755))
		goto fail;
	strbuf_addf(&sb, "#!%s task\n"
		    "# One task of the zlb batch in this directory (written by zlb batch\n"
		    "# --executor %s). The cluster runs this file as a program: the line above\n"
		    "# starts `zlb task`, which runs this task's share of the operators\n"
		    "# (batch.json cluster.rounds) on the GPU the task was given.\n",
		    p->exe, p->executor);
	r = write_file_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	if (r || chmod(path, 0755)) {
		if (!r)
			error_errno("cannot make %s executable", path);
		goto fail;
	}
	free(dir);
	return path;
fail:
	strbuf_release(&sb);
	free(dir);
	free(path);
	return NULL;
}

/*
 * The minutes each task may take: its operators' deadlines (each with its
 * grace) and five minutes for starting, within the partition's limit. An
 * operator whose own deadline does not fit is refused: it would pend for
 * ever. 0: no deadline asked (the cluster's default).
 */
static int task_minutes(struct driver *d, size_t ops_per_task, long *minutes, size_t *fit)
{
	const struct batch_plan *p = d->p;
	struct strbuf part = STRBUF_INIT;
	double per_op = p->op_timeout_s > 0 ? p->op_timeout_s + p->grace_s : 0;
	long limit, one;

	*minutes = 0;
	*fit = ops_per_task;
	/* No deadline, or the user's own limit: theirs to fit. */
	if (per_op <= 0 || d->co->user_time(p->executor_args))
		return 0;
	limit = d->co->time_limit_min(p->executor_args, &part);
	one = (long)((per_op + 300 + 59) / 60);
	if (limit >= 0 && one > limit) {
		error("an operator's deadline (--op-timeout plus --grace, and 5 minutes for the "
		      "task to start) asks the cluster for %ld minutes and partition %s allows "
		      "%ld: the task would pend for ever (PartitionTimeLimit); lower --op-timeout, or give a "
		      "partition that allows it (--partition or --slurm-args)", one,
		      part.len ? part.buf : "(default)", limit);
		strbuf_release(&part);
		return -1;
	}
	*minutes = (long)((per_op * (double)ops_per_task + 300 + 59) / 60);
	if (limit >= 0 && *minutes > limit) {
		/* Fewer operators per task, so that each task's deadlines fit. */
		*fit = (size_t)((limit * 60.0 - 300) / per_op);
		if (*fit < 1)
			*fit = 1;
		*minutes = limit;
	}
	strbuf_release(&part);
	return 0;
}

/* The operators still to run, in list order, into todo; returns how many. */
static size_t still_to_run(struct driver *d, size_t *todo)
{
	size_t n = 0;

	for (size_t i = 0; i < d->p->nr; i++)
		if (!d->b->ops[i].done)
			todo[n++] = i;
	return n;
}

/*
 * Cut todo into tasks (round-robin, so slow operators spread) and submit
 * them as one array. The round is recorded in batch.json before anything
 * else, so that a driver killed now is found by the next --resume.
 */
static int submit_round(struct driver *d, struct round *r)
{
	const struct batch_plan *p = d->p;
	size_t *todo = xcalloc(p->nr + 1, sizeof(size_t)), n = still_to_run(d, todo);
	size_t per = p->task_ops > 0 ? (size_t)p->task_ops : DEFAULT_TASK_OPS, fit, ntasks;
	struct cluster_submission s = { 0 };
	struct strbuf job = STRBUF_INIT;
	char *script = NULL, *output = NULL, *name = NULL;
	json_t *rj = NULL, *tasks;
	long minutes;
	int code = ZLB_EXIT_PREFLIGHT;

	if (task_minutes(d, per, &minutes, &fit))
		goto out;
	per = fit;
	ntasks = (n + per - 1) / per;
	code = ZLB_EXIT_IO;
	if (!(script = write_script(p)))
		goto out;
	output = xstrfmt("%s/%s/%s", p->dir, CLUSTER_DIR, d->co->output_pattern);
	name = xstrfmt("zlb:%s", path_basename(p->dir));
	s.dir = p->dir;
	s.script = script;
	s.name = name;
	s.output = output;
	s.ntasks = (int)ntasks;
	s.max_parallel = p->max_parallel;
	s.time_min = minutes;
	s.args = p->executor_args;
	s.envp = p->envp;
	tasks = json_array();
	for (size_t t = 0; t < ntasks; t++) {
		json_t *ops = json_array();

		for (size_t k = t; k < n; k += ntasks)
			json_array_append_new(ops, json_string(p->specs[todo[k]].spec));
		json_array_append_new(tasks, json_pack("{s:i,s:o}", "index", (int)t, "ops", ops));
	}
	rj = json_pack("{s:n,s:o,s:o,s:i,s:i,s:I,s:b,s:n}", "job", "submitted_at", identity_now(),
		       "tasks", tasks, "task_ops", (int)per, "max_parallel", p->max_parallel,
		       "time_min", (json_int_t)minutes, "cancelled_by_zlb", 0, "ended_at");
	code = ZLB_EXIT_PREFLIGHT;
	if (d->co->submit(&s, &job))
		goto out;
	json_object_set_new(rj, "job", json_string(job.buf));
	json_array_append(json_object_get(cluster_json(d->b), "rounds"), rj);
	code = ZLB_EXIT_IO;
	if (batch_save_json(d->b))
		goto out;
	/* The entry as batch.json holds it, for the round's later writes. */
	{
		json_t *rounds = json_object_get(cluster_json(d->b), "rounds");
		if (round_load(d, json_array_get(rounds, json_array_size(rounds) - 1), r))
			goto out;
	}
	{
		char line[512], at_once[48] = "";

		if (p->max_parallel > 0)
			snprintf(at_once, sizeof(at_once), ", %d at once", p->max_parallel);
		if (s.user_time)
			snprintf(line, sizeof(line), "zlb batch: submitted %zu operator(s) as %s job %s: "
				 "%zu task(s) of at most %zu%s, time limit %s each (yours)", n,
				 p->executor, job.buf, ntasks, per, at_once, s.user_time);
		else if (minutes)
			snprintf(line, sizeof(line), "zlb batch: submitted %zu operator(s) as %s job %s: "
				 "%zu task(s) of at most %zu%s, %ld min each", n, p->executor,
				 job.buf, ntasks, per, at_once, minutes);
		else
			snprintf(line, sizeof(line), "zlb batch: submitted %zu operator(s) as %s job %s: "
				 "%zu task(s) of at most %zu%s", n, p->executor, job.buf, ntasks,
				 per, at_once);
		progress_line(&d->b->prog, line);
	}
	code = 0;
out:
	json_decref(rj);
	strbuf_release(&job);
	free(todo);
	free(script);
	free(output);
	free(name);
	return code;
}

/* ---- following ---------------------------------------------------------------- */







static void stop_for_environment(struct driver *d, struct round *r)
{
	if (d->co->cancel(r->job))
		warning("%s", last_error());
	r->cancelled_by_zlb = r->stopped_for_env = 1;
	json_object_set_new(r->json, "cancelled_by_zlb", json_true());
	batch_save_json(d->b);
	progress_line(&d->b->prog, "zlb batch: a task met an environment no task escapes; "
		      "cancelling the rest of the array");
}

/* Stop following: cancel (1) or leave the array running (0), as asked. */
static int on_interrupt(struct driver *d, struct round *r, int sig)
{
	char q[256];
	int cancel;

	snprintf(q, sizeof(q), "zlb batch: interrupted; cancel the %s tasks zlb submitted (job %s)? "
		 "[Y/n] ", d->p->executor, r->job);
	/* Only Ctrl-C asks: a SIGTERM or a hang-up has nobody to answer. */
	cancel = sig == SIGINT && d->p->ask ? d->p->ask(q, 1) : 1;
	if (!cancel) {
		progress_line(&d->b->prog, "zlb batch: left running; `zlb batch --batch-dir DIR "
			      "--status` shows it, `--resume` follows it again");
		d->interrupted = 2;
		return 0;
	}
	if (d->co->cancel(r->job))
		warning("%s", last_error());
	r->cancelled_by_zlb = 1;
	json_object_set_new(r->json, "cancelled_by_zlb", json_true());
	batch_save_json(d->b);
	progress_line(&d->b->prog, "zlb batch: cancelled what zlb submitted; waiting for the "
		      "tasks to stop");
	d->interrupted = 1;
	return 1;
}


/*
 * Follow round r until every task has ended: the tasks' own files each
 * second (said as operators finish), the cluster at 2 s, 10 s, then every
 * 32 s, and at once whenever a task says it has ended. Returns 0 ended,
 * 1 detached, -1 the cluster could not be asked.
 */
static int follow_round(struct driver *d, struct round *r)
{
	double t0 = mono_s(), next = t0 + poll_steps_s[0], cancelled_at = 0;
	size_t step = 0;
	int said_ended = 0, failures = 0;

	for (;;) {
		struct pollfd pfd = { interrupt_fd(), POLLIN, 0 };
		double now;
		int active, sig, n;

		round_merge(d, r);
		now = mono_s();
		/* A task that ends frees its slot (the next may start) and may be the last. */
		if ((n = round_tasks_said_ended(r)) > said_ended) {
			said_ended = n;
			next = now;
		}
		if (now >= next) {
			active = d->co->poll(r->job, r->st, r->ntasks);
			round_note_vanished(r);
			if (active < 0) {
				if (++failures >= 3)
					return -1;
				warning("%s (asking again)", last_error());
			} else {
				failures = 0;
			}
			if (active == 0)
				return 0;
			if (step + 1 < sizeof(poll_steps_s) / sizeof(*poll_steps_s))
				step++;
			next = now + (cancelled_at ? 2 : poll_steps_s[step]);
			/* A task that wrote its end may still be exiting: look again soon. */
			for (int t = 0; t < r->ntasks; t++)
				if (r->st[t].state == CLUSTER_RUNNING && *r->tasks[t].status &&
				    strcmp(r->tasks[t].status, "running"))
					next = now + 1;
			if (cancelled_at && now - cancelled_at > CANCEL_WAIT_S) {
				warning("job %s has not ended %d s after it was cancelled; not "
					"waiting for it", r->job, CANCEL_WAIT_S);
				return 0;
			}
		}
		if (!cancelled_at && round_environment_failed(r)) {
			stop_for_environment(d, r);
			cancelled_at = mono_s();
			next = cancelled_at + 1;
		}
		if (poll(&pfd, 1, TICK_MS) > 0 && (sig = interrupt_pending()) && !cancelled_at) {
			char drain[64];

			while (read(interrupt_fd(), drain, sizeof(drain)) > 0)
				;
			if (!on_interrupt(d, r, sig))
				return 1;
			cancelled_at = mono_s();
			next = cancelled_at + 1;
		}
	}
}

/* ---- the driver ------------------------------------------------------------------- */

/* --resume: what the merged table said of the operators no .complete covers. */
static void restore_merged(struct driver *d)
{
	const struct batch_plan *p = d->p;
	struct op_row *rows = xcalloc(p->nr, sizeof(*rows));
	int *found = xcalloc(p->nr, sizeof(*found));

	for (size_t i = 0; i < p->nr; i++)
		op_row_init(&rows[i]);
	if (ops_status_read(d->b->status_path, p->specs, p->nr, rows, found) < 0)
		warning("%s", last_error());
	for (size_t i = 0; i < p->nr; i++) {
		struct op_state *o = &d->b->ops[i];

		if (!found[i] || o->done)
			continue;
		/* A user's cancel stands, unless asked otherwise. */
		if (rows[i].status == OP_CANCELLED && !p->retry_cancelled) {
			op_row_copy(&o->row, &rows[i]);
			o->done = 1;
		}
	}
	for (size_t i = 0; i < p->nr; i++)
		op_row_release(&rows[i]);
	free(rows);
	free(found);
}

/* The last round, when it has not ended (a driver detached or killed). */
static json_t *open_round(struct batch *b)
{
	json_t *rounds = json_object_get(cluster_json(b), "rounds");
	json_t *last = json_array_get(rounds, json_array_size(rounds) - 1);

	return last && json_is_null(json_object_get(last, "ended_at")) ? last : NULL;
}

static int requeue_pending(struct driver *d)
{
	int any = 0;

	for (size_t i = 0; i < d->p->nr; i++) {
		if (d->requeue[i]) {
			d->requeue[i] = 0;
			d->requeues[i]++;
			any = 1;
		}
	}
	return any;
}

/* Operators left PENDING that no round may run now are not part of this session's work. */
static size_t count_todo(const struct driver *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->p->nr; i++)
		n += !d->b->ops[i].done;
	return n;
}

int batch_cluster_execute(struct batch *b, size_t reused)
{
	const struct batch_plan *p = b->p;
	const struct executor_ops *xo = executor_find(p->executor);
	struct driver d = { b, p, xo->cluster, NULL, NULL, 0 };
	struct round r = { 0 };
	struct strbuf why = STRBUF_INIT;
	json_t *open;
	int code = ZLB_EXIT_IO, rounds = 0, f = 0;

	d.requeues = xcalloc(p->nr + 1, sizeof(int));
	d.requeue = xcalloc(p->nr + 1, 1);
	if (p->resume)
		restore_merged(&d);
	if (batch_open_json(b) || batch_save_status(b))
		goto out;
	if (!d.co->dir_shared(p->dir, p->executor_args, &why)) {
		error("%s", why.buf);
		code = ZLB_EXIT_PREFLIGHT;
		batch_close_json(b, "environment", code);
		goto out;
	}
	if (interrupts_install())
		goto out;
	if (reused) {
		char line[256];

		snprintf(line, sizeof(line), "zlb batch: resuming: %zu operator(s) already PASS/SKIP "
			 "are kept", reused);
		progress_line(&b->prog, line);
	}
	/* An array a driver before this one submitted and did not see end: follow it first. */
	open = open_round(b);
	for (;;) {
		if (open) {
			if (round_load(&d, open, &r)) {
				batch_stop(b, ZLB_EXIT_USAGE, "%s", last_error());
				break;
			}
			open = NULL;
			progress_line(&b->prog, "zlb batch: following the array an earlier "
				      "session submitted");
		} else {
			if (b->env_code || !count_todo(&d) || rounds >= MAX_ROUNDS)
				break;
			if ((code = submit_round(&d, &r))) {
				batch_stop(b, code, "%s", last_error());
				break;
			}
			rounds++;
			if (!p->follow) {
				char line[512];

				snprintf(line, sizeof(line), "zlb batch: not following (--no-follow): "
					 "`zlb batch --batch-dir %s --status` shows it, `--resume` "
					 "follows it", p->dir);
				progress_line(&b->prog, line);
				interrupts_restore();
				batch_close_json(b, "submitted", 0);
				round_release(&r);
				code = 0;
				goto out;
			}
		}
		f = follow_round(&d, &r);
		if (f < 0) {
			batch_stop(b, ZLB_EXIT_PREFLIGHT, "%s", last_error());
			break;
		}
		if (f == 1)
			break;
		round_settle(&d, &r);
		round_release(&r);
		if (d.interrupted || !requeue_pending(&d))
			break;
	}
	round_release(&r);
	interrupts_restore();
	progress_finish(&b->prog);
	if (d.interrupted || f == 1)
		code = ZLB_EXIT_INTERRUPTED;
	else if (b->env_code)
		code = b->env_code;
	else
		code = batch_exit_status(b);
	if (b->env_code && !d.interrupted && f != 1)
		report(p->rep, REPORT_WARN, "zlb batch: stopped by the environment: %s; fix it, "
		       "then continue with --resume", b->env_why);
	batch_close_json(b, f == 1 ? "detached" : d.interrupted ? "interrupted" :
			 b->env_code ? "environment" : "completed", code);
	batch_say_totals(b, d.interrupted || f == 1, mono_s() - b->prog.t0);
out:
	free(d.requeues);
	free(d.requeue);
	strbuf_release(&why);
	return code;
}

/* ---- the task's side --------------------------------------------------------- */


