#include "batch/inventory_build.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/csvfile.h"
#include "lib/gitinfo.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/proc.h"
#include "lib/strbuf.h"
#include "providers/flaggems.h"
#include "providers/flaggems_scan.h"

/* Column order of the tables: stable, new columns are appended. */
static const char *const columns[] = {
	"repo", "op", "op_file", "test", "node", "collected", "cases", "skip",
	"skipif", "op_name", "bench_class", "source", "note", "hardcodes",
};
#define NCOLS (sizeof(columns) / sizeof(columns[0]))
#define FREE_AND_NULL(p) do { free(p); (p) = NULL; } while (0)

void inventory_repo_info_release(struct inventory_repo_info *info)
{
	free(info->checkout);
	free(info->package);
	free(info->commit);
	free(info->verify);
	strvec_clear(&info->benchmark_files);
}

static struct inventory_row *new_row(struct inventory *inv)
{
	struct inventory_row *r;

	if (inv->nr == inv->alloc) {
		inv->alloc = inv->alloc ? 2 * inv->alloc : 256;
		inv->rows = xrealloc(inv->rows, inv->alloc * sizeof(*inv->rows));
	}
	r = &inv->rows[inv->nr++];
	memset(r, 0, sizeof(*r));
	return r;
}

static char *dup_or_empty(const char *s)
{
	return xstrdup(s ? s : "");
}

int inventory_scan(struct inventory *inv, struct inventory_repo_info *info)
{
	struct flaggems_scan scan = FLAGGEMS_SCAN_INIT;
	const char *pkg;

	if (flaggems_scan_checkout(info->checkout, &scan)) {
		flaggems_scan_release(&scan);
		return -1;
	}
	pkg = flaggems_package(info->checkout);
	info->package = pkg ? xstrdup(pkg) : NULL;
	info->commit = git_head_commit(info->checkout);
	info->files = scan.files.nr;
	strvec_pushv(&info->benchmark_files, (const char *const *)scan.files.v);
	for (size_t i = 0; i < scan.nr; i++) {
		const struct scanned_test *st = &scan.v[i];
		struct inventory_row *r = new_row(inv);
		r->repo = xstrdup(info->repo);
		r->op = xstrdup(st->op);
		r->op_file = xstrdup(st->op_file);
		r->test = xstrdup(st->test);
		r->node = xstrfmt("%s::%s", st->rel_path, st->test);
		r->skip = dup_or_empty(st->skip);
		r->skipif = dup_or_empty(st->skipif);
		r->op_name = dup_or_empty(st->op_name);
		r->bench_class = dup_or_empty(st->chain);
		r->collected = xstrdup("unverified");
		r->cases = xstrdup("");
		r->source = xstrdup("scan");
		r->note = xstrdup("");
		r->hardcodes = dup_or_empty(st->hardcodes);
		info->functions++;
		info->skipped += st->skip != NULL;
	}
	info->unverified = info->functions;
	flaggems_scan_release(&scan);
	return 0;
}

static void set_field(char **field, const char *value)
{
	free(*field);
	*field = xstrdup(value);
}

static void set_unverified(struct inventory *inv, size_t first,
			   struct inventory_repo_info *info, const char *why)
{
	for (size_t i = first; i < inv->nr; i++) {
		set_field(&inv->rows[i].collected, "unverified");
		set_field(&inv->rows[i].cases, "");
	}
	free(info->verify);
	info->verify = xstrdup(why);
	info->collected = info->not_collected = 0;
	info->unverified = inv->nr - first;
}

/* The line of pytest's output that best says why it failed. */
static void failure_line(const char *output, struct strbuf *why)
{
	const char *best = NULL, *last = NULL;
	size_t best_len = 0, last_len = 0;

	for (const char *p = output; *p; ) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		/* "E   ModuleNotFoundError: ..." is the exception of the first error. */
		if (!best && len > 4 && p[0] == 'E' && p[1] == ' ') {
			best = p;
			best_len = len;
		}
		if (len && p[0] != '=' && p[0] != ' ') {
			last = p;
			last_len = len;
		}
		p += len + (nl ? 1 : 0);
	}
	if (!best) {
		best = last;
		best_len = last_len;
	}
	if (best) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_add(&sb, best, best_len);
		if (starts_with(sb.buf, "E "))
			strbuf_addstr(why, sb.buf + 1);
		else
			strbuf_addstr(why, sb.buf);
		strbuf_trim(why);
		strbuf_release(&sb);
	}
}

/* Row of rows [first, nr) with the node "file::test", or -1. hint: last hit. */
static long find_node(const struct inventory *inv, size_t first, const char *node, long hint)
{
	if (hint >= 0 && !strcmp(inv->rows[hint].node, node))
		return hint;
	for (size_t i = first; i < inv->nr; i++)
		if (!strcmp(inv->rows[i].node, node))
			return (long)i;
	return -1;
}

/* A node pytest collected that the scan did not see (a class method, say). */
static long add_collect_row(struct inventory *inv, const char *repo, const char *node)
{
	struct inventory_row *r = new_row(inv);
	const char *sep = strstr(node, "::");
	char *file = xstrndup(node, (size_t)(sep - node));
	const char *test = sep + 2, *last = strrchr(node, ':') + 1;

	r->repo = xstrdup(repo);
	r->op_file = flaggems_op_file_of(file);
	r->test = xstrdup(test);
	r->op = xstrdup(starts_with(last, "test_") ? last + 5 : last);
	r->node = xstrdup(node);
	r->skip = xstrdup("");
	r->skipif = xstrdup("");
	r->op_name = xstrdup("");
	r->bench_class = xstrdup("");
	r->collected = xstrdup("yes");
	r->cases = xstrdup("0");
	r->source = xstrdup("collect");
	r->hardcodes = xstrdup("");
	r->note = xstrdup(strchr(test, ':') ? "a test class method: zlb run takes module-level "
					     "test functions only"
					   : "not found by the static scan");
	free(file);
	return (long)(inv->nr - 1);
}

/* What the reading of pytest --collect-only output has gathered so far. */
struct collect_read {
	struct strvec err_files, err_msgs;  /* files that failed to import, and why */
	size_t *cases;                      /* items collected per inventory row */
	size_t ncases;
	size_t items;
	long hint;                          /* the row the last item matched */
	int listing;                        /* still in the list of items */
	char *cur_err;                      /* the file of an open "ERROR collecting" */
};

static void note_collect_error(struct collect_read *cr, const char *file, const char *msg)
{
	if (strvec_find(&cr->err_files, file) < 0) {
		strvec_push(&cr->err_files, file);
		strvec_push(&cr->err_msgs, msg);
	}
}

static void count_item(struct inventory *inv, size_t first, struct collect_read *cr,
		       struct inventory_repo_info *info, const char *line)
{
	char *node = xstrdup(line);
	char *br = strchr(strstr(node, "::"), '[');

	if (br)
		*br = '\0';
	long r = find_node(inv, first, node, cr->hint);
	if (r < 0) {
		r = add_collect_row(inv, info->repo, node);
		info->collect_only++;
	}
	if ((size_t)r >= cr->ncases) {
		cr->cases = xrealloc(cr->cases, (inv->nr + 64) * sizeof(size_t));
		memset(cr->cases + cr->ncases, 0, (inv->nr + 64 - cr->ncases) * sizeof(size_t));
		cr->ncases = inv->nr + 64;
	}
	cr->cases[r]++;
	cr->items++;
	cr->hint = r;
	free(node);
}

/* One line of the output (trailing blanks and CR already cut). */
static void read_collect_line(struct inventory *inv, size_t first, struct collect_read *cr,
			      struct inventory_repo_info *info, const char *line)
{
	const char *rest;

	/* Items come first; sections and summaries may quote nodes again. */
	if (line[0] == '=' || strstr(line, " collected") || starts_with(line, "no tests"))
		cr->listing = 0;
	/* "____ ERROR collecting benchmark/x.py ____", then "E   Error: why". */
	if ((rest = strstr(line, "ERROR collecting ")) && line[0] == '_') {
		rest += strlen("ERROR collecting ");
		free(cr->cur_err);
		cr->cur_err = xstrndup(rest, strcspn(rest, " "));
	} else if (cr->cur_err && starts_with(line, "E ")) {
		struct strbuf m = STRBUF_INIT;
		strbuf_addstr(&m, line + 2);
		strbuf_trim(&m);
		note_collect_error(cr, cr->cur_err, m.buf);
		strbuf_release(&m);
		FREE_AND_NULL(cr->cur_err);
	}
	if (skip_prefix(line, "ERROR ", &rest) && starts_with(rest, "benchmark/")) {
		size_t flen = strcspn(rest, " :");
		const char *msg = rest + flen;
		char *f = xstrndup(rest, flen);
		while (*msg == ' ' || *msg == '-')
			msg++;
		note_collect_error(cr, f, msg);
		free(f);
	} else if (cr->listing && starts_with(line, "benchmark/") && strstr(line, "::")) {
		count_item(inv, first, cr, info, line);
	}
}

/* Nothing was collected: every row of the repo is unverified, with pytest's reason. */
static void collect_failed(struct inventory *inv, size_t first, const struct collect_read *cr,
			   struct inventory_repo_info *info, const char *output, int rc)
{
	struct strbuf why = STRBUF_INIT;

	strbuf_addf(&why, "pytest could not collect (exit %d", rc);
	if (cr->err_files.nr)
		strbuf_addf(&why, ", %zu file(s) failed to import", cr->err_files.nr);
	strbuf_addstr(&why, ")");
	if (cr->err_files.nr && *cr->err_msgs.v[0]) {
		strbuf_addf(&why, ": %s", cr->err_msgs.v[0]);
	} else {
		struct strbuf line = STRBUF_INIT;
		failure_line(output, &line);
		if (line.len)
			strbuf_addf(&why, ": %s", line.buf);
		strbuf_release(&line);
	}
	set_unverified(inv, first, info, why.buf);
	strbuf_release(&why);
}

/* Each row of the repo: collected or not, why not, and how many cases. */
static void mark_rows(struct inventory *inv, size_t first, size_t scanned,
		      const struct collect_read *cr, struct inventory_repo_info *info)
{
	info->collected = info->not_collected = info->unverified = 0;
	for (size_t i = first; i < inv->nr; i++) {
		struct inventory_row *r = &inv->rows[i];
		char *file = xstrndup(r->node, strcspn(r->node, ":"));
		int e = strvec_find(&cr->err_files, file);
		free(file);
		if (cr->cases[i]) {
			set_field(&r->collected, "yes");
			info->collected++;
		} else {
			set_field(&r->collected, "no");
			info->not_collected++;
			if (e >= 0) {
				free(r->note);
				r->note = xstrfmt("collection error: %s", *cr->err_msgs.v[e]
						  ? cr->err_msgs.v[e] : "see pytest --collect-only");
			} else if (i < scanned && !*r->note) {
				int at_import = strstr(r->skipif, "importorskip:") ||
						strstr(r->skipif, "module skip:") || *r->skip;
				set_field(&r->note, at_import ? "pytest skipped its module at import"
						: "pytest did not collect it");
			}
		}
		free(r->cases);
		r->cases = xstrfmt("%zu", cr->cases[i]);
	}
}

int inventory_apply_collect(struct inventory *inv, size_t first, const char *output,
			    int rc, struct inventory_repo_info *info)
{
	struct collect_read cr = { STRVEC_INIT, STRVEC_INIT, NULL, 0, 0, -1, 1, NULL };
	size_t scanned = inv->nr;
	int ret = 0;

	cr.ncases = inv->nr + 1;
	cr.cases = xcalloc(cr.ncases, sizeof(size_t));
	for (const char *p = output; *p; ) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, len);

		p += len + (nl ? 1 : 0);
		while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
			line[--len] = '\0';
		read_collect_line(inv, first, &cr, info, line);
		free(line);
	}
	info->collect_errors = cr.err_files.nr;
	if (!cr.items && (cr.err_files.nr || (rc != 0 && rc != 5))) {
		collect_failed(inv, first, &cr, info, output, rc);
		ret = -1;
	} else {
		mark_rows(inv, first, scanned, &cr, info);
		free(info->verify);
		info->verify = xstrdup("pytest");
	}
	free(cr.cur_err);
	strvec_clear(&cr.err_files);
	strvec_clear(&cr.err_msgs);
	free(cr.cases);
	return ret;
}

void inventory_verify(struct inventory *inv, size_t first,
		      const struct inventory_verify *v, struct inventory_repo_info *info)
{
	struct strvec argv = STRVEC_INIT, env = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	int rc;

	if (!info->benchmark_files.nr) {
		free(info->verify);
		info->verify = xstrdup("pytest (no benchmark files)");
		return;
	}
	strvec_pushl(&argv, v->python, "-m", "pytest", "--collect-only", "-q",
		     "-p", "no:cacheprovider", "--continue-on-collection-errors", NULL);
	strvec_pushf(&argv, "--rootdir=%s", info->checkout);
	strvec_pushv(&argv, (const char *const *)info->benchmark_files.v);
	strvec_pushv(&env, (const char *const *)v->envp);
	/* The checkout may be read-only or shared: leave no __pycache__ in it. */
	env_set(&env, "PYTHONDONTWRITEBYTECODE", "1");
	rc = run_capture(argv.v, env.v, info->checkout, v->timeout_ms, &out);
	if (rc < 0) {
		char *why = xstrfmt("pytest could not collect: %s", last_error());
		set_unverified(inv, first, info, why);
		free(why);
	} else {
		inventory_apply_collect(inv, first, out.buf, rc, info);
	}
	strbuf_release(&out);
	strvec_clear(&argv);
	strvec_clear(&env);
}

static int cmp_row(const void *a, const void *b)
{
	const struct inventory_row *x = a, *y = b;
	int c = strcmp(x->op_file, y->op_file);

	return c ? c : strcmp(x->test, y->test);
}

void inventory_sort(struct inventory *inv, size_t first)
{
	if (inv->nr > first)
		qsort(inv->rows + first, inv->nr - first, sizeof(*inv->rows), cmp_row);
}

int inventory_write_csv(const char *out_dir, const char *repo,
			const struct inventory *inv, size_t first, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	char *name = inventory_csv_name(repo), *path;
	int ret;

	if (!name)
		BUG("unknown repo %s", repo);
	path = path_join(out_dir, name);
	csv_add_row(&sb, columns, NCOLS);
	for (size_t i = first; i < first + n; i++) {
		const struct inventory_row *r = &inv->rows[i];
		const char *f[NCOLS] = { r->repo, r->op, r->op_file, r->test, r->node,
					 r->collected, r->cases, r->skip, r->skipif,
					 r->op_name, r->bench_class, r->source, r->note,
					 r->hardcodes };
		csv_add_row(&sb, f, NCOLS);
	}
	ret = write_file_atomic(path, sb.buf, sb.len);
	if (ret)
		ret = error("cannot write %s: %s", path, last_error());
	strbuf_release(&sb);
	free(name);
	free(path);
	return ret;
}

static json_t *info_json(const struct inventory_repo_info *info)
{
	json_t *o = json_object(), *c = json_object();

	json_object_set_new(o, "checkout", json_string(info->checkout));
	json_object_set_new(o, "package", info->package ? json_string(info->package) : json_null());
	json_object_set_new(o, "commit", info->commit ? json_string(info->commit) : json_null());
	json_object_set_new(o, "verified_by", json_string(info->verify ? info->verify : ""));
	json_object_set_new(c, "files", json_integer((json_int_t)info->files));
	json_object_set_new(c, "functions", json_integer((json_int_t)info->functions));
	json_object_set_new(c, "skipped", json_integer((json_int_t)info->skipped));
	json_object_set_new(c, "collected", json_integer((json_int_t)info->collected));
	json_object_set_new(c, "not_collected", json_integer((json_int_t)info->not_collected));
	json_object_set_new(c, "unverified", json_integer((json_int_t)info->unverified));
	json_object_set_new(c, "collect_only", json_integer((json_int_t)info->collect_only));
	json_object_set_new(c, "collect_errors", json_integer((json_int_t)info->collect_errors));
	json_object_set_new(o, "counts", c);
	return o;
}

int inventory_write_meta(const char *out_dir, const struct inventory_repo_info *infos,
			 size_t n)
{
	char *path = path_join(out_dir, "inventory.json");
	json_t *old = NULL, *meta = json_object(), *repos = json_object();
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int ret;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(meta, "schema_version", json_integer(INVENTORY_SCHEMA_VERSION));
	json_object_set_new(meta, "created", json_string(stamp));
	json_object_set_new(meta, "zlb_version", json_string(ZLB_VERSION));
	for (size_t i = 0; i < n; i++)
		json_object_set_new(repos, infos[i].repo, info_json(&infos[i]));
	/* A repo not rebuilt now keeps its table, so inventory.json keeps its facts. */
	if (json_read_file(path, &old) == 0) {
		json_t *prev = json_object_get(old, "repos");
		const char *key;
		json_t *val;
		json_object_foreach(prev, key, val) {
			char *name = inventory_csv_name(key), *csv;
			if (!name || json_object_get(repos, key) || !json_is_object(val)) {
				free(name);
				continue;
			}
			csv = path_join(out_dir, name);
			if (is_file(csv)) {
				json_t *copy = json_deep_copy(val);
				json_object_set_new(copy, "kept", json_true());
				json_object_set_new(repos, key, copy);
			}
			free(csv);
			free(name);
		}
		json_decref(old);
	}
	json_object_set_new(meta, "repos", repos);
	ret = json_write_file(path, meta);
	json_decref(meta);
	free(path);
	return ret;
}
