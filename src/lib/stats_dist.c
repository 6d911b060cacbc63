#include "lib/stats_dist.h"

#include <float.h>
#include <math.h>

#define SQRT2 1.41421356237309504880
#define LOG_SQRT_2PI 0.91893853320467274178

double stats_norm_cdf(double z)
{
	return 0.5 * erfc(-z / SQRT2);
}

double stats_norm_sf(double z)
{
	return 0.5 * erfc(z / SQRT2);
}

static double norm_pdf(double z)
{
	return exp(-0.5 * z * z - LOG_SQRT_2PI);
}

double stats_norm_ppf(double p)
{
	double q, t, x;

	if (isnan(p) || p < 0 || p > 1)
		return NAN;
	if (p == 0)
		return -INFINITY;
	if (p == 1)
		return INFINITY;
	/*
	 * Start from the rational approximation of Abramowitz & Stegun 26.2.23
	 * (error < 4.5e-4) for the smaller tail, then polish with Halley steps
	 * on the tail probability itself, which erfc gives to full precision.
	 */
	q = p < 0.5 ? p : 1 - p;
	t = sqrt(-2.0 * log(q));
	x = t - (2.515517 + t * (0.802853 + t * 0.010328)) /
		(1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308)));
	/* x > 0 solves sf(x) = q. */
	for (int i = 0; i < 4; i++) {
		double e = stats_norm_sf(x) - q;
		double d = norm_pdf(x);
		double u;

		if (d == 0)
			break;
		u = e / d;	/* Newton step for sf(x) = q (sf' = -pdf) */
		x = x + u / (1.0 - 0.5 * x * u);	/* Halley */
	}
	return p < 0.5 ? -x : x;
}

/* The remainder of Stirling's series for ln Gamma(z), z >= 50 (error < 1e-15). */
static double stirling_rest(double z)
{
	double z2 = z * z;

	return (1.0 / 12 - (1.0 / 360 - 1.0 / (1260 * z2)) / z2) / z;
}

/*
 * ln B(a, b). With a large argument, ln Gamma(big) - ln Gamma(big + small)
 * is a difference of two huge numbers (6.6e6 at df = 1e6): written out from
 * Stirling's series it is -(big - 1/2) log1p(small/big) - small ln(big +
 * small) + small + rest terms, which keeps every digit.
 */
static double lbeta(double a, double b)
{
	double big = a > b ? a : b, small = a > b ? b : a;

	if (big < 50)
		return lgamma(a) + lgamma(b) - lgamma(a + b);
	return lgamma(small) - (big - 0.5) * log1p(small / big) - small * log(big + small) +
	       small + stirling_rest(big) - stirling_rest(big + small);
}

/*
 * The continued fraction for I_x(a, b) (the even/odd terms d_2m, d_2m+1 of
 * the classical expansion), evaluated with the modified Lentz method.
 * Converges quickly for x < (a + 1) / (a + b + 2).
 */
static double ibeta_cf(double x, double a, double b)
{
	const double tiny = 1e-300, eps = 1e-15;
	double c = 1.0, d, f;

	d = 1.0 - (a + b) * x / (a + 1.0);
	if (fabs(d) < tiny)
		d = tiny;
	d = 1.0 / d;
	f = d;
	for (int m = 1; m <= 10000; m++) {
		double m2 = 2.0 * m, num, delta;

		/* even step */
		num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
		d = 1.0 + num * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1.0 + num / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1.0 / d;
		f *= d * c;
		/* odd step */
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
		d = 1.0 + num * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1.0 + num / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1.0 / d;
		delta = d * c;
		f *= delta;
		if (fabs(delta - 1.0) < eps)
			break;
	}
	return f;
}

/*
 * I_x(a, b) given x and xc = 1 - x, each computed accurately by the caller
 * (1 - x loses digits when x is near 1).
 */
static double ibeta2(double x, double xc, double a, double b)
{
	double front;

	if (x == 0)
		return 0;
	if (xc == 0)
		return 1;
	if (x > (a + 1.0) / (a + b + 2.0))
		return 1.0 - ibeta2(xc, x, b, a);
	front = exp(a * log(x) + b * log(xc) - lbeta(a, b)) / a;
	return front * ibeta_cf(x, a, b);
}

double stats_ibeta(double x, double a, double b)
{
	if (isnan(x) || isnan(a) || isnan(b) || a <= 0 || b <= 0 || x < 0 || x > 1)
		return NAN;
	return ibeta2(x, 1.0 - x, a, b);
}

double stats_t_sf(double t, double df)
{
	double x, tail;

	if (isnan(t) || isnan(df) || df <= 0)
		return NAN;
	if (isinf(df) || df > 1e10)
		return stats_norm_sf(t);
	if (isinf(t))
		return t > 0 ? 0.0 : 1.0;
	/*
	 * P(|T| > |t|) = I_{df/(df+t^2)}(df/2, 1/2). For small t the argument
	 * is near 1; its complement t^2/(df+t^2) is then the accurate one.
	 */
	x = df / (df + t * t);
	tail = ibeta2(x, t * t / (df + t * t), df / 2.0, 0.5);
	return t > 0 ? 0.5 * tail : 1.0 - 0.5 * tail;
}

double stats_t_cdf(double t, double df)
{
	return stats_t_sf(-t, df);
}

static double t_pdf(double t, double df)
{
	return exp(lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * log(df * M_PI) -
		   (df + 1) / 2 * log1p(t * t / df));
}

double stats_t_ppf(double p, double df)
{
	double q, x, lo, hi;

	if (isnan(p) || isnan(df) || df <= 0 || p < 0 || p > 1)
		return NAN;
	if (isinf(df) || df > 1e10)
		return stats_norm_ppf(p);
	if (p == 0)
		return -INFINITY;
	if (p == 1)
		return INFINITY;
	if (p == 0.5)
		return 0;
	/* Solve sf(x) = q for x > 0 in the smaller tail, then mirror. */
	q = p < 0.5 ? p : 1 - p;
	x = fabs(stats_norm_ppf(q));
	/* bracket: sf is decreasing in x */
	lo = 0;
	hi = x > 1 ? x : 1;
	while (stats_t_sf(hi, df) > q && hi < 1e300)
		hi *= 2;
	if (x <= lo || x >= hi)
		x = 0.5 * (lo + hi);
	for (int i = 0; i < 200; i++) {
		double e = stats_t_sf(x, df) - q;	/* decreasing in x */
		double d = t_pdf(x, df), nx;

		if (e > 0)
			lo = x;
		else
			hi = x;
		if (e == 0)
			break;
		nx = d > 0 ? x + e / d : 0.5 * (lo + hi);
		if (!(nx > lo && nx < hi))
			nx = 0.5 * (lo + hi);
		if (fabs(nx - x) <= 4 * DBL_EPSILON * fabs(nx)) {
			x = nx;
			break;
		}
		x = nx;
	}
	return p < 0.5 ? -x : x;
}

double stats_binom_sf_ge(double k, double n, double p)
{
	if (isnan(p) || p < 0 || p > 1 || n < 0)
		return NAN;
	if (k <= 0)
		return 1.0;
	if (k > n)
		return 0.0;
	return stats_ibeta(p, k, n - k + 1);
}
