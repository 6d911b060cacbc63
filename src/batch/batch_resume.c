#include "batch/batch_resume.h"

#include <stdlib.h>
#include <string.h>

#include "lib/jsonfile.h"
#include "lib/paths.h"

extern char **environ;

json_t *batch_record_make(const struct batch_knobs *batch, const struct batch_knobs *run,
			  const struct strvec *specs)
{
	json_t *ops = json_array();

	for (size_t i = 0; i < specs->nr; i++)
		json_array_append_new(ops, json_string(specs->v[i]));
	json_t *env = opt_env_record(batch->defs, environ);

	{
		json_t *renv = opt_env_record(run->defs, environ);
		json_object_update(env, renv);
		json_decref(renv);
	}
	return json_pack("{s:o,s:o,s:o,s:o}",
			 "batch", opt_values_record(batch->defs, batch->values, batch->skip, 0),
			 "run", opt_values_record(run->defs, run->values, run->skip, 0),
			 "environment", env, "ops", ops);
}

int batch_record_read(const char *dir, json_t **rec)
{
	char *path = path_join(dir, "batch.json");
	json_t *j = NULL, *r;
	int ret = 0;

	*rec = NULL;
	if (json_read_file(path, &j)) {
		ret = error("%s cannot be read: there is nothing to resume there", path);
		goto out;
	}
	r = json_object_get(j, "resume");
	if (!json_is_object(r) || !json_is_object(json_object_get(r, "batch")) ||
	    !json_is_object(json_object_get(r, "run")) ||
	    !json_is_array(json_object_get(r, "ops"))) {
		ret = error("%s was written by a zlb that did not record the batch's options "
			    "(batch.json schema %lld): it cannot be continued as it was started; "
			    "start a new batch directory", path,
			    (long long)json_integer_value(json_object_get(j, "schema_version")));
		goto out;
	}
	*rec = json_incref(r);
out:
	json_decref(j);
	free(path);
	return ret;
}

/* Operator lists compared as given: order is the batch's plan too. */
static int same_specs(const json_t *ops, const struct strvec *specs)
{
	if (json_array_size(ops) != specs->nr)
		return 0;
	for (size_t i = 0; i < specs->nr; i++) {
		const char *s = json_string_value(json_array_get(ops, i));
		if (!s || strcmp(s, specs->v[i]))
			return 0;
	}
	return 1;
}

size_t batch_record_restore(const json_t *rec, const struct batch_knobs *batch,
			    const struct batch_knobs *run, struct strvec *specs,
			    struct strvec *conflicts, struct strvec *notes)
{
	const json_t *ops = json_object_get(rec, "ops"), *v;
	size_t n, i;

	n = opt_values_restore(batch->defs, batch->values, json_object_get(rec, "batch"),
			       batch->skip, "batch.json", json_object_get(rec, "environment"),
			       conflicts, notes);
	n += opt_values_restore(run->defs, run->values, json_object_get(rec, "run"),
				run->skip, "batch.json", json_object_get(rec, "environment"),
				conflicts, notes);
	if (!specs->nr) {
		json_array_foreach(ops, i, v)
			if (json_string_value(v))
				strvec_push(specs, json_string_value(v));
	} else if (!same_specs(ops, specs)) {
		strvec_pushf(conflicts, "the operator list: batch.json has %zu operator(s), the "
			     "list given now is another (%zu)", json_array_size(ops), specs->nr);
		n++;
	}
	return n;
}
