/*
 * src/report's models: the A/B model read from a comparison's document
 * (whatever the document holds), its page, the batch's ranking and
 * histogram, sizes from shapes, and what a report may read and link to.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/error.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "report/report.h"
#include "report/report_ab.h"
#include "report/report_batch.h"
#include "report/report_int.h"
#include "report/report_ir.h"
#include "report/report_run.h"
#include "report/report_safe.h"

#include "error_capture.h"

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* A comparison as compare_to_json writes it: two rows paired, one not, hostile names. */
static const char doc_text[] =
	"{\"schema_version\": 1, \"kind\": \"zlb-compare\","
	" \"settings\": {\"threshold\": 0.02, \"fdr\": 0.05, \"confidence\": 0.95},"
	" \"a\": {\"runs\": [{\"dir\": \"/r/a1\", \"op\": \"add\","
	"   \"caliber\": {\"timer\": \"graph\", \"l2_mode\": \"hot\"},"
	"   \"provenance\": {\"runtime\": {\"triton\": \"3.5\"}, \"host\": \"h\","
	"                    \"command_line\": [\"run\"]}}]},"
	" \"b\": {\"runs\": [{\"dir\": \"/r/b1\", \"op\": \"add\","
	"   \"caliber\": {\"timer\": \"graph\", \"l2_mode\": \"cold\"},"
	"   \"provenance\": {\"runtime\": {\"triton\": \"3.6\"}, \"host\": \"h\"}}]},"
	" \"caliber\": {\"ok\": false, \"allowed\": true, \"problems\": [{\"field\": \"l2_mode\","
	"   \"text\": \"l2_mode: A=hot B=<cold>\"}]},"
	" \"warnings\": [\"w <1>\"], \"notes\": [],"
	" \"summary\": {\"exit_code\": 1},"
	" \"rows\": ["
	"  {\"op\": \"add<script>\", \"op_name\": \"add<script>\", \"dtype\": \"torch.float16\","
	"   \"shape_detail\": \"[torch.Size([1024, 1024])]\", \"paired\": true,"
	"   \"markers_a\": [\"BENCHMARK_DIRECT_NO_CUDAGRAPH\", \"GRAPH_MEMCPY_NODES\"],"
	"   \"markers_b\": [\"CALLS_PER_REPLAY_DIFFERS\", 7],"
	"   \"gems\": {\"a_ms\": 1.0, \"b_ms\": 1.05, \"ratio\": 1.05, \"ci_low\": 1.03,"
	"             \"ci_high\": 1.07, \"q\": 0.001, \"verdict\": \"SLOWER\", \"why\": null,"
	"             \"rounds_a\": 3, \"rounds_b\": 3},"
	"   \"torch\": {\"ratio\": 1.0, \"verdict\": \"SAME\"}},"
	"  {\"op\": \"add\", \"op_name\": \"add\", \"dtype\": \"torch.float32\","
	"   \"shape_detail\": \"[torch.Size([8])]\", \"paired\": true,"
	"   \"markers_a\": [\"GRAPH_NO_KERNELS\"], \"markers_b\": [],"
	"   \"gems\": {\"ratio\": \"not a number\", \"verdict\": \"EXCLUDED\"}, \"torch\": null},"
	"  {\"op\": \"add\", \"dtype\": \"torch.bfloat16\", \"shape_detail\": \"[torch.Size([2])]\","
	"   \"paired\": false, \"unpaired_reason\": \"only in A\", \"gems\": null},"
	"  42"
	" ]}";

static json_t *load_doc(void)
{
	json_error_t e;
	json_t *doc = json_loads(doc_text, 0, &e);

	if (!doc)
		fail_msg("test document: %s (line %d)", e.text, e.line);
	return doc;
}

static void ab_model_reads_the_document(void **state)
{
	json_t *doc = load_doc();
	struct report_ab m;

	assert_int_equal(report_ab_load(&m, doc), 0);
	assert_true(fabs(m.threshold - 0.02) < 1e-12);
	assert_int_equal(m.nr_rows, 3);		/* the 42 is no row */
	assert_int_equal(m.nr_paired, 2);
	assert_int_equal(m.nr_compared, 2);
	assert_false(m.caliber_ok);
	assert_true(m.caliber_allowed);
	assert_int_equal(m.exit_code, 1);
	/* flags: both sides' markers, each once, in a reader's words */
	assert_int_equal(m.rows[0].flags.nr, 3);
	assert_string_equal(m.rows[0].flags.v[0], "fallback");
	assert_string_equal(m.rows[0].flags.v[1], "memcpy");
	assert_string_equal(m.rows[0].flags.v[2], "K differs");
	assert_string_equal(m.rows[0].markers, "A: BENCHMARK_DIRECT_NO_CUDAGRAPH "
			    "GRAPH_MEMCPY_NODES | B: CALLS_PER_REPLAY_DIFFERS");
	assert_string_equal(m.rows[0].label, "add<script> float16 [[1024, 1024]]");
	assert_string_equal(m.rows[1].flags.v[0], "empty graph");
	/* a mistyped number reads as absent */
	assert_true(isnan(m.rows[1].gems.ratio));
	assert_false(m.rows[1].torch.has);
	assert_string_equal(m.rows[2].unpaired_reason, "only in A");
	report_ab_release(&m);
	json_decref(doc);
}

static void ab_model_refuses_other_documents(void **state)
{
	struct report_ab m;
	json_t *doc = json_pack("{s:i, s:s}", "schema_version", 1, "kind", "zlb-summary");

	set_error_routine(capture_error);
	strbuf_reset(&errors);
	assert_int_equal(report_ab_load(&m, doc), -1);
	assert_contains(errors.buf, "not a comparison");
	json_decref(doc);
	doc = json_array();
	assert_int_equal(report_ab_load(&m, doc), -1);
	json_decref(doc);
	set_error_routine(NULL);
}

static void ab_page(void **state)
{
	json_t *doc = load_doc();
	struct report_ab m;
	struct report_opts o = REPORT_OPTS_INIT;
	struct strbuf html = STRBUF_INIT;

	assert_int_equal(report_ab_load(&m, doc), 0);
	m.names[0] = "A<dir>";
	m.names[1] = "B";
	m.result = "result: B is SLOWER";
	report_ab_render(&m, &o, &html);
	/* untrusted text is escaped everywhere: no markup from the data survives */
	assert_null(strstr(html.buf, "<script"));
	assert_contains(html.buf, "add&lt;script&gt;");
	assert_contains(html.buf, "A&lt;dir&gt;");
	assert_contains(html.buf, "l2_mode: A=hot B=&lt;cold&gt;");
	assert_contains(html.buf, "warning: w &lt;1&gt;");
	/* the forest: both compared rows drawn, the SLOWER one red with its flags */
	assert_int_equal(count(html.buf, "class=\"plot forest\""), 1);
	assert_int_equal(count(html.buf, "class=\"pt v-SLOWER\""), 1);
	assert_contains(html.buf, "class=\"flag\"><title>fallback, memcpy, K differs</title>");
	assert_contains(html.buf, "SAME band \xc2\xb1" "2%");
	/* calibers side by side: the differing field is marked, the same one not */
	assert_contains(html.buf, "<tr class=\"differs\"><td class=\"diff\">l2_mode</td>");
	assert_contains(html.buf, "<tr><td>timer</td>");
	/* provenance: nested keys one level deep; per-run noise left out */
	assert_contains(html.buf, "<td class=\"diff\">runtime.triton</td>");
	assert_null(strstr(html.buf, "command_line"));
	/* the unpaired row and the banner */
	assert_contains(html.buf, "<td>only in A</td>");
	assert_contains(html.buf, "Calibers differ");
	assert_contains(html.buf, "result: B is SLOWER");
	report_ab_release(&m);
	json_decref(doc);
	strbuf_release(&html);
}

static void identity_tables_compare_what_runs_have(void **state)
{
	json_t *a1 = json_loads("{\"caliber\": {\"timer\": \"graph\"}, \"provenance\": "
				"{\"runtime\": {\"torch\": \"2.11\"}, \"host\": \"x\"}}", 0, NULL);
	json_t *b1 = json_loads("{\"caliber\": {\"timer\": \"graph\"}, \"provenance\": "
				"{\"runtime\": null, \"host\": \"y\"}}", 0, NULL);
	json_t *b2 = json_loads("{\"caliber\": {\"timer\": \"graph\"}, \"provenance\": "
				"{\"runtime\": {\"torch\": \"2.11\"}, \"host\": \"y\"}}", 0, NULL);
	const json_t *ida[] = { a1 }, *idb[] = { b1, b2, NULL };
	struct report_idset sides[2] = { { ida, 1 }, { idb, 3 } };
	const char *names[2] = { "A", "B" };
	struct strbuf sb = STRBUF_INIT;

	report_identity_table(&sb, "provenance", NULL, sides, 2, names);
	/* B's run without a runtime shows it, yet the builds' torch is the same */
	assert_contains(sb.buf, "<tr><td>runtime.torch</td><td class=\"wrap\">2.11</td>"
			"<td class=\"wrap\">(absent); (no identity); 2.11</td></tr>");
	/* the null object is not a row of its own */
	assert_null(strstr(sb.buf, "<td>runtime</td>"));
	assert_null(strstr(sb.buf, "<td class=\"diff\">runtime</td>"));
	assert_contains(sb.buf, "<tr class=\"differs\"><td class=\"diff\">host</td>");
	strbuf_release(&sb);
	json_decref(a1);
	json_decref(b1);
	json_decref(b2);
}

static void shapes(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	assert_true(report_shape_size("[torch.Size([1024, 1024]), 1]") == 1048576);
	assert_true(report_shape_size("[torch.Size([4, 8]), torch.Size([8, 2])]") == 48);
	assert_true(report_shape_size("[torch.Size([])]") == 1);
	assert_true(isnan(report_shape_size("N/A")));
	assert_true(isnan(report_shape_size("")));
	report_short_shape(&sb, "[torch.Size([4096, 4096]), torch.Size([1]), 1]");
	assert_string_equal(sb.buf, "[[4096, 4096], [1], 1]");
	strbuf_reset(&sb);
	report_short_shape(&sb, "torch.Size(oops");
	assert_string_equal(sb.buf, "torch.Size(oops");
	strbuf_release(&sb);
}

static void add_op(struct summary *s, const char *op, const char *status,
		   const double *speedups, size_t n, int unranked_last)
{
	struct summary_op *o;

	s->ops = xrealloc(s->ops, (s->nr_ops + 1) * sizeof(*s->ops));
	o = &s->ops[s->nr_ops++];
	memset(o, 0, sizeof(*o));
	o->repo = xstrdup("main");
	o->op = xstrdup(op);
	o->status = xstrdup(status);
	o->first_row = s->nr_rows;
	o->nr_rows = n;
	s->rows = xrealloc(s->rows, (s->nr_rows + n) * sizeof(*s->rows));
	for (size_t i = 0; i < n; i++) {
		struct summary_row *r = &s->rows[s->nr_rows++];
		memset(r, 0, sizeof(*r));
		r->op_name = xstrdup(op);
		r->dtype = xstrdup("torch.float16");
		r->shape = xstrdup("[torch.Size([4])]");
		r->status = xstrdup("SUCCESS");
		r->timer = xstrdup("graph");
		r->markers = xstrdup("");
		r->speedup = speedups[i];
		r->torch_ms = r->gems_ms = 1;
		r->unranked = unranked_last && i == n - 1 ? SUMMARY_NO_KERNELS : 0;
		if (!r->unranked && isfinite(r->speedup) && r->speedup > 0)
			s->rows_ranked++;
	}
}

static void batch_ranking_and_histogram(void **state)
{
	struct summary s;
	struct report_batch_op *ops;
	double *edges;
	size_t *counts, n, total = 0;
	const double slow[] = { 0.5, 0.5 }, fast[] = { 2, 8, 1e-9 }, none[] = { NAN };

	summary_init(&s);
	add_op(&s, "fast", "PASS", fast, 3, 1);	/* 1e-9: no kernel, never ranked */
	add_op(&s, "slow", "PASS", slow, 2, 0);
	add_op(&s, "broken", "FAIL", none, 1, 0);
	n = report_batch_ranked_ops(&s, &ops);
	assert_int_equal(n, 2);
	assert_string_equal(s.ops[ops[0].op].op, "slow");
	assert_true(fabs(ops[0].geomean - 0.5) < 1e-12);
	assert_string_equal(s.ops[ops[1].op].op, "fast");
	assert_true(fabs(ops[1].geomean - 4) < 1e-12);	/* sqrt(2 * 8) */
	assert_int_equal(ops[1].rows, 2);
	free(ops);

	n = report_batch_histogram(&s, &edges, &counts);
	assert_true(n > 0 && n <= 64);
	for (size_t b = 0; b < n; b++) {
		assert_true(edges[b] < edges[b + 1]);
		total += counts[b];
	}
	assert_int_equal(total, 4);
	assert_true(edges[0] <= 0.5 && edges[n] > 8);
	free(edges);
	free(counts);
	summary_release(&s);

	summary_init(&s);
	assert_int_equal(report_batch_histogram(&s, &edges, &counts), 0);
	summary_release(&s);
}

static void relative_paths(void **state)
{
	static const char *const cases[][3] = {
		{ "/a/b", "/a/b/c/d", "c/d" },
		{ "/a/b", "/a/c/d", "../c/d" },
		{ "/a/b", "/a/bc/x", "../bc/x" },
		{ "/", "/x/y", "x/y" },
		{ "/a/b/c", "/x", "../../../x" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *p = report_relative_path(cases[i][0], cases[i][1]);
		assert_string_equal(p, cases[i][2]);
		free(p);
	}
}

struct tmp {
	char dir[PATH_MAX];
};

static int tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));
	char tmpl[] = "/tmp/zlb-report-XXXXXX";

	if (!mkdtemp(tmpl) || !realpath(tmpl, t->dir))
		return -1;
	*state = t;
	return 0;
}

static int tmp_teardown(void **state)
{
	struct tmp *t = *state;

	remove_tree(t->dir);
	free(t);
	return 0;
}

static void put(const char *dir, const char *rel, const char *text)
{
	char *p = path_join(dir, rel), *d = path_dirname(p);

	assert_int_equal(mkdir_p(d, 0777), 0);
	assert_int_equal(write_file_atomic(p, text, strlen(text)), 0);
	free(p);
	free(d);
}

static void links_out_of_the_tree_are_refused(void **state)
{
	struct tmp *t = *state;
	char *root = path_join(t->dir, "batch"), *link, *inside;

	put(root, "main/add/results.jsonl", "{}\n");
	put(t->dir, "secret/results.jsonl", "{}\n");
	/* a link that stays inside is fine */
	link = path_join(root, "main/alias");
	assert_int_equal(symlink("add", link), 0);
	assert_int_equal(report_check_tree(root, 3), 0);
	/* a dangling one cannot be read through: let be */
	free(link);
	link = path_join(root, "main/add/gone.jsonl");
	assert_int_equal(symlink("/nonexistent/x", link), 0);
	assert_int_equal(report_check_tree(root, 3), 0);
	/* one that leads out is named, with where it leads */
	free(link);
	link = path_join(root, "main/add/events.jsonl");
	inside = path_join(t->dir, "secret/results.jsonl");
	assert_int_equal(symlink(inside, link), 0);
	set_error_routine(capture_error);
	strbuf_reset(&errors);
	assert_int_equal(report_check_tree(root, 3), -1);
	assert_contains(errors.buf, "events.jsonl is a symbolic link to");
	assert_contains(errors.buf, "secret/results.jsonl, outside");
	set_error_routine(NULL);
	assert_int_equal(report_path_inside(root, inside), 0);
	assert_int_equal(report_path_inside(t->dir, inside), 1);
	/* a name that merely starts like the root is not inside it */
	put(t->dir, "batch2/x", "x");
	free(inside);
	inside = path_join(t->dir, "batch2/x");
	assert_int_equal(report_path_inside(root, inside), 0);
	free(inside);
	free(link);
	free(root);
}

/* A run with a laid-out IR tree: run_identity.json, ttgir/index.tsv and stage files. */
static char *make_run(const char *dir, const char *name, const char *ttgir_text,
		      const char *extra)
{
	char *run = path_join(dir, name);
	static const char index[] =
		"shape\tkernel\tvariant\tnum_warps\tnum_stages\tconstexprs\tsweep_loser\n";

	put(run, "run_identity.json", "{\"schema_version\": 1, \"op\": \"add\"}\n");
	put(run, "ttgir/index.tsv", index);
	put(run, "ttgir/8/add_kernel/w4s1.ttgir", ttgir_text);
	put(run, "ttgir/8/add_kernel/w4s1.ptx", "ptx");
	if (extra)
		put(run, extra, "only here");
	return run;
}

static void ir_pairs_link_the_differing_files(void **state)
{
	struct tmp *t = *state;
	char *a = make_run(t->dir, "a", "module A", "ttgir/8/add_kernel/w4s1.llir");
	char *b = make_run(t->dir, "b", "module B", NULL);
	char *c = make_run(t->dir, "c", "module C", NULL);
	char *link = path_join(c, "ttgir/8/add_kernel/w4s1.ttgir"), *secret;
	struct report_ir_op o;

	report_ir_pair(&o, "add", a, b, t->dir);
	if (!o.ok)
		fail_msg("no IR verdict: %s", o.why);
	assert_int_equal(o.verdict, AB_IR_DIFFER);
	assert_int_equal(o.differing, 1);
	assert_int_equal(o.only_a, 1);
	assert_int_equal(o.nr_files, 2);
	assert_string_equal(o.files[0].rel, "8/add_kernel/w4s1.ttgir");	/* .ttgir first */
	assert_int_equal(o.files[0].what, REPORT_IR_DIFFERS);
	/* relative to the report's directory */
	assert_string_equal(o.files[0].link[0], "a/ttgir/8/add_kernel/w4s1.ttgir");
	assert_string_equal(o.files[0].link[1], "b/ttgir/8/add_kernel/w4s1.ttgir");
	assert_string_equal(o.files[1].rel, "8/add_kernel/w4s1.llir");
	assert_int_equal(o.files[1].what, REPORT_IR_ONLY_A);
	assert_null(o.files[1].link[1]);
	report_ir_op_release(&o);

	/* C's .ttgir is a link out of its run: never read, never linked */
	secret = path_join(t->dir, "secret.ttgir");
	put(t->dir, "secret.ttgir", "module C");
	assert_int_equal(unlink(link), 0);
	assert_int_equal(symlink(secret, link), 0);
	report_ir_pair(&o, "add", a, c, t->dir);
	assert_true(o.ok);
	for (size_t i = 0; i < o.nr_files; i++) {
		assert_int_not_equal(o.files[i].what, REPORT_IR_ONLY_B);
		assert_true(!o.files[i].link[1] || !strstr(o.files[i].link[1], "secret"));
		assert_true(!o.files[i].link[1] || !strstr(o.files[i].link[1], ".ttgir"));
	}
	report_ir_op_release(&o);

	/* the same IR on both sides: identical, nothing listed */
	report_ir_pair(&o, "add", a, a, t->dir);
	assert_true(o.ok);
	assert_int_equal(o.verdict, AB_IR_IDENTICAL);
	assert_int_equal(o.nr_files, 0);
	report_ir_op_release(&o);
	free(a);
	free(b);
	free(c);
	free(link);
	free(secret);
}

static void detect_what_a_path_is(void **state)
{
	struct tmp *t = *state;
	enum report_input k;
	char *run = path_join(t->dir, "run"), *batch = path_join(t->dir, "batch");
	char *ab = path_join(t->dir, "ab"), *empty = path_join(t->dir, "empty");

	put(run, "results.jsonl", "");
	put(batch, "ops_status.csv", "repo,op,status\n");
	put(ab, "ab.json", "{}");
	assert_int_equal(mkdir_p(empty, 0777), 0);
	assert_int_equal(report_detect(run, &k), 0);
	assert_int_equal(k, REPORT_INPUT_RUN);
	assert_int_equal(report_detect(batch, &k), 0);
	assert_int_equal(k, REPORT_INPUT_BATCH);
	assert_int_equal(report_detect(ab, &k), 0);
	assert_int_equal(k, REPORT_INPUT_AB);
	set_error_routine(capture_error);
	strbuf_reset(&errors);
	assert_int_equal(report_detect(empty, &k), -1);
	assert_contains(errors.buf, "nothing to report");
	set_error_routine(NULL);
	free(run);
	free(batch);
	free(ab);
	free(empty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ab_model_reads_the_document),
		cmocka_unit_test(ab_model_refuses_other_documents),
		cmocka_unit_test(ab_page),
		cmocka_unit_test(identity_tables_compare_what_runs_have),
		cmocka_unit_test(shapes),
		cmocka_unit_test(batch_ranking_and_histogram),
		cmocka_unit_test(relative_paths),
		cmocka_unit_test_setup_teardown(links_out_of_the_tree_are_refused, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(ir_pairs_link_the_differing_files, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(detect_what_a_path_is, tmp_setup, tmp_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
