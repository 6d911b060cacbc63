/*
 * identity.c (run_identity.json: schema, sections, round trip, refusal of
 * a newer schema) and jsonfile.c (atomic JSON
 * writes, JSON-lines walks that survive a cut-off last line).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/error.h"
#include "rundir/identity.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#include "error_capture.h"

struct fixture {
	char dir[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	strcpy(f->dir, "/tmp/zlb-identity-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	strbuf_reset(&errors);
	set_error_routine(capture_error);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int r = remove_tree(f->dir);

	set_error_routine(NULL);
	strbuf_release(&errors);
	free(f);
	return r ? -1 : 0;
}

static void put(const char *dir, const char *rel, const char *text)
{
	char *path = path_join(dir, rel);
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
	free(path);
}

static void list_dir(const char *dir, struct strvec *names)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			strvec_push(names, e->d_name);
	closedir(d);
}

static void new_identity(void **state)
{
	json_t *id = identity_new("softmax", "/tmp/run");

	assert_true(json_is_object(id));
	assert_int_equal(json_integer_value(json_object_get(id, "schema_version")), 1);
	assert_int_equal(IDENTITY_SCHEMA_VERSION, 1);
	assert_string_equal(json_str(id, "status"), "running");
	assert_true(json_is_object(json_object_get(id, "caliber")));
	assert_true(json_is_object(json_object_get(id, "provenance")));
	assert_true(json_is_object(json_object_get(id, "outcome")));
	assert_int_equal(json_object_size(json_object_get(id, "caliber")), 0);

	/* identity_section gives the existing object... */
	assert_ptr_equal(identity_section(id, "caliber"), json_object_get(id, "caliber"));
	/* ...creates a missing one, and replaces one of the wrong type. */
	json_object_set_new(id, "outcome", json_string("oops"));
	json_t *o = identity_section(id, "outcome");
	assert_true(json_is_object(o));
	assert_ptr_equal(o, json_object_get(id, "outcome"));
	json_t *x = identity_section(id, "extra");
	assert_true(json_is_object(x));
	assert_ptr_equal(x, json_object_get(id, "extra"));
	json_decref(id);
}

static void write_load_round_trip(void **state)
{
	struct fixture *f = *state;
	json_t *id = identity_new("softmax", "/tmp/run"), *back = NULL;
	json_t *cal = identity_section(id, "caliber");
	struct strvec names = STRVEC_INIT;

	json_object_set_new(id, "op", json_string("softmax"));
	json_object_set_new(cal, "backend", json_string("cuda"));
	json_object_set_new(cal, "direct_repeat", json_integer(5));
	json_object_set_new(cal, "warmup_ms", json_real(0.1));
	json_object_set_new(identity_section(id, "provenance"), "note",
			    json_string("caf\xc3\xa9 \"quoted\"\n"));
	json_object_set_new(id, "status", json_string("completed"));
	assert_int_equal(identity_write(f->dir, id), 0);

	assert_int_equal(identity_load(f->dir, &back), 0);
	assert_non_null(back);
	assert_true(json_equal(id, back));
	/* Doubles survive exactly. */
	assert_true(json_real_value(json_object_get(identity_section(back, "caliber"),
						    "warmup_ms")) == 0.1);
	json_decref(back);

	/* Only the file itself: no temporary left beside it. */
	list_dir(f->dir, &names);
	assert_int_equal(names.nr, 1);
	assert_string_equal(names.v[0], IDENTITY_FILE);
	strvec_clear(&names);

	/* The file ends with a newline and keeps key order. */
	{
		struct strbuf sb = STRBUF_INIT;
		char *path = path_join(f->dir, IDENTITY_FILE);
		assert_int_equal(strbuf_read_file(&sb, path, 1 << 20), 0);
		assert_true(ends_with(sb.buf, "}\n"));
		assert_true(strstr(sb.buf, "\"schema_version\"") < strstr(sb.buf, "\"caliber\""));
		strbuf_release(&sb);
		free(path);
	}
	json_decref(id);
}

static void load_missing_and_bad(void **state)
{
	struct fixture *f = *state;
	json_t *out = (json_t *)&out;

	/* Absent: 1, no error. */
	assert_int_equal(identity_load(f->dir, &out), 1);
	assert_null(out);
	assert_string_equal(errors.buf, "");

	put(f->dir, IDENTITY_FILE, "{\"schema_version\": 99, \"status\": \"completed\"}\n");
	assert_int_equal(identity_load(f->dir, &out), -1);
	assert_null(out);
	assert_contains(errors.buf, "has schema_version 99; this zlb reads 1..1");
	assert_contains(errors.buf, IDENTITY_FILE);

	strbuf_reset(&errors);
	put(f->dir, IDENTITY_FILE, "{\"status\": \"completed\"}\n");
	assert_int_equal(identity_load(f->dir, &out), -1);
	assert_null(out);
	assert_contains(errors.buf, "schema_version 0");

	strbuf_reset(&errors);
	put(f->dir, IDENTITY_FILE, "{\"schema_version\": 1, \"status\": \n");
	assert_int_equal(identity_load(f->dir, &out), -1);
	assert_null(out);
	assert_contains(errors.buf, "is not valid JSON");

	strbuf_reset(&errors);
	put(f->dir, IDENTITY_FILE, "[1, 2]\n");
	assert_int_equal(identity_load(f->dir, &out), -1);
	assert_null(out);
	assert_contains(errors.buf, "does not hold a JSON object");

	put(f->dir, IDENTITY_FILE, "{\"schema_version\": 1}\n");
	assert_int_equal(identity_load(f->dir, &out), 0);
	assert_non_null(out);
	json_decref(out);
}

static void now_is_iso8601(void **state)
{
	json_t *t = identity_now();
	const char *s = json_string_value(t);
	int y, mo, d, h, mi, se;
	char z;

	assert_non_null(s);
	assert_int_equal(strlen(s), 20);
	assert_int_equal(sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &se, &z), 7);
	assert_int_equal(z, 'Z');
	assert_true(y >= 2024 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31);
	json_decref(t);
}

struct walk {
	struct strvec names;
	struct strvec linenos;
	size_t stop_after;
};

static int collect(void *ctx, json_t *obj, size_t lineno)
{
	struct walk *w = ctx;

	strvec_push(&w->names, json_str(obj, "name") ? json_str(obj, "name") : "?");
	strvec_pushf(&w->linenos, "%zu", lineno);
	return w->stop_after && w->names.nr >= w->stop_after;
}

static int fail_walk(void *ctx, json_t *obj, size_t lineno)
{
	return -1;
}

static void jsonl_walks(void **state)
{
	struct fixture *f = *state;
	char *path = path_join(f->dir, "events.jsonl");
	struct walk w = { STRVEC_INIT, STRVEC_INIT, 0 };
	size_t skipped = 99;

	/* A crash cut the last line short. */
	put(f->dir, "events.jsonl",
	    "{\"name\": \"a\"}\n"
	    "\n"
	    "{\"name\": \"b\"}\r\n"
	    "[1, 2]\n"
	    "{\"name\": \"c\"}\n"
	    "{\"name\": \"d\", \"val");
	assert_int_equal(jsonl_each(path, collect, &w, &skipped), 0);
	assert_int_equal(w.names.nr, 3);
	assert_string_equal(w.names.v[0], "a");
	assert_string_equal(w.names.v[1], "b");
	assert_string_equal(w.names.v[2], "c");
	/* Line numbers are of the file, blank lines included. */
	assert_string_equal(w.linenos.v[0], "1");
	assert_string_equal(w.linenos.v[1], "3");
	assert_string_equal(w.linenos.v[2], "5");
	/* The non-object line and the cut one. */
	assert_int_equal(skipped, 2);
	strvec_clear(&w.names);
	strvec_clear(&w.linenos);

	/* NULL skipped is allowed; a non-zero return stops the walk. */
	w.stop_after = 2;
	assert_int_equal(jsonl_each(path, collect, &w, NULL), 0);
	assert_int_equal(w.names.nr, 2);
	strvec_clear(&w.names);
	strvec_clear(&w.linenos);
	assert_int_equal(jsonl_each(path, fail_walk, NULL, NULL), -1);

	/* Missing file: 1. */
	{
		char *missing = path_join(f->dir, "none.jsonl");
		skipped = 99;
		assert_int_equal(jsonl_each(missing, collect, &w, &skipped), 1);
		assert_int_equal(skipped, 0);
		free(missing);
	}
	/* There but unreadable (a directory): an error, not an empty file. */
	{
		char *dir = path_join(f->dir, "rows.jsonl.d");
		assert_int_equal(mkdir(dir, 0700), 0);
		assert_int_equal(jsonl_each(dir, collect, &w, NULL), -1);
		rmdir(dir);
		free(dir);
	}
	free(path);
}

static void jsonl_append_lines(void **state)
{
	struct fixture *f = *state;
	char *path = path_join(f->dir, "out.jsonl");
	struct walk w = { STRVEC_INIT, STRVEC_INIT, 0 };
	size_t skipped = 99;
	struct strbuf sb = STRBUF_INIT;

	for (int i = 0; i < 3; i++) {
		json_t *o = json_pack("{s:s, s:{s:i}}", "name", i == 1 ? "two\nlines" : "x",
				      "nested", "i", i);
		assert_int_equal(jsonl_append(path, o), 0);
		json_decref(o);
	}
	assert_int_equal(strbuf_read_file(&sb, path, 1 << 20), 0);
	/* One compact line each, even with a newline inside a string. */
	{
		size_t nl = 0;
		for (size_t i = 0; i < sb.len; i++)
			nl += sb.buf[i] == '\n';
		assert_int_equal(nl, 3);
	}
	assert_int_equal(jsonl_each(path, collect, &w, &skipped), 0);
	assert_int_equal(w.names.nr, 3);
	assert_string_equal(w.names.v[1], "two\nlines");
	assert_int_equal(skipped, 0);
	strvec_clear(&w.names);
	strvec_clear(&w.linenos);
	strbuf_release(&sb);
	free(path);
}

static void json_write_is_atomic(void **state)
{
	struct fixture *f = *state;
	char *path = path_join(f->dir, "x.json");
	json_t *a = json_pack("{s:i, s:[i,i]}", "k", 1, "l", 2, 3), *back = NULL;
	struct strvec names = STRVEC_INIT;

	assert_int_equal(json_write_file(path, a), 0);
	assert_int_equal(json_read_file(path, &back), 0);
	assert_true(json_equal(a, back));
	json_decref(back);
	/* Overwrite with a smaller object: only it remains. */
	json_decref(a);
	a = json_pack("{s:b}", "small", 1);
	assert_int_equal(json_write_file(path, a), 0);
	assert_int_equal(json_read_file(path, &back), 0);
	assert_true(json_equal(a, back));
	json_decref(back);
	list_dir(f->dir, &names);
	assert_int_equal(names.nr, 1);
	assert_string_equal(names.v[0], "x.json");
	strvec_clear(&names);

	/* Into a missing directory: an error, not a crash. */
	{
		char *bad = xstrfmt("%s/missing/x.json", f->dir);
		assert_int_equal(json_write_file(bad, a), -1);
		free(bad);
	}
	list_dir(f->dir, &names);
	assert_int_equal(names.nr, 1);
	strvec_clear(&names);

	/* Accessors tolerate absent and mistyped fields. */
	{
		json_t *o = json_pack("{s:s, s:i, s:f, s:s}", "s", "v", "i", 3, "r", 2.5, "n", "x");
		assert_string_equal(json_str(o, "s"), "v");
		assert_null(json_str(o, "i"));
		assert_null(json_str(o, "absent"));
		assert_true(json_num(o, "i", -1) == 3.0);
		assert_true(json_num(o, "r", -1) == 2.5);
		assert_true(json_num(o, "n", -1) == -1.0);
		assert_true(json_num(o, "absent", 7) == 7.0);
		json_decref(o);
	}
	json_decref(a);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(new_identity),
		cmocka_unit_test_setup_teardown(write_load_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(load_missing_and_bad, setup, teardown),
		cmocka_unit_test(now_is_iso8601),
		cmocka_unit_test_setup_teardown(jsonl_walks, setup, teardown),
		cmocka_unit_test_setup_teardown(jsonl_append_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(json_write_is_atomic, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
