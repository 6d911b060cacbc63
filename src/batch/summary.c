/*
 * zlb summary, reading side: which operators a batch holds and their rows
 * (summary.h). The table, summary.json and the terminal report are in
 * summary_out.c.
 */
#include "batch/summary.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/csvfile.h"
#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/safefile.h"
#include "rundir/results_file.h"
#include "rundir/replay_fallbacks.h"
#include "rundir/run_device.h"
#include "rundir/rundir.h"
#include "rundir/markers.h"

void summary_init(struct summary *s)
{
	memset(s, 0, sizeof(*s));
}

static void free_op(struct summary_op *o)
{
	free(o->repo);
	free(o->op);
	free(o->status);
	free(o->status_remarks);
	free(o->run_dir);
	free(o->backend);
	free(o->device);
	free(o->device_uuid);
	free(o->remarks);
}

void summary_release(struct summary *s)
{
	for (size_t i = 0; i < s->nr_ops; i++)
		free_op(&s->ops[i]);
	for (size_t i = 0; i < s->nr_rows; i++) {
		struct summary_row *r = &s->rows[i];

		free(r->op_name);
		free(r->dtype);
		free(r->shape);
		free(r->status);
		free(r->timer);
		free(r->markers);
	}
	free(s->ops);
	free(s->rows);
	free(s->batch);
	memset(s, 0, sizeof(*s));
}

/* ---- the operators --------------------------------------------------------- */

static struct summary_op *add_op(struct summary *s, const char *repo, const char *op)
{
	struct summary_op *o;

	if (s->nr_ops == s->alloc_ops) {
		s->alloc_ops = s->alloc_ops ? 2 * s->alloc_ops : 64;
		s->ops = xrealloc(s->ops, s->alloc_ops * sizeof(*s->ops));
	}
	o = &s->ops[s->nr_ops++];
	memset(o, 0, sizeof(*o));
	o->repo = xstrdup(repo);
	o->op = xstrdup(op);
	return o;
}

/* Is the entry a directory? d_type when the file system gives it, else stat. */
static int entry_is_dir(const char *parent, const struct dirent *e)
{
	char *p;
	int yes;

	if (e->d_type == DT_DIR)
		return 1;
	if (e->d_type != DT_UNKNOWN && e->d_type != DT_LNK)
		return 0;
	p = path_join(parent, e->d_name);
	yes = is_dir(p);
	free(p);
	return yes;
}

/*
 * <batch>/<repo>/<op>/ run directories. Hidden names are skipped (.attempts/
 * holds failed tries, not results); so are names that could not have come
 * from zlb batch.
 */
static void walk_batch(struct summary *s)
{
	DIR *top = opendir(s->batch);
	struct dirent *e;

	if (!top)
		return;
	while ((e = readdir(top))) {
		char *repo_dir;
		DIR *d;
		struct dirent *f;

		if (!name_is_safe(e->d_name) || !entry_is_dir(s->batch, e))
			continue;
		repo_dir = path_join(s->batch, e->d_name);
		d = opendir(repo_dir);
		while (d && (f = readdir(d))) {
			char *run;

			if (!name_is_safe(f->d_name) || !entry_is_dir(repo_dir, f))
				continue;
			run = path_join(repo_dir, f->d_name);
			if (rundir_is_run(run)) {
				struct summary_op *o = add_op(s, e->d_name, f->d_name);

				o->walked = 1;
				o->run_dir = run;
				run = NULL;
			}
			free(run);
		}
		if (d)
			closedir(d);
		free(repo_dir);
	}
	closedir(top);
}

/*
 * The name a listed operator goes by: that of its run directory, as the walk
 * names it. An operator that several files define runs as op@op_file (the
 * spec column, and the run_dir's last part): under its bare op it would
 * miss its directory and merge with its namesake.
 */
static const char *listed_name(const char *repo, const char *op, const char *spec,
			       const char *run_dir)
{
	const char *slash = strchr(run_dir, '/');
	size_t n = strlen(repo);

	if (slash && rel_path_is_safe(run_dir) && (size_t)(slash - run_dir) == n &&
	    !strncmp(run_dir, repo, n) && name_is_safe(slash + 1))
		return slash + 1;
	return *spec && name_is_safe(spec) ? spec : op;
}

static int read_ops_status(struct summary *s)
{
	char *path = path_join(s->batch, OPS_STATUS_CSV);
	struct csv_table t;
	int c_repo, c_op, c_status, c_remarks, c_run, c_spec, c_backend, c_gpu, c_uuid;

	if (access(path, F_OK)) {
		free(path);
		return 0;
	}
	if (csv_read_file(path, &t)) {	/* error() said why */
		error("%s cannot be used; moved aside, the run directories alone would be "
		      "summarised (without statuses)", path);
		free(path);
		return -1;
	}
	c_repo = csv_column(&t, "repo");
	c_op = csv_column(&t, "op");
	c_status = csv_column(&t, "status");
	c_remarks = csv_column(&t, "remarks");
	c_run = csv_column(&t, "run_dir");
	c_spec = csv_column(&t, "spec");
	/* what the batch knew of the card: only where the run's identity says nothing */
	c_backend = csv_column(&t, "backend");
	c_gpu = csv_column(&t, "gpu");		/* version 3 */
	c_uuid = csv_column(&t, "gpu_uuid");
	if (c_op < 0 || c_status < 0) {
		error("%s has no '%s' column: not an ops_status table (its header starts with "
		      "'%s'); moved aside, the run directories alone would be summarised",
		      path, c_op < 0 ? "op" : "status", t.ncols ? t.header[0] : "");
		csv_table_free(&t);
		free(path);
		return -1;
	}
	for (size_t r = 0; r < t.nrows; r++) {
		char **row = t.rows[r];
		const char *repo = c_repo >= 0 && *row[c_repo] ? row[c_repo] : "main";
		struct summary_op *o;

		if (!*row[c_op]) {
			warning("%s: record %zu has no operator; ignored", path, r + 2);
			continue;
		}
		o = add_op(s, repo, listed_name(repo, row[c_op], c_spec >= 0 ? row[c_spec] : "",
						c_run >= 0 ? row[c_run] : ""));
		o->listed = 1;
		o->status = xstrdup(row[c_status]);
		o->status_remarks = xstrdup(c_remarks >= 0 ? row[c_remarks] : "");
		/* kept only as a hint: the run directory on disk is looked up first */
		o->run_dir = c_run >= 0 && *row[c_run] ? xstrdup(row[c_run]) : NULL;
		o->backend = c_backend >= 0 && *row[c_backend] ? xstrdup(row[c_backend]) : NULL;
		o->device = c_gpu >= 0 && *row[c_gpu] ? xstrdup(row[c_gpu]) : NULL;
		o->device_uuid = c_uuid >= 0 && *row[c_uuid] ? xstrdup(row[c_uuid]) : NULL;
	}
	s->has_ops_status = 1;
	csv_table_free(&t);
	free(path);
	return 0;
}

static int cmp_op(const void *va, const void *vb)
{
	const struct summary_op *a = va, *b = vb;
	int c = strcmp(a->repo, b->repo);

	if (!c)
		c = strcmp(a->op, b->op);
	if (!c)		/* the listed line, and of those the later one, first */
		c = (b->listed - a->listed) ? b->listed - a->listed :
		    (a->first_row < b->first_row) - (a->first_row > b->first_row);
	return c;
}

/*
 * One entry per (repo, op): a listed line takes the walked directory; of
 * two listed lines the later (ops_status.csv's last word) wins. Then a
 * listed operator not found on disk tries its run_dir column.
 */
static void merge_ops(struct summary *s)
{
	size_t out = 0;

	/* first_row is free until rows are read: it carries the line order */
	for (size_t i = 0; i < s->nr_ops; i++)
		s->ops[i].first_row = i;
	if (s->nr_ops > 1)
		qsort(s->ops, s->nr_ops, sizeof(*s->ops), cmp_op);
	for (size_t i = 0; i < s->nr_ops; i++) {
		struct summary_op *o = &s->ops[i], *keep = out ? &s->ops[out - 1] : NULL;

		if (keep && !strcmp(keep->repo, o->repo) && !strcmp(keep->op, o->op)) {
			if (o->walked && !keep->walked) {
				keep->walked = 1;
				free(keep->run_dir);
				keep->run_dir = o->run_dir;
				o->run_dir = NULL;
			}
			free_op(o);
			continue;
		}
		if (out != i)
			s->ops[out] = *o;
		out++;
	}
	s->nr_ops = out;
	for (size_t i = 0; i < s->nr_ops; i++) {
		struct summary_op *o = &s->ops[i];

		o->first_row = 0;
		if (o->walked || !o->run_dir)
			continue;
		{
			/*
			 * A path read from the batch's own file is data: it must stay
			 * inside the batch (not absolute, no '..'), or it is not taken.
			 */
			char *p = rel_path_is_safe(o->run_dir) ? path_join(s->batch, o->run_dir)
							       : NULL;

			free(o->run_dir);
			o->run_dir = NULL;
			if (p && rundir_is_run(p))
				o->run_dir = path_absolute(p);
			free(p);
		}
	}
}

/* ---- one operator's files ---------------------------------------------------- */

struct op_ctx {
	struct summary *s;
	struct summary_op *o;
	struct replay_fallbacks fb;	/* the operator's AUTOTUNE_REPLAY_FALLBACK events */
	struct strvec row_nodes;	/* its rows' test nodes, in order ("" for none) */
	struct strvec own;	/* "<node>\t<point>" its rows' measurements carry */
	struct strvec markers;	/* scratch */
	struct strbuf sb;	/* scratch */
};

static int on_fallback(void *vctx, const json_t *ev, size_t lineno)
{
	struct op_ctx *ctx = vctx;

	ctx->o->replay_fallbacks++;
	replay_fallbacks_add(&ctx->fb, ev);
	(void)lineno;
	return 0;
}

/* Note a row's test and the points its own measurements fell back on. */
static void note_row_fallbacks(struct op_ctx *ctx, const struct results_row *rr)
{
	struct strvec points = STRVEC_INIT;

	strvec_push(&ctx->row_nodes, rr->nodeid ? rr->nodeid : "");
	if (!rr->nodeid)
		return;
	results_meas_replay_fallbacks(rr->torch, &points);
	results_meas_replay_fallbacks(rr->gems, &points);
	for (size_t i = 0; i < points.nr; i++) {
		strbuf_reset(&ctx->sb);
		strbuf_addf(&ctx->sb, "%s\t%s", rr->nodeid, points.v[i]);
		strvec_push_unique(&ctx->own, ctx->sb.buf);
	}
	strvec_clear(&points);
}

static int node_carries(void *vctx, const char *node, const char *point)
{
	struct op_ctx *ctx = vctx;
	char *key = xstrfmt("%s\t%s", node, point);
	int found = strvec_find(&ctx->own, key) >= 0;

	free(key);
	return found;
}

/*
 * Once an operator's rows are read: each fallback event marks the rows it
 * touches (replay_fallbacks.h, as zlb compare decides); a row's own
 * measurement already carries the marker.
 */
static void mark_fallbacks(struct op_ctx *ctx, size_t first_row)
{
	for (size_t e = 0; e < ctx->fb.nr; e++) {
		const struct replay_fallback *f = &ctx->fb.v[e];
		enum replay_fallback_scope scope = replay_fallback_scope(f, node_carries, ctx);

		if (scope == REPLAY_FALLBACK_OWN)
			continue;
		for (size_t i = 0; i < ctx->row_nodes.nr; i++) {
			struct summary_row *r = &ctx->s->rows[first_row + i];
			char *m;

			if ((scope == REPLAY_FALLBACK_TEST && strcmp(ctx->row_nodes.v[i], f->node)) ||
			    strstr(r->markers, MARKER_REPLAY_FALLBACK))
				continue;
			m = xstrfmt("%s%s%s", r->markers, *r->markers ? ";" : "",
				    MARKER_REPLAY_FALLBACK);
			free(r->markers);
			r->markers = m;
		}
	}
}

static int is_direct(const json_t *meas)
{
	const char *t = json_str(meas, "timer");
	return t && !strcmp(t, "direct");
}

static int on_row(void *vctx, const struct results_row *rr, size_t lineno)
{
	struct op_ctx *ctx = vctx;
	struct summary *s = ctx->s;
	struct summary_row *r;
	const char *tt = json_str(rr->torch, "timer"), *gt = json_str(rr->gems, "timer");

	if (s->nr_rows == s->alloc_rows) {
		s->alloc_rows = s->alloc_rows ? 2 * s->alloc_rows : 256;
		s->rows = xrealloc(s->rows, s->alloc_rows * sizeof(*s->rows));
	}
	r = &s->rows[s->nr_rows++];
	ctx->o->nr_rows++;
	r->op_name = xstrdup(rr->op_name);
	r->dtype = xstrdup(rr->dtype);
	r->shape = xstrdup(rr->shape);
	r->status = xstrdup(rr->status ? rr->status : "");
	r->torch_ms = rr->latency_base_ms;
	r->gems_ms = rr->latency_ms;
	r->speedup = rr->speedup;

	/* graph first, then direct, then any other timer: "graph+direct" */
	strbuf_reset(&ctx->sb);
	for (int pass = 0; pass < 2; pass++) {
		const char *want = pass ? "direct" : "graph";

		if ((tt && !strcmp(tt, want)) || (gt && !strcmp(gt, want)))
			strbuf_addf(&ctx->sb, "%s%s", ctx->sb.len ? "+" : "", want);
	}
	for (int k = 0; k < 2; k++) {
		const char *t = k ? gt : tt;

		if (!t || !*t || !strcmp(t, "graph") || !strcmp(t, "direct") ||
		    (k && tt && !strcmp(tt, gt)))
			continue;
		strbuf_addf(&ctx->sb, "%s%s", ctx->sb.len ? "+" : "", t);
	}
	r->timer = xstrdup(ctx->sb.buf);

	note_row_fallbacks(ctx, rr);
	strvec_clear(&ctx->markers);
	results_meas_markers(rr->torch, &ctx->markers);
	results_meas_markers(rr->gems, &ctx->markers);
	strbuf_reset(&ctx->sb);
	for (size_t i = 0; i < ctx->markers.nr; i++)
		strbuf_addf(&ctx->sb, "%s%s", i ? ";" : "", ctx->markers.v[i]);
	r->markers = xstrdup(ctx->sb.buf);

	r->not_graph = is_direct(rr->torch) || is_direct(rr->gems) ||
		       strvec_find(&ctx->markers, MARKER_DIRECT) >= 0;
	ctx->o->no_cudagraph_rows += r->not_graph;
	/*
	 * No kernel timed, or the copy engine's, or the two sides timed two
	 * ways: not a kernel's speedup. On the H200 screen the best and worst
	 * speedups were graph against direct rows (reshape_and_cache 1007x:
	 * 2.39 ms eager against 2.4 us replayed), each a ratio of two calibers.
	 */
	if (strvec_find(&ctx->markers, MARKER_NO_KERNELS) >= 0)
		r->unranked = SUMMARY_NO_KERNELS;
	else if (strvec_find(&ctx->markers, MARKER_MEMCPY_NODES) >= 0 ||
		 strvec_find(&ctx->markers, MARKER_MEMSET_NODES) >= 0)
		r->unranked = SUMMARY_COPY_ENGINE;
	else if (tt && gt && *tt && *gt && strcmp(tt, gt))
		r->unranked = SUMMARY_MIXED_TIMERS;
	else
		r->unranked = 0;
	return 0;
}

/* Is key (the text before '=') one of the counts this reader computes itself? */
static int own_remark(const char *remark, size_t len)
{
	static const char *const own[] = { "no_cudagraph_rows", "replay_fallback", NULL };
	const char *eq = memchr(remark, '=', len);
	size_t klen = eq ? (size_t)(eq - remark) : len;

	for (const char *const *k = own; *k; k++)
		if (strlen(*k) == klen && !strncmp(*k, remark, klen))
			return 1;
	return 0;
}

static void op_remarks(struct summary_op *o, int unreadable, int has_ops_status)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;

#define REMARK(...) do { if (sb.len) strbuf_addch(&sb, ';'); strbuf_addf(&sb, __VA_ARGS__); } while (0)
	if (o->no_cudagraph_rows)
		REMARK("no_cudagraph_rows=%zu", o->no_cudagraph_rows);
	if (o->replay_fallbacks)
		REMARK("replay_fallback=%zu", o->replay_fallbacks);
	if (o->bad_lines)
		REMARK("bad_lines=%zu", o->bad_lines);
	if (unreadable)
		REMARK("unreadable_files");
	if (!o->run_dir)
		REMARK("no_run_dir");
	else if (!o->has_results)
		REMARK("no_results");
	if (has_ops_status && !o->listed)
		REMARK("not_in_ops_status");
	/* ops_status.csv's own remarks, less the counts computed above */
	for (p = o->status_remarks ? o->status_remarks : ""; *p; ) {
		size_t len = strcspn(p, ";");

		if (len && !own_remark(p, len))
			REMARK("%.*s", (int)len, p);
		p += len + (p[len] == ';');
	}
#undef REMARK
	o->remarks = strbuf_detach(&sb, NULL);
}

/* Replace *field with value where value is a fact (not NULL). */
static void take(char **field, char *value)
{
	if (!value)
		return;
	free(*field);
	*field = value;
}

/*
 * Where the operator ran, from its run's identity, which outranks
 * ops_status.csv: it is what the run itself recorded. Returns -1 for an
 * identity that cannot be read (error() said why), else 0.
 */
static int read_device(struct summary_op *o)
{
	struct run_device d;
	int r = 0;

	run_device_init(&d);
	if (o->run_dir && (r = run_device_read(o->run_dir, &d)) == 0) {
		take(&o->backend, d.backend);
		take(&o->device, d.gpu_name);
		take(&o->device_uuid, d.gpu_uuid);
		d.backend = d.gpu_name = d.gpu_uuid = NULL;
	}
	run_device_release(&d);
	if (!o->backend)
		o->backend = xstrdup("");
	if (!o->device)
		o->device = xstrdup("");
	if (!o->device_uuid)
		o->device_uuid = xstrdup("");
	return r < 0 ? -1 : 0;
}

static void read_op(struct summary *s, struct summary_op *o, struct op_ctx *ctx)
{
	size_t bad = 0;
	int unreadable = read_device(o) < 0;

	o->first_row = s->nr_rows;
	if (o->run_dir) {
		char *events = path_join(o->run_dir, EVENTS_FILE);
		char *results = path_join(o->run_dir, RESULTS_FILE);
		int rc;

		ctx->o = o;
		replay_fallbacks_clear(&ctx->fb);
		strvec_clear(&ctx->row_nodes);
		strvec_clear(&ctx->own);
		rc = results_events_each(events, MARKER_REPLAY_FALLBACK, on_fallback, ctx, &bad);
		o->bad_lines += bad;
		if (rc < 0)	/* error() said which file; the other operators go on */
			unreadable = 1;
		rc = results_each(results, RESULTS_SKIP_SAMPLES, on_row, ctx, &bad);
		o->bad_lines += bad;
		if (rc < 0)	/* error() said which file; the other operators go on */
			unreadable = 1;
		mark_fallbacks(ctx, o->first_row);
		o->has_results = rc != 1;
		free(events);
		free(results);
	}
	op_remarks(o, unreadable, s->has_ops_status);
	if (!o->status)
		o->status = xstrdup("");
}

int summary_load(struct summary *s, const char *dir)
{
	struct op_ctx ctx = { s, NULL, REPLAY_FALLBACKS_INIT, STRVEC_INIT, STRVEC_INIT,
			      STRVEC_INIT, STRBUF_INIT };

	if (!is_dir(dir))
		return error("'%s' is not a directory", dir);
	s->batch = path_absolute(dir);
	if (read_ops_status(s))
		return -1;
	walk_batch(s);
	if (!s->nr_ops)
		return 1;
	merge_ops(s);
	for (size_t i = 0; i < s->nr_ops; i++) {
		struct summary_op *o = &s->ops[i];

		read_op(s, o, &ctx);
		s->replay_fallbacks += o->replay_fallbacks;
		s->bad_lines += o->bad_lines;
		s->rows_not_graph += o->no_cudagraph_rows;
		s->ops_walked_only += !o->listed;
		s->ops_without_rows += !o->nr_rows;
	}
	for (size_t i = 0; i < s->nr_rows; i++) {
		const struct summary_row *r = &s->rows[i];
		int ok = !strcmp(r->status, "SUCCESS");
		int ranked = ok && isfinite(r->speedup) && r->speedup > 0;

		s->rows_success += ok;
		s->rows_ranked += ranked && !r->unranked;
		s->left_out_no_kernels += ranked && r->unranked == SUMMARY_NO_KERNELS;
		s->left_out_copy_engine += ranked && r->unranked == SUMMARY_COPY_ENGINE;
		s->left_out_mixed_timers += ranked && r->unranked == SUMMARY_MIXED_TIMERS;
	}
	replay_fallbacks_clear(&ctx.fb);
	strvec_clear(&ctx.row_nodes);
	strvec_clear(&ctx.own);
	strvec_clear(&ctx.markers);
	strbuf_release(&ctx.sb);
	return 0;
}
