#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "run/table.h"

#define CUDAGRAPH_LOG ZLB_SAMPLES_DIR "/flaggems-cudagraph-mode.log"
#define KERNEL_LOG ZLB_SAMPLES_DIR "/flaggems-kernel-mode.log"

#define SUCCESS_GREEN "\033[32mSUCCESS\033[0m"

#include "error_capture.h"

static int setup(void **state)
{
	strbuf_reset(&errors);
	set_error_routine(capture_error);
	return 0;
}

static int teardown(void **state)
{
	set_error_routine(NULL);
	return 0;
}

static void read_text(const char *path, struct strbuf *sb)
{
	strbuf_reset(sb);
	if (strbuf_read_file(sb, path, 0))
		fail_msg("cannot read %s", path);
}

/* The lines of a file, without their newlines (an empty last one dropped). */
static void read_lines(const char *path, struct strvec *lines)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p, *nl;

	read_text(path, &sb);
	for (p = sb.buf; (nl = strchr(p, '\n')); p = nl + 1)
		strvec_pushf(lines, "%.*s", (int)(nl - p), p);
	if (*p)
		strvec_push(lines, p);
	strbuf_release(&sb);
}

/* Run lines through a filter; return the output, each line + "\n". */
static char *filter_lines(int color, const char *const *lines, size_t n, int flush)
{
	struct strbuf out = STRBUF_INIT;
	struct table_filter tf;
	size_t i;

	table_filter_init(&tf, color, table_emit_strbuf, &out);
	for (i = 0; i < n; i++)
		table_filter_line(&tf, lines[i], strlen(lines[i]));
	if (flush)
		table_filter_flush(&tf);
	assert_false(table_filter_holding(&tf));
	table_filter_release(&tf);
	return strbuf_detach(&out, NULL);
}

/* The same for a NULL-terminated list, flushed at the end. */
static char *filter_list(int color, const char *const *lines)
{
	size_t n = 0;

	while (lines[n])
		n++;
	return filter_lines(color, lines, n, 1);
}

static size_t count(const char *haystack, const char *needle)
{
	size_t n = 0;
	const char *p = haystack;

	while ((p = strstr(p, needle))) {
		n++;
		p += strlen(needle);
	}
	return n;
}

static size_t find_title(const struct strvec *lines, const char *op)
{
	char *want = xstrfmt("Operator: %s  ", op);
	size_t i;

	for (i = 0; i < lines->nr; i++)
		if (starts_with(lines->v[i], want))
			break;
	free(want);
	if (i == lines->nr)
		fail_msg("no table for %s", op);
	return i;
}

static void check_row(const struct table_block *b, size_t i, const char *status,
		      const char *const *fields, const char *detail)
{
	size_t j;

	assert_true(i < b->nr_rows);
	assert_string_equal(b->rows[i].status, status);
	assert_int_equal(b->rows[i].fields.nr, b->nr_fields);
	for (j = 0; j < b->nr_fields; j++)
		assert_string_equal(b->rows[i].fields.v[j], fields[j]);
	assert_string_equal(b->rows[i].size_detail, detail);
}

/* Parsing the real output. */

static const char *const ops[] = {
	"softmax", "sum_dim_out", "layer_norm", "add", "exp", "mm",
};

static void parse_log(const char *path, const char *mode)
{
	struct strvec lines = STRVEC_INIT;
	struct table_block b = TABLE_BLOCK_INIT;
	size_t i, k, blocks = 0;

	read_lines(path, &lines);
	for (i = 0; i < lines.nr; i++) {
		int n, tflops;

		if (!table_is_title(lines.v[i]))
			continue;
		n = table_parse_block((const char *const *)lines.v + i, lines.nr - i, &b);
		assert_int_equal(n, 6);
		assert_true(blocks < 6);
		assert_string_equal(b.op, ops[blocks]);
		assert_string_equal(b.dtype, "torch.float16");
		assert_string_equal(b.mode, mode);
		assert_string_equal(b.level, "core");
		assert_string_equal(b.title, lines.v[i]);
		assert_int_equal(b.nr_rows, 3);
		/* The block ends at the blank line print() leaves after it. */
		assert_string_equal(lines.v[i + (size_t)n], "");

		/* add, exp and mm have a TFLOPS column. */
		tflops = blocks >= 3;
		assert_int_equal(b.nr_fields, tflops ? 4 : 3);
		assert_int_equal(b.columns.nr, b.nr_fields + 2);
		assert_string_equal(b.columns.v[0], "Status");
		assert_string_equal(b.columns.v[1], "Torch Latency (ms)");
		assert_string_equal(b.columns.v[2], "Gems Latency (ms)");
		assert_string_equal(b.columns.v[3], "Gems Speedup");
		if (tflops)
			assert_string_equal(b.columns.v[4], "TFLOPS");
		assert_string_equal(b.columns.v[b.columns.nr - 1], "Size Detail");
		assert_int_equal(table_block_field(&b, "Gems Speedup"), 2);
		assert_int_equal(table_block_field(&b, "TFLOPS"), tflops ? 3 : -1);
		assert_int_equal(table_block_field(&b, "Size Detail"), -1);
		for (k = 0; k < b.nr_rows; k++) {
			assert_string_equal(b.rows[k].status, "SUCCESS");
			assert_true(b.rows[k].size_detail[0] == '[' ||
				    b.rows[k].size_detail[0] == '(');
		}
		blocks++;
		i += (size_t)n - 1;
	}
	assert_int_equal(blocks, 6);
	assert_int_equal(errors.len, 0);
	table_block_release(&b);
	strvec_clear(&lines);
}

static void test_parse_cudagraph_log(void **state)
{
	struct strvec lines = STRVEC_INIT;
	struct table_block b = TABLE_BLOCK_INIT;
	const char *const *v;

	parse_log(CUDAGRAPH_LOG, "cudagraph");

	/* Values exactly as printed, row by row. */
	read_lines(CUDAGRAPH_LOG, &lines);
	v = (const char *const *)lines.v;
	assert_int_equal(table_parse_block(v + find_title(&lines, "softmax"), 6, &b), 6);
	check_row(&b, 0, "SUCCESS", (const char *[]){ "0.004690", "0.002301", "2.038" },
		  "[torch.Size([1024, 1024]), 1]");
	check_row(&b, 2, "SUCCESS", (const char *[]){ "0.506664", "0.128471", "3.944" },
		  "[torch.Size([16384, 8192]), 1]");

	assert_int_equal(table_parse_block(v + find_title(&lines, "sum_dim_out"),
					   lines.nr - find_title(&lines, "sum_dim_out"), &b), 6);
	check_row(&b, 1, "SUCCESS", (const char *[]){ "0.006511", "0.008329", "0.782" },
		  "([torch.Size([4096, 4096]), 1], {'out': torch.Size([4096])})");

	assert_int_equal(table_parse_block(v + find_title(&lines, "layer_norm"), 7, &b), 6);
	check_row(&b, 2, "SUCCESS", (const char *[]){ "0.102179", "0.068467", "1.492" },
		  "[torch.Size([16384, 4096]), [4096], torch.Size([4096]), torch.Size([4096])]");

	assert_int_equal(table_parse_block(v + find_title(&lines, "add"), 6, &b), 6);
	check_row(&b, 0, "SUCCESS",
		  (const char *[]){ "0.001194", "0.001183", "1.010", "0.111" },
		  "[torch.Size([65536]), torch.Size([65536])]");

	assert_int_equal(table_parse_block(v + find_title(&lines, "exp"), 6, &b), 6);
	check_row(&b, 2, "SUCCESS",
		  (const char *[]){ "0.064560", "0.070871", "0.911", "0.947" },
		  "[torch.Size([67108864])]");

	assert_int_equal(table_parse_block(v + find_title(&lines, "mm"), 6, &b), 6);
	check_row(&b, 0, "SUCCESS",
		  (const char *[]){ "0.005359", "0.005274", "1.016", "407.199" },
		  "[torch.Size([1024, 1024]), torch.Size([1024, 1024])]");

	table_block_release(&b);
	strvec_clear(&lines);
}

static void test_parse_kernel_log(void **state)
{
	struct strvec lines = STRVEC_INIT;
	struct table_block b = TABLE_BLOCK_INIT;
	const char *const *v;

	parse_log(KERNEL_LOG, "kernel");
	read_lines(KERNEL_LOG, &lines);
	v = (const char *const *)lines.v;
	assert_int_equal(table_parse_block(v + find_title(&lines, "softmax"), 6, &b), 6);
	check_row(&b, 0, "SUCCESS", (const char *[]){ "0.009440", "0.069152", "0.137" },
		  "[torch.Size([1024, 1024]), 1]");
	assert_int_equal(table_parse_block(v + find_title(&lines, "mm"), 6, &b), 6);
	check_row(&b, 2, "SUCCESS",
		  (const char *[]){ "1.682240", "1.860256", "0.904", "591.054" },
		  "[torch.Size([8192, 8192]), torch.Size([8192, 8192])]");
	table_block_release(&b);
	strvec_clear(&lines);
}

static void test_parse_tolerates_line_endings_and_na(void **state)
{
	static const char *const lines[] = {
		"Operator: bmm  Performance Test (dtype=torch.bfloat16, mode=kernel,level=core)\r\n",
		"Status       Torch Latency (ms)    Gems Latency (ms)         Gems Speedup           Torch GBPS            Gems GBPS           Size Detail\n",
		"----------------------------------------------------------------------------------------------------------------------------------------\n",
		"SUCCESS               0.010000            0.020000               0.500               1.000               2.000          [torch.Size([2, 3])]\n",
		"FAILED                     N/A                 N/A                 N/A                 N/A                 N/A          N/A\n",
		"PASSED\n",
	};
	struct table_block b = TABLE_BLOCK_INIT;

	assert_int_equal(table_parse_block(lines, 6, &b), 5);
	assert_string_equal(b.op, "bmm");
	assert_string_equal(b.dtype, "torch.bfloat16");
	assert_string_equal(b.level, "core");
	/* Upstream's names are "Torch GBPS " with a space; the space is padding. */
	assert_int_equal(table_block_field(&b, "Torch GBPS"), 3);
	assert_int_equal(table_block_field(&b, "Gems GBPS"), 4);
	check_row(&b, 0, "SUCCESS",
		  (const char *[]){ "0.010000", "0.020000", "0.500", "1.000", "2.000" },
		  "[torch.Size([2, 3])]");
	check_row(&b, 1, "FAILED",
		  (const char *[]){ "N/A", "N/A", "N/A", "N/A", "N/A" }, "N/A");
	table_block_release(&b);
}

static void test_parse_errors(void **state)
{
	static const char *const no_rows[] = {
		"Operator: x  Performance Test (dtype=torch.float16, mode=kernel,level=core)",
		"Status       Torch Latency (ms)          Size Detail",
		"--------------------------------------------------",
		"",
	};
	static const char *const bad_value[] = {
		"Operator: x  Performance Test (dtype=torch.float16, mode=kernel,level=core)",
		"Status       Torch Latency (ms)          Size Detail",
		"--------------------------------------------------",
		"SUCCESS               fast          [1]",
	};
	static const char *const no_dtype[] = {
		"Operator: x  Performance Test (mode=kernel,level=core)",
		"Status       Torch Latency (ms)          Size Detail",
		"--------------------------------------------------",
		"SUCCESS               0.1          [1]",
	};
	static const char *const no_dashes[] = {
		"Operator: x  Performance Test (dtype=torch.float16, mode=kernel,level=core)",
		"Status       Torch Latency (ms)          Size Detail",
		"SUCCESS               0.1          [1]",
	};
	struct table_block b = TABLE_BLOCK_INIT;

	assert_int_equal(table_parse_block(no_rows, 4, &b), -1);
	assert_non_null(strstr(errors.buf, "no rows"));
	assert_null(b.op);
	assert_int_equal(b.nr_rows, 0);
	assert_int_equal(table_parse_block(bad_value, 4, &b), -1);
	assert_non_null(strstr(errors.buf, "not a number"));
	assert_int_equal(table_parse_block(no_dtype, 4, &b), -1);
	assert_non_null(strstr(errors.buf, "dtype"));
	assert_int_equal(table_parse_block(no_dashes, 3, &b), -1);
	assert_non_null(strstr(errors.buf, "dashes"));
	assert_int_equal(table_parse_block(bad_value, 2, &b), -1);
	assert_int_equal(table_parse_block(bad_value + 1, 3, &b), -1);
	assert_non_null(strstr(last_error(), "not a table title"));
	table_block_release(&b);
}

static void test_row_predicate(void **state)
{
	assert_true(table_is_row("SUCCESS               0.004690"));
	assert_true(table_is_row("FAILED                     N/A"));
	/* pytest's short summary is not a row. */
	assert_false(table_is_row("FAILED benchmark/test_x.py::test_y - RuntimeError"));
	assert_false(table_is_row("SUCCESS"));
	assert_false(table_is_row("SUCCESS   "));
	assert_false(table_is_row("SUCCESSFUL  1"));
	assert_false(table_is_row(""));
	assert_false(table_is_row("."));
	assert_true(table_is_title("Operator: mm  Performance Test (dtype=x)"));
	assert_false(table_is_title("Operator name                            |  mm"));
}

/* Rendering, through the filter. */

static void check_golden(const char *op)
{
	struct strvec lines = STRVEC_INIT;
	struct strbuf want = STRBUF_INIT;
	char *path = xstrfmt("%s/table/%s.txt", ZLB_TEST_DATA, op);
	size_t at;
	char *got;

	read_lines(CUDAGRAPH_LOG, &lines);
	read_text(path, &want);
	at = find_title(&lines, op);
	/* Title, columns, dashes, three rows, and the blank line ending it. */
	assert_string_equal(lines.v[at + 6], "");
	got = filter_lines(0, (const char *const *)lines.v + at, 7, 0);
	strbuf_addch(&want, '\n');
	assert_string_equal(got, want.buf);
	free(got);
	free(path);
	strbuf_release(&want);
	strvec_clear(&lines);
}

static void test_golden_softmax(void **state)
{
	check_golden("softmax");
}

static void test_golden_sum_dim_out(void **state)
{
	check_golden("sum_dim_out");
}

static void test_golden_layer_norm(void **state)
{
	check_golden("layer_norm");
}

/*
 * A whole log without colour: the tables are rendered and everything else
 * comes through line for line; nothing is lost or duplicated.
 */
static void test_whole_log(void **state)
{
	struct strvec lines = STRVEC_INIT;
	struct strvec outl = STRVEC_INIT;
	size_t i, j = 0;
	char *got, *p, *nl;

	read_lines(CUDAGRAPH_LOG, &lines);
	got = filter_lines(0, (const char *const *)lines.v, lines.nr, 1);
	assert_null(strchr(got, '\033'));
	for (p = got; (nl = strchr(p, '\n')); p = nl + 1)
		strvec_pushf(&outl, "%.*s", (int)(nl - p), p);
	assert_int_equal(*p, '\0');

	/* Every input line that is not part of a table appears, in order. */
	for (i = 0; i < lines.nr; i++) {
		if (table_is_title(lines.v[i])) {
			i += 5;
			continue;
		}
		while (j < outl.nr && strcmp(outl.v[j], lines.v[i]))
			j++;
		if (j == outl.nr)
			fail_msg("input line %zu '%s' missing from the output", i + 1, lines.v[i]);
		j++;
	}
	assert_int_equal(count(got, "\nOperator: "), 6);
	assert_int_equal(count(got, "\nSUCCESS  "), 18);
	assert_int_equal(count(got, "\n.\n"), 6);
	assert_int_equal(count(got, "same in every row"), 2);
	assert_true(ends_with(got, "\n.\n6 passed in 26.12s\n"));
	/* Rendered, not copied: upstream's 20-wide padding is gone. */
	assert_null(strstr(got, "SUCCESS               0.004690"));
	free(got);
	strvec_clear(&outl);
	strvec_clear(&lines);
}

#define TITLE "Operator: sum_x  Performance Test (dtype=torch.float32, mode=kernel,level=core)"
#define COLS "Status       Torch Latency (ms)    Gems Latency (ms)         Gems Speedup          Size Detail"
#define DASHES "-----------------------------------------------------------------------------------------------"
#define ROW(t, g, s, d) "SUCCESS   " t g s "          " d

static const char *const folding[] = {
	TITLE, COLS, DASHES,
	ROW("            0.010000", "            0.020000", "               0.500",
	    "([torch.Size([128, 64]), 2], {'out': torch.Size([64]), 'alpha': 0.5})"),
	ROW("            0.030000", "            0.040000", "               0.750",
	    "([torch.Size([4096, 64]), 2], {'out': torch.Size([64]), 'alpha': 0.5})"),
	ROW("            1.000000", "            0.500000", "               2.000",
	    "([torch.Size([65536, 64]), 2], {'out': torch.Size([64]), 'alpha': 2.0})"),
	"",
	NULL,
};

static void test_folding(void **state)
{
	/*
	 * #2 and out are the same in all three rows; #1 and alpha vary.
	 * Widths: Status 7, 18, 17, 12; the widest Size Detail is
	 * "torch.Size([65536, 64]), alpha=2.0" (34): dashes 62 + 34 = 96.
	 */
	static const char want[] =
		TITLE "\n"
		"  same in every row: #2=2, out=torch.Size([64])\n"
		"Status   Torch Latency (ms)  Gems Latency (ms)  Gems Speedup  Size Detail\n"
		"------------------------------------------------------------------------------------------------\n"
		"SUCCESS            0.010000           0.020000         0.500  torch.Size([128, 64]), alpha=0.5\n"
		"SUCCESS            0.030000           0.040000         0.750  torch.Size([4096, 64]), alpha=0.5\n"
		"SUCCESS            1.000000           0.500000         2.000  torch.Size([65536, 64]), alpha=2.0\n"
		"\n";
	char *got = filter_list(0, folding);

	assert_string_equal(got, want);
	free(got);
}

static void test_no_folding_for_one_row_or_all_same(void **state)
{
	static const char *const one[] = {
		TITLE, COLS, DASHES,
		ROW("            0.010000", "            0.020000", "               0.500",
		    "[torch.Size([128, 64]), 2]"),
		NULL,
	};
	static const char *const same[] = {
		TITLE, COLS, DASHES,
		ROW("            0.010000", "            0.020000", "               0.500",
		    "[torch.Size([128, 64]), 2]"),
		ROW("            0.030000", "            0.040000", "               0.750",
		    "[torch.Size([128, 64]), 2]"),
		NULL,
	};
	/* Different argument counts: no common layout to fold. */
	static const char *const ragged[] = {
		TITLE, COLS, DASHES,
		ROW("            0.010000", "            0.020000", "               0.500",
		    "[torch.Size([128, 64]), 2]"),
		ROW("            0.030000", "            0.040000", "               0.750",
		    "[torch.Size([256, 64]), 2, 3]"),
		NULL,
	};
	char *got;

	got = filter_list(0, one);
	assert_null(strstr(got, "same in every row"));
	assert_non_null(strstr(got, "0.500  [torch.Size([128, 64]), 2]\n"));
	free(got);

	got = filter_list(0, same);
	assert_null(strstr(got, "same in every row"));
	assert_int_equal(count(got, "  [torch.Size([128, 64]), 2]\n"), 2);
	free(got);

	got = filter_list(0, ragged);
	assert_null(strstr(got, "same in every row"));
	assert_non_null(strstr(got, "  [torch.Size([256, 64]), 2, 3]\n"));
	free(got);
}

static void test_kwargs_only_dict(void **state)
{
	static const char *const dict[] = {
		TITLE, COLS, DASHES,
		ROW("            0.010000", "            0.020000", "               0.500",
		    "{'input': torch.Size([8]), 'dim': 0}"),
		ROW("            0.030000", "            0.040000", "               0.750",
		    "{'input': torch.Size([16]), 'dim': 0}"),
		NULL,
	};
	char *got = filter_list(0, dict);

	assert_non_null(strstr(got, "\n  same in every row: dim=0\n"));
	assert_non_null(strstr(got, "0.500  input=torch.Size([8])\n"));
	assert_non_null(strstr(got, "0.750  input=torch.Size([16])\n"));
	free(got);
}

static void test_color(void **state)
{
	static const char *const block[] = {
		TITLE, COLS, DASHES,
		ROW("            0.010000", "            0.020000", "               0.500",
		    "[torch.Size([128, 64]), 2]"),
		"FAILED                 N/A                 N/A                 N/A          [torch.Size([256, 64]), 2]",
		".",
		NULL,
	};
	char *plain = filter_list(0, block), *color = filter_list(1, block);

	assert_null(strchr(plain, '\033'));
	assert_non_null(strstr(plain, "\nSUCCESS  "));
	assert_non_null(strstr(plain, "\nFAILED   "));

	assert_non_null(strstr(color, "\n" SUCCESS_GREEN "  "));
	assert_non_null(strstr(color, "\n\033[31mFAILED\033[0m   "));
	assert_true(starts_with(color, "Operator: \033[1msum_x\033[0m  Performance Test "
				"(dtype=\033[1mtorch.float32\033[0m, mode=kernel,level=core)\n"));
	/* The codes come on top of the same layout. */
	assert_non_null(strstr(color, "  same in every row: #2=2\n"));
	assert_true(ends_with(color, "\n.\n"));
	free(plain);
	free(color);
}

static void test_passthrough_identical(void **state)
{
	static const char *const lines[] = {
		"", ".", "PASSED", "6 passed in 26.12s",
		"benchmark/test_reduction_perf.py::test_softmax PASSED",
		"Operator name                            |  softmax",
		"   indented  text with  two spaces  ",
		"Status line that is not under a title",
		"SUCCESS               0.1          [1]",
		NULL,
	};
	static const char nul_line[] = "a\0b";
	struct strbuf out = STRBUF_INIT, want = STRBUF_INIT;
	struct table_filter tf;
	size_t i;
	int color;

	for (color = 0; color <= 1; color++) {
		strbuf_reset(&out);
		strbuf_reset(&want);
		table_filter_init(&tf, color, table_emit_strbuf, &out);
		for (i = 0; lines[i]; i++) {
			table_filter_line(&tf, lines[i], strlen(lines[i]));
			strbuf_addf(&want, "%s\n", lines[i]);
		}
		table_filter_line(&tf, nul_line, 3);
		strbuf_add(&want, "a\0b\n", 4);
		table_filter_flush(&tf);
		table_filter_release(&tf);
		assert_int_equal(out.len, want.len);
		assert_memory_equal(out.buf, want.buf, want.len);
	}
	strbuf_release(&out);
	strbuf_release(&want);
}

static void check_decorated(const char *line, const char *code)
{
	struct strbuf sb = STRBUF_INIT;
	char *want = code ? xstrfmt("%s%s\033[0m", code, line) : xstrdup(line);

	table_decorate_line(line, strlen(line), 1, &sb);
	assert_string_equal(sb.buf, want);
	strbuf_reset(&sb);
	table_decorate_line(line, strlen(line), 0, &sb);
	assert_string_equal(sb.buf, line);
	strbuf_release(&sb);
	free(want);
}

static void test_line_colors(void **state)
{
	const char *red = "\033[31m", *yellow = "\033[33m";

	check_decorated("BENCHMARK_DIRECT_NO_CUDAGRAPH phase=capture reason=x repeat=5", yellow);
	check_decorated("AUTOTUNE_REPLAY_FALLBACK op=mm", yellow);
	check_decorated("CAPTURE_FATAL phase=capture reason=illegal address", yellow);
	check_decorated("GRAPH_NO_KERNELS nodes=0 role=torch", yellow);
	check_decorated("WARNING: shape file has no key for softmax", yellow);
	/* A marker's reason may say FAILED; it is still a fallback. */
	check_decorated("BENCHMARK_DIRECT_NO_CUDAGRAPH reason=FAILED to capture", yellow);

	check_decorated("FAILED benchmark/test_x.py::test_y - RuntimeError: boom", red);
	check_decorated("benchmark/test_x.py::test_y FAILED", red);
	check_decorated("FAILED: Operator=mm dtype=torch.float16 err=<<<x>>>", red);
	check_decorated("PREFLIGHT_FAILED no GPU visible", red);
	check_decorated("1 failed, 5 passed in 3.21s", red);
	check_decorated("==== 2 failed, 1 passed, 1 warning in 9.00s ====", red);
	check_decorated("=== 1 error in 0.50s ===", red);
	check_decorated("==== 3 passed, 2 errors in 1.00s ====", red);

	check_decorated("6 passed in 26.12s", NULL);
	check_decorated("==== 6 passed, 1 warning in 26.12s ====", NULL);
	check_decorated("UNFAILED FAILEDX ALL_FAILED_COUNT", NULL);
	check_decorated("0 failed attempts were retried", NULL);
	check_decorated("A WARNING in the middle", NULL);
	check_decorated("SUCCESS               0.1          [1]", NULL);
}

static void test_line_with_own_escapes(void **state)
{
	static const char line[] = "\033[31mFAILED\033[0m: Operator=mm dtype=x";
	struct strbuf sb = STRBUF_INIT;

	/* With colour the child's own codes stay, without any added. */
	table_decorate_line(line, strlen(line), 1, &sb);
	assert_string_equal(sb.buf, line);
	/* Without colour they are taken out. */
	strbuf_reset(&sb);
	table_decorate_line(line, strlen(line), 0, &sb);
	assert_string_equal(sb.buf, "FAILED: Operator=mm dtype=x");
	strbuf_release(&sb);
}

static void test_malformed_block_unchanged(void **state)
{
	static const char *const garbage[] = {
		TITLE, "garbage here", "", NULL,
	};
	static const char *const two_titles[] = {
		TITLE, TITLE, COLS, DASHES,
		ROW("            0.010000", "            0.020000", "               0.500", "[1]"),
		"", NULL,
	};
	static const char *const bad_row[] = {
		TITLE, COLS, DASHES,
		ROW("            0.010000", "            0.020000", "               0.500", "[1]"),
		ROW("            0.010000", "                fast", "               0.500", "[2]"),
		"PASSED", NULL,
	};
	/* A TFLOPS value the header does not name (upstream decides on row 0). */
	static const char *const extra_value[] = {
		TITLE, COLS, DASHES,
		ROW("            0.010000", "            0.020000", "               0.500", "[1]"),
		ROW("            0.010000", "            0.020000", "               0.500",
		    "               0.111          [2]"),
		"", NULL,
	};
	static const char *const cut_short[] = { TITLE, COLS, NULL };
	static const char *const *const cases[] = { garbage, bad_row, extra_value, cut_short };
	struct strbuf want = STRBUF_INIT;
	size_t c, i;
	char *got;

	for (c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		strbuf_reset(&want);
		for (i = 0; cases[c][i]; i++)
			strbuf_addf(&want, "%s\n", cases[c][i]);
		got = filter_list(0, cases[c]);
		assert_string_equal(got, want.buf);
		free(got);
	}

	/* The first title is given back; the second block still renders. */
	got = filter_list(0, two_titles);
	assert_true(starts_with(got, TITLE "\n" TITLE "\n"));
	assert_non_null(strstr(got, "\nSUCCESS            0.010000"));
	free(got);

	/* Quiet: the filter's fallback reports nothing. */
	assert_int_equal(errors.len, 0);
	strbuf_release(&want);
}

static void test_block_endings(void **state)
{
	static const char *const by_failed[] = {
		TITLE, COLS, DASHES,
		ROW("            0.010000", "            0.020000", "               0.500", "[1]"),
		"FAILED benchmark/test_x.py::test_y - boom", NULL,
	};
	static const char *const by_title[] = {
		TITLE, COLS, DASHES,
		ROW("            0.010000", "            0.020000", "               0.500", "[1]"),
		TITLE, COLS, DASHES,
		ROW("            0.030000", "            0.040000", "               0.750", "[2]"),
		NULL,
	};
	struct strbuf out = STRBUF_INIT;
	struct table_filter tf;
	size_t i;
	char *got;

	got = filter_list(0, by_failed);
	assert_true(ends_with(got, "  [1]\nFAILED benchmark/test_x.py::test_y - boom\n"));
	free(got);

	/* Two blocks back to back, the second ended by flush(). */
	got = filter_list(0, by_title);
	assert_int_equal(count(got, "Operator: sum_x"), 2);
	assert_true(ends_with(got, "0.750  [2]\n"));
	assert_null(strstr(got, "SUCCESS               0.0"));
	free(got);

	/* Nothing comes out while a block is held. */
	table_filter_init(&tf, 0, table_emit_strbuf, &out);
	for (i = 0; i < 4; i++)
		table_filter_line(&tf, by_title[i], strlen(by_title[i]));
	assert_true(table_filter_holding(&tf));
	assert_int_equal(out.len, 0);
	table_filter_line(&tf, "", 0);
	assert_false(table_filter_holding(&tf));
	assert_true(ends_with(out.buf, "  [1]\n\n"));
	table_filter_release(&tf);
	strbuf_release(&out);
}

/* The point of folding: a long MoE-style Size Detail gets short. */
static void test_long_size_detail_shrinks(void **state)
{
	static const char *const moe[] = {
		TITLE, COLS, DASHES,
		ROW("            0.010000", "            0.020000", "               0.500",
		    "[torch.Size([16, 4096]), torch.Size([64, 14336, 4096]), torch.Size([64, 4096, 7168]), torch.Size([16, 2]), torch.Size([16, 2]), 64, 2, True, False, None, None, None, None, torch.float16, 'silu']"),
		ROW("            0.030000", "            0.040000", "               0.750",
		    "[torch.Size([256, 4096]), torch.Size([64, 14336, 4096]), torch.Size([64, 4096, 7168]), torch.Size([256, 2]), torch.Size([256, 2]), 64, 2, True, False, None, None, None, None, torch.float16, 'silu']"),
		NULL,
	};
	char *got = filter_list(0, moe);

	assert_non_null(strstr(got, "\n  same in every row: #2=torch.Size([64, 14336, 4096]), "
			       "#3=torch.Size([64, 4096, 7168]), #6=64, #7=2, #8=True, #9=False, "
			       "#10=None, #11=None, #12=None, #13=None, #14=torch.float16, #15='silu'\n"));
	assert_non_null(strstr(got, "0.500  torch.Size([16, 4096]), torch.Size([16, 2]), torch.Size([16, 2])\n"));
	assert_non_null(strstr(got, "0.750  torch.Size([256, 4096]), torch.Size([256, 2]), torch.Size([256, 2])\n"));
	free(got);
}

/*
 * Cut the real log at every line and damage it at random: whatever the
 * filter makes of it, no row may be lost or doubled (each SUCCESS in the
 * input is one in the output) and, without colour, no ESC appears.
 */
static void test_fuzz_filter(void **state)
{
	static const char syntax[] = "[](){}'\",:- 0.";
	struct strvec lines = STRVEC_INIT;
	unsigned seed = 4242;
	size_t cut, i;
	int round;

	read_lines(CUDAGRAPH_LOG, &lines);
	for (round = 0; round < 400; round++) {
		struct strvec damaged = STRVEC_INIT;
		size_t in = 0;
		char *got;

		seed = seed * 1103515245u + 12345u;
		cut = (seed >> 16) % (lines.nr + 1);
		for (i = 0; i < cut; i++) {
			char *l = xstrdup(lines.v[i]);
			size_t len = strlen(l);

			seed = seed * 1103515245u + 12345u;
			if (len && (seed >> 16) % 8 == 0)
				l[(seed >> 4) % len] = syntax[(seed >> 20) % (sizeof(syntax) - 1)];
			strvec_push(&damaged, l);
			in += count(l, "SUCCESS");
			free(l);
		}
		got = filter_lines(0, (const char *const *)damaged.v, damaged.nr, 1);
		assert_int_equal(count(got, "SUCCESS"), in);
		assert_null(strchr(got, '\033'));
		free(got);
		strvec_clear(&damaged);
	}
	strvec_clear(&lines);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_parse_cudagraph_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_kernel_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_tolerates_line_endings_and_na, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_errors, setup, teardown),
		cmocka_unit_test(test_row_predicate),
		cmocka_unit_test(test_golden_softmax),
		cmocka_unit_test(test_golden_sum_dim_out),
		cmocka_unit_test(test_golden_layer_norm),
		cmocka_unit_test(test_whole_log),
		cmocka_unit_test(test_folding),
		cmocka_unit_test(test_no_folding_for_one_row_or_all_same),
		cmocka_unit_test(test_kwargs_only_dict),
		cmocka_unit_test(test_color),
		cmocka_unit_test(test_passthrough_identical),
		cmocka_unit_test(test_line_colors),
		cmocka_unit_test(test_line_with_own_escapes),
		cmocka_unit_test_setup_teardown(test_malformed_block_unchanged, setup, teardown),
		cmocka_unit_test(test_block_endings),
		cmocka_unit_test(test_long_size_detail_shrinks),
		cmocka_unit_test(test_fuzz_filter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
