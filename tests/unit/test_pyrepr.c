#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/pyrepr.h"
#include "lib/strbuf.h"

/* Split s and check its kind and items (a NULL-terminated list). */
static void check_split(const char *s, enum pyrepr_kind kind, ...)
{
	struct pyrepr p = PYREPR_INIT;
	const char *want;
	size_t i = 0;
	va_list ap;
	int n = pyrepr_split(s, &p);

	va_start(ap, kind);
	while ((want = va_arg(ap, const char *))) {
		assert_true(i < p.items.nr);
		assert_string_equal(p.items.v[i], want);
		i++;
	}
	va_end(ap);
	assert_int_equal(n, (int)i);
	assert_int_equal(p.items.nr, i);
	assert_string_equal(pyrepr_kind_name(p.kind), pyrepr_kind_name(kind));
	pyrepr_release(&p);
}

static void check_bad(const char *s)
{
	struct pyrepr p = PYREPR_INIT;

	/* Leave something in p, to see that a failure empties it. */
	assert_int_equal(pyrepr_split("[1, 2]", &p), 2);
	if (pyrepr_split(s, &p) != -1)
		fail_msg("'%s' should be malformed, got %zu items", s, p.items.nr);
	assert_int_equal(p.items.nr, 0);
	assert_int_equal(p.keys.nr, 0);
	pyrepr_release(&p);
}

static void test_containers(void **state)
{
	check_split("[a, b, [c, d]]", PYREPR_LIST, "a", "b", "[c, d]", NULL);
	check_split("(x, {'out': torch.Size([1024])})", PYREPR_TUPLE,
		    "x", "{'out': torch.Size([1024])}", NULL);
	check_split("[torch.Size([1024, 1024]), 1]", PYREPR_LIST,
		    "torch.Size([1024, 1024])", "1", NULL);
	check_split("([torch.Size([16384, 8192]), 1], {'out': torch.Size([16384])})",
		    PYREPR_TUPLE, "[torch.Size([16384, 8192]), 1]",
		    "{'out': torch.Size([16384])}", NULL);
	/* Whitespace around and between items is not part of them. */
	check_split("  [ 1 ,\t2 ]\n", PYREPR_LIST, "1", "2", NULL);
	check_split("{1, 2}", PYREPR_SET, "1", "2", NULL);
}

static void test_empty_and_trailing_comma(void **state)
{
	check_split("[]", PYREPR_LIST, NULL);
	check_split("[ ]", PYREPR_LIST, NULL);
	check_split("()", PYREPR_TUPLE, NULL);
	check_split("{}", PYREPR_DICT, NULL);
	check_split("(1,)", PYREPR_TUPLE, "1", NULL);
	check_split("[[], ()]", PYREPR_LIST, "[]", "()", NULL);
}

static void test_scalars(void **state)
{
	check_split("1", PYREPR_SCALAR, "1", NULL);
	check_split(" torch.float16 ", PYREPR_SCALAR, "torch.float16", NULL);
	check_split("torch.Size([1024, 1024])", PYREPR_SCALAR, "torch.Size([1024, 1024])", NULL);
	check_split("'x, [y'", PYREPR_SCALAR, "'x, [y'", NULL);
	check_split("None", PYREPR_SCALAR, "None", NULL);
}

static void test_quotes(void **state)
{
	/* Brackets, commas and colons inside strings are text. */
	check_split("['a, b', \"c]\", 'd\\'e,']", PYREPR_LIST,
		    "'a, b'", "\"c]\"", "'d\\'e,'", NULL);
	check_split("[\"it's\", 'say \"hi\", ok']", PYREPR_LIST,
		    "\"it's\"", "'say \"hi\", ok'", NULL);
	/* An escaped backslash does not escape the closing quote. */
	check_split("['a\\\\', 'b']", PYREPR_LIST, "'a\\\\'", "'b'", NULL);
	check_split("{'k:(': ')'}", PYREPR_DICT, "'k:(': ')'", NULL);
}

static void test_dicts(void **state)
{
	struct pyrepr p = PYREPR_INIT;

	assert_int_equal(pyrepr_split("{'a': 1, 'b': [2, 3]}", &p), 2);
	assert_int_equal(p.kind, PYREPR_DICT);
	assert_string_equal(p.items.v[0], "'a': 1");
	assert_string_equal(p.items.v[1], "'b': [2, 3]");
	assert_int_equal(p.keys.nr, 2);
	assert_string_equal(p.keys.v[0], "'a'");
	assert_string_equal(p.keys.v[1], "'b'");
	assert_string_equal(p.values.v[0], "1");
	assert_string_equal(p.values.v[1], "[2, 3]");

	/* Nested: only the top-level ':' splits an item. */
	assert_int_equal(pyrepr_split("{'a': {'b': [1, {'c': 2}]}, 'd:e': (3,)}", &p), 2);
	assert_int_equal(p.kind, PYREPR_DICT);
	assert_string_equal(p.keys.v[0], "'a'");
	assert_string_equal(p.values.v[0], "{'b': [1, {'c': 2}]}");
	assert_string_equal(p.keys.v[1], "'d:e'");
	assert_string_equal(p.values.v[1], "(3,)");

	/* A list split after a dict leaves no keys behind. */
	assert_int_equal(pyrepr_split("[1]", &p), 1);
	assert_int_equal(p.keys.nr, 0);
	assert_int_equal(p.values.nr, 0);
	pyrepr_release(&p);
}

static void test_dict_item_and_unquote(void **state)
{
	struct strbuf k = STRBUF_INIT, v = STRBUF_INIT, u = STRBUF_INIT;

	assert_int_equal(pyrepr_dict_item(" 'out' : torch.Size([1024]) ", &k, &v), 0);
	assert_string_equal(k.buf, "'out'");
	assert_string_equal(v.buf, "torch.Size([1024])");
	assert_int_equal(pyrepr_dict_item("'a:b': {'c': 1}", &k, &v), 0);
	assert_string_equal(k.buf, "'a:b'");
	assert_string_equal(v.buf, "{'c': 1}");
	assert_int_equal(pyrepr_dict_item("no colon", &k, &v), -1);
	assert_int_equal(pyrepr_dict_item(": 1", &k, &v), -1);
	assert_int_equal(pyrepr_dict_item("'a':", &k, &v), -1);
	assert_int_equal(pyrepr_dict_item("'a: 1", &k, &v), -1);

	assert_int_equal(pyrepr_unquote("'out'", &u), 0);
	assert_string_equal(u.buf, "out");
	assert_int_equal(pyrepr_unquote("\"dim\"", &u), 0);
	assert_string_equal(u.buf, "dim");
	assert_int_equal(pyrepr_unquote("''", &u), 0);
	assert_string_equal(u.buf, "");
	assert_int_equal(pyrepr_unquote("out", &u), -1);
	assert_int_equal(pyrepr_unquote("'a\\'b'", &u), -1);
	assert_int_equal(pyrepr_unquote("'a\"", &u), -1);
	assert_int_equal(pyrepr_unquote("'", &u), -1);
	assert_int_equal(pyrepr_unquote("1", &u), -1);

	strbuf_release(&k);
	strbuf_release(&v);
	strbuf_release(&u);
}

static void test_malformed(void **state)
{
	check_bad("");
	check_bad("   ");
	check_bad("[1, 2");
	check_bad("[1, 2]]");
	check_bad("[(1, 2])");
	check_bad("{'a': [1}");
	check_bad("'abc");
	check_bad("['abc]");
	check_bad("['ab\\']");
	check_bad("[1, , 2]");
	check_bad("[,]");
	check_bad("(,)");
	check_bad("[1,,]");
	check_bad("1, 2");
	check_bad("[1] [2]");
	check_bad("[1] + [2]");
	check_bad(")");
	check_bad("torch.Size([1024)");
	/* Some items with ':' and some without: neither dict nor set. */
	check_bad("{'a': 1, 2}");
	check_bad("{'a': }");
}

static void test_depth_limit(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct pyrepr p = PYREPR_INIT;

	strbuf_addchars(&sb, '[', 200);
	strbuf_addchars(&sb, ']', 200);
	assert_int_equal(pyrepr_split(sb.buf, &p), 1);
	strbuf_reset(&sb);
	strbuf_addchars(&sb, '[', PYREPR_MAX_DEPTH + 2);
	strbuf_addchars(&sb, ']', PYREPR_MAX_DEPTH + 2);
	assert_int_equal(pyrepr_split(sb.buf, &p), -1);
	pyrepr_release(&p);
	strbuf_release(&sb);
}

static const char *const samples[] = {
	"[torch.Size([1024, 1024]), 1]",
	"([torch.Size([1024, 1024]), 1], {'out': torch.Size([1024])})",
	"[torch.Size([16384, 4096]), [4096], torch.Size([4096]), torch.Size([4096])]",
	"{'a': {'b': [1, \"x]\"]}, 'c': ('d\\'e', None)}",
	"[['a, b', (1,)], {2, 3}, {}]",
};

/*
 * Every proper prefix of a container leaves its opener unclosed, so each
 * must be refused; and split_mem must never read past the length it is
 * given (the tail here is a closer that would otherwise complete it).
 */
static void test_truncations(void **state)
{
	struct pyrepr p = PYREPR_INIT;
	size_t i, cut;

	for (i = 0; i < sizeof(samples) / sizeof(*samples); i++) {
		size_t len = strlen(samples[i]);

		assert_true(pyrepr_split(samples[i], &p) > 0);
		for (cut = 0; cut < len; cut++) {
			if (pyrepr_split_mem(samples[i], cut, &p) != -1)
				fail_msg("prefix %zu of '%s' accepted", cut, samples[i]);
			assert_int_equal(p.items.nr, 0);
		}
	}
	pyrepr_release(&p);
}

/*
 * Random damage: replace bytes with syntax characters, cut at random
 * points. Whatever comes back must be consistent: -1 with nothing, or as
 * many items as claimed, each non-empty, and for a dict keys and values
 * for every item. (Run under ASan/valgrind this also checks the bounds.)
 */
static void test_fuzz(void **state)
{
	static const char syntax[] = "[](){}'\",:\\ ";
	struct pyrepr p = PYREPR_INIT;
	unsigned seed = 12345;
	int round, accepted = 0, refused = 0;

	for (round = 0; round < 20000; round++) {
		const char *base = samples[round % (sizeof(samples) / sizeof(*samples))];
		size_t len = strlen(base), k, nmut;
		char *s = xstrdup(base);
		int n;

		seed = seed * 1103515245u + 12345u;
		nmut = (seed >> 16) % 4;
		for (k = 0; k < nmut; k++) {
			seed = seed * 1103515245u + 12345u;
			s[(seed >> 16) % len] = syntax[(seed >> 8) % (sizeof(syntax) - 1)];
		}
		seed = seed * 1103515245u + 12345u;
		n = pyrepr_split_mem(s, (seed >> 16) % (len + 1), &p);
		if (n < 0) {
			refused++;
			assert_int_equal(p.items.nr, 0);
		} else {
			accepted++;
			assert_int_equal((size_t)n, p.items.nr);
			for (k = 0; k < p.items.nr; k++)
				assert_true(p.items.v[k][0] != '\0');
			if (p.kind == PYREPR_DICT) {
				assert_int_equal(p.keys.nr, p.items.nr);
				assert_int_equal(p.values.nr, p.items.nr);
			}
		}
		free(s);
	}
	/* Both outcomes happen, or the fuzzing tests nothing. */
	assert_true(accepted > 100);
	assert_true(refused > 100);
	pyrepr_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_containers),
		cmocka_unit_test(test_empty_and_trailing_comma),
		cmocka_unit_test(test_scalars),
		cmocka_unit_test(test_quotes),
		cmocka_unit_test(test_dicts),
		cmocka_unit_test(test_dict_item_and_unquote),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_fuzz),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
