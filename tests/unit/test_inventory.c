/*
 * The inventory: the static scan of benchmark modules (providers/
 * flaggems_scan.c), the reading of pytest's collection output, the tables
 * written and read back, and the selection `zlb batch --all` draws from
 * them (core/inventory*.c). The fake checkouts are tests/fake_inventory.
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
#include "batch/inventory.h"
#include "batch/inventory_build.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "providers/flaggems_scan.h"

#define FAKE_MAIN ZLB_TEST_DATA "/../fake_inventory/main"
#define FAKE_VLLM ZLB_TEST_DATA "/../fake_inventory/vllm"

#include "error_capture.h"

static char tmpdir[64];

static int setup(void **state)
{
	strbuf_reset(&errors);
	strbuf_reset(&warnings);
	set_error_routine(capture_error);
	set_warning_routine(capture_warning);
	strcpy(tmpdir, "/tmp/zlb-inventory-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	set_error_routine(NULL);
	set_warning_routine(NULL);
	remove_tree(tmpdir);
	return 0;
}

static const struct scanned_test *find_test(const struct flaggems_scan *s, const char *op_file,
					    const char *test)
{
	for (size_t i = 0; i < s->nr; i++)
		if (!strcmp(s->v[i].op_file, op_file) && !strcmp(s->v[i].test, test))
			return &s->v[i];
	return NULL;
}

/* ---- the static scan ---- */

static const char module_src[] =
	"'''Module docstring.\n"
	"def test_in_docstring():\n"
	"'''\n"
	"import pytest\n"
	"from pytest import mark\n"
	"\n"
	"pytestmark = [pytest.mark.filterwarnings(\"ignore\"),\n"
	"              pytest.mark.skipif(\n"
	"                  not HAS_X, reason='needs x')]\n"
	"\n"
	"\n"
	"@pytest.mark.skip(\n"
	"    reason=\"broken (issue #1)\",\n"
	")\n"
	"@pytest.mark.multi\n"
	"def test_one():\n"
	"    bench = GenericBenchmark(op_name=\"one\", torch_op=None)\n"
	"    bench.run()\n"
	"\n"
	"\n"
	"@mark.skip\n"
	"def test_two(a,\n"
	"             b):\n"
	"    pass\n"
	"\n"
	"\n"
	"# @pytest.mark.skip(reason=\"commented\")\n"
	"@pytest.mark.skip_layer_norm\n"
	"@pytest.mark.skipif(vendor == 'x', reason=\"f(a, b) fails\")\n"
	"def test_three():\n"
	"    x = \"\"\"\n"
	"def test_in_string():\n"
	"\"\"\"\n"
	"\n"
	"\n"
	"class TestThing:\n"
	"    @pytest.mark.skip\n"
	"    def test_method(self):\n"
	"        pass\n"
	"\n"
	"\n"
	"def helper():\n"
	"    pass\n"
	"\n"
	"\n"
	"def test_three():\n"
	"    pass\n"
	"\n"
	"\n"
	"def test_(x):\n"
	"    pass\n";

static void scan_reads_decorators_and_module_marks(void **state)
{
	struct flaggems_scan s = FLAGGEMS_SCAN_INIT;
	const struct scanned_test *t;

	flaggems_scan_text(tmpdir, "benchmark/test_mod.py", module_src, &s);
	/* Not the docstring's, the string's, the class method or "test_". */
	assert_int_equal(s.nr, 3);
	assert_int_equal(s.files.nr, 1);

	t = find_test(&s, "mod", "test_one");
	assert_non_null(t);
	assert_string_equal(t->op, "one");
	assert_string_equal(t->rel_path, "benchmark/test_mod.py");
	assert_int_equal(t->line, 16);
	assert_string_equal(t->skip, "broken (issue #1)");
	/* The module's skipif reaches every test; its condition is kept. */
	assert_string_equal(t->skipif, "skipif: needs x [if not HAS_X]");
	assert_string_equal(t->op_name, "one");

	t = find_test(&s, "mod", "test_two");
	assert_non_null(t);
	assert_string_equal(t->skip, "(no reason)");

	t = find_test(&s, "mod", "test_three");
	assert_non_null(t);
	assert_null(t->skip);  /* skip_layer_norm is no skip mark */
	assert_string_equal(t->skipif, "skipif: needs x [if not HAS_X]; "
				       "skipif: f(a, b) fails [if vendor == 'x']");
	/* Defined twice: one row, and a warning naming the line. */
	assert_contains(warnings.buf, "benchmark/test_mod.py:46 redefines test_three");
	flaggems_scan_release(&s);
}

static void scan_module_level_skips(void **state)
{
	struct flaggems_scan s = FLAGGEMS_SCAN_INIT;

	flaggems_scan_text(tmpdir, "benchmark/test_a.py",
			   "import pytest\n"
			   "pytestmark = pytest.mark.skip(reason='module off')\n"
			   "def test_a():\n    pass\n", &s);
	flaggems_scan_text(tmpdir, "benchmark/test_b.py",
			   "import pytest\n"
			   "try:\n"
			   "    import vllm\n"
			   "except ImportError:\n"
			   "    pytest.skip('no vllm', allow_module_level=True)\n"
			   "ops = pytest.importorskip(\"vllm._C\")\n"
			   "def test_b():\n    pass\n", &s);
	flaggems_scan_text(tmpdir, "benchmark/sub/test_c.py",
			   "import pytest\n"
			   "pytest.skip(\"always\", allow_module_level=True)\n"
			   "def test_c():\n    pass\n", &s);
	assert_int_equal(s.nr, 3);
	assert_string_equal(s.v[0].skip, "module off");
	assert_null(s.v[0].skipif);
	assert_null(s.v[1].skip);
	assert_string_equal(s.v[1].skipif, "module skip: no vllm; importorskip: vllm._C");
	assert_string_equal(s.v[2].op_file, "sub/c");
	assert_string_equal(s.v[2].skip, "always");
	flaggems_scan_release(&s);
}

static void op_file_of_paths(void **state)
{
	char *a = flaggems_op_file_of("benchmark/test_softmax.py");
	char *b = flaggems_op_file_of("benchmark/test_FLA/test_chunk.py");

	assert_string_equal(a, "softmax");
	assert_string_equal(b, "test_FLA/chunk");
	free(a);
	free(b);
}

static void scan_fake_checkout(void **state)
{
	struct flaggems_scan s = FLAGGEMS_SCAN_INIT;
	const struct scanned_test *t;

	assert_int_equal(flaggems_scan_checkout(FAKE_MAIN, &s), 0);
	/* models_benchmark/ is not an operator suite. */
	assert_int_equal(s.files.nr, 10);
	assert_int_equal(s.nr, 16);
	assert_int_equal(strvec_find(&s.files, "benchmark/test_FLA/test_chunk.py") >= 0, 1);
	t = find_test(&s, "softmax", "test_softmax_backward");
	assert_non_null(t);
	assert_string_equal(t->op_name, "softmax_backward");
	assert_string_equal(t->chain, "UnaryReductionBenchmark>GenericBenchmark>Benchmark");
	t = find_test(&s, "skips", "test_isneginf_out");
	assert_string_equal(t->skip, "No support to non-boolean outputs: issue #2687");
	t = find_test(&s, "skips", "test_abs");
	assert_null(t->skip);
	t = find_test(&s, "module_skip", "test_disabled");
	assert_string_equal(t->skip, "whole module disabled");
	t = find_test(&s, "module_skipif", "test_cond_two");
	assert_string_equal(t->skipif, "skipif: module condition [if True]");
	assert_non_null(find_test(&s, "test_FLA/chunk", "test_perf_chunk"));
	assert_null(find_test(&s, "shadowed", "test_in_docstring"));
	flaggems_scan_release(&s);

	assert_int_equal(flaggems_scan_checkout(tmpdir, &s), -1);
	assert_contains(errors.buf, "has no benchmark/ folder");
	flaggems_scan_release(&s);
}

/* ---- pytest's collection ---- */

/* What pytest 7 prints for tests/fake_inventory/main (trimmed). */
static const char collect_out[] =
	"benchmark/test_module_skip.py::test_disabled\n"
	"benchmark/test_module_skipif.py::test_cond_one\n"
	"benchmark/test_module_skipif.py::test_cond_two\n"
	"benchmark/test_nextafter_a.py::test_nextafter_\n"
	"benchmark/test_nextafter_b.py::test_nextafter_\n"
	"benchmark/test_params.py::test_mm[1]\n"
	"benchmark/test_params.py::test_mm[2]\n"
	"benchmark/test_params.py::test_mm[3]\n"
	"benchmark/test_params.py::TestMatmul::test_bmm\n"
	"benchmark/test_shadowed.py::test_kept\n"
	"benchmark/test_skips.py::test_isneginf_out\n"
	"benchmark/test_skips.py::test_bare_skip\n"
	"benchmark/test_skips.py::test_skip_layernorm\n"
	"benchmark/test_skips.py::test_abs\n"
	"benchmark/test_softmax.py::test_softmax\n"
	"benchmark/test_softmax.py::test_softmax_backward\n"
	"benchmark/test_FLA/test_chunk.py::test_perf_chunk\n"
	"\n"
	"==================================== ERRORS ====================================\n"
	"_______________ ERROR collecting benchmark/test_broken_import.py _______________\n"
	"ImportError while importing test module '/x/benchmark/test_broken_import.py'.\n"
	"benchmark/test_broken_import.py:1: in <module>\n"
	"    import zlb_fake_module_that_does_not_exist\n"
	"E   ModuleNotFoundError: No module named 'zlb_fake_module_that_does_not_exist'\n"
	"=========================== short test summary info ============================\n"
	"ERROR benchmark/test_broken_import.py\n"
	"17 tests collected, 1 error in 0.02s\n";

static const struct inventory_row *find_row(const struct inventory *inv, const char *node)
{
	for (size_t i = 0; i < inv->nr; i++)
		if (!strcmp(inv->rows[i].node, node))
			return &inv->rows[i];
	return NULL;
}

static void scan_main(struct inventory *inv, struct inventory_repo_info *info)
{
	memset(info, 0, sizeof(*info));
	strvec_init(&info->benchmark_files);
	info->repo = "main";
	info->checkout = path_absolute(FAKE_MAIN);
	assert_int_equal(inventory_scan(inv, info), 0);
}

static void collect_marks_rows(void **state)
{
	struct inventory inv = INVENTORY_INIT;
	struct inventory_repo_info info;
	const struct inventory_row *r;

	scan_main(&inv, &info);
	assert_string_equal(info.package, "flag_gems");
	assert_int_equal(info.functions, 16);
	assert_int_equal(info.skipped, 3);
	assert_int_equal(info.unverified, 16);
	assert_int_equal(inventory_apply_collect(&inv, 0, collect_out, 1, &info), 0);
	assert_string_equal(info.verify, "pytest");
	assert_int_equal(inv.nr, 17);
	assert_int_equal(info.collect_only, 1);
	assert_int_equal(info.collected, 15);
	assert_int_equal(info.not_collected, 2);
	assert_int_equal(info.unverified, 0);
	assert_int_equal(info.collect_errors, 1);

	r = find_row(&inv, "benchmark/test_params.py::test_mm");
	assert_string_equal(r->collected, "yes");
	assert_string_equal(r->cases, "3");
	r = find_row(&inv, "benchmark/test_shadowed.py::test_shadowed");
	assert_string_equal(r->collected, "no");
	assert_string_equal(r->note, "pytest did not collect it");
	r = find_row(&inv, "benchmark/test_broken_import.py::test_broken");
	assert_string_equal(r->collected, "no");
	assert_string_equal(r->note, "collection error: ModuleNotFoundError: No module "
				     "named 'zlb_fake_module_that_does_not_exist'");
	r = find_row(&inv, "benchmark/test_params.py::TestMatmul::test_bmm");
	assert_non_null(r);
	assert_string_equal(r->source, "collect");
	assert_string_equal(r->op, "bmm");
	assert_string_equal(r->op_file, "params");
	assert_string_equal(r->test, "TestMatmul::test_bmm");
	r = find_row(&inv, "benchmark/test_FLA/test_chunk.py::test_perf_chunk");
	assert_string_equal(r->collected, "yes");
	assert_string_equal(r->op_file, "test_FLA/chunk");

	inventory_sort(&inv, 0);
	for (size_t i = 1; i < inv.nr; i++) {
		int c = strcmp(inv.rows[i - 1].op_file, inv.rows[i].op_file);
		assert_true(c < 0 || (c == 0 && strcmp(inv.rows[i - 1].test, inv.rows[i].test) < 0));
	}
	inventory_repo_info_release(&info);
	inventory_release(&inv);
}

static void collect_failure_leaves_unverified(void **state)
{
	struct inventory inv = INVENTORY_INIT;
	struct inventory_repo_info info;

	/* A conftest that cannot import torch: pytest stops with exit 4. */
	scan_main(&inv, &info);
	assert_int_equal(inventory_apply_collect(&inv, 0,
		"ImportError while loading conftest '/x/benchmark/conftest.py'.\n"
		"benchmark/conftest.py:20: in <module>\n"
		"    import torch\n"
		"E   ModuleNotFoundError: No module named 'torch'\n", 4, &info), -1);
	assert_contains(info.verify, "pytest could not collect (exit 4)");
	assert_contains(info.verify, "No module named 'torch'");
	for (size_t i = 0; i < inv.nr; i++)
		assert_string_equal(inv.rows[i].collected, "unverified");
	assert_int_equal(info.unverified, 16);
	inventory_repo_info_release(&info);
	inventory_release(&inv);

	/* Every module failing to import is no verdict on the functions either. */
	scan_main(&inv, &info);
	assert_int_equal(inventory_apply_collect(&inv, 0,
		"ERROR benchmark/test_abs.py - ModuleNotFoundError: No module named 'torch'\n"
		"ERROR benchmark/test_mm.py - ModuleNotFoundError: No module named 'torch'\n"
		"2 errors in 0.1s\n", 1, &info), -1);
	assert_contains(info.verify, "2 file(s) failed to import");
	assert_contains(info.verify, "No module named 'torch'");
	inventory_repo_info_release(&info);
	inventory_release(&inv);

	/* Nothing collected and nothing wrong: a real answer (all "no"). */
	scan_main(&inv, &info);
	assert_int_equal(inventory_apply_collect(&inv, 0, "no tests collected in 0.01s\n", 5,
						 &info), 0);
	assert_int_equal(info.not_collected, 16);
	assert_string_equal(inv.rows[0].collected, "no");
	inventory_repo_info_release(&info);
	inventory_release(&inv);
}

/* ---- tables and selection ---- */

/* Build both fake repos' tables in tmpdir as `zlb inventory` would. */
static void build_tables(int verified)
{
	struct inventory inv = INVENTORY_INIT;
	struct inventory_repo_info infos[2];
	size_t start_vllm;

	scan_main(&inv, &infos[0]);
	if (verified)
		assert_int_equal(inventory_apply_collect(&inv, 0, collect_out, 1, &infos[0]), 0);
	inventory_sort(&inv, 0);
	start_vllm = inv.nr;
	memset(&infos[1], 0, sizeof(infos[1]));
	strvec_init(&infos[1].benchmark_files);
	infos[1].repo = "vllm";
	infos[1].checkout = path_absolute(FAKE_VLLM);
	assert_int_equal(inventory_scan(&inv, &infos[1]), 0);
	inventory_sort(&inv, start_vllm);
	assert_int_equal(inventory_write_csv(tmpdir, "main", &inv, 0, start_vllm), 0);
	assert_int_equal(inventory_write_csv(tmpdir, "vllm", &inv, start_vllm,
					     inv.nr - start_vllm), 0);
	assert_int_equal(inventory_write_meta(tmpdir, infos, 2), 0);
	inventory_repo_info_release(&infos[0]);
	inventory_repo_info_release(&infos[1]);
	inventory_release(&inv);
}

static void write_then_load(void **state)
{
	struct inventory inv = INVENTORY_INIT;
	struct strbuf sb = STRBUF_INIT;
	char *path;

	build_tables(1);
	assert_int_equal(inventory_load(tmpdir, &inv), 0);
	assert_int_equal(inv.nr, 17 + 3);
	/* Main first, sorted by op_file then test; every field back as written. */
	assert_string_equal(inv.rows[0].repo, "main");
	assert_string_equal(inv.rows[0].op_file, "broken_import");
	assert_string_equal(inv.rows[inv.nr - 1].repo, "vllm");
	for (size_t i = 0; i < inv.nr; i++) {
		const struct inventory_row *r = &inv.rows[i];
		if (!strcmp(r->test, "test_softmax") && !strcmp(r->repo, "main")) {
			assert_string_equal(r->skipif, "skipif: Issue #4131: not working "
					    "[if vendor_name == \"tsingmicro\"]");
			assert_string_equal(r->op_name, "softmax");
			assert_string_equal(r->cases, "1");
			assert_string_equal(r->source, "scan");
		}
	}
	inventory_release(&inv);

	path = path_join(tmpdir, "inventory.json");
	assert_int_equal(strbuf_read_file(&sb, path, 1 << 20), 0);
	assert_contains(sb.buf, "\"schema_version\": 1");
	assert_contains(sb.buf, "\"functions\": 16");
	assert_contains(sb.buf, "\"collect_only\": 1");

	/* A table from another format version is refused, with the fix. */
	assert_int_equal(write_file_atomic(path, "{\"schema_version\": 2}\n", 22), 0);
	assert_int_equal(inventory_load(tmpdir, &inv), -1);
	assert_contains(errors.buf, "rebuild the inventory with zlb inventory");
	inventory_release(&inv);
	strbuf_release(&sb);
	free(path);
}

static void load_needs_a_table(void **state)
{
	struct inventory inv = INVENTORY_INIT;
	char *csv = path_join(tmpdir, "inventory_main.csv");

	assert_int_equal(inventory_load(tmpdir, &inv), -1);
	assert_contains(errors.buf, "holds no inventory_main.csv or inventory_vllm.csv");
	assert_contains(errors.buf, "zlb inventory --out");
	strbuf_reset(&errors);
	assert_int_equal(write_file_atomic(csv, "op,test\nabs,test_abs\n", 21), 0);
	assert_int_equal(inventory_load(tmpdir, &inv), -1);
	assert_contains(errors.buf, "has no 'op_file' column");
	inventory_release(&inv);
	free(csv);
}

static int has(const struct strvec *sv, const char *s)
{
	return strvec_find(sv, s) >= 0;
}

static const char *excluded_reason(const struct strvec *ex, const char *spec)
{
	size_t n = strlen(spec);

	for (size_t i = 0; i < ex->nr; i++)
		if (!strncmp(ex->v[i], spec, n) && ex->v[i][n] == '\t')
			return ex->v[i] + n + 1;
	return NULL;
}

static void select_all_with_dismiss(void **state)
{
	struct strvec specs = STRVEC_INIT, ex = STRVEC_INIT;
	char *dismiss = path_join(tmpdir, "dismiss.txt");
	const char *list =
		"# verified failures\n"
		"softmax_backward  fails: issue #9\n"
		"vllm:fused_moe    # OOM\n"
		"nextafter_@nextafter_a  flaky\n"
		"no_such_op  stale entry\n";

	build_tables(1);
	assert_int_equal(write_file_atomic(dismiss, list, strlen(list)), 0);
	/* NULL: the ops folder's own dismiss.txt. */
	assert_int_equal(inventory_select_all(tmpdir, NULL, &specs, &ex), 0);

	assert_true(has(&specs, "softmax"));
	assert_true(has(&specs, "abs"));
	assert_true(has(&specs, "skip_layernorm"));      /* skipif does not exclude */
	assert_true(has(&specs, "cond_one"));
	assert_true(has(&specs, "mm"));
	assert_true(has(&specs, "perf_chunk"));
	assert_true(has(&specs, "nextafter_@nextafter_b"));  /* same op in two files */
	assert_true(has(&specs, "vllm:softmax"));       /* another repo: no @file */
	/* vllm was not verified here: its rows are unverified, and taken. */
	assert_true(has(&specs, "vllm:topk_softmax"));
	assert_true(has(&specs, "kept"));
	assert_true(has(&specs, "cond_two"));
	assert_int_equal(specs.nr, 11);

	assert_contains(excluded_reason(&ex, "softmax_backward"), "dismissed: fails: issue #9");
	assert_contains(excluded_reason(&ex, "softmax_backward"), "dismiss.txt:2");
	assert_contains(excluded_reason(&ex, "vllm:fused_moe"), "dismissed: OOM");
	assert_contains(excluded_reason(&ex, "nextafter_@nextafter_a"), "dismissed: flaky");
	assert_string_equal(excluded_reason(&ex, "isneginf_out"),
			    "skip mark: No support to non-boolean outputs: issue #2687");
	assert_string_equal(excluded_reason(&ex, "bare_skip"), "skip mark: (no reason)");
	assert_string_equal(excluded_reason(&ex, "disabled"), "skip mark: whole module disabled");
	assert_string_equal(excluded_reason(&ex, "shadowed"), "not collected by pytest");
	assert_string_equal(excluded_reason(&ex, "broken"), "not collected by pytest");
	assert_contains(excluded_reason(&ex, "bmm"), "test class method");
	assert_int_equal(specs.nr + ex.nr, 20);
	assert_contains(warnings.buf, "no_such_op matches no function");
	strvec_clear(&specs);
	strvec_clear(&ex);

	/* An explicit list that is not there is an error, not "nothing dismissed". */
	char *missing = path_join(tmpdir, "nope.txt");
	assert_int_equal(inventory_select_all(tmpdir, missing, &specs, NULL), -1);
	assert_contains(errors.buf, "nope.txt");
	strvec_clear(&specs);

	/* A bad list stops the selection with file:line. */
	assert_int_equal(write_file_atomic(dismiss, "abs\n", 4), 0);
	strbuf_reset(&errors);
	assert_int_equal(inventory_select_all(tmpdir, NULL, &specs, NULL), -1);
	assert_contains(errors.buf, "dismiss.txt:1:");
	strvec_clear(&specs);
	free(missing);
	free(dismiss);
}

static void select_all_unverified(void **state)
{
	struct strvec specs = STRVEC_INIT, ex = STRVEC_INIT;

	/* Without collection, every function without a skip mark is taken. */
	build_tables(0);
	assert_int_equal(inventory_select_all(tmpdir, NULL, &specs, &ex), 0);
	assert_true(has(&specs, "shadowed"));
	assert_true(has(&specs, "broken"));
	assert_true(has(&specs, "vllm:topk_softmax"));
	assert_false(has(&specs, "bmm"));  /* only pytest finds it */
	assert_int_equal(ex.nr, 3);         /* the three skip marks */
	assert_int_equal(specs.nr + ex.nr, 19);
	strvec_clear(&specs);
	strvec_clear(&ex);
}

static void push_row(struct inventory *inv, const char *repo, const char *op,
		     const char *op_file, const char *test)
{
	struct inventory_row *r;

	inv->rows = xrealloc(inv->rows, (inv->nr + 1) * sizeof(*inv->rows));
	r = &inv->rows[inv->nr++];
	memset(r, 0, sizeof(*r));
	r->repo = xstrdup(repo);
	r->op = xstrdup(op);
	r->op_file = xstrdup(op_file);
	r->test = xstrdup(test);
	r->node = xstrdup("");
	r->skip = xstrdup("");
	r->skipif = xstrdup("");
	r->op_name = xstrdup("");
	r->bench_class = xstrdup("");
	r->collected = xstrdup("yes");
	r->cases = xstrdup("1");
	r->source = xstrdup("scan");
	r->note = xstrdup("");
}

static void spec_syntax(void **state)
{
	struct inventory inv = INVENTORY_INIT;
	const char *want[] = { "mm", "bmm", "vllm:mm", "add@add_a", "add@add_b", "vllm:add" };
	char *spec;

	push_row(&inv, "main", "mm", "blas", "test_mm");
	/* A class method sharing the op name does not force @file on bmm. */
	push_row(&inv, "main", "bmm", "blas", "test_bmm");
	push_row(&inv, "main", "bmm", "blas2", "TestBlas::test_bmm");
	push_row(&inv, "vllm", "mm", "mm", "test_mm");
	push_row(&inv, "main", "add", "add_a", "test_add");
	push_row(&inv, "main", "add", "add_b", "test_add");
	push_row(&inv, "vllm", "add", "add", "test_add");
	for (size_t i = 0, w = 0; i < inv.nr; i++) {
		if (i == 2)
			continue;
		spec = inventory_spec(&inv, i);
		assert_string_equal(spec, want[w++]);
		free(spec);
	}
	inventory_release(&inv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(scan_reads_decorators_and_module_marks, setup, teardown),
		cmocka_unit_test_setup_teardown(scan_module_level_skips, setup, teardown),
		cmocka_unit_test_setup_teardown(op_file_of_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(scan_fake_checkout, setup, teardown),
		cmocka_unit_test_setup_teardown(collect_marks_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(collect_failure_leaves_unverified, setup, teardown),
		cmocka_unit_test_setup_teardown(write_then_load, setup, teardown),
		cmocka_unit_test_setup_teardown(load_needs_a_table, setup, teardown),
		cmocka_unit_test_setup_teardown(select_all_with_dismiss, setup, teardown),
		cmocka_unit_test_setup_teardown(select_all_unverified, setup, teardown),
		cmocka_unit_test_setup_teardown(spec_syntax, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
