/*
 * zlb ir: the IR a run captured (<run>/ttgir/): lay it out, diff two runs,
 * fingerprint runs.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/usage.h"
#include "lib/error.h"
#include "ir/ir_diff.h"
#include "ir/ir_index.h"
#include "ir/ir_layout.h"
#include "lib/options.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "lib/term.h"

static const char usage_text[] =
	"usage: zlb ir layout RUN\n"
	"       zlb ir diff RUN_A RUN_B [--op OP] [--shape S] [--stage STAGE] [--color WHEN]\n"
	"       zlb ir fingerprint RUN [RUN...]\n"
	"\n"
	"The IR of a run: RUN/ttgir/<shape>/<kernel>/<variant>.<stage> (ttir, ttgir, llir,\n"
	"ptx, cubin), index.tsv (every compiled variant, autotune sweep losers too) and\n"
	"naming.md (the legend of the names), laid out from the ir/ staging of `zlb run`.\n"
	"\n"
	"  layout       (re-)build RUN/ttgir/ from RUN/ir/ and print what it holds\n"
	"  diff         pair the variants of two runs by <shape>/<kernel>/<variant>; list\n"
	"               those on one side only, show a unified diff of each pair whose\n"
	"               files differ, end with a one-line summary\n"
	"      --op OP        the operator to compare (needed when RUN_A/RUN_B are batch\n"
	"                     directories holding several operators)\n"
	"      --shape S      only the shape directory S (e.g. 1024x1024)\n"
	"      --stage STAGE  ttgir (default), ttir, llir, ptx or cubin (cubin: sizes and\n"
	"                     hashes, not a text diff)\n"
	"      --color WHEN   auto (default), always, never; default from\n"
	"                     FLAGGEMS_PERF_COLOR; NO_COLOR honoured\n"
	"  fingerprint  one XXH3-64 over the relative paths and contents of every stage\n"
	"               file under RUN/ttgir/: prints <op> TAB <hex> TAB <files>; a batch\n"
	"               directory (runs one or two levels down) gives one line per run\n"
	"\n"
	"diff and fingerprint read a run's ttgir/; a run that has ir/ staging but no\n"
	"ttgir/ (an older run) is laid out on the fly in a temporary directory, the run\n"
	"itself is not changed.\n"
	"\n"
	"exit codes:\n"
	"  0    done; (diff) no difference\n"
	"  1    (diff) the IR differs: a pair differs or a variant exists on one side only\n"
	"  2    bad command line\n"
	"  7    (layout) could not write RUN/ttgir/, or a file could not be read\n"
	"  8    no data: the path is not a run directory (nor a batch of runs), or a run\n"
	"       captured no IR; (fingerprint) at least one run had no IR\n"
	"  9    (diff) the runs measured different operators (and no --op names one\n"
	"       present in both)\n";

static void usage(FILE *out)
{
	fputs(usage_text, out);
}

static int is_help(const char *s)
{
	return !strcmp(s, "--help") || !strcmp(s, "-h") || !strcmp(s, "help");
}

/* ---- layout ---------------------------------------------------------------- */

static int ir_layout_cmd(int argc, char **argv)
{
	struct ir_layout_report rep;
	const char *run = NULL;
	char *tree;
	int r;

	for (int i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			usage(stdout);
			return ZLB_EXIT_OK;
		}
		if (argv[i][0] == '-' && argv[i][1])
			return usage_error("ir", "unknown option '%s' for layout", argv[i]);
		if (run)
			return usage_error("ir", "layout takes one run directory; '%s' is one too many", argv[i]);
		run = argv[i];
	}
	if (!run)
		return usage_error("ir", "layout needs a run directory");
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
		printf("%s\n", rep.why);
		return ZLB_EXIT_NO_DATA;
	}
	tree = path_join(run, IR_TREE_DIR);
	printf("%s: %zu variants (%zu files) in %zu shapes, %zu kernels; "
	       "%zu sweep losers and %zu other unlaunched variants listed in %s\n",
	       tree, rep.variants, rep.files, rep.shapes, rep.kernels, rep.sweep_losers,
	       rep.unlaunched, IR_INDEX_FILE);
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

static int stage_ok(const char *s)
{
	static const char *const known[] = { "ttgir", "ttir", "llir", "ptx", "cubin", NULL };

	for (int i = 0; known[i]; i++)
		if (!strcmp(s, known[i]))
			return 1;
	return 0;
}

static int ir_diff_cmd(int argc, char **argv)
{
	const char *pos[2] = { NULL, NULL }, *op = NULL, *shape = NULL, *stage = "ttgir";
	const char *color = getenv("FLAGGEMS_PERF_COLOR");
	char *run[2] = { NULL, NULL }, *run_op[2] = { NULL, NULL };
	struct ir_view view[2];
	struct ir_diff_opts o = { 0 };
	struct ir_diff_summary s;
	struct strbuf line = STRBUF_INIT;
	int npos = 0, rc = ZLB_EXIT_OK;

	memset(view, 0, sizeof(view));
	for (int i = 1; i < argc; i++) {
		int t;
		if (is_help(argv[i])) {
			usage(stdout);
			return ZLB_EXIT_OK;
		}
		if ((t = opt_take(argc, argv, &i, "--op", &op)) ||
		    (t = opt_take(argc, argv, &i, "--shape", &shape)) ||
		    (t = opt_take(argc, argv, &i, "--stage", &stage)) ||
		    (t = opt_take(argc, argv, &i, "--color", &color))) {
			if (t < 0)
				return usage_error("ir", "option '%s' needs a value", argv[i]);
			continue;
		}
		if (argv[i][0] == '-' && argv[i][1])
			return usage_error("ir", "unknown option '%s' for diff", argv[i]);
		if (npos == 2)
			return usage_error("ir", "diff compares two runs; '%s' is a third", argv[i]);
		pos[npos++] = argv[i];
	}
	if (npos < 2)
		return usage_error("ir", "diff needs two run directories");
	if (!stage_ok(stage))
		return usage_error("ir", "--stage must be ttgir, ttir, llir, ptx or cubin, not '%s'", stage);
	if (!color || !*color)
		color = "auto";
	if (!term_color_setting_valid(color))
		return usage_error("ir", "--color (or FLAGGEMS_PERF_COLOR) must be auto, always or never, "
				 "not '%s'", color);
	if (op && !*op)
		return usage_error("ir", "--op needs an operator name");
	if (shape && !*shape)
		return usage_error("ir", "--shape needs a shape directory name");

	for (int k = 0; k < 2 && !rc; k++)
		rc = pick_run(k ? "B" : "A", pos[k], op, &run[k], &run_op[k]);
	if (rc)
		goto out;
	if (strcmp(run_op[0], run_op[1])) {
		fprintf(stderr, "zlb ir diff: the runs measured different operators: A is '%s' (%s), "
			"B is '%s' (%s); there is no IR to pair\n",
			run_op[0], run[0], run_op[1], run[1]);
		rc = ZLB_EXIT_OP_MISMATCH;
		goto out;
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
	if (rc)
		goto out;

	o.stage = stage;
	o.shape = shape;
	o.color = term_color_wanted(1, color);
	o.label_a = "a";
	o.label_b = "b";
	printf("A: %s\nB: %s\n", run[0], run[1]);
	fflush(stdout);
	if (ir_diff_trees(view[0].tree, view[1].tree, &o, stdout, &s)) {
		/* What it reads is the runs' (their index and stage files): bad data. */
		fflush(stdout);
		fprintf(stderr, "zlb ir diff: %s\n", last_error());
		rc = ZLB_EXIT_NO_DATA;
		goto out;
	}
	if (shape && !s.identical && !s.differing && !s.only_a && !s.only_b && !s.without_stage) {
		fflush(stdout);
		fprintf(stderr, "zlb ir diff: neither run has a variant under shape '%s'\n", shape);
		rc = ZLB_EXIT_NO_DATA;
		goto out;
	}
	ir_diff_summary_line(&s, stage, &line);
	printf("ir diff: %s\n", line.buf);
	rc = s.differing || s.only_a || s.only_b ? ZLB_EXIT_DIFFERENT : ZLB_EXIT_OK;
out:
	for (int k = 0; k < 2; k++) {
		ir_view_close(&view[k]);
		free(run[k]);
		free(run_op[k]);
	}
	strbuf_release(&line);
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

	for (int i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			usage(stdout);
			return ZLB_EXIT_OK;
		}
		if (argv[i][0] == '-' && argv[i][1])
			return usage_error("ir", "unknown option '%s' for fingerprint", argv[i]);
		nargs++;
	}
	if (!nargs)
		return usage_error("ir", "fingerprint needs at least one run directory");

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
		usage(stderr);
		return ZLB_EXIT_USAGE;
	}
	if (is_help(argv[1])) {
		usage(stdout);
		return ZLB_EXIT_OK;
	}
	/* Library errors are reported once, here, with the command's name. */
	set_error_routine(error_quiet);
	/* A closed pipe (zlb ir diff | head) ends quietly. */
	signal(SIGPIPE, SIG_DFL);
	if (!strcmp(argv[1], "layout"))
		rc = ir_layout_cmd(argc - 1, argv + 1);
	else if (!strcmp(argv[1], "diff"))
		rc = ir_diff_cmd(argc - 1, argv + 1);
	else if (!strcmp(argv[1], "fingerprint"))
		rc = ir_fingerprint_cmd(argc - 1, argv + 1);
	else
		rc = usage_error("ir", "'%s' is not an ir command (layout, diff, fingerprint)", argv[1]);
	fflush(stdout);
	return rc;
}
