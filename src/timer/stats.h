/*
 * Summary statistics over timing samples, shared by the graph timer and
 * zlbt_summarize() so that graph and direct measurements are described
 * the same way.
 *
 * Quantiles follow numpy's default ("linear"): for sorted x[0..n-1] and q
 * in [0, 1], h = (n - 1) q and the value is x[floor h] + (h - floor h) *
 * (x[floor h + 1] - x[floor h]). The median is the 0.5 quantile.
 */
#ifndef ZLB_TIMER_STATS_H
#define ZLB_TIMER_STATS_H

#include <stddef.h>

struct stats_summary {
	size_t n;
	double median;
	double mean;
	double min;
	double max;
	double q1;          /* 0.25 quantile */
	double q3;          /* 0.75 quantile */
	double stdrel;      /* sample standard deviation (n - 1) / mean; 0 if n < 2 or mean == 0 */
	double sum;
};

/* The q-quantile of n >= 1 ascending values (q is clamped to [0, 1]). */
double stats_quantile_sorted(const double *sorted, size_t n, double q);

/* Sort n values ascending, in place. */
void stats_sort(double *v, size_t n);

/*
 * Describe n values (not modified; a sorted copy is made). Returns 0, or
 * -1 when n is 0, a value is not finite, or the copy cannot be allocated.
 */
int stats_summarize(const double *v, size_t n, struct stats_summary *out);

#endif
