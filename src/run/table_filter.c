/*
 * pytest's output as it streams: each line coloured by what it says, and
 * upstream's result blocks held back and redrawn as zlb's table.
 */
#include "run/table.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ansi.h"
#include "lib/pyrepr.h"
#include "lib/term.h"
#include "rundir/markers.h"
#include "run/table_int.h"

enum filter_state { IDLE, TITLE, COLUMNS, ROWS };

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

/* Is the line one that TABLE_SHOW_ERRORS (-q) keeps: a failure? */
static int is_error_line(const char *s, size_t len)
{
	return line_color(s, len) == TERM_RED || has_word(s, len, "ERROR") ||
	       has_prefix(s, len, MARKER_CAPTURE_FATAL);
}

/* Is the line one that TABLE_SHOW_TABLES (the default) keeps besides tables? */
static int is_news_line(const char *s, size_t len)
{
	static const char *const summary[] = { "SKIPPED ", "XFAIL ", "XPASS ", NULL };

	if (line_color(s, len) >= 0 || is_error_line(s, len))
		return 1;
	for (const char *const *p = summary; *p; p++)
		if (has_prefix(s, len, *p))
			return 1;
	return 0;
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
	tf->show = TABLE_SHOW_ALL;
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

/* A line outside a table, if the filter shows it (forced: a table that did not parse). */
static void pass_line(struct table_filter *tf, const char *line, size_t len, int forced)
{
	if (tf->show == TABLE_SHOW_ERRORS ? !is_error_line(line, len) :
	    tf->show == TABLE_SHOW_TABLES ? !forced && !is_news_line(line, len) : 0)
		return;
	strbuf_reset(&tf->out);
	table_decorate_line(line, len, tf->color, &tf->out);
	tf->emit(tf->data, tf->out.buf, tf->out.len);
}

/* Give back the held lines as they came. */
static void spill(struct table_filter *tf)
{
	size_t i;

	for (i = 0; i < tf->held.nr; i++)
		pass_line(tf, tf->held.v[i], strlen(tf->held.v[i]), 1);
	strvec_clear(&tf->held);
	tf->state = IDLE;
}

/* The block is complete: emit it rendered, or as it came if it does not parse. */
static void finish(struct table_filter *tf)
{
	struct table_block b = TABLE_BLOCK_INIT;
	struct strbuf why = STRBUF_INIT;
	char *p, *nl;

	if (table_parse_lines((const char *const *)tf->held.v, tf->held.nr, &b, &why) !=
	    (int)tf->held.nr) {
		spill(tf);
		goto out;
	}
	strbuf_reset(&tf->out);
	/* pytest's blank lines are not shown: the tables get one of their own */
	if (tf->show == TABLE_SHOW_TABLES)
		strbuf_addch(&tf->out, '\n');
	if (tf->show != TABLE_SHOW_ERRORS)
		table_render(&b, tf->color, &tf->out);
	/* Hand out NUL-terminated lines, as pass_line() does. */
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
				pass_line(tf, tf->line.buf, tf->line.len, 0);
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
			if (table_is_dashes(l)) {
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
