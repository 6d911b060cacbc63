#include "rundir.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "paths.h"

#define MAX_SUFFIX 1000

int rundir_claim(const char *runs_dir, const char *op, time_t when, char **out)
{
	struct tm tm;
	char stamp[32];
	char *base, *abs_runs;

	*out = NULL;
	if (!name_is_safe(op))
		return error("'%s' cannot name a run directory: it must be letters, "
			     "digits, '_', '-' or '.', with no '/' and no '..'", op);
	abs_runs = path_absolute(runs_dir);
	if (mkdir_p(abs_runs, 0755)) {
		free(abs_runs);
		return -1;
	}
	localtime_r(&when, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	base = xstrfmt("%s/%s_%s", abs_runs, op, stamp);
	free(abs_runs);
	for (int n = 1; n <= MAX_SUFFIX; n++) {
		char *cand = n == 1 ? xstrdup(base) : xstrfmt("%s-%d", base, n);
		if (!mkdir(cand, 0755)) {
			*out = cand;
			free(base);
			return 0;
		}
		if (errno != EEXIST) {
			int r = error_errno("cannot create run directory '%s'", cand);
			free(cand);
			free(base);
			return r;
		}
		free(cand);
	}
	{
		int r = error("more than %d run directories named %s-N exist", MAX_SUFFIX, base);
		free(base);
		return r;
	}
}
