/*
 * ir_layout.c, ir_index.c and ir_diff.c on run directories: the tree, the
 * index (with its sweep losers), the legend, idempotence and determinism,
 * runs without IR, unsafe names in the staging, fingerprints, the
 * discovery of runs in batch directories, and the pairing diff.
 *
 * The main fixture is tests/data/ir/mm_run (see tests/data/ir/README.md),
 * copied to a temporary directory since a layout writes into the run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/error.h"
#include "ir/ir_diff.h"
#include "ir/ir_index.h"
#include "ir/ir_layout.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#define FIXTURE ZLB_TEST_DATA "/ir/mm_run"

/* Hashes of the fixture's variants (tests/data/ir/README.md). */
#define H1 "f557fe2b62d620029f1069e86b14e173abe4e3cb730cba1888f81c9375430592"
#define H2 "e03f1756681e74e33236606958cd73014ea5bb50a138f84ae93d305f11ca29bb"
#define H3 "5b0d749a771dff9aae75efc2dbf472cbdf5b63299aa94e33e6765e54797d2d46"
#define H4 "da88ad072197e890bf0c30032552467f89b5807f0f4244ba1d87c2d26f86d125"
#define H7 "4a4bc6cc10ffd59c87ce50fa958e1faa057a332fc98801b820c391a29cf15ce0"
#define H8 "6936f40fde83bb92ba4ef1d55e8005307650ad2323dcfa8f0ccf27abdf2c8f06"

#include "error_capture.h"

#define assert_not_contains(hay, needle) do {                                 \
	const char *h_ = (hay);                                                 \
	if (h_ && strstr(h_, (needle)))                                         \
		fail_msg("\"%s\" contains \"%s\"", h_, (needle));               \
} while (0)

struct fixture {
	char dir[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	strcpy(f->dir, "/tmp/zlb-irlayout-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	strbuf_reset(&errors);
	set_error_routine(capture_error);
	set_warning_routine(capture_error);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int r = remove_tree(f->dir);

	set_error_routine(NULL);
	set_warning_routine(NULL);
	strbuf_release(&errors);
	free(f);
	return r ? -1 : 0;
}

static char *at(const char *dir, const char *rel)
{
	return path_join(dir, rel);
}

static void put(const char *dir, const char *rel, const char *text)
{
	char *path = path_join(dir, rel);
	char *parent = path_dirname(path);
	FILE *fp;

	assert_int_equal(mkdir_p(parent, 0755), 0);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
	free(parent);
	free(path);
}

static char *slurp(const char *dir, const char *rel)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = path_join(dir, rel);

	if (strbuf_read_file(&sb, path, 0))
		fail_msg("cannot read '%s'", path);
	free(path);
	return strbuf_detach(&sb, NULL);
}

static void copy_tree(const char *src, const char *dst)
{
	DIR *d = opendir(src);
	struct dirent *e;

	assert_non_null(d);
	assert_int_equal(mkdir_p(dst, 0755), 0);
	while ((e = readdir(d))) {
		char *s, *t;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		s = path_join(src, e->d_name);
		t = path_join(dst, e->d_name);
		if (is_dir(s)) {
			copy_tree(s, t);
		} else {
			struct strbuf sb = STRBUF_INIT;
			assert_int_equal(strbuf_read_file(&sb, s, 0), 0);
			assert_int_equal(write_file_atomic(t, sb.buf, sb.len), 0);
			strbuf_release(&sb);
		}
		free(s);
		free(t);
	}
	closedir(d);
}

/* A copy of the fixture run at <f->dir>/<name>; fresh path. */
static char *fixture_run(struct fixture *f, const char *name)
{
	char *run = path_join(f->dir, name);
	copy_tree(FIXTURE, run);
	return run;
}

/* Reverse the order of the lines of a file. */
static void reverse_lines(const char *dir, const char *rel)
{
	char *text = slurp(dir, rel);
	struct strvec lines = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;

	strvec_split(&lines, text, "\n");
	for (size_t i = lines.nr; i-- > 0;)
		strbuf_addf(&out, "%s\n", lines.v[i]);
	put(dir, rel, out.buf);
	strvec_clear(&lines);
	strbuf_release(&out);
	free(text);
}

static const struct ir_index_entry *find_entry(const struct ir_index *idx, const char *shape,
					       const char *kernel, const char *variant)
{
	for (size_t i = 0; i < idx->nr; i++)
		if (!strcmp(idx->e[i].shape, shape) && !strcmp(idx->e[i].kernel, kernel) &&
		    !strcmp(idx->e[i].variant, variant))
			return &idx->e[i];
	fail_msg("no index entry %s/%s/%s", shape, kernel, variant);
	return NULL;
}

static void load_index(const char *run, struct ir_index *idx)
{
	char *path = path_join(run, "ttgir/index.tsv");
	assert_int_equal(ir_index_load(path, idx), 0);
	free(path);
}

static int leftovers(const char *run)
{
	DIR *d = opendir(run);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (starts_with(e->d_name, ".ttgir"))
			n++;
	closedir(d);
	return n;
}

/* ---- the fixture ----------------------------------------------------------- */

static void layout_fixture(void **state)
{
	struct fixture *f = *state;
	char *run = fixture_run(f, "mm");
	struct ir_layout_report rep;
	struct ir_index idx = IR_INDEX_INIT;
	const struct ir_index_entry *e;
	size_t losers = 0;
	char *text, *p, *q;
	struct stat st_tree, st_staged;

	assert_int_equal(ir_layout_build(run, &rep), 0);
	assert_true(rep.has_ir);
	assert_int_equal(rep.variants, 10);
	assert_int_equal(rep.files, 50);
	assert_int_equal(rep.shapes, 4);
	assert_int_equal(rep.kernels, 2);
	assert_int_equal(rep.sweep_losers, 2);
	assert_int_equal(rep.compiles, 11);
	assert_int_equal(rep.no_files, 0);
	assert_int_equal(rep.skipped_lines, 1);	/* the cut-short last line */
	assert_int_equal(leftovers(run), 0);
	assert_string_equal(errors.buf, "");

	/* The seed's layout: <shape>/<kernel>/<variant>.<stage>, a copy of the staged file. */
	text = slurp(run, "ttgir/4096x4096/mm_kernel/BSK64.ttgir");
	q = slurp(run, "ir/files/" H7 "/mm_kernel.ttgir");
	assert_string_equal(text, q);
	free(text);
	free(q);
	/* Hard-linked from the staging (same file system here). */
	p = at(run, "ttgir/4096x4096/mm_kernel/BSK64.cubin");
	q = at(run, "ir/files/" H7 "/mm_kernel.cubin");
	assert_int_equal(stat(p, &st_tree), 0);
	assert_int_equal(stat(q, &st_staged), 0);
	assert_true(st_tree.st_ino == st_staged.st_ino);
	free(p);
	free(q);

	load_index(run, &idx);
	assert_int_equal(idx.nr, 12);
	/* Launches summed over the rows of the shape (1 + 3), dtype from the rows. */
	e = find_entry(&idx, "1024x1024", "mm_kernel", "w4s4__bf16");
	assert_int_equal(e->launches, 4);
	assert_string_equal(e->hash, H3);
	assert_string_equal(e->dtype, "torch.bfloat16");
	assert_int_equal(e->sweep_loser, 0);
	assert_int_equal(e->files.nr, 5);
	assert_string_equal(e->files.v[0], "1024x1024/mm_kernel/w4s4__bf16.ttir");
	assert_string_equal(e->files.v[4], "1024x1024/mm_kernel/w4s4__bf16.cubin");
	assert_string_equal(ir_index_file(e, "ptx"), "1024x1024/mm_kernel/w4s4__bf16.ptx");
	assert_null(ir_index_file(e, "json"));
	/* dtype, then specialisation; hash where everything else is equal. */
	assert_string_equal(find_entry(&idx, "1024x1024", "mm_kernel",
				       "w4s4__fp16__ABCKMNdiv16")->hash, H2);
	find_entry(&idx, "1024x1024", "mm_kernel", "w4s4__fp16__ABCKNdiv16");
	find_entry(&idx, "1x4096_4096x4096", "copy_kernel", "w4s3__h01cee99d");
	find_entry(&idx, "1x4096_4096x4096", "copy_kernel", "w4s3__hfbc8ed54");
	/* Differing constexprs by their initials. */
	assert_string_equal(find_entry(&idx, "4096x4096", "mm_kernel", "BSK32")->hash, H1);
	assert_int_equal(find_entry(&idx, "4096x4096", "mm_kernel", "BSK64")->launches, 2);
	find_entry(&idx, "1x4096_4096x4096", "mm_kernel", "BSN128_EK1");
	/* One variant launched under two shapes: laid out under both. */
	assert_string_equal(find_entry(&idx, "1x4096_4096x1024", "mm_kernel", "w4s3")->hash, H4);
	assert_string_equal(find_entry(&idx, "1x4096_4096x4096", "mm_kernel", "BSN64_EK0")->hash, H4);
	/* Sweep losers: listed last, no shape, no variant, no files. */
	for (size_t i = 0; i < idx.nr; i++) {
		if (!idx.e[i].sweep_loser)
			continue;
		losers++;
		assert_true(i >= 10);
		assert_string_equal(idx.e[i].shape, "-");
		assert_string_equal(idx.e[i].variant, "-");
		assert_string_equal(idx.e[i].kernel, "mm_kernel");
		assert_int_equal(idx.e[i].launches, 0);
		assert_int_equal(idx.e[i].files.nr, 0);
	}
	assert_int_equal(losers, 2);
	assert_string_equal(idx.e[10].hash, H8);
	ir_index_release(&idx);

	/* The raw index: header, exact line, the first compile line of a hash wins. */
	text = slurp(run, "ttgir/index.tsv");
	assert_true(starts_with(text, "shape\tkernel\tvariant\tdtype\tlaunches\thash\tnum_warps\t"
				"num_stages\tnum_ctas\tconstexprs\tspecialization\tsweep_loser\tfiles\n"));
	assert_contains(text, "4096x4096\tmm_kernel\tBSK64\ttorch.float16\t2\t" H7 "\t8\t3\t1\t"
			"{\"BLOCK_SIZE_K\":64,\"BLOCK_SIZE_M\":128,\"BLOCK_SIZE_N\":128,"
			"\"EVEN_K\":true,\"GROUP_SIZE_M\":8}\t"
			"{\"div16\":[\"A\",\"B\",\"C\",\"M\",\"N\",\"K\"],\"equal1\":[]}\tno\t"
			"4096x4096/mm_kernel/BSK64.ttir,4096x4096/mm_kernel/BSK64.ttgir,"
			"4096x4096/mm_kernel/BSK64.llir,4096x4096/mm_kernel/BSK64.ptx,"
			"4096x4096/mm_kernel/BSK64.cubin\n");
	assert_contains(text, "-\tmm_kernel\t-\t-\t0\t" H8 "\t2\t2\t1\t");
	assert_not_contains(text, "\t99\t");
	free(text);

	/* The legend. */
	text = slurp(run, "ttgir/naming.md");
	assert_contains(text, "| `BSK` | `BLOCK_SIZE_K` | mm_kernel |");
	assert_contains(text, "| `EK` | `EVEN_K` | mm_kernel |");
	assert_contains(text, "| `BSN` | `BLOCK_SIZE_N` | mm_kernel |");
	/* Abbreviations no name uses are not listed. */
	assert_not_contains(text, "`GROUP_SIZE_M`");
	assert_contains(text, "- variants kept: 10 (50 files)");
	assert_contains(text, "- sweep losers: 2");
	assert_contains(text, "Suffixes needed in this run: `__<dtype>` `__<args>div16` `__h<hex>`.");
	assert_contains(text, "| bf16 | torch.bfloat16 |");
	assert_contains(text, "| 1x4096_4096x1024 | `[torch.Size([1, 4096]), torch.Size([4096, 1024])]` |");
	assert_contains(text, "`w<n>`, `s<n>`, `c<n>`: num_warps, num_stages, num_ctas");
	free(text);
	free(run);
}

static void layout_idempotent(void **state)
{
	struct fixture *f = *state;
	char *run = fixture_run(f, "mm");
	struct ir_layout_report rep;
	struct ir_fingerprint fp1, fp2;
	char *index1, *index2, *naming1, *naming2, *tree = at(run, "ttgir"), *stray;

	assert_int_equal(ir_layout_build(run, &rep), 0);
	index1 = slurp(run, "ttgir/index.tsv");
	naming1 = slurp(run, "ttgir/naming.md");
	assert_int_equal(ir_fingerprint_tree(tree, &fp1), 0);
	put(run, "ttgir/stray/file.ttgir", "left from an older layout\n");

	assert_int_equal(ir_layout_build(run, &rep), 0);
	assert_int_equal(rep.variants, 10);
	index2 = slurp(run, "ttgir/index.tsv");
	naming2 = slurp(run, "ttgir/naming.md");
	assert_string_equal(index1, index2);
	assert_string_equal(naming1, naming2);
	/* The whole tree was replaced: the stray file is gone. */
	stray = at(run, "ttgir/stray");
	assert_false(is_dir(stray));
	assert_int_equal(ir_fingerprint_tree(tree, &fp2), 0);
	assert_true(fp1.hash == fp2.hash);
	assert_int_equal(fp2.files, 50);
	assert_int_equal(leftovers(run), 0);
	free(index1);
	free(index2);
	free(naming1);
	free(naming2);
	free(stray);
	free(tree);
	free(run);
}

static void layout_deterministic(void **state)
{
	struct fixture *f = *state;
	char *a = fixture_run(f, "a"), *b = fixture_run(f, "b");
	struct ir_fingerprint fa, fb;
	char *ia, *ib, *na, *nb, *ta, *tb;

	/* Same facts, every input file in another order. */
	reverse_lines(b, "ir/compiles.jsonl");
	reverse_lines(b, "ir/staged.jsonl");
	reverse_lines(b, "results.jsonl");
	assert_int_equal(ir_layout_build(a, NULL), 0);
	assert_int_equal(ir_layout_build(b, NULL), 0);
	ia = slurp(a, "ttgir/index.tsv");
	ib = slurp(b, "ttgir/index.tsv");
	na = slurp(a, "ttgir/naming.md");
	nb = slurp(b, "ttgir/naming.md");
	/* One difference is allowed: the duplicate compile line of H2 now comes first. */
	assert_string_not_equal(ia, ib);
	free(ib);
	{
		/* Without the duplicate, the order of lines does not matter at all. */
		char *text = slurp(b, "ir/compiles.jsonl");
		struct strvec lines = STRVEC_INIT;
		struct strbuf keep = STRBUF_INIT;
		strvec_split(&lines, text, "\n");
		for (size_t i = 0; i < lines.nr; i++)
			if (!strstr(lines.v[i], "\"cache_hit\": true"))
				strbuf_addf(&keep, "%s\n", lines.v[i]);
		put(b, "ir/compiles.jsonl", keep.buf);
		strbuf_release(&keep);
		strvec_clear(&lines);
		free(text);
	}
	assert_int_equal(ir_layout_build(b, NULL), 0);
	ib = slurp(b, "ttgir/index.tsv");
	free(nb);
	nb = slurp(b, "ttgir/naming.md");
	assert_string_equal(ia, ib);
	assert_string_equal(na, nb);
	ta = at(a, "ttgir");
	tb = at(b, "ttgir");
	assert_int_equal(ir_fingerprint_tree(ta, &fa), 0);
	assert_int_equal(ir_fingerprint_tree(tb, &fb), 0);
	assert_true(fa.hash == fb.hash);
	free(ia);
	free(ib);
	free(na);
	free(nb);
	free(ta);
	free(tb);
	free(a);
	free(b);
}

static void layout_without_staged_list(void **state)
{
	struct fixture *f = *state;
	char *run = fixture_run(f, "mm");
	char *staged = at(run, "ir/staged.jsonl");
	struct ir_layout_report rep;

	/* A session that died before writing staged.jsonl: the files directory is read. */
	assert_int_equal(unlink(staged), 0);
	/* ...where a copy cut short by the crash is no stage. */
	put(run, "ir/files/" H1 "/mm_kernel.ptx.tmp.4242", "half a pt");
	assert_int_equal(ir_layout_build(run, &rep), 0);
	assert_int_equal(rep.files, 50);
	assert_int_equal(rep.no_files, 0);
	{
		char *p = at(run, "ttgir/4096x4096/mm_kernel/BSK32.4242");
		char *ptx = slurp(run, "ttgir/4096x4096/mm_kernel/BSK32.ptx");
		assert_false(is_file(p));
		assert_contains(ptx, "// ptx of mm_kernel h1");
		free(ptx);
		free(p);
	}
	free(staged);
	free(run);
}

/* ---- no IR ------------------------------------------------------------------- */

static void no_ir(void **state)
{
	struct fixture *f = *state;
	char *run = path_join(f->dir, "timer_only");
	char *tree = at(run, "ttgir");
	char *keep = at(run, "ttgir/keep.txt");
	struct ir_layout_report rep;
	struct ir_view v;

	put(run, "results.jsonl",
	    "{\"kind\": \"row\", \"op\": \"softmax\", \"dtype\": \"torch.float16\","
	    " \"shape_detail\": \"[torch.Size([4])]\", \"gems\": {\"median_ms\": 1}}\n");
	put(run, "run_identity.json", "{\"schema_version\": 1, \"op\": \"softmax\"}\n");

	/* No ir/ at all: a clear status, no error message, nothing created. */
	assert_int_equal(ir_layout_build(run, &rep), 1);
	assert_false(rep.has_ir);
	assert_contains(rep.why, "no IR captured");
	assert_contains(rep.why, "has no ir/ staging");
	assert_false(is_dir(tree));
	assert_string_equal(errors.buf, "");
	assert_int_equal(leftovers(run), 0);

	/* An empty ir/. */
	{
		char *ir = at(run, "ir");
		assert_int_equal(mkdir(ir, 0755), 0);
		free(ir);
	}
	assert_int_equal(ir_layout_build(run, &rep), 1);
	assert_contains(rep.why, "ir/ is empty");

	/* Compiles file present but empty, no launches; an older ttgir/ is kept. */
	put(run, "ir/compiles.jsonl", "");
	put(run, "ttgir/keep.txt", "old\n");
	assert_int_equal(ir_layout_build(run, &rep), 1);
	assert_contains(rep.why, "records no compiled kernel");
	assert_true(is_file(keep));
	assert_string_equal(errors.buf, "");

	/* Garbage in compiles.jsonl (a cut or foreign file): skipped, still no IR. */
	put(run, "ir/compiles.jsonl", "\x01\x02 not json\n[1, 2]\n{\"kernel\": 3}\n");
	assert_int_equal(ir_layout_build(run, &rep), 1);
	assert_contains(rep.why, "records no compiled kernel");
	assert_int_equal(rep.skipped_lines, 3);

	/*
	 * A compile that no row launched: nothing to lay out but the index
	 * line (an empty list of entries is sorted without a NULL base: UBSan).
	 */
	{
		char *other = path_join(f->dir, "unlaunched");
		put(other, "ir/compiles.jsonl", "{\"hash\": \"abc\", \"kernel\": \"k\"}\n");
		assert_int_equal(ir_layout_build(other, &rep), 0);
		assert_int_equal(rep.variants, 0);
		assert_int_equal(rep.unlaunched, 1);
		free(other);
	}

	/* The view of such a run says why too. */
	assert_int_equal(ir_view_open(run, &v), 0);
	assert_false(v.has_ir);
	assert_contains(v.why, "no compiled kernel");
	ir_view_close(&v);

	/* Not a directory at all: that is an error. */
	assert_int_equal(ir_layout_build("/nonexistent/zlb/run", &rep), -1);
	assert_contains(errors.buf, "is not a directory");
	free(keep);
	free(tree);
	free(run);
}

/* ---- hostile staging ------------------------------------------------------------ */

static void unsafe_names(void **state)
{
	struct fixture *f = *state;
	char *run = path_join(f->dir, "evil");
	struct ir_layout_report rep;
	struct ir_index idx = IR_INDEX_INIT;
	char *text, *p;

	put(run, "results.jsonl",
	    "{\"kind\": \"row\", \"op\": \"x\", \"dtype\": \"torch.float32\","
	    " \"shape_detail\": \"[torch.Size([8, 8]), '../../x']\","
	    " \"gems\": {\"launches\": [{\"hash\": \"aaaa1111\", \"kernel\": \"../../evil kernel\", \"count\": 1},"
	    " {\"hash\": \"../bbbb\", \"kernel\": \"k\\tk\", \"count\": 2},"
	    " {\"hash\": null, \"kernel\": \"mystery\", \"count\": 1}]}}\n"
	    "{\"kind\": \"row\", \"op\": \"x\", \"dtype\": \"torch.float32\","
	    " \"shape_detail\": \"[torch.Size([8, 8]), 'y\\\\nz']\", \"gems\": {\"launches\": []}}\n");
	put(run, "ir/compiles.jsonl",
	    "{\"hash\": \"aaaa1111\", \"kernel\": \"../../evil kernel\", \"num_warps\": 4,"
	    " \"num_stages\": 3, \"num_ctas\": 1,"
	    " \"constexprs\": {\"MODE\": \"a\\tb\\nc\"}, \"specialization\": {\"div16\": []}}\n");
	put(run, "ir/staged.jsonl",
	    "{\"hash\": \"aaaa1111\", \"files\": {\"ttgir\": \"files/aaaa1111/k.ttgir\","
	    " \"ptx\": \"../../../../etc/passwd\", \"tt/ir\": \"files/aaaa1111/k.ttgir\","
	    " \"llir\": \"/etc/passwd\"}}\n");
	put(run, "ir/files/aaaa1111/k.ttgir", "module {}\n");

	assert_int_equal(ir_layout_build(run, &rep), 0);
	/* Only the one legitimate file was placed. */
	assert_int_equal(rep.files, 1);
	assert_int_equal(rep.variants, 2);
	assert_int_equal(rep.no_files, 1);
	assert_int_equal(rep.unattributed, 1);	/* the launch without a hash */
	assert_int_equal(rep.skipped_lines, 0);
	p = at(run, "ttgir/8x8_.-.-x/_.-.-evil-kernel/w4s3.ttgir");
	assert_true(is_file(p));
	free(p);

	load_index(run, &idx);
	assert_int_equal(idx.nr, 2);
	for (size_t i = 0; i < idx.nr; i++) {
		assert_null(strchr(idx.e[i].shape, '/'));
		assert_null(strchr(idx.e[i].kernel, '/'));
		assert_null(strchr(idx.e[i].variant, '/'));
		assert_false(idx.e[i].kernel[0] == '.');
	}
	/* The escaped tab and newline of a value come back as they were. */
	text = slurp(run, "ttgir/index.tsv");
	assert_contains(text, "{\"MODE\":\"a\\\\tb\\\\nc\"}");
	{
		struct strvec lines = STRVEC_INIT;
		strvec_split(&lines, text, "\n");
		for (size_t i = 0; i < lines.nr; i++) {
			int tabs = 0;
			for (const char *c = lines.v[i]; *c; c++)
				tabs += *c == '\t';
			assert_int_equal(tabs, 12);
		}
		assert_int_equal(lines.nr, 3);
		strvec_clear(&lines);
	}
	/* The hash "../bbbb" is a value in the index, never a path. */
	assert_contains(text, "\t../bbbb\t");
	free(text);
	text = slurp(run, "ttgir/naming.md");
	assert_contains(text, "| _.-.-evil-kernel | `../../evil kernel` |");
	free(text);
	ir_index_release(&idx);

	/* Escaping round trip of the index's own helpers. */
	{
		struct strbuf esc = STRBUF_INIT, back = STRBUF_INIT;
		const char *raw = "a\tb\nc\\d\re";
		ir_tsv_escape(raw, &esc);
		assert_string_equal(esc.buf, "a\\tb\\nc\\\\d\\re");
		ir_tsv_unescape(esc.buf, esc.len, &back);
		assert_string_equal(back.buf, raw);
		strbuf_release(&esc);
		strbuf_release(&back);
	}
	free(run);
}

/* Two kernels whose names clean up to the same directory stay apart. */
static void kernel_dirs_collide(void **state)
{
	struct fixture *f = *state;
	char *run = path_join(f->dir, "k");
	struct ir_index idx = IR_INDEX_INIT;
	char *text;

	put(run, "results.jsonl",
	    "{\"kind\": \"row\", \"op\": \"x\", \"dtype\": \"torch.float16\","
	    " \"shape_detail\": \"[torch.Size([2])]\", \"gems\": {\"launches\": ["
	    "{\"hash\": \"h1\", \"kernel\": \"a/b\", \"count\": 1},"
	    " {\"hash\": \"h2\", \"kernel\": \"a b\", \"count\": 1}]}}\n");
	put(run, "ir/compiles.jsonl",
	    "{\"hash\": \"h1\", \"kernel\": \"a/b\", \"num_warps\": 4, \"num_stages\": 3}\n"
	    "{\"hash\": \"h2\", \"kernel\": \"a b\", \"num_warps\": 4, \"num_stages\": 3}\n");
	assert_int_equal(ir_layout_build(run, NULL), 0);
	load_index(run, &idx);
	assert_int_equal(idx.nr, 2);
	assert_true(starts_with(idx.e[0].kernel, "a-b_"));
	assert_true(starts_with(idx.e[1].kernel, "a-b_"));
	assert_int_equal(strlen(idx.e[0].kernel), 12);
	assert_string_not_equal(idx.e[0].kernel, idx.e[1].kernel);
	/* Alone in its directory, each is simply w4s3. */
	assert_string_equal(idx.e[0].variant, "w4s3");
	assert_string_equal(idx.e[1].variant, "w4s3");
	text = slurp(run, "ttgir/naming.md");
	assert_contains(text, "| `a/b` |");
	assert_contains(text, "| `a b` |");
	free(text);
	ir_index_release(&idx);
	free(run);
}

/* ---- fingerprints ---------------------------------------------------------------- */

static uint64_t fingerprint(const char *tree, size_t *files)
{
	struct ir_fingerprint fp;

	assert_int_equal(ir_fingerprint_tree(tree, &fp), 0);
	if (files)
		*files = fp.files;
	return fp.hash;
}

static void fingerprints(void **state)
{
	struct fixture *f = *state;
	char *run = fixture_run(f, "mm"), *tree = at(run, "ttgir");
	char *elsewhere = path_join(f->dir, "elsewhere/ttgir");
	char *from, *to;
	uint64_t base, h;
	size_t files;

	assert_int_equal(ir_layout_build(run, NULL), 0);
	base = fingerprint(tree, &files);
	assert_int_equal(files, 50);

	/* Stable: again, and for a copy somewhere else. */
	assert_true(fingerprint(tree, NULL) == base);
	copy_tree(tree, elsewhere);
	assert_true(fingerprint(elsewhere, NULL) == base);

	/* index.tsv and naming.md are not IR. */
	put(elsewhere, "index.tsv", "changed\n");
	put(elsewhere, "naming.md", "changed\n");
	assert_true(fingerprint(elsewhere, NULL) == base);

	/* One byte changed. */
	{
		char *text = slurp(elsewhere, "4096x4096/mm_kernel/BSK32.ptx");
		char *orig = strdup(text);
		text[3] ^= 1;
		put(elsewhere, "4096x4096/mm_kernel/BSK32.ptx", text);
		h = fingerprint(elsewhere, NULL);
		assert_true(h != base);
		put(elsewhere, "4096x4096/mm_kernel/BSK32.ptx", orig);
		assert_true(fingerprint(elsewhere, NULL) == base);
		free(text);
		free(orig);
	}
	/* A file renamed. */
	from = at(elsewhere, "4096x4096/mm_kernel/BSK32.ptx");
	to = at(elsewhere, "4096x4096/mm_kernel/BSK33.ptx");
	assert_int_equal(rename(from, to), 0);
	h = fingerprint(elsewhere, &files);
	assert_true(h != base);
	assert_int_equal(files, 50);
	assert_int_equal(rename(to, from), 0);
	assert_true(fingerprint(elsewhere, NULL) == base);
	free(from);
	free(to);

	/* Bytes moved from one file to the next: same concatenation, another tree. */
	{
		char *t1 = path_join(f->dir, "t1"), *t2 = path_join(f->dir, "t2");
		put(t1, "s/k/v.ttgir", "ab");
		put(t1, "s/k/v.ttir", "c");
		put(t2, "s/k/v.ttgir", "a");
		put(t2, "s/k/v.ttir", "bc");
		assert_true(fingerprint(t1, NULL) != fingerprint(t2, NULL));
		/* Same content under another path. */
		put(t2, "s/k/v.ttgir", "ab");
		put(t2, "s/k/v.ttir", "c");
		assert_true(fingerprint(t1, NULL) == fingerprint(t2, NULL));
		put(t2, "s/k2/v.ttir", "");
		assert_true(fingerprint(t1, NULL) != fingerprint(t2, NULL));
		free(t1);
		free(t2);
	}
	assert_int_equal(ir_fingerprint_tree("/nonexistent/zlb", &(struct ir_fingerprint){ 0 }), -1);
	free(elsewhere);
	free(tree);
	free(run);
}

/* ---- runs and batches --------------------------------------------------------------- */

static void runs_and_ops(void **state)
{
	struct fixture *f = *state;
	char *batch = path_join(f->dir, "batch");
	struct strvec runs = STRVEC_INIT;
	char *p, *op;

	put(batch, "main/softmax/run_identity.json", "{\"schema_version\": 1, \"op\": \"softmax\"}\n");
	put(batch, "vllm/fused_moe/results.jsonl",
	    "{\"kind\": \"row\", \"op\": \"fused_moe\", \"dtype\": \"torch.float16\"}\n");
	put(batch, "top/ir/compiles.jsonl", "");
	put(batch, "a/b/c/run_identity.json", "{}\n");	/* three levels down: not looked at */
	put(batch, "notes.txt", "x\n");
	put(batch, ".hidden/run_identity.json", "{}\n");

	assert_int_equal(ir_find_runs(batch, &runs), 3);
	assert_true(ends_with(runs.v[0], "/batch/main/softmax"));
	assert_true(ends_with(runs.v[1], "/batch/top"));
	assert_true(ends_with(runs.v[2], "/batch/vllm/fused_moe"));
	assert_true(runs.v[0][0] == '/');

	op = ir_run_op(runs.v[0]);
	assert_string_equal(op, "softmax");	/* from the identity */
	free(op);
	op = ir_run_op(runs.v[2]);
	assert_string_equal(op, "fused_moe");	/* from the rows */
	free(op);
	op = ir_run_op(runs.v[1]);
	assert_string_equal(op, "top");		/* the directory's name */
	free(op);
	strvec_clear(&runs);

	/* A run is itself. */
	p = path_join(batch, "main/softmax");
	assert_int_equal(ir_find_runs(p, &runs), 1);
	assert_true(ends_with(runs.v[0], "/main/softmax"));
	assert_true(ir_is_run_dir(p));
	strvec_clear(&runs);
	free(p);

	/* Nothing there; not a directory. */
	p = path_join(batch, "a");
	assert_false(ir_is_run_dir(p));
	free(p);
	p = path_join(f->dir, "empty");
	mkdir(p, 0755);
	assert_int_equal(ir_find_runs(p, &runs), 0);
	free(p);
	assert_int_equal(ir_find_runs("/nonexistent/zlb", &runs), -1);
	assert_int_equal(runs.nr, 0);
	free(batch);
}

static void view_of_unlaid_run(void **state)
{
	struct fixture *f = *state;
	char *run = fixture_run(f, "old"), *tree = at(run, "ttgir");
	struct ir_view v;
	size_t files;
	uint64_t on_the_fly;

	/* A run staged but never laid out: laid out aside, the run untouched. */
	assert_int_equal(ir_view_open(run, &v), 0);
	assert_true(v.has_ir);
	assert_non_null(v.tmp);
	assert_false(starts_with(v.tree, run));
	on_the_fly = fingerprint(v.tree, &files);
	assert_int_equal(files, 50);
	{
		char *tmp = strdup(v.tmp);
		ir_view_close(&v);
		assert_false(is_dir(tmp));
		free(tmp);
	}
	assert_false(is_dir(tree));

	/* Same fingerprint as the run's own layout. */
	assert_int_equal(ir_layout_build(run, NULL), 0);
	assert_int_equal(ir_view_open(run, &v), 0);
	assert_null(v.tmp);
	assert_string_equal(v.tree, tree);
	assert_true(fingerprint(v.tree, NULL) == on_the_fly);
	ir_view_close(&v);
	free(tree);
	free(run);
}

/* ---- diff ------------------------------------------------------------------------------ */

static char *diff_output(const char *ta, const char *tb, const struct ir_diff_opts *o,
			 struct ir_diff_summary *s, int expect)
{
	FILE *out = tmpfile();
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;

	assert_non_null(out);
	assert_int_equal(ir_diff_trees(ta, tb, o, out, s), expect);
	rewind(out);
	while ((n = fread(buf, 1, sizeof(buf), out)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(out);
	return strbuf_detach(&sb, NULL);
}

static void diff_trees(void **state)
{
	struct fixture *f = *state;
	char *a = fixture_run(f, "a"), *b = fixture_run(f, "b");
	char *ta = at(a, "ttgir"), *tb = at(b, "ttgir");
	struct ir_diff_opts o = { 0 };
	struct ir_diff_summary s;
	char *text;

	assert_int_equal(ir_layout_build(a, NULL), 0);
	assert_int_equal(ir_layout_build(b, NULL), 0);

	/* Identical runs. */
	text = diff_output(ta, tb, &o, &s, 0);
	assert_int_equal(s.identical, 10);
	assert_int_equal(s.differing + s.only_a + s.only_b + s.without_stage, 0);
	assert_string_equal(text, "");
	free(text);

	/* B: one ttgir changed (unlink first: the tree's files are links to the staging). */
	{
		char *p = at(b, "ttgir/4096x4096/mm_kernel/BSK32.ttgir");
		char *old = slurp(b, "ttgir/4096x4096/mm_kernel/BSK32.ttgir");
		struct strbuf sb = STRBUF_INIT;
		strbuf_addstr(&sb, old);
		strbuf_addstr(&sb, "// B's compiler added this\n");
		assert_int_equal(unlink(p), 0);
		put(b, "ttgir/4096x4096/mm_kernel/BSK32.ttgir", sb.buf);
		strbuf_release(&sb);
		free(old);
		free(p);
	}
	/* ...one variant only in A (dropped from B's index), one only in B. */
	{
		char *idx = slurp(b, "ttgir/index.tsv");
		struct strvec lines = STRVEC_INIT;
		struct strbuf out = STRBUF_INIT;
		strvec_split(&lines, idx, "\n");
		for (size_t i = 0; i < lines.nr; i++) {
			if (starts_with(lines.v[i], "1x4096_4096x1024\t"))
				continue;
			if (starts_with(lines.v[i], "4096x4096\tmm_kernel\tBSK64\t")) {
				struct strbuf l = STRBUF_INIT;
				strbuf_addstr(&l, lines.v[i]);
				l.buf[24] = '9';	/* "BSK64" -> "BSK69" */
				strbuf_addf(&out, "%s\n", l.buf);
				strbuf_release(&l);
			}
			strbuf_addf(&out, "%s\n", lines.v[i]);
		}
		put(b, "ttgir/index.tsv", out.buf);
		strbuf_release(&out);
		strvec_clear(&lines);
		free(idx);
	}
	text = diff_output(ta, tb, &o, &s, 0);
	assert_int_equal(s.identical, 8);
	assert_int_equal(s.differing, 1);
	assert_int_equal(s.only_a, 1);
	assert_int_equal(s.only_b, 1);
	assert_contains(text, "only in A: 1x4096_4096x1024/mm_kernel/w4s3\n");
	assert_contains(text, "only in B: 4096x4096/mm_kernel/BSK69\n");
	assert_contains(text, "=== 4096x4096/mm_kernel/BSK32.ttgir\n"
			"--- a/4096x4096/mm_kernel/BSK32.ttgir\n"
			"+++ b/4096x4096/mm_kernel/BSK32.ttgir\n");
	assert_contains(text, "\n+// B's compiler added this\n");
	/* One-side-only lines come first. */
	assert_true(strstr(text, "only in B") < strstr(text, "==="));
	assert_not_contains(text, "\033[");
	free(text);

	/* Colour when asked. */
	o.color = 1;
	text = diff_output(ta, tb, &o, &s, 0);
	assert_contains(text, "\033[32m+// B's compiler added this\033[0m");
	free(text);
	o.color = 0;

	/* Another stage: the ptx files are the same. */
	o.stage = "ptx";
	text = diff_output(ta, tb, &o, &s, 0);
	assert_int_equal(s.identical, 9);
	assert_int_equal(s.differing, 0);
	free(text);

	/* cubin: no text diff, sizes and hashes. */
	{
		char *p = at(b, "ttgir/4096x4096/mm_kernel/BSK32.cubin");
		assert_int_equal(unlink(p), 0);
		put(b, "ttgir/4096x4096/mm_kernel/BSK32.cubin", "\177ELF other");
		free(p);
	}
	o.stage = "cubin";
	text = diff_output(ta, tb, &o, &s, 0);
	assert_int_equal(s.differing, 1);
	assert_contains(text, "Binary files a/4096x4096/mm_kernel/BSK32.cubin (");
	assert_contains(text, " and b/4096x4096/mm_kernel/BSK32.cubin (10 bytes, xxh3 ");
	assert_not_contains(text, "@@");
	free(text);

	/* One shape only. */
	o.stage = NULL;
	o.shape = "1024x1024";
	text = diff_output(ta, tb, &o, &s, 0);
	assert_int_equal(s.identical, 3);
	assert_int_equal(s.differing + s.only_a + s.only_b, 0);
	free(text);
	o.shape = NULL;

	/* A stage neither side has. */
	o.stage = "json";
	text = diff_output(ta, tb, &o, &s, 0);
	assert_int_equal(s.without_stage, 9);
	free(text);
	{
		struct strbuf line = STRBUF_INIT;
		ir_diff_summary_line(&s, "json", &line);
		assert_string_equal(line.buf, "0 identical, 0 differing, 1 only in A, 1 only in B "
				    "(stage json; 9 pairs have no json file)");
		strbuf_release(&line);
	}

	/* An index that is not one. */
	o.stage = NULL;
	put(b, "ttgir/index.tsv", "what\tever\n");
	text = diff_output(ta, tb, &o, &s, -1);
	assert_contains(errors.buf, "no 'shape' column");
	free(text);

	free(ta);
	free(tb);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(layout_fixture, setup, teardown),
		cmocka_unit_test_setup_teardown(layout_idempotent, setup, teardown),
		cmocka_unit_test_setup_teardown(layout_deterministic, setup, teardown),
		cmocka_unit_test_setup_teardown(layout_without_staged_list, setup, teardown),
		cmocka_unit_test_setup_teardown(no_ir, setup, teardown),
		cmocka_unit_test_setup_teardown(unsafe_names, setup, teardown),
		cmocka_unit_test_setup_teardown(kernel_dirs_collide, setup, teardown),
		cmocka_unit_test_setup_teardown(fingerprints, setup, teardown),
		cmocka_unit_test_setup_teardown(runs_and_ops, setup, teardown),
		cmocka_unit_test_setup_teardown(view_of_unlaid_run, setup, teardown),
		cmocka_unit_test_setup_teardown(diff_trees, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
