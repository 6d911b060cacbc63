/*
 * The parts of ir_layout that its files share (ir_inputs.c reads a run's
 * staging, ir_layout.c names and places, ir_layout_write.c writes the index
 * and the naming notes); private to src/ir/.
 */
#ifndef ZLB_IR_LAYOUT_INT_H
#define ZLB_IR_LAYOUT_INT_H

#include <jansson.h>

#include "ir/ir_layout.h"
#include "ir/ir_naming.h"
#include "lib/strvec.h"

#define GROW(p, n, a) do {                                           \
	if ((n) == (a)) {                                              \
		(a) = (a) ? (a) * 2 : 16;                                \
		(p) = xrealloc((p), (a) * sizeof(*(p)));                 \
	}                                                              \
} while (0)

/* ---- what the run's staging says (ir_inputs.c) ---- */

struct compile {
	char *hash;
	char *kernel;		/* function name (raw) */
	int num_warps, num_stages, num_ctas;
	json_t *constexprs;	/* object or NULL */
	json_t *signature;	/* object or NULL */
	json_t *spec;		/* object or NULL */
	int tuned;		/* compiled while an autotune sweep was timing */
	int launched;
};

struct staged {
	char *hash;
	struct strvec stages;	/* parallel */
	struct strvec paths;	/* relative to the run: opened below it (lib/safefile.h) */
};

struct launch {
	size_t row;		/* index into rows */
	char *hash;
	char *kernel;		/* from the launch record; may be NULL */
	long long count;
};

struct row {
	char *detail;
	char *dtype;		/* may be NULL */
};

struct inputs {
	const char *run_dir;
	int run_fd;		/* the run directory: staged files are opened below it */
	char *ir_dir;
	struct compile *c;
	size_t nc, ac;
	struct staged *st;
	size_t nst, ast;
	struct row *rows;
	size_t nrows, arows;
	struct launch *l;
	size_t nl, al;
	size_t skipped;
	size_t unattributed;
	size_t bad_stage_files;
	size_t refused_files;	/* staged files that are links or not regular: not laid out */
};

/* Read run_dir's ir/ staging, compile and launch records and rows into in. */
int irl_read_inputs(const char *run_dir, struct inputs *in);
void irl_inputs_release(struct inputs *in);
/* The compile record of hash, or NULL. */
struct compile *irl_find_compile(struct inputs *in, const char *hash);
/* The staged files of hash (created when create), or NULL. */
struct staged *irl_staged_get(struct inputs *in, const char *hash, int create);

/* ---- the layout (ir_layout.c) ---- */

struct kernel_info {
	char *raw;
	char *dir;
	struct ir_abbrevs params;	/* constexpr names */
	struct ir_abbrevs args;		/* argument names (specialisation suffix) */
};

struct layout {
	struct inputs in;
	char **shape_of_row;		/* per row */
	struct strvec details;		/* distinct, sorted */
	char **detail_names;		/* parallel to details */
	struct kernel_info *k;
	size_t nk;
	struct entry *e;
	size_t ne, ae;
	unsigned suffixes;		/* IR_SUFFIX_* used anywhere */
};

struct entry {
	const char *shape;
	struct kernel_info *kernel;
	const char *hash;
	struct compile *comp;		/* NULL: no compile record */
	long long launches;
	struct strvec dtypes;		/* raw, sorted unique */
	char *variant;
	struct strvec files;		/* relative to ttgir/ */
};

/* The kernel named raw in ly, or NULL. */
struct kernel_info *irl_kernel_find(struct layout *ly, const char *raw);

/* ---- its notes (ir_layout_write.c) ---- */

int irl_write_index(struct layout *ly, const char *dest, struct ir_layout_report *rep);
int irl_write_naming(struct layout *ly, const char *dest, const struct ir_layout_report *rep);

#endif
