/*
 * A run's run_identity.json as runner.c writes it (runner_int.h): what is
 * known before pytest starts (caliber, provenance), and what its end adds
 * (outcome, status, the compiler that ran).
 */
#include "run/runner_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fingerprint.h"
#include "lib/gitinfo.h"
#include "lib/jsonfile.h"
#include "lib/strbuf.h"
#include "rundir/exit_codes.h"
#include "rundir/identity.h"
#include "run/run_caliber.h"

json_t *runner_initial_identity(const struct run_config *cfg, const struct run_plan *plan,
				const char *run_dir, const char *tuner_cache,
				const struct strvec *plugins, const struct strvec *child_argv,
				char **argv)
{
	json_t *id = identity_new(plan->target.op, run_dir);
	json_t *prov = identity_section(id, "provenance");
	const struct device_info *dev = &plan->devices.v[cfg->device];
	const struct run_facts facts = {
		.backend = plan->backend->name, .device = dev->name, .timer = plan->timer,
		.shape_mode = plan->shape_mode, .tuner_cache = tuner_cache,
	};
	char host[256] = "";
	char *commit = git_head_commit(plan->target.dir);
	struct strvec cmd = STRVEC_INIT;

	json_object_set_new(id, "caliber", run_caliber(cfg, &facts));

	gethostname(host, sizeof(host) - 1);
	strvec_pushv(&cmd, (const char *const *)argv);
	json_object_set_new(prov, "zlb_version", json_string(ZLB_VERSION));
	json_object_set_new(prov, "command_line", json_strvec(&cmd));
	json_object_set_new(prov, "host", json_string(host));
	json_object_set_new(prov, "cluster_job", cfg->cluster_job ? json_string(cfg->cluster_job)
								 : json_null());
	json_object_set_new(prov, "started_at", identity_now());
	json_object_set_new(prov, "op_file", json_string(plan->target.op_file));
	json_object_set_new(prov, "op_name", plan->target.op_name ? json_string(plan->target.op_name)
								: json_null());
	json_object_set_new(prov, "test_node", json_string(plan->target.node));
	json_object_set_new(prov, "flaggems_dir", json_string(plan->target.dir));
	json_object_set_new(prov, "flaggems_package", plan->target.package ?
			    json_string(plan->target.package) : json_null());
	json_object_set_new(prov, "flaggems_commit", commit ? json_string(commit) : json_null());
	json_object_set_new(prov, "python", json_string(plan->python));
	json_object_set_new(prov, "python_version", json_string(plan->python_version));
	json_object_set_new(prov, "pytest_version", json_string(plan->pytest_version));
	/* "batch": the probe was the batch's, handed down (preflight.h). */
	json_object_set_new(prov, "python_check", json_string(plan->python_check));
	json_object_set_new(prov, "device_index", json_integer(cfg->device));
	json_object_set_new(prov, "device_visible_as", json_string(plan->physical_device));
	/* Which GPU, whatever its index: zlb compare tells A/B pairs that met different ones. */
	json_object_set_new(prov, "device_uuid", dev->uuid ? json_string(dev->uuid) : json_null());
	json_object_set_new(prov, "gpu_name", json_string(dev->name ? dev->name : "unknown"));
	json_object_set_new(prov, "gpu_uuid", dev->uuid ? json_string(dev->uuid) : json_null());
	json_object_set_new(prov, "gpu_total_mem", json_integer((json_int_t)dev->total_mem));
	json_object_set_new(prov, "driver_version", plan->devices.driver_version ?
			    json_string(plan->devices.driver_version) : json_null());
	json_object_set_new(prov, "replay_from", plan->replay_from ? json_string(plan->replay_from)
								 : json_null());
	json_object_set_new(prov, "shape_source", json_string(
		!strcmp(plan->shape_mode, "file") ? plan->shapes.path :
		!strcmp(plan->shape_mode, "inline") ? "built-in" : "upstream core_shapes.yaml"));
	json_object_set_new(prov, "plugins", json_strvec(plugins));
	json_object_set_new(prov, "timer_lib", plan->timer_lib ? json_string(plan->timer_lib)
							     : json_null());
	/* How graph replays are timed (the backend's): libzlbtimer, or torch's events. */
	json_object_set_new(prov, "graph_replay", !strcmp(plan->timer, "graph") &&
			    plan->backend->graph_replay ? json_string(plan->backend->graph_replay)
							: json_null());
	json_object_set_new(prov, "torch_module", json_string(plan->backend->torch_module));
	json_object_set_new(prov, "flaggems_vendor", json_string(plan->flaggems_vendor ?
			    plan->flaggems_vendor : plan->backend->flaggems_vendor));
	/* "backend": zlb set it; else the user's variable, kept. */
	json_object_set_new(prov, "flaggems_vendor_from", json_string(
			    plan->flaggems_vendor_var ? plan->flaggems_vendor_var : "backend"));
	json_object_set_new(prov, "pytest_command", json_strvec(child_argv));
	strvec_clear(&cmd);
	free(commit);
	return id;
}

const char *runner_status_word(int exit_code)
{
	switch (exit_code) {
	case ZLB_EXIT_OK: return "completed";
	case ZLB_EXIT_INTERRUPTED: return "interrupted";
	default: return exit_code >= 128 ? "crashed" : "failed";
	}
}

/*
 * The compiler under test, by content: version strings of FlagTree builds
 * can be equal while their compiled libtriton differs.
 */
static json_t *triton_build(const json_t *runtime)
{
	const char *dir = json_str(runtime, "triton_path");
	uint64_t hash, size;
	char *lib;
	json_t *res;

	if (!dir)
		return json_null();
	lib = xstrfmt("%s/_C/libtriton.so", dir);
	if (file_xxh3(lib, &hash, &size)) {
		free(lib);
		return json_null();
	}
	res = json_object();
	json_object_set_new(res, "file", json_string(lib));
	json_object_set_new(res, "xxh3", json_sprintf("%016llx", (unsigned long long)hash));
	json_object_set_new(res, "bytes", json_integer((json_int_t)size));
	free(lib);
	return res;
}

void runner_finalize_identity(json_t *id, const struct run_outcome *o,
			      const struct run_tally *ta, const struct child *c,
			      const char *planned_timer)
{
	json_t *cal = identity_section(id, "caliber");
	json_t *prov = identity_section(id, "provenance");
	json_t *out = identity_section(id, "outcome");
	struct strbuf end = STRBUF_INIT;

	/* The timer actually used: a row that fell back changes the caliber. */
	json_object_set_new(cal, "timer", json_string(run_tally_timer(ta, planned_timer)));

	json_object_set_new(prov, "finished_at", identity_now());
	json_object_set_new(prov, "runtime", json_deep_copy(ta->runtime));
	json_object_set_new(prov, "triton_build", triton_build(ta->runtime));

	child_describe_end(c, &end);
	json_object_set_new(id, "status", json_string(runner_status_word(o->exit_code)));
	json_object_set_new(out, "exit_code", json_integer(o->exit_code));
	json_object_set_new(out, "pytest_exit", json_integer(o->pytest_rc));
	json_object_set_new(out, "pytest_end", json_string(end.buf));
	/* Wall time of the pytest process (spawn to reap), seconds. */
	json_object_set_new(out, "pytest_wall_s", o->pytest_rc < 0 ? json_null()
			    : json_real(o->pytest_wall_s));
	json_object_set_new(out, "interrupted", json_boolean(o->interrupted));
	json_object_set_new(out, "timer_planned", json_string(planned_timer));
	json_object_set_new(out, "rows", json_integer(ta->rows));
	json_object_set_new(out, "rows_graph", json_integer(ta->rows_graph));
	json_object_set_new(out, "rows_direct", json_integer(ta->rows_direct));
	json_object_set_new(out, "rows_failed", json_integer(ta->rows_failed));
	json_object_set_new(out, "rows_copy_engine", json_integer(ta->rows_copy_engine));
	json_object_set_new(out, "tests", json_pack("{s:I,s:I,s:I}",
		"passed", (json_int_t)ta->passed, "failed", (json_int_t)ta->failed,
		"skipped", (json_int_t)ta->skipped));
	json_object_set_new(out, "markers", json_deep_copy(ta->markers));
	json_object_set_new(out, "tuning_fallbacks", json_integer(ta->tuning_fallbacks));
	/* The autotuners' timing of configs: wall time of the run that makes no row. */
	json_object_set_new(out, "tuning", json_pack("{s:I,s:f}", "calls",
		(json_int_t)ta->tune_calls, "seconds", ta->tune_s));
	json_object_set_new(out, "autotune", json_deep_copy(ta->autotune));
	strbuf_release(&end);
}
