/*
 * cmddoc.c: one description of a command gives its --help, its part of the
 * man page and its bash completion. Here on a small made-up program; the
 * CLI tests source zlb's own script in bash and ask it for completions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/cmddoc.h"

static const char *const levels[] = { "core", "comprehensive", NULL };

static const struct opt_def go_opts[] = {
	{ "level", NULL, "LEVEL", "core", OPT_CHOICE, levels, 0, 0, "LEVEL",
	  "how far to go; a long sentence that has to be wrapped because it does not fit "
	  "on one line of seventy-eight columns" },
	{ "out", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "DIR", "where it goes" },
	{ "log", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "FILE", "a file" },
	{ "count", NULL, NULL, NULL, OPT_INT, NULL, 1, 9, "N", "how many" },
	{ "quiet", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL, "say less", .short_name = 'q' },
	{ NULL },
};

static const struct opt_def run_opts[] = {
	{ "python", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "PROG", "the interpreter" },
	{ NULL },
};

static const struct cmd_exit go_exits[] = {
	{ "0", "went" },
	{ "128+N", "killed by signal N, which is a long explanation that wraps onto another "
		   "line of the help" },
	{ NULL, NULL },
};

static const struct cmd_doc go_doc = {
	.name = "go",
	.summary = "go somewhere",
	.synopsis = "[options] WHERE\n--all",
	.about = "Go somewhere.\n.a line that starts with a dot\n",
	.opts = go_opts,
	.more_opts = run_opts,
	.more_opts_note = "Any run option too.",
	.exits = go_exits,
	.positional = CMD_ARG_DIR,
};

static const struct opt_def open_opts[] = {
	{ "file", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "FILE", "which file" },
	{ NULL },
};

static const struct cmd_doc open_doc = {
	.name = "open", .summary = "open the box", .synopsis = "BOX", .opts = open_opts,
};
static const struct cmd_doc close_doc = { .name = "close", .summary = "close the box" };
static const struct cmd_doc secret_doc = { .name = "secret", .summary = "x", .hidden = 1 };
static const struct cmd_doc *const box_subs[] = { &open_doc, &close_doc, &secret_doc, NULL };
static const struct cmd_doc box_doc = {
	.name = "box", .summary = "boxes", .about = "Boxes.\n", .subs = box_subs,
};
static const struct cmd_doc *const cmds[] = { &go_doc, &box_doc, &secret_doc, NULL };

static void help_text(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	cmddoc_help(&sb, "tool", "go", &go_doc);
	assert_true(starts_with(sb.buf, "usage: tool go [options] WHERE\n"
					"       tool go --all\n\nGo somewhere.\n"));
	assert_non_null(strstr(sb.buf, "\noptions:\n  --level LEVEL\n      how far to go;"));
	assert_non_null(strstr(sb.buf, "  -q, --quiet\n      say less\n"));
	assert_non_null(strstr(sb.buf, "  -h, --help\n      show this help and exit\n"));
	assert_non_null(strstr(sb.buf, "  -V, --version\n"));
	assert_non_null(strstr(sb.buf, "\nAny run option too.\n"));
	assert_non_null(strstr(sb.buf, "\nexit codes:\n  0     went\n  128+N killed by signal N,"));
	/* handed-on options are named by the note, not listed again */
	assert_null(strstr(sb.buf, "--python"));
	/* every line fits 78 columns (help text wrapped) */
	for (const char *p = sb.buf; *p;) {
		const char *nl = strchr(p, '\n');

		assert_true(nl - p <= 78);
		p = nl + 1;
	}
	strbuf_release(&sb);
}

static void sub_command_help(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	/* the parent: every sub-command's forms and a list of them */
	cmddoc_help(&sb, "tool", "box", &box_doc);
	assert_true(starts_with(sb.buf, "usage: tool box open BOX\n"
					"       tool box close [options]\n"));
	assert_non_null(strstr(sb.buf, "\ncommands:\n  open         open the box\n"
				       "  close        close the box\n"));
	assert_null(strstr(sb.buf, "secret"));
	assert_null(strstr(sb.buf, "--file"));
	strbuf_reset(&sb);
	/* a sub-command: its own help only */
	cmddoc_help(&sb, "tool", "box open", &open_doc);
	assert_true(starts_with(sb.buf, "usage: tool box open BOX\n"));
	assert_non_null(strstr(sb.buf, "--file FILE"));
	assert_null(strstr(sb.buf, "close"));
	strbuf_release(&sb);
}

static void man_page(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	cmddoc_man(&sb, "tool", "1.2", "does things", "Tool does things.\n\n  an indented\n  list\n",
		   cmds);
	assert_non_null(strstr(sb.buf, "\n.TH TOOL 1 \"\" \"tool 1.2\" \"User Commands\"\n"));
	assert_non_null(strstr(sb.buf, "\n.SH NAME\ntool \\- does things\n"));
	assert_non_null(strstr(sb.buf, "\n.SS \"tool go\"\n"));
	assert_non_null(strstr(sb.buf, "\n.SS \"tool box open\"\n"));
	assert_non_null(strstr(sb.buf, "\\fB\\-q\\fR, \\fB\\-\\-quiet\\fR\n"));
	assert_non_null(strstr(sb.buf, "\\fB\\-\\-level\\fR \\fILEVEL\\fR\n"));
	/* a line of text that starts with a dot is not a request */
	assert_non_null(strstr(sb.buf, "\n\\&.a line that starts with a dot"));
	/* an indented paragraph keeps its lines */
	assert_non_null(strstr(sb.buf, ".nf\n  an indented\n  list\n.fi\n"));
	assert_null(strstr(sb.buf, "secret"));
	assert_non_null(strstr(sb.buf, ".TP\n.B 128+N\n"));
	strbuf_release(&sb);
}

static void bash_script(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	cmddoc_bash(&sb, "tool", cmds);
	assert_non_null(strstr(sb.buf, "_tool() {\n"));
	assert_non_null(strstr(sb.buf, "complete -o filenames -F _tool tool\n"));
	assert_non_null(strstr(sb.buf, "compgen -W 'go box -h --help -V --version'"));
	/* the sub-commands of box, then each one's case */
	assert_non_null(strstr(sb.buf, "compgen -W 'open close -h --help -V --version'"));
	assert_non_null(strstr(sb.buf, "\t\"box open\")\n"));
	/* options, handed-on ones included; values by kind */
	assert_non_null(strstr(sb.buf, "opts=' --level --out --log --count --quiet -q --python "
				       "--help -h --version -V'"));
	assert_non_null(strstr(sb.buf, "--level) val='w:core comprehensive';;"));
	assert_non_null(strstr(sb.buf, "--out) val='dir';;"));
	assert_non_null(strstr(sb.buf, "--log) val='file';;"));
	assert_non_null(strstr(sb.buf, "--count) val='none';;"));
	assert_non_null(strstr(sb.buf, "--python) val='file';;"));
	assert_null(strstr(sb.buf, "--quiet) val"));
	assert_null(strstr(sb.buf, "secret"));
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(help_text),
		cmocka_unit_test(sub_command_help),
		cmocka_unit_test(man_page),
		cmocka_unit_test(bash_script),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
