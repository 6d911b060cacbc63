/*
 * Splitting a Python literal's repr() into its top-level items.
 *
 * FlagGems prints each input's "Size Detail" as str() of a Python value:
 * a list of arguments, an (args, kwargs) tuple, or a dict. To show only
 * what differs between rows, the table renderer needs those arguments one
 * by one, without evaluating anything:
 *
 *     "[a, b, [c, d]]"                        LIST  "a", "b", "[c, d]"
 *     "(x, {'out': torch.Size([1024])})"      TUPLE "x", "{'out': torch.Size([1024])}"
 *     "{'a': 1, 'b': [2, 3]}"                 DICT  "'a': 1", "'b': [2, 3]"
 *                                                   keys "'a'", "'b'"; values "1", "[2, 3]"
 *     "torch.Size([1024])", "1", "'x, y'"     SCALAR, the whole text as one item
 *
 * Items are the text of the repr, trimmed; nothing is unescaped or
 * normalised. (), [] and {} nest; '...' and "..." strings with backslash
 * escapes hide any bracket, comma or colon inside them.
 */
#ifndef ZLB_PYREPR_H
#define ZLB_PYREPR_H

#include <stddef.h>

#include "lib/strbuf.h"
#include "lib/strvec.h"

enum pyrepr_kind {
	PYREPR_SCALAR,
	PYREPR_LIST,
	PYREPR_TUPLE,
	PYREPR_DICT,
	PYREPR_SET,	/* "{1, 2}": braces whose items have no ':' */
};

struct pyrepr {
	enum pyrepr_kind kind;
	struct strvec items;	/* top-level items */
	struct strvec keys;	/* DICT only: each item's text before its ':' */
	struct strvec values;	/* DICT only: each item's text after its ':' */
};

#define PYREPR_INIT { PYREPR_SCALAR, STRVEC_INIT, STRVEC_INIT, STRVEC_INIT }

/* Nesting deeper than this is refused as malformed. */
#define PYREPR_MAX_DEPTH 256

/*
 * Split s (len bytes, or up to its NUL) into out, which must have been
 * initialised; its previous contents are replaced. Returns the number of
 * items, or -1 when s is not a well-formed repr (empty, unbalanced
 * brackets, an unterminated string, an empty item as in "[1, , 2]", a
 * comma at the top level of a scalar, text after the closing bracket);
 * out is then empty. A trailing comma is accepted ("(1,)" has one item).
 *
 * Bad input is an expected answer here, not an error: callers fall back
 * to the unsplit text, so nothing is reported through error().
 */
int pyrepr_split(const char *s, struct pyrepr *out);
int pyrepr_split_mem(const char *s, size_t len, struct pyrepr *out);

void pyrepr_release(struct pyrepr *p);

/*
 * Split one dict item "'a': [1, 2]" at its top-level ':' into trimmed key
 * and value (appended to the strbufs, which are reset first). Returns 0,
 * or -1 when there is no top-level ':' or either side is empty.
 */
int pyrepr_dict_item(const char *item, struct strbuf *key, struct strbuf *value);

/*
 * If s is a plain quoted string ('out' or "out", no backslash inside),
 * set out to what is between the quotes and return 0; otherwise -1.
 */
int pyrepr_unquote(const char *s, struct strbuf *out);

/* "scalar", "list", "tuple", "dict", "set". */
const char *pyrepr_kind_name(enum pyrepr_kind kind);

#endif
