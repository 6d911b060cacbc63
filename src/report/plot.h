/*
 * The plots of a report, drawn as inline SVG (svg.h) from plain arrays:
 * what to draw is the page's business (report_ab.c, report_batch.c,
 * report_run.c), how to draw it is here. Every plot has a title, labelled
 * axes and a legend where colours carry meaning; every label that comes
 * from data is escaped and cut to fit, with the whole text as a tooltip.
 * A plot with nothing to draw writes an <svg> saying so rather than empty
 * axes, so a reader never mistakes "no data" for "all zero".
 */
#ifndef ZLB_REPORT_PLOT_H
#define ZLB_REPORT_PLOT_H

#include <stddef.h>

#include "lib/strbuf.h"
#include "report/scale.h"

/* ---- forest plot: one ratio with its interval per row ---------------------- */

struct forest_row {
	const char *label;	/* left of the row: op dtype shape */
	double ratio, lo, hi;	/* B/A and its interval; ratio NAN: no point drawn */
	const char *verdict;	/* FASTER SLOWER SAME UNSURE EXCLUDED (else drawn as UNSURE) */
	const char *flags;	/* short flags right of the row ("K, memcpy"), or NULL */
	const char *tooltip;	/* the whole story of the row, or NULL */
};

struct forest {
	const char *title;
	double threshold;	/* the SAME band is [1/(1+t), 1+t] around 1 */
	const struct forest_row *rows;
	size_t nr;
};

/*
 * Rows top to bottom, x = B/A on a log axis labelled in percent change,
 * the SAME band shaded, a dashed line at no change, each row's interval
 * and centre coloured by verdict (EXCLUDED hollow), flags in red on the
 * right. Intervals beyond [1/4, 4] are cut at the edge with an arrow.
 */
void plot_forest(struct strbuf *sb, const struct forest *f);

/* ---- bars ------------------------------------------------------------------ */

struct hbar {
	const char *label;
	double value;		/* > 0 on a log chart */
	const char *cls;	/* the bar's class: "bar", "bar lo", "bar hi" */
	const char *text;	/* printed after the bar (the value, formatted), or NULL */
	const char *tooltip;
};

struct hbars {
	const char *title, *xlabel;
	const struct hbar *bars;
	size_t nr;
	int log;		/* log axis with bars from 1 (speedups); else from 0 */
};

/* Horizontal bars, one per row: counts from 0, or speedups from 1 on a log axis. */
void plot_hbars(struct strbuf *sb, const struct hbars *h);

struct histogram {
	const char *title, *xlabel, *ylabel;
	const double *edges;	/* nbins + 1 ascending bin edges (> 0: the axis is log) */
	const size_t *counts;	/* nbins */
	size_t nbins;
	double mark;		/* a vertical reference line (1: no speedup), NAN for none */
	const char *mark_label;
};

/* Vertical bars on a log x axis: below mark "bar lo", above "bar hi", across "bar". */
void plot_histogram(struct strbuf *sb, const struct histogram *h);

/* ---- lines ----------------------------------------------------------------- */

struct xy_series {
	const char *name;	/* the legend's text */
	const char *cls;	/* "s0".."s5", plus "torch" for a dashed line */
	const double *x, *y;	/* ascending x; points with a value <= 0 or NAN are skipped */
	size_t n;
};

struct xy_plot {
	const char *title, *xlabel, *ylabel;
	const struct xy_series *series;
	size_t nr;
	void (*xtick)(struct strbuf *, double);	/* the x ticks' labels; NULL: numbers */
};

/* Lines with a dot per point on log-log axes, a legend below the title. */
void plot_xy(struct strbuf *sb, const struct xy_plot *p);

/* ---- shared by the plots ------------------------------------------------------ */

/* "+1.5%", "-0.25%", "0%" for a ratio of 1.015, 0.9975, 1. */
void plot_percent_label(struct strbuf *sb, double ratio);
/* "1.5x", "0.25x". */
void plot_times_label(struct strbuf *sb, double v);
/* A count with an SI prefix: "512", "64k", "1M", "16.8M", "1G". */
void plot_count_label(struct strbuf *sb, double v);

/*
 * An x axis at picture height y (a line, ticks, labels from label(), and
 * vertical grid lines from grid_top to y when grid_top < y).
 */
void plot_axis_x(struct strbuf *sb, const struct scale *s, double y, double grid_top,
		 void (*label)(struct strbuf *, double));
/* A y axis at picture x (labels to its left). */
void plot_axis_y(struct strbuf *sb, const struct scale *s, double x, double grid_right,
		 void (*label)(struct strbuf *, double));

/* A plot that has nothing to draw: its title and why, in a small box. */
void plot_empty(struct strbuf *sb, const char *title, const char *why);

#endif
