/*
 * csvfile.c: quoting on write, libcsv-backed reading addressed by header
 * name, and the errors a damaged table gets.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/csvfile.h"
#include "lib/error.h"
#include "lib/strbuf.h"

#include "error_capture.h"

static void quoting(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	const char *row[] = { "plain", "a,b", "say \"hi\"", "two\nlines", NULL, " pad " };

	csv_add_row(&sb, row, 6);
	assert_string_equal(sb.buf,
			    "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",, pad \n");
	strbuf_release(&sb);
}

static void round_trip(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	const char *head[] = { "op", "size", "note" };
	const char *r1[] = { "softmax", "[1024, 1024]", "x \"y\"" };
	const char *r2[] = { "mm", "4096^3", "line1\nline2" };
	struct csv_table t;

	csv_add_row(&sb, head, 3);
	csv_add_row(&sb, r1, 3);
	csv_add_row(&sb, r2, 3);
	assert_int_equal(csv_parse_text(sb.buf, sb.len, "t.csv", &t), 0);
	assert_int_equal(t.ncols, 3);
	assert_int_equal(t.nrows, 2);
	assert_int_equal(csv_column(&t, "size"), 1);
	assert_int_equal(csv_column(&t, "missing"), -1);
	assert_string_equal(csv_get(&t, 0, "size"), "[1024, 1024]");
	assert_string_equal(csv_get(&t, 0, "note"), "x \"y\"");
	assert_string_equal(csv_get(&t, 1, "note"), "line1\nline2");
	assert_string_equal(csv_get(&t, 1, "op"), "mm");
	assert_string_equal(csv_get(&t, 1, "missing"), "");
	assert_string_equal(csv_get(&t, 7, "op"), "");
	csv_table_free(&t);
	strbuf_release(&sb);
}

static void short_rows_padded_and_spaces_kept(void **state)
{
	const char *text = "a,b,c\n1, 2 \n4,5,6";  /* no final newline */
	struct csv_table t;

	assert_int_equal(csv_parse_text(text, strlen(text), "t.csv", &t), 0);
	assert_int_equal(t.nrows, 2);
	assert_string_equal(csv_get(&t, 0, "b"), " 2 ");
	assert_string_equal(csv_get(&t, 0, "c"), "");
	assert_string_equal(csv_get(&t, 1, "c"), "6");
	csv_table_free(&t);
}

static void long_row_refused(void **state)
{
	const char *text = "a,b\n1,2\n3,4,5\n";
	struct csv_table t;

	strbuf_reset(&errors);
	assert_int_equal(csv_parse_text(text, strlen(text), "status.csv", &t), -1);
	assert_non_null(strstr(errors.buf, "status.csv: record 3 has 3 fields"));
	assert_int_equal(t.nrows, 0);
	assert_null(t.header);
}

static void empty_and_missing(void **state)
{
	struct csv_table t;

	assert_int_equal(csv_parse_text("", 0, "e.csv", &t), 0);
	assert_int_equal(t.ncols, 0);
	assert_int_equal(t.nrows, 0);
	assert_string_equal(csv_get(&t, 0, "x"), "");
	csv_table_free(&t);

	strbuf_reset(&errors);
	assert_int_equal(csv_read_file("/nonexistent/ops_status.csv", &t), -1);
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(errors.buf, "/nonexistent/ops_status.csv"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quoting),
		cmocka_unit_test(round_trip),
		cmocka_unit_test(short_rows_padded_and_spaces_kept),
		cmocka_unit_test(long_row_refused),
		cmocka_unit_test(empty_and_missing),
	};

	set_error_routine(capture_error);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
