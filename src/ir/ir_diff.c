#include "ir/ir_diff.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "lib/fingerprint.h"
#include "ir/ir_diff_int.h"
#include "ir/ir_index.h"
#include "lib/paths.h"
#include "lib/proc.h"
#include "lib/safefile.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "lib/term.h"

#define DIFF_TIMEOUT_MS 60000

/* Regular files below root, as paths relative to it; depth 0 is root itself. */
static int stage_files_below(const char *root, const char *rel, int depth, struct strvec *out)
{
	char *dir = rel ? path_join(root, rel) : xstrdup(root);
	DIR *d = opendir(dir);
	struct dirent *e;
	int r = 0;

	if (!d) {
		r = error_errno("cannot read '%s'", dir);
		free(dir);
		return r;
	}
	while (!r && (e = readdir(d))) {
		struct stat st;
		char *path, *sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		path = path_join(dir, e->d_name);
		sub = rel ? path_join(rel, e->d_name) : xstrdup(e->d_name);
		if (lstat(path, &st)) {
			r = error_errno("cannot stat '%s'", path);
		} else if (S_ISDIR(st.st_mode)) {
			r = stage_files_below(root, sub, depth + 1, out);
		} else if (S_ISREG(st.st_mode) && depth > 0) {
			/* Top-level files (index.tsv, naming.md) describe the tree: not IR. */
			strvec_push(out, sub);
		}
		free(path);
		free(sub);
	}
	closedir(d);
	free(dir);
	return r;
}

int ir_tree_stage_files(const char *tree, struct strvec *out)
{
	int r = stage_files_below(tree, NULL, 0, out);

	/* Byte order, whatever the file system listed first. */
	if (!r)
		strvec_sort(out);
	return r;
}

static void put_u64le(XXH3_state_t *st, uint64_t v)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	XXH3_64bits_update(st, b, sizeof(b));
}

int ir_fingerprint_tree(const char *tree, struct ir_fingerprint *fp)
{
	struct strvec files = STRVEC_INIT;
	XXH3_state_t *st;
	int r;

	struct stat lst;

	memset(fp, 0, sizeof(*fp));
	if (lstat(tree, &lst) || !S_ISDIR(lst.st_mode))
		return error(!lstat(tree, &lst) && S_ISLNK(lst.st_mode) ?
			     "'%s' is a symbolic link: zlb follows no link inside a run; "
			     "replace it with the directory itself" : "'%s' is not a directory", tree);
	r = ir_tree_stage_files(tree, &files);
	if (r) {
		strvec_clear(&files);
		return r;
	}
	st = XXH3_createState();
	if (!st)
		BUG("out of memory");
	XXH3_64bits_reset(st);
	for (size_t i = 0; i < files.nr; i++) {
		struct strbuf content = STRBUF_INIT;
		char *path = path_join(tree, files.v[i]);

		/* Listed as regular by lstat: a link swapped in since is refused here. */
		if ((r = read_regular(path, 0, &content))) {
			if (r == 1)
				r = error("'%s' went away while the tree was read", path);
			free(path);
			strbuf_release(&content);
			break;
		}
		put_u64le(st, strlen(files.v[i]));
		XXH3_64bits_update(st, files.v[i], strlen(files.v[i]));
		put_u64le(st, content.len);
		XXH3_64bits_update(st, content.buf, content.len);
		free(path);
		strbuf_release(&content);
	}
	if (!r) {
		fp->hash = XXH3_64bits_digest(st);
		fp->files = files.nr;
	}
	XXH3_freeState(st);
	strvec_clear(&files);
	return r;
}

/* ---- Diff ---------------------------------------------------------------- */

int ir_diff_cmp_key(const struct ir_index_entry *x, const struct ir_index_entry *y)
{
	int c = strcmp(x->shape, y->shape);
	if (!c)
		c = strcmp(x->kernel, y->kernel);
	return c ? c : strcmp(x->variant, y->variant);
}

static int cmp_entry_ptr(const void *a, const void *b)
{
	return ir_diff_cmp_key(*(struct ir_index_entry *const *)a,
			       *(struct ir_index_entry *const *)b);
}

int ir_diff_side_load(const char *tree, const char *shape, struct ir_diff_side *s)
{
	char *path = path_join(tree, IR_INDEX_FILE);
	int r = ir_index_load(path, &s->idx);

	if (r == 1)
		r = error("'%s' does not exist", path);
	free(path);
	if (r)
		return -1;
	s->e = xcalloc(s->idx.nr + 1, sizeof(*s->e));
	for (size_t i = 0; i < s->idx.nr; i++) {
		struct ir_index_entry *e = &s->idx.e[i];
		if (e->sweep_loser || (shape && strcmp(e->shape, shape)))
			continue;
		s->e[s->n++] = e;
	}
	if (s->n > 1)
		qsort(s->e, s->n, sizeof(*s->e), cmp_entry_ptr);
	return 0;
}

void ir_diff_side_release(struct ir_diff_side *s)
{
	ir_index_release(&s->idx);
	free(s->e);
}

static void put_colored(FILE *out, int color, enum term_color c, const char *text, size_t len)
{
	if (color && len)
		fprintf(out, "%s%.*s%s", term_color_code(c), (int)len, text, TERM_RESET);
	else
		fwrite(text, 1, len, out);
}

/* diff -u output, coloured like git's when asked. */
static void put_diff(FILE *out, int color, const struct strbuf *text)
{
	const char *p = text->buf, *end = text->buf + text->len;

	if (!color) {
		fwrite(text->buf, 1, text->len, out);
		if (text->len && text->buf[text->len - 1] != '\n')
			fputc('\n', out);
		return;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (starts_with(p, "+++ ") || starts_with(p, "--- "))
			put_colored(out, 1, TERM_BOLD, p, len);
		else if (*p == '+')
			put_colored(out, 1, TERM_GREEN, p, len);
		else if (*p == '-')
			put_colored(out, 1, TERM_RED, p, len);
		else if (starts_with(p, "@@"))
			put_colored(out, 1, TERM_YELLOW, p, len);
		else
			fwrite(p, 1, len, out);
		fputc('\n', out);
		p += len + 1;
	}
}

static void header(FILE *out, int color, const char *key)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "=== %s", key);
	put_colored(out, color, TERM_BOLD, sb.buf, sb.len);
	fputc('\n', out);
	strbuf_release(&sb);
}

static void describe(struct strbuf *sb, const char *label, const char *rel,
		     uint64_t size, uint64_t hash)
{
	strbuf_addf(sb, "%s/%s (%llu bytes, xxh3 %016llx)", label, rel,
		    (unsigned long long)size, (unsigned long long)hash);
}

/* The largest stage file read for a diff (a big kernel's PTX is a few MB). */
#define STAGE_FILE_LIMIT (512u << 20)

int ir_tree_read_stage(const struct ir_tree *t, const char *rel, struct strbuf *out)
{
	char *shown = path_join(t->path, rel);
	int fd, r = open_regular_at(t->fd, rel, shown, &fd);

	if (r == 1)
		r = error("'%s' is listed in %s but does not exist", shown, IR_INDEX_FILE);
	if (!r && read_fd(fd, STAGE_FILE_LIMIT, out))
		r = error_errno("cannot read '%s'", shown);
	if (fd >= 0)
		close(fd);
	free(shown);
	return r;
}

int ir_diff_texts(const char *prog, const char *label_a, const char *label_b,
		  const struct strbuf *a, const struct strbuf *b, struct strbuf *text)
{
	const char *tmpdir = getenv("TMPDIR");
	char *dir = xstrfmt("%s/zlb-irdiff-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	char *pa = NULL, *pb = NULL;
	struct strvec argv = STRVEC_INIT;
	char *envp[] = { "LC_ALL=C", NULL };
	int rc;

	if (!mkdtemp(dir)) {
		rc = error_errno("cannot create a temporary directory '%s'", dir);
		free(dir);
		return rc;
	}
	pa = path_join(dir, "a");
	pb = path_join(dir, "b");
	if (write_file_atomic(pa, a->buf, a->len) || write_file_atomic(pb, b->buf, b->len)) {
		rc = -1;
		goto out;
	}
	strvec_push(&argv, prog);
	strvec_push(&argv, "-u");
	strvec_pushf(&argv, "--label=%s", label_a);
	strvec_pushf(&argv, "--label=%s", label_b);
	strvec_push(&argv, pa);
	strvec_push(&argv, pb);
	rc = run_capture(argv.v, envp, NULL, DIFF_TIMEOUT_MS, text);
out:
	remove_tree(dir);
	strvec_clear(&argv);
	free(pa);
	free(pb);
	free(dir);
	return rc;
}

/*
 * Compare one pair's stage files. 0 identical, 1 differing (reported), -1
 * error.
 */
static int diff_pair(const struct ir_tree *ta, const struct ir_tree *tb, const struct ir_index_entry *ea,
		     const struct ir_index_entry *eb, const struct ir_diff_opts *o,
		     const char *stage, int have_diff, FILE *out)
{
	const char *ra = ir_index_file(ea, stage), *rb = ir_index_file(eb, stage);
	const char *la = o->label_a ? o->label_a : "a", *lb = o->label_b ? o->label_b : "b";
	char *key = xstrfmt("%s/%s/%s.%s", ea->shape, ea->kernel, ea->variant, stage);
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	uint64_t ha, hb;
	int r = 1;

	if (ir_tree_read_stage(ta, ra, &a) || ir_tree_read_stage(tb, rb, &b)) {
		r = -1;
		goto out;
	}
	ha = XXH3_64bits(a.buf, a.len);
	hb = XXH3_64bits(b.buf, b.len);
	if (ha == hb && a.len == b.len && !memcmp(a.buf, b.buf, a.len)) {
		r = 0;
		goto out;
	}
	header(out, o->color, key);
	if (!strcmp(stage, "cubin") || !have_diff) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addstr(&sb, !strcmp(stage, "cubin") ? "Binary files " : "Files ");
		describe(&sb, la, ra, a.len, ha);
		strbuf_addstr(&sb, " and ");
		describe(&sb, lb, rb, b.len, hb);
		strbuf_addstr(&sb, " differ");
		if (strcmp(stage, "cubin"))
			strbuf_addf(&sb, " (no %s to show how)", o->diff_program ?
				    o->diff_program : IR_DIFF_PROGRAM);
		fprintf(out, "%s\n", sb.buf);
		strbuf_release(&sb);
	} else {
		struct strbuf text = STRBUF_INIT;
		char *label_a = xstrfmt("%s/%s", la, ra), *label_b = xstrfmt("%s/%s", lb, rb);
		int rc = ir_diff_texts(o->diff_program ? o->diff_program : IR_DIFF_PROGRAM,
				       label_a, label_b, &a, &b, &text);

		if (rc < 0) {
			fprintf(out, "(diff could not run: %s)\n", last_error());
		} else {
			put_diff(out, o->color, &text);
			if (rc > 1)
				fprintf(out, "(%s exited with %d)\n", o->diff_program ?
					o->diff_program : IR_DIFF_PROGRAM, rc);
		}
		free(label_a);
		free(label_b);
		strbuf_release(&text);
	}
out:
	strbuf_release(&a);
	strbuf_release(&b);
	free(key);
	return r;
}

int ir_tree_open(const char *path, struct ir_tree *t)
{
	t->path = path;
	t->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (t->fd < 0)
		return errno == ELOOP ? error("'%s' is a symbolic link: zlb follows no link "
					       "inside a run; replace it with the directory itself",
					       path)
				      : error_errno("cannot read '%s'", path);
	return 0;
}

int ir_diff_trees(const char *tree_a, const char *tree_b, const struct ir_diff_opts *o,
		  FILE *out, struct ir_diff_summary *s)
{
	struct ir_diff_side a = IR_DIFF_SIDE_INIT, b = IR_DIFF_SIDE_INIT;
	const char *stage = o->stage ? o->stage : "ttgir";
	const char *prog = o->diff_program ? o->diff_program : IR_DIFF_PROGRAM;
	int have_diff = is_executable(prog);
	size_t i = 0, j = 0;
	int r = 0;

	struct ir_tree ta = { tree_a, -1 }, tb = { tree_b, -1 };

	memset(s, 0, sizeof(*s));
	if (ir_tree_open(tree_a, &ta) || ir_tree_open(tree_b, &tb) ||
	    ir_diff_side_load(tree_a, o->shape, &a) || ir_diff_side_load(tree_b, o->shape, &b)) {
		ir_diff_side_release(&a);
		ir_diff_side_release(&b);
		if (ta.fd >= 0)
			close(ta.fd);
		if (tb.fd >= 0)
			close(tb.fd);
		return -1;
	}
	/* First what exists on one side only. */
	while (i < a.n || j < b.n) {
		int c = i == a.n ? 1 : j == b.n ? -1 : ir_diff_cmp_key(a.e[i], b.e[j]);
		if (c < 0) {
			fprintf(out, "only in A: %s/%s/%s\n", a.e[i]->shape, a.e[i]->kernel,
				a.e[i]->variant);
			s->only_a++;
			i++;
		} else if (c > 0) {
			fprintf(out, "only in B: %s/%s/%s\n", b.e[j]->shape, b.e[j]->kernel,
				b.e[j]->variant);
			s->only_b++;
			j++;
		} else {
			i++;
			j++;
		}
	}
	/* Then each pair (no more diffs once the output is gone: a closed pipe, a full disk). */
	for (i = 0, j = 0; !r && !ferror(out) && i < a.n && j < b.n;) {
		int c = ir_diff_cmp_key(a.e[i], b.e[j]);
		if (c < 0) {
			i++;
		} else if (c > 0) {
			j++;
		} else {
			const char *fa = ir_index_file(a.e[i], stage);
			const char *fb = ir_index_file(b.e[j], stage);

			if (!fa && !fb) {
				s->without_stage++;
			} else if (!fa || !fb) {
				char *key = xstrfmt("%s/%s/%s.%s", a.e[i]->shape, a.e[i]->kernel,
						    a.e[i]->variant, stage);
				header(out, o->color, key);
				fprintf(out, "only %s has this file\n", fa ? "A" : "B");
				free(key);
				s->differing++;
			} else {
				int d = diff_pair(&ta, &tb, a.e[i], b.e[j], o, stage,
						  have_diff, out);
				if (d < 0)
					r = -1;
				else if (d)
					s->differing++;
				else
					s->identical++;
			}
			i++;
			j++;
		}
	}
	ir_diff_side_release(&a);
	ir_diff_side_release(&b);
	close(ta.fd);
	close(tb.fd);
	return r;
}

void ir_diff_summary_line(const struct ir_diff_summary *s, const char *stage,
			  struct strbuf *out)
{
	strbuf_addf(out, "%zu identical, %zu differing, %zu only in A, %zu only in B (stage %s",
		    s->identical, s->differing, s->only_a, s->only_b, stage ? stage : "ttgir");
	if (s->without_stage)
		strbuf_addf(out, "; %zu pairs have no %s file", s->without_stage,
			    stage ? stage : "ttgir");
	strbuf_addch(out, ')');
}
