/*
 * ir_naming.c: path-safe names, initials and abbreviation tables, dtype
 * short forms, shape directory names, the specialisation suffix, and the
 * variant names of one (shape, kernel) group with each collision stage.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir_naming.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

/* Every byte in the set the tree allows, and not a name that escapes. */
static void assert_safe(const char *name)
{
	assert_non_null(name);
	assert_true(*name);
	if (name[0] == '.' || name[0] == '-')
		fail_msg("'%s' starts with '%c'", name, name[0]);
	for (const char *p = name; *p; p++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+=-", *p))
			fail_msg("'%s' holds byte 0x%02x", name, (unsigned char)*p);
	{
		/* paths.h's rule for user-given names, with '=' allowed too. */
		char *copy = strdup(name);
		/* Its 200-byte limit is for user input; a file name may reach 255 with ".<stage>". */
		if (strlen(name) > 249)
			fail_msg("'%s' is too long", name);
		if (strlen(copy) > 200)
			copy[200] = '\0';
		for (char *p = copy; *p; p++)
			if (*p == '=')
				*p = '+';
		if (!name_is_safe(copy))
			fail_msg("'%s' is not a safe path component", name);
		free(copy);
	}
}

static char *sanitized(const char *s, size_t cap)
{
	struct strbuf sb = STRBUF_INIT;
	ir_sanitize(s, cap, "EMPTY", &sb);
	return strbuf_detach(&sb, NULL);
}

static void sanitize(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "softmax_kernel_inner", "softmax_kernel_inner" },
		{ "a/b c", "a-b-c" },
		{ "a//  b", "a-b" },
		{ "x__y___z", "x_y_z" },
		{ "--x--", "x" },
		{ "__init__", "init" },
		{ "..", "_." },
		{ "../etc/passwd", "_.-etc-passwd" },
		{ "a...b", "a.b" },
		{ ".hidden", "_.hidden" },
		{ "dim=1", "dim=1" },
		{ "caf\xc3\xa9", "caf" },
		{ "tab\there\nnl", "tab-here-nl" },
		{ "", "EMPTY" },
		{ "///", "EMPTY" },
		{ "1.5e+3", "1.5e+3" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *s = sanitized(cases[i].in, 64);
		if (strcmp(s, cases[i].out))
			fail_msg("sanitize('%s') = '%s', want '%s'", cases[i].in, s, cases[i].out);
		if (strcmp(s, "EMPTY"))
			assert_safe(s);
		free(s);
	}
}

static void sanitize_cap(void **state)
{
	char long1[300], long2[300];
	char *a, *b, *a2;

	memset(long1, 'a', sizeof(long1) - 1);
	long1[sizeof(long1) - 1] = '\0';
	strcpy(long2, long1);
	long2[250] = 'b';	/* differs only beyond the cap */
	a = sanitized(long1, 40);
	b = sanitized(long2, 40);
	a2 = sanitized(long1, 40);
	assert_int_equal(strlen(a), 40);
	assert_int_equal(strlen(b), 40);
	/* Cut names stay apart (a hash of the whole text) and are stable. */
	assert_string_not_equal(a, b);
	assert_string_equal(a, a2);
	assert_int_equal(a[31], '-');
	assert_safe(a);
	free(a);
	free(b);
	free(a2);
}

static void initials(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "BLOCK_SIZE_M", "BSM" },
		{ "BLOCK_M", "BM" },
		{ "block_m", "bm" },
		{ "EVEN", "EVEN" },
		{ "EVEN_K", "EK" },
		{ "_x", "_x" },
		{ "A__B", "AB" },
		{ "num_warps", "nw" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct strbuf sb = STRBUF_INIT;
		ir_initials(cases[i].in, &sb);
		assert_string_equal(sb.buf, cases[i].out);
		strbuf_release(&sb);
	}
}

static const char *abbr(const struct ir_abbrevs *ab, const char *name)
{
	int i = ir_abbrevs_find(ab, name);
	if (i < 0)
		fail_msg("'%s' is not in the table", name);
	return ab->abbrs[i];
}

static void abbrevs(void **state)
{
	struct strvec names = STRVEC_INIT;
	struct ir_abbrevs ab = IR_ABBREVS_INIT;

	/* Duplicates and any order. */
	strvec_pushl(&names, "GROUP_SIZE_M", "BLOCK_SIZE_M", "EVEN", "BLOCK_SIZE_N",
		     "BLOCK_SIZE_M", NULL);
	ir_abbrevs_build(&ab, &names, ir_reserved_params);
	assert_int_equal(ab.nr, 4);
	assert_string_equal(ab.names[0], "BLOCK_SIZE_M");	/* sorted */
	assert_string_equal(abbr(&ab, "BLOCK_SIZE_M"), "BSM");
	assert_string_equal(abbr(&ab, "BLOCK_SIZE_N"), "BSN");
	assert_string_equal(abbr(&ab, "GROUP_SIZE_M"), "GSM");
	assert_string_equal(abbr(&ab, "EVEN"), "EVEN");
	assert_int_equal(ir_abbrevs_find(&ab, "NOPE"), -1);
	strvec_clear(&names);

	/* Ambiguous initials: every name involved keeps its full name. */
	strvec_pushl(&names, "BLOCK_M", "BATCH_M", "BM", "K", "s", "w_", NULL);
	ir_abbrevs_build(&ab, &names, ir_reserved_params);
	assert_string_equal(abbr(&ab, "BLOCK_M"), "BLOCK_M");
	assert_string_equal(abbr(&ab, "BATCH_M"), "BATCH_M");
	assert_string_equal(abbr(&ab, "BM"), "BM");
	assert_string_equal(abbr(&ab, "K"), "K");
	/* A reserved token (num_stages is "s") is never a constexpr's abbreviation. */
	assert_string_equal(abbr(&ab, "s"), "s_");
	assert_string_equal(abbr(&ab, "w_"), "w_");
	ir_abbrevs_release(&ab);
	strvec_clear(&names);

	/* Names that only differ in what cleaning drops still get distinct forms. */
	strvec_pushl(&names, "x", "_x", "x_", NULL);
	ir_abbrevs_build(&ab, &names, ir_reserved_params);
	assert_int_equal(ab.nr, 3);
	for (size_t i = 0; i < ab.nr; i++) {
		assert_true(starts_with(ab.abbrs[i], "x-"));
		assert_int_equal(strlen(ab.abbrs[i]), 10);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(ab.abbrs[i], ab.abbrs[j]);
	}
	/* All distinct. */
	for (size_t i = 0; i < ab.nr; i++)
		for (size_t j = i + 1; j < ab.nr; j++)
			assert_string_not_equal(ab.abbrs[i], ab.abbrs[j]);
	ir_abbrevs_release(&ab);
	strvec_clear(&names);
}

static void dtype_short(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "torch.float16", "fp16" }, { "torch.bfloat16", "bf16" },
		{ "torch.float32", "fp32" }, { "torch.float64", "fp64" },
		{ "torch.int8", "i8" }, { "torch.int32", "i32" }, { "torch.int64", "i64" },
		{ "torch.uint8", "u8" }, { "torch.bool", "bool" }, { "torch.complex64", "c64" },
		{ "torch.float8_e4m3fn", "fp8e4m3fn" }, { "torch.float8_e5m2", "fp8e5m2" },
		{ "float16", "fp16" }, { "torch.weird/type", "weird-type" },
		{ "", "nodtype" }, { NULL, "nodtype" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct strbuf sb = STRBUF_INIT;
		ir_dtype_short(cases[i].in, &sb);
		assert_string_equal(sb.buf, cases[i].out);
		strbuf_release(&sb);
	}
}

static void shape_dims(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "[torch.Size([1024, 1024]), 1]", "1024x1024" },
		{ "torch.Size([4096])", "4096" },
		{ "(torch.Size([2, 3, 4]), {'dim': 1})", "2x3x4" },
		{ "[1, 'x', torch.Size([8, 16])]", "8x16" },
		{ "[[torch.Size([5, 6])], torch.Size([7])]", "5x6" },
		{ "{'input': torch.Size([3, 3]), 'other': torch.Size([9])}", "3x3" },
		{ "[torch.Size([]), 2]", "scalar" },
	};
	static const char *const none[] = {
		"N/A", "[1024, 1024]", "", "['torch.Size([9])']", "[torch.Size([1, 2)", NULL,
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct strbuf sb = STRBUF_INIT;
		assert_int_equal(ir_shape_dims(cases[i].in, &sb), 0);
		if (strcmp(sb.buf, cases[i].out))
			fail_msg("dims('%s') = '%s', want '%s'", cases[i].in, sb.buf, cases[i].out);
		strbuf_release(&sb);
	}
	for (size_t i = 0; none[i]; i++) {
		struct strbuf sb = STRBUF_INIT;
		if (ir_shape_dims(none[i], &sb) != 1)
			fail_msg("'%s' should hold no torch.Size (got '%s')", none[i], sb.buf);
		assert_string_equal(sb.buf, "");
		strbuf_release(&sb);
	}
}

static void check_names(const char *const *details, size_t n, const char *const *want)
{
	char **out = calloc(n, sizeof(char *));

	ir_shape_names(details, n, out);
	for (size_t i = 0; i < n; i++) {
		if (want && want[i] && strcmp(out[i], want[i]))
			fail_msg("shape name of '%s' = '%s', want '%s'", details[i], out[i], want[i]);
		assert_safe(out[i]);
		for (size_t j = 0; j < n; j++)
			if (strcmp(details[i], details[j]) && !strcmp(out[i], out[j]))
				fail_msg("'%s' and '%s' both named '%s'", details[i], details[j], out[i]);
	}
	for (size_t i = 0; i < n; i++)
		free(out[i]);
	free(out);
}

static void shape_names(void **state)
{
	const char *const d1[] = {
		"[torch.Size([64, 64]), 0]",
		"[torch.Size([64, 64]), 1]",
		"[torch.Size([128, 64]), 0]",
		"N/A",
	};
	const char *const w1[] = { "64x64_0", "64x64_1", "128x64", "noshape" };
	const char *const d2[] = {
		"(torch.Size([4, 8]), {'dim': 0})",
		"(torch.Size([4, 8]), {'dim': 1})",
		"[torch.Size([1, 4096]), torch.Size([4096, 1024])]",
		"[torch.Size([1, 4096]), torch.Size([4096, 4096])]",
		"[1024, 1]",
		"[2048, 1]",
		"[torch.Size([]), 3]",
	};
	const char *const w2[] = {
		"4x8_dim=0", "4x8_dim=1", "1x4096_4096x1024", "1x4096_4096x4096",
		"noshape_1024", "noshape_2048", "scalar",
	};
	/* Values that are not path-safe, and two that only differ in unsafe bytes. */
	const char *const d3[] = {
		"[torch.Size([4]), 'a/b']",
		"[torch.Size([4]), 'a b']",
		"[torch.Size([4]), '../..']",
		"[torch.Size([4]), '\\t']",
	};
	const char *const w3[] = { NULL, NULL, "4_.-.", NULL };

	check_names(d1, 4, w1);
	check_names(d2, 7, w2);
	check_names(d3, 4, w3);

	/* The same texts in another order get the same names. */
	{
		const char *const r1[] = { d1[3], d1[1], d1[0], d1[2] };
		const char *const rw[] = { w1[3], w1[1], w1[0], w1[2] };
		check_names(r1, 4, rw);
	}
	/* Equal texts, equal names. */
	{
		const char *const same[] = { d1[0], d1[1], d1[0] };
		const char *const sw[] = { "64x64_0", "64x64_1", "64x64_0" };
		check_names(same, 3, sw);
	}
}

static void spec_suffix(void **state)
{
	struct strvec args = STRVEC_INIT;
	struct ir_abbrevs ab = IR_ABBREVS_INIT;
	struct strbuf sb = STRBUF_INIT;
	json_t *spec;

	strvec_pushl(&args, "x_ptr", "y_ptr", "E", "M", "N", NULL);
	ir_abbrevs_build(&ab, &args, NULL);

	spec = json_pack("{s:[ss],s:[]}", "div16", "M", "E", "equal1");
	ir_spec_suffix(spec, &ab, &sb);
	assert_string_equal(sb.buf, "EMdiv16");
	assert_true(ab.used[ir_abbrevs_find(&ab, "E")]);
	assert_false(ab.used[ir_abbrevs_find(&ab, "N")]);
	json_decref(spec);

	strbuf_reset(&sb);
	spec = json_pack("{s:[ss],s:[s]}", "div16", "x_ptr", "M", "equal1", "N");
	ir_spec_suffix(spec, &ab, &sb);
	assert_string_equal(sb.buf, "M-xpdiv16_Neq1");
	json_decref(spec);

	strbuf_reset(&sb);
	spec = json_pack("{s:[]}", "div16");
	ir_spec_suffix(spec, &ab, &sb);
	assert_string_equal(sb.buf, "nodiv16");
	json_decref(spec);

	/* Not in the table (no signature recorded): the cleaned name; indices too. */
	strbuf_reset(&sb);
	spec = json_pack("{s:[s,i]}", "div16", "out/ptr", 3);
	ir_spec_suffix(spec, &ab, &sb);
	assert_string_equal(sb.buf, "a3-out-ptrdiv16");
	json_decref(spec);

	strbuf_reset(&sb);
	ir_spec_suffix(NULL, &ab, &sb);
	assert_string_equal(sb.buf, "nospec");

	strbuf_release(&sb);
	ir_abbrevs_release(&ab);
	strvec_clear(&args);
}

/* ---- variant names ----------------------------------------------------- */

struct group {
	struct ir_variant_desc v[16];
	json_t *cx[16];
	size_t n;
	struct ir_abbrevs ab;
	char *names[16];
	unsigned used;
};

static void add(struct group *g, const char *hash, const char *cx_json, int w, int s,
		const char *dtype, const char *spec)
{
	json_error_t err;
	struct ir_variant_desc *d = &g->v[g->n];

	g->cx[g->n] = cx_json ? json_loads(cx_json, 0, &err) : NULL;
	if (cx_json && !g->cx[g->n])
		fail_msg("bad JSON in test: %s", err.text);
	d->hash = hash;
	d->constexprs = g->cx[g->n];
	d->num_warps = w;
	d->num_stages = s;
	d->num_ctas = w < 0 ? -1 : 1;
	d->dtype = dtype;
	d->spec = spec;
	g->n++;
}

static void name_group(struct group *g)
{
	struct strvec names = STRVEC_INIT;

	for (size_t i = 0; i < g->n; i++) {
		const char *k;
		json_t *v;
		json_object_foreach(g->cx[i], k, v)
			strvec_push(&names, k);
	}
	ir_abbrevs_build(&g->ab, &names, ir_reserved_params);
	strvec_clear(&names);
	g->used = ir_name_variants(g->v, g->n, &g->ab, g->names);
	for (size_t i = 0; i < g->n; i++) {
		assert_safe(g->names[i]);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(g->names[i], g->names[j]))
				fail_msg("variants %zu and %zu are both '%s'", j, i, g->names[i]);
	}
}

static void group_release(struct group *g)
{
	for (size_t i = 0; i < g->n; i++) {
		json_decref(g->cx[i]);
		free(g->names[i]);
	}
	ir_abbrevs_release(&g->ab);
	memset(g, 0, sizeof(*g));
}

static void variants_nothing_differs(void **state)
{
	struct group g = { 0 };

	/* The seed's example: one config, three dtypes. */
	add(&g, "aa11", "{\"TILE_N\": 1024, \"ONE_TILE_PER_CTA\": true}", 4, 3, "bf16", "Ndiv16");
	add(&g, "bb22", "{\"TILE_N\": 1024, \"ONE_TILE_PER_CTA\": true}", 4, 3, "fp16", "Ndiv16");
	add(&g, "cc33", "{\"TILE_N\": 1024, \"ONE_TILE_PER_CTA\": true}", 4, 3, "fp32", "Ndiv16");
	name_group(&g);
	assert_string_equal(g.names[0], "w4s3__bf16");
	assert_string_equal(g.names[1], "w4s3__fp16");
	assert_string_equal(g.names[2], "w4s3__fp32");
	assert_int_equal(g.used, IR_SUFFIX_DTYPE);
	/* Nothing differs, so no abbreviation went into a name. */
	for (size_t i = 0; i < g.ab.nr; i++)
		assert_false(g.ab.used[i]);
	group_release(&g);

	/* A group of one: w<warps>s<stages>, no suffix at all. */
	add(&g, "aa11", "{\"BLOCK_SIZE_M\": 64}", 8, 2, "fp16", "Mdiv16");
	name_group(&g);
	assert_string_equal(g.names[0], "w8s2");
	assert_int_equal(g.used, 0);
	group_release(&g);
}

static void variants_differing_params(void **state)
{
	struct group g = { 0 };

	add(&g, "h1", "{\"BLOCK_SIZE_M\": 64, \"BLOCK_SIZE_N\": 64, \"GROUP_SIZE_M\": 8,"
		      " \"EVEN_K\": true}", 4, 3, "fp16", NULL);
	add(&g, "h2", "{\"BLOCK_SIZE_M\": 128, \"BLOCK_SIZE_N\": 64, \"GROUP_SIZE_M\": 8,"
		      " \"EVEN_K\": false}", 8, 3, "fp16", NULL);
	add(&g, "h3", "{\"BLOCK_SIZE_M\": 128, \"BLOCK_SIZE_N\": 64, \"GROUP_SIZE_M\": 8,"
		      " \"EVEN_K\": true}", 8, 4, "fp16", NULL);
	name_group(&g);
	/* Only BLOCK_SIZE_M, EVEN_K, num_warps, num_stages differ; constexprs by name order. */
	assert_string_equal(g.names[0], "BSM64_EK1_w4s3");
	assert_string_equal(g.names[1], "BSM128_EK0_w8s3");
	assert_string_equal(g.names[2], "BSM128_EK1_w8s4");
	assert_int_equal(g.used, 0);
	assert_true(g.ab.used[ir_abbrevs_find(&g.ab, "BLOCK_SIZE_M")]);
	assert_true(g.ab.used[ir_abbrevs_find(&g.ab, "EVEN_K")]);
	assert_false(g.ab.used[ir_abbrevs_find(&g.ab, "BLOCK_SIZE_N")]);
	assert_false(g.ab.used[ir_abbrevs_find(&g.ab, "GROUP_SIZE_M")]);
	group_release(&g);

	/* Only num_warps: just "w<n>". One-word names kept; strings and odd values. */
	add(&g, "h1", "{\"EVEN\": true, \"MODE\": \"max\", \"SCALE\": 0.5, \"B2\": 4}", 4, 3, NULL, NULL);
	add(&g, "h2", "{\"EVEN\": false, \"MODE\": \"a/b\", \"SCALE\": -1, \"B2\": 8}", 8, 3, NULL, NULL);
	name_group(&g);
	assert_string_equal(g.names[0], "B2=4_EVEN1_MODE=max_SCALE0.5_w4");
	assert_string_equal(g.names[1], "B2=8_EVEN0_MODE=a-b_SCALE-1_w8");
	group_release(&g);

	/* A constexpr present in one variant only: the other simply lacks the token. */
	add(&g, "h1", "{\"BLOCK\": 64, \"HAS_BIAS\": true}", 4, 3, NULL, NULL);
	add(&g, "h2", "{\"BLOCK\": 64}", 4, 3, NULL, NULL);
	name_group(&g);
	assert_string_equal(g.names[0], "HB1");
	assert_string_equal(g.names[1], "w4s3");
	group_release(&g);

	/* No compile record for one of them. */
	add(&g, "h1", "{\"BLOCK\": 64}", 4, 3, NULL, NULL);
	add(&g, "h2", NULL, -1, -1, NULL, NULL);
	name_group(&g);
	assert_string_equal(g.names[0], "BLOCK64_w4s3c1");
	assert_string_equal(g.names[1], "unknown");
	group_release(&g);
}

static void variants_collision_stages(void **state)
{
	struct group g = { 0 };
	const char *cx = "{\"BLOCK_SIZE\": 1024}";

	/* dtype first, then specialisation only where the dtype did not settle it. */
	add(&g, "e1", cx, 4, 3, "fp16", "EMdiv16");
	add(&g, "e2", cx, 4, 3, "fp16", "Mdiv16");
	add(&g, "e3", cx, 4, 3, "bf16", "EMdiv16");
	name_group(&g);
	assert_string_equal(g.names[0], "w4s3__fp16__EMdiv16");
	assert_string_equal(g.names[1], "w4s3__fp16__Mdiv16");
	assert_string_equal(g.names[2], "w4s3__bf16");
	assert_int_equal(g.used, IR_SUFFIX_DTYPE | IR_SUFFIX_SPEC);
	group_release(&g);

	/* Same dtype everywhere: the dtype stage adds nothing and is skipped. */
	add(&g, "e1", cx, 4, 3, "fp16", "EMdiv16");
	add(&g, "e2", cx, 4, 3, "fp16", "nodiv16");
	name_group(&g);
	assert_string_equal(g.names[0], "w4s3__EMdiv16");
	assert_string_equal(g.names[1], "w4s3__nodiv16");
	assert_int_equal(g.used, IR_SUFFIX_SPEC);
	group_release(&g);

	/* Identical in everything but the hash. */
	add(&g, "0123456789abcdef", cx, 4, 3, "fp16", "Mdiv16");
	add(&g, "fedcba9876543210", cx, 4, 3, "fp16", "Mdiv16");
	name_group(&g);
	assert_string_equal(g.names[0], "w4s3__h01234567");
	assert_string_equal(g.names[1], "w4s3__hfedcba98");
	assert_int_equal(g.used, IR_SUFFIX_HASH);
	group_release(&g);

	/* Hashes sharing 8 digits: a longer prefix, as long as needed. */
	add(&g, "deadbeef0001aaaa", cx, 4, 3, NULL, NULL);
	add(&g, "deadbeef0002aaaa", cx, 4, 3, NULL, NULL);
	add(&g, "0badf00d", cx, 8, 3, NULL, NULL);
	name_group(&g);
	assert_string_equal(g.names[0], "w4__hdeadbeef0001");
	assert_string_equal(g.names[1], "w4__hdeadbeef0002");
	assert_string_equal(g.names[2], "w8");
	group_release(&g);

	/* Unsafe dtype and hash texts are cleaned. */
	add(&g, "AB/CD..EF99", cx, 4, 3, "my dtype", "x");
	add(&g, "ab/cd..ef00", cx, 4, 3, "my dtype", "x");
	name_group(&g);
	assert_string_equal(g.names[0], "w4s3__habcdef99");
	assert_string_equal(g.names[1], "w4s3__habcdef00");
	group_release(&g);
}

/* Whatever the inputs, a name and its ".<stage>" fit in one path component. */
static void variants_length_bound(void **state)
{
	struct group g = { 0 };
	struct strbuf cx[2] = { STRBUF_INIT, STRBUF_INIT };
	struct strbuf dtype[2] = { STRBUF_INIT, STRBUF_INIT }, spec[2] = { STRBUF_INIT, STRBUF_INIT };
	char hash[4][200];

	for (int k = 0; k < 2; k++) {
		strbuf_addstr(&cx[k], "{");
		for (int i = 0; i < 20; i++)
			strbuf_addf(&cx[k], "%s\"PARAMETER_NUMBER_%d_WITH_A_LONG_NAME\": \"%0120d\"",
				    i ? ", " : "", i, 10 * i + k);
		strbuf_addstr(&cx[k], "}");
		strbuf_addchars(&dtype[k], 'a' + k, 150);
		strbuf_addchars(&spec[k], 'a' + k, 150);
	}
	for (int k = 0; k < 4; k++) {
		memset(hash[k], 'a', sizeof(hash[k]) - 1);
		hash[k][sizeof(hash[k]) - 1] = '\0';
		hash[k][150] = (char)('0' + k);	/* they differ only past 64 characters */
	}
	/* Every stage is needed for the first two: dtype (3 vs 4), spec (2 vs 1), hash. */
	add(&g, hash[0], cx[0].buf, 4, 3, dtype[0].buf, spec[0].buf);
	add(&g, hash[1], cx[0].buf, 4, 3, dtype[0].buf, spec[0].buf);
	add(&g, hash[2], cx[0].buf, 4, 3, dtype[0].buf, spec[1].buf);
	add(&g, hash[3], cx[0].buf, 4, 3, dtype[1].buf, spec[0].buf);
	add(&g, "b0", cx[1].buf, 4, 3, dtype[0].buf, spec[0].buf);
	name_group(&g);
	assert_int_equal(g.used, IR_SUFFIX_DTYPE | IR_SUFFIX_SPEC | IR_SUFFIX_HASH);
	for (size_t i = 0; i < g.n; i++) {
		if (strlen(g.names[i]) + strlen(".cubin") > 255)
			fail_msg("'%s' is %zu bytes long", g.names[i], strlen(g.names[i]));
	}
	/* The long base was cut to the cap. */
	assert_int_equal(strlen(g.names[4]), IR_NAME_CAP);
	assert_true(strlen(g.names[0]) > 200);
	group_release(&g);
	for (int k = 0; k < 2; k++) {
		strbuf_release(&cx[k]);
		strbuf_release(&dtype[k]);
		strbuf_release(&spec[k]);
	}
}

/* The name of each hash does not depend on the order the variants come in. */
static void variants_deterministic(void **state)
{
	static const char *const hashes[] = { "c0", "a0", "b0", "d0", "e0" };
	static const char *const cxs[] = {
		"{\"BLOCK_SIZE_M\": 64, \"EVEN\": true}",
		"{\"BLOCK_SIZE_M\": 64, \"EVEN\": true}",
		"{\"BLOCK_SIZE_M\": 128, \"EVEN\": true}",
		"{\"BLOCK_SIZE_M\": 64, \"EVEN\": false}",
		"{\"BLOCK_SIZE_M\": 64, \"EVEN\": true}",
	};
	static const char *const dtypes[] = { "fp16", "bf16", "fp16", "fp16", "fp16" };
	static const int order[][5] = { { 0, 1, 2, 3, 4 }, { 4, 3, 2, 1, 0 }, { 2, 0, 4, 1, 3 } };
	char *first[5] = { 0 };

	for (size_t o = 0; o < 3; o++) {
		struct group g = { 0 };
		for (size_t i = 0; i < 5; i++) {
			int k = order[o][i];
			add(&g, hashes[k], cxs[k], 4, 3, dtypes[k], "Mdiv16");
		}
		name_group(&g);
		for (size_t i = 0; i < 5; i++) {
			int k = order[o][i];
			if (!o)
				first[k] = strdup(g.names[i]);
			else
				assert_string_equal(g.names[i], first[k]);
		}
		group_release(&g);
	}
	assert_string_equal(first[0], "BSM64_EVEN1__fp16__hc0");
	assert_string_equal(first[1], "BSM64_EVEN1__bf16");
	assert_string_equal(first[2], "BSM128_EVEN1");
	assert_string_equal(first[3], "BSM64_EVEN0");
	assert_string_equal(first[4], "BSM64_EVEN1__fp16__he0");
	for (size_t i = 0; i < 5; i++)
		free(first[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sanitize),
		cmocka_unit_test(sanitize_cap),
		cmocka_unit_test(initials),
		cmocka_unit_test(abbrevs),
		cmocka_unit_test(dtype_short),
		cmocka_unit_test(shape_dims),
		cmocka_unit_test(shape_names),
		cmocka_unit_test(spec_suffix),
		cmocka_unit_test(variants_nothing_differs),
		cmocka_unit_test(variants_differing_params),
		cmocka_unit_test(variants_collision_stages),
		cmocka_unit_test(variants_length_bound),
		cmocka_unit_test(variants_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
