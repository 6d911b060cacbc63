/*
 * Over 700 lines, kept whole for now: parsing upstream's fixed-width rows
 * and rendering the pretty table are one pass over the same columns;
 * issue 13 moves the run's tee and table into src/run/ and splits them there.
 */
#include "run/table.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ansi.h"
#include "lib/pyrepr.h"
#include "lib/term.h"
#include "rundir/markers.h"

#define TITLE_PREFIX "Operator: "
#define TITLE_MIDDLE "  Performance Test ("
#define COLUMN_GAP "  "

enum filter_state { IDLE, TITLE, COLUMNS, ROWS };

void table_block_init(struct table_block *b)
{
	memset(b, 0, sizeof(*b));
	strvec_init(&b->columns);
}

void table_block_release(struct table_block *b)
{
	size_t i;

	free(b->title);
	free(b->op);
	free(b->dtype);
	free(b->mode);
	free(b->level);
	strvec_clear(&b->columns);
	for (i = 0; i < b->nr_rows; i++) {
		free(b->rows[i].status);
		strvec_clear(&b->rows[i].fields);
		free(b->rows[i].size_detail);
	}
	free(b->rows);
	table_block_init(b);
}

int table_is_title(const char *line)
{
	return starts_with(line, TITLE_PREFIX);
}

int table_is_row(const char *line)
{
	const char *p;

	if (!skip_prefix(line, "SUCCESS", &p) && !skip_prefix(line, "FAILED", &p))
		return 0;
	if (p[0] != ' ' || p[1] != ' ')
		return 0;
	while (*p == ' ')
		p++;
	return *p != '\0';
}

int table_block_field(const struct table_block *b, const char *name)
{
	size_t i;

	for (i = 0; i < b->nr_fields; i++)
		if (!strcmp(b->columns.v[i + 1], name))
			return (int)i;
	return -1;
}

static char *trimmed_dup(const char *s, const char *end)
{
	while (s < end && isspace((unsigned char)*s))
		s++;
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	return xstrndup(s, (size_t)(end - s));
}

/*
 * "Operator: <op>  Performance Test (dtype=<d>, mode=<m>,level=<l>)".
 * The keys inside the parentheses are read as a list, so that a fork
 * that drops or adds one still parses; only dtype is required.
 */
static int parse_title(const char *line, struct table_block *b, struct strbuf *why)
{
	const char *p, *mid, *end = line + strlen(line);

	if (!skip_prefix(line, TITLE_PREFIX, &p) ||
	    !(mid = strstr(p, TITLE_MIDDLE)) || mid == p || end[-1] != ')') {
		strbuf_addf(why, "not a table title: '%s'", line);
		return -1;
	}
	b->title = xstrdup(line);
	b->op = xstrndup(p, (size_t)(mid - p));

	for (p = mid + strlen(TITLE_MIDDLE), end--; p < end; ) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma ? comma : end;
		const char *eq = memchr(p, '=', (size_t)(stop - p));
		char *key, **slot = NULL;

		if (!eq) {
			strbuf_addf(why, "title field without '=': '%s'", line);
			return -1;
		}
		key = trimmed_dup(p, eq);
		if (!strcmp(key, "dtype"))
			slot = &b->dtype;
		else if (!strcmp(key, "mode"))
			slot = &b->mode;
		else if (!strcmp(key, "level"))
			slot = &b->level;
		free(key);
		if (slot) {
			free(*slot);
			*slot = trimmed_dup(eq + 1, stop);
		}
		p = stop + 1;
	}
	if (!b->dtype || !*b->dtype) {
		strbuf_addf(why, "table title without a dtype: '%s'", line);
		return -1;
	}
	if (!b->mode)
		b->mode = xstrdup("");
	if (!b->level)
		b->level = xstrdup("");
	return 0;
}

/*
 * Column names are right-aligned in 20 characters and joined by a space,
 * so they are separated by runs of two or more spaces; a single space is
 * part of a name ("Torch Latency (ms)"). Reading them that way rather than
 * by position keeps working if a name ever outgrows its field.
 */
static int parse_columns(const char *line, struct table_block *b, struct strbuf *why)
{
	const char *p = line;

	while (*p) {
		const char *start;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && !(p[0] == ' ' && (p[1] == ' ' || !p[1])))
			p++;
		strvec_pushf(&b->columns, "%.*s", (int)(p - start), start);
	}
	if (b->columns.nr < 2 || strcmp(b->columns.v[0], "Status") ||
	    strcmp(b->columns.v[b->columns.nr - 1], "Size Detail")) {
		strbuf_addf(why, "not a table header: '%s'", line);
		return -1;
	}
	b->nr_fields = b->columns.nr - 2;
	return 0;
}

static int is_dashes(const char *line)
{
	return *line && !line[strspn(line, "-")];
}

/* A value as upstream prints it: "%.6f" / "%.3f" of a float, or "N/A". */
static int is_value(const char *s, size_t len)
{
	char buf[64], *end;

	if (len == 3 && !memcmp(s, "N/A", 3))
		return 1;
	if (!len || len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	strtod(buf, &end);
	return *end == '\0';
}

static const char *next_token(const char *p, size_t *len)
{
	while (*p == ' ')
		p++;
	*len = strcspn(p, " ");
	return p;
}

/*
 * The values are space-free tokens, so the row is read token by token
 * instead of by upstream's 20-character fields: a value wider than its
 * field would shift every later column.
 */
static int parse_row(const char *line, size_t nr_fields, struct table_row *row,
		     struct strbuf *why)
{
	const char *p, *tok;
	size_t len, i;

	tok = next_token(line, &len);
	row->status = xstrndup(tok, len);
	p = tok + len;
	for (i = 0; i < nr_fields; i++) {
		tok = next_token(p, &len);
		if (!is_value(tok, len)) {
			strbuf_addf(why, "row value %zu is not a number: '%s'", i + 1, line);
			return -1;
		}
		strvec_pushf(&row->fields, "%.*s", (int)len, tok);
		p = tok + len;
	}
	tok = next_token(p, &len);
	/*
	 * Upstream decides the TFLOPS column from the first row alone, so a
	 * later row can carry one value more than the header names. It would
	 * look like the start of the Size Detail, which never begins with a
	 * bare number followed by a column gap.
	 */
	if (is_value(tok, len) && starts_with(tok + len, COLUMN_GAP)) {
		strbuf_addf(why, "row has more values than the header has columns: '%s'", line);
		return -1;
	}
	if (!*tok) {
		strbuf_addf(why, "row without a Size Detail: '%s'", line);
		return -1;
	}
	row->size_detail = trimmed_dup(tok, tok + strlen(tok));
	return 0;
}

static struct table_row *new_row(struct table_block *b)
{
	struct table_row *row;

	if (b->nr_rows == b->alloc_rows) {
		b->alloc_rows = b->alloc_rows ? b->alloc_rows * 2 : 8;
		b->rows = xrealloc(b->rows, b->alloc_rows * sizeof(*b->rows));
	}
	row = &b->rows[b->nr_rows++];
	memset(row, 0, sizeof(*row));
	strvec_init(&row->fields);
	return row;
}

/* A line as parsed: without its line ending or trailing blanks. */
static const char *clean_line(struct strbuf *sb, const char *line)
{
	strbuf_reset(sb);
	strbuf_addstr(sb, line);
	strbuf_rtrim(sb);
	return sb->buf;
}

/* table_parse_block() without the error(): the filter's fallback is silent. */
static int parse_block(const char *const *lines, size_t n, struct table_block *out,
		       struct strbuf *why)
{
	struct strbuf sb = STRBUF_INIT;
	const char *l;
	size_t i;

	table_block_release(out);
	for (i = 0; i < n && i < 3; i++) {
		if (ansi_has_escape(lines[i], strlen(lines[i]))) {
			strbuf_addf(why, "escape sequence in table line %zu", i + 1);
			goto fail;
		}
	}
	if (n < 3) {
		strbuf_addstr(why, "table cut short before its rows");
		goto fail;
	}
	if (parse_title(clean_line(&sb, lines[0]), out, why) ||
	    parse_columns(clean_line(&sb, lines[1]), out, why))
		goto fail;
	if (!is_dashes(clean_line(&sb, lines[2]))) {
		strbuf_addf(why, "expected a line of dashes under the column names, got '%s'",
			    sb.buf);
		goto fail;
	}
	for (i = 3; i < n; i++) {
		l = clean_line(&sb, lines[i]);
		if (!table_is_row(l))
			break;
		if (ansi_has_escape(l, sb.len)) {
			strbuf_addf(why, "escape sequence in table line %zu", i + 1);
			goto fail;
		}
		if (parse_row(l, out->nr_fields, new_row(out), why))
			goto fail;
	}
	if (!out->nr_rows) {
		strbuf_addf(why, "table for '%s' has no rows", out->op);
		goto fail;
	}
	strbuf_release(&sb);
	return (int)i;
fail:
	strbuf_release(&sb);
	table_block_release(out);
	return -1;
}

int table_parse_block(const char *const *lines, size_t n, struct table_block *out)
{
	struct strbuf why = STRBUF_INIT;
	int ret = parse_block(lines, n, out, &why);

	if (ret < 0)
		error("%s", why.buf);
	strbuf_release(&why);
	return ret;
}

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

static void add_padded(struct strbuf *out, const char *s, size_t width, int right)
{
	size_t len = strlen(s), pad = width > len ? width - len : 0;

	if (right)
		strbuf_addchars(out, ' ', pad);
	strbuf_addstr(out, s);
	if (!right)
		strbuf_addchars(out, ' ', pad);
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
	add_padded(out, b->columns.v[0], w[0], 0);
	for (j = 1; j < last; j++) {
		strbuf_addstr(out, COLUMN_GAP);
		add_padded(out, b->columns.v[j], w[j], 1);
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
			add_padded(out, r->fields.v[j], w[j + 1], 1);
		}
		strbuf_addstr(out, COLUMN_GAP);
		strbuf_addstr(out, display.v[i]);
		strbuf_addch(out, '\n');
	}

	free(w);
	strvec_clear(&display);
	strbuf_release(&legend);
}

static int is_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static int has_prefix(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

/* Does w occur in s as a whole word ('_' counts as part of a word)? */
static int has_word(const char *s, size_t len, const char *w)
{
	size_t n = strlen(w), i;

	for (i = 0; i + n <= len; i++) {
		if (memcmp(s + i, w, n))
			continue;
		if ((!i || !is_word_char(s[i - 1])) &&
		    (i + n == len || !is_word_char(s[i + n])))
			return 1;
	}
	return 0;
}

/*
 * pytest's closing line: "1 failed, 5 passed in 3.21s" under -q, the same
 * between '=' rules otherwise; "errors" counts as failure too.
 */
static int is_failed_summary(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && (s[i] == '=' || s[i] == ' '))
		i++;
	if (i == len || !isdigit((unsigned char)s[i]) || !memmem(s, len, " in ", 4))
		return 0;
	for (; i < len; i++) {
		size_t j = i;

		if (!isdigit((unsigned char)s[i]) || (i && is_word_char(s[i - 1])))
			continue;
		while (j < len && isdigit((unsigned char)s[j]))
			j++;
		if (has_prefix(s + j, len - j, " failed") &&
		    (j + 7 == len || !is_word_char(s[j + 7])))
			return 1;
		if (has_prefix(s + j, len - j, " error")) {
			size_t e = j + 6 + (j + 6 < len && s[j + 6] == 's');

			if (e == len || !is_word_char(s[e]))
				return 1;
		}
		i = j;
	}
	return 0;
}

static int line_color(const char *s, size_t len)
{
	if (has_prefix(s, len, MARKER_DIRECT) ||
	    has_prefix(s, len, MARKER_REPLAY_FALLBACK) ||
	    has_prefix(s, len, MARKER_CAPTURE_FATAL) ||
	    has_prefix(s, len, MARKER_MEMCPY_NODES) ||
	    has_prefix(s, len, MARKER_MEMSET_NODES) ||
	    has_prefix(s, len, MARKER_NO_KERNELS))
		return TERM_YELLOW;
	if (has_word(s, len, "FAILED") || has_word(s, len, "PREFLIGHT_FAILED") ||
	    is_failed_summary(s, len))
		return TERM_RED;
	if (has_prefix(s, len, "WARNING"))
		return TERM_YELLOW;
	return -1;
}

void table_decorate_line(const char *line, size_t len, int color, struct strbuf *out)
{
	size_t at = out->len;
	int c;

	if (ansi_has_escape(line, len)) {
		strbuf_add(out, line, len);
		if (!color)
			strbuf_setlen(out, at + ansi_strip(out->buf + at, len));
		return;
	}
	c = color ? line_color(line, len) : -1;
	if (c < 0)
		strbuf_add(out, line, len);
	else
		term_add_colored(out, 1, (enum term_color)c, line, len);
}

void table_emit_strbuf(void *data, const char *line, size_t len)
{
	struct strbuf *sb = data;

	strbuf_add(sb, line, len);
	strbuf_addch(sb, '\n');
}

void table_filter_init(struct table_filter *tf, int color,
		       table_emit_fn emit, void *data)
{
	tf->color = color;
	tf->emit = emit;
	tf->data = data;
	tf->state = IDLE;
	strvec_init(&tf->held);
	strbuf_init(&tf->line, 0);
	strbuf_init(&tf->out, 0);
}

void table_filter_release(struct table_filter *tf)
{
	strvec_clear(&tf->held);
	strbuf_release(&tf->line);
	strbuf_release(&tf->out);
	tf->state = IDLE;
}

int table_filter_holding(const struct table_filter *tf)
{
	return tf->held.nr > 0;
}

static void pass(struct table_filter *tf, const char *line, size_t len)
{
	strbuf_reset(&tf->out);
	table_decorate_line(line, len, tf->color, &tf->out);
	tf->emit(tf->data, tf->out.buf, tf->out.len);
}

/* Give back the held lines as they came. */
static void spill(struct table_filter *tf)
{
	size_t i;

	for (i = 0; i < tf->held.nr; i++)
		pass(tf, tf->held.v[i], strlen(tf->held.v[i]));
	strvec_clear(&tf->held);
	tf->state = IDLE;
}

/* The block is complete: emit it rendered, or as it came if it does not parse. */
static void finish(struct table_filter *tf)
{
	struct table_block b = TABLE_BLOCK_INIT;
	struct strbuf why = STRBUF_INIT;
	char *p, *nl;

	if (parse_block((const char *const *)tf->held.v, tf->held.nr, &b, &why) !=
	    (int)tf->held.nr) {
		spill(tf);
		goto out;
	}
	strbuf_reset(&tf->out);
	table_render(&b, tf->color, &tf->out);
	/* Hand out NUL-terminated lines, as pass() does. */
	for (p = tf->out.buf; (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = '\0';
		tf->emit(tf->data, p, (size_t)(nl - p));
	}
	strvec_clear(&tf->held);
	tf->state = IDLE;
out:
	table_block_release(&b);
	strbuf_release(&why);
}

void table_filter_line(struct table_filter *tf, const char *line, size_t len)
{
	const char *l;

	strbuf_reset(&tf->line);
	strbuf_add(&tf->line, line, len);
	l = tf->line.buf;

	for (;;) {
		switch (tf->state) {
		case IDLE:
			if (table_is_title(l)) {
				strvec_push(&tf->held, l);
				tf->state = TITLE;
			} else {
				pass(tf, tf->line.buf, tf->line.len);
			}
			return;
		case TITLE:
			if (starts_with(l, "Status")) {
				strvec_push(&tf->held, l);
				tf->state = COLUMNS;
				return;
			}
			spill(tf);
			continue;
		case COLUMNS:
			if (is_dashes(l)) {
				strvec_push(&tf->held, l);
				tf->state = ROWS;
				return;
			}
			spill(tf);
			continue;
		case ROWS:
			if (table_is_row(l)) {
				strvec_push(&tf->held, l);
				return;
			}
			finish(tf);
			continue;
		}
	}
}

void table_filter_flush(struct table_filter *tf)
{
	if (tf->state == ROWS)
		finish(tf);
	else
		spill(tf);
}
