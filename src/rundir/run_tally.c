#include "rundir/run_tally.h"

#include <stdlib.h>
#include <string.h>

#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "rundir/markers.h"
#include "rundir/results_file.h"

static int measurement_timer(const json_t *m, const char **timer)
{
	*timer = json_is_object(m) ? json_str(m, "timer") : NULL;
	return *timer != NULL;
}

static int has_marker(const json_t *m, const char *name)
{
	size_t i;
	json_t *v;

	json_array_foreach(json_object_get(m, "markers"), i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), name))
			return 1;
	return 0;
}

static json_t *row_label(const json_t *row)
{
	return json_sprintf("%s %s %s",
		json_str(row, "op_name") ? json_str(row, "op_name") : "?",
		json_str(row, "dtype") ? json_str(row, "dtype") : "?",
		json_str(row, "shape_detail") ? json_str(row, "shape_detail") : "?");
}

static int tally_row(void *ctx, const struct results_row *rr, size_t lineno)
{
	struct run_tally *t = ctx;
	const json_t *row = rr->obj;
	const char *tt, *gt;
	int has_t, has_g, direct;
	json_t *torch = json_object_get(row, "torch"), *gems = json_object_get(row, "gems");

	t->rows++;
	if (json_str(row, "status") && strcmp(json_str(row, "status"), "SUCCESS"))
		t->rows_failed++;
	has_t = measurement_timer(torch, &tt);
	has_g = measurement_timer(gems, &gt);
	direct = (has_t && !strcmp(tt, "direct")) || (has_g && !strcmp(gt, "direct"));
	if (direct) {
		t->rows_direct++;
		json_array_append_new(t->fallbacks, row_label(row));
	} else if (has_t || has_g) {
		t->rows_graph++;
	}
	/* A graph replaying copy-engine nodes times a different machine than eager. */
	if (has_marker(torch, MARKER_MEMCPY_NODES) || has_marker(gems, MARKER_MEMCPY_NODES)) {
		t->rows_copy_engine++;
		json_array_append_new(t->copy_rows, row_label(row));
	}
	/* A graph without a kernel node (a view, a plain copy) measured no kernel. */
	if (has_marker(torch, MARKER_NO_KERNELS) || has_marker(gems, MARKER_NO_KERNELS)) {
		t->rows_no_kernels++;
		json_array_append_new(t->no_kernel_rows, row_label(row));
	}
	return 0;
}

static int tally_event(void *ctx, json_t *ev, size_t lineno)
{
	struct run_tally *t = ctx;
	const char *name = json_str(ev, "event");

	if (!name)
		return 0;
	if (!strcmp(name, "PROVENANCE")) {
		json_object_update(t->runtime, ev);
		json_object_del(t->runtime, "event");
		json_object_del(t->runtime, "ts");
		json_object_del(t->runtime, "schema_version");
		return 0;
	}
	if (!strcmp(name, EVENT_TEST_OUTCOME)) {
		const char *when = json_str(ev, "when"), *outcome = json_str(ev, "outcome");
		if (!when || !outcome)
			return 0;
		if (!strcmp(outcome, "skipped") && strcmp(when, "teardown")) {
			t->skipped++;
			if (json_is_true(json_object_get(ev, "xfail")))
				t->xfailed++;
			if (json_str(ev, "reason"))
				json_array_append_new(t->skips, json_string(json_str(ev, "reason")));
		} else if (!strcmp(outcome, "failed")) {
			t->failed++;
		} else if (!strcmp(when, "call") && !strcmp(outcome, "passed")) {
			t->passed++;
		}
		return 0;
	}
	if (!strcmp(name, EVENT_PLUGIN)) {
		const char *status = json_str(ev, "status"), *plugin = json_str(ev, "name");
		if (status && plugin && !strcmp(status, "inactive"))
			json_array_append_new(t->inactive, json_sprintf("%s: %s", plugin,
				json_str(ev, "detail") ? json_str(ev, "detail") : "no reason given"));
		return 0;
	}
	if (!strcmp(name, EVENT_SHAPES_INJECTED) || !strcmp(name, EVENT_COMPAT_UNSKIP))
		return 0;
	if (!strcmp(name, EVENT_AUTOTUNE_RECORDED) || !strcmp(name, EVENT_AUTOTUNE_REPLAYED)) {
		json_t *copy = json_deep_copy(ev);
		json_object_del(copy, "schema_version");
		json_object_del(copy, "ts");
		json_object_del(copy, "event");
		json_object_set_new(t->autotune, !strcmp(name, EVENT_AUTOTUNE_RECORDED) ?
				    "recorded" : "replayed", copy);
		return 0;
	}
	if (!strcmp(name, EVENT_TUNE_TIMING)) {
		const json_t *calls = json_object_get(ev, "calls");
		const json_t *secs = json_object_get(ev, "seconds");

		/*
		 * A count or a time that is not one (or past any run's: a file
		 * not the plugin's) is not summed: the rest stands.
		 */
		if (json_is_integer(calls) && json_integer_value(calls) > 0 &&
		    json_integer_value(calls) <= 1000000000 && json_is_number(secs) &&
		    json_number_value(secs) >= 0 && json_number_value(secs) <= 1e9) {
			t->tune_calls += (long)json_integer_value(calls);
			t->tune_s += json_number_value(secs);
		}
		return 0;
	}
	if (!strcmp(name, MARKER_DIRECT) && json_str(ev, "role") &&
	    !strcmp(json_str(ev, "role"), "tune")) {
		t->tuning_fallbacks++;
		return 0;
	}
	if (!strcmp(name, "WARNING") && json_str(ev, "message"))
		json_array_append_new(t->warnings, json_string(json_str(ev, "message")));
	json_object_set_new(t->markers, name,
			    json_integer(json_integer_value(json_object_get(t->markers, name)) + 1));
	return 0;
}

int run_tally_read(const char *run_dir, struct run_tally *t)
{
	char *results = path_join(run_dir, RESULTS_FILE);
	char *events = path_join(run_dir, "events.jsonl");
	size_t bad = 0;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	t->markers = json_object();
	t->runtime = json_object();
	t->skips = json_array();
	t->fallbacks = json_array();
	t->warnings = json_array();
	t->copy_rows = json_array();
	t->no_kernel_rows = json_array();
	t->autotune = json_object();
	t->inactive = json_array();
	if (results_each(results, RESULTS_SKIP_SAMPLES | RESULTS_QUIET_BAD_LINES, tally_row, t,
			 &bad) < 0)
		ret = -1;
	t->bad_lines += bad;
	if (jsonl_each(events, tally_event, t, &bad) < 0)
		ret = -1;
	t->bad_lines += bad;
	free(results);
	free(events);
	return ret;
}

void run_tally_release(struct run_tally *t)
{
	json_decref(t->markers);
	json_decref(t->runtime);
	json_decref(t->skips);
	json_decref(t->fallbacks);
	json_decref(t->warnings);
	json_decref(t->copy_rows);
	json_decref(t->no_kernel_rows);
	json_decref(t->autotune);
	json_decref(t->inactive);
	memset(t, 0, sizeof(*t));
}

const char *run_tally_timer(const struct run_tally *t, const char *planned)
{
	if (t->rows_direct && t->rows_graph)
		return "graph+direct";
	if (t->rows_direct)
		return "direct";
	if (t->rows_graph)
		return "graph";
	return planned;
}
