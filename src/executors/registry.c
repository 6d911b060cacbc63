/*
 * The one place executors are registered. Adding one: fill a
 * struct executor_ops and list it here.
 */
#include <string.h>

#include "lib/strbuf.h"
#include "executors/executor.h"

extern const struct executor_ops local_executor;
extern const struct executor_ops slurm_executor;

static const struct executor_ops *const registry[] = {
	&local_executor,
	&slurm_executor,
	NULL,
};

const struct executor_ops *executor_find(const char *name)
{
	for (const struct executor_ops *const *e = registry; *e; e++)
		if (!strcmp((*e)->name, name))
			return *e;
	return NULL;
}

char *executor_names(void)
{
	struct strbuf sb = STRBUF_INIT;

	for (const struct executor_ops *const *e = registry; *e; e++)
		strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", (*e)->name);
	return strbuf_detach(&sb, NULL);
}
