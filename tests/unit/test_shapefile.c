/*
 * shapefile.c: which key of a shape file FlagGems will use (op_name, then
 * the class chain), what is wrong with a malformed entry, YAML errors, and
 * the archived copy.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/error.h"
#include "lib/paths.h"
#include "run/shapefile.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#include "error_capture.h"

static char tmpdir[64];

static int setup(void **state)
{
	strbuf_reset(&errors);
	set_error_routine(capture_error);
	return 0;
}

static int teardown(void **state)
{
	set_error_routine(NULL);
	strbuf_release(&errors);
	return 0;
}

/* For the tests that write files: a fresh directory, removed even on failure. */
static int setup_dir(void **state)
{
	strcpy(tmpdir, "/tmp/zlb-shapes-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	return setup(state);
}

static int teardown_dir(void **state)
{
	int r = remove_tree(tmpdir);

	teardown(state);
	return r ? -1 : 0;
}

static const char *const reduction_chain[] = {
	"UnaryReductionBenchmark", "Benchmark", NULL,
};

/* Load text (must succeed) and look op up along chain. */
static void lookup(struct shape_file *sf, const char *text, const char *op,
		   const char *const *chain, struct shape_lookup *out)
{
	assert_int_equal(shape_file_load(sf, "test.yaml", text), 0);
	shape_file_lookup(sf, op, chain, out);
}

static void op_key_found(void **state)
{
	struct shape_file sf;
	struct shape_lookup l;

	lookup(&sf,
	       "# FlagGems shapes\n"
	       "mm:\n  shapes:\n    - [1, 2, 3, 4]\n"
	       "softmax:\n  shapes:\n    - [1024, 1024]\n    - [4096, 4096]\n"
	       "  shape_desc: \"M, N\"\n",
	       "softmax", reduction_chain, &l);
	assert_non_null(l.key);
	assert_string_equal(l.key, "softmax");
	assert_int_equal(l.via_class, 0);
	assert_int_equal(l.count, 2);
	assert_null(l.problem);
	shape_file_release(&sf);
}

static void class_key_when_no_op_key(void **state)
{
	struct shape_file sf;
	struct shape_lookup l;

	lookup(&sf,
	       "mm:\n  shapes: [[1, 2, 3, 4]]\n"
	       "UnaryReductionBenchmark:\n  shapes:\n    - [64, 64]\n    - [128, 128]\n"
	       "    - [256, 256]\n",
	       "softmax", reduction_chain, &l);
	assert_string_equal(l.key, "UnaryReductionBenchmark");
	assert_int_equal(l.via_class, 1);
	assert_int_equal(l.count, 3);
	assert_null(l.problem);
	shape_file_release(&sf);

	/* Further up the chain. */
	lookup(&sf, "Benchmark:\n  shapes: [[1], [2]]\n", "softmax", reduction_chain, &l);
	assert_string_equal(l.key, "Benchmark");
	assert_int_equal(l.via_class, 1);
	assert_int_equal(l.count, 2);
	shape_file_release(&sf);
}

static void op_key_beats_class_key(void **state)
{
	struct shape_file sf;
	struct shape_lookup l;

	/* The class comes first in the file; the op still wins. */
	lookup(&sf,
	       "UnaryReductionBenchmark:\n  shapes: [[1, 1]]\n"
	       "softmax:\n  shapes: [[2, 2], [3, 3]]\n",
	       "softmax", reduction_chain, &l);
	assert_string_equal(l.key, "softmax");
	assert_int_equal(l.via_class, 0);
	assert_int_equal(l.count, 2);
	shape_file_release(&sf);
}

static void first_class_in_chain_wins(void **state)
{
	static const char *const chain[] = {
		"NormBenchmark", "GenericBenchmark", "Benchmark", NULL,
	};
	struct shape_file sf;
	struct shape_lookup l;

	/* File order is Benchmark, GenericBenchmark; chain order decides. */
	lookup(&sf,
	       "Benchmark:\n  shapes: [[1]]\n"
	       "GenericBenchmark:\n  shapes: [[1, 2], [3, 4]]\n",
	       "layer_norm", chain, &l);
	assert_string_equal(l.key, "GenericBenchmark");
	assert_int_equal(l.via_class, 1);
	assert_int_equal(l.count, 2);
	shape_file_release(&sf);
}

static void nothing_found(void **state)
{
	struct shape_file sf;
	struct shape_lookup l;

	lookup(&sf, "mm:\n  shapes: [[1, 2, 3, 4]]\nBlasBenchmark:\n  shapes: [[1]]\n",
	       "softmax", reduction_chain, &l);
	assert_null(l.key);
	assert_int_equal(l.via_class, 0);
	assert_int_equal(l.count, 0);
	assert_null(l.problem);
	shape_file_release(&sf);

	/* Without a chain only the op counts. */
	lookup(&sf, "UnaryReductionBenchmark:\n  shapes: [[1]]\n", "softmax", NULL, &l);
	assert_null(l.key);
	shape_file_release(&sf);

	/* Key matching is exact. */
	lookup(&sf, "Softmax:\n  shapes: [[1]]\nsoftmax_backward:\n  shapes: [[1]]\n",
	       "softmax", NULL, &l);
	assert_null(l.key);
	shape_file_release(&sf);
}

static void merge_keys_followed(void **state)
{
	struct shape_file sf;
	struct shape_lookup l;
	struct strvec keys = STRVEC_INIT;

	lookup(&sf,
	       "common: &common\n"
	       "  shapes:\n    - [1024, 1024]\n    - [2048, 2048]\n"
	       "  shape_desc: \"M, N\"\n"
	       "softmax:\n  <<: *common\n",
	       "softmax", NULL, &l);
	assert_string_equal(l.key, "softmax");
	assert_null(l.problem);
	assert_int_equal(l.count, 2);
	shape_file_keys(&sf, &keys);
	assert_int_equal(keys.nr, 2);
	assert_string_equal(keys.v[0], "common");
	assert_string_equal(keys.v[1], "softmax");
	strvec_clear(&keys);
	shape_file_release(&sf);

	/* A list of merged maps: the first that has shapes. */
	lookup(&sf,
	       "a: &a\n  shape_desc: x\n"
	       "b: &b\n  shapes: [[1], [2], [3]]\n"
	       "softmax:\n  <<: [*a, *b]\n",
	       "softmax", NULL, &l);
	assert_null(l.problem);
	assert_int_equal(l.count, 3);
	shape_file_release(&sf);

	/* The entry's own shapes beat the merged ones. */
	lookup(&sf,
	       "base: &base\n  shapes: [[1], [2], [3]]\n"
	       "softmax:\n  <<: *base\n  shapes: [[7, 7]]\n",
	       "softmax", NULL, &l);
	assert_null(l.problem);
	assert_int_equal(l.count, 1);
	shape_file_release(&sf);

	/* Merges chain through merges. */
	lookup(&sf,
	       "base: &base\n  shapes: [[1], [2]]\n"
	       "mid: &mid\n  <<: *base\n"
	       "softmax:\n  <<: *mid\n",
	       "softmax", NULL, &l);
	assert_null(l.problem);
	assert_int_equal(l.count, 2);
	shape_file_release(&sf);
}

/* Load text, look softmax up, and expect a problem containing want. */
static void expect_problem(const char *text, const char *want)
{
	struct shape_file sf;
	struct shape_lookup l;

	lookup(&sf, text, "softmax", NULL, &l);
	assert_non_null(l.key);
	assert_string_equal(l.key, "softmax");
	assert_int_equal(l.count, 0);
	assert_contains(l.problem, want);
	free(l.problem);
	shape_file_release(&sf);
}

static void malformed_entries(void **state)
{
	expect_problem("softmax:\n  shape_desc: \"M, N\"\n",
		       "'softmax' has no 'shapes:' list");
	expect_problem("softmax:\n  shapes: 1024\n",
		       "'softmax: shapes:' must be a list of shapes");
	expect_problem("softmax:\n  shapes: {a: 1}\n",
		       "'softmax: shapes:' must be a list of shapes");
	expect_problem("softmax:\n  shapes:\n    - [1, 2]\n    - 1024\n",
		       "'softmax: shapes:' item 2 is not a non-empty list");
	expect_problem("softmax:\n  shapes: [[]]\n",
		       "item 1 is not a non-empty list");
	expect_problem("softmax:\n  shapes: []\n", "'softmax: shapes:' is empty");
	expect_problem("softmax:\n  shapes: [[1, 2], [3, {m: 5}]]\n",
		       "'softmax: shapes:' item 2 holds a mapping");
	expect_problem("softmax:\n  shapes: [[{m: 1}]]\n", "item 1 holds a mapping");
	expect_problem("softmax: [[1024, 1024]]\n",
		       "'softmax' must map to {shapes: [[...], ...]}");
	expect_problem("softmax:\n", "'softmax' must map to");
}

/* Upstream nests shapes (index, median_dim): lists of lists are shapes too. */
static void nested_shapes_are_upstreams(void **state)
{
	struct shape_file sf;
	struct shape_lookup lk;
	static const char text[] =
		"index:\n  shapes:\n    - [[268435456], [[65536]]]\n    - [[32, 32], [[8], [2, 8]]]\n"
		"median_dim:\n  shapes:\n    - [1536, 640]\n    - [[32, 384, 128], 1, false]\n";

	assert_int_equal(shape_file_load(&sf, "<test>", text), 0);
	shape_file_lookup(&sf, "index", NULL, &lk);
	assert_null(lk.problem);
	assert_int_equal(lk.count, 2);
	shape_file_lookup(&sf, "median_dim", NULL, &lk);
	assert_null(lk.problem);
	assert_int_equal(lk.count, 2);
	shape_file_release(&sf);
}

/*
 * Dimensions as PyYAML hands them to FlagGems: whole numbers in any YAML
 * 1.1 spelling, and true/false flags; a word, a fraction, a null, a
 * negative number or a shape of nothing but zeros fails later, after the
 * run directory exists (issue 16 row 11). The line is named. A 0 beside
 * other numbers is upstream's own (a conv's padding, median_dim's dim).
 */
static void dimensions_as_pyyaml_reads_them(void **state)
{
	static const struct { const char *shape, *want; } bad[] = {
		{ "[1024, M]", "has 'M' (a word)" },
		{ "[abc, 1e400]", "has 'abc' (a word)" },
		{ "[1e400]", "has '1e400' (a word)" },	/* YAML 1.1: a float needs a dot */
		{ "[1.5]", "has '1.5' (a fraction)" },
		{ "[0, 0]", "has '0' (0)" },
		{ "[[0], [[0]]]", "has '0' (0)" },
		{ "[[4, -1], 2]", "has '-1' (-1)" },
		{ "[[4, M], 2]", "has 'M' (a word)" },
		{ "[-1, 4]", "has '-1' (-1)" },
		{ "[\"1024\"]", "has '1024' (a word)" },	/* quoted: a string */
		{ "[!!str 12]", "has '12' (a word)" },
		{ "[~]", "(null: no value)" },
		{ "[08]", "has '08' (a word)" },		/* no octal digit 8: a string */
		{ "[99999999999999999999999]", "(too large for a tensor)" },
		{ "[.inf]", "(a fraction)" },
		{ NULL, NULL },
	};
	static const char *const good[] = {
		"[1024, true]", "[010]", "[0x10, 0b11]", "[1:30]", "[1_024]", "[+7]",
		"[!!int \"12\"]", "[off, 1]", "[2, 3, 8, 8, 0]", "[[32, 384, 128], 0, true]",
		"[[0, 4], [[0]]]", NULL,
	};
	struct shape_file sf;
	struct shape_lookup l;

	for (int i = 0; bad[i].shape; i++) {
		char *text = xstrfmt("softmax:\n  shapes:\n    - [1, 2]\n    - %s\n", bad[i].shape);
		lookup(&sf, text, "softmax", NULL, &l);
		if (!l.problem || !strstr(l.problem, bad[i].want) ||
		    !strstr(l.problem, "item 2 (line 4)"))
			fail_msg("%s: got \"%s\", want \"%s\"", bad[i].shape,
				 l.problem ? l.problem : "(no problem)", bad[i].want);
		free(l.problem);
		shape_file_release(&sf);
		free(text);
	}
	for (int i = 0; good[i]; i++) {
		char *text = xstrfmt("softmax:\n  shapes: [%s]\n", good[i]);
		lookup(&sf, text, "softmax", NULL, &l);
		if (l.problem)
			fail_msg("%s refused: %s", good[i], l.problem);
		shape_file_release(&sf);
		free(text);
	}
}

/* Load text, which must fail with an error containing want. */
static void expect_refused(const char *text, const char *want)
{
	struct shape_file sf;

	strbuf_reset(&errors);
	if (shape_file_load(&sf, "s.yaml", text) != -1)
		fail_msg("accepted: %.200s", text);
	if (!strstr(errors.buf, want))
		fail_msg("error \"%s\" lacks \"%s\"", errors.buf, want);
	shape_file_release(&sf);
}

/*
 * What PyYAML reads otherwise is refused with the line (issue 16 row 11):
 * a key twice (PyYAML keeps the last, the lookup the first), documents
 * after the first, tags beyond plain data, aliases that hold themselves.
 */
static void read_as_pyyaml_would(void **state)
{
	expect_refused("softmax:\n  shapes: [[1]]\nmm:\n  shapes: [[2]]\n"
		       "softmax:\n  shapes: [[3]]\n",
		       "the key 'softmax' appears twice in one mapping (lines 1 and 5)");
	expect_refused("softmax:\n  shapes: [[1]]\n  shapes: [[2]]\n",
		       "the key 'shapes' appears twice in one mapping (lines 2 and 3)");
	expect_refused("1: a\n0x1: b\nsoftmax: {shapes: [[1]]}\n", "appears twice");
	expect_refused("softmax:\n  shapes: [[1]]\n---\nmm:\n  shapes: [[2]]\n",
		       "holds more than one YAML document (the second starts at line 3)");
	expect_refused("softmax:\n  shapes: !!python/tuple [[1]]\n",
		       "line 2: tag '!!python/tuple'");
	expect_refused("softmax:\n  shapes: [[!!python/object:os.system 1]]\n",
		       "tag '!!python/object:os.system'");
	expect_refused("softmax: !local {shapes: [[1]]}\n", "line 1: tag '!local'");
	expect_refused("softmax:\n  shapes: [[1]]\n? [a, b]\n: x\n",
		       "line 3: a key that is a list or a mapping");
	expect_refused("a: &a [*a]\nsoftmax:\n  shapes: [[1]]\n",
		       "an alias refers to a node that holds it");
	/* One document with its markers is one document. */
	{
		struct shape_file sf;
		assert_int_equal(shape_file_load(&sf, "s.yaml",
						 "---\nsoftmax:\n  shapes: [[1]]\n...\n"), 0);
		shape_file_release(&sf);
	}
}

/*
 * Bounded time and memory whatever the file (issue 16 rows 7 and 12): an
 * 804-byte merge-key bomb kept a lookup busy past 60 s, 200 KB of nesting
 * took libyaml 35 s. Both are refused at once.
 */
static void bounded_whatever_the_file(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	/* 8 levels of 20-way merges: 20^8 entries once PyYAML flattens them. */
	strbuf_addstr(&sb, "m0: &m0 {x: 1}\n");
	for (int k = 1; k <= 8; k++) {
		strbuf_addf(&sb, "m%d: &m%d\n  <<: [", k, k);
		for (int j = 0; j < 20; j++)
			strbuf_addf(&sb, "%s*m%d", j ? ", " : "", k - 1);
		strbuf_addstr(&sb, "]\n");
	}
	strbuf_addstr(&sb, "softmax:\n  <<: *m8\n  shapes: [[1]]\n");
	expect_refused(sb.buf, "expands to more than 1000000 values through its aliases and "
		       "merge keys");

	/* 100000 levels of '[' (200 KB with the closing ones). */
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "softmax: ");
	for (int i = 0; i < 100000; i++)
		strbuf_addch(&sb, '[');
	for (int i = 0; i < 100000; i++)
		strbuf_addch(&sb, ']');
	strbuf_addch(&sb, '\n');
	expect_refused(sb.buf, "nests deeper than 64 levels at line 1");

	/* The same in block style. */
	strbuf_reset(&sb);
	for (int i = 0; i < 3000; i++) {
		for (int j = 0; j < i; j++)
			strbuf_addch(&sb, ' ');
		strbuf_addf(&sb, "k%d:\n", i);
	}
	expect_refused(sb.buf, "nests deeper than 64 levels");

	/* Shallow text, deep through a chain of aliases (PyYAML's constructor recurses). */
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "a0: &a0 [1]\n");
	for (int i = 1; i < 80; i++)
		strbuf_addf(&sb, "a%d: &a%d [*a%d]\n", i, i, i - 1);
	strbuf_addstr(&sb, "softmax:\n  shapes: [[1]]\n");
	expect_refused(sb.buf, "through its aliases the file nests deeper than 64 levels");

	/* A billion laughs of sequences. */
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (int i = 1; i < 10; i++)
		strbuf_addf(&sb, "l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, "
			    "*l%d, *l%d]\n", i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1,
			    i - 1, i - 1, i - 1);
	strbuf_addstr(&sb, "softmax:\n  shapes: [[1]]\n");
	expect_refused(sb.buf, "expands to more than");
	strbuf_release(&sb);
}

static void invalid_yaml(void **state)
{
	struct shape_file sf;

	/* An unclosed flow sequence, noticed on line 4. */
	assert_int_equal(shape_file_load(&sf, "bad.yaml",
					 "softmax:\n  shapes:\n    - [1, 2\n  x: 1\n"), -1);
	assert_contains(errors.buf, "shape file 'bad.yaml' is not valid YAML");
	assert_contains(errors.buf, "did not find expected ',' or ']' at line 4, column ");
	shape_file_release(&sf);

	/* A tab where indentation belongs, on line 2 column 1. */
	strbuf_reset(&errors);
	assert_int_equal(shape_file_load(&sf, "tab.yaml", "softmax:\n\tshapes: [[1]]\n"), -1);
	assert_contains(errors.buf, "not valid YAML");
	assert_contains(errors.buf, "at line 2, column 1");
	shape_file_release(&sf);

	/* Line and column count from 1: the second ':' of "b: c: d". */
	strbuf_reset(&errors);
	assert_int_equal(shape_file_load(&sf, "k.yaml",
					 "a:\n  shapes: [[1]]\nb: c: d\n"), -1);
	assert_contains(errors.buf, "at line 3, column 5");
	shape_file_release(&sf);
}

static void top_level_must_be_mapping(void **state)
{
	struct shape_file sf;

	assert_int_equal(shape_file_load(&sf, "list.yaml", "- softmax\n- mm\n"), -1);
	assert_contains(errors.buf, "shape file 'list.yaml' must be a mapping");
	assert_contains(errors.buf, "its top level is a list");
	shape_file_release(&sf);

	strbuf_reset(&errors);
	assert_int_equal(shape_file_load(&sf, "scalar.yaml", "softmax\n"), -1);
	assert_contains(errors.buf, "its top level is a scalar");
	shape_file_release(&sf);

	strbuf_reset(&errors);
	assert_int_equal(shape_file_load(&sf, "empty.yaml", "# nothing\n"), -1);
	assert_contains(errors.buf, "shape file 'empty.yaml' is empty");
	shape_file_release(&sf);
}

static void load_from_path(void **state)
{
	const char *dir = tmpdir;
	char *path;
	const char *text = "softmax:\n  shapes: [[8, 8]]\n";
	struct shape_file sf;
	struct shape_lookup l;

	path = path_join(dir, "s.yaml");
	assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
	assert_int_equal(shape_file_load(&sf, path, NULL), 0);
	assert_string_equal(sf.path, path);
	assert_string_equal(sf.text, text);
	shape_file_lookup(&sf, "softmax", NULL, &l);
	assert_int_equal(l.count, 1);
	shape_file_release(&sf);

	/* The sample file in tests/data loads and has softmax. */
	assert_int_equal(shape_file_load(&sf, ZLB_TEST_DATA "/samples/shapes.yaml", NULL), 0);
	shape_file_lookup(&sf, "softmax", reduction_chain, &l);
	assert_string_equal(l.key, "softmax");
	assert_int_equal(l.count, 3);
	shape_file_release(&sf);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(shape_file_load(&sf, path, NULL), -1);
	assert_contains(errors.buf, "cannot read shape file");
	assert_contains(errors.buf, path);
	shape_file_release(&sf);

	free(path);
}

static void archive_keeps_text(void **state)
{
	const char *dir = tmpdir;
	/* Comments, odd spacing, an anchor: archived byte for byte. */
	const char *text =
		"# my shapes\n"
		"base: &b\n"
		"  shapes:   [ [1,2] ,[3, 4] ]   # trailing\n"
		"softmax:\n"
		"  <<: *b\n"
		"\n"
		"mm: {shapes: [[1, 2, 3, 4]]}\n";
	const char *header = "source: /home/u/s.yaml\nop: softmax\nlevel: core";
	struct shape_file sf, back;
	struct strbuf got = STRBUF_INIT, want = STRBUF_INIT;
	struct shape_lookup l;
	char *dest;

	dest = path_join(dir, "shapes.yaml");
	assert_int_equal(shape_file_load(&sf, "s.yaml", text), 0);
	assert_int_equal(shape_file_archive(&sf, dest, header), 0);
	assert_int_equal(strbuf_read_file(&got, dest, 1 << 20), 0);
	strbuf_addstr(&want, "# source: /home/u/s.yaml\n# op: softmax\n# level: core\n");
	strbuf_addstr(&want, text);
	assert_string_equal(got.buf, want.buf);

	/* And it reads back to the same lookup. */
	assert_int_equal(shape_file_load(&back, dest, NULL), 0);
	shape_file_lookup(&back, "softmax", NULL, &l);
	assert_string_equal(l.key, "softmax");
	assert_int_equal(l.count, 2);
	shape_file_release(&back);
	shape_file_release(&sf);

	/* Text without a final newline gets one; a header ending in "\n" adds no blank comment. */
	strbuf_reset(&got);
	assert_int_equal(shape_file_load(&sf, "t.yaml", "mm:\n  shapes: [[1]]"), 0);
	assert_int_equal(shape_file_archive(&sf, dest, "one\n"), 0);
	assert_int_equal(strbuf_read_file(&got, dest, 1 << 20), 0);
	assert_string_equal(got.buf, "# one\nmm:\n  shapes: [[1]]\n");
	shape_file_release(&sf);

	/* No header at all: just the text. */
	strbuf_reset(&got);
	assert_int_equal(shape_file_load(&sf, "t.yaml", "mm:\n  shapes: [[1]]\n"), 0);
	assert_int_equal(shape_file_archive(&sf, dest, NULL), 0);
	assert_int_equal(strbuf_read_file(&got, dest, 1 << 20), 0);
	assert_string_equal(got.buf, "mm:\n  shapes: [[1]]\n");
	shape_file_release(&sf);

	strbuf_release(&got);
	strbuf_release(&want);
	free(dest);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(op_key_found, setup, teardown),
		cmocka_unit_test_setup_teardown(class_key_when_no_op_key, setup, teardown),
		cmocka_unit_test_setup_teardown(op_key_beats_class_key, setup, teardown),
		cmocka_unit_test_setup_teardown(first_class_in_chain_wins, setup, teardown),
		cmocka_unit_test_setup_teardown(nothing_found, setup, teardown),
		cmocka_unit_test_setup_teardown(merge_keys_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(malformed_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(nested_shapes_are_upstreams, setup, teardown),
		cmocka_unit_test_setup_teardown(dimensions_as_pyyaml_reads_them, setup, teardown),
		cmocka_unit_test_setup_teardown(read_as_pyyaml_would, setup, teardown),
		cmocka_unit_test_setup_teardown(bounded_whatever_the_file, setup, teardown),
		cmocka_unit_test_setup_teardown(invalid_yaml, setup, teardown),
		cmocka_unit_test_setup_teardown(top_level_must_be_mapping, setup, teardown),
		cmocka_unit_test_setup_teardown(load_from_path, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(archive_keeps_text, setup_dir, teardown_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
