/*
 * The timer's statistics against hand-computed values (numpy's default
 * "linear" quantiles), the median's noise against scipy's binomial
 * distribution, and zlbt_summarize()'s checks. No driver involved.
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

/*
 * The reference numbers below were computed with scipy 1.10
 * (scipy.stats.binom.cdf, searching k = 0, 1, ... for the last k with
 * P(B <= k) <= 0.025) and numpy's median; tests/unit does not run Python.
 */

/* lo for n = 1 .. 300; hi is n + 1 - lo. */
static const unsigned short lo_ranks[300] = {
	1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 5, 5, 5, 6,
	6, 6, 7, 7, 8, 8, 8, 9, 9, 10, 10, 10, 11, 11, 12, 12, 13, 13, 13, 14,
	14, 15, 15, 16, 16, 16, 17, 17, 18, 18, 19, 19, 19, 20, 20, 21, 21, 22, 22, 22,
	23, 23, 24, 24, 25, 25, 26, 26, 26, 27, 27, 28, 28, 29, 29, 29, 30, 30, 31, 31,
	32, 32, 33, 33, 33, 34, 34, 35, 35, 36, 36, 37, 37, 38, 38, 38, 39, 39, 40, 40,
	41, 41, 42, 42, 42, 43, 43, 44, 44, 45, 45, 46, 46, 47, 47, 47, 48, 48, 49, 49,
	50, 50, 51, 51, 52, 52, 52, 53, 53, 54, 54, 55, 55, 56, 56, 57, 57, 58, 58, 58,
	59, 59, 60, 60, 61, 61, 62, 62, 63, 63, 63, 64, 64, 65, 65, 66, 66, 67, 67, 68,
	68, 69, 69, 69, 70, 70, 71, 71, 72, 72, 73, 73, 74, 74, 75, 75, 75, 76, 76, 77,
	77, 78, 78, 79, 79, 80, 80, 81, 81, 82, 82, 82, 83, 83, 84, 84, 85, 85, 86, 86,
	87, 87, 88, 88, 88, 89, 89, 90, 90, 91, 91, 92, 92, 93, 93, 94, 94, 95, 95, 95,
	96, 96, 97, 97, 98, 98, 99, 99, 100, 100, 101, 101, 102, 102, 102, 103, 103, 104, 104, 105,
	105, 106, 106, 107, 107, 108, 108, 109, 109, 110, 110, 110, 111, 111, 112, 112, 113, 113, 114, 114,
	115, 115, 116, 116, 117, 117, 118, 118, 118, 119, 119, 120, 120, 121, 121, 122, 122, 123, 123, 124,
	124, 125, 125, 125, 126, 126, 127, 127, 128, 128, 129, 129, 130, 130, 131, 131, 132, 132, 133, 133,
};

static void median_ci_ranks(void **state)
{
	static const struct {
		size_t n, lo, hi;
	} big[] = {
		{ 500, 228, 273 },
		{ 1000, 469, 532 },
		{ 1001, 470, 532 },
		{ 4096, 1985, 2112 },
		{ 10000, 4902, 5099 },
		/* P(B <= 49689) = 0.024778, P(B <= 49690) = 0.025147 */
		{ 100000, 49690, 50311 },
		{ 1000000, 499020, 500981 },
		/* P(B <= 4996900) = 0.0249806, P(B <= 4996901) = 0.0250176 */
		{ 10000000, 4996901, 5003100 },
	};
	size_t lo, hi;

	for (size_t n = 1; n <= 300; n++) {
		stats_median_ci_ranks(n, &lo, &hi);
		if (lo != lo_ranks[n - 1] || hi != n + 1 - lo_ranks[n - 1])
			fail_msg("n = %zu: ranks (%zu, %zu), scipy says (%u, %zu)",
				 n, lo, hi, lo_ranks[n - 1], n + 1 - lo_ranks[n - 1]);
	}
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		stats_median_ci_ranks(big[i].n, &lo, &hi);
		if (lo != big[i].lo || hi != big[i].hi)
			fail_msg("n = %zu: ranks (%zu, %zu), scipy says (%zu, %zu)",
				 big[i].n, lo, hi, big[i].lo, big[i].hi);
	}
}

/* sorted copy, then the noise */
static double noise_of(const double *v, size_t n)
{
	double s[128];

	memcpy(s, v, n * sizeof(*s));
	stats_sort(s, n);
	return stats_median_noise_sorted(s, n);
}

static void median_noise(void **state)
{
	/* ((i * 7919) mod 101) / 10 + 1, i = 1 .. 20: ranks 6 and 15. */
	const double v20[] = {
		5.1, 9.2, 3.2, 7.3, 1.3, 5.4, 9.5, 3.5, 7.6, 1.6,
		5.7, 9.8, 3.8, 7.9, 1.9, 6.0, 10.1, 4.1, 8.2, 2.2,
	};
	/* n = 6: the first n with a 95% interval, [min, max]. */
	const double v6[] = { 3, 1, 4, 1.5, 5, 9 };
	/* n = 5: none; clamped to [min, max]. */
	const double v5[] = { 2, 7, 1, 8, 2.5 };
	/* lognormal(0, 0.1), numpy seed 12345, 6 decimals: ranks 41 and 61. */
	const double v101[] = {
		0.867289, 1.134705, 0.916616, 0.974416, 0.992494, 0.928590, 0.872163,
		1.067041, 1.036766, 0.822599, 1.264581, 1.101695, 0.926873, 1.094415,
		0.954378, 0.993949, 1.082079, 0.881909, 1.059276, 1.150156, 1.141371,
		0.970475, 1.094494, 0.850307, 0.984306, 1.045974, 0.874275, 0.991865,
		1.188241, 1.299287, 1.080837, 1.086393, 0.908556, 0.886088, 0.868290,
		1.055648, 1.078093, 0.936247, 0.884381, 1.026090, 1.031785, 0.987004,
		1.135415, 0.990747, 0.993407, 0.895099, 1.013689, 1.144202, 1.006133,
		1.007117, 1.044319, 1.028137, 1.054456, 1.055139, 1.063787, 0.923576,
		1.030458, 0.851914, 1.027039, 0.881472, 0.992898, 1.048547, 0.959363,
		1.009820, 0.848707, 0.917846, 1.071252, 0.890962, 1.067207, 0.870371,
		0.913257, 0.896244, 1.000715, 1.054889, 0.898902, 0.982016, 1.176090,
		0.968759, 0.921658, 1.039415, 0.977884, 0.932236, 0.835628, 1.085274,
		0.944497, 1.000079, 0.899097, 1.139024, 1.077655, 1.103059, 0.989019,
		1.047904, 1.093147, 1.107717, 1.031731, 0.993829, 0.964690, 0.927869,
		0.907966, 1.036659, 0.975841,
	};
	const double same[] = { 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25 };
	const double zero_median[] = { -1, -1, 0, 0, 0, 2, 3 };
	struct stats_summary s;

	assert_near(noise_of(v20, 20), 0.3963963963963964, 1e-15);
	assert_near(noise_of(v6, 6), 1.1428571428571428, 1e-15);
	assert_near(noise_of(v5, 5), 1.3999999999999999, 1e-15);
	assert_near(noise_of(v101, 101), 0.024368453512202386, 1e-15);
	assert_near(noise_of(v101, 1), 0, 0);
	assert_near(noise_of(same, 7), 0, 0);
	assert_true(isinf(noise_of(zero_median, 7)));

	/* The summary carries it, from its own sorted copy. */
	assert_int_equal(stats_summarize(v101, 101, &s), 0);
	assert_near(s.noise, 0.024368453512202386, 1e-15);
	assert_near(s.median, 0.99394899999999997, 0);
}

static void summarize_noise(void **state)
{
	const double v[] = { 3, 1, 4, 1.5, 5, 9 };
	struct zlbt_result r;

	memset(&r, 0xff, sizeof(r));
	r.struct_size = sizeof(r);
	assert_int_equal(zlbt_summarize(v, 6, &r), ZLBT_OK);
	assert_near(r.noise, 1.1428571428571428, 1e-15);
	/* The fields that describe a timing run are zero, not left as junk. */
	assert_int_equal(r.stop_reason, 0);
	assert_int_equal(r.discarded, 0);
	assert_near(r.clock_mhz, 0, 0);
	assert_near(r.clock_min_mhz, 0, 0);
	assert_int_equal(r.l2_flush_bytes, 0);
}

static void summarize_v1_caller(void **state)
{
	/* A version 1 struct: nothing past wall_ms is written. */
	const double v[] = { 3, 1, 4, 1.5, 5, 9 };
	struct zlbt_result r;
	const unsigned char *tail = (const unsigned char *)&r + 80;

	memset(&r, 0x5a, sizeof(r));
	r.struct_size = 80;
	assert_int_equal(zlbt_summarize(v, 6, &r), ZLBT_OK);
	assert_near(r.median_ms, 3.5, 0);
	for (size_t i = 0; i < sizeof(r) - 80; i++)
		assert_int_equal(tail[i], 0x5a);
}

static void abi_version(void **state)
{
	assert_int_equal(zlbt_abi_version(), ZLBT_ABI_VERSION);
	assert_int_equal(ZLBT_ABI_VERSION, 10);
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
		cmocka_unit_test(median_ci_ranks),
		cmocka_unit_test(median_noise),
		cmocka_unit_test(summarize_noise),
		cmocka_unit_test(summarize_v1_caller),
		cmocka_unit_test(abi_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
