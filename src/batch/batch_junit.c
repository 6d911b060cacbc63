#include "batch/batch_junit.h"

#include <stdlib.h>
#include <string.h>

#include "batch/summary.h"
#include "lib/csvfile.h"
#include "lib/paths.h"

/*
 * Where the operator ran, so a CI system shows a failure's card: the
 * columns ops_status.csv has for it (version 3), those it left empty (not
 * run, a table of an older version) left out.
 */
static void add_where(struct junit_case *c, const struct csv_table *t, size_t row)
{
	static const char *const cols[] = { "backend", "device", "gpu", "gpu_uuid", NULL };

	for (size_t k = 0; cols[k]; k++) {
		const char *v = csv_get(t, row, cols[k]);

		if (*v)
			junit_property(c, cols[k], v);
	}
}

int batch_junit_read(const char *batch_dir, struct junit_suite *suite)
{
	char *path = path_join(batch_dir, OPS_STATUS_CSV);
	struct csv_table t = { 0 };
	int r = csv_read_file(path, &t);

	if (r)
		goto out;
	if (csv_column(&t, "spec") < 0 || csv_column(&t, "status") < 0) {
		r = error("%s has no spec and status columns", path);
		goto out;
	}
	for (size_t i = 0; i < t.nrows; i++) {
		const char *st = csv_get(&t, i, "status"), *remarks = csv_get(&t, i, "remarks");
		const char *code = csv_get(&t, i, "exit_code"), *dir = csv_get(&t, i, "run_dir");
		char *cls = xstrfmt("zlb.batch.%s", *csv_get(&t, i, "repo") ?
				    csv_get(&t, i, "repo") : "main");
		enum junit_outcome outcome = JUNIT_PASSED;
		char *msg = NULL, *details = NULL;
		struct junit_case *c;

		if (!strcmp(st, "FAIL") || !strcmp(st, "TIMEOUT") || !strcmp(st, "CANCELLED")) {
			outcome = JUNIT_FAILED;
			msg = xstrfmt("%s%s%s%s%s", st, *remarks ? ": " : "", remarks,
				      *code ? "; zlb run exit " : "", code);
			details = xstrfmt("status %s\nremarks %s\nexit code %s\nrun directory %s/%s\n",
					  st, remarks, *code ? code : "-", batch_dir,
					  *dir ? dir : "(none)");
		} else if (!strcmp(st, "SKIP")) {
			outcome = JUNIT_SKIPPED;
			msg = xstrdup(*remarks ? remarks : "skipped upstream");
		} else if (strcmp(st, "PASS")) {
			outcome = JUNIT_SKIPPED;
			msg = xstrfmt("not run (%s%s%s)", st, *remarks ? ": " : "", remarks);
		}
		c = junit_add(suite, cls, csv_get(&t, i, "spec"), outcome, msg, details);
		if (*csv_get(&t, i, "seconds"))
			c->seconds = strtod(csv_get(&t, i, "seconds"), NULL);
		add_where(c, &t, i);
		free(cls);
		free(msg);
		free(details);
	}
out:
	csv_table_free(&t);
	free(path);
	return r;
}
