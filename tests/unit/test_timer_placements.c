/*
 * Placements (ABI version 3; the centre and placement noise, version 4): several graphs of the same work, each on
 * memory of its own, sampled round-robin. Against the fake driver, where a
 * graph handle's value is the nanoseconds one replay takes, the order of
 * the samples says which graph each replay ran.
 */
#include <math.h>

#include "timer_fake.h"
#include "timer/stats.h"

/* Three placements: 1, 2 and 4 us per replay of 1 call. */
static uint64_t more[] = { 2000, 4000 };

static struct zlbt_request three(void)
{
	struct zlbt_request q = request(1000, 1);

	q.placement_execs = (uint64_t)(uintptr_t)more;
	q.placements = 3;
	return q;
}

static void round_robin(void **state)
{
	struct zlbt_request q = three();
	struct zlbt_result r;
	double samples[64];
	char err[256];

	q.min_samples = 10;         /* rounded up to 4 rounds: 12 */
	q.warmup_replays = 2;       /* per placement */
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, samples, 64, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 12);
	assert_int_equal(r.placements, 3);
	/* Event times come back as floats: compare at float precision. */
	for (int i = 0; i < 12; i++)
		assert_near(samples[i], (double)(1000u << (i % 3)) / 1e6, 1e-9);
	/* Pooled: four each of 0.001, 0.002, 0.004 ms. */
	assert_near(r.median_ms, 0.002, 1e-9);
	assert_near(r.min_ms, 0.001, 1e-9);
	assert_near(r.max_ms, 0.004, 1e-9);
	/* The centre is the mean of the placements' medians: 7/3 us. */
	assert_near(r.centre_ms, 0.007 / 3, 1e-9);
	/* (0.004 - 0.001) / (0.007 / 3) */
	assert_near(r.placement_spread, 0.003 / (0.007 / 3), 1e-6);
	/*
	 * sd of {1, 2, 4} is sqrt(7/3); over sqrt(3) placements, times the
	 * t quantile with 2 degrees of freedom (4.302653), over the mean.
	 */
	assert_near(r.placement_noise, 4.302652729911275 * sqrt(7.0 / 3 / 3) / (7.0 / 3), 1e-6);
	/* 2 warm-up rounds, then batches of 1 and 3 rounds, each placement's
	 * block after one untimed replay of its graph. */
	assert_int_equal(fake_launches(), 12 + 2 * 3 + 2 * 3);
}

/*
 * The replays themselves go in blocks, one untimed replay of a graph
 * first: alternating graphs every replay read L2-sized kernels up to 8%
 * slow on an H200. The launch log holds every handle in launch order.
 */
static void replays_go_in_blocks(void **state)
{
	struct zlbt_request q = three();
	struct zlbt_result r;
	double samples[64];
	uint64_t log[128];
	size_t (*launch_log)(uint64_t *, size_t);
	char err[256];
	/* Batch 1: one round (1 each); batch 2: 3 rounds (3 each). */
	static const uint64_t want[] = {
		1000, 1000, 2000, 2000, 4000, 4000,
		1000, 1000, 1000, 1000, 2000, 2000, 2000, 2000, 4000, 4000, 4000, 4000,
	};

	*(void **)&launch_log = dlsym(fake_cuda, "fake_cuda_launch_log");
	assert_non_null(launch_log);
	q.min_samples = 10;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, samples, 64, err, sizeof(err)), ZLBT_OK);
	assert_int_equal(r.n, 12);
	assert_int_equal(launch_log(log, 128), sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(log[i], want[i]);
	/* Stored as round-robin would have: sample i is of placement i % 3. */
	for (int i = 0; i < 12; i++)
		assert_near(samples[i], (double)(1000u << (i % 3)) / 1e6, 1e-9);
}

static void whole_rounds_under_min_time(void **state)
{
	struct zlbt_request q = three();
	struct zlbt_result r;
	char err[256];

	/* A round is 7 us of GPU time; 100 us needs 15 rounds (105 us). */
	q.min_samples = 1;
	q.min_time_ms = 0.1;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 45);
	assert_near(r.total_gpu_ms, 0.105, 1e-8);
	assert_int_equal(r.stop_reason, ZLBT_STOP_RULE);
}

static void max_samples_rounds_down(void **state)
{
	struct zlbt_request q = three();
	struct zlbt_result r;
	char err[256];

	q.min_samples = 1;
	q.max_samples = 20;         /* 6 rounds: 18 */
	q.min_time_ms = 1e6;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 18);
	assert_int_equal(r.stop_reason, ZLBT_STOP_MAX_SAMPLES);
}

static void identical_placements_spread_nothing(void **state)
{
	static uint64_t same[] = { 1000, 1000, 1000 };
	struct zlbt_request q = request(1000, 1);
	struct zlbt_result r;
	char err[256];

	q.placement_execs = (uint64_t)(uintptr_t)same;
	q.placements = 4;
	q.min_samples = 8;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 8);
	assert_int_equal(r.placements, 4);
	assert_near(r.placement_spread, 0, 0);
}

static void one_placement_is_version_2(void **state)
{
	struct zlbt_request q = request(1000, 1);
	struct zlbt_result r;
	char err[256];

	/* placements 0 or 1 ignore placement_execs, even a bad pointer. */
	q.placement_execs = 8;
	q.min_samples = 5;
	for (uint32_t p = 0; p <= 1; p++) {
		q.placements = p;
		result_init(&r);
		assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
				 ZLBT_OK);
		assert_int_equal(r.n, 5);
		assert_int_equal(r.placements, 1);
		assert_near(r.placement_spread, 0, 0);
		assert_near(r.placement_noise, 0, 0);
		assert_near(r.centre_ms, r.median_ms, 0);
	}
}

static void version_2_caller(void **state)
{
	/* 80- and 120-byte structs: what lies past them is not read or written. */
	struct zlbt_request q = request(1000, 1);
	struct zlbt_result r;
	const unsigned char *tail = (const unsigned char *)&r + 120;
	char err[256];

	q.struct_size = 80;
	q.placement_execs = 0;
	q.placements = 7;           /* garbage past a v2 struct */
	q.min_samples = 5;
	memset(&r, 0xa5, sizeof(r));
	r.struct_size = 120;
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 5);
	for (size_t i = 0; i < sizeof(r) - 120; i++)
		if (tail[i] != 0xa5)
			fail_msg("byte %zu past the v2 result was written", 120 + i);
	assert_int_equal(fake_launches(), 5);
}

static void version_3_caller(void **state)
{
	/* A 136-byte result: the version 4 centre and noise are not written. */
	struct zlbt_request q = three();
	struct zlbt_result r;
	const unsigned char *tail = (const unsigned char *)&r + 136;
	char err[256];

	q.min_samples = 6;
	memset(&r, 0xa5, sizeof(r));
	r.struct_size = 136;
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.placements, 3);
	assert_true(r.placement_spread > 0);
	for (size_t i = 0; i < sizeof(r) - 136; i++)
		if (tail[i] != 0xa5)
			fail_msg("byte %zu past the v3 result was written", 136 + i);
}

static double median_noise_of(const double *v, size_t n, size_t stride, size_t first,
			      double *m)
{
	double x[4096];
	size_t k = 0;

	for (size_t i = first; i < n; i += stride)
		x[k++] = v[i];
	stats_sort(x, k);
	*m = k % 2 ? x[k / 2] : (x[k / 2 - 1] + x[k / 2]) / 2;
	return stats_median_noise_sorted(x, k);
}

static void noise_target_is_per_placement(void **state)
{
	/*
	 * Two placements 2x apart, each with 0.5% jitter: the pooled median of
	 * such a mixture never gets a narrow interval, but each placement's
	 * median does, and that is what sampling longer can improve.
	 */
	static uint64_t other[] = { 2000000 };
	struct zlbt_request q = request(1000000, 1);
	struct zlbt_result r;
	static double samples[4096];
	double m0, m1, e0, e1, want;
	char err[256];

	setenv("FAKE_CUDA_NOISE_PPM", "5000", 1);
	q.placement_execs = (uint64_t)(uintptr_t)other;
	q.placements = 2;
	q.min_samples = 2;
	q.noise_target = 0.001;
	q.max_samples = 4096;
	q.max_wall_ms = 60000;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, samples, 4096, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.stop_reason, ZLBT_STOP_NOISE);
	assert_true(r.noise <= 0.001);
	assert_true(r.n < 4096 && r.n % 2 == 0);
	/* The reported noise is sqrt(sum (e_i m_i)^2) / sum m_i. */
	e0 = median_noise_of(samples, r.n, 2, 0, &m0);
	e1 = median_noise_of(samples, r.n, 2, 1, &m1);
	want = sqrt(e0 * m0 * e0 * m0 + e1 * m1 * e1 * m1) / (m0 + m1);
	assert_near(r.noise, want, 1e-12);
	/* The spread is the placements' distance, which sampling kept. */
	assert_near(r.centre_ms, (m0 + m1) / 2, 1e-15);
	assert_near(r.placement_spread, (m1 - m0) / r.centre_ms, 1e-12);
	assert_true(r.placement_spread > 0.5);
	/*
	 * Sampling met the target, yet where the two placements landed leaves
	 * the centre uncertain by far more: 12.706 (t, 1 df) x |m1 - m0| / 2
	 * over the mean.
	 */
	assert_near(r.placement_noise, 12.706204736174707 * (m1 - m0) / 2 / r.centre_ms, 1e-9);
	assert_true(r.placement_noise > 100 * r.noise);
}

static void bad_placements(void **state)
{
	static uint64_t with_zero[] = { 2000, 0 };
	struct zlbt_request q;
	struct zlbt_result r;
	char err[256];

	q = three();
	q.placements = ZLBT_MAX_PLACEMENTS + 1;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EINVAL);
	assert_non_null(strstr(err, "ZLBT_MAX_PLACEMENTS"));

	q = three();
	q.placement_execs = 0;
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EINVAL);
	assert_non_null(strstr(err, "placement_execs is NULL"));

	q = three();
	q.placement_execs = (uint64_t)(uintptr_t)with_zero;
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EINVAL);
	assert_non_null(strstr(err, "placement_execs[1] is 0"));

	q = three();
	q.max_samples = 2;
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EINVAL);
	assert_non_null(strstr(err, "one round of 3"));
	/* Nothing was launched by a refused request. */
	assert_int_equal(fake_launches(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(round_robin),
		T(replays_go_in_blocks),
		T(whole_rounds_under_min_time),
		T(max_samples_rounds_down),
		T(identical_placements_spread_nothing),
		T(one_placement_is_version_2),
		T(version_2_caller),
		T(version_3_caller),
		T(noise_target_is_per_placement),
		T(bad_placements),
	};

	return cmocka_run_group_tests(tests, fake_setup, NULL);
}
