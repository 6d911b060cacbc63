/*
 * JSON files and JSON-lines files (jansson). Writes are atomic (temporary
 * file + rename); readers of .jsonl skip a line that does not parse, since
 * a crash can cut the last line short, and count what they skipped.
 */
#ifndef ZLB_JSONFILE_H
#define ZLB_JSONFILE_H

#include <jansson.h>

#include "lib/strvec.h"
#include <stddef.h>

/* Write obj as indented JSON with a final newline, atomically. */
int json_write_file(const char *path, const json_t *obj);
/*
 * Read a JSON object from path (a regular file, not reached through a link
 * as its last component: lib/safefile.h). Returns 0, 1 if the file is
 * absent, -1 on error.
 */
int json_read_file(const char *path, json_t **out);

/* Called for each object of a .jsonl file; a non-zero return stops the walk. */
typedef int (*jsonl_fn)(void *ctx, json_t *obj, size_t lineno);

/*
 * Walk path (a regular file, as json_read_file()) line by line. Returns 0,
 * 1 if the file does not exist, or -1. Lines that are not JSON objects are
 * counted in *skipped (may be NULL).
 */
int jsonl_each(const char *path, jsonl_fn fn, void *ctx, size_t *skipped);

/* Append one object as a line (used by tests and by the C side's own events). */
int jsonl_append(const char *path, const json_t *obj);

/*
 * json_dumps(j, flags), byte for byte, with the items of j's last member
 * dumped on every core when it is an array of many (two whole-suite
 * compares are 11000 row objects, 22 MB of text). flags must indent
 * (JSON_INDENT(n), n > 0); otherwise, and for any other j, it is
 * json_dumps itself. NULL on failure, as json_dumps.
 */
char *json_dumps_parallel(const json_t *j, size_t flags);

/* Small accessors that tolerate absent or mistyped fields. */
const char *json_str(const json_t *obj, const char *key);
double json_num(const json_t *obj, const char *key, double dflt);
/* A new JSON array of the strings of sv. */
json_t *json_strvec(const struct strvec *sv);

#endif
