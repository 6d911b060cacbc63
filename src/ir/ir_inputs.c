/* ir/ staging, compile and launch records and rows of a run: what ir_layout lays out. */
#include "ir/ir_layout_int.h"

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir_index.h"
#include "ir/ir_layout_int.h"
#include "ir/ir_naming.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/safefile.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "rundir/identity.h"
#include "rundir/results_file.h"
#include "rundir/rundir.h"

/* ---- Inputs ------------------------------------------------------------ */

static int int_field(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (int)json_integer_value(v) : -1;
}

static json_t *object_field(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_object(v))
		return NULL;
	json_incref(v);
	return v;
}

static int on_compile(void *ctx, json_t *obj, size_t lineno)
{
	struct inputs *in = ctx;
	const char *hash = json_str(obj, "hash");
	const char *kernel = json_str(obj, "kernel");
	struct compile *c;

	if (!hash || !*hash) {
		in->skipped++;
		return 0;
	}
	if (!kernel || !*kernel)
		kernel = json_str(obj, "name");
	GROW(in->c, in->nc, in->ac);
	c = &in->c[in->nc++];
	memset(c, 0, sizeof(*c));
	c->hash = xstrdup(hash);
	c->kernel = xstrdup(kernel && *kernel ? kernel : "unknown_kernel");
	c->num_warps = int_field(obj, "num_warps");
	c->num_stages = int_field(obj, "num_stages");
	c->num_ctas = int_field(obj, "num_ctas");
	c->constexprs = object_field(obj, "constexprs");
	c->signature = object_field(obj, "signature");
	c->spec = object_field(obj, "specialization");
	c->tuned = json_str(obj, "during") && !strcmp(json_str(obj, "during"), "tune");
	return 0;
}

static void compile_free(struct compile *c)
{
	free(c->hash);
	free(c->kernel);
	json_decref(c->constexprs);
	json_decref(c->signature);
	json_decref(c->spec);
}

static int cmp_compile(const void *a, const void *b)
{
	const struct compile *x = a, *y = b;
	return strcmp(x->hash, y->hash);
}

/* Sort by hash; of repeated lines for one hash the first is kept. */
static void compiles_settle(struct inputs *in)
{
	size_t i, j;

	/* A stable order for duplicates: qsort is not stable, so break ties by position. */
	for (i = 0; i < in->nc; i++)
		in->c[i].launched = (int)i;
	if (in->nc > 1)	/* no record read: in->c is NULL, which qsort may not take */
		qsort(in->c, in->nc, sizeof(*in->c), cmp_compile);
	for (i = 0; i < in->nc; i = j) {
		size_t keep = i;
		for (j = i + 1; j < in->nc && !strcmp(in->c[j].hash, in->c[i].hash); j++)
			if (in->c[j].launched < in->c[keep].launched)
				keep = j;
		if (keep != i) {
			struct compile t = in->c[i];
			in->c[i] = in->c[keep];
			in->c[keep] = t;
		}
	}
	for (i = 0, j = 0; i < in->nc; i++) {
		if (j && !strcmp(in->c[i].hash, in->c[j - 1].hash)) {
			compile_free(&in->c[i]);
			continue;
		}
		in->c[j++] = in->c[i];
	}
	in->nc = j;
	for (i = 0; i < in->nc; i++)
		in->c[i].launched = 0;
}

struct compile *irl_find_compile(struct inputs *in, const char *hash)
{
	struct compile key = { .hash = (char *)hash };
	return in->nc ? bsearch(&key, in->c, in->nc, sizeof(*in->c), cmp_compile) : NULL;
}

static int stage_name_ok(const char *s)
{
	if (!s || !*s || strlen(s) > 32 || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

struct staged *irl_staged_get(struct inputs *in, const char *hash, int create)
{
	for (size_t i = 0; i < in->nst; i++)
		if (!strcmp(in->st[i].hash, hash))
			return &in->st[i];
	if (!create)
		return NULL;
	GROW(in->st, in->nst, in->ast);
	struct staged *s = &in->st[in->nst++];
	s->hash = xstrdup(hash);
	strvec_init(&s->stages);
	strvec_init(&s->paths);
	return s;
}

static void staged_add(struct staged *s, const char *stage, const char *path)
{
	if (strvec_find(&s->stages, stage) >= 0)
		return;
	strvec_push(&s->stages, stage);
	strvec_push(&s->paths, path);
}

static int on_staged(void *ctx, json_t *obj, size_t lineno)
{
	struct inputs *in = ctx;
	const char *hash = json_str(obj, "hash");
	json_t *files = json_object_get(obj, "files");
	const char *stage;
	json_t *rel;
	struct staged *s;

	if (!hash || !*hash || !json_is_object(files)) {
		in->skipped++;
		return 0;
	}
	s = irl_staged_get(in, hash, 1);
	json_object_foreach(files, stage, rel) {
		const char *r = json_string_value(rel);
		char *p;

		if (!stage_name_ok(stage) || !r || !rel_path_is_safe(r)) {
			in->bad_stage_files++;
			continue;
		}
		/* Relative to ir/ (files/<hash>/...), or to the run (ir/files/...). */
		p = starts_with(r, "ir/") ? xstrdup(r) : xstrfmt("ir/%s", r);
		staged_add(s, stage, p);
		free(p);
	}
	return 0;
}

/* The directory rel below the run, as a DIR, not through a link; NULL if not one. */
static DIR *open_dir_beneath(int run_fd, const char *rel)
{
	int fd = open_beneath(run_fd, rel, O_RDONLY | O_DIRECTORY);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (fd >= 0 && !d)
		close(fd);
	return d;
}

/* Without staged.jsonl: take ir/files/<hash>/<name>.<stage> as they are. */
static int scan_staged_files(struct inputs *in)
{
	DIR *d = open_dir_beneath(in->run_fd, "ir/files");
	struct dirent *e;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char *hdir;
		DIR *h;
		struct dirent *f;

		if (e->d_name[0] == '.' || !name_is_safe(e->d_name))
			continue;
		hdir = xstrfmt("ir/files/%s", e->d_name);
		h = open_dir_beneath(in->run_fd, hdir);
		if (h) {
			struct staged *s = irl_staged_get(in, e->d_name, 1);
			struct strvec names = STRVEC_INIT;
			while ((f = readdir(h))) {
				struct stat st;

				/* Files, and links (counted as refused when laid out); no directories. */
				if (f->d_name[0] != '.' &&
				    !fstatat(dirfd(h), f->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
				    (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
					strvec_push(&names, f->d_name);
			}
			closedir(h);
			/* Directory order is arbitrary: sort so a duplicate stage resolves the same way. */
			strvec_sort(&names);
			for (size_t i = 0; i < names.nr; i++) {
				const char *dot = strrchr(names.v[i], '.');
				char *p = path_join(hdir, names.v[i]);
				/*
				 * A copy cut short by a crash is "<name>.<stage>.tmp.<random>": not a
				 * stage. What p is (a file, a link) is checked where it is opened.
				 */
				if (dot && stage_name_ok(dot + 1) && !strstr(names.v[i], ".tmp."))
					staged_add(s, dot + 1, p);
				free(p);
			}
			strvec_clear(&names);
		}
		free(hdir);
	}
	closedir(d);
	return 0;
}

static void add_launches(struct inputs *in, size_t row, const json_t *list)
{
	size_t i;
	const json_t *l;

	if (!json_is_array(list))
		return;
	json_array_foreach(list, i, l) {
		const char *hash = json_str(l, "hash");
		const char *kernel = json_str(l, "kernel");
		json_t *count = json_object_get(l, "count");
		struct launch *x;

		if (!hash || !*hash) {
			/* The plugin could not tell which variant ran. */
			in->unattributed++;
			continue;
		}
		GROW(in->l, in->nl, in->al);
		x = &in->l[in->nl++];
		x->row = row;
		x->hash = xstrdup(hash);
		x->kernel = kernel && *kernel ? xstrdup(kernel) : NULL;
		x->count = json_is_integer(count) ? json_integer_value(count) : 1;
		if (x->count < 0)
			x->count = 0;
	}
}

static int on_row(void *ctx, const struct results_row *row, size_t lineno)
{
	struct inputs *in = ctx;
	const json_t *obj = row->obj;
	size_t r;

	GROW(in->rows, in->nrows, in->arows);
	r = in->nrows++;
	in->rows[r].detail = xstrdup(row->shape);
	in->rows[r].dtype = *row->dtype ? xstrdup(row->dtype) : NULL;
	add_launches(in, r, json_object_get(obj, "launches"));
	add_launches(in, r, json_object_get(json_object_get(obj, "torch"), "launches"));
	add_launches(in, r, json_object_get(json_object_get(obj, "gems"), "launches"));
	return 0;
}

void irl_inputs_release(struct inputs *in)
{
	if (in->run_fd > 0)
		close(in->run_fd);
	for (size_t i = 0; i < in->nc; i++)
		compile_free(&in->c[i]);
	free(in->c);
	for (size_t i = 0; i < in->nst; i++) {
		free(in->st[i].hash);
		strvec_clear(&in->st[i].stages);
		strvec_clear(&in->st[i].paths);
	}
	free(in->st);
	for (size_t i = 0; i < in->nrows; i++) {
		free(in->rows[i].detail);
		free(in->rows[i].dtype);
	}
	free(in->rows);
	for (size_t i = 0; i < in->nl; i++) {
		free(in->l[i].hash);
		free(in->l[i].kernel);
	}
	free(in->l);
	free(in->ir_dir);
	memset(in, 0, sizeof(*in));
}

static int dir_nonempty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int any = 0;

	if (!d)
		return 0;
	while (!any && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			any = 1;
	closedir(d);
	return any;
}

int ir_has_staging(const char *run_dir)
{
	char *ir = path_join(run_dir, "ir");
	int r = dir_nonempty(ir);
	free(ir);
	return r;
}

int irl_read_inputs(const char *run_dir, struct inputs *in)
{
	char *p;
	size_t skipped;
	int r;

	struct stat st;

	memset(in, 0, sizeof(*in));
	in->run_dir = run_dir;
	in->ir_dir = path_join(run_dir, "ir");
	in->run_fd = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (in->run_fd < 0)
		return error_errno("cannot read '%s'", run_dir);
	/* Its .jsonl files are read by path: the directory itself must be no link. */
	if (!lstat(in->ir_dir, &st) && S_ISLNK(st.st_mode))
		return error("'%s' is a symbolic link: zlb follows no link inside a run; "
			     "replace it with the directory itself", in->ir_dir);

	p = path_join(in->ir_dir, "compiles.jsonl");
	r = jsonl_each(p, on_compile, in, &skipped);
	free(p);
	if (r < 0)
		return -1;
	in->skipped += skipped;
	compiles_settle(in);

	p = path_join(in->ir_dir, "staged.jsonl");
	r = jsonl_each(p, on_staged, in, &skipped);
	free(p);
	if (r < 0)
		return -1;
	if (r == 1)
		scan_staged_files(in);
	else
		in->skipped += skipped;

	p = path_join(run_dir, RESULTS_FILE);
	r = results_each(p, RESULTS_SKIP_SAMPLES | RESULTS_QUIET_BAD_LINES, on_row, in, &skipped);
	free(p);
	if (r < 0)
		return -1;
	in->skipped += skipped;
	return 0;
}
