#include "batch/batch_workers.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/paths.h"

int worker_pool_open(struct worker_pool *p, int n, const char *batch_dir,
		     const char *python, char *const *envp)
{
	const char *tmp = getenv("TMPDIR");
	char *templ;

	memset(p, 0, sizeof(*p));
	if (!tmp || *tmp != '/' || strlen(tmp) > 60)
		tmp = "/tmp";
	templ = xstrfmt("%s/zlb-workers-XXXXXX", tmp);
	if (!mkdtemp(templ)) {
		int r = error_errno("cannot create a directory for the workers' sockets under %s", tmp);
		free(templ);
		return r;
	}
	p->dir = templ;
	p->log_dir = xstrfmt("%s/.logs/workers", batch_dir);
	if (mkdir_p(p->log_dir, 0755)) {
		rmdir(p->dir);
		free(p->dir);
		p->dir = NULL;
		return -1;
	}
	p->python = xstrdup(python);
	p->envp = envp;
	p->n = n;
	p->w = xcalloc((size_t)(n > 0 ? n : 1), sizeof(*p->w));
	for (int i = 0; i < n; i++) {
		p->w[i].log_fd = -1;
		p->w[i].socket = xstrfmt("%s/lane%d.sock", p->dir, i);
	}
	return 0;
}

static int start_worker(struct worker_pool *p, int i, const char *repo)
{
	struct worker *w = &p->w[i];
	char *log = xstrfmt("%s/lane%d.%d.log", p->log_dir, i, ++w->started);
	char *prefix = xstrfmt("zlb worker lane %d", i);
	char *argv[] = { p->python, "-m", "zlbench.worker", w->socket, prefix, NULL };
	int r;

	unlink(w->socket);
	w->log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (w->log_fd < 0) {
		r = error_errno("cannot open %s", log);
		goto out;
	}
	memset(&w->c, 0, sizeof(w->c));
	w->c.argv = argv;
	w->c.envp = p->envp;
	w->c.dir = p->dir;
	w->c.new_pgroup = 1;
	w->c.redirect = 1;
	w->c.redirect_fd = w->log_fd;
	r = child_start(&w->c);
	if (r) {
		close(w->log_fd);
		w->log_fd = -1;
		memset(&w->c, 0, sizeof(w->c));
		goto out;
	}
	w->repo = repo;
	w->jobs = 0;
out:
	free(prefix);
	free(log);
	return r;
}

const char *worker_for(struct worker_pool *p, int i, const char *repo, int *job)
{
	struct worker *w = &p->w[i];

	worker_check(p, i);
	if (w->c.pid > 0 && strcmp(w->repo, repo))
		worker_stop(p, i, 2000);
	if (w->c.pid <= 0 && start_worker(p, i, repo))
		return NULL;
	*job = ++w->jobs;
	return w->socket;
}

static void forget(struct worker *w)
{
	if (w->log_fd >= 0)
		close(w->log_fd);
	w->log_fd = -1;
	memset(&w->c, 0, sizeof(w->c));
	w->repo = NULL;
	w->jobs = 0;
}

int worker_check(struct worker_pool *p, int i)
{
	struct worker *w = &p->w[i];

	if (w->c.pid <= 0)
		return 1;
	if (child_reap(&w->c, 1) == 0)
		return 0;
	kill(-w->c.pid, SIGKILL);   /* anything the worker left in its group */
	forget(w);
	return 1;
}

void worker_stop(struct worker_pool *p, int i, int grace_ms)
{
	struct worker *w = &p->w[i];

	if (w->c.pid <= 0)
		return;
	child_kill(&w->c, SIGTERM);
	for (int waited = 0; waited < grace_ms && child_reap(&w->c, 1) == 0; waited += 10)
		poll(NULL, 0, 10);
	if (!w->c.exited) {
		child_kill(&w->c, SIGKILL);
		child_reap(&w->c, 0);
	}
	kill(-w->c.pid, SIGKILL);
	forget(w);
}

void worker_pool_close(struct worker_pool *p, int grace_ms)
{
	for (int i = 0; i < p->n; i++) {
		worker_stop(p, i, grace_ms);
		unlink(p->w[i].socket);
		free(p->w[i].socket);
	}
	if (p->dir)
		rmdir(p->dir);
	free(p->dir);
	free(p->log_dir);
	free(p->python);
	free(p->w);
	memset(p, 0, sizeof(*p));
}
