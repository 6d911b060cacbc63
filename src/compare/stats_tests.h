/*
 * Descriptive statistics and the hypothesis tests of zlb compare.
 *
 *  - quantiles: numpy's default (linear interpolation between order
 *    statistics, Hyndman & Fan type 7), so numbers match what a user gets
 *    from numpy.quantile / numpy.median on results.jsonl;
 *  - Mann-Whitney U, two-sided, normal approximation with the tie
 *    correction of the variance and a continuity correction of 0.5:
 *    exactly scipy.stats.mannwhitneyu(x, y, alternative="two-sided",
 *    method="asymptotic"). The normal approximation (not the exact
 *    distribution) is used at every size: timings are quantised, so ties
 *    are the rule, and the exact null distribution is only valid without
 *    them;
 *  - Welch's t (unequal variances, Welch-Satterthwaite degrees of freedom),
 *    as scipy.stats.ttest_ind(x, y, equal_var=False), plus a general form
 *    that takes the variance of each side's estimate and its degrees of
 *    freedom (INFINITY for a variance that is assumed, not estimated);
 *  - Benjamini-Hochberg adjusted p-values (q-values): the step-up
 *    procedure, q_(i) = min_{j >= i} p_(j) m / j, capped at 1. Rejecting
 *    every hypothesis with q <= alpha is the BH procedure at level alpha,
 *    which controls the false discovery rate at alpha for independent (and
 *    positively dependent) tests.
 */
#ifndef ZLB_STATS_TESTS_H
#define ZLB_STATS_TESTS_H

#include <stddef.h>

/* Sort ascending in place (no NaN allowed). */
void stats_sort(double *x, size_t n);

/* Quantile q in [0, 1] of sorted x (type 7); NaN when n == 0. */
double stats_quantile_sorted(const double *x, size_t n, double q);
/*
 * The same quantile of unsorted x, by selection (O(n), where a sort is
 * O(n log n)): the value stats_quantile_sorted would give on x sorted.
 * Reorders x. A bootstrap needs two quantiles of each of thousands of
 * draws sets, and sorting them was a fifth of zlb compare's time.
 */
double stats_quantile_select(double *x, size_t n, double q);
/* Median of sorted x (mean of the two middle values for even n). */
double stats_median_sorted(const double *x, size_t n);
/* Median of unsorted x (sorts a copy). */
double stats_median(const double *x, size_t n);

double stats_mean(const double *x, size_t n);
/* Sample variance, n - 1 in the denominator; 0 when n < 2. */
double stats_var(const double *x, size_t n);

struct stats_mwu {
	double u1;	/* U of the first sample: pairs (x, y) with x > y, ties 1/2 */
	double z;	/* (max(U1, U2) - n1 n2 / 2 - 0.5) / sigma */
	double p;	/* two-sided p-value; 1 when sigma is 0 (every value tied) */
};

/* x, y need not be sorted. Returns -1 when either sample is empty. */
int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
		       struct stats_mwu *out);

struct stats_welch {
	double t;	/* (estimate_2 - estimate_1) / se in stats_welch_parts; see below */
	double df;	/* Welch-Satterthwaite; INFINITY when every variance is assumed */
	double se;
	double p;	/* two-sided */
};

/*
 * The general form: diff is the difference of two estimates whose
 * variances are v1 and v2, estimated with df1 and df2 degrees of freedom
 * (INFINITY: known/assumed). t = diff / sqrt(v1 + v2),
 * df = (v1 + v2)^2 / (v1^2 / df1 + v2^2 / df2). Returns -1 when
 * v1 + v2 is not positive (nothing to test).
 */
int stats_welch_parts(double diff, double v1, double df1, double v2, double df2,
		      struct stats_welch *out);

/* As scipy.stats.ttest_ind(x, y, equal_var=False): t = (mean x - mean y) / se. */
int stats_welch_samples(const double *x, size_t nx, const double *y, size_t ny,
			struct stats_welch *out);

/* BH-adjusted p-values of p[0..m-1] into q[0..m-1] (may alias p). */
void stats_bh_adjust(const double *p, size_t m, double *q);

#endif
