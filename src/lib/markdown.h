/*
 * Markdown (GitHub-flavoured) for text that comes from data: an operator
 * name, a shape, a message. Whatever it holds, it stays one inline piece
 * of text: it cannot open a link, emphasis, HTML or a new table cell, and
 * a line break becomes a space.
 */
#ifndef ZLB_MARKDOWN_H
#define ZLB_MARKDOWN_H

#include "lib/strbuf.h"

/* text as plain inline text: \ ` * _ [ ] < > | # escaped with a backslash. */
void md_add_text(struct strbuf *sb, const char *text);

/*
 * text as a code span: fenced by one more backtick than its longest run of
 * backticks (padded with a space where it starts or ends with one), '|'
 * escaped so that it stays in its table cell. Empty text adds nothing.
 */
void md_add_code(struct strbuf *sb, const char *text);

#endif
