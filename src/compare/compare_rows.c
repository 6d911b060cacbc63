/* A comparison's rows: results.jsonl and events.jsonl of every run, paired by key. */
#include "compare/compare.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "compare/compare_int.h"
#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/parallel.h"
#include "lib/paths.h"
#include "rundir/identity.h"
#include "rundir/markers.h"
#include "rundir/replay_fallbacks.h"
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

struct compare_row *compare_find_row(struct compare *c, const char *key)
{
	size_t h;

	if (!c->map_cap)
		return NULL;
	h = compare_key_hash(key) & (c->map_cap - 1);
	while (c->map[h] != SIZE_MAX) {
		if (!strcmp(c->rows[c->map[h]].key, key))
			return &c->rows[c->map[h]];
		h = (h + 1) & (c->map_cap - 1);
	}
	return NULL;
}

/* The row of key, created when new. */
static struct compare_row *row_for(struct compare *c, const char *key, int *created)
{
	size_t h;
	struct compare_row *row = compare_find_row(c, key);

	*created = 0;
	if (row)
		return row;
	if (2 * (c->nr_rows + 1) > c->map_cap)
		map_grow(c);
	h = compare_key_hash(key) & (c->map_cap - 1);
	while (c->map[h] != SIZE_MAX)
		h = (h + 1) & (c->map_cap - 1);
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
		strvec_init(&row->side[s].fallbacks);
		strvec_init(&row->side[s].fallback_from);
		for (int k = 0; k < COMPARE_KINDS; k++)
			row->side[s].duty[k] = 1;
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
static size_t measurement_samples(const struct results_row *rr, const json_t *meas,
				  const char *latency_key, double **out, size_t *strata)
{
	const json_t *row = rr->obj;
	const json_t *s = json_object_get(meas, "samples_ms");
	const json_t *p = json_object_get(meas, "placements");
	size_t n = json_array_size(s), k = 0;
	const double *taken;
	double v;

	*strata = 0;
	if (meas && results_meas_taken(rr, meas, &taken, &n) && n) {
		/* read by the walker (RESULTS_TAKE_SAMPLES): every one a number */
		*out = xmalloc(n * sizeof(double));
		memcpy(*out, taken, n * sizeof(double));
		if (json_is_integer(p) && json_integer_value(p) > 1)
			*strata = (size_t)json_integer_value(p);
		return n;
	}
	if (n && json_is_array(s)) {
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

/*
 * Loading is two steps: every run's files are read and parsed into a
 * loaded_run (on every core: two whole-suite batches are 2200 runs and
 * ~9 million sample values, most of zlb compare's time was this parse),
 * then merged into the rows in run order (one thread: first-seen order and
 * every count are those of a serial read).
 */
struct loaded_meas {
	int present;
	struct strvec markers;          /* the measurement's own (results_meas_markers) */
	char *timer_owned;              /* its timer, or NULL */
	int has_k;
	long long k;
	double *x;                      /* samples (owned until merged) */
	size_t n, strata;
	double place_sd;
	size_t place_df;
	double *draws;                  /* placement_probe_draws (owned until merged) */
	size_t ndraws;
	double clock_mhz;               /* its steady SM clock, 0 when not read */
	double clock_wander;            /* stats_clock_wander of its clock readings */
	double effective_mhz;           /* its spin graph's clock (_spin.py), 0 when not read */
	double elasticity, elasticity_se; /* its clock_elasticity (_elasticity.py) */
	size_t elasticity_n;            /* pairs it was read on; 0: not read */
	unsigned long long clock_reasons; /* NVML_REASON_* bits of its clock_reasons */
	double power_duty;              /* its power_duty; 1 when absent or not a fraction */
};

struct loaded_row {
	char *key, *op, *op_name, *dtype, *shape, *status, *nodeid;
	struct strvec markers;          /* the row's markers */
	struct loaded_meas m[COMPARE_KINDS];
	/* its replay fallbacks, "<reason>:<kernel>", and where each was found */
	struct strvec fb, fb_from;
	size_t fb_own;                  /* the first fb_own: its measurements' own */
};

struct loaded_run {
	struct loaded_row *rows;
	size_t nr, alloc;
	struct replay_fallbacks fb;     /* its AUTOTUNE_REPLAY_FALLBACK events */
	size_t skipped_lines;
	int rc;                         /* results_each's */
};

/*
 * AUTOTUNE_REPLAY_FALLBACK events (events.jsonl). Which rows one touches is
 * settled once the rows are read (resolve_fallbacks).
 */
static int load_event(void *vctx, json_t *obj, size_t lineno)
{
	struct loaded_run *lr = vctx;
	const char *ev = json_str(obj, "event");

	if (ev && !strcmp(ev, MARKER_REPLAY_FALLBACK))
		replay_fallbacks_add(&lr->fb, obj);
	(void)lineno;
	return 0;
}

/* Add point, found at from, to a row's fallbacks (each pair once). */
static void add_fallback(struct strvec *fb, struct strvec *from, const char *point,
			 const char *where)
{
	for (size_t i = 0; i < fb->nr; i++)
		if (!strcmp(fb->v[i], point) && !strcmp(from->v[i], where))
			return;
	strvec_push(fb, point);
	strvec_push(from, where);
}

/* Does a row of node carry point in its own measurements' replay_fallbacks? */
static int node_carries(void *vlr, const char *node, const char *point)
{
	const struct loaded_run *lr = vlr;

	for (size_t i = 0; i < lr->nr; i++) {
		const struct loaded_row *row = &lr->rows[i];

		if (!row->nodeid || strcmp(row->nodeid, node))
			continue;
		for (size_t j = 0; j < row->fb_own; j++)
			if (!strcmp(row->fb.v[j], point))
				return 1;
	}
	return 0;
}

/*
 * The rows each event touches (replay_fallbacks.h), besides the points a
 * row's measurements carry themselves (read by load_row): "run" or "test".
 */
static void resolve_fallbacks(struct loaded_run *lr)
{
	for (size_t e = 0; e < lr->fb.nr; e++) {
		const struct replay_fallback *f = &lr->fb.v[e];
		enum replay_fallback_scope scope = replay_fallback_scope(f, node_carries, lr);

		if (scope == REPLAY_FALLBACK_OWN)
			continue;
		for (size_t i = 0; i < lr->nr; i++) {
			struct loaded_row *row = &lr->rows[i];

			if (scope == REPLAY_FALLBACK_RUN)
				add_fallback(&row->fb, &row->fb_from, f->point, "run");
			else if (row->nodeid && !strcmp(row->nodeid, f->node))
				add_fallback(&row->fb, &row->fb_from, f->point, "test");
		}
	}
}

static const char *latency_key[COMPARE_KINDS] = { "latency_ms", "latency_base_ms" };

static int load_row(void *vctx, const struct results_row *rr, size_t lineno)
{
	struct loaded_run *lr = vctx;
	struct loaded_row *row;
	struct strbuf key = STRBUF_INIT;

	if (lr->nr == lr->alloc) {
		lr->alloc = lr->alloc ? 2 * lr->alloc : 16;
		lr->rows = xrealloc(lr->rows, lr->alloc * sizeof(*lr->rows));
	}
	row = &lr->rows[lr->nr++];
	memset(row, 0, sizeof(*row));
	strbuf_addf(&key, "%s%c%s%c%s%c%s", rr->op, 0x1f, rr->op_name, 0x1f, rr->dtype, 0x1f,
		    rr->shape);
	row->key = strbuf_detach(&key, NULL);
	row->op = xstrdup(rr->op);
	row->op_name = xstrdup(rr->op_name);
	row->dtype = xstrdup(rr->dtype);
	row->shape = xstrdup(rr->shape);
	row->status = rr->status ? xstrdup(rr->status) : NULL;
	row->nodeid = rr->nodeid ? xstrdup(rr->nodeid) : NULL;
	strvec_init(&row->markers);
	collect_markers(&row->markers, json_object_get(rr->obj, "markers"));
	strvec_init(&row->fb);
	strvec_init(&row->fb_from);
	for (int k = 0; k < COMPARE_KINDS; k++) {
		/* a point both measurements carry is the first one's (gems) */
		results_meas_replay_fallbacks(k == COMPARE_GEMS ? rr->gems : rr->torch, &row->fb);
		while (row->fb_from.nr < row->fb.nr)
			strvec_push(&row->fb_from, compare_kind_name[k]);
	}
	row->fb_own = row->fb.nr;
	if (!rr->status || strcmp(rr->status, "SUCCESS"))
		return 0;
	for (int k = 0; k < COMPARE_KINDS; k++) {
		const json_t *meas = k == COMPARE_GEMS ? rr->gems : rr->torch;
		struct loaded_meas *m = &row->m[k];
		struct stats_sample_set set;

		strvec_init(&m->markers);
		if (meas) {
			const json_t *k_json = json_object_get(meas, "calls_per_replay");

			m->present = 1;
			results_meas_markers(meas, &m->markers);
			m->timer_owned = json_str(meas, "timer") ? xstrdup(json_str(meas, "timer")) : NULL;
			if (json_is_integer(k_json)) {
				m->has_k = 1;
				m->k = (long long)json_integer_value(k_json);
			}
		}
		m->n = measurement_samples(rr, meas, latency_key[k], &m->x, &m->strata);
		if (m->n) {
			compare_meas_placement(meas, &set);
			m->place_sd = set.place_sd;
			m->place_df = set.place_df;
			m->draws = compare_meas_draws(meas, &m->ndraws);
			m->clock_mhz = json_num(meas, "clock_mhz", 0);
			if (!(m->clock_mhz > 0) || !isfinite(m->clock_mhz))
				m->clock_mhz = 0;
			m->clock_wander = compare_meas_clock_wander(meas, m->clock_mhz);
			m->effective_mhz = compare_meas_effective_mhz(meas);
			compare_meas_elasticity(meas, &m->elasticity, &m->elasticity_se, &m->elasticity_n);
			m->clock_reasons = compare_meas_clock_reasons(meas);
			m->power_duty = json_num(meas, "power_duty", 1);
			if (!(m->power_duty > 0 && m->power_duty < 1))
				m->power_duty = 1;
		}
	}
	(void)lineno;
	return 0;
}

static void read_run(const struct compare_run *r, struct loaded_run *lr)
{
	char *path = path_join(r->dir, EVENTS_FILE);
	size_t skipped;
	int rc = jsonl_each(path, load_event, lr, &skipped);

	free(path);
	path = path_join(r->dir, RESULTS_FILE);
	if (rc >= 0)
		rc = results_each(path, RESULTS_QUIET_BAD_LINES | RESULTS_TAKE_SAMPLES, load_row, lr,
				  &lr->skipped_lines);
	free(path);
	lr->rc = rc;
	if (rc >= 0)
		resolve_fallbacks(lr);
}

static void loaded_run_release(struct loaded_run *lr)
{
	for (size_t i = 0; i < lr->nr; i++) {
		struct loaded_row *row = &lr->rows[i];

		strvec_clear(&row->fb);
		strvec_clear(&row->fb_from);
		free(row->key);
		free(row->op);
		free(row->op_name);
		free(row->dtype);
		free(row->shape);
		free(row->status);
		free(row->nodeid);
		strvec_clear(&row->markers);
		for (int k = 0; k < COMPARE_KINDS; k++) {
			strvec_clear(&row->m[k].markers);
			free(row->m[k].timer_owned);
			free(row->m[k].x);
			free(row->m[k].draws);
		}
	}
	free(lr->rows);
	replay_fallbacks_clear(&lr->fb);
	memset(lr, 0, sizeof(*lr));
}

/* One loaded row into the comparison's rows, as the serial reader did. */
static void merge_row(struct compare *c, int s, size_t run, struct compare_run *r,
		      struct loaded_row *lrow)
{
	struct compare_row *row;
	int created;

	row = row_for(c, lrow->key, &created);
	if (created) {
		row->op = xstrdup(lrow->op);
		row->op_name = xstrdup(lrow->op_name);
		row->dtype = xstrdup(lrow->dtype);
		row->shape = xstrdup(lrow->shape);
	}
	r->rows++;
	if (row->side[s].last_run == run + 1) {
		r->duplicates++;	/* the same key twice in one run: keep the first */
		return;
	}
	row->side[s].last_run = run + 1;
	row->side[s].present++;
	strvec_push_unique(&row->side[s].statuses, lrow->status ? lrow->status : "(none)");
	for (size_t i = 0; i < lrow->markers.nr; i++)
		strvec_push_unique(&row->side[s].markers, lrow->markers.v[i]);
	for (size_t i = 0; i < lrow->fb.nr; i++)
		add_fallback(&row->side[s].fallbacks, &row->side[s].fallback_from, lrow->fb.v[i],
			     lrow->fb_from.v[i]);
	if (lrow->fb.nr)
		strvec_push_unique(&row->side[s].markers, MARKER_REPLAY_FALLBACK);
	if (!lrow->status || strcmp(lrow->status, "SUCCESS"))
		return;
	row->side[s].success++;
	for (int k = 0; k < COMPARE_KINDS; k++) {
		struct loaded_meas *m = &lrow->m[k];
		struct stats_sample_set set;

		if (m->present) {
			for (size_t i = 0; i < m->markers.nr; i++)
				strvec_push_unique(&row->side[s].markers, m->markers.v[i]);
			strvec_push_unique(&row->side[s].timers, m->timer_owned);
			if (m->has_k) {
				char *kk = xstrfmt("%s=%lld", compare_kind_name[k], m->k);
				strvec_push_unique(&row->side[s].ks, kk);
				free(kk);
			}
		}
		if (!m->n)
			continue;
		set.x = m->x;
		set.n = m->n;
		set.strata = m->strata;
		set.place_sd = m->place_sd;
		set.place_df = m->place_df;
		set.place_draws = m->draws;
		set.place_ndraws = m->ndraws;
		set.clock_mhz = m->clock_mhz;
		set.clock_wander = m->clock_wander;
		set.effective_mhz = m->effective_mhz;
		set.elasticity = m->elasticity;
		set.elasticity_se = m->elasticity_se;
		set.elasticity_n = m->elasticity_n;
		row->side[s].clock_reasons[k] |= m->clock_reasons;
		if (m->power_duty < row->side[s].duty[k])
			row->side[s].duty[k] = m->power_duty;
		m->x = NULL;	/* the row owns them now */
		m->draws = NULL;
		push_round(&row->side[s].r[k], &set);
	}
}

/*
 * "A run r0: 3 autotune points could not be replayed (AUTOTUNE_REPLAY_FALLBACK:
 * 2 key_missing, 1 tuner_missing) and tuned live; ...": the reasons by how
 * many points each, in the order they first came.
 */
static void warn_fallbacks(struct compare *c, int s, const struct compare_run *r,
			   const struct loaded_run *lr)
{
	struct strvec reasons = STRVEC_INIT;
	size_t *count = xcalloc(lr->fb.nr, sizeof(*count));
	struct strbuf sb = STRBUF_INIT;

	for (size_t e = 0; e < lr->fb.nr; e++) {
		const char *p = lr->fb.v[e].point, *colon = strchr(p, ':');
		char *reason = xstrndup(p, colon ? (size_t)(colon - p) : strlen(p));
		int at = strvec_find(&reasons, reason);

		if (at < 0) {
			strvec_push(&reasons, reason);
			at = (int)reasons.nr - 1;
		}
		count[at]++;
		free(reason);
	}
	strbuf_addf(&sb, "%s run %s: %zu autotune point%s could not be replayed "
		    "(AUTOTUNE_REPLAY_FALLBACK:", c->side[s].name, path_basename(r->dir),
		    lr->fb.nr, PLURAL(lr->fb.nr));
	for (size_t i = 0; i < reasons.nr; i++)
		strbuf_addf(&sb, "%s %zu %s", i ? "," : "", count[i], reasons.v[i]);
	strbuf_addf(&sb, ") and tuned live; %s", lr->fb.without_node ?
		    "every row of the run is flagged" : "the rows they touched are flagged");
	strvec_push(&c->warnings, sb.buf);
	strbuf_release(&sb);
	strvec_clear(&reasons);
	free(count);
}

/* The runs to read, for parallel_for: run i's files into out[i]. */
struct read_job {
	struct compare_run **runs;
	struct loaded_run *out;
};

static void read_job_run(void *ctx, size_t i)
{
	struct read_job *j = ctx;

	read_run(j->runs[i], &j->out[i]);
}

int compare_load_results(struct compare *c)
{
	size_t n = c->side[0].nr + c->side[1].nr, at = 0;
	struct read_job w = { xcalloc(n ? n : 1, sizeof(*w.runs)),
			      xcalloc(n ? n : 1, sizeof(*w.out)) };
	int ret = 0;

	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].nr; i++) {
			w.runs[at] = &c->side[s].runs[i];
			at++;
		}
	/* Jansson's hash seed is set once, before any thread parses. */
	json_object_seed(0);
	parallel_for(n, 1, read_job_run, &w);
	at = 0;
	for (int s = 0; s < 2 && !ret; s++)
		for (size_t i = 0; i < c->side[s].nr && !ret; i++, at++) {
			struct compare_run *r = &c->side[s].runs[i];
			struct loaded_run *lr = &w.out[at];

			if (lr->rc < 0) {
				/* Read again here: its error() is this thread's to say. */
				struct loaded_run again = { 0 };
				read_run(r, &again);
				loaded_run_release(&again);
				ret = -1;
				break;
			}
			r->skipped_lines = lr->skipped_lines;
			r->replay_fallbacks = lr->fb.nr;
			for (size_t k = 0; k < lr->nr; k++)
				merge_row(c, s, i, r, &lr->rows[k]);
			r->has_results = lr->rc == 0;
			if (r->skipped_lines) {
				/* Rows lost this way would otherwise read as "only in A". */
				char *msg = xstrfmt("%s run %s: %zu line%s of results.jsonl %s not a "
						    "JSON object (cut short by a crash or a full disk?) "
						    "and %s skipped: the row%s %s held %s missing",
						    c->side[s].name,
						    path_basename(r->dir), r->skipped_lines,
						    r->skipped_lines == 1 ? "" : "s",
						    r->skipped_lines == 1 ? "is" : "are",
						    r->skipped_lines == 1 ? "was" : "were",
						    r->skipped_lines == 1 ? "" : "s",
						    r->skipped_lines == 1 ? "it" : "they",
						    r->skipped_lines == 1 ? "is" : "are");
				strvec_push(&c->warnings, msg);
				free(msg);
			}
			if (r->replay_fallbacks)
				warn_fallbacks(c, s, r, lr);
		}
	for (size_t i = 0; i < n; i++)
		loaded_run_release(&w.out[i]);
	free(w.runs);
	free(w.out);
	return ret;
}
