/*
 * The IR tree of a run: from the staging the zlbench.ir plugin writes
 * (docs/protocol.md section 6: <run>/ir/compiles.jsonl, ir/staged.jsonl,
 * ir/files/<hash>/<name>.<stage>) and the "launches" of each results.jsonl
 * row, build
 *
 *   <run>/ttgir/<shape>/<kernel>/<variant>.<stage>   the launched variants' files
 *   <run>/ttgir/index.tsv                            every variant, sweep losers too
 *   <run>/ttgir/naming.md                            the legend of the names
 *
 * Names follow ir_naming.h. A variant is one compiled hash; it is laid out
 * under every shape whose rows launched it (in the first eager call of a
 * torch/gems measurement), its files hard-linked from the staging (copied
 * when a link is impossible). Compiled variants that no row launched (an
 * autotune sweep's losers) are only listed in index.tsv.
 */
#ifndef ZLB_IR_LAYOUT_H
#define ZLB_IR_LAYOUT_H

#include <stddef.h>

#include "lib/strvec.h"

struct ir_layout_report {
	int has_ir;		/* 0: no IR was captured; why says so */
	char why[512];		/* has_ir == 0: one sentence for the user */
	size_t shapes;		/* shape directories */
	size_t kernels;		/* distinct kernels laid out */
	size_t variants;	/* (shape, kernel, variant) entries laid out */
	size_t files;		/* stage files placed under ttgir/ */
	size_t sweep_losers;	/* variants compiled in an autotune sweep, never launched by a row */
	size_t unlaunched;	/* other compiled variants no row launched */
	size_t compiles;	/* distinct compiled variants (hashes) */
	size_t no_files;	/* laid-out entries without any staged file */
	size_t refused_files;	/* staged files refused: a link (or below one), not a regular file */
	size_t skipped_lines;	/* unparsable lines in the .jsonl inputs */
	size_t unattributed;	/* launch records without a hash (variant unknown) */
};

/*
 * (Re-)build <run_dir>/ttgir/: built in a temporary directory beside it,
 * then swapped in, so a reader sees the old tree or the new one; the old
 * one is removed. Returns 0 (built; rep->has_ir = 1), 1 when the run
 * captured no IR (rep->has_ir = 0, rep->why; nothing is touched, an
 * existing ttgir/ is kept), or -1 with error() (run_dir unreadable, a
 * write failed). rep may be NULL.
 */
int ir_layout_build(const char *run_dir, struct ir_layout_report *rep);

/*
 * Build the tree of run_dir into dest, which must not exist (it is
 * created). Same returns as ir_layout_build; on 1 or -1 dest is absent.
 */
int ir_layout_build_to(const char *run_dir, const char *dest, struct ir_layout_report *rep);

/* Does run_dir hold IR staging (a non-empty ir/)? */
int ir_has_staging(const char *run_dir);

/* ---- Runs as inputs of `zlb ir` ----------------------------------------- */

/* Is dir a run directory (run_identity.json, results.jsonl, ir/ or ttgir/ in it)? */
int ir_is_run_dir(const char *dir);

/*
 * The operator of a run: run_identity.json's "op", else the first
 * results.jsonl row's "op", else the directory's name. Fresh string.
 */
char *ir_run_op(const char *run_dir);

/*
 * The runs named by path: path itself when it is a run, else the run
 * directories one or two levels below it (a batch: <batch>/<repo>/<op>/),
 * sorted. Appends absolute paths to runs. Returns how many were found, or
 * -1 with error() when path is not a readable directory.
 */
int ir_find_runs(const char *path, struct strvec *runs);

/*
 * A laid-out IR tree to read: the run's ttgir/ when it has an index.tsv,
 * else one built from its staging into a temporary directory (removed by
 * ir_view_close). has_ir 0 (with why) when there is neither.
 */
struct ir_view {
	char *tree;		/* the ttgir/ directory to read */
	char *tmp;		/* temporary parent to remove, or NULL */
	int has_ir;
	char why[512];
};

/* Returns 0 (see has_ir) or -1 with error(). */
int ir_view_open(const char *run_dir, struct ir_view *v);
void ir_view_close(struct ir_view *v);

#endif
