#include "run/shapefile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/paths.h"
#include "run/shapefile_int.h"

#define SHAPE_FILE_LIMIT (64u << 20)

static int load(struct shape_file *sf, const char *path, const char *text)
{
	yaml_parser_t parser;
	yaml_node_t *root;
	struct strbuf sb = STRBUF_INIT;

	memset(sf, 0, sizeof(*sf));
	sf->path = xstrdup(path);
	if (text) {
		strbuf_addstr(&sb, text);
	} else if (strbuf_read_file(&sb, path, SHAPE_FILE_LIMIT)) {
		strbuf_release(&sb);
		return error_errno("cannot read shape file '%s'", path);
	}
	sf->text = strbuf_detach(&sb, NULL);
	sf->tags = xcalloc(1, sizeof(*sf->tags));

	/* Before libyaml builds a tree: its scanner is quadratic in nesting depth. */
	if (sf_precheck(sf->text, strlen(sf->text), path, sf->tags))
		return -1;
	if (!yaml_parser_initialize(&parser))
		return error("cannot initialise the YAML parser");
	yaml_parser_set_input_string(&parser, (const unsigned char *)sf->text,
				     strlen(sf->text));
	if (!yaml_parser_load(&parser, &sf->doc)) {
		int r = error("shape file '%s' is not valid YAML: %s at line %zu, column %zu",
			      path, parser.problem ? parser.problem : "syntax error",
			      parser.problem_mark.line + 1, parser.problem_mark.column + 1);
		yaml_parser_delete(&parser);
		return r;
	}
	yaml_parser_delete(&parser);
	sf->loaded = 1;
	root = yaml_document_get_root_node(&sf->doc);
	if (!root)
		return error("shape file '%s' is empty", path);
	if (root->type != YAML_MAPPING_NODE)
		return error("shape file '%s' must be a mapping of op or class names "
			     "to {shapes: [...]}, but its top level is a %s", path,
			     root->type == YAML_SEQUENCE_NODE ? "list" : "scalar");
	return sf_tree_check(&sf->doc, path, sf->tags);
}

int shape_file_load(struct shape_file *sf, const char *path, const char *text)
{
	if (!load(sf, path, text))
		return 0;
	shape_file_release(sf);
	return -1;
}

void shape_file_release(struct shape_file *sf)
{
	if (sf->loaded)
		yaml_document_delete(&sf->doc);
	if (sf->tags)
		sf_tags_release(sf->tags);
	free(sf->tags);
	free(sf->path);
	free(sf->text);
	memset(sf, 0, sizeof(*sf));
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *node(const struct shape_file *sf, int id)
{
	return yaml_document_get_node((yaml_document_t *)&sf->doc, id);
}

void shape_file_keys(const struct shape_file *sf, struct strvec *keys)
{
	yaml_node_t *root = yaml_document_get_root_node((yaml_document_t *)&sf->doc);
	yaml_node_pair_t *p;

	if (!root || root->type != YAML_MAPPING_NODE)
		return;
	for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		const char *k = scalar(node(sf, p->key));
		if (k && strcmp(k, "<<"))
			strvec_push(keys, k);
	}
}

/*
 * Value of key in a mapping, following YAML 1.1 merge keys ("<<: *anchor"),
 * which FlagGems' core_shapes.yaml uses and PyYAML honours.
 */
static yaml_node_t *map_get(const struct shape_file *sf, yaml_node_t *map,
			    const char *key, int depth)
{
	yaml_node_pair_t *p;

	if (!map || map->type != YAML_MAPPING_NODE || depth > 8)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = scalar(node(sf, p->key));
		if (k && !strcmp(k, key))
			return node(sf, p->value);
	}
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = scalar(node(sf, p->key));
		yaml_node_t *v;
		if (!k || strcmp(k, "<<"))
			continue;
		v = node(sf, p->value);
		if (v && v->type == YAML_SEQUENCE_NODE) {
			for (yaml_node_item_t *i = v->data.sequence.items.start;
			     i < v->data.sequence.items.top; i++) {
				yaml_node_t *r = map_get(sf, node(sf, *i), key, depth + 1);
				if (r)
					return r;
			}
		} else {
			yaml_node_t *r = map_get(sf, v, key, depth + 1);
			if (r)
				return r;
		}
	}
	return NULL;
}

yaml_node_t *shape_file_map_get(const struct shape_file *sf, yaml_node_t *map,
				const char *key)
{
	return map_get(sf, map, key, 0);
}

/*
 * What is wrong with one number of a shape, as PyYAML hands it to FlagGems
 * (NULL: nothing): a word, a fraction, nothing, a negative number or one
 * too large for a tensor. 1e400 is a word to YAML 1.1 (a float needs a
 * dot), 010 is 8, 0x10 is 16, 1:30 is 90. A 0 is upstream's own (a conv's
 * padding, median_dim's dim): only a shape of nothing but zeros is refused
 * (shape_problem).
 */
static char *check_dim(const struct shape_file *sf, const yaml_node_t *dim, int *positive)
{
	const char *text = (const char *)dim->data.scalar.value;
	long long v;
	int big;

	switch (sf_resolve(dim, sf->tags, &v, &big)) {
	case SF_BOOL:
		return NULL;
	case SF_INT:
		if (big)
			return xstrfmt("'%s' (too large for a tensor)", text);
		if (v < 0)
			return xstrfmt("'%s' (%lld)", text, v);
		*positive |= v > 0;
		return NULL;
	case SF_FLOAT:
		return xstrfmt("'%s' (a fraction)", text);
	case SF_NULL:
		return xstrfmt("'%s' (null: no value)", text);
	default:
		return xstrfmt("'%s' (a word)", text);
	}
}

/*
 * The first thing wrong in a shape: numbers and true/false flags, or lists
 * of them to any depth (upstream nests them: index's [[1024, 1024], [[64],
 * [64]]], median_dim's [[32, 384, 128], 1, false]); never a mapping. *bad
 * gets the offending text, *line its line (0 for a structure).
 */
static int walk_shape(const struct shape_file *sf, yaml_node_t *n, int depth,
		      int *positive, char **bad, size_t *line)
{
	if (!n || depth > 8 || (n->type != YAML_SCALAR_NODE && n->type != YAML_SEQUENCE_NODE))
		return -1;
	if (n->type == YAML_SCALAR_NODE) {
		*bad = check_dim(sf, n, positive);
		*line = n->start_mark.line + 1;
		return *bad ? -1 : 0;
	}
	for (yaml_node_item_t *d = n->data.sequence.items.start; d < n->data.sequence.items.top;
	     d++)
		if (walk_shape(sf, node(sf, *d), depth + 1, positive, bad, line))
			return -1;
	return 0;
}

static char *shape_problem(const struct shape_file *sf, const char *key, size_t item,
			   yaml_node_t *s)
{
	char *bad = NULL, *msg;
	size_t line = s->start_mark.line + 1;
	int positive = 0;

	if (walk_shape(sf, s, 0, &positive, &bad, &line) && !bad)
		return xstrfmt("'%s: shapes:' item %zu holds a mapping or is nested too deep; "
			       "a shape is numbers and true/false flags, or lists of them "
			       "(FlagGems' [[32, 384, 128], 1, false])", key, item);
	if (!bad && !positive)
		bad = xstrfmt("'0' (0)");
	if (!bad)
		return NULL;
	msg = xstrfmt("'%s: shapes:' item %zu (line %zu) has %s as a dimension; FlagGems "
		      "would build a tensor from it and fail after the run started: "
		      "dimensions are whole numbers, at least one of them above 0 (or "
		      "true/false flags)", key, item, line, bad);
	free(bad);
	return msg;
}

static char *check_entry(const struct shape_file *sf, const char *key,
			 yaml_node_t *entry, size_t *count)
{
	yaml_node_t *shapes;
	size_t i = 0;
	char *bad;

	*count = 0;
	if (!entry || entry->type != YAML_MAPPING_NODE)
		return xstrfmt("'%s' must map to {shapes: [[...], ...]}", key);
	shapes = map_get(sf, entry, "shapes", 0);
	if (!shapes)
		return xstrfmt("'%s' has no 'shapes:' list (FlagGems would use its "
			       "DEFAULT_SHAPES instead)", key);
	if (shapes->type != YAML_SEQUENCE_NODE)
		return xstrfmt("'%s: shapes:' must be a list of shapes", key);
	for (yaml_node_item_t *it = shapes->data.sequence.items.start;
	     it < shapes->data.sequence.items.top; it++, i++) {
		yaml_node_t *s = node(sf, *it);
		if (!s || s->type != YAML_SEQUENCE_NODE ||
		    s->data.sequence.items.start == s->data.sequence.items.top)
			return xstrfmt("'%s: shapes:' item %zu is not a non-empty list "
				       "like [1024, 1024]", key, i + 1);
		if ((bad = shape_problem(sf, key, i + 1, s)))
			return bad;
	}
	if (!i)
		return xstrfmt("'%s: shapes:' is empty", key);
	*count = i;
	return NULL;
}

void shape_file_lookup(const struct shape_file *sf, const char *op_name,
		       const char *const *chain, struct shape_lookup *out)
{
	yaml_node_t *root = yaml_document_get_root_node((yaml_document_t *)&sf->doc);
	yaml_node_pair_t *p;

	memset(out, 0, sizeof(*out));
	if (!root || root->type != YAML_MAPPING_NODE)
		return;
	/* op_name first, then the chain in MRO order: FlagGems' own order. */
	for (int pass = -1; ; pass++) {
		const char *want = pass < 0 ? op_name : (chain ? chain[pass] : NULL);
		if (!want)
			break;
		for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
			const char *k = scalar(node(sf, p->key));
			if (!k || strcmp(k, want))
				continue;
			out->key = k;
			out->via_class = pass >= 0;
			out->problem = check_entry(sf, k, node(sf, p->value), &out->count);
			return;
		}
	}
}

int shape_file_archive(const struct shape_file *sf, const char *dest,
		       const char *header_comment)
{
	struct strbuf sb = STRBUF_INIT;
	const char *line = header_comment;
	int r;

	while (line && *line) {
		size_t n = strcspn(line, "\n");
		strbuf_addstr(&sb, "# ");
		strbuf_add(&sb, line, n);
		strbuf_addch(&sb, '\n');
		line += n + (line[n] == '\n');
	}
	strbuf_addstr(&sb, sf->text);
	if (sb.len && sb.buf[sb.len - 1] != '\n')
		strbuf_addch(&sb, '\n');
	r = write_file_atomic(dest, sb.buf, sb.len);
	strbuf_release(&sb);
	return r;
}
