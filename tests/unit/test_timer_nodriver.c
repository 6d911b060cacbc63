/*
 * No driver library at all (a machine without NVIDIA's driver, like the
 * CI runners): a clean "no device" sentence, never a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/cuda_driver.h"
#include "timer/zlbtimer.h"

#define MISSING "/nonexistent/zlbench-test/libcuda.so.1"

static int setup_driver(void **state)
{
	setenv("ZLB_LIBCUDA", MISSING, 1);
	return 0;
}

static void open_says_no_device(void **state)
{
	char err[256] = "";

	assert_int_equal(zlbt_open(err, sizeof(err)), ZLBT_ENODEV);
	/* "no CUDA driver: cannot load $ZLB_LIBCUDA (<path>: <why>)" */
	assert_true(strncmp(err, "no CUDA driver: cannot load $ZLB_LIBCUDA (",
			    42) == 0);
	assert_non_null(strstr(err, MISSING));
	assert_non_null(strstr(err, "No such file"));
	/* Asking again gives the same answer; tiny buffers are fine. */
	assert_int_equal(zlbt_open(NULL, 0), ZLBT_ENODEV);
	assert_int_equal(zlbt_open(err, 1), ZLBT_ENODEV);
	assert_string_equal(err, "");
}

static void list_says_no_device(void **state)
{
	struct cuda_device_info *v = NULL;
	int count = -1, drv = -1;
	char err[256];

	assert_int_equal(cuda_list_devices(&v, &count, &drv, err, sizeof(err)), 1);
	assert_null(v);
	assert_int_equal(count, 0);
	assert_non_null(strstr(err, "no CUDA driver"));
}

static void timing_says_no_device(void **state)
{
	struct zlbt_request q;
	struct zlbt_result r;
	char err[256];

	memset(&q, 0, sizeof(q));
	q.struct_size = sizeof(q);
	q.graph_exec = 1000;
	memset(&r, 0, sizeof(r));
	r.struct_size = sizeof(r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_ENODEV);
	assert_non_null(strstr(err, "no CUDA driver"));
}

static void summarize_needs_no_driver(void **state)
{
	const double v[] = { 2, 1, 3 };
	struct zlbt_result r;

	memset(&r, 0, sizeof(r));
	r.struct_size = sizeof(r);
	assert_int_equal(zlbt_summarize(v, 3, &r), ZLBT_OK);
	assert_true(r.median_ms == 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(open_says_no_device),
		cmocka_unit_test(list_says_no_device),
		cmocka_unit_test(timing_says_no_device),
		cmocka_unit_test(summarize_needs_no_driver),
	};

	return cmocka_run_group_tests(tests, setup_driver, NULL);
}
