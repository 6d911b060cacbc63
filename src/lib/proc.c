#include "lib/proc.h"
#include "lib/proc_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* In the child, between fork and exec: only async-signal-safe calls. */
static void child_setup_and_exec(const struct child *c, int out_w, int err_w,
				 pid_t parent)
{
	int devnull;
	sigset_t none;

	if (c->new_pgroup)
		setpgid(0, 0);
	/* If zlb dies (even by SIGKILL) the child is told to stop. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(127);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0) {
		dup2(devnull, 0);
		if (devnull > 2)
			close(devnull);
	}
	if (c->capture) {
		dup2(out_w, 1);
		dup2(out_w, 2);
	} else if (c->redirect) {
		dup2(c->redirect_fd, 1);
		dup2(c->redirect_fd, 2);
	}
	if (c->dir && chdir(c->dir)) {
		int e = errno;
		(void)!write(err_w, &e, sizeof(e));
		_exit(127);
	}
	/*
	 * Everything else the parent had open stays out of the child. err_w is
	 * O_CLOEXEC and closes by itself when execve succeeds.
	 */
	if (err_w > 3)
		close_range(3, (unsigned)err_w - 1, 0);
	close_range((unsigned)err_w + 1, ~0U, 0);
	execve(c->argv[0], c->argv, c->envp);
	int e = errno;
	(void)!write(err_w, &e, sizeof(e));
	_exit(127);
}

int child_start(struct child *c)
{
	int out_pipe[2] = { -1, -1 }, err_pipe[2];
	pid_t parent = getpid();
	ssize_t n;
	int child_errno = 0;

	c->pid = -1;
	c->out_fd = -1;
	c->exited = 0;
	if (!c->argv || !c->argv[0] || c->argv[0][0] != '/')
		BUG("child_start needs an absolute program path");
	if (c->capture && pipe2(out_pipe, O_CLOEXEC))
		return error_errno("cannot create a pipe");
	if (pipe2(err_pipe, O_CLOEXEC)) {
		if (c->capture) {
			close(out_pipe[0]);
			close(out_pipe[1]);
		}
		return error_errno("cannot create a pipe");
	}
	c->pid = fork();
	if (c->pid < 0) {
		int r = error_errno("cannot fork");
		close(err_pipe[0]);
		close(err_pipe[1]);
		if (c->capture) {
			close(out_pipe[0]);
			close(out_pipe[1]);
		}
		return r;
	}
	if (!c->pid)
		child_setup_and_exec(c, out_pipe[1], err_pipe[1], parent);

	/* Parent. Also set the group here: whichever runs first wins the race. */
	if (c->new_pgroup)
		setpgid(c->pid, c->pid);
	close(err_pipe[1]);
	if (c->capture) {
		close(out_pipe[1]);
		c->out_fd = out_pipe[0];
	}
	do {
		n = read(err_pipe[0], &child_errno, sizeof(child_errno));
	} while (n < 0 && errno == EINTR);
	close(err_pipe[0]);
	if (n == sizeof(child_errno)) {
		child_reap(c, 0);
		if (c->out_fd >= 0)
			close(c->out_fd);
		c->out_fd = -1;
		errno = child_errno;
		if (c->dir && child_errno == ENOENT && access(c->argv[0], X_OK) == 0)
			return error_errno("cannot enter '%s' to start %s", c->dir, c->argv[0]);
		return error_errno("cannot start %s", c->argv[0]);
	}
	return 0;
}

int child_reap(struct child *c, int nohang)
{
	pid_t r;

	if (c->exited)
		return 1;
	do {
		r = waitpid(c->pid, &c->wait_status, nohang ? WNOHANG : 0);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return error_errno("waitpid(%d) failed", (int)c->pid);
	if (r == 0)
		return 0;
	c->exited = 1;
	return 1;
}

int child_kill(struct child *c, int sig)
{
	if (c->pid <= 0)
		return -1;
	/* The group outlives its leader: grandchildren are reached after it exits too. */
	if (c->new_pgroup)
		return kill(-c->pid, sig);
	return c->exited ? 0 : kill(c->pid, sig);
}

int child_exit_code(const struct child *c)
{
	if (WIFEXITED(c->wait_status))
		return WEXITSTATUS(c->wait_status);
	if (WIFSIGNALED(c->wait_status))
		return 128 + WTERMSIG(c->wait_status);
	return 255;
}

void child_describe_end(const struct child *c, struct strbuf *out)
{
	if (WIFEXITED(c->wait_status))
		strbuf_addf(out, "exit %d", WEXITSTATUS(c->wait_status));
	else if (WIFSIGNALED(c->wait_status)) {
		int sig = WTERMSIG(c->wait_status);
		const char *abbrev = sigabbrev_np(sig);
		if (abbrev)
			strbuf_addf(out, "killed by SIG%s", abbrev);
		else
			strbuf_addf(out, "killed by signal %d", sig);
	}
	else
		strbuf_addstr(out, "ended");
}

/* --- interrupts ------------------------------------------------------- */

static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t first_signal;
static struct sigaction saved_actions[3];
static const int handled[3] = { SIGINT, SIGTERM, SIGHUP };

static void on_signal(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;

	if (!first_signal)
		first_signal = sig;
	(void)!write(sig_pipe[1], &b, 1);
	errno = saved;
}

int interrupts_install(void)
{
	struct sigaction sa;

	if (sig_pipe[0] < 0 && pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK))
		return error_errno("cannot create the signal pipe");
	first_signal = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(handled[i], &sa, &saved_actions[i]);
	return 0;
}

void interrupts_restore(void)
{
	for (int i = 0; i < 3; i++)
		sigaction(handled[i], &saved_actions[i], NULL);
}

int interrupt_pending(void)
{
	return first_signal;
}

int interrupt_fd(void)
{
	return sig_pipe[0];
}

/* --- output pump -------------------------------------------------------- */

#define PARTIAL_AFTER_MS 150
#define ORPHAN_GRACE_MS 2000

struct line_state {
	struct strbuf line;
	size_t shown;
	long long last_data;
};

static void feed(struct line_state *ls, const char *buf, size_t n,
		 const struct pump_ops *ops, void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			strbuf_addch(&ls->line, buf[i]);
			continue;
		}
		ops->on_line(ctx, ls->line.buf, ls->line.len, ls->shown);
		strbuf_reset(&ls->line);
		ls->shown = 0;
	}
}

static void show_partial(struct line_state *ls, const struct pump_ops *ops, void *ctx)
{
	if (ls->line.len > ls->shown && ops->on_partial)
		ls->shown += ops->on_partial(ctx, ls->line.buf + ls->shown,
					     ls->line.len - ls->shown);
}

int proc_exit_fd(pid_t pid)
{
#ifdef SYS_pidfd_open
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd >= 0)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
#else
	(void)pid;
	return -1;
#endif
}

/* The poll timeout to the earliest of the deadlines set (-1: none, wait). */
static int next_timeout(long long now, const long long *deadlines, size_t n, int cap)
{
	long long t = cap;

	for (size_t i = 0; i < n; i++)
		if (deadlines[i] >= 0 && (t < 0 || deadlines[i] - now < t))
			t = deadlines[i] > now ? deadlines[i] - now : 0;
	return (int)t;
}

/* One read of the child's output into its lines; 0 once the pipe has closed. */
static int pump_read(struct child *c, struct line_state *ls, const struct pump_ops *ops,
		     void *ctx, long long now)
{
	char buf[65536];
	ssize_t n = read(c->out_fd, buf, sizeof(buf));

	if (n > 0) {
		feed(ls, buf, (size_t)n, ops, ctx);
		ls->last_data = now;
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		close(c->out_fd);
		c->out_fd = -1;
		return 0;
	}
	return 1;
}

/*
 * On zlb's first signal the child gets SIGINT, then SIGTERM and SIGKILL
 * grace_ms apart while it lives on (*stage: 0 running, 1 SIGINT sent,
 * 2 SIGTERM sent, 3 SIGKILL sent).
 */
static void pump_signals(struct child *c, const struct pump_ops *ops, void *ctx, int grace_ms,
			 long long now, int *stage, long long *escalate_at)
{
	if (sig_pipe[0] >= 0) {
		unsigned char drain[64];
		while (read(sig_pipe[0], drain, sizeof(drain)) > 0)
			;
	}
	if (first_signal && *stage == 0) {
		if (ops->on_interrupt)
			ops->on_interrupt(ctx, first_signal);
		/* pytest turns SIGINT into KeyboardInterrupt and still reports. */
		child_kill(c, SIGINT);
		*stage = 1;
		*escalate_at = now + grace_ms;
	} else if (*stage > 0 && *stage < 3 && now >= *escalate_at) {
		child_kill(c, *stage == 1 ? SIGTERM : SIGKILL);
		(*stage)++;
		*escalate_at = now + grace_ms;
	}
}

/*
 * The child has exited but grandchildren still hold the pipe: give them a
 * moment, then end them; then stop listening whoever holds it (a process
 * that left the group, or that zlb cannot signal), rather than wait for
 * ever. Returns 0 once the pipe is closed (*stage: 1 waiting, 2 holders
 * killed).
 */
static int pump_orphans(struct child *c, int *stage, long long *deadline, long long now)
{
	if (!*stage) {
		*deadline = now + ORPHAN_GRACE_MS;
		*stage = 1;
	} else if (now >= *deadline && *stage == 1) {
		if (c->new_pgroup)
			child_kill(c, SIGKILL);
		if (c->owns_descendants)
			proc_kill_tree(getpid(), NULL);
		*deadline = now + ORPHAN_GRACE_MS;
		*stage = 2;
	} else if (now >= *deadline) {
		close(c->out_fd);
		c->out_fd = -1;
		return 0;
	}
	return 1;
}

int child_pump(struct child *c, const struct pump_ops *ops, void *ctx, int grace_ms)
{
	struct line_state ls = { STRBUF_INIT, 0, now_ms() };
	long long escalate_at = -1, orphan_deadline = -1;
	int stage = 0; /* 0 running, 1 SIGINT sent, 2 SIGTERM sent, 3 SIGKILL sent */
	int orphan_stage = 0; /* after the child's exit: 1 waiting, 2 holders killed */
	int open_fd = c->out_fd >= 0;
	int pidfd = proc_exit_fd(c->pid);

	while (open_fd || !c->exited) {
		struct pollfd pfd[3];
		int nfds = 0, out_i = -1;
		long long now = now_ms();
		long long deadlines[3] = {
			open_fd && ls.line.len > ls.shown ? ls.last_data + PARTIAL_AFTER_MS : -1,
			stage > 0 && stage < 3 ? escalate_at : -1,
			orphan_deadline,
		};
		int timeout = next_timeout(now, deadlines, 3,
					   c->exited || pidfd >= 0 ? -1 : PROC_REAP_POLL_MS);

		if (open_fd) {
			out_i = nfds;
			pfd[nfds++] = (struct pollfd){ c->out_fd, POLLIN, 0 };
		}
		if (sig_pipe[0] >= 0)
			pfd[nfds++] = (struct pollfd){ sig_pipe[0], POLLIN, 0 };
		if (pidfd >= 0 && !c->exited)
			pfd[nfds++] = (struct pollfd){ pidfd, POLLIN, 0 };
		if (poll(pfd, (nfds_t)nfds, timeout) < 0 && errno != EINTR) {
			strbuf_release(&ls.line);
			if (pidfd >= 0)
				close(pidfd);
			return error_errno("poll failed");
		}
		now = now_ms();
		if (out_i >= 0 && (pfd[out_i].revents & (POLLIN | POLLHUP | POLLERR)))
			open_fd = pump_read(c, &ls, ops, ctx, now);
		if (open_fd && ls.line.len > ls.shown && now - ls.last_data >= PARTIAL_AFTER_MS) {
			show_partial(&ls, ops, ctx);
			ls.last_data = now;
		}

		pump_signals(c, ops, ctx, grace_ms, now, &stage, &escalate_at);

		if (!c->exited && child_reap(c, 1) < 0)
			break;
		if (c->exited && open_fd)
			open_fd = pump_orphans(c, &orphan_stage, &orphan_deadline, now);
	}
	if (pidfd >= 0)
		close(pidfd);
	if (ls.line.len)
		ops->on_line(ctx, ls.line.buf, ls.line.len, ls.shown);
	/* Nothing of the child's group may outlive the run. */
	if (c->new_pgroup)
		kill(-c->pid, SIGKILL);
	strbuf_release(&ls.line);
	return 0;
}

/* --- short captured commands ------------------------------------------- */

int run_capture(char *const *argv, char *const *envp, const char *dir,
		int timeout_ms, struct strbuf *out)
{
	struct child c = { .argv = argv, .envp = envp, .dir = dir,
			   .new_pgroup = 1, .capture = 1 };
	long long deadline = now_ms() + timeout_ms;
	char buf[8192];
	int timed_out = 0;

	if (child_start(&c))
		return -1;
	for (;;) {
		struct pollfd pfd = { c.out_fd, POLLIN, 0 };
		long long left = deadline - now_ms();
		if (left <= 0) {
			timed_out = 1;
			break;
		}
		if (poll(&pfd, 1, (int)(left > 200 ? 200 : left)) < 0 && errno != EINTR)
			break;
		if (pfd.revents) {
			ssize_t n = read(c.out_fd, buf, sizeof(buf));
			if (n > 0)
				strbuf_add(out, buf, (size_t)n);
			else if (n == 0 || errno != EINTR)
				break;
		}
	}
	close(c.out_fd);
	c.out_fd = -1;
	/* A child may close its output and keep running: the deadline still holds. */
	int pidfd = timed_out ? -1 : proc_exit_fd(c.pid);
	while (!timed_out && child_reap(&c, 1) == 0) {
		long long left = deadline - now_ms();
		struct pollfd pfd = { pidfd, POLLIN, 0 };

		if (left <= 0)
			timed_out = 1;
		else if (pidfd >= 0)
			poll(&pfd, 1, (int)left);
		else
			poll(NULL, 0, 5);
	}
	if (pidfd >= 0)
		close(pidfd);
	if (timed_out)
		child_kill(&c, SIGKILL);
	child_reap(&c, 0);
	kill(-c.pid, SIGKILL);
	if (timed_out)
		return error("%s did not finish within %d ms", argv[0], timeout_ms);
	return child_exit_code(&c);
}
