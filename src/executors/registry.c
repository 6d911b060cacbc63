/*
 * The one place executors are registered. Adding one: fill a
 * struct executor_ops (executor.h) and name it in EXECUTORS below; the
 * lookup, the CLI's choices and their help come from that list.
 */
#include <string.h>

#include "lib/strbuf.h"
#include "executors/executor.h"

#define EXECUTORS(X) X(local) X(slurm)

#define DECLARE(name) extern const struct executor_ops name##_executor;
EXECUTORS(DECLARE)

#define ENTRY(name) &name##_executor,
static const struct executor_ops *const registry[] = {
	EXECUTORS(ENTRY)
	NULL,
};

#define NAME(name) #name,
const char *const executor_choices[] = {
	EXECUTORS(NAME)
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
