/*
 * What every zlb command says the same way: its help (generated from its
 * struct cmd_doc), its version, a bad command line, and the library's
 * errors and warnings, all prefixed "zlb <command>: ".
 */
#ifndef ZLB_CLI_USAGE_H
#define ZLB_CLI_USAGE_H

#include "lib/cmddoc.h"
#include "lib/error.h"

/*
 * "zlb CMD: <message>" and one hint line pointing at `zlb CMD --help` on
 * stderr (cmd is the command path: "run", "ir diff"). Returns
 * ZLB_EXIT_USAGE, so a command can `return usage_error(...)`.
 */
int usage_error(const char *cmd, const char *fmt, ...) ZLB_PRINTF(2, 3);

/* doc's help on stdout, reached as `zlb <path>`. Returns ZLB_EXIT_OK. */
int cli_help(const char *path, const struct cmd_doc *doc);

/* "zlb <version>" on stdout. Returns ZLB_EXIT_OK. */
int cli_version(void);

/*
 * Library errors and warnings from here on as "zlb CMD: msg" and
 * "zlb CMD: warning: msg" on stderr (main.c does it before a command
 * runs; a command that silenced them calls it to restore them).
 */
void cli_report_errors(const char *cmd);

/*
 * "PREFLIGHT_FAILED check=CHECK ..." with why and fix (fix may be NULL) on
 * stderr, as rundir/preflight_report.h lays it out, for a check a command
 * makes before any run. Returns ZLB_EXIT_PREFLIGHT.
 */
int cli_preflight_failed(const char *check, const char *why, const char *fix);

/* An error routine that prints nothing: the command prints last_error() in context. */
void error_quiet(const char *prefix, const char *msg);

#endif
