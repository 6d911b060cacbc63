/*
 * <run>/ttgir/index.tsv: one line per laid-out variant, then one per
 * autotune sweep loser. A header line names the columns (ir_index_columns);
 * a reader finds columns by name, so columns may be appended later.
 * Values are escaped: '\\' -> "\\\\", tab -> "\\t", newline -> "\\n",
 * carriage return -> "\\r". An absent value is "-".
 */
#ifndef ZLB_IR_INDEX_H
#define ZLB_IR_INDEX_H

#include <stddef.h>

#include "lib/strbuf.h"
#include "lib/strvec.h"

#define IR_TREE_DIR "ttgir"
#define IR_INDEX_FILE "index.tsv"
#define IR_NAMING_FILE "naming.md"

/* The header, in order, NULL-terminated: shape, kernel, variant, dtype,
 * launches, hash, num_warps, num_stages, num_ctas, constexprs,
 * specialization, sweep_loser, files. */
extern const char *const ir_index_columns[];

void ir_tsv_escape(const char *s, struct strbuf *out);
void ir_tsv_unescape(const char *s, size_t len, struct strbuf *out);

struct ir_index_entry {
	char *shape, *kernel, *variant, *dtype, *hash;
	long long launches;
	int sweep_loser;
	struct strvec files;	/* paths relative to ttgir/ ("1024x1024/k/w4s3.ttgir") */
};

struct ir_index {
	struct ir_index_entry *e;
	size_t nr, alloc;
};
#define IR_INDEX_INIT { NULL, 0, 0 }

/*
 * Read an index.tsv (a regular file, not a link). Returns 0, 1 when the
 * file does not exist, or -1 with error() (no header, a missing column, a
 * file named outside the tree: rel_path_is_safe()).
 */
int ir_index_load(const char *path, struct ir_index *idx);
void ir_index_release(struct ir_index *idx);

/* The file of entry e for stage ("ttgir"), or NULL. */
const char *ir_index_file(const struct ir_index_entry *e, const char *stage);

#endif
