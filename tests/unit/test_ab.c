/*
 * ab.c: the two sides of an A/B (--axis, --a-env/--b-env, what may not
 * differ), the switch in the FlagGems source, the IR of round 1.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ab/ab.h"
#include "lib/error.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

static struct strbuf errors = STRBUF_INIT;

static void capture_error(const char *prefix, const char *msg)
{
	strbuf_addf(&errors, "%s\n", msg);
}

static int setup_errors(void **state)
{
	strbuf_reset(&errors);
	set_error_routine(capture_error);
	return 0;
}

static int teardown_errors(void **state)
{
	set_error_routine(NULL);
	return 0;
}

#define assert_error_has(text) do { \
	if (!strstr(errors.buf, (text))) \
		fail_msg("error '%s' does not say '%s'", errors.buf, (text)); \
	strbuf_reset(&errors); \
} while (0)

static const char *value_of(const struct ab_spec *s, int side, const char *key)
{
	const struct ab_setting *set = ab_side_find(&s->side[side], key);
	assert_non_null(set);
	return set->value;
}

/* ---- the sides ---------------------------------------------------------------- */

static void axis_sets_both_sides(void **state)
{
	struct ab_spec s;
	struct strbuf d = STRBUF_INIT;

	ab_spec_init(&s);
	assert_int_equal(s.rounds, AB_DEFAULT_ROUNDS);
	assert_int_equal(ab_spec_add_axis(&s, "FLAGGEMS_MXFP4_FOLDSCALE=0,1"), 0);
	assert_string_equal(value_of(&s, 0, "FLAGGEMS_MXFP4_FOLDSCALE"), "0");
	assert_string_equal(value_of(&s, 1, "FLAGGEMS_MXFP4_FOLDSCALE"), "1");
	assert_string_equal(s.axis, "FLAGGEMS_MXFP4_FOLDSCALE=0,1");
	assert_int_equal(ab_spec_finish(&s), 0);
	ab_axis_describe(&s, &d);
	assert_string_equal(d.buf, "FLAGGEMS_MXFP4_FOLDSCALE=0,1");
	strbuf_release(&d);
	ab_spec_release(&s);

	/* An empty value is a value: set, but empty. */
	ab_spec_init(&s);
	assert_int_equal(ab_spec_add_axis(&s, "X=,1"), 0);
	assert_string_equal(value_of(&s, 0, "X"), "");
	assert_string_equal(value_of(&s, 1, "X"), "1");
	ab_spec_release(&s);
}

static void axis_refusals(void **state)
{
	static const struct { const char *axis, *says; } bad[] = {
		{ "X", "expected NAME=VALUE_A,VALUE_B" },
		{ "=1,2", "expected NAME=VALUE_A,VALUE_B" },
		{ "X=1", "two values are needed" },
		{ "X=1,2,3", "more than one comma" },
		{ "X=1,1", "A and B get the same value '1'" },
		{ "X=,", "the same value ''" },
		{ "1X=0,1", "'1X' is not an environment variable name" },
		{ "A-B=0,1", "'A-B' is not an environment variable name" },
		{ "BENCH_LEVEL=core,comprehensive", "BENCH_LEVEL is zlb run's --level" },
		{ "ZL_TIMER=graph,direct", "ZL_TIMER is zlb run's --timer" },
		{ "USE_FLAGTUNE=0,1", "USE_FLAGTUNE is zlb run's --use-flagtune" },
		{ "FLAGGEMS_DIR=/a,/b", "--a-flaggems-dir / --b-flaggems-dir" },
		{ "ZLB_PYTHON=a,b", "--a-python / --b-python" },
		{ "REPLAY_FROM=a,b", "zlb ab decides which rounds record" },
		{ "ZLB_TIMER_LIB=a,b", "zlb's own variable" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ab_spec s;

		ab_spec_init(&s);
		assert_int_equal(ab_spec_add_axis(&s, bad[i].axis), -1);
		assert_error_has(bad[i].says);
		assert_null(s.axis);
		ab_spec_release(&s);
	}
}

static void one_axis_and_no_double_settings(void **state)
{
	struct ab_spec s;

	ab_spec_init(&s);
	assert_int_equal(ab_spec_add_axis(&s, "X=0,1"), 0);
	assert_int_equal(ab_spec_add_axis(&s, "Y=0,1"), -1);
	assert_error_has("one --axis per A/B (already X=0,1)");
	assert_int_equal(ab_spec_add_env(&s, 1, "X=2"), -1);
	assert_error_has("side B already sets X=1");
	assert_int_equal(ab_spec_add_env(&s, 0, "Y"), -1);
	assert_error_has("--a-env Y: expected NAME=VALUE");
	assert_int_equal(ab_spec_add_env(&s, 0, "Y=a=b"), 0);
	assert_string_equal(value_of(&s, 0, "Y"), "a=b");
	assert_int_equal(ab_spec_set_python(&s, 1, "/opt/b/python"), 0);
	assert_int_equal(ab_spec_set_python(&s, 1, "/opt/c/python"), -1);
	assert_error_has("--b-python given twice");
	assert_int_equal(ab_spec_set_flaggems_dir(&s, 0, ""), -1);
	assert_error_has("--a-flaggems-dir needs a value");
	ab_spec_release(&s);
}

static void finish_unsets_one_sided_names_and_refuses_no_difference(void **state)
{
	struct ab_spec s;
	struct strbuf d = STRBUF_INIT;

	/* Named for B only: A runs without it, whatever zlb ab's environment says. */
	ab_spec_init(&s);
	assert_int_equal(ab_spec_add_env(&s, 1, "FAKE_TUNE_BIAS=1"), 0);
	assert_int_equal(ab_spec_add_env(&s, 0, "COMMON=x"), 0);
	assert_int_equal(ab_spec_add_env(&s, 1, "COMMON=x"), 0);
	assert_int_equal(ab_spec_finish(&s), 0);
	assert_null(value_of(&s, 0, "FAKE_TUNE_BIAS"));
	assert_string_equal(value_of(&s, 1, "FAKE_TUNE_BIAS"), "1");
	ab_axis_describe(&s, &d);
	assert_string_equal(d.buf, "FAKE_TUNE_BIAS=(unset),1");	/* COMMON does not differ */
	strbuf_release(&d);
	ab_spec_release(&s);

	ab_spec_init(&s);
	assert_int_equal(ab_spec_finish(&s), -1);
	assert_error_has("nothing tells A from B");
	ab_spec_release(&s);

	ab_spec_init(&s);
	assert_int_equal(ab_spec_add_env(&s, 0, "X=1"), 0);
	assert_int_equal(ab_spec_add_env(&s, 1, "X=1"), 0);
	assert_int_equal(ab_spec_finish(&s), -1);
	assert_error_has("A and B are set up identically");
	ab_spec_release(&s);

	ab_spec_init(&s);
	assert_int_equal(ab_spec_set_python(&s, 0, "/envs/a/bin/python"), 0);
	assert_int_equal(ab_spec_set_python(&s, 1, "/envs/a/bin/python"), 0);
	assert_int_equal(ab_spec_finish(&s), -1);
	assert_error_has("set up identically");
	ab_spec_release(&s);

	/* Two interpreters and a checkout for one side: described, no variable. */
	ab_spec_init(&s);
	assert_int_equal(ab_spec_set_python(&s, 0, "/envs/a/bin/python"), 0);
	assert_int_equal(ab_spec_set_python(&s, 1, "/envs/b/bin/python"), 0);
	assert_int_equal(ab_spec_set_flaggems_dir(&s, 1, "/src/FlagGems-b"), 0);
	assert_int_equal(ab_spec_finish(&s), 0);
	ab_axis_describe(&s, &d);
	assert_string_equal(d.buf, "python=/envs/a/bin/python,/envs/b/bin/python;"
			    "flaggems-dir=(shared),/src/FlagGems-b");
	strbuf_release(&d);
	ab_spec_release(&s);

	static const int bad_rounds[] = { 0, -1, AB_MAX_ROUNDS + 1 };
	for (size_t i = 0; i < 3; i++) {
		ab_spec_init(&s);
		assert_int_equal(ab_spec_add_axis(&s, "X=0,1"), 0);
		s.rounds = bad_rounds[i];
		assert_int_equal(ab_spec_finish(&s), -1);
		assert_error_has("a side needs 1 to 100 rounds");
		ab_spec_release(&s);
	}
}

static void side_environment(void **state)
{
	struct ab_spec s;
	struct strvec env = STRVEC_INIT;
	char *base[] = { "PATH=/usr/bin", "FAKE_TUNE_BIAS=7", "X=old", NULL };

	ab_spec_init(&s);
	assert_int_equal(ab_spec_add_axis(&s, "X=a,b"), 0);
	assert_int_equal(ab_spec_add_env(&s, 1, "FAKE_TUNE_BIAS=1"), 0);
	assert_int_equal(ab_spec_finish(&s), 0);

	ab_side_env(&s.side[0], base, &env);
	assert_string_equal(env_get(&env, "PATH"), "/usr/bin");
	assert_string_equal(env_get(&env, "X"), "a");
	assert_null(env_get(&env, "FAKE_TUNE_BIAS"));	/* named for B only: removed on A */
	strvec_clear(&env);

	ab_side_env(&s.side[1], base, &env);
	assert_string_equal(env_get(&env, "X"), "b");
	assert_string_equal(env_get(&env, "FAKE_TUNE_BIAS"), "1");
	strvec_clear(&env);
	ab_spec_release(&s);
}

/* ---- the switch in the source ------------------------------------------------------ */

static void identifiers_not_substrings(void **state)
{
	const char *t = "x = os.environ.get(\"FLAGGEMS_FOLD\", \"0\")\nFLAGGEMS_FOLD_V2 = 1\n";

	assert_true(ab_text_has_identifier(t, strlen(t), "FLAGGEMS_FOLD"));
	assert_true(ab_text_has_identifier(t, strlen(t), "FLAGGEMS_FOLD_V2"));
	assert_false(ab_text_has_identifier(t, strlen(t), "FOLD"));
	assert_false(ab_text_has_identifier(t, strlen(t), "FLAGGEMS_FOLD_V"));
	assert_true(ab_text_has_identifier("AB", 2, "AB"));
	assert_false(ab_text_has_identifier("xAB", 3, "AB"));
	assert_false(ab_text_has_identifier("AB", 2, ""));
	/* bytes after the length do not count */
	assert_false(ab_text_has_identifier("ABC", 2, "ABC"));

	assert_string_equal(ab_switch_exempt("TRITON_ALWAYS_COMPILE"), "TRITON_");
	assert_string_equal(ab_switch_exempt("FLAGTREE_NV_RLC_ENHANCE"), "FLAGTREE_");
	assert_null(ab_switch_exempt("FLAGGEMS_MXFP4_FOLDSCALE"));
	assert_null(ab_switch_exempt("MY_TRITON_X"));
}

static void put(const char *root, const char *rel, const char *text)
{
	char *path = path_join(root, rel), *dir = path_dirname(path);
	FILE *f;

	assert_int_equal(mkdir_p(dir, 0777), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
	free(dir);
}

static char *temp_dir(void)
{
	char tmpl[] = "/tmp/zlb-ab-XXXXXX";

	assert_non_null(mkdtemp(tmpl));
	return xstrdup(tmpl);
}

static void switch_search_in_src(void **state)
{
	char *co = temp_dir();
	char *src = path_join(co, "src");
	struct ab_switch_hit hit;

	put(co, "src/flag_gems/__init__.py", "import os\n");
	put(co, "src/flag_gems/ops/fold.py", "if os.getenv('FOLD_IT') == '1':\n    pass\n");
	put(co, "src/flag_gems/notes.txt", "DOC_ONLY\n");
	put(co, "src/flag_gems/__pycache__/x.py", "CACHED_ONLY\n");
	put(co, "src/.hidden/x.py", "HIDDEN_ONLY\n");
	put(co, "benchmark/test_fold.py", "BENCH_ONLY\n");
	put(co, "outside/real.py", "LINKED_ONLY\n");
	{
		char *link = path_join(co, "src/flag_gems/linked");
		char *target = path_join(co, "outside");
		assert_int_equal(symlink(target, link), 0);
		free(link);
		free(target);
	}

	assert_int_equal(ab_switch_search(co, "FOLD_IT", &hit), 0);
	assert_true(hit.found);
	assert_string_equal(hit.root, src);
	assert_string_equal(hit.where, "flag_gems/ops/fold.py");
	ab_switch_hit_release(&hit);

	static const char *const absent[] = { "FOLD", "DOC_ONLY", "CACHED_ONLY", "HIDDEN_ONLY",
					      "BENCH_ONLY", "LINKED_ONLY", NULL };
	for (const char *const *n = absent; *n; n++) {
		assert_int_equal(ab_switch_search(co, *n, &hit), 0);
		if (hit.found)
			fail_msg("%s found in %s", *n, hit.where);
		assert_null(hit.where);
		assert_int_equal(hit.files, 2);	/* __init__.py and ops/fold.py */
		ab_switch_hit_release(&hit);
	}

	/* A checkout without src/ is searched whole. */
	assert_int_equal(remove_tree(src), 0);
	assert_int_equal(ab_switch_search(co, "BENCH_ONLY", &hit), 0);
	assert_true(hit.found);
	assert_string_equal(hit.root, co);
	assert_string_equal(hit.where, "benchmark/test_fold.py");
	ab_switch_hit_release(&hit);

	assert_int_equal(remove_tree(co), 0);
	assert_int_equal(ab_switch_search(co, "X", &hit), -1);
	assert_error_has("cannot read");
	ab_switch_hit_release(&hit);
	free(src);
	free(co);
}

/* ---- the IR of round 1 ------------------------------------------------------------ */

static const char *const stages[] = { "ttir", "ttgir", "llir", "ptx", "cubin", NULL };

/* A run with a laid-out ttgir/: one kernel over two shapes, build tag in the text. */
static char *ir_run(const char *root, const char *name, const char *build)
{
	char *run = path_join(root, name);
	static const char *const shapes[] = { "64x64", "1024x1024", NULL };

	put(run, "ttgir/index.tsv", build);	/* describes the tree: not part of the IR */
	put(run, "ttgir/naming.md", build);
	for (const char *const *s = shapes; *s; s++)
		for (const char *const *st = stages; *st; st++) {
			char *rel = xstrfmt("ttgir/%s/kern/w4s3.%s", *s, *st);
			char *text = xstrfmt("// %s %s build %s\n", *s, *st,
					     !strcmp(*st, "ptx") || !strcmp(*st, "ttgir") ? build : "-");
			put(run, rel, text);
			free(rel);
			free(text);
		}
	return run;
}

static void ir_identical_and_differing(void **state)
{
	char *root = temp_dir();
	char *a = ir_run(root, "a", "A"), *a2 = ir_run(root, "a2", "A"), *b = ir_run(root, "b", "B");
	struct ab_ir_result r;

	assert_int_equal(ab_ir_compare(a, a2, &r), 0);
	assert_int_equal(r.verdict, AB_IR_IDENTICAL);
	assert_true(r.side[0].has_ir && r.side[1].has_ir);
	assert_true(r.side[0].fp.hash == r.side[1].fp.hash);
	assert_int_equal(r.side[0].fp.files, 10);
	assert_int_equal(r.same, 10);
	assert_int_equal(r.differing + r.only_a + r.only_b, 0);
	assert_int_equal(r.first.nr, 0);
	ab_ir_result_release(&r);

	assert_int_equal(ab_ir_compare(a, b, &r), 0);
	assert_int_equal(r.verdict, AB_IR_DIFFER);
	assert_true(r.side[0].fp.hash != r.side[1].fp.hash);
	assert_int_equal(r.same, 6);
	assert_int_equal(r.differing, 4);
	/* .ttgir first, then the rest in path order */
	assert_int_equal(r.first.nr, 4);
	assert_string_equal(r.first.v[0], "1024x1024/kern/w4s3.ttgir (differs)");
	assert_string_equal(r.first.v[1], "64x64/kern/w4s3.ttgir (differs)");
	assert_string_equal(r.first.v[2], "1024x1024/kern/w4s3.ptx (differs)");
	assert_string_equal(ab_ir_verdict_name(r.verdict), "differ");
	ab_ir_result_release(&r);

	/* A variant on one side only counts too (the variant set changed). */
	put(b, "ttgir/64x64/kern/w8s3.ttgir", "x");
	put(a2, "ttgir/4096x4096/kern/w4s3.ttgir", "y");
	assert_int_equal(ab_ir_compare(a2, b, &r), 0);
	assert_int_equal(r.verdict, AB_IR_DIFFER);
	assert_int_equal(r.only_a, 1);
	assert_int_equal(r.only_b, 1);
	assert_true(strvec_find(&r.first, "4096x4096/kern/w4s3.ttgir (only in A)") >= 0);
	assert_true(strvec_find(&r.first, "64x64/kern/w8s3.ttgir (only in B)") >= 0);
	ab_ir_result_release(&r);

	remove_tree(root);
	free(a);
	free(a2);
	free(b);
	free(root);
}

static void ir_missing_on_one_or_both_sides(void **state)
{
	char *root = temp_dir();
	char *a = ir_run(root, "a", "A");
	char *none1 = path_join(root, "none1"), *none2 = path_join(root, "none2");
	struct ab_ir_result r;

	put(none1, "run_identity.json", "{}");
	put(none2, "run_identity.json", "{}");
	assert_int_equal(ab_ir_compare(none1, none2, &r), 0);
	assert_int_equal(r.verdict, AB_IR_NONE);
	assert_false(r.side[0].has_ir || r.side[1].has_ir);
	assert_non_null(strstr(r.side[0].why, "no IR captured"));
	ab_ir_result_release(&r);

	assert_int_equal(ab_ir_compare(a, none1, &r), 0);
	assert_int_equal(r.verdict, AB_IR_ONE_SIDE);
	assert_true(r.side[0].has_ir && !r.side[1].has_ir);
	assert_string_equal(ab_ir_verdict_name(r.verdict), "one_side");
	ab_ir_result_release(&r);

	remove_tree(root);
	free(a);
	free(none1);
	free(none2);
	free(root);
}

static void expand_vendor(void **state)
{
	char *x;

	x = ab_expand_vendor("FLAGTREE_<VENDOR>_RLC_ENHANCE=0,1", "MUSA", "musa");
	assert_string_equal(x, "FLAGTREE_MUSA_RLC_ENHANCE=0,1");
	free(x);
	/* A vendor-less spelling drops the placeholder and its underscore. */
	x = ab_expand_vendor("FLAGTREE_<VENDOR>_RLC_ENHANCE=0,1", "", "cuda");
	assert_string_equal(x, "FLAGTREE_RLC_ENHANCE=0,1");
	free(x);
	x = ab_expand_vendor("X_<VENDOR>=<VENDOR>", "HCU", "x");
	assert_string_equal(x, "X_HCU=HCU");
	free(x);
	x = ab_expand_vendor("NO_PLACEHOLDER=1", NULL, "ascend");
	assert_string_equal(x, "NO_PLACEHOLDER=1");
	free(x);
	assert_null(ab_expand_vendor("FLAGTREE_<VENDOR>_X=1", NULL, "ascend"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(expand_vendor),
		cmocka_unit_test_setup_teardown(axis_sets_both_sides, setup_errors, teardown_errors),
		cmocka_unit_test_setup_teardown(axis_refusals, setup_errors, teardown_errors),
		cmocka_unit_test_setup_teardown(one_axis_and_no_double_settings, setup_errors,
						teardown_errors),
		cmocka_unit_test_setup_teardown(finish_unsets_one_sided_names_and_refuses_no_difference,
						setup_errors, teardown_errors),
		cmocka_unit_test_setup_teardown(side_environment, setup_errors, teardown_errors),
		cmocka_unit_test_setup_teardown(identifiers_not_substrings, setup_errors,
						teardown_errors),
		cmocka_unit_test_setup_teardown(switch_search_in_src, setup_errors, teardown_errors),
		cmocka_unit_test_setup_teardown(ir_identical_and_differing, setup_errors,
						teardown_errors),
		cmocka_unit_test_setup_teardown(ir_missing_on_one_or_both_sides, setup_errors,
						teardown_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
