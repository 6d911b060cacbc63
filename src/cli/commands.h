/*
 * The zlb subcommands. Each lives in src/cli/cmd_<name>.c and is listed
 * once in the commands[] table of main.c. A command parses its own options,
 * calls library code (which returns errors and never exits) and returns the
 * process exit status, one of enum zlb_exit.
 */
#ifndef ZLB_CLI_COMMANDS_H
#define ZLB_CLI_COMMANDS_H

#include "rundir/exit_codes.h"

struct cmd_struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

int cmd_run(int argc, char **argv);
int cmd_ir(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_ab(int argc, char **argv);
int cmd_inventory(int argc, char **argv);
int cmd_batch(int argc, char **argv);
int cmd_summary(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_task(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);

/* The table, for `zlb help`. NULL-name terminated. */
extern const struct cmd_struct commands[];

#endif
