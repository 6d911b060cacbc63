/*
 * What ir_diff.c (the unified diff, the fingerprint) shares with
 * ir_diff_stat.c (--stat): one side's laid-out variants, paired by key.
 * Private to src/ir/.
 */
#ifndef ZLB_IR_DIFF_INT_H
#define ZLB_IR_DIFF_INT_H

#include "ir/ir_index.h"

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

#endif
