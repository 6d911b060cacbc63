/*
 * A cold L2 against the fake driver: one flush of the device's L2 size
 * (the fake's 60 MiB) before every replay, warm-up included, and none of
 * it in the timed interval -- the fake's memset advances its GPU clock
 * like real work, so a flush inside an event pair would show.
 */
#include "timer_fake.h"

#define L2_BYTES (60ull << 20)
#define FLUSH_NS (L2_BYTES / 2048)      /* the fake's memset cost */

static unsigned long long (*fake_clock)(void);
static unsigned long long (*fake_memsets)(void);
static unsigned long long (*fake_memset_bytes)(void);
static int (*fake_memset_last)(void);
static long (*fake_live_allocs)(void);

static int setup_driver(void **state)
{
	if (fake_cuda_open())
		return -1;
	*(void **)&fake_clock = dlsym(fake_cuda, "fake_cuda_clock_ns");
	*(void **)&fake_memsets = dlsym(fake_cuda, "fake_cuda_memset_count");
	*(void **)&fake_memset_bytes = dlsym(fake_cuda,
					     "fake_cuda_memset_bytes");
	*(void **)&fake_memset_last = dlsym(fake_cuda,
					    "fake_cuda_memset_last_value");
	*(void **)&fake_live_allocs = dlsym(fake_cuda, "fake_cuda_live_allocs");
	return fake_clock && fake_memsets && fake_memset_bytes &&
	       fake_memset_last && fake_live_allocs ? 0 : -1;
}

/* Every path frees the flush buffer and the events. */
static int tidy(void **state)
{
	fake_unset_knobs();
	if (fake_live_events() || fake_live_allocs()) {
		print_error("%ld events and %ld allocations were not freed\n",
			    fake_live_events(), fake_live_allocs());
		return -1;
	}
	return 0;
}

static void flushes_every_replay(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	double samples[128];
	char err[256];

	q.min_samples = 100;
	q.warmup_replays = 3;
	q.l2_mode = ZLBT_L2_COLD;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, samples, 128, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 100);
	assert_int_equal(r.l2_flush_bytes, L2_BYTES);
	/* One flush per replay, warm-up replays too, each of the whole L2. */
	assert_int_equal(fake_launches(), 103);
	assert_int_equal(fake_memsets(), 103);
	assert_int_equal(fake_memset_bytes(), 103 * L2_BYTES);
	/* A different byte each time: 0, 1, ..., 102. */
	assert_int_equal(fake_memset_last(), 102);
	/* The flushes took GPU time... */
	assert_int_equal(fake_clock(), 103 * (1500000 + FLUSH_NS));
	/* ...and none of it was timed. */
	for (int i = 0; i < 100; i++)
		assert_true(samples[i] == 1.5);
	assert_true(r.median_ms == 1.5 && r.max_ms == 1.5);
	assert_near(r.total_gpu_ms, 150, 1e-9);
}

static void min_time_counts_replays_only(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	/* As hot: 67 replays of 1.5 ms, the flushes do not count. */
	q.min_samples = 10;
	q.min_time_ms = 100;
	q.l2_mode = ZLBT_L2_COLD;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 67);
	assert_int_equal(fake_memsets(), 67);
}

static void hot_does_not_flush(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	q.min_samples = 20;
	q.warmup_replays = 2;
	result_init(&r);
	r.l2_flush_bytes = 12345;
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(r.n, 20);
	assert_int_equal(r.l2_flush_bytes, 0);
	assert_int_equal(fake_memsets(), 0);
	assert_int_equal(fake_clock(), 22 * 1500000ull);
}

static void frees_after_failed_launch(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	setenv("FAKE_CUDA_LAUNCH_FAIL_AFTER", "25", 1);
	q.min_samples = 100;
	q.l2_mode = ZLBT_L2_COLD;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EDRIVER);
	assert_non_null(strstr(err, "CUDA_ERROR_LAUNCH_FAILED"));
	assert_int_equal(r.n, 0);
	assert_int_equal(r.l2_flush_bytes, 0);
	/* The 26th replay's flush was queued before its launch failed. */
	assert_int_equal(fake_memsets(), 26);
	/* tidy() checks the buffer was freed. */
}

static void frees_after_failed_warmup(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	setenv("FAKE_CUDA_LAUNCH_FAIL_AFTER", "1", 1);
	q.warmup_replays = 4;
	q.l2_mode = ZLBT_L2_COLD;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EDRIVER);
	assert_int_equal(fake_memsets(), 2);
}

static void alloc_failure(void **state)
{
	struct zlbt_request q = request(1500000, 1);
	struct zlbt_result r;
	char err[256];

	setenv("FAKE_CUDA_MEMALLOC_FAIL", "1", 1);
	q.l2_mode = ZLBT_L2_COLD;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_EDRIVER);
	assert_string_equal(err, "cuMemAlloc of the 62914560-byte L2 flush "
			    "buffer failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
	/* Nothing ran on a half-prepared measurement. */
	assert_int_equal(fake_launches(), 0);
	assert_int_equal(fake_memsets(), 0);
}

#undef T
#define T(fn) cmocka_unit_test_setup_teardown(fn, fake_fresh, tidy)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(flushes_every_replay),
		T(min_time_counts_replays_only),
		T(hot_does_not_flush),
		T(frees_after_failed_launch),
		T(frees_after_failed_warmup),
		T(alloc_failure),
	};

	return cmocka_run_group_tests(tests, setup_driver, NULL);
}
