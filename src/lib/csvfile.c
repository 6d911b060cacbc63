#include "lib/csvfile.h"

#include <csv.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "lib/safefile.h"

void csv_add_field(struct strbuf *sb, const char *field)
{
	if (!field)
		return;
	if (!strpbrk(field, ",\"\r\n")) {
		strbuf_addstr(sb, field);
		return;
	}
	strbuf_addch(sb, '"');
	for (const char *p = field; *p; p++) {
		if (*p == '"')
			strbuf_addch(sb, '"');
		strbuf_addch(sb, *p);
	}
	strbuf_addch(sb, '"');
}

void csv_add_row(struct strbuf *sb, const char *const *fields, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_addch(sb, ',');
		csv_add_field(sb, fields[i]);
	}
	strbuf_addch(sb, '\n');
}

/* What the libcsv callbacks accumulate while one text is parsed. */
struct parse_state {
	const char *what;
	struct csv_table *t;
	char **cur;       /* fields of the row being read */
	size_t ncur, alloc;
	size_t line;      /* 1-based record number, for messages */
	int failed;
};

static void on_field(void *data, size_t len, void *st_)
{
	struct parse_state *st = st_;
	if (st->ncur == st->alloc) {
		st->alloc = st->alloc ? 2 * st->alloc : 16;
		st->cur = xrealloc(st->cur, st->alloc * sizeof(*st->cur));
	}
	st->cur[st->ncur++] = data ? xstrndup(data, len) : xstrdup("");
}

static void drop_current(struct parse_state *st)
{
	for (size_t i = 0; i < st->ncur; i++)
		free(st->cur[i]);
	st->ncur = 0;
}

static void on_row(int term, void *st_)
{
	struct parse_state *st = st_;
	struct csv_table *t = st->t;

	st->line++;
	if (st->failed) {
		drop_current(st);
		return;
	}
	if (!t->header) {
		t->ncols = st->ncur;
		t->header = xcalloc(st->ncur ? st->ncur : 1, sizeof(char *));
		memcpy(t->header, st->cur, st->ncur * sizeof(char *));
		st->ncur = 0;
		return;
	}
	if (st->ncur > t->ncols) {
		error("%s: record %zu has %zu fields, the header has %zu; "
		      "quote fields that contain commas", st->what, st->line, st->ncur,
		      t->ncols);
		st->failed = 1;
		drop_current(st);
		return;
	}
	char **row = xcalloc(t->ncols ? t->ncols : 1, sizeof(char *));
	for (size_t i = 0; i < t->ncols; i++)
		row[i] = i < st->ncur ? st->cur[i] : xstrdup("");
	st->ncur = 0;
	t->rows = xrealloc(t->rows, (t->nrows + 1) * sizeof(*t->rows));
	t->rows[t->nrows++] = row;
}

/* Keep spaces around unquoted fields: our tables never pad, so they are data. */
static int no_space(unsigned char c)
{
	return 0;
}

int csv_parse_text(const char *text, size_t len, const char *what, struct csv_table *t)
{
	struct csv_parser p;
	struct parse_state st = { .what = what, .t = t };

	memset(t, 0, sizeof(*t));
	if (csv_init(&p, CSV_APPEND_NULL) != 0)
		return error("%s: cannot start the CSV parser", what);
	csv_set_space_func(&p, no_space);
	if (csv_parse(&p, text, len, on_field, on_row, &st) != len) {
		error("%s: not valid CSV near record %zu: %s", what, st.line + 1,
		      csv_strerror(csv_error(&p)));
		st.failed = 1;
	}
	if (!st.failed)
		csv_fini(&p, on_field, on_row, &st);
	csv_free(&p);
	drop_current(&st);
	free(st.cur);
	if (st.failed) {
		csv_table_free(t);
		return -1;
	}
	if (!t->header)
		t->header = xcalloc(1, sizeof(char *));
	return 0;
}

int csv_read_file(const char *path, struct csv_table *t)
{
	struct strbuf sb;
	int ret;

	memset(t, 0, sizeof(*t));
	strbuf_init(&sb, 0);
	ret = read_user_file(path, "the table", 0, &sb);
	if (ret) {
		strbuf_release(&sb);
		if (ret == 1) {
			error("the table '%s' does not exist", path);
			errno = ENOENT;
		}
		return -1;
	}
	ret = csv_parse_text(sb.buf, sb.len, path, t);
	strbuf_release(&sb);
	return ret;
}

int csv_column(const struct csv_table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (!strcmp(t->header[i], name))
			return (int)i;
	return -1;
}

const char *csv_get(const struct csv_table *t, size_t r, const char *name)
{
	int c = csv_column(t, name);
	if (c < 0 || r >= t->nrows)
		return "";
	return t->rows[r][c];
}

void csv_table_free(struct csv_table *t)
{
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t i = 0; i < t->ncols; i++)
			free(t->rows[r][i]);
		free(t->rows[r]);
	}
	free(t->rows);
	if (t->header)
		for (size_t i = 0; i < t->ncols; i++)
			free(t->header[i]);
	free(t->header);
	memset(t, 0, sizeof(*t));
}
