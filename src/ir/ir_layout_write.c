/* ir_layout's notes: ttgir/index.tsv and ttgir/NAMING.md. */
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
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "rundir/identity.h"
#include "rundir/rundir.h"

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

int irl_write_index(struct layout *ly, const char *dest, struct ir_layout_report *rep)
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
		struct kernel_info *k = irl_kernel_find(ly, losers[i]->kernel);
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

/* NAMING.md's table of the dtypes the variants' names abbreviate. */
static void naming_dtypes(const struct layout *ly, struct strbuf *sb)
{
	struct strvec dtypes = STRVEC_INIT;

	for (size_t i = 0; i < ly->ne; i++)
		for (size_t j = 0; j < ly->e[i].dtypes.nr; j++)
			strvec_push(&dtypes, ly->e[i].dtypes.v[j]);
	strvec_sort_unique(&dtypes);
	strbuf_addstr(sb, "\n## dtypes\n\n| short | dtype |\n|---|---|\n");
	for (size_t i = 0; i < dtypes.nr; i++) {
		struct strbuf s = STRBUF_INIT;

		ir_dtype_short(dtypes.v[i], &s);
		strbuf_addstr(sb, "| ");
		md_cell(sb, s.buf);
		strbuf_addstr(sb, " | ");
		md_cell(sb, dtypes.v[i]);
		strbuf_addstr(sb, " |\n");
		strbuf_release(&s);
	}
	if (!dtypes.nr)
		strbuf_addstr(sb, "| (none) | |\n");
	strvec_clear(&dtypes);
}

/* NAMING.md's table of kernel directories named otherwise than their kernel. */
static void naming_renamed_kernels(const struct layout *ly, struct strbuf *sb)
{
	int any = 0;

	for (size_t i = 0; i < ly->nk; i++) {
		if (!strcmp(ly->k[i].dir, ly->k[i].raw))
			continue;
		if (!any++)
			strbuf_addstr(sb, "\n## Kernel directories that differ from the kernel's "
				      "name\n\n| directory | kernel |\n|---|---|\n");
		strbuf_addstr(sb, "| ");
		md_cell(sb, ly->k[i].dir);
		strbuf_addstr(sb, " | `");
		md_cell(sb, ly->k[i].raw);
		strbuf_addstr(sb, "` |\n");
	}
}

int irl_write_naming(struct layout *ly, const char *dest, const struct ir_layout_report *rep)
{
	struct strbuf sb = STRBUF_INIT;
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

	naming_dtypes(ly, &sb);
	naming_renamed_kernels(ly, &sb);
	path = path_join(dest, IR_NAMING_FILE);
	r = write_file_atomic(path, sb.buf, sb.len);
	free(path);
	strbuf_release(&sb);
	return r;
}
