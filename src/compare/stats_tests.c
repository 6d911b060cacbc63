#include "compare/stats_tests.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/stats_dist.h"
#include "lib/strbuf.h"

/* ---- sorting and quantiles --------------------------------------------- */

static void insertion_sort(double *x, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		double v = x[i];
		size_t j = i;

		while (j > 0 && x[j - 1] > v) {
			x[j] = x[j - 1];
			j--;
		}
		x[j] = v;
	}
}

static inline void swap_d(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

/*
 * Hoare partition of x[0, n) (n > 24) around a median-of-three pivot:
 * returns j with x[0, j] <= pivot <= x[j + 1, n).
 */
static size_t partition(double *x, size_t n)
{
	size_t mid = n / 2, i = 0, j = n - 1;
	double pivot;

	if (x[mid] < x[0])
		swap_d(&x[mid], &x[0]);
	if (x[n - 1] < x[0])
		swap_d(&x[n - 1], &x[0]);
	if (x[n - 1] < x[mid])
		swap_d(&x[n - 1], &x[mid]);
	pivot = x[mid];
	for (;;) {
		while (x[i] < pivot)
			i++;
		while (x[j] > pivot)
			j--;
		if (i >= j)
			return j;
		swap_d(&x[i], &x[j]);
		i++;
		j--;
	}
}

/*
 * Quicksort with a median-of-three pivot and insertion sort below 24
 * elements; recursion only on the smaller part, so the depth is O(log n).
 * Faster than qsort() for the thousands of sorts a simulation does.
 */
void stats_sort(double *x, size_t n)
{
	while (n > 24) {
		size_t j = partition(x, n);

		if (j + 1 < n - (j + 1)) {
			stats_sort(x, j + 1);
			x += j + 1;
			n -= j + 1;
		} else {
			stats_sort(x + j + 1, n - (j + 1));
			n = j + 1;
		}
	}
	insertion_sort(x, n);
}

double stats_quantile_sorted(const double *x, size_t n, double q)
{
	double h, frac;
	size_t lo;

	if (!n)
		return NAN;
	if (q <= 0)
		return x[0];
	if (q >= 1)
		return x[n - 1];
	h = q * (double)(n - 1);
	lo = (size_t)floor(h);
	frac = h - (double)lo;
	if (lo + 1 >= n)
		return x[n - 1];
	return x[lo] + frac * (x[lo + 1] - x[lo]);
}

/* Put the k-th smallest of x at x[k], smaller ones before it, larger after. */
static void select_kth(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (hi > lo + 24) {
		size_t j = lo + partition(x + lo, hi - lo + 1);

		if (k <= j)
			hi = j;
		else
			lo = j + 1;
	}
	insertion_sort(x + lo, hi - lo + 1);
}

double stats_quantile_select(double *x, size_t n, double q)
{
	double h, frac, next;
	size_t lo;

	if (!n)
		return NAN;
	h = q <= 0 ? 0 : q >= 1 ? (double)(n - 1) : q * (double)(n - 1);
	lo = (size_t)floor(h);
	if (lo >= n)
		lo = n - 1;
	frac = h - (double)lo;
	select_kth(x, n, lo);
	if (lo + 1 >= n || frac == 0)
		return x[lo];
	next = x[lo + 1];
	for (size_t i = lo + 2; i < n; i++)
		if (x[i] < next)
			next = x[i];
	return x[lo] + frac * (next - x[lo]);
}

double stats_median_sorted(const double *x, size_t n)
{
	if (!n)
		return NAN;
	if (n % 2)
		return x[n / 2];
	return 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

double stats_median(const double *x, size_t n)
{
	double *c, m;

	if (!n)
		return NAN;
	c = xmalloc(n * sizeof(*c));
	memcpy(c, x, n * sizeof(*c));
	stats_sort(c, n);
	m = stats_median_sorted(c, n);
	free(c);
	return m;
}

double stats_mean(const double *x, size_t n)
{
	double s = 0;

	if (!n)
		return NAN;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

double stats_var(const double *x, size_t n)
{
	double m, s = 0;

	if (n < 2)
		return 0;
	m = stats_mean(x, n);
	for (size_t i = 0; i < n; i++)
		s += (x[i] - m) * (x[i] - m);
	return s / (double)(n - 1);
}

/* ---- Mann-Whitney U ----------------------------------------------------- */

int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
		       struct stats_mwu *out)
{
	double *a, *b, r1 = 0, ties = 0, n1 = (double)nx, n2 = (double)ny, N, mu, sigma, u2, u;
	size_t i = 0, j = 0, rank = 0;

	if (!nx || !ny)
		return -1;
	a = xmalloc(nx * sizeof(*a));
	b = xmalloc(ny * sizeof(*b));
	memcpy(a, x, nx * sizeof(*a));
	memcpy(b, y, ny * sizeof(*b));
	stats_sort(a, nx);
	stats_sort(b, ny);
	/*
	 * Merge the two sorted samples; each run of equal values gets the
	 * mid-rank of the positions it occupies. r1 sums the ranks of x.
	 */
	while (i < nx || j < ny) {
		double v = i < nx && (j >= ny || a[i] <= b[j]) ? a[i] : b[j];
		size_t cx = 0, cy = 0, t;
		double mid;

		while (i < nx && a[i] == v) {
			cx++;
			i++;
		}
		while (j < ny && b[j] == v) {
			cy++;
			j++;
		}
		t = cx + cy;
		mid = (double)rank + ((double)t + 1.0) / 2.0;
		r1 += (double)cx * mid;
		ties += (double)t * (double)t * (double)t - (double)t;
		rank += t;
	}
	free(a);
	free(b);
	N = n1 + n2;
	out->u1 = r1 - n1 * (n1 + 1) / 2;
	u2 = n1 * n2 - out->u1;
	u = out->u1 > u2 ? out->u1 : u2;
	mu = n1 * n2 / 2;
	sigma = N > 1 ? sqrt(n1 * n2 / 12.0 * ((N + 1) - ties / (N * (N - 1)))) : 0;
	if (!(sigma > 0)) {
		out->z = 0;
		out->p = 1;
		return 0;
	}
	out->z = (u - mu - 0.5) / sigma;
	out->p = 2.0 * stats_norm_sf(out->z);
	if (out->p > 1)
		out->p = 1;
	return 0;
}

/* ---- Welch ------------------------------------------------------------- */

int stats_welch_parts(double diff, double v1, double df1, double v2, double df2,
		      struct stats_welch *out)
{
	double v = v1 + v2, den = 0;

	if (!(v > 0) || isnan(diff))
		return -1;
	if (v1 > 0 && !isinf(df1))
		den += v1 * v1 / df1;
	if (v2 > 0 && !isinf(df2))
		den += v2 * v2 / df2;
	out->se = sqrt(v);
	out->t = diff / out->se;
	out->df = den > 0 ? v * v / den : INFINITY;
	out->p = 2.0 * stats_t_sf(fabs(out->t), out->df);
	if (out->p > 1)
		out->p = 1;
	return 0;
}

int stats_welch_samples(const double *x, size_t nx, const double *y, size_t ny,
			struct stats_welch *out)
{
	if (nx < 2 || ny < 2)
		return -1;
	return stats_welch_parts(stats_mean(x, nx) - stats_mean(y, ny),
				 stats_var(x, nx) / (double)nx, (double)(nx - 1),
				 stats_var(y, ny) / (double)ny, (double)(ny - 1), out);
}

/* ---- Benjamini-Hochberg ------------------------------------------------ */

struct pidx {
	double p;
	size_t i;
};

static int cmp_pidx(const void *a, const void *b)
{
	const struct pidx *x = a, *y = b;

	if (x->p < y->p)
		return -1;
	if (x->p > y->p)
		return 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

void stats_bh_adjust(const double *p, size_t m, double *q)
{
	struct pidx *v;
	double running = 1.0;

	if (!m)
		return;
	v = xmalloc(m * sizeof(*v));
	for (size_t i = 0; i < m; i++) {
		v[i].p = isnan(p[i]) ? 1.0 : p[i];
		v[i].i = i;
	}
	qsort(v, m, sizeof(*v), cmp_pidx);
	for (size_t k = m; k-- > 0;) {
		double adj = v[k].p * (double)m / (double)(k + 1);

		if (adj < running)
			running = adj;
		v[k].p = running;
	}
	for (size_t k = 0; k < m; k++)
		q[v[k].i] = v[k].p;
	free(v);
}
