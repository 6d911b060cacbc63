#include "compare/compare_run.h"

#include <stdarg.h>

#include "compare/compare_int.h"
#include "compare/compare_report.h"
#include "lib/error.h"
#include "lib/term.h"
#include "rundir/exit_codes.h"

/* A refusal: a warning, yellow when colour is on for diagnostics. */
#define refuse(rep, o, ...) report_colored((rep), REPORT_WARN, (o)->warn_color, TERM_YELLOW, __VA_ARGS__)

/* Has another run of r's operator on its side rows? */
static int round_of_measured_op(const struct compare_side *side, const struct compare_run *r)
{
	for (size_t i = 0; i < side->nr; i++)
		if (&side->runs[i] != r && side->runs[i].group == r->group &&
		    side->runs[i].has_results)
			return 1;
	return 0;
}

/*
 * Step 3's precondition. A run without results.jsonl that is one round of
 * an operator its side measured in other rounds is refused: the rounds
 * would not be the rounds asked for. A run of an operator its side never
 * measured (a batch stopped before it, a run dead before its first row) is
 * left out and named: its rows are "only in" the other side, and the rest
 * of two batches is still compared.
 */
static int every_run_has_rows(const struct compare *c, const struct compare_run_opts *o,
			      struct reporter *rep)
{
	for (int s = 0; s < 2; s++) {
		const struct compare_side *side = &c->side[s];

		for (size_t i = 0; i < side->nr; i++) {
			const struct compare_run *r = &side->runs[i];

			if (r->has_results)
				continue;
			if (side->nr == 1 || round_of_measured_op(side, r)) {
				refuse(rep, o, "%s: %s run %s has no results.jsonl", o->who,
				       s ? "B" : "A", r->dir);
				return 0;
			}
			refuse(rep, o, "warning: %s: %s left out: %s has no results.jsonl (never "
			       "measured: a batch stopped before it, or a run that ended before "
			       "its first row)", o->who, compare_run_op(r), r->dir);
		}
	}
	return 1;
}

int compare_run(struct compare *c, const struct compare_run_opts *o, struct reporter *rep,
		enum compare_stage *stage)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	/* 1-2: identities and caliber, before any latency */
	compare_load_identities(c);
	if (o->report_table) {
		compare_render_header(c, &sb, o->color);
		report(rep, REPORT_OUT, "%s", sb.buf);
		strbuf_reset(&sb);
	}
	compare_check_caliber(c);
	compare_render_caliber(c, &sb, o->warn_color, o->allow_caliber);
	if (sb.len)
		report(rep, REPORT_WARN, "%s", sb.buf);
	strbuf_reset(&sb);
	if (c->caliber_problems.nr && !o->allow_caliber) {
		refuse(rep, o, "%s: the runs were not measured the same way (above); not "
		       "comparing. %s", o->who, o->caliber_hint);
		*stage = COMPARE_STOPPED_CALIBER;
		strbuf_release(&sb);
		return ZLB_EXIT_CALIBER;
	}

	/* 3: rows */
	if (compare_load_results(c)) {
		refuse(rep, o, "%s: %s", o->who, last_error());
		*stage = COMPARE_STOPPED_ROWS;
		strbuf_release(&sb);
		return ZLB_EXIT_NO_DATA;
	}
	if (!every_run_has_rows(c, o, rep)) {
		*stage = COMPARE_STOPPED_ROWS;
		strbuf_release(&sb);
		return ZLB_EXIT_NO_DATA;
	}
	if (o->elasticity_from &&
	    compare_take_elasticity(c, o->elasticity_from, o->elasticity_via ? o->elasticity_via :
				    "--elasticity-from", o->elasticity_optional) < 0) {
		refuse(rep, o, "%s: %s", o->who, last_error());
		*stage = COMPARE_STOPPED_ROWS;
		strbuf_release(&sb);
		return ZLB_EXIT_USAGE;
	}

	/* 4: statistics */
	compare_analyse(c);
	compare_render_warnings(c, &sb, o->warn_color);
	if (sb.len)
		report(rep, REPORT_WARN, "%s", sb.buf);
	strbuf_reset(&sb);
	if (o->report_table) {
		compare_render_report(c, o->view, &sb, o->color);
		report(rep, REPORT_OUT, "%s", sb.buf);
		strbuf_reset(&sb);
	}
	/* the result says how it ended; that nothing could be compared is a diagnostic */
	rc = compare_render_result(c, &sb, c->paired ? o->color : o->warn_color);
	if (!c->paired)
		report(rep, REPORT_WARN, "%s", sb.buf);
	else if (o->report_table)
		report(rep, REPORT_RESULT, "%s", sb.buf);
	strbuf_release(&sb);
	*stage = COMPARE_DONE;
	return rc;
}
