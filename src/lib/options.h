/*
 * Declarative options (after fio's and curl's tables): one struct opt_def
 * per knob drives the command-line flag, the environment variable read as
 * its default, validation, and the help text. A value outside its domain
 * is refused with a sentence naming the option, where the value came from,
 * and what would be accepted; it is never passed through.
 */
#ifndef ZLB_OPTIONS_H
#define ZLB_OPTIONS_H

#include <stdio.h>

#include "lib/strbuf.h"
#include "lib/strvec.h"

enum opt_kind {
	OPT_STRING,   /* any text (validate() may refine) */
	OPT_INT,      /* integer in [min, max] */
	OPT_REAL,     /* decimal number in [rmin, rmax] */
	OPT_BOOL,     /* flag without value; env: 0/1/true/false/yes/no/on/off */
	OPT_CHOICE,   /* one of choices[] */
	OPT_LIST,     /* words separated by spaces or commas, each in choices[] if given */
};

enum opt_source {
	OPT_FROM_DEFAULT,
	OPT_FROM_ENV,
	OPT_FROM_FLAG,
	OPT_FROM_RECORD,  /* restored from what an earlier session recorded (opt_values_restore) */
};

/* How opt_bind stores a value in the caller's struct (at opt_def.offset). */
enum opt_store {
	OPT_NO_STORE = 0,  /* the caller reads it with opt_get */
	OPT_STORE_INT,     /* int; 0 when unset */
	OPT_STORE_BOOL,    /* int 0/1 */
	OPT_STORE_STR,     /* char *, owned; NULL when unset or empty */
	OPT_STORE_LIST,    /* struct strvec, split on spaces, commas and tabs */
};

struct opt_def {
	const char *name;            /* long flag without "--" */
	const char *alias;           /* second long flag, or NULL */
	const char *env;             /* environment variable used as default, or NULL */
	const char *def;             /* default value, or NULL (unset) */
	enum opt_kind kind;
	const char *const *choices;  /* OPT_CHOICE / OPT_LIST */
	long min, max;               /* OPT_INT */
	const char *metavar;
	const char *help;
	/* Extra check: return 0, or -1 having written the reason into why. */
	int (*validate)(const char *value, struct strbuf *why);
	double rmin, rmax;           /* OPT_REAL */
	/*
	 * The binding (fio's offsetof style): one entry says where the value
	 * lives, which variable a child process gets it as, and under which
	 * key it is recorded, so no second list of knobs has to be kept.
	 */
	enum opt_store store;
	size_t offset;               /* offsetof(struct <the caller's config>, field) */
	const char *export_env;      /* passed to a child as this variable, or NULL */
	const char *record;          /* recorded under this key (opt_record_json), or NULL */
	char short_name;             /* "-q" as well as "--quiet": the letter, or 0 */
	/*
	 * What a record that does not name this option stands for
	 * (opt_values_restore): the value every session ran with before the
	 * option was recorded, where that is not today's default (a default
	 * changed since). NULL: such a record leaves the option alone.
	 */
	const char *if_unrecorded;
};

/* What options_parse found besides options: a request for help or the version. */
enum opt_want {
	OPT_WANT_NOTHING,
	OPT_WANT_HELP,               /* -h, --help */
	OPT_WANT_VERSION,            /* -V, --version */
};

struct opt_values {
	size_t nr;
	char **value;                /* per def: NULL when unset */
	enum opt_source *source;
	const char **origin;         /* "--level", "BENCH_LEVEL", "default" */
};

/*
 * Parse argv (argv[0] is the command name) against defs (terminated by an
 * entry with name NULL), reading env for defaults. Non-option arguments go
 * to positional. "--" ends options. An option is "--name value",
 * "--name=value" or, with a short_name, "-n value" ("--name" alone for a
 * boolean). "-h"/"--help" and "-V"/"--version" set *want (enum opt_want;
 * help wins). Returns 0, or -1 with error() explaining the first problem
 * (an unknown option names the closest known one).
 */
int options_parse(const struct opt_def *defs, int argc, char **argv,
		  char *const *envp, struct opt_values *out,
		  struct strvec *positional, int *want);
void opt_values_release(struct opt_values *v);

/* Index of the def named name (BUG if absent: names are compile-time facts). */
size_t opt_index(const struct opt_def *defs, const char *name);
const char *opt_get(const struct opt_def *defs, const struct opt_values *v,
		    const char *name);
enum opt_source opt_source_of(const struct opt_def *defs, const struct opt_values *v,
			      const char *name);

/* The def that "--name", "--name=value" (by name or alias) or "-n" names in defs, or NULL. */
const struct opt_def *opt_find(const struct opt_def *defs, const char *arg);

/*
 * For commands that walk argv themselves (zlb ab, compare, ir pass options
 * on to others): is argv[*i] the option name, as "NAME VALUE" or
 * "NAME=VALUE"? 1 with *value set (and *i moved past a separate value), 0
 * when it is another argument, -1 when the value is missing.
 */
int opt_take(int argc, char **argv, int *i, const char *name, const char **value);

/* What opt_next found at argv[*i]. */
enum opt_arg {
	OPT_ARG_ERROR = -1,          /* an option of defs with its value missing or refused: error() */
	OPT_ARG_OTHER,               /* not an option of defs: a positional, "--", another table's */
	OPT_ARG_OPTION,              /* an option of defs: *d and *value set */
	OPT_ARG_HELP,                /* -h, --help */
	OPT_ARG_VERSION,             /* -V, --version */
};

/*
 * The table-driven step of a command that walks argv itself (repeatable
 * options, '--' between sides, options handed on to another command): is
 * argv[*i] one of defs? As options_parse reads it ("--name value",
 * "--name=value", "-n value"; a boolean alone reads "1"), its value checked
 * against the def (kind, range, choices, validate); *i is moved past a
 * separate value. The caller decides what an OPT_ARG_OTHER that starts
 * with '-' is.
 */
enum opt_arg opt_next(const struct opt_def *defs, int argc, char **argv, int *i,
		      const struct opt_def **d, const char **value);

/* Is value acceptable for d (kind, range, choices, validate)? 0, or -1 with the reason in why. */
int opt_check(const struct opt_def *d, const char *value, struct strbuf *why);

/*
 * The option of defs closest to arg ("--colour" -> "color"): a name that
 * starts with what was typed, or one at most two edits away. NULL when none.
 */
const char *opt_suggest(const struct opt_def *defs, const char *arg);

/* "unknown option 'ARG'", with "; did you mean --NAME?" when one of defs is close. */
int opt_unknown_error(const struct opt_def *defs, const char *arg);

/*
 * Store every bound value of v (defs with a store) into obj, the struct
 * the offsets are of. Strings and lists are copies the caller frees.
 */
void opt_bind(const struct opt_def *defs, const struct opt_values *v, void *obj);

/* Free what opt_bind stored in obj (strings, lists) and zero those fields. */
void opt_unbind(const struct opt_def *defs, void *obj);

/*
 * The bound value of d in obj as text (a child's environment): an integer
 * in decimal, a boolean as 0/1, a string as it is, a list joined by
 * spaces. NULL for an unset string.
 */
char *opt_format(const struct opt_def *d, const void *obj);

/*
 * The bound value of d in obj as JSON (a recorded setting): OPT_REAL as a
 * number, OPT_INT an integer, OPT_BOOL a boolean, a list an array, other
 * text a string; null for an unset string. A new reference.
 */
struct json_t *opt_record_json(const struct opt_def *d, const void *obj);

/*
 * What a session resolved, for a later one to continue it: a JSON object
 * {name: value text} (null for an unset option) with every def not in skip
 * (a NULL-terminated list of names), or only those given on the command line
 * or in the environment when given_only. A new reference.
 */
struct json_t *opt_values_record(const struct opt_def *defs, const struct opt_values *v,
				 const char *const *skip, int given_only);

/*
 * Continue what rec (opt_values_record's object) recorded. The precedence
 * is flag > recorded > environment > default, as flag > environment was
 * when it was recorded: an option v holds at its default or from the
 * environment takes the recorded value (source OPT_FROM_RECORD, origin
 * from_what; a variable that says otherwise, and said otherwise than in
 * env_then (opt_env_record's object of that session, or NULL), gets a line
 * in notes). A flag
 * given again with another value is a conflict, one line each in conflicts:
 * "--name: <from_what> has 'X', given 'Y' (by --name)"; its value stays in
 * v: the caller refuses, or lets it override. Options in skip are left
 * alone, and so are those rec does not name, unless their def says what
 * such a record stands for (if_unrecorded: then as if rec held that).
 * Returns the number of conflicts.
 */
size_t opt_values_restore(const struct opt_def *defs, struct opt_values *v,
			  const struct json_t *rec, const char *const *skip,
			  const char *from_what, const struct json_t *env_then,
			  struct strvec *conflicts, struct strvec *notes);

/*
 * Set name's value in v as a caller resolved it (a default made concrete),
 * unless it was given (flag or environment): source OPT_FROM_RECORD, origin
 * as given (a string that outlives v).
 */
void opt_set(const struct opt_def *defs, struct opt_values *v, const char *name,
	     const char *value, const char *origin);

/* {VAR: value} of every defs' variable set (non-empty) in envp. A new reference. */
struct json_t *opt_env_record(const struct opt_def *defs, char *const *envp);

/* Parse an OPT_BOOL value ("1", "yes", ...): 1/0, or -1 if not a boolean. */
int opt_parse_bool(const char *s);

/*
 * Help text: one block per option: its flags ("-q, --quiet", "--out DIR",
 * "(also --alias)"), then, indented, its help wrapped to 78 columns, its
 * choices or range, its variable and default.
 */
void options_usage(struct strbuf *out, const struct opt_def *defs);

#endif
