/*
 * Error reporting for library code, after git's usage.c.
 *
 * Library code never exits. It reports a problem with error() or warning()
 * and returns; error() returns -1 so a function can say
 *
 *     if (!dir)
 *         return error("no FlagGems checkout at '%s'", path);
 *
 * Messages go through a replaceable routine so that tests can capture them
 * and the CLI can decide where they are printed. Only src/cli/ calls die().
 */
#ifndef ZLB_ERROR_H
#define ZLB_ERROR_H

#include <stdarg.h>

#define ZLB_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))

/* Report an error and return -1. */
int error(const char *fmt, ...) ZLB_PRINTF(1, 2);
/* Like error(), with ": <strerror(errno)>" appended. */
int error_errno(const char *fmt, ...) ZLB_PRINTF(1, 2);
/* Report something worth knowing that does not stop the caller. */
void warning(const char *fmt, ...) ZLB_PRINTF(1, 2);

/*
 * The routines that receive formatted messages. The defaults print
 * "error: msg" / "warning: msg" to stderr. Passing NULL restores a default.
 */
typedef void (*report_fn)(const char *prefix, const char *msg);
void set_error_routine(report_fn fn);
void set_warning_routine(report_fn fn);

/* The text of the most recent error(), for callers that relay it. */
const char *last_error(void);

/* A programming error: prints file:line and aborts. Never for bad input. */
#define BUG(...) bug_fl(__FILE__, __LINE__, __VA_ARGS__)
void bug_fl(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn)) ZLB_PRINTF(3, 4);

#endif
