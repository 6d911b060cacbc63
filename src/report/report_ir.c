/*
 * The IR of two runs, for a report (report_ir.h).
 */
#include "report/report_ir.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/ir_diff.h"
#include "lib/error.h"
#include "lib/fingerprint.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "report/report_safe.h"

/* The link to <run>/ttgir/<rel>: a regular file that stays inside the run, or NULL. */
static char *link_to(const char *run_real, const char *rel, const char *link_base)
{
	char *tree = path_join(run_real, "ttgir"), *p = path_join(tree, rel), *real, *out = NULL;
	struct stat st;

	if (!lstat(p, &st) && S_ISREG(st.st_mode) && report_path_inside(run_real, p) &&
	    (real = realpath(p, NULL))) {
		out = report_relative_path(link_base, real);
		free(real);
	}
	free(tree);
	free(p);
	return out;
}

static int same_file(const char *a, const char *b)
{
	uint64_t ha, hb, sa, sb;

	if (file_xxh3(a, &ha, &sa) || file_xxh3(b, &hb, &sb))
		return 0;	/* unreadable: listed as differing, the reader opens it */
	return ha == hb && sa == sb;
}

static void add_file(struct report_ir_op *o, const char *rel, enum report_ir_what what,
		     const char *real[2], const char *link_base)
{
	struct report_ir_file *f;

	if (o->nr_files == REPORT_IR_FILES_MAX)
		return;
	o->files = xrealloc(o->files, (o->nr_files + 1) * sizeof(*o->files));
	f = &o->files[o->nr_files++];
	f->rel = xstrdup(rel);
	f->what = what;
	f->link[0] = what != REPORT_IR_ONLY_B ? link_to(real[0], rel, link_base) : NULL;
	f->link[1] = what != REPORT_IR_ONLY_A ? link_to(real[1], rel, link_base) : NULL;
}

/* .ttgir first (what a compiler engineer reads), then the other stages, each in path order. */
static int cmp_files(const void *pa, const void *pb)
{
	const struct report_ir_file *a = pa, *b = pb;
	int ta = ends_with(a->rel, ".ttgir"), tb = ends_with(b->rel, ".ttgir");

	if (ta != tb)
		return tb - ta;
	return strcmp(a->rel, b->rel);
}

/* Both runs' own ttgir/ trees, file by file. */
static void list_files(struct report_ir_op *o, const char *real[2], const char *link_base)
{
	struct strvec f[2] = { STRVEC_INIT, STRVEC_INIT };
	char *tree[2];
	size_t i = 0, j = 0;

	for (int s = 0; s < 2; s++)
		tree[s] = path_join(real[s], "ttgir");
	if (ir_tree_stage_files(tree[0], &f[0]) || ir_tree_stage_files(tree[1], &f[1])) {
		o->why = xstrfmt("the stage files could not be listed: %s", last_error());
		goto out;
	}
	while (i < f[0].nr || j < f[1].nr) {
		int c = i == f[0].nr ? 1 : j == f[1].nr ? -1 : strcmp(f[0].v[i], f[1].v[j]);

		if (c < 0) {
			add_file(o, f[0].v[i++], REPORT_IR_ONLY_A, real, link_base);
		} else if (c > 0) {
			add_file(o, f[1].v[j++], REPORT_IR_ONLY_B, real, link_base);
		} else {
			char *pa = path_join(tree[0], f[0].v[i]), *pb = path_join(tree[1], f[1].v[j]);

			if (!same_file(pa, pb))
				add_file(o, f[0].v[i], REPORT_IR_DIFFERS, real, link_base);
			free(pa);
			free(pb);
			i++;
			j++;
		}
	}
	if (o->nr_files > 1)
		qsort(o->files, o->nr_files, sizeof(*o->files), cmp_files);
out:
	for (int s = 0; s < 2; s++) {
		strvec_clear(&f[s]);
		free(tree[s]);
	}
}

void report_ir_pair(struct report_ir_op *o, const char *op, const char *run_a,
		    const char *run_b, const char *link_base)
{
	struct ab_ir_result r;
	const char *real[2];
	char *ra = realpath(run_a, NULL), *rb = realpath(run_b, NULL);

	memset(o, 0, sizeof(*o));
	o->op = xstrdup(op);
	o->run[0] = xstrdup(run_a);
	o->run[1] = xstrdup(run_b);
	if (!ra || !rb) {
		o->why = xstrfmt("a run directory cannot be resolved");
		goto out;
	}
	if (ab_ir_compare(run_a, run_b, &r)) {
		o->why = xstrfmt("%s", last_error());
		goto out;
	}
	o->ok = 1;
	o->verdict = r.verdict;
	o->same = r.same;
	o->differing = r.differing;
	o->only_a = r.only_a;
	o->only_b = r.only_b;
	if (r.verdict == AB_IR_NONE || r.verdict == AB_IR_ONE_SIDE)
		o->why = xstrfmt("%s", !r.side[0].has_ir ? r.side[0].why : r.side[1].why);
	ab_ir_result_release(&r);
	if (o->verdict != AB_IR_DIFFER)
		goto out;
	real[0] = ra;
	real[1] = rb;
	{
		char *ta = path_join(ra, "ttgir"), *tb = path_join(rb, "ttgir");
		struct stat sa, sb;
		int laid_out = !lstat(ta, &sa) && S_ISDIR(sa.st_mode) &&
			       !lstat(tb, &sb) && S_ISDIR(sb.st_mode);

		free(ta);
		free(tb);
		if (laid_out)
			list_files(o, real, link_base);
		else
			o->why = xstrfmt("a run has no ttgir/ of its own (its IR is only staged "
					 "in ir/): run `zlb ir layout RUN` on both runs to get "
					 "files to link");
	}
out:
	free(ra);
	free(rb);
}

void report_ir_op_release(struct report_ir_op *o)
{
	for (size_t i = 0; i < o->nr_files; i++) {
		free(o->files[i].rel);
		free(o->files[i].link[0]);
		free(o->files[i].link[1]);
	}
	free(o->files);
	free(o->op);
	free(o->run[0]);
	free(o->run[1]);
	free(o->why);
	memset(o, 0, sizeof(*o));
}
