/*
 * A comparison's runs and its per-row analysis; the caliber check is in
 * compare_caliber.c, reading and pairing rows in compare_rows.c.
 */
#include "compare/compare.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "compare/compare_int.h"
#include "compare/stats_tests.h"
#include "lib/clock_reasons.h"
#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/parallel.h"
#include "lib/paths.h"
#include "rundir/identity.h"
#include "rundir/markers.h"
#include "rundir/results_file.h"
#include "rundir/rundir.h"

const char *const compare_kind_name[COMPARE_KINDS] = { "gems", "torch" };

const char *const compare_flagged_markers[] = {
	MARKER_DIRECT,
	MARKER_MEMCPY_NODES,
	MARKER_REPLAY_FALLBACK,
	MARKER_K_DIFFERS,
	MARKER_NO_KERNELS,
	NULL,
};

/* A graph without a kernel node measured nothing: no verdict at all. */
const char *const compare_excluding_markers[] = {
	MARKER_NO_KERNELS,
	NULL,
};

void compare_init(struct compare *c, const struct compare_opts *o)
{
	memset(c, 0, sizeof(*c));
	c->opts = *o;
	c->side[0].name = "A";
	c->side[1].name = "B";
	strvec_init(&c->caliber_problems);
	strvec_init(&c->warnings);
	strvec_init(&c->notes);
	c->caliber_fields = json_array();
}

static void rounds_release(struct compare_rounds *r)
{
	for (size_t i = 0; i < r->nr; i++) {
		free((double *)r->set[i].x);
		free((double *)r->set[i].place_draws);
	}
	free(r->set);
}

void compare_release(struct compare *c)
{
	for (int s = 0; s < 2; s++) {
		for (size_t i = 0; i < c->side[s].nr; i++) {
			struct compare_run *r = &c->side[s].runs[i];
			free(r->dir);
			json_decref(r->identity);
			free(r->identity_error);
		}
		free(c->side[s].runs);
	}
	for (size_t i = 0; i < c->nr_rows; i++) {
		struct compare_row *row = &c->rows[i];
		free(row->op);
		free(row->op_name);
		free(row->dtype);
		free(row->shape);
		free(row->key);
		for (int s = 0; s < 2; s++) {
			strvec_clear(&row->side[s].statuses);
			strvec_clear(&row->side[s].markers);
			strvec_clear(&row->side[s].timers);
			strvec_clear(&row->side[s].ks);
			strvec_clear(&row->side[s].fallbacks);
			strvec_clear(&row->side[s].fallback_from);
			for (int k = 0; k < COMPARE_KINDS; k++)
				rounds_release(&row->side[s].r[k]);
		}
	}
	free(c->rows);
	free(c->map);
	strvec_clear(&c->caliber_problems);
	strvec_clear(&c->warnings);
	strvec_clear(&c->notes);
	json_decref(c->caliber_fields);
	free(c->elasticity_from);
	memset(c, 0, sizeof(*c));
}

/* ---- runs ---------------------------------------------------------------- */

static void add_run(struct compare_side *side, const char *dir)
{
	struct compare_run *r;

	if (side->nr == side->alloc) {
		side->alloc = side->alloc ? 2 * side->alloc : 4;
		side->runs = xrealloc(side->runs, side->alloc * sizeof(*side->runs));
	}
	r = &side->runs[side->nr++];
	memset(r, 0, sizeof(*r));
	r->dir = xstrdup(dir);
}

int compare_add_path(struct compare *c, int s, const char *path)
{
	struct strvec runs = STRVEC_INIT;
	int found;

	if (!is_dir(path))
		return -1;
	found = rundir_find(path, rundir_is_run, &runs);
	for (size_t i = 0; i < runs.nr; i++)
		add_run(&c->side[s], runs.v[i]);
	strvec_clear(&runs);
	return found;
}

const char *compare_duplicate_run(const struct compare *c)
{
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c->side[s].nr; i++)
			for (int t = s; t < 2; t++)
				for (size_t j = t == s ? i + 1 : 0; j < c->side[t].nr; j++)
					if (!strcmp(c->side[s].runs[i].dir, c->side[t].runs[j].dir))
						return c->side[s].runs[i].dir;
	return NULL;
}


/* ---- analysis -------------------------------------------------------------- */

static int has_marker_of(const char *const *list, const struct strvec *m)
{
	for (const char *const *f = list; *f; f++)
		if (strvec_find(m, *f) >= 0)
			return 1;
	return 0;
}

/*
 * Graph-timed rows whose sides captured different numbers of calls per
 * replay (K). K follows from each process's estimate of a call's cost, so
 * a call near a power-of-two boundary can get another K in another run,
 * and for ~1 us kernels K alone moves the per-call time: another caliber.
 */
static void mark_k_difference(struct compare_row *row)
{
	struct strvec *a = &row->side[0].ks, *b = &row->side[1].ks;
	int same = a->nr == b->nr;

	if (!a->nr || !b->nr)
		return;
	strvec_sort(a);
	strvec_sort(b);
	for (size_t i = 0; same && i < a->nr; i++)
		same = !strcmp(a->v[i], b->v[i]);
	if (same)
		return;
	strvec_push_unique(&row->side[0].markers, MARKER_K_DIFFERS);
	strvec_push_unique(&row->side[1].markers, MARKER_K_DIFFERS);
}

/* The statistics of one paired row, both kinds: independent of every other row. */
static void row_statistics(const struct compare *c, struct compare_row *row)
{
	for (int k = 0; k < COMPARE_KINDS; k++) {
		struct stats_cmp_opts so = STATS_CMP_OPTS_INIT;
		struct compare_rounds *a = &row->side[0].r[k], *b = &row->side[1].r[k];

		if (!a->nr || !b->nr)
			continue;
		so.confidence = c->opts.confidence;
		so.drift_floor = c->opts.drift_floor;
		so.nboot = c->opts.nboot;
		so.band = c->opts.threshold;
		/* Each row's own seed: the same numbers however the rows are shared out. */
		so.seed = stats_mix64(c->opts.seed ^ compare_key_hash(row->key) ^ (uint64_t)k);
		if (stats_compare(a->set, a->nr, b->set, b->nr, &so, &row->res[k]))
			continue;
		row->has[k] = 1;
	}
}

/* One paired row of the analysis, for parallel_for. */
struct row_job {
	const struct compare *c;
	const size_t *rows;     /* indices of the paired rows */
};

static void row_job_run(void *ctx, size_t i)
{
	const struct row_job *j = ctx;

	row_statistics(j->c, &j->c->rows[j->rows[i]]);
}

/*
 * Two whole-suite batches are ~11000 rows, each with two bootstraps of
 * 2000 draws: most of zlb compare's time, and every row stands alone
 * (its own seed, its own result), so the rows use every core. The output
 * does not depend on how many threads ran.
 */
#define ROWS_PER_THREAD_MIN 64

/* The first of sorted[0, n) not less than op (upper: greater than op). */
static size_t bound(char *const *sorted, size_t n, const char *op, int upper)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(sorted[mid], op);

		if (d < 0 || (upper && !d))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Each row's op_runs. One sorted list of a side's operators, not a scan of
 * every run for every row: two whole-suite batches are 11000 rows and 1100
 * runs a side, and the scan was a second of zlb compare's five.
 */
static void count_op_runs(struct compare *c)
{
	for (int s = 0; s < 2; s++) {
		struct strvec ops = STRVEC_INIT;

		for (size_t i = 0; i < c->side[s].nr; i++)
			strvec_push(&ops, compare_run_op(&c->side[s].runs[i]));
		strvec_sort(&ops);
		for (size_t r = 0; r < c->nr_rows; r++) {
			struct compare_row *row = &c->rows[r];

			if (!c->by_operator)
				row->side[s].op_runs = ops.nr;
			else
				row->side[s].op_runs = !row->op ? 0 :
					bound(ops.v, ops.nr, row->op, 1) -
					bound(ops.v, ops.nr, row->op, 0);
		}
		strvec_clear(&ops);
	}
}

/*
 * The lowest and highest of the rounds' clocks of one kind (NVML's steady
 * one, or the spin graph's); 0 when some round has none.
 */
static size_t row_clock_range(const struct compare_row *row, int k, int effective,
			      double *lo, double *hi)
{
	size_t n = 0;

	*lo = INFINITY;
	*hi = 0;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < row->side[s].r[k].nr; i++) {
			const struct stats_sample_set *set = &row->side[s].r[k].set[i];
			double mhz = effective ? set->effective_mhz : set->clock_mhz;

			if (!(mhz > 0) || !isfinite(mhz))
				return 0;
			*lo = fmin(*lo, mhz);
			*hi = fmax(*hi, mhz);
			n++;
		}
	return n;
}

int compare_row_clocks(const struct compare_row *row, int k, double *lo, double *hi)
{
	return row_clock_range(row, k, 0, lo, hi) >= 2 && *hi > *lo * (1 + COMPARE_CLOCK_SPREAD);
}

int compare_row_effective_clocks(const struct compare_row *row, int k, double *lo, double *hi)
{
	return row_clock_range(row, k, 1, lo, hi) >= 2 && *hi > *lo + STATS_CLOCK_STEP_MHZ;
}

int compare_row_control_moved_too(const struct compare_row *row)
{
	enum stats_verdict g = row->verdict[COMPARE_GEMS];

	return row->paired && !row->excluded && row->has[COMPARE_GEMS] &&
	       row->has[COMPARE_TORCH] && (g == STATS_SLOWER || g == STATS_FASTER) &&
	       row->verdict[COMPARE_TORCH] == g;
}

size_t compare_row_rounds_needed(const struct compare_row *row)
{
	const struct stats_cmp *g = &row->res[COMPARE_GEMS];

	if (!row->paired || row->excluded || !row->has[COMPARE_GEMS] || !g->ok ||
	    row->verdict[COMPARE_GEMS] != STATS_UNSURE)
		return 0;
	return g->rounds_needed > g->ka || g->rounds_needed > g->kb ? g->rounds_needed : 0;
}

const char *compare_row_clock_limit(const struct compare_row *row, int k, int s)
{
	unsigned long long bits = row->side[s].clock_reasons[k];

	if (bits & (NVML_REASON_SW_POWER_CAP | NVML_REASON_HW_POWER_BRAKE))
		return "power cap";
	if (bits & (NVML_REASON_SW_THERMAL | NVML_REASON_HW_THERMAL))
		return "thermal";
	if (bits & NVML_REASON_HW_SLOWDOWN)
		return "hw slowdown";
	return NULL;
}

void compare_analyse(struct compare *c)
{
	size_t *paired_rows = xmalloc((c->nr_rows ? c->nr_rows : 1) * sizeof(size_t));
	size_t npaired = 0;
	double *p = xmalloc((c->nr_rows ? c->nr_rows : 1) * sizeof(double));
	double *q = xmalloc((c->nr_rows ? c->nr_rows : 1) * sizeof(double));
	size_t *idx = xmalloc((c->nr_rows ? c->nr_rows : 1) * sizeof(size_t));

	for (size_t i = 0; i < c->nr_rows; i++) {
		struct compare_row *row = &c->rows[i];
		int in_a = row->side[0].present > 0, in_b = row->side[1].present > 0;

		mark_k_difference(row);
		row->fallback = has_marker_of(compare_flagged_markers, &row->side[0].markers) ||
				has_marker_of(compare_flagged_markers, &row->side[1].markers);
		row->excluded = has_marker_of(compare_excluding_markers, &row->side[0].markers) ||
				has_marker_of(compare_excluding_markers, &row->side[1].markers);
		if (!in_a || !in_b) {
			row->unpaired_reason = in_a ? "only in A" : "only in B";
			*(in_a ? &c->only_a : &c->only_b) += 1;
			continue;
		}
		if (!row->side[0].success || !row->side[1].success) {
			row->unpaired_reason = !row->side[0].success && !row->side[1].success ?
				"not SUCCESS in A nor in B" :
				!row->side[0].success ? "not SUCCESS in A" : "not SUCCESS in B";
			c->not_success++;
			continue;
		}
		row->paired = 1;
		c->paired++;
		c->fallback_rows += row->fallback;
		c->excluded_rows += row->excluded;
		paired_rows[npaired++] = i;
	}
	count_op_runs(c);
	{
		struct row_job j = { c, paired_rows };
		parallel_for(npaired, ROWS_PER_THREAD_MIN, row_job_run, &j);
	}
	for (size_t j = 0; j < npaired; j++)
		for (int k = 0; k < COMPARE_KINDS; k++) {
			const struct compare_row *row = &c->rows[paired_rows[j]];
			if (row->has[k] && (row->res[k].ka == 1 || row->res[k].kb == 1))
				c->single_round_rows = 1;
		}
	free(paired_rows);
	/* Benjamini-Hochberg per kind over the rows not excluded, then verdicts */
	for (int k = 0; k < COMPARE_KINDS; k++) {
		size_t m = 0;

		for (size_t i = 0; i < c->nr_rows; i++)
			if (c->rows[i].excluded)
				c->rows[i].q[k] = NAN;
			else if (c->rows[i].has[k]) {
				idx[m] = i;
				p[m++] = c->rows[i].res[k].p;
			}
		stats_bh_adjust(p, m, q);
		for (size_t j = 0; j < m; j++) {
			struct compare_row *row = &c->rows[idx[j]];

			row->q[k] = q[j];
			row->verdict[k] = stats_verdict(&row->res[k], q[j], c->opts.fdr,
							c->opts.threshold);
			c->counts[k].n[row->verdict[k]]++;
			c->counts[k].compared++;
		}
	}
	c->regression = c->counts[COMPARE_GEMS].n[STATS_SLOWER] > 0;
	free(p);
	free(q);
	free(idx);
}
