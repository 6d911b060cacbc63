#include "batch/inventory.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/csvfile.h"
#include "batch/dismiss.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/strbuf.h"

const char *const inventory_repos[] = { "main", "vllm", NULL };

char *inventory_csv_name(const char *repo)
{
	for (const char *const *r = inventory_repos; *r; r++)
		if (!strcmp(*r, repo))
			return xstrfmt("inventory_%s.csv", repo);
	return NULL;
}

void inventory_row_release(struct inventory_row *r)
{
	free(r->repo);
	free(r->op);
	free(r->op_file);
	free(r->test);
	free(r->node);
	free(r->skip);
	free(r->skipif);
	free(r->op_name);
	free(r->bench_class);
	free(r->collected);
	free(r->cases);
	free(r->source);
	free(r->note);
	free(r->hardcodes);
}

void inventory_release(struct inventory *inv)
{
	for (size_t i = 0; i < inv->nr; i++)
		inventory_row_release(&inv->rows[i]);
	free(inv->rows);
	memset(inv, 0, sizeof(*inv));
}

/* Columns a reader cannot do without; the others default to "". */
static const char *const required[] = { "op", "op_file", "test", "collected", "skip", NULL };

static int load_table(const char *path, const char *repo, struct inventory *inv)
{
	struct csv_table t = { 0 };

	if (csv_read_file(path, &t))
		return -1;
	for (const char *const *c = required; *c; c++) {
		if (csv_column(&t, *c) < 0) {
			int r = error("%s has no '%s' column, so it is not an inventory "
				      "this zlb can read; rebuild it with zlb inventory", path, *c);
			csv_table_free(&t);
			return r;
		}
	}
	for (size_t i = 0; i < t.nrows; i++) {
		struct inventory_row *r;
		const char *col = csv_get(&t, i, "repo");
		if (*col && strcmp(col, repo)) {
			int ret = error("%s row %zu belongs to repo '%s', not '%s'; rebuild "
					"it with zlb inventory", path, i + 2, col, repo);
			csv_table_free(&t);
			return ret;
		}
		if (inv->nr == inv->alloc) {
			inv->alloc = inv->alloc ? 2 * inv->alloc : 256;
			inv->rows = xrealloc(inv->rows, inv->alloc * sizeof(*inv->rows));
		}
		r = &inv->rows[inv->nr++];
		r->repo = xstrdup(repo);
		r->op = xstrdup(csv_get(&t, i, "op"));
		r->op_file = xstrdup(csv_get(&t, i, "op_file"));
		r->test = xstrdup(csv_get(&t, i, "test"));
		r->node = xstrdup(csv_get(&t, i, "node"));
		r->skip = xstrdup(csv_get(&t, i, "skip"));
		r->skipif = xstrdup(csv_get(&t, i, "skipif"));
		r->op_name = xstrdup(csv_get(&t, i, "op_name"));
		r->bench_class = xstrdup(csv_get(&t, i, "bench_class"));
		r->collected = xstrdup(csv_get(&t, i, "collected"));
		r->cases = xstrdup(csv_get(&t, i, "cases"));
		r->source = xstrdup(csv_get(&t, i, "source"));
		r->note = xstrdup(csv_get(&t, i, "note"));
		r->hardcodes = xstrdup(csv_get(&t, i, "hardcodes"));
	}
	csv_table_free(&t);
	return 0;
}

static int check_meta(const char *ops_dir)
{
	char *path = path_join(ops_dir, "inventory.json");
	json_t *meta = NULL;
	int r = json_read_file(path, &meta);

	if (r < 0) {
		free(path);
		return -1;
	}
	if (r == 0) {
		json_t *v = json_object_get(meta, "schema_version");
		if (!json_is_integer(v) || json_integer_value(v) != INVENTORY_SCHEMA_VERSION)
			r = error("%s has schema_version %s; this zlb reads version %d: "
				  "rebuild the inventory with zlb inventory --out %s", path,
				  json_is_integer(v) ? "other than expected" : "missing",
				  INVENTORY_SCHEMA_VERSION, ops_dir);
		json_decref(meta);
	}
	free(path);
	return r < 0 ? -1 : 0;
}

int inventory_load(const char *ops_dir, struct inventory *inv)
{
	int found = 0;

	if (!is_dir(ops_dir))
		return error("inventory folder %s does not exist; build it with "
			     "zlb inventory --out %s", ops_dir, ops_dir);
	if (check_meta(ops_dir))
		return -1;
	for (const char *const *repo = inventory_repos; *repo; repo++) {
		char *name = inventory_csv_name(*repo);
		char *path = path_join(ops_dir, name);
		int r = 0;
		free(name);
		if (is_file(path)) {
			found++;
			r = load_table(path, *repo, inv);
		}
		free(path);
		if (r)
			return -1;
	}
	if (!found)
		return error("%s holds no inventory_main.csv or inventory_vllm.csv; build "
			     "them with zlb inventory --out %s", ops_dir, ops_dir);
	return 0;
}

char *inventory_spec(const struct inventory *inv, size_t r)
{
	const struct inventory_row *row = &inv->rows[r];
	int shared = 0;

	/* A test class method is no operator `zlb run` could mistake for this one. */
	for (size_t i = 0; i < inv->nr && !shared; i++)
		shared = i != r && !strcmp(inv->rows[i].repo, row->repo) &&
			 !strcmp(inv->rows[i].op, row->op) && !strstr(inv->rows[i].test, "::");
	return xstrfmt("%s%s%s%s%s", strcmp(row->repo, "main") ? row->repo : "",
		       strcmp(row->repo, "main") ? ":" : "", row->op,
		       shared ? "@" : "", shared ? row->op_file : "");
}

/* Why row must stay out of a full batch (fresh), or NULL to take it. */
static char *exclusion(const struct inventory_row *row, const struct dismiss_entry *d,
		       const char *dismiss_path)
{
	if (strstr(row->test, "::"))
		return xstrdup("a test class method: zlb run takes module-level test "
			       "functions only");
	if (!strcmp(row->collected, "no"))
		return xstrdup("not collected by pytest");
	if (*row->skip)
		return xstrfmt("skip mark: %s", row->skip);
	if (d)
		return xstrfmt("dismissed: %s (%s:%u)", d->reason, dismiss_path, d->line);
	return NULL;
}

int inventory_select_all(const char *ops_dir, const char *dismiss_path,
			 struct strvec *specs, struct strvec *excluded)
{
	struct inventory inv = INVENTORY_INIT;
	struct dismiss_list dl = DISMISS_LIST_INIT;
	char *dpath = dismiss_path ? xstrdup(dismiss_path) : path_join(ops_dir, "dismiss.txt");
	int ret = -1;

	if (inventory_load(ops_dir, &inv))
		goto out;
	if (dismiss_path || is_file(dpath)) {
		if (dismiss_load(dpath, &dl))
			goto out;
	}
	for (size_t i = 0; i < inv.nr; i++) {
		const struct inventory_row *row = &inv.rows[i];
		const struct dismiss_entry *d = dismiss_match(&dl, row->repo, row->op, row->op_file);
		char *spec = inventory_spec(&inv, i);
		char *why = exclusion(row, d, dpath);
		if (!why)
			strvec_push(specs, spec);
		else if (excluded)
			strvec_pushf(excluded, "%s\t%s", spec, why);
		free(why);
		free(spec);
	}
	for (size_t i = 0; i < dl.nr; i++) {
		const struct dismiss_entry *e = &dl.v[i];
		if (!e->used)
			warning("%s:%u: %s%s%s%s%s matches no function of the inventory in %s",
				dpath, e->line, strcmp(e->repo, "main") ? e->repo : "",
				strcmp(e->repo, "main") ? ":" : "", e->op,
				e->op_file ? "@" : "", e->op_file ? e->op_file : "", ops_dir);
	}
	ret = 0;
out:
	inventory_release(&inv);
	dismiss_release(&dl);
	free(dpath);
	return ret;
}

char *inventory_checkout(const char *ops_dir, const char *repo)
{
	char *path = path_join(ops_dir, "inventory.json");
	json_t *meta = NULL;
	const char *dir;
	char *out = NULL;

	if (json_read_file(path, &meta) == 0 &&
	    json_integer_value(json_object_get(meta, "schema_version")) == INVENTORY_SCHEMA_VERSION) {
		dir = json_string_value(json_object_get(json_object_get(json_object_get(meta, "repos"),
									 repo), "checkout"));
		/* Only an absolute path: a relative one would mean another place from here. */
		if (dir && dir[0] == '/')
			out = xstrdup(dir);
	}
	json_decref(meta);
	free(path);
	return out;
}
