/*
 * proc.c: starting children without a shell, exit codes and their
 * descriptions, exec failures reported in the parent, the output pump
 * (lines, partial lines, grandchildren left holding the pipe) and the
 * interrupt path.
 *
 * Children that must behave in a particular way are this test binary
 * itself, run again as "<exe> helper <mode> ...": no shell anywhere.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/error.h"
#include "lib/paths.h"
#include "lib/proc.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

extern char **environ;

static char self_exe[PATH_MAX];
#include "error_capture.h"

static char tmpdir[64];

static int setup(void **state)
{
	strbuf_reset(&errors);
	set_error_routine(capture_error);
	return 0;
}

static int teardown(void **state)
{
	set_error_routine(NULL);
	strbuf_release(&errors);
	return 0;
}

/* For the tests that write files: a fresh directory, removed even on failure. */
static int setup_dir(void **state)
{
	strcpy(tmpdir, "/tmp/zlb-proc-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	return setup(state);
}

static int teardown_dir(void **state)
{
	int r = remove_tree(tmpdir);

	teardown(state);
	return r ? -1 : 0;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void put_str(int fd, const char *s)
{
	size_t len = strlen(s);
	while (len) {
		ssize_t n = write(fd, s, len);
		if (n <= 0)
			_exit(99);
		s += n;
		len -= (size_t)n;
	}
}

/* --- the helper child ----------------------------------------------------- */

static int helper(int argc, char **argv)
{
	const char *mode = argv[2];

	if (!strcmp(mode, "exit"))
		return atoi(argv[3]);
	if (!strcmp(mode, "lines")) {
		/* Many lines in small writes, then one without its newline. */
		int n = atoi(argv[3]);
		for (int i = 0; i < n; i++) {
			char buf[32];
			snprintf(buf, sizeof(buf), "line %d\n", i);
			put_str(1, buf);
		}
		put_str(2, "to stderr\n");
		put_str(1, "tail without newline");
		return 0;
	}
	if (!strcmp(mode, "partial")) {
		put_str(1, "progress");
		sleep_ms(600);
		put_str(1, "...done\nnext\n");
		return 0;
	}
	if (!strcmp(mode, "grandchild")) {
		/* A grandchild keeps stdout open and sleeps; the child exits at once. */
		pid_t g = fork();
		if (g < 0)
			return 98;
		if (!g) {
			sleep(60);
			_exit(0);
		}
		char buf[32];
		snprintf(buf, sizeof(buf), "%d\n", (int)g);
		put_str(1, buf);
		return 0;
	}
	if (!strcmp(mode, "closed-sleeper")) {
		/* Closes its output but keeps running. */
		put_str(1, "bye\n");
		close(1);
		close(2);
		sleep(30);
		return 0;
	}
	return 97;
}

/* --- helpers for the tests ---------------------------------------------- */

struct collected {
	struct strvec lines;
	struct strvec partials;
	size_t last_shown;
	int interrupts;
	int sig;
	int show_partials;
};

static void on_line(void *ctx, const char *line, size_t len, size_t shown)
{
	struct collected *c = ctx;

	assert_int_equal(strlen(line), len);
	strvec_push(&c->lines, line);
	c->last_shown = shown;
}

static size_t on_partial(void *ctx, const char *data, size_t len)
{
	struct collected *c = ctx;

	if (!c->show_partials)
		return 0;
	strvec_pushf(&c->partials, "%.*s", (int)len, data);
	return len;
}

static void on_interrupt(void *ctx, int sig)
{
	struct collected *c = ctx;

	c->interrupts++;
	c->sig = sig;
}

static const struct pump_ops ops = { on_line, on_partial, on_interrupt };

static void collected_init(struct collected *c)
{
	memset(c, 0, sizeof(*c));
	strvec_init(&c->lines);
	strvec_init(&c->partials);
}

static void collected_release(struct collected *c)
{
	strvec_clear(&c->lines);
	strvec_clear(&c->partials);
}

static void assert_no_children(void)
{
	errno = 0;
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

/* --- tests ---------------------------------------------------------------- */

static void capture_echo(void **state)
{
	char *argv[] = { "/bin/echo", "hello", "world", NULL };
	struct strbuf out = STRBUF_INIT;

	assert_int_equal(run_capture(argv, environ, NULL, 10000, &out), 0);
	assert_string_equal(out.buf, "hello world\n");
	strbuf_release(&out);
	assert_no_children();
}

static void capture_env_and_dir(void **state)
{
	char *env_argv[] = { "/usr/bin/env", NULL };
	char *pwd_argv[] = { "/bin/pwd", NULL };
	char *envp[] = { "ZLB_ONLY=1", NULL };
	struct strbuf out = STRBUF_INIT;

	/* envp is the child's whole environment. */
	assert_int_equal(run_capture(env_argv, envp, NULL, 10000, &out), 0);
	assert_string_equal(out.buf, "ZLB_ONLY=1\n");
	strbuf_reset(&out);

	assert_int_equal(run_capture(pwd_argv, environ, "/usr", 10000, &out), 0);
	assert_string_equal(out.buf, "/usr\n");
	strbuf_release(&out);
}

static void capture_exit_codes(void **state)
{
	char *t[] = { "/bin/true", NULL };
	char *f[] = { "/bin/false", NULL };
	char *three[] = { self_exe, "helper", "exit", "3", NULL };
	char *big[] = { self_exe, "helper", "exit", "200", NULL };
	struct strbuf out = STRBUF_INIT;

	assert_int_equal(run_capture(t, environ, NULL, 10000, &out), 0);
	assert_int_equal(run_capture(f, environ, NULL, 10000, &out), 1);
	assert_int_equal(run_capture(three, environ, NULL, 10000, &out), 3);
	assert_int_equal(run_capture(big, environ, NULL, 10000, &out), 200);
	assert_string_equal(out.buf, "");
	strbuf_release(&out);
	assert_no_children();
}

static void capture_both_streams(void **state)
{
	char *argv[] = { self_exe, "helper", "lines", "3", NULL };
	struct strbuf out = STRBUF_INIT;

	assert_int_equal(run_capture(argv, environ, NULL, 10000, &out), 0);
	assert_string_equal(out.buf, "line 0\nline 1\nline 2\nto stderr\ntail without newline");
	strbuf_release(&out);
}

static void capture_timeout(void **state)
{
	char *argv[] = { "/bin/sleep", "30", NULL };
	struct strbuf out = STRBUF_INIT;
	long long t0 = now_ms();

	assert_int_equal(run_capture(argv, environ, NULL, 300, &out), -1);
	assert_true(now_ms() - t0 < 5000);
	assert_contains(errors.buf, "/bin/sleep did not finish within 300 ms");
	strbuf_release(&out);
	assert_no_children();
}

static void capture_timeout_after_output_closed(void **state)
{
	char *argv[] = { self_exe, "helper", "closed-sleeper", NULL };
	struct strbuf out = STRBUF_INIT;
	long long t0 = now_ms();

	/* The timeout holds even when the child closed its output early. */
	assert_int_equal(run_capture(argv, environ, NULL, 500, &out), -1);
	assert_true(now_ms() - t0 < 5000);
	assert_contains(errors.buf, "did not finish within 500 ms");
	assert_string_equal(out.buf, "bye\n");
	strbuf_release(&out);
	assert_no_children();
}

static void missing_program(void **state)
{
	char *argv[] = { "/nonexistent/zlb-no-such-program", "x", NULL };
	struct child c = { .argv = argv, .envp = environ, .new_pgroup = 1, .capture = 1 };
	struct strbuf out = STRBUF_INIT;

	assert_int_equal(child_start(&c), -1);
	assert_contains(errors.buf, "cannot start /nonexistent/zlb-no-such-program: "
			"No such file or directory");
	assert_int_equal(c.out_fd, -1);
	assert_no_children();

	/* Through run_capture as well. */
	strbuf_reset(&errors);
	assert_int_equal(run_capture(argv, environ, NULL, 10000, &out), -1);
	assert_contains(errors.buf, "cannot start /nonexistent/zlb-no-such-program");
	assert_no_children();
	strbuf_release(&out);
}

static void not_executable_and_bad_dir(void **state)
{
	const char *dir = tmpdir;
	char *file, *argv[2] = { NULL, NULL };
	char *echo[] = { "/bin/echo", NULL };
	struct child c = { .envp = environ, .capture = 1 };

	file = path_join(dir, "data");
	assert_int_equal(write_file_atomic(file, "x\n", 2), 0);
	assert_int_equal(chmod(file, 0644), 0);
	argv[0] = file;
	c.argv = argv;
	assert_int_equal(child_start(&c), -1);
	assert_contains(errors.buf, "cannot start ");
	assert_contains(errors.buf, "Permission denied");
	assert_no_children();

	/* A working directory that does not exist is named as such. */
	strbuf_reset(&errors);
	c.argv = echo;
	c.dir = "/nonexistent/zlb-dir";
	assert_int_equal(child_start(&c), -1);
	assert_contains(errors.buf, "cannot enter '/nonexistent/zlb-dir' to start /bin/echo");
	assert_no_children();

	free(file);
}

static void lines_in_order(void **state)
{
	char *argv[] = { self_exe, "helper", "lines", "2000", NULL };
	struct child c = { .argv = argv, .envp = environ, .new_pgroup = 1, .capture = 1 };
	struct collected col;
	struct strbuf end = STRBUF_INIT;

	collected_init(&col);
	assert_int_equal(child_start(&c), 0);
	assert_true(c.out_fd >= 0);
	assert_int_equal(child_pump(&c, &ops, &col, 1000), 0);
	assert_true(c.exited);
	assert_int_equal(c.out_fd, -1);
	assert_int_equal(col.lines.nr, 2002);
	for (int i = 0; i < 2000; i++) {
		char want[32];
		snprintf(want, sizeof(want), "line %d", i);
		assert_string_equal(col.lines.v[i], want);
	}
	assert_string_equal(col.lines.v[2000], "to stderr");
	assert_string_equal(col.lines.v[2001], "tail without newline");
	assert_int_equal(col.interrupts, 0);
	assert_int_equal(child_exit_code(&c), 0);
	child_describe_end(&c, &end);
	assert_string_equal(end.buf, "exit 0");
	strbuf_release(&end);
	collected_release(&col);
	assert_no_children();
}

static void partial_lines(void **state)
{
	char *argv[] = { self_exe, "helper", "partial", NULL };
	struct child c = { .argv = argv, .envp = environ, .new_pgroup = 1, .capture = 1 };
	struct collected col;

	/* Shown early: the full line later says how much was shown. */
	collected_init(&col);
	col.show_partials = 1;
	assert_int_equal(child_start(&c), 0);
	assert_int_equal(child_pump(&c, &ops, &col, 1000), 0);
	assert_int_equal(col.partials.nr, 1);
	assert_string_equal(col.partials.v[0], "progress");
	assert_int_equal(col.lines.nr, 2);
	assert_string_equal(col.lines.v[0], "progress...done");
	assert_string_equal(col.lines.v[1], "next");
	assert_int_equal(col.last_shown, 0);
	collected_release(&col);

	/* on_partial returning 0: the line waits, whole. */
	collected_init(&col);
	memset(&c, 0, sizeof(c));
	c.argv = argv;
	c.envp = environ;
	c.new_pgroup = 1;
	c.capture = 1;
	assert_int_equal(child_start(&c), 0);
	assert_int_equal(child_pump(&c, &ops, &col, 1000), 0);
	assert_int_equal(col.lines.nr, 2);
	assert_string_equal(col.lines.v[0], "progress...done");
	collected_release(&col);
}

/* The shown count of the first line, checked through a dedicated callback. */
static size_t first_shown = (size_t)-1;
static void on_line_first(void *ctx, const char *line, size_t len, size_t shown)
{
	if (first_shown == (size_t)-1)
		first_shown = shown;
	on_line(ctx, line, len, shown);
}

static void partial_shown_count(void **state)
{
	char *argv[] = { self_exe, "helper", "partial", NULL };
	struct child c = { .argv = argv, .envp = environ, .new_pgroup = 1, .capture = 1 };
	struct pump_ops o = { on_line_first, on_partial, on_interrupt };
	struct collected col;

	collected_init(&col);
	col.show_partials = 1;
	first_shown = (size_t)-1;
	assert_int_equal(child_start(&c), 0);
	assert_int_equal(child_pump(&c, &o, &col, 1000), 0);
	assert_int_equal(first_shown, strlen("progress"));
	collected_release(&col);
}

static void grandchild_holding_pipe(void **state)
{
	char *argv[] = { self_exe, "helper", "grandchild", NULL };
	struct child c = { .argv = argv, .envp = environ, .new_pgroup = 1, .capture = 1 };
	struct collected col;
	long long t0;
	pid_t g;
	int st = 0, reaped = 0;

	collected_init(&col);
	assert_int_equal(child_start(&c), 0);
	t0 = now_ms();
	assert_int_equal(child_pump(&c, &ops, &col, 1000), 0);
	assert_true(now_ms() - t0 < 6000);
	assert_true(c.exited);
	assert_int_equal(child_exit_code(&c), 0);
	assert_int_equal(col.lines.nr, 1);
	g = (pid_t)atoi(col.lines.v[0]);
	assert_true(g > 0);

	/* We are the subreaper: the orphan is ours to reap, and it was killed. */
	for (int i = 0; i < 200 && !reaped; i++) {
		pid_t r = waitpid(g, &st, WNOHANG);
		if (r == g)
			reaped = 1;
		else
			sleep_ms(10);
	}
	if (!reaped) {
		kill(g, SIGKILL);
		waitpid(g, NULL, 0);
		fail_msg("grandchild %d still alive after child_pump", (int)g);
	}
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
	assert_int_equal(kill(g, 0), -1);
	assert_int_equal(errno, ESRCH);
	collected_release(&col);
	assert_no_children();
}

static void interrupt_stops_child(void **state)
{
	char *argv[] = { "/bin/sleep", "30", NULL };
	struct child c = { .argv = argv, .envp = environ, .new_pgroup = 1, .capture = 1 };
	struct collected col;
	struct sigevent sev;
	struct itimerspec its;
	struct strbuf end = STRBUF_INIT;
	struct sigaction before, after;
	timer_t timer;
	long long t0;

	collected_init(&col);
	assert_int_equal(sigaction(SIGINT, NULL, &before), 0);
	assert_int_equal(interrupts_install(), 0);
	assert_int_equal(interrupt_pending(), 0);
	assert_true(interrupt_fd() >= 0);
	assert_int_equal(child_start(&c), 0);

	/* SIGINT to this process while child_pump is waiting. */
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGINT;
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = 300 * 1000000L;
	assert_int_equal(timer_settime(timer, 0, &its, NULL), 0);

	t0 = now_ms();
	assert_int_equal(child_pump(&c, &ops, &col, 2000), 0);
	assert_true(now_ms() - t0 < 10000);
	timer_delete(timer);

	assert_int_equal(col.interrupts, 1);
	assert_int_equal(col.sig, SIGINT);
	assert_int_equal(interrupt_pending(), SIGINT);
	assert_true(c.exited);
	/* sleep dies of the SIGINT forwarded to its group. */
	child_describe_end(&c, &end);
	assert_string_equal(end.buf, "killed by SIGINT");
	assert_int_equal(child_exit_code(&c), 128 + SIGINT);

	interrupts_restore();
	assert_int_equal(sigaction(SIGINT, NULL, &after), 0);
	assert_ptr_equal(after.sa_handler, before.sa_handler);
	strbuf_release(&end);
	collected_release(&col);
	assert_no_children();
}

static void describe_ends(void **state)
{
	char *argv[] = { "/bin/sleep", "30", NULL };
	char *seven[] = { self_exe, "helper", "exit", "7", NULL };
	struct child c = { .argv = argv, .envp = environ, .new_pgroup = 1 };
	struct strbuf end = STRBUF_INIT;

	assert_int_equal(child_start(&c), 0);
	assert_int_equal(c.out_fd, -1);
	assert_int_equal(child_reap(&c, 1), 0);
	assert_int_equal(child_kill(&c, SIGKILL), 0);
	assert_int_equal(child_reap(&c, 0), 1);
	/* Reaping again is harmless. */
	assert_int_equal(child_reap(&c, 0), 1);
	child_describe_end(&c, &end);
	assert_string_equal(end.buf, "killed by SIGKILL");
	assert_int_equal(child_exit_code(&c), 137);

	strbuf_reset(&end);
	memset(&c, 0, sizeof(c));
	c.argv = argv;
	c.envp = environ;
	assert_int_equal(child_start(&c), 0);
	assert_int_equal(child_kill(&c, SIGTERM), 0);
	assert_int_equal(child_reap(&c, 0), 1);
	child_describe_end(&c, &end);
	assert_string_equal(end.buf, "killed by SIGTERM");
	assert_int_equal(child_exit_code(&c), 143);

	strbuf_reset(&end);
	memset(&c, 0, sizeof(c));
	c.argv = seven;
	c.envp = environ;
	assert_int_equal(child_start(&c), 0);
	assert_int_equal(child_reap(&c, 0), 1);
	child_describe_end(&c, &end);
	assert_string_equal(end.buf, "exit 7");
	assert_int_equal(child_exit_code(&c), 7);

	strbuf_release(&end);
	assert_no_children();
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(capture_echo, setup, teardown),
		cmocka_unit_test_setup_teardown(capture_env_and_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(capture_exit_codes, setup, teardown),
		cmocka_unit_test_setup_teardown(capture_both_streams, setup, teardown),
		cmocka_unit_test_setup_teardown(capture_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(capture_timeout_after_output_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_program, setup, teardown),
		cmocka_unit_test_setup_teardown(not_executable_and_bad_dir, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(lines_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(partial_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(partial_shown_count, setup, teardown),
		cmocka_unit_test_setup_teardown(grandchild_holding_pipe, setup, teardown),
		cmocka_unit_test_setup_teardown(interrupt_stops_child, setup, teardown),
		cmocka_unit_test_setup_teardown(describe_ends, setup, teardown),
	};
	ssize_t n;

	if (argc >= 3 && !strcmp(argv[1], "helper"))
		return helper(argc, argv);
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0)
		return 2;
	self_exe[n] = '\0';
	/* Orphaned grandchildren come back to us, so a test can see how they ended. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		return 2;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
