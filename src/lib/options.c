#include "lib/options.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "lib/term.h"

size_t opt_index(const struct opt_def *defs, const char *name)
{
	for (size_t i = 0; defs[i].name; i++)
		if (!strcmp(defs[i].name, name))
			return i;
	BUG("unknown option '%s'", name);
}

const char *opt_get(const struct opt_def *defs, const struct opt_values *v,
		    const char *name)
{
	return v->value[opt_index(defs, name)];
}

enum opt_source opt_source_of(const struct opt_def *defs, const struct opt_values *v,
			      const char *name)
{
	return v->source[opt_index(defs, name)];
}

int opt_parse_bool(const char *s)
{
	static const char *const yes[] = { "1", "true", "yes", "on", NULL };
	static const char *const no[] = { "0", "false", "no", "off", NULL };

	for (const char *const *p = yes; *p; p++)
		if (!strcasecmp(s, *p))
			return 1;
	for (const char *const *p = no; *p; p++)
		if (!strcasecmp(s, *p))
			return 0;
	return -1;
}

static void list_choices(struct strbuf *sb, const char *const *choices)
{
	for (const char *const *c = choices; *c; c++)
		strbuf_addf(sb, "%s%s", c == choices ? "" : ", ", *c);
}

static int in_choices(const char *const *choices, const char *v)
{
	for (const char *const *c = choices; c && *c; c++)
		if (!strcmp(*c, v))
			return 1;
	return 0;
}

int opt_check(const struct opt_def *d, const char *value, struct strbuf *why)
{
	switch (d->kind) {
	case OPT_INT: {
		char *end;
		long n;
		errno = 0;
		n = strtol(value, &end, 10);
		if (errno || end == value || *end) {
			strbuf_addf(why, "'%s' is not a whole number", value);
			return -1;
		}
		if (n < d->min || n > d->max) {
			strbuf_addf(why, "%ld is outside %ld..%ld", n, d->min, d->max);
			return -1;
		}
		break;
	}
	case OPT_REAL: {
		char *end;
		double x;
		errno = 0;
		x = strtod(value, &end);
		if (errno || end == value || *end || x != x) {
			strbuf_addf(why, "'%s' is not a number", value);
			return -1;
		}
		if (x < d->rmin || x > d->rmax) {
			strbuf_addf(why, "%s is outside %g..%g", value, d->rmin, d->rmax);
			return -1;
		}
		break;
	}
	case OPT_BOOL:
		if (opt_parse_bool(value) < 0) {
			strbuf_addf(why, "'%s' is not a yes/no value (use 1 or 0)", value);
			return -1;
		}
		break;
	case OPT_CHOICE:
		if (!in_choices(d->choices, value)) {
			strbuf_addf(why, "'%s' is not one of ", value);
			list_choices(why, d->choices);
			return -1;
		}
		break;
	case OPT_LIST:
		if (d->choices) {
			struct strvec items = STRVEC_INIT;
			strvec_split(&items, value, " ,\t");
			for (size_t i = 0; i < items.nr; i++) {
				if (in_choices(d->choices, items.v[i]))
					continue;
				strbuf_addf(why, "'%s' is not one of ", items.v[i]);
				list_choices(why, d->choices);
				strvec_clear(&items);
				return -1;
			}
			strvec_clear(&items);
		}
		break;
	case OPT_STRING:
		break;
	}
	return d->validate ? d->validate(value, why) : 0;
}

static int set_value(const struct opt_def *defs, size_t i, struct opt_values *out,
		     const char *value, enum opt_source src, const char *origin)
{
	struct strbuf why = STRBUF_INIT;
	const struct opt_def *d = &defs[i];

	if (opt_check(d, value, &why)) {
		int r;
		if (src == OPT_FROM_ENV)
			r = error("%s=%s (the default of --%s): %s", origin, value,
				  d->name, why.buf);
		else
			r = error("--%s %s: %s", d->name, value, why.buf);
		strbuf_release(&why);
		return r;
	}
	strbuf_release(&why);
	free(out->value[i]);
	out->value[i] = xstrdup(value);
	out->source[i] = src;
	out->origin[i] = origin;
	return 0;
}

static const char *env_lookup(char *const *envp, const char *key)
{
	size_t n = strlen(key);

	for (; envp && *envp; envp++)
		if (!strncmp(*envp, key, n) && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/* The def of defs that arg ("--name", "--name=v", "-n") names, or NULL; *eq: the "=value" or NULL. */
static const struct opt_def *lookup(const struct opt_def *defs, const char *arg, const char **eq)
{
	*eq = arg[1] == '-' ? strchr(arg, '=') : NULL;
	return opt_find(defs, arg);
}

/*
 * The value of the option d at argv[*a] (arg), *a moved past a separate
 * value. NULL with error() when it has none.
 */
static const char *take_value(const struct opt_def *d, int argc, char **argv, int *a,
			      const char *eq)
{
	if (d->kind == OPT_BOOL)
		return eq ? eq + 1 : "1";
	if (eq)
		return eq + 1;
	if (*a + 1 < argc)
		return argv[++*a];
	error("option --%s needs a value (%s)", d->name, d->metavar ? d->metavar : "value");
	return NULL;
}

static int is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

static int is_version(const char *arg)
{
	return !strcmp(arg, "-V") || !strcmp(arg, "--version");
}

int options_parse(const struct opt_def *defs, int argc, char **argv,
		  char *const *envp, struct opt_values *out,
		  struct strvec *positional, int *want)
{
	size_t nr = 0;
	int only_positional = 0;

	while (defs[nr].name)
		nr++;
	out->nr = nr;
	out->value = xcalloc(nr, sizeof(*out->value));
	out->source = xcalloc(nr, sizeof(*out->source));
	out->origin = xcalloc(nr, sizeof(*out->origin));
	*want = OPT_WANT_NOTHING;

	/* Defaults first, then the environment, then flags: each overrides. */
	for (size_t i = 0; i < nr; i++) {
		const char *e = defs[i].env ? env_lookup(envp, defs[i].env) : NULL;
		out->origin[i] = "default";
		if (defs[i].def)
			out->value[i] = xstrdup(defs[i].def);
		/* An empty variable means "not set", as the seeds' shell habits assume. */
		if (e && *e && set_value(defs, i, out, e, OPT_FROM_ENV, defs[i].env))
			return -1;
	}
	for (int a = 1; a < argc; a++) {
		const char *arg = argv[a], *eq, *value;
		const struct opt_def *d;

		if (only_positional || arg[0] != '-' || !strcmp(arg, "-")) {
			strvec_push(positional, arg);
			continue;
		}
		if (!strcmp(arg, "--")) {
			only_positional = 1;
			continue;
		}
		if (is_help(arg)) {
			*want = OPT_WANT_HELP;
			continue;
		}
		if (is_version(arg)) {
			if (*want != OPT_WANT_HELP)
				*want = OPT_WANT_VERSION;
			continue;
		}
		d = lookup(defs, arg, &eq);
		if (!d)
			return opt_unknown_error(defs, arg);
		if (!(value = take_value(d, argc, argv, &a, eq)))
			return -1;
		if (set_value(defs, (size_t)(d - defs), out, value, OPT_FROM_FLAG, "flag"))
			return -1;
	}
	return 0;
}

enum opt_arg opt_next(const struct opt_def *defs, int argc, char **argv, int *i,
		      const struct opt_def **d, const char **value)
{
	const char *arg = argv[*i], *eq;
	struct strbuf why = STRBUF_INIT;

	if (is_help(arg))
		return OPT_ARG_HELP;
	if (is_version(arg))
		return OPT_ARG_VERSION;
	if (arg[0] != '-' || !arg[1] || !strcmp(arg, "--"))
		return OPT_ARG_OTHER;
	*d = lookup(defs, arg, &eq);
	if (!*d)
		return OPT_ARG_OTHER;
	if (!(*value = take_value(*d, argc, argv, i, eq)))
		return OPT_ARG_ERROR;
	if (opt_check(*d, *value, &why)) {
		error("--%s %s: %s", (*d)->name, *value, why.buf);
		strbuf_release(&why);
		return OPT_ARG_ERROR;
	}
	strbuf_release(&why);
	return OPT_ARG_OPTION;
}

/* Edits (insert, delete, replace) from a to b, stopping early above limit. */
static size_t edit_distance(const char *a, const char *b, size_t limit)
{
	size_t la = strlen(a), lb = strlen(b), *row, best = 0;

	if ((la > lb ? la - lb : lb - la) > limit)
		return limit + 1;
	row = xcalloc(lb + 1, sizeof(*row));
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		best = row[0];
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], v = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			diag = up;
			row[j] = v;
			if (v < best)
				best = v;
		}
		if (best > limit)
			break;
	}
	best = best > limit ? limit + 1 : row[lb];
	free(row);
	return best;
}

const char *opt_suggest(const struct opt_def *defs, const char *arg)
{
	const char *best = NULL;
	size_t best_d = 3, n;
	char *name;

	while (*arg == '-')
		arg++;
	n = strcspn(arg, "=");
	if (!n)
		return NULL;
	name = xstrndup(arg, n);
	for (const struct opt_def *d = defs; d->name; d++) {
		size_t dist = starts_with(d->name, name) ? 0 : edit_distance(name, d->name, 2);

		if (dist < best_d) {
			best_d = dist;
			best = d->name;
		}
	}
	free(name);
	return best;
}

int opt_unknown_error(const struct opt_def *defs, const char *arg)
{
	const char *near = opt_suggest(defs, arg);
	int n = (int)strcspn(arg, "=");

	if (near)
		return error("unknown option '%.*s'; did you mean --%s?", n, arg, near);
	return error("unknown option '%.*s'", n, arg);
}

void opt_values_release(struct opt_values *v)
{
	for (size_t i = 0; i < v->nr; i++)
		free(v->value[i]);
	free(v->value);
	free(v->source);
	free(v->origin);
	memset(v, 0, sizeof(*v));
}

void options_usage(struct strbuf *out, const struct opt_def *defs)
{
	for (const struct opt_def *d = defs; d->name; d++) {
		struct strbuf c = STRBUF_INIT;

		strbuf_addstr(out, "  ");
		if (d->short_name)
			strbuf_addf(out, "-%c, ", d->short_name);
		strbuf_addf(out, "--%s", d->name);
		if (d->kind != OPT_BOOL)
			strbuf_addf(out, " %s", d->metavar ? d->metavar : "VALUE");
		if (d->alias)
			strbuf_addf(out, "  (also --%s)", d->alias);
		strbuf_addch(out, '\n');
		term_add_wrapped(out, d->help, 6, 78);
		if (d->choices) {
			strbuf_addstr(&c, "one of: ");
			list_choices(&c, d->choices);
			term_add_wrapped(out, c.buf, 6, 78);
		}
		if (d->kind == OPT_INT)
			strbuf_addf(out, "      range: %ld..%ld\n", d->min, d->max);
		if (d->kind == OPT_REAL)
			strbuf_addf(out, "      range: %g..%g\n", d->rmin, d->rmax);
		if (d->env || d->def)
			strbuf_addf(out, "      %s%s%s%s%s\n", d->env ? "env: " : "",
				    d->env ? d->env : "", d->env && d->def ? "; " : "",
				    d->def ? "default: " : "", d->def ? d->def : "");
		strbuf_release(&c);
	}
}

int opt_take(int argc, char **argv, int *i, const char *name, const char **value)
{
	const char *rest;
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n))
		return 0;
	rest = argv[*i] + n;
	if (*rest == '=') {
		*value = rest + 1;
		return 1;
	}
	if (*rest)
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*value = argv[++*i];
	return 1;
}

const struct opt_def *opt_find(const struct opt_def *defs, const char *arg)
{
	const char *name, *eq;
	size_t n;

	if (arg[0] == '-' && arg[1] && arg[1] != '-' && !arg[2]) {
		for (const struct opt_def *d = defs; d->name; d++)
			if (d->short_name == arg[1])
				return d;
		return NULL;
	}
	if (strncmp(arg, "--", 2))
		return NULL;
	name = arg + 2;
	eq = strchr(name, '=');
	n = eq ? (size_t)(eq - name) : strlen(name);
	for (const struct opt_def *d = defs; d->name; d++)
		if ((strlen(d->name) == n && !strncmp(d->name, name, n)) ||
		    (d->alias && strlen(d->alias) == n && !strncmp(d->alias, name, n)))
			return d;
	return NULL;
}

/* ---- bindings ----------------------------------------------------------------- */

#define FIELD(obj, d, type) ((type *)((char *)(obj) + (d)->offset))

void opt_bind(const struct opt_def *defs, const struct opt_values *v, void *obj)
{
	for (size_t i = 0; defs[i].name; i++) {
		const struct opt_def *d = &defs[i];
		const char *s = i < v->nr ? v->value[i] : NULL;

		switch (d->store) {
		case OPT_NO_STORE:
			break;
		case OPT_STORE_INT:
			*FIELD(obj, d, int) = s ? (int)strtol(s, NULL, 10) : 0;
			break;
		case OPT_STORE_BOOL:
			*FIELD(obj, d, int) = s ? opt_parse_bool(s) == 1 : 0;
			break;
		case OPT_STORE_STR:
			*FIELD(obj, d, char *) = s && *s ? xstrdup(s) : NULL;
			break;
		case OPT_STORE_LIST:
			if (s)
				strvec_split(FIELD(obj, d, struct strvec), s, " ,\t");
			break;
		}
	}
}

void opt_unbind(const struct opt_def *defs, void *obj)
{
	for (size_t i = 0; defs[i].name; i++) {
		const struct opt_def *d = &defs[i];

		if (d->store == OPT_STORE_STR) {
			free(*FIELD(obj, d, char *));
			*FIELD(obj, d, char *) = NULL;
		} else if (d->store == OPT_STORE_LIST) {
			strvec_clear(FIELD(obj, d, struct strvec));
		}
	}
}

char *opt_format(const struct opt_def *d, const void *obj)
{
	struct strbuf sb = STRBUF_INIT;
	const struct strvec *list;
	const char *s;

	switch (d->store) {
	case OPT_STORE_INT:
	case OPT_STORE_BOOL:
		return xstrfmt("%d", *FIELD(obj, d, const int));
	case OPT_STORE_STR:
		s = *FIELD(obj, d, char *const);
		return s ? xstrdup(s) : NULL;
	case OPT_STORE_LIST:
		list = FIELD(obj, d, const struct strvec);
		for (size_t i = 0; i < list->nr; i++)
			strbuf_addf(&sb, "%s%s", i ? " " : "", list->v[i]);
		return strbuf_detach(&sb, NULL);
	case OPT_NO_STORE:
		break;
	}
	BUG("option --%s has no binding to format", d->name);
	return NULL;
}

json_t *opt_record_json(const struct opt_def *d, const void *obj)
{
	const struct strvec *list;
	const char *s;
	json_t *a;

	switch (d->store) {
	case OPT_STORE_INT:
		return json_integer(*FIELD(obj, d, const int));
	case OPT_STORE_BOOL:
		return json_boolean(*FIELD(obj, d, const int));
	case OPT_STORE_STR:
		s = *FIELD(obj, d, char *const);
		if (!s)
			return json_null();
		return d->kind == OPT_REAL ? json_real(strtod(s, NULL)) : json_string(s);
	case OPT_STORE_LIST:
		list = FIELD(obj, d, const struct strvec);
		a = json_array();
		for (size_t i = 0; i < list->nr; i++)
			json_array_append_new(a, json_string(list->v[i]));
		return a;
	case OPT_NO_STORE:
		break;
	}
	BUG("option --%s has no binding to record", d->name);
	return NULL;
}

json_t *opt_values_record(const struct opt_def *defs, const struct opt_values *v,
			  const char *const *skip, int given_only)
{
	json_t *o = json_object();

	for (size_t i = 0; i < v->nr; i++) {
		if (strlist_has(skip, defs[i].name))
			continue;
		if (given_only && v->source[i] != OPT_FROM_FLAG && v->source[i] != OPT_FROM_ENV)
			continue;
		json_object_set_new(o, defs[i].name, v->value[i] ? json_string(v->value[i])
								 : json_null());
	}
	return o;
}

/* Two texts of one option's value the same? Booleans by meaning ("1" and "yes"). */
static int same_value(const struct opt_def *d, const char *a, const char *b)
{
	if (!a || !b)
		return !a && !b;
	if (d->kind == OPT_BOOL)
		return opt_parse_bool(a) == opt_parse_bool(b);
	return !strcmp(a, b);
}

size_t opt_values_restore(const struct opt_def *defs, struct opt_values *v,
			  const json_t *rec, const char *const *skip,
			  const char *from_what, const json_t *env_then,
			  struct strvec *conflicts, struct strvec *notes)
{
	size_t n = 0;

	for (size_t i = 0; i < v->nr; i++) {
		const json_t *r = json_object_get(rec, defs[i].name);
		const char *was, *older;

		if ((!r && !defs[i].if_unrecorded) || strlist_has(skip, defs[i].name))
			continue;
		/* a record from before the option was recorded: what its sessions ran with */
		was = r ? json_string_value(r) : defs[i].if_unrecorded;
		older = r ? "" : " (written before the option was recorded: its sessions ran so)";
		if (v->source[i] == OPT_FROM_ENV && !same_value(&defs[i], was, v->value[i]) &&
		    !same_value(&defs[i], json_string_value(json_object_get(env_then, defs[i].env)),
				v->value[i]))
			strvec_pushf(notes, "%s=%s is not used: %s has --%s %s%s (give --%s with "
				     "--override to change it)", v->origin[i], v->value[i], from_what,
				     defs[i].name, was ? was : "unset", older, defs[i].name);
		if (v->source[i] == OPT_FROM_DEFAULT || v->source[i] == OPT_FROM_ENV) {
			free(v->value[i]);
			v->value[i] = was ? xstrdup(was) : NULL;
			v->source[i] = OPT_FROM_RECORD;
			v->origin[i] = from_what;
		} else if (!same_value(&defs[i], was, v->value[i])) {
			strvec_pushf(conflicts, "--%s: %s has %s%s%s%s, given %s%s%s (by %s%s)",
				     defs[i].name, from_what, was ? "'" : "", was ? was : "nothing",
				     was ? "'" : "", older, v->value[i] ? "'" : "",
				     v->value[i] ? v->value[i] : "nothing", v->value[i] ? "'" : "",
				     v->source[i] == OPT_FROM_FLAG ? "--" : "",
				     v->source[i] == OPT_FROM_FLAG ? defs[i].name : v->origin[i]);
			n++;
		}
	}
	return n;
}

json_t *opt_env_record(const struct opt_def *defs, char *const *envp)
{
	json_t *o = json_object();

	for (const struct opt_def *d = defs; d->name; d++) {
		const char *e = d->env ? env_lookup(envp, d->env) : NULL;
		if (e && *e)
			json_object_set_new(o, d->env, json_string(e));
	}
	return o;
}

void opt_set(const struct opt_def *defs, struct opt_values *v, const char *name,
	     const char *value, const char *origin)
{
	size_t i = opt_index(defs, name);

	if (v->source[i] == OPT_FROM_FLAG || v->source[i] == OPT_FROM_ENV)
		return;
	free(v->value[i]);
	v->value[i] = value ? xstrdup(value) : NULL;
	v->source[i] = OPT_FROM_RECORD;
	v->origin[i] = origin;
}
