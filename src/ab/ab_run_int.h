/*
 * What the parts of zlb ab's run share (ab_run.c the rounds and the whole,
 * ab_gate.c the IR gate after round 1, ab_compare.c the comparison at the
 * end): the A/B's state, ab.json's upkeep and the output macros. Internal
 * to src/ab/.
 */
#ifndef ZLB_AB_RUN_INT_H
#define ZLB_AB_RUN_INT_H

#include <jansson.h>

#include "ab/ab.h"
#include "lib/term.h"

struct ab_state {
	const struct ab_plan *p;
	char *dir;		/* the ab directory, absolute */
	char *json_path;
	json_t *j;		/* ab.json */
	char *recording;	/* R's run directory */
	int color;
	int interrupted;
};

/* A line of zlb ab's own output, in colour c when paint (and colour is on). */
#define say(st, paint, c, ...) \
	report_colored((st)->p->rep, REPORT_OUT, (paint) && (st)->color, (c), __VA_ARGS__)
/* A line that says how the A/B ended (or why it stopped): shown even with -q. */
#define result(st, c, ...) \
	report_colored((st)->p->rep, REPORT_RESULT, (st)->color, (c), __VA_ARGS__)
/* A warning, yellow when colour is on for diagnostics. */
#define warn(st, ...) \
	report_colored((st)->p->rep, REPORT_WARN, (st)->p->warn_color, TERM_YELLOW, __VA_ARGS__)

/* Write ab.json; a failure is warned about and returns -1. */
int ab_save(struct ab_state *st);
/* Mark ab.json finished with status and code, save it, return code. */
int ab_finish(struct ab_state *st, const char *status, int code);
/* A JSON string, or null for NULL. */
json_t *ab_str_or_null(const char *s);

/*
 * The IR gate after round 1 (ab.h "Gates"), on A1's and B1's run
 * directories: -1 to go on, or the exit status to stop with.
 */
int ab_ir_gate(struct ab_state *st, const char *run_a, const char *run_b);

/* One comparison over all rounds, its files and ab.json's "compare"; compare's exit code. */
int ab_run_compare(struct ab_state *st);

#endif
