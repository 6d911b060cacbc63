/*
 * Reading a shape file the way FlagGems' yaml.safe_load (PyYAML) will
 * read it, in bounded time and memory whatever the file holds; shared by
 * shapefile.c (loading, lookup) and shapefile_yaml.c (the checks). Private
 * to src/run/.
 *
 * libyaml parses; what PyYAML would do differently is refused before a run
 * starts, with the line: more than one document, tags PyYAML's safe loader
 * refuses (and any that would change what a dimension is), duplicate keys
 * (PyYAML keeps the last, a lookup here the first), aliases that refer to
 * themselves, and dimensions that are no whole number of at least 1. Bounds:
 * nesting depth (libyaml's scanner is quadratic in it: 200 KB of '[' took
 * 35 s), counted through aliases as PyYAML's recursive constructor would
 * follow them, and the size of the file once aliases and merge keys are
 * expanded (an 804-byte merge-key bomb kept a lookup busy past a minute).
 */
#ifndef ZLB_RUN_SHAPEFILE_INT_H
#define ZLB_RUN_SHAPEFILE_INT_H

#include <stddef.h>
#include <yaml.h>

/* Nesting levels a shape file may have (a real one has 4: key, entry, list, shape). */
#define SHAPE_FILE_MAX_DEPTH 64
/* Nodes once every alias and merge is expanded (the whole upstream file: ~5000). */
#define SHAPE_FILE_MAX_NODES 1000000

/* What a scalar is, as PyYAML resolves it (YAML 1.1). */
enum sf_kind { SF_NULL, SF_BOOL, SF_INT, SF_FLOAT, SF_STR };

/* Scalars given an explicit tag (!!int 5), by byte offset of their start. */
struct sf_tags {
	size_t *at;
	enum sf_kind *kind;
	size_t nr, alloc;
};

/*
 * The event pass over text, before a tree is built: one document at most,
 * nesting at most SHAPE_FILE_MAX_DEPTH, only the tags PyYAML's safe loader
 * takes for plain data. Explicit scalar tags go to tags. 0, or -1 with
 * error() naming path and the line.
 */
int sf_precheck(const char *text, size_t len, const char *path, struct sf_tags *tags);
void sf_tags_release(struct sf_tags *tags);

/*
 * The loaded tree: no alias inside what it names, depth through aliases
 * within SHAPE_FILE_MAX_DEPTH, at most SHAPE_FILE_MAX_NODES once expanded,
 * no key twice in one mapping. 0, or -1 with error().
 */
int sf_tree_check(yaml_document_t *doc, const char *path, const struct sf_tags *tags);

/*
 * Resolve scalar node n as PyYAML would. For SF_INT, *value is its value
 * and *big is set when it does not fit 62 bits; for SF_BOOL, *value is 0
 * or 1.
 */
enum sf_kind sf_resolve(const yaml_node_t *n, const struct sf_tags *tags, long long *value,
			int *big);

#endif
