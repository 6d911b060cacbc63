#include "run/plugin_plan.h"

#include <string.h>

static void push_once(struct strvec *out, const char *name)
{
	if (strvec_find(out, name) < 0)
		strvec_push(out, name);
}

void plan_plugins(const struct plugin_plan_input *in, struct strvec *out)
{
	for (const char *const *p = in->backend->compat_plugins; p && *p; p++)
		push_once(out, *p);
	push_once(out, "zlbench.results");
	if (in->ir)
		push_once(out, "zlbench.ir");
	push_once(out, "zlbench.seed");
	/* Record or replay: every run does one of the two. */
	push_once(out, "zlbench.autotune");
	if (strcmp(in->shape_mode, "upstream"))
		push_once(out, "zlbench.shapes");
	if (in->mm_cluster_fix && (in->backend->caps & BACKEND_CAP_MM_CLUSTER_FIX))
		push_once(out, "zlbench.mm_cluster_fix");
	push_once(out, "zlbench.timing");
	for (size_t i = 0; in->extra && i < in->extra->nr; i++)
		push_once(out, in->extra->v[i]);
}

const char *plan_timer(const struct backend_ops *b, const char *requested)
{
	int graph_ok = (b->caps & BACKEND_CAP_GRAPH_TIMER) != 0;

	if (!requested || !strcmp(requested, "auto"))
		return graph_ok ? "graph" : "direct";
	if (!strcmp(requested, "graph") && !graph_ok) {
		error("--timer graph: the %s backend has no graph timer in zlb; "
		      "use --timer direct (or auto)", b->name);
		return NULL;
	}
	return !strcmp(requested, "graph") ? "graph" : "direct";
}
