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

size_t report_columns(struct reporter *r)
{
	return r && r->columns ? r->columns(r) : 0;
}

static size_t stream_columns(struct reporter *self)
{
	struct stream_reporter *s = (struct stream_reporter *)self;

	return term_columns(fileno(s->out));
}

static void stream_say(struct reporter *self, enum report_kind kind, const char *text)
{
	struct stream_reporter *s = (struct stream_reporter *)self;
	size_t width;

	if ((kind == REPORT_OUT || kind == REPORT_LIVE) && s->verbosity < REPORT_NORMAL)
		return;
	if (kind == REPORT_DETAIL && s->verbosity < REPORT_VERBOSE)
		return;
	erase_live(s);
	switch (kind) {
	case REPORT_OUT:
	case REPORT_RESULT:
	case REPORT_DETAIL:
		fputs(text, s->out);
		break;
	case REPORT_WARN:
		fflush(s->out);
		fputs(text, s->err);
		fflush(s->err);
		break;
	case REPORT_LIVE:
		/* one column to spare: a line that fills the last one wraps on some terminals */
		width = stream_columns(self);
		for (const char *p = text; *p;) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);

			if (width > 1)
				n = term_prefix_fitting(p, n, width - 1);
			fprintf(s->out, "\033[2K%.*s\n", (int)n, p);
			s->drawn++;
			p = nl ? nl + 1 : p + strlen(p);
		}
		break;
	}
	fflush(s->out);
}

void stream_reporter_init(struct stream_reporter *s, FILE *out, FILE *err)
{
	memset(s, 0, sizeof(*s));
	s->r.say = stream_say;
	s->r.columns = stream_columns;
	s->verbosity = REPORT_NORMAL;
	s->out = out;
	s->err = err;
}

static void buffer_say(struct reporter *self, enum report_kind kind, const char *text)
{
	struct buffer_reporter *b = (struct buffer_reporter *)self;

	switch (kind) {
	case REPORT_WARN:
		fputs(text, b->err);
		fflush(b->err);
		break;
	case REPORT_LIVE:
		break;
	case REPORT_OUT:
		if (b->verbosity >= REPORT_NORMAL)
			strbuf_addstr(&b->out, text);
		break;
	case REPORT_DETAIL:
		if (b->verbosity >= REPORT_VERBOSE)
			strbuf_addstr(&b->out, text);
		break;
	case REPORT_RESULT:
		strbuf_addstr(&b->out, text);
		break;
	}
}

void buffer_reporter_init(struct buffer_reporter *b, FILE *err)
{
	memset(b, 0, sizeof(*b));
	b->r.say = buffer_say;
	strbuf_init(&b->out, 0);
	b->err = err;
	b->verbosity = REPORT_NORMAL;
}

void buffer_reporter_release(struct buffer_reporter *b)
{
	strbuf_release(&b->out);
}
