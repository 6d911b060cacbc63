/*
 * The FlagGems provider: where a benchmark lives in a FlagGems checkout
 * (either upstream repository: `flag_gems` or `flaggems_vllm`), how pytest
 * must be called for it, and what can be learnt about it statically before
 * anything is started.
 */
#ifndef ZLB_PROVIDER_FLAGGEMS_H
#define ZLB_PROVIDER_FLAGGEMS_H

#include "lib/strbuf.h"
#include "lib/strvec.h"

struct flaggems_target {
	char *dir;          /* absolute checkout root (holds benchmark/) */
	char *package;      /* "flag_gems", "flaggems_vllm", or NULL if unknown */
	char *op;           /* test function name without "test_" */
	char *op_file;      /* benchmark file stem without "test_" and ".py" */
	char *test_path;    /* absolute path of the benchmark file */
	char *node;         /* pytest node relative to dir: benchmark/test_x.py::test_op */
	/*
	 * From a static read of the test function: the op_name its Benchmark
	 * gets (after FlagGems' "_backward" suffix rule) and the class chain,
	 * most derived first. Empty when the source does not follow the usual
	 * pattern; then nothing is claimed about it.
	 */
	char *op_name;
	struct strvec chain;
	/* The chain's class overrides set_shapes/get_input_iter (hard-codes shapes). */
	char *hardcoding_class;
};

void flaggems_target_release(struct flaggems_target *t);

/*
 * Pick the checkout: explicit (flag or FLAGGEMS_DIR) if given; else the root
 * above an importable package (importable_pkg_init: path of flag_gems'
 * __init__.py found by the Python probe, or NULL); else the current
 * directory when it is a checkout; else ./FlagGems.
 * Every place looked at is appended to `looked` ("a; b; c") for messages.
 * Returns 0 with *out set, or -1 (error() says what is missing).
 */
int flaggems_find_checkout(const char *explicit_dir, const char *importable_pkg_init,
			   struct strbuf *looked, char **out);

/* The package a checkout provides, from its src/ layout; NULL if neither. */
const char *flaggems_package(const char *dir);

/*
 * Resolve what to run. Either test_node ("path/test_x.py::test_y", absolute
 * or relative to the cwd or to dir) or op (+ optional op_file). Without
 * op_file every benchmark file is searched for `def test_<op>(`; an op found
 * in several files must be disambiguated with op_file. On failure returns
 * -1 and error() says why, naming close operator names when there are some.
 * When test_node is given, dir may be NULL: the checkout is the folder
 * above the node's benchmark/ directory.
 */
int flaggems_resolve(struct flaggems_target *t, const char *dir, const char *op,
		     const char *op_file, const char *test_node);

/* Benchmark files of a checkout, absolute and sorted: benchmark/test_*.py
 * and those one folder deeper (test_FLA/...), not models_benchmark/. */
void flaggems_list_benchmark_files(const char *dir, struct strvec *files);

/* The most of one Python source file the providers read. */
#define FLAGGEMS_SOURCE_LIMIT (8u << 20)

/*
 * What FlagGems' set_shapes will look up, read statically: the op_name
 * given to the Benchmark constructor of test_<t->op> in text (the source of
 * its benchmark module) and the class chain through that module and
 * benchmark/base.py of t->dir. Fills t->op_name, t->chain and
 * t->hardcoding_class as far as the source follows the usual pattern. Used
 * only to say which shape-file key applies; the plugins redo this
 * in-process for real.
 */
void flaggems_scan_benchmark(struct flaggems_target *t, const char *text);

/* Up to max operator names of the checkout close to op, best first. */
void flaggems_close_names(const char *dir, const char *op, struct strvec *out,
			  size_t max);

/* Edit distance (exposed for tests). */
size_t edit_distance(const char *a, const char *b);

#endif
