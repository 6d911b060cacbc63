/*
 * What ir_diff.c (the unified diff, the fingerprint) shares with
 * ir_diff_stat.c (--stat): one side's laid-out variants, paired by key.
 * Private to src/ir/.
 */
#ifndef ZLB_IR_DIFF_INT_H
#define ZLB_IR_DIFF_INT_H

#include "ir/ir_index.h"
#include "lib/strbuf.h"

struct ir_diff_side {
	struct ir_index idx;
	struct ir_index_entry **e;	/* kept entries (not sweep losers), sorted by key */
	size_t n;
};

#define IR_DIFF_SIDE_INIT { IR_INDEX_INIT, NULL, 0 }

/* <shape>, then <kernel>, then <variant>, in byte order. */
int ir_diff_cmp_key(const struct ir_index_entry *x, const struct ir_index_entry *y);

/* tree's index.tsv, its kept variants (of shape only, when not NULL). Returns 0 or error(). */
int ir_diff_side_load(const char *tree, const char *shape, struct ir_diff_side *s);
void ir_diff_side_release(struct ir_diff_side *s);

/* One side's tree: its path for messages, its descriptor for reading. */
struct ir_tree {
	const char *path;
	int fd;
};

/* The tree directory itself, not a link to one: t->fd open on it. 0 or error(). */
int ir_tree_open(const char *path, struct ir_tree *t);

/* The stage file rel below t, read whole: nothing outside the tree, no link followed. */
int ir_tree_read_stage(const struct ir_tree *t, const char *rel, struct strbuf *out);

/*
 * prog -u of two texts (diff's exit status, or -1 after error()), through
 * copies in a private temporary directory: the diff program is given files
 * zlb has read itself, never a path from the run (which it would follow
 * through any link).
 */
int ir_diff_texts(const char *prog, const char *label_a, const char *label_b,
		  const struct strbuf *a, const struct strbuf *b, struct strbuf *text);

#endif
