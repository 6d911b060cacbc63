/* The terminal report of a comparison; compare_files.c writes compare.json and compare.csv. */
#include "compare/compare_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare/compare_int.h"
#include "rundir/exit_codes.h"
#include "rundir/identity.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/term.h"
#include "lib/texttable.h"
#include "rundir/markers.h"

#define UNPAIRED_SHOWN 20


/* ---- small formatting helpers -------------------------------------------- */

void compare_format_change(struct strbuf *sb, double ratio)
{
	if (!isfinite(ratio)) {
		strbuf_addstr(sb, "-");
		return;
	}
	strbuf_addf(sb, "%+.2f%%", 100 * (ratio - 1));
}

/* Paths under the current directory are shown relative to it. */
static const char *shown_path(const char *abs, char *cwd)
{
	size_t n = strlen(cwd);

	if (n && !strncmp(abs, cwd, n) && abs[n] == '/')
		return abs + n + 1;
	return abs;
}

static const char *short_dtype(const char *d)
{
	const char *rest;
	return skip_prefix(d, "torch.", &rest) ? rest : d;
}

static const char *marker_abbrev(const char *m)
{
	if (!strcmp(m, MARKER_DIRECT))
		return "direct";
	if (!strcmp(m, MARKER_MEMCPY_NODES))
		return "memcpy";
	if (!strcmp(m, MARKER_REPLAY_FALLBACK))
		return "replay-fallback";
	if (!strcmp(m, MARKER_K_DIFFERS))
		return "K";
	if (!strcmp(m, MARKER_NO_KERNELS))
		return "no-kernels";
	return NULL;
}

/* A row excluded from verdicts has none: COMPARE_EXCLUDED stands in the verdict's place. */
const char *compare_verdict_text(const struct compare_row *row, int k)
{
	return row->excluded ? COMPARE_EXCLUDED : stats_verdict_name(row->verdict[k]);
}

static enum term_color verdict_color(enum stats_verdict v)
{
	switch (v) {
	case STATS_FASTER:
		return TERM_GREEN;
	case STATS_SLOWER:
		return TERM_RED;
	case STATS_UNSURE:
		return TERM_YELLOW;
	case STATS_SAME:
		break;
	}
	return TERM_DIM;
}

/* ---- header and caliber ----------------------------------------------------- */

static const char *prov_str(const json_t *id, const char *a, const char *b)
{
	const json_t *p = json_object_get(id, "provenance");
	const json_t *v = json_object_get(p, a);

	if (b)
		v = json_object_get(v, b);
	return json_string_value(v);
}

/* The build a side ran: distinct triton versions, triton builds and FlagGems commits. */
static void side_build(const struct compare_side *side, struct strbuf *sb)
{
	struct strvec triton = STRVEC_INIT, build = STRVEC_INIT, fg = STRVEC_INIT;

	for (size_t i = 0; i < side->nr; i++) {
		const json_t *id = side->runs[i].identity;
		const char *t = prov_str(id, "runtime", "triton");
		const char *g = prov_str(id, "runtime", "triton_git");
		const char *x = prov_str(id, "triton_build", "xxh3");
		const char *f = prov_str(id, "flaggems_commit", NULL);
		char *s;

		if (t) {
			s = g ? xstrfmt("%s (git %.10s)", t, g) : xstrdup(t);
			if (strvec_find(&triton, s) < 0)
				strvec_push(&triton, s);
			free(s);
		}
		if (x && strvec_find(&build, x) < 0)
			strvec_push(&build, x);
		if (f) {
			s = xstrfmt("%.12s", f);
			if (strvec_find(&fg, s) < 0)
				strvec_push(&fg, s);
			free(s);
		}
	}
	for (size_t i = 0; i < triton.nr; i++)
		strbuf_addf(sb, "%s%s", i ? ", " : " triton ", triton.v[i]);
	for (size_t i = 0; i < build.nr; i++)
		strbuf_addf(sb, "%s%.16s", i ? ", " : " build ", build.v[i]);
	for (size_t i = 0; i < fg.nr; i++)
		strbuf_addf(sb, "%s%s", i ? ", " : " flaggems ", fg.v[i]);
	strvec_clear(&triton);
	strvec_clear(&build);
	strvec_clear(&fg);
}

void compare_render_header(const struct compare *c, struct strbuf *sb, int color)
{
	char cwd[4096] = "";

	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	for (int s = 0; s < 2; s++) {
		const struct compare_side *side = &c->side[s];

		term_addstr_colored(sb, color, TERM_BOLD, side->name);
		strbuf_addf(sb, ": %zu run%s:", side->nr, side->nr == 1 ? "" : "s");
		for (size_t i = 0; i < side->nr; i++)
			strbuf_addf(sb, " %s", shown_path(side->runs[i].dir, cwd));
		strbuf_addch(sb, '\n');
		strbuf_addstr(sb, "   ");
		side_build(side, sb);
		strbuf_rtrim(sb);
		strbuf_addch(sb, '\n');
	}
}

void compare_render_caliber(const struct compare *c, struct strbuf *sb, int color, int allowed)
{
	struct strbuf line = STRBUF_INIT;

	for (size_t i = 0; i < c->caliber_problems.nr; i++) {
		strbuf_reset(&line);
		strbuf_addf(&line, "!!! [caliber] %s", c->caliber_problems.v[i]);
		term_addstr_colored(sb, color, TERM_RED, line.buf);
		strbuf_addch(sb, '\n');
	}
	if (c->caliber_problems.nr && allowed) {
		term_addstr_colored(sb, color, TERM_RED,
				    "!!! [caliber] compared anyway (--allow-caliber-mismatch): a "
				    "difference below may come from the caliber, not the build");
		strbuf_addch(sb, '\n');
	}
	for (size_t i = 0; i < c->warnings_early; i++) {
		strbuf_reset(&line);
		strbuf_addf(&line, "warning: %s", c->warnings.v[i]);
		term_addstr_colored(sb, color, TERM_YELLOW, line.buf);
		strbuf_addch(sb, '\n');
	}
	strbuf_release(&line);
}

/* ---- the table ---------------------------------------------------------------- */

/*
 * The columns, and how each gives way on a narrow terminal: the operator and
 * the shape are cut (their whole text is in compare.csv and --format
 * json/csv), the notes wrap; then the torch control, the latencies and q
 * are left out, in that order (a line says so). The change, its interval
 * and the verdict always stay.
 */
#define NCOLS 12
static const struct tt_column table_cols[NCOLS] = {
	{ "op", 0, TT_CUT, 10, 1, 0 },
	{ "dtype", 0, TT_KEEP, 0, 1, 0 },
	{ "shape", 0, TT_CUT, 12, 1, 0 },
	{ "A gems ms", 1, TT_KEEP, 0, 0, 3 },
	{ "B gems ms", 1, TT_KEEP, 0, 0, 4 },
	{ "B/A", 1, TT_KEEP, 0, 0, 0 },
	{ "95% CI", 0, TT_KEEP, 0, 0, 0 },
	{ "q", 1, TT_KEEP, 0, 0, 5 },
	{ "verdict", 0, TT_KEEP, 0, 0, 0 },
	{ "torch B/A", 1, TT_KEEP, 0, 0, 2 },
	{ "torch", 0, TT_KEEP, 0, 0, 1 },
	{ "notes", 0, TT_WRAP, 10, 0, 0 },
};

static char *interval_text(const struct stats_cmp *r)
{
	struct strbuf sb = STRBUF_INIT;

	if (!r->ok)
		return xstrdup("-");
	strbuf_addf(&sb, "[%+.2f, %+.2f]%%", 100 * (r->lo - 1), 100 * (r->hi - 1));
	return strbuf_detach(&sb, NULL);
}

static char *change_text(double ratio)
{
	struct strbuf sb = STRBUF_INIT;

	compare_format_change(&sb, ratio);
	return strbuf_detach(&sb, NULL);
}

static char *q_text(const struct compare_row *row, int k)
{
	double q = row->q[k];

	if (!row->has[k] || !row->res[k].ok || !isfinite(q))
		return xstrdup("-");
	if (q < 1e-4)
		return xstrdup("<1e-4");
	return xstrfmt("%.2g", q);
}

static char *op_text(const struct compare_row *row)
{
	if (*row->op_name && strcmp(row->op_name, row->op))
		return xstrfmt("%s:%s", row->op, row->op_name);
	return xstrdup(row->op);
}

/* The reason of a "<reason>:<kernel>" point, appended to sb. */
static void add_reason(struct strbuf *sb, const char *point)
{
	const char *colon = strchr(point, ':');

	strbuf_add(sb, point, colon ? (size_t)(colon - point) : strlen(point));
}

/* "(key_missing,compile_failed)": the distinct reasons of a side's fallbacks. */
static void fallback_reasons(struct strbuf *sb, const struct strvec *fb)
{
	size_t start = sb->len;

	for (size_t i = 0; i < fb->nr; i++) {
		struct strbuf r = STRBUF_INIT;
		int seen = 0;

		add_reason(&r, fb->v[i]);
		for (size_t j = 0; j < i && !seen; j++) {
			struct strbuf q = STRBUF_INIT;

			add_reason(&q, fb->v[j]);
			seen = !strcmp(q.buf, r.buf);
			strbuf_release(&q);
		}
		if (!seen)
			strbuf_addf(sb, "%c%s", sb->len > start ? ',' : '(', r.buf);
		strbuf_release(&r);
	}
	if (sb->len > start)
		strbuf_addch(sb, ')');
}

/* "TEXT A,B" where both sides say the same, else "TEXT A" and/or "TEXT B". */
static void sides_note(struct strbuf *sb, const char *a, const char *b)
{
	if (a && b && !strcmp(a, b)) {
		strbuf_addf(sb, "%s%s A,B", sb->len ? " " : "", a);
		return;
	}
	if (a)
		strbuf_addf(sb, "%s%s A", sb->len ? " " : "", a);
	if (b)
		strbuf_addf(sb, "%s%s B", sb->len ? " " : "", b);
}

/*
 * "power cap A,B", "thermal B": what held the gems measurement's clock
 * down. "duty 0.5 A,B", "duty 0.5 B": a side whose gems rounds were sampled
 * again with the GPU idle in between because the power cap held them; on
 * one side only, the row's sides ran at other duties.
 */
static void clock_notes(struct strbuf *sb, const struct compare_row *row)
{
	char duty[2][32];

	sides_note(sb, compare_row_clock_limit(row, COMPARE_GEMS, 0),
		   compare_row_clock_limit(row, COMPARE_GEMS, 1));
	for (int s = 0; s < 2; s++)
		snprintf(duty[s], sizeof(duty[s]), "duty %g", row->side[s].duty[COMPARE_GEMS]);
	sides_note(sb, row->side[0].duty[COMPARE_GEMS] < 1 ? duty[0] : NULL,
		   row->side[1].duty[COMPARE_GEMS] < 1 ? duty[1] : NULL);
}

static char *notes_text(const struct compare_row *row, const size_t nruns[2])
{
	struct strbuf sb = STRBUF_INIT;
	const struct stats_cmp *g = &row->res[COMPARE_GEMS];
	double lo, hi;
	size_t need;

	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < row->side[s].markers.nr; i++) {
			const char *ab = marker_abbrev(row->side[s].markers.v[i]);
			if (!ab)
				continue;
			strbuf_addf(&sb, "%s!%c:%s", sb.len ? " " : "", s ? 'B' : 'A', ab);
			if (!strcmp(row->side[s].markers.v[i], MARKER_REPLAY_FALLBACK))
				fallback_reasons(&sb, &row->side[s].fallbacks);
		}
	if (row->has[COMPARE_GEMS]) {
		/* rounds, when the row has fewer than its sides have runs */
		if (g->ka != nruns[0] || g->kb != nruns[1])
			strbuf_addf(&sb, "%srounds %zu/%zu", sb.len ? " " : "", g->ka, g->kb);
		if (!g->ok)
			strbuf_addf(&sb, "%sno inference: %s", sb.len ? " " : "", g->why);
		if (compare_row_control_moved_too(row))
			strbuf_addf(&sb, "%sctl too", sb.len ? " " : "");
		need = compare_row_rounds_needed(row);
		if (need > COMPARE_ROUNDS_SHOWN)
			strbuf_addf(&sb, "%sneeds >%d rounds", sb.len ? " " : "",
				    COMPARE_ROUNDS_SHOWN);
		else if (need)
			strbuf_addf(&sb, "%sneeds %zu rounds", sb.len ? " " : "", need);
		if (compare_row_clocks(row, COMPARE_GEMS, &lo, &hi))
			strbuf_addf(&sb, "%sclock %.0f-%.0f MHz", sb.len ? " " : "", lo, hi);
		if (compare_row_effective_clocks(row, COMPARE_GEMS, &lo, &hi)) {
			strbuf_addf(&sb, "%seff %.0f-%.0f MHz", sb.len ? " " : "", lo, hi);
			if (isfinite(g->elasticity))
				strbuf_addf(&sb, " s %.2f", g->elasticity);
		}
		clock_notes(&sb, row);
	} else {
		strbuf_addf(&sb, "%sno gems latency", sb.len ? " " : "");
	}
	return strbuf_detach(&sb, NULL);
}

static void fill_row(const struct compare_row *row, struct tt_cell *cells, const size_t nruns[2])
{
	const struct stats_cmp *g = &row->res[COMPARE_GEMS], *t = &row->res[COMPARE_TORCH];

	tt_set(&cells[0], op_text(row));
	tt_set(&cells[1], xstrdup(short_dtype(row->dtype)));
	tt_set(&cells[2], xstrdup(row->shape));
	if (row->has[COMPARE_GEMS]) {
		tt_set(&cells[3], xstrfmt("%.6g", g->a_ms));
		tt_set(&cells[4], xstrfmt("%.6g", g->b_ms));
		tt_set(&cells[5], change_text(g->ratio));
		tt_set(&cells[6], interval_text(g));
		tt_set(&cells[7], q_text(row, COMPARE_GEMS));
		tt_set_colored(&cells[8], xstrdup(compare_verdict_text(row, COMPARE_GEMS)),
			       row->excluded ? TERM_DIM : verdict_color(row->verdict[COMPARE_GEMS]));
	} else {
		for (int i = 3; i <= 8; i++)
			tt_set(&cells[i], xstrdup("-"));
	}
	if (row->has[COMPARE_TORCH]) {
		tt_set(&cells[9], change_text(t->ratio));
		tt_set_colored(&cells[10], xstrdup(compare_verdict_text(row, COMPARE_TORCH)),
			       row->excluded ? TERM_DIM : verdict_color(row->verdict[COMPARE_TORCH]));
	} else {
		tt_set(&cells[9], xstrdup("-"));
		tt_set(&cells[10], xstrdup("-"));
	}
	tt_set(&cells[11], notes_text(row, nruns));
}

size_t compare_build_table(const struct compare *c, const struct compare_view *v,
			  struct texttable *t)
{
	size_t *idx, n = compare_view_rows(c, v, &idx), shown = 0, nruns[2];

	tt_init(t, table_cols, NCOLS);
	for (size_t i = 0; i < n; i++) {
		const struct compare_row *row = &c->rows[idx[i]];

		if (!row->paired)
			continue;
		nruns[0] = row->side[0].op_runs;
		nruns[1] = row->side[1].op_runs;
		fill_row(row, tt_add_row(t), nruns);
		shown++;
	}
	free(idx);
	return shown;
}

static void render_table(const struct compare *c, const struct compare_view *v,
			 struct strbuf *sb, int color)
{
	struct texttable t;
	size_t shown = compare_build_table(c, v, &t);

	t.hidden_hint = "--wide shows every column";
	if (shown)
		tt_render(&t, v ? v->width : 0, color, sb);
	if (v && v->only_changed)
		strbuf_addf(sb, "%s%zu of %zu paired row%s shown (--only-changed: SLOWER or FASTER)\n",
			    shown ? "" : "no row changed: ", shown, c->paired, PLURAL(c->paired));
	tt_release(&t);
}

static void row_label(struct strbuf *sb, const struct compare_row *row)
{
	char *op = op_text(row);

	strbuf_addf(sb, "%s %s %s", op, short_dtype(row->dtype), row->shape);
	free(op);
}

/*
 * One line over the table's "needs N rounds" notes, for a comparison too
 * long to read row by row: how many UNSURE gems rows more rounds would
 * settle, the most rounds a side any of them asks, and how many ask more
 * than COMPARE_ROUNDS_SHOWN (rows that rounds will not settle).
 */
static void rounds_note(const struct compare *c, struct strbuf *sb)
{
	size_t settle = 0, beyond = 0, lo = 0, hi = 0;

	for (size_t i = 0; i < c->nr_rows; i++) {
		size_t need = compare_row_rounds_needed(&c->rows[i]);

		if (!need)
			continue;
		if (need > COMPARE_ROUNDS_SHOWN) {
			beyond++;
			continue;
		}
		settle++;
		lo = !lo || need < lo ? need : lo;
		hi = need > hi ? need : hi;
	}
	if (!settle && !beyond)
		return;
	strbuf_addstr(sb, "note: by their noise, ");
	if (settle) {
		strbuf_addf(sb, "%zu UNSURE gems row%s would settle with %zu", settle,
			    settle == 1 ? "" : "s", lo);
		if (hi > lo)
			strbuf_addf(sb, "-%zu", hi);
		strbuf_addstr(sb, " rounds a side");
	}
	if (beyond) {
		if (settle)
			strbuf_addf(sb, "; %zu would not with %d", beyond, COMPARE_ROUNDS_SHOWN);
		else
			strbuf_addf(sb, "%zu UNSURE gems row%s would not settle with %d rounds "
				    "a side", beyond, beyond == 1 ? "" : "s", COMPARE_ROUNDS_SHOWN);
		strbuf_addf(sb, " (%s with placement or the clock: another caliber or fixed "
			    "clocks settle %s)", beyond == 1 ? "it moves" : "they move",
			    beyond == 1 ? "it" : "them");
	}
	strbuf_addstr(sb, ": see the rows' `needs N rounds`\n");
}

static void render_unpaired(const struct compare *c, struct strbuf *sb)
{
	size_t n = c->only_a + c->only_b + c->not_success, shown = 0;

	if (!n)
		return;
	strbuf_addf(sb, "\nnot compared: %zu row%s\n", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < c->nr_rows && shown < UNPAIRED_SHOWN; i++) {
		const struct compare_row *row = &c->rows[i];

		if (row->paired)
			continue;
		strbuf_addf(sb, "  %-26s ", row->unpaired_reason);
		row_label(sb, row);
		for (int s = 0; s < 2; s++)
			if (row->side[s].present && !row->side[s].success) {
				strbuf_addf(sb, " (%s: ", s ? "B" : "A");
				for (size_t j = 0; j < row->side[s].statuses.nr; j++)
					strbuf_addf(sb, "%s%s", j ? "/" : "", row->side[s].statuses.v[j]);
				strbuf_addch(sb, ')');
			}
		strbuf_addch(sb, '\n');
		shown++;
	}
	if (n > shown)
		strbuf_addf(sb, "  ... and %zu more (see %s)\n", n - shown, COMPARE_JSON);
}

static void render_counts(struct strbuf *sb, const struct compare_counts *k, int color)
{
	static const enum stats_verdict order[] = { STATS_SLOWER, STATS_FASTER, STATS_SAME,
						    STATS_UNSURE };

	for (size_t i = 0; i < 4; i++) {
		char *t = xstrfmt("%zu %s", k->n[order[i]], stats_verdict_name(order[i]));

		if (i)
			strbuf_addstr(sb, ", ");
		if (k->n[order[i]] && (order[i] == STATS_SLOWER || order[i] == STATS_FASTER))
			term_addstr_colored(sb, color, verdict_color(order[i]), t);
		else
			strbuf_addstr(sb, t);
		free(t);
	}
}

void compare_render_report(const struct compare *c, const struct compare_view *v,
			   struct strbuf *sb, int color)
{
	const struct compare_counts *g = &c->counts[COMPARE_GEMS];

	if (c->paired) {
		strbuf_addch(sb, '\n');
		render_table(c, v, sb, color);
	}
	render_unpaired(c, sb);
	compare_render_legend(c, sb);

	strbuf_addch(sb, '\n');
	if (c->single_round_rows)
		strbuf_addf(sb, "note: one round (run) per side on some rows: their intervals "
			    "assume a drift per side of %.2f%% (--drift-floor) plus how far the "
			    "rounds' placement probes say two processes' buffers land apart "
			    "(several percent for a kernel of a few us on one graph); "
			    "give rounds (A1 A2 A3 -- B1 B2 B3) to measure the drift itself\n",
			    100 * c->opts.drift_floor);
	rounds_note(c, sb);
	for (size_t i = 0; i < c->notes.nr; i++)
		strbuf_addf(sb, "note: %s\n", c->notes.v[i]);

	strbuf_addf(sb, "compare: %zu paired row%s; gems: ", c->paired, c->paired == 1 ? "" : "s");
	render_counts(sb, g, color);
	strbuf_addf(sb, " (threshold %.2f%%, FDR %.3g); torch control: ", 100 * c->opts.threshold,
		    c->opts.fdr);
	render_counts(sb, &c->counts[COMPARE_TORCH], color);
	strbuf_addf(sb, "; not compared: %zu only in A, %zu only in B, %zu not SUCCESS",
		    c->only_a, c->only_b, c->not_success);
	if (c->fallback_rows)
		strbuf_addf(sb, "; %zu flagged", c->fallback_rows);
	if (c->excluded_rows)
		strbuf_addf(sb, " (%zu " COMPARE_EXCLUDED ": GRAPH_NO_KERNELS)", c->excluded_rows);
	strbuf_addch(sb, '\n');
}

void compare_render_warnings(const struct compare *c, struct strbuf *sb, int color)
{
	const struct compare_counts *t = &c->counts[COMPARE_TORCH];

	for (size_t i = c->warnings_early; i < c->warnings.nr; i++) {
		char *w = xstrfmt("warning: %s", c->warnings.v[i]);
		term_addstr_colored(sb, color, TERM_YELLOW, w);
		strbuf_addch(sb, '\n');
		free(w);
	}
	if (t->n[STATS_SLOWER] + t->n[STATS_FASTER]) {
		char *w = xstrfmt("warning: the torch control moved on %zu of %zu rows: the "
				  "machine's state, not only the build, may differ between A and B",
				  t->n[STATS_SLOWER] + t->n[STATS_FASTER], t->compared);
		term_addstr_colored(sb, color, TERM_YELLOW, w);
		strbuf_addch(sb, '\n');
		free(w);
	}
}

int compare_render_result(const struct compare *c, struct strbuf *sb, int color)
{
	size_t slower = c->counts[COMPARE_GEMS].n[STATS_SLOWER];

	if (!c->paired) {
		strbuf_addstr(sb, "result: nothing to compare: no row is SUCCESS on both sides "
			      "(exit 8)\n");
		return ZLB_EXIT_NO_DATA;
	}
	if (c->regression) {
		size_t ctl = 0;
		char *t;

		for (size_t i = 0; i < c->nr_rows; i++)
			ctl += c->rows[i].verdict[COMPARE_GEMS] == STATS_SLOWER &&
			       compare_row_control_moved_too(&c->rows[i]);
		t = xstrfmt("result: REGRESSION: %zu gems row%s SLOWER beyond %.2f%%%s (exit 1)",
			    slower, slower == 1 ? "" : "s", 100 * c->opts.threshold,
			    !ctl ? "" : ctl == slower ? " (on every one the torch control moved too)"
				 : " (on some the torch control moved too: ctl too)");
		term_addstr_colored(sb, color, TERM_RED, t);
		strbuf_addch(sb, '\n');
		free(t);
		return ZLB_EXIT_REGRESSION;
	}
	strbuf_addf(sb, "result: no significant regression beyond %.2f%%\n",
		    100 * c->opts.threshold);
	return ZLB_EXIT_OK;
}
