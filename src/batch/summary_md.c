/*
 * zlb summary --format md: the summary of a batch for a pull request or an
 * issue (summary.h), every name from the data escaped (lib/markdown.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/summary.h"
#include "lib/jsonfile.h"
#include "lib/markdown.h"
#include "lib/paths.h"
#include "lib/texttable.h"

static const struct tt_column speedup_cols[] = {
	{ "speedup", 1, TT_KEEP, 0, 0 },
	{ "operator", 0, TT_KEEP, 0, 1 },
	{ "dtype", 0, TT_KEEP, 0, 1 },
	{ "shape", 0, TT_KEEP, 0, 1 },
	{ "markers", 0, TT_KEEP, 0, 1 },
	{ "device", 0, TT_KEEP, 0, 1 },
};

static void extremes(const struct summary *s, int best, struct strbuf *out)
{
	size_t idx[SUMMARY_EXTREMES], k[2], n;
	struct texttable t;

	summary_extreme_counts(s, &k[0], &k[1]);
	n = summary_extremes(s, best, idx, k[best]);
	if (!n)
		return;
	strbuf_addf(out, "\n### %s speedups (gems vs torch)\n\n", best ? "Best" : "Worst");
	tt_init(&t, speedup_cols, 6);
	for (size_t i = 0; i < n; i++) {
		const struct summary_row *r = &s->rows[idx[i]];
		const struct summary_op *o = summary_op_of_row(s, idx[i]);
		struct tt_cell *c = tt_add_row(&t);

		tt_set(&c[0], xstrfmt("%.3f", r->speedup));
		if (*r->op_name && strcmp(r->op_name, o->op))
			tt_set(&c[1], xstrfmt("%s/%s (%s)", o->repo, o->op, r->op_name));
		else
			tt_set(&c[1], xstrfmt("%s/%s", o->repo, o->op));
		tt_set(&c[2], xstrdup(r->dtype));
		tt_set(&c[3], xstrdup(r->shape));
		tt_set(&c[4], xstrdup(r->markers));
		tt_set(&c[5], xstrdup(o->device));
	}
	tt_render_md(&t, out);
	tt_release(&t);
}

static const struct tt_column remark_cols[] = {
	{ "operator", 0, TT_KEEP, 0, 1 },
	{ "status", 0, TT_KEEP, 0, 0 },
	{ "rows", 1, TT_KEEP, 0, 0 },
	{ "remarks", 0, TT_KEEP, 0, 1 },
	{ "device", 0, TT_KEEP, 0, 1 },
};

static const struct tt_column device_cols[] = {
	{ "backend", 0, TT_KEEP, 0, 1 },
	{ "device", 0, TT_KEEP, 0, 1 },
	{ "uuid", 0, TT_KEEP, 0, 1 },
	{ "operators", 1, TT_KEEP, 0, 0 },
};

/* Which cards the numbers come from (two of one model: two lines, by uuid). */
static void devices(const struct summary *s, struct strbuf *out)
{
	json_t *devs = summary_devices(s), *d;
	struct texttable t;
	size_t i;

	strbuf_addstr(out, "\n### Devices\n\n");
	tt_init(&t, device_cols, 4);
	json_array_foreach(devs, i, d) {
		struct tt_cell *c = tt_add_row(&t);

		tt_set(&c[0], xstrdup(json_str(d, "backend")));
		tt_set(&c[1], xstrdup(json_str(d, "device")));
		tt_set(&c[2], xstrdup(json_str(d, "device_uuid")));
		tt_set(&c[3], xstrfmt("%lld", (long long)json_integer_value(json_object_get(d, "ops"))));
	}
	tt_render_md(&t, out);
	tt_release(&t);
	json_decref(devs);
}

void summary_markdown(const struct summary *s, struct strbuf *out)
{
	json_t *counts = summary_status_counts(s), *v;
	struct texttable t;
	const char *k;
	size_t with_remarks = 0;

	strbuf_addstr(out, "## zlb summary of ");
	md_add_code(out, path_basename(s->batch));
	strbuf_addf(out, "\n\n%zu operator%s, %zu row%s (%zu SUCCESS)", s->nr_ops,
		    PLURAL(s->nr_ops), s->nr_rows, PLURAL(s->nr_rows), s->rows_success);
	if (!s->has_ops_status)
		strbuf_addf(out, "; found by walking the batch (no %s)", OPS_STATUS_CSV);
	strbuf_addstr(out, ".\n\n| status | operators |\n| --- | ---: |\n");
	json_object_foreach(counts, k, v) {
		strbuf_addstr(out, "| ");
		md_add_text(out, k);
		strbuf_addf(out, " | %lld |\n", (long long)json_integer_value(v));
	}
	json_decref(counts);
	devices(s, out);
	if (s->rows_not_graph)
		strbuf_addf(out, "\n**Not graph-timed:** %zu row%s (another caliber).\n",
			    s->rows_not_graph, PLURAL(s->rows_not_graph));
	if (s->replay_fallbacks)
		strbuf_addf(out, "\n**Replay fallbacks:** %zu (autotune points tuned live instead "
			    "of replayed).\n", s->replay_fallbacks);
	if (s->left_out_no_kernels || s->left_out_copy_engine || s->left_out_mixed_timers)
		strbuf_addf(out, "\nLeft out of the speedups: %zu row%s with GRAPH_NO_KERNELS "
			    "(nothing measured), %zu with copy-engine nodes (another caliber), "
			    "%zu timed by graph on one side and directly on the other.\n",
			    s->left_out_no_kernels, PLURAL(s->left_out_no_kernels),
			    s->left_out_copy_engine, s->left_out_mixed_timers);
	extremes(s, 0, out);
	extremes(s, 1, out);

	tt_init(&t, remark_cols, 5);
	for (size_t i = 0; i < s->nr_ops; i++) {
		const struct summary_op *o = &s->ops[i];
		struct tt_cell *c;

		if (!*o->remarks && (!strcmp(o->status, "PASS") || !strcmp(o->status, "SKIP")))
			continue;
		c = tt_add_row(&t);
		tt_set(&c[0], xstrfmt("%s/%s", o->repo, o->op));
		tt_set(&c[1], xstrdup(*o->status ? o->status : "(none)"));
		tt_set(&c[2], xstrfmt("%zu", o->nr_rows));
		tt_set(&c[3], xstrdup(o->remarks));
		tt_set(&c[4], xstrdup(o->device));
		with_remarks++;
	}
	if (with_remarks) {
		strbuf_addstr(out, "\n### Operators to read first (not PASS/SKIP, or with remarks)\n\n");
		tt_render_md(&t, out);
	}
	tt_release(&t);
}
