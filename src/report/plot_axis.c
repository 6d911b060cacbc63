/*
 * What the plots share (plot.h): axes, labels, the empty plot.
 */
#include <math.h>
#include <stdio.h>

#include "report/plot.h"
#include "report/svg.h"

void plot_percent_label(struct strbuf *sb, double ratio)
{
	double pct = (ratio - 1) * 100;
	char buf[32];

	if (fabs(pct) < 1e-9)
		pct = 0;
	snprintf(buf, sizeof(buf), "%+.3g%%", pct);
	strbuf_addstr(sb, pct == 0 ? "0%" : buf);
}

void plot_times_label(struct strbuf *sb, double v)
{
	scale_label(sb, v);
	strbuf_addch(sb, 'x');
}

void plot_count_label(struct strbuf *sb, double v)
{
	static const char *const prefix[] = { "", "k", "M", "G", "T", "P" };
	size_t i = 0;

	while (fabs(v) >= 1000 && i + 1 < sizeof(prefix) / sizeof(prefix[0])) {
		v /= 1000;
		i++;
	}
	strbuf_addf(sb, "%.3g%s", v, prefix[i]);
}

void plot_axis_x(struct strbuf *sb, const struct scale *s, double y, double grid_top,
		 void (*label)(struct strbuf *, double))
{
	double ticks[16];
	size_t n = scale_ticks(s, ticks, 16);
	struct strbuf t = STRBUF_INIT;

	for (size_t i = 0; i < n; i++) {
		double x = scale_map(s, ticks[i]);

		if (grid_top < y)
			svg_line(sb, x, grid_top, x, y, "grid");
		svg_line(sb, x, y, x, y + 4, "axis");
		strbuf_reset(&t);
		(label ? label : scale_label)(&t, ticks[i]);
		svg_text(sb, x, y + 16, SVG_MIDDLE, NULL, t.buf, 0);
	}
	svg_line(sb, s->r0, y, s->r1, y, "axis");
	strbuf_release(&t);
}

void plot_axis_y(struct strbuf *sb, const struct scale *s, double x, double grid_right,
		 void (*label)(struct strbuf *, double))
{
	double ticks[16];
	size_t n = scale_ticks(s, ticks, 16);
	struct strbuf t = STRBUF_INIT;

	for (size_t i = 0; i < n; i++) {
		double y = scale_map(s, ticks[i]);

		if (grid_right > x)
			svg_line(sb, x, y, grid_right, y, "grid");
		svg_line(sb, x - 4, y, x, y, "axis");
		strbuf_reset(&t);
		(label ? label : scale_label)(&t, ticks[i]);
		svg_text(sb, x - 7, y + 4, SVG_END, NULL, t.buf, 0);
	}
	svg_line(sb, x, s->r0, x, s->r1, "axis");
	strbuf_release(&t);
}

void plot_empty(struct strbuf *sb, const char *title, const char *why)
{
	svg_begin(sb, 600, 70, "empty", title);
	svg_text(sb, 10, 20, SVG_START, "title", title, 80);
	svg_rect(sb, 10, 30, 580, 32, "zebra");
	svg_text(sb, 20, 51, SVG_START, "muted", why, 90);
	svg_end(sb);
}
