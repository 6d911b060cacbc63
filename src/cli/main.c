/*
 * zlb: the command-line front. A git-style table of subcommands; the only
 * place (with the cmd_*.c files) that prints usage and exits.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

const struct cmd_struct commands[] = {
	{ "run", cmd_run, "measure one FlagGems operator into runs/<op>_<time>/" },
	{ "ir", cmd_ir, "lay out, diff and fingerprint the IR (ttgir, ptx, ...) of runs" },
	{ "compare", cmd_compare, "is build B faster or slower than A? rows, intervals, verdicts" },
	{ "ab", cmd_ab, "A/B one operator in interleaved rounds: record/replay, IR gate, compare" },
	{ "inventory", cmd_inventory, "list every benchmark function of the FlagGems checkouts into ops/" },
	{ "batch", cmd_batch, "many operators: one zlb run each, devices in parallel, resumable" },
	{ "summary", cmd_summary, "one CSV line per measurement of a batch, remarks per operator" },
	{ "report", cmd_report, "one self-contained HTML page with plots of a run, batch or A/B" },
	{ "task", cmd_task, "one task of a cluster batch, as the cluster starts it (#!zlb task)" },
	{ "help", cmd_help, "list commands, or show one command's options" },
	{ "version", cmd_version, "print the zlb version" },
	{ NULL, NULL, NULL },
};

static const struct cmd_struct *find_command(const char *name)
{
	for (const struct cmd_struct *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static void list_commands(FILE *out)
{
	fprintf(out, "usage: zlb <command> [options]\n\ncommands:\n");
	for (const struct cmd_struct *c = commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fprintf(out, "\n'zlb <command> --help' shows a command's options.\n");
}

int cmd_help(int argc, char **argv)
{
	const struct cmd_struct *c;

	if (argc < 2) {
		list_commands(stdout);
		return ZLB_EXIT_OK;
	}
	c = find_command(argv[1]);
	if (!c) {
		fprintf(stderr, "zlb: '%s' is not a zlb command; see 'zlb help'\n", argv[1]);
		return ZLB_EXIT_USAGE;
	}
	char *sub[] = { argv[1], "--help", NULL };
	return c->fn(2, sub);
}

int cmd_version(int argc, char **argv)
{
	printf("zlb %s\n", ZLB_VERSION);
	return ZLB_EXIT_OK;
}

/*
 * Run a command, then make sure what it wrote reached standard output (git's
 * run_builtin): `zlb compare A B > /dev/full` must not exit 0 having lost
 * the table. A closed pipe (the reader went away) is not the writer's fault.
 */
static int run_command(const struct cmd_struct *c, int argc, char **argv)
{
	int status = c->fn(argc, argv);
	int failed, err;

	errno = 0;
	failed = fflush(stdout);
	err = errno;
	if (!failed && !ferror(stdout))
		return status;
	if (err == EPIPE)
		return status;
	/* An earlier write failed and the flush had nothing left: its errno is gone. */
	fprintf(stderr, "zlb %s: could not write to standard output: %s\n", c->name,
		strerror(failed && err ? err : EIO));
	return status ? status : ZLB_EXIT_IO;
}

int main(int argc, char **argv)
{
	const struct cmd_struct *c;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		list_commands(argc < 2 ? stderr : stdout);
		return argc < 2 ? ZLB_EXIT_USAGE : ZLB_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version"))
		return run_command(find_command("version"), argc - 1, argv + 1);
	c = find_command(argv[1]);
	if (!c) {
		fprintf(stderr, "zlb: '%s' is not a zlb command; see 'zlb help'\n", argv[1]);
		return ZLB_EXIT_USAGE;
	}
	return run_command(c, argc - 1, argv + 1);
}
