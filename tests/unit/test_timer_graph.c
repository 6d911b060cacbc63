/*
 * zlbt_time_graph() against the fake driver (tests/fakes/fake_libcuda.c),
 * where a graph handle's value is the nanoseconds one replay takes, so
 * every number the timer returns can be predicted exactly.
 */
#include "timer_fake.h"

static void opens(void **state)
{
	char err[256] = "junk";

	assert_int_equal(zlbt_open(err, sizeof(err)), ZLBT_OK);
	assert_string_equal(err, "");
	/* Idempotent. */
	assert_int_equal(zlbt_open(err, sizeof(err)), ZLBT_OK);
	assert_int_equal(zlbt_open(NULL, 0), ZLBT_OK);
}

static void median_is_per_call(void **state)
{
	struct zlbt_request q = request(1500000, 100);
	struct zlbt_result r;
	double samples[32];
	char err[256];

	q.min_samples = 10;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, samples, 32, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.struct_size, sizeof(r));
	assert_int_equal(r.n, 10);
	/* 1.5 ms per replay of 100 calls: exactly 0.015 ms per call. */
	assert_true(r.median_ms == 0.015);
	assert_true(r.min_ms == 0.015);
	assert_true(r.max_ms == 0.015);
	assert_true(r.q1_ms == 0.015);
	assert_true(r.q3_ms == 0.015);
	assert_near(r.mean_ms, 0.015, 1e-15);
	assert_true(r.stdrel < 1e-12);
	/* total_gpu_ms is per replay, not per call. */
	assert_near(r.total_gpu_ms, 15.0, 1e-12);
	assert_true(r.wall_ms > 0);
	for (int i = 0; i < 10; i++)
		assert_true(samples[i] == 0.015);
	assert_int_equal(fake_launches(), 10);
}

static uint32_t taken(struct zlbt_request *q, int expect_rc)
{
	struct zlbt_result r;
	char err[256];

	result_init(&r);
	assert_int_equal(zlbt_time_graph(q, &r, NULL, 0, err, sizeof(err)),
			 expect_rc);
	return r.n;
}

static void stops_at_min_time(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	/* 66 replays give 99 ms, 67 give 100.5 ms: no more, no fewer. */
	q.min_samples = 10;
	q.min_time_ms = 100;
	q.warmup_replays = 5;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 67);
	assert_near(r.total_gpu_ms, 100.5, 1e-9);
	/* Warm-up replays run but are not samples. */
	assert_int_equal(fake_launches(), 67 + 5);
}

static void stops_at_min_samples(void **state)
{
	struct zlbt_request q = request(1500000, 1);

	q.min_samples = 50;
	q.min_time_ms = 1;
	assert_int_equal(taken(&q, ZLBT_OK), 50);
	/* Several batches of the event ring. */
	q.min_samples = 200;
	q.min_time_ms = 0;
	assert_int_equal(taken(&q, ZLBT_OK), 200);
	/* A time floor that needs several full batches. */
	q.min_samples = 1;
	q.min_time_ms = 300;    /* 200 replays of 1.5 ms */
	assert_int_equal(taken(&q, ZLBT_OK), 200);
}

static void stops_at_max_samples(void **state)
{
	struct zlbt_request q = request(1500000, 1);

	/* min_time is out of reach: max_samples ends it, and that is OK. */
	q.min_samples = 10;
	q.max_samples = 20;
	q.min_time_ms = 1e6;
	assert_int_equal(taken(&q, ZLBT_OK), 20);
	assert_int_equal(fake_launches(), 20);
	q.max_samples = 150;
	assert_int_equal(taken(&q, ZLBT_OK), 150);
}

static void defaults(void **state)
{
	struct zlbt_request q = request(2000, 0);
	struct zlbt_result r;
	char err[256];

	/* All zero but the graph: 10 samples of one call each. */
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 10);
	/* The driver reports float milliseconds; 0.002 is not exact in one. */
	assert_true(r.median_ms == (double)0.002f);
	/* min_samples defaults below a smaller max_samples. */
	q.max_samples = 3;
	assert_int_equal(taken(&q, ZLBT_OK), 3);
}

static void samples_in_order(void **state)
{
	struct zlbt_request q = request(1000000, 8);
	struct zlbt_result r;
	double samples[300], expect[300];
	char err[256];
	int sorted = 1;

	setenv("FAKE_CUDA_NOISE_PPM", "20000", 1);
	setenv("FAKE_CUDA_SEED", "7", 1);
	q.min_samples = 130;
	q.warmup_replays = 3;
	result_init(&r);
	for (int i = 0; i < 300; i++)
		samples[i] = -1;
	assert_int_equal(zlbt_time_graph(&q, &r, samples, 300, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 130);

	lcg = 7;
	for (int i = 0; i < 3; i++)
		model_replay_ms(1000000, 20000);  /* the warm-up replays */
	for (int i = 0; i < 130; i++) {
		expect[i] = model_replay_ms(1000000, 20000) / 8;
		if (samples[i] != expect[i])
			fail_msg("sample %d is %.17g, the model says %.17g",
				 i, samples[i], expect[i]);
		if (i && samples[i] < samples[i - 1])
			sorted = 0;
	}
	/* Not sorted: the order taken, not the order of size. */
	assert_false(sorted);
	/* Nothing written past n. */
	assert_true(samples[130] == -1);
}

static void samples_cap(void **state)
{
	struct zlbt_request q = request(1000000, 1);
	struct zlbt_result r;
	double samples[8];
	char err[256];

	for (int i = 0; i < 8; i++)
		samples[i] = -1;
	q.min_samples = 20;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, samples, 5, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 20);
	for (int i = 0; i < 5; i++)
		assert_true(samples[i] == 1.0);
	assert_true(samples[5] == -1);
}

static void jitter(void **state)
{
	struct zlbt_request q = request(1000000, 10);
	struct zlbt_result r;
	char err[256];

	/* +-0.1% uniform: per call 0.1 ms +- 0.0001 ms. */
	setenv("FAKE_CUDA_NOISE_PPM", "1000", 1);
	q.min_samples = 500;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 500);
	assert_true(r.stdrel > 0);
	/* A uniform +-e spread has stdrel e / sqrt(3) = 5.8e-4. */
	assert_in_range((uint64_t)(r.stdrel * 1e6), 400, 750);
	assert_true(r.median_ms >= 0.1 * (1 - 1e-3) && r.median_ms <= 0.1 * (1 + 1e-3));
	assert_true(r.min_ms >= 0.1 * (1 - 1e-3) - 1e-9);
	assert_true(r.max_ms <= 0.1 * (1 + 1e-3) + 1e-9);
	assert_true(r.min_ms < r.q1_ms && r.q1_ms < r.median_ms);
	assert_true(r.median_ms < r.q3_ms && r.q3_ms < r.max_ms);
}

static void launch_failure(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	setenv("FAKE_CUDA_LAUNCH_FAIL_AFTER", "25", 1);
	q.min_samples = 100;
	result_init(&r);
	r.n = 77;
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EDRIVER);
	assert_string_equal(err, "cuGraphLaunch failed: CUDA_ERROR_LAUNCH_FAILED "
			    "(unspecified launch failure)");
	/* No half-result: the caller falls back, it does not report these. */
	assert_int_equal(r.n, 0);
	assert_true(r.median_ms == 0);
	assert_int_equal(fake_launches(), 25);
}

static void launch_failure_in_warmup(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	setenv("FAKE_CUDA_LAUNCH_FAIL_AFTER", "2", 1);
	q.warmup_replays = 5;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EDRIVER);
	assert_non_null(strstr(err, "cuGraphLaunch"));
	assert_non_null(strstr(err, "CUDA_ERROR_LAUNCH_FAILED"));
	assert_int_equal(fake_launches(), 2);
}

static void no_context(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	setenv("FAKE_CUDA_NO_CONTEXT", "1", 1);
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EINVAL);
	assert_string_equal(err, "no current CUDA context: capture the graph "
			    "in this thread with torch first");
	assert_int_equal(fake_launches(), 0);
}

static void bad_requests(void **state)
{
	struct zlbt_request q;
	struct zlbt_result r;
	char err[256];

	result_init(&r);
	q = request(0, 1);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EINVAL);
	assert_non_null(strstr(err, "graph_exec"));

	q = request(1000, 1);
	q.struct_size = 16;
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EINVAL);
	assert_non_null(strstr(err, "struct_size"));

	q = request(1000, 1);
	q.min_samples = 30;
	q.max_samples = 20;
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EINVAL);
	assert_non_null(strstr(err, "min_samples"));

	q = request(1000, 1);
	q.min_time_ms = -1;
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EINVAL);
	q = request(1000, 1);
	q.max_wall_ms = NAN;
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EINVAL);
	assert_int_equal(zlbt_time_graph(NULL, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EINVAL);

	q = request(1000, 1);
	r.struct_size = 8;
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EINVAL);
	assert_int_equal(zlbt_time_graph(&q, NULL, NULL, 0, err, sizeof(err)),
			 ZLBT_EINVAL);
	/* No err buffer is fine too. */
	assert_int_equal(zlbt_time_graph(&q, NULL, NULL, 0, NULL, 0), ZLBT_EINVAL);
	assert_int_equal(fake_launches(), 0);
}

static void newer_caller(void **state)
{
	/* Structs from a later header: larger, with fields appended. */
	struct {
		struct zlbt_request q;
		uint64_t appended;
	} bq;
	struct {
		struct zlbt_result r;
		double appended;
	} br;
	char err[256];

	memset(&bq, 0, sizeof(bq));
	bq.q.struct_size = sizeof(bq);
	bq.q.graph_exec = 3000;
	bq.q.min_samples = 4;
	bq.appended = ~0ull;
	memset(&br, 0, sizeof(br));
	br.r.struct_size = sizeof(br);
	br.appended = 42;
	assert_int_equal(zlbt_time_graph(&bq.q, &br.r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(br.r.n, 4);
	assert_true(br.r.median_ms == (double)0.003f);
	assert_near(br.appended, 42, 0);
}

static void version_1_caller(void **state)
{
	/* A caller built against the version 1 header: 56 and 80 bytes. */
	struct zlbt_request q = request(2500000, 1);
	struct zlbt_result r;
	const unsigned char *tail = (const unsigned char *)&r + 80;
	char err[256];

	/*
	 * Beyond its struct_size a v1 request has whatever the caller's
	 * stack held; none of it may switch a v2 feature on.
	 */
	q.struct_size = 56;
	q.min_samples = 12;
	q.noise_target = 1e-9;
	q.l2_mode = 77;
	q.clock_check = 77;
	q.clock_floor = -1;
	memset(&r, 0xa5, sizeof(r));
	r.struct_size = 80;
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.struct_size, 80);
	assert_int_equal(r.n, 12);
	assert_true(r.median_ms == 2.5);
	assert_near(r.total_gpu_ms, 30, 1e-12);
	assert_int_equal(fake_launches(), 12);
	/* Nothing written past version 1's end. */
	for (size_t i = 0; i < sizeof(r) - 80; i++)
		if (tail[i] != 0xa5)
			fail_msg("byte %zu past the v1 result was written", 80 + i);

	/* A result between the versions is written up to its size only. */
	memset(&r, 0xa5, sizeof(r));
	r.struct_size = offsetof(struct zlbt_result, stop_reason);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_true(r.noise == 0);
	assert_int_equal(r.stop_reason, 0xa5a5a5a5);
}

static void wall_clock_limit(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	/* The first batch (one replay) already exceeds a 1 ns budget. */
	q.min_samples = 1000;
	q.max_wall_ms = 1e-6;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_ETIMEOUT);
	assert_non_null(strstr(err, "wall-clock limit"));
	/* What was taken is still described. */
	assert_int_equal(r.n, 1);
	assert_true(r.median_ms == 1.5);

	/* With min_samples met, running out of wall time is not an error. */
	q.min_samples = 1;
	q.min_time_ms = 1e9;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(opens),
		T(median_is_per_call),
		T(stops_at_min_time),
		T(stops_at_min_samples),
		T(stops_at_max_samples),
		T(defaults),
		T(samples_in_order),
		T(samples_cap),
		T(jitter),
		T(launch_failure),
		T(launch_failure_in_warmup),
		T(no_context),
		T(bad_requests),
		T(newer_caller),
		T(version_1_caller),
		T(wall_clock_limit),
	};

	return cmocka_run_group_tests(tests, fake_setup, NULL);
}
