/*
 * The dismiss list: operators a batch leaves out on purpose, each with the
 * reason a person found. It is written by hand, so every line is checked
 * and a mistake is reported with file:line and what to write instead.
 *
 *     # comment lines and blank lines are ignored
 *     #!zlb-dismiss 1                  optional format line (only 1 exists)
 *     softmax            fails on H20: issue #123 (2025-05-01)
 *     vllm:fused_moe     # OOM at the default shapes
 *     nextafter@nextafter_ needs a newer torch
 *
 * A line is SPEC, whitespace, REASON. SPEC is `[repo:]op[@op_file]` as in
 * the batch syntax: repo is main (the default) or vllm; without @op_file
 * every file's test_<op> of that repo is meant. REASON is the rest of the
 * line; a leading '#' is allowed (older lists wrote the reason as a trailing
 * comment) but a reason must be there.
 */
#ifndef ZLB_CORE_DISMISS_H
#define ZLB_CORE_DISMISS_H

#include <stddef.h>

#define DISMISS_FORMAT_VERSION 1

struct dismiss_entry {
	char *repo;      /* "main" or "vllm" */
	char *op;
	char *op_file;   /* NULL: any file */
	char *reason;
	unsigned line;   /* line in the file */
	int used;        /* set by dismiss_match */
};

struct dismiss_list {
	char *path;      /* for messages: the file, or the name given to parse */
	size_t nr, alloc;
	struct dismiss_entry *v;
};

#define DISMISS_LIST_INIT { NULL, 0, 0, NULL }

/*
 * Parse one `[repo:]op[@op_file]` spec (no reason). Fresh strings in the
 * outputs (op_file NULL when absent). Returns 0, or -1 with error() saying
 * what is wrong with it.
 */
int dismiss_parse_spec(const char *spec, char **repo, char **op, char **op_file);

/*
 * Parse the text of a dismiss list; what names it in messages. The first
 * bad line stops the parse: -1 with error() "what:line: problem; fix".
 * Duplicate entries draw a warning() and the first one is kept.
 */
int dismiss_parse(const char *text, const char *what, struct dismiss_list *dl);

/* Read and parse path. A missing file is an error (errno ENOENT kept). */
int dismiss_load(const char *path, struct dismiss_list *dl);

/*
 * The entry that dismisses test_<op> of op_file in repo, or NULL. An entry
 * with an op_file matches that file only. Marks the entry used.
 */
const struct dismiss_entry *dismiss_match(struct dismiss_list *dl, const char *repo,
					  const char *op, const char *op_file);

void dismiss_release(struct dismiss_list *dl);

#endif
