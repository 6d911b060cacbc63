/* Which rows a comparison's report shows, and in what order (compare_report.h). */
#include "compare/compare_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare_int.h"

const char *const compare_sort_names[] = { "ratio", "q", "name", NULL };

static int changed(const struct compare_row *row)
{
	return row->paired && !row->excluded && row->has[COMPARE_GEMS] &&
	       (row->verdict[COMPARE_GEMS] == STATS_SLOWER ||
		row->verdict[COMPARE_GEMS] == STATS_FASTER);
}

/* The number a row sorts by, or NAN when it has none (it goes last). */
static double sort_key(const struct compare_row *row, enum compare_sort by)
{
	if (!row->has[COMPARE_GEMS] || !row->res[COMPARE_GEMS].ok)
		return NAN;
	/* largest ratio first: sort its negation up */
	return by == COMPARE_SORT_RATIO ? -row->res[COMPARE_GEMS].ratio : row->q[COMPARE_GEMS];
}

struct sort_ctx {
	const struct compare *c;
	enum compare_sort by;
};

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *ctx = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const struct compare_row *ra = &ctx->c->rows[a], *rb = &ctx->c->rows[b];
	int r = 0;

	if (ctx->by == COMPARE_SORT_NAME) {
		if (!(r = strcmp(ra->op, rb->op)) && !(r = strcmp(ra->op_name, rb->op_name)) &&
		    !(r = strcmp(ra->dtype, rb->dtype)))
			r = strcmp(ra->shape, rb->shape);
	} else {
		double ka = sort_key(ra, ctx->by), kb = sort_key(rb, ctx->by);

		if (isnan(ka) || isnan(kb))
			r = isnan(ka) - isnan(kb);
		else
			r = ka < kb ? -1 : ka > kb;
	}
	return r ? r : a < b ? -1 : a > b;
}

size_t compare_view_rows(const struct compare *c, const struct compare_view *v, size_t **idx)
{
	size_t n = 0, npaired;

	*idx = xcalloc(c->nr_rows + 1, sizeof(**idx));
	if (!v || (!v->only_changed && v->sort == COMPARE_SORT_NONE)) {
		for (size_t i = 0; i < c->nr_rows; i++)
			(*idx)[n++] = i;
		return n;
	}
	for (size_t i = 0; i < c->nr_rows; i++)
		if (c->rows[i].paired && (!v->only_changed || changed(&c->rows[i])))
			(*idx)[n++] = i;
	npaired = n;
	if (v->sort != COMPARE_SORT_NONE && npaired > 1) {
		struct sort_ctx ctx = { c, v->sort };

		qsort_r(*idx, npaired, sizeof(**idx), cmp_rows, &ctx);
	}
	if (!v->only_changed)
		for (size_t i = 0; i < c->nr_rows; i++)
			if (!c->rows[i].paired)
				(*idx)[n++] = i;
	return n;
}
