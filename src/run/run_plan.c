#include "run/run_plan.h"
#include "run/preflight.h"

#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"

void run_plan_init(struct run_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	strvec_init(&plan->notes);
}

void run_plan_release(struct run_plan *plan)
{
	free(plan->python);
	free(plan->python_version);
	free(plan->pytest_version);
	free(plan->python_identity);
	free(plan->python_facts);
	free(plan->python_dir);
	free(plan->timer_lib);
	flaggems_target_release(&plan->target);
	if (plan->shapes.path)
		shape_file_release(&plan->shapes);
	free(plan->lookup.problem);
	device_list_release(&plan->devices);
	free(plan->physical_device);
	free(plan->replay_from);
	free(plan->looked);
	strvec_clear(&plan->notes);
	free(plan->flaggems_vendor);
	free(plan->flaggems_vendor_var);
}

void run_plan_child_env(const struct run_plan *plan, char *const *envp,
			struct strvec *env)
{
	const char *old;

	strvec_pushv(env, (const char *const *)envp);
	env_unset(env, PREFLIGHT_PROBED_ENV);
	old = env_get(env, "PYTHONPATH");
	if (plan->python_dir) {
		char *pp = old && *old ? xstrfmt("%s:%s", plan->python_dir, old)
				       : xstrdup(plan->python_dir);
		env_set(env, "PYTHONPATH", pp);
		free(pp);
	}
}
