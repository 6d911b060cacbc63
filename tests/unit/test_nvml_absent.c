/*
 * No NVML library (a machine without NVIDIA's driver, like the CI
 * runners): "no NVML here" with a sentence, from every entry point, never
 * a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/nvml.h"

#define MISSING "/nonexistent/zlbench-test/libnvidia-ml.so.1"

static int setup_nvml(void **state)
{
	setenv("ZLB_LIBNVML", MISSING, 1);
	return 0;
}

static void load_says_no_nvml(void **state)
{
	char err[256] = "";

	assert_int_equal(nvml_load(err, sizeof(err)), 1);
	/* "no NVML: cannot load $ZLB_LIBNVML (<path>: <why>)" */
	assert_true(strncmp(err, "no NVML: cannot load $ZLB_LIBNVML (", 35) == 0);
	assert_non_null(strstr(err, MISSING));
	assert_non_null(strstr(err, "No such file"));
	/* The same answer again; tiny buffers are fine. */
	assert_int_equal(nvml_load(NULL, 0), 1);
	assert_int_equal(nvml_load(err, 1), 1);
	assert_string_equal(err, "");
}

static void state_says_no_nvml(void **state)
{
	struct nvml_state st;
	char err[256];

	memset(&st, 0x5a, sizeof(st));
	assert_int_equal(nvml_state_by_uuid("GPU-facec0da-0000-4000-8000-"
					    "000000000000", &st, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "no NVML"));
	/* Zeroed, not left as it was: valid says "not read". */
	assert_int_equal(st.valid, 0);
	assert_int_equal(st.sm_clock_mhz, 0);
	assert_int_equal(st.nprocs, 0);
	assert_int_equal(nvml_state_by_pci("0000:00:00.0", &st, err, sizeof(err)), 1);
	assert_int_equal(st.valid, 0);
}

static void clock_reads_nothing(void **state)
{
	unsigned mhz = 7;

	assert_int_not_equal(nvml_sm_clock_by_pci("0000:00:00.0", &mhz), 0);
	assert_int_equal(mhz, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(load_says_no_nvml),
		cmocka_unit_test(state_says_no_nvml),
		cmocka_unit_test(clock_reads_nothing),
	};

	return cmocka_run_group_tests(tests, setup_nvml, NULL);
}
