/*
 * What the files of preflight share (preflight.c: the run's checks in
 * order; preflight_shapes.c: the shape mode and file; preflight_plugins.c:
 * the extra plugins). Private to src/run/.
 */
#ifndef ZLB_PREFLIGHT_INT_H
#define ZLB_PREFLIGHT_INT_H

#include "run/preflight.h"

/* Record a failure: the sentence is the last error(); fix says what to do. Returns -1. */
int preflight_fail(struct preflight *pf, const char *check, const char *fix_fmt, ...)
	ZLB_PRINTF(3, 4);

/*
 * The shapes check: the mode (as given or derived), the shape file loaded
 * and its key for the operator along its class chain, notes for the header.
 */
int preflight_check_shapes(struct preflight *pf, const struct run_config *cfg);

/*
 * What the backend decides about this run besides its device
 * (preflight_backend.c): the FlagGems vendor the child gets (a user's
 * GEMS_VENDOR / FLAGGEMS_VENDOR kept), the capture deny list read against
 * this target (a key naming the benchmark file, not a test function, is
 * said), and the opt-in switches only some backends have.
 */
int preflight_check_backend(struct preflight *pf, const struct run_config *cfg,
			    char *const *envp);

/*
 * The --extra-plugins check: each module must be one the interpreter
 * finds from the checkout, as pytest's -p will import it. A missing one
 * failed the run as "tests failed" (rc 1) with a traceback, after its
 * directory existed.
 */
int preflight_check_plugins(struct preflight *pf, const struct run_config *cfg,
			    char *const *envp);

#endif
