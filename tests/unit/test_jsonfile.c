/*
 * jsonfile.c's json_dumps_parallel: the text json_dumps makes, byte for
 * byte, whether the last member's items are dumped on several cores or
 * the document in one piece.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/jsonfile.h"

#define FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))

/* An item as compare.json's rows are: nested objects, arrays, escapes. */
static json_t *item(size_t i)
{
	return json_pack("{s:s, s:i, s:f, s:[s,s], s:[], s:{s:o, s:f}, s:{}, s:s}",
			 "op", i % 2 ? "soft\nmax \"x\"" : "add/é",
			 "index", (json_int_t)i,
			 "ratio", 1.0 + (double)i / 3.0,
			 "markers", "a", "b",
			 "empty", "gems", "ci", json_null(), "p", 0.05,
			 "nothing", "tail", "end");
}

static json_t *document(size_t nrows, int with_head)
{
	json_t *doc = json_object(), *rows = json_array();

	if (with_head) {
		json_object_set_new(doc, "schema_version", json_integer(1));
		json_object_set_new(doc, "settings", json_pack("{s:f, s:[i,i]}", "fdr", 0.05, "k", 1, 2));
	}
	for (size_t i = 0; i < nrows; i++)
		json_array_append_new(rows, item(i));
	json_object_set_new(doc, "rows", rows);
	return doc;
}

static void same_text(const json_t *doc, size_t flags)
{
	char *want = json_dumps(doc, flags), *got = json_dumps_parallel(doc, flags);

	assert_non_null(want);
	assert_non_null(got);
	assert_int_equal(strlen(got), strlen(want));
	assert_string_equal(got, want);
	free(want);
	free(got);
}

static void many_rows_in_parallel_read_as_one_dump(void **state)
{
	json_t *doc = document(3000, 1);

	(void)state;
	same_text(doc, FLAGS);
	same_text(doc, JSON_INDENT(4) | JSON_REAL_PRECISION(17));
	same_text(doc, FLAGS | JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH);
	json_decref(doc);
}

static void rows_as_the_only_member(void **state)
{
	json_t *doc = document(600, 0);

	(void)state;
	same_text(doc, FLAGS);
	json_decref(doc);
}

/* Every case where the document is dumped in one piece reads the same too. */
static void what_is_not_split_is_json_dumps(void **state)
{
	json_t *few = document(3, 1), *not_last = document(1000, 1), *scalar = json_integer(7);

	(void)state;
	json_object_set_new(not_last, "after", json_string("rows are not last"));
	same_text(few, FLAGS);
	same_text(not_last, FLAGS);
	same_text(few, JSON_COMPACT);
	same_text(not_last, JSON_SORT_KEYS | JSON_INDENT(2));
	same_text(scalar, FLAGS | JSON_ENCODE_ANY);
	json_decref(few);
	json_decref(not_last);
	json_decref(scalar);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(many_rows_in_parallel_read_as_one_dump),
		cmocka_unit_test(rows_as_the_only_member),
		cmocka_unit_test(what_is_not_split_is_json_dumps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
