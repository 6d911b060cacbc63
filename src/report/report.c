/*
 * zlb report's entry points (report.h): what the paths are, and which
 * page they get.
 */
#include "report/report.h"

#include <stdlib.h>

#include "batch/summary.h"
#include "lib/error.h"
#include "lib/paths.h"
#include "lib/strvec.h"
#include "report/report_ab.h"
#include "report/report_batch.h"
#include "report/report_run.h"
#include "rundir/exit_codes.h"
#include "rundir/rundir.h"

int report_detect(const char *path, enum report_input *kind)
{
	char *ab = path_join(path, "ab.json"), *ops = path_join(path, OPS_STATUS_CSV);
	char *a = path_join(path, "A"), *b = path_join(path, "B");
	struct strvec runs = STRVEC_INIT;
	int ret = 0;

	if (!is_dir(path)) {
		ret = error("'%s' is not a directory: give a run directory, a batch directory, "
			    "an A/B directory of zlb ab, or two of them (A B)", path);
	} else if (rundir_is_run(path)) {
		*kind = REPORT_INPUT_RUN;
	} else if (is_file(ab) || (is_dir(a) && is_dir(b))) {
		*kind = REPORT_INPUT_AB;
	} else if (is_file(ops) || rundir_find(path, rundir_is_run, &runs) > 0) {
		*kind = REPORT_INPUT_BATCH;
	} else {
		ret = error("'%s' is no run (run_identity.json or results.jsonl), no batch "
			    "(ops_status.csv or <repo>/<op>/ runs) and no A/B directory (ab.json, "
			    "A/ and B/): nothing to report", path);
	}
	strvec_clear(&runs);
	free(ab);
	free(ops);
	free(a);
	free(b);
	return ret;
}

int report_build(const char *const *paths, int n, const struct report_opts *o,
		 struct strbuf *html)
{
	enum report_input kind;

	if (n == 2) {
		for (int i = 0; i < 2; i++)
			if (!is_dir(paths[i])) {
				error("%s: '%s' is not a directory", i ? "B" : "A", paths[i]);
				return ZLB_EXIT_NO_DATA;
			}
		return report_ab_build(NULL, paths, o, html);
	}
	if (n != 1)
		BUG("report_build of %d paths", n);
	if (report_detect(paths[0], &kind))
		return ZLB_EXIT_NO_DATA;
	switch (kind) {
	case REPORT_INPUT_RUN:
		return report_run_build(paths[0], o, html);
	case REPORT_INPUT_BATCH:
		return report_batch_build(paths[0], o, html);
	case REPORT_INPUT_AB:
		return report_ab_build(paths[0], NULL, o, html);
	case REPORT_INPUT_PAIR:
		break;
	}
	BUG("report kind %d", (int)kind);
	return ZLB_EXIT_NO_DATA;
}
