/*
 * A NULL-terminated, owned array of strings: argv and envp for children.
 *
 *     struct strvec args = STRVEC_INIT;
 *     strvec_pushl(&args, python, "-m", "pytest", NULL);
 *     ... args.v is ready for execve() ...
 *     strvec_clear(&args);
 */
#ifndef ZLB_STRVEC_H
#define ZLB_STRVEC_H

#include <stddef.h>

#include "lib/error.h"

struct strvec {
	char **v;
	size_t nr;
	size_t alloc;
};

extern char *strvec_empty[];
#define STRVEC_INIT { strvec_empty, 0, 0 }

void strvec_init(struct strvec *sv);
void strvec_push(struct strvec *sv, const char *s);
void strvec_pushf(struct strvec *sv, const char *fmt, ...) ZLB_PRINTF(2, 3);
/* Push every argument up to a terminating NULL. */
void strvec_pushl(struct strvec *sv, ...) __attribute__((sentinel));
void strvec_pushv(struct strvec *sv, const char *const *v);
/* Is s one of the NULL-terminated list (a table of names; list may be NULL)? */
int strlist_has(const char *const *list, const char *s);
void strvec_pop(struct strvec *sv);
void strvec_clear(struct strvec *sv);
/* Sort in byte order (strcmp), whatever order the items came in. */
void strvec_sort(struct strvec *sv);
/* Sort, then drop repeated items. */
void strvec_sort_unique(struct strvec *sv);
/* Push s unless it is NULL, empty, or already in sv. */
void strvec_push_unique(struct strvec *sv, const char *s);
/* Index of s in sv, or -1. */
int strvec_find(const struct strvec *sv, const char *s);
/* Split s on any byte of seps, skipping empty fields, and push each field. */
void strvec_split(struct strvec *sv, const char *s, const char *seps);

/*
 * Environment arrays: entries are "KEY=VALUE".
 * env_set replaces an existing KEY or appends; env_unset removes it;
 * env_get returns the value or NULL.
 */
void env_set(struct strvec *env, const char *key, const char *value);
void env_unset(struct strvec *env, const char *key);
const char *env_get(const struct strvec *env, const char *key);

#endif
