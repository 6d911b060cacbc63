/*
 * What a command says about itself, in one place: its forms, what it does,
 * its option table (lib/options.h), its exit codes and its sub-commands.
 * From that one description come its --help text, its part of the man
 * page and its bash completion, so the three cannot disagree with each
 * other or with what the parser accepts.
 */
#ifndef ZLB_CMDDOC_H
#define ZLB_CMDDOC_H

#include "lib/options.h"
#include "lib/strbuf.h"

struct cmd_exit {
	const char *code;	/* "0", "128+N", "other" */
	const char *text;
};

/* What a value on the command line is, for completion. */
enum cmd_arg {
	CMD_ARG_FILE,		/* a file or directory (the default) */
	CMD_ARG_DIR,		/* a directory */
	CMD_ARG_NONE,		/* nothing to complete (a name, a number) */
	CMD_ARG_COMMAND,	/* one of the program's commands (zlb help CMD) */
};

struct cmd_doc {
	const char *name;		/* "compare"; for a sub-command its own word: "diff" */
	const char *summary;		/* one line, for command lists */
	/* its forms, one a line, each after "<prog> <command path> ": "[options] A B" */
	const char *synopsis;
	const char *about;		/* what it does: lines of at most 78 columns */
	const struct opt_def *opts;	/* its own options, or NULL */
	/*
	 * Options it hands on to another command (zlb ab and zlb batch give
	 * zlb run's to their runs): completed, and named in the help by
	 * more_opts_note rather than listed again.
	 */
	const struct opt_def *more_opts;
	const char *more_opts_note;
	/* Text after the options that is known only at run time (a registry's names). */
	char *(*extra)(void);
	const struct cmd_exit *exits;	/* ends with a NULL code; NULL: none */
	const struct cmd_doc *const *subs;	/* sub-commands, NULL-terminated; NULL: none */
	enum cmd_arg positional;	/* what its positional arguments are */
	int hidden;			/* left out of lists, the man page and completion */
};

/*
 * The --help text of doc, reached as "<prog> <path>" (path: "compare",
 * "ir diff"): usage lines, what it does, its sub-commands, its options
 * (options_usage) followed by -h/--help and -V/--version, the note on
 * options handed on, the extra text, the exit codes.
 */
void cmddoc_help(struct strbuf *out, const char *prog, const char *path,
		 const struct cmd_doc *doc);

/*
 * The man page (roff, man(7) macros) of prog: NAME, SYNOPSIS, DESCRIPTION
 * (about), then a section per command (cmds, NULL-terminated) with its
 * forms, text, options and exit codes, sub-commands within. Every text is
 * escaped for roff (a leading '.' or '\'', backslashes, hyphens in flags).
 */
void cmddoc_man(struct strbuf *out, const char *prog, const char *version,
		const char *summary, const char *about, const struct cmd_doc *const *cmds);

/*
 * A bash completion script for prog (complete -F; no bash-completion
 * package needed): command and sub-command names; each command's options
 * (long, short and alias, its handed-on options too); after an option, its
 * values (choices, a directory, a file, or nothing for a number); the
 * "--name=value" form; otherwise files.
 */
void cmddoc_bash(struct strbuf *out, const char *prog, const struct cmd_doc *const *cmds);

#endif
