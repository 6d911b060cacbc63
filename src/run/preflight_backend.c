/*
 * Preflight: what the backend table decides about this run besides its
 * device (preflight_int.h).
 */
#include <string.h>
#include <strings.h>

#include "providers/flaggems_child.h"
#include "run/preflight_int.h"

/*
 * The vendor flag_gems will read. A user who exported GEMS_VENDOR (or one
 * of the other variables flag_gems reads) chose it: zlb keeps theirs and
 * says so, loudly when it is not the backend's.
 */
static void vendor_in_effect(struct preflight *pf, char *const *envp)
{
	const struct backend_ops *b = pf->plan.backend;
	struct strvec env = STRVEC_INIT;
	const char *var = NULL, *user;

	strvec_pushv(&env, (const char *const *)envp);
	user = flaggems_user_vendor(&env, &var);
	if (!user) {
		pf->plan.flaggems_vendor = xstrdup(b->flaggems_vendor);
	} else {
		pf->plan.flaggems_vendor = xstrdup(user);
		pf->plan.flaggems_vendor_var = xstrdup(var);
		if (strcasecmp(user, b->flaggems_vendor))
			strvec_pushf(&pf->plan.notes, "warning: %s=%s is yours and kept: flag_gems "
				     "dispatches to that vendor, while the %s backend's is %s",
				     var, user, b->name, b->flaggems_vendor);
		else
			strvec_pushf(&pf->plan.notes, "note: FlagGems vendor %s from your %s (kept)",
				     user, var);
	}
	strvec_clear(&env);
}

/*
 * The deny list is keyed by test function name. A key that is this run's
 * benchmark file stem but not its function (unique for test_unique.py,
 * whose test is test_unique2) matches nothing: said in the header rather
 * than left to fail open.
 */
static void deny_keys(struct preflight *pf)
{
	const struct backend_ops *b = pf->plan.backend;
	const struct flaggems_target *t = &pf->plan.target;

	for (const char *const *k = b->capture_deny; k && *k; k++) {
		if (!strcmp(*k, t->op)) {
			strvec_pushf(&pf->plan.notes, "note: the %s backend never captures %s "
				     "(capture deny list): its rows are direct-timed", b->name, *k);
		} else if (t->op_file && !strcmp(*k, t->op_file)) {
			strvec_pushf(&pf->plan.notes, "warning: the %s backend's capture deny key "
				     "'%s' names the benchmark file test_%s.py, not a test function: "
				     "it denies nothing for test_%s (the list is keyed by test "
				     "function name)", b->name, *k, *k, t->op);
		}
	}
}

int preflight_check_backend(struct preflight *pf, const struct run_config *cfg,
			    char *const *envp)
{
	const struct backend_ops *b = pf->plan.backend;

	if (cfg->mm_cluster_fix && !(b->caps & BACKEND_CAP_MM_CLUSTER_FIX)) {
		error("--mm-cluster-fix (ZL_MM_CLUSTER_FIX) keeps FlagGems' Hopper fp16 mm off "
		      "its cluster kernel, which exists only on CUDA; this run is on %s", b->name);
		return preflight_fail(pf, "backend", "drop --mm-cluster-fix (unset "
				      "ZL_MM_CLUSTER_FIX), or run on --backend cuda");
	}
	vendor_in_effect(pf, envp);
	deny_keys(pf);
	return 0;
}
