/*
 * zlb compare: build B against build A, row by row (src/compare/compare.h for
 * the flow, src/compare/stats_compare.h for the statistics).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/usage.h"
#include "compare/compare.h"
#include "compare/compare_report.h"
#include "compare/compare_run.h"
#include "lib/junit.h"
#include "lib/reporter.h"
#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/options.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "lib/term.h"

static const char *const colors[] = { "auto", "always", "never", NULL };

/*
 * zlb compare's options. parse_compare_args reads their values itself
 * (repeatable --a/--b, percentages written "0.5%"); the kinds here check
 * what they can and drive the help and the completion.
 */
static const struct opt_def compare_option_defs[] = {
	{ "a", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "a directory of side A (repeatable), instead of A B or A... -- B..." },
	{ "b", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "a directory of side B (repeatable)" },
	{ "threshold", NULL, NULL, "1", OPT_STRING, NULL, 0, 0, "PCT",
	  "the band of no practical difference, in percent (\"0.5\" and \"0.5%\" mean 0.5%)" },
	{ "fdr", NULL, NULL, "0.05", OPT_STRING, NULL, 0, 0, "Q",
	  "false discovery rate across rows" },
	{ "drift-floor", NULL, NULL, "0.1", OPT_STRING, NULL, 0, 0, "PCT",
	  "assumed process-to-process drift of one run's centre beyond placement, in percent: "
	  "a single round's, and with rounds pooled with their scatter (0 trusts samples and "
	  "probes alone, which false-flags)" },
	{ "bootstrap", NULL, NULL, "2000", OPT_STRING, NULL, 0, 0, "N",
	  "bootstrap replicates per row (0: the t interval only; else 100 to 10000000)" },
	{ "seed", NULL, NULL, "1", OPT_STRING, NULL, 0, 0, "N",
	  "the bootstrap's seed: same input, same output" },
	{ "format", NULL, NULL, "table", OPT_CHOICE, output_formats, 0, 0, "FORMAT",
	  "what standard output gets: table (for a terminal), json (compare.json's "
	  "document, schema_version 1), csv (compare.csv's lines) or md (Markdown for a pull "
	  "request)" },
	{ "out", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "also write DIR/compare.csv and DIR/compare.json, every row, before anything is "
	  "printed (DIR is created); without it no file is written" },
	{ "junit", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "FILE",
	  "also write a JUnit XML report to FILE: one test case per row, a gems row SLOWER "
	  "a failure, EXCLUDED and unpaired rows skipped; a comparison refused (calibers, "
	  "nothing to pair) one failed case" },
	{ "only-changed", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "show only the rows whose gems verdict is SLOWER or FASTER (standard output; "
	  "--out's files keep every row)" },
	{ "sort", NULL, NULL, NULL, OPT_CHOICE, compare_sort_names, 0, 0, "KEY",
	  "order the rows: ratio (gems B/A, slowest first), q (most significant first) or "
	  "name (op, dtype, shape); default: as paired" },
	{ "wide", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "never cut or wrap the table to the terminal's width (a pipe or a file is never "
	  "cut: the width is the terminal's, else $COLUMNS)" },
	{ "allow-caliber-mismatch", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "compare even when calibers differ (the differences are still printed)" },
	{ "elasticity-from", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "rounds that read no clock elasticity take the s that the runs under DIR read for "
	  "the same row (zlb run/batch --clock-elasticity, on the sides' GPU), and the "
	  "sides' clocks are corrected for by it instead of widening the interval" },
	{ "color", NULL, "FLAGGEMS_PERF_COLOR", "auto", OPT_CHOICE, colors, 0, 0, "WHEN",
	  "colour the table (NO_COLOR honoured)" },
	{ NULL },
};

static const struct cmd_exit compare_exits[] = {
	{ "0", "compared; no gems row SLOWER beyond the threshold" },
	{ "1", "a gems row is SLOWER: significant after FDR, beyond --threshold" },
	{ "2", "bad command line, or an --elasticity-from that gives no s (no run, no s read, "
	       "another GPU)" },
	{ "4", "calibers differ, a run has no identity, or record-vs-record (without "
	       "--allow-caliber-mismatch); nothing compared" },
	{ "7", "compare.csv, compare.json or the JUnit report could not be written, or "
	       "standard output (a full disk, a closed pipe): the files are written first" },
	{ "8", "nothing to compare: a path is not a directory or holds no run, a run has no "
	       "results.jsonl, or no row is SUCCESS on both sides" },
	{ NULL, NULL },
};

const struct cmd_doc compare_doc = {
	.name = "compare",
	.summary = "is build B faster or slower than A? rows, intervals, verdicts",
	.synopsis = "[options] A B\n"
		    "[options] A1 A2 ... -- B1 B2 ...\n"
		    "[options] --a DIR [--a DIR ...] --b DIR [--b DIR ...]",
	.about =
		"Is build B faster or slower than build A? Each DIR is a run directory of\n"
		"`zlb run` (run_identity.json + results.jsonl), or a directory holding runs one\n"
		"or two levels down (rounds, a batch of operators, or both). Every run is one\n"
		"round (process) of its side; a row gets one round from each run that measured\n"
		"it. `--` separates A's directories from B's (options may stand on either side).\n"
		"\n"
		"First the identities: every caliber field must agree across all runs of both\n"
		"sides; a difference, or a run without run_identity.json, prints\n"
		"`!!! [caliber] ...` on stderr and stops (exit 4). autotune_mode may differ\n"
		"across sides (A records, B replays A's configs); record on both sides is\n"
		"refused by name. Recording on a shared tuner cache is warned about.\n"
		"\n"
		"Then the rows, paired by op, op_name, dtype and Size Detail, SUCCESS on both\n"
		"sides. Per row: the ratio B/A of the gems latency (geometric mean of the\n"
		"rounds' medians) with a 95% interval (hierarchical bootstrap over rounds and\n"
		"samples, hulled with the t interval), a test (Student's t on log round-centres\n"
		"for equal rounds, Welch's t otherwise; Mann-Whitney U and the drift floor for\n"
		"one round a side), Benjamini-Hochberg across all rows, and a verdict:\n"
		"  SLOWER / FASTER  significant after FDR and the whole interval beyond the band\n"
		"  SAME             the whole interval within +-threshold\n"
		"  UNSURE           anything else; with fewer rounds than its noise asks for\n"
		"                   it says `needs N rounds` a side (a plan: ~9 in 10 such rows\n"
		"                   then read SAME if unchanged; compare.json rounds_needed)\n"
		"  EXCLUDED         a side's graph held no kernel node (GRAPH_NO_KERNELS): no\n"
		"                   measurement, no verdict, outside the FDR family\n"
		"The torch latency gets the same treatment as a control: a Triton change leaves\n"
		"it alone, so its verdicts show the false-flag background.\n"
		"\n"
		"Standard output gets the report in --format (the table fits the terminal: the\n"
		"op and shape columns are cut, the notes wrapped; --wide keeps every character);\n"
		"diagnostics (caliber problems, warnings, refusals) go to stderr. Files are\n"
		"written only where asked (--out DIR, --junit FILE), and before anything is\n"
		"printed, so a reader that stops early (| head) loses none of them.\n",
	.opts = compare_option_defs,
	.exits = compare_exits,
	.positional = CMD_ARG_DIR,
};

/* A percentage ("1", "0.5", "0.5%") as a fraction in [0, max). */
static int parse_percent(const char *s, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno)
		return -1;
	if (*end == '%')
		end++;
	if (*end || !(v >= 0) || v >= max)
		return -1;
	*out = v / 100;
	return 0;
}

static int parse_fraction(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !(v > 0 && v < 1))
		return -1;
	*out = v;
	return 0;
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end || errno || v > max)
		return -1;
	*out = v;
	return 0;
}

/*
 * DIR/compare.csv and DIR/compare.json, every row. Returns 0, or -1 having
 * said why. *json_text: the document written, for standard output to reuse.
 */
static int write_files(const struct compare *c, const char *out_dir, int allowed, int code,
		       char **json_text)
{
	char *csv = path_join(out_dir, COMPARE_CSV), *js = path_join(out_dir, COMPARE_JSON);
	json_t *j = compare_to_json(c, allowed, code, NULL);
	struct strbuf text = STRBUF_INIT;
	int r = 0;

	/* the JSON text (22 MB for two whole-suite batches) is made on every core */
	output_json(&text, j);
	json_decref(j);
	if (compare_write_csv(c, csv) || write_file_atomic(js, text.buf, text.len)) {
		fprintf(stderr, "zlb compare: %s\n", last_error());
		r = -1;
	}
	*json_text = strbuf_detach(&text, NULL);
	free(csv);
	free(js);
	return r;
}

static int write_junit(const struct compare *c, const char *path, enum compare_stage stage,
		       int code)
{
	struct junit_suite suite;
	int r;

	char *dir = path_dirname(path);

	junit_init(&suite, "zlb compare");
	compare_junit(c, stage != COMPARE_DONE, stage == COMPARE_STOPPED_CALIBER ?
		      "not compared: the calibers differ (exit 4)" :
		      code == ZLB_EXIT_NO_DATA ? "nothing to compare (exit 8)" : NULL, &suite);
	/* (library errors are quiet in zlb compare: each is said once, in context) */
	r = mkdir_p(dir, 0777);
	if (!r)
		r = junit_write(&suite, path);
	if (r)
		fprintf(stderr, "zlb compare: the JUnit report %s was not written: %s\n", path,
			last_error());
	junit_release(&suite);
	free(dir);
	return r;
}

/* What zlb compare's command line says. */
struct compare_args {
	struct compare_opts opts;
	struct strvec paths[2];       /* each side's directories */
	struct strvec pos_a, pos_b;   /* positionals before and after '--' */
	const char *out_dir, *junit, *color_opt, *elasticity_from;
	enum output_format format;
	struct compare_view view;
	int allow, dashdash, flagged_sides, wide;
};

/* Refuse with a usage error from a step of cmd_compare (exit 2). */
#define REFUSE(...) return usage_error("compare", __VA_ARGS__)

/* One option d with its value v into ca: 0 or a usage error. */
static int take_option(struct compare_args *ca, const struct opt_def *d, const char *v)
{
	const char *n = d->name;
	unsigned long long u;

	if (!strcmp(n, "a") || !strcmp(n, "b")) {
		strvec_push(&ca->paths[n[0] == 'b'], v);
		ca->flagged_sides = 1;
	} else if (!strcmp(n, "threshold")) {
		if (parse_percent(v, 100, &ca->opts.threshold))
			REFUSE("--threshold takes a percentage in [0, 100), e.g. 1 or 0.5%%; got '%s'",
			       v);
	} else if (!strcmp(n, "drift-floor")) {
		if (parse_percent(v, 100, &ca->opts.drift_floor))
			REFUSE("--drift-floor takes a percentage in [0, 100), e.g. 0.3; got '%s'", v);
	} else if (!strcmp(n, "fdr")) {
		if (parse_fraction(v, &ca->opts.fdr))
			REFUSE("--fdr takes a level in (0, 1), e.g. 0.05; got '%s'", v);
	} else if (!strcmp(n, "bootstrap")) {
		if (parse_uint(v, 10000000, &u) || (u && u < 100))
			REFUSE("--bootstrap takes 0 or a count from 100 to 10000000; got '%s'", v);
		ca->opts.nboot = (unsigned)u;
	} else if (!strcmp(n, "seed")) {
		if (parse_uint(v, UINT64_MAX, &u))
			REFUSE("--seed takes a non-negative integer; got '%s'", v);
		ca->opts.seed = u;
	} else if (!strcmp(n, "format")) {
		ca->format = output_format_of(v);
	} else if (!strcmp(n, "out")) {
		ca->out_dir = v;
	} else if (!strcmp(n, "junit")) {
		if (!*v)
			REFUSE("--junit needs a file name");
		ca->junit = v;
	} else if (!strcmp(n, "only-changed")) {
		ca->view.only_changed = opt_parse_bool(v) == 1;
	} else if (!strcmp(n, "sort")) {
		for (size_t k = 0; compare_sort_names[k]; k++)
			if (!strcmp(v, compare_sort_names[k]))
				ca->view.sort = (enum compare_sort)(k + 1);
	} else if (!strcmp(n, "wide")) {
		ca->wide = opt_parse_bool(v) == 1;
	} else if (!strcmp(n, "elasticity-from")) {
		ca->elasticity_from = v;
	} else if (!strcmp(n, "allow-caliber-mismatch")) {
		ca->allow = opt_parse_bool(v) == 1;
	} else if (!strcmp(n, "color")) {
		ca->color_opt = v;
	} else {
		BUG("zlb compare's option --%s is not read", n);
	}
	return 0;
}

/* The options, into ca; the directories, as given. *help: enum opt_want. */
static int parse_compare_args(struct compare_args *ca, int argc, char **argv, int *help)
{
	for (int i = 1; i < argc; i++) {
		const char *v = NULL, *a = argv[i];
		const struct opt_def *d = NULL;
		enum opt_arg k;

		if (!strcmp(a, "--")) {
			if (ca->dashdash)
				REFUSE("'--' may separate A from B only once");
			ca->dashdash = 1;
			continue;
		}
		k = opt_next(compare_option_defs, argc, argv, &i, &d, &v);
		switch (k) {
		case OPT_ARG_HELP:
		case OPT_ARG_VERSION:
			*help = k == OPT_ARG_HELP ? OPT_WANT_HELP : OPT_WANT_VERSION;
			return 0;
		case OPT_ARG_ERROR:
			REFUSE("%s", last_error());
		case OPT_ARG_OPTION:
			if (take_option(ca, d, v))
				return ZLB_EXIT_USAGE;
			continue;
		case OPT_ARG_OTHER:
			break;
		}
		if (a[0] == '-' && a[1]) {
			opt_unknown_error(compare_option_defs, a);
			REFUSE("%s", last_error());
		}
		strvec_push(ca->dashdash ? &ca->pos_b : &ca->pos_a, a);
	}
	return 0;
}

/* Which directories are A's and which are B's: --a/--b, A... -- B..., or A B. */
static int pick_sides(struct compare_args *ca)
{
	if (!term_color_setting_valid(ca->color_opt))
		ca->color_opt = NULL;

	/* the sides */
	if (ca->flagged_sides) {
		if (ca->pos_a.nr || ca->pos_b.nr || ca->dashdash)
			REFUSE("give the sides either with --a/--b or as A B / A... -- B..., "
				   "not both");
		if (!ca->paths[0].nr || !ca->paths[1].nr)
			REFUSE("both --a and --b are needed");
	} else if (ca->dashdash) {
		if (!ca->pos_a.nr || !ca->pos_b.nr)
			REFUSE("'--' needs A's directories before it and B's after it");
		strvec_pushv(&ca->paths[0], (const char *const *)ca->pos_a.v);
		strvec_pushv(&ca->paths[1], (const char *const *)ca->pos_b.v);
	} else {
		if (ca->pos_a.nr != 2)
			REFUSE(ca->pos_a.nr < 2 ? "compare needs A and B" :
				   "more than two directories: separate A's rounds from B's "
				   "with '--' (A1 A2 -- B1 B2) or use --a/--b");
		strvec_push(&ca->paths[0], ca->pos_a.v[0]);
		strvec_push(&ca->paths[1], ca->pos_a.v[1]);
	}
	strvec_clear(&ca->pos_a);
	strvec_clear(&ca->pos_b);
	return 0;
}

/* What standard output gets in the format asked for, once the files are written. */
static void render_stdout(const struct compare *c, const struct compare_args *ca, int rc,
			  const char *json_text, const struct buffer_reporter *buf,
			  struct strbuf *out)
{
	const struct compare_view *v = &ca->view;
	int whole = !v->only_changed && v->sort == COMPARE_SORT_NONE;

	switch (ca->format) {
	case OUTPUT_TABLE:
		strbuf_add(out, buf->out.buf, buf->out.len);
		if (ca->out_dir)
			strbuf_addf(out, "wrote %s/%s and %s/%s\n", ca->out_dir, COMPARE_CSV,
				    ca->out_dir, COMPARE_JSON);
		break;
	case OUTPUT_JSON:
		if (json_text && whole) {
			strbuf_addstr(out, json_text);
		} else {
			json_t *j = compare_to_json(c, ca->allow, rc, whole ? NULL : v);

			output_json(out, j);
			json_decref(j);
		}
		break;
	case OUTPUT_CSV:
		compare_csv(c, whole ? NULL : v, out);
		break;
	case OUTPUT_MD:
		compare_markdown(c, v, ca->allow && c->caliber_problems.nr, rc, out);
		break;
	}
}

int cmd_compare(int argc, char **argv)
{
	struct compare_args ca = {
		.opts = COMPARE_OPTS_INIT,
		.paths = { STRVEC_INIT, STRVEC_INIT }, .pos_a = STRVEC_INIT, .pos_b = STRVEC_INIT,
		.color_opt = getenv("FLAGGEMS_PERF_COLOR"), .view = COMPARE_VIEW_INIT,
	};
	int help = 0, rc;
	struct compare c;
	struct buffer_reporter buf;
	struct strbuf out = STRBUF_INIT;
	char *json_text = NULL;
	struct compare_run_opts run_opts = {
		.who = "zlb compare",
		.caliber_hint = "--allow-caliber-mismatch compares anyway",
	};
	enum compare_stage stage = COMPARE_STOPPED_ROWS;

	compare_init(&c, &ca.opts);
	buffer_reporter_init(&buf, stderr);
	/* A problem is reported once, in context, with last_error(). */
	set_error_routine(error_quiet);
	rc = parse_compare_args(&ca, argc, argv, &help);
	if (!rc && help) {
		rc = help == OPT_WANT_HELP ? cli_help("compare", &compare_doc) : cli_version();
		goto out;
	}
	if (rc || (rc = pick_sides(&ca)))
		goto out;
	if (ca.out_dir && (rc = output_dir_prepare("compare", ca.out_dir)))
		goto out;

	run_opts.color = ca.format == OUTPUT_TABLE &&
			 term_color_wanted(STDOUT_FILENO, ca.color_opt);
	run_opts.warn_color = term_color_wanted(STDERR_FILENO, ca.color_opt);
	run_opts.allow_caliber = ca.allow;
	run_opts.elasticity_from = ca.elasticity_from;
	run_opts.report_table = ca.format == OUTPUT_TABLE;
	ca.view.width = ca.wide ? 0 : term_columns(STDOUT_FILENO);
	run_opts.view = &ca.view;
	c.opts = ca.opts;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < ca.paths[s].nr; i++) {
			int n = compare_add_path(&c, s, ca.paths[s].v[i]);

			if (n < 0) {
				fprintf(stderr, "zlb compare: %s: '%s' is not a directory\n",
					s ? "B" : "A", ca.paths[s].v[i]);
				rc = ZLB_EXIT_NO_DATA;
				goto out;
			}
			if (!n) {
				fprintf(stderr, "zlb compare: %s: '%s' is not a run directory (no "
					"run_identity.json or results.jsonl) and holds none\n",
					s ? "B" : "A", ca.paths[s].v[i]);
				rc = ZLB_EXIT_NO_DATA;
				goto out;
			}
		}
	if (compare_duplicate_run(&c)) {
		rc = usage_error("compare", "run '%s' is given twice; a run is one round of one side",
			       compare_duplicate_run(&c));
		goto out;
	}

	/*
	 * ZLB_EXIT_NO_DATA, or a report whose outputs are written whatever it
	 * says. Everything for standard output waits in buf until the files
	 * are written: a reader that leaves early (| head) loses no file.
	 */
	rc = compare_run(&c, &run_opts, &buf.r, &stage);
	if (stage == COMPARE_DONE && ca.out_dir &&
	    write_files(&c, ca.out_dir, ca.allow, rc, &json_text))
		rc = ZLB_EXIT_IO;
	if (ca.junit && write_junit(&c, ca.junit, stage, rc) && rc != ZLB_EXIT_REGRESSION)
		rc = ZLB_EXIT_IO;
	if (stage == COMPARE_DONE || ca.format == OUTPUT_TABLE)
		render_stdout(&c, &ca, rc, json_text, &buf, &out);
	output_stdout(&out);
out:
	strvec_clear(&ca.paths[0]);
	strvec_clear(&ca.paths[1]);
	strvec_clear(&ca.pos_a);
	strvec_clear(&ca.pos_b);
	strbuf_release(&out);
	buffer_reporter_release(&buf);
	free(json_text);
	compare_release(&c);
	return rc;
}
