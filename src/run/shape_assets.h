/*
 * Shape sets for a whole suite (ops/shapes_single.yaml, ops/shapes_multi.yaml):
 * built from a FlagGems checkout's core_shapes.yaml, refreshed against the
 * current inventory (the original's gen_inventory.py --migrate-shapes), and
 * checked: every key names an op_name or a class of the suite, and no
 * operator falls through FlagGems' lookup (op_name, then each class of its
 * chain) to DEFAULT_SHAPES, whose (2**30,) tensor and 1-D layout crash the
 * BLAS family.
 *
 * The operators come in as struct shape_target, one per benchmark test
 * (zlb inventory's rows): this room does not read the inventory itself.
 */
#ifndef ZLB_SHAPE_ASSETS_H
#define ZLB_SHAPE_ASSETS_H

#include <stddef.h>

#include "lib/strvec.h"

/* What FlagGems' set_shapes looks up for one test. Empty strings: unknown. */
struct shape_target {
	const char *repo, *op;
	const char *op_name;
	const char *chain;       /* class chain, most derived first, joined by ">" */
	/*
	 * The class of the chain that hard-codes its shapes, or "": keys of
	 * classes above it do not apply (their entries hold another layout;
	 * the zlbench.shapes plugin stops there too).
	 */
	const char *hardcodes;
};

struct shape_assets_report {
	size_t keys;               /* keys written (or checked) */
	size_t op_keys, class_keys;
	struct strvec moved;       /* "old -> new (why)" */
	struct strvec unmatched;   /* "key: why" */
	struct strvec fallthrough; /* "repo:op (op_name X, chain A>B)" */
	struct strvec own;         /* "repo:op (Class)": measures its own hard-coded shapes */
	/*
	 * "repo:op (...)": the static scan did not follow its chain up to
	 * Benchmark (a class from another module, a helper building it), so
	 * whether FlagGems finds a key cannot be told here.
	 */
	struct strvec unknown;
	struct strvec pinned;      /* "key: reason": kept from the file being rebuilt */
	size_t ops;                /* targets looked at */
};

void shape_assets_report_init(struct shape_assets_report *r);
void shape_assets_report_release(struct shape_assets_report *r);

/*
 * Refresh the keys of shape file in against the targets; write the result
 * to out and the keys that match nothing to unmatched_out (both with
 * header_comment as '#' lines; unmatched_out only when there are some,
 * removed otherwise). A key is kept when it is an op_name or a class of
 * some target; a key naming a test's op whose Benchmark has another op_name
 * moves to that op_name (a "test_" prefix is dropped first, as the old
 * harness wrote keys); anything else is unmatched. A move onto a key the
 * file already has keeps the existing one and sends the old to unmatched.
 * Entries are copied as they are (anchors, merges and all). Then each
 * target is looked up in the result (rep: fallthrough, own, unknown).
 * Returns 0, or -1 with error() (unreadable input, unwritable output).
 */
int shape_assets_migrate(const char *in, const struct shape_target *t, size_t n,
			 const char *out, const char *unmatched_out,
			 const char *header_comment, struct shape_assets_report *rep);

/*
 * Build a suite shape set from core_shapes (FlagGems' benchmark/
 * core_shapes.yaml) into out. multi: every key of core_shapes that names an
 * op_name or class of the targets, with all its shapes. single: the same
 * keys with one representative shape each (the middle one of the list),
 * plus an op_name key for every target whose op_name core_shapes reaches
 * only through a class (its one shape taken from that class's entry, not
 * past a hard-coding class), so each operator is one visible, editable
 * line. shape_desc and other fields are kept. An entry of the file at out,
 * when it exists, that says `pinned: REASON` is kept as it is in place of
 * the built one (a shape the middle one cannot stand for: one_hot's inputs
 * of [4096, 4096] are all dropped by its own size limit); rep->pinned. Keys that match no target
 * are left out (rep->unmatched) and, when unmatched_out is not NULL,
 * written there as they were. Returns 0 or -1 with error().
 */
int shape_assets_build(const char *core_shapes, const struct shape_target *t, size_t n,
		       int single, const char *out, const char *unmatched_out,
		       const char *header_comment, struct shape_assets_report *rep);

/*
 * Check a shape file against the targets without writing anything: keys
 * that match nothing (rep->unmatched) and targets that fall through
 * (rep->fallthrough). Returns 0 (read; the report says how it went) or -1
 * with error().
 */
int shape_assets_check(const char *file, const struct shape_target *t, size_t n,
		       struct shape_assets_report *rep);

/* "<out without .yaml/.yml>.unmatched.yaml" (fresh). */
char *shape_assets_unmatched_path(const char *out);

#endif
