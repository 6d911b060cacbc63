/*
 * zlb summary BATCH: one CSV line per measurement of a batch, and a short
 * report (src/batch/summary.h for what is read and how).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/usage.h"
#include "lib/error.h"
#include "lib/options.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "batch/summary.h"
#include "lib/term.h"

extern char **environ;

static const char *const colors[] = { "auto", "always", "never", NULL };

static const struct opt_def summary_option_defs[] = {
	{ "out", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "FILE",
	  "the table (default BATCH/summary.csv); summary.json goes beside it as FILE's "
	  ".csv replaced by .json" },
	{ "color", NULL, "FLAGGEMS_PERF_COLOR", "auto", OPT_CHOICE, colors, 0, 0, "WHEN",
	  "colour the report (NO_COLOR honoured)" },
	{ NULL },
};

static const char usage_head[] =
	"usage: zlb summary BATCH [options]\n"
	"\n"
	"Summarise a batch directory of zlb batch (or an older one) into BATCH/summary.csv:\n"
	"one line per measurement row of every operator's results.jsonl (repo, op, the\n"
	"operator's status from ops_status.csv, op_name, dtype, shape_detail, row_status,\n"
	"torch and gems latency in ms, speedup, the row's timer and markers) and op_remarks,\n"
	"per operator: no_cudagraph_rows=N (rows not graph-timed), replay_fallback=N\n"
	"(AUTOTUNE_REPLAY_FALLBACK events), bad_lines=N, no_run_dir, no_results,\n"
	"not_in_ops_status, then ops_status.csv's remarks (dtype_fallback, ...). An operator\n"
	"without rows (FAIL, TIMEOUT, SKIP) gets one line with its status. Without\n"
	"ops_status.csv the run directories BATCH/<repo>/<op>/ are summarised alone.\n"
	"The report's worst and best speedups leave out rows with GRAPH_NO_KERNELS (the\n"
	"graph held no kernel node), GRAPH_MEMCPY_NODES or GRAPH_MEMSET_NODES (the copy\n"
	"engine), and say how many.\n"
	"summary.json beside the table holds its format version and the counts.\n"
	"Can be run again at any time; the files are replaced atomically.\n"
	"\n"
	"options:\n";

static const char usage_tail[] =
	"\n"
	"exit codes:\n"
	"  0    summary.csv and summary.json written\n"
	"  2    bad command line\n"
	"  7    summary.csv or summary.json could not be written\n"
	"  8    nothing to summarise: BATCH is not a directory, holds no operator, or its\n"
	"       ops_status.csv cannot be read\n";

static void usage(FILE *out)
{
	fputs(usage_head, out);
	options_usage(out, summary_option_defs);
	fputs(usage_tail, out);
}

static void report(const char *prefix, const char *msg)
{
	fprintf(stderr, "zlb summary: %s%s\n", prefix, msg);
}

/* FILE.csv -> FILE.json; any other FILE -> FILE.json appended. */
static char *json_beside(const char *csv)
{
	size_t n = strlen(csv);

	if (ends_with(csv, ".csv"))
		return xstrfmt("%.*s.json", (int)(n - 4), csv);
	return xstrfmt("%s.json", csv);
}

int cmd_summary(int argc, char **argv)
{
	struct opt_values opts = { 0 };
	struct strvec pos = STRVEC_INIT;
	struct summary s;
	struct strbuf sb = STRBUF_INIT;
	char *csv = NULL, *js = NULL;
	const char *out;
	int help, rc = ZLB_EXIT_OK, color;

	summary_init(&s);
	set_error_routine(error_quiet);	/* an option problem is reported once, below */
	if (options_parse(summary_option_defs, argc, argv, environ, &opts, &pos, &help)) {
		fprintf(stderr, "zlb summary: %s\n       (zlb summary --help lists the options)\n",
			last_error());
		rc = ZLB_EXIT_USAGE;
		goto out;
	}
	if (help) {
		usage(stdout);
		goto out;
	}
	if (pos.nr != 1) {
		rc = usage_error("summary", "%s", pos.nr ? "one batch directory at a time" :
				 "which batch? zlb summary BATCH");
		goto out;
	}
	out = opt_get(summary_option_defs, &opts, "out");
	if (out && !*out) {
		fprintf(stderr, "zlb summary: --out needs a file name\n");
		rc = ZLB_EXIT_USAGE;
		goto out;
	}
	color = term_color_wanted(STDOUT_FILENO, opt_get(summary_option_defs, &opts, "color"));

	/* the library's errors and warnings (file:line of a bad line) as they come */
	set_error_routine(report);
	set_warning_routine(report);

	switch (summary_load(&s, pos.v[0])) {
	case 0:
		break;
	case 1:
		fprintf(stderr, "zlb summary: %s holds no %s and no run directory "
			"(<repo>/<op>/ with run_identity.json or results.jsonl): nothing to "
			"summarise\n", pos.v[0], OPS_STATUS_CSV);
		rc = ZLB_EXIT_NO_DATA;
		goto out;
	default:
		fprintf(stderr, "zlb summary: nothing summarised (exit 8)\n");
		rc = ZLB_EXIT_NO_DATA;
		goto out;
	}

	csv = out ? xstrdup(out) : path_join(s.batch, SUMMARY_CSV);
	js = json_beside(csv);
	summary_render(&s, csv, color, &sb);
	fputs(sb.buf, stdout);
	fflush(stdout);
	if (summary_write(&s, csv, js)) {
		fprintf(stderr, "zlb summary: the summary was not written (exit 7)\n");
		rc = ZLB_EXIT_IO;
		goto out;
	}
	printf("wrote %s and %s\n", csv, js);
out:
	set_error_routine(NULL);
	set_warning_routine(NULL);
	summary_release(&s);
	opt_values_release(&opts);
	strvec_clear(&pos);
	strbuf_release(&sb);
	free(csv);
	free(js);
	return rc;
}
