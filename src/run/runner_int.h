/*
 * What runner.c (one run, start to end) shares with runner_child.c (what
 * the measured child and the parallel sweep's shards are given) and
 * runner_identity.c (the run's identity). Private to src/run/.
 */
#ifndef ZLB_RUNNER_INT_H
#define ZLB_RUNNER_INT_H

#include <jansson.h>

#include "lib/proc.h"
#include "rundir/run_tally.h"
#include "run/run_config.h"
#include "run/run_plan.h"
#include "run/runner.h"
#include "run/sweep_shards.h"
#include "run/tee.h"
#include "lib/strvec.h"

/* The files a run makes for its child before it starts, in the run directory. */
struct run_files {
	char *shape_archive;   /* shapes.yaml: the shapes measured */
	char *isolated;        /* tuner_cache/, with --isolate-tuner-cache; else NULL */
	char *compile_cache;   /* triton_cache/: Triton compiles here */
	char *graph_plan;      /* graph_plan.json of a replay; else NULL */
	size_t planned;        /* its measurements */
};

/*
 * The measured child's environment: zlb's own (envp) with the plan's
 * settings, the device's visibility, FlagGems' variables, the engine's
 * knobs and the run's files.
 */
void runner_child_env(const struct run_config *cfg, const struct run_plan *plan,
		      char *const *envp, const char *run_dir, const struct run_files *files,
		      struct strvec *env);

/* The measured child's command line: pytest, or a warm worker's client running it. */
void runner_child_argv(const struct run_config *cfg, const struct run_plan *plan,
		       const char *shape_archive, const struct strvec *plugins,
		       struct strvec *argv);

/*
 * The parallel sweep before the measurement (run/sweep_shards.h): when its
 * records were merged, env is set so that the measured child replays them
 * from the run's own directory. The identity id gets what happened
 * (provenance parallel_sweep) and its caliber, and is written. 0, or -1
 * after error().
 */
int runner_sweep_first(struct tee *t, const struct run_config *cfg, const struct run_plan *plan,
		       char *const *envp, const char *run_dir, const struct strvec *plugins,
		       struct strvec *env, json_t *id, struct sweep_result *res);

/*
 * The identity as it is written before pytest starts: the caliber, and the
 * provenance of everything the run was given (argv: zlb's own command line).
 */
json_t *runner_initial_identity(const struct run_config *cfg, const struct run_plan *plan,
				const char *run_dir, const char *tuner_cache,
				const struct strvec *plugins, const struct strvec *child_argv,
				char **argv);

/* What the run's end adds: the timer used, the outcome, the status, the compiler's build. */
void runner_finalize_identity(json_t *id, const struct run_outcome *o,
			      const struct run_tally *ta, const struct child *c,
			      const char *planned_timer);

/* The identity's status for a zlb run exit code: completed, interrupted, crashed, failed. */
const char *runner_status_word(int exit_code);

#endif
