/*
 * rundir.c: run directories are claimed with a bare mkdir, so runs that
 * start in the same second, in one process or in several, never share one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/error.h"
#include "lib/paths.h"
#include "rundir/rundir.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "lib/strvec.h"

#include "error_capture.h"

struct fixture {
	char dir[PATH_MAX];
	char *runs;
	char stamp[32];
	time_t when;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct tm tm;

	char tmpl[] = "/tmp/zlb-rundir-XXXXXX";

	/* Resolved, so that it compares equal to getcwd() after a chdir. */
	if (!mkdtemp(tmpl) || !realpath(tmpl, f->dir))
		return -1;
	/* runs/ does not exist yet, and one level more: claim creates both. */
	f->runs = xstrfmt("%s/out/runs", f->dir);
	f->when = 1767225600 + 3723; /* a fixed instant */
	localtime_r(&f->when, &tm);
	strftime(f->stamp, sizeof(f->stamp), "%Y%m%d-%H%M%S", &tm);
	strbuf_reset(&errors);
	set_error_routine(capture_error);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int r = remove_tree(f->dir);

	set_error_routine(NULL);
	free(f->runs);
	free(f);
	strbuf_release(&errors);
	return r ? -1 : 0;
}

static void list_dir(const char *dir, struct strvec *names)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			strvec_push(names, e->d_name);
	closedir(d);
}

static void claims_in_sequence(void **state)
{
	struct fixture *f = *state;
	char *a = NULL, *b = NULL, *c = NULL, *want;

	assert_int_equal(rundir_claim(f->runs, "softmax", f->when, &a), 0);
	want = xstrfmt("%s/softmax_%s", f->runs, f->stamp);
	assert_string_equal(a, want);
	assert_true(is_dir(a));
	free(want);

	assert_int_equal(rundir_claim(f->runs, "softmax", f->when, &b), 0);
	want = xstrfmt("%s/softmax_%s-2", f->runs, f->stamp);
	assert_string_equal(b, want);
	assert_true(is_dir(b));
	free(want);

	assert_int_equal(rundir_claim(f->runs, "softmax", f->when, &c), 0);
	want = xstrfmt("%s/softmax_%s-3", f->runs, f->stamp);
	assert_string_equal(c, want);
	free(want);

	/* Another op, or another second, starts again without a suffix. */
	free(a);
	assert_int_equal(rundir_claim(f->runs, "mm", f->when, &a), 0);
	want = xstrfmt("%s/mm_%s", f->runs, f->stamp);
	assert_string_equal(a, want);
	free(want);
	free(a);
	assert_int_equal(rundir_claim(f->runs, "softmax", f->when + 1, &a), 0);
	{
		time_t next = f->when + 1;
		struct tm tm;
		char stamp[32];
		localtime_r(&next, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
		want = xstrfmt("%s/softmax_%s", f->runs, stamp);
		assert_string_equal(a, want);
		free(want);
	}

	free(a);
	free(b);
	free(c);
}

static void relative_runs_dir_gives_absolute_path(void **state)
{
	struct fixture *f = *state;
	char cwd[PATH_MAX], *out = NULL, *want;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(f->dir), 0);
	assert_int_equal(rundir_claim("./rel/../runs2", "add", f->when, &out), 0);
	assert_int_equal(chdir(cwd), 0);
	want = xstrfmt("%s/runs2/add_%s", f->dir, f->stamp);
	assert_string_equal(out, want);
	assert_true(is_dir(out));
	free(want);
	free(out);
}

static void unsafe_op_refused(void **state)
{
	struct fixture *f = *state;
	const char *bad[] = { "../escape", "a/b", "", ".hidden", "..", "sp ace" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char *out = (char *)"untouched";
		strbuf_reset(&errors);
		assert_int_equal(rundir_claim(f->runs, bad[i], f->when, &out), -1);
		assert_null(out);
		assert_non_null(strstr(errors.buf, "cannot name a run directory"));
	}
	/* Refused before anything was made: not even runs/. */
	assert_int_equal(access(f->runs, F_OK), -1);
	{
		struct strvec names = STRVEC_INIT;
		list_dir(f->dir, &names);
		assert_int_equal(names.nr, 0);
		strvec_clear(&names);
	}
	{
		char *escape = xstrfmt("%s/out/escape_%s", f->dir, f->stamp);
		assert_int_equal(access(escape, F_OK), -1);
		free(escape);
	}
}

static void runs_dir_that_is_a_file(void **state)
{
	struct fixture *f = *state;
	char *file = path_join(f->dir, "plain");
	char *out = NULL;
	FILE *fp = fopen(file, "w");

	assert_non_null(fp);
	fclose(fp);
	assert_int_equal(rundir_claim(file, "softmax", f->when, &out), -1);
	assert_null(out);
	assert_non_null(strstr(errors.buf, "error: "));
	free(file);
}

#define NPROC 8

static void concurrent_claims(void **state)
{
	struct fixture *f = *state;
	int fds[2];
	pid_t pids[NPROC];
	struct strvec got = STRVEC_INIT, names = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	ssize_t n;
	int go[2];

	assert_int_equal(pipe(fds), 0);
	/* A gate so that every child calls mkdir at about the same moment. */
	assert_int_equal(pipe(go), 0);
	for (int i = 0; i < NPROC; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (!pids[i]) {
			char *out = NULL, c;
			close(fds[0]);
			close(go[1]);
			if (read(go[0], &c, 1) != 0)
				_exit(3);
			if (rundir_claim(f->runs, "softmax", f->when, &out))
				_exit(1);
			/* One write per line: atomic below PIPE_BUF. */
			char *line = xstrfmt("%s\n", out);
			if (write(fds[1], line, strlen(line)) != (ssize_t)strlen(line))
				_exit(2);
			_exit(0);
		}
	}
	close(fds[1]);
	close(go[0]);
	close(go[1]); /* EOF on go[0]: all children start together */

	while ((n = read(fds[0], buf, sizeof(buf))) > 0)
		strbuf_add(&sb, buf, (size_t)n);
	close(fds[0]);
	for (int i = 0; i < NPROC; i++) {
		int st;
		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}

	strvec_split(&got, sb.buf, "\n");
	assert_int_equal(got.nr, NPROC);
	for (size_t i = 0; i < got.nr; i++) {
		assert_true(is_dir(got.v[i]));
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(got.v[i], got.v[j]);
	}

	/* Exactly the 8 expected names exist: base, -2 .. -8. */
	list_dir(f->runs, &names);
	assert_int_equal(names.nr, NPROC);
	for (int i = 1; i <= NPROC; i++) {
		char *want = i == 1 ? xstrfmt("%s/softmax_%s", f->runs, f->stamp)
				    : xstrfmt("%s/softmax_%s-%d", f->runs, f->stamp, i);
		assert_true(strvec_find(&got, want) >= 0);
		free(want);
	}
	strvec_clear(&got);
	strvec_clear(&names);
	strbuf_release(&sb);
}

static void touch(const char *dir, const char *rel)
{
	char *p = xstrfmt("%s/%s", dir, rel);

	assert_int_equal(mkdir_p(p, 0700), 0);
	free(p);
}

static void make_run(const char *dir, const char *rel, const char *file)
{
	char *d = xstrfmt("%s/%s", dir, rel), *p = xstrfmt("%s/%s", d, file);
	FILE *fp;

	assert_int_equal(mkdir_p(d, 0700), 0);
	fp = fopen(p, "w");
	assert_non_null(fp);
	fclose(fp);
	free(d);
	free(p);
}

/* One walk for every reader: a run, or runs one or two levels down, in name order. */
static void runs_are_found_one_or_two_levels_down(void **state)
{
	struct fixture *f = *state;
	struct strvec runs = STRVEC_INIT;
	char *top = xstrfmt("%s/b", f->dir), *want;

	make_run(f->dir, "b/main/softmax", "run_identity.json");
	make_run(f->dir, "b/main/add", "results.jsonl");
	make_run(f->dir, "b/r1", "run_identity.json");
	make_run(f->dir, "b/r1/inner", "run_identity.json");	/* inside a run: not searched */
	touch(f->dir, "b/main/empty");
	make_run(f->dir, "b/deep/x/y", "run_identity.json");	/* three levels: not found */
	assert_int_equal(rundir_find(top, rundir_is_run, &runs), 3);
	want = xstrfmt("%s/main/add", top);
	assert_string_equal(runs.v[0], want);
	free(want);
	want = xstrfmt("%s/main/softmax", top);
	assert_string_equal(runs.v[1], want);
	free(want);
	want = xstrfmt("%s/r1", top);
	assert_string_equal(runs.v[2], want);
	free(want);
	strvec_clear(&runs);
	/* a run itself is the one run */
	want = xstrfmt("%s/r1", top);
	assert_int_equal(rundir_find(want, rundir_is_run, &runs), 1);
	assert_string_equal(runs.v[0], want);
	strvec_clear(&runs);
	/* not a directory */
	assert_int_equal(rundir_find("/nonexistent/zlb", rundir_is_run, &runs), -1);
	assert_int_equal(runs.nr, 0);
	free(want);
	free(top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(claims_in_sequence, setup, teardown),
		cmocka_unit_test_setup_teardown(relative_runs_dir_gives_absolute_path, setup, teardown),
		cmocka_unit_test_setup_teardown(unsafe_op_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(runs_dir_that_is_a_file, setup, teardown),
		cmocka_unit_test_setup_teardown(concurrent_claims, setup, teardown),
		cmocka_unit_test_setup_teardown(runs_are_found_one_or_two_levels_down, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
