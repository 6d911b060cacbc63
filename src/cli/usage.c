#include "cli/usage.h"

#include <stdarg.h>
#include <stdio.h>

#include "lib/strbuf.h"
#include "rundir/exit_codes.h"
#include "rundir/preflight_report.h"

/* The command being run, for the prefix of library messages. */
static const char *current = "";

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

int cli_help(const char *path, const struct cmd_doc *doc)
{
	struct strbuf sb = STRBUF_INIT;

	cmddoc_help(&sb, "zlb", path, doc);
	fputs(sb.buf, stdout);
	strbuf_release(&sb);
	return ZLB_EXIT_OK;
}

int cli_version(void)
{
	printf("zlb %s\n", ZLB_VERSION);
	return ZLB_EXIT_OK;
}

static void say_error(const char *prefix, const char *msg)
{
	fprintf(stderr, "zlb %s: %s\n", current, msg);
}

static void say_warning(const char *prefix, const char *msg)
{
	fprintf(stderr, "zlb %s: warning: %s\n", current, msg);
}

void cli_report_errors(const char *cmd)
{
	current = cmd;
	set_error_routine(say_error);
	set_warning_routine(say_warning);
}

void error_quiet(const char *prefix, const char *msg)
{
}

int cli_preflight_failed(const char *check, const char *why, const char *fix)
{
	struct strbuf sb = STRBUF_INIT;

	preflight_report(&sb, check, NULL, why, fix, 0);
	fputs(sb.buf, stderr);
	strbuf_release(&sb);
	return ZLB_EXIT_PREFLIGHT;
}
