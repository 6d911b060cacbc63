/*
 * Terminal colour: whether to use it, and wrapping text in it.
 *
 * The decision follows the usual conventions: an explicit "always" or
 * "never" wins; otherwise NO_COLOR (https://no-color.org) turns colour off,
 * and it is on only for a terminal that is not TERM=dumb. Only the
 * terminal stream is ever coloured; run.log never is.
 */
#ifndef ZLB_TERM_H
#define ZLB_TERM_H

#include <stddef.h>

#include "lib/strbuf.h"

/*
 * Should output written to fd be coloured? flaggems_perf_color is the
 * user's setting: "always" -> 1, "never" -> 0; "auto", NULL, "" and
 * anything else -> decide from the environment and fd (the CLI rejects
 * unknown values before this; see term_color_setting_valid()).
 */
int term_color_wanted(int fd, const char *flaggems_perf_color);

/* Is value an accepted colour setting: NULL, "", "auto", "always", "never"? */
int term_color_setting_valid(const char *value);

enum term_color {
	TERM_GREEN,
	TERM_RED,
	TERM_YELLOW,
	TERM_BOLD,
	TERM_DIM,
};

#define TERM_RESET "\033[0m"

/* The SGR sequence that starts colour c ("\033[32m" for TERM_GREEN). */
const char *term_color_code(enum term_color c);

/*
 * Append text (len bytes) to sb, wrapped in colour c and TERM_RESET when
 * on is true; plainly otherwise. Empty text is appended without codes.
 */
void term_add_colored(struct strbuf *sb, int on, enum term_color c,
		      const char *text, size_t len);
void term_addstr_colored(struct strbuf *sb, int on, enum term_color c,
			 const char *text);

/* How term_add_cell aligns a cell in its column. */
enum term_align {
	TERM_LEFT,        /* text, then spaces to the width */
	TERM_LEFT_LAST,   /* text only: the line's last cell leaves no trailing spaces */
	TERM_RIGHT,       /* spaces to the width, then text */
};

/*
 * Append one table cell: text padded with spaces to width columns (text
 * wider than width is not cut), coloured c when on (the codes take no
 * width). The one padding rule of zlb's tables.
 */
void term_add_cell(struct strbuf *sb, const char *text, size_t width, enum term_align align,
		   int on, enum term_color c);

/*
 * The width in columns output to fd may use: the terminal's (TIOCGWINSZ)
 * when fd is one, else $COLUMNS when it is a positive number, else 0 for
 * "no limit" (a pipe or a file gets every character).
 */
size_t term_columns(int fd);

/*
 * Columns text takes on a terminal: its UTF-8 code points (a continuation
 * byte takes none). Escape sequences are not skipped: measure plain text.
 */
size_t term_text_width(const char *text, size_t len);

/* The length in bytes of the longest prefix of text that takes at most width columns. */
size_t term_prefix_fitting(const char *text, size_t len, size_t width);

/*
 * Append text to sb, cut to at most width columns: a cut text ends in
 * "..." (or as many dots as fit when width < 4). width 0 means no limit.
 */
void term_add_cut(struct strbuf *sb, const char *text, size_t width);

/*
 * Append text wrapped at width columns, every line starting with indent
 * spaces and ending in a newline; a word longer than a line stands alone
 * on its line. A newline in text starts a new line.
 */
void term_add_wrapped(struct strbuf *sb, const char *text, size_t indent, size_t width);

#endif
