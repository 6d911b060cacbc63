/*
 * Operator inventories: every benchmark test function of the FlagGems
 * checkouts, as `zlb inventory` writes them under an ops directory
 *
 *     <ops>/inventory_main.csv    repo "main"  (package flag_gems)
 *     <ops>/inventory_vllm.csv    repo "vllm"  (package flaggems_vllm)
 *     <ops>/inventory.json        schema_version, created, per-repo facts
 *
 * and the selection the batch layer draws from them. Columns are read by
 * name (csvfile.h), so a column added later does not break this reader.
 */
#ifndef ZLB_CORE_INVENTORY_H
#define ZLB_CORE_INVENTORY_H

#include <stddef.h>

#include "lib/strvec.h"

/* Version of the inventory tables and inventory.json. */
#define INVENTORY_SCHEMA_VERSION 1

/* One benchmark test function. Every field is a string, never NULL. */
struct inventory_row {
	char *repo;       /* "main" or "vllm" */
	char *op;         /* the OP `zlb run` accepts: test function minus "test_" */
	char *op_file;    /* what --op-file accepts: "stem" or "folder/stem" */
	char *test;       /* test function name, "test_<op>" */
	char *node;       /* pytest node relative to the checkout */
	char *skip;       /* unconditional skip: its reason, "(no reason)", or "" */
	char *skipif;     /* conditional skip marks, as a note; never excludes */
	char *op_name;    /* op_name the Benchmark gets (shape-file key), or "" */
	char *bench_class;/* class chain, most derived first, joined by ">" */
	char *collected;  /* "yes", "no" or "unverified" */
	char *cases;      /* test items pytest collected for it ("" unverified) */
	char *source;     /* "scan" (static read) or "collect" (pytest only) */
	char *note;       /* e.g. the collection error of its file, or "" */
	/* The class of bench_class that hard-codes its shapes, or "" (older tables: "") */
	char *hardcodes;
};

struct inventory {
	size_t nr, alloc;
	struct inventory_row *rows;
};

#define INVENTORY_INIT { 0, 0, NULL }

/* Repository names, in output order, and the file each is stored in. */
extern const char *const inventory_repos[];   /* "main", "vllm", NULL */
/* "inventory_<repo>.csv" (fresh allocation), or NULL for an unknown repo. */
char *inventory_csv_name(const char *repo);

/*
 * Read every inventory_<repo>.csv present in ops_dir into inv (appending).
 * At least one must exist: otherwise -1 with an error naming the directory
 * and the fix (`zlb inventory --out DIR`). A table missing a required
 * column, or an inventory.json of another schema_version, is an error.
 */
int inventory_load(const char *ops_dir, struct inventory *inv);
void inventory_release(struct inventory *inv);

/*
 * The batch syntax `[repo:]op[@op_file]` for row r of inv: no prefix for
 * main, "vllm:" for vllm; "@op_file" only when another row of the same
 * repo has the same op. Fresh allocation.
 */
char *inventory_spec(const struct inventory *inv, size_t r);

/*
 * `zlb batch --all`: every function of the inventory in ops_dir that pytest
 * collected (or that is unverified), has no unconditional skip mark and is
 * not dismissed, pushed to specs in inventory order (repo, op_file, test).
 * Each function left out is pushed to excluded (may be NULL) as
 * "<spec>\t<reason>" (reason: "skip mark: ...", "not collected by pytest",
 * "dismissed: ..."), so a caller can split at the tab.
 *
 * dismiss_path: the dismiss list (dismiss.h); NULL means <ops_dir>/dismiss.txt
 * when that file exists, and nothing dismissed when it does not. A given
 * path that does not exist is an error. Dismiss entries that match no
 * inventory function draw a warning() each.
 *
 * Returns 0, or -1 after error() (no inventory, unreadable or bad dismiss
 * list); specs and excluded may then hold a partial result.
 */
int inventory_select_all(const char *ops_dir, const char *dismiss_path,
			 struct strvec *specs, struct strvec *excluded);

/*
 * The checkout of repo ("main", "vllm") that the inventory in ops_dir was
 * built from (inventory.json), or NULL when it records none (or only a
 * relative path). Whether it still is a checkout is the caller's check.
 * Fresh allocation.
 */
char *inventory_checkout(const char *ops_dir, const char *repo);

#endif
