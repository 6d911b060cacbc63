/*
 * Which in-process plugins a run loads, and in which order, derived from the
 * backend's capabilities and the run's options rather than a fixed list.
 */
#ifndef ZLB_PLUGIN_PLAN_H
#define ZLB_PLUGIN_PLAN_H

#include "backends/backend.h"
#include "lib/strvec.h"

struct plugin_plan_input {
	const struct backend_ops *backend;
	const char *shape_mode;           /* inline | file | upstream */
	const struct strvec *extra;       /* user's extra plugin modules */
	int ir;                           /* IR capture wanted */
	int mm_cluster_fix;               /* --mm-cluster-fix (needs BACKEND_CAP_MM_CLUSTER_FIX) */
};

/*
 * Fill out with module names for `pytest -p`: the backend's compatibility
 * plugins first (they rewrite collection-time markers, so nothing may look
 * at the items before them), then results (the others report through it),
 * ir (its compile listener must be in place before anything compiles),
 * seed, autotune (record or replay), shapes (not in upstream mode: FlagGems'
 * own shapes are the point), the mm cluster fix where asked for and the
 * backend has it, timing, then the user's extras, without duplicates.
 */
void plan_plugins(const struct plugin_plan_input *in, struct strvec *out);

/*
 * The timer a run uses: "graph" where the backend supports zlb's graph
 * timer, else "direct". An explicit request for graph on a backend without
 * it is an error (returns NULL with error()).
 */
const char *plan_timer(const struct backend_ops *b, const char *requested);

#endif
