/*
 * batch/dismiss.c: the hand-written dismiss list. Every mistake a person can
 * make in it must be refused with file:line and the fix, and matching must
 * honour repo prefixes and @op_file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch/dismiss.h"
#include "lib/error.h"
#include "lib/paths.h"
#include "lib/strbuf.h"

#include "error_capture.h"

static int setup(void **state)
{
	strbuf_reset(&errors);
	strbuf_reset(&warnings);
	set_error_routine(capture_error);
	set_warning_routine(capture_warning);
	return 0;
}

static int teardown(void **state)
{
	set_error_routine(NULL);
	set_warning_routine(NULL);
	return 0;
}

static void parses_both_reason_styles(void **state)
{
	struct dismiss_list dl = DISMISS_LIST_INIT;
	const char *text =
		"# known failures\n"
		"#!zlb-dismiss 1\n"
		"\n"
		"softmax            fails on H20: issue #123 (2025-05-01)\n"
		"vllm:fused_moe\t# OOM at the default shapes  \n"
		"main:nextafter_@nextafter_b  needs a newer torch\n"
		"perf_chunk@test_FLA/chunk  hangs";

	assert_int_equal(dismiss_parse(text, "dismiss.txt", &dl), 0);
	assert_int_equal(dl.nr, 4);
	assert_string_equal(dl.v[0].repo, "main");
	assert_string_equal(dl.v[0].op, "softmax");
	assert_null(dl.v[0].op_file);
	assert_string_equal(dl.v[0].reason, "fails on H20: issue #123 (2025-05-01)");
	assert_int_equal(dl.v[0].line, 4);
	assert_string_equal(dl.v[1].repo, "vllm");
	assert_string_equal(dl.v[1].op, "fused_moe");
	assert_string_equal(dl.v[1].reason, "OOM at the default shapes");
	assert_string_equal(dl.v[2].repo, "main");
	assert_string_equal(dl.v[2].op_file, "nextafter_b");
	assert_string_equal(dl.v[3].op_file, "test_FLA/chunk");
	assert_int_equal(dl.v[3].line, 7);
	assert_int_equal(warnings.len, 0);
	dismiss_release(&dl);
}

static void missing_reason_is_refused(void **state)
{
	struct dismiss_list dl = DISMISS_LIST_INIT;

	assert_int_equal(dismiss_parse("abs  ok\n\nsoftmax\n", "ops/dismiss.txt", &dl), -1);
	assert_contains(errors.buf, "ops/dismiss.txt:3:");
	assert_contains(errors.buf, "'softmax' has no reason");
	assert_contains(errors.buf, "softmax  fails on H20");
	dismiss_release(&dl);

	/* A bare '#' is no reason either. */
	strbuf_reset(&errors);
	assert_int_equal(dismiss_parse("softmax   #   \n", "d.txt", &dl), -1);
	assert_contains(errors.buf, "d.txt:1:");
	dismiss_release(&dl);
}

static void unknown_repo_is_refused(void **state)
{
	struct dismiss_list dl = DISMISS_LIST_INIT;

	assert_int_equal(dismiss_parse("# x\nvlm:fused_moe  typo\n", "d.txt", &dl), -1);
	assert_contains(errors.buf, "d.txt:2:");
	assert_contains(errors.buf, "unknown repository 'vlm'");
	assert_contains(errors.buf, "main: or vllm:");
	dismiss_release(&dl);
}

static void bad_names_are_refused(void **state)
{
	struct dismiss_list dl = DISMISS_LIST_INIT;
	static const char *const bad[] = {
		"soft-max  x\n", "../etc  x\n", "op@../x  x\n", "op@  x\n", "op@a/b/c  x\n",
		":op  x\n", "op@/abs  x\n", NULL,
	};

	for (const char *const *b = bad; *b; b++) {
		strbuf_reset(&errors);
		if (dismiss_parse(*b, "d.txt", &dl) != -1)
			fail_msg("'%s' was accepted", *b);
		assert_contains(errors.buf, "d.txt:1:");
		dismiss_release(&dl);
	}
}

static void duplicate_is_warned_first_kept(void **state)
{
	struct dismiss_list dl = DISMISS_LIST_INIT;

	assert_int_equal(dismiss_parse("abs  first\nmain:abs  second\nabs@abs  other\n",
				       "d.txt", &dl), 0);
	assert_int_equal(dl.nr, 2);
	assert_string_equal(dl.v[0].reason, "first");
	assert_contains(warnings.buf, "d.txt:2:");
	assert_contains(warnings.buf, "already dismissed on line 1");
	dismiss_release(&dl);
}

static void unknown_format_version_is_refused(void **state)
{
	struct dismiss_list dl = DISMISS_LIST_INIT;

	assert_int_equal(dismiss_parse("#!zlb-dismiss 2\nabs  x\n", "d.txt", &dl), -1);
	assert_contains(errors.buf, "d.txt:1:");
	assert_contains(errors.buf, "format");
	dismiss_release(&dl);
}

static void matching(void **state)
{
	struct dismiss_list dl = DISMISS_LIST_INIT;
	const struct dismiss_entry *e;

	assert_int_equal(dismiss_parse("softmax  a\nvllm:topk  b\nnextafter_@nextafter_b  c\n"
				       "unused  d\n", "d.txt", &dl), 0);
	e = dismiss_match(&dl, "main", "softmax", "softmax");
	assert_non_null(e);
	assert_string_equal(e->reason, "a");
	/* The main entry does not reach vllm's softmax, nor vllm's main. */
	assert_null(dismiss_match(&dl, "vllm", "softmax", "softmax"));
	assert_null(dismiss_match(&dl, "main", "topk", "topk"));
	assert_non_null(dismiss_match(&dl, "vllm", "topk", "x"));
	/* @op_file picks one file. */
	assert_null(dismiss_match(&dl, "main", "nextafter_", "nextafter_a"));
	assert_non_null(dismiss_match(&dl, "main", "nextafter_", "nextafter_b"));
	assert_true(dl.v[0].used && dl.v[1].used && dl.v[2].used);
	assert_false(dl.v[3].used);
	dismiss_release(&dl);
}

static void load_from_file(void **state)
{
	struct dismiss_list dl = DISMISS_LIST_INIT;
	char dir[] = "/tmp/zlb-dismiss-XXXXXX";
	char *path;

	assert_non_null(mkdtemp(dir));
	path = path_join(dir, "dismiss.txt");
	assert_int_equal(dismiss_load(path, &dl), -1);
	assert_int_equal(errno, ENOENT);
	assert_contains(errors.buf, "cannot read dismiss list");
	assert_int_equal(write_file_atomic(path, "abs  x\nabs\n", 11), 0);
	strbuf_reset(&errors);
	assert_int_equal(dismiss_load(path, &dl), -1);
	/* The message names the file itself. */
	char *where = xstrfmt("%s:2:", path);
	assert_contains(errors.buf, where);
	free(where);
	dismiss_release(&dl);
	assert_int_equal(write_file_atomic(path, "abs  x\n", 7), 0);
	assert_int_equal(dismiss_load(path, &dl), 0);
	assert_int_equal(dl.nr, 1);
	assert_string_equal(dl.path, path);
	dismiss_release(&dl);
	unlink(path);
	rmdir(dir);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(parses_both_reason_styles, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_reason_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_repo_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_names_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(duplicate_is_warned_first_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_format_version_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(matching, setup, teardown),
		cmocka_unit_test_setup_teardown(load_from_file, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
