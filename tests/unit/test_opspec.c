/* Operator specs [repo:]op[@file] (batch/opspec.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include <stdio.h>

#include "lib/error.h"
#include "lib/strbuf.h"
#include "batch/opspec.h"
#include "error_capture.h"

static void quiet(const char *p, const char *m) {}

static void check(const char *text, const char *spec, const char *repo, const char *op,
		  const char *file, const char *key)
{
	struct op_spec s;
	assert_int_equal(opspec_parse(&s, text), 0);
	assert_string_equal(s.spec, spec);
	assert_string_equal(s.repo, repo);
	assert_string_equal(s.op, op);
	if (file)
		assert_string_equal(s.file, file);
	else
		assert_null(s.file);
	assert_string_equal(s.key, key);
	opspec_release(&s);
}

static void test_valid(void **state)
{
	check("softmax", "softmax", "main", "softmax", NULL, "softmax");
	check("main:softmax", "softmax", "main", "softmax", NULL, "softmax");
	check("vllm:fused_marlin_moe", "vllm:fused_marlin_moe", "vllm", "fused_marlin_moe",
	      NULL, "fused_marlin_moe");
	check("nextafter_@nextafter_", "nextafter_@nextafter_", "main", "nextafter_",
	      "nextafter_", "nextafter_@nextafter_");
	check("vllm:mm@blas/test-mm", "vllm:mm@blas/test-mm", "vllm", "mm", "blas/test-mm",
	      "mm@blas+test-mm");
}

static void test_invalid(void **state)
{
	const char *bad[] = { "", "x:softmax", "soft max", "../x", "a/b", "op@", "op@../x",
			      "op@a/b/c", "op@/abs", ":op", "vllm:", "op@a b", "op@-x", NULL };
	set_error_routine(quiet);
	for (const char **b = bad; *b; b++) {
		struct op_spec s;
		if (opspec_parse(&s, *b) == 0)
			fail_msg("'%s' was accepted", *b);
	}
	set_error_routine(NULL);
}

/*
 * Each part within its own limit, the two together over the 200 bytes of
 * a directory name: refused with a sentence (it used to abort in BUG()).
 */
static void test_long_op_and_file(void **state)
{
	char op[121], file[101], text[240];
	struct op_spec s;

	memset(op, 'a', 120);
	op[120] = '\0';
	memset(file, 'b', 100);
	file[100] = '\0';
	snprintf(text, sizeof(text), "%s@%s", op, file);
	set_error_routine(capture_error);
	strbuf_reset(&errors);
	assert_int_equal(opspec_parse(&s, text), -1);
	assert_contains(errors.buf, "221 bytes");
	assert_null(s.key);
	/* At the limit it is still a spec. */
	file[79] = '\0';
	snprintf(text, sizeof(text), "%s@%s", op, file);
	assert_int_equal(opspec_parse(&s, text), 0);
	assert_int_equal(strlen(s.key), 200);
	opspec_release(&s);
	set_error_routine(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_long_op_and_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
