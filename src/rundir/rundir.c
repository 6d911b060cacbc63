#include "rundir/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rundir/identity.h"
#include "lib/paths.h"
#include "rundir/results_file.h"

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

int rundir_is_run(const char *dir)
{
	char *id = path_join(dir, IDENTITY_FILE), *res = path_join(dir, RESULTS_FILE);
	int yes = is_file(id) || is_file(res);

	free(id);
	free(res);
	return yes;
}

int rundir_find(const char *path, int (*is_run)(const char *dir), struct strvec *runs)
{
	struct strvec level1 = STRVEC_INIT;
	char *abs;
	int found = 0;

	if (!is_dir(path))
		return error("'%s' is not a directory", path);
	abs = path_absolute(path);
	if (is_run(abs)) {
		strvec_push(runs, abs);
		free(abs);
		return 1;
	}
	list_subdirs(abs, &level1);
	for (size_t i = 0; i < level1.nr; i++) {
		struct strvec level2 = STRVEC_INIT;

		if (is_run(level1.v[i])) {
			strvec_push(runs, level1.v[i]);
			found++;
			continue;
		}
		list_subdirs(level1.v[i], &level2);
		for (size_t j = 0; j < level2.nr; j++)
			if (is_run(level2.v[j])) {
				strvec_push(runs, level2.v[j]);
				found++;
			}
		strvec_clear(&level2);
	}
	strvec_clear(&level1);
	free(abs);
	return found;
}

int dir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int empty = 1;

	if (!d)
		return 0;
	while (empty && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = 0;
	closedir(d);
	return empty;
}

int rundir_claim_exact(const char *path, char **out)
{
	char *abs = path_absolute(path), *parent = path_dirname(abs);

	*out = NULL;
	if (mkdir_p(parent, 0755)) {
		free(abs);
		free(parent);
		return -1;
	}
	free(parent);
	if (mkdir(abs, 0755) && (errno != EEXIST || !dir_is_empty(abs))) {
		int r = errno == EEXIST ?
			error("run directory '%s' already exists and is not empty; give "
			      "--run-dir a new path or empty it", abs) :
			error_errno("cannot create run directory '%s'", abs);
		free(abs);
		return r;
	}
	*out = abs;
	return 0;
}

int rundir_reserve(const char *run_dir)
{
	char *path = path_join(run_dir, RUNDIR_RESERVE_FILE);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600), r = 0;

	if (fd < 0) {
		r = error_errno("cannot create '%s'", path);
	} else {
		/* posix_fallocate reports through its return value, not errno. */
		int e = posix_fallocate(fd, 0, RUNDIR_RESERVE_BYTES);

		close(fd);
		if (e) {
			unlink(path);
			errno = e;
			r = e == ENOSPC || e == EDQUOT ?
				error("the file system of %s has less than %d KB free: a run that "
				      "fills it could not even record how it ended; free some space "
				      "and start again", run_dir, RUNDIR_RESERVE_BYTES / 1024) :
				error_errno("cannot reserve room for the run's last files in '%s'",
					    path);
		}
	}
	free(path);
	return r;
}

void rundir_release_reserve(const char *run_dir)
{
	char *path = path_join(run_dir, RUNDIR_RESERVE_FILE);

	unlink(path);
	free(path);
}
