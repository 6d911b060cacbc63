/*
 * The timer's statistics against hand-computed values (numpy's default
 * "linear" quantiles), and zlbt_summarize()'s checks. No driver involved.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "timer/stats.h"
#include "timer/zlbtimer.h"

/* cmocka 1.1 compares floats only; these are doubles. */
#define assert_near(a, b, eps) do { \
	double a_ = (a), b_ = (b); \
	if (!(fabs(a_ - b_) <= (eps))) \
		fail_msg("%s = %.17g, expected %.17g (+-%g)", #a, a_, b_, \
			 (double)(eps)); \
} while (0)

static void quantiles_of_sorted(void **state)
{
	const double v[] = { 1, 2, 3, 4, 5 };

	assert_near(stats_quantile_sorted(v, 5, 0.0), 1, 0);
	assert_near(stats_quantile_sorted(v, 5, 0.1), 1.4, 1e-15);
	assert_near(stats_quantile_sorted(v, 5, 0.25), 2, 0);
	assert_near(stats_quantile_sorted(v, 5, 0.5), 3, 0);
	assert_near(stats_quantile_sorted(v, 5, 0.9), 4.6, 1e-15);
	assert_near(stats_quantile_sorted(v, 5, 1.0), 5, 0);
	/* Out-of-range q is clamped, not read past the array. */
	assert_near(stats_quantile_sorted(v, 5, -1), 1, 0);
	assert_near(stats_quantile_sorted(v, 5, 2), 5, 0);
	assert_near(stats_quantile_sorted(v, 1, 0.5), 1, 0);
}

static void odd_count(void **state)
{
	const double v[] = { 5, 1, 4, 2, 3 };
	struct stats_summary s;

	assert_int_equal(stats_summarize(v, 5, &s), 0);
	assert_int_equal(s.n, 5);
	assert_near(s.median, 3, 0);
	assert_near(s.q1, 2, 0);
	assert_near(s.q3, 4, 0);
	assert_near(s.min, 1, 0);
	assert_near(s.max, 5, 0);
	assert_near(s.mean, 3, 1e-15);
	assert_near(s.sum, 15, 0);
	/* stdev = sqrt(10 / 4) = 1.5811388300841898; / 3 */
	assert_near(s.stdrel, 0.52704627669472992, 1e-15);
	/* The input is left as it was: the caller's order means something. */
	assert_near(v[0], 5, 0);
	assert_near(v[1], 1, 0);
}

static void even_count(void **state)
{
	const double v[] = { 4, 1, 3, 2 };
	struct stats_summary s;

	assert_int_equal(stats_summarize(v, 4, &s), 0);
	assert_near(s.median, 2.5, 0);
	assert_near(s.q1, 1.75, 0);
	assert_near(s.q3, 3.25, 0);
	assert_near(s.mean, 2.5, 0);
	/* stdev = sqrt(5 / 3) = 1.2909944487358056; / 2.5 */
	assert_near(s.stdrel, 0.51639777949432231, 1e-15);
}

static void six_values(void **state)
{
	const double v[] = { 60, 10, 50, 20, 40, 30 };
	struct stats_summary s;

	assert_int_equal(stats_summarize(v, 6, &s), 0);
	assert_near(s.median, 35, 0);
	assert_near(s.q1, 22.5, 0);   /* h = 1.25 */
	assert_near(s.q3, 47.5, 0);   /* h = 3.75 */
	assert_near(s.min, 10, 0);
	assert_near(s.max, 60, 0);
}

static void one_sample(void **state)
{
	const double v[] = { 0.007 };
	struct stats_summary s;

	assert_int_equal(stats_summarize(v, 1, &s), 0);
	assert_int_equal(s.n, 1);
	assert_true(s.median == 0.007 && s.q1 == 0.007 && s.q3 == 0.007);
	assert_true(s.min == 0.007 && s.max == 0.007 && s.mean == 0.007);
	assert_near(s.stdrel, 0, 0);
}

static void identical_samples_are_exact(void **state)
{
	double v[37];
	struct stats_summary s;

	for (size_t i = 0; i < 37; i++)
		v[i] = 0.015;
	assert_int_equal(stats_summarize(v, 37, &s), 0);
	/* Interpolating between equal neighbours must not round. */
	assert_true(s.median == 0.015);
	assert_true(s.q1 == 0.015);
	assert_true(s.q3 == 0.015);
	assert_true(s.stdrel < 1e-12);
}

static void rejects_empty_and_nan(void **state)
{
	const double v[] = { 1, NAN, 3 };
	const double inf[] = { 1, INFINITY };
	struct stats_summary s;

	assert_int_equal(stats_summarize(v, 0, &s), -1);
	assert_int_equal(stats_summarize(NULL, 3, &s), -1);
	assert_int_equal(stats_summarize(v, 3, &s), -1);
	assert_int_equal(stats_summarize(inf, 2, &s), -1);
	assert_int_equal(stats_summarize(v, 1, &s), 0);
}

static void summarize_api(void **state)
{
	const double v[] = { 4, 1, 3, 2 };
	struct zlbt_result r;

	memset(&r, 0xff, sizeof(r));
	r.struct_size = sizeof(r);
	assert_int_equal(zlbt_summarize(v, 4, &r), ZLBT_OK);
	assert_int_equal(r.struct_size, sizeof(r));
	assert_int_equal(r.n, 4);
	assert_near(r.median_ms, 2.5, 0);
	assert_near(r.q1_ms, 1.75, 0);
	assert_near(r.q3_ms, 3.25, 0);
	assert_near(r.mean_ms, 2.5, 0);
	assert_near(r.min_ms, 1, 0);
	assert_near(r.max_ms, 4, 0);
	assert_near(r.stdrel, 0.51639777949432231, 1e-15);
	assert_near(r.total_gpu_ms, 10, 0);
	assert_near(r.wall_ms, 0, 0);
}

static void summarize_rejects(void **state)
{
	const double v[] = { 1, 2 };
	const double bad[] = { 1, NAN };
	struct zlbt_result r;

	memset(&r, 0, sizeof(r));
	r.struct_size = sizeof(r);
	assert_int_equal(zlbt_summarize(v, 0, &r), ZLBT_EINVAL);
	assert_int_equal(r.n, 0);
	assert_int_equal(zlbt_summarize(NULL, 2, &r), ZLBT_EINVAL);
	assert_int_equal(zlbt_summarize(bad, 2, &r), ZLBT_EINVAL);
	assert_int_equal(zlbt_summarize(v, 2, NULL), ZLBT_EINVAL);

	/* A struct from before version 1 (or an unset size) is not written. */
	memset(&r, 0x5a, sizeof(r));
	r.struct_size = 8;
	assert_int_equal(zlbt_summarize(v, 2, &r), ZLBT_EINVAL);
	assert_int_equal(r.n, 0x5a5a5a5a);
}

static void summarize_newer_caller(void **state)
{
	/* A caller built against a later header with a field appended. */
	struct {
		struct zlbt_result r;
		double appended;
	} big;
	const double v[] = { 3, 1, 2 };

	memset(&big, 0, sizeof(big));
	big.r.struct_size = sizeof(big);
	big.appended = 42;
	assert_int_equal(zlbt_summarize(v, 3, &big.r), ZLBT_OK);
	assert_near(big.r.median_ms, 2, 0);
	assert_near(big.appended, 42, 0);
}

static void abi_version(void **state)
{
	assert_int_equal(zlbt_abi_version(), ZLBT_ABI_VERSION);
	assert_int_equal(ZLBT_ABI_VERSION, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quantiles_of_sorted),
		cmocka_unit_test(odd_count),
		cmocka_unit_test(even_count),
		cmocka_unit_test(six_values),
		cmocka_unit_test(one_sample),
		cmocka_unit_test(identical_samples_are_exact),
		cmocka_unit_test(rejects_empty_and_nan),
		cmocka_unit_test(summarize_api),
		cmocka_unit_test(summarize_rejects),
		cmocka_unit_test(summarize_newer_caller),
		cmocka_unit_test(abi_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
