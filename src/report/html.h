/*
 * The HTML of a report: escaping, the page's head (its one stylesheet, the
 * Content-Security-Policy that keeps it self-contained), and tables.
 *
 * Everything a report shows that came from a run (operator names, shapes,
 * markers, paths, identities) is untrusted text: it goes through
 * html_escape() or an html_* helper that escapes, never straight into the
 * page. The page carries no script; its CSP allows inline styles and
 * nothing else, so a page that tried to load anything (a font, an image,
 * a script) would show it as a blocked request in the browser's console,
 * which the headless-Chromium test treats as a failure.
 */
#ifndef ZLB_REPORT_HTML_H
#define ZLB_REPORT_HTML_H

#include <stddef.h>

#include "lib/strbuf.h"

/* Append text with &, <, >, " and ' replaced by entities. NULL appends nothing. */
void html_escape(struct strbuf *sb, const char *text);
/* The same for text[0..len). */
void html_escape_len(struct strbuf *sb, const char *text, size_t len);

/*
 * Append a relative URL for path: every byte outside A-Z a-z 0-9 - . _ ~ /
 * percent-encoded, so no name can end the attribute or become a scheme
 * ("javascript:" has a ':'). Callers pass paths they checked (report_safe.h).
 */
void html_url_path(struct strbuf *sb, const char *path);

/* <!DOCTYPE html> ... <body>, with title (escaped) as the page's title. */
void html_begin(struct strbuf *sb, const char *title);
/* The footer line (generator, when) and </body></html>. */
void html_end(struct strbuf *sb, const char *generated_at);

/* <h2 id="id">text</h2>; id must be a plain token chosen by the caller. */
void html_h2(struct strbuf *sb, const char *id, const char *text);
/* <p class="cls">text</p>, escaped (cls may be NULL). */
void html_p(struct strbuf *sb, const char *cls, const char *text);

/*
 * A table: html_table_begin writes <table class="cls"> with an optional
 * caption and one header row from the NULL-terminated heads (a head
 * starting with '#' is a numeric column: right-aligned, the '#' dropped).
 * Rows: html_tr_begin, cells, html_tr_end. html_td escapes its text;
 * html_td_num right-aligns; html_td_raw takes markup the caller built
 * (escaped already).
 */
void html_table_begin(struct strbuf *sb, const char *cls, const char *caption,
		      const char *const *heads);
void html_table_end(struct strbuf *sb);
void html_tr_begin(struct strbuf *sb, const char *cls);
void html_tr_end(struct strbuf *sb);
void html_td(struct strbuf *sb, const char *text);
void html_td_cls(struct strbuf *sb, const char *cls, const char *text);
void html_td_num(struct strbuf *sb, const char *fmt, ...) ZLB_PRINTF(2, 3);
void html_td_raw(struct strbuf *sb, const char *markup);
/* A label cell kept on one line, the whole text in its title (a tooltip). */
void html_td_label(struct strbuf *sb, const char *text);

/*
 * A figure with its table beside it (below it on a narrow screen or on
 * paper): html_pair_begin opens the block and the plot's cell,
 * html_pair_table switches to the table's cell, html_pair_end closes.
 */
void html_pair_begin(struct strbuf *sb, const char *id);
void html_pair_table(struct strbuf *sb);
void html_pair_end(struct strbuf *sb);

#endif
