/*
 * zlb help, zlb version, and the manual page: what zlb says about itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/usage.h"
#include "lib/options.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

extern char **environ;

static const char program_about[] =
	"zlb measures FlagGems operators (Triton kernels that replace PyTorch operators)\n"
	"so that a compiler engineer comparing FlagTree/Triton build A against build B\n"
	"can trust a difference of a fraction of a percent: fixed seeds and shapes,\n"
	"CUDA-graph timing without launch overhead, and every caliber of a run recorded\n"
	"so that two runs measured differently are caught by code.\n"
	"\n"
	"Every option of zlb run also reads an environment variable as its default\n"
	"(named in its help); a flag beats the variable. Text meant for people goes to\n"
	"standard output, diagnostics (errors, warnings, refusals) to standard error,\n"
	"each prefixed with the command: \"zlb compare: ...\".\n";

static const struct opt_def help_option_defs[] = {
	{ "man", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "print the manual page of zlb and every command (roff, for man(1)); the build "
	  "makes zlb.1 with it and make install installs it" },
	{ NULL },
};

static const struct cmd_exit help_exits[] = {
	{ "0", "the help was shown" },
	{ "2", "no such command" },
	{ "7", "standard output could not be written" },
	{ NULL, NULL },
};

const struct cmd_doc help_doc = {
	.name = "help",
	.summary = "list commands, or show one command's help",
	.synopsis = "[COMMAND [SUBCOMMAND]]\n--man",
	.about = "Without a command: the list of commands. With one: its help, as\n"
		 "`zlb COMMAND --help` shows it (`zlb help ir diff` as `zlb ir diff --help`).\n",
	.opts = help_option_defs,
	.exits = help_exits,
	.positional = CMD_ARG_COMMAND,
};

static const struct cmd_exit version_exits[] = {
	{ "0", "the version was printed" },
	{ NULL, NULL },
};

const struct cmd_doc version_doc = {
	.name = "version",
	.summary = "print the zlb version",
	.synopsis = "",
	.about = "Prints \"zlb <version>\"; so do `zlb -V`, `zlb --version` and every\n"
		 "command's -V/--version.\n",
	.exits = version_exits,
	.positional = CMD_ARG_NONE,
};

static int print_man(void)
{
	struct strbuf sb = STRBUF_INIT;
	const struct cmd_doc **docs = command_docs();

	cmddoc_man(&sb, "zlb", ZLB_VERSION, "measure FlagGems operators and compare compiler "
		   "builds", program_about, docs);
	fputs(sb.buf, stdout);
	strbuf_release(&sb);
	free(docs);
	return ZLB_EXIT_OK;
}

int cmd_help(int argc, char **argv)
{
	struct opt_values v = { 0 };
	struct strvec pos = STRVEC_INIT;
	const struct cmd_struct *c;
	int want, rc;

	set_error_routine(error_quiet);	/* a bad option is said once, below */
	if (options_parse(help_option_defs, argc, argv, environ, &v, &pos, &want)) {
		rc = usage_error("help", "%s", last_error());
		goto out;
	}
	if (want == OPT_WANT_HELP || want == OPT_WANT_VERSION) {
		rc = want == OPT_WANT_HELP ? cli_help("help", &help_doc) : cli_version();
		goto out;
	}
	if (opt_get(help_option_defs, &v, "man")) {
		rc = pos.nr ? usage_error("help", "--man prints the whole manual; give no command")
			    : print_man();
		goto out;
	}
	if (!pos.nr) {
		list_commands(stdout);
		rc = ZLB_EXIT_OK;
		goto out;
	}
	c = find_command(pos.v[0]);
	if (!c) {
		fprintf(stderr, "zlb help: '%s' is not a zlb command\n"
			"       (zlb --help lists the commands)\n", pos.v[0]);
		rc = ZLB_EXIT_USAGE;
		goto out;
	}
	{
		/* `zlb help ir diff` is `zlb ir diff --help` */
		struct strvec sub = STRVEC_INIT;

		strvec_pushv(&sub, (const char *const *)pos.v);
		strvec_push(&sub, "--help");
		cli_report_errors(c->name);
		rc = c->fn((int)sub.nr, sub.v);
		strvec_clear(&sub);
	}
out:
	opt_values_release(&v);
	strvec_clear(&pos);
	return rc;
}

int cmd_version(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return cli_help("version", &version_doc);
		if (strcmp(argv[i], "-V") && strcmp(argv[i], "--version"))
			return usage_error("version", "takes no argument; '%s' is one", argv[i]);
	}
	return cli_version();
}
