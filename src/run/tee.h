/*
 * The two sinks of a run's output: the terminal, live and pretty (upstream
 * tables re-rendered, colours when wanted), and run.log, ANSI-free with
 * upstream's text kept verbatim so that greps of its SUCCESS rows work.
 * Feed it the child's output through tee_pump_ops (see proc.h), and zlb's
 * own lines through tee_say().
 */
#ifndef ZLB_TEE_H
#define ZLB_TEE_H

#include "lib/error.h"
#include "lib/proc.h"
#include "lib/strbuf.h"
#include "run/table.h"

/* What the terminal side shows (zlb run -q, its default, -v); run.log gets every line. */
enum tee_verbosity {
	TEE_QUIET,	/* the result line (tee_result), errors and failures */
	TEE_NORMAL,	/* zlb's own lines, the tables, markers, warnings, failures */
	TEE_VERBOSE,	/* every line of the child as it comes, too */
};

struct tee {
	int log_fd;
	int log_errno;	/* the first failed write to run.log (ENOSPC: the disk filled), or 0 */
	int term_fd;
	int color;
	enum tee_verbosity verbosity;
	struct table_filter tf;
	struct strbuf scratch;
};

/* Open (append to) log_path; the terminal is term_fd. Returns 0 or error(). */
int tee_open(struct tee *t, const char *log_path, int term_fd, int color);
/* Show on the terminal what verbosity says from here on (TEE_VERBOSE after tee_open). */
void tee_set_verbosity(struct tee *t, enum tee_verbosity v);
/* Flush a held table and close the log. Safe on a tee that never opened. */
void tee_close(struct tee *t);
/* Emit whatever table block the terminal side holds. */
void tee_flush(struct tee *t);

/* Callbacks for child_pump(): the child's lines go to both sinks. */
extern const struct pump_ops tee_pump_ops;

/* Colour argument of tee_say() meaning "no colour". */
#define TEE_PLAIN (-1)

/*
 * A line of zlb's own, to both sinks; coloured (enum term_color) on the
 * terminal, which shows it unless quiet.
 */
void tee_say(struct tee *t, int color, const char *fmt, ...) ZLB_PRINTF(3, 4);
/* The same for the line that says how the run ended: shown even when quiet. */
void tee_result(struct tee *t, int color, const char *fmt, ...) ZLB_PRINTF(3, 4);

#endif
