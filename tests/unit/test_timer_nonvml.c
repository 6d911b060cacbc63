/*
 * Clock checks where there is no NVML (a CUDA driver without its
 * management library, or $ZLB_LIBNVML pointing nowhere): the measurement
 * goes on unchecked, with clock_mhz 0, and that is not an error.
 */
#include "timer_fake.h"

#define MISSING "/nonexistent/zlbench-test/libnvidia-ml.so.1"

static int setup_driver(void **state)
{
	if (fake_cuda_open())
		return -1;
	setenv("ZLB_LIBNVML", MISSING, 1);
	return 0;
}

static void unchecked_without_nvml(void **state)
{
	struct zlbt_request q;
	struct zlbt_result r;
	char err[256] = "junk";

	memset(&q, 0, sizeof(q));
	q.struct_size = sizeof(q);
	q.graph_exec = 1500000;
	q.min_samples = 100;
	q.clock_check = ZLBT_CLOCK_CHECK;
	memset(&r, 0, sizeof(r));
	r.struct_size = sizeof(r);
	r.clock_mhz = 7;
	r.clock_min_mhz = 7;
	r.discarded = 7;
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_OK);
	assert_string_equal(err, "");
	assert_int_equal(r.n, 100);
	assert_int_equal(r.stop_reason, ZLBT_STOP_RULE);
	assert_true(r.clock_mhz == 0);
	assert_true(r.clock_min_mhz == 0);
	assert_int_equal(r.discarded, 0);
	assert_true(r.median_ms == 1.5);
	assert_int_equal(fake_launches(), 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unchecked_without_nvml),
	};

	return cmocka_run_group_tests(tests, setup_driver, NULL);
}
