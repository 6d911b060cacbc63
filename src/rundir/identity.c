#include "rundir/identity.h"

#include <stdlib.h>
#include <time.h>

#include "lib/jsonfile.h"
#include "lib/paths.h"

json_t *identity_new(const char *op, const char *run_dir)
{
	json_t *id = json_object();

	json_object_set_new(id, "schema_version", json_integer(IDENTITY_SCHEMA_VERSION));
	json_object_set_new(id, "status", json_string("running"));
	json_object_set_new(id, "op", json_string(op));
	json_object_set_new(id, "run_dir", json_string(run_dir));
	json_object_set_new(id, "caliber", json_object());
	json_object_set_new(id, "provenance", json_object());
	json_object_set_new(id, "outcome", json_object());
	return id;
}

json_t *identity_section(json_t *id, const char *name)
{
	json_t *s = json_object_get(id, name);

	if (!json_is_object(s)) {
		s = json_object();
		json_object_set_new(id, name, s);
	}
	return s;
}

int identity_write(const char *run_dir, const json_t *id)
{
	char *path = path_join(run_dir, IDENTITY_FILE);
	int r = json_write_file(path, id);
	free(path);
	return r;
}

int identity_load(const char *run_dir, json_t **out)
{
	char *path = path_join(run_dir, IDENTITY_FILE);
	int r = json_read_file(path, out);
	json_int_t v;

	if (r) {
		free(path);
		return r;
	}
	v = json_integer_value(json_object_get(*out, "schema_version"));
	if (v < 1 || v > IDENTITY_SCHEMA_VERSION) {
		r = error("%s has schema_version %lld; this zlb reads 1..%d", path,
			  (long long)v, IDENTITY_SCHEMA_VERSION);
		json_decref(*out);
		*out = NULL;
	}
	free(path);
	return r;
}

json_t *identity_now(void)
{
	char buf[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}
