#include "lib/options.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

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

/* Check value against def; on failure write the reason into why. */
static int check_value(const struct opt_def *d, const char *value, struct strbuf *why)
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

	if (check_value(d, value, &why)) {
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

int options_parse(const struct opt_def *defs, int argc, char **argv,
		  char *const *envp, struct opt_values *out,
		  struct strvec *positional, int *want_help)
{
	size_t nr = 0;
	int only_positional = 0;

	while (defs[nr].name)
		nr++;
	out->nr = nr;
	out->value = xcalloc(nr, sizeof(*out->value));
	out->source = xcalloc(nr, sizeof(*out->source));
	out->origin = xcalloc(nr, sizeof(*out->origin));
	*want_help = 0;

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
		const char *arg = argv[a], *name, *eq, *value = NULL;
		size_t i, nlen;

		if (only_positional || arg[0] != '-' || !strcmp(arg, "-")) {
			strvec_push(positional, arg);
			continue;
		}
		if (!strcmp(arg, "--")) {
			only_positional = 1;
			continue;
		}
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			*want_help = 1;
			continue;
		}
		if (!skip_prefix(arg, "--", &name))
			return error("unknown option '%s' (options are long: --name value)", arg);
		eq = strchr(name, '=');
		nlen = eq ? (size_t)(eq - name) : strlen(name);
		for (i = 0; i < nr; i++) {
			if ((strlen(defs[i].name) == nlen && !strncmp(defs[i].name, name, nlen)) ||
			    (defs[i].alias && strlen(defs[i].alias) == nlen &&
			     !strncmp(defs[i].alias, name, nlen)))
				break;
		}
		if (i == nr)
			return error("unknown option '--%.*s'; see --help", (int)nlen, name);
		if (defs[i].kind == OPT_BOOL) {
			value = eq ? eq + 1 : "1";
		} else if (eq) {
			value = eq + 1;
		} else if (a + 1 < argc) {
			value = argv[++a];
		} else {
			return error("option --%s needs a value (%s)", defs[i].name,
				     defs[i].metavar ? defs[i].metavar : "value");
		}
		if (set_value(defs, i, out, value, OPT_FROM_FLAG, "flag"))
			return -1;
	}
	return 0;
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

void options_usage(FILE *out, const struct opt_def *defs)
{
	for (const struct opt_def *d = defs; d->name; d++) {
		struct strbuf head = STRBUF_INIT;
		strbuf_addf(&head, "  --%s", d->name);
		if (d->kind != OPT_BOOL)
			strbuf_addf(&head, " %s", d->metavar ? d->metavar : "VALUE");
		if (d->alias)
			strbuf_addf(&head, "  (also --%s)", d->alias);
		fprintf(out, "%s\n      %s\n", head.buf, d->help);
		if (d->choices) {
			struct strbuf c = STRBUF_INIT;
			list_choices(&c, d->choices);
			fprintf(out, "      one of: %s\n", c.buf);
			strbuf_release(&c);
		}
		if (d->kind == OPT_INT)
			fprintf(out, "      range: %ld..%ld\n", d->min, d->max);
		if (d->kind == OPT_REAL)
			fprintf(out, "      range: %g..%g\n", d->rmin, d->rmax);
		if (d->env || d->def)
			fprintf(out, "      %s%s%s%s%s\n", d->env ? "env: " : "",
				d->env ? d->env : "", d->env && d->def ? "; " : "",
				d->def ? "default: " : "", d->def ? d->def : "");
		strbuf_release(&head);
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
		const char *was;

		if (!r || strlist_has(skip, defs[i].name))
			continue;
		was = json_string_value(r);
		if (v->source[i] == OPT_FROM_ENV && !same_value(&defs[i], was, v->value[i]) &&
		    !same_value(&defs[i], json_string_value(json_object_get(env_then, defs[i].env)),
				v->value[i]))
			strvec_pushf(notes, "%s=%s is not used: %s has --%s %s (give --%s with "
				     "--override to change it)", v->origin[i], v->value[i], from_what,
				     defs[i].name, was ? was : "unset", defs[i].name);
		if (v->source[i] == OPT_FROM_DEFAULT || v->source[i] == OPT_FROM_ENV) {
			free(v->value[i]);
			v->value[i] = was ? xstrdup(was) : NULL;
			v->source[i] = OPT_FROM_RECORD;
			v->origin[i] = from_what;
		} else if (!same_value(&defs[i], was, v->value[i])) {
			strvec_pushf(conflicts, "--%s: %s has %s%s%s, given %s%s%s (by %s%s)",
				     defs[i].name, from_what, was ? "'" : "", was ? was : "nothing",
				     was ? "'" : "", v->value[i] ? "'" : "",
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
