#include "lib/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char last_msg[4096];

static void default_report(const char *prefix, const char *msg)
{
	fprintf(stderr, "%s%s\n", prefix, msg);
}

static report_fn error_routine = default_report;
static report_fn warning_routine = default_report;

void set_error_routine(report_fn fn)
{
	error_routine = fn ? fn : default_report;
}

void set_warning_routine(report_fn fn)
{
	warning_routine = fn ? fn : default_report;
}

const char *last_error(void)
{
	return last_msg;
}

/* is_error: the message is an error's, kept for last_error() (a warning's is not). */
static void vreport(report_fn fn, int is_error, const char *prefix, const char *fmt,
		    va_list ap, const char *suffix) ZLB_PRINTF(4, 0);
static void vreport(report_fn fn, int is_error, const char *prefix, const char *fmt,
		    va_list ap, const char *suffix)
{
	char msg[sizeof(last_msg)];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (suffix) {
		size_t len = strlen(msg);
		snprintf(msg + len, sizeof(msg) - len, ": %s", suffix);
	}
	if (is_error)
		memcpy(last_msg, msg, sizeof(msg));
	fn(prefix, msg);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(error_routine, 1, "error: ", fmt, ap, NULL);
	va_end(ap);
	return -1;
}

int error_errno(const char *fmt, ...)
{
	const char *why = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	vreport(error_routine, 1, "error: ", fmt, ap, why);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(warning_routine, 0, "warning: ", fmt, ap, NULL);
	va_end(ap);
}

void bug_fl(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "BUG: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}
