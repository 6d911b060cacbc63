/*
 * Shape files: FlagGems' YAML of `<key>: {shapes: [[...], ...], shape_desc: ...}`
 * where <key> is an op_name or a Benchmark class name.
 *
 * FlagGems looks up the op_name, then each class along the benchmark's MRO,
 * and otherwise silently uses DEFAULT_SHAPES (which include a 2**30-element
 * tensor). zlb checks the same chain before a run so that a missing key is
 * a sentence at preflight, not a surprise in the numbers.
 */
#ifndef ZLB_SHAPEFILE_H
#define ZLB_SHAPEFILE_H

#include <stddef.h>
#include <yaml.h>

#include "lib/strbuf.h"
#include "lib/strvec.h"

struct sf_tags;

struct shape_file {
	char *path;         /* where it came from (or "<built-in>") */
	char *text;         /* the exact bytes parsed */
	yaml_document_t doc;
	int loaded;
	struct sf_tags *tags;  /* scalars with an explicit tag (shapefile_int.h) */
};

/*
 * Parse text (or, when text is NULL, the file at path) as FlagGems'
 * yaml.safe_load will, in bounded time and memory (run/shapefile_int.h):
 * returns 0, or -1 with an error() naming the line: a YAML syntax error,
 * more than one document, a tag, a key given twice, a recursive alias,
 * nesting or an expansion through aliases and merge keys beyond the
 * bounds, or a top level that is not a mapping. On failure sf holds
 * nothing (releasing it again is harmless).
 */
int shape_file_load(struct shape_file *sf, const char *path, const char *text);
void shape_file_release(struct shape_file *sf);

/* Top-level keys, in file order. */
void shape_file_keys(const struct shape_file *sf, struct strvec *keys);

struct shape_lookup {
	const char *key;    /* the key FlagGems will use, or NULL */
	int via_class;      /* 1 when key is a class of the chain, not the op */
	size_t count;       /* number of shapes under it */
	char *problem;      /* malformed entry: a sentence, else NULL */
};

/*
 * Resolve the entry for op_name along chain (class names, most derived
 * first; may be NULL). The result points into sf (problem is owned by the
 * caller: free it). A problem is a malformed entry, or a dimension that is
 * no whole number of at least 1 (true/false flags aside), with its line.
 */
void shape_file_lookup(const struct shape_file *sf, const char *op_name,
		       const char *const *chain, struct shape_lookup *out);

/*
 * The value under key in mapping map of sf, following YAML 1.1 merge keys
 * ("<<: *anchor") as PyYAML does for FlagGems; NULL when absent.
 */
yaml_node_t *shape_file_map_get(const struct shape_file *sf, yaml_node_t *map,
				const char *key);

/*
 * Write the archived copy: a comment header (source, op, level, mode)
 * followed by the exact text parsed, so the file a run used can be read
 * back and passed to FlagGems again unchanged.
 */
int shape_file_archive(const struct shape_file *sf, const char *dest,
		       const char *header_comment);

#endif
