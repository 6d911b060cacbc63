#include "rundir/autotune_records.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

/* Levels of nesting of v (a scalar is 0), counted no further than limit + 1. */
static int depth_of(const json_t *v, int limit)
{
	int deepest = 0;

	if (limit < 0)
		return 1;
	if (json_is_object(v)) {
		const char *k;
		json_t *x;

		json_object_foreach((json_t *)v, k, x) {
			int d = depth_of(x, limit - 1);
			if (d > deepest)
				deepest = d;
			if (deepest > limit)
				break;
		}
		return deepest + 1;
	}
	if (json_is_array(v)) {
		size_t i;
		json_t *x;

		json_array_foreach(v, i, x) {
			int d = depth_of(x, limit - 1);
			if (d > deepest)
				deepest = d;
			if (deepest > limit)
				break;
		}
		return deepest + 1;
	}
	return 0;
}

int autotune_record_check(const json_t *doc, const char *shown)
{
	const json_t *kernels = json_object_get(doc, "kernels");
	size_t i;
	json_t *k;

	if (depth_of(doc, AUTOTUNE_RECORD_MAX_DEPTH) > AUTOTUNE_RECORD_MAX_DEPTH)
		return error("%s is nested more than %d levels deep: zlbench's loader would stop "
			     "with a RecursionError, and no record it wrote looks like this",
			     shown, AUTOTUNE_RECORD_MAX_DEPTH);
	if (!json_is_object(doc) ||
	    json_integer_value(json_object_get(doc, "schema_version")) != AUTOTUNE_SCHEMA_VERSION ||
	    !json_is_integer(json_object_get(doc, "schema_version")) || !json_is_array(kernels))
		return error("%s is not an autotune record of schema_version %d (an object with "
			     "a \"kernels\" list)", shown, AUTOTUNE_SCHEMA_VERSION);
	json_array_foreach(kernels, i, k) {
		const json_t *entries = json_object_get(k, "entries");
		size_t j;
		json_t *e;

		if (!json_is_object(k) || !json_object_get(k, "where") ||
		    !json_object_get(k, "kernel") || !json_object_get(k, "tuner") ||
		    (entries && !json_is_null(entries) && !json_is_array(entries)))
			return error("%s: kernel record %zu lacks its tuner, kernel, where or a list "
				     "of entries", shown, i + 1);
		json_array_foreach(entries, j, e)
			if (!json_is_array(json_object_get(e, "key")) ||
			    !json_is_object(json_object_get(e, "config")))
				return error("%s: kernel record %zu, entry %zu is not {\"key\": [...], "
					     "\"config\": {...}}", shown, i + 1, j + 1);
	}
	return 0;
}

int autotune_records_check_dir(const char *run_dir)
{
	char *dir = path_join(run_dir, AUTOTUNE_RECORDS_DIR);
	struct strvec names = STRVEC_INIT;
	DIR *d = opendir(dir);
	struct dirent *e;
	int r = 0;

	if (!d) {
		r = error_errno("cannot read '%s'", dir);
		free(dir);
		return r;
	}
	while ((e = readdir(d)))
		if (ends_with(e->d_name, ".json") && strcmp(e->d_name, "meta.json"))
			strvec_push(&names, e->d_name);
	closedir(d);
	strvec_sort(&names);
	for (size_t i = 0; i < names.nr && !r; i++) {
		char *path = path_join(dir, names.v[i]);
		json_t *doc = NULL;
		int rc = json_read_file(path, &doc);

		if (rc > 0)
			r = error("'%s' went away while it was read", path);
		else if (rc < 0)
			r = -1;
		else
			r = autotune_record_check(doc, path);
		json_decref(doc);
		free(path);
	}
	strvec_clear(&names);
	free(dir);
	return r;
}
