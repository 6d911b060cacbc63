/*
 * The zlb subcommands. Each lives in src/cli/cmd_<name>.c and is listed
 * once in the commands[] table of main.c. A command parses its own options,
 * calls library code (which returns errors and never exits) and returns the
 * process exit status, one of enum zlb_exit.
 *
 * Each also describes itself in a struct cmd_doc (lib/cmddoc.h): its forms,
 * its option table, its exit codes. Its --help, the man page (zlb help
 * --man) and the bash completion (zlb completion bash) are made from it.
 */
#ifndef ZLB_CLI_COMMANDS_H
#define ZLB_CLI_COMMANDS_H

#include <stdio.h>

#include "lib/cmddoc.h"
#include "rundir/exit_codes.h"

struct cmd_struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const struct cmd_doc *doc;	/* NULL: a command that describes itself only by summary */
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
int cmd_completion(int argc, char **argv);

extern const struct cmd_doc run_doc, ir_doc, compare_doc, ab_doc, inventory_doc, batch_doc,
	summary_doc, report_doc, task_doc, help_doc, version_doc, completion_doc;

/* The table, for `zlb help`. NULL-name terminated. */
extern const struct cmd_struct commands[];

/* "usage: zlb <command> ..." and the commands with their summaries. */
void list_commands(FILE *out);

/* The command named name, or NULL. */
const struct cmd_struct *find_command(const char *name);

/*
 * Every command's doc, NULL-terminated (a command without one gets a
 * minimal doc of its name and summary): for the man page and completion.
 * Freed by free().
 */
const struct cmd_doc **command_docs(void);

#endif
