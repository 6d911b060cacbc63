/*
 * zlb: the command-line front. A git-style table of subcommands; the only
 * place (with the cmd_*.c files) that prints usage and exits.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/usage.h"

const struct cmd_struct commands[] = {
	{ "run", cmd_run, "measure one FlagGems operator into runs/<op>_<time>/", &run_doc },
	{ "ir", cmd_ir, "lay out, diff and fingerprint the IR (ttgir, ptx, ...) of runs", &ir_doc },
	{ "compare", cmd_compare, "is build B faster or slower than A? rows, intervals, verdicts",
	  &compare_doc },
	{ "ab", cmd_ab, "A/B one operator in interleaved rounds: record/replay, IR gate, compare",
	  &ab_doc },
	{ "inventory", cmd_inventory, "list every benchmark function of the FlagGems checkouts into ops/",
	  &inventory_doc },
	{ "batch", cmd_batch, "many operators: one zlb run each, devices in parallel, resumable",
	  &batch_doc },
	{ "summary", cmd_summary, "one line per measurement of a batch, remarks per operator",
	  &summary_doc },
	{ "report", cmd_report, "one self-contained HTML page with plots of a run, batch or A/B",
	  &report_doc },
	{ "task", cmd_task, "one task of a cluster batch, as the cluster starts it (#!zlb task)",
	  &task_doc },
	{ "help", cmd_help, "list commands, or show one command's help", &help_doc },
	{ "version", cmd_version, "print the zlb version", &version_doc },
	{ "completion", cmd_completion, "print the bash completion script", &completion_doc },
	{ NULL, NULL, NULL, NULL },
};

const struct cmd_struct *find_command(const char *name)
{
	for (const struct cmd_struct *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

const struct cmd_doc **command_docs(void)
{
	static struct cmd_doc plain[64];
	size_t n = 0, nplain = 0;
	const struct cmd_doc **docs;

	for (const struct cmd_struct *c = commands; c->name; c++)
		n++;
	docs = calloc(n + 1, sizeof(*docs));
	if (!docs)
		BUG("out of memory");
	n = 0;
	for (const struct cmd_struct *c = commands; c->name; c++) {
		if (c->doc) {
			docs[n++] = c->doc;
		} else if (nplain < sizeof(plain) / sizeof(plain[0])) {
			plain[nplain].name = c->name;
			plain[nplain].summary = c->summary;
			docs[n++] = &plain[nplain++];
		}
	}
	return docs;
}

void list_commands(FILE *out)
{
	fprintf(out, "usage: zlb <command> [options]\n       zlb -h | --help | -V | --version\n\n"
		"commands:\n");
	for (const struct cmd_struct *c = commands; c->name; c++)
		fprintf(out, "  %-11s %s\n", c->name, c->summary);
	fprintf(out, "\n'zlb <command> --help' (or 'zlb help <command>') shows a command's help.\n");
}

/*
 * Run a command, then make sure what it wrote reached standard output (git's
 * run_builtin): `zlb compare A B > /dev/full` must not exit 0 having lost
 * the table. SIGPIPE is ignored, so a closed pipe (`zlb compare A B | head
 * -3`) is a write error like any other, found here after the command wrote
 * its files: exit 7, said on stderr unless it was the pipe (its reader left
 * on purpose).
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
	/* An earlier write failed and the flush had nothing left: its errno is gone. */
	if (err != EPIPE)
		fprintf(stderr, "zlb %s: could not write to standard output: %s\n", c->name,
			strerror(failed && err ? err : EIO));
	return status ? status : ZLB_EXIT_IO;
}

int main(int argc, char **argv)
{
	const struct cmd_struct *c;

	/* A write to a closed pipe fails with EPIPE instead of killing zlb mid-way. */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		list_commands(stderr);
		return ZLB_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		list_commands(stdout);
		return fflush(stdout) ? ZLB_EXIT_IO : ZLB_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
		return run_command(find_command("version"), 1, argv + 1);
	c = find_command(argv[1]);
	if (!c) {
		fprintf(stderr, "zlb: '%s' is not a zlb command\n"
			"       (zlb --help lists the commands)\n", argv[1]);
		return ZLB_EXIT_USAGE;
	}
	cli_report_errors(c->name);
	return run_command(c, argc - 1, argv + 1);
}
