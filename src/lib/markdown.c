#include "lib/markdown.h"

#include <string.h>

void md_add_text(struct strbuf *sb, const char *text)
{
	for (const char *p = text; *p; p++) {
		if (*p == '\n' || *p == '\r' || *p == '\t') {
			strbuf_addch(sb, ' ');
			continue;
		}
		if (strchr("\\`*_[]<>|#", *p))
			strbuf_addch(sb, '\\');
		strbuf_addch(sb, *p);
	}
}

void md_add_code(struct strbuf *sb, const char *text)
{
	size_t run = 0, longest = 0, len = strlen(text);
	int pad;

	if (!len)
		return;
	for (const char *p = text; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	/* A span that starts or ends with a backtick needs a space inside its fence. */
	pad = text[0] == '`' || text[len - 1] == '`';
	strbuf_addchars(sb, '`', longest + 1);
	if (pad)
		strbuf_addch(sb, ' ');
	for (const char *p = text; *p; p++) {
		if (*p == '\n' || *p == '\r' || *p == '\t')
			strbuf_addch(sb, ' ');
		else if (*p == '|')
			strbuf_addstr(sb, "\\|");
		else
			strbuf_addch(sb, *p);
	}
	if (pad)
		strbuf_addch(sb, ' ');
	strbuf_addchars(sb, '`', longest + 1);
}
