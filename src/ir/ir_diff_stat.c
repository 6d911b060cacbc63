#include "ir/ir_diff_stat.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/ir_diff_int.h"
#include "lib/csvfile.h"
#include "lib/markdown.h"
#include "lib/paths.h"
#include "lib/proc.h"
#include "lib/texttable.h"

const char *ir_stat_kind_name(enum ir_stat_kind k)
{
	static const char *const names[] = { "same", "differs", "only_a", "only_b",
					     "file_only_a", "file_only_b" };

	return names[k];
}

static struct ir_stat_entry *add(struct ir_diff_stat *st, const struct ir_index_entry *e,
				 enum ir_stat_kind kind)
{
	struct ir_stat_entry *x;

	if (st->nr == st->alloc) {
		st->alloc = st->alloc ? 2 * st->alloc : 32;
		st->e = xrealloc(st->e, st->alloc * sizeof(*st->e));
	}
	x = &st->e[st->nr++];
	x->variant = xstrfmt("%s/%s/%s", e->shape, e->kernel, e->variant);
	x->kind = kind;
	x->added = x->removed = -1;
	x->bytes_a = x->bytes_b = -1;
	return x;
}

/* Lines added and removed by diff -u from a to b: its +/- lines below the two file headers. */
static int count_lines(const char *prog, const struct strbuf *a, const struct strbuf *b,
		       long *added, long *removed)
{
	struct strbuf text = STRBUF_INIT;
	int rc = ir_diff_texts(prog, "a", "b", a, b, &text), headers = 0;

	*added = *removed = 0;
	for (const char *p = text.buf; rc >= 0 && rc <= 1 && *p;) {
		const char *nl = strchr(p, '\n');

		if (headers < 2 && (starts_with(p, "--- ") || starts_with(p, "+++ ")))
			headers++;
		else if (*p == '+')
			++*added;
		else if (*p == '-')
			++*removed;
		p = nl ? nl + 1 : p + strlen(p);
	}
	strbuf_release(&text);
	if (rc < 0 || rc > 1) {
		*added = *removed = -1;
		return rc < 0 ? -1 : 0;
	}
	return 0;
}

/* One pair of variants: its stage files compared, sized and counted. */
static int stat_pair(const struct ir_tree *ta, const struct ir_tree *tb,
		     const struct ir_index_entry *ea, const struct ir_index_entry *eb,
		     const char *stage, const char *prog, struct ir_diff_stat *st)
{
	const char *ra = ir_index_file(ea, stage), *rb = ir_index_file(eb, stage);
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	struct ir_stat_entry *x;
	int r = 0;

	if (!ra && !rb) {
		st->sum.without_stage++;
		return 0;
	}
	if ((ra && ir_tree_read_stage(ta, ra, &a)) || (rb && ir_tree_read_stage(tb, rb, &b))) {
		r = -1;
		goto out;
	}
	x = add(st, ea, !ra ? IR_STAT_FILE_ONLY_B : !rb ? IR_STAT_FILE_ONLY_A :
		a.len == b.len && !memcmp(a.buf, b.buf, a.len) ? IR_STAT_SAME : IR_STAT_DIFFERS);
	x->bytes_a = ra ? (long long)a.len : -1;
	x->bytes_b = rb ? (long long)b.len : -1;
	if (x->kind == IR_STAT_SAME) {
		st->sum.identical++;
		x->added = x->removed = 0;
		goto out;
	}
	st->sum.differing++;
	if (x->kind == IR_STAT_DIFFERS && strcmp(stage, "cubin") && is_executable(prog))
		r = count_lines(prog, &a, &b, &x->added, &x->removed);
out:
	strbuf_release(&a);
	strbuf_release(&b);
	return r;
}

int ir_diff_stat_trees(const char *tree_a, const char *tree_b, const struct ir_diff_opts *o,
		       struct ir_diff_stat *st)
{
	struct ir_diff_side a = IR_DIFF_SIDE_INIT, b = IR_DIFF_SIDE_INIT;
	const char *stage = o->stage ? o->stage : "ttgir";
	const char *prog = o->diff_program ? o->diff_program : IR_DIFF_PROGRAM;
	size_t i = 0, j = 0;
	int r = 0;

	struct ir_tree ta = { tree_a, -1 }, tb = { tree_b, -1 };

	memset(st, 0, sizeof(*st));
	st->stage = xstrdup(stage);
	if (ir_tree_open(tree_a, &ta) || ir_tree_open(tree_b, &tb) ||
	    ir_diff_side_load(tree_a, o->shape, &a) || ir_diff_side_load(tree_b, o->shape, &b)) {
		r = -1;
		goto out;
	}
	while (!r && (i < a.n || j < b.n)) {
		int c = i == a.n ? 1 : j == b.n ? -1 : ir_diff_cmp_key(a.e[i], b.e[j]);

		if (c < 0) {
			add(st, a.e[i++], IR_STAT_ONLY_A);
			st->sum.only_a++;
		} else if (c > 0) {
			add(st, b.e[j++], IR_STAT_ONLY_B);
			st->sum.only_b++;
		} else {
			r = stat_pair(&ta, &tb, a.e[i++], b.e[j++], stage, prog, st);
		}
	}
out:
	ir_diff_side_release(&a);
	ir_diff_side_release(&b);
	if (ta.fd >= 0)
		close(ta.fd);
	if (tb.fd >= 0)
		close(tb.fd);
	return r;
}

void ir_diff_stat_release(struct ir_diff_stat *st)
{
	for (size_t i = 0; i < st->nr; i++)
		free(st->e[i].variant);
	free(st->e);
	free(st->stage);
	memset(st, 0, sizeof(*st));
}

/* ---- what it looks like ------------------------------------------------------- */

static const struct tt_column stat_cols[] = {
	{ "variant", 0, TT_CUT, 24, 1 },
	{ "status", 0, TT_KEEP, 0, 0 },
	{ "+lines", 1, TT_KEEP, 0, 0 },
	{ "-lines", 1, TT_KEEP, 0, 0 },
	{ "bytes A", 1, TT_KEEP, 0, 0 },
	{ "bytes B", 1, TT_KEEP, 0, 0 },
};

static char *num_text(long long v)
{
	return v < 0 ? xstrdup("-") : xstrfmt("%lld", v);
}

static size_t changed_table(const struct ir_diff_stat *st, struct texttable *t)
{
	tt_init(t, stat_cols, 6);
	for (size_t i = 0; i < st->nr; i++) {
		const struct ir_stat_entry *x = &st->e[i];
		struct tt_cell *c;

		if (x->kind == IR_STAT_SAME)
			continue;
		c = tt_add_row(t);
		tt_set(&c[0], xstrdup(x->variant));
		tt_set_colored(&c[1], xstrdup(ir_stat_kind_name(x->kind)),
			       x->kind == IR_STAT_DIFFERS ? TERM_YELLOW : TERM_RED);
		tt_set_colored(&c[2], x->added < 0 ? xstrdup("-") : xstrfmt("+%ld", x->added),
			       TERM_GREEN);
		tt_set_colored(&c[3], x->removed < 0 ? xstrdup("-") : xstrfmt("-%ld", x->removed),
			       TERM_RED);
		tt_set(&c[4], num_text(x->bytes_a));
		tt_set(&c[5], num_text(x->bytes_b));
	}
	return t->nrows;
}

void ir_diff_stat_table(const struct ir_diff_stat *st, size_t width, int color,
			struct strbuf *out)
{
	struct texttable t;

	if (changed_table(st, &t))
		tt_render(&t, width, color, out);
	tt_release(&t);
	strbuf_addstr(out, "ir diff: ");
	ir_diff_summary_line(&st->sum, st->stage, out);
	strbuf_addch(out, '\n');
}

static json_t *count_or_null(long long v)
{
	return v < 0 ? json_null() : json_integer(v);
}

json_t *ir_diff_stat_json(const struct ir_diff_stat *st, const char *run_a, const char *run_b)
{
	json_t *vs = json_array();

	for (size_t i = 0; i < st->nr; i++) {
		const struct ir_stat_entry *x = &st->e[i];

		json_array_append_new(vs, json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}",
			"variant", x->variant, "status", ir_stat_kind_name(x->kind),
			"added", count_or_null(x->added), "removed", count_or_null(x->removed),
			"bytes_a", count_or_null(x->bytes_a), "bytes_b", count_or_null(x->bytes_b)));
	}
	return json_pack("{s:i, s:s, s:s, s:s, s:s, s:{s:I, s:I, s:I, s:I, s:I}, s:o}",
			 "schema_version", IR_DIFF_STAT_SCHEMA_VERSION, "kind", "zlb-ir-diff-stat",
			 "a", run_a, "b", run_b, "stage", st->stage, "summary",
			 "identical", (json_int_t)st->sum.identical,
			 "differing", (json_int_t)st->sum.differing,
			 "only_a", (json_int_t)st->sum.only_a, "only_b", (json_int_t)st->sum.only_b,
			 "without_stage", (json_int_t)st->sum.without_stage, "variants", vs);
}

void ir_diff_stat_csv(const struct ir_diff_stat *st, struct strbuf *out)
{
	static const char *const head[] = { "variant", "status", "added", "removed", "bytes_a",
					     "bytes_b" };

	csv_add_row(out, head, 6);
	for (size_t i = 0; i < st->nr; i++) {
		const struct ir_stat_entry *x = &st->e[i];
		char *n[4] = {
			x->added < 0 ? xstrdup("") : xstrfmt("%ld", x->added),
			x->removed < 0 ? xstrdup("") : xstrfmt("%ld", x->removed),
			x->bytes_a < 0 ? xstrdup("") : xstrfmt("%lld", x->bytes_a),
			x->bytes_b < 0 ? xstrdup("") : xstrfmt("%lld", x->bytes_b),
		};
		const char *f[6] = { x->variant, ir_stat_kind_name(x->kind), n[0], n[1], n[2], n[3] };

		csv_add_row(out, f, 6);
		for (int k = 0; k < 4; k++)
			free(n[k]);
	}
}

void ir_diff_stat_md(const struct ir_diff_stat *st, const char *run_a, const char *run_b,
		     struct strbuf *out)
{
	struct texttable t;

	strbuf_addstr(out, "## zlb ir diff: ");
	md_add_code(out, st->stage);
	strbuf_addstr(out, "\n\n- A: ");
	md_add_code(out, run_a);
	strbuf_addstr(out, "\n- B: ");
	md_add_code(out, run_b);
	strbuf_addstr(out, "\n\n");
	{
		struct strbuf line = STRBUF_INIT;

		ir_diff_summary_line(&st->sum, st->stage, &line);
		md_add_text(out, line.buf);
		strbuf_release(&line);
	}
	strbuf_addstr(out, ".\n");
	if (changed_table(st, &t)) {
		strbuf_addch(out, '\n');
		tt_render_md(&t, out);
	}
	tt_release(&t);
}
