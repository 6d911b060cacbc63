/*
 * Tables for people: a header and rows of cells, laid out for a terminal
 * of a given width, or written as a Markdown table.
 *
 * On a terminal the columns that may give way do so deliberately, each as
 * its column says: a TT_CUT column loses the end of a long cell (which
 * then ends in "..."), a TT_WRAP column continues it on more lines (broken
 * at spaces where it can). They give way evenly, the widest first, never
 * below their min; the others keep their widest cell. When even that is
 * too wide, the columns that may be left out (drop > 0) are, in the order
 * of their drop number, and a line under the table names them. Width 0
 * means no limit (a pipe, a file, --wide): every character is shown.
 *
 *     static const struct tt_column cols[] = {
 *             { "op", 0, TT_CUT, 8 }, { "ms", 1, TT_KEEP, 0 },
 *     };
 *     struct texttable t;
 *     tt_init(&t, cols, 2);
 *     struct tt_cell *c = tt_add_row(&t);
 *     tt_set(&c[0], xstrdup("softmax"));
 *     tt_set(&c[1], xstrfmt("%.3f", ms));
 *     tt_render(&t, term_columns(1), color, &out);
 *     tt_release(&t);
 *
 * Cells hold plain text (no escape sequences); a cell's colour is applied
 * after the layout, so it takes no width.
 */
#ifndef ZLB_TEXTTABLE_H
#define ZLB_TEXTTABLE_H

#include <stddef.h>

#include "lib/strbuf.h"
#include "lib/term.h"

enum tt_fit {
	TT_KEEP,	/* as wide as its widest cell */
	TT_CUT,		/* may be cut, down to min columns */
	TT_WRAP,	/* may be wrapped onto more lines, down to min columns */
};

struct tt_column {
	const char *name;
	int right;		/* right-aligned (numbers) */
	enum tt_fit fit;
	size_t min;		/* TT_CUT, TT_WRAP: never narrower (nor than the widest cell) */
	int code;		/* Markdown: cells as code spans (names and shapes from data) */
	int drop;		/* 0: always shown; n: left out when too narrow, 1 first */
};

struct tt_cell {
	char *text;		/* owned; NULL shows as empty */
	int colored;
	enum term_color color;
};

struct texttable {
	const struct tt_column *cols;
	size_t ncols;
	struct tt_cell *cells;	/* the rows, ncols cells each, row after row */
	size_t nrows, alloc;
	/* after the names of left-out columns: how to see them ("--wide shows them"), or NULL */
	const char *hidden_hint;
};

/* A column tt_fit leaves out. */
#define TT_HIDDEN ((size_t)-1)

/* Columns between cells. */
#define TT_GAP 2

void tt_init(struct texttable *t, const struct tt_column *cols, size_t ncols);
void tt_release(struct texttable *t);

/* A new row at the end: its ncols cells, empty, for the caller to fill. */
struct tt_cell *tt_add_row(struct texttable *t);

/* Give a cell its text (taken over; freed by tt_release), uncoloured. */
void tt_set(struct tt_cell *c, char *text);
/* The same, coloured c on a terminal that shows colour. */
void tt_set_colored(struct tt_cell *c, char *text, enum term_color color);

/*
 * The width of each column (widths[ncols]) for a line of at most width
 * columns (0: no limit): the widest cell (header included) of each, then,
 * while the line is too long, the TT_CUT and TT_WRAP columns narrowed: a
 * cap is lowered on all of them at once (so the widest gives first) until
 * the line fits or each is at its min. Space left under the cap goes back
 * to the capped columns, left to right. When the mins do not fit, columns
 * with a drop number are left out (TT_HIDDEN), 1 first, until they do; a
 * line that cannot fit even so is as narrow as the mins allow.
 */
void tt_fit(const struct texttable *t, size_t width, size_t *widths);

/*
 * The table for a terminal of width columns (0: no limit): the header
 * (bold with color), then the rows, cells TT_GAP apart, padded to the
 * column (right-aligned where the column says), the last cell of a line
 * unpadded, no trailing space; then, when columns were left out, a line
 * "(not shown at N columns: a, b; <hidden_hint>)". With color, coloured
 * cells are coloured; without it, out gets no escape byte.
 */
void tt_render(const struct texttable *t, size_t width, int color, struct strbuf *out);

/*
 * The table as GitHub-flavoured Markdown: the header, the alignment row,
 * then a line per row, every cell on it whole (lib/markdown.h escapes it,
 * or makes it a code span where the column says). Empty cells stay empty.
 */
void tt_render_md(const struct texttable *t, struct strbuf *out);

#endif
