/*
 * One `zlb run`, after preflight: claim the run directory, archive the
 * shapes, write the identity, run pytest with the planned plugins while
 * teeing its output (pretty and coloured to the terminal, ANSI-free to
 * run.log), then finalise the identity from what the plugins wrote.
 */
#ifndef ZLB_RUNNER_H
#define ZLB_RUNNER_H

#include "run/run_plan.h"
#include "run/run_config.h"

/* The run's own Triton cache (TRITON_CACHE_DIR), dropped at the end unless
 * --keep-compile-cache. */
#define COMPILE_CACHE_DIR "triton_cache"

struct run_outcome {
	char *run_dir;          /* absolute; NULL if none was claimed */
	int exit_code;          /* enum zlb_exit or 128+N */
	int pytest_rc;          /* -1 if pytest never ran */
	int interrupted;        /* signal that stopped the run, or 0 */
	long rows;              /* results.jsonl rows */
	long rows_graph;        /* rows whose two measurements were graph-timed */
	long rows_direct;       /* rows with a direct-timed measurement */
	long tests_passed, tests_failed, tests_skipped;
	double pytest_wall_s;   /* pytest's wall time, spawn to reap; 0 if it never ran */
};

/*
 * Execute the run. The terminal gets the child's output as it comes,
 * through out_fd (normally 1). argv is zlb's own (NULL-terminated), recorded as
 * provenance. Returns 0 when the run happened (whatever pytest said; see
 * out->exit_code), or -1 with error() when zlb itself could not do its
 * part (out->exit_code is then ZLB_EXIT_IO or ZLB_EXIT_USAGE).
 */
int runner_run(const struct run_config *cfg, const struct run_plan *plan,
	       char *const *envp, char **argv, int out_fd,
	       struct run_outcome *out);
void run_outcome_release(struct run_outcome *out);

#endif
