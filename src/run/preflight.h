/*
 * Preflight: everything `zlb run` can check before it starts anything; what
 * it establishes is the run's plan (run/run_plan.h).
 * A wrong path must fail as a wrong path: without these checks a missing
 * benchmark directory surfaces as pytest's "unrecognized arguments: --level"
 * several layers away. On failure the caller prints
 * "PREFLIGHT_FAILED check=<name>", the sentence and the fix, and exits 3.
 */
#ifndef ZLB_PREFLIGHT_H
#define ZLB_PREFLIGHT_H

#include <stdio.h>

#include "run/run_config.h"
#include "run/run_plan.h"
#include "lib/strbuf.h"

struct preflight {
	struct run_plan plan;         /* valid after success */

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

/*
 * One probe of the interpreter for many runs (zlb batch).
 *
 * Every `zlb run` probes its Python (spawn, import pytest: ~120 ms, more
 * than the whole harness budget of a batch operator). A batch runs the
 * same interpreter in the same environment for every operator, so it
 * probes once with preflight_python() and gives its children
 *
 *   ZLB_PYTHON_PROBED=<python>\t<identity>\t<pid>:<start>\t<facts>
 *
 * python: the absolute path preflight resolved; identity:
 * st_dev:st_ino:st_mtime_ns:st_size:st_ctime_ns of the file it names
 * (stat'ed before the probe ran); pid:start: the batch's process id and
 * its start time in clock ticks since boot (/proc/<pid>/stat field 22);
 * facts: the probe's answer (compact JSON, never holding a tab).
 *
 * A zlb run honours the value only when all of these hold, and otherwise
 * ignores it and probes as before (never an error):
 *   - its parent process is the one named, same pid and start time: a value
 *     exported in a shell, copied from a log or inherited by a grandchild
 *     is not its parent's, and a reused pid has another start time (a
 *     child of another executor than the local one probes for itself);
 *   - the interpreter it resolved is the same path, and that file still
 *     has the same identity (a python replaced, rebuilt or touched since
 *     the probe is probed again);
 *   - the facts parse as a JSON object.
 * The facts then pass the same checks as a fresh probe's (pytest, zlbench).
 * The producer must probe in exactly the environment and directory the
 * children get (minus this variable): the facts depend on both. zlb batch
 * removes an inherited value before it probes.
 */
#define PREFLIGHT_PROBED_ENV "ZLB_PYTHON_PROBED"

/*
 * The python check of preflight_run alone: resolve cfg->python, find the
 * zlbench package beside the binary, probe the interpreter in envp (never
 * trusting PREFLIGHT_PROBED_ENV: this is the probe others trust). Returns
 * 0, or -1 with failed_check/why/fix filled as preflight_run fills them.
 * Release pf with preflight_release() either way.
 */
int preflight_python(struct preflight *pf, const struct run_config *cfg,
		     char *const *envp);

/*
 * The checkout check of preflight_run alone, for zlb batch to make once for
 * all its operators after preflight_python() passed on pf: dir (or, NULL,
 * the checkout zlb run would discover with pf's interpreter) must be a
 * FlagGems checkout. Returns 0 with *found (absolute, the caller's), or -1
 * with check flaggems_dir filled as preflight_run fills it.
 */
int preflight_checkout(struct preflight *pf, const char *dir, char **found);

/*
 * The PREFLIGHT_PROBED_ENV value that vouches for pf's probe to the
 * direct children of this process. NULL when none can be made (a path
 * holding a tab or newline, no /proc): children then probe themselves.
 */
char *preflight_probed_value(const struct preflight *pf);

/*
 * Append the failed check's report (rundir/preflight_report.h: the check,
 * the sentence, the fix) to sb; side: zlb ab's A or B, or NULL.
 */
void preflight_failure_text(const struct preflight *pf, const char *side, int color,
			    struct strbuf *sb);

#endif
