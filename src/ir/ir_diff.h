/*
 * Comparing the IR trees of two runs (ir_layout.h), and fingerprinting one.
 *
 * Diff: the laid-out variants (not the sweep losers) of each side's
 * index.tsv are paired by <shape>/<kernel>/<variant>; for one stage, each
 * pair whose files differ gets a unified diff from /usr/bin/diff (spawned
 * without a shell), or, for cubin, a "Binary files ... differ" line with
 * sizes and XXH3 hashes.
 *
 * Fingerprint: one XXH3-64 over every stage file below the tree's
 * <shape>/<kernel>/ directories (index.tsv and naming.md are not part of
 * it), in byte order of their relative paths, each fed as
 *     u64le(len(path)) path u64le(len(content)) content
 * so renaming a file, moving bytes between files, or changing one byte
 * changes it; the place of the tree does not.
 */
#ifndef ZLB_IR_DIFF_H
#define ZLB_IR_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/strbuf.h"
#include "lib/strvec.h"

#define IR_DIFF_PROGRAM "/usr/bin/diff"

struct ir_fingerprint {
	uint64_t hash;
	size_t files;
};

/*
 * The stage files of an IR tree (<tree>/<shape>/<kernel>/<variant>.<stage>),
 * as paths relative to tree, in byte order; files at the top (index.tsv,
 * naming.md) describe the tree and are not IR. Symbolic links are not
 * followed. Appends to out; returns 0, or -1 with error().
 */
int ir_tree_stage_files(const char *tree, struct strvec *out);

/* Returns 0, or -1 with error() (tree unreadable, a file changed while read). */
int ir_fingerprint_tree(const char *tree, struct ir_fingerprint *fp);

struct ir_diff_opts {
	const char *stage;	/* "ttgir" when NULL */
	const char *shape;	/* only this shape directory; NULL: all */
	int color;		/* ANSI colour in the output */
	const char *label_a;	/* prefix of A's paths in the output; "a" when NULL */
	const char *label_b;	/* "b" when NULL */
	const char *diff_program;	/* IR_DIFF_PROGRAM when NULL (tests point it elsewhere) */
};

struct ir_diff_summary {
	size_t identical;	/* pairs whose stage files are byte-identical */
	size_t differing;	/* pairs whose stage files differ, or one side lacks it */
	size_t only_a, only_b;	/* variants laid out on one side only */
	size_t without_stage;	/* pairs where neither side has the stage's file */
};

/*
 * Compare the trees tree_a and tree_b (directories holding index.tsv),
 * writing the report to out: the variants on one side only, then a diff
 * per differing pair. The one-line summary is left to the caller
 * (ir_diff_summary_line). Returns 0, or -1 with error() (an index that
 * does not load, a file that cannot be read).
 */
int ir_diff_trees(const char *tree_a, const char *tree_b, const struct ir_diff_opts *o,
		  FILE *out, struct ir_diff_summary *s);

/* "3 identical, 1 differing, 0 only in A, 2 only in B (stage ttgir)". */
void ir_diff_summary_line(const struct ir_diff_summary *s, const char *stage,
			  struct strbuf *out);

#endif
