/*
 * zlb compare: build B against build A, row by row (src/compare/compare.h for
 * the flow, src/compare/stats_compare.h for the statistics).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/usage.h"
#include "compare/compare.h"
#include "compare/compare_report.h"
#include "compare/compare_run.h"
#include "lib/reporter.h"
#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/options.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "lib/term.h"

static const char usage_text[] =
	"usage: zlb compare [options] A B\n"
	"       zlb compare [options] A1 A2 ... -- B1 B2 ...\n"
	"       zlb compare [options] --a DIR [--a DIR ...] --b DIR [--b DIR ...]\n"
	"\n"
	"Is build B faster or slower than build A? Each DIR is a run directory of\n"
	"`zlb run` (run_identity.json + results.jsonl), or a directory holding runs one\n"
	"or two levels down (rounds, a batch of operators, or both). Every run is one\n"
	"round (process) of its side; a row gets one round from each run that measured\n"
	"it. `--` separates A's directories from B's (options may stand on either side).\n"
	"\n"
	"First the identities: every caliber field must agree across all runs of both\n"
	"sides; a difference, or a run without run_identity.json, prints\n"
	"`!!! [caliber] ...` and stops (exit 4). autotune_mode may differ across sides\n"
	"(A records, B replays A's configs); record on both sides is refused by name.\n"
	"Recording on a shared tuner cache is warned about.\n"
	"\n"
	"Then the rows, paired by op, op_name, dtype and Size Detail, SUCCESS on both\n"
	"sides. Per row: the ratio B/A of the gems latency (geometric mean of the\n"
	"rounds' medians) with a 95% interval (hierarchical bootstrap over rounds and\n"
	"samples, hulled with the t interval), a test (Student's t on log round-centres\n"
	"for equal rounds, Welch's t otherwise; Mann-Whitney U and the drift floor for\n"
	"one round a side), Benjamini-Hochberg across all rows, and a verdict:\n"
	"  SLOWER / FASTER  significant after FDR and the whole interval beyond the band\n"
	"  SAME             the whole interval within +-threshold\n"
	"  UNSURE           anything else\n"
	"  EXCLUDED         a side's graph held no kernel node (GRAPH_NO_KERNELS): no\n"
	"                   measurement, no verdict, outside the FDR family\n"
	"The torch latency gets the same treatment as a control: a Triton change leaves\n"
	"it alone, so its verdicts show the false-flag background.\n"
	"\n"
	"options:\n"
	"  --threshold PCT     the band of no practical difference, in percent (default 1;\n"
	"                      \"0.5\" and \"0.5%\" mean 0.5%)\n"
	"  --fdr Q             false discovery rate across rows (default 0.05)\n"
	"  --drift-floor PCT   assumed process-to-process drift of one run's centre, in\n"
	"                      percent, used when a side has a single round (default 0.3;\n"
	"                      0 trusts within-run samples alone, which false-flags)\n"
	"  --bootstrap N       bootstrap replicates per row (default 2000; 0: t interval only)\n"
	"  --seed N            the bootstrap's seed (default 1): same input, same output\n"
	"  --out DIR           where compare.csv and compare.json go (default: .)\n"
	"  --allow-caliber-mismatch\n"
	"                      compare even when calibers differ (still printed)\n"
	"  --color WHEN        auto (default), always, never; default from\n"
	"                      FLAGGEMS_PERF_COLOR; NO_COLOR honoured\n"
	"\n"
	"exit codes:\n"
	"  0    compared; no gems row SLOWER beyond the threshold\n"
	"  1    a gems row is SLOWER: significant after FDR, beyond --threshold\n"
	"  2    bad command line\n"
	"  4    calibers differ, a run has no identity, or record-vs-record (without\n"
	"       --allow-caliber-mismatch); nothing compared\n"
	"  7    compare.csv or compare.json could not be written\n"
	"  8    nothing to compare: a path is not a directory or holds no run, a run\n"
	"       has no results.jsonl, or no row is SUCCESS on both sides\n";

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

struct dump_job {
	json_t *j;
	char *text;
};

static void *dump_json(void *arg)
{
	struct dump_job *d = arg;

	/* 15 digits: every double this writes reads back as itself, 0.05 stays 0.05 */
	d->text = json_dumps(d->j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	return NULL;
}

static int write_outputs(const struct compare *c, const char *out_dir, int allowed, int code)
{
	char *csv, *js, *text;
	struct strbuf sb = STRBUF_INIT;
	json_t *j;
	int r = 0;

	if (mkdir_p(out_dir, 0777)) {
		fprintf(stderr, "zlb compare: cannot create '%s': %s\n", out_dir, last_error());
		return -1;
	}
	csv = path_join(out_dir, COMPARE_CSV);
	js = path_join(out_dir, COMPARE_JSON);
	j = compare_to_json(c, allowed, code);
	/*
	 * The JSON text (a second for two whole-suite batches) is made on
	 * another core while this one writes the CSV: the dump reads only j.
	 */
	{
		struct dump_job d = { j, NULL };
		pthread_t t;
		int threaded = !pthread_create(&t, NULL, dump_json, &d);
		int csv_failed;

		if (!threaded)
			dump_json(&d);
		csv_failed = compare_write_csv(c, csv);
		if (threaded)
			pthread_join(t, NULL);
		text = d.text;
		strbuf_addstr(&sb, text ? text : "");
		strbuf_addch(&sb, '\n');
		free(text);
		if (csv_failed)
			r = -1;
	}
	if (r || write_file_atomic(js, sb.buf, sb.len)) {
		fprintf(stderr, "zlb compare: %s\n", last_error());
		r = -1;
	} else {
		printf("wrote %s and %s\n", csv, js);
	}
	json_decref(j);
	strbuf_release(&sb);
	free(csv);
	free(js);
	return r;
}

/* What zlb compare's command line says. */
struct compare_args {
	struct compare_opts opts;
	struct strvec paths[2];       /* each side's directories */
	struct strvec pos_a, pos_b;   /* positionals before and after '--' */
	const char *out_dir, *color_opt;
	int allow, dashdash, flagged_sides;
};

/* Refuse with a usage error from a step of cmd_compare (exit 2). */
#define REFUSE(...) return usage_error("compare", __VA_ARGS__)

/* The options, into ca; the directories, as given. */
static int parse_compare_args(struct compare_args *ca, int argc, char **argv, int *help)
{
	for (int i = 1; i < argc; i++) {
		const char *v = NULL, *a = argv[i];
		int m;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			*help = 1;
			return 0;
		}
		if (!strcmp(a, "--")) {
			if (ca->dashdash)
				REFUSE("'--' may separate A from B only once");
			ca->dashdash = 1;
			continue;
		}
		if (!strcmp(a, "--allow-caliber-mismatch")) {
			ca->allow = 1;
			continue;
		}
		m = 0;
		for (int s = 0; s < 2 && !m; s++) {
			m = opt_take(argc, argv, &i, s ? "--b" : "--a", &v);
			if (m < 0)
				REFUSE("%s needs a directory", s ? "--b" : "--a");
			if (m)
				strvec_push(&ca->paths[s], v);
		}
		if (m) {
			ca->flagged_sides = 1;
			continue;
		}
		if ((m = opt_take(argc, argv, &i, "--threshold", &v))) {
			if (m < 0 || parse_percent(v, 100, &ca->opts.threshold))
				REFUSE("--threshold takes a percentage in [0, 100), e.g. 1 or "
					   "0.5%%; got '%s'", m < 0 ? "" : v);
			continue;
		}
		if ((m = opt_take(argc, argv, &i, "--drift-floor", &v))) {
			if (m < 0 || parse_percent(v, 100, &ca->opts.drift_floor))
				REFUSE("--drift-floor takes a percentage in [0, 100), e.g. 0.3; "
					   "got '%s'", m < 0 ? "" : v);
			continue;
		}
		if ((m = opt_take(argc, argv, &i, "--fdr", &v))) {
			if (m < 0 || parse_fraction(v, &ca->opts.fdr))
				REFUSE("--fdr takes a level in (0, 1), e.g. 0.05; got '%s'",
					   m < 0 ? "" : v);
			continue;
		}
		if ((m = opt_take(argc, argv, &i, "--bootstrap", &v))) {
			unsigned long long n;
			if (m < 0 || parse_uint(v, 10000000, &n) || (n && n < 100))
				REFUSE("--bootstrap takes 0 or a count from 100 to 10000000; "
					   "got '%s'", m < 0 ? "" : v);
			ca->opts.nboot = (unsigned)n;
			continue;
		}
		if ((m = opt_take(argc, argv, &i, "--seed", &v))) {
			unsigned long long n;
			if (m < 0 || parse_uint(v, UINT64_MAX, &n))
				REFUSE("--seed takes a non-negative integer; got '%s'",
					   m < 0 ? "" : v);
			ca->opts.seed = n;
			continue;
		}
		if ((m = opt_take(argc, argv, &i, "--out", &v))) {
			if (m < 0 || !*v)
				REFUSE("--out needs a directory");
			ca->out_dir = v;
			continue;
		}
		if ((m = opt_take(argc, argv, &i, "--color", &v))) {
			if (m < 0 || !term_color_setting_valid(v) || !*v)
				REFUSE("--color takes auto, always or never");
			ca->color_opt = v;
			continue;
		}
		if (a[0] == '-' && a[1])
			REFUSE("unknown option '%s'", a);
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

int cmd_compare(int argc, char **argv)
{
	struct compare_args ca = {
		.opts = COMPARE_OPTS_INIT,
		.paths = { STRVEC_INIT, STRVEC_INIT }, .pos_a = STRVEC_INIT, .pos_b = STRVEC_INIT,
		.out_dir = ".", .color_opt = getenv("FLAGGEMS_PERF_COLOR"),
	};
	int color, help = 0, rc;
	struct compare c;
	struct stream_reporter term;
	struct compare_run_opts run_opts = {
		.who = "zlb compare",
		.caliber_hint = "--allow-caliber-mismatch compares anyway",
	};
	enum compare_stage stage;

	compare_init(&c, &ca.opts);
	rc = parse_compare_args(&ca, argc, argv, &help);
	if (!rc && help) {
		fputs(usage_text, stdout);
		goto out;
	}
	if (rc || (rc = pick_sides(&ca)))
		goto out;

	color = term_color_wanted(STDOUT_FILENO, ca.color_opt);
	run_opts.color = color;
	run_opts.allow_caliber = ca.allow;
	stream_reporter_init(&term, stdout, stderr);
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

	/* ZLB_EXIT_NO_DATA, or a report whose outputs are written whatever it says */
	set_error_routine(error_quiet);
	rc = compare_run(&c, &run_opts, &term.r, &stage);
	set_error_routine(NULL);
	if (stage != COMPARE_DONE)
		goto out;
	if (write_outputs(&c, ca.out_dir, ca.allow, rc))
		rc = ZLB_EXIT_IO;
out:
	strvec_clear(&ca.paths[0]);
	strvec_clear(&ca.paths[1]);
	strvec_clear(&ca.pos_a);
	strvec_clear(&ca.pos_b);
	compare_release(&c);
	return rc;
}
