#include "rundir/run_device.h"

#include <string.h>
#include <stdlib.h>

#include <jansson.h>

#include "lib/error.h"
#include "lib/strbuf.h"
#include "lib/jsonfile.h"
#include "rundir/identity.h"

void run_device_init(struct run_device *d)
{
	memset(d, 0, sizeof(*d));
	d->index = -1;
}

void run_device_release(struct run_device *d)
{
	free(d->backend);
	free(d->timer);
	free(d->gpu_name);
	free(d->gpu_uuid);
	run_device_init(d);
}

/* A copy of a non-empty string, else NULL: "" is no fact. */
static char *fact(const json_t *obj, const char *key)
{
	const char *s = json_str(obj, key);
	return s && *s ? xstrdup(s) : NULL;
}

/* A device name: zlb run writes "unknown" where the driver gave none, no fact either. */
static char *name_fact(const json_t *obj, const char *key)
{
	char *s = fact(obj, key);

	if (s && !strcmp(s, "unknown")) {
		free(s);
		return NULL;
	}
	return s;
}

int run_device_read(const char *run_dir, struct run_device *d)
{
	json_t *id = NULL, *cal, *prov, *idx;
	int r;

	run_device_release(d);
	r = identity_load(run_dir, &id);
	if (r)
		return r;
	cal = json_object_get(id, "caliber");
	prov = json_object_get(id, "provenance");
	d->backend = fact(cal, "backend");
	d->timer = fact(cal, "timer");
	idx = json_object_get(prov, "device_index");
	if (json_is_integer(idx) && json_integer_value(idx) >= 0 &&
	    json_integer_value(idx) < 1 << 20)
		d->index = (int)json_integer_value(idx);
	d->gpu_name = name_fact(prov, "gpu_name");
	/* older identities (and hand-made ones) name only the model: the same words */
	if (!d->gpu_name)
		d->gpu_name = name_fact(cal, "device");
	d->gpu_uuid = fact(prov, "gpu_uuid");
	if (!d->gpu_uuid)
		d->gpu_uuid = fact(prov, "device_uuid");
	json_decref(id);
	return 0;
}
