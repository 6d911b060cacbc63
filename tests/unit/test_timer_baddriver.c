/*
 * A library that loads but is not a CUDA driver (libm stands in): that is
 * a broken installation, not "no device", so the answer is a driver error
 * that names the missing entry point.
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

static int setup_driver(void **state)
{
	setenv("ZLB_LIBCUDA", "libm.so.6", 1);
	return 0;
}

static void names_missing_entry_point(void **state)
{
	struct cuda_device_info *v = NULL;
	int count = -1;
	char err[256];

	assert_int_equal(cuda_list_devices(&v, &count, NULL, err, sizeof(err)), -1);
	assert_null(v);
	assert_string_equal(err, "the CUDA driver libm.so.6 lacks cuInit "
			    "(driver too old?)");
	assert_int_equal(zlbt_open(err, sizeof(err)), ZLBT_EDRIVER);
	assert_non_null(strstr(err, "lacks cuInit"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_missing_entry_point),
	};

	return cmocka_run_group_tests(tests, setup_driver, NULL);
}
