/*
 * The local executor: each job is a child process of zlb in its own
 * process group (lib/proc.h: no shell, PR_SET_PDEATHSIG so a batch killed
 * with SIGKILL takes its children along). Ends are seen through pidfds
 * (poll wakes the instant a child exits), with a short polling period as
 * the fallback on kernels without pidfd_open.
 *
 * A deadline sends SIGTERM to the job's group (zlb run then interrupts its
 * pytest in order and keeps its run directory), and after the grace
 * SIGKILL to every descendant of the job and the process groups they are
 * in (pytest runs in a group of its own), then to the job's group
 * (lib/proc_tree.h). The batch is a subreaper, so what escaped the job's
 * groups (setsid) is still below it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/proc.h"
#include "lib/proc_tree.h"
#include "lib/strbuf.h"
#include "executors/executor.h"

#define MAX_JOBS 1024
#define FALLBACK_POLL_MS 20

struct local_job {
	struct child c;
	int pidfd;           /* -1 when pidfd_open is unavailable */
	double started, deadline, kill_at;
	int stage;           /* 0 running, 1 SIGTERM sent, 2 SIGKILL sent */
	struct exec_job *job;
	/* Killed below the job: reparented to the batch (a subreaper) when it dies. */
	struct pid_set orphans;
};

struct local {
	struct local_job *v[MAX_JOBS];
	int nr;
};

static int local_open(struct executor *ex)
{
	/*
	 * What a job's zlb run leaves behind when it is killed (a grandchild
	 * that called setsid) comes back to the batch, not to init, so the
	 * batch can still end it.
	 */
	if (proc_become_subreaper())
		return -1;
	ex->priv = xcalloc(1, sizeof(struct local));
	return 0;
}

static int local_start(struct executor *ex, struct exec_job *job)
{
	struct local *l = ex->priv;
	struct local_job *lj;
	int fd;

	if (l->nr >= MAX_JOBS)
		return error("more than %d jobs at once", MAX_JOBS);
	fd = open(job->console, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return error_errno("cannot create '%s'", job->console);
	lj = xcalloc(1, sizeof(*lj));
	lj->c.argv = job->argv;
	lj->c.envp = job->envp;
	lj->c.new_pgroup = 1;
	lj->c.redirect = 1;
	lj->c.redirect_fd = fd;
	lj->job = job;
	lj->started = mono_s();
	if (child_start(&lj->c)) {
		close(fd);
		free(lj);
		return -1;
	}
	close(fd);
	lj->pidfd = proc_exit_fd(lj->c.pid);
	lj->deadline = job->timeout_s > 0 ? lj->started + job->timeout_s : -1;
	job->exit_code = -1;
	job->timed_out = job->stopped = 0;
	job->priv = lj;
	l->v[l->nr++] = lj;
	return 0;
}

/* ---- waiting ----------------------------------------------------------------- */

static void escalate(struct local_job *lj, double now)
{
	if (lj->stage == 0 && lj->deadline > 0 && now >= lj->deadline) {
		lj->job->timed_out = 1;
		child_kill(&lj->c, SIGTERM);
		lj->stage = 1;
		lj->kill_at = now + lj->job->grace_s;
	} else if (lj->stage == 1 && now >= lj->kill_at) {
		/* Below first: killed first, zlb run's escapees would go to the batch. */
		proc_kill_tree(lj->c.pid, &lj->orphans);
		child_kill(&lj->c, SIGKILL);
		lj->stage = 2;
	}
}

static double next_event(const struct local *l)
{
	double t = -1;

	for (int i = 0; i < l->nr; i++) {
		const struct local_job *lj = l->v[i];
		double e = lj->stage == 0 ? lj->deadline : lj->stage == 1 ? lj->kill_at : -1;
		if (e > 0 && (t < 0 || e < t))
			t = e;
	}
	return t;
}

static void finish(struct local *l, int i, double now)
{
	struct local_job *lj = l->v[i];

	lj->job->exit_code = child_exit_code(&lj->c);
	lj->job->seconds = now - lj->started;
	/* Whatever the job left in its own group goes with it. */
	kill(-lj->c.pid, SIGKILL);
	/*
	 * Processes killed below it are the batch's zombies now (the job is
	 * reaped, so they were reparented): reap them, once; a pid kept longer
	 * could be another job's by then.
	 */
	proc_reap(&lj->orphans);
	pid_set_clear(&lj->orphans);
	if (lj->pidfd >= 0)
		close(lj->pidfd);
	lj->job->priv = NULL;
	l->v[i] = l->v[--l->nr];
	free(lj);
}

static int local_wait(struct executor *ex, int timeout_ms, struct exec_job **done)
{
	struct local *l = ex->priv;
	double start = mono_s(), limit = timeout_ms < 0 ? -1 : start + timeout_ms / 1000.0;

	*done = NULL;
	for (;;) {
		struct pollfd pfd[MAX_JOBS + 1];
		int nfds = 0, all_pidfd = 1, wait_ms;
		double now = mono_s(), ev;

		for (int i = 0; i < l->nr; i++) {
			escalate(l->v[i], now);
			if (child_reap(&l->v[i]->c, 1) == 1) {
				*done = l->v[i]->job;
				finish(l, i, mono_s());
				return 1;
			}
		}
		/*
		 * After escalate(): a deadline it has just acted on is past, and a
		 * wait computed from it would be negative, which poll() takes as
		 * "for ever" (the job then ignored SIGTERM and SIGKILL never came).
		 */
		ev = next_event(l);
		if (limit >= 0 && now >= limit)
			return 0;
		for (int i = 0; i < l->nr; i++) {
			if (l->v[i]->pidfd >= 0)
				pfd[nfds++] = (struct pollfd){ l->v[i]->pidfd, POLLIN, 0 };
			else
				all_pidfd = 0;
		}
		if (ex->wake_fd >= 0)
			pfd[nfds++] = (struct pollfd){ ex->wake_fd, POLLIN, 0 };
		wait_ms = -1;
		if (limit >= 0)
			wait_ms = (int)((limit - now) * 1000) + 1;
		if (ev > 0) {
			int e = ev > now ? (int)((ev - now) * 1000) + 1 : 0;
			wait_ms = wait_ms < 0 || e < wait_ms ? e : wait_ms;
		}
		if (!all_pidfd && (wait_ms < 0 || wait_ms > FALLBACK_POLL_MS))
			wait_ms = FALLBACK_POLL_MS;
		if (poll(pfd, (nfds_t)nfds, wait_ms) < 0 && errno != EINTR)
			return error_errno("poll failed");
		if (ex->wake_fd >= 0 && nfds && (pfd[nfds - 1].revents & POLLIN)) {
			char drain[64];
			while (read(ex->wake_fd, drain, sizeof(drain)) > 0)
				;
			return 0;
		}
	}
}

static int local_running(const struct executor *ex)
{
	return ((const struct local *)ex->priv)->nr;
}

static void local_stop_all(struct executor *ex)
{
	struct local *l = ex->priv;
	double now = mono_s();

	for (int i = 0; i < l->nr; i++) {
		struct local_job *lj = l->v[i];
		lj->job->stopped = 1;
		if (lj->stage == 0) {
			child_kill(&lj->c, SIGTERM);
			lj->stage = 1;
			lj->kill_at = now + lj->job->grace_s;
		}
	}
}

static void local_close(struct executor *ex)
{
	struct local *l = ex->priv;

	if (!l)
		return;
	/* Nothing outlives the batch: what is still running is killed and reaped. */
	for (int i = 0; i < l->nr; i++) {
		struct local_job *lj = l->v[i];

		proc_kill_tree(lj->c.pid, &lj->orphans);
		child_kill(&lj->c, SIGKILL);
		child_reap(&lj->c, 0);
		proc_reap(&lj->orphans);
		pid_set_clear(&lj->orphans);
		if (lj->pidfd >= 0)
			close(lj->pidfd);
		free(lj);
	}
	free(l);
	ex->priv = NULL;
}

const struct executor_ops local_executor = {
	.name = "local",
	.description = "child processes on this machine, one process group each",
	.open = local_open,
	.start = local_start,
	.wait = local_wait,
	.running = local_running,
	.stop_all = local_stop_all,
	.close = local_close,
};
