/*
 * The forest plot of an A/B (plot.h): what a compiler engineer looks at
 * first. One row per compared row, so its height grows with the rows; the
 * axis is repeated on top when the plot is taller than a screen.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/plot.h"
#include "report/svg.h"

#define W 900.0
#define LABEL_W 330.0		/* the row labels */
#define FLAGS_W 120.0		/* the flags, right of the plot */
#define ROW_H 21.0
#define TOP 62.0		/* title and legend */
#define AXIS_H 34.0
#define CLIP_LO 0.25
#define CLIP_HI 4.0

static const char *const verdicts[] = { "FASTER", "SLOWER", "SAME", "UNSURE", "EXCLUDED", NULL };

/* The class of a verdict from data: one of ours, never the text itself. */
static const char *verdict_class(const char *v)
{
	for (size_t i = 0; verdicts[i]; i++)
		if (v && !strcmp(v, verdicts[i]))
			return verdicts[i];
	return "UNSURE";
}

static double clip(double v)
{
	return v < CLIP_LO ? CLIP_LO : v > CLIP_HI ? CLIP_HI : v;
}

static void legend(struct strbuf *sb, double y, double threshold)
{
	double x = LABEL_W;
	struct strbuf t = STRBUF_INIT;

	for (size_t i = 0; verdicts[i]; i++) {
		char cls[32];

		snprintf(cls, sizeof(cls), "v-%s", verdicts[i]);
		if (!strcmp(verdicts[i], "EXCLUDED"))
			svg_diamond(sb, x + 5, y - 4, 5, cls);
		else
			svg_circle(sb, x + 5, y - 4, 4.5, cls);
		svg_text(sb, x + 14, y, SVG_START, NULL, verdicts[i], 0);
		x += 14 + 9.0 * strlen(verdicts[i]) + 14;
	}
	svg_rect(sb, x, y - 10, 18, 12, "band");
	strbuf_addf(&t, "SAME band \xc2\xb1%.3g%%", threshold * 100);
	svg_text(sb, x + 24, y, SVG_START, NULL, t.buf, 0);
	strbuf_release(&t);
}

void plot_forest(struct strbuf *sb, const struct forest *f)
{
	double lo = 1 / (1 + f->threshold), hi = 1 + f->threshold;
	double x0 = LABEL_W, x1 = W - FLAGS_W, plot_top = TOP + AXIS_H, h;
	int top_axis = f->nr > 30;
	struct scale s;
	size_t drawn = 0;

	for (size_t i = 0; i < f->nr; i++) {
		const struct forest_row *r = &f->rows[i];

		if (!isfinite(r->ratio) || r->ratio <= 0)
			continue;
		drawn++;
		lo = fmin(lo, clip(isfinite(r->lo) && r->lo > 0 ? fmin(r->lo, r->ratio) : r->ratio));
		hi = fmax(hi, clip(isfinite(r->hi) && r->hi > 0 ? fmax(r->hi, r->ratio) : r->ratio));
	}
	if (!drawn) {
		plot_empty(sb, f->title, "no row has a ratio B/A to draw");
		return;
	}
	/* symmetric about 1 on the log axis, with a margin, so left and right read alike */
	{
		double span = fmax(log(hi), -log(lo)) * 1.08;
		scale_init(&s, exp(-span), exp(span), x0 + 6, x1 - 6, 1);
	}
	if (!top_axis)
		plot_top = TOP;
	h = plot_top + f->nr * ROW_H + AXIS_H + 8;

	svg_begin(sb, W, h, "forest", f->title);
	svg_text(sb, 8, 18, SVG_START, "title", f->title, 100);
	legend(sb, 42, f->threshold);
	for (size_t i = 0; i < f->nr; i += 2)
		svg_rect(sb, 0, plot_top + i * ROW_H, W, ROW_H, "zebra");
	svg_rect(sb, scale_map(&s, 1 / (1 + f->threshold)), plot_top,
		 scale_map(&s, 1 + f->threshold) - scale_map(&s, 1 / (1 + f->threshold)),
		 f->nr * ROW_H, "band");
	if (top_axis)
		plot_axis_x(sb, &s, plot_top - 22, plot_top - 22, plot_percent_label);
	plot_axis_x(sb, &s, plot_top + f->nr * ROW_H, plot_top, plot_percent_label);
	svg_line(sb, scale_map(&s, 1), plot_top, scale_map(&s, 1), plot_top + f->nr * ROW_H,
		 "one");
	svg_text(sb, (x0 + x1) / 2, h - 4, SVG_MIDDLE, "muted",
		 "B/A - 1 (right: B slower; left: B faster)", 0);

	for (size_t i = 0; i < f->nr; i++) {
		const struct forest_row *r = &f->rows[i];
		double y = plot_top + i * ROW_H + ROW_H / 2;
		const char *v = verdict_class(r->verdict);
		char cls[48];

		svg_group_begin(sb, "row", r->tooltip ? r->tooltip : r->label);
		svg_text(sb, x0 - 8, y + 4, SVG_END, NULL, r->label, 42);
		if (isfinite(r->ratio) && r->ratio > 0) {
			double a = isfinite(r->lo) && r->lo > 0 ? r->lo : r->ratio;
			double b = isfinite(r->hi) && r->hi > 0 ? r->hi : r->ratio;
			double xa = scale_map(&s, a), xb = scale_map(&s, b);
			double xc = scale_map(&s, r->ratio);

			snprintf(cls, sizeof(cls), "ci v-%s", v);
			svg_line(sb, xa, y, xb, y, cls);
			/* an interval cut at the edge says so */
			if (a < s.d0)
				svg_text(sb, xa - 2, y + 4, SVG_END, cls + 3, "\xe2\x97\x80", 0);
			if (b > s.d1)
				svg_text(sb, xb + 2, y + 4, SVG_START, cls + 3, "\xe2\x96\xb6", 0);
			snprintf(cls, sizeof(cls), "pt v-%s", v);
			if (!strcmp(v, "EXCLUDED"))
				svg_diamond(sb, xc, y, 5, cls);
			else
				svg_circle(sb, xc, y, 4.5, cls);
		} else {
			svg_text(sb, (x0 + x1) / 2, y + 4, SVG_MIDDLE, "muted", "no ratio", 0);
		}
		if (r->flags && *r->flags)
			svg_text(sb, x1 + 8, y + 4, SVG_START, "flag", r->flags, 16);
		svg_group_end(sb);
	}
	svg_end(sb);
}
