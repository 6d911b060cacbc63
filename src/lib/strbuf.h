/*
 * A growable, always NUL-terminated byte string (after git's strbuf).
 *
 *     struct strbuf sb = STRBUF_INIT;
 *     strbuf_addf(&sb, "%s_%s", op, stamp);
 *     use(sb.buf);
 *     strbuf_release(&sb);
 *
 * sb.buf is never NULL: an empty strbuf points at a static "".
 * Allocation failure aborts (there is nothing sensible to return).
 */
#ifndef ZLB_STRBUF_H
#define ZLB_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#include "lib/error.h"

struct strbuf {
	size_t alloc;
	size_t len;
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT { 0, 0, strbuf_slopbuf }

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
/* Hand the buffer to the caller (who frees it) and reset sb. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_setlen(struct strbuf *sb, size_t len);
static inline void strbuf_reset(struct strbuf *sb) { strbuf_setlen(sb, 0); }

void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) ZLB_PRINTF(2, 3);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap) ZLB_PRINTF(2, 0);
/* Append n copies of c. */
void strbuf_addchars(struct strbuf *sb, int c, size_t n);

void strbuf_trim(struct strbuf *sb);
void strbuf_rtrim(struct strbuf *sb);

/*
 * Read a whole regular file into sb (appending). Returns 0, or -1 with
 * errno set: EISDIR for a directory, EINVAL for anything else that is not
 * a regular file (a FIFO is not waited on), EFBIG past limit (0: none).
 */
int strbuf_read_file(struct strbuf *sb, const char *path, size_t limit);

/* Small helpers on plain strings. */
int starts_with(const char *s, const char *prefix);
int ends_with(const char *s, const char *suffix);
/* If s starts with prefix, point *rest past it and return 1. */
int skip_prefix(const char *s, const char *prefix, const char **rest);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* printf into a fresh allocation. */
char *xstrfmt(const char *fmt, ...) ZLB_PRINTF(1, 2);

/* The plural ending of a count: "%zu row%s", n, PLURAL(n) reads "1 row", "2 rows". */
#define PLURAL(n) ((n) == 1 ? "" : "s")

#endif
