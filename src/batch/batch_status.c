#include "batch/batch_status.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/csvfile.h"
#include "rundir/identity.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/strbuf.h"

const char *const ops_status_columns[] = {
	"repo", "op", "spec", "status", "seconds", "attempts", "rows", "remarks",
	"backend", "device", "gpu", "gpu_uuid", "timer", "exit_code", "run_dir", "job", NULL,
};

/* The header and the rows ops_status_render builds must agree. */
_Static_assert(sizeof(ops_status_columns) / sizeof(ops_status_columns[0]) == 16 + 1,
	       "ops_status_render fills 16 fields");

void op_row_init(struct op_row *r)
{
	memset(r, 0, sizeof(*r));
	r->status = OP_PENDING;
	r->device = -1;
	r->exit_code = -1;
}

void op_row_release(struct op_row *r)
{
	free(r->remarks);
	free(r->backend);
	free(r->gpu);
	free(r->gpu_uuid);
	free(r->timer);
	free(r->run_dir);
	free(r->job);
	op_row_init(r);
}

void op_row_copy(struct op_row *dst, const struct op_row *src)
{
	op_row_release(dst);
	*dst = *src;
	dst->remarks = src->remarks ? xstrdup(src->remarks) : NULL;
	dst->backend = src->backend ? xstrdup(src->backend) : NULL;
	dst->gpu = src->gpu ? xstrdup(src->gpu) : NULL;
	dst->gpu_uuid = src->gpu_uuid ? xstrdup(src->gpu_uuid) : NULL;
	dst->timer = src->timer ? xstrdup(src->timer) : NULL;
	dst->run_dir = src->run_dir ? xstrdup(src->run_dir) : NULL;
	dst->job = src->job ? xstrdup(src->job) : NULL;
}

void op_row_set(char **field, const char *value)
{
	char *copy = value ? xstrdup(value) : NULL;
	free(*field);
	*field = copy;
}

void ops_status_render(const struct op_spec *specs, const struct op_row *rows, size_t n,
		       struct strbuf *out)
{
	size_t ncols = 0;

	while (ops_status_columns[ncols])
		ncols++;
	csv_add_row(out, ops_status_columns, ncols);
	for (size_t i = 0; i < n; i++) {
		const struct op_row *r = &rows[i];
		char secs[32] = "", att[16] = "", nrows[24] = "", dev[16] = "", code[16] = "";
		int started = r->attempts > 0;
		const char *f[16];

		if (started || r->seconds > 0)
			snprintf(secs, sizeof(secs), "%.3f", r->seconds);
		snprintf(att, sizeof(att), "%d", r->attempts);
		if (started)
			snprintf(nrows, sizeof(nrows), "%ld", r->rows);
		if (r->device >= 0)
			snprintf(dev, sizeof(dev), "%d", r->device);
		if (r->exit_code >= 0)
			snprintf(code, sizeof(code), "%d", r->exit_code);
		f[0] = specs[i].repo;
		f[1] = specs[i].op;
		f[2] = specs[i].spec;
		f[3] = op_status_name(r->status);
		f[4] = secs;
		f[5] = att;
		f[6] = nrows;
		f[7] = r->remarks;
		f[8] = r->backend;
		f[9] = dev;
		f[10] = r->gpu;
		f[11] = r->gpu_uuid;
		f[12] = r->timer;
		f[13] = code;
		f[14] = r->run_dir;
		f[15] = r->job;
		csv_add_row(out, f, ncols);
	}
}

int ops_status_write(const char *path, const struct op_spec *specs,
		     const struct op_row *rows, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	int r;

	ops_status_render(specs, rows, n, &sb);
	r = write_file_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	return r;
}

/* A number field of the table ("" for none: dflt). */
static double num_or(const char *s, double dflt)
{
	char *end;
	double v;

	if (!s || !*s)
		return dflt;
	v = strtod(s, &end);
	return *end ? dflt : v;
}

static char *str_or_none(const char *s)
{
	return s && *s ? xstrdup(s) : NULL;
}

int ops_status_read(const char *path, const struct op_spec *specs, size_t n,
		    struct op_row *rows, int *found)
{
	struct csv_table t;

	if (access(path, F_OK))
		return 1;
	if (csv_read_file(path, &t))
		return -1;
	if (csv_column(&t, "spec") < 0 || csv_column(&t, "status") < 0) {
		csv_table_free(&t);
		return error("%s is not an ops_status table (no spec or status column)", path);
	}
	for (size_t r = 0; r < t.nrows; r++) {
		const char *spec = csv_get(&t, r, "spec");
		int st = op_status_parse(csv_get(&t, r, "status"));

		for (size_t i = 0; i < n && st >= 0; i++) {
			struct op_row *row = &rows[i];

			if (strcmp(specs[i].spec, spec))
				continue;
			op_row_release(row);
			row->status = (enum op_status)st;
			row->seconds = num_or(csv_get(&t, r, "seconds"), 0);
			row->attempts = (int)num_or(csv_get(&t, r, "attempts"), 0);
			row->rows = (long)num_or(csv_get(&t, r, "rows"), 0);
			row->remarks = str_or_none(csv_get(&t, r, "remarks"));
			row->backend = str_or_none(csv_get(&t, r, "backend"));
			row->device = (int)num_or(csv_get(&t, r, "device"), -1);
			/* absent before version 3: NULL, as for a run that recorded none */
			row->gpu = str_or_none(csv_get(&t, r, "gpu"));
			row->gpu_uuid = str_or_none(csv_get(&t, r, "gpu_uuid"));
			row->timer = str_or_none(csv_get(&t, r, "timer"));
			row->exit_code = (int)num_or(csv_get(&t, r, "exit_code"), -1);
			row->run_dir = str_or_none(csv_get(&t, r, "run_dir"));
			row->job = str_or_none(csv_get(&t, r, "job"));
			found[i] = 1;
			break;
		}
	}
	csv_table_free(&t);
	return 0;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

int complete_write(const char *run_dir_abs, const struct op_spec *spec,
		   const struct op_row *row)
{
	char *path = path_join(run_dir_abs, COMPLETE_MARKER);
	json_t *o;
	int r;

	if (row->status != OP_PASS && row->status != OP_SKIP)
		BUG(".complete for a %s operator", op_status_name(row->status));
	o = json_object();
	json_object_set_new(o, "schema_version", json_integer(COMPLETE_VERSION));
	json_object_set_new(o, "spec", json_string(spec->spec));
	json_object_set_new(o, "status", json_string(op_status_name(row->status)));
	json_object_set_new(o, "seconds", json_real(row->seconds));
	json_object_set_new(o, "attempts", json_integer(row->attempts));
	json_object_set_new(o, "rows", json_integer(row->rows));
	json_object_set_new(o, "remarks", str_or_null(row->remarks));
	json_object_set_new(o, "backend", str_or_null(row->backend));
	json_object_set_new(o, "device", json_integer(row->device));
	json_object_set_new(o, "gpu", str_or_null(row->gpu));
	json_object_set_new(o, "gpu_uuid", str_or_null(row->gpu_uuid));
	json_object_set_new(o, "timer", str_or_null(row->timer));
	json_object_set_new(o, "exit_code", json_integer(row->exit_code));
	json_object_set_new(o, "job", str_or_null(row->job));
	json_object_set_new(o, "finished_at", identity_now());
	r = json_write_file(path, o);
	json_decref(o);
	free(path);
	return r;
}

int complete_read(const char *run_dir_abs, const struct op_spec *spec, struct op_row *row)
{
	char *path = path_join(run_dir_abs, COMPLETE_MARKER);
	json_t *o = NULL;
	int r = json_read_file(path, &o), st;
	json_int_t v;

	if (r) {
		if (r < 0)
			error("cannot read %s", path);
		free(path);
		return r;
	}
	st = json_str(o, "status") ? op_status_parse(json_str(o, "status")) : -1;
	v = json_integer_value(json_object_get(o, "schema_version"));
	/* version 1 (before gpu, gpu_uuid) still reads: a batch resumed by a newer zlb */
	if (v < 1 || v > COMPLETE_VERSION ||
	    !json_str(o, "spec") || strcmp(json_str(o, "spec"), spec->spec) ||
	    (st != OP_PASS && st != OP_SKIP)) {
		r = error("%s is not a version 1..%d marker of %s: the operator runs again",
			  path, COMPLETE_VERSION, spec->spec);
		json_decref(o);
		free(path);
		return r;
	}
	row->status = (enum op_status)st;
	row->seconds = json_num(o, "seconds", 0);
	row->attempts = (int)json_integer_value(json_object_get(o, "attempts"));
	row->rows = (long)json_integer_value(json_object_get(o, "rows"));
	op_row_set(&row->remarks, json_str(o, "remarks"));
	op_row_set(&row->backend, json_str(o, "backend"));
	row->device = (int)json_integer_value(json_object_get(o, "device"));
	op_row_set(&row->gpu, json_str(o, "gpu"));
	op_row_set(&row->gpu_uuid, json_str(o, "gpu_uuid"));
	op_row_set(&row->timer, json_str(o, "timer"));
	row->exit_code = (int)json_integer_value(json_object_get(o, "exit_code"));
	/* a cluster task's label; absent in markers of local batches */
	op_row_set(&row->job, json_str(o, "job"));
	json_decref(o);
	free(path);
	return 0;
}
