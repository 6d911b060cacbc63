/* A comparison's rows: results.jsonl and events.jsonl of every run, paired by key. */
#include "compare/compare.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "compare/compare_int.h"
#include "compare/stats_tests.h"
#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "rundir/identity.h"
#include "rundir/markers.h"
#include "rundir/results_file.h"
#include "rundir/rundir.h"

/* ---- results --------------------------------------------------------------- */

uint64_t compare_key_hash(const char *key)
{
	return XXH3_64bits(key, strlen(key));
}

static void map_grow(struct compare *c)
{
	size_t cap = c->map_cap ? 2 * c->map_cap : 256;
	size_t *m = xmalloc(cap * sizeof(*m));

	for (size_t i = 0; i < cap; i++)
		m[i] = SIZE_MAX;
	for (size_t r = 0; r < c->nr_rows; r++) {
		size_t h = compare_key_hash(c->rows[r].key) & (cap - 1);
		while (m[h] != SIZE_MAX)
			h = (h + 1) & (cap - 1);
		m[h] = r;
	}
	free(c->map);
	c->map = m;
	c->map_cap = cap;
}

/* The row of key, created when new. */
static struct compare_row *row_for(struct compare *c, const char *key, int *created)
{
	size_t h;
	struct compare_row *row;

	*created = 0;
	if (2 * (c->nr_rows + 1) > c->map_cap)
		map_grow(c);
	h = compare_key_hash(key) & (c->map_cap - 1);
	while (c->map[h] != SIZE_MAX) {
		if (!strcmp(c->rows[c->map[h]].key, key))
			return &c->rows[c->map[h]];
		h = (h + 1) & (c->map_cap - 1);
	}
	if (c->nr_rows == c->alloc_rows) {
		c->alloc_rows = c->alloc_rows ? 2 * c->alloc_rows : 64;
		c->rows = xrealloc(c->rows, c->alloc_rows * sizeof(*c->rows));
	}
	row = &c->rows[c->nr_rows];
	memset(row, 0, sizeof(*row));
	row->key = xstrdup(key);
	for (int s = 0; s < 2; s++) {
		strvec_init(&row->side[s].statuses);
		strvec_init(&row->side[s].markers);
		strvec_init(&row->side[s].timers);
		strvec_init(&row->side[s].ks);
	}
	c->map[h] = c->nr_rows++;
	*created = 1;
	return row;
}

static void push_round(struct compare_rounds *r, const struct stats_sample_set *set)
{
	if (r->nr == r->alloc) {
		r->alloc = r->alloc ? 2 * r->alloc : 4;
		r->set = xrealloc(r->set, r->alloc * sizeof(*r->set));
	}
	r->set[r->nr++] = *set;
}

/*
 * What the measurement says of its own placement drift: placement_sd over
 * 1 + placement_probes graphs (docs/protocol.md section 3). Anything else
 * (absent, null, negative, no probe) leaves the set without one.
 */
static void measurement_placement(const json_t *meas, struct stats_sample_set *set)
{
	const json_t *sd = json_object_get(meas, "placement_sd");
	const json_t *probes = json_object_get(meas, "placement_probes");

	set->place_sd = 0;
	set->place_df = 0;
	if (json_is_number(sd) && json_number_value(sd) >= 0 && isfinite(json_number_value(sd)) &&
	    json_is_integer(probes) && json_integer_value(probes) > 0) {
		set->place_sd = json_number_value(sd);
		set->place_df = (size_t)json_integer_value(probes);
	}
}

static void collect_markers(struct strvec *out, const json_t *markers)
{
	size_t i;
	json_t *m;

	json_array_foreach((json_t *)markers, i, m)
		strvec_push_unique(out, json_string_value(m));
}

/*
 * The samples of one measurement: samples_ms when present (the engine's raw
 * per-call times, *strata the placements they ran on round-robin when every
 * one is a number), else the centre_ms (median_ms before it existed), else
 * the row's latency (one value).
 */
static size_t measurement_samples(const json_t *meas, const json_t *row, const char *latency_key,
				  double **out, size_t *strata)
{
	const json_t *s = json_object_get(meas, "samples_ms");
	const json_t *p = json_object_get(meas, "placements");
	size_t n = json_array_size(s), k = 0;
	double v;

	*strata = 0;
	if (n) {
		*out = xmalloc(n * sizeof(double));
		for (size_t i = 0; i < n; i++) {
			json_t *e = json_array_get(s, i);
			if (json_is_number(e))
				(*out)[k++] = json_number_value(e);
		}
		/* A gap would put later samples on the wrong placement. */
		if (k == n && json_is_integer(p) && json_integer_value(p) > 1)
			*strata = (size_t)json_integer_value(p);
		if (k)
			return k;
		free(*out);
	}
	v = json_num(meas, "centre_ms", NAN);
	if (!isfinite(v))
		v = json_num(meas, "median_ms", NAN);
	if (!isfinite(v))
		v = json_num(row, latency_key, NAN);
	if (!isfinite(v) || v <= 0) {
		*out = NULL;
		return 0;
	}
	*out = xmalloc(sizeof(double));
	(*out)[0] = v;
	return 1;
}

struct load_ctx {
	struct compare *c;
	int side;
	size_t run;		/* index in the side */
	struct compare_run *r;
	struct strvec fallback_nodes;	/* nodeids with AUTOTUNE_REPLAY_FALLBACK events */
	int fallback_all;		/* one without a nodeid: every row of the run */
};

/*
 * AUTOTUNE_REPLAY_FALLBACK is an event (events.jsonl), tied to the test
 * node that was running, not to a row: every row of that node is flagged
 * (which of its shapes used the point cannot be told), every row of the run
 * when the event has no node (a recorded tuner that never appeared).
 */
static int load_event(void *vctx, json_t *obj, size_t lineno)
{
	struct load_ctx *ctx = vctx;
	const char *ev = json_str(obj, "event"), *node = json_str(obj, "nodeid");

	if (!ev || strcmp(ev, MARKER_REPLAY_FALLBACK))
		return 0;
	ctx->r->replay_fallbacks++;
	if (!node || !*node)
		ctx->fallback_all = 1;
	else if (strvec_find(&ctx->fallback_nodes, node) < 0)
		strvec_push(&ctx->fallback_nodes, node);
	(void)lineno;
	return 0;
}

static const char *latency_key[COMPARE_KINDS] = { "latency_ms", "latency_base_ms" };

static int load_row(void *vctx, const struct results_row *row_in, size_t lineno)
{
	struct load_ctx *ctx = vctx;
	struct results_row rr = *row_in;
	const json_t *obj = rr.obj;
	struct strbuf key = STRBUF_INIT;
	struct compare_row *row;
	int created;
	strbuf_addf(&key, "%s%c%s%c%s%c%s", rr.op, 0x1f, rr.op_name, 0x1f, rr.dtype, 0x1f,
		    rr.shape);
	row = row_for(ctx->c, key.buf, &created);
	strbuf_release(&key);
	if (created) {
		row->op = xstrdup(rr.op);
		row->op_name = xstrdup(rr.op_name);
		row->dtype = xstrdup(rr.dtype);
		row->shape = xstrdup(rr.shape);
	}
	ctx->r->rows++;
	if (row->side[ctx->side].last_run == ctx->run + 1) {
		ctx->r->duplicates++;	/* the same key twice in one run: keep the first */
		return 0;
	}
	row->side[ctx->side].last_run = ctx->run + 1;
	row->side[ctx->side].present++;
	strvec_push_unique(&row->side[ctx->side].statuses, rr.status ? rr.status : "(none)");
	collect_markers(&row->side[ctx->side].markers, json_object_get(obj, "markers"));
	if (ctx->fallback_all || (rr.nodeid &&
				  strvec_find(&ctx->fallback_nodes, rr.nodeid) >= 0))
		strvec_push_unique(&row->side[ctx->side].markers, MARKER_REPLAY_FALLBACK);
	if (!rr.status || strcmp(rr.status, "SUCCESS"))
		return 0;
	row->side[ctx->side].success++;
	for (int k = 0; k < COMPARE_KINDS; k++) {
		const json_t *meas = k == COMPARE_GEMS ? rr.gems : rr.torch;
		struct stats_sample_set set;
		double *x;
		size_t n, strata;

		if (meas) {
			const json_t *k_json = json_object_get(meas, "calls_per_replay");

			results_meas_markers(meas, &row->side[ctx->side].markers);
			strvec_push_unique(&row->side[ctx->side].timers, json_str(meas, "timer"));
			if (json_is_integer(k_json)) {
				char *kk = xstrfmt("%s=%lld", compare_kind_name[k],
						   (long long)json_integer_value(k_json));
				strvec_push_unique(&row->side[ctx->side].ks, kk);
				free(kk);
			}
		}
		n = measurement_samples(meas, obj, latency_key[k], &x, &strata);
		if (!n)
			continue;
		set.x = x;
		set.n = n;
		set.strata = strata;
		measurement_placement(meas, &set);
		push_round(&row->side[ctx->side].r[k], &set);
	}
	(void)lineno;
	return 0;
}

int compare_load_results(struct compare *c)
{
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].nr; i++) {
			struct compare_run *r = &c->side[s].runs[i];
			char *path = path_join(r->dir, EVENTS_FILE);
			struct load_ctx ctx = { c, s, i, r, STRVEC_INIT, 0 };
			size_t skipped;
			int rc = jsonl_each(path, load_event, &ctx, &skipped);

			free(path);
			path = path_join(r->dir, RESULTS_FILE);
			if (rc >= 0)
				rc = results_each(path, RESULTS_QUIET_BAD_LINES, load_row, &ctx,
						  &r->skipped_lines);
			free(path);
			strvec_clear(&ctx.fallback_nodes);
			if (rc < 0)
				return -1;
			r->has_results = rc == 0;
			if (r->replay_fallbacks) {
				char *w = xstrfmt("%s run %s: %zu autotune point%s could not be "
						  "replayed (AUTOTUNE_REPLAY_FALLBACK) and tuned live; "
						  "the rows of %s test%s are flagged", c->side[s].name,
						  path_basename(r->dir), r->replay_fallbacks,
						  r->replay_fallbacks == 1 ? "" : "s",
						  ctx.fallback_all ? "every" : "its",
						  ctx.fallback_all ? "" : "s");
				strvec_push(&c->warnings, w);
				free(w);
			}
		}
	return 0;
}

