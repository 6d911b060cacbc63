/*
 * Lines on log-log axes (plot.h): latency against size, one series per
 * dtype and side. Sizes and latencies both span decades, so both axes
 * are logarithmic.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/plot.h"
#include "report/svg.h"

#define W 900.0
#define H 380.0

static int usable(double v)
{
	return isfinite(v) && v > 0;
}

void plot_xy(struct strbuf *sb, const struct xy_plot *p)
{
	double x0 = 78, x1 = W - 24, top = 34 + 18 * ((p->nr + 3) / 4), bottom;
	double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY, hgt;
	double *px = NULL, *py = NULL;
	struct scale sx, sy;
	size_t points = 0, cap = 0;

	for (size_t i = 0; i < p->nr; i++)
		for (size_t j = 0; j < p->series[i].n; j++) {
			double x = p->series[i].x[j], y = p->series[i].y[j];
			if (!usable(x) || !usable(y))
				continue;
			xlo = fmin(xlo, x);
			xhi = fmax(xhi, x);
			ylo = fmin(ylo, y);
			yhi = fmax(yhi, y);
			points++;
		}
	if (!points) {
		plot_empty(sb, p->title, "no measured latency to draw");
		return;
	}
	hgt = top + H;
	bottom = hgt - 46;
	scale_init(&sx, xlo / 1.3, xhi * 1.3, x0, x1, 1);
	scale_init(&sy, ylo / 1.3, yhi * 1.3, bottom, top, 1);
	svg_begin(sb, W, hgt, "xy", p->title);
	svg_text(sb, 8, 18, SVG_START, "title", p->title, 100);
	/* the legend: a short line of each series' style, then its name */
	for (size_t i = 0; i < p->nr; i++) {
		double lx = x0 + (i % 4) * 200, ly = 40 + 18 * (i / 4);
		double xs[2] = { lx, lx + 26 }, ys[2] = { ly - 4, ly - 4 };

		svg_polyline(sb, xs, ys, 2, p->series[i].cls);
		svg_text(sb, lx + 32, ly, SVG_START, NULL, p->series[i].name, 26);
	}
	plot_axis_x(sb, &sx, bottom, top, p->xtick);
	plot_axis_y(sb, &sy, x0, x1, NULL);
	for (size_t i = 0; i < p->nr; i++) {
		const struct xy_series *s = &p->series[i];
		size_t n = 0;

		if (s->n > cap) {
			cap = s->n;
			px = xrealloc(px, cap * sizeof(*px));
			py = xrealloc(py, cap * sizeof(*py));
		}
		for (size_t j = 0; j < s->n; j++)
			if (usable(s->x[j]) && usable(s->y[j])) {
				px[n] = scale_map(&sx, s->x[j]);
				py[n] = scale_map(&sy, s->y[j]);
				n++;
			}
		if (!n)
			continue;
		svg_group_begin(sb, "series", s->name);
		if (n > 1)
			svg_polyline(sb, px, py, n, s->cls);
		for (size_t j = 0; j < n; j++)
			svg_circle(sb, px[j], py[j], 3, s->cls);
		svg_group_end(sb);
	}
	if (p->xlabel)
		svg_text(sb, (x0 + x1) / 2, hgt - 8, SVG_MIDDLE, "muted", p->xlabel, 0);
	if (p->ylabel)
		svg_text_rotated(sb, 16, (top + bottom) / 2, -90, SVG_MIDDLE, "muted", p->ylabel);
	svg_end(sb);
	free(px);
	free(py);
}
