/*
 * The local executor's deadlines (executors/local.c): a job that ignores
 * SIGTERM is killed after its grace, however late the wait that enforces
 * the deadline is called; nothing below it survives, also a grandchild in
 * a session of its own.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "executors/executor.h"
#include "lib/paths.h"
#include "lib/strbuf.h"

extern char **environ;

struct fixture {
	char dir[64];
	struct executor ex;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/zlb-local-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->ex.ops = executor_find("local");
	f->ex.wake_fd = -1;
	if (!f->ex.ops || f->ex.ops->open(&f->ex))
		return -1;
	/* A hang (the bug this guards against) ends the test instead of the CI job. */
	alarm(60);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	alarm(0);
	f->ex.ops->close(&f->ex);
	remove_tree(f->dir);
	free(f);
	return 0;
}

/* Start argv as a job with a deadline of timeout_s and grace_s. */
static void start(struct fixture *f, struct exec_job *job, char **argv, double timeout_s,
		  double grace_s)
{
	char *console = path_join(f->dir, "console.log");

	memset(job, 0, sizeof(*job));
	job->argv = argv;
	job->envp = environ;
	job->console = console;
	job->timeout_s = timeout_s;
	job->grace_s = grace_s;
	assert_int_equal(f->ex.ops->start(&f->ex, job), 0);
	free(console);
}

/*
 * The wait is first called long after the deadline (the batch was busy):
 * the deadline it acts on is past, and the poll timeout computed from it
 * went negative, which is "for ever" (issue 16 row 1). SIGKILL must come.
 */
static void deadline_called_late_still_kills(void **state)
{
	struct fixture *f = *state;
	char *argv[] = { "/bin/sh", "-c", "trap '' TERM; while :; do sleep 1; done", NULL };
	struct exec_job job, *done = NULL;

	start(f, &job, argv, 0.05, 0.2);
	poll(NULL, 0, 300);
	assert_int_equal(f->ex.ops->wait(&f->ex, 30000, &done), 1);
	assert_ptr_equal(done, &job);
	assert_true(job.timed_out);
	assert_int_equal(job.exit_code, 128 + SIGKILL);
	assert_int_equal(f->ex.ops->running(&f->ex), 0);
}

/* A grandchild in a session of its own dies with the job, and is reaped. */
static void grandchild_in_its_own_session_dies(void **state)
{
	struct fixture *f = *state;
	char *pidfile = path_join(f->dir, "grandchild.pid");
	char *script = xstrfmt("trap '' TERM; setsid sleep 300 & echo $! > %s; "
			       "while :; do sleep 1; done", pidfile);
	char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct exec_job job, *done = NULL;
	struct strbuf sb = STRBUF_INIT;
	pid_t grandchild;

	/* 2 s for the shell to write the pid file first: under valgrind on a
	 * loaded CI core 0.3 s was sometimes not enough. */
	start(f, &job, argv, 2.0, 0.2);
	assert_int_equal(f->ex.ops->wait(&f->ex, 30000, &done), 1);
	assert_ptr_equal(done, &job);
	assert_true(job.timed_out);
	assert_int_equal(strbuf_read_file(&sb, pidfile, 0), 0);
	grandchild = atoi(sb.buf);
	assert_true(grandchild > 0);
	/* Killed, and reaped by this process (a subreaper): not even a zombie. */
	assert_int_equal(kill(grandchild, 0), -1);
	assert_int_equal(errno, ESRCH);
	strbuf_release(&sb);
	free(script);
	free(pidfile);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(deadline_called_late_still_kills, setup, teardown),
		cmocka_unit_test_setup_teardown(grandchild_in_its_own_session_dies, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
