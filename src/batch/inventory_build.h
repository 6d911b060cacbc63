/*
 * Building an inventory (`zlb inventory`): a static scan of a checkout's
 * benchmark suite, checked against pytest's own collection, written as the
 * tables inventory.h reads.
 */
#ifndef ZLB_CORE_INVENTORY_BUILD_H
#define ZLB_CORE_INVENTORY_BUILD_H

#include <stddef.h>

#include "batch/inventory.h"
#include "lib/strvec.h"

/* What one repository's build established, for inventory.json and the terminal. */
struct inventory_repo_info {
	const char *repo;          /* "main" or "vllm" */
	char *checkout;            /* absolute */
	char *package;             /* flag_gems / flaggems_vllm, or NULL if unknown */
	char *commit;              /* 40 hex, or NULL */
	char *verify;              /* "pytest", or why the rows are unverified */
	size_t files, functions, skipped, collected, not_collected, unverified;
	size_t collect_only;       /* nodes only pytest found (source=collect) */
	size_t collect_errors;     /* files pytest could not import */
	size_t dismissed;          /* filled by the caller */
	struct strvec benchmark_files;  /* relative paths scanned */
};

void inventory_repo_info_release(struct inventory_repo_info *info);

void inventory_row_release(struct inventory_row *r);

/*
 * Scan the checkout at info->checkout and append one row per test function
 * of repo info->repo to inv (source=scan, collected=unverified). Fills the
 * checkout facts of info (package, commit, files, functions, skipped).
 * Returns 0, or -1 after error() (no benchmark/ folder, unreadable file).
 */
int inventory_scan(struct inventory *inv, struct inventory_repo_info *info);

struct inventory_verify {
	const char *python;        /* absolute interpreter path */
	char *const *envp;         /* environment for pytest */
	int timeout_ms;
};

/*
 * Run `python -m pytest --collect-only -q` once over the benchmark files
 * of info, in the checkout, and mark rows [first, inv->nr) from its output
 * (inventory_apply_collect). When pytest cannot collect at all the rows
 * stay "unverified" and info->verify says why; that is not a failure.
 */
void inventory_verify(struct inventory *inv, size_t first,
		      const struct inventory_verify *v, struct inventory_repo_info *info);

/*
 * Mark rows [first, inv->nr) of repo info->repo from pytest's collection
 * output (rc: its exit code): collected yes/no with the number of cases;
 * nodes the scan missed are appended with source=collect; a file pytest
 * could not import puts its error in the note of its rows. When pytest
 * collected nothing and reported errors (or failed outright), every row is
 * left "unverified" and -1 is returned with info->verify set; else 0.
 */
int inventory_apply_collect(struct inventory *inv, size_t first, const char *output,
			    int rc, struct inventory_repo_info *info);

/* Rows [first, inv->nr) in file order: op_file, then test. */
void inventory_sort(struct inventory *inv, size_t first);

/*
 * Write <out_dir>/inventory_<repo>.csv for rows [first, first+n) (one
 * repo), atomically. Returns 0 or -1 after error().
 */
int inventory_write_csv(const char *out_dir, const char *repo,
			const struct inventory *inv, size_t first, size_t n);

/*
 * Write <out_dir>/inventory.json for the repos built now; entries of an
 * older inventory.json for repos not built now are carried over, marked
 * "kept": true, as their CSV files are kept. Returns 0 or -1.
 */
int inventory_write_meta(const char *out_dir, const struct inventory_repo_info *infos,
			 size_t n);

#endif
