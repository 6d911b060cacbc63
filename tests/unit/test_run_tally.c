/*
 * run_tally.c and tee.c on a graph without a kernel node (GRAPH_NO_KERNELS):
 * the tally counts its rows, and the tee gives its marker line a line of
 * its own in run.log when it arrives behind pytest -v's unfinished line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/paths.h"
#include "rundir/run_tally.h"
#include "lib/strbuf.h"
#include "run/tee.h"

static char *scratch_dir(void)
{
	char tmpl[] = "/tmp/zlb-tally-XXXXXX";

	assert_non_null(mkdtemp(tmpl));
	return xstrdup(tmpl);
}

static void put(const char *dir, const char *name, const char *text)
{
	char *path = path_join(dir, name);

	assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
	free(path);
}

#define ROW(name, tm, gm) \
	"{\"kind\": \"row\", \"op\": \"" name "\", \"op_name\": \"" name "\", " \
	"\"dtype\": \"torch.float16\", " \
	"\"shape_detail\": \"[1024]\", \"status\": \"SUCCESS\", " \
	"\"torch\": {\"timer\": \"graph\", \"markers\": " tm "}, " \
	"\"gems\": {\"timer\": \"graph\", \"markers\": " gm "}}\n"

static void test_rows_without_kernels_are_counted(void **state)
{
	char *dir = scratch_dir();
	struct run_tally t;

	put(dir, "results.jsonl",
	    ROW("conj", "[\"GRAPH_NO_KERNELS\"]", "[]")
	    ROW("fill", "[\"GRAPH_MEMSET_NODES\", \"GRAPH_NO_KERNELS\"]", "[]")
	    ROW("copy", "[\"GRAPH_MEMCPY_NODES\"]", "[]")
	    ROW("add", "[]", "[]"));
	put(dir, "events.jsonl",
	    "{\"event\": \"GRAPH_NO_KERNELS\", \"role\": \"torch\", \"nodes\": 0}\n"
	    "{\"event\": \"GRAPH_NO_KERNELS\", \"role\": \"torch\", \"nodes\": 64}\n");
	assert_int_equal(run_tally_read(dir, &t), 0);
	assert_int_equal(t.rows, 4);
	assert_int_equal(t.rows_graph, 4);
	assert_int_equal(t.rows_no_kernels, 2);
	assert_int_equal(t.rows_copy_engine, 1);
	assert_int_equal(json_array_size(t.no_kernel_rows), 2);
	assert_string_equal(json_string_value(json_array_get(t.no_kernel_rows, 0)),
			    "conj torch.float16 [1024]");
	assert_string_equal(json_string_value(json_array_get(t.no_kernel_rows, 1)),
			    "fill torch.float16 [1024]");
	assert_int_equal(json_integer_value(json_object_get(t.markers, "GRAPH_NO_KERNELS")), 2);
	run_tally_release(&t);
	assert_int_equal(remove_tree(dir), 0);
	free(dir);
}

/* TUNE_TIMING is summed over the tests; what is not a count and a time is left out. */
static void test_tuning_is_summed_and_garbage_left_out(void **state)
{
	char *dir = scratch_dir();
	struct run_tally t;

	put(dir, "events.jsonl",
	    "{\"event\": \"TUNE_TIMING\", \"nodeid\": \"a\", \"calls\": 42, \"seconds\": 17.25}\n"
	    "{\"event\": \"TUNE_TIMING\", \"nodeid\": \"b\", \"calls\": 3, \"seconds\": 0.75}\n"
	    "{\"event\": \"TUNE_TIMING\", \"calls\": \"many\", \"seconds\": 1}\n"
	    "{\"event\": \"TUNE_TIMING\", \"calls\": -5, \"seconds\": 1}\n"
	    "{\"event\": \"TUNE_TIMING\", \"calls\": 9223372036854775807, \"seconds\": 1}\n"
	    "{\"event\": \"TUNE_TIMING\", \"calls\": 1, \"seconds\": -2}\n"
	    "{\"event\": \"TUNE_TIMING\", \"calls\": 1, \"seconds\": 1e300}\n"
	    "{\"event\": \"TUNE_TIMING\", \"calls\": 1}\n");
	assert_int_equal(run_tally_read(dir, &t), 0);
	assert_int_equal(t.tune_calls, 45);
	assert_true(t.tune_s > 17.99 && t.tune_s < 18.01);
	/* and it is no marker: nothing that weakens a row */
	assert_null(json_object_get(t.markers, "TUNE_TIMING"));
	run_tally_release(&t);
	assert_int_equal(remove_tree(dir), 0);
	free(dir);
}

static void test_tee_gives_the_marker_its_own_line(void **state)
{
	static const char line[] = "benchmark/test_conj.py::test_conj "
				   "GRAPH_NO_KERNELS nodes=0 role=torch";
	char *dir = scratch_dir(), *log = path_join(dir, "run.log");
	int devnull = open("/dev/null", O_WRONLY);
	struct strbuf sb = STRBUF_INIT;
	struct tee t;

	assert_true(devnull >= 0);
	assert_int_equal(tee_open(&t, log, devnull, 0), 0);
	tee_pump_ops.on_line(&t, line, strlen(line), 0);
	tee_close(&t);
	close(devnull);
	assert_true(strbuf_read_file(&sb, log, 1 << 20) >= 0);
	assert_string_equal(sb.buf, "benchmark/test_conj.py::test_conj\n"
			    "GRAPH_NO_KERNELS nodes=0 role=torch\n");
	strbuf_release(&sb);
	free(log);
	assert_int_equal(remove_tree(dir), 0);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_without_kernels_are_counted),
		cmocka_unit_test(test_tuning_is_summed_and_garbage_left_out),
		cmocka_unit_test(test_tee_gives_the_marker_its_own_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
