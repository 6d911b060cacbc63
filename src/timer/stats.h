/*
 * Summary statistics over timing samples, shared by the graph timer and
 * zlbt_summarize() so that graph and direct measurements are described
 * the same way.
 *
 * Quantiles follow numpy's default ("linear"): for sorted x[0..n-1] and q
 * in [0, 1], h = (n - 1) q and the value is x[floor h] + (h - floor h) *
 * (x[floor h + 1] - x[floor h]). The median is the 0.5 quantile.
 *
 * The noise of the centre comes from the distribution-free confidence
 * interval of the median (order statistics; no assumption about the shape
 * of the distribution, which for GPU timings is skewed and often
 * multi-modal). With B ~ binomial(n, 1/2), the number of samples below the
 * population median, the interval [x(lo), x(hi)] (1-based ranks) misses
 * it with probability 2 P(B <= lo - 1). lo is the largest rank with
 * P(B <= lo - 1) <= 0.025, from the exact binomial distribution (not the
 * normal approximation n/2 -+ 1.96 sqrt(n)/2, which it matches within a
 * rank), and hi = n + 1 - lo, so coverage is at least 95%. For n < 6 even
 * [x(1), x(n)] covers less than 95% (P(B = 0) = 2^-n > 0.025); the
 * interval is then clamped to the sample range: lo = 1, hi = n.
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
	double noise;       /* stats_median_noise_sorted() of the values */
};

/* Below this many samples the median has no 95% interval (see above). */
#define STATS_MEDIAN_CI_MIN_N 6

/* The q-quantile of n >= 1 ascending values (q is clamped to [0, 1]). */
double stats_quantile_sorted(const double *sorted, size_t n, double q);

/*
 * The 1-based ranks of the order statistics that bound the 95% interval of
 * the median of n >= 1 samples (see above). 1 <= *lo <= *hi <= n.
 */
void stats_median_ci_ranks(size_t n, size_t *lo, size_t *hi);

/*
 * Relative noise of the median of n >= 1 ascending values: half the width
 * of its 95% interval, (x(hi) - x(lo)) / 2, divided by |median|. 0 when
 * the interval has no width (n == 1, or identical values); +inf when it
 * has width but the median is 0.
 */
double stats_median_noise_sorted(const double *sorted, size_t n);

/* Sort n values ascending, in place. */
void stats_sort(double *v, size_t n);

/*
 * Describe n values (not modified; a sorted copy is made). Returns 0, or
 * -1 when n is 0, a value is not finite, or the copy cannot be allocated.
 */
int stats_summarize(const double *v, size_t n, struct stats_summary *out);

#endif
