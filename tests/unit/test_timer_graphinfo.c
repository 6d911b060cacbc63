/*
 * zlbt_graph_info() against the fake driver, whose CUgraph values encode
 * their node counts: bits 0-15 kernels, 16-31 memcpys, 32-47 memsets,
 * 48-63 other nodes (see tests/fakes/fake_libcuda.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "timer/zlbtimer.h"

static uint64_t graph(uint64_t kernels, uint64_t memcpys, uint64_t memsets,
		      uint64_t others)
{
	return kernels | memcpys << 16 | memsets << 32 | others << 48;
}

static int setup_driver(void **state)
{
	unsetenv("FAKE_CUDA_DEVICES");
	setenv("ZLB_LIBCUDA", ZLB_FAKECUDA, 1);
	return 0;
}

static void info_init(struct zlbt_graph_info *info)
{
	memset(info, 0x5a, sizeof(*info));
	info->struct_size = sizeof(*info);
}

static void counts_by_type(void **state)
{
	struct zlbt_graph_info info;
	char err[256] = "junk";

	info_init(&info);
	assert_int_equal(zlbt_graph_info(graph(3, 2, 1, 4), &info, err, sizeof(err)),
			 ZLBT_OK);
	assert_string_equal(err, "");
	assert_int_equal(info.struct_size, sizeof(info));
	assert_int_equal(info.nodes, 10);
	assert_int_equal(info.kernels, 3);
	assert_int_equal(info.memcpys, 2);
	assert_int_equal(info.memsets, 1);
	assert_int_equal(info.others, 4);

	/* Kernels only: what a graph of Triton launches is. */
	info_init(&info);
	assert_int_equal(zlbt_graph_info(graph(7, 0, 0, 0), &info, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(info.nodes, 7);
	assert_int_equal(info.kernels, 7);
	assert_int_equal(info.memcpys + info.memsets + info.others, 0);
}

static void large_graph(void **state)
{
	struct zlbt_graph_info info;
	char err[256];

	/* Every "other" type (host ... conditional) is counted as other. */
	info_init(&info);
	assert_int_equal(zlbt_graph_info(graph(65535, 1000, 3, 33), &info,
					 err, sizeof(err)), ZLBT_OK);
	assert_int_equal(info.nodes, 65535 + 1000 + 3 + 33);
	assert_int_equal(info.kernels, 65535);
	assert_int_equal(info.memcpys, 1000);
	assert_int_equal(info.memsets, 3);
	assert_int_equal(info.others, 33);
}

static void bad_arguments(void **state)
{
	struct zlbt_graph_info info;
	char err[256];

	info_init(&info);
	assert_int_equal(zlbt_graph_info(0, &info, err, sizeof(err)), ZLBT_EINVAL);
	assert_non_null(strstr(err, "graph is 0"));
	/* Zeroed: no junk left for a caller that ignores the status. */
	assert_int_equal(info.nodes, 0);
	assert_int_equal(info.kernels, 0);

	assert_int_equal(zlbt_graph_info(graph(1, 0, 0, 0), NULL, err, sizeof(err)),
			 ZLBT_EINVAL);
	info_init(&info);
	info.struct_size = 8;
	assert_int_equal(zlbt_graph_info(graph(1, 0, 0, 0), &info, err, sizeof(err)),
			 ZLBT_EINVAL);
	assert_non_null(strstr(err, "struct_size"));
	assert_int_equal(info.nodes, 0x5a5a5a5a);
	assert_int_equal(zlbt_graph_info(graph(1, 0, 0, 0), NULL, NULL, 0),
			 ZLBT_EINVAL);
}

static void newer_caller(void **state)
{
	struct {
		struct zlbt_graph_info info;
		uint32_t appended;
	} big;
	char err[256];

	memset(&big, 0, sizeof(big));
	big.info.struct_size = sizeof(big);
	big.appended = 42;
	assert_int_equal(zlbt_graph_info(graph(2, 1, 0, 0), &big.info, err,
					 sizeof(err)), ZLBT_OK);
	assert_int_equal(big.info.nodes, 3);
	assert_int_equal(big.appended, 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts_by_type),
		cmocka_unit_test(large_graph),
		cmocka_unit_test(bad_arguments),
		cmocka_unit_test(newer_caller),
	};

	return cmocka_run_group_tests(tests, setup_driver, NULL);
}
