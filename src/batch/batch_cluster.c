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
#include <time.h>
#include <unistd.h>

#include "batch/batch_int.h"
#include "executors/executor.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/proc.h"
#include "rundir/exit_codes.h"
#include "rundir/identity.h"

#define TASKS_DIR ".tasks"
#define CLUSTER_DIR ".cluster"
#define TASK_SCRIPT "task"
/* Poll the cluster 2 s after a submission, 8 s after that, then every 32 s. */
static const double poll_steps_s[] = { 2, 8, 32 };
/* Between polls the tasks' own files are read this often. */
#define TICK_MS 1000
/* After zlb cancelled an array, how long it waits for the tasks to go. */
#define CANCEL_WAIT_S 120
/* Rounds in one session: the first, and requeues of lost or timed-out work. */
#define MAX_ROUNDS 3
/* How long a task waits for the driver to record the array it belongs to. */
#define TASK_WAITS_FOR_ROUND_S 120
/* Operators per task when none is said. */
#define DEFAULT_TASK_OPS 16

struct task_view {
	char *label;             /* "<job>_<index>" */
	char *state_dir;         /* <batch>/.tasks/<label> */
	size_t *ops, nops;       /* indices into b->ops */
	time_t seen_mtime;       /* its ops_status.csv, last read */
	long seen_size;
	char status[32];         /* its batch.json status ("" none yet) */
	int exit_code;           /* its batch.json exit_code, -1 none */
	char environment[512];   /* its batch.json environment (why it stopped), "" */
};

struct round {
	json_t *json;            /* its entry in batch.json cluster.rounds (borrowed) */
	char *job;
	int ntasks;
	struct task_view *tasks;
	struct cluster_task *st; /* the cluster's view, latest poll */
	unsigned char *was_pending; /* per task: 1 PENDING at the last poll, 2 gone since */
	int cancelled_by_zlb;    /* zlb cancelled the array: for an interrupt, or ... */
	int stopped_for_env;     /* ... because a task met an environment no task escapes */
};

struct driver {
	struct batch *b;
	const struct batch_plan *p;
	const struct cluster_ops *co;
	int *requeues;           /* per operator, this session */
	unsigned char *requeue;  /* per operator: goes into the next round */
	int interrupted;         /* 1 cancelled, 2 detached */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static json_t *cluster_json(struct batch *b)
{
	json_t *c = json_object_get(b->json, "cluster");

	if (!json_is_object(c)) {
		c = json_pack("{s:s,s:[]}", "executor", b->p->executor, "rounds");
		json_object_set_new(b->json, "cluster", c);
	}
	return c;
}

static const char *state_name(enum cluster_state s)
{
	static const char *const names[] = {
		"PENDING", "RUNNING", "ENDED", "CANCELLED", "TIMEOUT", "LOST", "UNKNOWN",
	};
	return names[s];
}

static int op_index(const struct batch *b, const char *spec)
{
	for (size_t i = 0; i < b->p->nr; i++)
		if (!strcmp(b->p->specs[i].spec, spec))
			return (int)i;
	return -1;
}

static void round_release(struct round *r)
{
	for (int t = 0; r->tasks && t < r->ntasks; t++) {
		free(r->tasks[t].label);
		free(r->tasks[t].state_dir);
		free(r->tasks[t].ops);
	}
	free(r->tasks);
	free(r->st);
	free(r->was_pending);
	free(r->job);
	memset(r, 0, sizeof(*r));
}

/* The round of batch.json entry rj: its tasks and their operators (by spec). */
static int round_load(struct driver *d, json_t *rj, struct round *r)
{
	json_t *tasks = json_object_get(rj, "tasks"), *t;
	size_t k;

	memset(r, 0, sizeof(*r));
	r->json = rj;
	if (!json_str(rj, "job") || !json_is_array(tasks) || !json_array_size(tasks))
		return error("batch.json: a cluster round without its job or tasks");
	r->job = xstrdup(json_str(rj, "job"));
	r->ntasks = (int)json_array_size(tasks);
	r->tasks = xcalloc((size_t)r->ntasks, sizeof(*r->tasks));
	r->st = xcalloc((size_t)r->ntasks, sizeof(*r->st));
	r->was_pending = xcalloc((size_t)r->ntasks, 1);
	r->cancelled_by_zlb = json_is_true(json_object_get(rj, "cancelled_by_zlb"));
	json_array_foreach(tasks, k, t) {
		struct task_view *tv = &r->tasks[k];
		json_t *ops = json_object_get(t, "ops"), *o;
		size_t i;

		tv->label = xstrfmt("%s_%zu", r->job, k);
		tv->state_dir = xstrfmt("%s/%s/%s", d->p->dir, TASKS_DIR, tv->label);
		tv->ops = xcalloc(json_array_size(ops) + 1, sizeof(size_t));
		tv->exit_code = -1;
		json_array_foreach(ops, i, o) {
			int idx = json_string_value(o) ? op_index(d->b, json_string_value(o)) : -1;

			if (idx < 0) {
				round_release(r);
				return error("batch.json: round %s names an operator the batch does "
					     "not hold", json_str(rj, "job"));
			}
			tv->ops[tv->nops++] = (size_t)idx;
		}
		r->st[k].index = (int)k;
		r->st[k].state = CLUSTER_PENDING;
		r->st[k].exit_code = -1;
	}
	return 0;
}

/* ---- what the tasks wrote --------------------------------------------------- */

static void say_op(struct driver *d, const struct task_view *tv, struct op_state *o)
{
	char line[1024];
	size_t done = 0;

	for (size_t i = 0; i < d->p->nr; i++)
		done += d->b->ops[i].done;
	snprintf(line, sizeof(line), "[%s %zu/%zu] %-7s %s %.1fs%s%s", tv->label, done, d->p->nr,
		 op_status_name(o->row.status), o->spec->spec, o->row.seconds,
		 o->row.remarks ? " " : "", o->row.remarks ? o->row.remarks : "");
	progress_end(&d->b->prog, line, o->row.status != OP_PASS && o->row.status != OP_SKIP);
}

static void read_task_json(struct task_view *tv)
{
	char *path = path_join(tv->state_dir, "batch.json");
	json_t *j = NULL;

	if (json_read_file(path, &j) == 0) {
		snprintf(tv->status, sizeof(tv->status), "%s",
			 json_str(j, "status") ? json_str(j, "status") : "");
		tv->exit_code = json_is_integer(json_object_get(j, "exit_code")) ?
			(int)json_integer_value(json_object_get(j, "exit_code")) : -1;
		snprintf(tv->environment, sizeof(tv->environment), "%s",
			 json_str(j, "environment") ? json_str(j, "environment") : "");
	}
	json_decref(j);
	free(path);
}

/*
 * Take what task tv wrote of its operators: final rows as they are (said as
 * they arrive), RUNNING for the live view. Returns 1 when anything changed.
 */
static int merge_task(struct driver *d, struct task_view *tv)
{
	const struct batch_plan *p = d->p;
	char *path = path_join(tv->state_dir, "ops_status.csv");
	struct op_row *rows;
	int *found, changed = 0;
	struct stat st;

	read_task_json(tv);
	if (stat(path, &st) || (st.st_mtime == tv->seen_mtime && st.st_size == tv->seen_size)) {
		free(path);
		return 0;
	}
	tv->seen_mtime = st.st_mtime;
	tv->seen_size = (long)st.st_size;
	rows = xcalloc(p->nr, sizeof(*rows));
	found = xcalloc(p->nr, sizeof(*found));
	for (size_t i = 0; i < p->nr; i++)
		op_row_init(&rows[i]);
	if (ops_status_read(path, p->specs, p->nr, rows, found) < 0)
		warning("%s", last_error());
	for (size_t k = 0; k < tv->nops; k++) {
		size_t i = tv->ops[k];
		struct op_state *o = &d->b->ops[i];
		enum op_status s = rows[i].status;

		if (!found[i] || o->done)
			continue;
		if (s == OP_PASS || s == OP_SKIP || s == OP_FAIL || s == OP_TIMEOUT) {
			op_row_copy(&o->row, &rows[i]);
			op_row_set(&o->row.job, tv->label);
			o->done = 1;
			changed = 1;
			say_op(d, tv, o);
		} else if (s != o->row.status || (s == OP_PENDING && rows[i].remarks)) {
			op_row_copy(&o->row, &rows[i]);
			op_row_set(&o->row.job, tv->label);
			changed = 1;
		}
	}
	for (size_t i = 0; i < p->nr; i++)
		op_row_release(&rows[i]);
	free(rows);
	free(found);
	free(path);
	return changed;
}

static int merge_round(struct driver *d, struct round *r)
{
	int changed = 0;

	for (int t = 0; t < r->ntasks; t++)
		changed |= merge_task(d, &r->tasks[t]);
	if (changed)
		batch_save_status(d->b);
	return changed;
}

/* How many of the round's tasks have said they ended (their own batch.json). */
static int tasks_said_ended(const struct round *r)
{
	int n = 0;

	for (int t = 0; t < r->ntasks; t++)
		n += *r->tasks[t].status && strcmp(r->tasks[t].status, "running");
	return n;
}

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

/*
 * The first lines of a task's own output file, for a task that wrote
 * nothing else. Returns 0, or -1 when there is no output at all.
 */
static int task_output_head(const struct driver *d, const struct round *r, int t,
			    struct strbuf *out)
{
	char *name = xstrdup(d->co->output_pattern), *path;
	struct strbuf text = STRBUF_INIT, sb = STRBUF_INIT;
	char idx[24];
	int lines = 0;

	/* the executor's own placeholders: %A the array, %a the index */
	snprintf(idx, sizeof(idx), "%d", t);
	for (const char *c = name; *c; c++) {
		if (c[0] == '%' && c[1] == 'A') {
			strbuf_addstr(&sb, r->job);
			c++;
		} else if (c[0] == '%' && c[1] == 'a') {
			strbuf_addstr(&sb, idx);
			c++;
		} else {
			strbuf_addch(&sb, *c);
		}
	}
	path = xstrfmt("%s/%s/%s", d->p->dir, CLUSTER_DIR, sb.buf);
	if (strbuf_read_file(&text, path, 1 << 16) >= 0) {
		for (char *l = text.buf, *nl; l && *l && lines < 3; l = nl ? nl + 1 : NULL) {
			nl = strchr(l, '\n');
			if (nl)
				*nl = '\0';
			if (!*l)
				continue;
			strbuf_addf(out, "%s%s", lines++ ? " | " : "", l);
		}
	}
	if (!lines)
		strbuf_addf(out, "nothing in %s", path);
	strbuf_release(&text);
	strbuf_release(&sb);
	free(name);
	free(path);
	return lines ? 0 : -1;
}

static void set_round_ended(struct driver *d, struct round *r)
{
	json_t *tasks = json_object_get(r->json, "tasks");

	for (int t = 0; t < r->ntasks; t++) {
		json_t *tj = json_array_get(tasks, (size_t)t);

		json_object_set_new(tj, "state", json_string(state_name(r->st[t].state)));
		json_object_set_new(tj, "detail", json_string(r->st[t].detail));
		json_object_set_new(tj, "exit_code", r->st[t].exit_code >= 0 ?
				    json_integer(r->st[t].exit_code) : json_null());
		json_object_set_new(tj, "node", json_string(r->st[t].node));
	}
	json_object_set_new(r->json, "ended_at", identity_now());
	json_object_set_new(r->json, "cancelled_by_zlb", json_boolean(r->cancelled_by_zlb));
	batch_save_json(d->b);
}

/* The cluster's first word for a task's state ("NODE_FAIL"), for a remark. */
static void state_word(const struct cluster_task *ct, char *out, size_t size)
{
	size_t n = strcspn(ct->detail, " ");

	if (!n)
		snprintf(out, size, "%s", state_name(ct->state));
	else
		snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), ct->detail);
}

/*
 * One unfinished operator of an ended task, given the task's end. Its
 * remarks, as keys: cancelled (someone cancelled the task while it ran),
 * cancelled_before_start, cluster_time_limit (the operator at work when
 * the task's time ran out), requeued=STATE (it goes into the next array),
 * lost_twice=STATE (requeued once already: FAIL).
 */
static void settle_op(struct driver *d, const struct round *r, int t, struct op_state *o)
{
	const struct cluster_task *ct = &r->st[t];
	const char *label = r->tasks[t].label;
	size_t i = (size_t)(o - d->b->ops);
	char remark[160], word[64];

	op_row_set(&o->row.job, label);
	state_word(ct, word, sizeof(word));
	switch (ct->state) {
	case CLUSTER_CANCELLED:
		if (r->cancelled_by_zlb) {
			o->row.status = OP_PENDING;
			op_row_set(&o->row.remarks, r->stopped_for_env ? "stopped" : "interrupted");
			return;
		}
		/* Someone cancelled it: their decision, not an outcome to retry. */
		o->row.status = OP_CANCELLED;
		op_row_set(&o->row.remarks, strstr(ct->detail, "before it started") ?
			   "cancelled_before_start" : "cancelled");
		o->done = 1;
		return;
	case CLUSTER_TIMEOUT:
		/* At work when the time ran out: RUNNING, or stopped by the task's SIGTERM. */
		if (o->row.status == OP_RUNNING ||
		    (o->row.status == OP_PENDING && o->row.remarks &&
		     !strcmp(o->row.remarks, "interrupted"))) {
			o->row.status = OP_TIMEOUT;
			op_row_set(&o->row.remarks, "cluster_time_limit");
			o->done = 1;
			return;
		}
		/* not reached by the task's time: requeued, as for a lost task */
		/* fall through */
	case CLUSTER_LOST:
	case CLUSTER_UNKNOWN:
		if (d->requeues[i] >= 1) {
			o->row.status = OP_FAIL;
			snprintf(remark, sizeof(remark), "lost_twice=%s", word);
			op_row_set(&o->row.remarks, remark);
			o->done = 1;
			return;
		}
		o->row.status = OP_PENDING;
		snprintf(remark, sizeof(remark), "requeued=%s", word);
		op_row_set(&o->row.remarks, remark);
		d->requeue[i] = 1;
		return;
	default:
		/* ended by itself: whatever it left unfinished stays PENDING */
		if (o->row.status == OP_RUNNING)
			o->row.status = OP_PENDING;
		return;
	}
}

/*
 * The round has ended: what the cluster says of each task becomes the
 * statuses of what the task left unfinished. A task that ended by itself
 * for the environment (its own batch said so, or it ended without writing
 * anything at all) stops the batch: one failure, not one per operator.
 */
static void settle_round(struct driver *d, struct round *r)
{
	merge_round(d, r);
	for (int t = 0; t < r->ntasks; t++) {
		struct task_view *tv = &r->tasks[t];
		const struct cluster_task *ct = &r->st[t];

		for (size_t k = 0; k < tv->nops; k++) {
			struct op_state *o = &d->b->ops[tv->ops[k]];

			if (!o->done)
				settle_op(d, r, t, o);
		}
		if (ct->state != CLUSTER_ENDED)
			continue;
		if (!strcmp(tv->status, "environment") ||
		    tv->exit_code == ZLB_EXIT_PREFLIGHT || tv->exit_code == ZLB_EXIT_IO) {
			batch_stop(d->b, tv->exit_code > 0 ? tv->exit_code : ZLB_EXIT_PREFLIGHT,
				   "task %s on %s: %s", tv->label, *ct->node ? ct->node : "its node",
				   *tv->environment ? tv->environment : "its environment failed");
		} else if (!*tv->status) {
			struct strbuf head = STRBUF_INIT;

			if (task_output_head(d, r, t, &head))
				batch_stop(d->b, ZLB_EXIT_PREFLIGHT, "task %s ended (exit %d) on %s "
					   "without a word (%s): is the batch directory on a file "
					   "system that node sees, and zlb installed there at %s?",
					   tv->label, ct->exit_code, *ct->node ? ct->node : "its node",
					   head.buf, d->p->exe);
			else
				batch_stop(d->b, ZLB_EXIT_PREFLIGHT, "task %s ended (exit %d) on %s "
					   "before running anything: %s", tv->label, ct->exit_code,
					   *ct->node ? ct->node : "its node", head.buf);
			strbuf_release(&head);
		}
	}
	set_round_ended(d, r);
	batch_save_status(d->b);
}

/*
 * Has a task met the environment (its own batch stopped for it, or it ended
 * without writing anything)? Then every task would: the array is cancelled
 * at once, and settle_round says why.
 */
static int environment_failed(const struct round *r)
{
	for (int t = 0; t < r->ntasks; t++) {
		const struct task_view *tv = &r->tasks[t];

		if (!strcmp(tv->status, "environment") ||
		    (r->st[t].state == CLUSTER_ENDED && !*tv->status && r->st[t].exit_code != 0))
			return 1;
	}
	return 0;
}

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
 * A task cancelled before it started leaves no record a cluster without
 * accounting keeps (Slurm drops a pending array task from its queue at
 * once and writes no jobcomp line): seen PENDING, then nowhere, it was
 * cancelled. Called after each poll.
 */
static void note_vanished(struct round *r)
{
	for (int t = 0; t < r->ntasks; t++) {
		struct cluster_task *ct = &r->st[t];

		if (ct->state == CLUSTER_UNKNOWN && r->was_pending[t] == 1)
			r->was_pending[t] = 2;          /* gone: cancelled */
		else if (r->was_pending[t] != 2)
			r->was_pending[t] = ct->state == CLUSTER_PENDING;
		if (r->was_pending[t] == 2 && ct->state == CLUSTER_UNKNOWN) {
			ct->state = CLUSTER_CANCELLED;
			snprintf(ct->detail, sizeof(ct->detail),
				 "CANCELLED before it started (gone from the queue)");
		}
	}
}

/*
 * Follow round r until every task has ended: the tasks' own files each
 * second (said as operators finish), the cluster at 2 s, 10 s, then every
 * 32 s, and at once whenever a task says it has ended. Returns 0 ended,
 * 1 detached, -1 the cluster could not be asked.
 */
static int follow_round(struct driver *d, struct round *r)
{
	double t0 = now_s(), next = t0 + poll_steps_s[0], cancelled_at = 0;
	size_t step = 0;
	int said_ended = 0, failures = 0;

	for (;;) {
		struct pollfd pfd = { interrupt_fd(), POLLIN, 0 };
		double now;
		int active, sig, n;

		merge_round(d, r);
		now = now_s();
		/* A task that ends frees its slot (the next may start) and may be the last. */
		if ((n = tasks_said_ended(r)) > said_ended) {
			said_ended = n;
			next = now;
		}
		if (now >= next) {
			active = d->co->poll(r->job, r->st, r->ntasks);
			note_vanished(r);
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
		if (!cancelled_at && environment_failed(r)) {
			stop_for_environment(d, r);
			cancelled_at = now_s();
			next = cancelled_at + 1;
		}
		if (poll(&pfd, 1, TICK_MS) > 0 && (sig = interrupt_pending()) && !cancelled_at) {
			char drain[64];

			while (read(interrupt_fd(), drain, sizeof(drain)) > 0)
				;
			if (!on_interrupt(d, r, sig))
				return 1;
			cancelled_at = now_s();
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
		settle_round(&d, &r);
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
	batch_say_totals(b, d.interrupted || f == 1, now_s() - b->prog.t0);
out:
	free(d.requeues);
	free(d.requeue);
	strbuf_release(&why);
	return code;
}

/* ---- the task's side --------------------------------------------------------- */

/* 0 found (specs filled), 1 no round of job yet, -1 error() for anything else. */
static int read_share(const char *path, const char *job, int index, struct strvec *specs)
{
	json_t *j = NULL, *rounds, *rj, *task;
	size_t i;
	int r = 1;

	if (json_read_file(path, &j))
		return error("%s cannot be read: a cluster task runs in its batch directory", path);
	rounds = json_object_get(json_object_get(j, "cluster"), "rounds");
	json_array_foreach(rounds, i, rj) {
		const char *id = json_str(rj, "job");
		json_t *ops, *o;
		size_t k;

		if (!id || strcmp(id, job))
			continue;
		task = json_array_get(json_object_get(rj, "tasks"), (size_t)index);
		if (!task) {
			r = error("%s: job %s has no task %d", path, job, index);
			break;
		}
		ops = json_object_get(task, "ops");
		json_array_foreach(ops, k, o)
			if (json_string_value(o))
				strvec_push(specs, json_string_value(o));
		r = 0;
		break;
	}
	json_decref(j);
	return r;
}

int batch_task_share(const char *dir, const char *job, int index, struct strvec *specs)
{
	char *path = path_join(dir, "batch.json");
	double deadline = now_s() + TASK_WAITS_FOR_ROUND_S;
	const struct timespec pause = { 0, 200 * 1000 * 1000 };
	int r;

	/*
	 * The driver records the array's id when sbatch has answered, and a
	 * task may start before that: wait for it. A driver killed in that
	 * instant never records it; its tasks then end here without running
	 * anything, and a --resume submits the work again.
	 */
	while ((r = read_share(path, job, index, specs)) == 1 && now_s() < deadline)
		nanosleep(&pause, NULL);
	if (r == 1)
		error("%s holds no round of job %s after %d s: this task was not submitted by "
		      "this batch's driver, or its driver died before recording it", path, job,
		      TASK_WAITS_FOR_ROUND_S);
	free(path);
	return r ? -1 : 0;
}
