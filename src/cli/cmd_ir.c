/*
 * zlb ir: the IR a run captured (<run>/ttgir/): lay it out, diff two runs,
 * fingerprint runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/usage.h"
#include "lib/error.h"
#include "ir/ir_diff.h"
#include "ir/ir_diff_stat.h"
#include "ir/ir_index.h"
#include "ir/ir_layout.h"
#include "lib/options.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "lib/term.h"

extern char **environ;

static const char *const stages[] = { "ttgir", "ttir", "llir", "ptx", "cubin", NULL };
static const char *const colors[] = { "auto", "always", "never", NULL };

static const struct opt_def diff_option_defs[] = {
	{ "op", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "OP",
	  "the operator to compare (needed when RUN_A/RUN_B are batch directories holding "
	  "several operators)" },
	{ "shape", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "S",
	  "only the shape directory S (e.g. 1024x1024)" },
	{ "stage", NULL, NULL, "ttgir", OPT_CHOICE, stages, 0, 0, "STAGE",
	  "the IR stage to compare (cubin: sizes and hashes, not a text diff)" },
	{ "stat", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "instead of the diffs, one line per variant that differs: its status, the lines "
	  "added and removed, both sizes (git diff --stat's idea)" },
	{ "format", NULL, NULL, "table", OPT_CHOICE, output_formats, 0, 0, "FORMAT",
	  "with --stat, what standard output gets: table, json (schema_version 1, every "
	  "variant), csv (every variant) or md (Markdown for a pull request)" },
	{ "wide", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "with --stat, never cut the variant column to the terminal's width" },
	{ "color", NULL, "FLAGGEMS_PERF_COLOR", "auto", OPT_CHOICE, colors, 0, 0, "WHEN",
	  "colour the diff (NO_COLOR honoured)" },
	{ NULL },
};

static const struct cmd_exit layout_exits[] = {
	{ "0", "laid out" },
	{ "2", "bad command line" },
	{ "7", "could not write RUN/ttgir/, or a file could not be read" },
	{ "8", "the path is not a run directory, or the run captured no IR" },
	{ NULL, NULL },
};

static const struct cmd_exit diff_exits[] = {
	{ "0", "no difference" },
	{ "1", "the IR differs: a pair differs or a variant exists on one side only" },
	{ "2", "bad command line" },
	{ "7", "a file could not be read, or standard output not written" },
	{ "8", "no data: a path is not a run directory (nor a batch of runs), or a run "
	       "captured no IR" },
	{ "9", "the runs measured different operators (and no --op names one present in both)" },
	{ NULL, NULL },
};

static const struct cmd_exit fingerprint_exits[] = {
	{ "0", "every run fingerprinted" },
	{ "2", "bad command line" },
	{ "7", "a file could not be read" },
	{ "8", "at least one path is not a run (nor a batch of runs) or had no IR" },
	{ NULL, NULL },
};

static const struct cmd_doc layout_doc = {
	.name = "layout",
	.summary = "(re-)build RUN/ttgir/ from RUN/ir/ and say what it holds",
	.synopsis = "RUN",
	.about = "Lay out the IR a run staged (RUN/ir/) as RUN/ttgir/<shape>/<kernel>/\n"
		 "<variant>.<stage> with index.tsv and naming.md, beside the old layout, then\n"
		 "swapped in: the same inputs give the same tree, byte for byte.\n",
	.exits = layout_exits,
	.positional = CMD_ARG_DIR,
};

static const struct cmd_doc diff_doc = {
	.name = "diff",
	.summary = "pair the variants of two runs and show what differs",
	.synopsis = "RUN_A RUN_B [--op OP] [--shape S] [--stage STAGE] [--color WHEN]\n"
		    "RUN_A RUN_B --stat [--format table|json|csv|md] [options]",
	.about = "Pair the laid-out variants of two runs by <shape>/<kernel>/<variant>; list\n"
		 "those on one side only, show a unified diff (diff -u) of each pair whose files\n"
		 "differ (cubin: sizes and XXH3 hashes), end with a one-line summary. With\n"
		 "--stat, one line per variant that differs instead, in --format.\n",
	.opts = diff_option_defs,
	.exits = diff_exits,
	.positional = CMD_ARG_DIR,
};

static const struct cmd_doc fingerprint_doc = {
	.name = "fingerprint",
	.summary = "one XXH3-64 of every stage file of a run: equal means byte-identical IR",
	.synopsis = "RUN [RUN...]",
	.about = "One XXH3-64 over the relative paths and contents of every stage file under\n"
		 "RUN/ttgir/: prints <op> TAB <hex> TAB <files>; a batch directory (runs one or\n"
		 "two levels down) gives one line per run.\n",
	.exits = fingerprint_exits,
	.positional = CMD_ARG_DIR,
};

static const struct cmd_doc *const ir_subs[] = { &layout_doc, &diff_doc, &fingerprint_doc, NULL };

static const struct cmd_exit ir_exits[] = {
	{ "0", "done; (diff) no difference" },
	{ "1", "(diff) the IR differs" },
	{ "2", "bad command line" },
	{ "7", "a file could not be written or read" },
	{ "8", "no data: not a run directory (nor a batch of runs), or no IR" },
	{ "9", "(diff) the runs measured different operators" },
	{ NULL, NULL },
};

const struct cmd_doc ir_doc = {
	.name = "ir",
	.summary = "lay out, diff and fingerprint the IR (ttgir, ptx, ...) of runs",
	.about = "The IR of a run: RUN/ttgir/<shape>/<kernel>/<variant>.<stage> (ttir, ttgir,\n"
		 "llir, ptx, cubin), index.tsv (every compiled variant, autotune sweep losers too)\n"
		 "and naming.md (the legend of the names), laid out from the ir/ staging of\n"
		 "`zlb run`. diff and fingerprint read a run's ttgir/; a run that has ir/ staging\n"
		 "but no ttgir/ (an older run) is laid out on the fly in a temporary directory,\n"
		 "the run itself is not changed.\n",
	.exits = ir_exits,
	.subs = ir_subs,
};

/* --help or --version among a sub-command's arguments: its exit status, or -1. */
static int help_or_version(int argc, char **argv, const char *path, const struct cmd_doc *doc)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return cli_help(path, doc);
		if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version"))
			return cli_version();
	}
	return -1;
}

/* ---- layout ---------------------------------------------------------------- */

static int ir_layout_cmd(int argc, char **argv)
{
	struct ir_layout_report rep;
	const char *run = NULL;
	char *tree;
	int r;

	if ((r = help_or_version(argc, argv, "ir layout", &layout_doc)) >= 0)
		return r;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1])
			return usage_error("ir layout", "unknown option '%s'", argv[i]);
		if (run)
			return usage_error("ir layout", "takes one run directory; '%s' is one too many",
					   argv[i]);
		run = argv[i];
	}
	if (!run)
		return usage_error("ir layout", "which run? zlb ir layout RUN");
	if (!is_dir(run)) {
		fprintf(stderr, "zlb ir layout: '%s' is not a directory\n", run);
		return ZLB_EXIT_NO_DATA;
	}
	if (!ir_is_run_dir(run)) {
		fprintf(stderr, "zlb ir layout: '%s' is not a run directory (it has no "
			"run_identity.json, results.jsonl, ir/ or ttgir/)\n", run);
		return ZLB_EXIT_NO_DATA;
	}
	r = ir_layout_build(run, &rep);
	if (r < 0) {
		fprintf(stderr, "zlb ir layout: %s\n", last_error());
		return ZLB_EXIT_IO;
	}
	if (r == 1) {
		fprintf(stderr, "zlb ir layout: %s\n", rep.why);
		return ZLB_EXIT_NO_DATA;
	}
	tree = path_join(run, IR_TREE_DIR);
	printf("%s: %zu variant%s (%zu file%s) in %zu shape%s, %zu kernel%s; "
	       "%zu sweep loser%s and %zu other unlaunched variant%s listed in %s\n",
	       tree, rep.variants, PLURAL(rep.variants), rep.files, PLURAL(rep.files), rep.shapes,
	       PLURAL(rep.shapes), rep.kernels, PLURAL(rep.kernels), rep.sweep_losers,
	       PLURAL(rep.sweep_losers), rep.unlaunched, PLURAL(rep.unlaunched), IR_INDEX_FILE);
	if (rep.no_files)
		printf("note: %zu launched variants had no staged file (listed in %s, "
		       "nothing to keep)\n", rep.no_files, IR_INDEX_FILE);
	if (rep.unattributed)
		printf("note: %zu launches could not be tied to a compiled variant (no hash) "
		       "and are not laid out\n", rep.unattributed);
	if (rep.skipped_lines)
		printf("note: %zu lines of the run's .jsonl files did not parse and were "
		       "skipped\n", rep.skipped_lines);
	if (rep.refused_files)
		printf("note: %zu staged files were refused (a symbolic link, or not a regular "
		       "file): zlb follows no link inside a run; they are not laid out\n",
		       rep.refused_files);
	free(tree);
	return ZLB_EXIT_OK;
}

/* ---- diff ------------------------------------------------------------------ */

/* The one run of side (a run or a batch directory) to compare. */
static int pick_run(const char *side, const char *path, const char *op, char **run,
		    char **run_op)
{
	struct strvec runs = STRVEC_INIT, ops = STRVEC_INIT;
	struct strbuf list = STRBUF_INIT;
	int found, matches = 0, rc = ZLB_EXIT_OK;

	*run = *run_op = NULL;
	if (!is_dir(path)) {
		fprintf(stderr, "zlb ir diff: %s '%s' is not a directory\n", side, path);
		return ZLB_EXIT_NO_DATA;
	}
	found = ir_find_runs(path, &runs);
	if (found <= 0) {
		fprintf(stderr, "zlb ir diff: %s '%s' is not a run directory (no run_identity.json, "
			"results.jsonl, ir/ or ttgir/), nor a batch holding runs\n", side, path);
		strvec_clear(&runs);
		return ZLB_EXIT_NO_DATA;
	}
	for (size_t i = 0; i < runs.nr; i++) {
		char *o = ir_run_op(runs.v[i]);
		strvec_push(&ops, o);
		strbuf_addf(&list, "%s%s", i ? ", " : "", o);
		if (op && !strcmp(o, op)) {
			matches++;
			free(*run);
			*run = xstrdup(runs.v[i]);
		}
		free(o);
	}
	if (op) {
		if (!matches) {
			fprintf(stderr, "zlb ir diff: %s '%s' has no run of operator '%s' (it has: %s)\n",
				side, path, op, list.buf);
			rc = ZLB_EXIT_OP_MISMATCH;
		} else if (matches > 1) {
			fprintf(stderr, "zlb ir diff: %s '%s' holds %d runs of '%s'; name one run "
				"directory instead\n", side, path, matches, op);
			rc = ZLB_EXIT_USAGE;
		} else {
			*run_op = xstrdup(op);
		}
	} else if (runs.nr > 1) {
		fprintf(stderr, "zlb ir diff: %s '%s' holds %zu runs (%s); choose one with --op\n",
			side, path, runs.nr, list.buf);
		rc = ZLB_EXIT_USAGE;
	} else {
		*run = xstrdup(runs.v[0]);
		*run_op = xstrdup(ops.v[0]);
	}
	if (rc) {
		free(*run);
		free(*run_op);
		*run = *run_op = NULL;
	}
	strvec_clear(&runs);
	strvec_clear(&ops);
	strbuf_release(&list);
	return rc;
}

/* --stat: the variants that differ, in the format asked for (files first: there are none). */
static int diff_stat(const struct ir_view *view, char *const *run, const struct ir_diff_opts *o,
		     enum output_format format, size_t width, int *differs)
{
	struct ir_diff_stat st;
	struct strbuf out = STRBUF_INIT;

	if (ir_diff_stat_trees(view[0].tree, view[1].tree, o, &st)) {
		/* What it reads is the runs' (their index and stage files): bad data. */
		fprintf(stderr, "zlb ir diff: %s\n", last_error());
		ir_diff_stat_release(&st);
		return ZLB_EXIT_NO_DATA;
	}
	switch (format) {
	case OUTPUT_TABLE:
		strbuf_addf(&out, "A: %s\nB: %s\n", run[0], run[1]);
		ir_diff_stat_table(&st, width, o->color, &out);
		break;
	case OUTPUT_JSON: {
		json_t *j = ir_diff_stat_json(&st, run[0], run[1]);

		output_json(&out, j);
		json_decref(j);
		break;
	}
	case OUTPUT_CSV:
		ir_diff_stat_csv(&st, &out);
		break;
	case OUTPUT_MD:
		ir_diff_stat_md(&st, run[0], run[1], &out);
		break;
	}
	*differs = st.sum.differing || st.sum.only_a || st.sum.only_b;
	output_stdout(&out);
	strbuf_release(&out);
	ir_diff_stat_release(&st);
	return ZLB_EXIT_OK;
}

/*
 * Runs A and B (pos's two paths, narrowed by --op), of one operator and
 * both with IR, opened into view; the exit code when they are not.
 */
static int open_runs(const struct strvec *pos, const char *op, char **run, char **run_op,
		     struct ir_view *view)
{
	int rc = ZLB_EXIT_OK;

	for (int k = 0; k < 2 && !rc; k++)
		rc = pick_run(k ? "B" : "A", pos->v[k], op, &run[k], &run_op[k]);
	if (rc)
		return rc;
	if (strcmp(run_op[0], run_op[1])) {
		fprintf(stderr, "zlb ir diff: the runs measured different operators: A is '%s' (%s), "
			"B is '%s' (%s); there is no IR to pair\n",
			run_op[0], run[0], run_op[1], run[1]);
		return ZLB_EXIT_OP_MISMATCH;
	}
	for (int k = 0; k < 2 && !rc; k++) {
		if (ir_view_open(run[k], &view[k])) {
			fprintf(stderr, "zlb ir diff: %s\n", last_error());
			rc = ZLB_EXIT_IO;
		} else if (!view[k].has_ir) {
			fprintf(stderr, "zlb ir diff: %s: %s\n", k ? "B" : "A", view[k].why);
			rc = ZLB_EXIT_NO_DATA;
		}
	}
	return rc;
}

/* The unified diff and its summary line; the exit code says whether the runs differ. */
static int diff_unified(const struct ir_view *view, char *const *run, const struct ir_diff_opts *o)
{
	struct ir_diff_summary s;
	struct strbuf line = STRBUF_INIT;

	printf("A: %s\nB: %s\n", run[0], run[1]);
	if (ir_diff_trees(view[0].tree, view[1].tree, o, stdout, &s)) {
		/* What it reads is the runs' (their index and stage files): bad data. */
		fflush(stdout);
		fprintf(stderr, "zlb ir diff: %s\n", last_error());
		return ZLB_EXIT_NO_DATA;
	}
	if (o->shape && !s.identical && !s.differing && !s.only_a && !s.only_b && !s.without_stage) {
		fflush(stdout);
		fprintf(stderr, "zlb ir diff: neither run has a variant under shape '%s'\n", o->shape);
		return ZLB_EXIT_NO_DATA;
	}
	ir_diff_summary_line(&s, o->stage, &line);
	printf("ir diff: %s\n", line.buf);
	strbuf_release(&line);
	return s.differing || s.only_a || s.only_b ? ZLB_EXIT_DIFFERENT : ZLB_EXIT_OK;
}

static int ir_diff_cmd(int argc, char **argv)
{
	struct opt_values v = { 0 };
	struct strvec pos = STRVEC_INIT;
	const char *op, *shape, *stage, *color;
	char *run[2] = { NULL, NULL }, *run_op[2] = { NULL, NULL };
	struct ir_view view[2];
	struct ir_diff_opts o = { 0 };
	enum output_format format;
	int want, rc = ZLB_EXIT_OK, stat, differs = 0;

	memset(view, 0, sizeof(view));
	/* the colour's variable is the table's default, as for every other command */
	if (options_parse(diff_option_defs, argc, argv, environ, &v, &pos, &want)) {
		rc = usage_error("ir diff", "%s", last_error());
		goto out;
	}
	if (want != OPT_WANT_NOTHING) {
		rc = want == OPT_WANT_HELP ? cli_help("ir diff", &diff_doc) : cli_version();
		goto out;
	}
	op = opt_get(diff_option_defs, &v, "op");
	shape = opt_get(diff_option_defs, &v, "shape");
	stage = opt_get(diff_option_defs, &v, "stage");
	color = opt_get(diff_option_defs, &v, "color");
	stat = opt_get(diff_option_defs, &v, "stat") != NULL;
	format = output_format_of(opt_get(diff_option_defs, &v, "format"));
	if (pos.nr < 2) {
		rc = usage_error("ir diff", "compares two run directories: zlb ir diff RUN_A RUN_B");
		goto out;
	}
	if (pos.nr > 2) {
		rc = usage_error("ir diff", "compares two runs; '%s' is a third", pos.v[2]);
		goto out;
	}
	if (!stat && (format != OUTPUT_TABLE || opt_get(diff_option_defs, &v, "wide"))) {
		rc = usage_error("ir diff", "--format and --wide are for --stat (the unified diff "
				 "is text)");
		goto out;
	}
	if (op && !*op) {
		rc = usage_error("ir diff", "--op needs an operator name");
		goto out;
	}
	if (shape && !*shape) {
		rc = usage_error("ir diff", "--shape needs a shape directory name");
		goto out;
	}

	if ((rc = open_runs(&pos, op, run, run_op, view)))
		goto out;

	o.stage = stage;
	o.shape = shape;
	o.color = (!stat || format == OUTPUT_TABLE) && term_color_wanted(1, color);
	o.label_a = "a";
	o.label_b = "b";
	if (stat) {
		rc = diff_stat(view, run, &o, format, opt_get(diff_option_defs, &v, "wide") ? 0 :
			       term_columns(STDOUT_FILENO), &differs);
		if (!rc && differs)
			rc = ZLB_EXIT_DIFFERENT;
		goto out;
	}
	rc = diff_unified(view, run, &o);
out:
	for (int k = 0; k < 2; k++) {
		ir_view_close(&view[k]);
		free(run[k]);
		free(run_op[k]);
	}
	opt_values_release(&v);
	strvec_clear(&pos);
	return rc;
}

/* ---- fingerprint ------------------------------------------------------------- */

/* Labels of the runs of one argument: the op, or the relative path when ops repeat. */
static void run_labels(const char *root, const struct strvec *runs, struct strvec *labels)
{
	struct strvec ops = STRVEC_INIT;
	char *abs = path_absolute(root);

	for (size_t i = 0; i < runs->nr; i++) {
		char *o = ir_run_op(runs->v[i]);
		strvec_push(&ops, o);
		free(o);
	}
	for (size_t i = 0; i < runs->nr; i++) {
		int dup = 0;
		const char *rel;
		for (size_t j = 0; j < ops.nr && !dup; j++)
			dup = j != i && !strcmp(ops.v[i], ops.v[j]);
		if (dup && skip_prefix(runs->v[i], abs, &rel) && *rel == '/')
			strvec_push(labels, rel + 1);
		else
			strvec_push(labels, ops.v[i]);
	}
	free(abs);
	strvec_clear(&ops);
}

static int ir_fingerprint_cmd(int argc, char **argv)
{
	int rc = ZLB_EXIT_OK, nargs = 0;

	if ((rc = help_or_version(argc, argv, "ir fingerprint", &fingerprint_doc)) >= 0)
		return rc;
	rc = ZLB_EXIT_OK;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1])
			return usage_error("ir fingerprint", "unknown option '%s'", argv[i]);
		nargs++;
	}
	if (!nargs)
		return usage_error("ir fingerprint", "which runs? zlb ir fingerprint RUN [RUN...]");

	for (int i = 1; i < argc; i++) {
		struct strvec runs = STRVEC_INIT, labels = STRVEC_INIT;
		int found;

		if (!is_dir(argv[i])) {
			printf("%s\t-\t0\tnot a directory\n", argv[i]);
			rc = ZLB_EXIT_NO_DATA;
			continue;
		}
		found = ir_find_runs(argv[i], &runs);
		if (found <= 0) {
			printf("%s\t-\t0\tnot a run directory, nor a batch holding runs\n", argv[i]);
			rc = ZLB_EXIT_NO_DATA;
			strvec_clear(&runs);
			continue;
		}
		run_labels(argv[i], &runs, &labels);
		for (size_t k = 0; k < runs.nr; k++) {
			struct ir_view v;
			struct ir_fingerprint fp;

			if (ir_view_open(runs.v[k], &v)) {
				printf("%s\t-\t0\terror: %s\n", labels.v[k], last_error());
				if (rc == ZLB_EXIT_OK)
					rc = ZLB_EXIT_IO;
				continue;
			}
			if (!v.has_ir) {
				printf("%s\t-\t0\t%s\n", labels.v[k], v.why);
				rc = ZLB_EXIT_NO_DATA;
			} else if (ir_fingerprint_tree(v.tree, &fp)) {
				printf("%s\t-\t0\terror: %s\n", labels.v[k], last_error());
				if (rc == ZLB_EXIT_OK)
					rc = ZLB_EXIT_IO;
			} else if (!fp.files) {
				printf("%s\t-\t0\tno IR: no launched variant has a stage file in %s\n",
				       labels.v[k], runs.v[k]);
				rc = ZLB_EXIT_NO_DATA;
			} else {
				printf("%s\t%016llx\t%zu\n", labels.v[k],
				       (unsigned long long)fp.hash, fp.files);
			}
			ir_view_close(&v);
		}
		strvec_clear(&runs);
		strvec_clear(&labels);
	}
	return rc;
}

int cmd_ir(int argc, char **argv)
{
	int rc;

	if (argc < 2) {
		usage_error("ir", "which one? zlb ir layout|diff|fingerprint ...");
		return ZLB_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))
		return cli_help("ir", &ir_doc);
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version"))
		return cli_version();
	/* Library errors are reported once, here, with the command's name. */
	set_error_routine(error_quiet);
	if (!strcmp(argv[1], "layout"))
		rc = ir_layout_cmd(argc - 1, argv + 1);
	else if (!strcmp(argv[1], "diff"))
		rc = ir_diff_cmd(argc - 1, argv + 1);
	else if (!strcmp(argv[1], "fingerprint"))
		rc = ir_fingerprint_cmd(argc - 1, argv + 1);
	else
		rc = usage_error("ir", "'%s' is not an ir command (layout, diff, fingerprint)", argv[1]);
	return rc;
}
