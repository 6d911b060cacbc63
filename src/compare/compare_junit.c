/* zlb compare --junit FILE: a comparison as the test report CI systems show (compare_report.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare_int.h"
#include "compare/compare_report.h"

static char *case_name(const struct compare_row *row)
{
	return xstrfmt("%s %s %s", *row->op_name ? row->op_name : row->op, row->dtype, row->shape);
}

void compare_junit(const struct compare *c, int stopped, const char *why,
		   struct junit_suite *suite)
{
	if (stopped) {
		junit_add(suite, "zlb.compare", "comparison", JUNIT_FAILED, why, NULL);
		return;
	}
	for (size_t i = 0; i < c->nr_rows; i++) {
		const struct compare_row *row = &c->rows[i];
		const struct stats_cmp *g = &row->res[COMPARE_GEMS];
		char *cls = xstrfmt("zlb.compare.%s", row->op), *name = case_name(row);
		struct strbuf msg = STRBUF_INIT;
		enum junit_outcome outcome = JUNIT_PASSED;

		if (!row->paired) {
			outcome = JUNIT_SKIPPED;
			strbuf_addf(&msg, "not compared: %s", row->unpaired_reason);
		} else if (row->excluded) {
			outcome = JUNIT_SKIPPED;
			strbuf_addstr(&msg, "EXCLUDED: a side's graph held no kernel node "
				      "(GRAPH_NO_KERNELS)");
		} else if (row->has[COMPARE_GEMS] && row->verdict[COMPARE_GEMS] == STATS_SLOWER) {
			outcome = JUNIT_FAILED;
			strbuf_addstr(&msg, "SLOWER: gems B/A ");
			compare_format_change(&msg, g->ratio);
			strbuf_addf(&msg, ", 95%% interval [%+.2f%%, %+.2f%%], q %.3g, beyond "
				    "the %.2f%% band", 100 * (g->lo - 1), 100 * (g->hi - 1),
				    row->q[COMPARE_GEMS], 100 * c->opts.threshold);
		}
		junit_add(suite, cls, name, outcome, msg.len ? msg.buf : NULL,
			  outcome == JUNIT_FAILED ? msg.buf : NULL);
		strbuf_release(&msg);
		free(cls);
		free(name);
	}
}
