/*
 * zlb completion bash: the bash completion script, made from the same
 * option tables that parse the command line and print --help.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/usage.h"
#include "lib/strbuf.h"

static const struct cmd_exit completion_exits[] = {
	{ "0", "the script was printed" },
	{ "2", "no shell, or one zlb does not know" },
	{ "7", "standard output could not be written" },
	{ NULL, NULL },
};

static const struct cmd_doc bash_doc = {
	.name = "bash",
	.summary = "the script for bash",
	.synopsis = "",
	.about = "Completes commands, sub-commands, every option (zlb ab and zlb batch also\n"
		 "zlb run's), the values of options that take one of a list (--color, --format,\n"
		 "--dtypes, ...), directories and files. Try it with\n"
		 "    source <(zlb completion bash)\n"
		 "or install it as <prefix>/share/bash-completion/completions/zlb (make install\n"
		 "does).\n",
	.exits = completion_exits,
	.positional = CMD_ARG_NONE,
};

static const struct cmd_doc *const completion_subs[] = { &bash_doc, NULL };

const struct cmd_doc completion_doc = {
	.name = "completion",
	.summary = "print the bash completion script",
	.about = "The completion script of a shell, generated from zlb's option tables.\n",
	.exits = completion_exits,
	.subs = completion_subs,
};

int cmd_completion(int argc, char **argv)
{
	struct strbuf sb = STRBUF_INIT;
	const struct cmd_doc **docs;

	if (argc < 2)
		return usage_error("completion", "which shell? zlb completion bash");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return cli_help("completion", &completion_doc);
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version"))
		return cli_version();
	if (strcmp(argv[1], "bash"))
		return usage_error("completion", "'%s' is not a shell zlb completes (bash)", argv[1]);
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return cli_help("completion bash", &bash_doc);
		if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version"))
			return cli_version();
		return usage_error("completion bash", "takes no argument; '%s' is one", argv[i]);
	}
	docs = command_docs();
	cmddoc_bash(&sb, "zlb", docs);
	fputs(sb.buf, stdout);
	strbuf_release(&sb);
	free(docs);
	return ZLB_EXIT_OK;
}
