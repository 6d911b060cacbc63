/*
 * Over 700 lines, kept whole for now: the terminal, JSON, CSV and Markdown
 * reports of one comparison read the same rows the same way; issue 13's
 * src/compare/ gives each format its own file.
 */
#include "compare/compare_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rundir/exit_codes.h"
#include "rundir/identity.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/term.h"
#include "rundir/markers.h"

#define SHAPE_WIDTH 40
#define UNPAIRED_SHOWN 20

static const char *kind_name[COMPARE_KINDS] = { "gems", "torch" };

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

#define EXCLUDED "EXCLUDED"

/* A row excluded from verdicts has none: EXCLUDED stands in the verdict's place. */
static const char *verdict_text(const struct compare_row *row, int k)
{
	return row->excluded ? EXCLUDED : stats_verdict_name(row->verdict[k]);
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

#define NCOLS 12
static const char *col_names[NCOLS] = {
	"op", "dtype", "shape", "A gems ms", "B gems ms", "B/A", "95% CI", "q", "verdict",
	"torch B/A", "torch", "notes",
};
/* right-aligned numeric columns */
static const int col_right[NCOLS] = { 0, 0, 0, 1, 1, 1, 0, 1, 0, 1, 0, 0 };

struct cell {
	char *text;
	int colored;
	enum term_color color;
};

static void cell_set(struct cell *c, char *text)
{
	c->text = text;
	c->colored = 0;
}

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

static char *shape_text(const char *shape)
{
	if (strlen(shape) <= SHAPE_WIDTH)
		return xstrdup(shape);
	return xstrfmt("%.*s...", SHAPE_WIDTH - 3, shape);
}

static char *op_text(const struct compare_row *row)
{
	if (*row->op_name && strcmp(row->op_name, row->op))
		return xstrfmt("%s:%s", row->op, row->op_name);
	return xstrdup(row->op);
}

static char *notes_text(const struct compare_row *row, const size_t nruns[2])
{
	struct strbuf sb = STRBUF_INIT;
	const struct stats_cmp *g = &row->res[COMPARE_GEMS];

	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < row->side[s].markers.nr; i++) {
			const char *ab = marker_abbrev(row->side[s].markers.v[i]);
			if (ab)
				strbuf_addf(&sb, "%s!%c:%s", sb.len ? " " : "", s ? 'B' : 'A', ab);
		}
	if (row->has[COMPARE_GEMS]) {
		/* rounds, when the row has fewer than its sides have runs */
		if (g->ka != nruns[0] || g->kb != nruns[1])
			strbuf_addf(&sb, "%srounds %zu/%zu", sb.len ? " " : "", g->ka, g->kb);
		if (!g->ok)
			strbuf_addf(&sb, "%sno inference: %s", sb.len ? " " : "", g->why);
	} else {
		strbuf_addf(&sb, "%sno gems latency", sb.len ? " " : "");
	}
	return strbuf_detach(&sb, NULL);
}

static void fill_row(const struct compare_row *row, struct cell *cells, const size_t nruns[2])
{
	const struct stats_cmp *g = &row->res[COMPARE_GEMS], *t = &row->res[COMPARE_TORCH];

	cell_set(&cells[0], op_text(row));
	cell_set(&cells[1], xstrdup(short_dtype(row->dtype)));
	cell_set(&cells[2], shape_text(row->shape));
	if (row->has[COMPARE_GEMS]) {
		cell_set(&cells[3], xstrfmt("%.6g", g->a_ms));
		cell_set(&cells[4], xstrfmt("%.6g", g->b_ms));
		cell_set(&cells[5], change_text(g->ratio));
		cell_set(&cells[6], interval_text(g));
		cell_set(&cells[7], q_text(row, COMPARE_GEMS));
		cell_set(&cells[8], xstrdup(verdict_text(row, COMPARE_GEMS)));
		cells[8].colored = 1;
		cells[8].color = row->excluded ? TERM_DIM : verdict_color(row->verdict[COMPARE_GEMS]);
	} else {
		for (int i = 3; i <= 8; i++)
			cell_set(&cells[i], xstrdup("-"));
	}
	if (row->has[COMPARE_TORCH]) {
		cell_set(&cells[9], change_text(t->ratio));
		cell_set(&cells[10], xstrdup(verdict_text(row, COMPARE_TORCH)));
		cells[10].colored = 1;
		cells[10].color = row->excluded ? TERM_DIM : verdict_color(row->verdict[COMPARE_TORCH]);
	} else {
		cell_set(&cells[9], xstrdup("-"));
		cell_set(&cells[10], xstrdup("-"));
	}
	cell_set(&cells[11], notes_text(row, nruns));
}

static void add_padded(struct strbuf *sb, const struct cell *c, size_t width, int right,
		       int color, int last)
{
	size_t len = strlen(c->text);

	if (right)
		strbuf_addchars(sb, ' ', width - len);
	if (c->colored)
		term_addstr_colored(sb, color, c->color, c->text);
	else
		strbuf_addstr(sb, c->text);
	if (!right && !last)
		strbuf_addchars(sb, ' ', width - len);
}

static void render_table(const struct compare *c, struct strbuf *sb, int color)
{
	size_t width[NCOLS], nr = c->paired, nruns[2];
	struct cell *cells = xcalloc((nr + 1) * NCOLS, sizeof(*cells));
	size_t r = 0;

	for (int k = 0; k < NCOLS; k++)
		cell_set(&cells[k], xstrdup(col_names[k]));
	for (size_t i = 0; i < c->nr_rows; i++)
		if (c->rows[i].paired) {
			nruns[0] = compare_row_runs(c, 0, &c->rows[i]);
			nruns[1] = compare_row_runs(c, 1, &c->rows[i]);
			fill_row(&c->rows[i], &cells[(++r) * NCOLS], nruns);
		}
	for (int k = 0; k < NCOLS; k++) {
		width[k] = 0;
		for (size_t j = 0; j <= nr; j++)
			if (strlen(cells[j * NCOLS + k].text) > width[k])
				width[k] = strlen(cells[j * NCOLS + k].text);
	}
	for (size_t j = 0; j <= nr; j++) {
		struct strbuf line = STRBUF_INIT;

		for (int k = 0; k < NCOLS; k++) {
			if (k)
				strbuf_addstr(&line, "  ");
			add_padded(&line, &cells[j * NCOLS + k], width[k], col_right[k], color,
				   k == NCOLS - 1);
		}
		strbuf_rtrim(&line);
		if (j == 0)
			term_addstr_colored(sb, color, TERM_BOLD, line.buf);
		else
			strbuf_addstr(sb, line.buf);
		strbuf_addch(sb, '\n');
		strbuf_release(&line);
	}
	for (size_t j = 0; j < (nr + 1) * NCOLS; j++)
		free(cells[j].text);
	free(cells);
}

static void row_label(struct strbuf *sb, const struct compare_row *row)
{
	char *op = op_text(row);

	strbuf_addf(sb, "%s %s %s", op, short_dtype(row->dtype), row->shape);
	free(op);
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

void compare_render_report(const struct compare *c, struct strbuf *sb, int color)
{
	const struct compare_counts *g = &c->counts[COMPARE_GEMS], *t = &c->counts[COMPARE_TORCH];
	int marker_seen[8] = { 0 };

	if (c->paired) {
		strbuf_addch(sb, '\n');
		render_table(c, sb, color);
	}
	render_unpaired(c, sb);

	/* legend of the flags that occur */
	for (size_t i = 0; i < c->nr_rows; i++)
		for (int s = 0; s < 2; s++)
			for (int m = 0; compare_flagged_markers[m]; m++)
				if (c->rows[i].paired &&
				    strvec_find(&c->rows[i].side[s].markers, compare_flagged_markers[m]) >= 0)
					marker_seen[m] = 1;
	if (marker_seen[0] || marker_seen[1] || marker_seen[2] || marker_seen[3] ||
	    marker_seen[4])
		strbuf_addch(sb, '\n');
	if (marker_seen[0])
		strbuf_addstr(sb, "!A:direct / !B:direct  BENCHMARK_DIRECT_NO_CUDAGRAPH: the row fell "
			      "back to direct (eager) timing on that side, another caliber than graph "
			      "replay\n");
	if (marker_seen[1])
		strbuf_addstr(sb, "!A:memcpy / !B:memcpy  GRAPH_MEMCPY_NODES: the captured graph holds "
			      "copy-engine nodes, timed differently from the eager copy\n");
	if (marker_seen[2])
		strbuf_addstr(sb, "!A:replay-fallback / !B:replay-fallback  AUTOTUNE_REPLAY_FALLBACK: "
			      "the side tuned instead of replaying the recorded configs\n");
	if (marker_seen[3])
		strbuf_addstr(sb, "!A:K / !B:K  CALLS_PER_REPLAY_DIFFERS: the sides captured "
			      "different numbers of calls per graph replay; for ~1 us kernels that "
			      "alone moves the per-call time (an H200's 64k add: 1.195 us at "
			      "K=2048, 1.313 us at K=4096)\n");
	if (marker_seen[4])
		strbuf_addstr(sb, "!A:no-kernels / !B:no-kernels  GRAPH_NO_KERNELS: the measured "
			      "graph holds no kernel node (a view such as torch.conj captures "
			      "nothing, a plain copy only copy-engine nodes): it measured no kernel, "
			      "so the row is " EXCLUDED " from verdicts and from the FDR family\n");

	strbuf_addch(sb, '\n');
	if (c->single_round_rows)
		strbuf_addf(sb, "note: one round (run) per side on some rows: their intervals "
			    "assume a drift per side of %.2f%% (--drift-floor) plus what the round "
			    "measured of where its buffers land (its placement probes, or its "
			    "placements: several percent for a kernel of a few us on one graph); "
			    "give rounds (A1 A2 A3 -- B1 B2 B3) to measure the drift itself\n",
			    100 * c->opts.drift_floor);
	for (size_t i = 0; i < c->notes.nr; i++)
		strbuf_addf(sb, "note: %s\n", c->notes.v[i]);
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

	strbuf_addf(sb, "compare: %zu paired row%s; gems: ", c->paired, c->paired == 1 ? "" : "s");
	render_counts(sb, g, color);
	strbuf_addf(sb, " (threshold %.2f%%, FDR %.3g); torch control: ", 100 * c->opts.threshold,
		    c->opts.fdr);
	render_counts(sb, t, color);
	strbuf_addf(sb, "; not compared: %zu only in A, %zu only in B, %zu not SUCCESS",
		    c->only_a, c->only_b, c->not_success);
	if (c->fallback_rows)
		strbuf_addf(sb, "; %zu flagged", c->fallback_rows);
	if (c->excluded_rows)
		strbuf_addf(sb, " (%zu " EXCLUDED ": GRAPH_NO_KERNELS)", c->excluded_rows);
	strbuf_addch(sb, '\n');
}

/* ---- compare.json --------------------------------------------------------------- */

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *cmp_json(const struct compare_row *row, int k, const struct compare *c)
{
	const struct stats_cmp *r = &row->res[k];
	json_t *o;

	if (!row->has[k])
		return json_null();
	o = json_object();
	json_object_set_new(o, "a_ms", num_or_null(r->a_ms));
	json_object_set_new(o, "b_ms", num_or_null(r->b_ms));
	json_object_set_new(o, "ratio", num_or_null(r->ratio));
	json_object_set_new(o, "ci_low", num_or_null(r->lo));
	json_object_set_new(o, "ci_high", num_or_null(r->hi));
	json_object_set_new(o, "p", num_or_null(r->p));
	json_object_set_new(o, "q", num_or_null(row->q[k]));
	json_object_set_new(o, "p_mwu", num_or_null(r->p_mwu));
	json_object_set_new(o, "test", json_string(r->test));
	json_object_set_new(o, "df", num_or_null(r->df));	/* null: infinite (z) or none */
	json_object_set_new(o, "rounds_a", json_integer((json_int_t)r->ka));
	json_object_set_new(o, "rounds_b", json_integer((json_int_t)r->kb));
	json_object_set_new(o, "samples_a", json_integer((json_int_t)r->na));
	json_object_set_new(o, "samples_b", json_integer((json_int_t)r->nb));
	json_object_set_new(o, "spread_a", num_or_null(r->spread_a));
	json_object_set_new(o, "spread_b", num_or_null(r->spread_b));
	json_object_set_new(o, "drift_floor_a", r->floor_a ? json_real(r->drift_a) : json_null());
	json_object_set_new(o, "drift_floor_b", r->floor_b ? json_real(r->drift_b) : json_null());
	json_object_set_new(o, "placement_sd_a", num_or_null(r->place_a));
	json_object_set_new(o, "placement_sd_b", num_or_null(r->place_b));
	json_object_set_new(o, "verdict", json_string(verdict_text(row, k)));
	json_object_set_new(o, "why", r->why ? json_string(r->why) : json_null());
	return o;
}

static json_t *strvec_json(const struct strvec *v)
{
	json_t *a = json_array();

	for (size_t i = 0; i < v->nr; i++)
		json_array_append_new(a, json_string(v->v[i]));
	return a;
}

static json_t *side_json(const struct compare_side *side)
{
	json_t *o = json_object(), *runs = json_array();

	for (size_t i = 0; i < side->nr; i++) {
		const struct compare_run *r = &side->runs[i];
		json_t *e = json_object();

		json_object_set_new(e, "dir", json_string(r->dir));
		json_object_set_new(e, "identity", r->identity_state == 0 ? json_string("read") :
				    r->identity_state > 0 ? json_string("absent") :
							    json_string("unreadable"));
		json_object_set_new(e, "status", r->identity && json_str(r->identity, "status") ?
				    json_string(json_str(r->identity, "status")) : json_null());
		json_object_set_new(e, "op", r->identity && json_str(r->identity, "op") ?
				    json_string(json_str(r->identity, "op")) : json_null());
		json_object_set_new(e, "caliber", r->identity && json_object_get(r->identity, "caliber") ?
				    json_deep_copy(json_object_get(r->identity, "caliber")) : json_null());
		json_object_set_new(e, "provenance", r->identity && json_object_get(r->identity, "provenance") ?
				    json_deep_copy(json_object_get(r->identity, "provenance")) : json_null());
		json_object_set_new(e, "rows", json_integer((json_int_t)r->rows));
		json_object_set_new(e, "duplicate_rows", json_integer((json_int_t)r->duplicates));
		json_object_set_new(e, "skipped_lines", json_integer((json_int_t)r->skipped_lines));
		json_array_append_new(runs, e);
	}
	json_object_set_new(o, "rounds", json_integer((json_int_t)side->nr));
	json_object_set_new(o, "runs", runs);
	return o;
}

static json_t *counts_json(const struct compare_counts *k)
{
	json_t *o = json_object();

	for (int v = STATS_SAME; v <= STATS_UNSURE; v++)
		json_object_set_new(o, stats_verdict_name(v), json_integer((json_int_t)k->n[v]));
	json_object_set_new(o, "compared", json_integer((json_int_t)k->compared));
	return o;
}

json_t *compare_to_json(const struct compare *c, int caliber_allowed, int exit_code)
{
	json_t *o = json_object(), *set = json_object(), *cal = json_object(), *sum = json_object();
	json_t *rows = json_array();

	json_object_set_new(o, "schema_version", json_integer(COMPARE_SCHEMA_VERSION));
	json_object_set_new(o, "kind", json_string("zlb-compare"));
	json_object_set_new(o, "zlb_version", json_string(ZLB_VERSION));
	json_object_set_new(o, "created_at", identity_now());
	json_object_set_new(set, "threshold", json_real(c->opts.threshold));
	json_object_set_new(set, "fdr", json_real(c->opts.fdr));
	json_object_set_new(set, "drift_floor", json_real(c->opts.drift_floor));
	json_object_set_new(set, "bootstrap", json_integer(c->opts.nboot));
	json_object_set_new(set, "seed", json_integer((json_int_t)c->opts.seed));
	json_object_set_new(set, "confidence", json_real(c->opts.confidence));
	json_object_set_new(o, "settings", set);
	json_object_set_new(o, "a", side_json(&c->side[0]));
	json_object_set_new(o, "b", side_json(&c->side[1]));
	json_object_set_new(cal, "ok", json_boolean(!c->caliber_problems.nr));
	json_object_set_new(cal, "allowed", json_boolean(caliber_allowed && c->caliber_problems.nr));
	json_object_set_new(cal, "problems", json_deep_copy(c->caliber_fields));
	json_object_set_new(o, "caliber", cal);
	json_object_set_new(o, "warnings", strvec_json(&c->warnings));
	json_object_set_new(o, "notes", strvec_json(&c->notes));
	json_object_set_new(sum, "paired", json_integer((json_int_t)c->paired));
	json_object_set_new(sum, "only_a", json_integer((json_int_t)c->only_a));
	json_object_set_new(sum, "only_b", json_integer((json_int_t)c->only_b));
	json_object_set_new(sum, "not_success", json_integer((json_int_t)c->not_success));
	json_object_set_new(sum, "fallback_rows", json_integer((json_int_t)c->fallback_rows));
	json_object_set_new(sum, "excluded_rows", json_integer((json_int_t)c->excluded_rows));
	json_object_set_new(sum, "gems", counts_json(&c->counts[COMPARE_GEMS]));
	json_object_set_new(sum, "torch", counts_json(&c->counts[COMPARE_TORCH]));
	json_object_set_new(sum, "single_round", json_boolean(c->single_round_rows));
	json_object_set_new(sum, "regression", json_boolean(c->regression));
	json_object_set_new(sum, "exit_code", json_integer(exit_code));
	json_object_set_new(o, "summary", sum);
	for (size_t i = 0; i < c->nr_rows; i++) {
		const struct compare_row *row = &c->rows[i];
		json_t *e = json_object();

		json_object_set_new(e, "op", json_string(row->op));
		json_object_set_new(e, "op_name", json_string(row->op_name));
		json_object_set_new(e, "dtype", json_string(row->dtype));
		json_object_set_new(e, "shape_detail", json_string(row->shape));
		json_object_set_new(e, "paired", json_boolean(row->paired));
		json_object_set_new(e, "unpaired_reason", row->unpaired_reason ?
				    json_string(row->unpaired_reason) : json_null());
		json_object_set_new(e, "status_a", strvec_json(&row->side[0].statuses));
		json_object_set_new(e, "status_b", strvec_json(&row->side[1].statuses));
		json_object_set_new(e, "markers_a", strvec_json(&row->side[0].markers));
		json_object_set_new(e, "markers_b", strvec_json(&row->side[1].markers));
		json_object_set_new(e, "timers_a", strvec_json(&row->side[0].timers));
		json_object_set_new(e, "timers_b", strvec_json(&row->side[1].timers));
		json_object_set_new(e, "fallback", json_boolean(row->fallback));
		for (int k = 0; k < COMPARE_KINDS; k++)
			json_object_set_new(e, kind_name[k], cmp_json(row, k, c));
		json_array_append_new(rows, e);
	}
	json_object_set_new(o, "rows", rows);
	return o;
}

/* ---- compare.csv ------------------------------------------------------------------ */

static void csv_field(struct strbuf *sb, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		strbuf_addstr(sb, s);
		return;
	}
	strbuf_addch(sb, '"');
	for (; *s; s++) {
		if (*s == '"')
			strbuf_addch(sb, '"');
		strbuf_addch(sb, *s);
	}
	strbuf_addch(sb, '"');
}

/* A number with digits significant digits (g) or decimals (f); empty when it does not exist. */
static void csv_num(struct strbuf *sb, int digits, int fixed, double v)
{
	if (!isfinite(v))
		return;
	if (fixed)
		strbuf_addf(sb, "%.*f", digits, v);
	else
		strbuf_addf(sb, "%.*g", digits, v);
}

static void csv_join(struct strbuf *sb, const struct strvec *v)
{
	struct strbuf j = STRBUF_INIT;

	for (size_t i = 0; i < v->nr; i++)
		strbuf_addf(&j, "%s%s", i ? ";" : "", v->v[i]);
	csv_field(sb, j.buf);
	strbuf_release(&j);
}

int compare_write_csv(const struct compare *c, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	strbuf_addstr(&sb, "op,op_name,dtype,shape_detail,pairing");
	for (int k = 0; k < COMPARE_KINDS; k++)
		strbuf_addf(&sb, ",%1$s_a_ms,%1$s_b_ms,%1$s_ratio,%1$s_ci_low,%1$s_ci_high,%1$s_p,"
			    "%1$s_q,%1$s_test,%1$s_rounds_a,%1$s_rounds_b,%1$s_verdict", kind_name[k]);
	strbuf_addstr(&sb, ",markers_a,markers_b,status_a,status_b\n");
	for (size_t i = 0; i < c->nr_rows; i++) {
		const struct compare_row *row = &c->rows[i];

		csv_field(&sb, row->op);
		strbuf_addch(&sb, ',');
		csv_field(&sb, row->op_name);
		strbuf_addch(&sb, ',');
		csv_field(&sb, row->dtype);
		strbuf_addch(&sb, ',');
		csv_field(&sb, row->shape);
		strbuf_addch(&sb, ',');
		csv_field(&sb, row->paired ? "paired" : row->unpaired_reason);
		for (int k = 0; k < COMPARE_KINDS; k++) {
			const struct stats_cmp *r = &row->res[k];

			if (!row->has[k]) {
				strbuf_addstr(&sb, ",,,,,,,,,,,");
				continue;
			}
			strbuf_addch(&sb, ',');
			csv_num(&sb, 9, 0, r->a_ms);
			strbuf_addch(&sb, ',');
			csv_num(&sb, 9, 0, r->b_ms);
			strbuf_addch(&sb, ',');
			csv_num(&sb, 6, 1, r->ratio);
			strbuf_addch(&sb, ',');
			csv_num(&sb, 6, 1, r->lo);
			strbuf_addch(&sb, ',');
			csv_num(&sb, 6, 1, r->hi);
			strbuf_addch(&sb, ',');
			csv_num(&sb, 4, 0, r->p);
			strbuf_addch(&sb, ',');
			csv_num(&sb, 4, 0, row->q[k]);
			strbuf_addf(&sb, ",%s,%zu,%zu,%s", r->test, r->ka, r->kb,
				    verdict_text(row, k));
		}
		strbuf_addch(&sb, ',');
		csv_join(&sb, &row->side[0].markers);
		strbuf_addch(&sb, ',');
		csv_join(&sb, &row->side[1].markers);
		strbuf_addch(&sb, ',');
		csv_join(&sb, &row->side[0].statuses);
		strbuf_addch(&sb, ',');
		csv_join(&sb, &row->side[1].statuses);
		strbuf_addch(&sb, '\n');
	}
	rc = write_file_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	return rc;
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
		char *t = xstrfmt("result: REGRESSION: %zu gems row%s SLOWER beyond %.2f%% (exit 1)",
				  slower, slower == 1 ? "" : "s", 100 * c->opts.threshold);
		term_addstr_colored(sb, color, TERM_RED, t);
		strbuf_addch(sb, '\n');
		free(t);
		return ZLB_EXIT_REGRESSION;
	}
	strbuf_addf(sb, "result: no significant regression beyond %.2f%%\n",
		    100 * c->opts.threshold);
	return ZLB_EXIT_OK;
}
