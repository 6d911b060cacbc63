/* One attempt of one operator (batch_int.h). */
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
#include "lib/paths.h"
#include "lib/proc.h"
#include "rundir/exit_codes.h"
#include "rundir/identity.h"
#include "rundir/run_device.h"
#include "rundir/markers.h"
#include "rundir/preflight_report.h"
#include "rundir/run_tally.h"
#include "rundir/rundir.h"

#define CANT_SUPPORT "can't be supported by this op"

/* ---- one attempt ----------------------------------------------------------- */

/* Move an earlier attempt's directory and console log to .attempts/<repo>/<key>.<n>. */
static int move_aside(struct batch *b, struct op_state *o)
{
	int has_dir = access(o->run_abs, F_OK) == 0, has_log = access(o->console, F_OK) == 0;
	char *dest_dir, *base = NULL;
	int r = 0;

	if (!has_dir && !has_log)
		return 0;
	dest_dir = xstrfmt("%s/.attempts/%s", b->p->dir, o->spec->repo);
	if (mkdir_p(dest_dir, 0755)) {
		free(dest_dir);
		return -1;
	}
	for (int n = 1; !base; n++) {
		char *cand = xstrfmt("%s/%s.%d", dest_dir, o->spec->key, n);
		char *cand_log = xstrfmt("%s.log", cand);
		if (access(cand, F_OK) && access(cand_log, F_OK))
			base = cand;
		else
			free(cand);
		free(cand_log);
	}
	if (has_dir && rename(o->run_abs, base))
		r = error_errno("cannot move %s aside to %s", o->run_abs, base);
	if (!r && has_log) {
		char *log = xstrfmt("%s.log", base);
		if (rename(o->console, log))
			r = error_errno("cannot move %s aside to %s", o->console, log);
		free(log);
	}
	free(base);
	free(dest_dir);
	return r;
}

static void build_argv(struct batch *b, struct op_state *o)
{
	const struct batch_plan *p = b->p;
	const char *dir = !strcmp(o->spec->repo, "vllm") ? p->vllm_dir : p->main_dir;

	strvec_clear(&o->argv);
	strvec_pushl(&o->argv, p->exe, "run", "--op", o->spec->op, NULL);
	if (o->spec->file)
		strvec_pushl(&o->argv, "--op-file", o->spec->file, NULL);
	strvec_pushl(&o->argv, "--run-dir", o->run_abs, "--backend", p->backend, NULL);
	strvec_pushf(&o->argv, "--device");
	strvec_pushf(&o->argv, "%d", p->devices[o->lane]);
	strvec_pushl(&o->argv, "--interrupt-grace", b->child_grace, NULL);
	if (dir)
		strvec_pushl(&o->argv, "--flaggems-dir", dir, NULL);
	if (o->prog.dtypes_active && p->dtypes->nr) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < p->dtypes->nr; i++)
			strbuf_addf(&sb, "%s%s", i ? " " : "", p->dtypes->v[i]);
		strvec_pushl(&o->argv, "--dtypes", sb.buf, NULL);
		strbuf_release(&sb);
	}
	if (o->prog.shapes_active && p->shape_file)
		strvec_pushl(&o->argv, "--shapes", p->shape_file, NULL);
	if (p->replay_root) {
		char *src = xstrfmt("%s/%s/%s", p->replay_root, o->spec->repo, o->spec->key);
		strvec_pushl(&o->argv, "--replay-from", src, NULL);
		free(src);
	}
	if (o->worker)
		strvec_pushl(&o->argv, "--worker", o->worker, NULL);
	if (p->cluster_job)
		strvec_pushl(&o->argv, "--cluster-job", p->cluster_job, NULL);
	strvec_pushv(&o->argv, (const char *const *)p->run_args->v);
}

int batch_start_attempt(struct batch *b, struct op_state *o)
{
	if (move_aside(b, o))
		return ZLB_EXIT_IO;
	o->worker = NULL;
	if (b->use_workers) {
		o->worker = worker_for(&b->workers, o->lane, o->spec->repo, &o->worker_job);
		if (!o->worker)
			return ZLB_EXIT_PREFLIGHT;
	}
	build_argv(b, o);
	memset(&o->job, 0, sizeof(o->job));
	o->job.argv = o->argv.v;
	o->job.envp = b->p->envp;
	o->job.console = o->console;
	o->job.timeout_s = b->p->op_timeout_s;
	o->job.grace_s = b->p->grace_s;
	o->job.owner = o;
	return b->ex.ops->start(&b->ex, &o->job) ? ZLB_EXIT_PREFLIGHT : 0;
}

/* Scan the console output for the two texts the policy needs. */
static void scan_console(const char *path, struct attempt_result *r)
{
	struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, path, 256 << 20) < 0) {
		strbuf_release(&sb);
		return;
	}
	r->cant_support = strstr(sb.buf, CANT_SUPPORT) != NULL;
	preflight_report_find(sb.buf, r->preflight, sizeof(r->preflight));
	strbuf_release(&sb);
}

void batch_row_run_facts(struct op_row *row, const char *run_abs)
{
	struct run_device d;

	run_device_init(&d);
	/* no run directory, or an identity that cannot be read: nothing to label with */
	if (is_dir(run_abs) && run_device_read(run_abs, &d) < 0)
		warning("%s", last_error());
	op_row_set(&row->timer, d.timer);
	op_row_set(&row->gpu, d.gpu_name);
	op_row_set(&row->gpu_uuid, d.gpu_uuid);
	run_device_release(&d);
}

void batch_read_result(struct op_state *o)
{
	struct attempt_result *r = &o->last;
	struct run_tally ta;

	memset(r, 0, sizeof(*r));
	r->exit_code = o->job.exit_code;
	r->timed_out = o->job.timed_out;
	scan_console(o->console, r);
	if (is_dir(o->run_abs)) {
		run_tally_read(o->run_abs, &ta);
		r->rows = ta.rows;
		r->rows_ok = ta.rows - ta.rows_failed;
		r->rows_direct = ta.rows_direct;
		r->replay_fallbacks = json_integer_value(json_object_get(ta.markers,
							  MARKER_REPLAY_FALLBACK));
		r->passed = ta.passed;
		r->failed = ta.failed;
		r->skipped = ta.skipped;
		r->xfailed = ta.xfailed;
		run_tally_release(&ta);
	}
}

