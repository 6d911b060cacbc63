/*
 * The batch page (report_batch.h).
 */
#include "report/report_batch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/csvfile.h"
#include "lib/error.h"
#include "lib/paths.h"
#include "report/html.h"
#include "report/plot.h"
#include "report/report_int.h"
#include "report/report_safe.h"
#include "rundir/exit_codes.h"
#include "rundir/identity.h"

static int ranked(const struct summary_row *r)
{
	return !strcmp(r->status, "SUCCESS") && isfinite(r->speedup) && r->speedup > 0 &&
	       !r->unranked;
}

static const struct summary *sort_ctx;

static int cmp_ops(const void *pa, const void *pb)
{
	const struct report_batch_op *a = pa, *b = pb;
	const struct summary_op *oa = &sort_ctx->ops[a->op], *ob = &sort_ctx->ops[b->op];
	int c;

	if (a->geomean != b->geomean)
		return a->geomean < b->geomean ? -1 : 1;
	c = strcmp(oa->repo, ob->repo);
	return c ? c : strcmp(oa->op, ob->op);
}

size_t report_batch_ranked_ops(const struct summary *s, struct report_batch_op **out)
{
	size_t n = 0;

	*out = xcalloc(s->nr_ops + 1, sizeof(**out));
	for (size_t i = 0; i < s->nr_ops; i++) {
		const struct summary_op *o = &s->ops[i];
		struct report_batch_op *x = &(*out)[n];
		double sum = 0;

		x->min = INFINITY;
		x->max = -INFINITY;
		x->rows = 0;
		for (size_t r = o->first_row; r < o->first_row + o->nr_rows; r++) {
			const struct summary_row *row = &s->rows[r];
			if (!ranked(row))
				continue;
			sum += log(row->speedup);
			x->min = fmin(x->min, row->speedup);
			x->max = fmax(x->max, row->speedup);
			x->rows++;
		}
		if (!x->rows)
			continue;
		x->op = i;
		x->geomean = exp(sum / x->rows);
		n++;
	}
	sort_ctx = s;	/* qsort has no context argument; the page is built on one thread */
	if (n > 1)
		qsort(*out, n, sizeof(**out), cmp_ops);
	return n;
}

size_t report_batch_histogram(const struct summary *s, double **edges, size_t **counts)
{
	double lo = INFINITY, hi = -INFINITY, step = 0.25;	/* in octaves */
	long k0, k1;
	size_t nbins;

	*edges = NULL;
	*counts = NULL;
	for (size_t i = 0; i < s->nr_rows; i++)
		if (ranked(&s->rows[i])) {
			lo = fmin(lo, log2(s->rows[i].speedup));
			hi = fmax(hi, log2(s->rows[i].speedup));
		}
	if (!isfinite(lo))
		return 0;
	while ((hi - lo) / step > 64)
		step *= 2;
	k0 = (long)floor(lo / step);
	k1 = (long)floor(hi / step) + 1;
	nbins = (size_t)(k1 - k0);
	*edges = xcalloc(nbins + 1, sizeof(**edges));
	*counts = xcalloc(nbins, sizeof(**counts));
	for (size_t b = 0; b <= nbins; b++)
		(*edges)[b] = exp2((k0 + (long)b) * step);
	for (size_t i = 0; i < s->nr_rows; i++)
		if (ranked(&s->rows[i])) {
			long b = (long)floor(log2(s->rows[i].speedup) / step) - k0;
			if (b < 0)
				b = 0;
			if ((size_t)b >= nbins)
				b = (long)nbins - 1;
			(*counts)[b]++;
		}
	return nbins;
}

/* ---- the page ------------------------------------------------------------------ */

static void fmt_times(struct strbuf *sb, double v)
{
	if (isfinite(v))
		strbuf_addf(sb, "%.3gx", v);
	else
		strbuf_addstr(sb, "-");
}

static void statuses(const struct summary *s, struct strbuf *sb)
{
	static const char *const failed[] = { "FAIL", "TIMEOUT", NULL };
	json_t *counts = summary_status_counts(s);
	size_t n = json_object_size(counts), i = 0;
	struct hbar *bars = xcalloc(n + 1, sizeof(*bars));
	struct strvec texts = STRVEC_INIT;
	struct hbars h = { "Operators by status", "operators", bars, 0, 0 };
	static const char *const heads[] = { "status", "#operators", NULL };
	const char *k;
	json_t *v;

	json_object_foreach(counts, k, v) {
		strvec_pushf(&texts, "%lld", (long long)json_integer_value(v));
		i++;
	}
	i = 0;
	json_object_foreach(counts, k, v) {
		bars[i].label = k;
		bars[i].value = (double)json_integer_value(v);
		/* green for a pass, red for what failed, neutral for skipped or not yet run */
		bars[i].cls = !strcmp(k, "PASS") ? "bar hi" :
			      strlist_has(failed, k) ? "bar lo" : "bar";
		bars[i].text = texts.v[i];
		i++;
	}
	h.nr = i;
	html_h2(sb, "status", "Status of the operators");
	html_pair_begin(sb, NULL);
	plot_hbars(sb, &h);
	html_pair_table(sb);
	html_table_begin(sb, "status", NULL, heads);
	for (i = 0; i < h.nr; i++) {
		html_tr_begin(sb, NULL);
		html_td(sb, bars[i].label);
		html_td_num(sb, "%s", bars[i].text);
		html_tr_end(sb);
	}
	html_table_end(sb);
	html_pair_end(sb);
	free(bars);
	strvec_clear(&texts);
	json_decref(counts);
}

static void distribution(const struct summary *s, struct strbuf *sb)
{
	double *edges;
	size_t *counts, nbins = report_batch_histogram(s, &edges, &counts);
	struct strbuf t = STRBUF_INIT;
	struct histogram h = { NULL, "speedup of gems over torch (torch latency / gems latency)",
			       "rows", edges, counts, nbins, 1, "1x: as fast as torch" };
	static const char *const heads[] = { "#from", "#to", "#rows", NULL };

	strbuf_addf(&t, "Speedup of gems over torch, %zu ranked rows", s->rows_ranked);
	h.title = t.buf;
	html_h2(sb, "speedup", "Distribution of speedups");
	{
		struct strbuf p = STRBUF_INIT;
		strbuf_addf(&p, "Rows that succeeded with a speedup, on a log axis (right of 1x: "
			    "gems faster than torch). Left out: %zu row(s) whose graph held no "
			    "kernel, %zu timing the copy engine (memcpy/memset), %zu timed by "
			    "graph on one side and directly on the other.",
			    s->left_out_no_kernels, s->left_out_copy_engine,
			    s->left_out_mixed_timers);
		html_p(sb, "sub", p.buf);
		strbuf_release(&p);
	}
	html_pair_begin(sb, NULL);
	if (nbins)
		plot_histogram(sb, &h);
	else
		plot_empty(sb, t.buf, "no row succeeded with a speedup");
	html_pair_table(sb);
	html_table_begin(sb, "bins", NULL, heads);
	for (size_t b = 0; b < nbins; b++) {
		if (!counts[b])
			continue;
		html_tr_begin(sb, NULL);
		html_td_num(sb, "%.3gx", edges[b]);
		html_td_num(sb, "%.3gx", edges[b + 1]);
		html_td_num(sb, "%zu", counts[b]);
		html_tr_end(sb);
	}
	html_table_end(sb);
	html_pair_end(sb);
	free(edges);
	free(counts);
	strbuf_release(&t);
}

static void op_name(struct strbuf *sb, const struct summary_op *o)
{
	strbuf_addf(sb, "%s/%s", o->repo, o->op);
}

static void extremes(const struct summary *s, struct strbuf *sb)
{
	struct report_batch_op *ops;
	size_t n = report_batch_ranked_ops(s, &ops), k = REPORT_BATCH_EXTREMES;
	size_t nw = n < 2 * k ? (n + 1) / 2 : k, nb = n < 2 * k ? n - nw : k;
	struct hbar *bars = xcalloc(nw + nb + 1, sizeof(*bars));
	struct strvec labels = STRVEC_INIT, texts = STRVEC_INIT, tips = STRVEC_INIT;
	struct hbars h = { "Slowest and fastest operators: geometric-mean speedup of their rows",
			   "speedup of gems over torch (log axis)", bars, 0, 1 };
	static const char *const heads[] = { "operator", "#rows", "#geomean", "#min", "#max",
					     NULL };
	struct strbuf t = STRBUF_INIT;
	size_t pick[2 * REPORT_BATCH_EXTREMES];
	size_t np = 0;

	/* the nw slowest, then the nb fastest, fastest last */
	for (size_t i = 0; i < nw; i++)
		pick[np++] = i;
	for (size_t i = n - nb; i < n; i++)
		pick[np++] = i;
	for (size_t i = 0; i < np; i++) {
		const struct report_batch_op *x = &ops[pick[i]];
		strbuf_reset(&t);
		op_name(&t, &s->ops[x->op]);
		strvec_push(&labels, t.buf);
		strbuf_reset(&t);
		fmt_times(&t, x->geomean);
		strvec_push(&texts, t.buf);
		strbuf_reset(&t);
		op_name(&t, &s->ops[x->op]);
		strbuf_addf(&t, ": %zu rows, geomean %.3gx, from %.3gx to %.3gx", x->rows,
			    x->geomean, x->min, x->max);
		strvec_push(&tips, t.buf);
	}
	for (size_t i = 0; i < np; i++) {
		const struct report_batch_op *x = &ops[pick[i]];
		bars[i].label = labels.v[i];
		bars[i].value = x->geomean;
		bars[i].cls = x->geomean < 1 ? "bar lo" : "bar hi";
		bars[i].text = texts.v[i];
		bars[i].tooltip = tips.v[i];
	}
	h.nr = np;
	html_h2(sb, "extremes", "Slowest and fastest operators");
	html_p(sb, "sub", "Per operator, the geometric mean of its ranked rows' speedups; "
	       "below 1x gems is slower than torch. Every operator is in the table at the end.");
	html_pair_begin(sb, NULL);
	plot_hbars(sb, &h);
	html_pair_table(sb);
	html_table_begin(sb, "extremes", NULL, heads);
	for (size_t i = 0; i < np; i++) {
		const struct report_batch_op *x = &ops[pick[i]];
		html_tr_begin(sb, i == nw ? "gap" : NULL);
		html_td(sb, labels.v[i]);
		html_td_num(sb, "%zu", x->rows);
		html_td_num(sb, "%.3gx", x->geomean);
		html_td_num(sb, "%.3gx", x->min);
		html_td_num(sb, "%.3gx", x->max);
		html_tr_end(sb);
	}
	html_table_end(sb);
	html_pair_end(sb);
	free(bars);
	free(ops);
	strvec_clear(&labels);
	strvec_clear(&texts);
	strvec_clear(&tips);
	strbuf_release(&t);
}

static void row_cells(struct strbuf *sb, const struct summary *s, size_t op,
		      const struct summary_row *r)
{
	struct strbuf t = STRBUF_INIT;

	op_name(&t, &s->ops[op]);
	html_td(sb, t.buf);
	html_td(sb, r->dtype);
	html_td_cls(sb, "wrap", r->shape);
	strbuf_reset(&t);
	report_fmt_ms(&t, r->torch_ms);
	html_td_num(sb, "%s", t.buf);
	strbuf_reset(&t);
	report_fmt_ms(&t, r->gems_ms);
	html_td_num(sb, "%s", t.buf);
	strbuf_reset(&t);
	fmt_times(&t, r->speedup);
	html_td_num(sb, "%s", t.buf);
	html_td(sb, r->timer);
	html_td_cls(sb, "wrap", r->markers);
	strbuf_release(&t);
}

/* Rows whose time is not a graph replay of kernels: another caliber, or nothing at all. */
static void not_graph(const struct summary *s, struct strbuf *sb)
{
	static const char *const heads[] = { "operator", "dtype", "shape", "#torch ms",
		"#gems ms", "#speedup", "timer", "markers", NULL };
	size_t n = 0;

	html_h2(sb, "notgraph", "Rows not graph-timed, and rows left out of the ranking");
	html_p(sb, "sub", "A row timed directly (capture refused), or whose graph replayed no "
	       "kernel or only copy-engine nodes, is not measured like the others; its "
	       "speedup is not comparable and is not ranked above.");
	strbuf_addstr(sb, "<div class=\"scroll\">\n");
	html_table_begin(sb, "notgraph", NULL, heads);
	for (size_t o = 0; o < s->nr_ops; o++)
		for (size_t i = s->ops[o].first_row; i < s->ops[o].first_row + s->ops[o].nr_rows;
		     i++) {
			const struct summary_row *r = &s->rows[i];
			if (!r->not_graph && !r->unranked)
				continue;
			html_tr_begin(sb, NULL);
			row_cells(sb, s, o, r);
			html_tr_end(sb);
			n++;
		}
	if (!n) {
		html_tr_begin(sb, NULL);
		html_td(sb, "(none: every measured row was a graph replay of kernels)");
		html_tr_end(sb);
	}
	html_table_end(sb);
	strbuf_addstr(sb, "</div>\n");
}

static void operators(const struct summary *s, size_t uuid_len, struct strbuf *sb)
{
	static const char *const heads[] = { "operator", "status", "GPU", "#rows", "#ranked",
		"#geomean speedup", "remarks", NULL };
	struct report_batch_op *ops;
	size_t n = report_batch_ranked_ops(s, &ops);

	html_h2(sb, "operators", "Every operator");
	strbuf_addstr(sb, "<div class=\"scroll\">\n");
	html_table_begin(sb, "operators", NULL, heads);
	for (size_t i = 0; i < s->nr_ops; i++) {
		const struct summary_op *o = &s->ops[i];
		const struct report_batch_op *x = NULL;
		struct strbuf t = STRBUF_INIT;

		for (size_t j = 0; j < n && !x; j++)
			if (ops[j].op == i)
				x = &ops[j];
		html_tr_begin(sb, NULL);
		op_name(&t, o);
		html_td(sb, t.buf);
		html_td(sb, *o->status ? o->status : "(none)");
		strbuf_reset(&t);
		report_batch_gpu_label(&t, o->device, o->device_uuid, uuid_len);
		html_td(sb, t.buf);
		html_td_num(sb, "%zu", o->nr_rows);
		html_td_num(sb, "%zu", x ? x->rows : 0);
		strbuf_reset(&t);
		fmt_times(&t, x ? x->geomean : NAN);
		html_td_num(sb, "%s", t.buf);
		html_td_cls(sb, "wrap", o->remarks ? o->remarks : "");
		html_tr_end(sb);
		strbuf_release(&t);
	}
	html_table_end(sb);
	strbuf_addstr(sb, "</div>\n");
	free(ops);
}

/* The calibers of the batch's runs (one column: their distinct values). */
static void calibers(const struct summary *s, struct strbuf *sb)
{
	const json_t **ids = xcalloc(s->nr_ops + 1, sizeof(*ids));
	json_t **own = xcalloc(s->nr_ops + 1, sizeof(*own));
	struct report_idset set = { ids, 0 };
	const char *names[1] = { "the batch's runs" };

	for (size_t i = 0; i < s->nr_ops; i++)
		if (s->ops[i].run_dir && identity_load(s->ops[i].run_dir, &own[set.n]) == 0) {
			ids[set.n] = own[set.n];
			set.n++;
		}
	html_h2(sb, "caliber", "How the runs measured");
	html_p(sb, "sub", "Caliber and provenance of the operators' runs: a field with more than "
	       "one value means the batch mixes ways of measuring or machines.");
	report_identity_table(sb, "caliber", "caliber", &set, 1, names);
	report_identity_table(sb, "provenance", "provenance", &set, 1, names);
	for (size_t i = 0; i < set.n; i++)
		json_decref(own[i]);
	free(own);
	free(ids);
}

static void cards(const struct summary *s, struct strbuf *sb)
{
	char buf[48];
	double sum = 0;
	size_t n = 0;

	for (size_t i = 0; i < s->nr_rows; i++)
		if (ranked(&s->rows[i])) {
			sum += log(s->rows[i].speedup);
			n++;
		}
	strbuf_addstr(sb, "<div class=\"cards\">\n");
	snprintf(buf, sizeof(buf), "%zu", s->nr_ops);
	report_card(sb, buf, "operators", NULL);
	snprintf(buf, sizeof(buf), "%zu", s->nr_rows);
	report_card(sb, buf, "rows", NULL);
	snprintf(buf, sizeof(buf), "%zu", s->rows_ranked);
	report_card(sb, buf, "rows ranked", NULL);
	if (n)
		snprintf(buf, sizeof(buf), "%.3gx", exp(sum / n));
	else
		snprintf(buf, sizeof(buf), "-");
	report_card(sb, buf, "geomean speedup", n && exp(sum / n) < 1 ? "slower" : "faster");
	snprintf(buf, sizeof(buf), "%zu", s->rows_not_graph);
	report_card(sb, buf, "rows not graph-timed", s->rows_not_graph ? "unsure" : NULL);
	snprintf(buf, sizeof(buf), "%zu", s->ops_without_rows);
	report_card(sb, buf, "operators without rows", s->ops_without_rows ? "slower" : NULL);
	strbuf_addstr(sb, "</div>\n");
}

void report_batch_render(const struct summary *s, const struct report_opts *o,
			 struct strbuf *html)
{
	struct report_batch_cards cards_of;
	int several;
	struct strbuf sub = STRBUF_INIT;

	report_batch_cards(s, &cards_of);
	several = cards_of.known > 1;
	/* the devices section only for a batch whose operators ran on several cards */
	const char *const nav[] = { "status=Status", "speedup=Speedups",
		"extremes=Slowest and fastest", "notgraph=Not graph-timed", "operators=Operators",
		several ? "devices=Devices" : "caliber=Caliber", several ? "caliber=Caliber" : NULL,
		NULL };

	strbuf_addf(&sub, "Batch %s", s->batch);
	if (!s->has_ops_status)
		strbuf_addstr(&sub, " (no ops_status.csv: operators found on disk)");
	report_page_head(html, "Batch report", sub.buf, nav);
	cards(s, html);
	statuses(s, html);
	distribution(s, html);
	extremes(s, html);
	not_graph(s, html);
	operators(s, cards_of.uuid_len, html);
	if (several)
		report_batch_devices(&cards_of, html);
	calibers(s, html);
	html_end(html, o->generated_at);
	report_batch_cards_release(&cards_of);
	strbuf_release(&sub);
}

/*
 * ops_status.csv's run_dir column is a path read from a file: summary.h
 * uses it for an operator not found on disk, so each one must stay inside
 * the batch before the batch is read at all.
 */
static int check_run_dirs(const char *dir)
{
	char *csv = path_join(dir, OPS_STATUS_CSV), *real = realpath(dir, NULL);
	struct csv_table t;
	int ret = 0, col;

	if (!real) {
		free(csv);
		return error_errno("cannot resolve '%s'", dir);
	}
	if (!is_file(csv) || csv_read_file(csv, &t)) {
		free(csv);
		free(real);
		return 0;	/* summary_load reports an unreadable file itself */
	}
	col = csv_column(&t, "run_dir");
	for (size_t r = 0; col >= 0 && r < t.nrows && !ret; r++) {
		const char *v = csv_get(&t, r, "run_dir");
		char *p;

		if (!v || !*v)
			continue;
		p = v[0] == '/' ? xstrdup(v) : path_join(dir, v);
		if (is_dir(p) && !report_path_inside(real, p))
			ret = error("%s line %zu names run_dir '%s', outside the batch; zlb report "
				    "reads nothing outside the directory it reports: correct the "
				    "line, or report that run directory itself", csv, r + 2, v);
		free(p);
	}
	csv_table_free(&t);
	free(csv);
	free(real);
	return ret;
}

int report_batch_build(const char *dir, const struct report_opts *o, struct strbuf *html)
{
	struct summary s;
	int r;

	if (report_check_tree(dir, 3) || check_run_dirs(dir))
		return ZLB_EXIT_NO_DATA;
	summary_init(&s);
	r = summary_load(&s, dir);
	if (r == 1)
		error("%s holds no %s and no run directory (<repo>/<op>/ with "
		      "run_identity.json or results.jsonl): nothing to report", dir,
		      OPS_STATUS_CSV);
	if (r) {
		summary_release(&s);
		return ZLB_EXIT_NO_DATA;
	}
	report_batch_render(&s, o, html);
	summary_release(&s);
	return ZLB_EXIT_OK;
}
