#include "cli/usage.h"

#include <stdarg.h>
#include <stdio.h>

#include "rundir/exit_codes.h"

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "zlb %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n       (zlb %s --help shows the usage)\n", cmd);
	return ZLB_EXIT_USAGE;
}

void error_quiet(const char *prefix, const char *msg)
{
}
