#include "lib/term.h"

#include <stdlib.h>
#include <string.h>
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
	size_t len = strlen(text), pad = width > len ? width - len : 0;

	if (align == TERM_RIGHT)
		strbuf_addchars(sb, ' ', pad);
	term_addstr_colored(sb, on, c, text);
	if (align == TERM_LEFT)
		strbuf_addchars(sb, ' ', pad);
}
