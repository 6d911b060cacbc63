/*
 * sweep_merge.c: the shards' autotune records of a parallel sweep become
 * the run's, as one serial sweep would have written them: every key once,
 * the first shard's winner kept, each key whose winners differ counted
 * once, the order independent of which shard found what, meta.json last.
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

#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "run/sweep_shards.h"

#include "error_capture.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/zlb-sweep-merge-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	strbuf_reset(&errors);
	set_error_routine(capture_error);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	set_error_routine(NULL);
	strbuf_release(&errors);
	return remove_tree(dir) ? -1 : 0;
}

static void put(const char *rel, const char *text)
{
	char *path = path_join(dir, rel);
	char *parent = xstrdup(path);

	*strrchr(parent, '/') = '\0';
	assert_int_equal(mkdir_p(parent, 0755), 0);
	assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
	free(parent);
	free(path);
}

#define META "{\"schema_version\": 1, \"op\": \"scale\", \"backend\": \"cuda\", " \
	     "\"tuners\": 1, \"entries\": 1}"

/* A record of one kernel whose entries are key:config pairs "N=BLOCK". */
static char *record(const char *kernel, const char *const *pairs, const char *unrecordable)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "{\"schema_version\": 1, \"op\": \"scale\", \"kernels\": [{\"tuner\": "
		    "\"Autotuner\", \"where\": \"m:%s\", \"kernel\": \"%s\", \"key_names\": [\"N\"], "
		    "\"entries\": [", kernel, kernel);
	for (size_t i = 0; pairs[i]; i++) {
		int n, block;

		assert_int_equal(sscanf(pairs[i], "%d=%d", &n, &block), 2);
		strbuf_addf(&sb, "%s{\"key\": [%d], \"key_repr\": false, \"config\": "
			    "{\"kwargs\": {\"BLOCK\": %d}, \"num_warps\": 4}}", i ? ", " : "", n,
			    block);
	}
	strbuf_addstr(&sb, "], \"unrecordable\": [");
	if (unrecordable)
		strbuf_addf(&sb, "{\"key\": [%s], \"key_repr\": false, \"why\": \"x\"}",
			    unrecordable);
	strbuf_addstr(&sb, "]}]}");
	return strbuf_detach(&sb, NULL);
}

static void shard(int k, const char *kernel, const char *const *pairs, const char *unrec)
{
	char *rel = xstrfmt("s%d/autotune_records/scale.json", k);
	char *meta = xstrfmt("s%d/autotune_records/meta.json", k);
	char *doc = record(kernel, pairs, unrec);

	put(rel, doc);
	put(meta, META);
	free(rel);
	free(meta);
	free(doc);
}

static json_t *merged(const char *name)
{
	char *p = xstrfmt("%s/run/autotune_records/%s", dir, name);
	json_t *doc = NULL;

	assert_int_equal(json_read_file(p, &doc), 0);
	free(p);
	return doc;
}

static int merge(size_t n, long *entries, long *conflicts)
{
	char *s[4], *run = path_join(dir, "run");
	int r;

	for (size_t k = 0; k < n; k++)
		s[k] = xstrfmt("%s/s%zu", dir, k);
	r = sweep_merge_records((const char *const *)s, n, run, entries, conflicts);
	for (size_t k = 0; k < n; k++)
		free(s[k]);
	free(run);
	return r;
}

/* BLOCK of the entry whose key is [n] in kernel 0 of doc, or -1. */
static long block_of(json_t *doc, int n)
{
	json_t *k = json_array_get(json_object_get(doc, "kernels"), 0), *e;
	size_t i;

	json_array_foreach(json_object_get(k, "entries"), i, e)
		if (json_integer_value(json_array_get(json_object_get(e, "key"), 0)) == n)
			return (long)json_integer_value(json_object_get(
				json_object_get(json_object_get(e, "config"), "kwargs"), "BLOCK"));
	return -1;
}

static void test_disjoint_shards_merge_into_one_record(void **state)
{
	static const char *const a[] = { "4096=64", "64=16", NULL };
	static const char *const b[] = { "16384=128", NULL };
	long entries, conflicts;
	json_t *doc, *meta, *keys;
	size_t i;
	json_t *e;

	(void)state;
	shard(0, "scale_kernel", a, NULL);
	shard(1, "scale_kernel", b, NULL);
	assert_int_equal(merge(2, &entries, &conflicts), 0);
	assert_int_equal(entries, 3);
	assert_int_equal(conflicts, 0);
	doc = merged("scale.json");
	assert_int_equal(json_array_size(json_object_get(doc, "kernels")), 1);
	assert_int_equal(block_of(doc, 4096), 64);
	assert_int_equal(block_of(doc, 64), 16);
	assert_int_equal(block_of(doc, 16384), 128);
	/* Entries sorted by key id, whichever shard found them. */
	keys = json_array();
	json_array_foreach(json_object_get(json_array_get(json_object_get(doc, "kernels"), 0),
					   "entries"), i, e)
		json_array_append(keys, json_array_get(json_object_get(e, "key"), 0));
	assert_int_equal(json_integer_value(json_array_get(keys, 0)), 16384);
	assert_int_equal(json_integer_value(json_array_get(keys, 1)), 4096);
	assert_int_equal(json_integer_value(json_array_get(keys, 2)), 64);
	json_decref(keys);
	meta = merged("meta.json");
	assert_int_equal(json_integer_value(json_object_get(meta, "entries")), 3);
	assert_int_equal(json_integer_value(json_object_get(meta, "tuners")), 1);
	assert_string_equal(json_str(meta, "backend"), "cuda");
	json_decref(meta);
	json_decref(doc);
}

static void test_a_key_two_shards_chose_differently_counts_once(void **state)
{
	static const char *const a[] = { "4096=64", "64=16", NULL };
	static const char *const b[] = { "4096=128", "64=16", NULL };
	static const char *const c[] = { "4096=256", NULL };
	long entries, conflicts;
	json_t *doc;

	(void)state;
	shard(0, "scale_kernel", a, NULL);
	shard(1, "scale_kernel", b, NULL);
	shard(2, "scale_kernel", c, NULL);
	assert_int_equal(merge(3, &entries, &conflicts), 0);
	assert_int_equal(entries, 2);
	assert_int_equal(conflicts, 1);            /* 4096, three winners: one key */
	doc = merged("scale.json");
	assert_int_equal(block_of(doc, 4096), 64); /* the first shard's */
	assert_int_equal(block_of(doc, 64), 16);
	json_decref(doc);
}

static void test_a_key_another_shard_recorded_is_not_unrecordable(void **state)
{
	static const char *const a[] = { "4096=64", NULL };
	static const char *const b[] = { "64=16", NULL };
	long entries, conflicts;
	json_t *doc, *k;

	(void)state;
	shard(0, "scale_kernel", a, "64");
	shard(1, "scale_kernel", b, "7");
	assert_int_equal(merge(2, &entries, &conflicts), 0);
	doc = merged("scale.json");
	k = json_array_get(json_object_get(doc, "kernels"), 0);
	assert_int_equal(json_array_size(json_object_get(k, "unrecordable")), 1);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(
		json_array_get(json_object_get(k, "unrecordable"), 0), "key"), 0)), 7);
	json_decref(doc);
}

static void test_kernels_of_several_shards_sorted(void **state)
{
	static const char *const a[] = { "64=16", NULL };
	long entries, conflicts;
	json_t *doc, *ks;

	(void)state;
	shard(0, "z_kernel", a, NULL);
	shard(1, "a_kernel", a, NULL);
	assert_int_equal(merge(2, &entries, &conflicts), 0);
	assert_int_equal(entries, 2);
	doc = merged("scale.json");
	ks = json_object_get(doc, "kernels");
	assert_int_equal(json_array_size(ks), 2);
	assert_string_equal(json_str(json_array_get(ks, 0), "kernel"), "a_kernel");
	assert_string_equal(json_str(json_array_get(ks, 1), "kernel"), "z_kernel");
	assert_non_null(json_object_get(json_array_get(ks, 0), "key_names"));
	json_decref(doc);
}

static void test_a_shard_without_meta_fails_the_merge(void **state)
{
	static const char *const a[] = { "64=16", NULL };
	char *doc = record("scale_kernel", a, NULL);
	char *out = path_join(dir, "run/autotune_records/meta.json");
	long entries, conflicts;
	struct stat st;

	(void)state;
	shard(0, "scale_kernel", a, NULL);
	put("s1/autotune_records/scale.json", doc);
	assert_int_equal(merge(2, &entries, &conflicts), -1);
	assert_non_null(strstr(errors.buf, "shard 1 wrote no autotune_records/meta.json"));
	assert_int_not_equal(stat(out, &st), 0); /* nothing published */
	free(out);
	free(doc);
}

static void test_a_record_without_kernels_fails_the_merge(void **state)
{
	static const char *const a[] = { "64=16", NULL };
	long entries, conflicts;

	(void)state;
	shard(0, "scale_kernel", a, NULL);
	put("s1/autotune_records/meta.json", META);
	put("s1/autotune_records/scale.json", "{\"schema_version\": 1, \"kernels\": 3}");
	assert_int_equal(merge(2, &entries, &conflicts), -1);
	assert_non_null(strstr(errors.buf, "shard 1: autotune_records/scale.json has no "
				"kernels list"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_disjoint_shards_merge_into_one_record,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_key_two_shards_chose_differently_counts_once,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_key_another_shard_recorded_is_not_unrecordable,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernels_of_several_shards_sorted, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_shard_without_meta_fails_the_merge, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_record_without_kernels_fails_the_merge,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
