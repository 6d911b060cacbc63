#include "rundir/preflight_report.h"

#include <string.h>

#include "lib/term.h"

void preflight_report(struct strbuf *sb, const char *check, const char *side,
		      const char *why, const char *fix, int color)
{
	strbuf_addf(sb, "%s" PREFLIGHT_MARK "%s", color ? term_color_code(TERM_RED) : "", check);
	if (side)
		strbuf_addf(sb, " side=%s", side);
	strbuf_addf(sb, "%s\n  %s\n", color ? TERM_RESET : "", why);
	if (fix && *fix)
		strbuf_addf(sb, "  fix: %s\n", fix);
}

int preflight_report_find(const char *text, char *buf, size_t size)
{
	const char *m = strstr(text, PREFLIGHT_MARK);
	size_t n = 0;

	if (!m || !size)
		return 0;
	m += strlen(PREFLIGHT_MARK);
	/* the name ends at a space (side=), the line's end or a colour code */
	while (m[n] && m[n] != '\n' && m[n] != ' ' && m[n] != '\033' && n + 1 < size)
		n++;
	memcpy(buf, m, n);
	buf[n] = '\0';
	return 1;
}
