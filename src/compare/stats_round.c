/*
 * One round's exact bootstrap law of its centre (stats_compare.h): the law
 * of a resample's median from order statistics, its atoms, and the draws
 * the hierarchical bootstrap of stats_compare.c takes from it.
 */
#include "compare/stats_compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/stats_dist.h"
#include "compare/stats_tests.h"
#include "lib/strbuf.h"  /* xmalloc */

/* ---- one round ---------------------------------------------------------- */

/*
 * The law of the k-th order statistic of a resample of n:
 * F(j) = P(X*_(k) <= x_(j)) = P(Bin(n, j/n) >= k).
 */
struct os_law {
	size_t n, k;
	double lc_k, lc_km1;	/* ln C(n, k), ln C(n, k - 1) */
};

static double lchoose(double n, double k)
{
	return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1);
}

static void os_law_init(struct os_law *L, size_t n, size_t k)
{
	L->n = n;
	L->k = k;
	if (n <= STATS_EXACT_N_MAX) {
		L->lc_k = lchoose((double)n, (double)k);
		L->lc_km1 = lchoose((double)n, (double)k - 1);
	}
}

/*
 * P(Bin(n, p) >= k), exactly, by summing the binomial terms of the smaller
 * side outward from k with the ratio recurrence (a few sqrt(n) terms; no
 * special function per term). Checked against scipy via stats_binom_sf_ge.
 */
static double binom_tail(const struct os_law *L, double p)
{
	double n = (double)L->n, k = (double)L->k, t, sum, r;

	if (p <= 0)
		return 0;
	if (p >= 1)
		return 1;
	if (k > n * p) {
		/* upper tail: sum_{i >= k} */
		t = exp(L->lc_k + k * log(p) + (n - k) * log1p(-p));
		sum = t;
		r = p / (1 - p);
		for (double i = k; i < n && t > 1e-17 * sum; i++) {
			t *= (n - i) / (i + 1) * r;
			sum += t;
		}
		return sum;
	}
	/* 1 - lower tail: sum_{i <= k-1} */
	t = exp(L->lc_km1 + (k - 1) * log(p) + (n - k + 1) * log1p(-p));
	sum = t;
	r = (1 - p) / p;
	for (double i = k - 1; i > 0 && t > 1e-17 * sum; i--) {
		t *= i / (n - i + 1) * r;
		sum += t;
	}
	return 1 - sum;
}

static double os_cdf(const struct os_law *L, size_t j)
{
	double p, sd;

	if (j == 0)
		return 0;
	if (j >= L->n)
		return 1;
	p = (double)j / (double)L->n;
	if (L->n <= STATS_EXACT_N_MAX)
		return binom_tail(L, p);
	sd = sqrt((double)L->n * p * (1 - p));
	return stats_norm_cdf(((double)j - (double)L->k + 0.5) / sd);
}

double stats_order_stat_cdf(size_t k, size_t n, size_t j)
{
	struct os_law L;

	os_law_init(&L, n, k);
	return os_cdf(&L, j);
}

static void push_atom(struct stats_round *r, double v, double cum)
{
	/* merge equal neighbours (tied samples) into one atom */
	if (r->natoms && r->val[r->natoms - 1] == v) {
		r->cum[r->natoms - 1] = cum;
		return;
	}
	r->val[r->natoms] = v;
	r->cum[r->natoms] = cum;
	r->natoms++;
}

static void finish_law(struct stats_round *r)
{
	double prev = 0;
	size_t a = 0;

	if (r->natoms)
		r->cum[r->natoms - 1] = 1.0;
	r->bmean = 0;
	for (size_t i = 0; i < r->natoms; i++) {
		r->bmean += r->val[i] * (r->cum[i] - prev);
		prev = r->cum[i];
	}
	r->bvar = 0;
	prev = 0;
	for (size_t i = 0; i < r->natoms; i++) {
		double d = r->val[i] - r->bmean;
		r->bvar += d * d * (r->cum[i] - prev);
		prev = r->cum[i];
	}
	/*
	 * A guide table for O(1) draws (Chen 1974): guide[g] is the first atom
	 * whose cumulative probability exceeds g / natoms; a draw u starts its
	 * search at guide[floor(u natoms)].
	 */
	r->guide = xmalloc((r->natoms ? r->natoms : 1) * sizeof(*r->guide));
	for (size_t g = 0; g < r->natoms; g++) {
		double level = (double)g / (double)r->natoms;

		while (a + 1 < r->natoms && r->cum[a] <= level)
			a++;
		r->guide[g] = a;
	}
}

/* The window of order statistics [*jlo, *jhi] (1-based) that holds the law. */
static void law_window(size_t n, size_t k1, size_t k2, size_t *jlo, size_t *jhi)
{
	size_t h;

	if (n <= 64) {
		*jlo = 1;
		*jhi = n;
		return;
	}
	/*
	 * The index of a resampled median has sd ~ sqrt(n)/2: keep 5 sd each
	 * side; the 6e-7 of mass beyond goes to the window's end atoms.
	 */
	h = (size_t)ceil(2.5 * sqrt((double)n)) + 2;
	*jlo = k1 > h ? k1 - h : 1;
	*jhi = k2 + h < n ? k2 + h : n;
}

/*
 * ln((a + b) / 2) from la = ln a, lb = ln b: the log of the geometric mean
 * plus ln cosh(d/2), d = lb - la, by its series when d is small (neighbouring
 * order statistics: |d| < 0.05 leaves an error below 1e-13) — one log per
 * pair saved, thousands per round.
 */
static double log_mid(double la, double lb)
{
	double d = lb - la, d2 = d * d;

	if (fabs(d) < 0.05)
		return 0.5 * (la + lb) + d2 / 8 * (1 - d2 / 24 * (1 - d2 / 15));
	return log(0.5 * (exp(la) + exp(lb)));
}

/* ln(r^m - (r-1)^m) for r >= 1. */
static double log_pow_step(double r, double m)
{
	if (r <= 1)
		return 0;
	return m * log(r) + log(-expm1(m * log1p(-1.0 / r)));
}

/*
 * Even n = 2m, exact: the resample's order statistics m and m+1 sit at
 * positions I <= J of the sorted sample with, for i < j,
 *   P(I = i, J = j) = C(n, m) n^-n (i^m - (i-1)^m) ((n-j+1)^m - (n-j)^m)
 * (exactly m draws at positions <= i, at least one of them at i; none
 * strictly between; at least one at j), and
 *   P(I = J = i) = P(I = i) - C(n, m) n^-n (i^m - (i-1)^m) (n-i)^m,
 * the sum over j > i telescoping. A gap of g positions with no draw has
 * probability ~e^-g: gaps beyond EVEN_GAP_MAX are left out.
 */
#define EVEN_GAP_MAX 16
static void centre_law_even_exact(struct stats_round *r)
{
	size_t n = r->n, m = n / 2, jlo, jhi, w, cap;
	double lc, md = (double)m, cum = 0, *G, *H, *lx;
	struct os_law L;

	law_window(n, m, m + 1, &jlo, &jhi);
	w = jhi - jlo + 1;
	os_law_init(&L, n, m);
	cap = w * (EVEN_GAP_MAX + 1) + 1;
	r->val = xmalloc(cap * sizeof(double));
	r->cum = xmalloc(cap * sizeof(double));
	r->natoms = 0;
	/*
	 * C(n, m) n^-n underflows for n in the hundreds while the powers
	 * overflow: split it evenly between the two factors, each then O(1).
	 */
	lc = 0.5 * (lchoose((double)n, md) - (double)n * log((double)n));
	G = xmalloc(w * sizeof(double));
	H = xmalloc(w * sizeof(double));
	lx = xmalloc(w * sizeof(double));
	for (size_t i = jlo; i <= jhi; i++) {
		G[i - jlo] = exp(lc + log_pow_step((double)i, md));
		H[i - jlo] = exp(lc + log_pow_step((double)(n - i + 1), md));
		lx[i - jlo] = log(r->x[i - 1]);
	}
	/* F(i - 1) is the previous step's F(i): each binomial tail computed once */
	double cdf_prev = os_cdf(&L, jlo - 1);

	for (size_t i = jlo; i <= jhi; i++) {
		double g = G[i - jlo], same, cdf = os_cdf(&L, i);

		same = cdf - cdf_prev;
		cdf_prev = cdf;
		if (i < n)
			same -= g * exp(lc + md * log((double)(n - i)));
		if (same > 0) {
			cum += same;
			r->val[r->natoms] = lx[i - jlo];
			r->cum[r->natoms++] = cum;
		}
		for (size_t j = i + 1; j <= jhi && j <= i + EVEN_GAP_MAX; j++) {
			double p = g * H[j - jlo];

			if (!(p > 0))
				continue;
			cum += p;
			r->val[r->natoms] = log_mid(lx[i - jlo], lx[j - jlo]);
			r->cum[r->natoms++] = cum;
		}
	}
	free(G);
	free(H);
	free(lx);
	/* the window holds all but ~1e-6 of the mass: renormalise */
	for (size_t i = 0; i < r->natoms; i++)
		r->cum[i] /= cum;
	finish_law(r);
}

/*
 * Fill the atoms of ln(median of a resample). x is sorted, 0-based.
 * Odd n: the median is order statistic k = (n+1)/2, whose law is
 * F(j) = P(Bin(n, j/n) >= k). Even n above STATS_EXACT_N_MAX: the two
 * middle order statistics, each with its exact marginal law, coupled
 * through one uniform (comonotone); this overstates their dependence a
 * little (the variance by +1.6% at n = 64, -0.5% at n = 200 in
 * gen_fixtures-style checks), negligible at the sizes where it is used.
 */
static void centre_law(struct stats_round *r)
{
	size_t n = r->n, k1, k2, jlo, jhi, cap;
	double *f1, *f2;
	struct os_law L1, L2;

	if (n % 2 == 0 && n <= STATS_EXACT_N_MAX) {
		centre_law_even_exact(r);
		return;
	}
	k1 = (n + 1) / 2;		/* odd n: the median; even n: n/2 */
	k2 = n % 2 ? k1 : k1 + 1;	/* even n: n/2 + 1 */
	law_window(n, k1, k2, &jlo, &jhi);
	cap = 2 * (jhi - jlo + 1) + 2;
	r->val = xmalloc(cap * sizeof(double));
	r->cum = xmalloc(cap * sizeof(double));
	r->natoms = 0;
	os_law_init(&L1, n, k1);
	os_law_init(&L2, n, k2);
	f1 = xmalloc((jhi - jlo + 1) * sizeof(double));
	f2 = xmalloc((jhi - jlo + 1) * sizeof(double));
	for (size_t j = jlo; j <= jhi; j++) {
		/* the window's ends take the (negligible) mass outside it */
		f1[j - jlo] = j == jhi ? 1.0 : os_cdf(&L1, j);
		f2[j - jlo] = j == jhi ? 1.0 : (k2 == k1 ? f1[j - jlo] : os_cdf(&L2, j));
	}
	/*
	 * Walk u over (0, 1]: order statistic k1 sits at the smallest j with
	 * F1(j) >= u, k2 at the smallest j with F2(j) >= u.
	 */
	{
		size_t p1 = 0, p2 = 0, m = jhi - jlo + 1;
		double u = 0;

		while (p1 < m && p2 < m) {
			double next = f1[p1] < f2[p2] ? f1[p1] : f2[p2];
			double v;

			if (next > u) {
				if (k1 == k2)
					v = log(r->x[jlo + p1 - 1]);
				else
					v = log(0.5 * (r->x[jlo + p1 - 1] + r->x[jlo + p2 - 1]));
				push_atom(r, v, next);
				u = next;
			}
			if (f1[p1] <= next)
				p1++;
			if (f2[p2] <= next)
				p2++;
		}
	}
	free(f1);
	free(f2);
	finish_law(r);
}

int stats_round_init(struct stats_round *r, const double *samples, size_t n)
{
	memset(r, 0, sizeof(*r));
	r->x = xmalloc((n ? n : 1) * sizeof(double));
	for (size_t i = 0; i < n; i++)
		if (isfinite(samples[i]) && samples[i] > 0)
			r->x[r->n++] = samples[i];
	if (!r->n) {
		free(r->x);
		r->x = NULL;
		return -1;
	}
	stats_sort(r->x, r->n);
	r->centre = stats_median_sorted(r->x, r->n);
	r->y = log(r->centre);
	centre_law(r);
	return 0;
}

/*
 * p strata: each placement's samples (i % p) a round of its own; the
 * centre is the mean of their medians.
 */
int stats_round_init_strata(struct stats_round *r, const double *samples, size_t n,
			    size_t p)
{
	size_t per = p > 1 ? n / p : 0;
	double *buf, sum = 0, var = 0;

	if (per < 1)
		return stats_round_init(r, samples, n);
	memset(r, 0, sizeof(*r));
	r->strata = xcalloc(p, sizeof(*r->strata));
	buf = xmalloc(per * sizeof(*buf));
	for (size_t k = 0; k < p; k++) {
		for (size_t i = 0; i < per; i++)
			buf[i] = samples[i * p + k];
		if (stats_round_init(&r->strata[k], buf, per)) {
			free(buf);
			stats_round_release(r);
			return -1;
		}
		r->nstrata++;
		r->n += r->strata[k].n;
		sum += r->strata[k].centre;
	}
	free(buf);
	r->x = xmalloc(r->n * sizeof(double));
	r->n = 0;
	for (size_t k = 0; k < p; k++) {
		const struct stats_round *s = &r->strata[k];

		memcpy(r->x + r->n, s->x, s->n * sizeof(double));
		r->n += s->n;
		var += s->centre * s->centre * s->bvar;
	}
	stats_sort(r->x, r->n);
	r->centre = sum / (double)p;
	r->y = log(r->centre);
	/* The delta method: ln of a mean of nearly equal, independent medians. */
	r->bvar = var / (sum * sum);
	r->bmean = 0;
	for (size_t k = 0; k < p; k++)
		r->bmean += exp(r->strata[k].bmean);
	r->bmean = log(r->bmean / (double)p);
	return 0;
}

void stats_round_release(struct stats_round *r)
{
	for (size_t k = 0; k < r->nstrata; k++)
		stats_round_release(&r->strata[k]);
	free(r->strata);
	free(r->x);
	free(r->val);
	free(r->cum);
	free(r->guide);
	memset(r, 0, sizeof(*r));
}

double stats_round_draw(const struct stats_round *r, struct stats_rng *rng)
{
	double u, sum = 0;
	size_t i;

	if (r->nstrata) {
		for (size_t k = 0; k < r->nstrata; k++)
			sum += exp(stats_round_draw(&r->strata[k], rng));
		return log(sum / (double)r->nstrata);
	}
	u = stats_rng_uniform(rng);
	i = r->guide[(size_t)(u * (double)r->natoms)];

	/* the first atom whose cumulative probability exceeds u */
	while (r->cum[i] <= u && i + 1 < r->natoms)
		i++;
	return r->val[i];
}
