#include "batch/batch_progress.h"

#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"

void progress_init(struct progress *p, int live, int nlanes, FILE *out, double now)
{
	memset(p, 0, sizeof(*p));
	p->live = live;
	p->nlanes = nlanes;
	p->lanes = xcalloc((size_t)nlanes, sizeof(*p->lanes));
	p->out = out;
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

static void erase_block(struct progress *p)
{
	if (!p->drawn)
		return;
	fprintf(p->out, "\033[%dA", p->drawn);
	for (int i = 0; i < p->drawn; i++)
		fputs("\033[2K\n", p->out);
	fprintf(p->out, "\033[%dA", p->drawn);
	p->drawn = 0;
}

void progress_line(struct progress *p, const char *line)
{
	erase_block(p);
	fprintf(p->out, "%s\n", line);
	fflush(p->out);
}

void progress_draw(struct progress *p, double now)
{
	if (!p->live)
		return;
	erase_block(p);
	for (int i = 0; i < p->nlanes; i++) {
		const struct progress_lane *l = &p->lanes[i];
		char el[32], eta[32];
		size_t left = l->total - l->done;

		progress_fmt_duration(el, sizeof(el), now - p->t0);
		if (l->done)
			progress_fmt_duration(eta, sizeof(eta), l->busy / (double)l->done *
					      (double)left - (l->current ? now - l->op_started : 0));
		else
			snprintf(eta, sizeof(eta), "?");
		fprintf(p->out, "\033[2Kdevice %d: %zu/%zu done, %zu failed, %s elapsed, ~%s left%s%s\n",
			l->device, l->done, l->total, l->failed, el, left ? eta : "0s",
			l->current ? " | " : "", l->current ? l->current : "");
	}
	p->drawn = p->nlanes;
	fflush(p->out);
}

void progress_finish(struct progress *p)
{
	erase_block(p);
	fflush(p->out);
}

void progress_release(struct progress *p)
{
	free(p->lanes);
	memset(p, 0, sizeof(*p));
}
