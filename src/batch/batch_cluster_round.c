/*
 * A cluster batch's round (batch_cluster_int.h): the array's tasks as
 * batch.json records them, what each task wrote so far, and, on the task's
 * side, its share of the operators.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "batch/batch_cluster_int.h"
#include "lib/clock.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"

/* How long a task waits for the driver to record the array it belongs to. */
#define TASK_WAITS_FOR_ROUND_S 120

json_t *cluster_json(struct batch *b)
{
	json_t *c = json_object_get(b->json, "cluster");

	if (!json_is_object(c)) {
		c = json_pack("{s:s,s:[]}", "executor", b->p->executor, "rounds");
		json_object_set_new(b->json, "cluster", c);
	}
	return c;
}

const char *cluster_state_name(enum cluster_state s)
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

void round_release(struct round *r)
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
int round_load(struct driver *d, json_t *rj, struct round *r)
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

void round_say_op(struct driver *d, const struct task_view *tv, struct op_state *o)
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
			round_say_op(d, tv, o);
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

int round_merge(struct driver *d, struct round *r)
{
	int changed = 0;

	for (int t = 0; t < r->ntasks; t++)
		changed |= merge_task(d, &r->tasks[t]);
	if (changed)
		batch_save_status(d->b);
	return changed;
}

/* How many of the round's tasks have said they ended (their own batch.json). */
int round_tasks_said_ended(const struct round *r)
{
	int n = 0;

	for (int t = 0; t < r->ntasks; t++)
		n += *r->tasks[t].status && strcmp(r->tasks[t].status, "running");
	return n;
}

/*
 * A task cancelled before it started leaves no record a cluster without
 * accounting keeps (Slurm drops a pending array task from its queue at
 * once and writes no jobcomp line): seen PENDING, then nowhere, it was
 * cancelled. Called after each poll.
 */
void round_note_vanished(struct round *r)
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
	double deadline = mono_s() + TASK_WAITS_FOR_ROUND_S;
	const struct timespec pause = { 0, 200 * 1000 * 1000 };
	int r;

	/*
	 * The driver records the array's id when sbatch has answered, and a
	 * task may start before that: wait for it. A driver killed in that
	 * instant never records it; its tasks then end here without running
	 * anything, and a --resume submits the work again.
	 */
	while ((r = read_share(path, job, index, specs)) == 1 && mono_s() < deadline)
		nanosleep(&pause, NULL);
	if (r == 1)
		error("%s holds no round of job %s after %d s: this task was not submitted by "
		      "this batch's driver, or its driver died before recording it", path, job,
		      TASK_WAITS_FOR_ROUND_S);
	free(path);
	return r ? -1 : 0;
}
