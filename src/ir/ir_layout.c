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

#include "ir/ir_index.h"
#include "ir/ir_layout_int.h"
#include "ir/ir_naming.h"
#include "rundir/identity.h"
#include "rundir/rundir.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/safefile.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#define KERNEL_CAP 80

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* ---- Names --------------------------------------------------------------- */

struct kernel_info *irl_kernel_find(struct layout *ly, const char *raw)
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
		struct compile *c = irl_find_compile(in, in->l[i].hash);
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
		struct compile *c = irl_find_compile(in, l->hash);
		struct entry *e;

		if (c)
			c->launched = 1;
		GROW(ly->e, ly->ne, ly->ae);
		e = &ly->e[ly->ne++];
		memset(e, 0, sizeof(*e));
		e->shape = ly->shape_of_row[l->row];
		e->kernel = irl_kernel_find(ly, c ? c->kernel : l->kernel ? l->kernel : "unknown_kernel");
		e->hash = l->hash;
		e->comp = c;
		e->launches = l->count;
		strvec_init(&e->dtypes);
		strvec_init(&e->files);
		if (in->rows[l->row].dtype)
			strvec_push(&e->dtypes, in->rows[l->row].dtype);
	}
	if (ly->ne > 1)	/* no launch read: ly->e is NULL, which qsort may not take */
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
	if (ly->ne > 1)
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
	irl_inputs_release(&ly->in);
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

/* Copy the open file in to a new dst. */
static int copy_fd(int in, const char *src, const char *dst)
{
	int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	char buf[1 << 16];
	ssize_t n;

	if (out < 0)
		return error_errno("cannot create '%s'", dst);
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
	if (close(out))
		return error_errno("cannot write '%s'", dst);
	return 0;
fail:
	{
		int r = error_errno("cannot copy '%s' to '%s'", src, dst);
		close(out);
		unlink(dst);
		return r;
	}
}

/*
 * Place the staged file rel (below the run) at dst: a hard link to the very
 * file opened (through /proc/self/fd, so nothing can be swapped in between),
 * else a copy. 1 when rel is refused: a link, or below one, or not a
 * regular file (what a planted link points to is never placed, hence never
 * read by ir diff); 2 when it does not exist (a staging cut short).
 */
static int place_file(int run_fd, const char *rel, const char *dst)
{
	int in = open_beneath(run_fd, rel, O_RDONLY | O_NONBLOCK), r;
	char proc[64];
	struct stat st;

	if (in < 0)
		return errno == ENOENT ? 2 : errno == ELOOP || errno == ENOTDIR ||
		       errno == EINVAL ? 1 : error_errno("cannot read '%s'", rel);
	if (fstat(in, &st) || !S_ISREG(st.st_mode)) {
		close(in);
		return 1;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", in);
	if (!linkat(AT_FDCWD, proc, AT_FDCWD, dst, AT_SYMLINK_FOLLOW)) {
		close(in);
		return 0;
	}
	fcntl(in, F_SETFL, fcntl(in, F_GETFL) & ~O_NONBLOCK);
	r = copy_fd(in, rel, dst);
	close(in);
	return r;
}

static int place_files(struct layout *ly, const char *dest, struct ir_layout_report *rep)
{
	for (size_t i = 0; i < ly->ne; i++) {
		struct entry *e = &ly->e[i];
		struct staged *s = irl_staged_get(&ly->in, e->hash, 0);
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
			int at = strvec_find(&s->stages, order[k]), r;
			const char *src = s->paths.v[at];
			char *rel, *dst, *dir;

			rel = xstrfmt("%s/%s/%s.%s", e->shape, e->kernel->dir, e->variant, order[k]);
			dst = path_join(dest, rel);
			dir = path_dirname(dst);
			r = mkdir_p(dir, 0755);
			if (!r)
				r = place_file(ly->in.run_fd, src, dst);
			if (r < 0) {
				free(rel);
				free(dst);
				free(dir);
				free(order);
				return -1;
			}
			if (r == 0) {
				strvec_push(&e->files, rel);
				rep->files++;
			} else if (r == 1) {
				rep->refused_files++;
			}
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
	if (irl_read_inputs(run_dir, &ly.in)) {
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

	/* dest is new, or an empty directory made for it (ir_layout_build's temporary one). */
	if (mkdir(dest, 0755) && (errno != EEXIST || !dir_is_empty(dest))) {
		r = error_errno("cannot create '%s'", dest);
		layout_release(&ly);
		return r;
	}
	if (place_files(&ly, dest, rep) || irl_write_index(&ly, dest, rep)) {
		r = -1;
	} else {
		count_distinct(&ly, rep);
		r = irl_write_naming(&ly, dest, rep);
	}
	if (r) {
		remove_tree(dest);
		memset(rep, 0, sizeof(*rep));
	}
	layout_release(&ly);
	return r;
}

/*
 * An empty directory in run_dir under an unpredictable name (mkdtemp, so
 * nothing can be planted there first), with the mode mkdir(0755) would
 * give it rather than mkdtemp's 0700: it becomes ttgir/.
 */
static char *temp_dir_in(const char *run_dir, const char *tag)
{
	char *t = xstrfmt("%s/.%s.%s-XXXXXX", run_dir, IR_TREE_DIR, tag);

	if (!mkdtemp(t)) {
		error_errno("cannot create a temporary directory in '%s'", run_dir);
		free(t);
		return NULL;
	}
	chmod(t, 0755 & ~process_umask());
	return t;
}

int ir_layout_build(const char *run_dir, struct ir_layout_report *rep)
{
	char *tmp, *final, *old = NULL;
	int r;

	if (!is_dir(run_dir))
		return error("'%s' is not a directory", run_dir);
	tmp = temp_dir_in(run_dir, "tmp");
	final = path_join(run_dir, IR_TREE_DIR);
	if (!tmp) {
		free(final);
		return -1;
	}
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
	/* No RENAME_EXCHANGE here: move the old tree aside (over an empty directory), then the new one in. */
	old = temp_dir_in(run_dir, "old");
	if (!old) {
		r = -1;
		goto out;
	}
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
