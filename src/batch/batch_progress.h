/*
 * The batch's progress, told to a reporter. Live (a terminal): one line per
 * device, a block the reporter redraws in place (operator at work, done/total, failures, elapsed,
 * estimated remaining), with finished operators that did not pass printed
 * above them; a line too long for the reporter's columns says the same in
 * short ("dev 0 3/10 1F ~2m05s softmax"), and the reporter cuts what is
 * still too long, so no redraw leaves a wrapped copy behind. Plain (a
 * pipe, a log): one line per operator as it ends.
 */
#ifndef ZLB_CORE_BATCH_PROGRESS_H
#define ZLB_CORE_BATCH_PROGRESS_H

#include <stddef.h>

#include "lib/reporter.h"

struct progress_lane {
	int device;            /* logical index */
	size_t total, done, failed;
	const char *current;   /* spec at work, or NULL */
	double op_started;     /* monotonic seconds */
	double busy;           /* seconds spent on finished operators */
};

struct progress {
	int live;
	int nlanes;
	struct progress_lane *lanes;
	double t0;
	struct reporter *rep;  /* lines as REPORT_OUT, the live block as REPORT_LIVE */
};

void progress_init(struct progress *p, int live, int nlanes, struct reporter *rep, double now);
/* A line that stays (a message). */
void progress_line(struct progress *p, const char *line);
/*
 * An operator's end: one that failed is a result (REPORT_RESULT: shown
 * even with -q); one that passed is plain output (REPORT_OUT), or while
 * the live block shows the progress a detail (REPORT_DETAIL: shown with -v).
 */
void progress_end(struct progress *p, const char *line, int failed);
/* Redraw the live block (no-op when plain). */
void progress_draw(struct progress *p, double now);
/* Leave the screen clean. */
void progress_finish(struct progress *p);
void progress_release(struct progress *p);

/* "1h02m", "3m05s", "12s": durations for humans. */
void progress_fmt_duration(char *buf, size_t len, double seconds);

#endif
