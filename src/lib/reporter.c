#include "lib/reporter.h"

#include <stdarg.h>
#include <string.h>

void report(struct reporter *r, enum report_kind kind, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (!r)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (kind != REPORT_LIVE && (!sb.len || sb.buf[sb.len - 1] != '\n'))
		strbuf_addch(&sb, '\n');
	r->say(r, kind, sb.buf);
	strbuf_release(&sb);
}

void report_colored(struct reporter *r, enum report_kind kind, int on, enum term_color c,
		    const char *fmt, ...)
{
	struct strbuf text = STRBUF_INIT, line = STRBUF_INIT;
	va_list ap;

	if (!r)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&text, fmt, ap);
	va_end(ap);
	term_addstr_colored(&line, on, c, text.buf);
	report(r, kind, "%s", line.buf);
	strbuf_release(&text);
	strbuf_release(&line);
}

static void erase_live(struct stream_reporter *s)
{
	if (!s->drawn)
		return;
	fprintf(s->out, "\033[%dA", s->drawn);
	for (int i = 0; i < s->drawn; i++)
		fputs("\033[2K\n", s->out);
	fprintf(s->out, "\033[%dA", s->drawn);
	s->drawn = 0;
}

static void stream_say(struct reporter *self, enum report_kind kind, const char *text)
{
	struct stream_reporter *s = (struct stream_reporter *)self;

	erase_live(s);
	switch (kind) {
	case REPORT_OUT:
		fputs(text, s->out);
		break;
	case REPORT_WARN:
		fflush(s->out);
		fputs(text, s->err);
		fflush(s->err);
		break;
	case REPORT_LIVE:
		for (const char *p = text; *p;) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);

			fprintf(s->out, "\033[2K%.*s\n", (int)n, p);
			s->drawn++;
			p += n + (nl != NULL);
		}
		break;
	}
	fflush(s->out);
}

void stream_reporter_init(struct stream_reporter *s, FILE *out, FILE *err)
{
	memset(s, 0, sizeof(*s));
	s->r.say = stream_say;
	s->out = out;
	s->err = err;
}
