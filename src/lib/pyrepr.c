#include "lib/pyrepr.h"

#include <string.h>

/* Returned by the scanners for "this is not a well-formed repr". */
#define BAD ((size_t)-1)
/* A separator that matches no byte: scan for balance only. */
#define NO_SEP (-1)

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	       c == '\f' || c == '\v';
}

static void push_span(struct strvec *sv, const char *s, size_t n)
{
	strvec_pushf(sv, "%.*s", (int)n, s);
}

static void trim(const char *s, size_t *start, size_t *end)
{
	while (*start < *end && is_space(s[*start]))
		(*start)++;
	while (*end > *start && is_space(s[*end - 1]))
		(*end)--;
}

/* Index of the quote closing the string opened at s[at], or BAD. */
static size_t skip_string(const char *s, size_t len, size_t at)
{
	char q = s[at];
	size_t i = at + 1;

	while (i < len) {
		if (s[i] == '\\')
			i += 2;
		else if (s[i] == q)
			return i;
		else
			i++;
	}
	return BAD;
}

/*
 * Index of the first sep in s[from..len) that is outside every string and
 * every bracket opened after from; len when there is none. BAD when the
 * text up to there is unbalanced: a closer with no opener (so the caller's
 * region ends early, as in "1] + [2"), a mismatched closer, an
 * unterminated string, or brackets still open at len.
 */
static size_t next_top(const char *s, size_t len, size_t from, int sep)
{
	char expect[PYREPR_MAX_DEPTH];
	size_t depth = 0, i;

	for (i = from; i < len; i++) {
		char c = s[i];

		if (!depth && (unsigned char)c == sep)
			return i;
		switch (c) {
		case '\'':
		case '"':
			i = skip_string(s, len, i);
			if (i == BAD)
				return BAD;
			break;
		case '(':
		case '[':
		case '{':
			if (depth == PYREPR_MAX_DEPTH)
				return BAD;
			expect[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
			break;
		case ')':
		case ']':
		case '}':
			if (!depth || expect[depth - 1] != c)
				return BAD;
			depth--;
			break;
		}
	}
	return depth ? BAD : len;
}

/*
 * Push the comma-separated items of s[0..len) (a container's inside).
 * Empty items are malformed, except that the whole may be empty and the
 * last comma may trail, as Python writes (1,).
 */
static int split_items(const char *s, size_t len, struct strvec *out)
{
	size_t start = 0;

	for (;;) {
		size_t end = next_top(s, len, start, ',');
		size_t a = start, b;

		if (end == BAD)
			return -1;
		b = end;
		trim(s, &a, &b);
		if (a == b) {
			int last = end == len;
			int empty_whole = last && !out->nr && !start;
			int trailing = last && out->nr && start;

			if (empty_whole || trailing)
				return 0;
			return -1;
		}
		push_span(out, s + a, b - a);
		if (end == len)
			return 0;
		start = end + 1;
	}
}

/*
 * Split s at its top-level ':'. Returns 0, 1 when there is no such colon
 * (a set item), or -1 when the text is unbalanced or a side is empty.
 */
static int split_key_value(const char *s, size_t len,
			   size_t *ka, size_t *kb, size_t *va, size_t *vb)
{
	size_t colon = next_top(s, len, 0, ':');

	if (colon == BAD)
		return -1;
	if (colon == len)
		return 1;
	*ka = 0;
	*kb = colon;
	*va = colon + 1;
	*vb = len;
	trim(s, ka, kb);
	trim(s, va, vb);
	return *ka < *kb && *va < *vb ? 0 : -1;
}

static void reset(struct pyrepr *p)
{
	p->kind = PYREPR_SCALAR;
	strvec_clear(&p->items);
	strvec_clear(&p->keys);
	strvec_clear(&p->values);
}

/* Sort the items of a brace pair into a dict or a set. */
static int classify_braces(struct pyrepr *out)
{
	size_t i, with_colon = 0;

	for (i = 0; i < out->items.nr; i++) {
		const char *item = out->items.v[i];
		size_t ka, kb, va, vb;
		int r = split_key_value(item, strlen(item), &ka, &kb, &va, &vb);

		if (r < 0)
			return -1;
		if (r)
			continue;
		with_colon++;
		push_span(&out->keys, item + ka, kb - ka);
		push_span(&out->values, item + va, vb - va);
	}
	if (with_colon == out->items.nr) {
		out->kind = PYREPR_DICT;
		return 0;
	}
	if (!with_colon) {
		out->kind = PYREPR_SET;
		return 0;
	}
	return -1;
}

int pyrepr_split_mem(const char *s, size_t len, struct pyrepr *out)
{
	size_t a = 0, b = len;
	char open, close;

	reset(out);
	trim(s, &a, &b);
	if (a == b)
		return -1;
	s += a;
	len = b - a;

	open = s[0];
	close = open == '[' ? ']' : open == '(' ? ')' : open == '{' ? '}' : 0;
	if (!close) {
		/* A scalar: balanced, and no comma that would make it a bare tuple. */
		if (next_top(s, len, 0, ',') != len)
			return -1;
		out->kind = PYREPR_SCALAR;
		push_span(&out->items, s, len);
		return 1;
	}

	/*
	 * The opener must be closed by the last byte: next_top() on the inside
	 * fails on the stray closer of "[1] + [2]" and on "[1, 2".
	 */
	if (len < 2 || s[len - 1] != close ||
	    next_top(s + 1, len - 2, 0, NO_SEP) != len - 2)
		return -1;
	if (split_items(s + 1, len - 2, &out->items))
		goto bad;
	out->kind = open == '[' ? PYREPR_LIST : open == '(' ? PYREPR_TUPLE : PYREPR_DICT;
	if (open == '{' && classify_braces(out))
		goto bad;
	return (int)out->items.nr;
bad:
	reset(out);
	return -1;
}

int pyrepr_split(const char *s, struct pyrepr *out)
{
	return pyrepr_split_mem(s, strlen(s), out);
}

void pyrepr_release(struct pyrepr *p)
{
	reset(p);
}

int pyrepr_dict_item(const char *item, struct strbuf *key, struct strbuf *value)
{
	size_t ka, kb, va, vb;

	strbuf_reset(key);
	strbuf_reset(value);
	if (split_key_value(item, strlen(item), &ka, &kb, &va, &vb))
		return -1;
	strbuf_add(key, item + ka, kb - ka);
	strbuf_add(value, item + va, vb - va);
	return 0;
}

int pyrepr_unquote(const char *s, struct strbuf *out)
{
	size_t len = strlen(s);

	if (len < 2 || (s[0] != '\'' && s[0] != '"') || s[len - 1] != s[0])
		return -1;
	if (memchr(s + 1, '\\', len - 2) || memchr(s + 1, s[0], len - 2))
		return -1;
	strbuf_reset(out);
	strbuf_add(out, s + 1, len - 2);
	return 0;
}

const char *pyrepr_kind_name(enum pyrepr_kind kind)
{
	switch (kind) {
	case PYREPR_SCALAR:
		return "scalar";
	case PYREPR_LIST:
		return "list";
	case PYREPR_TUPLE:
		return "tuple";
	case PYREPR_DICT:
		return "dict";
	case PYREPR_SET:
		return "set";
	}
	return "?";
}
