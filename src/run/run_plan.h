/*
 * The plan of one run: what preflight established about the world before
 * anything started (the backend and device, the interpreter and zlb's own
 * files, the FlagGems target, the shapes, the replay source). The runner
 * reads nothing else: a plan is what the run will be, where a preflight
 * (run/preflight.h) is how it was found, or why it could not be.
 */
#ifndef ZLB_RUN_PLAN_H
#define ZLB_RUN_PLAN_H

#include "backends/backend.h"
#include "providers/builtin_shapes.h"
#include "providers/flaggems.h"
#include "run/shapefile.h"
#include "lib/strvec.h"

struct run_plan {
	const struct backend_ops *backend;
	char *python;                 /* absolute interpreter path */
	char *python_version;
	char *pytest_version;
	/*
	 * How the python check passed: "probed" (this process spawned the
	 * probe) or "batch" (the zlb batch that started this process probed
	 * this very file and handed its answer down, see PREFLIGHT_PROBED_ENV).
	 */
	const char *python_check;
	char *python_identity;        /* dev:ino:mtime_ns:size:ctime_ns of the file */
	char *python_facts;           /* the probe's answer, compact JSON */
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
	/*
	 * The FlagGems vendor the child will have, and the variable the user
	 * set it with (GEMS_VENDOR, ...: theirs is kept), or NULL when it is the
	 * backend's own.
	 */
	char *flaggems_vendor;
	char *flaggems_vendor_var;
};

void run_plan_init(struct run_plan *plan);
void run_plan_release(struct run_plan *plan);

/*
 * The environment of the child: envp with the zlbench package on PYTHONPATH
 * and without PREFLIGHT_PROBED_ENV (it vouches to one process, never to
 * what that process starts).
 */
void run_plan_child_env(const struct run_plan *plan, char *const *envp,
			struct strvec *env);

#endif
