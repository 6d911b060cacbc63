/*
 * Summary statistics (see stats.h). Plain functions on arrays so that the
 * tests can check them against hand-computed values.
 */
#include "timer/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double stats_quantile_sorted(const double *sorted, size_t n, double q)
{
	double h, frac;
	size_t lo;

	if (q <= 0 || n == 1)
		return sorted[0];
	if (q >= 1)
		return sorted[n - 1];
	h = (double)(n - 1) * q;
	lo = (size_t)h;
	frac = h - (double)lo;
	if (lo + 1 >= n)
		return sorted[n - 1];
	/*
	 * Written as a + frac * (b - a) so that equal neighbours give exactly
	 * that value back: a graph of identical replays has a median equal to
	 * every sample, not one rounded in the last bit.
	 */
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

void stats_median_ci_ranks(size_t n, size_t *lo, size_t *hi)
{
	const double tail = 0.025;
	double k0, sd, lp, cdf = 0, term;
	size_t k, start;

	/*
	 * Sum P(B = k) upwards until the next term would push P(B <= k) past
	 * 0.025. Terms far below the mean are dropped: starting 8 standard
	 * deviations (sqrt(n)/2 each) down leaves out less than 1e-15 of
	 * probability, and keeps the work O(sqrt(n)) for large n. The first
	 * term comes from lgamma, the rest from the ratio of neighbours.
	 */
	sd = sqrt((double)n) / 2;
	k0 = floor((double)n / 2 - 8 * sd);
	start = k0 > 0 ? (size_t)k0 : 0;
	lp = lgamma((double)n + 1) - lgamma((double)start + 1) -
	     lgamma((double)(n - start) + 1) - (double)n * log(2.0);
	*lo = 0;                /* P(B <= -1) = 0 qualifies: "no rank" */
	for (k = start; k <= n / 2; k++) {
		term = exp(lp);
		if (cdf + term > tail)
			break;
		cdf += term;
		*lo = k + 1;    /* P(B <= k) <= tail: rank k + 1 */
		lp += log((double)(n - k)) - log((double)(k + 1));
	}
	if (*lo < 1)
		*lo = 1;
	*hi = n + 1 - *lo;
}

double stats_median_noise_sorted(const double *sorted, size_t n)
{
	double half, median;
	size_t lo, hi;

	stats_median_ci_ranks(n, &lo, &hi);
	half = (sorted[hi - 1] - sorted[lo - 1]) / 2;
	median = stats_quantile_sorted(sorted, n, 0.5);
	if (half == 0)
		return 0;
	if (median == 0)
		return INFINITY;
	return half / fabs(median);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void stats_sort(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
}

int stats_summarize(const double *v, size_t n, struct stats_summary *out)
{
	double *s, sum = 0, mean, ss = 0;

	memset(out, 0, sizeof(*out));
	if (!n || !v)
		return -1;
	for (size_t i = 0; i < n; i++) {
		/* One NaN would make the sort, and every statistic, meaningless. */
		if (!isfinite(v[i]))
			return -1;
		sum += v[i];
	}
	s = malloc(n * sizeof(*s));
	if (!s)
		return -1;
	memcpy(s, v, n * sizeof(*s));
	stats_sort(s, n);

	mean = sum / (double)n;
	/* Two passes: the one-pass formula cancels badly for tight samples. */
	for (size_t i = 0; i < n; i++)
		ss += (s[i] - mean) * (s[i] - mean);

	out->n = n;
	out->sum = sum;
	out->mean = mean;
	out->min = s[0];
	out->max = s[n - 1];
	out->median = stats_quantile_sorted(s, n, 0.5);
	out->q1 = stats_quantile_sorted(s, n, 0.25);
	out->q3 = stats_quantile_sorted(s, n, 0.75);
	if (n > 1 && mean != 0)
		out->stdrel = sqrt(ss / (double)(n - 1)) / fabs(mean);
	out->noise = stats_median_noise_sorted(s, n);
	free(s);
	return 0;
}
