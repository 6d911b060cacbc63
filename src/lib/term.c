#include "lib/term.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int term_color_setting_valid(const char *value)
{
	return !value || !*value || !strcmp(value, "auto") ||
	       !strcmp(value, "always") || !strcmp(value, "never");
}

int term_color_wanted(int fd, const char *flaggems_perf_color)
{
	const char *v = flaggems_perf_color, *env;

	if (v && !strcmp(v, "always"))
		return 1;
	if (v && !strcmp(v, "never"))
		return 0;

	/* NO_COLOR counts only when non-empty, as no-color.org specifies. */
	env = getenv("NO_COLOR");
	if (env && *env)
		return 0;
	if (!isatty(fd))
		return 0;
	env = getenv("TERM");
	return !env || strcmp(env, "dumb");
}

const char *term_color_code(enum term_color c)
{
	switch (c) {
	case TERM_GREEN:
		return "\033[32m";
	case TERM_RED:
		return "\033[31m";
	case TERM_YELLOW:
		return "\033[33m";
	case TERM_BOLD:
		return "\033[1m";
	case TERM_DIM:
		return "\033[2m";
	}
	BUG("unknown colour %d", (int)c);
}

void term_add_colored(struct strbuf *sb, int on, enum term_color c,
		      const char *text, size_t len)
{
	if (!on || !len) {
		strbuf_add(sb, text, len);
		return;
	}
	strbuf_addstr(sb, term_color_code(c));
	strbuf_add(sb, text, len);
	strbuf_addstr(sb, TERM_RESET);
}

void term_addstr_colored(struct strbuf *sb, int on, enum term_color c,
			 const char *text)
{
	term_add_colored(sb, on, c, text, strlen(text));
}

void term_add_cell(struct strbuf *sb, const char *text, size_t width, enum term_align align,
		   int on, enum term_color c)
{
	size_t len = term_text_width(text, strlen(text)), pad = width > len ? width - len : 0;

	if (align == TERM_RIGHT)
		strbuf_addchars(sb, ' ', pad);
	term_addstr_colored(sb, on, c, text);
	if (align == TERM_LEFT)
		strbuf_addchars(sb, ' ', pad);
}

size_t term_columns(int fd)
{
	struct winsize ws;
	const char *env;
	char *end;
	long n;

	if (isatty(fd) && !ioctl(fd, TIOCGWINSZ, &ws) && ws.ws_col > 0)
		return ws.ws_col;
	env = getenv("COLUMNS");
	if (!env || !*env)
		return 0;
	n = strtol(env, &end, 10);
	return *end || n <= 0 ? 0 : (size_t)n;
}

static int is_continuation(char c)
{
	return ((unsigned char)c & 0xC0) == 0x80;
}

size_t term_text_width(const char *text, size_t len)
{
	size_t w = 0;

	for (size_t i = 0; i < len; i++)
		w += !is_continuation(text[i]);
	return w;
}

size_t term_prefix_fitting(const char *text, size_t len, size_t width)
{
	size_t w = 0, i = 0;

	for (; i < len; i++) {
		if (is_continuation(text[i]))
			continue;
		if (w == width)
			break;
		w++;
	}
	return i;
}

void term_add_cut(struct strbuf *sb, const char *text, size_t width)
{
	size_t len = strlen(text);

	if (!width || term_text_width(text, len) <= width) {
		strbuf_add(sb, text, len);
		return;
	}
	if (width < 4) {
		strbuf_addchars(sb, '.', width);
		return;
	}
	strbuf_add(sb, text, term_prefix_fitting(text, len, width - 3));
	strbuf_addstr(sb, "...");
}

void term_add_wrapped(struct strbuf *sb, const char *text, size_t indent, size_t width)
{
	size_t room = width > indent + 8 ? width - indent : 8;

	for (const char *line = text; line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line), col = 0;
		const char *p = line, *end = line + len;

		strbuf_addchars(sb, ' ', indent);
		while (p < end) {
			const char *w = p;
			size_t ww;

			while (w < end && *w != ' ')
				w++;
			ww = term_text_width(p, (size_t)(w - p));
			if (col && col + 1 + ww > room) {
				strbuf_addch(sb, '\n');
				strbuf_addchars(sb, ' ', indent);
				col = 0;
			} else if (col) {
				strbuf_addch(sb, ' ');
				col++;
			}
			strbuf_add(sb, p, (size_t)(w - p));
			col += ww;
			p = w;
			while (p < end && *p == ' ')
				p++;
		}
		strbuf_addch(sb, '\n');
		line = nl ? nl + 1 : NULL;
	}
}
