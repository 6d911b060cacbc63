/*
 * zlb ab's end: one `zlb compare` over all rounds of <ab>/A against <ab>/B,
 * its files in the ab directory and its counts in ab.json.
 */
#include "ab/ab_run_int.h"

#include <unistd.h>

#include "compare/compare.h"
#include "compare/compare_report.h"
#include "compare/compare_run.h"
#include "compare/stats_compare.h"
#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "rundir/exit_codes.h"

static json_t *counts_json(const struct compare_counts *c)
{
	json_t *o = json_object();

	for (int v = STATS_SAME; v <= STATS_UNSURE; v++)
		json_object_set_new(o, stats_verdict_name((enum stats_verdict)v),
				    json_integer((json_int_t)c->n[v]));
	return o;
}

static int write_compare_files(struct ab_state *st, const struct compare *c, int code,
			       char **csv, char **js)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *j = compare_to_json(c, 0, code, NULL);
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	int r = 0;

	*csv = path_join(st->dir, COMPARE_CSV);
	*js = path_join(st->dir, COMPARE_JSON);
	strbuf_addstr(&sb, text ? text : "");
	strbuf_addch(&sb, '\n');
	free(text);
	if (compare_write_csv(c, *csv) || write_file_atomic(*js, sb.buf, sb.len)) {
		warn(st, "zlb ab: %s", last_error());
		r = -1;
	} else {
		say(st, 0, TERM_BOLD, "wrote %s and %s", *csv, *js);
	}
	json_decref(j);
	strbuf_release(&sb);
	return r;
}

int ab_run_compare(struct ab_state *st)
{
	const struct ab_plan *p = st->p;
	struct compare_opts opts = COMPARE_OPTS_INIT;
	struct compare c;
	struct strbuf sb = STRBUF_INIT;
	char *csv = NULL, *js = NULL;
	json_t *cj = json_object();
	int rc = ZLB_EXIT_OK;
	struct compare_run_opts run_opts = {
		.who = "zlb ab", .color = term_color_wanted(STDOUT_FILENO, p->color_setting),
		.warn_color = p->warn_color, .report_table = 1,
	};
	enum compare_stage stage;
	char *hint;

	if (p->spec->threshold >= 0)
		opts.threshold = p->spec->threshold;
	compare_init(&c, &opts);
	say(st, 0, TERM_BOLD, "%s", "");
	say(st, 1, TERM_BOLD, "=== zlb ab: compare A (%s/A) against B (%s/B) ===", st->dir, st->dir);
	for (int s = 0; s < 2; s++) {
		char *side = path_join(st->dir, s ? "B" : "A");
		int n = compare_add_path(&c, s, side);
		free(side);
		if (n <= 0) {
			warn(st, "zlb ab: side %s has no run to compare", s ? "B" : "A");
			rc = ZLB_EXIT_NO_DATA;
			goto out;
		}
	}
	hint = xstrfmt("The runs are kept: zlb compare --allow-caliber-mismatch %s/A %s/B "
		       "compares anyway", st->dir, st->dir);
	run_opts.caliber_hint = hint;
	/*
	 * R's own s (--calibrate) is whatever R read: a row whose burn did not
	 * move the clock has none, and one with none at all is said, not refused.
	 */
	run_opts.elasticity_from = p->spec->calibrate ? st->recording : p->spec->elasticity_from;
	run_opts.elasticity_optional = p->spec->calibrate;
	run_opts.elasticity_via = p->spec->calibrate ? "zlb ab --calibrate" : NULL;
	rc = compare_run(&c, &run_opts, p->rep, &stage);
	free(hint);
	json_object_set_new(cj, "caliber_problems", json_strvec(&c.caliber_problems));
	if (stage != COMPARE_DONE)
		goto out;
	if (write_compare_files(st, &c, rc, &csv, &js))
		rc = ZLB_EXIT_IO;
	json_object_set_new(cj, "paired", json_integer((json_int_t)c.paired));
	json_object_set_new(cj, "regression", json_boolean(c.regression));
	json_object_set_new(cj, "gems", counts_json(&c.counts[COMPARE_GEMS]));
	json_object_set_new(cj, "torch", counts_json(&c.counts[COMPARE_TORCH]));
out:
	json_object_set_new(cj, "exit_code", json_integer(rc));
	json_object_set_new(cj, "csv", ab_str_or_null(csv));
	json_object_set_new(cj, "json", ab_str_or_null(js));
	json_object_set_new(st->j, "compare", cj);
	ab_save(st);
	free(csv);
	free(js);
	strbuf_release(&sb);
	compare_release(&c);
	return rc;
}
