/* Upstream's fixed-width result blocks (Operator title, columns, rows) read into struct table_block. */
#include "run/table.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ansi.h"
#include "lib/pyrepr.h"
#include "lib/term.h"
#include "rundir/markers.h"
#include "run/table_int.h"

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

int table_is_dashes(const char *line)
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
int table_parse_lines(const char *const *lines, size_t n, struct table_block *out,
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
	if (!table_is_dashes(clean_line(&sb, lines[2]))) {
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
	int ret = table_parse_lines(lines, n, out, &why);

	if (ret < 0)
		error("%s", why.buf);
	strbuf_release(&why);
	return ret;
}
