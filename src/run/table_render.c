/* A parsed block drawn as zlb's table: Size Details folded into columns, padded, coloured. */
#include "run/table.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ansi.h"
#include "lib/pyrepr.h"
#include "lib/term.h"
#include "rundir/markers.h"
#include "run/table_int.h"

/*
 * A row's Size Detail as arguments: record_shapes() gives a list of
 * positional arguments, a dict of keyword arguments, or, when there are
 * both, the tuple (list, dict).
 */
struct args {
	struct strvec pos;
	struct strvec names;
	struct strvec values;
};

static void add_kwargs(struct args *a, const struct pyrepr *dict)
{
	struct strbuf name = STRBUF_INIT;
	size_t i;

	for (i = 0; i < dict->keys.nr; i++) {
		const char *key = dict->keys.v[i];

		strvec_push(&a->names, pyrepr_unquote(key, &name) ? key : name.buf);
		strvec_push(&a->values, dict->values.v[i]);
	}
	strbuf_release(&name);
}

static int split_args(const char *detail, struct args *a)
{
	struct pyrepr top = PYREPR_INIT, sub = PYREPR_INIT;
	int ret = -1;

	if (pyrepr_split(detail, &top) < 0)
		goto out;
	switch (top.kind) {
	case PYREPR_LIST:
		strvec_pushv(&a->pos, (const char *const *)top.items.v);
		ret = 0;
		break;
	case PYREPR_DICT:
		add_kwargs(a, &top);
		ret = 0;
		break;
	case PYREPR_TUPLE:
		if (top.items.nr != 2 || pyrepr_split(top.items.v[0], &sub) < 0 ||
		    sub.kind != PYREPR_LIST)
			break;
		strvec_pushv(&a->pos, (const char *const *)sub.items.v);
		if (pyrepr_split(top.items.v[1], &sub) < 0 || sub.kind != PYREPR_DICT)
			break;
		add_kwargs(a, &sub);
		ret = 0;
		break;
	default:
		break;
	}
out:
	pyrepr_release(&top);
	pyrepr_release(&sub);
	return ret;
}

static int same_strvec(const struct strvec *a, const struct strvec *b)
{
	size_t i;

	if (a->nr != b->nr)
		return 0;
	for (i = 0; i < a->nr; i++)
		if (strcmp(a->v[i], b->v[i]))
			return 0;
	return 1;
}

/* Is positional argument k (or keyword argument k) the same in every row? */
static int column_is_same(const struct args *a, size_t nr, int kwarg, size_t k)
{
	size_t i;

	for (i = 1; i < nr; i++) {
		const struct strvec *x = kwarg ? &a[i].values : &a[i].pos;
		const struct strvec *y = kwarg ? &a[0].values : &a[0].pos;

		if (strcmp(x->v[k], y->v[k]))
			return 0;
	}
	return 1;
}

static void add_item(struct strbuf *sb, int *first, const char *fmt_name,
		     size_t pos, const char *value)
{
	if (!*first)
		strbuf_addstr(sb, ", ");
	*first = 0;
	if (fmt_name)
		strbuf_addf(sb, "%s=%s", fmt_name, value);
	else if (pos)
		strbuf_addf(sb, "#%zu=%s", pos, value);
	else
		strbuf_addstr(sb, value);
}

/*
 * Fill display with each row's Size Detail as the terminal shows it, and
 * legend with the line naming what was folded out (left empty when
 * nothing was). Folding needs every row to split into the same argument
 * layout; otherwise, and when it would fold nothing or everything, each
 * row keeps its full text.
 */
static void fold_details(const struct table_block *b, struct strvec *display,
			 struct strbuf *legend)
{
	size_t nr = b->nr_rows, npos = 0, nkw = 0, nsame = 0, i, k;
	struct args *a = xcalloc(nr, sizeof(*a));
	unsigned char *same = NULL;
	int ok = nr >= 2, first = 1;

	for (i = 0; i < nr; i++) {
		strvec_init(&a[i].pos);
		strvec_init(&a[i].names);
		strvec_init(&a[i].values);
		if (ok && split_args(b->rows[i].size_detail, &a[i]))
			ok = 0;
	}
	for (i = 1; ok && i < nr; i++)
		if (a[i].pos.nr != a[0].pos.nr || !same_strvec(&a[i].names, &a[0].names))
			ok = 0;
	if (ok) {
		npos = a[0].pos.nr;
		nkw = a[0].names.nr;
		same = xcalloc(npos + nkw + 1, 1);
		for (k = 0; k < npos + nkw; k++) {
			same[k] = column_is_same(a, nr, k >= npos, k >= npos ? k - npos : k);
			nsame += same[k];
		}
		if (!nsame || nsame == npos + nkw)
			ok = 0;
	}

	if (!ok) {
		for (i = 0; i < nr; i++)
			strvec_push(display, b->rows[i].size_detail);
		goto out;
	}

	strbuf_addstr(legend, "  same in every row: ");
	for (k = 0; k < npos; k++)
		if (same[k])
			add_item(legend, &first, NULL, k + 1, a[0].pos.v[k]);
	for (k = 0; k < nkw; k++)
		if (same[npos + k])
			add_item(legend, &first, a[0].names.v[k], 0, a[0].values.v[k]);

	for (i = 0; i < nr; i++) {
		struct strbuf sb = STRBUF_INIT;

		first = 1;
		for (k = 0; k < npos; k++)
			if (!same[k])
				add_item(&sb, &first, NULL, 0, a[i].pos.v[k]);
		for (k = 0; k < nkw; k++)
			if (!same[npos + k])
				add_item(&sb, &first, a[i].names.v[k], 0, a[i].values.v[k]);
		strvec_push(display, sb.buf);
		strbuf_release(&sb);
	}
out:
	for (i = 0; i < nr; i++) {
		strvec_clear(&a[i].pos);
		strvec_clear(&a[i].names);
		strvec_clear(&a[i].values);
	}
	free(a);
	free(same);
}

static void render_title(const struct table_block *b, int color, struct strbuf *out)
{
	const char *t = b->title, *op_end, *dt;
	size_t op_at = strlen(TITLE_PREFIX);

	if (!color) {
		strbuf_addstr(out, t);
		return;
	}
	op_end = t + op_at + strlen(b->op);
	strbuf_add(out, t, op_at);
	term_addstr_colored(out, 1, TERM_BOLD, b->op);
	dt = strstr(op_end, "dtype=");
	if (!dt || !starts_with(dt + 6, b->dtype)) {
		strbuf_addstr(out, op_end);
		return;
	}
	dt += 6;
	strbuf_add(out, op_end, (size_t)(dt - op_end));
	term_addstr_colored(out, 1, TERM_BOLD, b->dtype);
	strbuf_addstr(out, dt + strlen(b->dtype));
}

static size_t max_size(size_t a, size_t b)
{
	return a > b ? a : b;
}

void table_render(const struct table_block *b, int color, struct strbuf *out)
{
	struct strvec display = STRVEC_INIT;
	struct strbuf legend = STRBUF_INIT;
	size_t nc = b->columns.nr, last = nc - 1, total, i, j;
	size_t *w = xcalloc(nc, sizeof(*w));

	fold_details(b, &display, &legend);

	render_title(b, color, out);
	strbuf_addch(out, '\n');
	if (legend.len) {
		strbuf_add(out, legend.buf, legend.len);
		strbuf_addch(out, '\n');
	}

	for (j = 0; j < nc; j++)
		w[j] = strlen(b->columns.v[j]);
	for (i = 0; i < b->nr_rows; i++) {
		w[0] = max_size(w[0], strlen(b->rows[i].status));
		for (j = 0; j < b->nr_fields; j++)
			w[j + 1] = max_size(w[j + 1], strlen(b->rows[i].fields.v[j]));
		w[last] = max_size(w[last], strlen(display.v[i]));
	}

	/* Names are aligned like their values; the last column is not padded. */
	term_add_cell(out, b->columns.v[0], w[0], TERM_LEFT, 0, TERM_BOLD);
	for (j = 1; j < last; j++) {
		strbuf_addstr(out, COLUMN_GAP);
		term_add_cell(out, b->columns.v[j], w[j], TERM_RIGHT, 0, TERM_BOLD);
	}
	strbuf_addstr(out, COLUMN_GAP);
	strbuf_addstr(out, b->columns.v[last]);
	strbuf_addch(out, '\n');

	for (total = w[0], j = 1; j < nc; j++)
		total += strlen(COLUMN_GAP) + w[j];
	strbuf_addchars(out, '-', total);
	strbuf_addch(out, '\n');

	for (i = 0; i < b->nr_rows; i++) {
		const struct table_row *r = &b->rows[i];
		size_t slen = strlen(r->status);

		if (!strcmp(r->status, "SUCCESS"))
			term_addstr_colored(out, color, TERM_GREEN, r->status);
		else if (!strcmp(r->status, "FAILED"))
			term_addstr_colored(out, color, TERM_RED, r->status);
		else
			strbuf_addstr(out, r->status);
		strbuf_addchars(out, ' ', w[0] - slen);
		for (j = 0; j < b->nr_fields; j++) {
			strbuf_addstr(out, COLUMN_GAP);
			term_add_cell(out, r->fields.v[j], w[j + 1], TERM_RIGHT, 0, TERM_BOLD);
		}
		strbuf_addstr(out, COLUMN_GAP);
		strbuf_addstr(out, display.v[i]);
		strbuf_addch(out, '\n');
	}

	free(w);
	strvec_clear(&display);
	strbuf_release(&legend);
}
