/*
 * Axes of a plot: a map from data to picture coordinates, linear or
 * logarithmic, and the ticks a reader can read (1, 2, 5 times a power of
 * ten; on a log axis the powers of ten, or 1-2-5 within a short range).
 */
#ifndef ZLB_REPORT_SCALE_H
#define ZLB_REPORT_SCALE_H

#include <stddef.h>

#include "lib/strbuf.h"

struct scale {
	double d0, d1;		/* data domain (d0 < d1; > 0 on a log scale) */
	double r0, r1;		/* picture range (r1 may be below r0: a y axis) */
	int log;		/* base-10 logarithmic */
};

/*
 * Set s to map [lo, hi] onto [r0, r1]. An empty or inverted domain is
 * widened around its value (a single point still gets an axis); on a log
 * scale values <= 0 are not allowed and the domain is widened to at least
 * a factor of 1.1.
 */
void scale_init(struct scale *s, double lo, double hi, double r0, double r1, int log);

/* The picture coordinate of v (clamped to the range: nothing is drawn outside). */
double scale_map(const struct scale *s, double v);

/*
 * Up to max ticks inside the domain, ascending. Returns how many. At least
 * two when the domain allows (a linear axis always has its ends' ticks
 * rounded inward).
 */
size_t scale_ticks(const struct scale *s, double *ticks, size_t max);

/* A tick's label: "0.001", "2.5", "1e+06", "100"; no trailing zeros. */
void scale_label(struct strbuf *sb, double v);

#endif
