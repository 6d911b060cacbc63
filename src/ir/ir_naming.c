/*
 * Readable names for the IR files of a run (ir_naming.h). About 770 lines
 * in one file because it is one algorithm: a name is built from the
 * shape, the kernel and its specialisation, then shortened as far as it
 * stays unique among every other name of the run, so the abbreviation,
 * the collision rules and the folding of Size Details must see the same
 * state; split, each part would need all of it.
 */
#include "ir/ir_naming.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "lib/pyrepr.h"

const char *const ir_reserved_params[] = { "w", "s", "c", NULL };

/* Nesting followed inside a Size Detail before a value counts as one leaf. */
#define WALK_MAX_DEPTH 16

static int allowed(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' ||
	       c == '=' || c == '-';
}

void ir_hex8(const char *s, char out[9])
{
	XXH64_hash_t h = XXH3_64bits(s, strlen(s));

	snprintf(out, 9, "%08x", (unsigned)(h & 0xffffffffu));
}

void ir_sanitize(const char *s, size_t cap, const char *empty_as, struct strbuf *out)
{
	struct strbuf sb = STRBUF_INIT;
	size_t start = 0, end;

	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		char c = allowed(*p) ? (char)*p : '-';
		if ((c == '-' || c == '_' || c == '.') && sb.len && sb.buf[sb.len - 1] == c)
			continue;
		strbuf_addch(&sb, c);
	}
	end = sb.len;
	while (start < end && (sb.buf[start] == '-' || sb.buf[start] == '_'))
		start++;
	while (end > start && (sb.buf[end - 1] == '-' || sb.buf[end - 1] == '_'))
		end--;
	if (start == end) {
		strbuf_addstr(out, empty_as);
		strbuf_release(&sb);
		return;
	}
	size_t base = out->len;
	if (sb.buf[start] == '.')
		strbuf_addch(out, '_');
	strbuf_add(out, sb.buf + start, end - start);
	if (cap > 12 && out->len - base > cap) {
		char hex[9];
		size_t keep = base + cap - 9;

		ir_hex8(s, hex);
		while (keep > base + 1 && strchr("-_.", out->buf[keep - 1]))
			keep--;
		strbuf_setlen(out, keep);
		strbuf_addch(out, '-');
		strbuf_addstr(out, hex);
	}
	strbuf_release(&sb);
}

void ir_initials(const char *name, struct strbuf *out)
{
	struct strvec words = STRVEC_INIT;

	strvec_split(&words, name, "_");
	if (words.nr <= 1) {
		strbuf_addstr(out, name);
	} else {
		for (size_t i = 0; i < words.nr; i++)
			strbuf_addch(out, words.v[i][0]);
	}
	strvec_clear(&words);
}

void ir_abbrevs_build(struct ir_abbrevs *ab, const struct strvec *names,
		      const char *const *reserved)
{
	struct strvec sorted = STRVEC_INIT;
	char **cand;
	unsigned char *dup;

	ir_abbrevs_release(ab);
	strvec_pushv(&sorted, (const char *const *)names->v);
	strvec_sort_unique(&sorted);
	ab->nr = sorted.nr;
	ab->names = xcalloc(sorted.nr + 1, sizeof(char *));
	ab->abbrs = xcalloc(sorted.nr + 1, sizeof(char *));
	ab->used = xcalloc(sorted.nr + 1, 1);
	cand = xcalloc(sorted.nr + 1, sizeof(char *));
	dup = xcalloc(sorted.nr + 1, 1);
	/* The initials, as they would appear in a file name. */
	for (size_t i = 0; i < sorted.nr; i++) {
		struct strbuf ini = STRBUF_INIT, sb = STRBUF_INIT;
		ab->names[i] = xstrdup(sorted.v[i]);
		ir_initials(sorted.v[i], &ini);
		ir_sanitize(ini.buf, 40, "p", &sb);
		cand[i] = strbuf_detach(&sb, NULL);
		strbuf_release(&ini);
	}
	/* Ambiguous or reserved initials: the full name instead. */
	for (size_t i = 0; i < sorted.nr; i++) {
		int clash = strlist_has(reserved, cand[i]);
		struct strbuf sb = STRBUF_INIT;

		for (size_t j = 0; j < sorted.nr && !clash; j++)
			if (j != i && !strcmp(cand[i], cand[j]))
				clash = 1;
		if (!clash) {
			ab->abbrs[i] = xstrdup(cand[i]);
			continue;
		}
		ir_sanitize(ab->names[i], 64, "p", &sb);
		if (strlist_has(reserved, sb.buf))
			strbuf_addch(&sb, '_');
		ab->abbrs[i] = strbuf_detach(&sb, NULL);
	}
	/* Names that still read the same once cleaned ("x", "_x"): add a hash of each. */
	for (size_t i = 0; i < sorted.nr; i++)
		for (size_t j = 0; j < sorted.nr && !dup[i]; j++)
			if (j != i && !strcmp(ab->abbrs[i], ab->abbrs[j]))
				dup[i] = 1;
	for (size_t i = 0; i < sorted.nr; i++) {
		if (dup[i]) {
			char hex[9];
			char *old = ab->abbrs[i];
			ir_hex8(ab->names[i], hex);
			ab->abbrs[i] = xstrfmt("%s-%s", old, hex);
			free(old);
		}
		free(cand[i]);
	}
	free(cand);
	free(dup);
	strvec_clear(&sorted);
}

int ir_abbrevs_find(const struct ir_abbrevs *ab, const char *name)
{
	size_t lo = 0, hi = ab->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, ab->names[mid]);
		if (!c)
			return (int)mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

void ir_abbrevs_release(struct ir_abbrevs *ab)
{
	for (size_t i = 0; i < ab->nr; i++) {
		free(ab->names[i]);
		free(ab->abbrs[i]);
	}
	free(ab->names);
	free(ab->abbrs);
	free(ab->used);
	memset(ab, 0, sizeof(*ab));
}

void ir_dtype_short(const char *dtype, struct strbuf *out)
{
	static const char *const map[][2] = {
		{ "float16", "fp16" }, { "half", "fp16" },
		{ "bfloat16", "bf16" },
		{ "float32", "fp32" }, { "float", "fp32" },
		{ "float64", "fp64" }, { "double", "fp64" },
		{ "int8", "i8" }, { "int16", "i16" }, { "int32", "i32" }, { "int64", "i64" },
		{ "short", "i16" }, { "int", "i32" }, { "long", "i64" },
		{ "uint8", "u8" }, { "uint16", "u16" }, { "uint32", "u32" }, { "uint64", "u64" },
		{ "bool", "bool" },
		{ "complex32", "c32" }, { "complex64", "c64" }, { "complex128", "c128" },
		{ "cfloat", "c64" }, { "cdouble", "c128" },
	};
	const char *rest;

	if (!dtype || !*dtype) {
		strbuf_addstr(out, "nodtype");
		return;
	}
	if (!skip_prefix(dtype, "torch.", &rest))
		rest = dtype;
	for (size_t i = 0; i < sizeof(map) / sizeof(*map); i++) {
		if (!strcmp(rest, map[i][0])) {
			strbuf_addstr(out, map[i][1]);
			return;
		}
	}
	if (skip_prefix(rest, "float8_", &rest)) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addstr(&sb, "fp8");
		for (const char *p = rest; *p; p++)
			if (*p != '_')
				strbuf_addch(&sb, *p);
		ir_sanitize(sb.buf, 32, "fp8", out);
		strbuf_release(&sb);
		return;
	}
	ir_sanitize(rest, 32, "nodtype", out);
}

/* ---- Size Detail texts ------------------------------------------------- */

typedef void (*leaf_fn)(void *ctx, const char *path, const char *key, const char *text);

/* Visit the leaves of a repr in order; path names each leaf's position. */
static void walk(const char *text, struct strbuf *path, const char *key, int depth,
		 leaf_fn fn, void *ctx)
{
	struct pyrepr p = PYREPR_INIT;
	int n = depth < WALK_MAX_DEPTH ? pyrepr_split(text, &p) : -1;
	size_t len = path->len;

	if (n < 0 || p.kind == PYREPR_SCALAR) {
		fn(ctx, path->buf, key, text);
		pyrepr_release(&p);
		return;
	}
	for (size_t i = 0; i < p.items.nr; i++) {
		if (p.kind == PYREPR_DICT) {
			struct strbuf k = STRBUF_INIT;
			if (pyrepr_unquote(p.keys.v[i], &k))
				strbuf_addstr(&k, p.keys.v[i]);
			strbuf_addf(path, "/k:%s", k.buf);
			walk(p.values.v[i], path, k.buf, depth + 1, fn, ctx);
			strbuf_release(&k);
		} else {
			strbuf_addf(path, "/%zu", i);
			walk(p.items.v[i], path, key, depth + 1, fn, ctx);
		}
		strbuf_setlen(path, len);
	}
	pyrepr_release(&p);
}

/* "torch.Size([4, 8])" -> "4x8", "torch.Size([])" -> "scalar". 0, or 1 when not a Size. */
static int size_dims(const char *text, struct strbuf *out)
{
	const char *rest;
	size_t len;
	struct pyrepr p = PYREPR_INIT;

	if (!skip_prefix(text, "torch.Size(", &rest))
		return 1;
	len = strlen(rest);
	if (!len || rest[len - 1] != ')')
		return 1;
	if (pyrepr_split_mem(rest, len - 1, &p) < 0 ||
	    (p.kind != PYREPR_LIST && p.kind != PYREPR_TUPLE)) {
		pyrepr_release(&p);
		return 1;
	}
	if (!p.items.nr)
		strbuf_addstr(out, "scalar");
	for (size_t i = 0; i < p.items.nr; i++) {
		if (i)
			strbuf_addch(out, 'x');
		strbuf_addstr(out, p.items.v[i]);
	}
	pyrepr_release(&p);
	return 0;
}

struct first_size {
	struct strbuf *out;
	int found;
};

static void first_size_leaf(void *ctx, const char *path, const char *key, const char *text)
{
	struct first_size *fs = ctx;
	struct strbuf dims = STRBUF_INIT;

	if (!fs->found && !size_dims(text, &dims)) {
		strbuf_addstr(fs->out, dims.buf);
		fs->found = 1;
	}
	strbuf_release(&dims);
}

int ir_shape_dims(const char *detail, struct strbuf *out)
{
	struct strbuf path = STRBUF_INIT;
	struct strbuf dims = STRBUF_INIT;
	struct first_size fs = { &dims, 0 };

	if (detail)
		walk(detail, &path, NULL, 0, first_size_leaf, &fs);
	strbuf_release(&path);
	if (fs.found)
		strbuf_addstr(out, dims.buf);
	strbuf_release(&dims);
	return fs.found ? 0 : 1;
}

/* The leaves of one detail: paths[i] -> labels[i]. */
struct leaves {
	struct strvec paths;
	struct strvec labels;
};

static void leaf_label(const char *key, const char *text, struct strbuf *out)
{
	struct strbuf v = STRBUF_INIT;

	if (size_dims(text, &v) && pyrepr_unquote(text, &v))
		strbuf_addstr(&v, text);
	if (key)
		strbuf_addf(out, "%s=%s", key, v.buf);
	else
		strbuf_addstr(out, v.buf);
	strbuf_release(&v);
}

static void collect_leaf(void *ctx, const char *path, const char *key, const char *text)
{
	struct leaves *l = ctx;
	struct strbuf label = STRBUF_INIT;

	leaf_label(key, text, &label);
	strvec_push(&l->paths, path);
	strvec_push(&l->labels, label.buf);
	strbuf_release(&label);
}

static const char *leaf_get(const struct leaves *l, const char *path)
{
	int i = strvec_find(&l->paths, path);
	return i < 0 ? NULL : l->labels.v[i];
}

struct detail_ref {
	const char *detail;
	size_t index;		/* into the caller's arrays */
	char *base;
};

static int cmp_ref(const void *a, const void *b)
{
	const struct detail_ref *x = a, *y = b;
	int c = strcmp(x->base, y->base);
	return c ? c : strcmp(x->detail, y->detail);
}

/* Name the details refs[0..n) that share one base name. */
static void name_group(struct detail_ref *refs, size_t n, char **out)
{
	struct leaves *lv = xcalloc(n, sizeof(*lv));
	struct strvec order = STRVEC_INIT;	/* every path, in first-seen order */
	unsigned char *varies;

	for (size_t i = 0; i < n; i++) {
		struct strbuf path = STRBUF_INIT;
		walk(refs[i].detail, &path, NULL, 0, collect_leaf, &lv[i]);
		strbuf_release(&path);
		for (size_t j = 0; j < lv[i].paths.nr; j++)
			if (strvec_find(&order, lv[i].paths.v[j]) < 0)
				strvec_push(&order, lv[i].paths.v[j]);
	}
	varies = xcalloc(order.nr + 1, 1);
	for (size_t k = 0; k < order.nr; k++) {
		const char *first = leaf_get(&lv[0], order.v[k]);
		for (size_t i = 1; i < n && !varies[k]; i++) {
			const char *l = leaf_get(&lv[i], order.v[k]);
			if (!first || !l || strcmp(first, l))
				varies[k] = 1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct strbuf raw = STRBUF_INIT, name = STRBUF_INIT;

		strbuf_addstr(&raw, refs[i].base);
		for (size_t k = 0; k < order.nr; k++) {
			const char *l = varies[k] ? leaf_get(&lv[i], order.v[k]) : NULL;
			if (l)
				strbuf_addf(&raw, "_%s", l);
		}
		ir_sanitize(raw.buf, IR_NAME_CAP, refs[i].base, &name);
		out[refs[i].index] = strbuf_detach(&name, NULL);
		strbuf_release(&raw);
		strvec_clear(&lv[i].paths);
		strvec_clear(&lv[i].labels);
	}
	free(varies);
	free(lv);
	strvec_clear(&order);
}

void ir_shape_names(const char *const *details, size_t n, char **out)
{
	struct detail_ref *refs = xcalloc(n + 1, sizeof(*refs));
	size_t i, j;

	for (i = 0; i < n; i++) {
		struct strbuf dims = STRBUF_INIT, base = STRBUF_INIT;

		refs[i].detail = details[i] ? details[i] : "";
		refs[i].index = i;
		if (ir_shape_dims(refs[i].detail, &dims))
			strbuf_addstr(&dims, "noshape");
		ir_sanitize(dims.buf, IR_NAME_CAP, "noshape", &base);
		refs[i].base = strbuf_detach(&base, NULL);
		strbuf_release(&dims);
	}
	qsort(refs, n, sizeof(*refs), cmp_ref);
	for (i = 0; i < n; i = j) {
		size_t distinct = 1;
		for (j = i + 1; j < n && !strcmp(refs[j].base, refs[i].base); j++)
			if (strcmp(refs[j].detail, refs[j - 1].detail))
				distinct++;
		if (distinct == 1) {
			for (size_t k = i; k < j; k++)
				out[refs[k].index] = xstrdup(refs[k].base);
		} else {
			name_group(refs + i, j - i, out);
		}
	}
	/* Two different texts that still read the same: tell them apart by a hash. */
	unsigned char *clash = xcalloc(n + 1, 1);
	for (i = 0; i < n; i++)
		for (j = 0; j < n && !clash[i]; j++)
			if (strcmp(refs[i].detail, refs[j].detail) &&
			    !strcmp(out[refs[i].index], out[refs[j].index]))
				clash[i] = 1;
	for (i = 0; i < n; i++) {
		if (clash[i]) {
			char hex[9];
			char *old = out[refs[i].index];
			ir_hex8(refs[i].detail, hex);
			out[refs[i].index] = xstrfmt("%s_%s", old, hex);
			free(old);
		}
		free(refs[i].base);
	}
	free(clash);
	free(refs);
}

/* ---- Variants ---------------------------------------------------------- */

void ir_value_text(const json_t *v, struct strbuf *out)
{
	char *text;

	switch (json_typeof(v)) {
	case JSON_TRUE:
		strbuf_addch(out, '1');
		break;
	case JSON_FALSE:
		strbuf_addch(out, '0');
		break;
	case JSON_INTEGER:
		strbuf_addf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		strbuf_addf(out, "%.9g", json_real_value(v));
		break;
	case JSON_STRING:
		strbuf_addstr(out, json_string_value(v));
		break;
	case JSON_NULL:
		strbuf_addstr(out, "None");
		break;
	default:
		text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		strbuf_addstr(out, text ? text : "?");
		free(text);
		break;
	}
}

static void arg_short(const json_t *a, struct ir_abbrevs *args, struct strvec *shorts)
{
	struct strbuf sb = STRBUF_INIT;

	if (json_is_string(a)) {
		int i = args ? ir_abbrevs_find(args, json_string_value(a)) : -1;
		if (i >= 0) {
			args->used[i] = 1;
			strbuf_addstr(&sb, args->abbrs[i]);
		} else {
			ir_sanitize(json_string_value(a), 40, "arg", &sb);
		}
	} else if (json_is_integer(a)) {
		strbuf_addf(&sb, "a%" JSON_INTEGER_FORMAT, json_integer_value(a));
	} else {
		return;
	}
	strvec_push(shorts, sb.buf);
	strbuf_release(&sb);
}

static void join_shorts(const json_t *list, struct ir_abbrevs *args, struct strbuf *out)
{
	struct strvec shorts = STRVEC_INIT;
	size_t i;
	const json_t *a;
	int long_one = 0;

	json_array_foreach(list, i, a)
		arg_short(a, args, &shorts);
	strvec_sort_unique(&shorts);
	for (i = 0; i < shorts.nr; i++)
		if (strlen(shorts.v[i]) > 1)
			long_one = 1;
	for (i = 0; i < shorts.nr; i++) {
		if (i && long_one)
			strbuf_addch(out, '-');
		strbuf_addstr(out, shorts.v[i]);
	}
	strvec_clear(&shorts);
}

void ir_spec_suffix(const json_t *spec, struct ir_abbrevs *args, struct strbuf *out)
{
	const json_t *div16 = json_object_get(spec, "div16");
	const json_t *equal1 = json_object_get(spec, "equal1");
	size_t start = out->len;

	if (!json_is_object(spec)) {
		strbuf_addstr(out, "nospec");
		return;
	}
	join_shorts(json_is_array(div16) ? div16 : NULL, args, out);
	strbuf_addstr(out, out->len == start ? "nodiv16" : "div16");
	if (json_is_array(equal1) && json_array_size(equal1)) {
		size_t mark;
		strbuf_addch(out, '_');
		mark = out->len;
		join_shorts(equal1, args, out);
		if (out->len == mark)
			strbuf_setlen(out, mark - 1);
		else
			strbuf_addstr(out, "eq1");
	}
}

static int same_value(const json_t *a, const json_t *b)
{
	if (!a || !b)
		return !a && !b;
	return json_equal((json_t *)a, (json_t *)b);
}

struct name_ref {
	size_t i;
	const struct strbuf *name;
	const char *hash;
};

static int cmp_name_ref(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;
	int c = strcmp(x->name->buf, y->name->buf);
	return c ? c : strcmp(x->hash, y->hash);
}

enum stage { STAGE_DTYPE, STAGE_SPEC, STAGE_HASH };

static void hash_text(const char *hash, struct strbuf *out)
{
	size_t start = out->len;

	for (const char *p = hash; *p && out->len - start < 64; p++)
		if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z'))
			strbuf_addch(out, *p);
		else if (*p >= 'A' && *p <= 'Z')
			strbuf_addch(out, (char)(*p - 'A' + 'a'));
	if (out->len == start) {
		char hex[9];
		ir_hex8(hash, hex);
		strbuf_addstr(out, hex);
	}
}

/* Append the stage's suffix to every member of each set of equal names. */
static int resolve_stage(const struct ir_variant_desc *v, size_t n, struct strbuf *names,
			 enum stage st)
{
	struct name_ref *refs = xcalloc(n + 1, sizeof(*refs));
	int used = 0;
	size_t a, b;

	for (size_t i = 0; i < n; i++) {
		refs[i].i = i;
		refs[i].name = &names[i];
		refs[i].hash = v[i].hash;
	}
	qsort(refs, n, sizeof(*refs), cmp_name_ref);
	for (a = 0; a < n; a = b) {
		size_t m;
		struct strvec vals = STRVEC_INIT;
		int all_same = 1;

		for (b = a + 1; b < n && !strcmp(refs[b].name->buf, refs[a].name->buf); b++)
			;
		m = b - a;
		if (m < 2)
			continue;
		for (size_t k = a; k < b; k++) {
			const struct ir_variant_desc *d = &v[refs[k].i];
			struct strbuf sb = STRBUF_INIT;

			if (st == STAGE_DTYPE)
				ir_sanitize(d->dtype, 24, "nodtype", &sb);
			else if (st == STAGE_SPEC)
				ir_sanitize(d->spec, 48, "nospec", &sb);
			else
				hash_text(d->hash, &sb);
			strvec_push(&vals, sb.buf);
			strbuf_release(&sb);
			if (k > a && strcmp(vals.v[k - a], vals.v[0]))
				all_same = 0;
		}
		if (st != STAGE_HASH) {
			if (!all_same) {
				for (size_t k = a; k < b; k++)
					strbuf_addf(&names[refs[k].i], "__%s", vals.v[k - a]);
				used = 1;
			}
		} else {
			/* The shortest prefix (8, 12, 16, ... hex) that tells them apart. */
			size_t len = 8, longest = 0;
			for (size_t k = 0; k < m; k++)
				if (strlen(vals.v[k]) > longest)
					longest = strlen(vals.v[k]);
			for (;; len += 4) {
				int clash = 0;
				for (size_t x = 0; x < m && !clash; x++)
					for (size_t y = x + 1; y < m && !clash; y++)
						if (!strncmp(vals.v[x], vals.v[y], len))
							clash = 1;
				if (!clash || len >= longest)
					break;
			}
			for (size_t k = a; k < b; k++) {
				strbuf_addf(&names[refs[k].i], "__h%.*s", (int)len, vals.v[k - a]);
				/* Equal after cleaning (never for real hashes): number them. */
				for (size_t y = 0; y < m; y++)
					if (y != k - a && !strncmp(vals.v[k - a], vals.v[y], len)) {
						strbuf_addf(&names[refs[k].i], "_%zu", k - a + 1);
						break;
					}
			}
			used = 1;
		}
		strvec_clear(&vals);
	}
	free(refs);
	return used;
}

/*
 * Lengths: a base of at most IR_NAME_CAP, "__" + 24 (dtype), "__" + 48
 * (specialisation), "__h" + at most 64 (hash) and "_<n>" keep a variant
 * name and its ".<stage>" under NAME_MAX (255).
 */
unsigned ir_name_variants(const struct ir_variant_desc *v, size_t n,
			  struct ir_abbrevs *ab, char **names)
{
	struct strvec keys = STRVEC_INIT;
	struct strbuf *sb = xcalloc(n + 1, sizeof(*sb));
	unsigned char *differs;
	int dw = 0, ds = 0, dc = 0;
	unsigned used = 0;

	for (size_t i = 0; i < n; i++) {
		const char *k;
		const json_t *val;
		json_object_foreach((json_t *)v[i].constexprs, k, val)
			strvec_push(&keys, k);
	}
	strvec_sort_unique(&keys);
	differs = xcalloc(keys.nr + 1, 1);
	for (size_t k = 0; k < keys.nr; k++)
		for (size_t i = 1; i < n && !differs[k]; i++)
			if (!same_value(json_object_get(v[0].constexprs, keys.v[k]),
					json_object_get(v[i].constexprs, keys.v[k])))
				differs[k] = 1;
	for (size_t i = 1; i < n; i++) {
		dw |= v[i].num_warps != v[0].num_warps;
		ds |= v[i].num_stages != v[0].num_stages;
		dc |= v[i].num_ctas != v[0].num_ctas;
	}

	for (size_t i = 0; i < n; i++) {
		struct strbuf raw = STRBUF_INIT, block = STRBUF_INIT;

		for (size_t k = 0; k < keys.nr; k++) {
			const json_t *val = json_object_get(v[i].constexprs, keys.v[k]);
			struct strbuf text = STRBUF_INIT;
			const char *abbr = keys.v[k];
			int at = ab ? ir_abbrevs_find(ab, keys.v[k]) : -1;
			size_t alen;

			if (!differs[k] || !val)
				continue;
			if (at >= 0) {
				abbr = ab->abbrs[at];
				ab->used[at] = 1;
			}
			ir_value_text(val, &text);
			alen = strlen(abbr);
			if (raw.len)
				strbuf_addch(&raw, '_');
			strbuf_addstr(&raw, abbr);
			if (!((text.buf[0] >= '0' && text.buf[0] <= '9') || text.buf[0] == '-') ||
			    (alen && abbr[alen - 1] >= '0' && abbr[alen - 1] <= '9'))
				strbuf_addch(&raw, '=');
			strbuf_addstr(&raw, text.buf);
			strbuf_release(&text);
		}
		if (dw && v[i].num_warps >= 0)
			strbuf_addf(&block, "w%d", v[i].num_warps);
		if (ds && v[i].num_stages >= 0)
			strbuf_addf(&block, "s%d", v[i].num_stages);
		if (dc && v[i].num_ctas >= 0)
			strbuf_addf(&block, "c%d", v[i].num_ctas);
		if (block.len) {
			if (raw.len)
				strbuf_addch(&raw, '_');
			strbuf_addstr(&raw, block.buf);
		}
		if (!raw.len) {
			if (v[i].num_warps >= 0 && v[i].num_stages >= 0)
				strbuf_addf(&raw, "w%ds%d", v[i].num_warps, v[i].num_stages);
			else
				strbuf_addstr(&raw, "unknown");
		}
		ir_sanitize(raw.buf, IR_NAME_CAP, "unknown", &sb[i]);
		strbuf_release(&raw);
		strbuf_release(&block);
	}

	if (resolve_stage(v, n, sb, STAGE_DTYPE))
		used |= IR_SUFFIX_DTYPE;
	if (resolve_stage(v, n, sb, STAGE_SPEC))
		used |= IR_SUFFIX_SPEC;
	if (resolve_stage(v, n, sb, STAGE_HASH))
		used |= IR_SUFFIX_HASH;

	for (size_t i = 0; i < n; i++)
		names[i] = strbuf_detach(&sb[i], NULL);
	free(sb);
	free(differs);
	strvec_clear(&keys);
	return used;
}
