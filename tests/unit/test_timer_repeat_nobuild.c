/*
 * zlbt_graph_repeat() on a driver that cannot build graphs (the fake built
 * with FAKE_CUDA_GRAPH_BUILD=0): a driver error naming what is missing,
 * while the rest of the library, which needs none of it, still works. A
 * binary of its own: the driver is loaded once per process.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "timer/zlbtimer.h"

static int setup_driver(void **state)
{
	unsetenv("FAKE_CUDA_DEVICES");
	unsetenv("FAKE_CUDA_NO_CONTEXT");
	setenv("ZLB_LIBCUDA", ZLB_FAKECUDA_NOBUILD, 1);
	return 0;
}

static void names_missing_entry_point(void **state)
{
	uint64_t exec = 7, graph = 7;
	char err[512], want[512];

	assert_int_equal(zlbt_open(err, sizeof(err)), ZLBT_OK);
	assert_int_equal(zlbt_graph_repeat(3, 4, &exec, &graph, err, sizeof(err)),
			 ZLBT_EDRIVER);
	snprintf(want, sizeof(want), "the CUDA driver %s lacks cuGraphCreate "
		 "(driver too old?)", ZLB_FAKECUDA_NOBUILD);
	assert_string_equal(err, want);
	assert_int_equal(exec, 0);
	assert_int_equal(graph, 0);
	/* Bad arguments are still told first. */
	assert_int_equal(zlbt_graph_repeat(3, 0, &exec, &graph, err, sizeof(err)),
			 ZLBT_EINVAL);
}

static void release_without_entry_points(void **state)
{
	char err[512] = "junk";

	assert_int_equal(zlbt_graph_repeat_release(0, 0, err, sizeof(err)), ZLBT_OK);
	assert_string_equal(err, "");
	assert_int_equal(zlbt_graph_repeat_release(1000, 0, err, sizeof(err)),
			 ZLBT_EDRIVER);
	assert_non_null(strstr(err, "lacks cuGraphExecDestroy or cuGraphDestroy"));
}

static void the_rest_still_works(void **state)
{
	struct zlbt_graph_info info;
	char err[256];

	memset(&info, 0, sizeof(info));
	info.struct_size = sizeof(info);
	assert_int_equal(zlbt_graph_info(3 | 1ull << 16, &info, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(info.nodes, 4);
	assert_int_equal(info.kernels, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_missing_entry_point),
		cmocka_unit_test(release_without_entry_points),
		cmocka_unit_test(the_rest_still_works),
	};

	return cmocka_run_group_tests(tests, setup_driver, NULL);
}
