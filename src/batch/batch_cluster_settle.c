/*
 * What the cluster says of an ended task, as its operators' statuses
 * (batch_cluster.c's header has the table): the task's own rows win
 * wherever it got that far; what it left unfinished is CANCELLED, TIMEOUT,
 * requeued or PENDING by how the task ended; a task that met the
 * environment stops the batch once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_cluster_int.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "rundir/exit_codes.h"
#include "rundir/identity.h"

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

		json_object_set_new(tj, "state", json_string(cluster_state_name(r->st[t].state)));
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
		snprintf(out, size, "%s", cluster_state_name(ct->state));
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
			/* killed before its task could say more: what is known of it */
			if (o->row.attempts < 1)
				o->row.attempts = 1;
			op_row_set(&o->row.run_dir, is_dir(o->run_abs) ? o->run_rel : NULL);
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
void round_settle(struct driver *d, struct round *r)
{
	round_merge(d, r);
	for (int t = 0; t < r->ntasks; t++) {
		struct task_view *tv = &r->tasks[t];
		const struct cluster_task *ct = &r->st[t];

		for (size_t k = 0; k < tv->nops; k++) {
			struct op_state *o = &d->b->ops[tv->ops[k]];

			if (o->done)
				continue;
			settle_op(d, r, t, o);
			if (o->done)
				round_say_op(d, tv, o);
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
 * at once, and round_settle says why.
 */
int round_environment_failed(const struct round *r)
{
	for (int t = 0; t < r->ntasks; t++) {
		const struct task_view *tv = &r->tasks[t];

		if (!strcmp(tv->status, "environment") ||
		    (r->st[t].state == CLUSTER_ENDED && !*tv->status && r->st[t].exit_code != 0))
			return 1;
	}
	return 0;
}
