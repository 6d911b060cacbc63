/*
 * The one place where backends are registered (like git's commands[] or
 * fio's engine list). Adding a vendor: write <vendor>.c filling a
 * struct backend_ops and add it here.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backends/backend.h"

extern const struct backend_ops cuda_backend;
extern const struct backend_ops musa_backend;
extern const struct backend_ops rocm_backend;
extern const struct backend_ops ascend_backend;

static const struct backend_ops *const registry[] = {
	&cuda_backend,
	&musa_backend,
	&rocm_backend,
	&ascend_backend,
	NULL,
};

const struct backend_ops *const *backend_all(void)
{
	return registry;
}

const struct backend_ops *backend_find(const char *name)
{
	if (!name || !*name)
		return NULL;
	for (const struct backend_ops *const *b = registry; *b; b++) {
		if (!strcasecmp((*b)->name, name))
			return *b;
		for (const char *const *a = (*b)->aliases; a && *a; a++)
			if (!strcasecmp(*a, name))
				return *b;
	}
	return NULL;
}

char *backend_names_help(void)
{
	struct strbuf sb = STRBUF_INIT;

	for (const struct backend_ops *const *b = registry; *b; b++) {
		if (sb.len)
			strbuf_addstr(&sb, ", ");
		strbuf_addstr(&sb, (*b)->name);
		if ((*b)->aliases && (*b)->aliases[0]) {
			strbuf_addstr(&sb, " (");
			for (const char *const *a = (*b)->aliases; *a; a++)
				strbuf_addf(&sb, "%s%s", a == (*b)->aliases ? "" : ", ", *a);
			strbuf_addch(&sb, ')');
		}
	}
	return strbuf_detach(&sb, NULL);
}

char *backend_physical_device(const struct backend_ops *b,
			      const struct strvec *env, int logical)
{
	const char *inherited = env_get(env, b->visibility_keys[0]);
	struct strvec ids = STRVEC_INIT;
	char *res;

	if (logical < 0) {
		error("device index %d is negative", logical);
		return NULL;
	}
	if (!inherited)
		return xstrfmt("%d", logical);
	if (!*inherited) {
		/* The vendor runtimes read an empty list as "no device at all". */
		error("%s is set but empty, which hides every device",
		      b->visibility_keys[0]);
		return NULL;
	}
	strvec_split(&ids, inherited, ",");
	if ((size_t)logical >= ids.nr) {
		error("device %d is not among the %zu device(s) that %s=%s leaves visible",
		      logical, ids.nr, b->visibility_keys[0], inherited);
		strvec_clear(&ids);
		return NULL;
	}
	res = xstrdup(ids.v[logical]);
	strvec_clear(&ids);
	return res;
}

void backend_apply_visibility(const struct backend_ops *b, struct strvec *env,
			      const char *physical_id)
{
	for (const struct backend_ops *const *o = registry; *o; o++)
		for (const char *const *k = (*o)->visibility_keys; *k; k++)
			env_unset(env, *k);
	for (const char *const *k = b->visibility_keys; *k; k++)
		env_set(env, *k, physical_id);
}

void device_list_release(struct device_list *list)
{
	for (int i = 0; i < list->nr; i++) {
		free(list->v[i].name);
		free(list->v[i].uuid);
	}
	free(list->v);
	free(list->driver_version);
	memset(list, 0, sizeof(*list));
}
