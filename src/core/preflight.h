/*
 * Preflight: everything `zlb run` can check before it starts anything.
 * A wrong path must fail as a wrong path: without these checks a missing
 * benchmark directory surfaces as pytest's "unrecognized arguments: --level"
 * several layers away. On failure the caller prints
 * "PREFLIGHT_FAILED check=<name>", the sentence and the fix, and exits 3.
 */
#ifndef ZLB_PREFLIGHT_H
#define ZLB_PREFLIGHT_H

#include "backends/backend.h"
#include "providers/builtin_shapes.h"
#include "providers/flaggems.h"
#include "run_config.h"
#include "shapefile.h"
#include "strbuf.h"
#include "strvec.h"

struct preflight {
	/* What was established (valid after success). */
	const struct backend_ops *backend;
	char *python;                 /* absolute interpreter path */
	char *python_version;
	char *pytest_version;
	char *python_dir;             /* directory holding the zlbench package */
	char *timer_lib;              /* libzlbtimer.so (graph timer), or NULL */
	struct flaggems_target target;
	const char *shape_mode;       /* inline | file | upstream */
	const struct builtin_shapes *builtin;
	struct shape_file shapes;     /* loaded unless upstream */
	struct shape_lookup lookup;
	struct device_list devices;
	char *physical_device;        /* value for the visibility variables */
	const char *timer;            /* graph | direct */
	char *replay_from;            /* absolute, or NULL */
	char *looked;                 /* where the checkout was searched */
	struct strvec notes;          /* lines worth showing in the run header */

	/* Why it failed. */
	const char *failed_check;
	struct strbuf why;
	struct strbuf fix;
};

/*
 * Run the checks in order: backend, python, flaggems_dir, benchmark_file,
 * shape_file, replay_dir, device, runs_dir. Returns 0, or -1 with
 * failed_check/why/fix filled. envp is the environment the child would
 * inherit (the probe of the Python side runs with it).
 */
int preflight_run(struct preflight *pf, const struct run_config *cfg,
		  char *const *envp);
void preflight_release(struct preflight *pf);

/* The environment of the child: envp with the zlbench package on PYTHONPATH. */
void preflight_python_env(const struct preflight *pf, char *const *envp,
			  struct strvec *env);

#endif
