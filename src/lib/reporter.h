/*
 * Where library code says what it is doing. A domain (a batch, an A/B)
 * hands finished text to a reporter; the command that made the reporter
 * decides where it goes (the terminal, nowhere, a test's buffer), so no
 * library code writes to stdout or stderr itself.
 */
#ifndef ZLB_REPORTER_H
#define ZLB_REPORTER_H

#include <stdio.h>

#include "lib/strbuf.h"
#include "lib/term.h"

enum report_kind {
	REPORT_OUT,     /* the command's output: lines that stay */
	REPORT_WARN,    /* a warning or an error: the command's diagnostics */
	REPORT_LIVE,    /* a status block that replaces the previous one in place; "" clears it */
	REPORT_RESULT,  /* output that says how it ended: shown even when asked to be quiet */
	REPORT_DETAIL,  /* output shown only when asked to be verbose */
};

/* How much a reporter shows (-q, default, -v): REPORT_WARN and REPORT_RESULT always. */
enum report_verbosity { REPORT_QUIET, REPORT_NORMAL, REPORT_VERBOSE };

struct reporter {
	/* text: whole lines, each ending in '\n' (REPORT_LIVE: "" for none) */
	void (*say)(struct reporter *self, enum report_kind kind, const char *text);
	/*
	 * The columns a live line may take (the terminal's width, asked anew
	 * each time: it can change), 0 for no limit; NULL: no limit.
	 */
	size_t (*columns)(struct reporter *self);
};

/* r's columns (0: no limit, also for a NULL r). */
size_t report_columns(struct reporter *r);

/*
 * Format and hand to r (NULL: dropped). REPORT_OUT and REPORT_WARN text
 * gets a final newline when it lacks one.
 */
void report(struct reporter *r, enum report_kind kind, const char *fmt, ...) ZLB_PRINTF(3, 4);

/* The same, the text in colour c when on (lib/term.h), the newline after the codes. */
void report_colored(struct reporter *r, enum report_kind kind, int on, enum term_color c,
		    const char *fmt, ...) ZLB_PRINTF(5, 6);

/*
 * A reporter onto two streams: output to out, diagnostics to err (out
 * flushed first, so the two keep their order on one terminal), the live
 * block drawn on out, each line cleared first (ESC [2K) and cut to the
 * terminal's width (a wrapped line would leave copies behind at the next
 * redraw), and moved up and erased before anything else is written.
 * verbosity (REPORT_NORMAL after init) says which kinds are shown.
 */
struct stream_reporter {
	struct reporter r;
	FILE *out, *err;
	int drawn;            /* lines of the live block on screen */
	enum report_verbosity verbosity;
};

void stream_reporter_init(struct stream_reporter *s, FILE *out, FILE *err);

/*
 * A reporter that keeps the output (REPORT_OUT, REPORT_RESULT and
 * REPORT_DETAIL, as verbosity says; REPORT_LIVE is dropped) in out for the
 * command to print when it chooses, after its files are written, and
 * writes diagnostics (REPORT_WARN) to err at once.
 */
struct buffer_reporter {
	struct reporter r;
	struct strbuf out;
	FILE *err;
	enum report_verbosity verbosity;
};

void buffer_reporter_init(struct buffer_reporter *b, FILE *err);
void buffer_reporter_release(struct buffer_reporter *b);

#endif
