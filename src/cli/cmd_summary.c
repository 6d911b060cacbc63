/*
 * zlb summary BATCH: one line per measurement of a batch, the counts and
 * remarks per operator (src/batch/summary.h for what is read and how), on
 * standard output in the format asked for; summary.csv and summary.json
 * in --out DIR when asked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/output.h"
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
	{ "format", NULL, NULL, "table", OPT_CHOICE, output_formats, 0, 0, "FORMAT",
	  "what standard output gets: table (the report for a terminal), json (what "
	  "summary.json holds), csv (what summary.csv holds: one line per measurement) or "
	  "md (Markdown for a pull request)" },
	{ "out", NULL, NULL, NULL, OPT_STRING, NULL, 0, 0, "DIR",
	  "also write DIR/summary.csv and DIR/summary.json (DIR is created; BATCH itself "
	  "is a good place); without it no file is written" },
	{ "color", NULL, "FLAGGEMS_PERF_COLOR", "auto", OPT_CHOICE, colors, 0, 0, "WHEN",
	  "colour the table report (NO_COLOR honoured)" },
	{ NULL },
};

static const struct cmd_exit summary_exits[] = {
	{ "0", "summarised (and the files written, with --out)" },
	{ "2", "bad command line" },
	{ "7", "summary.csv or summary.json could not be written, or standard output" },
	{ "8", "nothing to summarise: BATCH is not a directory, holds no operator, or its "
	       "ops_status.csv cannot be read" },
	{ NULL, NULL },
};

const struct cmd_doc summary_doc = {
	.name = "summary",
	.summary = "one line per measurement of a batch, remarks per operator",
	.synopsis = "BATCH [--format table|json|csv|md] [--out DIR]",
	.about =
		"Summarise a batch directory of zlb batch (or an older one): one line per\n"
		"measurement row of every operator's results.jsonl (repo, op, the operator's\n"
		"status from ops_status.csv, the backend and device (GPU name) its run\n"
		"recorded, op_name, dtype, shape_detail, row_status, torch\n"
		"and gems latency in ms, speedup, the row's timer and markers) and op_remarks,\n"
		"per operator: no_cudagraph_rows=N (rows not graph-timed), replay_fallback=N\n"
		"(AUTOTUNE_REPLAY_FALLBACK events), bad_lines=N, no_run_dir, no_results,\n"
		"not_in_ops_status, then ops_status.csv's remarks (dtype_fallback, ...). An\n"
		"operator without rows (FAIL, TIMEOUT, SKIP) gets one line with its status.\n"
		"Without ops_status.csv the run directories BATCH/<repo>/<op>/ are summarised\n"
		"alone. The report's worst and best speedups leave out rows with\n"
		"GRAPH_NO_KERNELS (the graph held no kernel node), GRAPH_MEMCPY_NODES or\n"
		"GRAPH_MEMSET_NODES (the copy engine), and say how many.\n"
		"\n"
		"Standard output gets the report in --format; files are written only with\n"
		"--out DIR (summary.csv, and summary.json: its format version and the counts),\n"
		"atomically, before anything is printed. Can be run again at any time.\n",
	.opts = summary_option_defs,
	.exits = summary_exits,
	.positional = CMD_ARG_DIR,
};

int cmd_summary(int argc, char **argv)
{
	struct opt_values opts = { 0 };
	struct strvec pos = STRVEC_INIT;
	struct summary s;
	struct strbuf sb = STRBUF_INIT;
	char *csv = NULL, *js = NULL;
	const char *out;
	enum output_format format;
	int want, rc = ZLB_EXIT_OK, color;

	summary_init(&s);
	set_error_routine(error_quiet);	/* an option problem is reported once, below */
	if (options_parse(summary_option_defs, argc, argv, environ, &opts, &pos, &want)) {
		rc = usage_error("summary", "%s", last_error());
		goto out;
	}
	if (want != OPT_WANT_NOTHING) {
		rc = want == OPT_WANT_HELP ? cli_help("summary", &summary_doc) : cli_version();
		goto out;
	}
	if (pos.nr != 1) {
		rc = usage_error("summary", "%s", pos.nr ? "one batch directory at a time" :
				 "which batch? zlb summary BATCH");
		goto out;
	}
	format = output_format_of(opt_get(summary_option_defs, &opts, "format"));
	out = opt_get(summary_option_defs, &opts, "out");
	if (out && (rc = output_dir_prepare("summary", out)))
		goto out;
	color = format == OUTPUT_TABLE &&
		term_color_wanted(STDOUT_FILENO, opt_get(summary_option_defs, &opts, "color"));

	/* the library's errors and warnings (file:line of a bad line) as they come */
	cli_report_errors("summary");

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

	/* The files first: a reader of standard output that leaves early loses none of them. */
	if (out) {
		csv = path_join(out, SUMMARY_CSV);
		js = path_join(out, SUMMARY_JSON);
		if (summary_write(&s, csv, js)) {
			fprintf(stderr, "zlb summary: the summary was not written (exit 7)\n");
			rc = ZLB_EXIT_IO;
			goto out;
		}
	}
	switch (format) {
	case OUTPUT_TABLE:
		summary_render(&s, csv, color, &sb);
		if (csv)
			strbuf_addf(&sb, "wrote %s and %s\n", csv, js);
		break;
	case OUTPUT_JSON: {
		json_t *j = summary_to_json(&s, SUMMARY_CSV);

		output_json(&sb, j);
		json_decref(j);
		break;
	}
	case OUTPUT_CSV:
		summary_csv(&s, &sb);
		break;
	case OUTPUT_MD:
		summary_markdown(&s, &sb);
		break;
	}
	output_stdout(&sb);
out:
	summary_release(&s);
	opt_values_release(&opts);
	strvec_clear(&pos);
	strbuf_release(&sb);
	free(csv);
	free(js);
	return rc;
}
