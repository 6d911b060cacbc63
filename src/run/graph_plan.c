#include "run/graph_plan.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "rundir/results_file.h"

struct plan_walk {
	json_t *measurements;
};

/*
 * K, the placements, the power duty and the first K of one side, or 0 where
 * it was not a graph measurement. *duty and *k_first are 0 where the
 * recording did not say (an older library or run).
 */
static int graph_shape(const json_t *meas, json_int_t *k, json_int_t *placements,
		       double *duty, json_int_t *k_first)
{
	const json_t *kj, *pj, *dj, *fj;
	const char *timer;

	if (!json_is_object(meas))
		return 0;
	timer = json_string_value(json_object_get(meas, "timer"));
	kj = json_object_get(meas, "calls_per_replay");
	if (!timer || strcmp(timer, "graph") || !json_is_integer(kj) ||
	    json_integer_value(kj) < 1)
		return 0;
	pj = json_object_get(meas, "placements");
	*k = json_integer_value(kj);
	/* A row from before placements ran on one graph. */
	*placements = json_is_integer(pj) && json_integer_value(pj) >= 1 ?
		      json_integer_value(pj) : 1;
	dj = json_object_get(meas, "power_duty");
	*duty = json_is_number(dj) && json_number_value(dj) > 0 &&
		json_number_value(dj) <= 1 ? json_number_value(dj) : 0;
	fj = json_object_get(meas, "calls_first");
	*k_first = json_is_integer(fj) && json_integer_value(fj) >= 1 ?
		   json_integer_value(fj) : 0;
	return 1;
}

static int add_row(void *ctx, const struct results_row *row, size_t lineno)
{
	struct plan_walk *w = ctx;
	const json_t *sides[2] = { row->torch, row->gems };
	static const char *const roles[2] = { "torch", "gems" };

	(void)lineno;
	if (!row->status || strcmp(row->status, "SUCCESS"))
		return 0;
	for (int i = 0; i < 2; i++) {
		json_int_t k, p, k_first;
		double duty;
		if (!graph_shape(sides[i], &k, &p, &duty, &k_first))
			continue;
		json_array_append_new(w->measurements, json_pack(
			"{s:o,s:s,s:s,s:s,s:s,s:I,s:I,s:o,s:o}",
			"nodeid", row->nodeid ? json_string(row->nodeid) : json_null(),
			"op_name", row->op_name, "dtype", row->dtype, "shape_detail", row->shape,
			"role", roles[i], "calls_per_replay", k, "placements", p,
			"power_duty", duty > 0 ? json_real(duty) : json_null(),
			"calls_first", k_first ? json_integer(k_first) : json_null()));
	}
	return 0;
}

int graph_plan_write(const char *replay_from, const char *run_dir, char **path,
		     size_t *count)
{
	char *results = path_join(replay_from, RESULTS_FILE);
	struct plan_walk w = { json_array() };
	json_t *doc;
	int r;

	*path = NULL;
	*count = 0;
	r = results_each(results, RESULTS_SKIP_SAMPLES, add_row, &w, NULL);
	free(results);
	if (r < 0) {
		json_decref(w.measurements);
		return -1;
	}
	*count = json_array_size(w.measurements);
	doc = json_pack("{s:i,s:s,s:s,s:o}", "schema_version", GRAPH_PLAN_SCHEMA_VERSION,
			"kind", "graph_plan", "replay_from", replay_from,
			"measurements", w.measurements);
	*path = path_join(run_dir, GRAPH_PLAN_FILE);
	r = json_write_file(*path, doc);
	json_decref(doc);
	if (r) {
		free(*path);
		*path = NULL;
	}
	return r;
}
