/*
 * `zlb batch --batch-dir DIR --status`: where a batch stands, read from its
 * files and, for a cluster batch whose last array has not ended, from the
 * cluster and what its tasks wrote so far. Nothing is written: a driver may
 * be following the batch at this very moment (it holds the lock).
 */
#include <stdlib.h>
#include <string.h>

#include "batch/batch.h"
#include "batch/batch_lanes.h"
#include "batch/batch_status.h"
#include "executors/executor.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/uuid_abbrev.h"
#include "rundir/exit_codes.h"

struct view {
	struct op_spec *specs;
	struct op_row *rows;
	size_t nr;
};

static void view_release(struct view *v)
{
	for (size_t i = 0; i < v->nr; i++) {
		opspec_release(&v->specs[i]);
		op_row_release(&v->rows[i]);
	}
	free(v->specs);
	free(v->rows);
}

/* The batch's operators (batch.json "ops") and their rows (ops_status.csv). */
static int view_load(const char *dir, const json_t *bj, struct view *v)
{
	const json_t *ops = json_object_get(bj, "ops"), *o;
	char *path = path_join(dir, "ops_status.csv");
	int *found;
	size_t i;

	v->specs = xcalloc(json_array_size(ops) + 1, sizeof(*v->specs));
	v->rows = xcalloc(json_array_size(ops) + 1, sizeof(*v->rows));
	json_array_foreach(ops, i, o) {
		const char *spec = json_str(o, "spec");

		if (!spec || opspec_parse(&v->specs[v->nr], spec))
			continue;
		op_row_init(&v->rows[v->nr]);
		v->nr++;
	}
	found = xcalloc(v->nr + 1, sizeof(int));
	if (ops_status_read(path, v->specs, v->nr, v->rows, found) < 0)
		warning("%s", last_error());
	free(found);
	free(path);
	return 0;
}

/* Overlay what the tasks of an open round wrote so far. */
static void overlay_tasks(const char *dir, const char *job, size_t ntasks, struct view *v)
{
	struct op_row *rows = xcalloc(v->nr + 1, sizeof(*rows));
	int *found = xcalloc(v->nr + 1, sizeof(int));

	for (size_t t = 0; t < ntasks; t++) {
		char *path = xstrfmt("%s/.tasks/%s_%zu/ops_status.csv", dir, job, t);

		memset(found, 0, (v->nr + 1) * sizeof(int));
		for (size_t i = 0; i < v->nr; i++)
			op_row_init(&rows[i]);
		if (ops_status_read(path, v->specs, v->nr, rows, found) == 0) {
			for (size_t i = 0; i < v->nr; i++)
				if (found[i] && rows[i].status != OP_PENDING)
					op_row_copy(&v->rows[i], &rows[i]);
		}
		for (size_t i = 0; i < v->nr; i++)
			op_row_release(&rows[i]);
		free(path);
	}
	free(rows);
	free(found);
}

/*
 * A batch over several devices: per lane, the card it ran on (name and
 * uuid, shortened as far as the batch's cards stay apart) and the counts
 * of its operators, so a card that fails everything stands out.
 */
static void say_lanes(const struct view *v, struct reporter *rep)
{
	static const enum op_status order[] = { OP_PASS, OP_SKIP, OP_FAIL, OP_TIMEOUT,
		OP_CANCELLED, OP_RUNNING, OP_PENDING };
	struct lane_group *g;
	size_t n = batch_lane_groups(v->rows, v->nr, &g), len;
	const char **uuids = xcalloc(n + 1, sizeof(*uuids));
	struct strbuf sb = STRBUF_INIT;

	if (batch_lane_devices(g, n) < 2)
		goto out;
	for (size_t i = 0; i < n; i++)
		uuids[i] = g[i].gpu_uuid;
	len = uuid_abbrev_len(uuids, n, UUID_ABBREV_MIN);
	for (size_t i = 0; i < n; i++) {
		const char *sep = "";

		strbuf_reset(&sb);
		strbuf_addf(&sb, "  device %d: ", g[i].device);
		if (g[i].gpu || g[i].gpu_uuid) {
			strbuf_addstr(&sb, g[i].gpu ? g[i].gpu : "GPU");
			if (g[i].gpu_uuid)
				strbuf_addf(&sb, " %.*s", (int)len, g[i].gpu_uuid);
		} else {
			strbuf_addstr(&sb, "GPU not recorded yet");
		}
		strbuf_addf(&sb, ": %zu operator(s): ", g[i].ops);
		for (size_t k = 0; k < sizeof(order) / sizeof(*order); k++)
			if (g[i].counts[order[k]]) {
				strbuf_addf(&sb, "%s%zu %s", sep, g[i].counts[order[k]],
					    op_status_name(order[k]));
				sep = ", ";
			}
		report(rep, REPORT_OUT, "%s", sb.buf);
	}
out:
	strbuf_release(&sb);
	free(uuids);
	free(g);
}

/*
 * "b_slow on device 1 in 4242_0": where a running operator is at work. Its
 * row's gpu is an earlier attempt's, which may have been another lane's,
 * so the card is said by the lanes above, not here.
 */
static void say_running(const struct op_spec *spec, const struct op_row *r,
			struct reporter *rep)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "    running: %s", spec->spec);
	if (r->device >= 0)
		strbuf_addf(&sb, " on device %d", r->device);
	if (r->job)
		strbuf_addf(&sb, " in %s", r->job);
	report(rep, REPORT_OUT, "%s", sb.buf);
	strbuf_release(&sb);
}

static void say_tasks(const json_t *bj, const char *job, size_t ntasks, struct reporter *rep)
{
	const char *name = json_str(json_object_get(bj, "options"), "executor");
	const struct executor_ops *xo = name ? executor_find(name) : NULL;
	struct cluster_task *st;
	size_t counts[CLUSTER_UNKNOWN + 1] = { 0 };
	int active;

	if (!xo || !xo->cluster)
		return;
	st = xcalloc(ntasks, sizeof(*st));
	active = xo->cluster->poll(job, st, (int)ntasks);
	if (active < 0) {
		report(rep, REPORT_OUT, "  %s job %s: the cluster could not be asked: %s", name,
		       job, last_error());
		free(st);
		return;
	}
	for (size_t t = 0; t < ntasks; t++)
		counts[st[t].state]++;
	report(rep, REPORT_OUT, "  %s job %s: %zu task(s): %zu pending, %zu running, %zu ended, "
	       "%zu cancelled, %zu timed out, %zu lost, %zu unknown", name, job, ntasks,
	       counts[CLUSTER_PENDING], counts[CLUSTER_RUNNING], counts[CLUSTER_ENDED],
	       counts[CLUSTER_CANCELLED], counts[CLUSTER_TIMEOUT], counts[CLUSTER_LOST],
	       counts[CLUSTER_UNKNOWN]);
	for (size_t t = 0; t < ntasks; t++)
		if (st[t].state != CLUSTER_ENDED)
			report(rep, REPORT_OUT, "    %s_%zu  %s%s%s", job, t, st[t].detail,
			       *st[t].node ? " on " : "", st[t].node);
	free(st);
}

int batch_show_status(const char *dir, struct reporter *rep)
{
	char *path = path_join(dir, "batch.json");
	json_t *bj = NULL, *rounds, *last = NULL;
	struct view v = { 0 };
	size_t counts[OP_STATUSES] = { 0 };
	const char *job = NULL;
	size_t ntasks = 0;

	if (json_read_file(path, &bj)) {
		error("%s cannot be read: %s holds no batch", path, dir);
		free(path);
		return ZLB_EXIT_USAGE;
	}
	free(path);
	view_load(dir, bj, &v);
	rounds = json_object_get(json_object_get(bj, "cluster"), "rounds");
	if (json_array_size(rounds))
		last = json_array_get(rounds, json_array_size(rounds) - 1);
	if (last && json_is_null(json_object_get(last, "ended_at")) && json_str(last, "job")) {
		job = json_str(last, "job");
		ntasks = json_array_size(json_object_get(last, "tasks"));
		overlay_tasks(dir, job, ntasks, &v);
	}
	for (size_t i = 0; i < v.nr; i++)
		counts[v.rows[i].status]++;
	report(rep, REPORT_OUT, "batch %s: %s, executor %s", dir,
	       json_str(bj, "status") ? json_str(bj, "status") : "?",
	       json_str(json_object_get(bj, "options"), "executor") ?
	       json_str(json_object_get(bj, "options"), "executor") : "?");
	report(rep, REPORT_OUT, "  %zu operator(s): %zu PASS, %zu SKIP, %zu FAIL, %zu TIMEOUT, "
	       "%zu CANCELLED, %zu RUNNING, %zu PENDING", v.nr, counts[OP_PASS], counts[OP_SKIP],
	       counts[OP_FAIL], counts[OP_TIMEOUT], counts[OP_CANCELLED], counts[OP_RUNNING],
	       counts[OP_PENDING]);
	say_lanes(&v, rep);
	for (size_t i = 0; i < v.nr; i++)
		if (v.rows[i].status == OP_RUNNING)
			say_running(&v.specs[i], &v.rows[i], rep);
	if (job)
		say_tasks(bj, job, ntasks, rep);
	else if (json_array_size(rounds))
		report(rep, REPORT_OUT, "  %zu array(s) submitted, the last (job %s) has ended",
		       json_array_size(rounds), json_str(last, "job") ? json_str(last, "job") : "?");
	view_release(&v);
	json_decref(bj);
	return 0;
}
