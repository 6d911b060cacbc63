/*
 * What FlagGems' benchmark harness needs of the process zlb runs it in: its
 * pytest options (benchmark/conftest.py), its environment (vendor, FlagTune,
 * the tuner cache), and where that tuner cache is. Nothing else in zlb
 * spells these.
 */
#ifndef ZLB_FLAGGEMS_CHILD_H
#define ZLB_FLAGGEMS_CHILD_H

#include "lib/strvec.h"

struct flaggems_args {
	const char *level;          /* --level: core | comprehensive */
	int warmup_ms, iter_ms;     /* --warmup / --iter, milliseconds */
	const char *shape_file;     /* --shape_file, or NULL for upstream's own shapes */
	const struct strvec *dtypes;/* --dtypes, one each; empty: the operator's own */
};

/*
 * Append the harness's options to a pytest command line. zlb always runs
 * the kernel mode (--mode kernel) and replaces its timer itself.
 */
void flaggems_pytest_args(struct strvec *argv, const struct flaggems_args *a);

/*
 * The variables flag_gems reads its vendor from, in its order
 * (runtime/backend/device_finder.py): the first one set wins.
 */
extern const char *const flaggems_vendor_vars[];

/*
 * The vendor the user chose in env (a non-empty GEMS_VENDOR, FLAGGEMS_VENDOR,
 * GEMS_BACKEND or FLAGGEMS_BACKEND, in flag_gems' order), or NULL. *var is
 * set to the variable's name when found.
 */
const char *flaggems_user_vendor(const struct strvec *env, const char **var);

/*
 * Set the harness's environment in env: GEMS_VENDOR=vendor (flag_gems reads
 * it first and skips a device probe per vendor) unless the user already
 * chose one (flaggems_user_vendor: theirs is kept, never overwritten),
 * USE_FLAGTUNE, and with isolated_cache a tuner cache of the run's own
 * (FLAGGEMS_CACHE_DIR, no FLAGGEMS_DB_URL).
 */
void flaggems_child_env(struct strvec *env, const char *vendor, int use_flagtune,
			const char *isolated_cache);

/*
 * The tuner cache a run with env uses, as its caliber says it:
 * "isolated", or "shared(<FLAGGEMS_DB_URL | FLAGGEMS_CACHE_DIR | ~/.flaggems>)".
 */
char *flaggems_tuner_cache(const struct strvec *env, const char *isolated_cache);

#endif
