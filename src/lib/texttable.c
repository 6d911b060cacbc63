#include "lib/texttable.h"

#include <stdlib.h>
#include <string.h>

#include "lib/markdown.h"
#include "lib/strvec.h"

void tt_init(struct texttable *t, const struct tt_column *cols, size_t ncols)
{
	memset(t, 0, sizeof(*t));
	t->cols = cols;
	t->ncols = ncols;
}

void tt_release(struct texttable *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i].text);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

struct tt_cell *tt_add_row(struct texttable *t)
{
	struct tt_cell *row;

	if (t->nrows == t->alloc) {
		t->alloc = t->alloc ? 2 * t->alloc : 16;
		t->cells = xrealloc(t->cells, t->alloc * t->ncols * sizeof(*t->cells));
	}
	row = &t->cells[t->nrows++ * t->ncols];
	memset(row, 0, t->ncols * sizeof(*row));
	return row;
}

void tt_set(struct tt_cell *c, char *text)
{
	free(c->text);
	c->text = text;
	c->colored = 0;
}

void tt_set_colored(struct tt_cell *c, char *text, enum term_color color)
{
	tt_set(c, text);
	c->colored = 1;
	c->color = color;
}

static const char *cell_text(const struct tt_cell *c)
{
	return c->text ? c->text : "";
}

static size_t width_of(const char *s)
{
	return term_text_width(s, strlen(s));
}

/* What the shown flexible columns take under cap: each its natural width, capped, not below its floor. */
static size_t flex_total(const struct texttable *t, const size_t *natural, const size_t *floor,
			 const int *hidden, size_t cap)
{
	size_t sum = 0;

	for (size_t k = 0; k < t->ncols; k++) {
		size_t w = natural[k] < cap ? natural[k] : cap;

		if (t->cols[k].fit == TT_KEEP || hidden[k])
			continue;
		sum += w > floor[k] ? w : floor[k];
	}
	return sum;
}

/* The fixed part of a line: the shown TT_KEEP columns and the gaps between shown columns. */
static size_t fixed_total(const struct texttable *t, const size_t *natural, const int *hidden)
{
	size_t sum = 0, shown = 0;

	for (size_t k = 0; k < t->ncols; k++) {
		if (hidden[k])
			continue;
		shown++;
		if (t->cols[k].fit == TT_KEEP)
			sum += natural[k];
	}
	return sum + (shown ? TT_GAP * (shown - 1) : 0);
}

/* Leave out the column with the lowest drop number still shown; 0 when none is left. */
static int hide_one(const struct texttable *t, int *hidden)
{
	size_t best = t->ncols;

	for (size_t k = 0; k < t->ncols; k++)
		if (!hidden[k] && t->cols[k].drop &&
		    (best == t->ncols || t->cols[k].drop < t->cols[best].drop))
			best = k;
	if (best == t->ncols)
		return 0;
	hidden[best] = 1;
	return 1;
}

void tt_fit(const struct texttable *t, size_t width, size_t *widths)
{
	size_t *floor = xcalloc(t->ncols + 1, sizeof(*floor));
	int *hidden = xcalloc(t->ncols + 1, sizeof(*hidden));
	size_t fixed, avail, lo, hi, wide = 0;

	for (size_t k = 0; k < t->ncols; k++) {
		widths[k] = width_of(t->cols[k].name);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t w = width_of(cell_text(&t->cells[r * t->ncols + k]));
			if (w > widths[k])
				widths[k] = w;
		}
		floor[k] = t->cols[k].min < widths[k] ? t->cols[k].min : widths[k];
		if (t->cols[k].fit != TT_KEEP && widths[k] > wide)
			wide = widths[k];
	}
	if (!width || fixed_total(t, widths, hidden) + flex_total(t, widths, floor, hidden, wide) <= width)
		goto out;
	/* columns that may go, go until the narrowest layout fits */
	while (fixed_total(t, widths, hidden) + flex_total(t, widths, floor, hidden, 0) > width &&
	       hide_one(t, hidden))
		;
	fixed = fixed_total(t, widths, hidden);
	avail = width > fixed ? width - fixed : 0;
	/* The highest cap under which the flexible columns fit (0 when none does). */
	lo = 0;
	hi = wide;
	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;

		if (flex_total(t, widths, floor, hidden, mid) <= avail)
			lo = mid;
		else
			hi = mid - 1;
	}
	{
		size_t used = flex_total(t, widths, floor, hidden, lo);
		size_t left = avail > used ? avail - used : 0;

		for (size_t k = 0; k < t->ncols; k++) {
			size_t w;

			if (t->cols[k].fit == TT_KEEP || hidden[k])
				continue;
			w = widths[k] < lo ? widths[k] : lo;
			if (w < floor[k])
				w = floor[k];
			/* what the cap left over goes to the columns it cut, one each */
			if (left && w < widths[k]) {
				w++;
				left--;
			}
			widths[k] = w;
		}
	}
out:
	for (size_t k = 0; k < t->ncols; k++)
		if (hidden[k])
			widths[k] = TT_HIDDEN;
	free(hidden);
	free(floor);
}

/* Break text into lines of at most width columns, at the last space that fits when there is one. */
static void wrap_text(const char *text, size_t width, struct strvec *lines)
{
	const char *p = text;

	while (*p == ' ')
		p++;
	if (!*p || !width) {
		strvec_push(lines, text);
		return;
	}
	while (*p) {
		size_t len = strlen(p), take = term_prefix_fitting(p, len, width), next;

		if (take < len) {
			size_t sp = take;

			while (sp > 0 && p[sp] != ' ')
				sp--;
			if (sp > 0)
				take = sp;
		}
		next = take;
		while (take > 0 && p[take - 1] == ' ')
			take--;
		{
			char *piece = xstrndup(p, take);

			strvec_push(lines, piece);
			free(piece);
		}
		p += next;
		while (*p == ' ')
			p++;
	}
}

/* One table line: cells[k] of the line, padded to widths; the last one unpadded. */
static void add_line(const struct texttable *t, const size_t *widths, const char *const *texts,
		     const struct tt_cell *cells, int color, int bold, struct strbuf *out)
{
	struct strbuf line = STRBUF_INIT;
	size_t last = 0, shown = 0;

	for (size_t k = 0; k < t->ncols; k++)
		if (widths[k] != TT_HIDDEN)
			last = k;
	for (size_t k = 0; k < t->ncols; k++) {
		int on = color && cells && cells[k].colored && *texts[k];

		if (widths[k] == TT_HIDDEN)
			continue;
		if (shown++)
			strbuf_addchars(&line, ' ', TT_GAP);
		term_add_cell(&line, texts[k], widths[k],
			      t->cols[k].right ? TERM_RIGHT : k == last ? TERM_LEFT_LAST : TERM_LEFT,
			      on, on ? cells[k].color : TERM_BOLD);
	}
	strbuf_rtrim(&line);
	if (bold)
		term_addstr_colored(out, color, TERM_BOLD, line.buf);
	else
		strbuf_addstr(out, line.buf);
	strbuf_addch(out, '\n');
	strbuf_release(&line);
}

/* One row (or the header): each cell cut or wrapped to its width, then its lines. */
static void add_row(const struct texttable *t, const size_t *widths, const char *const *texts,
		    const struct tt_cell *cells, int color, int bold, struct strbuf *out)
{
	struct strvec *lines = xcalloc(t->ncols, sizeof(*lines));
	const char **now = xcalloc(t->ncols, sizeof(*now));
	size_t height = 1;

	for (size_t k = 0; k < t->ncols; k++) {
		strvec_init(&lines[k]);
		if (widths[k] == TT_HIDDEN) {
			strvec_push(&lines[k], "");
		} else if (t->cols[k].fit == TT_WRAP) {
			wrap_text(texts[k], widths[k], &lines[k]);
		} else {
			struct strbuf sb = STRBUF_INIT;

			term_add_cut(&sb, texts[k], t->cols[k].fit == TT_CUT ? widths[k] : 0);
			strvec_push(&lines[k], sb.buf);
			strbuf_release(&sb);
		}
		if (lines[k].nr > height)
			height = lines[k].nr;
	}
	for (size_t j = 0; j < height; j++) {
		for (size_t k = 0; k < t->ncols; k++)
			now[k] = j < lines[k].nr ? lines[k].v[j] : "";
		add_line(t, widths, now, cells, color, bold, out);
	}
	for (size_t k = 0; k < t->ncols; k++)
		strvec_clear(&lines[k]);
	free(lines);
	free(now);
}

void tt_render(const struct texttable *t, size_t width, int color, struct strbuf *out)
{
	size_t *widths = xcalloc(t->ncols + 1, sizeof(*widths));
	const char **texts = xcalloc(t->ncols + 1, sizeof(*texts));

	tt_fit(t, width, widths);
	for (size_t k = 0; k < t->ncols; k++)
		texts[k] = t->cols[k].name;
	add_row(t, widths, texts, NULL, color, 1, out);
	for (size_t r = 0; r < t->nrows; r++) {
		const struct tt_cell *row = &t->cells[r * t->ncols];

		for (size_t k = 0; k < t->ncols; k++)
			texts[k] = cell_text(&row[k]);
		add_row(t, widths, texts, row, color, 0, out);
	}
	{
		struct strbuf names = STRBUF_INIT;

		for (size_t k = 0; k < t->ncols; k++)
			if (widths[k] == TT_HIDDEN)
				strbuf_addf(&names, "%s%s", names.len ? ", " : "", t->cols[k].name);
		if (names.len)
			strbuf_addf(out, "(not shown at %zu columns: %s%s%s)\n", width, names.buf,
				    t->hidden_hint ? "; " : "", t->hidden_hint ? t->hidden_hint : "");
		strbuf_release(&names);
	}
	free(widths);
	free(texts);
}

void tt_render_md(const struct texttable *t, struct strbuf *out)
{
	strbuf_addch(out, '|');
	for (size_t k = 0; k < t->ncols; k++) {
		strbuf_addch(out, ' ');
		md_add_text(out, t->cols[k].name);
		strbuf_addstr(out, " |");
	}
	strbuf_addstr(out, "\n|");
	for (size_t k = 0; k < t->ncols; k++)
		strbuf_addstr(out, t->cols[k].right ? " ---: |" : " --- |");
	strbuf_addch(out, '\n');
	for (size_t r = 0; r < t->nrows; r++) {
		strbuf_addch(out, '|');
		for (size_t k = 0; k < t->ncols; k++) {
			const char *s = cell_text(&t->cells[r * t->ncols + k]);

			strbuf_addch(out, ' ');
			if (t->cols[k].code)
				md_add_code(out, s);
			else
				md_add_text(out, s);
			strbuf_addstr(out, " |");
		}
		strbuf_addch(out, '\n');
	}
}
