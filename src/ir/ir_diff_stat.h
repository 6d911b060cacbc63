/*
 * zlb ir diff --stat: what differs between two runs' IR, one entry per
 * laid-out variant (paired by <shape>/<kernel>/<variant> as ir_diff.h
 * pairs them), with the lines added and removed in the stage's file (diff
 * -u, spawned without a shell) and both files' sizes; then as a table for
 * a terminal, JSON (schema_version 1), CSV or Markdown.
 *
 * JSON: { "schema_version": 1, "kind": "zlb-ir-diff-stat", "a", "b" (the
 *         runs), "stage", "summary": { identical, differing, only_a,
 *         only_b, without_stage }, "variants": [ { variant, status,
 *         added, removed, bytes_a, bytes_b } ] }
 * status is same, differs, only_a, only_b (the variant on one side only),
 * file_only_a, file_only_b (both have the variant, one the stage's file);
 * added/removed are null for a binary stage (cubin) or when no diff
 * program is there, bytes_* null for a side without the file.
 */
#ifndef ZLB_IR_DIFF_STAT_H
#define ZLB_IR_DIFF_STAT_H

#include <jansson.h>

#include "ir/ir_diff.h"
#include "lib/strbuf.h"

#define IR_DIFF_STAT_SCHEMA_VERSION 1

enum ir_stat_kind {
	IR_STAT_SAME,
	IR_STAT_DIFFERS,
	IR_STAT_ONLY_A,
	IR_STAT_ONLY_B,
	IR_STAT_FILE_ONLY_A,
	IR_STAT_FILE_ONLY_B,
};

struct ir_stat_entry {
	char *variant;			/* <shape>/<kernel>/<variant> */
	enum ir_stat_kind kind;
	long added, removed;		/* lines; -1 when not counted */
	long long bytes_a, bytes_b;	/* -1: no file on that side */
};

struct ir_diff_stat {
	char *stage;
	struct ir_stat_entry *e;	/* in key order */
	size_t nr, alloc;
	struct ir_diff_summary sum;	/* the same counts zlb ir diff ends with */
};

/*
 * Pair the variants of tree_a and tree_b (o: stage, shape, diff program)
 * into st. Returns 0, or -1 with error() (an index that does not load, a
 * file that cannot be read).
 */
int ir_diff_stat_trees(const char *tree_a, const char *tree_b, const struct ir_diff_opts *o,
		       struct ir_diff_stat *st);
void ir_diff_stat_release(struct ir_diff_stat *st);

/* "same", "differs", "only_a", ... (the JSON and CSV words). */
const char *ir_stat_kind_name(enum ir_stat_kind k);

/*
 * For a terminal: the entries that are not the same (variant, status,
 * +lines, -lines, sizes), the variant column cut to width (0: no limit),
 * then "ir diff: <summary>".
 */
void ir_diff_stat_table(const struct ir_diff_stat *st, size_t width, int color,
			struct strbuf *out);
/* The document above; run_a, run_b: the runs compared. */
json_t *ir_diff_stat_json(const struct ir_diff_stat *st, const char *run_a, const char *run_b);
/* variant,status,added,removed,bytes_a,bytes_b: every entry. */
void ir_diff_stat_csv(const struct ir_diff_stat *st, struct strbuf *out);
/* For a pull request: the runs, the summary and the entries that differ as a table. */
void ir_diff_stat_md(const struct ir_diff_stat *st, const char *run_a, const char *run_b,
		     struct strbuf *out);

#endif
