/*
 * The merge of a parallel sweep's autotune records (run/sweep_shards.h):
 * the shards' autotune_records/<op>.json, in the format zlbench.autotune
 * writes (python/zlbench/_autotune_record.py), become one such file per
 * name in the run's autotune_records/, with a meta.json that counts them,
 * so that a replay of the run (its own measurement, a later --replay-from)
 * reads what a serial sweep would have written.
 */
#include "run/sweep_shards.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/strbuf.h"

#define RECORDS "autotune_records"
#define META "meta.json"

/* A key as the plugin matches it (_autotune.key_id): its values and key_repr. */
static char *key_id(const json_t *item)
{
	json_t *pair = json_pack("[bO]", json_is_true(json_object_get(item, "key_repr")),
				 json_object_get(item, "key") ? json_object_get(item, "key")
							      : json_null());
	char *text = pair ? json_dumps(pair, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)
			  : NULL;

	json_decref(pair);
	return text ? text : xstrdup("?");
}

/*
 * One kernel of the merge: its record (tuner, kernel, where, key_names)
 * and its entries and unrecordable keys by key id.
 */
static json_t *kernel_slot(json_t *kernels, const json_t *k)
{
	const char *where = json_str(k, "where"), *kernel = json_str(k, "kernel");
	char *id = xstrfmt("%s\x1f%s", where ? where : "", kernel ? kernel : "");
	json_t *slot = json_object_get(kernels, id);

	if (!slot) {
		json_t *head = json_deep_copy(k);
		json_object_del(head, "entries");
		json_object_del(head, "unrecordable");
		slot = json_pack("{s:o,s:o,s:o,s:o}", "head", head, "entries", json_object(),
				 "unrecordable", json_object(), "conflicted", json_object());
		json_object_set_new(kernels, id, slot);
	}
	free(id);
	return slot;
}

static void merge_kernel(json_t *slot, const json_t *k, long *conflicts)
{
	json_t *entries = json_object_get(slot, "entries");
	json_t *unrec = json_object_get(slot, "unrecordable");
	json_t *conflicted = json_object_get(slot, "conflicted");
	size_t i;
	json_t *item;

	json_array_foreach(json_object_get(k, "entries"), i, item) {
		char *id = key_id(item);
		json_t *had = json_object_get(entries, id);

		if (!had) {
			json_object_set(entries, id, item);
		} else if (!json_equal(json_object_get(had, "config"),
				       json_object_get(item, "config")) &&
			   !json_object_get(conflicted, id)) {
			/* The first shard's winner stays; the key counts once. */
			json_object_set_new(conflicted, id, json_true());
			(*conflicts)++;
		}
		free(id);
	}
	json_array_foreach(json_object_get(k, "unrecordable"), i, item) {
		char *id = key_id(item);

		if (!json_object_get(unrec, id))
			json_object_set(unrec, id, item);
		free(id);
	}
}

/* The values of obj, ordered by their keys: a merge that does not depend on shard order. */
static json_t *sorted_values(json_t *obj, const json_t *skip)
{
	struct strvec keys = STRVEC_INIT;
	const char *k;
	json_t *v, *out = json_array();

	json_object_foreach(obj, k, v)
		if (!skip || !json_object_get(skip, k))
			strvec_push(&keys, k);
	strvec_sort(&keys);
	for (size_t i = 0; i < keys.nr; i++)
		json_array_append(out, json_object_get(obj, keys.v[i]));
	strvec_clear(&keys);
	return out;
}

/* The merged document of one file name: kernels sorted by (where, kernel), as the plugin sorts. */
static json_t *merged_doc(const json_t *first, json_t *kernels, long *tuners, long *entries)
{
	json_t *doc = json_pack("{s:O,s:O,s:[]}", "schema_version",
				json_object_get(first, "schema_version"), "op",
				json_object_get(first, "op") ? json_object_get(first, "op")
							     : json_null(), "kernels");
	json_t *list = sorted_values(kernels, NULL), *slot;
	size_t i;

	json_array_foreach(list, i, slot) {
		json_t *k = json_deep_copy(json_object_get(slot, "head"));
		json_t *e = json_object_get(slot, "entries");

		json_object_set_new(k, "entries", sorted_values(e, NULL));
		/* A key another shard could record is not unrecordable. */
		json_object_set_new(k, "unrecordable",
				    sorted_values(json_object_get(slot, "unrecordable"), e));
		*entries += (long)json_object_size(e);
		(*tuners)++;
		json_array_append_new(json_object_get(doc, "kernels"), k);
	}
	json_decref(list);
	return doc;
}

/* The record files of a shard (every *.json but meta.json), sorted. */
static void record_files(const char *dir, struct strvec *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (ends_with(e->d_name, ".json") && strcmp(e->d_name, META) &&
		    e->d_name[0] != '.')
			strvec_push(out, e->d_name);
	if (d)
		closedir(d);
	strvec_sort(out);
}

int sweep_merge_records(const char *const *shard_dirs, size_t n, const char *dest_dir,
			long *entries, long *conflicts)
{
	json_t *files = json_object();     /* name -> {"first": doc, "kernels": {...}} */
	json_t *meta = NULL;
	char *out_dir = path_join(dest_dir, RECORDS);
	long tuners = 0;
	int ret = -1;
	const char *name;
	json_t *f;

	*entries = *conflicts = 0;
	for (size_t s = 0; s < n; s++) {
		char *dir = path_join(shard_dirs[s], RECORDS);
		char *meta_path = path_join(dir, META);
		struct strvec names = STRVEC_INIT;
		json_t *m = NULL;
		int r = json_read_file(meta_path, &m);

		if (r) {
			if (r > 0)
				error("shard %zu wrote no %s/%s: its tuners' choices are unknown",
				      s, RECORDS, META);
			free(dir);
			free(meta_path);
			goto out;
		}
		if (!meta)
			meta = m;
		else
			json_decref(m);
		record_files(dir, &names);
		for (size_t i = 0; i < names.nr; i++) {
			char *p = path_join(dir, names.v[i]);
			json_t *doc = NULL, *kernel;
			size_t k;

			r = json_read_file(p, &doc);
			free(p);
			if (r || !json_is_array(json_object_get(doc, "kernels"))) {
				if (!r)
					error("shard %zu: %s/%s has no kernels list", s, RECORDS,
					      names.v[i]);
				json_decref(doc);
				strvec_clear(&names);
				free(dir);
				free(meta_path);
				goto out;
			}
			f = json_object_get(files, names.v[i]);
			if (!f) {
				f = json_pack("{s:O,s:o}", "first", doc, "kernels", json_object());
				json_object_set_new(files, names.v[i], f);
			}
			json_array_foreach(json_object_get(doc, "kernels"), k, kernel)
				merge_kernel(kernel_slot(json_object_get(f, "kernels"), kernel),
					     kernel, conflicts);
			json_decref(doc);
		}
		strvec_clear(&names);
		free(dir);
		free(meta_path);
	}
	if (!meta) {
		error("no shard to merge");
		goto out;
	}
	if (mkdir_p(out_dir, 0755))
		goto out;
	json_object_foreach(files, name, f) {
		json_t *doc = merged_doc(json_object_get(f, "first"), json_object_get(f, "kernels"),
					 &tuners, entries);
		char *p = path_join(out_dir, name);
		int r = json_write_file(p, doc);

		free(p);
		json_decref(doc);
		if (r)
			goto out;
	}
	/* meta.json last, as the plugin writes it: a replay reads it first. */
	json_object_set_new(meta, "tuners", json_integer(tuners));
	json_object_set_new(meta, "entries", json_integer(*entries));
	{
		char *p = path_join(out_dir, META);
		ret = json_write_file(p, meta);
		free(p);
	}
out:
	json_decref(files);
	json_decref(meta);
	free(out_dir);
	return ret;
}
