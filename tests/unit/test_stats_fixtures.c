/*
 * The statistics of zlb compare against scipy 1.10 / numpy reference values
 * (tests/data/stats/fixtures.json, written by gen_fixtures.py beside it):
 * normal and t distributions, the incomplete beta and binomial tails,
 * Mann-Whitney U (asymptotic, tie- and continuity-corrected), Welch's t,
 * numpy's quantiles, Benjamini-Hochberg, and the exact law of a resampled
 * median against brute-force enumeration of every resample. Plus the
 * generator, the sort, and the verdict rules.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/stats_compare.h"
#include "lib/stats_dist.h"
#include "lib/stats_rng.h"
#include "compare/stats_tests.h"

static json_t *fx;

static int load(void **state)
{
	json_error_t err;

	fx = json_load_file(ZLB_TEST_DATA "/stats/fixtures.json", 0, &err);
	if (!fx) {
		fprintf(stderr, "fixtures.json: %s (line %d)\n", err.text, err.line);
		return -1;
	}
	return 0;
}

static int unload(void **state)
{
	json_decref(fx);
	return 0;
}

#define assert_close(got, want, rtol) assert_close_at(got, want, rtol, __FILE__, __LINE__)
static void assert_close_at(double got, double want, double rtol, const char *file, int line)
{
	double tol = rtol * fabs(want);

	if (tol < 1e-300)
		tol = 1e-300;
	if (want == 0)
		tol = rtol;
	if (isinf(want) && got == want)
		return;
	if (!(fabs(got - want) <= tol)) {
		print_error("got %.17g, want %.17g (rtol %g)\n", got, want, rtol);
		_fail(file, line);
	}
}

static double num(json_t *a, size_t i)
{
	return json_number_value(json_array_get(a, i));
}

/* Copy a JSON array of numbers into a fresh C array. */
static double *vec(json_t *a, size_t *n)
{
	double *v;

	*n = json_array_size(a);
	v = malloc((*n ? *n : 1) * sizeof(*v));
	for (size_t i = 0; i < *n; i++)
		v[i] = num(a, i);
	return v;
}

static void test_fixture_provenance(void **state)
{
	assert_string_equal(json_string_value(json_object_get(fx, "scipy_version")), "1.10.1");
	assert_non_null(json_object_get(fx, "numpy_version"));
}

static void test_normal(void **state)
{
	size_t i;
	json_t *row;

	json_array_foreach(json_object_get(fx, "norm_ppf"), i, row)
		assert_close(stats_norm_ppf(num(row, 0)), num(row, 1), 1e-12);
	json_array_foreach(json_object_get(fx, "norm_sf"), i, row)
		assert_close(stats_norm_sf(num(row, 0)), num(row, 1), 1e-12);
	assert_true(isnan(stats_norm_ppf(1.5)));
	assert_true(stats_norm_ppf(0) == -INFINITY);
	assert_close(stats_norm_cdf(1.959963984540054), 0.975, 1e-14);
}

static void test_student_t(void **state)
{
	size_t i;
	json_t *row;

	json_array_foreach(json_object_get(fx, "t_sf"), i, row)
		assert_close(stats_t_sf(num(row, 0), num(row, 1)), num(row, 2), 1e-10);
	/*
	 * Quantiles: scipy's stdtrit is itself only good to ~1e-9 in the far
	 * tail (t.ppf(0.9999, 1.5) = 242.264099123 has t.sf = 9.99999998e-5;
	 * ours, 242.264098847, has 1e-4 to 13 digits), so the comparison with
	 * scipy is to 1e-8 and the round trip through t_sf (checked above
	 * against scipy to 1e-10) is to 1e-10. scipy's t.ppf(0.5, 3) is 7e-17.
	 */
	json_array_foreach(json_object_get(fx, "t_ppf"), i, row) {
		double p = num(row, 0), df = num(row, 1);
		double got = stats_t_ppf(p, df), want = num(row, 2);

		if (fabs(want) < 1e-14) {
			assert_true(fabs(got) < 1e-14);
			continue;
		}
		assert_close(got, want, 1e-8);
		assert_close(p < 0.5 ? stats_t_cdf(got, df) : stats_t_sf(got, df), p < 0.5 ? p : 1 - p,
			     1e-10);
	}
	/* the infinite-df limit is the normal */
	assert_close(stats_t_ppf(0.975, INFINITY), 1.959963984540054, 1e-13);
	assert_close(stats_t_cdf(-1.0, 5.0), stats_t_sf(1.0, 5.0), 1e-15);
}

static void test_incomplete_beta_and_binomial(void **state)
{
	size_t i;
	json_t *row;

	json_array_foreach(json_object_get(fx, "betainc"), i, row)
		assert_close(stats_ibeta(num(row, 0), num(row, 1), num(row, 2)), num(row, 3), 1e-11);
	json_array_foreach(json_object_get(fx, "binom_sf_ge"), i, row)
		assert_close(stats_binom_sf_ge(num(row, 0), num(row, 1), num(row, 2)), num(row, 3),
			     1e-11);
	assert_true(isnan(stats_ibeta(1.5, 1, 1)));
	/* the order-statistic law's own binomial tails (p = j / n cases) */
	json_array_foreach(json_object_get(fx, "binom_sf_ge"), i, row) {
		double k = num(row, 0), n = num(row, 1), p = num(row, 2), j = p * n;

		if (fabs(j - round(j)) > 1e-9 || k < 1)
			continue;
		assert_close(stats_order_stat_cdf((size_t)k, (size_t)n, (size_t)round(j)), num(row, 3),
			     1e-12);
	}
}

static void test_mann_whitney_vs_scipy(void **state)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(fx, "mwu"), i, c) {
		size_t nx, ny;
		double *x = vec(json_object_get(c, "x"), &nx);
		double *y = vec(json_object_get(c, "y"), &ny);
		struct stats_mwu m;

		assert_int_equal(stats_mann_whitney(x, nx, y, ny, &m), 0);
		assert_close(m.u1, json_number_value(json_object_get(c, "u1")), 1e-12);
		assert_close(m.p, json_number_value(json_object_get(c, "p")), 1e-10);
		/* symmetric: swapping the samples gives U2 and the same p */
		{
			struct stats_mwu s;
			assert_int_equal(stats_mann_whitney(y, ny, x, nx, &s), 0);
			assert_close(s.u1, (double)nx * (double)ny - m.u1, 1e-12);
			assert_close(s.p, m.p, 1e-14);
		}
		free(x);
		free(y);
	}
	{
		double a = 1;
		struct stats_mwu m;
		assert_int_equal(stats_mann_whitney(&a, 0, &a, 1, &m), -1);
	}
}

static void test_welch_vs_scipy(void **state)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(fx, "welch"), i, c) {
		size_t nx, ny;
		double *x = vec(json_object_get(c, "x"), &nx);
		double *y = vec(json_object_get(c, "y"), &ny);
		struct stats_welch w;

		assert_int_equal(stats_welch_samples(x, nx, y, ny, &w), 0);
		assert_close(w.t, json_number_value(json_object_get(c, "t")), 1e-11);
		assert_close(w.p, json_number_value(json_object_get(c, "p")), 1e-9);
		assert_close(w.df, json_number_value(json_object_get(c, "df")), 1e-11);
		/*
		 * The t interval the comparison hulls with its bootstrap. To 5e-8:
		 * scipy's t.ppf at fractional df is off by up to 1e-10 in its own
		 * t.sf (df 52.7, 5.3 here), ours by < 1e-14 (test_student_t).
		 */
		{
			json_t *ci = json_object_get(c, "ci95");
			double q = stats_t_ppf(0.975, w.df), diff = w.t * w.se;

			assert_close(diff - q * w.se, num(ci, 0), 5e-8);
			assert_close(diff + q * w.se, num(ci, 1), 5e-8);
		}
		free(x);
		free(y);
	}
	/* an assumed (infinite-df) variance makes the test a z test */
	{
		struct stats_welch w;
		assert_int_equal(stats_welch_parts(0.01, 1e-5, INFINITY, 1.5e-5, INFINITY, &w), 0);
		assert_true(isinf(w.df));
		assert_close(w.p, 2 * stats_norm_sf(0.01 / sqrt(2.5e-5)), 1e-13);
		/* one estimated part: df = v^2 / (v2^2 / df2) */
		assert_int_equal(stats_welch_parts(0.01, 1e-5, INFINITY, 1e-5, 2, &w), 0);
		assert_close(w.df, 8.0, 1e-13);
		assert_int_equal(stats_welch_parts(0.01, 0, 2, 0, 2, &w), -1);
	}
}

static void test_quantiles_vs_numpy(void **state)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(fx, "quantile"), i, c) {
		size_t n, nq, nv;
		double *x = vec(json_object_get(c, "x"), &n);
		double *q = vec(json_object_get(c, "q"), &nq);
		double *v = vec(json_object_get(c, "v"), &nv);

		assert_close(stats_median(x, n), json_number_value(json_object_get(c, "median")),
			     1e-15);
		stats_sort(x, n);
		for (size_t k = 0; k < nq; k++)
			assert_close(stats_quantile_sorted(x, n, q[k]), v[k], 1e-14);
		free(x);
		free(q);
		free(v);
	}
}

static void test_bh_vs_reference(void **state)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(fx, "bh"), i, c) {
		size_t m, mq;
		double *p = vec(json_object_get(c, "p"), &m);
		double *want = vec(json_object_get(c, "q"), &mq);
		double *q = malloc(m * sizeof(*q));

		stats_bh_adjust(p, m, q);
		for (size_t k = 0; k < m; k++)
			assert_close(q[k], want[k], 1e-14);
		free(p);
		free(want);
		free(q);
	}
	/* by hand: p sorted 0.005 0.01 0.03 0.04 0.5 -> 0.025 0.025 0.05 0.05 0.5 */
	{
		double p[] = { 0.01, 0.04, 0.03, 0.005, 0.5 }, q[5];
		stats_bh_adjust(p, 5, q);
		assert_close(q[0], 0.025, 1e-15);
		assert_close(q[1], 0.05, 1e-15);
		assert_close(q[2], 0.05, 1e-15);
		assert_close(q[3], 0.025, 1e-15);
		assert_close(q[4], 0.5, 1e-15);
		/* in place */
		stats_bh_adjust(p, 5, p);
		assert_close(p[3], 0.025, 1e-15);
	}
}

/*
 * The law of ln(median of a resample) against all n^n resamples: exact for
 * odd n and n = 2; for even n >= 4 the comonotone coupling of the two middle
 * order statistics is an approximation (documented), held to 2% of the
 * variance here.
 */
static void test_resampled_median_law(void **state)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(fx, "boot_median"), i, c) {
		size_t n;
		double *x = vec(json_object_get(c, "x"), &n);
		double mean = json_number_value(json_object_get(c, "mean"));
		double var = json_number_value(json_object_get(c, "var"));
		struct stats_round r;
		double total = 0;

		assert_int_equal(stats_round_init(&r, x, n), 0);
		for (size_t k = 0; k < r.natoms; k++) {
			assert_true(r.cum[k] >= (k ? r.cum[k - 1] : 0));
			total = r.cum[k];
		}
		assert_close(total, 1.0, 1e-15);
		if (n % 2 || n == 2) {
			assert_close(r.bmean, mean, 1e-10);
			assert_close(r.bvar, var, 1e-9);
		} else {
			assert_close(r.bmean, mean, 0.02 * sqrt(var) / fabs(mean));
			assert_close(r.bvar, var, 0.02);
		}
		stats_round_release(&r);
		free(x);
	}
}

/* Large n: the Monte Carlo variance of resampled medians matches the law's. */
static void test_resampled_median_large_n(void **state)
{
	struct stats_rng rng;
	size_t sizes[] = { 101, 400, 401, 1000, 1001 };

	stats_rng_seed(&rng, 7);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s], reps = 3000;
		double *x = malloc(n * sizeof(*x)), *res = malloc(n * sizeof(*res));
		double sum = 0, sum2 = 0, mc_var;
		struct stats_round r;

		for (size_t i = 0; i < n; i++)
			x[i] = exp(0.05 * stats_rng_normal(&rng));
		assert_int_equal(stats_round_init(&r, x, n), 0);
		for (size_t k = 0; k < reps; k++) {
			double m;
			for (size_t i = 0; i < n; i++)
				res[i] = x[stats_rng_below(&rng, n)];
			m = log(stats_median(res, n));
			sum += m;
			sum2 += m * m;
		}
		mc_var = (sum2 - sum * sum / (double)reps) / (double)(reps - 1);
		/* MC sd of a variance estimate from 3000 draws is ~2.6%: allow 12% */
		assert_close(r.bvar, mc_var, 0.12);
		/* the means agree to a tenth of the spread */
		assert_true(fabs(r.bmean - sum / (double)reps) < 0.1 * sqrt(mc_var));
		stats_round_release(&r);
		free(x);
		free(res);
	}
}

static void test_rng(void **state)
{
	struct stats_rng a, b;
	double s = 0, s2 = 0;
	int n = 200000;

	stats_rng_seed(&a, 42);
	stats_rng_seed(&b, 42);
	for (int i = 0; i < 1000; i++)
		assert_true(stats_rng_next(&a) == stats_rng_next(&b));
	stats_rng_seed(&b, 43);
	assert_true(stats_rng_next(&a) != stats_rng_next(&b));
	stats_rng_seed(&a, 1);
	for (int i = 0; i < n; i++) {
		double z = stats_rng_normal(&a);
		s += z;
		s2 += z * z;
	}
	assert_true(fabs(s / n) < 0.01);
	assert_true(fabs(s2 / n - 1) < 0.02);
	for (int i = 0; i < 1000; i++) {
		double u = stats_rng_uniform(&a);
		assert_true(u >= 0 && u < 1);
		assert_true(stats_rng_below(&a, 3) < 3);
	}
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static void test_sort(void **state)
{
	struct stats_rng rng;

	stats_rng_seed(&rng, 3);
	for (size_t n = 0; n < 3000; n = n * 2 + 1) {
		double *x = malloc((n + 1) * sizeof(*x)), *y = malloc((n + 1) * sizeof(*y));
		for (size_t i = 0; i < n; i++)
			x[i] = y[i] = (double)stats_rng_below(&rng, n / 3 + 1);	/* many ties */
		stats_sort(x, n);
		qsort(y, n, sizeof(*y), cmp_d);
		assert_memory_equal(x, y, n * sizeof(*x));
		for (size_t i = 0; i < n; i++)
			x[i] = (double)(n - i);	/* descending */
		stats_sort(x, n);
		for (size_t i = 1; i < n; i++)
			assert_true(x[i - 1] <= x[i]);
		free(x);
		free(y);
	}
}

/* Selection gives exactly the sorted quantile, ties, duplicates and edges included. */
static void test_quantile_select(void **state)
{
	const double qs[] = { 0, 0.000001, 0.025, 0.1, 0.5, 0.975, 0.999999, 1 };
	struct stats_rng rng;

	stats_rng_seed(&rng, 5);
	for (size_t n = 1; n < 5000; n = n * 3 + 1) {
		double *x = malloc(n * sizeof(*x)), *s = malloc(n * sizeof(*s));
		for (int kind = 0; kind < 3; kind++) {
			for (size_t i = 0; i < n; i++)
				s[i] = kind == 0 ? stats_rng_normal(&rng) :
				       kind == 1 ? (double)stats_rng_below(&rng, n / 4 + 1) :
				       (double)(n - i);
			stats_sort(s, n);
			for (size_t k = 0; k < sizeof(qs) / sizeof(*qs); k++) {
				/* reversed, then shuffled (Fisher-Yates) for every other q */
				for (size_t i = 0; i < n; i++)
					x[i] = s[n - 1 - i];
				if (k % 2)
					for (size_t i = n; i > 1; i--) {
						size_t j = stats_rng_below(&rng, i);
						double t = x[i - 1];
						x[i - 1] = x[j];
						x[j] = t;
					}
				assert_true(stats_quantile_select(x, n, qs[k]) ==
					    stats_quantile_sorted(s, n, qs[k]));
			}
		}
		free(x);
		free(s);
	}
}

static void test_verdict_rules(void **state)
{
	struct stats_cmp c = { .ok = 1 };

	c.lo = 1.015, c.hi = 1.03;
	assert_int_equal(stats_verdict(&c, 0.01, 0.05, 0.01), STATS_SLOWER);
	assert_int_equal(stats_verdict(&c, 0.2, 0.05, 0.01), STATS_UNSURE);	/* not significant */
	assert_int_equal(stats_verdict(&c, 0.01, 0.05, 0.02), STATS_UNSURE);	/* straddles 2% */
	c.lo = 1 / 1.03, c.hi = 1 / 1.015;
	assert_int_equal(stats_verdict(&c, 0.01, 0.05, 0.01), STATS_FASTER);
	c.lo = 0.995, c.hi = 1.008;
	assert_int_equal(stats_verdict(&c, 0.5, 0.05, 0.01), STATS_SAME);
	/* significant but inside the band: SAME, the difference is below threshold */
	c.lo = 1.002, c.hi = 1.008;
	assert_int_equal(stats_verdict(&c, 0.001, 0.05, 0.01), STATS_SAME);
	/* the band is symmetric in log: 1/1.01 is inside, 0.99 is not */
	c.lo = 1 / 1.01, c.hi = 1.0;
	assert_int_equal(stats_verdict(&c, 0.5, 0.05, 0.01), STATS_SAME);
	c.lo = 0.99, c.hi = 1.0;
	assert_int_equal(stats_verdict(&c, 0.5, 0.05, 0.01), STATS_UNSURE);
	c.ok = 0;
	assert_int_equal(stats_verdict(&c, 0.0, 0.05, 0.01), STATS_UNSURE);
	assert_string_equal(stats_verdict_name(STATS_SLOWER), "SLOWER");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_provenance),
		cmocka_unit_test(test_normal),
		cmocka_unit_test(test_student_t),
		cmocka_unit_test(test_incomplete_beta_and_binomial),
		cmocka_unit_test(test_mann_whitney_vs_scipy),
		cmocka_unit_test(test_welch_vs_scipy),
		cmocka_unit_test(test_quantiles_vs_numpy),
		cmocka_unit_test(test_bh_vs_reference),
		cmocka_unit_test(test_resampled_median_law),
		cmocka_unit_test(test_resampled_median_large_n),
		cmocka_unit_test(test_rng),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_quantile_select),
		cmocka_unit_test(test_verdict_rules),
	};
	return cmocka_run_group_tests(tests, load, unload);
}
