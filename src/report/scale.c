/*
 * Axes (scale.h).
 */
#include "report/scale.h"

#include <math.h>
#include <stdio.h>

void scale_init(struct scale *s, double lo, double hi, double r0, double r1, int log)
{
	s->log = log;
	s->r0 = r0;
	s->r1 = r1;
	if (!isfinite(lo) || !isfinite(hi) || (log && (lo <= 0 || hi <= 0))) {
		lo = log ? 0.1 : 0;
		hi = log ? 10 : 1;
	}
	if (lo > hi) {
		double t = lo;
		lo = hi;
		hi = t;
	}
	if (log) {
		if (hi / lo < 1.1) {
			double mid = sqrt(lo * hi);
			lo = mid / 1.05;
			hi = mid * 1.05;
		}
	} else if (hi - lo < 1e-12 * (fabs(lo) + fabs(hi)) || hi == lo) {
		double pad = lo ? fabs(lo) * 0.1 : 1;
		lo -= pad;
		hi += pad;
	}
	s->d0 = lo;
	s->d1 = hi;
}

double scale_map(const struct scale *s, double v)
{
	double t;

	if (s->log)
		t = v > 0 ? (log10(v) - log10(s->d0)) / (log10(s->d1) - log10(s->d0)) : 0;
	else
		t = (v - s->d0) / (s->d1 - s->d0);
	if (!(t >= 0))		/* NaN too */
		t = 0;
	if (t > 1)
		t = 1;
	return s->r0 + t * (s->r1 - s->r0);
}

/* The 1-2-5 step that gives about want intervals over span. */
static double nice_step(double span, int want)
{
	double raw = span / want, p = pow(10, floor(log10(raw))), f = raw / p;

	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

static size_t linear_ticks(double lo, double hi, double *ticks, size_t max)
{
	double step = nice_step(hi - lo, 5), first = ceil(lo / step - 1e-9) * step;
	size_t n = 0;

	for (double v = first; v <= hi + step * 1e-9 && n < max; v += step)
		ticks[n++] = fabs(v) < step * 1e-9 ? 0 : v;
	return n;
}

/* Ticks m * 10^e for the mantissas m inside [d0, d1]. */
static size_t log_ticks(const struct scale *s, const double *mant, size_t nm, double *ticks,
			size_t max)
{
	size_t n = 0;

	for (int e = (int)floor(log10(s->d0)) - 1; e <= (int)ceil(log10(s->d1)) && n < max; e++)
		for (size_t m = 0; m < nm && n < max; m++) {
			double v = mant[m] * pow(10, e);
			if (v >= s->d0 * (1 - 1e-9) && v <= s->d1 * (1 + 1e-9))
				ticks[n++] = v;
		}
	return n;
}

size_t scale_ticks(const struct scale *s, double *ticks, size_t max)
{
	static const double m125[] = { 1, 2, 5 }, fine[] = { 1, 1.5, 2, 3, 5, 7 };
	double decades;
	size_t n;

	if (!max)
		return 0;
	if (!s->log)
		return linear_ticks(s->d0, s->d1, ticks, max);
	decades = log10(s->d1) - log10(s->d0);
	if (decades > 2.5) {
		/* powers of ten, every k-th so that at most 8 show */
		int e0 = (int)ceil(log10(s->d0) - 1e-9), e1 = (int)floor(log10(s->d1) + 1e-9);
		int k = (e1 - e0) / 8 + 1;

		n = 0;
		for (int e = e0; e <= e1 && n < max; e += k)
			ticks[n++] = pow(10, e);
		return n;
	}
	n = log_ticks(s, m125, 3, ticks, max);
	if (n < 4)
		n = log_ticks(s, fine, 6, ticks, max);
	if (n >= 2)
		return n;
	/* a range narrower than one step: linear ticks in it */
	return linear_ticks(s->d0, s->d1, ticks, max);
}

void scale_label(struct strbuf *sb, double v)
{
	char buf[32];
	double a = fabs(v);

	if (a != 0 && (a >= 1e6 || a < 1e-3))
		snprintf(buf, sizeof(buf), "%.3g", v);
	else
		snprintf(buf, sizeof(buf), "%.6g", v);
	strbuf_addstr(sb, buf);
}
