/*
 * src/providers/flaggems_dtypes.c: the names FlagGems' --dtypes accepts,
 * read from a checkout's benchmark/conftest.py (and consts.py) however it
 * spells them; and the fake checkout the CLI tests use, which copies
 * upstream's conftest.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/paths.h"
#include "lib/strbuf.h"
#include "providers/flaggems_dtypes.h"

static char root[256];

static void put(const char *rel, const char *text)
{
	char *path = path_join(root, rel);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

static int setup(void **state)
{
	char *bench;

	snprintf(root, sizeof(root), "/tmp/zlb-dtypes-XXXXXX");
	assert_non_null(mkdtemp(root));
	bench = path_join(root, "benchmark");
	assert_int_equal(mkdir(bench, 0755), 0);
	free(bench);
	return 0;
}

static int teardown(void **state)
{
	assert_int_equal(remove_tree(root), 0);
	return 0;
}

static void assert_names(const struct strvec *got, const char *const *want)
{
	size_t n = 0;
	struct strbuf sb = STRBUF_INIT;

	while (want[n])
		n++;
	for (size_t i = 0; i < got->nr; i++)
		strbuf_addf(&sb, " %s", got->v[i]);
	if (got->nr != n)
		fail_msg("got%s", sb.buf);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(got->v[i], want[i]);
	strbuf_release(&sb);
}

#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Upstream's shape: a comprehension over consts lists plus torch.cfloat. */
static void upstream_comprehension(void **state)
{
	struct strvec got = STRVEC_INIT;
	struct strbuf why = STRBUF_INIT;

	put("benchmark/consts.py",
	      "import torch\n"
	      "FLOAT_DTYPES = [torch.float16, torch.float32, torch.bfloat16]\n"
	      "INT_DTYPES = [torch.int16, torch.int32]\n"
	      "BOOL_DTYPES = [torch.bool]\n"
	      "EXTRA_INT_DTYPES = [torch.int8, torch.uint8, torch.int64]\n"
	      "FP8_DTYPES = [get_fp8_dtype()]\n");
	put("benchmark/conftest.py",
	      "def pytest_addoption(parser):\n"
	      "    parser.addoption(\"--level\", choices=[\"core\", \"comprehensive\"])\n"
	      "    parser.addoption(\n"
	      "        \"--dtypes\",\n"
	      "        action=\"append\",\n"
	      "        choices=[\n"
	      "            str(ele).split(\".\")[-1]\n"
	      "            for ele in consts.FLOAT_DTYPES\n"
	      "            + consts.INT_DTYPES\n"
	      "            + consts.BOOL_DTYPES\n"
	      "            + [torch.cfloat]\n"
	      "        ],\n"
	      "        help=\"the dtypes (e.g. torch.float64 is not here)\",\n"
	      "    )\n"
	      "    parser.addoption(\"--shape_file\", choices=[\"x\"])\n");
	assert_int_equal(flaggems_dtype_choices(root, &got, &why), 0);
	assert_names(&got, NAMES("float16", "float32", "bfloat16", "int16", "int32", "bool",
				 "complex64"));
	strvec_clear(&got);

	/* A fork that adds a list: zlb takes what the checkout says. */
	put("benchmark/conftest.py",
	      "parser.addoption('--dtypes', action='append', default=None,\n"
	      "    choices=[str(e).split('.')[-1] for e in FLOAT_DTYPES + EXTRA_INT_DTYPES\n"
	      "             + [torch.double, torch.float8_e4m3fn]])\n");
	assert_int_equal(flaggems_dtype_choices(root, &got, &why), 0);
	assert_names(&got, NAMES("float16", "float32", "bfloat16", "int8", "uint8", "int64",
				 "float64", "float8_e4m3fn"));
	strvec_clear(&got);
	strbuf_release(&why);
}

static void literal_choices(void **state)
{
	struct strvec got = STRVEC_INIT;
	struct strbuf why = STRBUF_INIT;

	put("benchmark/conftest.py",
	      "parser.addoption(\"--dtypes\", choices=[\"float16\", 'bfloat16', \"float16\"],"
	      " help=\"x\")\n");
	assert_int_equal(flaggems_dtype_choices(root, &got, &why), 0);
	assert_names(&got, NAMES("float16", "bfloat16"));
	strvec_clear(&got);
	strbuf_release(&why);
}

static void unreadable_or_absent(void **state)
{
	struct strvec got = STRVEC_INIT;
	struct strbuf why = STRBUF_INIT;

	assert_int_equal(flaggems_dtype_choices("/nonexistent-zlb", &got, &why), 1);
	assert_non_null(strstr(why.buf, "cannot be read"));
	strbuf_reset(&why);

	/* --dtypes without choices, followed by another option's choices. */
	put("benchmark/conftest.py",
	      "parser.addoption(\"--dtypes\", action=\"append\")\n"
	      "parser.addoption(\"--mode\", choices=[\"kernel\"])\n");
	assert_int_equal(flaggems_dtype_choices(root, &got, &why), 1);
	assert_non_null(strstr(why.buf, "gives --dtypes no choices="));
	assert_int_equal(got.nr, 0);
	strbuf_reset(&why);

	put("benchmark/conftest.py", "parser.addoption(\"--dtypes\", choices=DTYPE_NAMES)\n");
	assert_int_equal(flaggems_dtype_choices(root, &got, &why), 1);
	assert_non_null(strstr(why.buf, "no dtype name found"));
	strbuf_release(&why);
}

static void torch_aliases(void **state)
{
	assert_string_equal(flaggems_torch_dtype_name("cfloat"), "complex64");
	assert_string_equal(flaggems_torch_dtype_name("half"), "float16");
	assert_string_equal(flaggems_torch_dtype_name("long"), "int64");
	assert_string_equal(flaggems_torch_dtype_name("bfloat16"), "bfloat16");
	assert_null(flaggems_torch_dtype_name("cuda"));
	assert_null(flaggems_torch_dtype_name("Tensor"));
}

/* The fake checkout copies upstream's conftest and consts: the same seven. */
static void fake_checkout(void **state)
{
	struct strvec got = STRVEC_INIT;
	struct strbuf why = STRBUF_INIT;
	char *dir = path_join(ZLB_TEST_DATA, "../fake_flaggems");

	assert_int_equal(flaggems_dtype_choices(dir, &got, &why), 0);
	assert_names(&got, flaggems_default_dtypes);
	strvec_clear(&got);
	strbuf_release(&why);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(upstream_comprehension, setup, teardown),
		cmocka_unit_test_setup_teardown(literal_choices, setup, teardown),
		cmocka_unit_test_setup_teardown(unreadable_or_absent, setup, teardown),
		cmocka_unit_test(torch_aliases),
		cmocka_unit_test(fake_checkout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
