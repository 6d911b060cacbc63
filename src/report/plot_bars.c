/*
 * Bar charts (plot.h): horizontal bars (status counts, per-operator
 * speedups) and a histogram (the distribution of speedups).
 */
#include <math.h>
#include <string.h>

#include "report/plot.h"
#include "report/svg.h"

#define W 900.0
#define BAR_H 18.0

void plot_hbars(struct strbuf *sb, const struct hbars *h)
{
	double label_w = 240, text_w = 90, top = 30, x0, x1, hgt, lo = INFINITY, hi = -INFINITY;
	struct scale s;
	size_t n = 0;

	for (size_t i = 0; i < h->nr; i++) {
		double v = h->bars[i].value;
		if (!isfinite(v) || (h->log && v <= 0))
			continue;
		lo = fmin(lo, v);
		hi = fmax(hi, v);
		n++;
	}
	if (!n) {
		plot_empty(sb, h->title, "nothing to draw");
		return;
	}
	x0 = label_w;
	x1 = W - text_w;
	if (h->log) {
		/* from 1 both ways, symmetric so that 2x and 0.5x bars are as long */
		double span = fmax(fabs(log(lo)), fabs(log(hi))) * 1.05;
		scale_init(&s, exp(-span), exp(span), x0, x1, 1);
	} else {
		scale_init(&s, 0, hi > 0 ? hi * 1.05 : 1, x0, x1, 0);
	}
	hgt = top + h->nr * BAR_H + 44;
	svg_begin(sb, W, hgt, "hbars", h->title);
	svg_text(sb, 8, 18, SVG_START, "title", h->title, 100);
	plot_axis_x(sb, &s, top + h->nr * BAR_H + 4, top, h->log ? plot_times_label : NULL);
	if (h->xlabel)
		svg_text(sb, (x0 + x1) / 2, hgt - 6, SVG_MIDDLE, "muted", h->xlabel, 0);
	for (size_t i = 0; i < h->nr; i++) {
		const struct hbar *b = &h->bars[i];
		double y = top + i * BAR_H, base = scale_map(&s, h->log ? 1 : 0);

		svg_group_begin(sb, "row", b->tooltip ? b->tooltip : b->label);
		svg_text(sb, x0 - 8, y + BAR_H / 2 + 4, SVG_END, NULL, b->label, 36);
		if (isfinite(b->value) && (!h->log || b->value > 0)) {
			double xv = scale_map(&s, b->value);
			svg_rect(sb, fmin(base, xv), y + 3, fmax(fabs(xv - base), 1), BAR_H - 6,
				 b->cls ? b->cls : "bar");
			if (b->text)
				svg_text(sb, fmax(base, xv) + 4, y + BAR_H / 2 + 4, SVG_START, NULL,
					 b->text, 0);
		}
		svg_group_end(sb);
	}
	if (h->log)
		svg_line(sb, scale_map(&s, 1), top, scale_map(&s, 1), top + h->nr * BAR_H, "one");
	svg_end(sb);
}

void plot_histogram(struct strbuf *sb, const struct histogram *h)
{
	double x0 = 60, x1 = W - 20, top = 34, bottom = 250, hgt = 290;
	struct scale sx, sy;
	size_t max = 0, total = 0;
	struct strbuf t = STRBUF_INIT;

	for (size_t i = 0; i < h->nbins; i++) {
		if (h->counts[i] > max)
			max = h->counts[i];
		total += h->counts[i];
	}
	if (!total || h->edges[0] <= 0) {
		plot_empty(sb, h->title, "no value to count");
		return;
	}
	scale_init(&sx, h->edges[0], h->edges[h->nbins], x0, x1, 1);
	scale_init(&sy, 0, max * 1.1, bottom, top, 0);
	svg_begin(sb, W, hgt, "histogram", h->title);
	svg_text(sb, 8, 18, SVG_START, "title", h->title, 100);
	plot_axis_y(sb, &sy, x0, x1, NULL);
	for (size_t i = 0; i < h->nbins; i++) {
		double a = scale_map(&sx, h->edges[i]), b = scale_map(&sx, h->edges[i + 1]);
		const char *cls = "bar";

		if (!h->counts[i])
			continue;
		if (isfinite(h->mark) && h->edges[i + 1] <= h->mark)
			cls = "bar lo";
		else if (isfinite(h->mark) && h->edges[i] >= h->mark)
			cls = "bar hi";
		strbuf_reset(&t);
		strbuf_addf(&t, "%zu in [", h->counts[i]);
		scale_label(&t, h->edges[i]);
		strbuf_addstr(&t, ", ");
		scale_label(&t, h->edges[i + 1]);
		strbuf_addch(&t, ')');
		svg_group_begin(sb, "bin", t.buf);
		svg_rect(sb, a + 0.5, scale_map(&sy, (double)h->counts[i]), fmax(b - a - 1, 1),
			 bottom - scale_map(&sy, (double)h->counts[i]), cls);
		svg_group_end(sb);
	}
	plot_axis_x(sb, &sx, bottom, bottom, plot_times_label);
	if (isfinite(h->mark) && h->mark > sx.d0 && h->mark < sx.d1) {
		double xm = scale_map(&sx, h->mark);
		svg_line(sb, xm, top, xm, bottom, "one");
		if (h->mark_label)
			svg_text(sb, xm + 4, top + 10, SVG_START, "muted", h->mark_label, 0);
	}
	if (h->xlabel)
		svg_text(sb, (x0 + x1) / 2, hgt - 6, SVG_MIDDLE, "muted", h->xlabel, 0);
	if (h->ylabel)
		svg_text_rotated(sb, 14, (top + bottom) / 2, -90, SVG_MIDDLE, "muted", h->ylabel);
	svg_end(sb);
	strbuf_release(&t);
}
