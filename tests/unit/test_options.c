/*
 * options.c (the declarative option table: precedence of flag over
 * environment over default, validation by kind, the sentences that name
 * where a bad value came from) and run_config.c (the `zlb run` table and
 * the rules that turn it into a struct run_config).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/error.h"
#include "lib/options.h"
#include "run/run_config.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

/* --- error capture ------------------------------------------------------ */

static struct strbuf errors = STRBUF_INIT;
static int error_count;

static void capture_error(const char *prefix, const char *msg)
{
	strbuf_addf(&errors, "%s%s\n", prefix, msg);
	error_count++;
}

static int setup(void **state)
{
	strbuf_reset(&errors);
	error_count = 0;
	set_error_routine(capture_error);
	return 0;
}

static int teardown(void **state)
{
	set_error_routine(NULL);
	strbuf_release(&errors);
	return 0;
}

#define assert_error_contains(text) do {                                         \
	if (!strstr(errors.buf, (text)))                                           \
		fail_msg("error output lacks \"%s\"; got: \"%s\"", (text), errors.buf); \
} while (0)

/* --- a small table of our own ------------------------------------------ */

static const char *const levels[] = { "core", "comprehensive", NULL };
static const char *const colours[] = { "red", "green", "blue", NULL };

static int no_x(const char *value, struct strbuf *why)
{
	if (strchr(value, 'x')) {
		strbuf_addf(why, "'%s' contains an x", value);
		return -1;
	}
	return 0;
}

static const struct opt_def defs[] = {
	{ "level", NULL, "BENCH_LEVEL", "core", OPT_CHOICE, levels, 0, 0, "LEVEL",
	  "the level", NULL },
	{ "count", NULL, "N_COUNT", "3", OPT_INT, NULL, 1, 10, "N", "a count", NULL },
	{ "verbose", NULL, "VERBOSE", "0", OPT_BOOL, NULL, 0, 0, NULL, "talk", NULL },
	{ "colours", "colors", "COLOURS", NULL, OPT_LIST, colours, 0, 0, "\"C C\"",
	  "some colours", NULL },
	{ "words", NULL, "WORDS", NULL, OPT_LIST, NULL, 0, 0, "\"W W\"", "any words", NULL },
	{ "name", "title", "NAME", NULL, OPT_STRING, NULL, 0, 0, "TEXT", "a name", no_x },
	{ "plain", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, NULL, "no env, no default",
	  NULL },
	{ NULL },
};

struct parsed {
	struct opt_values v;
	struct strvec pos;
	int help;
	int rc;
};

/* argv is NULL-terminated and starts after the command name. */
static void parse(struct parsed *p, const char *const *args, const char *const *env)
{
	struct strvec argv = STRVEC_INIT;

	strvec_push(&argv, "cmd");
	for (; args && *args; args++)
		strvec_push(&argv, *args);
	memset(p, 0, sizeof(*p));
	strvec_init(&p->pos);
	p->help = -1;
	p->rc = options_parse(defs, (int)argv.nr, argv.v, (char *const *)env, &p->v,
			      &p->pos, &p->help);
	strvec_clear(&argv);
}

static void release(struct parsed *p)
{
	opt_values_release(&p->v);
	strvec_clear(&p->pos);
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NOARGS ((const char *const[]){ NULL })

static void defaults_when_nothing_given(void **state)
{
	struct parsed p;

	parse(&p, NOARGS, NOARGS);
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.help, 0);
	assert_int_equal(p.pos.nr, 0);
	assert_int_equal(error_count, 0);
	assert_string_equal(opt_get(defs, &p.v, "level"), "core");
	assert_int_equal(opt_source_of(defs, &p.v, "level"), OPT_FROM_DEFAULT);
	assert_string_equal(p.v.origin[opt_index(defs, "level")], "default");
	assert_string_equal(opt_get(defs, &p.v, "count"), "3");
	assert_null(opt_get(defs, &p.v, "colours"));
	assert_null(opt_get(defs, &p.v, "plain"));
	assert_int_equal(opt_index(defs, "plain"), 6);
	release(&p);
}

static void env_beats_default_and_flag_beats_env(void **state)
{
	struct parsed p;

	parse(&p, NOARGS, ARGS("BENCH_LEVEL=comprehensive", "N_COUNT=7"));
	assert_int_equal(p.rc, 0);
	assert_string_equal(opt_get(defs, &p.v, "level"), "comprehensive");
	assert_int_equal(opt_source_of(defs, &p.v, "level"), OPT_FROM_ENV);
	assert_string_equal(p.v.origin[opt_index(defs, "level")], "BENCH_LEVEL");
	assert_string_equal(opt_get(defs, &p.v, "count"), "7");
	release(&p);

	parse(&p, ARGS("--level", "core", "--count", "9"),
	      ARGS("BENCH_LEVEL=comprehensive", "N_COUNT=7"));
	assert_int_equal(p.rc, 0);
	assert_string_equal(opt_get(defs, &p.v, "level"), "core");
	assert_int_equal(opt_source_of(defs, &p.v, "level"), OPT_FROM_FLAG);
	assert_string_equal(opt_get(defs, &p.v, "count"), "9");
	assert_int_equal(opt_source_of(defs, &p.v, "count"), OPT_FROM_FLAG);
	release(&p);

	/* The last of two flags wins. */
	parse(&p, ARGS("--count", "2", "--count", "5"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_string_equal(opt_get(defs, &p.v, "count"), "5");
	release(&p);
}

static void env_lookup_matches_whole_name(void **state)
{
	struct parsed p;

	/* Neither a longer name nor a prefix of the name is the variable. */
	parse(&p, NOARGS, ARGS("BENCH_LEVEL_X=comprehensive", "BENCH_LEVE=comprehensive",
			       "BENCH_LEVELcomprehensive"));
	assert_int_equal(p.rc, 0);
	assert_string_equal(opt_get(defs, &p.v, "level"), "core");
	assert_int_equal(opt_source_of(defs, &p.v, "level"), OPT_FROM_DEFAULT);
	release(&p);

	/* A NULL environment is no environment. */
	parse(&p, NOARGS, NULL);
	assert_int_equal(p.rc, 0);
	assert_string_equal(opt_get(defs, &p.v, "level"), "core");
	release(&p);
}

static void empty_env_is_unset(void **state)
{
	struct parsed p;

	/* Empty values would all be invalid; they are not even looked at. */
	parse(&p, NOARGS, ARGS("BENCH_LEVEL=", "N_COUNT=", "VERBOSE=", "NAME="));
	assert_int_equal(p.rc, 0);
	assert_int_equal(error_count, 0);
	assert_string_equal(opt_get(defs, &p.v, "level"), "core");
	assert_int_equal(opt_source_of(defs, &p.v, "level"), OPT_FROM_DEFAULT);
	assert_string_equal(opt_get(defs, &p.v, "count"), "3");
	assert_string_equal(opt_get(defs, &p.v, "verbose"), "0");
	assert_null(opt_get(defs, &p.v, "name"));
	release(&p);
}

static void int_range_and_form(void **state)
{
	struct parsed p;

	parse(&p, ARGS("--count", "1"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_string_equal(opt_get(defs, &p.v, "count"), "1");
	release(&p);

	parse(&p, ARGS("--count", "10"), NOARGS);
	assert_int_equal(p.rc, 0);
	release(&p);

	parse(&p, ARGS("--count", "0"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("--count 0: 0 is outside 1..10");
	release(&p);

	setup(state);
	parse(&p, ARGS("--count", "11"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("11 is outside 1..10");
	release(&p);

	setup(state);
	parse(&p, ARGS("--count", "5x"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("'5x' is not a whole number");
	release(&p);

	setup(state);
	parse(&p, ARGS("--count", "99999999999999999999999"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("is not a whole number");
	release(&p);

	setup(state);
	parse(&p, NOARGS, ARGS("N_COUNT=42"));
	assert_int_equal(p.rc, -1);
	assert_error_contains("N_COUNT=42 (the default of --count): 42 is outside 1..10");
	release(&p);
}

static void choice_is_checked(void **state)
{
	struct parsed p;

	parse(&p, ARGS("--level", "fast"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_int_equal(error_count, 1);
	assert_error_contains("--level fast: 'fast' is not one of core, comprehensive");
	release(&p);

	/* Choices are exact: no case folding. */
	setup(state);
	parse(&p, ARGS("--level", "Core"), NOARGS);
	assert_int_equal(p.rc, -1);
	release(&p);
}

static void env_error_names_its_source(void **state)
{
	struct parsed p;

	parse(&p, NOARGS, ARGS("BENCH_LEVEL=fast"));
	assert_int_equal(p.rc, -1);
	assert_error_contains("BENCH_LEVEL=fast (the default of --level)");
	assert_error_contains("'fast' is not one of core, comprehensive");
	release(&p);

	/*
	 * A bad variable is refused even when a flag would override it: the
	 * environment is read first, and nothing invalid is passed through.
	 */
	setup(state);
	parse(&p, ARGS("--level", "core"), ARGS("BENCH_LEVEL=fast"));
	assert_int_equal(p.rc, -1);
	assert_error_contains("BENCH_LEVEL=fast");
	release(&p);
}

static void list_with_choices(void **state)
{
	struct parsed p;

	parse(&p, ARGS("--colours", "red green,blue"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_string_equal(opt_get(defs, &p.v, "colours"), "red green,blue");
	release(&p);

	/* The alias sets the same option. */
	parse(&p, ARGS("--colors=green"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_string_equal(opt_get(defs, &p.v, "colours"), "green");
	release(&p);

	parse(&p, ARGS("--colours", "red,mauve green"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("'mauve' is not one of red, green, blue");
	release(&p);

	setup(state);
	parse(&p, NOARGS, ARGS("COLOURS=red teal"));
	assert_int_equal(p.rc, -1);
	assert_error_contains("COLOURS=red teal (the default of --colours): "
			      "'teal' is not one of red, green, blue");
	release(&p);

	/* Without choices any word goes. */
	setup(state);
	parse(&p, ARGS("--words", "anything at,all"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_string_equal(opt_get(defs, &p.v, "words"), "anything at,all");
	release(&p);
}

static void bool_flag_and_env(void **state)
{
	struct parsed p;

	/* A bare boolean flag takes no value: the next word stays positional. */
	parse(&p, ARGS("--verbose", "later"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_int_equal(opt_parse_bool(opt_get(defs, &p.v, "verbose")), 1);
	assert_int_equal(opt_source_of(defs, &p.v, "verbose"), OPT_FROM_FLAG);
	assert_int_equal(p.pos.nr, 1);
	assert_string_equal(p.pos.v[0], "later");
	release(&p);

	parse(&p, ARGS("--verbose=off"), ARGS("VERBOSE=1"));
	assert_int_equal(p.rc, 0);
	assert_int_equal(opt_parse_bool(opt_get(defs, &p.v, "verbose")), 0);
	release(&p);

	parse(&p, NOARGS, ARGS("VERBOSE=yes"));
	assert_int_equal(p.rc, 0);
	assert_int_equal(opt_parse_bool(opt_get(defs, &p.v, "verbose")), 1);
	assert_int_equal(opt_source_of(defs, &p.v, "verbose"), OPT_FROM_ENV);
	release(&p);

	parse(&p, NOARGS, ARGS("VERBOSE=maybe"));
	assert_int_equal(p.rc, -1);
	assert_error_contains("VERBOSE=maybe (the default of --verbose): "
			      "'maybe' is not a yes/no value");
	release(&p);

	setup(state);
	parse(&p, ARGS("--verbose=2"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("--verbose 2: '2' is not a yes/no value");
	release(&p);
}

static void parse_bool_values(void **state)
{
	const char *yes[] = { "1", "true", "TRUE", "Yes", "on", "ON" };
	const char *no[] = { "0", "false", "False", "no", "NO", "off" };
	const char *neither[] = { "", "2", "y", "n", "truee", "of", " 1", "1 " };

	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
		assert_int_equal(opt_parse_bool(yes[i]), 1);
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		assert_int_equal(opt_parse_bool(no[i]), 0);
	for (size_t i = 0; i < sizeof(neither) / sizeof(*neither); i++)
		assert_int_equal(opt_parse_bool(neither[i]), -1);
}

static void equals_form_and_alias(void **state)
{
	struct parsed p;

	parse(&p, ARGS("--level=comprehensive", "--title=a=b"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_string_equal(opt_get(defs, &p.v, "level"), "comprehensive");
	/* Only the first '=' separates. */
	assert_string_equal(opt_get(defs, &p.v, "name"), "a=b");
	release(&p);

	/* "--name=" gives an empty value, not the next argument. */
	parse(&p, ARGS("--name=", "pos"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_string_equal(opt_get(defs, &p.v, "name"), "");
	assert_int_equal(p.pos.nr, 1);
	release(&p);

	/* A value that looks like an option is still the value. */
	parse(&p, ARGS("--plain", "--level"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_string_equal(opt_get(defs, &p.v, "plain"), "--level");
	assert_string_equal(opt_get(defs, &p.v, "level"), "core");
	release(&p);
}

static void validate_hook_runs(void **state)
{
	struct parsed p;

	parse(&p, ARGS("--name", "box"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("--name box: 'box' contains an x");
	release(&p);

	setup(state);
	parse(&p, NOARGS, ARGS("NAME=xx"));
	assert_int_equal(p.rc, -1);
	assert_error_contains("NAME=xx (the default of --name): 'xx' contains an x");
	release(&p);
}

static void missing_value(void **state)
{
	struct parsed p;

	parse(&p, ARGS("--level"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("option --level needs a value (LEVEL)");
	release(&p);

	setup(state);
	parse(&p, ARGS("--plain"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("option --plain needs a value (value)");
	release(&p);
}

static void unknown_options(void **state)
{
	struct parsed p;

	parse(&p, ARGS("--bogus"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("unknown option '--bogus'");
	release(&p);

	/* The value is not part of the name in the message. */
	setup(state);
	parse(&p, ARGS("--bogus=1"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("unknown option '--bogus'\n");
	release(&p);

	/* A prefix of a name is not that name, but it is suggested. */
	setup(state);
	parse(&p, ARGS("--lev", "core"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("unknown option '--lev'; did you mean --level?");
	release(&p);

	/* So is a name two typos away. */
	setup(state);
	parse(&p, ARGS("--coutn=2"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("unknown option '--coutn'; did you mean --count?");
	release(&p);

	setup(state);
	parse(&p, ARGS("-x"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("unknown option '-x'");
	release(&p);
}

static void positionals_and_double_dash(void **state)
{
	struct parsed p;

	parse(&p, ARGS("a", "-", "--count", "4", "--", "--level", "fast", "-h"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.help, 0);
	assert_string_equal(opt_get(defs, &p.v, "count"), "4");
	assert_string_equal(opt_get(defs, &p.v, "level"), "core");
	assert_int_equal(p.pos.nr, 5);
	assert_string_equal(p.pos.v[0], "a");
	assert_string_equal(p.pos.v[1], "-");
	assert_string_equal(p.pos.v[2], "--level");
	assert_string_equal(p.pos.v[3], "fast");
	assert_string_equal(p.pos.v[4], "-h");
	release(&p);
}

static void help_flags(void **state)
{
	struct parsed p;

	parse(&p, ARGS("-h"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.help, 1);
	release(&p);

	parse(&p, ARGS("x", "--help", "--count", "2"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.help, 1);
	assert_string_equal(opt_get(defs, &p.v, "count"), "2");
	release(&p);

	parse(&p, ARGS("--count", "2"), NOARGS);
	assert_int_equal(p.help, 0);
	release(&p);
}

static void version_flags(void **state)
{
	struct parsed p;

	parse(&p, ARGS("-V"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.help, OPT_WANT_VERSION);
	release(&p);

	parse(&p, ARGS("--version", "--count", "2"), NOARGS);
	assert_int_equal(p.help, OPT_WANT_VERSION);
	release(&p);

	/* Help wins, whichever comes first. */
	parse(&p, ARGS("--version", "-h"), NOARGS);
	assert_int_equal(p.help, OPT_WANT_HELP);
	release(&p);
	parse(&p, ARGS("-h", "-V"), NOARGS);
	assert_int_equal(p.help, OPT_WANT_HELP);
	release(&p);
}

static const struct opt_def short_defs[] = {
	{ "quiet", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL, "say less", .short_name = 'q' },
	{ "out", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "FILE", "where", .short_name = 'o' },
	{ "level", NULL, NULL, "core", OPT_CHOICE, levels, 0, 0, "LEVEL", "the level" },
	{ NULL },
};

static void short_names(void **state)
{
	struct opt_values v = { 0 };
	struct strvec pos = STRVEC_INIT;
	char *argv[] = { "cmd", "-q", "-o", "x.html", "a", NULL };
	char *bad[] = { "cmd", "-qo", NULL };
	char *const env[] = { NULL };
	struct strbuf sb = STRBUF_INIT;
	int want;

	assert_int_equal(options_parse(short_defs, 5, argv, env, &v, &pos, &want), 0);
	assert_string_equal(opt_get(short_defs, &v, "quiet"), "1");
	assert_string_equal(opt_get(short_defs, &v, "out"), "x.html");
	assert_int_equal(pos.nr, 1);
	opt_values_release(&v);
	strvec_clear(&pos);

	/* Letters are not bundled: -qo is not -q -o. */
	assert_int_equal(options_parse(short_defs, 2, bad, env, &v, &pos, &want), -1);
	assert_error_contains("unknown option '-qo'");
	opt_values_release(&v);
	strvec_clear(&pos);

	assert_ptr_equal(opt_find(short_defs, "-q"), &short_defs[0]);
	assert_null(opt_find(short_defs, "-x"));

	/* The help shows both spellings. */
	options_usage(&sb, short_defs);
	assert_non_null(strstr(sb.buf, "  -q, --quiet\n"));
	assert_non_null(strstr(sb.buf, "  -o, --out FILE\n"));
	strbuf_release(&sb);
}

/* opt_next: the table-driven step of a command that walks argv itself. */
static void next_step(void **state)
{
	char *argv[] = { "cmd", "--level=comprehensive", "pos", "-o", "f", "--other", "--level",
			 "fast", "--", "-h", "-V", "--out", NULL };
	const struct opt_def *d = NULL;
	const char *v = NULL;
	int i = 1;

	assert_int_equal(opt_next(short_defs, 12, argv, &i, &d, &v), OPT_ARG_OPTION);
	assert_ptr_equal(d, &short_defs[2]);
	assert_string_equal(v, "comprehensive");
	assert_int_equal(i, 1);
	i = 2;
	assert_int_equal(opt_next(short_defs, 12, argv, &i, &d, &v), OPT_ARG_OTHER);
	i = 3;
	assert_int_equal(opt_next(short_defs, 12, argv, &i, &d, &v), OPT_ARG_OPTION);
	assert_string_equal(v, "f");
	assert_int_equal(i, 4);
	i = 5;
	assert_int_equal(opt_next(short_defs, 12, argv, &i, &d, &v), OPT_ARG_OTHER);
	i = 6;
	assert_int_equal(opt_next(short_defs, 12, argv, &i, &d, &v), OPT_ARG_ERROR);
	assert_error_contains("--level fast: 'fast' is not one of core, comprehensive");
	i = 8;
	assert_int_equal(opt_next(short_defs, 12, argv, &i, &d, &v), OPT_ARG_OTHER);
	i = 9;
	assert_int_equal(opt_next(short_defs, 12, argv, &i, &d, &v), OPT_ARG_HELP);
	i = 10;
	assert_int_equal(opt_next(short_defs, 12, argv, &i, &d, &v), OPT_ARG_VERSION);
	i = 11;
	assert_int_equal(opt_next(short_defs, 12, argv, &i, &d, &v), OPT_ARG_ERROR);
	assert_error_contains("option --out needs a value (FILE)");

	assert_string_equal(opt_suggest(short_defs, "--quite"), "quiet");
	assert_string_equal(opt_suggest(short_defs, "--lvl=x"), "level");
	assert_null(opt_suggest(short_defs, "--frobnicate"));
}

static void usage_text(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *text;

	options_usage(&sb, defs);
	text = sb.buf;
	assert_non_null(strstr(text, "  --level LEVEL\n      the level\n"));
	assert_non_null(strstr(text, "one of: core, comprehensive"));
	assert_non_null(strstr(text, "env: BENCH_LEVEL; default: core"));
	assert_non_null(strstr(text, "range: 1..10"));
	assert_non_null(strstr(text, "  --colours \"C C\"  (also --colors)"));
	/* A boolean takes no metavar. */
	assert_non_null(strstr(text, "  --verbose\n"));
	assert_non_null(strstr(text, "env: NAME\n"));
	strbuf_release(&sb);
}

/* --- run_config --------------------------------------------------------- */

struct run_parsed {
	struct run_config cfg;
	struct opt_values raw;
	int rc;
};

static void run_parse(struct run_parsed *p, const char *const *args,
		      const char *const *env)
{
	struct strvec argv = STRVEC_INIT;

	strvec_push(&argv, "run");
	for (; args && *args; args++)
		strvec_push(&argv, *args);
	memset(p, 0, sizeof(*p));
	p->rc = run_config_parse(&p->cfg, (int)argv.nr, argv.v, (char *const *)env, &p->raw);
	strvec_clear(&argv);
}

static void run_release(struct run_parsed *p)
{
	opt_values_release(&p->raw);
	run_config_release(&p->cfg);
}

static void run_defaults(void **state)
{
	struct run_parsed p;

	run_parse(&p, NOARGS, NOARGS);
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.cfg.op, "softmax");
	assert_int_equal(p.cfg.op_given, 0);
	assert_null(p.cfg.op_file);
	assert_null(p.cfg.test_node);
	assert_null(p.cfg.shape_file);
	assert_null(p.cfg.shape_mode);
	assert_int_equal(p.cfg.dtypes.nr, 0);
	assert_string_equal(p.cfg.bench_level, "core");
	assert_int_equal(p.cfg.use_flagtune, 0);
	assert_string_equal(p.cfg.color, "auto");
	assert_string_equal(p.cfg.backend, "cuda");
	assert_int_equal(p.cfg.direct_repeat, 1);
	assert_int_equal(p.cfg.extra_plugins.nr, 0);
	assert_int_equal(p.cfg.isolate_tuner_cache, 0);
	assert_int_equal(p.cfg.device, 0);
	assert_string_equal(p.cfg.timer, "auto");
	assert_int_equal(p.cfg.warmup_ms, 1000);
	assert_int_equal(p.cfg.rep_ms, 100);
	assert_int_equal(p.cfg.seed, 0);
	assert_string_equal(p.cfg.python, "python3");
	assert_string_equal(p.cfg.runs_dir, "runs");
	run_release(&p);
}

static void run_values_typed(void **state)
{
	struct run_parsed p;

	run_parse(&p, ARGS("--dtypes", "float16,bfloat16", "--use-flagtune",
			   "--extra-plugins", "my_plugin pkg.sub_mod", "--device", "3",
			   "--seed", "2147483647", "--backend", "NV", "--shape-file", "s.yaml",
			   "--iter", "250"),
		  ARGS("ZL_ISOLATE_TUNER_CACHE=yes", "ZL_DIRECT_REPEAT=5", "ZL_TIMER=direct",
		       "ZL_WARMUP_MS=0"));
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.cfg.dtypes.nr, 2);
	assert_string_equal(p.cfg.dtypes.v[0], "float16");
	assert_string_equal(p.cfg.dtypes.v[1], "bfloat16");
	assert_int_equal(p.cfg.use_flagtune, 1);
	assert_int_equal(p.cfg.extra_plugins.nr, 2);
	assert_string_equal(p.cfg.extra_plugins.v[1], "pkg.sub_mod");
	assert_int_equal(p.cfg.device, 3);
	assert_int_equal(p.cfg.seed, 2147483647);
	assert_string_equal(p.cfg.backend, "NV");
	assert_string_equal(p.cfg.shape_file, "s.yaml");
	assert_int_equal(p.cfg.rep_ms, 250);
	assert_int_equal(p.cfg.isolate_tuner_cache, 1);
	assert_int_equal(p.cfg.direct_repeat, 5);
	assert_string_equal(p.cfg.timer, "direct");
	assert_int_equal(p.cfg.warmup_ms, 0);
	run_release(&p);

	run_parse(&p, NOARGS, ARGS("USE_FLAGTUNE=off"));
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.cfg.use_flagtune, 0);
	run_release(&p);
}

static void run_help(void **state)
{
	struct run_parsed p;

	run_parse(&p, ARGS("--help"), NOARGS);
	assert_int_equal(p.rc, 1);
	run_release(&p);
}

static void run_positional_op(void **state)
{
	struct run_parsed p;

	run_parse(&p, ARGS("layer_norm"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.cfg.op, "layer_norm");
	assert_int_equal(p.cfg.op_given, 1);
	run_release(&p);

	/* The argument beats OP from the environment. */
	run_parse(&p, ARGS("mm"), ARGS("OP=layer_norm"));
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.cfg.op, "mm");
	run_release(&p);

	/* The same name twice is no contradiction. */
	run_parse(&p, ARGS("mm", "--op", "mm"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.cfg.op, "mm");
	run_release(&p);

	run_parse(&p, ARGS("mm", "--op", "softmax"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("operator given twice: 'mm' and --op softmax");
	run_release(&p);

	setup(state);
	run_parse(&p, ARGS("mm", "softmax"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("one operator per run (got 'mm' and 'softmax')");
	run_release(&p);
}

static void run_op_from_env(void **state)
{
	struct run_parsed p;

	run_parse(&p, NOARGS, ARGS("OP=sum_dim_out"));
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.cfg.op, "sum_dim_out");
	assert_int_equal(p.cfg.op_given, 1);
	run_release(&p);

	/* --op beats OP. */
	run_parse(&p, ARGS("--op", "mm"), ARGS("OP=sum_dim_out"));
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.cfg.op, "mm");
	assert_int_equal(p.cfg.op_given, 1);
	run_release(&p);

	/* An empty OP is unset: the default applies and was not "given". */
	run_parse(&p, NOARGS, ARGS("OP="));
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.cfg.op, "softmax");
	assert_int_equal(p.cfg.op_given, 0);
	run_release(&p);
}

static void run_unsafe_op_refused(void **state)
{
	const char *bad[] = { "../x", "a/b", "soft max", "a.b", "-" };
	struct run_parsed p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char want[64];

		setup(state);
		run_parse(&p, ARGS(bad[i]), NOARGS);
		assert_int_equal(p.rc, -1);
		snprintf(want, sizeof(want), "'%s' is not an operator name", bad[i]);
		assert_error_contains(want);
		run_release(&p);

		setup(state);
		run_parse(&p, ARGS("--op", bad[i]), NOARGS);
		assert_int_equal(p.rc, -1);
		assert_error_contains(want);
		run_release(&p);
	}

	setup(state);
	run_parse(&p, NOARGS, ARGS("OP=../../etc"));
	assert_int_equal(p.rc, -1);
	assert_error_contains("OP=../../etc (the default of --op)");
	run_release(&p);

	/* An op file is a stem, never a path. */
	setup(state);
	run_parse(&p, ARGS("--op-file", "../x"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("'../x' must name benchmark/test_<OP_FILE>.py");
	run_release(&p);

	setup(state);
	run_parse(&p, ARGS("--op-file", "/etc/passwd"), NOARGS);
	assert_int_equal(p.rc, -1);
	run_release(&p);

	setup(state);
	run_parse(&p, ARGS("--op-file", "reduction"), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.cfg.op_file, "reduction");
	run_release(&p);
}

static void run_bad_env_values(void **state)
{
	struct run_parsed p;

	/*
	 * Which dtype names FlagGems accepts is its conftest's to say
	 * (preflight); the option table refuses only what is no dtype name.
	 */
	run_parse(&p, NOARGS, ARGS("DTYPES=torch.float16"));
	assert_int_equal(p.rc, -1);
	assert_error_contains("DTYPES=torch.float16 (the default of --dtypes): "
			      "'torch.float16' is not a dtype name");
	run_release(&p);

	setup(state);
	run_parse(&p, NOARGS, ARGS("DTYPES=float16 Float8"));
	assert_int_equal(p.rc, -1);
	assert_error_contains("'Float8' is not a dtype name");
	run_release(&p);

	setup(state);
	run_parse(&p, NOARGS, ARGS("DTYPES=float16 float8_e4m3fn"));
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.cfg.dtypes.nr, 2);
	run_release(&p);

	setup(state);
	run_parse(&p, NOARGS, ARGS("ZL_DIRECT_REPEAT=0"));
	assert_int_equal(p.rc, -1);
	assert_error_contains("ZL_DIRECT_REPEAT=0 (the default of --direct-repeat): "
			      "0 is outside 1..1000");
	run_release(&p);

	setup(state);
	run_parse(&p, NOARGS, ARGS("BENCH_LEVEL=fast"));
	assert_int_equal(p.rc, -1);
	assert_error_contains("BENCH_LEVEL=fast (the default of --level)");
	run_release(&p);

	setup(state);
	run_parse(&p, NOARGS, ARGS("ZL_BACKEND=tpu"));
	assert_int_equal(p.rc, -1);
	assert_error_contains("ZL_BACKEND=tpu (the default of --backend): unknown backend "
			      "'tpu'; known: cuda (nvidia, nv)");
	run_release(&p);

	setup(state);
	run_parse(&p, ARGS("--timer", "fast"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("--timer fast: 'fast' is not one of auto, graph, direct");
	run_release(&p);

	setup(state);
	run_parse(&p, ARGS("--iter", "0"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("0 is outside 1..600000");
	run_release(&p);
}

static void run_extra_plugins_checked(void **state)
{
	const char *bad[] = { "a..b", "1abc", "-p", "pkg.", "x/y" };
	struct run_parsed p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		setup(state);
		run_parse(&p, ARGS("--extra-plugins", bad[i]), NOARGS);
		assert_int_equal(p.rc, -1);
		assert_error_contains("is not a Python module name");
		run_release(&p);
	}
}

static void run_test_node_rules(void **state)
{
	struct run_parsed p;
	const char *node = "FlagGems/benchmark/test_mm.py::test_mm";

	/* A node alone: no default operator. */
	run_parse(&p, ARGS("--test-node", node), NOARGS);
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.cfg.test_node, node);
	assert_null(p.cfg.op);
	assert_int_equal(p.cfg.op_given, 0);
	run_release(&p);

	run_parse(&p, NOARGS, ARGS("TEST_NODE=x.py::test_y"));
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.cfg.test_node, "x.py::test_y");
	assert_null(p.cfg.op);
	run_release(&p);

	/* --test-node on the line beats OP in the shell. */
	run_parse(&p, ARGS("--test-node", node), ARGS("OP=softmax"));
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.cfg.test_node, node);
	assert_null(p.cfg.op);
	assert_int_equal(p.cfg.op_given, 0);
	run_release(&p);

	/* An operator on the line beats TEST_NODE in the shell. */
	run_parse(&p, ARGS("mm"), ARGS("TEST_NODE=x.py::test_y"));
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.cfg.op, "mm");
	assert_null(p.cfg.test_node);
	run_release(&p);

	run_parse(&p, ARGS("--op", "mm"), ARGS("TEST_NODE=x.py::test_y"));
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.cfg.op, "mm");
	assert_null(p.cfg.test_node);
	run_release(&p);

	/* Two of the same kind contradict each other. */
	run_parse(&p, ARGS("mm", "--test-node", node), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("give either an operator (argument or --op) or a test "
			      "node (--test-node), not both");
	run_release(&p);

	setup(state);
	run_parse(&p, ARGS("--op", "mm", "--test-node", node), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("not both");
	run_release(&p);

	/*
	 * Both in the environment: the original tool's habit (OP left exported,
	 * TEST_NODE set for one run). The node wins, with a note for the header.
	 */
	setup(state);
	run_parse(&p, NOARGS, ARGS("OP=mm", "TEST_NODE=x.py::test_y"));
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.cfg.test_node, "x.py::test_y");
	assert_null(p.cfg.op);
	assert_int_equal(p.cfg.op_given, 0);
	assert_int_equal(p.cfg.notes.nr, 1);
	assert_string_equal(p.cfg.notes.v[0], "note: OP=mm and TEST_NODE are both set; the "
			    "test node wins (x.py::test_y)");
	run_release(&p);

	/* One of each kind says nothing. */
	run_parse(&p, ARGS("--test-node", node), ARGS("OP=softmax"));
	assert_int_equal(p.cfg.notes.nr, 0);
	run_release(&p);
}

static void run_test_node_and_op_file(void **state)
{
	struct run_parsed p;
	const char *node = "benchmark/test_mm.py::test_mm";

	run_parse(&p, ARGS("--test-node", node, "--op-file", "mm"), NOARGS);
	assert_int_equal(p.rc, -1);
	assert_error_contains("--op-file (OP_FILE) and --test-node (TEST_NODE) both name");
	run_release(&p);

	/* OP_FILE left in the shell is dropped for an explicit node. */
	setup(state);
	run_parse(&p, ARGS("--test-node", node), ARGS("OP_FILE=reduction"));
	assert_int_equal(p.rc, 0);
	assert_null(p.cfg.op_file);
	assert_string_equal(p.cfg.test_node, node);
	run_release(&p);

	/* Without a node OP_FILE stays. */
	run_parse(&p, ARGS("softmax"), ARGS("OP_FILE=reduction"));
	assert_int_equal(p.rc, 0);
	assert_string_equal(p.cfg.op_file, "reduction");
	run_release(&p);
}

/* opt_find: by name or alias, with or without "=value"; nothing else matches. */
static void find_by_name_or_alias(void **state)
{
	assert_string_equal(opt_find(defs, "--level")->name, "level");
	assert_string_equal(opt_find(defs, "--level=core")->name, "level");
	assert_string_equal(opt_find(defs, "--colors=red")->name, "colours");
	assert_string_equal(opt_find(defs, "--title")->name, "name");
	assert_null(opt_find(defs, "--lev"));
	assert_null(opt_find(defs, "--levels"));
	assert_null(opt_find(defs, "-level"));
	assert_null(opt_find(defs, "level"));
	assert_null(opt_find(defs, "--"));
}

/* opt_take: "--name VALUE", "--name=VALUE", a missing value, and near misses. */
static void take_value_forms(void **state)
{
	char *argv[] = { "zlb", "--rounds", "5", "--rounds=7", "--roundsx", "--op=", "--fdr" };
	int argc = 7, i;
	const char *v = NULL;

	i = 1;
	assert_int_equal(opt_take(argc, argv, &i, "--rounds", &v), 1);
	assert_string_equal(v, "5");
	assert_int_equal(i, 2);                      /* moved past the separate value */
	i = 3;
	assert_int_equal(opt_take(argc, argv, &i, "--rounds", &v), 1);
	assert_string_equal(v, "7");
	assert_int_equal(i, 3);
	i = 4;
	assert_int_equal(opt_take(argc, argv, &i, "--rounds", &v), 0);   /* a longer name */
	assert_int_equal(opt_take(argc, argv, &i, "--round", &v), 0);
	i = 5;
	assert_int_equal(opt_take(argc, argv, &i, "--op", &v), 1);       /* empty is a value */
	assert_string_equal(v, "");
	i = 6;
	assert_int_equal(opt_take(argc, argv, &i, "--fdr", &v), -1);     /* nothing after it */
	assert_int_equal(i, 6);
}

/* --- continuing a record (opt_values_restore) ---------------------------- */

static const char *const modes[] = { "warm", "cold", NULL };

/* "mode" came later than the records of old sessions, and its default changed since. */
static const struct opt_def later_defs[] = {
	{ "count", NULL, "N_COUNT", "3", OPT_INT, NULL, 1, 10, "N", "a count", NULL },
	{ "mode", NULL, "MODE", "warm", OPT_CHOICE, modes, 0, 0, "MODE", "the mode", NULL,
	  .if_unrecorded = "cold" },
	{ NULL },
};

static size_t restore_later(struct opt_values *v, const char *const *args,
			    const char *const *env, const char *rec_text,
			    struct strvec *conflicts, struct strvec *notes)
{
	struct strvec argv = STRVEC_INIT, pos = STRVEC_INIT;
	json_t *rec = json_loads(rec_text, 0, NULL);
	int help;
	size_t n;

	strvec_push(&argv, "cmd");
	for (; args && *args; args++)
		strvec_push(&argv, *args);
	assert_int_equal(options_parse(later_defs, (int)argv.nr, argv.v, (char *const *)env, v,
				       &pos, &help), 0);
	assert_non_null(rec);
	n = opt_values_restore(later_defs, v, rec, NULL, "batch.json", NULL, conflicts, notes);
	json_decref(rec);
	strvec_clear(&argv);
	strvec_clear(&pos);
	return n;
}

static void a_record_without_a_later_option_stands_for_its_old_value(void **state)
{
	struct strvec conflicts = STRVEC_INIT, notes = STRVEC_INIT;
	struct opt_values v;

	/* Not named: the value its sessions ran with, not today's default. */
	assert_int_equal(restore_later(&v, NOARGS, NOARGS, "{\"count\": \"5\"}", &conflicts,
				       &notes), 0);
	assert_string_equal(opt_get(later_defs, &v, "mode"), "cold");
	assert_int_equal(opt_source_of(later_defs, &v, "mode"), OPT_FROM_RECORD);
	assert_string_equal(opt_get(later_defs, &v, "count"), "5");
	opt_values_release(&v);
	/* Named: what it says. An option without if_unrecorded is left alone. */
	assert_int_equal(restore_later(&v, NOARGS, NOARGS, "{\"mode\": \"warm\"}", &conflicts,
				       &notes), 0);
	assert_string_equal(opt_get(later_defs, &v, "mode"), "warm");
	assert_string_equal(opt_get(later_defs, &v, "count"), "3");
	assert_int_equal(opt_source_of(later_defs, &v, "count"), OPT_FROM_DEFAULT);
	opt_values_release(&v);
	/* A flag that says otherwise is a conflict that says why the record has it. */
	assert_int_equal(restore_later(&v, ARGS("--mode", "warm"), NOARGS, "{}", &conflicts,
				       &notes), 1);
	assert_string_equal(conflicts.v[0], "--mode: batch.json has 'cold' (written before the "
			    "option was recorded: its sessions ran so), given 'warm' (by --mode)");
	assert_string_equal(opt_get(later_defs, &v, "mode"), "warm");
	opt_values_release(&v);
	/* A variable that says otherwise is named and not used. */
	assert_int_equal(restore_later(&v, NOARGS, ARGS("MODE=warm"), "{}", &conflicts, &notes),
			 0);
	assert_int_equal(notes.nr, 1);
	assert_non_null(strstr(notes.v[0], "MODE=warm is not used: batch.json has --mode cold "
			       "(written before the option was recorded"));
	assert_string_equal(opt_get(later_defs, &v, "mode"), "cold");
	opt_values_release(&v);
	strvec_clear(&conflicts);
	strvec_clear(&notes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(defaults_when_nothing_given, setup, teardown),
		cmocka_unit_test_setup_teardown(env_beats_default_and_flag_beats_env, setup, teardown),
		cmocka_unit_test_setup_teardown(env_lookup_matches_whole_name, setup, teardown),
		cmocka_unit_test_setup_teardown(empty_env_is_unset, setup, teardown),
		cmocka_unit_test_setup_teardown(int_range_and_form, setup, teardown),
		cmocka_unit_test_setup_teardown(choice_is_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(env_error_names_its_source, setup, teardown),
		cmocka_unit_test_setup_teardown(list_with_choices, setup, teardown),
		cmocka_unit_test_setup_teardown(bool_flag_and_env, setup, teardown),
		cmocka_unit_test(parse_bool_values),
		cmocka_unit_test_setup_teardown(equals_form_and_alias, setup, teardown),
		cmocka_unit_test_setup_teardown(validate_hook_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_value, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_options, setup, teardown),
		cmocka_unit_test_setup_teardown(positionals_and_double_dash, setup, teardown),
		cmocka_unit_test_setup_teardown(help_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(version_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(short_names, setup, teardown),
		cmocka_unit_test_setup_teardown(next_step, setup, teardown),
		cmocka_unit_test(usage_text),
		cmocka_unit_test_setup_teardown(run_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(run_values_typed, setup, teardown),
		cmocka_unit_test_setup_teardown(run_help, setup, teardown),
		cmocka_unit_test_setup_teardown(run_positional_op, setup, teardown),
		cmocka_unit_test_setup_teardown(run_op_from_env, setup, teardown),
		cmocka_unit_test_setup_teardown(run_unsafe_op_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(run_bad_env_values, setup, teardown),
		cmocka_unit_test_setup_teardown(run_extra_plugins_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(run_test_node_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(run_test_node_and_op_file, setup, teardown),
		cmocka_unit_test(take_value_forms),
		cmocka_unit_test(find_by_name_or_alias),
		cmocka_unit_test(a_record_without_a_later_option_stands_for_its_old_value),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
