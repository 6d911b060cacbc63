/*
 * zlb compare --format md: the comparison for a pull request or an issue
 * (compare_report.h), names and shapes from the data escaped as code spans.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare_int.h"
#include "compare/compare_report.h"
#include "lib/markdown.h"
#include "rundir/exit_codes.h"

static void counts(struct strbuf *out, const struct compare_counts *k)
{
	static const enum stats_verdict order[] = { STATS_SLOWER, STATS_FASTER, STATS_SAME,
						    STATS_UNSURE };

	for (size_t i = 0; i < 4; i++)
		strbuf_addf(out, "%s%zu %s", i ? ", " : "", k->n[order[i]],
			    stats_verdict_name(order[i]));
}

static void side_runs(struct strbuf *out, const struct compare_side *side)
{
	strbuf_addf(out, "- **%s**: %zu run%s:", side->name, side->nr, PLURAL(side->nr));
	for (size_t i = 0; i < side->nr; i++) {
		strbuf_addch(out, ' ');
		md_add_code(out, side->runs[i].dir);
	}
	strbuf_addch(out, '\n');
}

void compare_markdown(const struct compare *c, const struct compare_view *v, int allowed,
		      int exit_code, struct strbuf *out)
{
	struct texttable t;
	size_t shown, unpaired = c->only_a + c->only_b + c->not_success;

	strbuf_addstr(out, "## zlb compare: B against A\n\n");
	if (exit_code == ZLB_EXIT_REGRESSION)
		strbuf_addf(out, "**Result: REGRESSION**: %zu gems row%s SLOWER beyond %.2f%%.\n",
			    c->counts[COMPARE_GEMS].n[STATS_SLOWER],
			    PLURAL(c->counts[COMPARE_GEMS].n[STATS_SLOWER]), 100 * c->opts.threshold);
	else if (exit_code == ZLB_EXIT_NO_DATA)
		strbuf_addstr(out, "**Result: nothing to compare**: no row is SUCCESS on both "
			      "sides.\n");
	else
		strbuf_addf(out, "**Result:** no significant regression beyond %.2f%%.\n",
			    100 * c->opts.threshold);
	strbuf_addf(out, "\n%zu paired row%s; gems: ", c->paired, PLURAL(c->paired));
	counts(out, &c->counts[COMPARE_GEMS]);
	strbuf_addf(out, " (threshold %.2f%%, FDR %.3g); torch control: ",
		    100 * c->opts.threshold, c->opts.fdr);
	counts(out, &c->counts[COMPARE_TORCH]);
	strbuf_addf(out, "; not compared: %zu only in A, %zu only in B, %zu not SUCCESS",
		    c->only_a, c->only_b, c->not_success);
	if (c->fallback_rows)
		strbuf_addf(out, "; %zu flagged", c->fallback_rows);
	if (c->excluded_rows)
		strbuf_addf(out, " (%zu EXCLUDED: GRAPH_NO_KERNELS)", c->excluded_rows);
	strbuf_addstr(out, ".\n");

	if (c->caliber_problems.nr || c->warnings.nr) {
		strbuf_addch(out, '\n');
		if (c->caliber_problems.nr)
			strbuf_addf(out, "> **Calibers differ**%s:\n>\n",
				    allowed ? " (compared anyway: a difference below may come from "
					      "the caliber, not the build)" : "");
		for (size_t i = 0; i < c->caliber_problems.nr; i++) {
			strbuf_addstr(out, "> - ");
			md_add_text(out, c->caliber_problems.v[i]);
			strbuf_addch(out, '\n');
		}
		for (size_t i = 0; i < c->warnings.nr; i++) {
			strbuf_addstr(out, "> - warning: ");
			md_add_text(out, c->warnings.v[i]);
			strbuf_addch(out, '\n');
		}
	}

	shown = compare_build_table(c, v, &t);
	if (shown) {
		strbuf_addch(out, '\n');
		tt_render_md(&t, out);
	}
	if (v && v->only_changed)
		strbuf_addf(out, "\n%zu of %zu paired row%s shown: those SLOWER or FASTER.\n", shown,
			    c->paired, PLURAL(c->paired));
	tt_release(&t);
	if (unpaired)
		strbuf_addf(out, "\n%zu row%s not compared (only on one side, or not SUCCESS on "
			    "both): see compare.json.\n", unpaired, PLURAL(unpaired));
	strbuf_addstr(out, "\n<details><summary>runs</summary>\n\n");
	side_runs(out, &c->side[0]);
	side_runs(out, &c->side[1]);
	strbuf_addstr(out, "\n</details>\n");
}
