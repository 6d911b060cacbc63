#include "providers/flaggems.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/paths.h"

void flaggems_target_release(struct flaggems_target *t)
{
	free(t->dir);
	free(t->package);
	free(t->op);
	free(t->op_file);
	free(t->test_path);
	free(t->node);
	free(t->op_name);
	free(t->hardcoding_class);
	strvec_clear(&t->chain);
	memset(t, 0, sizeof(*t));
}

const char *flaggems_package(const char *dir)
{
	static const char *const pkgs[] = { "flag_gems", "flaggems_vllm", NULL };

	for (const char *const *p = pkgs; *p; p++) {
		char *init = xstrfmt("%s/src/%s/__init__.py", dir, *p);
		int ok = is_file(init);
		free(init);
		if (ok)
			return *p;
	}
	return NULL;
}

static int looks_like_checkout(const char *dir)
{
	char *b = path_join(dir, "benchmark");
	int ok = is_dir(b);
	free(b);
	return ok;
}

static void note(struct strbuf *looked, const char *what)
{
	if (looked->len)
		strbuf_addstr(looked, "; ");
	strbuf_addstr(looked, what);
}

int flaggems_find_checkout(const char *explicit_dir, const char *importable_pkg_init,
			   struct strbuf *looked, char **out)
{
	*out = NULL;
	if (explicit_dir && *explicit_dir) {
		char *abs = path_absolute(explicit_dir);
		note(looked, abs);
		if (!is_dir(abs)) {
			int r = error("FlagGems directory '%s' does not exist", abs);
			free(abs);
			return r;
		}
		if (!looks_like_checkout(abs)) {
			int r = error("'%s' has no benchmark/ folder, so it is not a "
				      "FlagGems checkout", abs);
			free(abs);
			return r;
		}
		*out = abs;
		return 0;
	}
	if (importable_pkg_init && *importable_pkg_init) {
		/* .../src/flag_gems/__init__.py -> walk up to the folder with benchmark/ */
		char *d = path_dirname(importable_pkg_init);
		for (int i = 0; i < 4 && strcmp(d, "/"); i++) {
			char *up = path_dirname(d);
			free(d);
			d = up;
			if (looks_like_checkout(d)) {
				char *what = xstrfmt("root of the importable package (%s)", d);
				note(looked, what);
				free(what);
				*out = d;
				return 0;
			}
		}
		char *what = xstrfmt("above %s (no benchmark/ folder: not an "
				     "editable install)", importable_pkg_init);
		note(looked, what);
		free(what);
		free(d);
	} else {
		note(looked, "an importable flag_gems (none)");
	}
	/* Standing inside a checkout: that is the one meant. */
	char *here = path_absolute(".");
	if (looks_like_checkout(here) && flaggems_package(here)) {
		char *what = xstrfmt("the current directory (%s)", here);
		note(looked, what);
		free(what);
		*out = here;
		return 0;
	}
	free(here);
	char *local = path_absolute("FlagGems");
	note(looked, local);
	if (looks_like_checkout(local)) {
		*out = local;
		return 0;
	}
	free(local);
	return error("no FlagGems checkout found");
}

/* Every "def test_<name>(" that starts a line of text (module-level tests). */
static void scan_test_names(const char *text, struct strvec *names)
{
	for (const char *p = text; (p = strstr(p, "def test_")); ) {
		const char *start = p + 9, *e = start;
		int at_bol = p == text || p[-1] == '\n';

		while (isalnum((unsigned char)*e) || *e == '_')
			e++;
		if (at_bol && *e == '(' && e > start)
			strvec_pushf(names, "%.*s", (int)(e - start), start);
		p = e;
	}
}

/*
 * Push path if it is a test file not listed yet under another name: a link
 * to a file already listed (same device and inode) would list its
 * operators twice.
 */
static void push_test_file(struct strvec *files, struct strvec *seen, const char *path)
{
	struct stat st;
	char key[64];

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return;
	snprintf(key, sizeof(key), "%llx:%llx", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	if (strvec_find(seen, key) >= 0)
		return;
	strvec_push(seen, key);
	strvec_push(files, path);
}

void flaggems_list_benchmark_files(const char *dir, struct strvec *files)
{
	char *bdir = path_join(dir, "benchmark");
	struct strvec names = STRVEC_INIT, seen = STRVEC_INIT;
	DIR *d = opendir(bdir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' && strcmp(e->d_name, "models_benchmark"))
			strvec_push(&names, e->d_name);
	if (d)
		closedir(d);
	/* Sorted first, so which name of a file linked twice is listed does not depend on readdir. */
	strvec_sort(&names);
	for (size_t i = 0; i < names.nr; i++) {
		char *p = path_join(bdir, names.v[i]);
		struct stat lst;

		if (starts_with(names.v[i], "test_") && ends_with(names.v[i], ".py")) {
			push_test_file(files, &seen, p);
		} else if (!lstat(p, &lst) && S_ISDIR(lst.st_mode)) {
			/* A linked folder (`ln -s . benchmark/loop`) is not descended into. */
			struct strvec sub = STRVEC_INIT;
			DIR *sd = opendir(p);
			struct dirent *se;

			while (sd && (se = readdir(sd)))
				if (starts_with(se->d_name, "test_") && ends_with(se->d_name, ".py"))
					strvec_push(&sub, se->d_name);
			if (sd)
				closedir(sd);
			strvec_sort(&sub);
			for (size_t k = 0; k < sub.nr; k++) {
				char *sp = path_join(p, sub.v[k]);
				push_test_file(files, &seen, sp);
				free(sp);
			}
			strvec_clear(&sub);
		}
		free(p);
	}
	strvec_clear(&names);
	strvec_clear(&seen);
	free(bdir);
	strvec_sort(files);
}

size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *row = xcalloc(lb + 1, sizeof(size_t));
	size_t res;

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	res = row[lb];
	free(row);
	return res;
}

struct candidate {
	char *name;
	size_t score;
};

static int cmp_candidate(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;
	if (x->score != y->score)
		return x->score < y->score ? -1 : 1;
	return strcmp(x->name, y->name);
}

void flaggems_close_names(const char *dir, const char *op, struct strvec *out,
			  size_t max)
{
	struct strvec files = STRVEC_INIT, names = STRVEC_INIT;
	struct candidate *c;
	size_t n = 0, limit = strlen(op) / 3 + 2;

	flaggems_list_benchmark_files(dir, &files);
	for (size_t i = 0; i < files.nr; i++) {
		struct strbuf sb = STRBUF_INIT;
		if (!strbuf_read_file(&sb, files.v[i], FLAGGEMS_SOURCE_LIMIT))
			scan_test_names(sb.buf, &names);
		strbuf_release(&sb);
	}
	c = xcalloc(names.nr + 1, sizeof(*c));
	for (size_t i = 0; i < names.nr; i++) {
		size_t d = edit_distance(op, names.v[i]);
		/* A name containing the query (or contained in it) is a good hint too. */
		if (strstr(names.v[i], op) || strstr(op, names.v[i]))
			d = d < limit ? d : limit;
		if (d > limit)
			continue;
		int dup = 0;
		for (size_t k = 0; k < n; k++)
			dup |= !strcmp(c[k].name, names.v[i]);
		if (!dup)
			c[n++] = (struct candidate){ names.v[i], d };
	}
	qsort(c, n, sizeof(*c), cmp_candidate);
	for (size_t i = 0; i < n && i < max; i++)
		strvec_push(out, c[i].name);
	free(c);
	strvec_clear(&names);
	strvec_clear(&files);
}

static char *checkout_above(const char *test_path)
{
	char *d = path_dirname(test_path);

	while (strcmp(d, "/")) {
		char *up = path_dirname(d);
		if (!strcmp(path_basename(d), "benchmark")) {
			free(d);
			return up;
		}
		free(d);
		d = up;
	}
	free(d);
	return NULL;
}

static int resolve_node(struct flaggems_target *t, const char *dir, const char *test_node)
{
	const char *sep = strstr(test_node, "::");
	char *file, *fn, *abs = NULL, *p;

	if (!sep || !sep[2])
		return error("test node '%s' must look like "
			     "path/benchmark/test_<file>.py::test_<op>", test_node);
	file = xstrndup(test_node, (size_t)(sep - test_node));
	fn = xstrdup(sep + 2);
	if ((p = strchr(fn, '[')))
		*p = '\0';
	if (!starts_with(fn, "test_") || !fn[5] || strstr(fn, "::")) {
		int r = error("test node '%s' must name a module-level test function "
			      "test_<op>", test_node);
		free(file);
		free(fn);
		return r;
	}
	if (file[0] != '/' && !is_file(file) && dir) {
		char *cand = path_join(dir, file);
		if (is_file(cand))
			abs = path_absolute(cand);
		free(cand);
	}
	if (!abs)
		abs = path_absolute(file);
	free(file);
	if (!is_file(abs)) {
		int r = error("benchmark file '%s' of test node '%s' does not exist", abs, test_node);
		free(abs);
		free(fn);
		return r;
	}
	t->test_path = abs;
	t->op = xstrdup(fn + 5);
	free(fn);
	t->dir = checkout_above(abs);
	if (!t->dir)
		return error("'%s' is not inside a benchmark/ folder of a FlagGems checkout", abs);
	return 0;
}

static int file_defines(const char *path, const char *op, struct strbuf *text)
{
	struct strvec names = STRVEC_INIT;
	int found;

	strbuf_reset(text);
	if (strbuf_read_file(text, path, FLAGGEMS_SOURCE_LIMIT))
		return 0;
	scan_test_names(text->buf, &names);
	found = strvec_find(&names, op) >= 0;
	strvec_clear(&names);
	return found;
}

static int unknown_op(const char *dir, const char *op, const char *where)
{
	struct strvec close = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	int r;

	flaggems_close_names(dir, op, &close, 5);
	for (size_t i = 0; i < close.nr; i++)
		strbuf_addf(&sb, "%s%s", i ? ", " : "", close.v[i]);
	if (close.nr)
		r = error("no benchmark test_%s in %s; close names: %s", op, where, sb.buf);
	else
		r = error("no benchmark test_%s in %s, and no operator with a similar name",
			  op, where);
	strvec_clear(&close);
	strbuf_release(&sb);
	return r;
}

/* The file named by --op-file: "stem" or, one folder deeper, "folder/stem" (test_FLA/chunk). */
static int find_in_op_file(struct flaggems_target *t, const char *op, const char *op_file,
			   struct strbuf *text)
{
	const char *slash = strrchr(op_file, '/');
	char *rel = slash ? xstrfmt("benchmark/%.*s/test_%s.py",
				    (int)(slash - op_file), op_file, slash + 1)
			  : xstrfmt("benchmark/test_%s.py", op_file);

	t->test_path = path_join(t->dir, rel);
	free(rel);
	if (!is_file(t->test_path))
		return error("benchmark file %s does not exist (from op file '%s')",
			     t->test_path, op_file);
	if (!file_defines(t->test_path, op, text))
		return unknown_op(t->dir, op, t->test_path);
	return 0;
}

/* No file named: the one benchmark file that defines test_<op>. */
static int find_in_benchmarks(struct flaggems_target *t, const char *op, struct strbuf *text)
{
	struct strvec files = STRVEC_INIT, hits = STRVEC_INIT;
	int ret = 0;

	flaggems_list_benchmark_files(t->dir, &files);
	for (size_t i = 0; i < files.nr; i++)
		if (file_defines(files.v[i], op, text))
			strvec_push(&hits, files.v[i]);
	if (hits.nr == 1) {
		t->test_path = xstrdup(hits.v[0]);
		file_defines(t->test_path, op, text);
	} else if (!hits.nr) {
		char *where = xstrfmt("%s/benchmark", t->dir);
		ret = unknown_op(t->dir, op, where);
		free(where);
	} else {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < hits.nr; i++)
			strbuf_addf(&sb, "%s%s", i ? ", " : "", path_basename(hits.v[i]));
		ret = error("test_%s is defined in %zu benchmark files (%s); "
			    "choose one with --op-file (OP_FILE)", op, hits.nr, sb.buf);
		strbuf_release(&sb);
	}
	strvec_clear(&files);
	strvec_clear(&hits);
	return ret;
}

/* The node and op_file from the test path: relative path kept for subfolders. */
static int name_node(struct flaggems_target *t)
{
	char *bdir = path_join(t->dir, "benchmark/");
	const char *rel = t->test_path + strlen(bdir);
	const char *base = path_basename(t->test_path);

	if (!starts_with(t->test_path, bdir)) {
		error("'%s' is not under %s", t->test_path, bdir);
		free(bdir);
		return -1;
	}
	size_t folder = (size_t)(base - rel);
	size_t skip = starts_with(base, "test_") ? 5 : 0;
	t->node = xstrfmt("benchmark/%s::test_%s", rel, t->op);
	/* The form --op-file accepts back: "stem" or "folder/stem". */
	t->op_file = xstrfmt("%.*s%.*s", (int)folder, rel,
			     (int)(strlen(base) - skip - 3), base + skip);
	free(bdir);
	return 0;
}

int flaggems_resolve(struct flaggems_target *t, const char *dir, const char *op,
		     const char *op_file, const char *test_node)
{
	struct strbuf text = STRBUF_INIT;
	const char *pkg;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	if (test_node && *test_node) {
		if (resolve_node(t, dir, test_node)) {
			/* Like every other failure: nothing half-filled is left in t. */
			flaggems_target_release(t);
			return -1;
		}
		if (dir) {
			char *want = path_absolute(dir);
			if (strcmp(want, t->dir))
				warning("test node '%s' lies in the checkout %s, not in %s; "
					"using %s", test_node, t->dir, want, t->dir);
			free(want);
		}
		if (!file_defines(t->test_path, t->op, &text))
			ret = error("'%s' defines no module-level test_%s", t->test_path, t->op);
	} else {
		if (!op || !*op)
			return error("no operator given");
		t->dir = path_absolute(dir);
		t->op = xstrdup(op);
		ret = op_file && *op_file ? find_in_op_file(t, op, op_file, &text)
					  : find_in_benchmarks(t, op, &text);
	}
	if (!ret)
		ret = name_node(t);
	if (!ret) {
		pkg = flaggems_package(t->dir);
		t->package = pkg ? xstrdup(pkg) : NULL;
		flaggems_scan_benchmark(t, text.buf);
	}
	strbuf_release(&text);
	if (ret)
		flaggems_target_release(t);
	return ret;
}
