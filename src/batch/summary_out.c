/*
 * zlb summary, writing side: summary.csv, summary.json and the terminal
 * report (summary.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/csvfile.h"
#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "batch/summary.h"
#include "lib/term.h"

const char *const summary_csv_columns[] = {
	"repo", "op", "status", "backend", "device", "op_name", "dtype", "shape_detail",
	"row_status", "torch_latency_ms", "gems_latency_ms", "speedup", "timer", "markers",
	"op_remarks", NULL,
};

#define NCOLS 15
_Static_assert(sizeof(summary_csv_columns) / sizeof(summary_csv_columns[0]) == NCOLS + 1,
	       "summary_csv fills NCOLS fields");

/*
 * Numbers as upstream's table prints them (latency %.6f ms, speedup %.3f),
 * so a line of summary.csv reads like the SUCCESS line of run.log; empty
 * when absent.
 */
static const char *fmt_num(char *buf, size_t n, double v, int decimals)
{
	if (!isfinite(v))
		return "";
	snprintf(buf, n, "%.*f", decimals, v);
	return buf;
}

void summary_csv(const struct summary *s, struct strbuf *out)
{
	char t[64], g[64], x[64];

	strbuf_grow(out, 64 + s->nr_rows * 200);
	csv_add_row(out, summary_csv_columns, NCOLS);
	for (size_t i = 0; i < s->nr_ops; i++) {
		const struct summary_op *o = &s->ops[i];

		if (!o->nr_rows) {
			const char *f[NCOLS] = { o->repo, o->op, o->status, o->backend, o->device,
						 "", "", "", "", "", "", "", "", "", o->remarks };
			csv_add_row(out, f, NCOLS);
			continue;
		}
		for (size_t j = o->first_row; j < o->first_row + o->nr_rows; j++) {
			const struct summary_row *r = &s->rows[j];
			const char *f[NCOLS] = {
				o->repo, o->op, o->status, o->backend, o->device,
				r->op_name, r->dtype, r->shape, r->status,
				fmt_num(t, sizeof(t), r->torch_ms, 6),
				fmt_num(g, sizeof(g), r->gems_ms, 6),
				fmt_num(x, sizeof(x), r->speedup, 3),
				r->timer, r->markers, o->remarks,
			};
			csv_add_row(out, f, NCOLS);
		}
	}
}

/*
 * The operator of row i. Rows are stored operator by operator, so it is the
 * last operator whose first_row <= i (one without rows shares its first_row
 * with the next, and is never last among them while i is a row).
 */
const struct summary_op *summary_op_of_row(const struct summary *s, size_t i)
{
	size_t lo = 0, hi = s->nr_ops;	/* answer in [lo, hi) */

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ops[mid].first_row <= i)
			lo = mid;
		else
			hi = mid;
	}
	return &s->ops[lo];
}

size_t summary_extremes(const struct summary *s, int best, size_t *idx, size_t k)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nr_rows && k; i++) {
		const struct summary_row *r = &s->rows[i];
		size_t pos;

		if (strcmp(r->status, "SUCCESS") || !isfinite(r->speedup) || r->speedup <= 0 ||
		    r->unranked)
			continue;
		/* insertion into the k kept so far; a tie keeps the earlier row first */
		for (pos = n; pos > 0; pos--) {
			double v = s->rows[idx[pos - 1]].speedup;

			if (best ? v >= r->speedup : v <= r->speedup)
				break;
		}
		if (pos >= k)
			continue;
		if (n < k)
			n++;
		memmove(idx + pos + 1, idx + pos, (n - 1 - pos) * sizeof(*idx));
		idx[pos] = i;
	}
	return n;
}

void summary_extreme_counts(const struct summary *s, size_t *worst, size_t *best)
{
	size_t n = s->rows_ranked;

	*worst = (n + 1) / 2 < SUMMARY_EXTREMES ? (n + 1) / 2 : SUMMARY_EXTREMES;
	*best = n - *worst < SUMMARY_EXTREMES ? n - *worst : SUMMARY_EXTREMES;
}

/* The well-known statuses first, in this order, then any other, sorted. */
static const char *const known_status[] = { "PASS", "FAIL", "TIMEOUT", "SKIP", NULL };

static const char *status_key(const char *status)
{
	return *status ? status : "(none)";
}

json_t *summary_status_counts(const struct summary *s)
{
	json_t *counts = json_object(), *ordered = json_object();
	const char **others = NULL;
	size_t nothers = 0;
	const char *k;
	json_t *v;

	for (size_t i = 0; i < s->nr_ops; i++) {
		const char *key = status_key(s->ops[i].status);

		json_object_set_new(counts, key,
				    json_integer(json_integer_value(json_object_get(counts, key)) + 1));
	}
	for (const char *const *st = known_status; *st; st++)
		if ((v = json_object_get(counts, *st)))
			json_object_set(ordered, *st, v);
	others = xcalloc(json_object_size(counts) + 1, sizeof(*others));
	json_object_foreach(counts, k, v) {
		size_t pos = nothers;
		int known = 0;

		for (const char *const *st = known_status; *st; st++)
			known |= !strcmp(*st, k);
		if (known)
			continue;
		while (pos > 0 && strcmp(others[pos - 1], k) > 0) {
			others[pos] = others[pos - 1];
			pos--;
		}
		others[pos] = k;
		nothers++;
	}
	for (size_t i = 0; i < nothers; i++)
		json_object_set(ordered, others[i], json_object_get(counts, others[i]));
	free(others);
	json_decref(counts);
	return ordered;
}

static json_t *row_json(const struct summary *s, size_t i)
{
	const struct summary_row *r = &s->rows[i];
	const struct summary_op *o = summary_op_of_row(s, i);

	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:f, s:s, s:s}",
			 "repo", o->repo, "op", o->op, "backend", o->backend, "device", o->device,
			 "device_uuid", o->device_uuid, "op_name", r->op_name, "dtype", r->dtype,
			 "shape_detail", r->shape, "speedup", r->speedup, "timer", r->timer,
			 "markers", r->markers);
}

json_t *summary_devices(const struct summary *s)
{
	json_t *devs = json_array(), *d;
	size_t k;

	for (size_t i = 0; i < s->nr_ops; i++) {
		const struct summary_op *o = &s->ops[i];
		int found = 0;

		/* a handful of devices per batch: a linear look-up is enough */
		json_array_foreach(devs, k, d) {
			if (!strcmp(json_str(d, "backend"), o->backend) &&
			    !strcmp(json_str(d, "device"), o->device) &&
			    !strcmp(json_str(d, "device_uuid"), o->device_uuid)) {
				json_object_set_new(d, "ops", json_integer(
					json_integer_value(json_object_get(d, "ops")) + 1));
				found = 1;
				break;
			}
		}
		if (!found)
			json_array_append_new(devs, json_pack("{s:s, s:s, s:s, s:i}", "backend",
				o->backend, "device", o->device, "device_uuid", o->device_uuid,
				"ops", 1));
	}
	return devs;
}

json_t *summary_to_json(const struct summary *s, const char *csv_path)
{
	json_t *j = json_object(), *cols = json_array(), *csv, *remarks = json_array(),
	       *walked = json_array(), *ext;
	size_t idx[SUMMARY_EXTREMES], n, k[2];

	for (const char *const *c = summary_csv_columns; *c; c++)
		json_array_append_new(cols, json_string(*c));
	csv = json_pack("{s:s, s:i, s:o}", "file", path_basename(csv_path),
			"schema_version", SUMMARY_SCHEMA_VERSION, "columns", cols);
	json_object_set_new(j, "schema_version", json_integer(SUMMARY_SCHEMA_VERSION));
	json_object_set_new(j, "csv", csv);
	json_object_set_new(j, "batch", json_string(s->batch));
	json_object_set_new(j, "ops_status", s->has_ops_status ? json_string(OPS_STATUS_CSV) :
			    json_null());
	json_object_set_new(j, "ops", json_integer((json_int_t)s->nr_ops));
	json_object_set_new(j, "status_counts", summary_status_counts(s));
	json_object_set_new(j, "devices", summary_devices(s));
	json_object_set_new(j, "rows", json_integer((json_int_t)s->nr_rows));
	json_object_set_new(j, "rows_success", json_integer((json_int_t)s->rows_success));
	json_object_set_new(j, "rows_not_graph", json_integer((json_int_t)s->rows_not_graph));
	json_object_set_new(j, "replay_fallbacks", json_integer((json_int_t)s->replay_fallbacks));
	json_object_set_new(j, "bad_lines", json_integer((json_int_t)s->bad_lines));
	json_object_set_new(j, "ops_without_rows", json_integer((json_int_t)s->ops_without_rows));
	for (size_t i = 0; i < s->nr_ops; i++) {
		const struct summary_op *o = &s->ops[i];

		if (*o->remarks)
			json_array_append_new(remarks, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
				"repo", o->repo, "op", o->op, "status", o->status, "backend",
				o->backend, "device", o->device, "device_uuid", o->device_uuid,
				"remarks", o->remarks));
		if (!o->listed)
			json_array_append_new(walked, json_sprintf("%s/%s", o->repo, o->op));
	}
	json_object_set_new(j, "ops_with_remarks", remarks);
	json_object_set_new(j, "ops_found_by_walking", walked);
	json_object_set_new(j, "speedups_left_out",
			    json_pack("{s:I, s:I, s:I}", "no_kernels", (json_int_t)s->left_out_no_kernels,
				      "copy_engine", (json_int_t)s->left_out_copy_engine,
				      "mixed_timers", (json_int_t)s->left_out_mixed_timers));
	summary_extreme_counts(s, &k[0], &k[1]);
	for (int best = 0; best < 2; best++) {
		n = summary_extremes(s, best, idx, k[best]);
		ext = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(ext, row_json(s, idx[i]));
		json_object_set_new(j, best ? "best_speedups" : "worst_speedups", ext);
	}
	return j;
}

int summary_write(const struct summary *s, const char *csv_path, const char *json_path)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *j;
	char *text;
	int r;

	summary_csv(s, &sb);
	r = write_file_atomic(csv_path, sb.buf, sb.len);
	strbuf_reset(&sb);
	if (r)
		goto out;
	j = summary_to_json(s, csv_path);
	text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	json_decref(j);
	if (!text) {
		r = error("cannot serialise %s", json_path);
		goto out;
	}
	strbuf_addstr(&sb, text);
	strbuf_addch(&sb, '\n');
	free(text);
	r = write_file_atomic(json_path, sb.buf, sb.len);
out:
	strbuf_release(&sb);
	return r;
}

/* ---- the terminal ------------------------------------------------------------ */

#define NAMES_SHOWN 8

static enum term_color status_color(const char *st, int *plain)
{
	*plain = 0;
	if (!strcmp(st, "PASS"))
		return TERM_GREEN;
	if (!strcmp(st, "FAIL") || !strcmp(st, "TIMEOUT"))
		return TERM_RED;
	if (!strcmp(st, "SKIP"))
		return TERM_YELLOW;
	*plain = 1;
	return TERM_BOLD;
}

/* ", repo/op (n)" for each operator with a count, at most NAMES_SHOWN. */
static void list_ops(const struct summary *s, struct strbuf *out,
		     size_t (*count)(const struct summary_op *))
{
	size_t shown = 0, more = 0;

	for (size_t i = 0; i < s->nr_ops; i++) {
		size_t n = count(&s->ops[i]);

		if (!n)
			continue;
		if (shown == NAMES_SHOWN) {
			more++;
			continue;
		}
		strbuf_addf(out, "%s%s/%s", shown ? ", " : "", s->ops[i].repo, s->ops[i].op);
		if (n != (size_t)-1)
			strbuf_addf(out, " (%zu)", n);
		shown++;
	}
	if (more)
		strbuf_addf(out, ", and %zu more", more);
}

static size_t count_not_graph(const struct summary_op *o) { return o->no_cudagraph_rows; }
static size_t count_fallbacks(const struct summary_op *o) { return o->replay_fallbacks; }
static size_t count_bad(const struct summary_op *o) { return o->bad_lines; }
static size_t flag_no_rows(const struct summary_op *o) { return o->nr_rows ? 0 : (size_t)-1; }
static size_t flag_walked(const struct summary_op *o) { return o->listed ? 0 : (size_t)-1; }

static size_t ops_with(const struct summary *s, size_t (*count)(const struct summary_op *))
{
	size_t n = 0;

	for (size_t i = 0; i < s->nr_ops; i++)
		n += count(&s->ops[i]) != 0;
	return n;
}

static void render_extremes(const struct summary *s, int best, int color, struct strbuf *out)
{
	size_t idx[SUMMARY_EXTREMES], k[2], n;

	summary_extreme_counts(s, &k[0], &k[1]);
	n = summary_extremes(s, best, idx, k[best]);

	if (!n)
		return;
	strbuf_addf(out, "  %s speedups (gems vs torch):\n", best ? "best" : "worst");
	for (size_t i = 0; i < n; i++) {
		const struct summary_row *r = &s->rows[idx[i]];
		const struct summary_op *o = summary_op_of_row(s, idx[i]);
		char num[32];

		snprintf(num, sizeof(num), "%8.3f", r->speedup);
		strbuf_addstr(out, "    ");
		if (r->speedup < 1)
			term_addstr_colored(out, color, TERM_RED, num);
		else
			term_addstr_colored(out, color, TERM_GREEN, num);
		strbuf_addf(out, "  %s/%s", o->repo, o->op);
		if (*r->op_name && strcmp(r->op_name, o->op))
			strbuf_addf(out, " (%s)", r->op_name);
		strbuf_addf(out, "  %s  %s", r->dtype, r->shape);
		if (*r->markers)
			strbuf_addf(out, "  [%s]", r->markers);
		strbuf_addch(out, '\n');
	}
}

/* The rows the speedup lists leave out, and why. */
static void render_left_out(const struct summary *s, struct strbuf *out)
{
	size_t nk = s->left_out_no_kernels, ce = s->left_out_copy_engine;
	size_t mt = s->left_out_mixed_timers;

	if (!nk && !ce && !mt)
		return;
	strbuf_addstr(out, "  left out of the speedups:");
	if (nk)
		strbuf_addf(out, " %zu row%s with GRAPH_NO_KERNELS (the graph held no kernel "
			    "node: nothing measured)", nk, nk == 1 ? "" : "s");
	if (ce)
		strbuf_addf(out, "%s %zu row%s with GRAPH_MEMCPY_NODES or GRAPH_MEMSET_NODES "
			    "(copy-engine nodes: another caliber)", nk ? ";" : "", ce,
			    ce == 1 ? "" : "s");
	if (mt)
		strbuf_addf(out, "%s %zu row%s timed by graph on one side and directly on the "
			    "other (a ratio of two calibers)", nk || ce ? ";" : "", mt,
			    mt == 1 ? "" : "s");
	strbuf_addch(out, '\n');
}

/*
 * "  devices: cuda NVIDIA H200 GPU-... (3 operators), ...": which cards the
 * numbers come from; two of one model are two entries (by uuid).
 */
static void render_devices(const struct summary *s, struct strbuf *out)
{
	json_t *devs = summary_devices(s), *d;
	size_t i;

	strbuf_addstr(out, "  devices:");
	json_array_foreach(devs, i, d) {
		const char *b = json_str(d, "backend"), *n = json_str(d, "device"),
			   *u = json_str(d, "device_uuid");
		json_int_t k = json_integer_value(json_object_get(d, "ops"));

		strbuf_addf(out, "%s %s %s", i ? "," : "", *b ? b : "(backend unknown)",
			    *n ? n : "(device unknown)");
		if (*u)
			strbuf_addf(out, " %s", u);
		strbuf_addf(out, " (%lld operator%s)", (long long)k, k == 1 ? "" : "s");
	}
	strbuf_addch(out, '\n');
	json_decref(devs);
}

void summary_render(const struct summary *s, const char *csv_path, int color,
		    struct strbuf *out)
{
	json_t *counts = summary_status_counts(s), *v;
	const char *k;
	int first = 1;
	size_t n;

	strbuf_addf(out, "batch %s: %zu operator%s", s->batch, s->nr_ops,
		    s->nr_ops == 1 ? "" : "s");
	if (!s->has_ops_status)
		strbuf_addf(out, ", found by walking %s/*/*/ (no %s)", s->batch, OPS_STATUS_CSV);
	strbuf_addch(out, '\n');

	strbuf_addstr(out, "  status:");
	json_object_foreach(counts, k, v) {
		int plain;
		enum term_color c = status_color(k, &plain);
		char *t = xstrfmt("%s %lld", k, (long long)json_integer_value(v));

		strbuf_addstr(out, first ? " " : ", ");
		if (plain)
			strbuf_addstr(out, t);
		else
			term_addstr_colored(out, color, c, t);
		free(t);
		first = 0;
	}
	strbuf_addch(out, '\n');
	json_decref(counts);
	render_devices(s, out);
	if (s->has_ops_status && s->ops_walked_only) {
		strbuf_addf(out, "  not in %s, found on disk: ", OPS_STATUS_CSV);
		list_ops(s, out, flag_walked);
		strbuf_addch(out, '\n');
	}

	strbuf_addf(out, "  rows: %zu, %zu SUCCESS", s->nr_rows, s->rows_success);
	if (s->ops_without_rows) {
		strbuf_addf(out, "; %zu operator%s without rows: ", s->ops_without_rows,
			    s->ops_without_rows == 1 ? "" : "s");
		list_ops(s, out, flag_no_rows);
	}
	strbuf_addch(out, '\n');

	if (s->rows_not_graph) {
		n = ops_with(s, count_not_graph);
		strbuf_addstr(out, "  ");
		term_addstr_colored(out, color, TERM_YELLOW, "not graph-timed:");
		strbuf_addf(out, " %zu row%s in %zu operator%s: ", s->rows_not_graph,
			    s->rows_not_graph == 1 ? "" : "s", n, n == 1 ? "" : "s");
		list_ops(s, out, count_not_graph);
		strbuf_addch(out, '\n');
	} else if (s->nr_rows) {
		strbuf_addstr(out, "  every measured row graph-timed\n");
	}
	if (s->replay_fallbacks) {
		n = ops_with(s, count_fallbacks);
		strbuf_addstr(out, "  ");
		term_addstr_colored(out, color, TERM_YELLOW, "replay fallbacks:");
		strbuf_addf(out, " %zu in %zu operator%s: ", s->replay_fallbacks, n,
			    n == 1 ? "" : "s");
		list_ops(s, out, count_fallbacks);
		strbuf_addch(out, '\n');
	}
	if (s->bad_lines) {
		strbuf_addf(out, "  lines skipped (not JSON): %zu in ", s->bad_lines);
		list_ops(s, out, count_bad);
		strbuf_addch(out, '\n');
	}
	render_left_out(s, out);
	render_extremes(s, 0, color, out);
	render_extremes(s, 1, color, out);
	if (csv_path)
		strbuf_addf(out, "  table: %s\n", csv_path);
}
