/*
 * zlb report: one self-contained HTML page about a run, a batch or an A/B,
 * with plots drawn here as SVG and a table beside every plot.
 *
 * What is reported depends on what the paths are:
 *   RUN      a run directory (run_identity.json or results.jsonl):
 *            latency against size per dtype, torch and gems (report_run.c);
 *   BATCH    a directory of zlb batch (ops_status.csv, or <repo>/<op>/ runs):
 *            statuses, the distribution of speedups, the slowest and
 *            fastest operators, rows not graph-timed (report_batch.c);
 *   AB_DIR   a directory of zlb ab (ab.json, A/ and B/): the comparison of
 *            its rounds (report_ab.c);
 *   A B      two runs or batches (anything zlb compare takes), compared
 *            here through the compare library (report_ab.c).
 * An A/B page shows a forest plot of B/A per row with its interval, the
 * SAME band and the verdicts, the flagged rows, both sides' calibers and
 * provenance side by side, and the IR verdict with links to the stage
 * files that differ (report_ir.h).
 *
 * Before anything is read, each directory is walked for symbolic links
 * that lead out of it (report_safe.h); the page escapes every text that
 * came from the data (html.h).
 */
#ifndef ZLB_REPORT_H
#define ZLB_REPORT_H

#include "lib/strbuf.h"

enum report_input {
	REPORT_INPUT_RUN,
	REPORT_INPUT_BATCH,
	REPORT_INPUT_AB,
	REPORT_INPUT_PAIR,	/* two paths: A B */
};

struct report_opts {
	/*
	 * The directory the page will be written to (absolute, resolved):
	 * its links are relative to it.
	 */
	const char *link_base;
	/* A B: the compare band as a fraction; < 0: 0.01, or an A/B's own */
	double threshold;
	int allow_caliber;	/* A B: report even when calibers differ (shown in red) */
	const char *generated_at;	/* the footer's time, or NULL */
	/* A/B: rounds without s take the s of the runs under this (compare's --elasticity-from) */
	const char *elasticity_from;
};

#define REPORT_OPTS_INIT { NULL, -1, 0, NULL, NULL }

/*
 * What path is: a run, a batch or an A/B directory. Returns 0, or -1 with
 * error() saying what it is not and what would be.
 */
int report_detect(const char *path, enum report_input *kind);

/*
 * Write the page about paths[0] (n == 1) or paths[0] against paths[1]
 * (n == 2) into html. Returns an exit status of rundir/exit_codes.h:
 * ZLB_EXIT_OK; ZLB_EXIT_NO_DATA (nothing to report, a link out of a
 * directory, a file that cannot be read), ZLB_EXIT_CALIBER (A B whose
 * calibers differ, without allow_caliber); with error() saying why.
 */
int report_build(const char *const *paths, int n, const struct report_opts *o,
		 struct strbuf *html);

#endif
