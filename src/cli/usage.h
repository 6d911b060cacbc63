/*
 * What every zlb command says the same way: a bad command line, and the
 * silencing of library errors it reports itself (through last_error()).
 */
#ifndef ZLB_CLI_USAGE_H
#define ZLB_CLI_USAGE_H

#include "lib/error.h"

/*
 * "zlb CMD: <message>" and the pointer to `zlb CMD --help` on stderr.
 * Returns ZLB_EXIT_USAGE, so a command can `return usage_error(...)`.
 */
int usage_error(const char *cmd, const char *fmt, ...) ZLB_PRINTF(2, 3);

/* An error routine that prints nothing: the command prints last_error() in context. */
void error_quiet(const char *prefix, const char *msg);

#endif
