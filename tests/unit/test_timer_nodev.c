/*
 * A driver that is present but sees no device (the fake with
 * FAKE_CUDA_DEVICES=0: cuInit says CUDA_ERROR_NO_DEVICE, as the real one
 * does with CUDA_VISIBLE_DEVICES=""). Everything answers "no device".
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

#define NO_DEVICE "no CUDA device: cuInit reports CUDA_ERROR_NO_DEVICE " \
		  "(no CUDA-capable device is detected)"

static int setup_driver(void **state)
{
	setenv("FAKE_CUDA_DEVICES", "0", 1);
	setenv("ZLB_LIBCUDA", ZLB_FAKECUDA, 1);
	return 0;
}

static void list_says_no_device(void **state)
{
	struct cuda_device_info *v = (void *)&v;
	int count = -1, drv = -1;
	char err[256];

	assert_int_equal(cuda_list_devices(&v, &count, &drv, err, sizeof(err)), 1);
	assert_null(v);
	assert_int_equal(count, 0);
	assert_int_equal(drv, 0);
	assert_string_equal(err, NO_DEVICE);
}

static void load_answer_is_kept(void **state)
{
	const struct cuda_driver *d = (void *)&d;
	char err[256];

	/* As the driver itself: a failed cuInit is not retried. */
	setenv("FAKE_CUDA_DEVICES", "1", 1);
	assert_int_equal(cuda_driver_load(&d, err, sizeof(err)), 1);
	assert_null(d);
	assert_string_equal(err, NO_DEVICE);
	setenv("FAKE_CUDA_DEVICES", "0", 1);
}

static void timer_says_no_device(void **state)
{
	struct zlbt_request q;
	struct zlbt_result r;
	char err[256];

	assert_int_equal(zlbt_open(err, sizeof(err)), ZLBT_ENODEV);
	assert_string_equal(err, NO_DEVICE);

	memset(&q, 0, sizeof(q));
	q.struct_size = sizeof(q);
	q.graph_exec = 1000;
	memset(&r, 0, sizeof(r));
	r.struct_size = sizeof(r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)),
			 ZLBT_ENODEV);
	assert_string_equal(err, NO_DEVICE);
	assert_int_equal(r.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(list_says_no_device),
		cmocka_unit_test(load_answer_is_kept),
		cmocka_unit_test(timer_says_no_device),
	};

	return cmocka_run_group_tests(tests, setup_driver, NULL);
}
