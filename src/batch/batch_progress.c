#include "batch/batch_progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "lib/term.h"

void progress_init(struct progress *p, int live, int nlanes, struct reporter *rep, double now)
{
	memset(p, 0, sizeof(*p));
	p->live = live;
	p->nlanes = nlanes;
	p->lanes = xcalloc((size_t)nlanes, sizeof(*p->lanes));
	p->rep = rep;
	p->t0 = now;
}

void progress_fmt_duration(char *buf, size_t len, double s)
{
	long t = s < 0 ? 0 : (long)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, len, "%ldh%02ldm", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, len, "%lds", t);
}

void progress_line(struct progress *p, const char *line)
{
	report(p->rep, REPORT_OUT, "%s", line);
}

void progress_end(struct progress *p, const char *line, int failed)
{
	report(p->rep, failed ? REPORT_RESULT : p->live ? REPORT_DETAIL : REPORT_OUT, "%s", line);
}

void progress_draw(struct progress *p, double now)
{
	struct strbuf sb = STRBUF_INIT;

	if (!p->live)
		return;
	/* the terminal's width, less the column a line must not fill (lib/reporter.h) */
	size_t width = report_columns(p->rep);

	for (int i = 0; i < p->nlanes; i++) {
		const struct progress_lane *l = &p->lanes[i];
		char el[32], eta[32];
		size_t left = l->total - l->done, at = sb.len;

		progress_fmt_duration(el, sizeof(el), now - p->t0);
		if (l->done)
			progress_fmt_duration(eta, sizeof(eta), l->busy / (double)l->done *
					      (double)left - (l->current ? now - l->op_started : 0));
		else
			snprintf(eta, sizeof(eta), "?");
		strbuf_addf(&sb, "device %d: %zu/%zu done, %zu failed, %s elapsed, ~%s left%s%s",
			    l->device, l->done, l->total, l->failed, el, left ? eta : "0s",
			    l->current ? " | " : "", l->current ? l->current : "");
		if (width > 1 && term_text_width(sb.buf + at, sb.len - at) > width - 1) {
			/* a narrow terminal: the numbers in short, the operator after them (cut last) */
			strbuf_setlen(&sb, at);
			strbuf_addf(&sb, "dev %d %zu/%zu %zuF ~%s%s%s", l->device, l->done, l->total,
				    l->failed, left ? eta : "0s", l->current ? " " : "",
				    l->current ? l->current : "");
		}
		strbuf_addch(&sb, '\n');
	}
	report(p->rep, REPORT_LIVE, "%s", sb.buf);
	strbuf_release(&sb);
}

void progress_finish(struct progress *p)
{
	if (p->live)
		report(p->rep, REPORT_LIVE, "%s", "");
}

void progress_release(struct progress *p)
{
	free(p->lanes);
	memset(p, 0, sizeof(*p));
}
