/*
 * A static read of a FlagGems checkout's benchmark suite: every
 * module-level `def test_*` of benchmark/test_*.py with the skip marks that
 * apply to it and the op_name/class its Benchmark uses, without importing
 * anything (torch need not be installed). The read is line based, like the
 * rest of providers/flaggems.c: it follows FlagGems' house style and is
 * checked against pytest's own collection by `zlb inventory`.
 */
#ifndef ZLB_PROVIDER_FLAGGEMS_SCAN_H
#define ZLB_PROVIDER_FLAGGEMS_SCAN_H

#include <stddef.h>

#include "lib/strvec.h"

struct scanned_test {
	char *rel_path;   /* benchmark/test_x.py, relative to the checkout */
	char *op_file;    /* "x" or "folder/x", as --op-file takes it */
	char *test;       /* test function name */
	char *op;         /* the test name without "test_" */
	unsigned line;    /* of its def */
	/*
	 * Unconditional skip marks (decorator or the module's pytestmark):
	 * their reasons joined by "; ", "(no reason)" for a bare mark; NULL
	 * when there is none.
	 */
	char *skip;
	/* Conditional ones (skipif, importorskip, guarded module skip), as a note; or NULL. */
	char *skipif;
	char *op_name;    /* NULL when the source does not show it */
	char *chain;      /* class chain joined by ">", or NULL */
	/*
	 * The class of the chain that hard-codes its shapes (overrides
	 * set_shapes or get_input_iter), or NULL: shape-file keys of classes
	 * above it do not apply to this test.
	 */
	char *hardcodes;
};

struct flaggems_scan {
	size_t nr, alloc;
	struct scanned_test *v;
	struct strvec files;  /* every benchmark file read, relative paths */
};

#define FLAGGEMS_SCAN_INIT { 0, 0, NULL, { strvec_empty, 0, 0 } }

/*
 * Scan one module's source. dir is the checkout (for benchmark/base.py),
 * rel_path the file's path relative to it. Appends to out.
 */
void flaggems_scan_text(const char *dir, const char *rel_path, const char *text,
			struct flaggems_scan *out);

/*
 * Scan every benchmark file of the checkout at dir (the files
 * flaggems_list_benchmark_files lists), in file order. Returns 0, or -1
 * with error() when dir has no benchmark/ folder or a file cannot be read.
 */
int flaggems_scan_checkout(const char *dir, struct flaggems_scan *out);

void flaggems_scan_release(struct flaggems_scan *s);

/* "folder/x" or "x" for the relative path benchmark/[folder/]test_x.py. Fresh. */
char *flaggems_op_file_of(const char *rel_path);

#endif
