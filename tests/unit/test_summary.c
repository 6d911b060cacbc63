/*
 * summary.c / summary_out.c: a batch directory read into one table, and
 * results_file.c's reader (the samples_ms shortcut must not change what is
 * read). Data: tests/data/summary/ (see the files for the cases).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "rundir/results_file.h"
#include "lib/strbuf.h"
#include "batch/summary.h"

#define DATA ZLB_TEST_DATA "/summary"

static struct strbuf msgs = STRBUF_INIT;

static void capture(const char *prefix, const char *msg)
{
	strbuf_addf(&msgs, "%s%s\n", prefix, msg);
}

static int setup(void **state)
{
	strbuf_reset(&msgs);
	set_error_routine(capture);
	set_warning_routine(capture);
	return 0;
}

static int teardown(void **state)
{
	set_error_routine(NULL);
	set_warning_routine(NULL);
	return 0;
}

static const struct summary_op *find_op(const struct summary *s, const char *repo,
					const char *op)
{
	for (size_t i = 0; i < s->nr_ops; i++)
		if (!strcmp(s->ops[i].repo, repo) && !strcmp(s->ops[i].op, op))
			return &s->ops[i];
	return NULL;
}

static void test_batch_with_ops_status(void **state)
{
	struct summary s;
	const struct summary_op *o;
	static const char *const order[] = { "main/broken", "main/extra", "main/layer_norm",
		"main/softmax", "main/sort", "main/tuned_rowsum", "main/upsample", "vllm/fused_moe" };

	summary_init(&s);
	assert_int_equal(summary_load(&s, DATA "/batch"), 0);
	assert_true(s.has_ops_status);
	assert_int_equal(s.nr_ops, 8);
	for (size_t i = 0; i < 8; i++) {
		char *name = xstrfmt("%s/%s", s.ops[i].repo, s.ops[i].op);
		assert_string_equal(name, order[i]);
		free(name);
	}
	assert_int_equal(s.nr_rows, 10);	/* the corrupt line and .attempts/ are not rows */
	assert_int_equal(s.rows_success, 9);
	assert_int_equal(s.rows_not_graph, 1);
	assert_int_equal(s.replay_fallbacks, 2);
	assert_int_equal(s.bad_lines, 1);
	assert_int_equal(s.ops_walked_only, 1);
	assert_int_equal(s.ops_without_rows, 3);
	/* the bad line is named by file and line */
	assert_non_null(strstr(msgs.buf, "main/tuned_rowsum/results.jsonl:2: not a JSON object"));

	o = find_op(&s, "main", "softmax");
	assert_string_equal(o->status, "PASS");
	assert_int_equal(o->nr_rows, 3);
	assert_string_equal(o->remarks, "");
	for (size_t j = o->first_row; j < o->first_row + o->nr_rows; j++) {
		assert_string_equal(s.rows[j].timer, "graph");
		assert_true(s.rows[j].torch_ms < 1);	/* not the .attempts/ copy (9 ms) */
	}
	assert_string_equal(s.rows[o->first_row + 2].dtype, "torch.bfloat16");

	o = find_op(&s, "main", "sort");
	assert_int_equal(o->no_cudagraph_rows, 1);
	/* ops_status.csv's own count is replaced by the one read from the rows */
	assert_string_equal(o->remarks, "no_cudagraph_rows=1");
	assert_string_equal(s.rows[o->first_row].timer, "graph+direct");
	assert_string_equal(s.rows[o->first_row].markers, "BENCHMARK_DIRECT_NO_CUDAGRAPH");
	assert_true(s.rows[o->first_row].not_graph);
	assert_string_equal(s.rows[o->first_row + 1].markers, "GRAPH_MEMSET_NODES");
	assert_false(s.rows[o->first_row + 1].not_graph);
	assert_int_equal(s.rows[o->first_row + 1].unranked, SUMMARY_COPY_ENGINE);
	/* graph against direct: a ratio of two calibers, in no speedup list */
	assert_int_equal(s.rows[o->first_row].unranked, SUMMARY_MIXED_TIMERS);

	o = find_op(&s, "main", "tuned_rowsum");
	assert_int_equal(o->replay_fallbacks, 2);
	assert_int_equal(o->nr_rows, 2);
	assert_string_equal(o->remarks, "replay_fallback=2;bad_lines=1;dtype_fallback");
	assert_string_equal(s.rows[o->first_row].markers, "AUTOTUNE_REPLAY_FALLBACK");

	o = find_op(&s, "main", "broken");
	assert_string_equal(o->status, "FAIL");
	assert_int_equal(o->nr_rows, 0);
	assert_non_null(o->run_dir);
	assert_string_equal(o->remarks, "no_results;deterministic_failure;rc=1");

	o = find_op(&s, "main", "layer_norm");
	assert_string_equal(s.rows[o->first_row + 1].status, "FAILED");
	assert_true(isnan(s.rows[o->first_row + 1].gems_ms));
	assert_string_equal(s.rows[o->first_row + 1].timer, "");

	o = find_op(&s, "main", "extra");
	assert_false(o->listed);
	assert_string_equal(o->status, "");
	assert_string_equal(o->remarks, "not_in_ops_status");

	o = find_op(&s, "vllm", "fused_moe");
	assert_string_equal(o->status, "TIMEOUT");
	assert_null(o->run_dir);
	assert_string_equal(o->remarks, "no_run_dir");
	o = find_op(&s, "main", "upsample");
	assert_string_equal(o->remarks, "no_run_dir;skip_reason=needs sm90");
	assert_null(find_op(&s, "main", "notes"));	/* a directory that is not a run */
	summary_release(&s);
}

static void test_csv_lines(void **state)
{
	struct summary s;
	struct strbuf sb = STRBUF_INIT;
	struct strvec lines = STRVEC_INIT;

	summary_init(&s);
	assert_int_equal(summary_load(&s, DATA "/batch"), 0);
	summary_csv(&s, &sb);
	strvec_split(&lines, sb.buf, "\n");
	assert_int_equal(lines.nr, 1 + 10 + 3);
	assert_string_equal(lines.v[0], "repo,op,status,backend,device,op_name,dtype,shape_detail,"
			    "row_status,torch_latency_ms,gems_latency_ms,speedup,timer,markers,"
			    "op_remarks");
	assert_string_equal(lines.v[1], "main,broken,FAIL,cuda,NVIDIA H200,,,,,,,,,,no_results;"
			    "deterministic_failure;rc=1");
	assert_string_equal(lines.v[8], "main,sort,PASS,cuda,NVIDIA H200,sort,torch.float16,"
			    "\"[torch.Size([1024, "
			    "1024])]\",SUCCESS,0.020000,0.025000,0.800,graph+direct,"
			    "BENCHMARK_DIRECT_NO_CUDAGRAPH,no_cudagraph_rows=1");
	/* no run: the backend is ops_status.csv's, the card unknown (a v1 table) */
	assert_string_equal(lines.v[13], "vllm,fused_moe,TIMEOUT,cuda,,,,,,,,,,,no_run_dir");
	strvec_clear(&lines);
	strbuf_release(&sb);
	summary_release(&s);
}

static void test_json_and_extremes(void **state)
{
	struct summary s;
	json_t *j, *sc;
	size_t w, b, idx[SUMMARY_EXTREMES];

	summary_init(&s);
	assert_int_equal(summary_load(&s, DATA "/batch"), 0);
	/*
	 * sort's GRAPH_MEMSET_NODES row (1.25) times the copy engine, and its
	 * other row (0.8) is graph against direct: neither is ranked
	 */
	assert_int_equal(s.rows_ranked, 7);
	assert_int_equal(s.left_out_copy_engine, 1);
	assert_int_equal(s.left_out_mixed_timers, 1);
	assert_int_equal(s.left_out_no_kernels, 0);
	summary_extreme_counts(&s, &w, &b);
	assert_int_equal(w, 4);
	assert_int_equal(b, 3);
	assert_int_equal(summary_extremes(&s, 0, idx, w), 4);
	assert_true(s.rows[idx[0]].speedup > 0.99 && s.rows[idx[0]].speedup < 1.01); /* tuned_rowsum */
	for (size_t i = 1; i < 4; i++)
		assert_true(s.rows[idx[i - 1]].speedup <= s.rows[idx[i]].speedup);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(s.rows[idx[i]].unranked, 0);
	assert_int_equal(summary_extremes(&s, 1, idx, b), 3);
	assert_true(s.rows[idx[0]].speedup > 2.99);	/* tuned_rowsum 3.0 */

	j = summary_to_json(&s, "/x/summary.csv");
	assert_int_equal(json_integer_value(json_object_get(j, "schema_version")), 2);
	assert_string_equal(json_str(json_object_get(j, "csv"), "file"), "summary.csv");
	assert_int_equal(json_array_size(json_object_get(json_object_get(j, "csv"), "columns")),
			 15);
	/* three cards: H200 by model, softmax's H100 by name and uuid, two unknown */
	assert_int_equal(json_array_size(json_object_get(j, "devices")), 3);
	assert_string_equal(json_str(json_array_get(json_object_get(j, "devices"), 1),
				     "device_uuid"), "GPU-11111111-2222-4333-8444-555555555555");
	sc = json_object_get(j, "status_counts");
	assert_int_equal(json_integer_value(json_object_get(sc, "PASS")), 4);
	assert_int_equal(json_integer_value(json_object_get(sc, "(none)")), 1);
	assert_int_equal(json_integer_value(json_object_get(j, "rows")), 10);
	assert_int_equal(json_array_size(json_object_get(j, "ops_with_remarks")), 6);
	assert_int_equal(json_array_size(json_object_get(j, "worst_speedups")), 4);
	assert_int_equal(json_array_size(json_object_get(j, "best_speedups")), 3);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "speedups_left_out"),
							    "copy_engine")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "speedups_left_out"),
							    "mixed_timers")), 1);
	assert_string_equal(json_str(json_array_get(json_object_get(j, "worst_speedups"), 0), "op"),
			    "tuned_rowsum");
	assert_string_equal(json_string_value(json_array_get(
		json_object_get(j, "ops_found_by_walking"), 0)), "main/extra");
	json_decref(j);
	summary_release(&s);
}

static void test_old_batch_is_walked(void **state)
{
	struct summary s;
	const struct summary_op *o;

	summary_init(&s);
	assert_int_equal(summary_load(&s, DATA "/old_batch"), 0);
	assert_false(s.has_ops_status);
	assert_int_equal(s.nr_ops, 2);
	assert_int_equal(s.ops_walked_only, 2);
	o = find_op(&s, "vllm", "fused_marlin_moe");
	assert_non_null(o);
	assert_string_equal(o->status, "");
	/* without ops_status.csv every operator is walked: no remark for it */
	assert_string_equal(o->remarks, "no_cudagraph_rows=1");
	assert_string_equal(s.rows[o->first_row].timer, "direct");
	assert_string_equal(find_op(&s, "main", "add")->remarks, "");
	summary_release(&s);
}

/*
 * A fallback that fired in a measurement marks the row whose measurement
 * carries it, not the other rows of its test (as zlb compare decides); one
 * that no row of its test carries marks that whole test.
 */
static void test_measured_fallback_marks_its_row(void **state)
{
	struct summary s;
	const struct summary_op *o;

	summary_init(&s);
	assert_int_equal(summary_load(&s, DATA "/measured_fallback"), 0);
	o = find_op(&s, "main", "rowsum");
	assert_non_null(o);
	assert_int_equal(o->nr_rows, 4);
	assert_int_equal(o->replay_fallbacks, 2);
	/* test_a: the first row's own measurement fell back, the second did not */
	assert_string_equal(s.rows[o->first_row].markers, "AUTOTUNE_REPLAY_FALLBACK");
	assert_string_equal(s.rows[o->first_row + 1].markers, "");
	/* test_b: its event is carried by no row, so it touches the whole test */
	assert_string_equal(s.rows[o->first_row + 2].markers, "AUTOTUNE_REPLAY_FALLBACK");
	assert_string_equal(s.rows[o->first_row + 3].markers, "AUTOTUNE_REPLAY_FALLBACK");
	summary_release(&s);
}

static void test_bad_inputs(void **state)
{
	struct summary s;

	summary_init(&s);
	assert_int_equal(summary_load(&s, DATA "/empty_batch"), 1);
	summary_release(&s);

	summary_init(&s);
	assert_int_equal(summary_load(&s, DATA "/no_such_batch"), -1);
	assert_non_null(strstr(last_error(), "is not a directory"));
	summary_release(&s);

	summary_init(&s);
	assert_int_equal(summary_load(&s, DATA "/batch/ops_status.csv"), -1);
	summary_release(&s);

	summary_init(&s);
	assert_int_equal(summary_load(&s, DATA "/bad_status"), -1);
	assert_non_null(strstr(msgs.buf, "bad_status/ops_status.csv: record 2 has 4 fields"));
	assert_non_null(strstr(last_error(), "ops_status.csv cannot be used; moved aside"));
	summary_release(&s);
}

/* ---- results_file.c ---------------------------------------------------------- */

struct collected {
	json_t *rows;	/* the objects read */
};

static int collect(void *ctx, const struct results_row *r, size_t lineno)
{
	struct collected *c = ctx;

	json_array_append_new(c->rows, json_deep_copy(r->obj));
	return 0;
}

/* Both walks read the same rows: equal once samples_ms is nulled where it was cut. */
static void test_samples_shortcut_reads_the_same(void **state)
{
	static const char text[] =
		"{\"kind\": \"row\", \"op\": \"a\", \"torch\": {\"n\": 3, \"samples_ms\": [0.1, 0.2, 3e-3]},"
		" \"gems\": {\"samples_ms\" :  [ 1.5e-3 , -2 ], \"markers\": []}}\n"
		/* the key inside a string (escaped quotes) is data, not a key */
		"{\"kind\": \"row\", \"op\": \"b\", \"shape_detail\": \"{\\\"samples_ms\\\": [1, 2, 3, 4]}\"}\n"
		/* too short to cut, strings, nested arrays: parsed as they are */
		"{\"kind\": \"row\", \"op\": \"c\", \"torch\": {\"samples_ms\": []}, \"gems\": {\"samples_ms\": [1]}}\n"
		"{\"kind\": \"row\", \"op\": \"d\", \"torch\": {\"samples_ms\": [\"x\", 1, 2]}, "
		"\"gems\": {\"samples_ms\": [[1, 2], [3, 4]]}}\n"
		/* not JSON either way: NaN, an empty element, a number of bad form */
		"{\"kind\": \"row\", \"op\": \"e\", \"torch\": {\"samples_ms\": [1, NaN, 2]}}\n"
		"{\"kind\": \"row\", \"op\": \"f\", \"torch\": {\"samples_ms\": [1,, 2, 3]}}\n"
		"{\"kind\": \"row\", \"op\": \"g\", \"torch\": {\"samples_ms\": [01, 2, 3]}}\n"
		"\r\n"
		"{\"kind\": \"event\", \"op\": \"h\"}\r\n"
		"[1, 2]\n"
		"{\"kind\": \"row\", \"op\": \"i\", \"gems\": {\"samples_ms\": [1.0, 2.0, 3.0]}}\r\n"
		"{\"kind\": \"row\", \"op\": \"j\", \"torch\": {\"samples_ms\": [1.0, 2.0, 3.0";
	char path[] = "/tmp/zlb-results-XXXXXX";
	int fd = mkstemp(path);
	struct collected plain = { json_array() }, fast = { json_array() };
	size_t bad_plain, bad_fast, i;
	json_t *row;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	assert_int_equal(results_each(path, 0, collect, &plain, &bad_plain), 0);
	assert_int_equal(results_each(path, RESULTS_SKIP_SAMPLES, collect, &fast, &bad_fast), 0);
	unlink(path);

	assert_int_equal(bad_plain, 5);	/* e f g, [1, 2] and the cut last line */
	assert_int_equal(bad_fast, bad_plain);
	assert_int_equal(json_array_size(plain.rows), 5);	/* a b c d i */
	assert_int_equal(json_array_size(fast.rows), 5);
	/* a and i were cut; everything else is identical */
	assert_true(json_is_null(json_object_get(json_object_get(json_array_get(fast.rows, 0),
								  "torch"), "samples_ms")));
	assert_true(json_is_null(json_object_get(json_object_get(json_array_get(fast.rows, 0),
								  "gems"), "samples_ms")));
	assert_true(json_is_null(json_object_get(json_object_get(json_array_get(fast.rows, 4),
								  "gems"), "samples_ms")));
	json_array_foreach(plain.rows, i, row) {
		json_t *f = json_array_get(fast.rows, i);
		const char *sides[] = { "torch", "gems" };

		for (int k = 0; k < 2; k++) {
			json_t *m = json_object_get(row, sides[k]);
			json_t *fm = json_object_get(f, sides[k]);
			json_t *s = json_object_get(m, "samples_ms");

			if (json_is_null(json_object_get(fm, "samples_ms")) && json_array_size(s) > 1)
				json_object_set_new(m, "samples_ms", json_null());
		}
		assert_true(json_equal(row, f));
	}
	assert_string_equal(json_str(json_array_get(fast.rows, 1), "shape_detail"),
			    "{\"samples_ms\": [1, 2, 3, 4]}");
	assert_int_equal(json_array_size(json_object_get(json_object_get(json_array_get(
		fast.rows, 3), "gems"), "samples_ms")), 2);
	json_decref(plain.rows);
	json_decref(fast.rows);
}

/* Per row: every measurement's samples as doubles, taken or from the JSON. */
static int collect_samples(void *ctx, const struct results_row *r, size_t lineno)
{
	json_t *out = ctx, *row = json_object();
	const json_t *meas[2] = { r->torch, r->gems };
	const char *names[2] = { "torch", "gems" };

	for (int k = 0; k < 2; k++) {
		json_t *a = json_array();
		const double *x;
		size_t n, i;
		json_t *v;

		if (!meas[k])
			continue;
		if (results_meas_taken(r, meas[k], &x, &n)) {
			for (i = 0; i < n; i++)
				json_array_append_new(a, json_real(x[i]));
			json_object_set_new(row, "taken", json_true());
		} else {
			json_array_foreach(json_object_get(meas[k], "samples_ms"), i, v)
				json_array_append_new(a, json_is_number(v) ? json_real(json_number_value(v))
									   : json_null());
		}
		json_object_set_new(row, names[k], a);
	}
	json_array_append_new(out, row);
	return 0;
}

/* The walker's own reading of samples_ms gives jansson's doubles, bit for bit. */
static void test_taken_samples_are_jansson_s(void **state)
{
	static const char text[] =
		"{\"kind\": \"row\", \"op\": \"a\", \"torch\": {\"samples_ms\": [0.1, 0.2, 3e-3, "
		"1E+2, -0.0, 0.30000000000000004, 123456789012345678, 5e-324, 1.7976931348623157e308]},"
		" \"gems\": {\"samples_ms\" :  [ 1.5e-3 , -2, 7 ]}}\n"
		/* an integer beyond long long: jansson refuses the line, and so must the walker */
		"{\"kind\": \"row\", \"op\": \"b\", \"torch\": {\"samples_ms\": [1, 99999999999999999999, 3]}}\n"
		"{\"kind\": \"row\", \"op\": \"b2\", \"torch\": {\"samples_ms\": [1, 1e400, 3]}}\n"
		/* short, strings, nested: left to jansson */
		"{\"kind\": \"row\", \"op\": \"c\", \"torch\": {\"samples_ms\": [1]}, "
		"\"gems\": {\"samples_ms\": [\"x\", 1, 2]}}\n";
	char path[] = "/tmp/zlb-results-XXXXXX";
	int fd = mkstemp(path);
	json_t *plain = json_array(), *fast = json_array();
	size_t bad_plain, bad_fast, i;
	json_t *row;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	assert_int_equal(results_each(path, 0, collect_samples, plain, &bad_plain), 0);
	assert_int_equal(results_each(path, RESULTS_TAKE_SAMPLES, collect_samples, fast,
				      &bad_fast), 0);
	unlink(path);
	assert_int_equal(bad_plain, 2);
	assert_int_equal(bad_fast, 2);
	assert_int_equal(json_array_size(fast), 2);
	assert_true(json_is_true(json_object_get(json_array_get(fast, 0), "taken")));
	assert_null(json_object_get(json_array_get(fast, 1), "taken"));
	json_array_foreach(plain, i, row) {
		json_t *f = json_array_get(fast, i);
		const char *sides[] = { "torch", "gems" };

		for (int k = 0; k < 2; k++) {
			json_t *a = json_object_get(row, sides[k]), *b = json_object_get(f, sides[k]);
			assert_int_equal(json_array_size(a), json_array_size(b));
			for (size_t j = 0; j < json_array_size(a); j++) {
				double x = json_real_value(json_array_get(a, j));
				double y = json_real_value(json_array_get(b, j));
				assert_memory_equal(&x, &y, sizeof(x));
			}
		}
	}
	json_decref(plain);
	json_decref(fast);
}

static int count_event(void *ctx, const json_t *ev, size_t lineno)
{
	(*(size_t *)ctx)++;
	return 0;
}

static void test_events_of_one_name(void **state)
{
	size_t n = 0, bad = 0;

	assert_int_equal(results_events_each(DATA "/batch/main/tuned_rowsum/" EVENTS_FILE,
					     "AUTOTUNE_REPLAY_FALLBACK", count_event, &n, &bad), 0);
	assert_int_equal(n, 2);
	assert_int_equal(bad, 0);
	n = 0;
	assert_int_equal(results_events_each(DATA "/batch/main/softmax/" EVENTS_FILE,
					     "AUTOTUNE_REPLAY_FALLBACK", count_event, &n, &bad), 0);
	assert_int_equal(n, 0);
	assert_int_equal(results_events_each(DATA "/batch/main/absent.jsonl", "X", count_event,
					     &n, &bad), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_batch_with_ops_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_and_extremes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_batch_is_walked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_measured_fallback_marks_its_row, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_inputs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_samples_shortcut_reads_the_same, setup, teardown),
		cmocka_unit_test_setup_teardown(test_taken_samples_are_jansson_s, setup, teardown),
		cmocka_unit_test_setup_teardown(test_events_of_one_name, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
