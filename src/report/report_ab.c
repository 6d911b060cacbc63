/*
 * The A/B model and page (report_ab.h).
 */
#include "report/report_ab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "report/html.h"
#include "report/plot.h"
#include "report/report_int.h"
#include "rundir/markers.h"

/* ---- the model ---------------------------------------------------------------- */

static const char *str_or(const json_t *o, const char *key, const char *dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : dflt;
}

static double num_or_nan(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void load_cmp(struct report_ab_cmp *c, const json_t *o)
{
	memset(c, 0, sizeof(*c));
	c->verdict = "";
	c->a_ms = c->b_ms = c->ratio = c->lo = c->hi = c->q = NAN;
	if (!json_is_object(o))
		return;
	c->has = 1;
	c->a_ms = num_or_nan(o, "a_ms");
	c->b_ms = num_or_nan(o, "b_ms");
	c->ratio = num_or_nan(o, "ratio");
	c->lo = num_or_nan(o, "ci_low");
	c->hi = num_or_nan(o, "ci_high");
	c->q = num_or_nan(o, "q");
	c->verdict = str_or(o, "verdict", "");
	c->why = str_or(o, "why", NULL);
	c->rounds_a = (long)json_integer_value(json_object_get(o, "rounds_a"));
	c->rounds_b = (long)json_integer_value(json_object_get(o, "rounds_b"));
}

static void markers_text(struct strbuf *sb, const json_t *a, const json_t *b)
{
	const json_t *side[2] = { a, b };

	for (int s = 0; s < 2; s++) {
		size_t i;
		json_t *m;

		if (!json_is_array(side[s]) || !json_array_size(side[s]))
			continue;
		if (sb->len)
			strbuf_addstr(sb, " | ");
		strbuf_addstr(sb, s ? "B:" : "A:");
		json_array_foreach(side[s], i, m)
			if (json_is_string(m))
				strbuf_addf(sb, " %s", json_string_value(m));
	}
}

/*
 * A replay fallback as compare.json names it (replay_fallbacks_a/_b): which
 * side, why and for which kernel, in place of the bare flag the marker
 * gives. These lists also hold fallbacks of the row's test or of the whole
 * run, which put no marker on the row.
 */
static void fallback_flags(const json_t *row, struct strvec *flags)
{
	static const char *const key[2] = { "replay_fallbacks_a", "replay_fallbacks_b" };
	const char *bare = report_marker_flag(MARKER_REPLAY_FALLBACK);
	struct strbuf sb = STRBUF_INIT;
	int named = 0;

	for (int s = 0; s < 2; s++) {
		const json_t *fb = json_object_get(row, key[s]), *e;
		size_t i;

		if (!json_is_array(fb) || !json_array_size(fb))
			continue;
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s replay fallback:", s ? "B" : "A");
		json_array_foreach(fb, i, e) {
			const char *from = str_or(e, "from", "");

			strbuf_addf(&sb, "%s %s %s", i ? "," : "", str_or(e, "reason", "?"),
				    str_or(e, "kernel", "?"));
			/* where compare found it: a measurement of gems or torch, the test, the run */
			if (!strcmp(from, "torch"))
				strbuf_addstr(&sb, " (torch)");
			else if (!strcmp(from, "test"))
				strbuf_addstr(&sb, " (its test)");
			else if (!strcmp(from, "run"))
				strbuf_addstr(&sb, " (the whole run)");
		}
		strvec_push_unique(flags, sb.buf);
		named = 1;
	}
	strbuf_release(&sb);
	if (named && bare && strvec_find(flags, bare) >= 0) {
		struct strvec kept = STRVEC_INIT;

		for (size_t i = 0; i < flags->nr; i++)
			if (strcmp(flags->v[i], bare))
				strvec_push(&kept, flags->v[i]);
		strvec_clear(flags);
		*flags = kept;
	}
}

int report_ab_load(struct report_ab *m, json_t *doc)
{
	const json_t *set, *cal, *rows, *row;
	size_t i;

	memset(m, 0, sizeof(*m));
	if (!json_is_object(doc) || json_integer_value(json_object_get(doc, "schema_version")) != 1 ||
	    strcmp(str_or(doc, "kind", ""), "zlb-compare"))
		return error("not a comparison of schema_version 1 (kind zlb-compare)");
	m->doc = json_incref(doc);
	set = json_object_get(doc, "settings");
	m->threshold = num_or_nan(set, "threshold");
	m->fdr = num_or_nan(set, "fdr");
	m->confidence = num_or_nan(set, "confidence");
	if (!(m->threshold >= 0 && m->threshold < 1))
		m->threshold = 0.01;
	if (!(m->confidence > 0 && m->confidence < 1))
		m->confidence = 0.95;
	if (!(m->fdr > 0 && m->fdr < 1))
		m->fdr = 0.05;
	cal = json_object_get(doc, "caliber");
	m->caliber_ok = json_is_true(json_object_get(cal, "ok"));
	m->caliber_allowed = json_is_true(json_object_get(cal, "allowed"));
	m->problems = json_object_get(cal, "problems");
	m->warnings = json_object_get(doc, "warnings");
	m->notes = json_object_get(doc, "notes");
	m->summary = json_object_get(doc, "summary");
	m->exit_code = (long)json_integer_value(json_object_get(m->summary, "exit_code"));
	m->runs[0] = json_object_get(json_object_get(doc, "a"), "runs");
	m->runs[1] = json_object_get(json_object_get(doc, "b"), "runs");

	rows = json_object_get(doc, "rows");
	if (json_is_array(rows) && json_array_size(rows))
		m->rows = xcalloc(json_array_size(rows), sizeof(*m->rows));
	json_array_foreach(rows, i, row) {
		struct report_ab_row *r;
		struct strbuf sb = STRBUF_INIT;
		const char *dt;

		if (!json_is_object(row))
			continue;
		r = &m->rows[m->nr_rows++];
		r->op = str_or(row, "op", "");
		r->op_name = str_or(row, "op_name", "");
		r->dtype = str_or(row, "dtype", "");
		r->shape = str_or(row, "shape_detail", "");
		r->paired = json_is_true(json_object_get(row, "paired"));
		r->unpaired_reason = str_or(row, "unpaired_reason", "");
		load_cmp(&r->gems, json_object_get(row, "gems"));
		load_cmp(&r->torch, json_object_get(row, "torch"));
		strvec_init(&r->flags);
		report_flags_of(json_object_get(row, "markers_a"), &r->flags);
		report_flags_of(json_object_get(row, "markers_b"), &r->flags);
		fallback_flags(row, &r->flags);
		markers_text(&sb, json_object_get(row, "markers_a"), json_object_get(row, "markers_b"));
		r->markers = strbuf_detach(&sb, NULL);
		dt = r->dtype;
		skip_prefix(dt, "torch.", &dt);
		/* the op_name only where it says more than the op (one test, several operators) */
		if (*r->op_name && strcmp(r->op_name, r->op))
			strbuf_addf(&sb, "%s/%s %s ", r->op, r->op_name, dt);
		else
			strbuf_addf(&sb, "%s %s ", r->op, dt);
		report_short_shape(&sb, r->shape);
		r->label = strbuf_detach(&sb, NULL);
		if (r->paired)
			m->nr_paired++;
		if (r->paired && r->gems.has)
			m->nr_compared++;
	}
	return 0;
}

void report_ab_release(struct report_ab *m)
{
	for (size_t i = 0; i < m->nr_rows; i++) {
		strvec_clear(&m->rows[i].flags);
		free(m->rows[i].markers);
		free(m->rows[i].label);
	}
	free(m->rows);
	for (size_t i = 0; i < m->nr_ir; i++)
		report_ir_op_release(&m->ir[i]);
	free(m->ir);
	json_decref(m->doc);
	memset(m, 0, sizeof(*m));
}

/* ---- the page ------------------------------------------------------------------ */

static size_t count_verdict(const struct report_ab *m, const char *v)
{
	size_t n = 0;

	for (size_t i = 0; i < m->nr_rows; i++)
		if (m->rows[i].paired && m->rows[i].gems.has && !strcmp(m->rows[i].gems.verdict, v))
			n++;
	return n;
}

static void cards(const struct report_ab *m, struct strbuf *sb)
{
	static const char *const v[] = { "SLOWER", "FASTER", "SAME", "UNSURE", "EXCLUDED" };
	static const char *const color[] = { "slower", "faster", "same", "unsure", "excluded" };
	char buf[32];
	size_t flagged = 0;

	for (size_t i = 0; i < m->nr_rows; i++)
		if (m->rows[i].paired && m->rows[i].flags.nr)
			flagged++;
	strbuf_addstr(sb, "<div class=\"cards\">\n");
	snprintf(buf, sizeof(buf), "%zu", m->nr_paired);
	report_card(sb, buf, "rows paired", NULL);
	for (size_t i = 0; i < 5; i++) {
		snprintf(buf, sizeof(buf), "%zu", count_verdict(m, v[i]));
		report_card(sb, buf, v[i], color[i]);
	}
	snprintf(buf, sizeof(buf), "%zu", flagged);
	report_card(sb, buf, "flagged", flagged ? "slower" : NULL);
	snprintf(buf, sizeof(buf), "%zu", m->nr_rows - m->nr_paired);
	report_card(sb, buf, "not compared", NULL);
	strbuf_addstr(sb, "</div>\n");
}

static void banners(const struct report_ab *m, struct strbuf *sb)
{
	size_t i;
	const json_t *p;

	if (json_is_array(m->problems) && json_array_size(m->problems)) {
		strbuf_addstr(sb, "<div class=\"banner\"><b>Calibers differ: the runs were not "
			      "measured the same way, so a difference below may come from how they "
			      "were measured, not from the build.</b><ul>\n");
		json_array_foreach(m->problems, i, p) {
			strbuf_addstr(sb, "<li>");
			html_escape(sb, str_or(p, "text", str_or(p, "field", "?")));
			strbuf_addstr(sb, "</li>\n");
		}
		strbuf_addstr(sb, "</ul></div>\n");
	}
	if (m->ab) {
		const char *status = str_or(m->ab, "status", "");
		if (!strcmp(status, "no_ir_diff")) {
			strbuf_addstr(sb, "<div class=\"banner warn\"><b>SWITCH_NO_IR_DIFF:</b> after "
				      "round 1 the IR of A and B was byte-identical (or absent); zlb "
				      "ab stopped there, so the rows below are round 1 only.</div>\n");
		} else if (*status && strcmp(status, "completed")) {
			strbuf_addstr(sb, "<div class=\"banner warn\">zlb ab ended with status <b>");
			html_escape(sb, status);
			strbuf_addstr(sb, "</b>: the rounds below are those that finished.</div>\n");
		}
	}
	if (m->result) {
		strbuf_addf(sb, "<div class=\"banner %s\">", m->exit_code == 1 ? "" : "ok");
		html_escape(sb, m->result);
		strbuf_addstr(sb, "</div>\n");
	}
}

/* The rows of the forest plot: every paired row with a gems comparison. */
static void forest(const struct report_ab *m, struct strbuf *sb)
{
	struct forest_row *fr = xcalloc(m->nr_compared + 1, sizeof(*fr));
	struct strvec flags = STRVEC_INIT, tips = STRVEC_INIT;
	struct forest f = { NULL, m->threshold, fr, 0 };
	struct strbuf title = STRBUF_INIT, t = STRBUF_INIT;
	static const char *const heads[] = { "row", "#B/A", "#interval", "verdict", NULL };

	for (size_t i = 0; i < m->nr_rows; i++) {
		const struct report_ab_row *r = &m->rows[i];
		struct forest_row *x;

		if (!r->paired || !r->gems.has)
			continue;
		x = &fr[f.nr++];
		x->label = r->label;
		x->ratio = r->gems.ratio;
		x->lo = r->gems.lo;
		x->hi = r->gems.hi;
		x->verdict = r->gems.verdict;
		strbuf_reset(&t);
		report_join(&t, &r->flags, ", ");
		strvec_push(&flags, t.buf);
		strbuf_reset(&t);
		strbuf_addf(&t, "%s\nB/A ", r->label);
		report_fmt_change(&t, r->gems.ratio);
		strbuf_addstr(&t, " [");
		report_fmt_change(&t, r->gems.lo);
		strbuf_addstr(&t, ", ");
		report_fmt_change(&t, r->gems.hi);
		strbuf_addf(&t, "] %s", r->gems.verdict);
		if (*r->markers)
			strbuf_addf(&t, "\n%s", r->markers);
		strvec_push(&tips, t.buf);
	}
	for (size_t i = 0; i < f.nr; i++) {
		fr[i].flags = flags.v[i];
		fr[i].tooltip = tips.v[i];
	}
	strbuf_addf(&title, "gems latency B/A per row, %.0f%% interval (%zu rows)",
		    m->confidence * 100, f.nr);
	f.title = title.buf;
	html_h2(sb, "forest", "B against A, row by row");
	html_p(sb, "sub", "Each row: the ratio of B's gems latency to A's (a dot; right of the "
	       "dashed line B is slower) and its interval. The shaded band is the threshold: "
	       "rows whose whole interval lies inside it are SAME; SLOWER and FASTER need the "
	       "whole interval beyond it and significance after false-discovery control. "
	       "Flags in red weaken a row.");
	html_pair_begin(sb, NULL);
	plot_forest(sb, &f);
	html_pair_table(sb);
	html_table_begin(sb, "rows", NULL, heads);
	for (size_t i = 0; i < f.nr; i++) {
		html_tr_begin(sb, NULL);
		html_td_label(sb, fr[i].label);
		strbuf_reset(&t);
		report_fmt_change(&t, fr[i].ratio);
		html_td_num(sb, "%s", t.buf);
		strbuf_reset(&t);
		if (isfinite(fr[i].lo) && isfinite(fr[i].hi))
			strbuf_addf(&t, "[%+.2f, %+.2f]%%", (fr[i].lo - 1) * 100,
				    (fr[i].hi - 1) * 100);
		else
			strbuf_addch(&t, '-');
		html_td_num(sb, "%s", t.buf);
		strbuf_reset(&t);
		strbuf_addf(&t, "v-%s", report_verdict_class(fr[i].verdict));
		html_td_cls(sb, t.buf, fr[i].verdict);
		html_tr_end(sb);
	}
	html_table_end(sb);
	html_pair_end(sb);
	strvec_clear(&flags);
	strvec_clear(&tips);
	strbuf_release(&title);
	strbuf_release(&t);
	free(fr);
}

/* Every row in numbers: latencies, q, the torch control, markers; then the unpaired. */
static void details(const struct report_ab *m, struct strbuf *sb)
{
	static const char *const heads[] = { "op", "dtype", "shape", "#A gems ms", "#B gems ms",
		"#B/A", "#q", "verdict", "#torch B/A", "torch verdict", "#rounds A/B", "flags",
		"markers", NULL };
	static const char *const unheads[] = { "op", "dtype", "shape", "why not compared", NULL };
	struct strbuf t = STRBUF_INIT;
	size_t unpaired = 0;

	html_h2(sb, "rows", "All rows in numbers");
	html_p(sb, "sub", "Latencies are the geometric mean of the rounds' centres, in ms. The "
	       "torch latency is the control: a compiler change leaves it alone, so its "
	       "verdicts show how often the machine alone moves a row.");
	strbuf_addstr(sb, "<div class=\"scroll\">\n");
	html_table_begin(sb, "rows", NULL, heads);
	for (size_t i = 0; i < m->nr_rows; i++) {
		const struct report_ab_row *r = &m->rows[i];

		if (!r->paired) {
			unpaired++;
			continue;
		}
		html_tr_begin(sb, NULL);
		html_td(sb, r->op);
		html_td(sb, r->dtype);
		html_td_cls(sb, "wrap", r->shape);
		strbuf_reset(&t);
		report_fmt_ms(&t, r->gems.a_ms);
		html_td_num(sb, "%s", t.buf);
		strbuf_reset(&t);
		report_fmt_ms(&t, r->gems.b_ms);
		html_td_num(sb, "%s", t.buf);
		strbuf_reset(&t);
		report_fmt_change(&t, r->gems.ratio);
		html_td_num(sb, "%s", t.buf);
		if (isfinite(r->gems.q))
			html_td_num(sb, "%.3g", r->gems.q);
		else
			html_td_num(sb, "-");
		strbuf_reset(&t);
		strbuf_addf(&t, "v-%s", report_verdict_class(r->gems.verdict));
		html_td_cls(sb, t.buf, r->gems.has ? r->gems.verdict : "-");
		strbuf_reset(&t);
		report_fmt_change(&t, r->torch.ratio);
		html_td_num(sb, "%s", t.buf);
		strbuf_reset(&t);
		strbuf_addf(&t, "v-%s", report_verdict_class(r->torch.verdict));
		html_td_cls(sb, t.buf, r->torch.has ? r->torch.verdict : "-");
		html_td_num(sb, "%ld/%ld", r->gems.rounds_a, r->gems.rounds_b);
		strbuf_reset(&t);
		report_join(&t, &r->flags, ", ");
		html_td_cls(sb, "flags", t.buf);
		strbuf_reset(&t);
		strbuf_addstr(&t, r->markers);
		if (r->gems.why)
			strbuf_addf(&t, "%s%s", t.len ? "; " : "", r->gems.why);
		html_td_cls(sb, "wrap", t.buf);
		html_tr_end(sb);
	}
	html_table_end(sb);
	strbuf_addstr(sb, "</div>\n");
	if (unpaired) {
		html_h2(sb, "unpaired", "Rows not compared");
		html_table_begin(sb, "rows", NULL, unheads);
		for (size_t i = 0; i < m->nr_rows; i++) {
			const struct report_ab_row *r = &m->rows[i];
			if (r->paired)
				continue;
			html_tr_begin(sb, NULL);
			html_td(sb, r->op);
			html_td(sb, r->dtype);
			html_td_cls(sb, "wrap", r->shape);
			html_td(sb, r->unpaired_reason);
			html_tr_end(sb);
		}
		html_table_end(sb);
	}
	strbuf_release(&t);
}

static void link_cell(struct strbuf *sb, const char *link, const char *text)
{
	strbuf_addstr(sb, "<td>");
	if (link) {
		strbuf_addstr(sb, "<a href=\"");
		html_url_path(sb, link);
		strbuf_addstr(sb, "\">");
		html_escape(sb, text);
		strbuf_addstr(sb, "</a>");
	} else {
		strbuf_addstr(sb, "-");
	}
	strbuf_addstr(sb, "</td>");
}

static void ir_section(const struct report_ab *m, struct strbuf *sb)
{
	static const char *const heads[] = { "operator", "IR verdict", "#same", "#differ",
					     "#only A", "#only B", "note", NULL };
	static const char *const fheads[] = { "stage file", "what", "A", "B", NULL };

	html_h2(sb, "ir", "Generated code (IR)");
	if (!m->nr_ir) {
		html_p(sb, "sub", "No operator was measured on both sides: no IR to compare.");
		return;
	}
	html_p(sb, "sub", "Per operator, the IR of one run of each side (ttgir, llir, ptx, "
	       "cubin ... below ttgir/): identical means the compiler change did not change "
	       "the code, and any difference in time is noise or the machine. Links open "
	       "the files (relative to this report).");
	html_table_begin(sb, "ir", NULL, heads);
	for (size_t i = 0; i < m->nr_ir; i++) {
		const struct report_ir_op *o = &m->ir[i];

		html_tr_begin(sb, NULL);
		html_td(sb, o->op);
		html_td_cls(sb, o->ok && o->verdict == AB_IR_DIFFER ? "v-SLOWER" : NULL,
			    o->ok ? ab_ir_verdict_name(o->verdict) : "unknown");
		html_td_num(sb, "%zu", o->same);
		html_td_num(sb, "%zu", o->differing);
		html_td_num(sb, "%zu", o->only_a);
		html_td_num(sb, "%zu", o->only_b);
		html_td_cls(sb, "wrap", o->why ? o->why : "");
		html_tr_end(sb);
	}
	html_table_end(sb);
	for (size_t i = 0; i < m->nr_ir; i++) {
		const struct report_ir_op *o = &m->ir[i];
		size_t total = o->differing + o->only_a + o->only_b;
		struct strbuf t = STRBUF_INIT;

		if (!o->nr_files)
			continue;
		strbuf_addf(&t, "%s: the stage files that differ", o->op);
		strbuf_addstr(sb, "<h3>");
		html_escape(sb, t.buf);
		strbuf_addstr(sb, "</h3>\n");
		strbuf_reset(&t);
		strbuf_addf(&t, "A: %s  B: %s", o->run[0], o->run[1]);
		html_p(sb, "sub", t.buf);
		strbuf_addstr(sb, "<div class=\"scroll\">\n");
		html_table_begin(sb, "irfiles", NULL, fheads);
		for (size_t j = 0; j < o->nr_files; j++) {
			const struct report_ir_file *f = &o->files[j];
			static const char *const what[] = { "differs", "only in A", "only in B" };

			html_tr_begin(sb, NULL);
			html_td_cls(sb, "wrap", f->rel);
			html_td(sb, what[f->what]);
			link_cell(sb, f->link[0], "A");
			link_cell(sb, f->link[1], "B");
			html_tr_end(sb);
		}
		html_table_end(sb);
		strbuf_addstr(sb, "</div>\n");
		if (total > o->nr_files) {
			strbuf_reset(&t);
			strbuf_addf(&t, "... and %zu more (zlb ir diff lists them all).",
				    total - o->nr_files);
			html_p(sb, "sub", t.buf);
		}
		strbuf_release(&t);
	}
}

static void identities(const struct report_ab *m, struct strbuf *sb)
{
	const json_t **ids[2];
	struct report_idset sides[2];
	const char *names[2] = { "A", "B" };
	struct strbuf na = STRBUF_INIT, nb = STRBUF_INIT;

	for (int s = 0; s < 2; s++) {
		size_t n = json_is_array(m->runs[s]) ? json_array_size(m->runs[s]) : 0;
		ids[s] = xcalloc(n + 1, sizeof(*ids[s]));
		for (size_t i = 0; i < n; i++)
			ids[s][i] = json_array_get(m->runs[s], i);
		sides[s].ids = ids[s];
		sides[s].n = n;
	}
	strbuf_addf(&na, "A (%zu run%s)", sides[0].n, sides[0].n == 1 ? "" : "s");
	strbuf_addf(&nb, "B (%zu run%s)", sides[1].n, sides[1].n == 1 ? "" : "s");
	names[0] = na.buf;
	names[1] = nb.buf;
	html_h2(sb, "caliber", "Calibers, side by side");
	html_p(sb, "sub", "How each side measured: every field must agree for the comparison "
	       "to hold. Highlighted rows differ.");
	report_identity_table(sb, "caliber", NULL, sides, 2, names);
	html_h2(sb, "provenance", "Provenance, side by side");
	html_p(sb, "sub", "What each side ran on: the compiler under test is provenance, so "
	       "the build is expected to differ here (highlighted).");
	report_identity_table(sb, "provenance", NULL, sides, 2, names);
	html_h2(sb, "runs", "Runs");
	for (int s = 0; s < 2; s++) {
		static const char *const heads[] = { "side", "run directory", "operator", NULL };
		size_t i;
		const json_t *r;

		if (!s)
			html_table_begin(sb, "runs", NULL, heads);
		json_array_foreach(m->runs[s], i, r) {
			html_tr_begin(sb, NULL);
			html_td(sb, s ? "B" : "A");
			html_td_cls(sb, "wrap", str_or(r, "dir", "?"));
			html_td(sb, str_or(r, "op", "?"));
			html_tr_end(sb);
		}
	}
	html_table_end(sb);
	free(ids[0]);
	free(ids[1]);
	strbuf_release(&na);
	strbuf_release(&nb);
}

static void remarks(const struct report_ab *m, struct strbuf *sb)
{
	const json_t *lists[2] = { m->warnings, m->notes };
	size_t n = 0;

	for (int l = 0; l < 2; l++)
		n += json_is_array(lists[l]) ? json_array_size(lists[l]) : 0;
	if (!n)
		return;
	html_h2(sb, "remarks", "Warnings and notes");
	strbuf_addstr(sb, "<ul>\n");
	for (int l = 0; l < 2; l++) {
		size_t i;
		const json_t *w;
		json_array_foreach(lists[l], i, w) {
			if (!json_is_string(w))
				continue;
			strbuf_addstr(sb, l ? "<li>note: " : "<li>warning: ");
			html_escape(sb, json_string_value(w));
			strbuf_addstr(sb, "</li>\n");
		}
	}
	strbuf_addstr(sb, "</ul>\n");
}

void report_ab_render(const struct report_ab *m, const struct report_opts *o,
		      struct strbuf *html)
{
	static const char *const nav[] = { "forest=Forest plot", "rows=Rows", "ir=IR",
		"caliber=Calibers", "provenance=Provenance", "runs=Runs", NULL };
	struct strbuf title = STRBUF_INIT, sub = STRBUF_INIT;

	if (m->ab)
		strbuf_addf(&title, "A/B of %s", str_or(m->ab, "op", "?"));
	else
		strbuf_addstr(&title, "A/B comparison");
	strbuf_addf(&sub, "A: %s   B: %s", m->names[0] ? m->names[0] : "?",
		    m->names[1] ? m->names[1] : "?");
	if (m->ab && json_is_string(json_object_get(m->ab, "axis")))
		strbuf_addf(&sub, "   axis: %s", str_or(m->ab, "axis", ""));
	strbuf_addf(&sub, "   threshold %.3g%%, FDR %.3g", m->threshold * 100, m->fdr);
	report_page_head(html, title.buf, sub.buf, nav);
	banners(m, html);
	cards(m, html);
	forest(m, html);
	details(m, html);
	ir_section(m, html);
	identities(m, html);
	remarks(m, html);
	html_end(html, o->generated_at);
	strbuf_release(&title);
	strbuf_release(&sub);
}
