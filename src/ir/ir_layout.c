#include "ir/ir_layout.h"

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rundir/identity.h"
#include "rundir/rundir.h"
#include "ir/ir_index.h"
#include "ir/ir_naming.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#define KERNEL_CAP 80

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* ---- Inputs ------------------------------------------------------------ */

struct compile {
	char *hash;
	char *kernel;		/* function name (raw) */
	int num_warps, num_stages, num_ctas;
	json_t *constexprs;	/* object or NULL */
	json_t *signature;	/* object or NULL */
	json_t *spec;		/* object or NULL */
	int tuned;		/* compiled while an autotune sweep was timing */
	int launched;
};

struct staged {
	char *hash;
	struct strvec stages;	/* parallel */
	struct strvec paths;	/* absolute */
};

struct launch {
	size_t row;		/* index into rows */
	char *hash;
	char *kernel;		/* from the launch record; may be NULL */
	long long count;
};

struct row {
	char *detail;
	char *dtype;		/* may be NULL */
};

struct inputs {
	const char *run_dir;
	char *ir_dir;
	struct compile *c;
	size_t nc, ac;
	struct staged *st;
	size_t nst, ast;
	struct row *rows;
	size_t nrows, arows;
	struct launch *l;
	size_t nl, al;
	size_t skipped;
	size_t unattributed;
	size_t bad_stage_files;
};

#define GROW(p, n, a) do {                                           \
	if ((n) == (a)) {                                              \
		(a) = (a) ? (a) * 2 : 16;                                \
		(p) = xrealloc((p), (a) * sizeof(*(p)));                 \
	}                                                              \
} while (0)

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

static struct compile *find_compile(struct inputs *in, const char *hash)
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

/* A relative path inside the staging: no leading '/', no ".." component. */
static int rel_path_ok(const char *p)
{
	struct strvec parts = STRVEC_INIT;
	int ok = *p && *p != '/';

	strvec_split(&parts, p, "/");
	for (size_t i = 0; ok && i < parts.nr; i++)
		if (!strcmp(parts.v[i], ".."))
			ok = 0;
	strvec_clear(&parts);
	return ok;
}

static struct staged *staged_get(struct inputs *in, const char *hash, int create)
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
	s = staged_get(in, hash, 1);
	json_object_foreach(files, stage, rel) {
		const char *r = json_string_value(rel);
		char *p;

		if (!stage_name_ok(stage) || !r || !rel_path_ok(r)) {
			in->bad_stage_files++;
			continue;
		}
		/* Relative to ir/ (files/<hash>/...), or to the run (ir/files/...). */
		p = path_join(in->ir_dir, r);
		if (!is_file(p)) {
			free(p);
			p = path_join(in->run_dir, r);
		}
		staged_add(s, stage, p);
		free(p);
	}
	return 0;
}

/* Without staged.jsonl: take ir/files/<hash>/<name>.<stage> as they are. */
static int scan_staged_files(struct inputs *in)
{
	char *root = path_join(in->ir_dir, "files");
	DIR *d = opendir(root);
	struct dirent *e;

	if (!d) {
		free(root);
		return 0;
	}
	while ((e = readdir(d))) {
		char *hdir;
		DIR *h;
		struct dirent *f;

		if (e->d_name[0] == '.' || !name_is_safe(e->d_name))
			continue;
		hdir = path_join(root, e->d_name);
		h = opendir(hdir);
		if (h) {
			struct staged *s = staged_get(in, e->d_name, 1);
			struct strvec names = STRVEC_INIT;
			while ((f = readdir(h)))
				if (f->d_name[0] != '.')
					strvec_push(&names, f->d_name);
			closedir(h);
			/* Directory order is arbitrary: sort so a duplicate stage resolves the same way. */
			strvec_sort(&names);
			for (size_t i = 0; i < names.nr; i++) {
				const char *dot = strrchr(names.v[i], '.');
				char *p = path_join(hdir, names.v[i]);
				/* A copy cut short by a crash is "<name>.<stage>.tmp.<pid>": not a stage. */
				if (dot && stage_name_ok(dot + 1) && !strstr(names.v[i], ".tmp.") &&
				    is_file(p))
					staged_add(s, dot + 1, p);
				free(p);
			}
			strvec_clear(&names);
		}
		free(hdir);
	}
	closedir(d);
	free(root);
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

static int on_row(void *ctx, json_t *obj, size_t lineno)
{
	struct inputs *in = ctx;
	const char *kind = json_str(obj, "kind");
	const char *detail = json_str(obj, "shape_detail");
	const char *dtype = json_str(obj, "dtype");
	size_t r;

	if (kind && strcmp(kind, "row"))
		return 0;
	GROW(in->rows, in->nrows, in->arows);
	r = in->nrows++;
	in->rows[r].detail = xstrdup(detail ? detail : "N/A");
	in->rows[r].dtype = dtype && *dtype ? xstrdup(dtype) : NULL;
	add_launches(in, r, json_object_get(obj, "launches"));
	add_launches(in, r, json_object_get(json_object_get(obj, "torch"), "launches"));
	add_launches(in, r, json_object_get(json_object_get(obj, "gems"), "launches"));
	return 0;
}

static void inputs_release(struct inputs *in)
{
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

static int read_inputs(const char *run_dir, struct inputs *in)
{
	char *p;
	size_t skipped;
	int r;

	memset(in, 0, sizeof(*in));
	in->run_dir = run_dir;
	in->ir_dir = path_join(run_dir, "ir");

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

	p = path_join(run_dir, "results.jsonl");
	r = jsonl_each(p, on_row, in, &skipped);
	free(p);
	if (r < 0)
		return -1;
	in->skipped += skipped;
	return 0;
}

/* ---- Names --------------------------------------------------------------- */

struct kernel_info {
	char *raw;
	char *dir;
	struct ir_abbrevs params;	/* constexpr names */
	struct ir_abbrevs args;		/* argument names (specialisation suffix) */
};

struct layout {
	struct inputs in;
	char **shape_of_row;		/* per row */
	struct strvec details;		/* distinct, sorted */
	char **detail_names;		/* parallel to details */
	struct kernel_info *k;
	size_t nk;
	struct entry *e;
	size_t ne, ae;
	unsigned suffixes;		/* IR_SUFFIX_* used anywhere */
};

struct entry {
	const char *shape;
	struct kernel_info *kernel;
	const char *hash;
	struct compile *comp;		/* NULL: no compile record */
	long long launches;
	struct strvec dtypes;		/* raw, sorted unique */
	char *variant;
	struct strvec files;		/* relative to ttgir/ */
};

static struct kernel_info *kernel_find(struct layout *ly, const char *raw)
{
	size_t lo = 0, hi = ly->nk;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(raw, ly->k[mid].raw);
		if (!c)
			return &ly->k[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static void push_names(struct strvec *sv, const json_t *obj_or_list)
{
	const char *k;
	const json_t *v;
	size_t i;

	if (json_is_object(obj_or_list)) {
		json_object_foreach((json_t *)obj_or_list, k, v)
			strvec_push(sv, k);
	} else if (json_is_array(obj_or_list)) {
		json_array_foreach(obj_or_list, i, v)
			if (json_is_string(v))
				strvec_push(sv, json_string_value(v));
	}
}

static void kernels_build(struct layout *ly)
{
	struct inputs *in = &ly->in;
	struct strvec raw = STRVEC_INIT;
	unsigned char *clash;

	for (size_t i = 0; i < in->nc; i++)
		strvec_push(&raw, in->c[i].kernel);
	for (size_t i = 0; i < in->nl; i++) {
		struct compile *c = find_compile(in, in->l[i].hash);
		strvec_push(&raw, c ? c->kernel : in->l[i].kernel ? in->l[i].kernel : "unknown_kernel");
	}
	strvec_sort_unique(&raw);
	ly->nk = raw.nr;
	ly->k = xcalloc(raw.nr + 1, sizeof(*ly->k));
	for (size_t i = 0; i < raw.nr; i++) {
		struct strbuf sb = STRBUF_INIT;
		ly->k[i].raw = xstrdup(raw.v[i]);
		ir_sanitize(raw.v[i], KERNEL_CAP, "kernel", &sb);
		ly->k[i].dir = strbuf_detach(&sb, NULL);
	}
	/* Two kernels whose names clean up the same: both get a hash of the real name. */
	clash = xcalloc(ly->nk + 1, 1);
	for (size_t i = 0; i < ly->nk; i++)
		for (size_t j = 0; j < ly->nk && !clash[i]; j++)
			if (j != i && !strcmp(ly->k[i].dir, ly->k[j].dir))
				clash[i] = 1;
	for (size_t i = 0; i < ly->nk; i++) {
		if (clash[i]) {
			char hex[9];
			char *old = ly->k[i].dir;
			ir_hex8(ly->k[i].raw, hex);
			ly->k[i].dir = xstrfmt("%s_%s", old, hex);
			free(old);
		}
	}
	free(clash);
	/* Abbreviation tables over every compile of the kernel. */
	for (size_t i = 0; i < ly->nk; i++) {
		struct strvec params = STRVEC_INIT, args = STRVEC_INIT;
		for (size_t c = 0; c < in->nc; c++) {
			if (strcmp(in->c[c].kernel, ly->k[i].raw))
				continue;
			push_names(&params, in->c[c].constexprs);
			push_names(&args, in->c[c].signature);
			push_names(&args, json_object_get(in->c[c].spec, "div16"));
			push_names(&args, json_object_get(in->c[c].spec, "equal1"));
		}
		ir_abbrevs_build(&ly->k[i].params, &params, ir_reserved_params);
		ir_abbrevs_build(&ly->k[i].args, &args, NULL);
		strvec_clear(&params);
		strvec_clear(&args);
	}
	strvec_clear(&raw);
}

static void shapes_build(struct layout *ly)
{
	struct inputs *in = &ly->in;

	for (size_t r = 0; r < in->nrows; r++)
		strvec_push(&ly->details, in->rows[r].detail);
	strvec_sort_unique(&ly->details);
	ly->detail_names = xcalloc(ly->details.nr + 1, sizeof(char *));
	ir_shape_names((const char *const *)ly->details.v, ly->details.nr, ly->detail_names);
	ly->shape_of_row = xcalloc(in->nrows + 1, sizeof(char *));
	for (size_t r = 0; r < in->nrows; r++) {
		int d = strvec_find(&ly->details, in->rows[r].detail);
		ly->shape_of_row[r] = ly->detail_names[d];
	}
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->shape, y->shape);
	if (!c)
		c = strcmp(x->kernel->dir, y->kernel->dir);
	return c ? c : strcmp(x->hash, y->hash);
}

static int cmp_entry_name(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->shape, y->shape);
	if (!c)
		c = strcmp(x->kernel->dir, y->kernel->dir);
	return c ? c : strcmp(x->variant, y->variant);
}

static void entries_build(struct layout *ly)
{
	struct inputs *in = &ly->in;
	size_t i, j;

	for (i = 0; i < in->nl; i++) {
		struct launch *l = &in->l[i];
		struct compile *c = find_compile(in, l->hash);
		struct entry *e;

		if (c)
			c->launched = 1;
		GROW(ly->e, ly->ne, ly->ae);
		e = &ly->e[ly->ne++];
		memset(e, 0, sizeof(*e));
		e->shape = ly->shape_of_row[l->row];
		e->kernel = kernel_find(ly, c ? c->kernel : l->kernel ? l->kernel : "unknown_kernel");
		e->hash = l->hash;
		e->comp = c;
		e->launches = l->count;
		strvec_init(&e->dtypes);
		strvec_init(&e->files);
		if (in->rows[l->row].dtype)
			strvec_push(&e->dtypes, in->rows[l->row].dtype);
	}
	qsort(ly->e, ly->ne, sizeof(*ly->e), cmp_entry);
	/* One entry per (shape, kernel, hash): launches summed, dtypes merged. */
	for (i = 0, j = 0; i < ly->ne; i++) {
		if (j && !cmp_entry(&ly->e[i], &ly->e[j - 1])) {
			struct entry *keep = &ly->e[j - 1];
			keep->launches += ly->e[i].launches;
			strvec_pushv(&keep->dtypes, (const char *const *)ly->e[i].dtypes.v);
			strvec_clear(&ly->e[i].dtypes);
			strvec_clear(&ly->e[i].files);
			continue;
		}
		ly->e[j++] = ly->e[i];
	}
	ly->ne = j;
	for (i = 0; i < ly->ne; i++)
		strvec_sort_unique(&ly->e[i].dtypes);
}

static void dtype_text(const struct strvec *dtypes, struct strbuf *out)
{
	struct strvec shorts = STRVEC_INIT;

	for (size_t i = 0; i < dtypes->nr; i++) {
		struct strbuf sb = STRBUF_INIT;
		ir_dtype_short(dtypes->v[i], &sb);
		strvec_push(&shorts, sb.buf);
		strbuf_release(&sb);
	}
	strvec_sort_unique(&shorts);
	for (size_t i = 0; i < shorts.nr; i++) {
		if (i)
			strbuf_addch(out, '+');
		strbuf_addstr(out, shorts.v[i]);
	}
	strvec_clear(&shorts);
}

/* Name the variants of each (shape, kernel) group. */
static void variants_name(struct layout *ly)
{
	size_t a, b;

	for (a = 0; a < ly->ne; a = b) {
		size_t n;
		struct ir_variant_desc *d;
		struct strbuf *dt, *sp;
		char **names;
		struct kernel_info *k = ly->e[a].kernel;

		for (b = a + 1; b < ly->ne && !strcmp(ly->e[b].shape, ly->e[a].shape) &&
			       ly->e[b].kernel == k; b++)
			;
		n = b - a;
		d = xcalloc(n, sizeof(*d));
		dt = xcalloc(n, sizeof(*dt));
		sp = xcalloc(n, sizeof(*sp));
		names = xcalloc(n, sizeof(*names));
		for (size_t i = 0; i < n; i++) {
			struct entry *e = &ly->e[a + i];
			strbuf_init(&dt[i], 0);
			strbuf_init(&sp[i], 0);
			dtype_text(&e->dtypes, &dt[i]);
			d[i].hash = e->hash;
			d[i].dtype = dt[i].len ? dt[i].buf : NULL;
			if (e->comp) {
				d[i].constexprs = e->comp->constexprs;
				d[i].num_warps = e->comp->num_warps;
				d[i].num_stages = e->comp->num_stages;
				d[i].num_ctas = e->comp->num_ctas;
				if (e->comp->spec) {
					/* Rendered without marking: only a used suffix counts. */
					struct ir_abbrevs *args = &k->args;
					unsigned char *saved = xcalloc(args->nr + 1, 1);
					if (args->nr)
						memcpy(saved, args->used, args->nr);
					ir_spec_suffix(e->comp->spec, args, &sp[i]);
					if (args->nr)
						memcpy(args->used, saved, args->nr);
					free(saved);
					d[i].spec = sp[i].buf;
				}
			} else {
				d[i].num_warps = d[i].num_stages = d[i].num_ctas = -1;
			}
		}
		ly->suffixes |= ir_name_variants(d, n, &k->params, names);
		for (size_t i = 0; i < n; i++) {
			struct entry *e = &ly->e[a + i];
			e->variant = names[i];
			/* The specialisation suffix is in the name: mark its args for the legend. */
			if (sp[i].len) {
				char *needle = xstrfmt("__%s", sp[i].buf);
				if (strstr(names[i], needle)) {
					struct strbuf scratch = STRBUF_INIT;
					ir_spec_suffix(e->comp->spec, &k->args, &scratch);
					strbuf_release(&scratch);
				}
				free(needle);
			}
			strbuf_release(&dt[i]);
			strbuf_release(&sp[i]);
		}
		free(d);
		free(dt);
		free(sp);
		free(names);
	}
	qsort(ly->e, ly->ne, sizeof(*ly->e), cmp_entry_name);
}

static void layout_release(struct layout *ly)
{
	for (size_t i = 0; i < ly->ne; i++) {
		free(ly->e[i].variant);
		strvec_clear(&ly->e[i].dtypes);
		strvec_clear(&ly->e[i].files);
	}
	free(ly->e);
	for (size_t i = 0; i < ly->nk; i++) {
		free(ly->k[i].raw);
		free(ly->k[i].dir);
		ir_abbrevs_release(&ly->k[i].params);
		ir_abbrevs_release(&ly->k[i].args);
	}
	free(ly->k);
	for (size_t i = 0; i < ly->details.nr; i++)
		free(ly->detail_names[i]);
	free(ly->detail_names);
	free(ly->shape_of_row);
	strvec_clear(&ly->details);
	inputs_release(&ly->in);
	memset(ly, 0, sizeof(*ly));
}

/* ---- Output ---------------------------------------------------------------- */

static int stage_rank(const char *stage)
{
	static const char *const order[] = { "ttir", "ttgir", "llir", "ptx", "cubin", NULL };
	for (int i = 0; order[i]; i++)
		if (!strcmp(order[i], stage))
			return i;
	return 100;
}

static int cmp_stage(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	int rx = stage_rank(x), ry = stage_rank(y);
	return rx != ry ? rx - ry : strcmp(x, y);
}

static int copy_file(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), out;
	char buf[1 << 16];
	ssize_t n;

	if (in < 0)
		return error_errno("cannot read '%s'", src);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return error_errno("cannot create '%s'", dst);
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(out, buf + done, (size_t)(n - done));
			if (w < 0) {
				if (errno == EINTR)
					continue;
				goto fail;
			}
			done += w;
		}
	}
	close(in);
	if (close(out))
		return error_errno("cannot write '%s'", dst);
	return 0;
fail:
	{
		int r = error_errno("cannot copy '%s' to '%s'", src, dst);
		close(in);
		close(out);
		unlink(dst);
		return r;
	}
}

static int place_file(const char *src, const char *dst)
{
	if (!link(src, dst))
		return 0;
	return copy_file(src, dst);
}

static int place_files(struct layout *ly, const char *dest, struct ir_layout_report *rep)
{
	for (size_t i = 0; i < ly->ne; i++) {
		struct entry *e = &ly->e[i];
		struct staged *s = staged_get(&ly->in, e->hash, 0);
		char **order;
		size_t n;

		if (!s || !s->stages.nr) {
			rep->no_files++;
			continue;
		}
		n = s->stages.nr;
		order = xcalloc(n + 1, sizeof(char *));
		memcpy(order, s->stages.v, n * sizeof(char *));
		qsort(order, n, sizeof(char *), cmp_stage);
		for (size_t k = 0; k < n; k++) {
			int at = strvec_find(&s->stages, order[k]);
			const char *src = s->paths.v[at];
			char *rel, *dst, *dir;

			if (!is_file(src))
				continue;
			rel = xstrfmt("%s/%s/%s.%s", e->shape, e->kernel->dir, e->variant, order[k]);
			dst = path_join(dest, rel);
			dir = path_dirname(dst);
			if (mkdir_p(dir, 0755) || place_file(src, dst)) {
				free(rel);
				free(dst);
				free(dir);
				free(order);
				return -1;
			}
			strvec_push(&e->files, rel);
			rep->files++;
			free(rel);
			free(dst);
			free(dir);
		}
		if (!e->files.nr)
			rep->no_files++;
		free(order);
	}
	return 0;
}

static void add_json(struct strbuf *sb, const json_t *v)
{
	char *text;

	if (!v) {
		strbuf_addch(sb, '-');
		return;
	}
	text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	ir_tsv_escape(text ? text : "-", sb);
	free(text);
}

static void add_int(struct strbuf *sb, int v)
{
	if (v < 0)
		strbuf_addch(sb, '-');
	else
		strbuf_addf(sb, "%d", v);
}

static void index_line(struct strbuf *sb, const char *shape, const char *kernel,
		       const char *variant, const struct strvec *dtypes, long long launches,
		       const char *hash, const struct compile *c, int loser,
		       const struct strvec *files)
{
	ir_tsv_escape(shape, sb);
	strbuf_addch(sb, '\t');
	ir_tsv_escape(kernel, sb);
	strbuf_addch(sb, '\t');
	ir_tsv_escape(variant, sb);
	strbuf_addch(sb, '\t');
	if (!dtypes || !dtypes->nr)
		strbuf_addch(sb, '-');
	for (size_t i = 0; dtypes && i < dtypes->nr; i++) {
		if (i)
			strbuf_addch(sb, ',');
		ir_tsv_escape(dtypes->v[i], sb);
	}
	strbuf_addf(sb, "\t%lld\t", launches);
	ir_tsv_escape(hash, sb);
	strbuf_addch(sb, '\t');
	add_int(sb, c ? c->num_warps : -1);
	strbuf_addch(sb, '\t');
	add_int(sb, c ? c->num_stages : -1);
	strbuf_addch(sb, '\t');
	add_int(sb, c ? c->num_ctas : -1);
	strbuf_addch(sb, '\t');
	add_json(sb, c ? c->constexprs : NULL);
	strbuf_addch(sb, '\t');
	add_json(sb, c ? c->spec : NULL);
	/*
	 * Only a variant compiled inside a tuner's timing call is a sweep loser;
	 * one compiled elsewhere and never launched by a row (a fill kernel of
	 * the input setup, say) is "unlaunched": calling it a loser would send
	 * a reader looking for an autotune that never happened.
	 */
	strbuf_addstr(sb, !loser ? "\tno\t" : c && c->tuned ? "\tyes\t" : "\tunlaunched\t");
	if (!files || !files->nr)
		strbuf_addch(sb, '-');
	for (size_t i = 0; files && i < files->nr; i++) {
		if (i)
			strbuf_addch(sb, ',');
		ir_tsv_escape(files->v[i], sb);
	}
	strbuf_addch(sb, '\n');
}

static int cmp_loser(const void *a, const void *b)
{
	const struct compile *x = *(struct compile *const *)a, *y = *(struct compile *const *)b;
	int c = strcmp(x->kernel, y->kernel);
	return c ? c : strcmp(x->hash, y->hash);
}

static int write_index(struct layout *ly, const char *dest, struct ir_layout_report *rep)
{
	struct strbuf sb = STRBUF_INIT;
	struct compile **losers = xcalloc(ly->in.nc + 1, sizeof(*losers));
	size_t nl = 0;
	char *path;
	int r;

	for (int i = 0; ir_index_columns[i]; i++)
		strbuf_addf(&sb, "%s%s", i ? "\t" : "", ir_index_columns[i]);
	strbuf_addch(&sb, '\n');
	for (size_t i = 0; i < ly->ne; i++) {
		struct entry *e = &ly->e[i];
		index_line(&sb, e->shape, e->kernel->dir, e->variant, &e->dtypes, e->launches,
			   e->hash, e->comp, 0, &e->files);
	}
	for (size_t i = 0; i < ly->in.nc; i++)
		if (!ly->in.c[i].launched)
			losers[nl++] = &ly->in.c[i];
	qsort(losers, nl, sizeof(*losers), cmp_loser);
	rep->sweep_losers = rep->unlaunched = 0;
	for (size_t i = 0; i < nl; i++) {
		struct kernel_info *k = kernel_find(ly, losers[i]->kernel);
		if (losers[i]->tuned)
			rep->sweep_losers++;
		else
			rep->unlaunched++;
		index_line(&sb, "-", k ? k->dir : losers[i]->kernel, "-", NULL, 0,
			   losers[i]->hash, losers[i], 1, NULL);
	}
	free(losers);
	path = path_join(dest, IR_INDEX_FILE);
	r = write_file_atomic(path, sb.buf, sb.len);
	free(path);
	strbuf_release(&sb);
	return r;
}

/* A value inside a markdown table cell. */
static void md_cell(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			strbuf_addstr(sb, "\\|");
		else if (*s == '\n' || *s == '\r' || *s == '\t')
			strbuf_addch(sb, ' ');
		else
			strbuf_addch(sb, *s);
	}
}

struct legend_row {
	const char *abbr, *name, *kernel;
};

static int cmp_legend(const void *a, const void *b)
{
	const struct legend_row *x = a, *y = b;
	int c = strcmp(x->abbr, y->abbr);
	if (!c)
		c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->kernel, y->kernel);
}

/* The legend of one kind of abbreviation: "| `ABBR` | NAME | kernels |". 0 when none. */
static size_t legend_rows(struct layout *ly, int args, struct strbuf *sb)
{
	struct legend_row *rows = NULL;
	size_t n = 0, alloc = 0, i, j;

	for (i = 0; i < ly->nk; i++) {
		struct ir_abbrevs *ab = args ? &ly->k[i].args : &ly->k[i].params;
		for (j = 0; j < ab->nr; j++) {
			if (!ab->used[j])
				continue;
			GROW(rows, n, alloc);
			rows[n].abbr = ab->abbrs[j];
			rows[n].name = ab->names[j];
			rows[n].kernel = ly->k[i].dir;
			n++;
		}
	}
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_legend);
	for (i = 0; i < n; i = j) {
		strbuf_addstr(sb, "| `");
		md_cell(sb, rows[i].abbr);
		strbuf_addstr(sb, "` | `");
		md_cell(sb, rows[i].name);
		strbuf_addstr(sb, "` | ");
		for (j = i; j < n && !strcmp(rows[j].abbr, rows[i].abbr) &&
			    !strcmp(rows[j].name, rows[i].name); j++) {
			if (j > i)
				strbuf_addstr(sb, ", ");
			md_cell(sb, rows[j].kernel);
		}
		strbuf_addstr(sb, " |\n");
	}
	free(rows);
	return n;
}

static int write_naming(struct layout *ly, const char *dest, const struct ir_layout_report *rep)
{
	struct strbuf sb = STRBUF_INIT;
	struct strvec dtypes = STRVEC_INIT, renamed = STRVEC_INIT;
	char *path;
	int r;

	strbuf_addstr(&sb,
		"# IR file names in this run\n"
		"\n"
		"`<shape>/<kernel>/<variant>.<stage>` holds the IR (ttir, ttgir, llir, ptx, cubin, ...)\n"
		"of every compiled variant that a measurement launched (in the first eager call of\n"
		"each torch/gems measurement), under every shape whose rows launched it.\n"
		"`index.tsv` lists each with its full parameters, launch count and compile hash, and\n"
		"then the compiled variants no row launched, shape and variant `-`, files not kept:\n"
		"`sweep_loser` is `yes` for those compiled while an autotune sweep timed them (its\n"
		"losers) and `unlaunched` for the others (compiled outside any measured call).\n"
		"\n"
		"## Counts\n\n");
	strbuf_addf(&sb, "- variants kept: %zu (%zu files)\n", rep->variants, rep->files);
	strbuf_addf(&sb, "- sweep losers: %zu\n", rep->sweep_losers);
	strbuf_addf(&sb, "- other variants no row launched: %zu\n", rep->unlaunched);
	strbuf_addf(&sb, "- shapes: %zu\n", rep->shapes);
	strbuf_addf(&sb, "- kernels: %zu\n", rep->kernels);
	strbuf_addf(&sb, "- compiled variants recorded: %zu\n", rep->compiles);
	if (rep->no_files)
		strbuf_addf(&sb, "- variants kept without any staged file: %zu\n", rep->no_files);
	if (rep->unattributed)
		strbuf_addf(&sb, "- launches of an unknown variant (no hash), not laid out: %zu\n",
			    rep->unattributed);

	strbuf_addstr(&sb,
		"\n## Shapes\n\n"
		"`<shape>` is the dims of the first `torch.Size` of the row's Size Detail joined\n"
		"with `x` (`scalar` for a 0-d tensor, `noshape` when there is none). Rows that share\n"
		"it but differ in other arguments get the differing values appended (`_`-separated,\n"
		"`key=value` for keyword arguments); characters outside `[A-Za-z0-9._+=-]` become `-`.\n\n"
		"| directory | Size Detail |\n|---|---|\n");
	for (size_t i = 0; i < ly->details.nr; i++) {
		strbuf_addstr(&sb, "| ");
		md_cell(&sb, ly->detail_names[i]);
		strbuf_addstr(&sb, " | `");
		md_cell(&sb, ly->details.v[i]);
		strbuf_addstr(&sb, "` |\n");
	}

	strbuf_addstr(&sb,
		"\n## Variant names\n\n"
		"A variant name lists only the parameters whose values differ among the variants of\n"
		"its `<shape>/<kernel>` directory; when none differs it is `w<num_warps>s<num_stages>`.\n\n"
		"- `<ABBR><value>`: a constexpr, by the abbreviation below (booleans as 1/0; `=`\n"
		"  between the two when the value does not start with a digit or `-`, or the\n"
		"  abbreviation ends in a digit); several are joined with `_`, in parameter-name order\n"
		"- `w<n>`, `s<n>`, `c<n>`: num_warps, num_stages, num_ctas (only those that differ,\n"
		"  as one block after the constexprs: `BSM64_w4s3`)\n"
		"- names that would still be equal get, in this order and only while they collide:\n"
		"  - `__<dtype>`: the dtype of the rows that launched it (table below; `+` joins several)\n"
		"  - `__<args>div16`: the arguments Triton specialised as divisible by 16\n"
		"    (`nodiv16`: none; `_<args>eq1`: arguments specialised as equal to 1)\n"
		"  - `__h<hex>`: the start of the compile hash (column `hash` of index.tsv)\n\n");
	strbuf_addstr(&sb, "Suffixes needed in this run:");
	if (!ly->suffixes)
		strbuf_addstr(&sb, " none");
	if (ly->suffixes & IR_SUFFIX_DTYPE)
		strbuf_addstr(&sb, " `__<dtype>`");
	if (ly->suffixes & IR_SUFFIX_SPEC)
		strbuf_addstr(&sb, " `__<args>div16`");
	if (ly->suffixes & IR_SUFFIX_HASH)
		strbuf_addstr(&sb, " `__h<hex>`");
	strbuf_addstr(&sb, ".\n");

	strbuf_addstr(&sb,
		"\n## Abbreviations\n\n"
		"Multi-word names by their initials (`BLOCK_SIZE_M` -> `BSM`), one-word names as they\n"
		"are; a name whose initials would be ambiguous within its kernel keeps its full name.\n\n"
		"| abbreviation | constexpr | kernels |\n|---|---|---|\n");
	if (!legend_rows(ly, 0, &sb))
		strbuf_addstr(&sb, "| (none in this run) | | |\n");
	strbuf_addstr(&sb,
		"\n## Argument short forms (in `__<args>div16`)\n\n"
		"| short | argument | kernels |\n|---|---|---|\n");
	if (!legend_rows(ly, 1, &sb))
		strbuf_addstr(&sb, "| (none in this run) | | |\n");

	for (size_t i = 0; i < ly->ne; i++)
		for (size_t j = 0; j < ly->e[i].dtypes.nr; j++)
			strvec_push(&dtypes, ly->e[i].dtypes.v[j]);
	strvec_sort_unique(&dtypes);
	strbuf_addstr(&sb, "\n## dtypes\n\n| short | dtype |\n|---|---|\n");
	for (size_t i = 0; i < dtypes.nr; i++) {
		struct strbuf s = STRBUF_INIT;
		ir_dtype_short(dtypes.v[i], &s);
		strbuf_addstr(&sb, "| ");
		md_cell(&sb, s.buf);
		strbuf_addstr(&sb, " | ");
		md_cell(&sb, dtypes.v[i]);
		strbuf_addstr(&sb, " |\n");
		strbuf_release(&s);
	}
	if (!dtypes.nr)
		strbuf_addstr(&sb, "| (none) | |\n");

	for (size_t i = 0; i < ly->nk; i++)
		if (strcmp(ly->k[i].dir, ly->k[i].raw))
			strvec_push(&renamed, ly->k[i].dir);
	if (renamed.nr) {
		strbuf_addstr(&sb, "\n## Kernel directories that differ from the kernel's name\n\n"
			      "| directory | kernel |\n|---|---|\n");
		for (size_t i = 0; i < ly->nk; i++) {
			if (!strcmp(ly->k[i].dir, ly->k[i].raw))
				continue;
			strbuf_addstr(&sb, "| ");
			md_cell(&sb, ly->k[i].dir);
			strbuf_addstr(&sb, " | `");
			md_cell(&sb, ly->k[i].raw);
			strbuf_addstr(&sb, "` |\n");
		}
	}
	path = path_join(dest, IR_NAMING_FILE);
	r = write_file_atomic(path, sb.buf, sb.len);
	free(path);
	strbuf_release(&sb);
	strvec_clear(&dtypes);
	strvec_clear(&renamed);
	return r;
}

static void no_ir(struct ir_layout_report *rep, const char *fmt, ...) ZLB_PRINTF(2, 3);
static void no_ir(struct ir_layout_report *rep, const char *fmt, ...)
{
	va_list ap;

	rep->has_ir = 0;
	va_start(ap, fmt);
	vsnprintf(rep->why, sizeof(rep->why), fmt, ap);
	va_end(ap);
}

static void count_distinct(struct layout *ly, struct ir_layout_report *rep)
{
	struct strvec shapes = STRVEC_INIT, kernels = STRVEC_INIT;

	for (size_t i = 0; i < ly->ne; i++) {
		strvec_push(&shapes, ly->e[i].shape);
		strvec_push(&kernels, ly->e[i].kernel->dir);
	}
	strvec_sort_unique(&shapes);
	strvec_sort_unique(&kernels);
	rep->shapes = shapes.nr;
	rep->kernels = kernels.nr;
	rep->variants = ly->ne;
	rep->compiles = ly->in.nc;
	rep->skipped_lines = ly->in.skipped;
	rep->unattributed = ly->in.unattributed;
	strvec_clear(&shapes);
	strvec_clear(&kernels);
}

int ir_layout_build_to(const char *run_dir, const char *dest, struct ir_layout_report *rep)
{
	struct ir_layout_report dummy;
	struct layout ly;
	int r = 0;

	if (!rep)
		rep = &dummy;
	memset(rep, 0, sizeof(*rep));
	memset(&ly, 0, sizeof(ly));
	if (!is_dir(run_dir))
		return error("'%s' is not a directory", run_dir);
	if (!ir_has_staging(run_dir)) {
		char *ir = path_join(run_dir, "ir");
		if (is_dir(ir))
			no_ir(rep, "no IR captured: %s/ir/ is empty (the run stopped before any "
			      "kernel was compiled)", run_dir);
		else
			no_ir(rep, "no IR captured: %s has no ir/ staging (IR capture was off, or "
			      "the run stopped before any kernel was compiled)", run_dir);
		free(ir);
		return 1;
	}
	if (read_inputs(run_dir, &ly.in)) {
		layout_release(&ly);
		return -1;
	}
	if (!ly.in.nc && !ly.in.nl) {
		no_ir(rep, "no IR captured: %s/ir/ records no compiled kernel and no row "
		      "launched one", run_dir);
		rep->skipped_lines = ly.in.skipped;
		layout_release(&ly);
		return 1;
	}
	rep->has_ir = 1;
	kernels_build(&ly);
	shapes_build(&ly);
	entries_build(&ly);
	variants_name(&ly);

	if (mkdir(dest, 0755)) {
		r = error_errno("cannot create '%s'", dest);
		layout_release(&ly);
		return r;
	}
	if (place_files(&ly, dest, rep) || write_index(&ly, dest, rep)) {
		r = -1;
	} else {
		count_distinct(&ly, rep);
		r = write_naming(&ly, dest, rep);
	}
	if (r) {
		remove_tree(dest);
		memset(rep, 0, sizeof(*rep));
	}
	layout_release(&ly);
	return r;
}

int ir_layout_build(const char *run_dir, struct ir_layout_report *rep)
{
	char *tmp = xstrfmt("%s/.%s.tmp-%ld", run_dir, IR_TREE_DIR, (long)getpid());
	char *final = path_join(run_dir, IR_TREE_DIR);
	char *old = NULL;
	int r;

	remove_tree(tmp);
	r = ir_layout_build_to(run_dir, tmp, rep);
	if (r)
		goto out;
	if (!renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_EXCHANGE)) {
		/* tmp now holds the old tree. */
		if (remove_tree(tmp))
			warning("could not remove the old IR tree '%s'", tmp);
		goto out;
	}
	if (errno == ENOENT && !is_dir(final)) {
		if (rename(tmp, final))
			r = error_errno("cannot rename '%s' to '%s'", tmp, final);
		goto out;
	}
	/* No RENAME_EXCHANGE here: move the old tree aside, then the new one in. */
	old = xstrfmt("%s/.%s.old-%ld", run_dir, IR_TREE_DIR, (long)getpid());
	remove_tree(old);
	if (rename(final, old) && errno != ENOENT) {
		r = error_errno("cannot move '%s' aside", final);
		goto out;
	}
	if (rename(tmp, final)) {
		r = error_errno("cannot rename '%s' to '%s'", tmp, final);
		rename(old, final);
		goto out;
	}
	remove_tree(old);
out:
	if (r)
		remove_tree(tmp);
	free(tmp);
	free(final);
	free(old);
	return r;
}

/* ---- Runs ---------------------------------------------------------------- */

/* A run, or a directory that holds only IR (staged or laid out): ir reads those too. */
int ir_is_run_dir(const char *dir)
{
	static const char *const dirs[] = { "ir", IR_TREE_DIR, NULL };
	int yes = rundir_is_run(dir);

	for (int i = 0; !yes && dirs[i]; i++) {
		char *p = path_join(dir, dirs[i]);
		yes = is_dir(p);
		free(p);
	}
	return yes;
}

static int first_op(void *ctx, json_t *obj, size_t lineno)
{
	char **op = ctx;
	const char *s = json_str(obj, "op");

	if (s && *s && (!json_str(obj, "kind") || !strcmp(json_str(obj, "kind"), "row"))) {
		*op = xstrdup(s);
		return 1;
	}
	return 0;
}

char *ir_run_op(const char *run_dir)
{
	json_t *id = NULL;
	char *op = NULL;
	char *p;

	/* An identity this zlb cannot read (error() said why) falls back to the rows. */
	if (!identity_load(run_dir, &id) && json_str(id, "op") && *json_str(id, "op"))
		op = xstrdup(json_str(id, "op"));
	json_decref(id);
	if (!op) {
		p = path_join(run_dir, "results.jsonl");
		jsonl_each(p, first_op, &op, NULL);
		free(p);
	}
	if (!op) {
		char *abs = path_absolute(run_dir);
		op = xstrdup(path_basename(abs));
		free(abs);
	}
	return op;
}

int ir_find_runs(const char *path, struct strvec *runs)
{
	return rundir_find(path, ir_is_run_dir, runs);
}

int ir_view_open(const char *run_dir, struct ir_view *v)
{
	char *tree = path_join(run_dir, IR_TREE_DIR);
	char *index = path_join(tree, IR_INDEX_FILE);
	struct ir_layout_report rep;
	const char *tmpdir = getenv("TMPDIR");
	int r;

	memset(v, 0, sizeof(*v));
	if (is_file(index)) {
		v->tree = tree;
		v->has_ir = 1;
		free(index);
		return 0;
	}
	free(index);
	if (!ir_has_staging(run_dir)) {
		if (is_dir(tree))
			snprintf(v->why, sizeof(v->why),
				 "no IR: %s/%s/ has no %s and there is no ir/ staging to build it from",
				 run_dir, IR_TREE_DIR, IR_INDEX_FILE);
		else
			snprintf(v->why, sizeof(v->why),
				 "no IR captured: %s has no ir/ staging and no %s/ (IR capture was "
				 "off, or the run stopped before any kernel was compiled)",
				 run_dir, IR_TREE_DIR);
		free(tree);
		return 0;
	}
	free(tree);
	/* Staging that was never laid out (an old run): lay it out aside, leave the run as it is. */
	v->tmp = xstrfmt("%s/zlb-ir-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(v->tmp)) {
		r = error_errno("cannot create a temporary directory '%s'", v->tmp);
		free(v->tmp);
		v->tmp = NULL;
		return r;
	}
	v->tree = path_join(v->tmp, IR_TREE_DIR);
	r = ir_layout_build_to(run_dir, v->tree, &rep);
	if (r < 0) {
		ir_view_close(v);
		return -1;
	}
	if (r == 1) {
		snprintf(v->why, sizeof(v->why), "%s", rep.why);
		free(v->tree);
		v->tree = NULL;
		return 0;
	}
	v->has_ir = 1;
	return 0;
}

void ir_view_close(struct ir_view *v)
{
	if (v->tmp) {
		remove_tree(v->tmp);
		free(v->tmp);
	}
	free(v->tree);
	memset(v, 0, sizeof(*v));
}
