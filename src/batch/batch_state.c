/* The batch's state files and lock (batch_int.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "batch/batch_int.h"
#include "lib/jsonfile.h"
#include "lib/lockfile.h"
#include "lib/paths.h"
#include "lib/proc.h"
#include "rundir/exit_codes.h"
#include "rundir/identity.h"
#include "rundir/markers.h"
#include "rundir/preflight_report.h"
#include "rundir/run_tally.h"
#include "rundir/rundir.h"

void batch_stop(struct batch *b, int code, const char *fmt, ...)
{
	va_list ap;

	if (b->env_code)
		return;
	b->env_code = code;
	va_start(ap, fmt);
	vsnprintf(b->env_why, sizeof(b->env_why), fmt, ap);
	va_end(ap);
	if (b->ex.ops && b->ex.ops->running && b->ex.ops->running(&b->ex))
		b->ex.ops->stop_all(&b->ex);
}

/* ---- state files ----------------------------------------------------------- */

int batch_save_status(struct batch *b)
{
	struct op_row *rows = xcalloc(b->p->nr ? b->p->nr : 1, sizeof(*rows));
	int r;

	for (size_t i = 0; i < b->p->nr; i++)
		rows[i] = b->ops[i].row;   /* shallow: rendering only */
	r = ops_status_write(b->status_path, b->p->specs, rows, b->p->nr);
	free(rows);
	if (r) {
		b->io_failed = 1;
		warning("ops_status.csv could not be written: %s", last_error());
		batch_stop(b, ZLB_EXIT_IO, "ops_status.csv could not be written (%s)", last_error());
	}
	return r;
}

int batch_save_json(struct batch *b)
{
	int r = json_write_file(b->json_path, b->json);
	if (r) {
		b->io_failed = 1;
		warning("batch.json could not be written: %s", last_error());
		batch_stop(b, ZLB_EXIT_IO, "batch.json could not be written (%s)", last_error());
	}
	return r;
}

int batch_take_lock(struct batch *b)
{
	char *path = path_join(batch_state_dir(b->p), ".lock");
	pid_t holder;
	int r = ZLB_EXIT_OK;

	switch (lock_file_take(path, &b->lock_fd, &holder)) {
	case LOCK_TAKEN:
		break;
	case LOCK_HELD:
		if (holder)
			error("another zlb batch (pid %ld) is working on %s; wait for it to end "
			      "(or stop it) before using this directory", (long)holder, b->p->dir);
		else
			error("another zlb batch is working on %s; wait for it to end (or stop "
			      "it) before using this directory", b->p->dir);
		r = ZLB_EXIT_USAGE;
		break;
	default:
		r = ZLB_EXIT_IO;
		break;
	}
	free(path);
	return r;
}

/* ---- batch.json ------------------------------------------------------------ */

static json_t *plan_json(const struct batch *b)
{
	const struct batch_plan *p = b->p;
	json_t *o = json_object(), *devs = json_array(), *ops = json_array(), *opt;

	json_object_set_new(o, "schema_version", json_integer(BATCH_SCHEMA_VERSION));
	json_object_set_new(o, "zlb_version", json_string(ZLB_VERSION));
	json_object_set_new(o, "status", json_string("running"));
	json_object_set_new(o, "args", json_deep_copy(p->args));
	opt = json_object();
	json_object_set_new(opt, "backend", json_string(p->backend));
	json_object_set_new(opt, "executor", json_string(p->executor));
	json_object_set_new(opt, "op_timeout_s", json_real(p->op_timeout_s));
	json_object_set_new(opt, "grace_s", json_real(p->grace_s));
	json_object_set_new(opt, "retries", json_integer(p->max_retries));
	json_object_set_new(opt, "isolation", json_string(p->isolation ? p->isolation : "process"));
	json_object_set_new(opt, "pin", json_boolean(p->pin));
	{
		json_t *d = json_array();
		for (size_t i = 0; i < p->dtypes->nr; i++)
			json_array_append_new(d, json_string(p->dtypes->v[i]));
		json_object_set_new(opt, "dtypes", d);
	}
	json_object_set_new(opt, "shape_file", p->shape_file ? json_string(p->shape_file)
							     : json_null());
	json_object_set_new(opt, "replay_root", p->replay_root ? json_string(p->replay_root)
							       : json_null());
	json_object_set_new(opt, "flaggems_dir", p->main_dir ? json_string(p->main_dir)
							     : json_null());
	json_object_set_new(opt, "vllm_dir", p->vllm_dir ? json_string(p->vllm_dir)
							 : json_null());
	{
		json_t *ra = json_array();
		for (size_t i = 0; i < p->run_args->nr; i++)
			json_array_append_new(ra, json_string(p->run_args->v[i]));
		json_object_set_new(opt, "run_args", ra);
	}
	json_object_set_new(o, "options", opt);
	for (int d = 0; d < p->ndevices; d++)
		json_array_append_new(devs, json_pack("{s:i,s:i}", "slot", d,
						      "device", p->devices[d]));
	json_object_set_new(o, "devices", devs);
	for (size_t i = 0; i < p->nr; i++)
		json_array_append_new(ops, json_pack("{s:s,s:s,s:s,s:s,s:o}",
			"spec", p->specs[i].spec, "repo", p->specs[i].repo,
			"op", p->specs[i].op, "dir", b->ops[i].run_rel,
			/* One queue: the device is known when the operator starts. */
			"device", p->pin ? json_integer(p->devices[b->ops[i].lane]) : json_null()));
	json_object_set_new(o, "ops", ops);
	json_object_set_new(o, "tables", json_pack("{s:i,s:i}", "ops_status", OPS_STATUS_VERSION,
						   "complete", COMPLETE_VERSION));
	json_object_set_new(o, "cluster_job", p->cluster_job ? json_string(p->cluster_job)
							      : json_null());
	json_object_set_new(o, "sessions", json_array());
	json_object_set(o, "resume", p->record ? p->record : json_null());
	return o;
}

/*
 * An earlier session still marked running did not end by itself: this
 * one holds the batch's lock, so no other process is running it. It was
 * killed (SIGKILL, a lost node) or crashed; say so rather than leave a
 * batch.json that claims two sessions at once.
 */
static void mark_dead_sessions(json_t *sessions)
{
	size_t i;
	json_t *s;

	json_array_foreach(sessions, i, s) {
		const char *st = json_string_value(json_object_get(s, "status"));

		if (st && !strcmp(st, "running"))
			json_object_set_new(s, "status", json_string("killed"));
	}
}

/* A fresh plan, keeping the sessions (and first start) of an earlier one. */
int batch_open_json(struct batch *b)
{
	json_t *old = NULL, *sessions;
	int r = json_read_file(b->json_path, &old);

	b->json = plan_json(b);
	sessions = json_object_get(b->json, "sessions");
	if (r == 0) {
		json_t *prev = json_object_get(old, "sessions");
		json_int_t v = json_integer_value(json_object_get(old, "schema_version"));

		if (v != BATCH_SCHEMA_VERSION && v != 2) {
			json_decref(old);
			return error("%s is not a batch.json of version 2 or %d: this zlb cannot "
				     "resume it", b->json_path, BATCH_SCHEMA_VERSION);
		}
		if (json_is_array(prev))
			json_array_extend(sessions, prev);
		/* The arrays submitted so far: a driver follows or finishes them. */
		if (json_is_object(json_object_get(old, "cluster")))
			json_object_set(b->json, "cluster", json_object_get(old, "cluster"));
		json_decref(old);
		mark_dead_sessions(sessions);
	} else if (r < 0) {
		return -1;
	}
	{
		json_t *ov = json_array();

		for (size_t i = 0; b->p->overrides && i < b->p->overrides->nr; i++)
			json_array_append_new(ov, json_string(b->p->overrides->v[i]));
		json_array_append_new(sessions, json_pack("{s:o,s:n,s:s,s:b,s:i,s:o}",
			"started_at", identity_now(), "ended_at", "status", "running",
			"resume", b->p->resume, "pid", (int)getpid(), "overrides", ov));
	}
	json_object_set(b->json, "started_at", json_object_get(json_array_get(sessions, 0),
							       "started_at"));
	json_object_set_new(b->json, "ended_at", json_null());
	return batch_save_json(b);
}

void batch_close_json(struct batch *b, const char *status, int code)
{
	json_t *sessions = json_object_get(b->json, "sessions");
	json_t *last = json_array_get(sessions, json_array_size(sessions) - 1);
	json_t *counts = json_object();

	for (size_t i = 0; i < b->p->nr; i++) {
		const char *st = op_status_name(b->ops[i].row.status);
		json_object_set_new(counts, st, json_integer(
			json_integer_value(json_object_get(counts, st)) + 1));
	}
	json_object_set_new(last, "ended_at", identity_now());
	json_object_set_new(last, "status", json_string(status));
	json_object_set_new(last, "exit_code", json_integer(code));
	json_object_set_new(b->json, "status", json_string(status));
	json_object_set_new(b->json, "exit_code", json_integer(code));
	json_object_set(b->json, "ended_at", json_object_get(last, "ended_at"));
	json_object_set_new(b->json, "counts", counts);
	json_object_set_new(b->json, "environment", b->env_code ? json_string(b->env_why)
								 : json_null());
	batch_save_json(b);
}

