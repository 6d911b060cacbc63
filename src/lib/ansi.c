#include "lib/ansi.h"

#include <string.h>

#define ESC 0x1b
#define BEL 0x07

/*
 * Length of the escape sequence at s[0] (== ESC), at most len. The
 * sequence may end early at a control byte that cannot belong to it;
 * that byte is not counted, so the caller keeps it.
 */
static size_t escape_len(const unsigned char *s, size_t len)
{
	size_t i = 1;

	if (len < 2)
		return len;

	switch (s[1]) {
	case '[':
		/* Parameters 0x30-0x3f, intermediates 0x20-0x2f, final 0x40-0x7e. */
		for (i = 2; i < len; i++) {
			if (s[i] >= 0x40 && s[i] <= 0x7e)
				return i + 1;
			if (s[i] < 0x20 || s[i] > 0x3f)
				return i;
		}
		return len;
	case ']': case 'P': case 'X': case '^': case '_':
		/*
		 * String sequences run to ST (ESC \). Terminals also accept BEL
		 * for OSC, and programs use it, so accept it for all of them.
		 */
		for (i = 2; i < len; i++) {
			if (s[i] == BEL)
				return i + 1;
			if (s[i] == ESC)
				return i + 1 < len && s[i + 1] == '\\' ? i + 2 : i;
		}
		return len;
	}

	while (i < len && s[i] >= 0x20 && s[i] <= 0x2f)
		i++;
	if (i < len && s[i] >= 0x30 && s[i] <= 0x7e)
		return i + 1;
	/* ESC followed by a control byte (or nothing): drop the ESC alone. */
	return i;
}

size_t ansi_strip(char *buf, size_t len)
{
	unsigned char *s = (unsigned char *)buf;
	size_t r = 0, w = 0;

	while (r < len) {
		if (s[r] == ESC) {
			r += escape_len(s + r, len - r);
			continue;
		}
		s[w++] = s[r++];
	}
	return w;
}

void strbuf_ansi_strip(struct strbuf *sb)
{
	strbuf_setlen(sb, ansi_strip(sb->buf, sb->len));
}

int ansi_has_escape(const char *buf, size_t len)
{
	return memchr(buf, ESC, len) != NULL;
}
