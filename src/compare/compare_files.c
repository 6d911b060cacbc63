/* compare.json and compare.csv: the whole comparison, for tools and for spreadsheets. */
#include "compare/compare_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rundir/exit_codes.h"
#include "rundir/identity.h"
#include "lib/clock_reasons.h"
#include "lib/jsonfile.h"
#include "lib/parallel.h"
#include "lib/paths.h"
#include "lib/term.h"
#include "rundir/markers.h"
#include "lib/csvfile.h"
#include "compare/compare_int.h"

/* ---- compare.json --------------------------------------------------------------- */

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* NVML clocks event reason bits as their names, in bit order. */
static json_t *reasons_json(unsigned long long bits)
{
	json_t *a = json_array();
	char buf[256], *save = NULL, *tok;

	if (!bits)
		return a;
	clock_reasons_text(bits, buf, sizeof(buf));
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		json_array_append_new(a, json_string(tok));
	return a;
}

static json_t *cmp_json(const struct compare_row *row, int k, const struct compare *c)
{
	const struct stats_cmp *r = &row->res[k];
	json_t *o;

	if (!row->has[k])
		return json_null();
	o = json_object();
	json_object_set_new(o, "a_ms", num_or_null(r->a_ms));
	json_object_set_new(o, "b_ms", num_or_null(r->b_ms));
	json_object_set_new(o, "ratio", num_or_null(r->ratio));
	json_object_set_new(o, "ci_low", num_or_null(r->lo));
	json_object_set_new(o, "ci_high", num_or_null(r->hi));
	json_object_set_new(o, "p", num_or_null(r->p));
	json_object_set_new(o, "q", num_or_null(row->q[k]));
	json_object_set_new(o, "p_mwu", num_or_null(r->p_mwu));
	json_object_set_new(o, "test", json_string(r->test));
	json_object_set_new(o, "df", num_or_null(r->df));	/* null: infinite (z) or none */
	json_object_set_new(o, "rounds_a", json_integer((json_int_t)r->ka));
	json_object_set_new(o, "rounds_b", json_integer((json_int_t)r->kb));
	json_object_set_new(o, "samples_a", json_integer((json_int_t)r->na));
	json_object_set_new(o, "samples_b", json_integer((json_int_t)r->nb));
	json_object_set_new(o, "spread_a", num_or_null(r->spread_a));
	json_object_set_new(o, "spread_b", num_or_null(r->spread_b));
	json_object_set_new(o, "drift_floor_a", r->floor_a ? json_real(r->drift_a) : json_null());
	json_object_set_new(o, "drift_floor_b", r->floor_b ? json_real(r->drift_b) : json_null());
	json_object_set_new(o, "placement_sd_a", num_or_null(r->place_a));
	json_object_set_new(o, "placement_sd_b", num_or_null(r->place_b));
	json_object_set_new(o, "placement_model",
			    r->place_model ? json_string(r->place_model) : json_null());
	json_object_set_new(o, "clock_shift", num_or_null(r->clock_shift));
	json_object_set_new(o, "elasticity", num_or_null(r->elasticity));
	json_object_set_new(o, "clock_correction", num_or_null(r->clock_correction));
	json_object_set_new(o, "clock_wander", num_or_null(r->clock_wander));
	json_object_set_new(o, "trend", num_or_null(r->trend));
	/* rounds a side for an interval STATS_PLAN_HALF_WIDTH of the band wide; null: none */
	json_object_set_new(o, "rounds_needed", r->rounds_needed ?
			    json_integer((json_int_t)r->rounds_needed) : json_null());
	for (int s = 0; s < 2; s++) {
		/* each round's steady SM clock (MHz), null where it was not read */
		json_t *clocks = json_array();

		for (size_t i = 0; i < row->side[s].r[k].nr; i++) {
			double mhz = row->side[s].r[k].set[i].clock_mhz;

			json_array_append_new(clocks, mhz > 0 ? json_real(mhz) : json_null());
		}
		json_object_set_new(o, s ? "clock_mhz_b" : "clock_mhz_a", clocks);
		/* and the clock its spin graph read (_spin.py), null where none */
		clocks = json_array();
		for (size_t i = 0; i < row->side[s].r[k].nr; i++) {
			double mhz = row->side[s].r[k].set[i].effective_mhz;

			json_array_append_new(clocks, mhz > 0 ? json_real(mhz) : json_null());
		}
		json_object_set_new(o, s ? "effective_mhz_b" : "effective_mhz_a", clocks);
		json_object_set_new(o, s ? "clock_reasons_b" : "clock_reasons_a",
				    reasons_json(row->side[s].clock_reasons[k]));
		json_object_set_new(o, s ? "power_duty_b" : "power_duty_a",
				    json_real(row->side[s].duty[k]));
	}
	json_object_set_new(o, "verdict", json_string(compare_verdict_text(row, k)));
	json_object_set_new(o, "why", r->why ? json_string(r->why) : json_null());
	return o;
}

static json_t *side_json(const struct compare_side *side)
{
	json_t *o = json_object(), *runs = json_array();

	for (size_t i = 0; i < side->nr; i++) {
		const struct compare_run *r = &side->runs[i];
		json_t *e = json_object();

		json_object_set_new(e, "dir", json_string(r->dir));
		json_object_set_new(e, "identity", r->identity_state == 0 ? json_string("read") :
				    r->identity_state > 0 ? json_string("absent") :
							    json_string("unreadable"));
		json_object_set_new(e, "status", r->identity && json_str(r->identity, "status") ?
				    json_string(json_str(r->identity, "status")) : json_null());
		json_object_set_new(e, "op", r->identity && json_str(r->identity, "op") ?
				    json_string(json_str(r->identity, "op")) : json_null());
		json_object_set_new(e, "caliber", r->identity && json_object_get(r->identity, "caliber") ?
				    json_deep_copy(json_object_get(r->identity, "caliber")) : json_null());
		json_object_set_new(e, "provenance", r->identity && json_object_get(r->identity, "provenance") ?
				    json_deep_copy(json_object_get(r->identity, "provenance")) : json_null());
		json_object_set_new(e, "rows", json_integer((json_int_t)r->rows));
		json_object_set_new(e, "duplicate_rows", json_integer((json_int_t)r->duplicates));
		json_object_set_new(e, "skipped_lines", json_integer((json_int_t)r->skipped_lines));
		json_array_append_new(runs, e);
	}
	json_object_set_new(o, "rounds", json_integer((json_int_t)side->nr));
	json_object_set_new(o, "runs", runs);
	return o;
}

static json_t *counts_json(const struct compare_counts *k)
{
	json_t *o = json_object();

	for (int v = STATS_SAME; v <= STATS_UNSURE; v++)
		json_object_set_new(o, stats_verdict_name(v), json_integer((json_int_t)k->n[v]));
	json_object_set_new(o, "compared", json_integer((json_int_t)k->compared));
	return o;
}

/* [{reason, kernel, from}] of a side's replay fallbacks (compare.h). */
static json_t *fallbacks_json(const struct strvec *fb, const struct strvec *from)
{
	json_t *a = json_array();

	for (size_t i = 0; i < fb->nr; i++) {
		const char *colon = strchr(fb->v[i], ':');
		json_t *e = json_object();

		json_object_set_new(e, "reason", colon ? json_stringn(fb->v[i], colon - fb->v[i])
						       : json_string(fb->v[i]));
		json_object_set_new(e, "kernel", json_string(colon ? colon + 1 : "?"));
		json_object_set_new(e, "from", json_string(from->v[i]));
		json_array_append_new(a, e);
	}
	return a;
}

static json_t *row_json(const struct compare *c, const struct compare_row *row)
{
	json_t *e = json_object();

	json_object_set_new(e, "op", json_string(row->op));
	json_object_set_new(e, "op_name", json_string(row->op_name));
	json_object_set_new(e, "dtype", json_string(row->dtype));
	json_object_set_new(e, "shape_detail", json_string(row->shape));
	json_object_set_new(e, "paired", json_boolean(row->paired));
	json_object_set_new(e, "unpaired_reason", row->unpaired_reason ?
			    json_string(row->unpaired_reason) : json_null());
	json_object_set_new(e, "status_a", json_strvec(&row->side[0].statuses));
	json_object_set_new(e, "status_b", json_strvec(&row->side[1].statuses));
	json_object_set_new(e, "markers_a", json_strvec(&row->side[0].markers));
	json_object_set_new(e, "markers_b", json_strvec(&row->side[1].markers));
	json_object_set_new(e, "timers_a", json_strvec(&row->side[0].timers));
	json_object_set_new(e, "timers_b", json_strvec(&row->side[1].timers));
	json_object_set_new(e, "fallback", json_boolean(row->fallback));
	json_object_set_new(e, "replay_fallbacks_a", fallbacks_json(&row->side[0].fallbacks,
								    &row->side[0].fallback_from));
	json_object_set_new(e, "replay_fallbacks_b", fallbacks_json(&row->side[1].fallbacks,
								    &row->side[1].fallback_from));
	for (int k = 0; k < COMPARE_KINDS; k++)
		json_object_set_new(e, compare_kind_name[k], cmp_json(row, k, c));
	return e;
}

/*
 * The rows' objects, one per paired or unpaired row, made on every core:
 * two whole-suite batches are 11000 of them, half a second on one. Each
 * item touches only its own row (read) and its own slot.
 */
#define ROWS_JSON_PER_THREAD_MIN 256

struct row_json_job {
	const struct compare *c;
	const size_t *idx;
	json_t **out;
};

static void row_json_run(void *ctx, size_t x)
{
	struct row_json_job *j = ctx;

	j->out[x] = row_json(j->c, &j->c->rows[j->idx[x]]);
}

json_t *compare_to_json(const struct compare *c, int caliber_allowed, int exit_code,
			const struct compare_view *v)
{
	json_t *o = json_object(), *set = json_object(), *cal = json_object(), *sum = json_object();
	json_t *rows = json_array();
	size_t *idx, nidx = compare_view_rows(c, v, &idx);

	json_object_set_new(o, "schema_version", json_integer(COMPARE_SCHEMA_VERSION));
	json_object_set_new(o, "kind", json_string("zlb-compare"));
	json_object_set_new(o, "zlb_version", json_string(ZLB_VERSION));
	json_object_set_new(o, "created_at", identity_now());
	json_object_set_new(set, "threshold", json_real(c->opts.threshold));
	json_object_set_new(set, "fdr", json_real(c->opts.fdr));
	json_object_set_new(set, "drift_floor", json_real(c->opts.drift_floor));
	json_object_set_new(set, "bootstrap", json_integer(c->opts.nboot));
	json_object_set_new(set, "seed", json_integer((json_int_t)c->opts.seed));
	json_object_set_new(set, "confidence", json_real(c->opts.confidence));
	/* where the rounds without s took it: what a report must take again */
	json_object_set_new(set, "elasticity_from", c->elasticity_from ?
			    json_string(c->elasticity_from) : json_null());
	json_object_set_new(o, "settings", set);
	json_object_set_new(o, "a", side_json(&c->side[0]));
	json_object_set_new(o, "b", side_json(&c->side[1]));
	json_object_set_new(cal, "ok", json_boolean(!c->caliber_problems.nr));
	json_object_set_new(cal, "allowed", json_boolean(caliber_allowed && c->caliber_problems.nr));
	json_object_set_new(cal, "problems", json_deep_copy(c->caliber_fields));
	json_object_set_new(o, "caliber", cal);
	json_object_set_new(o, "warnings", json_strvec(&c->warnings));
	json_object_set_new(o, "notes", json_strvec(&c->notes));
	json_object_set_new(sum, "paired", json_integer((json_int_t)c->paired));
	json_object_set_new(sum, "only_a", json_integer((json_int_t)c->only_a));
	json_object_set_new(sum, "only_b", json_integer((json_int_t)c->only_b));
	json_object_set_new(sum, "not_success", json_integer((json_int_t)c->not_success));
	json_object_set_new(sum, "fallback_rows", json_integer((json_int_t)c->fallback_rows));
	json_object_set_new(sum, "excluded_rows", json_integer((json_int_t)c->excluded_rows));
	json_object_set_new(sum, "gems", counts_json(&c->counts[COMPARE_GEMS]));
	json_object_set_new(sum, "torch", counts_json(&c->counts[COMPARE_TORCH]));
	json_object_set_new(sum, "single_round", json_boolean(c->single_round_rows));
	json_object_set_new(sum, "regression", json_boolean(c->regression));
	json_object_set_new(sum, "exit_code", json_integer(exit_code));
	json_object_set_new(o, "summary", sum);
	if (v)
		json_object_set_new(o, "view", json_pack("{s:b, s:s}", "only_changed", v->only_changed,
							 "sort", v->sort == COMPARE_SORT_NONE ? "paired" :
							 compare_sort_names[v->sort - 1]));
	{
		struct row_json_job j = { c, idx, xmalloc((nidx ? nidx : 1) * sizeof(json_t *)) };

		parallel_for(nidx, ROWS_JSON_PER_THREAD_MIN, row_json_run, &j);
		for (size_t x = 0; x < nidx; x++)
			json_array_append_new(rows, j.out[x]);
		free(j.out);
	}
	json_object_set_new(o, "rows", rows);
	free(idx);
	return o;
}

/* ---- compare.csv ------------------------------------------------------------------ */


/* A number with digits significant digits (g) or decimals (f); empty when it does not exist. */
static void csv_num(struct strbuf *sb, int digits, int fixed, double v)
{
	if (!isfinite(v))
		return;
	if (fixed)
		strbuf_addf(sb, "%.*f", digits, v);
	else
		strbuf_addf(sb, "%.*g", digits, v);
}

static void csv_join(struct strbuf *sb, const struct strvec *v)
{
	struct strbuf j = STRBUF_INIT;

	for (size_t i = 0; i < v->nr; i++)
		strbuf_addf(&j, "%s%s", i ? ";" : "", v->v[i]);
	csv_add_field(sb, j.buf);
	strbuf_release(&j);
}

/* "<reason>:<kernel>;...": each point once, wherever it was found. */
static void csv_fallbacks(struct strbuf *sb, const struct strvec *fb)
{
	struct strvec once = STRVEC_INIT;

	for (size_t i = 0; i < fb->nr; i++)
		strvec_push_unique(&once, fb->v[i]);
	csv_join(sb, &once);
	strvec_clear(&once);
}

void compare_csv(const struct compare *c, const struct compare_view *v, struct strbuf *out)
{
	size_t *idx, nidx = compare_view_rows(c, v, &idx);

	strbuf_addstr(out, "op,op_name,dtype,shape_detail,pairing");
	for (int k = 0; k < COMPARE_KINDS; k++)
		strbuf_addf(out, ",%1$s_a_ms,%1$s_b_ms,%1$s_ratio,%1$s_ci_low,%1$s_ci_high,%1$s_p,"
			    "%1$s_q,%1$s_test,%1$s_rounds_a,%1$s_rounds_b,%1$s_verdict", compare_kind_name[k]);
	/* columns added later come last, so older readers keep their places */
	strbuf_addstr(out, ",markers_a,markers_b,status_a,status_b,replay_fallbacks_a,"
		      "replay_fallbacks_b");
	for (int k = 0; k < COMPARE_KINDS; k++)
		strbuf_addf(out, ",%s_rounds_needed", compare_kind_name[k]);
	strbuf_addch(out, '\n');
	for (size_t x = 0; x < nidx; x++) {
		const struct compare_row *row = &c->rows[idx[x]];

		csv_add_field(out, row->op);
		strbuf_addch(out, ',');
		csv_add_field(out, row->op_name);
		strbuf_addch(out, ',');
		csv_add_field(out, row->dtype);
		strbuf_addch(out, ',');
		csv_add_field(out, row->shape);
		strbuf_addch(out, ',');
		csv_add_field(out, row->paired ? "paired" : row->unpaired_reason);
		for (int k = 0; k < COMPARE_KINDS; k++) {
			const struct stats_cmp *r = &row->res[k];

			if (!row->has[k]) {
				strbuf_addstr(out, ",,,,,,,,,,,");
				continue;
			}
			strbuf_addch(out, ',');
			csv_num(out, 9, 0, r->a_ms);
			strbuf_addch(out, ',');
			csv_num(out, 9, 0, r->b_ms);
			strbuf_addch(out, ',');
			csv_num(out, 6, 1, r->ratio);
			strbuf_addch(out, ',');
			csv_num(out, 6, 1, r->lo);
			strbuf_addch(out, ',');
			csv_num(out, 6, 1, r->hi);
			strbuf_addch(out, ',');
			csv_num(out, 4, 0, r->p);
			strbuf_addch(out, ',');
			csv_num(out, 4, 0, row->q[k]);
			strbuf_addf(out, ",%s,%zu,%zu,%s", r->test, r->ka, r->kb,
				    compare_verdict_text(row, k));
		}
		strbuf_addch(out, ',');
		csv_join(out, &row->side[0].markers);
		strbuf_addch(out, ',');
		csv_join(out, &row->side[1].markers);
		strbuf_addch(out, ',');
		csv_join(out, &row->side[0].statuses);
		strbuf_addch(out, ',');
		csv_join(out, &row->side[1].statuses);
		strbuf_addch(out, ',');
		csv_fallbacks(out, &row->side[0].fallbacks);
		strbuf_addch(out, ',');
		csv_fallbacks(out, &row->side[1].fallbacks);
		for (int k = 0; k < COMPARE_KINDS; k++) {
			strbuf_addch(out, ',');
			if (row->has[k] && row->res[k].rounds_needed)
				strbuf_addf(out, "%zu", row->res[k].rounds_needed);
		}
		strbuf_addch(out, '\n');
	}
	free(idx);
}

int compare_write_csv(const struct compare *c, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	compare_csv(c, NULL, &sb);
	rc = write_file_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	return rc;
}
