/*
 * zlbt_graph_repeat() against the fake driver: a captured CUgraph's value
 * encodes its node counts (bits 0-15 kernels), each kernel node replays in
 * $FAKE_CUDA_KERNEL_NS, a built graph replays in the sum of its child
 * nodes, and its exec's value is that time (tests/fakes/fake_libcuda.c).
 * So a repeat's exec can be timed with zlbt_time_graph and every number
 * predicted. Older drivers: test_timer_repeat_cuda10.c, _nobuild.c.
 */
#include "timer_fake.h"

static long (*live_graphs)(void);
static long (*live_execs)(void);
static int (*is_chain)(uint64_t graph);

/* A captured graph of that many kernel nodes (and nothing else). */
static uint64_t kernels(uint64_t n)
{
	return n;
}

static int setup(void **state)
{
	if (fake_cuda_open())
		return -1;
	*(void **)&live_graphs = dlsym(fake_cuda, "fake_cuda_live_graphs");
	*(void **)&live_execs = dlsym(fake_cuda, "fake_cuda_live_execs");
	*(void **)&is_chain = dlsym(fake_cuda, "fake_cuda_graph_is_chain");
	return live_graphs && live_execs && is_chain ? 0 : -1;
}

/* fake_tidy, and nothing built is left alive, whatever the test did. */
static int tidy(void **state)
{
	int rc = fake_tidy(state);

	if (live_graphs() || live_execs()) {
		print_error("%ld graphs and %ld execs were not destroyed\n",
			    live_graphs(), live_execs());
		return -1;
	}
	return rc;
}

#define R(fn) cmocka_unit_test_setup_teardown(fn, fake_fresh, tidy)

static void release(uint64_t exec, uint64_t graph)
{
	char err[256] = "junk";

	assert_int_equal(zlbt_graph_repeat_release(exec, graph, err, sizeof(err)),
			 ZLBT_OK);
	assert_string_equal(err, "");
}

/* The repeat entry points arrived in ABI 5 and stay. */
static void abi_version(void **state)
{
	assert_true(zlbt_abi_version() >= 5);
}

static void replays_copies_in_a_row(void **state)
{
	struct zlbt_request q;
	struct zlbt_result r;
	struct zlbt_graph_info info;
	uint64_t exec = 1, graph = 1;
	char err[256] = "junk";

	/* T = 4 captured calls of one kernel each, 2.5 us a kernel; K = 32. */
	setenv("FAKE_CUDA_KERNEL_NS", "2500", 1);
	assert_int_equal(zlbt_graph_repeat(kernels(4), 8, &exec, &graph, err,
					   sizeof(err)), ZLBT_OK);
	assert_string_equal(err, "");
	assert_int_equal(exec, 8 * 4 * 2500);
	assert_true(graph != 0 && graph != kernels(4));
	assert_int_equal(live_graphs(), 1);
	assert_int_equal(live_execs(), 1);
	/* One after another: each copy waits for the one before. */
	assert_int_equal(is_chain(graph), 1);

	/* Eight child-graph nodes; the captured kernels are inside them. */
	memset(&info, 0, sizeof(info));
	info.struct_size = sizeof(info);
	assert_int_equal(zlbt_graph_info(graph, &info, err, sizeof(err)), ZLBT_OK);
	assert_int_equal(info.nodes, 8);
	assert_int_equal(info.others, 8);
	assert_int_equal(info.kernels + info.memcpys + info.memsets, 0);

	/* Timed as the K-call graph it stands for: 2.5 us per call. */
	q = request(exec, 32);
	q.min_samples = 10;
	result_init(&r);
	assert_int_equal(zlbt_time_graph(&q, &r, NULL, 0, err, sizeof(err)), ZLBT_OK);
	assert_int_equal(r.n, 10);
	assert_near(r.median_ms, 0.0025, 1e-9);    /* float events */
	assert_near(r.total_gpu_ms, 10 * 0.08, 1e-6);
	assert_int_equal(fake_launches(), 10);

	release(exec, graph);
	assert_int_equal(live_graphs(), 0);
	assert_int_equal(live_execs(), 0);
}

static void one_copy(void **state)
{
	uint64_t exec, graph;
	char err[256];

	assert_int_equal(zlbt_graph_repeat(kernels(3), 1, &exec, &graph, err,
					   sizeof(err)), ZLBT_OK);
	assert_int_equal(exec, 3 * 1000);       /* FAKE_CUDA_KERNEL_NS's default */
	assert_int_equal(is_chain(graph), 1);
	release(exec, graph);
}

static void child_is_cloned(void **state)
{
	uint64_t exec, graph, exec2, graph2;
	char err[256];

	/* A repeat of a repeat, whose child then goes: the clone stays. */
	assert_int_equal(zlbt_graph_repeat(kernels(2), 3, &exec, &graph, err,
					   sizeof(err)), ZLBT_OK);
	assert_int_equal(zlbt_graph_repeat(graph, 5, &exec2, &graph2, err,
					   sizeof(err)), ZLBT_OK);
	release(exec, graph);
	assert_int_equal(exec2, 5 * 3 * 2 * 1000);
	assert_int_equal(live_graphs(), 1);
	release(exec2, graph2);
}

static void bad_arguments(void **state)
{
	uint64_t exec = 7, graph = 7;
	char err[256];

	assert_int_equal(zlbt_graph_repeat(0, 4, &exec, &graph, err, sizeof(err)),
			 ZLBT_EINVAL);
	assert_non_null(strstr(err, "graph is 0"));
	/* Zeroed: no stale handle for a caller that ignores the status. */
	assert_int_equal(exec, 0);
	assert_int_equal(graph, 0);

	exec = graph = 7;
	assert_int_equal(zlbt_graph_repeat(kernels(1), 0, &exec, &graph, err,
					   sizeof(err)), ZLBT_EINVAL);
	assert_non_null(strstr(err, "copies is 0"));
	assert_int_equal(exec, 0);
	assert_int_equal(graph, 0);

	exec = 7;
	assert_int_equal(zlbt_graph_repeat(kernels(1), 4, &exec, NULL, err,
					   sizeof(err)), ZLBT_EINVAL);
	assert_non_null(strstr(err, "graph_out"));
	assert_int_equal(exec, 0);
	graph = 7;
	assert_int_equal(zlbt_graph_repeat(kernels(1), 4, NULL, &graph, err,
					   sizeof(err)), ZLBT_EINVAL);
	assert_int_equal(graph, 0);
	assert_int_equal(zlbt_graph_repeat(kernels(1), 4, NULL, NULL, NULL, 0),
			 ZLBT_EINVAL);
	assert_int_equal(live_graphs(), 0);
}

static void needs_a_context(void **state)
{
	uint64_t exec = 7, graph = 7;
	char err[256];

	setenv("FAKE_CUDA_NO_CONTEXT", "1", 1);
	assert_int_equal(zlbt_graph_repeat(kernels(1), 4, &exec, &graph, err,
					   sizeof(err)), ZLBT_EINVAL);
	assert_non_null(strstr(err, "no current CUDA context"));
	assert_int_equal(exec, 0);
	assert_int_equal(graph, 0);
	assert_int_equal(live_graphs(), 0);
}

static void create_fails(void **state)
{
	uint64_t exec = 7, graph = 7;
	char err[256];

	setenv("FAKE_CUDA_GRAPH_CREATE_FAIL", "1", 1);
	assert_int_equal(zlbt_graph_repeat(kernels(1), 4, &exec, &graph, err,
					   sizeof(err)), ZLBT_EDRIVER);
	assert_string_equal(err, "cuGraphCreate failed: CUDA_ERROR_OUT_OF_MEMORY "
			    "(out of memory)");
	assert_int_equal(exec, 0);
	assert_int_equal(graph, 0);
}

static void child_fails_mid_build(void **state)
{
	uint64_t exec = 7, graph = 7;
	char err[256];

	/* Three copies go in, the fourth fails: the three are destroyed. */
	setenv("FAKE_CUDA_CHILD_FAIL_AFTER", "3", 1);
	assert_int_equal(zlbt_graph_repeat(kernels(2), 8, &exec, &graph, err,
					   sizeof(err)), ZLBT_EDRIVER);
	assert_string_equal(err, "cuGraphAddChildGraphNode (copy 4 of 8) failed: "
			    "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
	assert_int_equal(exec, 0);
	assert_int_equal(graph, 0);
	assert_int_equal(live_graphs(), 0);
	assert_int_equal(live_execs(), 0);
}

static void child_refused(void **state)
{
	uint64_t exec = 7, graph = 7, gone_exec, gone;
	char err[256];

	/* A child the driver does not know (a graph since destroyed). */
	assert_int_equal(zlbt_graph_repeat(kernels(1), 1, &gone_exec, &gone, err,
					   sizeof(err)), ZLBT_OK);
	release(gone_exec, gone);
	assert_int_equal(zlbt_graph_repeat(gone, 2, &exec, &graph, err,
					   sizeof(err)), ZLBT_EDRIVER);
	assert_string_equal(err, "cuGraphAddChildGraphNode (copy 1 of 2) failed: "
			    "CUDA_ERROR_INVALID_VALUE (invalid argument)");
	assert_int_equal(exec, 0);
	assert_int_equal(graph, 0);
}

static void instantiate_fails(void **state)
{
	uint64_t exec = 7, graph = 7;
	char err[256];

	setenv("FAKE_CUDA_INSTANTIATE_FAIL", "1", 1);
	assert_int_equal(zlbt_graph_repeat(kernels(2), 8, &exec, &graph, err,
					   sizeof(err)), ZLBT_EDRIVER);
	assert_string_equal(err, "cuGraphInstantiateWithFlags failed: "
			    "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
	assert_int_equal(exec, 0);
	assert_int_equal(graph, 0);
	assert_int_equal(live_graphs(), 0);

	/* The fake has no exec for work that takes no time: memcpys only. */
	unsetenv("FAKE_CUDA_INSTANTIATE_FAIL");
	assert_int_equal(zlbt_graph_repeat(1ull << 16, 2, &exec, &graph, err,
					   sizeof(err)), ZLBT_EDRIVER);
	assert_non_null(strstr(err, "cuGraphInstantiateWithFlags failed"));
	assert_int_equal(live_graphs(), 0);
}

static void release_rules(void **state)
{
	uint64_t exec, graph;
	char err[256] = "junk";

	/* Nothing to release needs no driver call. */
	release(0, 0);

	assert_int_equal(zlbt_graph_repeat(kernels(1), 2, &exec, &graph, err,
					   sizeof(err)), ZLBT_OK);
	release(exec, 0);
	assert_int_equal(live_execs(), 0);
	assert_int_equal(live_graphs(), 1);
	release(0, graph);
	assert_int_equal(live_graphs(), 0);

	/* Both are tried; the first failure is the one named. */
	assert_int_equal(zlbt_graph_repeat(kernels(1), 2, &exec, &graph, err,
					   sizeof(err)), ZLBT_OK);
	assert_int_equal(zlbt_graph_repeat_release(exec + 1, graph, err,
						   sizeof(err)), ZLBT_EDRIVER);
	assert_string_equal(err, "cuGraphExecDestroy failed: "
			    "CUDA_ERROR_INVALID_VALUE (invalid argument)");
	assert_int_equal(live_graphs(), 0);
	/* Twice is a driver error, not a crash. */
	assert_int_equal(zlbt_graph_repeat_release(0, graph, err, sizeof(err)),
			 ZLBT_EDRIVER);
	assert_string_equal(err, "cuGraphDestroy failed: "
			    "CUDA_ERROR_INVALID_VALUE (invalid argument)");
	release(exec, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(abi_version),
		R(replays_copies_in_a_row),
		R(one_copy),
		R(child_is_cloned),
		R(bad_arguments),
		R(needs_a_context),
		R(create_fails),
		R(child_fails_mid_build),
		R(child_refused),
		R(instantiate_fails),
		R(release_rules),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
