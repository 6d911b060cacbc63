/*
 * Distribution functions the comparison needs: the normal and Student t
 * distributions (cdf, survival function, quantile) and the regularized
 * incomplete beta function behind the t and binomial tails.
 *
 * Accuracy target: relative error below 1e-10 over the ranges the
 * comparison uses (checked against scipy 1.10 in tests/data/stats/). Survival
 * functions are computed directly, not as 1 - cdf, so small p-values keep
 * their digits (the FDR step ranks p-values of 1e-8 and 1e-12 correctly).
 */
#ifndef ZLB_STATS_DIST_H
#define ZLB_STATS_DIST_H

double stats_norm_cdf(double z);
double stats_norm_sf(double z);			/* 1 - cdf */
double stats_norm_ppf(double p);		/* inverse cdf, p in (0, 1) */

/*
 * Regularized incomplete beta I_x(a, b), a, b > 0, x in [0, 1]
 * (scipy.special.betainc). NaN for arguments outside the domain.
 */
double stats_ibeta(double x, double a, double b);

/* Student t with df > 0 degrees of freedom; df = INFINITY is the normal. */
double stats_t_cdf(double t, double df);
double stats_t_sf(double t, double df);
double stats_t_ppf(double p, double df);

/*
 * P(X >= k) for X ~ Binomial(n, p): I_p(k, n - k + 1) for 1 <= k <= n
 * (scipy.stats.binom.sf(k - 1, n, p)).
 */
double stats_binom_sf_ge(double k, double n, double p);

#endif
