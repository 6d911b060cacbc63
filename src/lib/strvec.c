#include "lib/strvec.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"

char *strvec_empty[] = { NULL };

void strvec_init(struct strvec *sv)
{
	sv->v = strvec_empty;
	sv->nr = sv->alloc = 0;
}

static void push_owned(struct strvec *sv, char *s)
{
	if (sv->nr + 2 > sv->alloc) {
		size_t n = sv->alloc ? sv->alloc * 2 : 8;
		char **v = sv->v == strvec_empty ? NULL : sv->v;
		sv->v = xrealloc(v, n * sizeof(*v));
		sv->alloc = n;
	}
	sv->v[sv->nr++] = s;
	sv->v[sv->nr] = NULL;
}

void strvec_push(struct strvec *sv, const char *s)
{
	push_owned(sv, xstrdup(s));
}

void strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	push_owned(sv, strbuf_detach(&sb, NULL));
}

void strvec_pushl(struct strvec *sv, ...)
{
	va_list ap;
	const char *s;

	va_start(ap, sv);
	while ((s = va_arg(ap, const char *)))
		strvec_push(sv, s);
	va_end(ap);
}

void strvec_pushv(struct strvec *sv, const char *const *v)
{
	for (; v && *v; v++)
		strvec_push(sv, *v);
}

void strvec_pop(struct strvec *sv)
{
	if (!sv->nr)
		return;
	free(sv->v[--sv->nr]);
	sv->v[sv->nr] = NULL;
}

void strvec_clear(struct strvec *sv)
{
	if (sv->v != strvec_empty) {
		for (size_t i = 0; i < sv->nr; i++)
			free(sv->v[i]);
		free(sv->v);
	}
	strvec_init(sv);
}

int strvec_find(const struct strvec *sv, const char *s)
{
	for (size_t i = 0; i < sv->nr; i++)
		if (!strcmp(sv->v[i], s))
			return (int)i;
	return -1;
}

void strvec_split(struct strvec *sv, const char *s, const char *seps)
{
	while (*s) {
		size_t n = strcspn(s, seps);
		if (n)
			push_owned(sv, xstrndup(s, n));
		s += n;
		if (*s)
			s++;
	}
}

static int env_index(const struct strvec *env, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < env->nr; i++)
		if (!strncmp(env->v[i], key, klen) && env->v[i][klen] == '=')
			return (int)i;
	return -1;
}

void env_set(struct strvec *env, const char *key, const char *value)
{
	int i = env_index(env, key);
	char *entry = xstrfmt("%s=%s", key, value);

	if (i < 0) {
		push_owned(env, entry);
		return;
	}
	free(env->v[i]);
	env->v[i] = entry;
}

void env_unset(struct strvec *env, const char *key)
{
	int i;

	while ((i = env_index(env, key)) >= 0) {
		free(env->v[i]);
		memmove(env->v + i, env->v + i + 1,
			(env->nr - (size_t)i) * sizeof(*env->v));
		env->nr--;
	}
}

const char *env_get(const struct strvec *env, const char *key)
{
	int i = env_index(env, key);
	return i < 0 ? NULL : env->v[i] + strlen(key) + 1;
}

static int cmp_item(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strvec_sort(struct strvec *sv)
{
	if (sv->nr > 1)
		qsort(sv->v, sv->nr, sizeof(*sv->v), cmp_item);
}

void strvec_sort_unique(struct strvec *sv)
{
	size_t i, j;

	if (sv->nr < 2)
		return;
	strvec_sort(sv);
	for (i = 1, j = 1; i < sv->nr; i++) {
		if (!strcmp(sv->v[i], sv->v[j - 1]))
			free(sv->v[i]);
		else
			sv->v[j++] = sv->v[i];
	}
	sv->nr = j;
	sv->v[j] = NULL;
}

void strvec_push_unique(struct strvec *sv, const char *s)
{
	if (s && *s && strvec_find(sv, s) < 0)
		strvec_push(sv, s);
}

int strlist_has(const char *const *list, const char *s)
{
	for (; list && *list; list++)
		if (!strcmp(*list, s))
			return 1;
	return 0;
}
