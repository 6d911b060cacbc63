/*
 * zlb report: one self-contained HTML page about a run, a batch or an A/B
 * (src/report/report.h for what each page shows).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/usage.h"
#include "lib/error.h"
#include "lib/options.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "report/report.h"
#include "rundir/identity.h"

extern char **environ;

static const struct opt_def report_option_defs[] = {
	{ "out", "output", NULL, NULL, OPT_STRING, NULL, 0, 0, "FILE",
	  "where the page goes; required. Its directory is created; a file "
	  "already there is replaced. '-' writes the page to standard output. Links to IR "
	  "files are relative to FILE's directory", .short_name = 'o' },
	{ "threshold", NULL, NULL, NULL, OPT_REAL, NULL, 0, 0, "PCT",
	  "an A/B's band of no practical difference, in percent (default: 1, or the one "
	  "the A/B directory was compared with)", NULL, 0.0, 50.0 },
	{ "allow-caliber-mismatch", NULL, NULL, NULL, OPT_BOOL, NULL, 0, 0, NULL,
	  "A B: report even when the sides were not measured the same way; the "
	  "differences head the page in red" },
	{ "elasticity-from", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "A/B: rows whose rounds read no clock elasticity take the s the runs under DIR "
	  "read (as zlb compare --elasticity-from). An A/B directory whose comparison took "
	  "s from its own recording (zlb ab --calibrate) is read so without it" },
	{ NULL },
};

static const struct cmd_exit report_exits[] = {
	{ "0", "the page was written (whatever the verdicts: zlb compare judges, this shows)" },
	{ "2", "bad command line (no -o, not one or two directories, an unknown option)" },
	{ "4", "A B: the calibers differ (named on stderr); --allow-caliber-mismatch reports "
	       "anyway" },
	{ "7", "the page could not be written" },
	{ "8", "nothing to report: not a run, batch or A/B directory, no rows to pair, a file "
	       "that cannot be read, or a link out of the directory" },
	{ NULL, NULL },
};

const struct cmd_doc report_doc = {
	.name = "report",
	.summary = "one self-contained HTML page with plots of a run, batch or A/B",
	.synopsis = "RUN -o FILE\nBATCH -o FILE\nAB_DIR -o FILE\nA B -o FILE",
	.about =
		"Write one self-contained HTML page (no script, nothing loaded from elsewhere;\n"
		"plots drawn by zlb as SVG, each with its table beside it; printable):\n"
		"  RUN     a run directory of zlb run: latency against input size per dtype,\n"
		"          torch and gems, every row, the caliber and provenance;\n"
		"  BATCH   a directory of zlb batch: operators by status, the distribution of\n"
		"          speedups, the slowest and fastest operators, the rows not graph-timed,\n"
		"          every operator;\n"
		"  AB_DIR  a directory of zlb ab, or A B (two runs or batches, compared here as\n"
		"          zlb compare does): a forest plot of B/A per row with its 95% interval,\n"
		"          the SAME band and the verdicts, flagged rows (fallback, memcpy, empty\n"
		"          graph, K differs, ...), both sides' calibers and provenance side by\n"
		"          side, and per operator the IR verdict with links to the stage files\n"
		"          that differ.\n"
		"Nothing is read through a symbolic link that leads out of the directory\n"
		"reported; every name from the data is escaped.\n",
	.opts = report_option_defs,
	.exits = report_exits,
	.positional = CMD_ARG_DIR,
};

/* The directory FILE will be in, created and resolved: the base of the page's links. */
static char *link_base_of(const char *out)
{
	char *abs, *dir, *real;

	if (!strcmp(out, "-"))
		return realpath(".", NULL);
	abs = path_absolute(out);
	dir = path_dirname(abs);
	if (mkdir_p(dir, 0777)) {
		free(abs);
		free(dir);
		return NULL;
	}
	real = realpath(dir, NULL);
	if (!real)
		error_errno("cannot resolve '%s'", dir);
	free(abs);
	free(dir);
	return real;
}

static int write_page(const char *out, const struct strbuf *html)
{
	if (!strcmp(out, "-")) {
		fwrite(html->buf, 1, html->len, stdout);
		return 0;	/* main.c checks that it reached stdout */
	}
	if (write_file_atomic(out, html->buf, html->len)) {
		fprintf(stderr, "zlb report: %s; the page was not written (exit 7)\n", last_error());
		return -1;
	}
	printf("wrote %s (%zu KiB)\n", out, (html->len + 1023) / 1024);
	return 0;
}

/*
 * What a single path is when it is not an A/B (an option that only an A/B
 * has: --threshold, --elasticity-from), or NULL: an A/B, a pair A B, or
 * a path report_build will refuse on its own.
 */
static const char *not_an_ab(const struct strvec *pos)
{
	enum report_input kind = REPORT_INPUT_PAIR;

	if (pos->nr == 1 && !report_detect(pos->v[0], &kind) && kind != REPORT_INPUT_AB)
		return kind == REPORT_INPUT_RUN ? "run" : "batch";
	return NULL;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts ro = REPORT_OPTS_INIT;
	struct opt_values opts = { 0 };
	struct strvec pos = STRVEC_INIT;
	struct strbuf html = STRBUF_INIT;
	const char *out, *thr, *allow, *what;
	char *base = NULL;
	json_t *now = NULL;
	int want, rc = ZLB_EXIT_OK;

	set_error_routine(error_quiet);	/* an option problem is reported once, below */
	if (options_parse(report_option_defs, argc, argv, environ, &opts, &pos, &want)) {
		rc = usage_error("report", "%s", last_error());
		goto out;
	}
	if (want != OPT_WANT_NOTHING) {
		rc = want == OPT_WANT_HELP ? cli_help("report", &report_doc) : cli_version();
		goto out;
	}
	if (pos.nr < 1 || pos.nr > 2) {
		rc = usage_error("report", "%s", pos.nr ? "one directory (RUN, BATCH, AB_DIR) or "
				 "two (A B), not more" : "what to report? zlb report RUN|BATCH|"
				 "AB_DIR|A B -o FILE");
		goto out;
	}
	out = opt_get(report_option_defs, &opts, "out");
	if (!out || !*out) {
		rc = usage_error("report", "where to? give -o FILE (e.g. -o report.html), or -o - "
				 "for standard output");
		goto out;
	}
	thr = opt_get(report_option_defs, &opts, "threshold");
	if (thr) {
		if ((what = not_an_ab(&pos))) {
			rc = usage_error("report", "--threshold is an A/B's band; %s is a %s",
					 pos.v[0], what);
			goto out;
		}
		ro.threshold = strtod(thr, NULL) / 100;
	}
	ro.elasticity_from = opt_get(report_option_defs, &opts, "elasticity-from");
	if (ro.elasticity_from) {
		if ((what = not_an_ab(&pos))) {
			rc = usage_error("report", "--elasticity-from is for an A/B; %s is a %s",
					 pos.v[0], what);
			goto out;
		}
		if (!is_dir(ro.elasticity_from)) {
			rc = usage_error("report", "--elasticity-from takes the directory of a "
					 "calibration (runs made with --clock-elasticity); '%s' is "
					 "not one", ro.elasticity_from);
			goto out;
		}
	}
	allow = opt_get(report_option_defs, &opts, "allow-caliber-mismatch");
	ro.allow_caliber = allow && opt_parse_bool(allow) == 1;
	base = link_base_of(out);
	if (!base) {
		fprintf(stderr, "zlb report: %s; the page was not written (exit 7)\n", last_error());
		rc = ZLB_EXIT_IO;
		goto out;
	}
	ro.link_base = base;
	now = identity_now();
	ro.generated_at = json_string_value(now);

	rc = report_build((const char *const *)pos.v, (int)pos.nr, &ro, &html);
	if (rc) {
		fprintf(stderr, "zlb report: %s\n", last_error());
		goto out;
	}
	if (write_page(out, &html))
		rc = ZLB_EXIT_IO;
out:
	cli_report_errors("report");
	opt_values_release(&opts);
	strvec_clear(&pos);
	strbuf_release(&html);
	json_decref(now);
	free(base);
	return rc;
}
