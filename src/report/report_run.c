/*
 * The run page (report_run.h).
 */
#include "report/report_run.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/strvec.h"
#include "report/html.h"
#include "report/plot.h"
#include "report/report_int.h"
#include "report/report_safe.h"
#include "rundir/exit_codes.h"
#include "rundir/identity.h"
#include "rundir/markers.h"
#include "rundir/results_file.h"

double report_shape_size(const char *shape)
{
	const char *p = shape;
	double total = 0;
	int found = 0;

	while ((p = strstr(p, "Size(["))) {
		double prod = 1;
		int dims = 0;

		p += strlen("Size([");
		while (*p && *p != ']') {
			char *end;
			double d;

			while (*p == ' ' || *p == ',')
				p++;
			if (*p == ']')
				break;
			d = strtod(p, &end);
			if (end == p)
				break;	/* not a number: leave this Size */
			prod *= d;
			dims++;
			p = end;
		}
		/* torch.Size([]) is a scalar: one element */
		total += dims ? prod : 1;
		found = 1;
	}
	return found ? total : NAN;
}

static char *meas_timer(const json_t *meas)
{
	const char *t = json_str(meas, "timer");

	return xstrdup(t ? t : "");
}

/*
 * AUTOTUNE_REPLAY_FALLBACK becomes AUTOTUNE_REPLAY_FALLBACK(<reason>:<kernel>,...)
 * where the measurements say which points fell back (replay_fallbacks).
 */
static void name_replay_fallbacks(const struct results_row *r, struct strvec *markers)
{
	struct strvec fb = STRVEC_INIT;
	int at = strvec_find(markers, MARKER_REPLAY_FALLBACK);

	results_meas_replay_fallbacks(r->torch, &fb);
	results_meas_replay_fallbacks(r->gems, &fb);
	if (at >= 0 && fb.nr) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addstr(&sb, MARKER_REPLAY_FALLBACK);
		for (size_t i = 0; i < fb.nr; i++)
			strbuf_addf(&sb, "%c%s", i ? ',' : '(', fb.v[i]);
		strbuf_addch(&sb, ')');
		free(markers->v[at]);
		markers->v[at] = strbuf_detach(&sb, NULL);
	}
	strvec_clear(&fb);
}

static int add_row(void *ctx, const struct results_row *r, size_t lineno)
{
	struct report_run *m = ctx;
	struct report_run_row *x;
	struct strvec markers = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	char *tt, *tg;

	if (m->nr_rows == m->alloc_rows) {
		m->alloc_rows = m->alloc_rows ? 2 * m->alloc_rows : 32;
		m->rows = xrealloc(m->rows, m->alloc_rows * sizeof(*m->rows));
	}
	x = &m->rows[m->nr_rows++];
	x->op_name = xstrdup(r->op_name);
	x->dtype = xstrdup(r->dtype);
	x->shape = xstrdup(r->shape);
	x->status = xstrdup(r->status ? r->status : "");
	x->torch_ms = r->latency_base_ms;
	x->gems_ms = r->latency_ms;
	x->speedup = r->speedup;
	x->size = report_shape_size(r->shape);
	tt = meas_timer(r->torch);
	tg = meas_timer(r->gems);
	if (!strcmp(tt, tg) || !*tg)
		x->timer = xstrdup(tt);
	else if (!*tt)
		x->timer = xstrdup(tg);
	else
		x->timer = xstrfmt("torch %s, gems %s", tt, tg);
	free(tt);
	free(tg);
	results_meas_markers(r->torch, &markers);
	results_meas_markers(r->gems, &markers);
	name_replay_fallbacks(r, &markers);
	report_join(&sb, &markers, " ");
	x->markers = strbuf_detach(&sb, NULL);
	strvec_clear(&markers);
	return 0;
}

int report_run_load(struct report_run *m, const char *dir)
{
	char *results;
	int r;

	memset(m, 0, sizeof(*m));
	m->dir = path_absolute(dir);
	if (identity_load(dir, &m->identity) != 0)
		m->identity = NULL;	/* absent, or reported by identity_load: the rows may still be read */
	results = path_join(dir, RESULTS_FILE);
	r = results_each(results, RESULTS_SKIP_SAMPLES, add_row, m, &m->bad_lines);
	free(results);
	if (r < 0)
		return -1;
	if (r == 1 && !m->identity)
		return error("%s has neither %s nor %s: not a run directory", dir, IDENTITY_FILE,
			     RESULTS_FILE);
	return 0;
}

void report_run_release(struct report_run *m)
{
	for (size_t i = 0; i < m->nr_rows; i++) {
		struct report_run_row *x = &m->rows[i];
		free(x->op_name);
		free(x->dtype);
		free(x->shape);
		free(x->status);
		free(x->timer);
		free(x->markers);
	}
	free(m->rows);
	free(m->dir);
	json_decref(m->identity);
	memset(m, 0, sizeof(*m));
}

/* ---- the page ------------------------------------------------------------------ */

static int measured(const struct report_run_row *r)
{
	return !strcmp(r->status, "SUCCESS") &&
	       ((isfinite(r->torch_ms) && r->torch_ms > 0) || (isfinite(r->gems_ms) && r->gems_ms > 0));
}

struct point {
	double x, torch, gems;
	size_t order;
};

static int cmp_points(const void *pa, const void *pb)
{
	const struct point *a = pa, *b = pb;

	if (a->x != b->x)
		return a->x < b->x ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* The plot: per dtype two series (gems solid, torch dashed), one colour per dtype. */
static void latency_plot(const struct report_run *m, const struct strvec *dtypes, int by_size,
			 struct strbuf *sb)
{
	size_t nd = dtypes->nr, ns = 0;
	struct xy_series *series = xcalloc(2 * nd + 1, sizeof(*series));
	double **xs = xcalloc(2 * nd + 1, sizeof(*xs)), **ys = xcalloc(2 * nd + 1, sizeof(*ys));
	struct strvec names = STRVEC_INIT, classes = STRVEC_INIT;
	struct xy_plot p = { "Latency against input size, per dtype: gems (solid) and torch "
			     "(dashed)", by_size ? "elements in the inputs (log)" :
			     "row, in the order measured (no torch.Size in the shapes)",
			     "latency, ms (log)", series, 0, by_size ? plot_count_label : NULL };

	for (size_t d = 0; d < nd; d++) {
		struct point *pts = xcalloc(m->nr_rows + 1, sizeof(*pts));
		size_t n = 0;

		for (size_t i = 0; i < m->nr_rows; i++) {
			const struct report_run_row *r = &m->rows[i];
			if (strcmp(r->dtype, dtypes->v[d]) || !measured(r))
				continue;
			pts[n].x = by_size ? r->size : (double)(n + 1);
			pts[n].torch = r->torch_ms;
			pts[n].gems = r->gems_ms;
			pts[n].order = i;
			n++;
		}
		qsort(pts, n, sizeof(*pts), cmp_points);
		for (int k = 0; k < 2; k++) {
			const char *dt = dtypes->v[d];
			size_t s = ns++;

			skip_prefix(dt, "torch.", &dt);
			xs[s] = xcalloc(n + 1, sizeof(double));
			ys[s] = xcalloc(n + 1, sizeof(double));
			for (size_t i = 0; i < n; i++) {
				xs[s][i] = pts[i].x;
				ys[s][i] = k ? pts[i].torch : pts[i].gems;
			}
			strvec_pushf(&names, "%s %s", dt, k ? "torch" : "gems");
			strvec_pushf(&classes, "s%zu%s", d % 6, k ? " torch" : "");
			series[s].x = xs[s];
			series[s].y = ys[s];
			series[s].n = n;
		}
		free(pts);
	}
	for (size_t s = 0; s < ns; s++) {
		series[s].name = names.v[s];
		series[s].cls = classes.v[s];
	}
	p.nr = ns;
	plot_xy(sb, &p);
	for (size_t s = 0; s < ns; s++) {
		free(xs[s]);
		free(ys[s]);
	}
	free(xs);
	free(ys);
	free(series);
	strvec_clear(&names);
	strvec_clear(&classes);
}

/* A row's torch and gems latency and the speedup: three cells. */
static void latency_cells(struct strbuf *sb, const struct report_run_row *r)
{
	struct strbuf t = STRBUF_INIT;

	report_fmt_ms(&t, r->torch_ms);
	html_td_num(sb, "%s", t.buf);
	strbuf_reset(&t);
	report_fmt_ms(&t, r->gems_ms);
	html_td_num(sb, "%s", t.buf);
	strbuf_release(&t);
	if (isfinite(r->speedup))
		html_td_num(sb, "%.3gx", r->speedup);
	else
		html_td_num(sb, "-");
}

/* Beside the plot: what it draws, one line per row. */
static void plot_table(const struct report_run *m, struct strbuf *sb)
{
	static const char *const heads[] = { "dtype", "shape", "#torch ms", "#gems ms",
					     "#speedup", NULL };
	struct strbuf t = STRBUF_INIT;

	html_table_begin(sb, "rows", NULL, heads);
	for (size_t i = 0; i < m->nr_rows; i++) {
		const struct report_run_row *r = &m->rows[i];
		const char *dt = r->dtype;

		if (!measured(r))
			continue;
		skip_prefix(dt, "torch.", &dt);
		html_tr_begin(sb, NULL);
		html_td(sb, dt);
		strbuf_reset(&t);
		report_short_shape(&t, r->shape);
		html_td_label(sb, t.buf);
		latency_cells(sb, r);
		html_tr_end(sb);
	}
	html_table_end(sb);
	strbuf_release(&t);
}

static void rows_table(const struct report_run *m, struct strbuf *sb)
{
	static const char *const heads[] = { "dtype", "shape", "#elements", "#torch ms",
		"#gems ms", "#speedup", "status", "timer", "markers", NULL };
	struct strbuf t = STRBUF_INIT;

	html_table_begin(sb, "rows", NULL, heads);
	for (size_t i = 0; i < m->nr_rows; i++) {
		const struct report_run_row *r = &m->rows[i];

		html_tr_begin(sb, NULL);
		html_td(sb, r->dtype);
		html_td_cls(sb, "wrap", r->shape);
		if (isfinite(r->size))
			html_td_num(sb, "%.0f", r->size);
		else
			html_td_num(sb, "-");
		latency_cells(sb, r);
		html_td_cls(sb, strcmp(r->status, "SUCCESS") ? "v-SLOWER" : NULL, r->status);
		html_td(sb, r->timer);
		html_td_cls(sb, "wrap", r->markers);
		html_tr_end(sb);
	}
	if (!m->nr_rows) {
		html_tr_begin(sb, NULL);
		html_td(sb, "(no row: the run measured nothing)");
		html_tr_end(sb);
	}
	html_table_end(sb);
	strbuf_release(&t);
}

void report_run_render(const struct report_run *m, const struct report_opts *o,
		       struct strbuf *html)
{
	static const char *const nav[] = { "latency=Latency", "rows=Rows", "caliber=Caliber",
					   "provenance=Provenance", NULL };
	struct strvec dtypes = STRVEC_INIT;
	struct strbuf title = STRBUF_INIT, sub = STRBUF_INIT;
	const char *op = m->identity ? json_str(m->identity, "op") : NULL;
	const char *status = m->identity ? json_str(m->identity, "status") : NULL;
	int by_size = 1;
	size_t ok = 0;
	char buf[32];

	for (size_t i = 0; i < m->nr_rows; i++) {
		if (measured(&m->rows[i])) {
			strvec_push_unique(&dtypes, m->rows[i].dtype[0] ? m->rows[i].dtype : "");
			if (!isfinite(m->rows[i].size) || m->rows[i].size <= 0)
				by_size = 0;
			ok++;
		}
	}
	if (!op && m->nr_rows)
		op = m->rows[0].op_name;
	strbuf_addf(&title, "Run of %s", op && *op ? op : path_basename(m->dir));
	strbuf_addf(&sub, "%s   status: %s", m->dir, status ? status : "(no identity)");
	report_page_head(html, title.buf, sub.buf, nav);
	if (m->bad_lines) {
		strbuf_reset(&sub);
		strbuf_addf(&sub, "%zu line(s) of results.jsonl could not be read and are left "
			    "out (a run cut short writes half a line).", m->bad_lines);
		strbuf_addstr(html, "<div class=\"banner warn\">");
		html_escape(html, sub.buf);
		strbuf_addstr(html, "</div>\n");
	}
	strbuf_addstr(html, "<div class=\"cards\">\n");
	snprintf(buf, sizeof(buf), "%zu", m->nr_rows);
	report_card(html, buf, "rows", NULL);
	snprintf(buf, sizeof(buf), "%zu", ok);
	report_card(html, buf, "measured", NULL);
	snprintf(buf, sizeof(buf), "%zu", m->nr_rows - ok);
	report_card(html, buf, "not measured", m->nr_rows - ok ? "slower" : NULL);
	snprintf(buf, sizeof(buf), "%zu", dtypes.nr);
	report_card(html, buf, "dtypes", NULL);
	strbuf_addstr(html, "</div>\n");

	html_h2(html, "latency", "Latency against size");
	html_p(html, "sub", "Each measured row at the size of its inputs (the elements of "
	       "every tensor shape); both axes are logarithmic. Every row, measured or not, is "
	       "listed below.");
	html_pair_begin(html, NULL);
	latency_plot(m, &dtypes, by_size, html);
	html_pair_table(html);
	plot_table(m, html);
	html_pair_end(html);
	html_h2(html, "rows", "Every row");
	strbuf_addstr(html, "<div class=\"scroll\">\n");
	rows_table(m, html);
	strbuf_addstr(html, "</div>\n");

	{
		const json_t *ids[1] = { m->identity };
		struct report_idset set = { ids, m->identity ? 1 : 0 };
		const char *names[1] = { "this run" };

		html_h2(html, "caliber", "Caliber");
		report_identity_table(html, "caliber", NULL, &set, 1, names);
		html_h2(html, "provenance", "Provenance");
		report_identity_table(html, "provenance", NULL, &set, 1, names);
	}
	html_end(html, o->generated_at);
	strvec_clear(&dtypes);
	strbuf_release(&title);
	strbuf_release(&sub);
}

int report_run_build(const char *dir, const struct report_opts *o, struct strbuf *html)
{
	struct report_run m;

	if (report_check_tree(dir, 1))
		return ZLB_EXIT_NO_DATA;
	if (report_run_load(&m, dir)) {
		report_run_release(&m);
		return ZLB_EXIT_NO_DATA;
	}
	report_run_render(&m, o, html);
	report_run_release(&m);
	return ZLB_EXIT_OK;
}
