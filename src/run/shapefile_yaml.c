/* The checks that make a shape file read here as PyYAML reads it (shapefile_int.h). */
#include "run/shapefile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "lib/strbuf.h"

#define YAML_TAG_PREFIX "tag:yaml.org,2002:"

/* ---- tags ---------------------------------------------------------------------- */

/*
 * The tags a shape file may carry: the plain data types of PyYAML's safe
 * loader. Everything else is refused: !!python/... (safe_load refuses it
 * too), local tags, and the exotic types (!!binary, !!set, ...) that make
 * no dimension.
 */
static int tag_kind(const char *tag, int scalar, enum sf_kind *kind)
{
	static const struct { const char *name; enum sf_kind kind; } scalars[] = {
		{ "str", SF_STR }, { "int", SF_INT }, { "float", SF_FLOAT },
		{ "bool", SF_BOOL }, { "null", SF_NULL },
	};
	const char *rest;

	if (!skip_prefix(tag, YAML_TAG_PREFIX, &rest))
		return 0;
	if (!scalar)
		return !strcmp(rest, "seq") || !strcmp(rest, "map");
	for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
		if (!strcmp(rest, scalars[i].name)) {
			*kind = scalars[i].kind;
			return 1;
		}
	return 0;
}

static void tags_add(struct sf_tags *t, size_t at, enum sf_kind kind)
{
	if (t->nr == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 16;
		t->at = xrealloc(t->at, t->alloc * sizeof(*t->at));
		t->kind = xrealloc(t->kind, t->alloc * sizeof(*t->kind));
	}
	t->at[t->nr] = at;
	t->kind[t->nr++] = kind;
}

void sf_tags_release(struct sf_tags *tags)
{
	free(tags->at);
	free(tags->kind);
	memset(tags, 0, sizeof(*tags));
}

/* The explicit tag of the scalar starting at byte at, if any (events come in file order). */
static int tags_find(const struct sf_tags *t, size_t at, enum sf_kind *kind)
{
	size_t lo = 0, hi = t->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->at[mid] < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->nr && t->at[lo] == at) {
		*kind = t->kind[lo];
		return 1;
	}
	return 0;
}

/* ---- the event pass ------------------------------------------------------------- */

static int refuse_tag(const char *path, const char *tag, const yaml_mark_t *m)
{
	const char *rest;
	int std = skip_prefix(tag, YAML_TAG_PREFIX, &rest);

	return error("shape file '%s' line %zu: tag '%s%s': a shape file holds plain numbers, "
		     "words and lists; zlb takes the tags !!str, !!int, !!float, !!bool, !!null, "
		     "!!seq and !!map only (PyYAML's safe_load, which FlagGems uses, refuses "
		     "!!python/ ones); remove the tag", path, m->line + 1, std ? "!!" : "",
		     std ? rest : tag);
}

int sf_precheck(const char *text, size_t len, const char *path, struct sf_tags *tags)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	int depth = 0, docs = 0, r = 0, done = 0;

	if (!yaml_parser_initialize(&parser))
		return error("cannot initialise the YAML parser");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (!done && !r) {
		enum sf_kind kind;

		if (!yaml_parser_parse(&parser, &ev)) {
			r = error("shape file '%s' is not valid YAML: %s at line %zu, column %zu",
				  path, parser.problem ? parser.problem : "syntax error",
				  parser.problem_mark.line + 1, parser.problem_mark.column + 1);
			break;
		}
		switch (ev.type) {
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1)
				r = error("shape file '%s' holds more than one YAML document (the "
					  "second starts at line %zu); FlagGems' yaml.safe_load takes "
					  "exactly one: keep one, without '---' between entries",
					  path, ev.start_mark.line + 1);
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT: {
			int seq = ev.type == YAML_SEQUENCE_START_EVENT;
			const char *tag = (const char *)(seq ? ev.data.sequence_start.tag
							     : ev.data.mapping_start.tag);
			int implicit = seq ? ev.data.sequence_start.implicit
					   : ev.data.mapping_start.implicit;

			if (tag && !implicit && !tag_kind(tag, 0, &kind))
				r = refuse_tag(path, tag, &ev.start_mark);
			else if (++depth > SHAPE_FILE_MAX_DEPTH)
				r = error("shape file '%s' nests deeper than %d levels at line %zu; "
					  "a shape file needs 4 (key, entry, list, shape)", path,
					  SHAPE_FILE_MAX_DEPTH, ev.start_mark.line + 1);
			break;
		}
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_SCALAR_EVENT: {
			const char *tag = (const char *)ev.data.scalar.tag;

			if (!tag || ev.data.scalar.plain_implicit || ev.data.scalar.quoted_implicit)
				break;
			if (!tag_kind(tag, 1, &kind))
				r = refuse_tag(path, tag, &ev.start_mark);
			else
				tags_add(tags, ev.start_mark.index, kind);
			break;
		}
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return r;
}

/* ---- scalars as PyYAML resolves them --------------------------------------------------- */

static int in(char c, const char *set)
{
	return c && strchr(set, c);
}

/* Digits of base (and '_') in s up to its end; at least one digit. */
static int digits(const char *s, const char *set)
{
	int any = 0;

	for (; *s; s++) {
		if (*s == '_')
			continue;
		if (!in(*s, set))
			return 0;
		any = 1;
	}
	return any;
}

/* ((digits))(:[0-5]?[0-9])+ : sexagesimal, first part [1-9][0-9_]*. */
static int sexagesimal(const char *s)
{
	const char *colon = strchr(s, ':');
	int parts = 0;

	if (!colon || *s < '1' || *s > '9')
		return 0;
	for (const char *p = s; p < colon; p++)
		if (!in(*p, "0123456789_"))
			return 0;
	for (const char *p = colon; *p; ) {
		const char *q = ++p;
		while (*q >= '0' && *q <= '9')
			q++;
		if (q == p || q - p > 2 || (q - p == 2 && *p > '5') || (*q && *q != ':'))
			return 0;
		parts++;
		p = q;
	}
	return parts > 0;
}

/* YAML 1.1's int, as PyYAML's resolver (the sign taken off first). */
static int looks_int(const char *s)
{
	if (!*s)
		return 0;
	if (starts_with(s, "0b"))
		return digits(s + 2, "01");
	if (starts_with(s, "0x"))
		return digits(s + 2, "0123456789abcdefABCDEF");
	if (s[0] == '0')
		return !s[1] || digits(s + 1, "01234567");
	if (strchr(s, ':'))
		return sexagesimal(s);
	return s[0] >= '1' && s[0] <= '9' && digits(s, "0123456789");
}

/* Its value, as construct_yaml_int computes it; *big past 62 bits. */
static long long int_value(const char *s, int *big)
{
	const unsigned long long limit = 1ULL << 62;
	unsigned long long v = 0, part = 0;
	int base = 10, neg = 0, sexa;

	*big = 0;
	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (starts_with(s, "0b"))
		base = 2, s += 2;
	else if (starts_with(s, "0x"))
		base = 16, s += 2;
	else if (s[0] == '0' && s[1])
		base = 8, s++;
	sexa = strchr(s, ':') != NULL;
	for (; *s; s++) {
		int d;

		if (*s == '_')
			continue;
		if (*s == ':') {	/* base 60: each part a digit, most significant first */
			if (v > limit / 60)
				goto too_big;
			v = v * 60 + part;
			part = 0;
			continue;
		}
		d = *s <= '9' ? *s - '0' : (*s | 0x20) - 'a' + 10;
		part = part * (unsigned)base + (unsigned)d;
		if (part > limit)
			goto too_big;
	}
	if (sexa) {
		if (v > limit / 60)
			goto too_big;
		v = v * 60 + part;
	} else {
		v = part;
	}
	if (v > limit)
		goto too_big;
	return neg ? -(long long)v : (long long)v;
too_big:
	*big = 1;
	return 0;
}

static int one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

static const char *const bool_true[] = { "yes", "Yes", "YES", "true", "True", "TRUE", "on",
					 "On", "ON", NULL };
static const char *const bool_false[] = { "no", "No", "NO", "false", "False", "FALSE", "off",
					  "Off", "OFF", NULL };
static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };

/* YAML 1.1's float, roughly as PyYAML resolves it: digits with a dot, .inf, .nan. */
static int looks_float(const char *s)
{
	static const char *const special[] = { ".inf", ".Inf", ".INF", "-.inf", "-.Inf",
					       "-.INF", "+.inf", "+.Inf", "+.INF", ".nan",
					       ".NaN", ".NAN", NULL };
	const char *p = s;

	if (one_of(s, special))
		return 1;
	if (*p == '-' || *p == '+')
		p++;
	if (!strchr(p, '.'))
		return 0;
	for (; *p; p++)
		if (!in(*p, "0123456789_.:eE+-"))
			return 0;
	return 1;
}

enum sf_kind sf_resolve(const yaml_node_t *n, const struct sf_tags *tags, long long *value,
			int *big)
{
	const char *s = (const char *)n->data.scalar.value;
	const char *unsigned_part = (*s == '-' || *s == '+') ? s + 1 : s;
	enum sf_kind tagged;

	*value = 0;
	*big = 0;
	if (tags_find(tags, n->start_mark.index, &tagged)) {
		if (tagged != SF_INT)
			return tagged;
		/* !!int on text that is no int: PyYAML fails on it; here it is no dimension. */
		if (!looks_int(unsigned_part))
			return SF_STR;
		*value = int_value(s, big);
		return SF_INT;
	}
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return SF_STR;
	if (one_of(s, nulls))
		return SF_NULL;
	if (one_of(s, bool_true) || one_of(s, bool_false)) {
		*value = one_of(s, bool_true);
		return SF_BOOL;
	}
	if (looks_int(unsigned_part)) {
		*value = int_value(s, big);
		return SF_INT;
	}
	return looks_float(s) ? SF_FLOAT : SF_STR;
}

/* ---- the tree ---------------------------------------------------------------------- */

struct walk {
	yaml_document_t *doc;
	const char *path;
	const struct sf_tags *tags;
	unsigned char *state;	/* per node id: 0 new, 1 being walked, 2 done */
	size_t *size;		/* nodes below and including it, aliases expanded */
	int *depth;		/* levels below and including it, aliases followed */
};

struct key_ref {
	char *canon;
	size_t line;
};

static int cmp_key_ref(const void *a, const void *b)
{
	const struct key_ref *x = a, *y = b;
	int c = strcmp(x->canon, y->canon);
	return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* What PyYAML would make of a key, as text: equal texts are the same dict key. */
static char *key_canon(const struct walk *w, const yaml_node_t *k)
{
	long long v;
	int big;
	enum sf_kind kind = sf_resolve(k, w->tags, &v, &big);

	switch (kind) {
	case SF_INT:
		return big ? xstrfmt("i:big:%s", k->data.scalar.value) : xstrfmt("i:%lld", v);
	case SF_BOOL:
		/* True == 1 as dict keys in Python. */
		return xstrfmt("i:%lld", v);
	case SF_NULL:
		return xstrdup("n:");
	default:
		return xstrfmt("s:%s", k->data.scalar.value);
	}
}

/* No key twice in the mapping m (merge keys aside): PyYAML keeps the last, lookups the first. */
static int unique_keys(const struct walk *w, yaml_node_t *m)
{
	size_t n = (size_t)(m->data.mapping.pairs.top - m->data.mapping.pairs.start), k = 0;
	struct key_ref *refs = xcalloc(n + 1, sizeof(*refs));
	int r = 0;

	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *key = yaml_document_get_node(w->doc, p->key);

		if (!key || key->type != YAML_SCALAR_NODE) {
			r = error("shape file '%s' line %zu: a key that is a list or a mapping; "
				  "PyYAML cannot use it as a key: write a name", w->path,
				  (key ? key->start_mark.line : m->start_mark.line) + 1);
			goto out;
		}
		if (key->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    !strcmp((const char *)key->data.scalar.value, "<<"))
			continue;
		refs[k].canon = key_canon(w, key);
		refs[k++].line = key->start_mark.line + 1;
	}
	if (k > 1)
		qsort(refs, k, sizeof(*refs), cmp_key_ref);
	for (size_t i = 1; i < k && !r; i++)
		if (!strcmp(refs[i].canon, refs[i - 1].canon))
			r = error("shape file '%s': the key '%s' appears twice in one mapping (lines "
				  "%zu and %zu); FlagGems' PyYAML keeps the last, so which one a run "
				  "reads would depend on the reader: remove one", w->path,
				  strchr(refs[i].canon, ':') + 1, refs[i - 1].line, refs[i].line);
out:
	for (size_t i = 0; i < k; i++)
		free(refs[i].canon);
	free(refs);
	return r;
}

static size_t add_sat(size_t a, size_t b)
{
	return a + b > SHAPE_FILE_MAX_NODES ? SHAPE_FILE_MAX_NODES + 1 : a + b;
}

static int visit(struct walk *w, int id, int level)
{
	yaml_node_t *n = yaml_document_get_node(w->doc, id);
	size_t size = 1;
	int depth = 0, r = 0;

	if (!n)
		return 0;
	if (w->state[id] == 1)
		return error("shape file '%s' line %zu: an alias refers to a node that holds it "
			     "(a recursive structure); a shape file needs none", w->path,
			     n->start_mark.line + 1);
	if (w->state[id] == 2)
		goto check;
	w->state[id] = 1;
	if (n->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *i = n->data.sequence.items.start;
		     !r && i < n->data.sequence.items.top; i++) {
			if (!(r = visit(w, *i, level + 1))) {
				size = add_sat(size, w->size[*i]);
				depth = w->depth[*i] > depth ? w->depth[*i] : depth;
			}
		}
	} else if (n->type == YAML_MAPPING_NODE) {
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     !r && p < n->data.mapping.pairs.top; p++) {
			if (!(r = visit(w, p->key, level + 1)) && !(r = visit(w, p->value, level + 1))) {
				size = add_sat(size, add_sat(w->size[p->key], w->size[p->value]));
				depth = w->depth[p->value] > depth ? w->depth[p->value] : depth;
			}
		}
		if (!r)
			r = unique_keys(w, n);
	}
	if (r)
		return r;
	w->state[id] = 2;
	w->size[id] = size;
	w->depth[id] = depth + 1;
check:
	/* Followed through aliases, as PyYAML's constructor recurses. */
	if (level + w->depth[id] > SHAPE_FILE_MAX_DEPTH)
		return error("shape file '%s' line %zu: through its aliases the file nests deeper "
			     "than %d levels; a shape file needs 4 (key, entry, list, shape)",
			     w->path, n->start_mark.line + 1, SHAPE_FILE_MAX_DEPTH);
	return 0;
}

int sf_tree_check(yaml_document_t *doc, const char *path, const struct sf_tags *tags)
{
	size_t nodes = (size_t)(doc->nodes.top - doc->nodes.start);
	struct walk w = { doc, path, tags, xcalloc(nodes + 2, 1),
			  xcalloc(nodes + 2, sizeof(size_t)), xcalloc(nodes + 2, sizeof(int)) };
	int r = nodes ? visit(&w, 1, 0) : 0;

	/* The root is node 1 (libyaml numbers nodes from 1). */
	if (!r && nodes && w.size[1] > SHAPE_FILE_MAX_NODES)
		r = error("shape file '%s' expands to more than %d values through its aliases and "
			  "merge keys ('<<: *name'), which PyYAML copies out in full; a shape file "
			  "needs far fewer: write the shapes out, or merge less", path,
			  SHAPE_FILE_MAX_NODES);
	free(w.state);
	free(w.size);
	free(w.depth);
	return r;
}
