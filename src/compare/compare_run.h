/*
 * The one pipeline of a comparison, which zlb compare and zlb ab both run
 * once the sides' runs are added (compare_add_path):
 *
 *   1. identities, the header (builds, runs);
 *   2. the caliber check, printed, and a stop on a difference unless allowed;
 *   3. the rows (every run must have a results.jsonl), and the clock
 *      elasticity of --elasticity-from for rounds that read none;
 *   4. statistics, the report and the result line.
 *
 * The report goes to rep as it is ready (REPORT_OUT: the sides, the
 * table, the summary; REPORT_RESULT: the result line), unless the caller
 * renders the comparison itself (report_table 0). Diagnostics go as
 * REPORT_WARN whatever the format: caliber problems, warnings, refusals
 * (each naming who, "zlb compare" or "zlb ab", and what to do), and
 * "result: nothing to compare".
 */
#ifndef ZLB_COMPARE_RUN_H
#define ZLB_COMPARE_RUN_H

#include "compare/compare.h"
#include "lib/reporter.h"

struct compare_run_opts {
	const char *who;          /* "zlb compare", "zlb ab": the refusals' prefix */
	int allow_caliber;        /* compare despite caliber problems (--allow-caliber-mismatch) */
	const char *caliber_hint; /* the sentence after a caliber refusal: how to go on anyway */
	int color;                /* colour the terminal text */
	int warn_color;           /* colour the diagnostics */
	int report_table;         /* report the sides, the table and the result (else diagnostics only) */
	const struct compare_view *view;  /* the table's rows, order and width; NULL: all, no limit */
	/* runs whose clock elasticity rounds without one take (compare_take_elasticity); NULL: none */
	const char *elasticity_from;
	/* elasticity_from read no s: a note and no correction, not a refusal (zlb ab --calibrate) */
	int elasticity_optional;
	/* how elasticity_from was named, in notes and refusals; NULL: "--elasticity-from" */
	const char *elasticity_via;
};

enum compare_stage {
	COMPARE_STOPPED_CALIBER,  /* step 2 refused */
	COMPARE_STOPPED_ROWS,     /* step 3 found nothing to pair */
	COMPARE_DONE,             /* a report and a result were given */
};

/*
 * Run the steps on c. Returns the exit status (ZLB_EXIT_OK, ZLB_EXIT_REGRESSION,
 * ZLB_EXIT_CALIBER, ZLB_EXIT_NO_DATA, ZLB_EXIT_USAGE for an --elasticity-from
 * that cannot give s) and sets *stage. The error routine
 * is the caller's: what fails here is reported once, through rep.
 */
int compare_run(struct compare *c, const struct compare_run_opts *o, struct reporter *rep,
		enum compare_stage *stage);

#endif
