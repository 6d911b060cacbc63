/*
 * zlbt_graph_repeat() on a CUDA 10 driver (the fake built with
 * FAKE_CUDA_GRAPH_BUILD=1): no cuGraphInstantiateWithFlags and no
 * cuGraphInstantiate_v2, only the five-argument cuGraphInstantiate, which
 * the repeat falls back to. A binary of its own: the driver is loaded once
 * per process.
 */
#include "timer_fake.h"

static long (*live_graphs)(void);
static long (*live_execs)(void);

static int setup(void **state)
{
	fake_unset_knobs();
	setenv("ZLB_LIBCUDA", ZLB_FAKECUDA_CUDA10, 1);
	/* The same path gives the same handle the timer's loader gets. */
	fake_cuda = dlopen(ZLB_FAKECUDA_CUDA10, RTLD_NOW | RTLD_LOCAL);
	if (!fake_cuda)
		return -1;
	*(void **)&fake_reset = dlsym(fake_cuda, "fake_cuda_reset");
	*(void **)&fake_launches = dlsym(fake_cuda, "fake_cuda_launch_count");
	*(void **)&fake_live_events = dlsym(fake_cuda, "fake_cuda_live_events");
	*(void **)&live_graphs = dlsym(fake_cuda, "fake_cuda_live_graphs");
	*(void **)&live_execs = dlsym(fake_cuda, "fake_cuda_live_execs");
	return fake_reset && fake_launches && fake_live_events && live_graphs &&
	       live_execs ? 0 : -1;
}

static void old_instantiate(void **state)
{
	struct zlbt_request q;
	struct zlbt_result r;
	uint64_t exec, graph;
	char err[256] = "junk";

	assert_null(dlsym(fake_cuda, "cuGraphInstantiateWithFlags"));
	assert_null(dlsym(fake_cuda, "cuGraphInstantiate_v2"));
	assert_int_equal(zlbt_graph_repeat(5, 4, &exec, &graph, err, sizeof(err)),
			 ZLBT_OK);
	assert_string_equal(err, "");
	assert_int_equal(exec, 4 * 5 * 1000);
	q = request(exec, 4);
	q.min_samples = 10;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)), ZLBT_OK);
	assert_near(r.median_ms, 0.005, 1e-9);
	assert_int_equal(zlbt_graph_repeat_release(exec, graph, err, sizeof(err)),
			 ZLBT_OK);
	assert_int_equal(live_graphs(), 0);
	assert_int_equal(live_execs(), 0);
}

static void old_instantiate_fails(void **state)
{
	uint64_t exec = 7, graph = 7;
	char err[256];

	setenv("FAKE_CUDA_INSTANTIATE_FAIL", "1", 1);
	assert_int_equal(zlbt_graph_repeat(5, 4, &exec, &graph, err, sizeof(err)),
			 ZLBT_EDRIVER);
	assert_string_equal(err, "cuGraphInstantiate failed: "
			    "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
	assert_int_equal(exec, 0);
	assert_int_equal(graph, 0);
	assert_int_equal(live_graphs(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(old_instantiate),
		T(old_instantiate_fails),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
