/*
 * providers/flaggems.c against a small fake FlagGems checkout built in a
 * temporary directory: finding the checkout, resolving an operator or a
 * pytest node to a benchmark file, and the static read of the Benchmark
 * class chain that tells preflight which shape-file key applies.
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
#include <unistd.h>

#include "lib/error.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "providers/flaggems.h"

#include "error_capture.h"

static const char base_py[] =
	"import torch\n"
	"\n"
	"\n"
	"class Benchmark:\n"
	"    def __init__(self, op_name, torch_op, dtypes=None, is_backward=False):\n"
	"        self.op_name = op_name\n"
	"\n"
	"    def set_shapes(self, shape_file_path=None):\n"
	"        self.shapes = []\n"
	"\n"
	"\n"
	"class GenericBenchmark(Benchmark):\n"
	"    def set_more_shapes(self):\n"
	"        return []\n"
	"\n"
	"\n"
	"class UnaryReductionBenchmark(Benchmark):\n"
	"    def set_more_shapes(self):\n"
	"        return []\n"
	"\n"
	"\n"
	"class BlasBenchmark(Benchmark):\n"
	"    pass\n";

static const char softmax_py[] =
	"import pytest\n"
	"import torch\n"
	"\n"
	"from . import base\n"
	"\n"
	"\n"
	"@pytest.mark.softmax\n"
	"def test_softmax():\n"
	"    bench = base.UnaryReductionBenchmark(\n"
	"        op_name=\"softmax\",\n"
	"        torch_op=torch.nn.functional.softmax,\n"
	"        dtypes=[torch.float16],\n"
	"    )\n"
	"    bench.run()\n"
	"\n"
	"\n"
	"@pytest.mark.softmax_backward\n"
	"def test_softmax_backward():\n"
	"    bench = base.UnaryReductionBenchmark(\n"
	"        op_name=\"softmax\",\n"
	"        torch_op=torch.nn.functional.softmax,\n"
	"        is_backward=True,\n"
	"    )\n"
	"    bench.run()\n";

static const char mm_py[] =
	"import torch\n"
	"\n"
	"from . import base\n"
	"\n"
	"\n"
	"def test_mm():\n"
	"    bench = base.BlasBenchmark(op_name='mm', torch_op=torch.mm)\n"
	"    bench.run()\n";

static const char layer_norm_py[] =
	"import torch\n"
	"\n"
	"from . import base\n"
	"\n"
	"\n"
	"class NormBenchmark(base.GenericBenchmark):\n"
	"    def set_more_shapes(self):\n"
	"        return [(1, 2)]\n"
	"\n"
	"\n"
	"def test_layer_norm():\n"
	"    bench = NormBenchmark(op_name=\"layer_norm\", torch_op=torch.layer_norm)\n"
	"    bench.run()\n";

static const char attention_py[] =
	"from . import base\n"
	"\n"
	"\n"
	"class AttentionBenchmark(base.GenericBenchmark):\n"
	"    def set_shapes(self, shape_file_path=None):\n"
	"        self.shapes = [(4, 8, 1024, 64)]\n"
	"\n"
	"\n"
	"def test_attention():\n"
	"    bench = AttentionBenchmark(op_name=\"attention\", torch_op=None)\n"
	"    bench.run()\n"
	"\n"
	"\n"
	"class Helper:\n"
	"    def test_not_an_op(self):\n"
	"        pass\n";

static const char dup_py[] =
	"def test_dup():\n"
	"    pass\n";

static const char chunk_py[] =
	"from .. import base\n"
	"\n"
	"\n"
	"def test_chunk():\n"
	"    bench = base.GenericBenchmark(op_name=\"chunk\", torch_op=None)\n"
	"    bench.run()\n";

struct fixture {
	char root[PATH_MAX];
	char *ck;            /* <root>/FlagGems */
	char cwd[PATH_MAX];
};

static void put(const char *dir, const char *rel, const char *text)
{
	char *path = path_join(dir, rel);
	char *parent = path_dirname(path);

	assert_int_equal(mkdir_p(parent, 0755), 0);
	assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
	free(parent);
	free(path);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	char tmpl[] = "/tmp/zlb-flaggems-XXXXXX";

	/* Resolved, so that it compares equal to getcwd() after a chdir. */
	if (!mkdtemp(tmpl) || !realpath(tmpl, f->root) || !getcwd(f->cwd, sizeof(f->cwd)))
		return -1;
	f->ck = path_join(f->root, "FlagGems");
	put(f->ck, "benchmark/base.py", base_py);
	put(f->ck, "benchmark/__init__.py", "");
	put(f->ck, "benchmark/conftest.py", "def pytest_addoption(parser):\n    pass\n");
	put(f->ck, "benchmark/test_softmax.py", softmax_py);
	put(f->ck, "benchmark/test_mm.py", mm_py);
	put(f->ck, "benchmark/test_layer_norm.py", layer_norm_py);
	put(f->ck, "benchmark/test_attention.py", attention_py);
	put(f->ck, "benchmark/test_dup_a.py", dup_py);
	put(f->ck, "benchmark/test_dup_b.py", dup_py);
	put(f->ck, "benchmark/test_FLA/test_chunk.py", chunk_py);
	put(f->ck, "src/flag_gems/__init__.py", "__version__ = '0'\n");
	/* Not a benchmark: outside benchmark/. */
	put(f->root, "elsewhere/test_stray.py", "def test_stray():\n    pass\n");
	strbuf_reset(&errors);
	strbuf_reset(&warnings);
	set_error_routine(capture_error);
	set_warning_routine(capture_warning);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int r = chdir(f->cwd);

	set_error_routine(NULL);
	set_warning_routine(NULL);
	r |= remove_tree(f->root);
	free(f->ck);
	free(f);
	strbuf_release(&errors);
	strbuf_release(&warnings);
	return r ? -1 : 0;
}

static void assert_chain(const struct strvec *chain, const char *const *want)
{
	size_t n = 0;

	while (want[n])
		n++;
	if (chain->nr != n) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < chain->nr; i++)
			strbuf_addf(&sb, " %s", chain->v[i]);
		fail_msg("chain has %zu entries (%s), want %zu", chain->nr, sb.buf, n);
	}
	for (size_t i = 0; i < n; i++)
		assert_string_equal(chain->v[i], want[i]);
}

#define CHAIN(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void resolve_by_op(void **state)
{
	struct fixture *f = *state;
	struct flaggems_target t;
	char *path;

	assert_int_equal(flaggems_resolve(&t, f->ck, "softmax", NULL, NULL), 0);
	assert_string_equal(t.dir, f->ck);
	assert_string_equal(t.op, "softmax");
	assert_string_equal(t.op_file, "softmax");
	path = path_join(f->ck, "benchmark/test_softmax.py");
	assert_string_equal(t.test_path, path);
	free(path);
	assert_string_equal(t.node, "benchmark/test_softmax.py::test_softmax");
	assert_string_equal(t.package, "flag_gems");
	assert_string_equal(t.op_name, "softmax");
	assert_chain(&t.chain, CHAIN("UnaryReductionBenchmark", "Benchmark"));
	assert_null(t.hardcoding_class);
	flaggems_target_release(&t);

	/* is_backward=True: FlagGems appends "_backward" to the op_name. */
	assert_int_equal(flaggems_resolve(&t, f->ck, "softmax_backward", NULL, NULL), 0);
	assert_string_equal(t.node, "benchmark/test_softmax.py::test_softmax_backward");
	assert_string_equal(t.op_file, "softmax");
	assert_string_equal(t.op_name, "softmax_backward");
	assert_chain(&t.chain, CHAIN("UnaryReductionBenchmark", "Benchmark"));
	flaggems_target_release(&t);

	/* Single-quoted op_name. */
	assert_int_equal(flaggems_resolve(&t, f->ck, "mm", NULL, NULL), 0);
	assert_string_equal(t.op_name, "mm");
	assert_chain(&t.chain, CHAIN("BlasBenchmark", "Benchmark"));
	flaggems_target_release(&t);

	/* A class local to the test module, based on one of base.py's. */
	assert_int_equal(flaggems_resolve(&t, f->ck, "layer_norm", NULL, NULL), 0);
	assert_string_equal(t.op_name, "layer_norm");
	assert_chain(&t.chain, CHAIN("NormBenchmark", "GenericBenchmark", "Benchmark"));
	assert_null(t.hardcoding_class);
	flaggems_target_release(&t);

	/* A class that overrides set_shapes hard-codes its shapes. */
	assert_int_equal(flaggems_resolve(&t, f->ck, "attention", NULL, NULL), 0);
	assert_chain(&t.chain, CHAIN("AttentionBenchmark", "GenericBenchmark", "Benchmark"));
	assert_non_null(t.hardcoding_class);
	assert_string_equal(t.hardcoding_class, "AttentionBenchmark");
	flaggems_target_release(&t);

	/* A relative checkout path is made absolute. */
	assert_int_equal(chdir(f->root), 0);
	assert_int_equal(flaggems_resolve(&t, "FlagGems", "mm", NULL, NULL), 0);
	assert_string_equal(t.dir, f->ck);
	flaggems_target_release(&t);
	assert_string_equal(errors.buf, "");
}

static void resolve_by_op_and_file(void **state)
{
	struct fixture *f = *state;
	struct flaggems_target t;

	assert_int_equal(flaggems_resolve(&t, f->ck, "softmax", "softmax", NULL), 0);
	assert_string_equal(t.node, "benchmark/test_softmax.py::test_softmax");
	assert_string_equal(t.op_name, "softmax");
	flaggems_target_release(&t);

	/* The file exists but does not define the op. */
	assert_int_equal(flaggems_resolve(&t, f->ck, "softmax", "mm", NULL), -1);
	assert_contains(errors.buf, "no benchmark test_softmax in ");
	assert_contains(errors.buf, "test_mm.py");
	assert_null(t.dir);
	assert_null(t.node);

	strbuf_reset(&errors);
	assert_int_equal(flaggems_resolve(&t, f->ck, "softmax", "nosuch", NULL), -1);
	assert_contains(errors.buf, "benchmark/test_nosuch.py does not exist "
			"(from op file 'nosuch')");
}

static void resolve_in_subfolder(void **state)
{
	struct fixture *f = *state;
	struct flaggems_target t;
	char *path;

	assert_int_equal(flaggems_resolve(&t, f->ck, "chunk", NULL, NULL), 0);
	path = path_join(f->ck, "benchmark/test_FLA/test_chunk.py");
	assert_string_equal(t.test_path, path);
	free(path);
	assert_string_equal(t.node, "benchmark/test_FLA/test_chunk.py::test_chunk");
	/* The op_file recorded is the form --op-file accepts back. */
	assert_string_equal(t.op_file, "test_FLA/chunk");
	assert_string_equal(t.op_name, "chunk");
	assert_chain(&t.chain, CHAIN("GenericBenchmark", "Benchmark"));
	flaggems_target_release(&t);

	assert_int_equal(flaggems_resolve(&t, f->ck, "chunk", "test_FLA/chunk", NULL), 0);
	assert_string_equal(t.node, "benchmark/test_FLA/test_chunk.py::test_chunk");
	flaggems_target_release(&t);
}

static void duplicate_needs_op_file(void **state)
{
	struct fixture *f = *state;
	struct flaggems_target t;

	assert_int_equal(flaggems_resolve(&t, f->ck, "dup", NULL, NULL), -1);
	assert_contains(errors.buf, "test_dup is defined in 2 benchmark files");
	assert_contains(errors.buf, "test_dup_a.py");
	assert_contains(errors.buf, "test_dup_b.py");
	assert_contains(errors.buf, "--op-file");

	assert_int_equal(flaggems_resolve(&t, f->ck, "dup", "dup_b", NULL), 0);
	assert_string_equal(t.node, "benchmark/test_dup_b.py::test_dup");
	assert_string_equal(t.op_file, "dup_b");
	/* No Benchmark constructor: nothing claimed. */
	assert_null(t.op_name);
	assert_int_equal(t.chain.nr, 0);
	flaggems_target_release(&t);
}

static void unknown_op_suggests(void **state)
{
	struct fixture *f = *state;
	struct flaggems_target t;
	char *where = xstrfmt("no benchmark test_sofmax in %s/benchmark; close names: "
			      "softmax", f->ck);

	assert_int_equal(flaggems_resolve(&t, f->ck, "sofmax", NULL, NULL), -1);
	assert_contains(errors.buf, where);
	free(where);

	strbuf_reset(&errors);
	assert_int_equal(flaggems_resolve(&t, f->ck, "zzzzzzzzzzzzzzzzzzzz", NULL, NULL), -1);
	assert_contains(errors.buf, "and no operator with a similar name");

	/* A method named test_* inside a class is no operator. */
	strbuf_reset(&errors);
	assert_int_equal(flaggems_resolve(&t, f->ck, "not_an_op", NULL, NULL), -1);
	assert_contains(errors.buf, "no benchmark test_not_an_op");

	strbuf_reset(&errors);
	assert_int_equal(flaggems_resolve(&t, f->ck, "", NULL, NULL), -1);
	assert_contains(errors.buf, "no operator given");
}

static void close_names(void **state)
{
	struct fixture *f = *state;
	struct strvec out = STRVEC_INIT;

	flaggems_close_names(f->ck, "sofmax", &out, 5);
	assert_true(out.nr >= 1);
	assert_string_equal(out.v[0], "softmax");
	assert_int_equal(strvec_find(&out, "mm"), -1);
	strvec_clear(&out);

	/* A name containing the query is a hint too, however long. */
	flaggems_close_names(f->ck, "layer", &out, 5);
	assert_true(strvec_find(&out, "layer_norm") >= 0);
	strvec_clear(&out);

	/* Each name once, even when defined in two files. */
	flaggems_close_names(f->ck, "dupe", &out, 5);
	assert_int_equal(out.nr, 1);
	assert_string_equal(out.v[0], "dup");
	strvec_clear(&out);

	/* max is respected. */
	flaggems_close_names(f->ck, "softmax", &out, 1);
	assert_int_equal(out.nr, 1);
	assert_string_equal(out.v[0], "softmax");
	strvec_clear(&out);
}

static void resolve_by_node(void **state)
{
	struct fixture *f = *state;
	struct flaggems_target t;
	char *node;

	/* Absolute, without a checkout: it is the folder above benchmark/. */
	node = xstrfmt("%s/benchmark/test_mm.py::test_mm", f->ck);
	assert_int_equal(flaggems_resolve(&t, NULL, NULL, NULL, node), 0);
	assert_string_equal(t.dir, f->ck);
	assert_string_equal(t.op, "mm");
	assert_string_equal(t.op_file, "mm");
	assert_string_equal(t.node, "benchmark/test_mm.py::test_mm");
	assert_string_equal(t.package, "flag_gems");
	assert_chain(&t.chain, CHAIN("BlasBenchmark", "Benchmark"));
	flaggems_target_release(&t);
	free(node);

	/* Relative to the cwd. */
	assert_int_equal(chdir(f->root), 0);
	assert_int_equal(flaggems_resolve(&t, NULL, NULL, NULL,
					  "FlagGems/benchmark/test_layer_norm.py::test_layer_norm"), 0);
	assert_string_equal(t.dir, f->ck);
	assert_string_equal(t.op, "layer_norm");
	assert_chain(&t.chain, CHAIN("NormBenchmark", "GenericBenchmark", "Benchmark"));
	flaggems_target_release(&t);

	/* Relative to the checkout, from somewhere else. */
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(flaggems_resolve(&t, f->ck, NULL, NULL,
					  "benchmark/test_softmax.py::test_softmax_backward"), 0);
	assert_string_equal(t.op, "softmax_backward");
	assert_string_equal(t.op_name, "softmax_backward");
	flaggems_target_release(&t);

	/* A parametrised id: the "[...]" part is dropped. */
	assert_int_equal(flaggems_resolve(&t, f->ck, NULL, NULL,
					  "benchmark/test_softmax.py::test_softmax[torch.float16-1024]"), 0);
	assert_string_equal(t.op, "softmax");
	assert_string_equal(t.node, "benchmark/test_softmax.py::test_softmax");
	flaggems_target_release(&t);

	/* In a subfolder. */
	assert_int_equal(flaggems_resolve(&t, f->ck, NULL, NULL,
					  "benchmark/test_FLA/test_chunk.py::test_chunk"), 0);
	assert_string_equal(t.dir, f->ck);
	assert_string_equal(t.node, "benchmark/test_FLA/test_chunk.py::test_chunk");
	flaggems_target_release(&t);

	/* A node beats op and op_file arguments. */
	assert_int_equal(flaggems_resolve(&t, f->ck, "softmax", "softmax",
					  "benchmark/test_mm.py::test_mm"), 0);
	assert_string_equal(t.op, "mm");
	flaggems_target_release(&t);
	assert_string_equal(errors.buf, "");
	assert_string_equal(warnings.buf, "");
}

static void node_in_another_checkout_warns(void **state)
{
	struct fixture *f = *state;
	struct flaggems_target t;
	char *other = path_join(f->root, "Other");
	char *node = xstrfmt("%s/benchmark/test_mm.py::test_mm", f->ck);

	put(other, "benchmark/base.py", base_py);
	assert_int_equal(flaggems_resolve(&t, other, NULL, NULL, node), 0);
	assert_string_equal(t.dir, f->ck);
	assert_contains(warnings.buf, "lies in the checkout");
	assert_contains(warnings.buf, other);
	flaggems_target_release(&t);
	free(node);
	free(other);
}

static void bad_nodes_refused(void **state)
{
	struct fixture *f = *state;
	struct flaggems_target t;
	char *node;

	node = xstrfmt("%s/elsewhere/test_stray.py::test_stray", f->root);
	assert_int_equal(flaggems_resolve(&t, NULL, NULL, NULL, node), -1);
	assert_contains(errors.buf, "is not inside a benchmark/ folder");
	assert_null(t.dir);
	assert_null(t.test_path);
	free(node);

	strbuf_reset(&errors);
	assert_int_equal(flaggems_resolve(&t, f->ck, NULL, NULL,
					  "benchmark/test_missing.py::test_missing"), -1);
	assert_contains(errors.buf, "test_missing.py");
	assert_contains(errors.buf, "does not exist");

	strbuf_reset(&errors);
	assert_int_equal(flaggems_resolve(&t, f->ck, NULL, NULL, "benchmark/test_mm.py"), -1);
	assert_contains(errors.buf, "must look like path/benchmark/test_<file>.py::test_<op>");

	strbuf_reset(&errors);
	assert_int_equal(flaggems_resolve(&t, f->ck, NULL, NULL,
					  "benchmark/test_mm.py::Helper::test_x"), -1);
	assert_contains(errors.buf, "must name a module-level test function");

	strbuf_reset(&errors);
	assert_int_equal(flaggems_resolve(&t, f->ck, NULL, NULL,
					  "benchmark/test_mm.py::test_softmax"), -1);
	assert_contains(errors.buf, "defines no module-level test_softmax");
	assert_null(t.dir);
}

static void find_checkout_explicit(void **state)
{
	struct fixture *f = *state;
	struct strbuf looked = STRBUF_INIT;
	char *out = (char *)"junk", *missing = path_join(f->root, "nope");

	assert_int_equal(flaggems_find_checkout(f->ck, NULL, &looked, &out), 0);
	assert_string_equal(out, f->ck);
	assert_string_equal(looked.buf, f->ck);
	free(out);

	/* Relative to the cwd. */
	strbuf_reset(&looked);
	assert_int_equal(chdir(f->root), 0);
	assert_int_equal(flaggems_find_checkout("./FlagGems/", NULL, &looked, &out), 0);
	assert_string_equal(out, f->ck);
	free(out);

	/* An explicit directory wins over an importable package. */
	strbuf_reset(&looked);
	assert_int_equal(flaggems_find_checkout(missing, "/x/src/flag_gems/__init__.py",
						&looked, &out), -1);
	assert_null(out);
	assert_contains(errors.buf, "does not exist");
	assert_contains(errors.buf, missing);
	assert_string_equal(looked.buf, missing);

	/* A directory without benchmark/. */
	strbuf_reset(&errors);
	strbuf_reset(&looked);
	{
		char *src = path_join(f->ck, "src");
		assert_int_equal(flaggems_find_checkout(src, NULL, &looked, &out), -1);
		assert_null(out);
		assert_contains(errors.buf, "has no benchmark/ folder");
		free(src);
	}
	strbuf_release(&looked);
	free(missing);
}

static void find_checkout_from_package(void **state)
{
	struct fixture *f = *state;
	struct strbuf looked = STRBUF_INIT;
	char *out = NULL;
	char *init = path_join(f->ck, "src/flag_gems/__init__.py");
	char *want;

	assert_int_equal(chdir("/"), 0);
	assert_int_equal(flaggems_find_checkout(NULL, init, &looked, &out), 0);
	assert_string_equal(out, f->ck);
	want = xstrfmt("root of the importable package (%s)", f->ck);
	assert_contains(looked.buf, want);
	free(want);
	free(out);
	strbuf_reset(&looked);

	/* An empty explicit dir counts as none. */
	assert_int_equal(flaggems_find_checkout("", init, &looked, &out), 0);
	assert_string_equal(out, f->ck);
	free(out);
	strbuf_reset(&looked);

	/* A package installed into site-packages: fall back to ./FlagGems. */
	put(f->root, "venv/lib/python3/site-packages/flag_gems/__init__.py", "");
	free(init);
	init = path_join(f->root, "venv/lib/python3/site-packages/flag_gems/__init__.py");
	assert_int_equal(chdir(f->root), 0);
	assert_int_equal(flaggems_find_checkout(NULL, init, &looked, &out), 0);
	assert_string_equal(out, f->ck);
	want = xstrfmt("above %s (no benchmark/ folder: not an editable install); %s",
		       init, f->ck);
	assert_contains(looked.buf, want);
	free(want);
	free(out);

	strbuf_release(&looked);
	free(init);
}

static void find_checkout_fallback(void **state)
{
	struct fixture *f = *state;
	struct strbuf looked = STRBUF_INIT;
	char *out = NULL, *want, *empty = path_join(f->root, "empty");

	assert_int_equal(chdir(f->root), 0);
	assert_int_equal(flaggems_find_checkout(NULL, NULL, &looked, &out), 0);
	assert_string_equal(out, f->ck);
	want = xstrfmt("an importable flag_gems (none); %s", f->ck);
	assert_string_equal(looked.buf, want);
	free(want);
	free(out);

	/* Nowhere: an error, and every place is listed. */
	strbuf_reset(&looked);
	assert_int_equal(mkdir_p(empty, 0755), 0);
	assert_int_equal(chdir(empty), 0);
	assert_int_equal(flaggems_find_checkout(NULL, NULL, &looked, &out), -1);
	assert_null(out);
	assert_contains(errors.buf, "no FlagGems checkout found");
	want = xstrfmt("an importable flag_gems (none); %s/FlagGems", empty);
	assert_string_equal(looked.buf, want);
	free(want);

	/* A ./FlagGems without benchmark/ is not one. */
	strbuf_reset(&looked);
	put(empty, "FlagGems/README.md", "x\n");
	assert_int_equal(flaggems_find_checkout(NULL, NULL, &looked, &out), -1);

	strbuf_release(&looked);
	free(empty);
}

static void package_names(void **state)
{
	struct fixture *f = *state;
	char *vllm = path_join(f->root, "vllm");
	char *bare = path_join(f->root, "bare");

	assert_string_equal(flaggems_package(f->ck), "flag_gems");
	put(vllm, "benchmark/base.py", base_py);
	put(vllm, "src/flaggems_vllm/__init__.py", "");
	assert_string_equal(flaggems_package(vllm), "flaggems_vllm");
	put(bare, "benchmark/base.py", base_py);
	put(bare, "src/other/__init__.py", "");
	assert_null(flaggems_package(bare));

	/* And resolve reports it. */
	put(vllm, "benchmark/test_mm.py", mm_py);
	{
		struct flaggems_target t;
		assert_int_equal(flaggems_resolve(&t, vllm, "mm", NULL, NULL), 0);
		assert_string_equal(t.package, "flaggems_vllm");
		flaggems_target_release(&t);
		put(bare, "benchmark/test_mm.py", mm_py);
		assert_int_equal(flaggems_resolve(&t, bare, "mm", NULL, NULL), 0);
		assert_null(t.package);
		flaggems_target_release(&t);
	}
	free(vllm);
	free(bare);
}

/*
 * A test function whose own name ends in "Benchmark": its `def` line is no
 * constructor call, and reading the word before the name (at the very
 * start of the body) stays inside the body (it read 2 bytes before it).
 */
static void def_named_benchmark_is_no_call(void **state)
{
	struct fixture *f = *state;
	struct flaggems_target t = { .dir = f->ck, .op = "fooBenchmark" };

	strvec_init(&t.chain);
	flaggems_scan_benchmark(&t, "def test_fooBenchmark():\n    pass\n");
	assert_int_equal(t.chain.nr, 0);
	flaggems_scan_benchmark(&t, "import x\n\ndef test_fooBenchmark():\n"
				"    bench = BlasBenchmark(op_name=\"foo\", torch_op=x)\n"
				"    bench.run()\n");
	assert_string_equal(t.op_name, "foo");
	assert_chain(&t.chain, CHAIN("BlasBenchmark", "Benchmark"));
	free(t.op_name);
	strvec_clear(&t.chain);
	free(t.hardcoding_class);
}

/*
 * get_input_iter hard-codes its shapes when its code never reads a name
 * "shapes": a comment or a string saying the word is no read (on the H200,
 * "# Typical 3D CNN shapes" made max_pool3d_with_indices_backward's own
 * list look like one read from the shape file, and the single-shape asset
 * gave it a 2-D shape that its 5-D inputs cannot take).
 */
static void hardcoded_iter_with_the_word_in_comments_and_strings(void **state)
{
	struct fixture *f = *state;
	static const char *const bodies[] = {
		"        # Typical 3D CNN shapes (N, C, D, H, W)\n"
		"        shapes_5d = [(4, 3, 16, 56, 56)]\n",
		"        \"\"\"Its own shapes,\n        not the file's.\"\"\"\n"
		"        shapes_5d = [(4, 3, 16, 56, 56)]\n",
		"        note = 'shapes' + \"shapes\" + \"a \\\" shapes\"\n"
		"        shapes_5d = [(4, 3, 16, 56, 56)]\n",
	};
	static const char *const readers[] = {
		"        for s in self.shapes:  # the file's\n"
		"            yield s\n",
		"        print(f\"{len(self.shapes)} shapes\")\n",
	};

	for (size_t hard = 0; hard < 2; hard++) {
		size_t n = hard ? sizeof(bodies) / sizeof(*bodies) : sizeof(readers) / sizeof(*readers);
		for (size_t i = 0; i < n; i++) {
			struct flaggems_target t = { .dir = f->ck, .op = "pool" };
			char *text = xstrfmt(
				"import base\n\n"
				"class PoolBenchmark(base.GenericBenchmark):\n"
				"    def get_input_iter(self, dtype):\n%s"
				"        for shape in shapes_5d:\n"
				"            yield shape\n\n"
				"def test_pool():\n"
				"    bench = PoolBenchmark(op_name=\"pool\", torch_op=None)\n"
				"    bench.run()\n", hard ? bodies[i] : readers[i]);

			strvec_init(&t.chain);
			flaggems_scan_benchmark(&t, text);
			assert_chain(&t.chain, CHAIN("PoolBenchmark", "GenericBenchmark",
						     "Benchmark"));
			if (hard)
				assert_string_equal(t.hardcoding_class, "PoolBenchmark");
			else
				assert_null(t.hardcoding_class);
			free(t.op_name);
			free(t.hardcoding_class);
			strvec_clear(&t.chain);
			free(text);
		}
	}
}

static void edit_distances(void **state)
{
	assert_int_equal(edit_distance("", ""), 0);
	assert_int_equal(edit_distance("abc", ""), 3);
	assert_int_equal(edit_distance("", "abc"), 3);
	assert_int_equal(edit_distance("softmax", "softmax"), 0);
	assert_int_equal(edit_distance("sofmax", "softmax"), 1);
	assert_int_equal(edit_distance("softmax", "sofmax"), 1);
	assert_int_equal(edit_distance("kitten", "sitting"), 3);
	assert_int_equal(edit_distance("sitting", "kitten"), 3);
	assert_int_equal(edit_distance("flaw", "lawn"), 2);
	assert_int_equal(edit_distance("mm", "bmm"), 1);
	assert_int_equal(edit_distance("abcd", "dcba"), 4);
	assert_int_equal(edit_distance("layer_norm", "rms_norm"), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(resolve_by_op, setup, teardown),
		cmocka_unit_test_setup_teardown(resolve_by_op_and_file, setup, teardown),
		cmocka_unit_test_setup_teardown(resolve_in_subfolder, setup, teardown),
		cmocka_unit_test_setup_teardown(duplicate_needs_op_file, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_op_suggests, setup, teardown),
		cmocka_unit_test_setup_teardown(close_names, setup, teardown),
		cmocka_unit_test_setup_teardown(resolve_by_node, setup, teardown),
		cmocka_unit_test_setup_teardown(node_in_another_checkout_warns, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_nodes_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(find_checkout_explicit, setup, teardown),
		cmocka_unit_test_setup_teardown(find_checkout_from_package, setup, teardown),
		cmocka_unit_test_setup_teardown(find_checkout_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(package_names, setup, teardown),
		cmocka_unit_test_setup_teardown(hardcoded_iter_with_the_word_in_comments_and_strings,
						setup, teardown),
		cmocka_unit_test_setup_teardown(def_named_benchmark_is_no_call, setup, teardown),
		cmocka_unit_test(edit_distances),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
