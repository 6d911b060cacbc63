#include "lib/cmddoc.h"

#include <stdlib.h>
#include <string.h>

#include "lib/term.h"

/* The options every command takes, whatever its table: options_parse and opt_next know them. */
static const struct opt_def common_opts[] = {
	{ "help", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "show this help and exit", .short_name = 'h' },
	{ "version", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "print the version and exit", .short_name = 'V' },
	{ NULL },
};

#define WIDTH 78

/* ---- --help ------------------------------------------------------------------ */

/* Each line of lines after prefix (the first) or as many spaces (the others). */
static void add_prefixed_lines(struct strbuf *out, const char *prefix, const char *lines)
{
	int first = 1;

	for (const char *l = lines; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);

		if (first)
			strbuf_addstr(out, prefix);
		else
			strbuf_addchars(out, ' ', strlen(prefix));
		strbuf_add(out, l, n);
		strbuf_addch(out, '\n');
		first = 0;
		l = nl ? nl + 1 : NULL;
	}
}

/* The forms of doc and of its sub-commands, "<prog> <path> <form>" a line. */
static void collect_usage(struct strbuf *lines, const char *prog, const char *path,
			  const struct cmd_doc *doc)
{
	/* an empty synopsis: the command takes no argument */
	if (doc->synopsis && !*doc->synopsis)
		strbuf_addf(lines, "%s %s\n", prog, path);
	for (const char *l = doc->synopsis; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);

		strbuf_addf(lines, "%s %s %.*s\n", prog, path, (int)n, l);
		l = nl ? nl + 1 : NULL;
	}
	for (const struct cmd_doc *const *s = doc->subs; s && *s; s++) {
		char *sub;

		if ((*s)->hidden)
			continue;
		sub = xstrfmt("%s %s", path, (*s)->name);
		collect_usage(lines, prog, sub, *s);
		free(sub);
	}
	if (!doc->synopsis && !doc->subs)
		strbuf_addf(lines, "%s %s [options]\n", prog, path);
}

static void add_usage(struct strbuf *out, const char *prog, const char *path,
		      const struct cmd_doc *doc)
{
	struct strbuf lines = STRBUF_INIT;

	collect_usage(&lines, prog, path, doc);
	add_prefixed_lines(out, "usage: ", lines.buf);
	strbuf_release(&lines);
}

static void add_exits(struct strbuf *out, const struct cmd_exit *exits)
{
	if (!exits || !exits->code)
		return;
	strbuf_addstr(out, "\nexit codes:\n");
	for (const struct cmd_exit *e = exits; e->code; e++) {
		struct strbuf w = STRBUF_INIT;
		size_t pad = strlen(e->code) < 6 ? 6 - strlen(e->code) : 1;

		term_add_wrapped(&w, e->text, 8, WIDTH);
		strbuf_addf(out, "  %s", e->code);
		strbuf_addchars(out, ' ', pad);
		/* the first line of the wrapped text after the code, the rest indented */
		strbuf_addstr(out, w.buf + 8);
		strbuf_release(&w);
	}
}

void cmddoc_help(struct strbuf *out, const char *prog, const char *path,
		 const struct cmd_doc *doc)
{
	add_usage(out, prog, path, doc);
	if (doc->about) {
		strbuf_addch(out, '\n');
		strbuf_addstr(out, doc->about);
		if (out->len && out->buf[out->len - 1] != '\n')
			strbuf_addch(out, '\n');
	}
	if (doc->subs) {
		strbuf_addstr(out, "\ncommands:\n");
		for (const struct cmd_doc *const *s = doc->subs; *s; s++)
			if (!(*s)->hidden)
				strbuf_addf(out, "  %-12s %s\n", (*s)->name, (*s)->summary);
		strbuf_addf(out, "'%s %s <command> --help' shows a command's options.\n", prog, path);
	}
	strbuf_addstr(out, "\noptions:\n");
	if (doc->opts)
		options_usage(out, doc->opts);
	options_usage(out, common_opts);
	if (doc->more_opts_note) {
		strbuf_addch(out, '\n');
		term_add_wrapped(out, doc->more_opts_note, 0, WIDTH);
	}
	if (doc->extra) {
		char *x = doc->extra();

		strbuf_addch(out, '\n');
		strbuf_addstr(out, x);
		if (out->len && out->buf[out->len - 1] != '\n')
			strbuf_addch(out, '\n');
		free(x);
	}
	add_exits(out, doc->exits);
}

/* ---- man page ------------------------------------------------------------------ */

/* text for roff: backslashes and hyphens escaped, a control character at a line start defused. */
static void roff_text(struct strbuf *out, const char *text, size_t len)
{
	int at_start = out->len == 0 || out->buf[out->len - 1] == '\n';

	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (at_start && (c == '.' || c == '\''))
			strbuf_addstr(out, "\\&");
		at_start = c == '\n';
		if (c == '\\')
			strbuf_addstr(out, "\\e");
		else if (c == '-')
			strbuf_addstr(out, "\\-");
		else
			strbuf_addch(out, c);
	}
}

static void roff_str(struct strbuf *out, const char *text)
{
	roff_text(out, text, strlen(text));
}

/*
 * Text of paragraphs (blank lines between): one whose lines all start at
 * column 0 is filled by the reader; one with an indented line (a list, a
 * table) keeps its lines.
 */
static void roff_paragraphs(struct strbuf *out, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *end = strstr(p, "\n\n"), *q;
		size_t len;
		int indented = 0;

		len = end ? (size_t)(end - p) : strlen(p);
		while (len && p[len - 1] == '\n')
			len--;
		indented = p[0] == ' ';
		for (q = p; q < p + len; q++)
			if (*q == '\n' && q + 1 < p + len && q[1] == ' ')
				indented = 1;
		strbuf_addstr(out, ".PP\n");
		if (indented)
			strbuf_addstr(out, ".nf\n");
		roff_text(out, p, len);
		strbuf_addstr(out, indented ? "\n.fi\n" : "\n");
		p = end ? end + 2 : p + strlen(p);
		while (*p == '\n')
			p++;
	}
}

static void roff_options(struct strbuf *out, const struct opt_def *defs)
{
	for (const struct opt_def *d = defs; d && d->name; d++) {
		strbuf_addstr(out, ".TP\n");
		if (d->short_name)
			strbuf_addf(out, "\\fB\\-%c\\fR, ", d->short_name);
		strbuf_addstr(out, "\\fB\\-\\-");
		roff_str(out, d->name);
		strbuf_addstr(out, "\\fR");
		if (d->kind != OPT_BOOL) {
			strbuf_addstr(out, " \\fI");
			roff_str(out, d->metavar ? d->metavar : "VALUE");
			strbuf_addstr(out, "\\fR");
		}
		if (d->alias) {
			strbuf_addstr(out, " (also \\fB\\-\\-");
			roff_str(out, d->alias);
			strbuf_addstr(out, "\\fR)");
		}
		strbuf_addch(out, '\n');
		roff_str(out, d->help);
		strbuf_addch(out, '\n');
		if (d->choices) {
			strbuf_addstr(out, ".br\nOne of:");
			for (const char *const *c = d->choices; *c; c++) {
				strbuf_addstr(out, c == d->choices ? " " : ", ");
				roff_str(out, *c);
			}
			strbuf_addch(out, '\n');
		}
		if (d->env || d->def) {
			strbuf_addstr(out, ".br\n");
			if (d->env) {
				strbuf_addstr(out, "Environment: ");
				roff_str(out, d->env);
				strbuf_addstr(out, d->def ? "; " : "");
			}
			if (d->def) {
				strbuf_addstr(out, "default: ");
				roff_str(out, d->def);
			}
			strbuf_addch(out, '\n');
		}
	}
}

static void man_command(struct strbuf *out, const char *prog, const char *path,
			const struct cmd_doc *doc)
{
	strbuf_addstr(out, ".SS \"");
	roff_str(out, prog);
	strbuf_addch(out, ' ');
	roff_str(out, path);
	strbuf_addstr(out, "\"\n");
	roff_str(out, doc->summary);
	strbuf_addch(out, '\n');
	if (doc->synopsis) {
		strbuf_addstr(out, ".PP\n.nf\n");
		if (!*doc->synopsis) {
			strbuf_addstr(out, "\\fB");
			roff_str(out, prog);
			strbuf_addch(out, ' ');
			roff_str(out, path);
			strbuf_addstr(out, "\\fR\n");
		}
		for (const char *l = doc->synopsis; l && *l;) {
			const char *nl = strchr(l, '\n');
			size_t n = nl ? (size_t)(nl - l) : strlen(l);

			strbuf_addstr(out, "\\fB");
			roff_str(out, prog);
			strbuf_addch(out, ' ');
			roff_str(out, path);
			strbuf_addstr(out, "\\fR ");
			roff_text(out, l, n);
			strbuf_addch(out, '\n');
			l = nl ? nl + 1 : NULL;
		}
		strbuf_addstr(out, ".fi\n");
	}
	if (doc->about)
		roff_paragraphs(out, doc->about);
	if (doc->opts && doc->opts->name) {
		strbuf_addstr(out, ".PP\nOptions:\n");
		roff_options(out, doc->opts);
	}
	if (doc->more_opts_note) {
		strbuf_addstr(out, ".PP\n");
		roff_str(out, doc->more_opts_note);
		strbuf_addch(out, '\n');
	}
	if (doc->extra) {
		char *x = doc->extra();

		roff_paragraphs(out, x);
		free(x);
	}
	if (doc->exits && doc->exits->code) {
		strbuf_addstr(out, ".PP\nExit status:\n");
		for (const struct cmd_exit *e = doc->exits; e->code; e++) {
			strbuf_addstr(out, ".TP\n.B ");
			roff_str(out, e->code);
			strbuf_addch(out, '\n');
			roff_str(out, e->text);
			strbuf_addch(out, '\n');
		}
	}
	for (const struct cmd_doc *const *s = doc->subs; s && *s; s++) {
		char *sub;

		if ((*s)->hidden)
			continue;
		sub = xstrfmt("%s %s", path, (*s)->name);
		man_command(out, prog, sub, *s);
		free(sub);
	}
}

void cmddoc_man(struct strbuf *out, const char *prog, const char *version,
		const char *summary, const char *about, const struct cmd_doc *const *cmds)
{
	char *upper = xstrdup(prog);

	for (char *p = upper; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	strbuf_addstr(out, ".\\\" Generated from the option tables of ");
	roff_str(out, prog);
	strbuf_addstr(out, "; do not edit.\n.TH ");
	roff_str(out, upper);
	strbuf_addstr(out, " 1 \"\" \"");
	roff_str(out, prog);
	strbuf_addch(out, ' ');
	roff_str(out, version);
	/* no hyphenation: option names and file names must read as they are typed */
	strbuf_addstr(out, "\" \"User Commands\"\n.nh\n.SH NAME\n");
	roff_str(out, prog);
	strbuf_addstr(out, " \\- ");
	roff_str(out, summary);
	strbuf_addstr(out, "\n.SH SYNOPSIS\n.B ");
	roff_str(out, prog);
	strbuf_addstr(out, "\n.I command\n[\\fIoptions\\fR] [\\fIarguments\\fR]\n.br\n.B ");
	roff_str(out, prog);
	strbuf_addstr(out, "\n\\fB\\-h\\fR | \\fB\\-\\-help\\fR | \\fB\\-V\\fR | "
		      "\\fB\\-\\-version\\fR\n.SH DESCRIPTION\n");
	roff_paragraphs(out, about);
	strbuf_addstr(out, ".PP\nEvery command takes \\fB\\-h\\fR, \\fB\\-\\-help\\fR "
		      "(its help) and \\fB\\-V\\fR, \\fB\\-\\-version\\fR.\n.SH COMMANDS\n");
	for (const struct cmd_doc *const *c = cmds; *c; c++)
		if (!(*c)->hidden)
			man_command(out, prog, (*c)->name, *c);
	free(upper);
}

/* ---- bash completion ------------------------------------------------------------ */

/* Every flag of defs: --name, --alias, -n. */
static void add_words(struct strbuf *out, const struct opt_def *defs)
{
	for (const struct opt_def *d = defs; d && d->name; d++) {
		strbuf_addf(out, " --%s", d->name);
		if (d->alias)
			strbuf_addf(out, " --%s", d->alias);
		if (d->short_name)
			strbuf_addf(out, " -%c", d->short_name);
	}
}

/* What follows option d on the command line, as the script's val: "w:a b c", dir, file, none. */
static void value_kind(struct strbuf *out, const struct opt_def *d)
{
	const char *m = d->metavar ? d->metavar : "";

	if (d->choices) {
		strbuf_addstr(out, "w:");
		for (const char *const *c = d->choices; *c; c++)
			strbuf_addf(out, "%s%s", c == d->choices ? "" : " ", *c);
	} else if (d->kind == OPT_STRING && ends_with(m, "DIR")) {
		strbuf_addstr(out, "dir");
	} else if (d->kind == OPT_STRING && (ends_with(m, "FILE") || !strcmp(m, "PATH") ||
					     !strcmp(m, "PROG") || !strcmp(m, "SOCKET"))) {
		strbuf_addstr(out, "file");
	} else {
		strbuf_addstr(out, "none");
	}
}

static void add_value_cases(struct strbuf *out, const struct opt_def *defs)
{
	for (const struct opt_def *d = defs; d && d->name; d++) {
		if (d->kind == OPT_BOOL)
			continue;
		strbuf_addf(out, "\t\t--%s", d->name);
		if (d->alias)
			strbuf_addf(out, "|--%s", d->alias);
		if (d->short_name)
			strbuf_addf(out, "|-%c", d->short_name);
		strbuf_addstr(out, ") val='");
		value_kind(out, d);
		strbuf_addstr(out, "';;\n");
	}
}

static const char *positional_kind(enum cmd_arg a)
{
	switch (a) {
	case CMD_ARG_DIR:
		return "dir";
	case CMD_ARG_NONE:
		return "none";
	case CMD_ARG_COMMAND:
		return "commands";
	case CMD_ARG_FILE:
		break;
	}
	return "file";
}

static void bash_case(struct strbuf *out, const char *path, const struct cmd_doc *doc)
{
	strbuf_addf(out, "\t\"%s\")\n\t\topts='", path);
	add_words(out, doc->opts);
	add_words(out, doc->more_opts);
	add_words(out, common_opts);
	strbuf_addf(out, "'\n\t\tpos=%s\n\t\tcase $opt in\n", positional_kind(doc->positional));
	add_value_cases(out, doc->opts);
	add_value_cases(out, doc->more_opts);
	strbuf_addstr(out, "\t\tesac;;\n");
	for (const struct cmd_doc *const *s = doc->subs; s && *s; s++) {
		char *sub;

		if ((*s)->hidden)
			continue;
		sub = xstrfmt("%s %s", path, (*s)->name);
		bash_case(out, sub, *s);
		free(sub);
	}
}

void cmddoc_bash(struct strbuf *out, const char *prog, const struct cmd_doc *const *cmds)
{
	struct strbuf names = STRBUF_INIT;

	for (const struct cmd_doc *const *c = cmds; *c; c++)
		if (!(*c)->hidden)
			strbuf_addf(&names, "%s%s", names.len ? " " : "", (*c)->name);
	strbuf_addf(out,
		"# bash completion for %1$s, generated from its option tables by\n"
		"# `%1$s completion bash`: source it, or install it as\n"
		"# <prefix>/share/bash-completion/completions/%1$s.\n"
		"_%1$s() {\n"
		"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev= opt= pre= path= opts= pos= val=\n"
		"\tCOMPREPLY=()\n"
		"\t(( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
		"\t# \"--name=value\": bash splits it at '=' (COMP_WORDBREAKS), or not\n"
		"\tif [[ $cur == = ]]; then\n"
		"\t\topt=$prev; cur=\n"
		"\telif [[ $prev == = ]] && (( COMP_CWORD > 1 )); then\n"
		"\t\topt=${COMP_WORDS[COMP_CWORD-2]}\n"
		"\telif [[ $cur == --*=* ]]; then\n"
		"\t\topt=${cur%%%%=*}; pre=$opt=; cur=${cur#*=}\n"
		"\telse\n"
		"\t\topt=$prev\n"
		"\tfi\n"
		"\tif (( COMP_CWORD == 1 )); then\n"
		"\t\tCOMPREPLY=( $(compgen -W '%2$s -h --help -V --version' -- \"$cur\") )\n"
		"\t\treturn 0\n"
		"\tfi\n"
		"\tpath=${COMP_WORDS[1]}\n"
		"\tcase $path in\n", prog, names.buf);
	for (const struct cmd_doc *const *c = cmds; *c; c++) {
		struct strbuf subs = STRBUF_INIT;

		if ((*c)->hidden || !(*c)->subs)
			continue;
		for (const struct cmd_doc *const *s = (*c)->subs; *s; s++)
			if (!(*s)->hidden)
				strbuf_addf(&subs, "%s ", (*s)->name);
		strbuf_addf(out,
			"\t%1$s)\n"
			"\t\tif (( COMP_CWORD == 2 )); then\n"
			"\t\t\tCOMPREPLY=( $(compgen -W '%2$s-h --help -V --version' -- \"$cur\") )\n"
			"\t\t\treturn 0\n"
			"\t\tfi\n"
			"\t\tpath=\"$path ${COMP_WORDS[2]}\";;\n", (*c)->name, subs.buf);
		strbuf_release(&subs);
	}
	strbuf_addstr(out, "\tesac\n\tcase $path in\n");
	for (const struct cmd_doc *const *c = cmds; *c; c++)
		if (!(*c)->hidden)
			bash_case(out, (*c)->name, *c);
	strbuf_addf(out,
		"\t*) return 0;;\n"
		"\tesac\n"
		"\tif [[ -n $val ]]; then\n"
		"\t\tcase $val in\n"
		"\t\tdir) COMPREPLY=( $(compgen -d -- \"$cur\") );;\n"
		"\t\tfile) COMPREPLY=( $(compgen -f -- \"$cur\") );;\n"
		"\t\tnone) ;;\n"
		"\t\t*) COMPREPLY=( $(compgen -W \"${val#w:}\" -- \"$cur\") );;\n"
		"\t\tesac\n"
		"\t\t[[ -n $pre ]] && COMPREPLY=( \"${COMPREPLY[@]/#/$pre}\" )\n"
		"\t\treturn 0\n"
		"\tfi\n"
		"\tif [[ $cur == -* ]]; then\n"
		"\t\tCOMPREPLY=( $(compgen -W \"$opts\" -- \"$cur\") )\n"
		"\t\treturn 0\n"
		"\tfi\n"
		"\tcase $pos in\n"
		"\tdir) COMPREPLY=( $(compgen -d -- \"$cur\") );;\n"
		"\tfile) COMPREPLY=( $(compgen -f -- \"$cur\") );;\n"
		"\tcommands) COMPREPLY=( $(compgen -W '%2$s' -- \"$cur\") );;\n"
		"\tesac\n"
		"\treturn 0\n"
		"}\n"
		"complete -o filenames -F _%1$s %1$s\n", prog, names.buf);
	strbuf_release(&names);
}
